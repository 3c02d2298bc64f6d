/* calib/validate: per-class errors on a fixture trace; the Markdown report carries the same
 * numbers as the JSON one; charts through gnuplot, and a clear note without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib-fixture.h"
#include "calib/validate.h"
#include "sim/power.h"
#include "reports/calib.h"
#include "util/outfile.h"
#include "util/doc.h"

static char dir[] = "/tmp/k3calib-validate-XXXXXX";

static const char *path(const char *name)
{
	static char buf[8][512];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

/* GEMMs and copies, each op measured three times; one unmatched kernel. */
static void write_fixture(const char *p)
{
	static const int ms[] = {1, 2, 4, 8, 16, 64, 96, 256, 1024, 2048};
	struct cfx f;
	assert_int_equal(cfx_open(&f, p), 0);
	int64_t t = 1000, g = 1000000;
	char text[128];
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
		for (int d = 0; d < 2; d++)
			for (int r = 0; r < 3; r++) {
				snprintf(text, sizeof text, "k3sim op=gemm m=%d n=4608 k=7168 dtype=%s",
				         ms[i], d ? "fp8" : "bf16");
				int64_t dur = (int64_t)(20000 + 40.0 * ms[i] / (d + 1)) + 100 * r;
				assert_int_equal(cfx_range(&f, 1, t, t + 1000, text), 0);
				assert_int_equal(cfx_kernel(&f, 1, t + 10, "nvjet_kernel", g, dur, 132, 1),
				                 0);
				t += 2000;
				g += dur + 1000;
			}
	for (int64_t b = 4096; b <= (64 << 20); b *= 4)
		for (int r = 0; r < 3; r++) {
			snprintf(text, sizeof text, "k3sim op=copy bytes=%lld", (long long)b);
			int64_t dur = 800 + b / 3500;
			assert_int_equal(cfx_range(&f, 1, t, t + 1000, text), 0);
			assert_int_equal(cfx_memcpy(&f, 1, t + 10, b, g, dur), 0);
			t += 2000;
			g += dur + 1000;
		}
	assert_int_equal(cfx_kernel(&f, 1, t + 10, "stray_kernel", g, 5000, 1, 1), 0);
	assert_int_equal(cfx_close(&f), 0);
}

/* SM clock readings on GPU 0 at the given times (MHz). */
static void readings(struct cfx *f, const int64_t *t, const double *mhz, int n)
{
	struct err e;
	for (int i = 0; i < n; i++) {
		struct trace_gpu_metric m = {.timestamp_ns = t[i], .global_pid = CFX_PID, .has_sm = true, .sm_mhz = mhz[i]};
		assert_int_equal(trace_db_add_gpu_metric(f->db, &m, &e), 0);
	}
}

/* Issue 17: the slice ran power-capped at ~1830 MHz and was predicted at boost. With
 * CALIB_CLOCK_MEASURED each op is predicted at the clock its capture recorded around it: the
 * median of the readings inside a sample's span, else the nearest reading. Before, there was no
 * way to (validate predicted at boost only). */
