/* calib/runs and the cross-validation in calib/validate: three synthetic runs of one grid, each
 * with a known per-run factor on the times the datasheet H200 predicts; inputs grouped into runs;
 * per-op medians and spreads over runs; leave-one-run-out never trains on the run it scores;
 * leave-one-GEMM-shape-out never trains on the shape it scores; the reports carry the runs, the
 * noise floor and the cross-validation; a CSV's reps must be a sample count. */
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
#include <unistd.h>

#include "calib/fit.h"
#include "calib/runs.h"
#include "calib/validate.h"
#include "reports/calib.h"
#include "sim/opspec.h"
#include "util/doc.h"

static char dir[] = "/tmp/k3calib-runs-XXXXXX";
static struct hw base;

static const char *path(const char *name)
{
	static char buf[16][512];
	static int i;
	i = (i + 1) % 16;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

static double truth_s(const char *spec)
{
	struct op op;
	struct err e = {0};
	if (opspec_parse_line(spec, &op, &e) < 0)
		fail_msg("%s: %s", spec, e.msg);
	struct calib_point p = {.spec = spec, .op = op};
	struct hw dev;
	calib_device_hw(&dev, &base);
	return calib_predict_s(&dev, &p);
}

/* The grid: 4 GEMM shapes x 15 m x 2 dtypes, then copies (powers of 2 and 0.75 x 2^k). */
enum { N_SHAPES = 4, N_M = 15 };
static const int64_t shapes[N_SHAPES][2] = {{4608, 7168}, {7168, 1536}, {24576, 512}, {96, 7168}};
static const int64_t ms[N_M] = {1, 2, 4, 8, 16, 32, 64, 96, 128, 256, 384, 512, 1024, 2048, 4096};

static int grid_spec(int i, char *buf, size_t n)
{
	if (i < N_SHAPES * N_M * 2) {
		int s = i / (N_M * 2), m = i / 2 % N_M, d = i % 2;
		snprintf(buf, n, "gemm m=%lld n=%lld k=%lld dtype=%s", (long long)ms[m],
		         (long long)shapes[s][0], (long long)shapes[s][1], d ? "fp8" : "bf16");
		return 1;
	}
	i -= N_SHAPES * N_M * 2;
	if (i >= 2 * 17)
		return 0;
	int64_t b = (int64_t)4096 << (i / 2);
	snprintf(buf, n, "copy bytes=%lld", (long long)(i % 2 ? b / 4 * 3 : b));
	return 1;
}

/* A calib-grid CSV of the grid's points [from, to), times truth x factor(i). */
static void write_run(const char *p, int from, int to, double (*factor)(int i, void *ctx), void *ctx)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "# device NVIDIA H200, 132 SMs, SM clock 1980 MHz, L2 62914560 B; cuBLASLt 130100\n"
	           "op,reps,median_s,p10_s,p90_s\n");
	char spec[128];
	for (int i = from; i < to && grid_spec(i, spec, sizeof spec); i++) {
		double t = truth_s(spec) * factor(i, ctx);
		fprintf(f, "\"k3sim op=%s\",40,%.17g,%.17g,%.17g\n", spec, t, 0.9 * t, 1.1 * t);
	}
	assert_int_equal(fclose(f), 0);
}

static int grid_n(void)
{
	char spec[128];
	int n = 0;
	while (grid_spec(n, spec, sizeof spec))
		n++;
	return n;
}

/* per-point noise of run k: run 0 a little fast, run 2 slow, in steps by point */
static double noisy(int i, void *ctx)
{
	int k = *(const int *)ctx;
	return k == 0 ? 1 - 0.02 * (i % 3) : k == 1 ? 1.0 : 1 + 0.05 * (i % 5 + 1);
}

static double uniform(int i, void *ctx)
{
	(void)i;
	return *(const double *)ctx;
}

static void load(struct calib_points *raw, struct calib_inputs *in)
{
	struct calib_match first = {0};
	struct err e = {0};
	char inputs[4096];
	calib_points_init(raw);
	if (calib_points_add_inputs(raw, in, "none", &first, inputs, sizeof inputs, &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	calib_match_release(&first);
}

static void test_merge(void **state)
{
	(void)state;
	const int n = grid_n(), half = n / 2;
	int k0 = 0, k1 = 1, k2 = 2;
	/* run "a" in two files, one op measured twice in it (its median: the mean of both) */
	write_run(path("a1.csv"), 0, half, noisy, &k0);
	write_run(path("a2.csv"), half, n, noisy, &k0);
	double twice = 1.3;
	write_run(path("a3.csv"), 0, 1, uniform, &twice);
	write_run(path("b.csv"), 0, n, noisy, &k1);
	write_run(path("c.csv"), 0, n, noisy, &k2);
	struct calib_inputs in;
	struct err e = {0};
	calib_inputs_init(&in);
	char arg[2048];
	snprintf(arg, sizeof arg, "a=%s,%s,%s", path("a1.csv"), path("a2.csv"), path("a3.csv"));
	assert_int_equal(calib_inputs_add_run(&in, arg, &e), 0);
	assert_int_equal(calib_inputs_add_path(&in, path("b.csv"), &e), 0);
	assert_int_equal(calib_inputs_add_path(&in, path("c.csv"), &e), 0);
	struct calib_points raw, pts;
	load(&raw, &in);
	assert_int_equal(raw.n, 3 * n + 1);
	assert_int_equal(raw.n_runs, 3);
	assert_string_equal(raw.runs[0].name, "a");
	assert_int_equal(raw.runs[0].n_sources, 3);
	assert_string_equal(raw.runs[1].name, path("b.csv"));
	assert_true(raw.runs[2].have_info);
	assert_string_equal(raw.runs[2].info.device, "NVIDIA H200");
	assert_true(raw.runs[2].info.sm_clock_hz == 1980000000);
	assert_int_equal(raw.runs[2].info.sms, 132);
	assert_int_equal(raw.source_run[2], 0);
	assert_int_equal(raw.source_run[4], 2);

	assert_int_equal(calib_points_by_op(&pts, &raw, NULL, &e), 0);
	assert_int_equal(pts.n, n);
	assert_int_equal(pts.n_runs, 3);
	for (int i = 0; i < n; i++) {
		const struct calib_point *p = &pts.p[i];
		char spec[128];
		grid_spec(i, spec, sizeof spec);
		assert_string_equal(p->spec, spec); /* order of first appearance */
		double f[3] = {noisy(i, &k0), noisy(i, &k1), noisy(i, &k2)};
		if (i == 0)
			f[0] = 0.5 * (f[0] + twice);
		double lo = fmin(f[0], fmin(f[1], f[2])), hi = fmax(f[0], fmax(f[1], f[2]));
		double mid = f[0] + f[1] + f[2] - lo - hi, t = truth_s(spec);
		assert_int_equal(p->runs, 3);
		assert_int_equal(p->run, -1);
		assert_int_equal(p->samples, i == 0 ? 160 : 120);
		assert_true(fabs(p->measured_s / (t * mid) - 1) < 1e-12);
		assert_true(fabs(p->run_min_s / (t * lo) - 1) < 1e-12);
		assert_true(fabs(p->run_max_s / (t * hi) - 1) < 1e-12);
		assert_true(fabs(p->spread - (hi - lo) / mid) < 1e-12);
		assert_true(fabs(p->p10_s / (0.9 * t * mid) - 1) < 1e-12);
	}
	/* the noise floor per class: the spreads' median and p90 */
	struct calib_validation v;
	assert_int_equal(calib_validate(&v, &pts, &base, &e), 0);
	for (int c = 0; c < v.n_cls; c++) {
		double sp[256] = {0};
		int m = 0;
		for (size_t i = 0; i < pts.n; i++)
			if (strcmp(pts.p[i].label, v.cls[c].label) == 0)
				sp[m++] = pts.p[i].spread * 100;
		for (int a = 1; a < m; a++)
			for (int b = a; b > 0 && sp[b] < sp[b - 1]; b--) {
				double x = sp[b];
				sp[b] = sp[b - 1];
				sp[b - 1] = x;
			}
		double pos = 0.9 * (m - 1);
		int lo = (int)pos;
		double p90 = sp[lo] + (sp[lo + 1 < m ? lo + 1 : lo] - sp[lo]) * (pos - lo);
		assert_int_equal(v.cls[c].noise.n, m);
		assert_true(fabs(v.cls[c].noise.p90_pct - p90) < 1e-9);
		assert_true(fabs(v.cls[c].noise.max_pct - sp[m - 1]) < 1e-9);
	}
	calib_validation_release(&v);

	/* a subset of runs: run b only -> exactly b's points, their run b's */
	bool use[3] = {false, true, false};
	struct calib_points only;
	assert_int_equal(calib_points_by_op(&only, &raw, use, &e), 0);
	assert_int_equal(only.n, n);
	for (size_t i = 0; i < only.n; i++) {
		assert_int_equal(only.p[i].run, 1);
		assert_int_equal(only.p[i].runs, 1);
		assert_true(only.p[i].spread == 0);
	}
	calib_points_release(&only);
	calib_points_release(&pts);
	calib_points_release(&raw);
	calib_inputs_release(&in);
}

/* Leave one run out: run k's times are truth x (1, 1.1, 1.2)[k]. The fold without run 2 sees the
 * median of 1 and 1.1: its floor is 1.05 / 1.2 - 1 = -12.5 % at every point, and the fitted
 * model's error follows it (had it seen run 2: -8.3 %). */
/* Two runs that ran different kernels for one op (calib_point.kernels_sig, as a trace's samples
 * give it): the merged point names both, calib_points_mixed counts it; the same kernels, or a run
 * that does not know its kernels (a CSV: 0), are not mixed. */
static void test_mixed_kernels(void **state)
{
	(void)state;
	const int n = grid_n();
	int k[2] = {0, 1};
	struct calib_inputs in;
	struct err e = {0};
	calib_inputs_init(&in);
	for (int r = 0; r < 2; r++) {
		char name[32], arg[600];
		snprintf(name, sizeof name, "mx%d.csv", r);
		write_run(path(name), 0, n, noisy, &k[r]);
		snprintf(arg, sizeof arg, "r%d=%s", r, path(name));
		assert_int_equal(calib_inputs_add_run(&in, arg, &e), 0);
	}
	struct calib_points raw, pts;
	load(&raw, &in);
	char s0[128], s1[128], s2[128];
	grid_spec(0, s0, sizeof s0);
	grid_spec(1, s1, sizeof s1);
	grid_spec(2, s2, sizeof s2);
	for (size_t i = 0; i < raw.n; i++) {
		struct calib_point *q = &raw.p[i];
		bool r1 = q->run == 1;
		if (strcmp(q->spec, s0) == 0) {
			q->kernels_sig = r1 ? 22 : 11;
			q->kernel = r1 ? "wg_kernel" : "gemv_kernel";
		} else if (strcmp(q->spec, s1) == 0) {
			q->kernels_sig = 33;
			q->kernel = "same_kernel";
		} else if (strcmp(q->spec, s2) == 0) {
			q->kernels_sig = r1 ? 44 : 0;
			q->kernel = r1 ? "known_kernel" : NULL;
		}
	}
	assert_int_equal(calib_points_by_op(&pts, &raw, NULL, &e), 0);
	assert_int_equal(pts.n, n);
	assert_string_equal(pts.p[0].spec, s0);
	assert_string_equal(pts.p[0].kernel, "gemv_kernel");
	assert_non_null(pts.p[0].kernel_other);
	assert_string_equal(pts.p[0].kernel_other, "wg_kernel");
	assert_int_equal(pts.p[0].kernel_other_run, 1);
	assert_null(pts.p[1].kernel_other);
	assert_null(pts.p[2].kernel_other);
	const struct calib_point *first;
	assert_int_equal(calib_points_mixed(&pts, &first), 1);
	assert_ptr_equal(first, &pts.p[0]);
	/* one run alone: nothing mixed */
	bool use[2] = {true, false};
	struct calib_points only;
	assert_int_equal(calib_points_by_op(&only, &raw, use, &e), 0);
	assert_int_equal(calib_points_mixed(&only, &first), 0);
	assert_null(first);
	calib_points_release(&only);
	calib_points_release(&pts);
	calib_points_release(&raw);
	calib_inputs_release(&in);
}

static void test_leave_one_run_out(void **state)
{
	(void)state;
	const int n = grid_n();
	double f[3] = {1.0, 1.1, 1.2};
	struct calib_inputs in;
	struct err e = {0};
	calib_inputs_init(&in);
	for (int k = 0; k < 3; k++) {
		char name[32];
		snprintf(name, sizeof name, "r%d.csv", k);
		write_run(path(name), 0, n, uniform, &f[k]);
		assert_int_equal(calib_inputs_add_path(&in, path(name), &e), 0);
	}
	struct calib_points raw;
	load(&raw, &in);
	/* a fold's training set holds no point of the held-out run */
	for (int r = 0; r < 3; r++) {
		bool use[3] = {r != 0, r != 1, r != 2};
		struct calib_points train;
		assert_int_equal(calib_points_by_op(&train, &raw, use, &e), 0);
		assert_int_equal(train.n, n);
		for (size_t i = 0; i < train.n; i++) {
			assert_int_equal(train.p[i].runs, 2);
			double t = truth_s(train.p[i].spec), other = 0;
			for (int k = 0; k < 3; k++)
				other += k != r ? f[k] / 2 : 0;
			assert_true(fabs(train.p[i].measured_s / (t * other) - 1) < 1e-12);
		}
		calib_points_release(&train);
	}
	struct calib_xval x;
	assert_int_equal(calib_xval(&x, &raw, &base, NULL, &e), 0);
	assert_int_equal(x.n_runs, 3);
	assert_int_equal(x.n_shapes, N_SHAPES);
	assert_int_equal(x.fits, 3 + N_SHAPES);
	for (int r = 0; r < 3; r++) {
		const struct calib_xval_run *xr = &x.runs[r];
		double other = 0;
		for (int k = 0; k < 3; k++)
			other += k != r ? f[k] / 2 : 0;
		double want = (other / f[r] - 1) * 100;
		assert_true(xr->fitted);
		assert_int_equal(xr->unpaired, 0);
		assert_int_equal(xr->err.n, n);
		assert_true(fabs(xr->floor.med_signed_pct - want) < 1e-9);
		assert_true(fabs(xr->floor.max_abs_pct - fabs(want)) < 1e-9);
		if (fabs(xr->err.med_signed_pct - want) > 1.5)
			fail_msg("run %d: model %.2f %%, floor %.2f %%", r, xr->err.med_signed_pct, want);
	}
	/* pooled per class: every class has 3 x its points */
	int gemm = 0;
	for (int c = 0; c < x.n_cls; c++) {
		if (strncmp(x.cls[c].label, "gemm", 4) == 0) {
			gemm++;
			assert_int_equal(x.cls[c].by_run.n, 3 * N_SHAPES * N_M);
			assert_int_equal(x.cls[c].by_gemm_shape.n, N_SHAPES * N_M);
		} else {
			assert_int_equal(x.cls[c].by_gemm_shape.n, 0);
		}
	}
	assert_int_equal(gemm, 2);
	assert_int_equal(x.all.by_run.n, 3 * n);
	calib_xval_release(&x);

	/* one run: no leave-one-run-out */
	struct calib_inputs one;
	calib_inputs_init(&one);
	assert_int_equal(calib_inputs_add_path(&one, path("r0.csv"), &e), 0);
	struct calib_points raw1;
	load(&raw1, &one);
	assert_int_equal(calib_xval(&x, &raw1, &base, NULL, &e), 0);
	assert_int_equal(x.n_runs, 0);
	assert_int_equal(x.n_shapes, N_SHAPES);
	calib_xval_release(&x);
	calib_points_release(&raw1);
	calib_inputs_release(&one);
	calib_points_release(&raw);
	calib_inputs_release(&in);
}

/* Leave one GEMM shape out: shape 1 measures twice as slow as the others say. Fitted with it,
 * its shape table follows it; held out, the model predicts what the other shapes say: -50 %. */
static double slow_shape(int i, void *ctx)
{
	(void)ctx;
	return i < N_SHAPES * N_M * 2 && i / (N_M * 2) == 1 ? 2.0 : 1.0;
}

static void test_leave_one_shape_out(void **state)
{
	(void)state;
	struct calib_inputs in;
	struct err e = {0};
	calib_inputs_init(&in);
	write_run(path("s.csv"), 0, grid_n(), slow_shape, NULL);
	assert_int_equal(calib_inputs_add_path(&in, path("s.csv"), &e), 0);
	struct calib_points raw;
	load(&raw, &in);
	struct calib_xval x;
	assert_int_equal(calib_xval(&x, &raw, &base, NULL, &e), 0);
	assert_int_equal(x.n_shapes, N_SHAPES);
	for (int s = 0; s < N_SHAPES; s++) {
		const struct calib_xval_shape *xs = &x.shapes[s];
		assert_true(xs->n == shapes[s][0] && xs->k == shapes[s][1]);
		assert_true(xs->fitted);
		assert_int_equal(xs->err.n, 2 * N_M);
		if (s == 1 && fabs(xs->err.med_signed_pct + 50) > 10)
			fail_msg("held-out slow shape: %.2f %% (want about -50 %%)", xs->err.med_signed_pct);
	}
	/* with it in the fit, its training m are reproduced */
	struct hw fit;
	struct calib_fit_report rep;
	assert_int_equal(calib_fit(&raw, &base, NULL, &fit, &rep, &e), 0);
	struct calib_validation v;
	assert_int_equal(calib_validate(&v, &raw, &fit, &e), 0);
	for (size_t i = 0; i < raw.n; i++)
		if (raw.p[i].op.kind == OP_GEMM && raw.p[i].op.n == shapes[1][0] && !raw.p[i].held_out)
			assert_true(fabs(v.err_pct[i]) < 1);
	calib_validation_release(&v);
	calib_xval_release(&x);
	calib_points_release(&raw);
	calib_inputs_release(&in);
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

static void fmt_pair(const struct doc_node *errs, char *buf, size_t n)
{
	if (doc_is_null(doc_get(errs, "median_abs_pct")))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f / %.2f", atof(doc_get(errs, "median_abs_pct")->str),
		         atof(doc_get(errs, "p90_abs_pct")->str));
}

static void test_report_fields(void **state)
{
	(void)state;
	const int n = grid_n();
	int k[3] = {0, 1, 2};
	struct calib_inputs in;
	struct err e = {0};
	calib_inputs_init(&in);
	for (int r = 0; r < 3; r++) {
		char name[32], arg[600];
		snprintf(name, sizeof name, "n%d.csv", r);
		write_run(path(name), 0, n, noisy, &k[r]);
		snprintf(arg, sizeof arg, "day%d=%s", r + 1, path(name));
		assert_int_equal(calib_inputs_add_run(&in, arg, &e), 0);
	}
	struct calib_points raw, pts;
	load(&raw, &in);
	assert_int_equal(calib_points_by_op(&pts, &raw, NULL, &e), 0);
	struct hw fit;
	struct calib_fit_report rep;
	assert_int_equal(calib_fit(&pts, &base, NULL, &fit, &rep, &e), 0);
	struct calib_validation v;
	struct calib_xval x;
	assert_int_equal(calib_validate(&v, &pts, &fit, &e), 0);
	assert_int_equal(calib_xval(&x, &raw, &base, NULL, &e), 0);
	struct calib_report_in ri = {.title = "t", .database = "runs", .v = &v, .xval = &x, .top = 3};
	FILE *f = fopen(path("r.md"), "w");
	assert_int_equal(calib_report_markdown(f, &ri, &e), 0);
	fclose(f);
	f = fopen(path("r.json"), "w");
	assert_int_equal(calib_report_json(f, &ri, &e), 0);
	fclose(f);
	char *md = slurp(path("r.md"));
	struct doc d;
	if (doc_load_file(&d, path("r.json"), &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	const struct doc_node *runs = doc_get(d.root, "runs");
	assert_int_equal(runs->n, 3);
	assert_string_equal(doc_get(runs->items[1], "name")->str, "day2");
	assert_string_equal(doc_get(runs->items[1], "device")->str, "NVIDIA H200");
	assert_non_null(strstr(md, "| `day2` | `"));
	const struct doc_node *xv = doc_get(d.root, "xval");
	assert_non_null(xv);
	assert_int_equal(doc_get(xv, "runs")->n, 3);
	assert_int_equal(doc_get(xv, "gemm_shapes")->n, N_SHAPES);
	/* the Markdown's cross-validation rows carry the JSON's numbers, the spread beside them */
	const struct doc_node *classes = doc_get(d.root, "classes"), *xc = doc_get(xv, "classes");
	assert_int_equal(xc->n, classes->n + 1); /* and "all" */
	for (size_t c = 0; c < classes->n; c++) {
		const struct doc_node *cl = classes->items[c], *x1 = xc->items[c];
		assert_string_equal(doc_get(cl, "class")->str, doc_get(x1, "class")->str);
		const struct doc_node *noise = doc_get(cl, "noise");
		assert_int_equal(atoi(doc_get(noise, "n")->str), atoi(doc_get(doc_get(cl, "all"), "n")->str));
		char a[48], b[48], c2[48], g[48], s[48], row[400];
		fmt_pair(doc_get(cl, "held_out"), a, sizeof a);
		fmt_pair(doc_get(x1, "by_run"), b, sizeof b);
		fmt_pair(doc_get(x1, "run_floor"), c2, sizeof c2);
		fmt_pair(doc_get(x1, "by_gemm_shape"), g, sizeof g);
		snprintf(s, sizeof s, "%.2f / %.2f", atof(doc_get(noise, "median_pct")->str),
		         atof(doc_get(noise, "p90_pct")->str));
		snprintf(row, sizeof row, "| %s | %s | %s | %s | %s | %s |", doc_get(cl, "class")->str, a, b,
		         c2, g, s);
		if (!strstr(md, row))
			fail_msg("Markdown lacks the JSON's row: %s", row);
	}
	const struct doc_node *pp = doc_get(d.root, "per_point");
	assert_int_equal(pp->n, (size_t)n);
	assert_string_equal(doc_get(pp->items[0], "runs")->str, "3");
	assert_non_null(doc_get(pp->items[0], "spread_pct"));
	doc_release(&d);
	free(md);
	calib_xval_release(&x);
	calib_validation_release(&v);
	calib_points_release(&pts);
	calib_points_release(&raw);
	calib_inputs_release(&in);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	struct calib_inputs in;
	struct err e = {0};
	calib_inputs_init(&in);
	static const char *const bad[] = {
	    "nofiles",        "=a.csv",
	    "a b=x.csv",      "a=",
	    "a=x.csv,,y.csv", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&e, 0, sizeof e);
		if (calib_inputs_add_run(&in, bad[i], &e) != -EINVAL)
			fail_msg("--run '%s' accepted", bad[i]);
		assert_non_null(strstr(e.msg, "--run"));
	}
	assert_int_equal(in.n, 0);
	assert_int_equal(calib_inputs_add_run(&in, "d1=x.csv,y.csv", &e), 0);
	assert_int_equal(calib_inputs_add_run(&in, "d1=z.csv", &e), 0); /* the same run again */
	assert_true(in.in[2].run == in.in[0].run);
	assert_true(calib_inputs_add_path(&in, "y.csv", &e) < 0);
	assert_non_null(strstr(e.msg, "'y.csv' given twice"));
	assert_int_equal(in.n, 3);
	calib_inputs_release(&in);

	/* the same op however spelled */
	struct op a, b, c;
	assert_int_equal(opspec_parse_line("gemm m=64 n=7168 k=7168", &a, &e), 0);
	assert_int_equal(opspec_parse_line("k3sim op=gemm k=7168 n=7168 m=64 dtype=bf16", &b, &e), 0);
	assert_int_equal(opspec_parse_line("gemm m=64 n=7168 k=7168 dtype=fp8", &c, &e), 0);
	assert_int_equal(calib_op_cmp(&a, &b), 0);
	assert_true(calib_op_cmp(&a, &c) != 0);
	assert_true(calib_op_cmp(&a, &c) == -calib_op_cmp(&c, &a));
}

/* reps is the sample count behind a row's median: 1e300 overflowed int64 (UBSan), -1, 0 and abc
 * were taken as 1. */
/* The protocol's split of collectives by series (calib_points_protocol) and of attention by the
 * tokens the last query attends: the public tables' grids (nccl-tests doubling sizes; MLA decode
 * after 2^k - 1 cached tokens, prefill without prefix) held nothing out, or trained almost nothing. */
static void test_protocol_series(void **state)
{
	(void)state;
	struct calib_points pts;
	struct err e = {0};
	calib_points_init(&pts);
	const char *text = "op,reps,median_s,p10_s,p90_s\n"
	                   "allgather bytes=1024 ranks=4,1,1e-5,,\n"
	                   "allgather bytes=2048 ranks=4,1,1e-5,,\n"
	                   "allgather bytes=4096 ranks=4,1,1e-5,,\n"
	                   "allgather bytes=8192 ranks=4,1,1e-5,,\n"
	                   "allgather bytes=1024 ranks=2,1,1e-5,,\n"
	                   "allgather bytes=1536 ranks=2,1,1e-5,,\n"
	                   "allgather bytes=2048 ranks=2,1,1e-5,,\n"
	                   "mla_decode b=8 heads=64 ctx=1,1,1e-5,,\n"
	                   "mla_decode b=8 heads=64 ctx=3,1,1e-5,,\n"
	                   "mla_decode b=8 heads=64 ctx=15,1,1e-5,,\n"
	                   "mla_decode b=8 heads=64 ctx=31,1,1e-5,,\n"
	                   "mla_prefill b=1 t=16 heads=64,1,1e-5,,\n"
	                   "mla_prefill b=1 t=32 heads=64,1,1e-5,,\n";
	assert_int_equal(calib_points_add_csv_string(&pts, "p.csv", text, strlen(text), &e), 0);
	assert_int_equal(calib_points_protocol(&pts, &e), 0);
	static const struct {
		const char *spec;
		bool held_out;
	} want[] = {
	    /* 4 ranks, powers of 2 only: powers of 4 train */
	    {"allgather bytes=1024 ranks=4", false},
	    {"allgather bytes=2048 ranks=4", true},
	    {"allgather bytes=4096 ranks=4", false},
	    {"allgather bytes=8192 ranks=4", true},
	    /* 2 ranks with a 0.75 x 2^k size: every power of 2 trains, as for our NCCL grid */
	    {"allgather bytes=1024 ranks=2", false},
	    {"allgather bytes=1536 ranks=2", true},
	    {"allgather bytes=2048 ranks=2", false},
	    /* attended tokens ctx + t: 2, 4, 16, 32 */
	    {"mla_decode b=8 heads=64 ctx=1", true},
	    {"mla_decode b=8 heads=64 ctx=3", false},
	    {"mla_decode b=8 heads=64 ctx=15", false},
	    {"mla_decode b=8 heads=64 ctx=31", true},
	    {"mla_prefill b=1 t=16 heads=64", false},
	    {"mla_prefill b=1 t=32 heads=64", true},
	};
	assert_int_equal(pts.n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < pts.n; i++) {
		if (strcmp(pts.p[i].spec, want[i].spec) != 0 || pts.p[i].held_out != want[i].held_out)
			fail_msg("%s: held_out %d, want %s %d", pts.p[i].spec, pts.p[i].held_out,
			         want[i].spec, want[i].held_out);
	}
	/* prefill its own class: it gets a table of its own (decode is memory-bound where a prefill
	 * of the same modeled time is compute-bound) */
	assert_int_equal(pts.p[11].cls, HW_CLASS_ATTENTION_PREFILL);
	assert_int_equal(pts.p[8].cls, HW_CLASS_ATTENTION);
	calib_points_release(&pts);
}

static void test_bad_reps(void **state)
{
	(void)state;
	static const char *const bad[] = {"1e300", "-1", "0", "abc", "2.5", "1e13"}; /* "": one sample */
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[256];
		snprintf(text, sizeof text,
		         "op,reps,median_s,p10_s,p90_s\n\"k3sim op=copy bytes=4096\",40,8e-06,7e-06,9e-06\n"
		         "\"k3sim op=copy bytes=8192\",%s,8e-06,7e-06,9e-06\n",
		         bad[i]);
		struct calib_points pts;
		struct err e = {0};
		calib_points_init(&pts);
		if (calib_points_add_csv_string(&pts, "g.csv", text, strlen(text), &e) != -EINVAL)
			fail_msg("reps '%s' accepted", bad[i]);
		assert_string_equal(e.file, "g.csv");
		assert_int_equal(e.line, 3);
		assert_int_equal(e.col, 2);
		assert_non_null(strstr(e.msg, "not a sample count"));
		calib_points_release(&pts);
	}
	/* percentiles: empty is "not measured", garbage is an error */
	static const char *const rows[] = {"40,8e-06,,", "40,8e-06,abc,9e-06", "40,8e-06,7e-06,-1"};
	static const int ok[] = {1, 0, 0}, col[] = {0, 4, 5};
	for (int i = 0; i < 3; i++) {
		char text[256];
		snprintf(text, sizeof text, "op,reps,median_s,p10_s,p90_s\n\"k3sim op=copy bytes=4096\",%s\n",
		         rows[i]);
		struct calib_points pts;
		struct err e = {0};
		calib_points_init(&pts);
		int rc = calib_points_add_csv_string(&pts, "g.csv", text, strlen(text), &e);
		if (ok[i]) {
			assert_int_equal(rc, 0);
			assert_true(pts.p[0].p10_s == pts.p[0].measured_s);
			assert_int_equal(pts.p[0].samples, 40);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_int_equal(e.line, 2);
			assert_int_equal(e.col, col[i]);
		}
		calib_points_release(&pts);
	}
}

static int setup(void **state)
{
	(void)state;
	struct err e = {0};
	if (hw_load(&base, "h200-datasheet", &e) < 0)
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bad_reps),
	    cmocka_unit_test(test_protocol_series),
	    cmocka_unit_test(test_bad_inputs),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_mixed_kernels),
	    cmocka_unit_test(test_leave_one_run_out),
	    cmocka_unit_test(test_leave_one_shape_out),
	    cmocka_unit_test(test_report_fields),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