static void test_measured_clock(void **state)
{
	(void)state;
	const char *db = path("clock.db");
	struct cfx f;
	assert_int_equal(cfx_open(&f, db), 0);
	char text[128];
	int64_t t = 1000, g = 10000000;
	/* a compute-bound GEMM, three instances of 8 ms, readings inside each: 1800, 1830, 1860 */
	for (int r = 0; r < 3; r++) {
		snprintf(text, sizeof text, "k3sim op=gemm m=8192 n=8192 k=8192 dtype=bf16");
		assert_int_equal(cfx_range(&f, 1, t, t + 1000, text), 0);
		assert_int_equal(cfx_kernel(&f, 1, t + 10, "nvjet_kernel", g, 8000000, 132, 1), 0);
		const int64_t ts[] = {g + 1000000, g + 4000000, g + 7000000};
		const double mhz[] = {1860, 1800, 1830};
		readings(&f, ts, mhz, 3);
		t += 2000;
		g += 9000000;
	}
	/* a copy of 1 GiB, 3 instances with no reading inside: the nearest (1500 after, 1600 long before) */
	int64_t copy_start = g + 50000000;
	const int64_t before[] = {g};
	const double before_mhz[] = {1600};
	readings(&f, before, before_mhz, 1);
	g = copy_start;
	for (int r = 0; r < 3; r++) {
		assert_int_equal(cfx_range(&f, 1, t, t + 1000, "k3sim op=copy bytes=1073741824"), 0);
		assert_int_equal(cfx_memcpy(&f, 1, t + 10, 1073741824, g, 250000), 0);
		t += 2000;
		g += 300000;
	}
	const int64_t after[] = {g + 100000};
	const double after_mhz[] = {1500};
	readings(&f, after, after_mhz, 1);
	/* a GEMM read above the preset's boost: predicted at boost */
	g += 10000000;
	assert_int_equal(cfx_range(&f, 1, t, t + 1000, "k3sim op=gemm m=4096 n=4096 k=4096 dtype=bf16"), 0);
	assert_int_equal(cfx_kernel(&f, 1, t + 10, "nvjet_kernel", g, 2000000, 132, 1), 0);
	const int64_t hot[] = {g + 1000000};
	const double hot_mhz[] = {2100};
	readings(&f, hot, hot_mhz, 1);
	assert_int_equal(cfx_close(&f), 0);

	struct err e = {0};
	struct calib_match m;
	struct calib_match_opts mo = {0};
	assert_int_equal(calib_match_db(&m, db, &mo, &e), 0);
	assert_int_equal(m.clock_readings, 3 * 3 + 3);
	assert_int_equal(m.n_samples, 7);
	for (size_t i = 0; i < m.n_samples; i++) {
		const char *spec = m.specs[m.samples[i].spec].text;
		double want = strstr(spec, "copy") ? 1500e6 : strstr(spec, "m=4096") ? 2100e6 : 1830e6;
		assert_true(m.samples[i].end_ns > m.samples[i].start_ns);
		if (fabs(m.samples[i].sm_clock_hz - want) > 1)
			fail_msg("%s: %.0f Hz, wanted %.0f", spec, m.samples[i].sm_clock_hz, want);
	}
	calib_match_release(&m);

	struct calib_points pts;
	calib_points_init(&pts);
	if (calib_points_add_file(&pts, db, NULL, NULL, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(pts.n, 3);
	assert_int_equal(pts.source_clock_readings[0], 12);
	struct hw hw;
	assert_int_equal(hw_load(&hw, "h200", &e), 0);
	struct calib_validation vb, vm;
	assert_int_equal(calib_validate(&vb, &pts, &hw, &e), 0);
	assert_int_equal(calib_validate_clock(&vm, &pts, &hw, CALIB_CLOCK_MEASURED, &e), 0);
	assert_int_equal(vb.clock_mode, CALIB_CLOCK_REGIME);
	assert_int_equal(vm.without_clock, 0);
	assert_int_equal(vm.above_boost, 1);
	for (size_t i = 0; i < pts.n; i++) {
		const struct calib_point *p = &pts.p[i];
		assert_true(vb.clock_hz[i] == hw.sm_clock_hz);
		if (strstr(p->spec, "m=8192")) {
			assert_true(fabs(p->sm_clock_hz - 1830e6) < 1 && vm.clock_hz[i] == p->sm_clock_hz);
			/* compute-bound, but the preset's dense GEMMs are bound by the SM clock for 90 % of
			 * their boost time (clock_bound_gemm: a roofline in the clock): at 1830 MHz, above
			 * 0.9 x boost, the boost time; without the roofline slower by about 1980 / 1830 */
			double r = vm.predicted_s[i] / vb.predicted_s[i];
			if (!(fabs(r - 1) < 1e-9))
				fail_msg("gemm at 1830 MHz: %.4f x the boost prediction", r);
			struct hw plain = hw;
			plain.clock_bound[HW_POWER_GEMM] = 0;
			struct calib_validation vp;
			assert_int_equal(calib_validate_clock(&vp, &pts, &plain, CALIB_CLOCK_MEASURED, &e), 0);
			r = vp.predicted_s[i] / vb.predicted_s[i];
			if (!(r > 1.06 && r < 1980.0 / 1830 + 1e-3))
				fail_msg("gemm at 1830 MHz, plain clock law: %.4f x the boost prediction", r);
			calib_validation_release(&vp);
		} else if (strstr(p->spec, "copy")) {
			assert_true(vm.clock_hz[i] == 1500e6);
			double r = vm.predicted_s[i] / vb.predicted_s[i];
			assert_true(r >= 1 && r < 1.01); /* HBM-bound: the clock barely matters */
		} else {
			assert_true(vm.clock_hz[i] == hw.sm_clock_hz && vm.predicted_s[i] == vb.predicted_s[i]);
		}
	}
	/* per class: the clocks weighted by measured time */
	for (int c = 0; c < vm.n_cls; c++) {
		if (strcmp(vm.cls[c].label, "copy") == 0)
			assert_true(fabs(vm.cls[c].clock_hz - 1500e6) < 1);
		else if (strcmp(vm.cls[c].label, "gemm.bf16") == 0)
			assert_true(vm.cls[c].clock_hz > 1830e6 && vm.cls[c].clock_hz < 1900e6);
		else
			fail_msg("class %s", vm.cls[c].label);
	}
	/* the JSON report carries them; the regime validation's does not */
	struct calib_report_in in = {.title = "t", .database = db, .v = &vm, .top = 5};
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	assert_non_null(mf);
	assert_int_equal(calib_report_json(mf, &in, &e), 0);
	fclose(mf);
	assert_non_null(strstr(buf, "\"clock\": \"measured\""));
	assert_non_null(strstr(buf, "\"points_above_boost\": 1"));
	assert_non_null(strstr(buf, "\"clock_mhz\": 1500"));
	free(buf);
	in.v = &vb;
	mf = open_memstream(&buf, &len);
	assert_int_equal(calib_report_json(mf, &in, &e), 0);
	fclose(mf);
	assert_null(strstr(buf, "\"clock\": \"measured\""));
	assert_null(strstr(buf, ", \"clock_mhz\""));
	free(buf);
	calib_validation_release(&vb);
	calib_validation_release(&vm);

	/* calibrate --clock measured: each point below boost scaled to its boost-clock time by the
	 * inverse of the preset's clock laws (sim_boost_time_s): under the plain law (no roofline) by
	 * the physical model's ratio (the compute-bound GEMM by about 1830 / 1980, the copy barely,
	 * the one read above boost not at all); under h200's roofline the GEMM at 1830 MHz, above
	 * 0.9 x boost, keeps its time */
	double was_s[3];
	for (size_t i = 0; i < pts.n; i++)
		was_s[i] = pts.p[i].measured_s;
	{
		struct calib_points same;
		calib_points_init(&same);
		assert_int_equal(calib_points_add_file(&same, db, NULL, NULL, &e), 0);
		assert_int_equal(calib_points_at_boost(&same, &hw, NULL, &e), 0);
		for (size_t i = 0; i < same.n; i++)
			if (strstr(same.p[i].spec, "m=8192") && !(fabs(same.p[i].measured_s / was_s[i] - 1) < 1e-12))
				fail_msg("gemm under the roofline scaled by %.4f", same.p[i].measured_s / was_s[i]);
		calib_points_release(&same);
	}
	hw.clock_bound[HW_POWER_GEMM] = 0; /* the plain law */
	int scaled = -1;
	assert_int_equal(calib_points_at_boost(&pts, &hw, &scaled, &e), 0);
	assert_int_equal(scaled, 2);
	for (size_t i = 0; i < pts.n; i++) {
		double r = pts.p[i].measured_s / was_s[i];
		if (strstr(pts.p[i].spec, "m=8192")) {
			if (!(r < 1 - 0.9 * (1 - 1830.0 / 1980) && r >= 1830.0 / 1980 - 1e-3))
				fail_msg("gemm scaled by %.4f", r);
			assert_true(pts.p[i].p10_s <= pts.p[i].measured_s && pts.p[i].measured_s <= pts.p[i].p90_s);
		} else if (strstr(pts.p[i].spec, "copy")) {
			assert_true(r <= 1 && r > 0.99);
		} else {
			assert_true(r == 1);
		}
	}
	calib_points_release(&pts);

	/* a trace without readings: no clocks, predicted at the regime's */
	const char *plain = path("plain.db");
	assert_int_equal(cfx_open(&f, plain), 0);
	assert_int_equal(cfx_range(&f, 1, 1000, 2000, "k3sim op=gemm m=8192 n=8192 k=8192 dtype=bf16"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 1010, "nvjet_kernel", 5000, 8000000, 132, 1), 0);
	assert_int_equal(cfx_close(&f), 0);
	calib_points_init(&pts);
	assert_int_equal(calib_points_add_file(&pts, plain, NULL, NULL, &e), 0);
	assert_int_equal(pts.source_clock_readings[0], 0);
	assert_int_equal(calib_validate_clock(&vm, &pts, &hw, CALIB_CLOCK_MEASURED, &e), 0);
	assert_int_equal(vm.without_clock, 1);
	assert_true(vm.clock_hz[0] == hw.sm_clock_hz);
	calib_validation_release(&vm);
	calib_points_release(&pts);
}

static char *slurp(const char *p)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

static void fmt2(const struct doc_node *v, char *buf, size_t n)
{
	if (doc_is_null(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f", atof(v->str));
}

static void test_report(void **state)
{
	(void)state;
	const char *db = path("v.db");
	write_fixture(db);
	struct calib_rules rules;
	struct err e = {0};
	assert_int_equal(calib_rules_load(&rules, "default", &e), 0);
	struct calib_points pts;
	struct calib_match m;
	calib_points_init(&pts);
	if (calib_points_add_file(&pts, db, &rules, &m, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(pts.n, 20 + 8);
	assert_int_equal(m.unmatched_total, 1);
	struct hw hw;
	assert_int_equal(hw_load(&hw, "h200-datasheet", &e), 0);
	struct calib_validation v;
	assert_int_equal(calib_validate(&v, &pts, &hw, &e), 0);
	assert_int_equal(v.n_cls, 3); /* gemm.bf16, gemm.fp8, copy */
	assert_int_equal(v.all.n, 28);
	int held = 0;
	for (size_t i = 0; i < pts.n; i++)
		held += pts.p[i].held_out;
	assert_int_equal(v.held_out.n, held);
	for (int c = 0; c < v.n_cls; c++)
		assert_int_equal(v.cls[c].all.n, v.cls[c].held_out.n + v.cls[c].train.n);

	/* charts: without gnuplot a note; with it (when installed) two SVGs */
	char note[512] = "";
	const char *out = path("report");
	assert_int_equal(mkdir(out, 0777), 0);
	assert_int_equal(calib_plots(&v, out, "validate", "/nonexistent/gnuplot", NULL, note, sizeof note, &e), 1);
	assert_non_null(strstr(note, "gnuplot"));
	assert_int_equal(access(path("report/validate.gp"), R_OK), 0);
	assert_int_equal(access(path("report/validate.dat"), R_OK), 0);
	struct calib_report_in in = {
	    .title = "t", .database = db, .match = &m, .v = &v, .plot_note = note, .top = 5};
	char note2[512] = "";
	/* the data and script exist now: replaced only with force */
	assert_int_equal(calib_plots(&v, out, "validate", NULL, NULL, note2, sizeof note2, &e), -EEXIST);
	struct outfile_opts force = {.force = true};
	int pr = calib_plots(&v, out, "validate", NULL, &force, note2, sizeof note2, &e);
	assert_true(pr == 0 || pr == 1);
	if (pr == 0) {
		assert_int_equal(access(path("report/validate-scatter.png"), R_OK), 0);
		assert_int_equal(access(path("report/validate-error.png"), R_OK), 0);
	}

	FILE *f = fopen(path("report/validate.md"), "w");
	assert_int_equal(calib_report_markdown(f, &in, &e), 0);
	fclose(f);
	f = fopen(path("report/validate.json"), "w");
	assert_int_equal(calib_report_json(f, &in, &e), 0);
	fclose(f);
	char *md = slurp(path("report/validate.md"));
	assert_non_null(strstr(md, "No plots: gnuplot")); /* "could not be run" or "is not installed" */
	assert_non_null(strstr(md, "stray_kernel"));
	struct doc d;
	if (doc_load_file(&d, path("report/validate.json"), &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	const struct doc_node *classes = doc_get(d.root, "classes");
	assert_non_null(classes);
	assert_int_equal(classes->n, (size_t)v.n_cls);
	for (size_t i = 0; i < classes->n; i++) {
		const struct doc_node *c = classes->items[i];
		const struct doc_node *all = doc_get(c, "all"), *ho = doc_get(c, "held_out");
		char row[256], a[16], b[16], x[16], y[16], s[16];
		fmt2(doc_get(all, "median_abs_pct"), a, sizeof a);
		fmt2(doc_get(all, "p90_abs_pct"), b, sizeof b);
		fmt2(doc_get(ho, "median_abs_pct"), x, sizeof x);
		fmt2(doc_get(ho, "p90_abs_pct"), y, sizeof y);
		fmt2(doc_get(all, "median_signed_pct"), s, sizeof s);
		snprintf(row, sizeof row, "| %s | %s | %s | %s | %s | %s | %s | %s |",
		         doc_get(c, "class")->str, doc_get(all, "n")->str, doc_get(ho, "n")->str, a, b, x, y,
		         s);
		if (!strstr(md, row))
			fail_msg("Markdown lacks the JSON's row: %s", row);
	}
	const struct doc_node *match = doc_get(d.root, "match");
	assert_non_null(match);
	assert_string_equal(doc_get(match, "unmatched")->str, "1");
	doc_release(&d);
	free(md);
	calib_validation_release(&v);
	calib_match_release(&m);
	calib_points_release(&pts);
	calib_rules_release(&rules);
}

static void test_csv_inputs(void **state)
{
	(void)state;
	const char *grid = path("grid.csv");
	FILE *f = fopen(grid, "w");
	fputs("# device NVIDIA H200\nop,reps,median_s,p10_s,p90_s\n"
	      "\"k3sim op=gemm m=64 n=7168 k=7168 dtype=bf16\",40,2.3e-05,2.2e-05,2.4e-05\n"
	      "\"k3sim op=copy bytes=4096\",40,8e-06,7e-06,9e-06\n",
	      f);
	fclose(f);
	const char *kda = path("kda.csv");
	f = fopen(kda, "w");
	fputs("op,state,batch,seq_len,heads,window,accepted,time_us,p10_us,p90_us,loop_us,reps,state_bytes,"
	      "total_bytes\n"
	      "decode,fp32,8,0,96,1,1,40.5,40.0,41.0,30.0,30,0,0\n"
	      "verify_replay,fp32,8,0,96,4,2,60.0,59.0,61.0,0,30,0,0\n",
	      f);
	fclose(f);
	struct calib_points pts;
	struct err e = {0};
	calib_points_init(&pts);
	assert_int_equal(calib_points_add_file(&pts, grid, NULL, NULL, &e), 0);
	assert_int_equal(calib_points_add_file(&pts, kda, NULL, NULL, &e), 0);
	assert_int_equal(pts.n, 4);
	assert_string_equal(pts.p[0].spec, "gemm m=64 n=7168 k=7168 dtype=bf16");
	assert_true(fabs(pts.p[0].measured_s - 2.3e-5) < 1e-12);
	assert_string_equal(pts.p[2].spec, "kda_decode b=8 h=96 state=fp32");
	assert_true(fabs(pts.p[2].measured_s - 40.5e-6) < 1e-12);
	/* verify + replay: 4 drafts after 2 accepted tokens, one launch of 6 tokens per request */
	assert_string_equal(pts.p[3].spec, "kda_decode b=8 h=96 t=6 state=fp32");
	assert_string_equal(pts.p[3].label, "kda_verify.fp32");
	assert_true(pts.p[3].held_out); /* t = 6: neither odd nor a power of 4 */
	assert_int_equal(pts.csv_rows_skipped, 0);

	const char *bad = path("bad.csv");
	f = fopen(bad, "w");
	fputs("op,reps,median_s\n\"k3sim op=gemm m=64 n=7168 k=7168 dtype=bf17\",40,2e-05\n", f);
	fclose(f);
	assert_true(calib_points_add_file(&pts, bad, NULL, NULL, &e) < 0);
	assert_int_equal(e.line, 2);
	assert_non_null(strstr(e.msg, "unknown dtype"));
	/* a verify row whose token counts are not counts: the field's line and column */
	f = fopen(bad, "w");
	fputs("op,state,batch,seq_len,heads,window,accepted,time_us,p10_us,p90_us,total_bytes\n"
	      "verify_replay,fp32,8,0,96,x,2,60.0,59.0,61.0,0\n",
	      f);
	fclose(f);
	assert_true(calib_points_add_file(&pts, bad, NULL, NULL, &e) < 0);
	assert_int_equal(e.line, 2);
	assert_int_equal(e.col, 6);
	assert_non_null(strstr(e.msg, "not a token count"));
	f = fopen(bad, "w");
	fputs("name,value\na,1\n", f);
	fclose(f);
	assert_true(calib_points_add_file(&pts, bad, NULL, NULL, &e) < 0);
	assert_non_null(strstr(e.msg, "not a trace database"));
	calib_points_release(&pts);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The public tables' CSVs (bench/public/aic, tools/aic/convert.mjs): the calib-grid columns with
 * reps and the percentiles empty (the source publishes one mean per row), then provenance columns
 * that the reader ignores, one quoted because it holds a comma. */
static void test_csv_provenance_columns(void **state)
{
	(void)state;
	const char *csv = path("public.csv");
	FILE *f = fopen(csv, "w");
	fputs("# github.com/ai-dynamo/aiconfigurator ... (Apache-2.0)\n"
	      "op,reps,median_s,p10_s,p90_s,device,framework,version,kernel_source,table,source_commit,"
	      "license,mapping\n"
	      "gemm m=64 n=7168 k=7168 dtype=bf16,,2.5e-05,,,NVIDIA H200,SGLang,0.5.14,torch_linear,"
	      "h200_sxm/gemm/sglang/0.5.14/gemm_perf.parquet,095f58a51c4c,Apache-2.0,exact\n"
	      "allreduce bytes=1048576 ranks=8,2,1.5e-05,,,NVIDIA H200,TRTLLM,2.29.2,NCCL,"
	      "h200_sxm/comm/nccl/2.29.2/nccl_perf.parquet,095f58a51c4c,Apache-2.0,\"approx:a,b\"\n",
	      f);
	fclose(f);
	struct calib_points pts;
	struct err e = {0};
	calib_points_init(&pts);
	assert_int_equal(calib_points_add_file(&pts, csv, NULL, NULL, &e), 0);
	assert_int_equal(pts.n, 2);
	assert_string_equal(pts.p[0].spec, "gemm m=64 n=7168 k=7168 dtype=bf16");
	assert_true(fabs(pts.p[0].measured_s - 2.5e-5) < 1e-12);
	assert_true(pts.p[0].p10_s == pts.p[0].measured_s && pts.p[0].p90_s == pts.p[0].measured_s);
	assert_int_equal(pts.p[0].samples, 1);
	assert_string_equal(pts.p[1].spec, "allreduce bytes=1048576 ranks=8");
	assert_int_equal(pts.p[1].samples, 2);
	/* a row that lost a provenance field: its line, not a silent shift of columns */
	f = fopen(csv, "w");
	fputs("op,reps,median_s,p10_s,p90_s,device,license\n"
	      "gemm m=64 n=7168 k=7168 dtype=bf16,,2.5e-05,,,NVIDIA H200,Apache-2.0\n"
	      "gemm m=64 n=7168 k=7168 dtype=fp8,,2.5e-05,,,Apache-2.0\n",
	      f);
	fclose(f);
	assert_true(calib_points_add_file(&pts, csv, NULL, NULL, &e) < 0);
	assert_int_equal(e.line, 3);
	assert_non_null(strstr(e.msg, "the header has 7"));
	calib_points_release(&pts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report),
	    cmocka_unit_test(test_measured_clock),
	    cmocka_unit_test(test_csv_inputs),
	    cmocka_unit_test(test_csv_provenance_columns),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
