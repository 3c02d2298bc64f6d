/* calib/fit: fitting synthetic measurements generated from known parameters recovers them; the
 * tables reproduce what the curves cannot; a written preset loads back with the same predictions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/fit.h"
#include "calib/preset.h"
#include "calib/validate.h"
#include "sim/cost.h"
#include "sim/opspec.h"
#include "sim/power.h"

static struct hw base, truth;

/* Writes the fitted preset to a temporary file and loads it back into *back. */
static void preset_round_trip(const struct hw *fit, const struct calib_points *pts,
                              const struct calib_fit_report *rep, struct hw *back)
{
	struct err e = {0};
	char path[] = "/tmp/k3calib-fit-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	struct calib_preset_meta meta = {.base = "h200-datasheet", .date = "2026-01-01", .pts = pts, .fit = rep};
	assert_int_equal(calib_preset_write(f, fit, &meta, &e), 0);
	fclose(f);
	if (hw_load(back, path, &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	unlink(path);
}

static void add(struct calib_points *pts, const char *spec, const struct hw *t, double factor)
{
	struct op op;
	struct err e = {0};
	if (opspec_parse_line(spec, &op, &e) < 0)
		fail_msg("%s: %s", spec, e.msg);
	if (pts->n == pts->cap) {
		pts->cap = pts->cap ? 2 * pts->cap : 256;
		pts->p = realloc(pts->p, pts->cap * sizeof *pts->p);
		assert_non_null(pts->p);
	}
	struct calib_point *p = &pts->p[pts->n++];
	memset(p, 0, sizeof *p);
	p->spec = spec; /* static or long-lived in these tests */
	p->op = op;
	calib_op_class(&op, p->label, sizeof p->label, &p->cls, &p->size);
	p->held_out = !calib_op_trains(&op, &p->main_size);
	struct hw dev;
	calib_device_hw(&dev, t);
	p->measured_s = calib_predict_s(&dev, p) * factor;
	p->samples = 1;
}

static char specs[4096][96];
static int n_specs;

static const char *spec(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(specs[n_specs], sizeof specs[0], fmt, ap);
	va_end(ap);
	return specs[n_specs++];
}

/* Copies of 4 KiB .. 1 GiB at factor 1.1 over the truth: the memory class beside an own kind's points. */
static void add_copies(struct calib_points *pts)
{
	for (int64_t b = 4096; b <= ((int64_t)1 << 30); b *= 2)
		add(pts, spec("copy bytes=%lld", (long long)b), &truth, 1.1);
}

/* Every point outside the memory class predicted within 5 % by the fitted preset's device times
 * (kernel durations: no launch gaps). */
static void assert_own_points_within_5pct(const struct hw *fit, const struct calib_points *pts)
{
	struct hw dev;
	calib_device_hw(&dev, fit);
	for (size_t i = 0; i < pts->n; i++) {
		double r = calib_predict_s(&dev, &pts->p[i]) / pts->p[i].measured_s;
		if (pts->p[i].cls != HW_CLASS_MEMORY && fabs(r - 1) > 0.05)
			fail_msg("%s: predicted / measured %.3f", pts->p[i].spec, r);
	}
}

static void grid(struct calib_points *pts, const struct hw *t, bool wobble)
{
	static const int64_t shapes[][2] = {
	    {36864, 7168}, {4608, 7168}, {7168, 1536}, {96, 7168}, {24576, 512}, {49152, 128}};
	static const int64_t ms[] = {1,   2,   4,   8,    16,   32,   64,   96,   128,
	                             256, 384, 512, 1024, 1536, 2048, 4096, 8192, 16384};
	n_specs = 0;
	for (int64_t b = 4096; b <= ((int64_t)4 << 30); b *= 2) {
		add(pts, spec("copy bytes=%lld", (long long)b), t, 1);
		if (b >= 16384)
			add(pts, spec("copy bytes=%lld", (long long)(b / 4 * 3)), t, 1);
	}
	for (int d = 0; d < 2; d++)
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
			for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
				double f = wobble ? 1 + 0.08 * sin(3.0 * (double)s + log((double)ms[i])) : 1;
				add(pts,
				    spec("gemm m=%lld n=%lld k=%lld dtype=%s", (long long)ms[i],
				         (long long)shapes[s][0], (long long)shapes[s][1],
				         d ? "fp8" : "bf16"),
				    t, f);
			}
}

static void test_recovers_curves(void **state)
{
	(void)state;
	struct calib_points pts;
	calib_points_init(&pts);
	grid(&pts, &truth, false);
	struct hw fit;
	struct calib_fit_report rep;
	struct calib_fit_opts o = {.no_tables = true};
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &base, &o, &fit, &rep, &e), 0);
	assert_true(rep.memory.fitted && rep.gemm.fitted);
	assert_false(rep.kda_chunk.fitted);
	assert_true(fabs(fit.eff_memory.max / truth.eff_memory.max - 1) < 0.01);
	assert_true(fabs(fit.eff_memory.half / truth.eff_memory.half - 1) < 0.03);
	/* 216 GEMM points: the kernel costs (a fixed cost, a wave, a k step, FLOP efficiency per
	 * math dtype) are recovered */
	assert_true(fabs(fit.gemm_eff[DT_BF16] / truth.gemm_eff[DT_BF16] - 1) < 0.01);
	assert_true(fabs(fit.gemm_eff[DT_FP8] / truth.gemm_eff[DT_FP8] - 1) < 0.01);
	assert_true(fabs(fit.gemm_fixed_cycles / truth.gemm_fixed_cycles - 1) < 0.03);
	assert_true(fabs(fit.gemm_wave_cycles / truth.gemm_wave_cycles - 1) < 0.05);
	assert_true(fabs(fit.gemm_kstep_cycles / truth.gemm_kstep_cycles - 1) < 0.03);
	/* and the epilogue's store rate: the k = 128 shape at large m is store-bound */
	assert_true(fabs(fit.gemm_store_bytes_per_sm_cycle / truth.gemm_store_bytes_per_sm_cycle - 1) < 0.03);
	assert_true(fit.gemm_wave_smoothing == truth.gemm_wave_smoothing);
	assert_true(rep.gemm.after < 1e-3 && rep.gemm.after < rep.gemm.before);
	assert_true(fit.calibrated);
	assert_int_equal(fit.n_tables, 0);
	/* launch gaps are not in kernel durations: the base's stay */
	assert_true(fit.launch_latency_s == base.launch_latency_s);
	free(pts.p);
	pts.p = NULL;
	calib_points_release(&pts);
}

static void test_recovers_kda_and_comm(void **state)
{
	(void)state;
	/* only what these points determine differs from the base */
	struct hw t2 = base;
	t2.kda_chunk_step_cycles = truth.kda_chunk_step_cycles;
	t2.eff_comm = truth.eff_comm;
	t2.nvlink_latency_s = truth.nvlink_latency_s;
	struct calib_points pts;
	calib_points_init(&pts);
	n_specs = 0;
	for (int t = 1024; t <= 65536; t *= 4)
		for (int h = 12; h <= 96; h *= 2)
			add(&pts, spec("kda_chunk b=1 t=%d h=%d", t, h), &t2, 1);
	/* all-reduce at 2, 4 and 8 ranks, 14 sizes each: a model per rank count */
	for (int64_t b = 65536; b <= ((int64_t)512 << 20); b *= 2)
		for (int r = 2; r <= 8; r *= 2)
			add(&pts, spec("allreduce bytes=%lld ranks=%d", (long long)b, r), &t2, 1);
	/* the other kinds at 2 sizes per rank count: too few for models, they fit the interconnect */
	static const char *const others[] = {"allgather", "reducescatter", "alltoall"};
	for (int k = 0; k < 3; k++)
		for (int r = 2; r <= 8; r *= 2)
			for (int64_t b = 65536; b <= ((int64_t)256 << 20); b *= 4096)
				add(&pts, spec("%s bytes=%lld ranks=%d", others[k], (long long)b, r), &t2, 1);
	struct hw fit;
	struct calib_fit_report rep;
	struct calib_fit_opts o = {.no_tables = true};
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &base, &o, &fit, &rep, &e), 0);
	assert_true(rep.kda_chunk.fitted);
	assert_true(fabs(fit.kda_chunk_step_cycles / truth.kda_chunk_step_cycles - 1) < 0.01);
	assert_true(rep.comm.fitted);
	assert_int_equal(rep.comm.points, 18);
	assert_true(fabs(fit.eff_comm.max / truth.eff_comm.max - 1) < 0.02);
	assert_true(fabs(fit.nvlink_latency_s / truth.nvlink_latency_s - 1) < 0.05);
	/* per rank count the all-reduce is alpha-beta exactly: the truth's half is a latency there */
	assert_int_equal(fit.n_coll, 3);
	for (int r = 2; r <= 8; r *= 2) {
		const struct hw_coll_model *m = hw_coll_model(&fit, HW_COLL_ALLREDUCE, r);
		assert_non_null(m);
		assert_true(fabs(m->eff.max / truth.eff_comm.max - 1) < 0.01);
		double n = r, steps = 2 * log2(n);
		double lat = truth.nvlink_latency_s +
		             2 * (n - 1) / n * truth.eff_comm.half / (base.nvlink_bw_bytes_per_s * truth.eff_comm.max) / steps;
		assert_true(fabs(m->step_latency_s / lat - 1) < 0.03);
	}
	for (int i = 0; i < rep.n_coll; i++)
		assert_true(rep.coll[i].stage.fitted == (rep.coll[i].coll == HW_COLL_ALLREDUCE));
	free(pts.p);
	pts.p = NULL;
	calib_points_release(&pts);
}

static void test_tables_and_roundtrip(void **state)
{
	(void)state;
	struct calib_points pts;
	calib_points_init(&pts);
	grid(&pts, &truth, true); /* what a 2-parameter curve cannot follow */
	struct hw fit, curves;
	struct calib_fit_report rep;
	struct err e = {0};
	struct calib_fit_opts o = {.no_tables = true};
	assert_int_equal(calib_fit(&pts, &base, &o, &curves, &rep, &e), 0);
	assert_int_equal(calib_fit(&pts, &base, NULL, &fit, &rep, &e), 0);
	assert_int_equal(rep.gemm_shapes, 12);
	assert_true(rep.tables >= 3);
	struct calib_validation vc, vt;
	assert_int_equal(calib_validate(&vc, &pts, &curves, &e), 0);
	assert_int_equal(calib_validate(&vt, &pts, &fit, &e), 0);
	/* training points of the tables are reproduced where they never fall as a size grows (the
	 * wobble of 8 % makes some fall: those are pooled, never off by more than the wobble);
	 * held-out ones are much closer than the curves' */
	for (int c = 0; c < vt.n_cls; c++) {
		if (strncmp(vt.cls[c].label, "gemm", 4) == 0) {
			assert_true(vt.cls[c].train.med_abs_pct < 0.01);
			assert_true(vt.cls[c].train.max_abs_pct < 16);
			assert_true(vt.cls[c].held_out.med_abs_pct < vc.cls[c].held_out.med_abs_pct / 2);
			/* within the wobble: where it falls faster than the model rises, the
			 * measured shapes bound the time from both sides */
			assert_true(vt.cls[c].held_out.p90_abs_pct < 8);
		}
	}

	/* the preset as written loads back and predicts the same */
	struct hw back;
	preset_round_trip(&fit, &pts, &rep, &back);
	assert_true(back.calibrated);
	assert_int_equal(back.n_tables, fit.n_tables);
	assert_int_equal(back.n_gemm_points, fit.n_gemm_points);
	for (size_t i = 0; i < pts.n; i++) {
		double a = calib_predict_s(&fit, &pts.p[i]), b = calib_predict_s(&back, &pts.p[i]);
		assert_true(fabs(a / b - 1) < 1e-4);
	}
	calib_validation_release(&vc);
	calib_validation_release(&vt);
	free(pts.p);
	pts.p = NULL;
	calib_points_release(&pts);
}

/* AttnRes, routing and the combine measured at tokens 1..16K, copies beside them (issue 17): each
 * op kind of its own gets a table of its own class, fitted on the powers of 4 and predicting the
 * held-out token counts, and the copies' memory class does not take them in (before the kinds
 * they ran as elementwise ops under the copies' class, which charged them a copy's time). */
static void test_own_kind_classes(void **state)
{
	(void)state;
	struct calib_points pts;
	calib_points_init(&pts);
	n_specs = 0;
	add_copies(&pts);
	static const int tokens[] = {1, 2, 4, 16, 32, 64, 256, 512, 1024, 4096, 8192, 16384};
	for (int i = 0; i < 12; i++) {
		add(&pts, spec("attnres tokens=%d dim=7168 sources=9 delta=1", tokens[i]), &truth, 2.5);
		add(&pts, spec("route tokens=%d experts=896 top_k=16", tokens[i]), &truth, 8.0);
		add(&pts, spec("combine tokens=%d width=3584 top_k=16", tokens[i]), &truth, 1.5);
	}
	int held = 0;
	for (size_t i = 0; i < pts.n; i++)
		if (pts.p[i].cls != HW_CLASS_MEMORY) {
			assert_true(pts.p[i].cls == HW_CLASS_ATTNRES || pts.p[i].cls == HW_CLASS_ROUTE ||
				    pts.p[i].cls == HW_CLASS_COMBINE);
			held += pts.p[i].held_out;
		}
	assert_int_equal(held, 3 * 4); /* tokens 2, 32, 512, 8192 */
	struct hw fit;
	struct calib_fit_report rep;
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &base, NULL, &fit, &rep, &e), 0);
	assert_non_null(hw_table_find(&fit, HW_CLASS_ATTNRES, DT_BF16));
	assert_non_null(hw_table_find(&fit, HW_CLASS_ROUTE, DT_FP32));
	assert_non_null(hw_table_find(&fit, HW_CLASS_COMBINE, DT_BF16));
	assert_own_points_within_5pct(&fit, &pts);
	/* the preset as written loads them back */
	struct hw back;
	preset_round_trip(&fit, &pts, &rep, &back);
	assert_non_null(hw_table_find(&back, HW_CLASS_ROUTE, DT_FP32));
	free(pts.p);
	pts.p = NULL;
	calib_points_release(&pts);
}

/* The activation quantizer measured at tokens 1..16K beside copies: its own class (quant), a
 * table per output dtype (E4M3 with a scale a row, MXFP8), fitted on the powers of 4 and
 * predicting the held-out token counts; the copies' memory class does not take it in (as an
 * elementwise op it never trained: m x n = tokens x 3584 is no power of 2). */
static void test_quant_class(void **state)
{
	(void)state;
	struct calib_points pts;
	calib_points_init(&pts);
	n_specs = 0;
	add_copies(&pts);
	static const int tokens[] = {1, 2, 4, 16, 32, 64, 256, 512, 1024, 4096, 8192, 16384};
	for (int i = 0; i < 12; i++) {
		add(&pts, spec("k3sim op=quant tokens=%d width=3584 dtype=fp8 group=0", tokens[i]), &truth, 1.8);
		add(&pts, spec("quant tokens=%d width=3584 dtype=mxfp8", tokens[i]), &truth, 1.3);
	}
	int held = 0;
	for (size_t i = 0; i < pts.n; i++)
		if (pts.p[i].cls != HW_CLASS_MEMORY) {
			assert_int_equal(pts.p[i].cls, HW_CLASS_QUANT);
			held += pts.p[i].held_out;
		}
	assert_int_equal(held, 2 * 4); /* tokens 2, 32, 512, 8192 */
	struct hw fit;
	struct calib_fit_report rep;
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &base, NULL, &fit, &rep, &e), 0);
	const struct hw_table *f8 = hw_table_find(&fit, HW_CLASS_QUANT, DT_FP8),
			      *mx = hw_table_find(&fit, HW_CLASS_QUANT, DT_MXFP8);
	assert_non_null(f8);
	assert_non_null(mx);
	assert_false(f8->any_dtype);
	assert_int_equal(f8->dtype, DT_FP8);
	assert_int_equal(mx->dtype, DT_MXFP8);
	assert_own_points_within_5pct(&fit, &pts); /* every non-memory point is quant (above) */
	/* the preset as written loads them back (quant.fp8, quant.mxfp8) */
	struct hw back;
	preset_round_trip(&fit, &pts, &rep, &back);
	f8 = hw_table_find(&back, HW_CLASS_QUANT, DT_FP8);
	assert_non_null(f8);
	assert_false(f8->any_dtype);
	assert_non_null(hw_table_find(&back, HW_CLASS_QUANT, DT_MXFP8));
	free(pts.p);
	pts.p = NULL;
	calib_points_release(&pts);
}

/* Per collective kind at 2 ranks: each kind's own latency and bandwidth are recovered; with a
 * wobble the curves cannot follow, the per-kind tables take the rest; all of it loads back. */
static void test_recovers_collectives(void **state)
{
	(void)state;
	static const char *const kinds[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
	static const double lat[] = {3e-6, 5e-6, 4e-6, 2.5e-6}, mx[] = {0.63, 0.5, 0.48, 0.6};
	struct hw t2 = base;
	t2.n_coll = 4;
	for (int k = 0; k < 4; k++) {
		struct hw_coll_model *m = &t2.coll[k];
		memset(m, 0, sizeof *m);
		assert_int_equal(hw_coll_parse(kinds[k], &m->coll), 0);
		m->ranks = 2;
		m->step_latency_s = lat[k];
		m->eff.max = mx[k];
	}
	for (int wobble = 0; wobble < 2; wobble++) {
		struct calib_points pts;
		calib_points_init(&pts);
		n_specs = 0;
		for (int k = 0; k < 4; k++)
			for (int64_t b = 65536; b <= ((int64_t)1 << 30); b *= 2)
				for (int h = 0; h < (b > 65536 ? 2 : 1); h++) {
					int64_t bytes = h ? b / 4 * 3 : b; /* 0.75 x 2^k: held out */
					double f = wobble ? 1 + 0.15 * sin(2.0 * k + log((double)bytes) * 1.3) : 1;
					add(&pts, spec("%s bytes=%lld ranks=2", kinds[k], (long long)bytes), &t2, f);
				}
		struct hw fit;
		struct calib_fit_report rep;
		struct calib_fit_opts o = {.no_tables = !wobble};
		struct err e = {0};
		assert_int_equal(calib_fit(&pts, &base, &o, &fit, &rep, &e), 0);
		assert_int_equal(rep.n_coll, 4);
		assert_int_equal(fit.n_coll, 4);
		assert_false(rep.comm.fitted); /* every point has its model: the base's curve stays */
		assert_true(fit.eff_comm.max == base.eff_comm.max && fit.nvlink_latency_s == base.nvlink_latency_s);
		for (int k = 0; k < 4; k++) {
			enum hw_coll c;
			assert_int_equal(hw_coll_parse(kinds[k], &c), 0);
			const struct hw_coll_model *m = hw_coll_model(&fit, c, 2);
			assert_non_null(m);
			assert_int_equal(m->ranks, 2);
			/* more ranks: the 2-rank model (never faster per byte than measured) */
			assert_true(hw_coll_model(&fit, c, 8) == m);
			if (!wobble) {
				assert_true(rep.coll[k].stage.fitted && rep.coll[k].stage.after < 1e-3);
				assert_true(fabs(m->step_latency_s / lat[k] - 1) < 0.03);
				assert_true(fabs(m->eff.max / mx[k] - 1) < 0.01);
			}
		}
		if (wobble) {
			assert_int_equal(rep.tables, 4); /* comm.KIND.2 */
			struct calib_validation v;
			assert_int_equal(calib_validate(&v, &pts, &fit, &e), 0);
			for (int c = 0; c < v.n_cls; c++) {
				/* training points are reproduced, but where the wobble falls faster than
				 * the model rises: more bytes never take less time */
				assert_true(v.cls[c].train.med_abs_pct < 0.01);
				assert_true(v.cls[c].held_out.med_abs_pct < 3);
			}
			calib_validation_release(&v);
			for (int k = 0; k < 4; k++) {
				struct op op;
				assert_int_equal(opspec_parse_line(spec("%s bytes=1 ranks=2", kinds[k]), &op, &e), 0);
				double last = 0;
				for (int64_t b = 1024; b <= ((int64_t)4 << 30); b += b / 8) {
					struct op_cost c;
					op.comm_bytes = b;
					sim_op_cost(&fit, &op, NULL, &c);
					assert_true(c.time_s >= last * (1 - 1e-12)); /* rounding only */
					last = c.time_s;
				}
			}
			/* written and read back: the same models, tables and predictions */
			struct hw back;
			preset_round_trip(&fit, &pts, &rep, &back);
			assert_int_equal(back.n_coll, 4);
			assert_int_equal(back.n_tables, fit.n_tables);
			for (int i = 0; i < back.n_tables; i++)
				assert_true(back.tables[i].cls == HW_CLASS_COMM && !back.tables[i].any_coll &&
				            back.tables[i].ranks == 2);
			for (size_t i = 0; i < pts.n; i++) {
				double a = calib_predict_s(&fit, &pts.p[i]), b = calib_predict_s(&back, &pts.p[i]);
				assert_true(fabs(a / b - 1) < 1e-4);
			}
		}
		free(pts.p);
		pts.p = NULL;
		calib_points_release(&pts);
	}
}

static double bowl(const double *x, void *ctx)
{
	const double *c = ctx;
	return (x[0] - c[0]) * (x[0] - c[0]) + 10 * (x[1] - c[1]) * (x[1] - c[1]) + 1;
}

/* The base and the truth of the KDA overlap fits: base with the kernels' overlap rule, the truth
 * with it, the truth's step cycles, a share of 0.45 and 30000 fixed cycles. */
static void kda_overlap_pair(struct hw *b2, struct hw *t2)
{
	*b2 = base, *t2 = base;
	b2->kda_overlap_max_seqs = t2->kda_overlap_max_seqs = 1;
	b2->kda_overlap_min_heads = t2->kda_overlap_min_heads = 96;
	b2->kda_overlap_min_tokens = t2->kda_overlap_min_tokens = 4096;
	t2->kda_chunk_step_cycles = truth.kda_chunk_step_cycles;
	t2->kda_overlap_rec_share = 0.45;
	t2->kda_fixed_cycles = 30000;
}

/* KDA prefill's overlapped pair: with the base's rule, points of the rule's shapes (the pair's
 * wall time) and of others (serial) give back the share a recurrent CTA takes; the rule and
 * share are written to the preset and read back. */
static void test_recovers_kda_overlap(void **state)
{
	(void)state;
	struct hw b2, t2;
	kda_overlap_pair(&b2, &t2);
	struct calib_points pts;
	calib_points_init(&pts);
	n_specs = 0;
	/* one and two sequences: 16 training points, enough for the fixed cycles too (the fit takes
	 * them with at least twice as many points as parameters) */
	for (int b = 1; b <= 2; b++)
		for (int t = 1024; t <= 65536; t *= 4)
			for (int h = 12; h <= 96; h *= 2)
				add(&pts, spec("kda_chunk b=%d t=%d h=%d", b, t, h), &t2, 1);
	struct hw fit, back;
	struct calib_fit_report rep;
	struct calib_fit_opts o = {.no_tables = true};
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &b2, &o, &fit, &rep, &e), 0);
	assert_true(rep.kda_chunk.fitted);
	assert_true(fabs(fit.kda_overlap_rec_share / 0.45 - 1) < 0.05);
	assert_true(fabs(fit.kda_fixed_cycles / 30000 - 1) < 0.05);
	assert_int_equal(fit.kda_overlap_min_tokens, 4096);
	preset_round_trip(&fit, &pts, &rep, &back);
	assert_int_equal(back.kda_overlap_max_seqs, 1);
	assert_int_equal(back.kda_overlap_min_heads, 96);
	assert_true(fabs(back.kda_overlap_rec_share / fit.kda_overlap_rec_share - 1) < 1e-5);
	assert_true(fabs(back.kda_fixed_cycles / fit.kda_fixed_cycles - 1) < 1e-5);
	/* without the rule in the base the share is not fitted (and not written) */
	assert_int_equal(calib_fit(&pts, &base, &o, &fit, &rep, &e), 0);
	assert_true(fit.kda_overlap_rec_share == 0 && fit.kda_overlap_max_seqs == 0);
	calib_points_release(&pts);
	/* 4 training points (1K and 16K at 12 and 96 heads): fewer than twice the parameters with
	 * the fixed cycles, which then stay the base's (none) */
	calib_points_init(&pts);
	n_specs = 0;
	for (int t = 1024; t <= 16384; t *= 16)
		for (int h = 12; h <= 96; h *= 8)
			add(&pts, spec("kda_chunk b=1 t=%d h=%d", t, h), &t2, 1);
	assert_int_equal(calib_fit(&pts, &b2, &o, &fit, &rep, &e), 0);
	assert_int_equal(rep.kda_chunk.points, 4);
	assert_true(fit.kda_fixed_cycles == 0);
	calib_points_release(&pts);
}

/* KDA prefill's pair kernel (hw.h kda_pair_*): with the base's rule (at most 96 pairs), points
 * inside it and outside give back the ratio of its chain to the chunk kernel's, beside the
 * overlapped pair's share; written and read back; without the rule in the base it is not fitted
 * (and not written). */
static void test_recovers_kda_pair(void **state)
{
	(void)state;
	struct hw b2, t2;
	kda_overlap_pair(&b2, &t2);
	b2.kda_pair_max_pairs = t2.kda_pair_max_pairs = 96;
	b2.kda_pair_chain_ratio = 1;
	t2.kda_pair_chain_ratio = 0.8;
	struct calib_points pts;
	calib_points_init(&pts);
	n_specs = 0;
	for (int b = 1; b <= 4; b *= 2)
		for (int t = 1024; t <= 65536; t *= 4)
			for (int h = 12; h <= 96; h *= 2)
				add(&pts, spec("kda_chunk b=%d t=%d h=%d", b, t, h), &t2, 1);
	struct hw fit, back;
	struct calib_fit_report rep;
	struct calib_fit_opts o = {.no_tables = true};
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &b2, &o, &fit, &rep, &e), 0);
	assert_true(rep.kda_chunk.fitted);
	if (!(fabs(fit.kda_pair_chain_ratio / 0.8 - 1) < 0.05 && fabs(fit.kda_overlap_rec_share / 0.45 - 1) < 0.05))
		fail_msg("ratio %.4f (0.8), share %.4f (0.45)", fit.kda_pair_chain_ratio, fit.kda_overlap_rec_share);
	assert_int_equal(fit.kda_pair_max_pairs, 96);
	preset_round_trip(&fit, &pts, &rep, &back);
	assert_int_equal(back.kda_pair_max_pairs, 96);
	assert_true(fabs(back.kda_pair_chain_ratio / fit.kda_pair_chain_ratio - 1) < 1e-5);
	/* without the rule in the base the ratio is not fitted */
	assert_int_equal(calib_fit(&pts, &base, &o, &fit, &rep, &e), 0);
	assert_true(fit.kda_pair_chain_ratio == 0 && fit.kda_pair_max_pairs == 0);
	calib_points_release(&pts);
}

/* The MXFP4 grouped kernel's expansion rate (hw.h grouped_fp4_*): with the base's chunk rule,
 * tiled grouped GEMMs of one and of two chunks an expert (T = 4K and 16K of K3's routing) give
 * back the rate; written and read back; a wider spread of rows then costs more; without the rule
 * it is not fitted. */
static void test_recovers_fp4_rate(void **state)
{
	(void)state;
	struct hw b2 = base, t2 = base;
	b2.grouped_fp4_chunk_rows = t2.grouped_fp4_chunk_rows = 160;
	b2.grouped_fp4_small_chunk_rows = t2.grouped_fp4_small_chunk_rows = 128;
	b2.grouped_fp4_gemv_rows = t2.grouped_fp4_gemv_rows = 16;
	t2.grouped_fp4_welems_per_sm_cycle = 12;
	struct calib_points pts;
	calib_points_init(&pts);
	n_specs = 0;
	for (int64_t m = 1024; m <= 262144; m *= 4) {
		add(&pts, spec("grouped_gemm m=%lld n=6144 k=3584 groups=896 touched=896 dtype=bf16 w_dtype=mxfp4",
			       (long long)m), &t2, 1);
		add(&pts, spec("grouped_gemm m=%lld n=3584 k=3072 groups=896 touched=896 dtype=bf16 w_dtype=mxfp4",
			       (long long)m), &t2, 1);
	}
	struct hw fit, back;
	struct calib_fit_report rep;
	struct calib_fit_opts o = {.no_tables = true};
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &b2, &o, &fit, &rep, &e), 0);
	assert_true(rep.grouped_fp4.fitted);
	assert_int_equal(rep.grouped_fp4.points, 6); /* m <= 4096 (<= 16 rows an expert): the gemv's */
	if (!(fabs(fit.grouped_fp4_welems_per_sm_cycle / 12 - 1) < 0.03))
		fail_msg("rate %.4g, truth 12", fit.grouped_fp4_welems_per_sm_cycle);
	assert_true(rep.grouped_fp4.after < 0.1 * rep.grouped_fp4.before);
	preset_round_trip(&fit, &pts, &rep, &back);
	assert_int_equal(back.grouped_fp4_chunk_rows, 160);
	assert_int_equal(back.grouped_fp4_gemv_rows, 16);
	assert_true(fabs(back.grouped_fp4_welems_per_sm_cycle / fit.grouped_fp4_welems_per_sm_cycle - 1) < 1e-5);
	struct op op;
	assert_int_equal(opspec_parse_line("grouped_gemm m=262144 n=6144 k=3584 groups=896 dtype=bf16 w_dtype=mxfp4",
					   &op, &e), 0);
	struct op_cost c0, c1;
	sim_op_cost(&fit, &op, NULL, &c0);
	op.expert_cv = 0.176; /* the slice's routing (2026-12-02r): ~12 % more chunks */
	sim_op_cost(&fit, &op, NULL, &c1);
	assert_true(c1.time_s > 1.03 * c0.time_s && c1.time_s < 1.12 * c0.time_s);
	/* without the rule in the base the rate is not fitted */
	assert_int_equal(calib_fit(&pts, &base, &o, &fit, &rep, &e), 0);
	assert_true(fit.grouped_fp4_welems_per_sm_cycle == 0 && !rep.grouped_fp4.fitted);
	calib_points_release(&pts);
}

/* The MXFP4 experts (16-bit activations) and BF16-weight grouped GEMMs are two classes with two
 * tables (sim_gemm_table_dtype): measured at 0.5 x and 2 x the model, each op is costed by its own
 * table; a preset without the mxfp4 table costs the MXFP4 experts with the 16-bit one. */
static void test_mxfp4_table_apart(void **state)
{
	(void)state;
	struct calib_points pts;
	calib_points_init(&pts);
	n_specs = 0;
	for (int64_t m = 16; m <= 262144; m *= 4) {
		add(&pts, spec("grouped_gemm m=%lld n=6144 k=3584 groups=896 dtype=bf16 w_dtype=mxfp4", (long long)m),
		    &base, 0.5);
		add(&pts, spec("grouped_gemm m=%lld n=128 k=512 groups=96 dtype=bf16", (long long)m), &base, 2.0);
	}
	assert_string_equal(pts.p[0].label, "grouped_gemm.mxfp4");
	assert_string_equal(pts.p[1].label, "grouped_gemm.bf16");
	struct hw fit;
	struct calib_fit_report rep;
	struct err e = {0};
	assert_int_equal(calib_fit(&pts, &base, NULL, &fit, &rep, &e), 0);
	const struct hw_table *t4 = hw_table_find(&fit, HW_CLASS_GROUPED_GEMM, DT_MXFP4);
	const struct hw_table *t16 = hw_table_find(&fit, HW_CLASS_GROUPED_GEMM, DT_BF16);
	assert_non_null(t4);
	assert_non_null(t16);
	assert_true(t4 != t16 && t4->dtype == DT_MXFP4 && t16->dtype == DT_BF16);
	struct op a, b;
	assert_int_equal(opspec_parse_line("grouped_gemm m=65536 n=6144 k=3584 groups=896 dtype=bf16 w_dtype=mxfp4",
					   &a, &e), 0);
	assert_int_equal(opspec_parse_line("grouped_gemm m=65536 n=128 k=512 groups=96 dtype=bf16", &b, &e), 0);
	struct op_cost c0, ca, cb;
	sim_op_cost(&base, &a, NULL, &c0);
	sim_op_cost(&fit, &a, NULL, &ca);
	if (!(fabs(ca.time_s / c0.time_s - 0.5) < 0.05))
		fail_msg("mxfp4: %.3f of the model (0.5)", ca.time_s / c0.time_s);
	sim_op_cost(&base, &b, NULL, &c0);
	sim_op_cost(&fit, &b, NULL, &cb);
	if (!(fabs(cb.time_s / c0.time_s - 2.0) < 0.2))
		fail_msg("bf16: %.3f of the model (2)", cb.time_s / c0.time_s);
	/* no mxfp4 table: the 16-bit one prices the MXFP4 experts (the presets before the split) */
	for (int i = 0; i < fit.n_tables; i++)
		if (fit.tables[i].cls == HW_CLASS_GROUPED_GEMM && fit.tables[i].dtype == DT_MXFP4)
			fit.tables[i].cls = HW_CLASS_ATTENTION_PREFILL; /* out of the way */
	sim_op_cost(&fit, &a, NULL, &ca);
	assert_true(ca.calibrated); /* by the bf16 table (outside its ops' range: extrapolated) */
	for (int i = 0; i < fit.n_tables; i++)
		if (fit.tables[i].cls == HW_CLASS_GROUPED_GEMM)
			fit.tables[i].cls = HW_CLASS_ATTENTION_PREFILL;
	sim_op_cost(&fit, &a, NULL, &ca);
	assert_false(ca.calibrated);
	calib_points_release(&pts);
}

static void test_nelder_mead(void **state)
{
	(void)state;
	double c[2] = {3, -2}, x[2] = {0, 0}, step[2] = {1, 1};
	double f = calib_nelder_mead(bowl, c, x, step, 2, 1000);
	assert_true(fabs(f - 1) < 1e-8);
	assert_true(fabs(x[0] - 3) < 1e-3 && fabs(x[1] + 2) < 1e-3);
}

/* hw/ writes a preset's scalar keys by walking the table it reads them with (issue 15): every
 * shipped preset, written by calib_preset_write and read back, keeps its device, interconnect
 * and kernel numbers (to the written precision). */
static void test_presets_write_back(void **state)
{
	(void)state;
	const char *const *names = hw_preset_names();
	int n = 0;
	for (int i = 0; names[i]; i++, n++) {
		struct hw h, back;
		struct err e = {0};
		if (hw_load(&h, names[i], &e) < 0)
			fail_msg("%s: %s", names[i], e.msg);
		preset_round_trip(&h, NULL, NULL, &back);
#define SAME_I(f) assert_int_equal(h.f, back.f)
#define SAME_D(f, digits)                                                                           \
	do {                                                                                         \
		if (fabs(h.f - back.f) > fabs(h.f) * 5 * pow(10, -(digits)))                        \
			fail_msg("%s: %s %.17g written, %.17g read back", names[i], #f, h.f, back.f); \
	} while (0)
		SAME_I(sms);
		SAME_D(sm_clock_hz, 9);
		SAME_D(sustained_sm_clock_hz, 9);
		SAME_D(power_limit_w, 9);
		SAME_D(power_idle_w, 9);
		SAME_D(power_flop_j, 9);
		SAME_D(power_byte_j, 9);
		SAME_D(power_tau_s, 9);
		SAME_D(power_min_sm_clock_hz, 9);
		assert_true(llabs(h.l2_bytes - back.l2_bytes) <= 1 + h.l2_bytes / 100000000);
		assert_true(llabs(h.hbm_bytes - back.hbm_bytes) <= 1 + h.hbm_bytes / 100000000);
		assert_true(llabs(h.smem_per_sm_bytes - back.smem_per_sm_bytes) <= 1);
		SAME_D(hbm_bw_bytes_per_s, 9);
		SAME_D(l2_bw_bytes_per_s, 9);
		SAME_D(vector_flops_per_s, 9);
		SAME_D(launch_latency_s, 9);
		SAME_D(graph_launch_latency_s, 9);
		for (int t = 0; t < DT_COUNT; t++)
			SAME_D(tensor_flops_per_s[t], 9);
		SAME_I(domain_gpus);
		SAME_D(nvlink_bw_bytes_per_s, 9);
		SAME_D(nvlink_latency_s, 9);
		SAME_D(nic_bw_bytes_per_s, 9);
		SAME_D(nic_latency_s, 9);
		SAME_I(gemm_tile_m);
		SAME_I(gemm_tile_n);
		SAME_D(gemm_wave_smoothing, 6);
		SAME_D(gemm_fixed_cycles, 9);
		SAME_D(gemm_store_bytes_per_sm_cycle, 9);
		SAME_D(kda_chunk_step_cycles, 6);
		SAME_D(kda_step_row_cycles, 6);
		SAME_D(kda_fixed_cycles, 6);
		SAME_I(kda_max_v_split);
		SAME_I(kda_overlap_max_seqs);
		SAME_I(kda_overlap_min_heads);
		SAME_I(kda_overlap_min_tokens);
		SAME_D(kda_overlap_rec_share, 6);
		SAME_I(kda_pair_max_pairs);
		SAME_D(kda_pair_chain_ratio, 6);
		assert_true(llabs(h.reserved_bytes - back.reserved_bytes) <= 1 + h.reserved_bytes / 100000000);
		for (int t = 0; t < DT_COUNT; t++)
			SAME_D(gemm_eff[t], 9);
#undef SAME_I
#undef SAME_D
	}
	assert_true(n >= 5);
}

/* Stage 6: clocks recorded under known FLOP and byte energies (the controller run over rows of
 * back-to-back ops with idle gaps between rows, as a bench runs) give those energies back. */
static void test_recovers_power(void **state)
{
	(void)state;
	static const char *const rows[] = {"gemm m=16384 n=36864 k=7168 dtype=bf16", "copy bytes=4294967296",
					   "gemm m=4096 n=7168 k=7168 dtype=bf16", "copy bytes=268435456",
					   "gemm m=16384 n=4608 k=7168 dtype=bf16"};
	struct hw b2, t2, dev;
	struct err e = {0};
	assert_int_equal(hw_load(&b2, "h200-datasheet", &e), 0);
	b2.power_limit_w = 700;
	b2.power_idle_w = 125;
	b2.power_tau_s = 0.01;
	b2.power_min_sm_clock_hz = 1395e6;
	b2.power_flop_j = 0.3e-12;
	b2.power_byte_j = 20e-12;
	t2 = b2;
	t2.power_flop_j = 1.2e-12;
	t2.power_byte_j = 60e-12;
	calib_device_hw(&dev, &t2);
	struct calib_points pts;
	calib_points_init(&pts);
	pts.n_sources = 1;
	struct sim_power_state st;
	sim_power_idle(&dev, &st);
	int64_t t_ns = 0;
	bool throttled = false;
	for (int r = 0; r < 40; r++) {
		struct calib_instance in = {.source = 0};
		assert_int_equal(opspec_parse_line(rows[r % 5], &in.op, &e), 0);
		struct sim_power_op po;
		sim_power_op_cost(&dev, &in.op, &po);
		for (int i = 0; i < 5 + r % 7 * 5; i++) {
			double hz, s = sim_power_run(&dev, &st, &po, &hz);
			in.start_ns = t_ns;
			in.end_ns = t_ns += (int64_t)(s * 1e9);
			in.sm_clock_hz = hz;
			throttled = throttled || hz < dev.sm_clock_hz;
			assert_int_equal(calib_points_add_instance(&pts, &in), 0);
		}
		sim_power_rest(&dev, &st, 0.002 * (r % 4) * (r % 4)); /* idle between rows */
		t_ns += (int64_t)(0.002e9 * (r % 4) * (r % 4));
	}
	assert_true(throttled);
	add(&pts, "copy bytes=1048576", &b2, 1); /* a fit needs a training point */
	struct hw fit;
	struct calib_fit_report rep;
	assert_int_equal(calib_fit(&pts, &b2, NULL, &fit, &rep, &e), 0);
	assert_true(rep.power.fitted && rep.power.after < rep.power.before && rep.power.after < 1e-3);
	assert_true(fabs(fit.power_flop_j / t2.power_flop_j - 1) < 0.05);
	assert_true(fabs(fit.power_byte_j / t2.power_byte_j - 1) < 0.1);
	assert_true(fit.power_tau_s == b2.power_tau_s && fit.power_limit_w == b2.power_limit_w);
	/* a measured byte energy (power_byte_held) is kept as it is; the FLOP energy still comes back */
	b2.power_byte_j = t2.power_byte_j;
	b2.power_byte_held = 1;
	assert_int_equal(calib_fit(&pts, &b2, NULL, &fit, &rep, &e), 0);
	assert_true(fit.power_byte_j == t2.power_byte_j && fit.power_byte_held == 1);
	assert_true(fabs(fit.power_flop_j / t2.power_flop_j - 1) < 0.05);
	calib_points_release(&pts);
}

/* The power fits' base: h200-datasheet with a limit nothing reaches (the clock stage keeps the
 * base's energies), idle 125 W, a global FLOP energy of 0.3 pJ and a byte of 20 pJ. */
static void power_base(struct hw *b2)
{
	struct err e = {0};
	assert_int_equal(hw_load(b2, "h200-datasheet", &e), 0);
	b2->power_limit_w = 5000;
	b2->power_idle_w = 125;
	b2->power_tau_s = 0.01;
	b2->power_min_sm_clock_hz = 1395e6;
	b2->power_flop_j = 0.3e-12;
	b2->power_byte_j = 20e-12;
}

/* 20 instances of each op of rows[0, n) back to back at boost, each with 2 power readings of the
 * draw truth_hw gives it plus extra_w[r] (NULL: none). */
static void add_drawn(struct calib_points *pts, const char *const *rows, int n, const struct hw *truth_hw,
		      const double *extra_w)
{
	struct err e = {0};
	int64_t t_ns = 0;
	for (int r = 0; r < n; r++) {
		struct calib_instance in = {.source = 0, .sm_clock_hz = truth_hw->sm_clock_hz, .power_readings = 2};
		assert_int_equal(opspec_parse_line(rows[r], &in.op, &e), 0);
		struct sim_power_op po;
		sim_power_op_cost(truth_hw, &in.op, &po);
		in.power_w = sim_power_draw_w(truth_hw, &po, truth_hw->sm_clock_hz) + (extra_w ? extra_w[r] : 0);
		for (int i = 0; i < 20; i++) {
			in.start_ns = t_ns;
			in.end_ns = t_ns += (int64_t)(po.boost_s * 1e9);
			assert_int_equal(calib_points_add_instance(pts, &in), 0);
		}
	}
}

/* Stage 6's class energies: instances of each op run back to back with power readings drawn
 * with known FLOP energies per class (the gemm and MLA decode classes, two ops each) are fitted
 * back; a class with one op only (elementwise, vector) keeps the global energy (0). */
static void test_recovers_power_classes(void **state)
{
	(void)state;
	static const char *const rows[] = {"gemm m=4096 n=7168 k=7168 dtype=bf16", "gemm m=1024 n=12288 k=7168 dtype=bf16",
					   "mla_decode b=64 heads=96 ctx=65535 kv=bf16 t=1",
					   "mla_decode b=16 heads=128 ctx=32767 kv=bf16 t=1",
					   "elementwise m=65536 n=7168 dtype=bf16"};
	struct hw b2, truth_hw;
	struct err e = {0};
	power_base(&b2);
	truth_hw = b2;
	truth_hw.power_flop_j_class[HW_POWER_GEMM] = 0.8e-12;
	truth_hw.power_flop_j_class[HW_POWER_MLA_DECODE] = 2.5e-12;
	truth_hw.power_flop_j_class[HW_POWER_VECTOR] = 40e-12; /* one op: not fitted */
	struct calib_points pts;
	calib_points_init(&pts);
	pts.n_sources = 1;
	add_drawn(&pts, rows, 5, &truth_hw, NULL);
	add(&pts, "copy bytes=1048576", &b2, 1);
	struct hw fit;
	struct calib_fit_report rep;
	assert_int_equal(calib_fit(&pts, &b2, NULL, &fit, &rep, &e), 0);
	assert_true(fabs(fit.power_flop_j / b2.power_flop_j - 1) < 1e-9);
	assert_true(rep.power_class[HW_POWER_GEMM].fitted && rep.power_class[HW_POWER_GEMM].points == 2);
	assert_true(rep.power_class[HW_POWER_MLA_DECODE].fitted);
	assert_true(rep.power_class[HW_POWER_MLA_DECODE].after < rep.power_class[HW_POWER_MLA_DECODE].before);
	assert_true(fabs(fit.power_flop_j_class[HW_POWER_GEMM] / 0.8e-12 - 1) < 0.02);
	assert_true(fabs(fit.power_flop_j_class[HW_POWER_MLA_DECODE] / 2.5e-12 - 1) < 0.02);
	/* one op of the vector class: the global energy; none of grouped GEMMs: likewise */
	assert_false(rep.power_class[HW_POWER_VECTOR].fitted);
	assert_int_equal(rep.power_class[HW_POWER_VECTOR].points, 1);
	assert_true(fit.power_flop_j_class[HW_POWER_VECTOR] == 0);
	assert_true(fit.power_flop_j_class[HW_POWER_GROUPED_GEMM] == 0);
	assert_true(sim_power_flop_j(&fit, HW_POWER_VECTOR) == fit.power_flop_j);
	/* without power readings no class is fitted: a base's class energies are dropped, the
	 * global one serves every class */
	for (size_t i = 0; i < pts.n_inst; i++)
		pts.inst[i].power_w = 0, pts.inst[i].power_readings = 0;
	b2.power_flop_j_class[HW_POWER_MLA_DECODE] = 9e-12;
	assert_int_equal(calib_fit(&pts, &b2, NULL, &fit, &rep, &e), 0);
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		assert_true(fit.power_flop_j_class[c] == 0 && !rep.power_class[c].fitted);
	calib_points_release(&pts);
}

/* A class with an active draw in the base (hw power_active_w_<class>: measured whole) is held: its
 * FLOP energy and active draw come back as the base has them, with or without power readings, and
 * the other classes are fitted around it (their readings drawn without one). */
static void test_holds_active_classes(void **state)
{
	(void)state;
	static const char *const rows[] = {"gemm m=4096 n=7168 k=7168 dtype=bf16", "gemm m=1024 n=12288 k=7168 dtype=bf16",
					   "mla_decode b=64 heads=96 ctx=65535 kv=bf16 t=1",
					   "mla_decode b=16 heads=128 ctx=32767 kv=bf16 t=1"};
	struct hw b2, truth_hw;
	struct err e = {0};
	power_base(&b2);
	b2.power_active_w_class[HW_POWER_MLA_DECODE] = 300;
	b2.power_flop_j_class[HW_POWER_MLA_DECODE] = 1.0e-12;
	truth_hw = b2;
	truth_hw.power_flop_j_class[HW_POWER_GEMM] = 0.8e-12;
	struct calib_points pts;
	calib_points_init(&pts);
	pts.n_sources = 1;
	/* the held class's readings say otherwise: held all the same */
	static const double extra[] = {0, 0, 150, 150};
	add_drawn(&pts, rows, 4, &truth_hw, extra);
	add(&pts, "copy bytes=1048576", &b2, 1);
	struct hw fit;
	struct calib_fit_report rep;
	assert_int_equal(calib_fit(&pts, &b2, NULL, &fit, &rep, &e), 0);
	assert_true(fit.power_active_w_class[HW_POWER_MLA_DECODE] == 300);
	assert_true(fit.power_flop_j_class[HW_POWER_MLA_DECODE] == 1.0e-12);
	assert_false(rep.power_class[HW_POWER_MLA_DECODE].fitted);
	assert_true(rep.power_class[HW_POWER_GEMM].fitted);
	assert_true(fabs(fit.power_flop_j_class[HW_POWER_GEMM] / 0.8e-12 - 1) < 0.02);
	/* without readings: the held class stays, the others drop to the global energy */
	for (size_t i = 0; i < pts.n_inst; i++)
		pts.inst[i].power_w = 0, pts.inst[i].power_readings = 0;
	assert_int_equal(calib_fit(&pts, &b2, NULL, &fit, &rep, &e), 0);
	assert_true(fit.power_flop_j_class[HW_POWER_MLA_DECODE] == 1.0e-12);
	assert_true(fit.power_active_w_class[HW_POWER_MLA_DECODE] == 300);
	assert_true(fit.power_flop_j_class[HW_POWER_GEMM] == 0);
	calib_points_release(&pts);
}

int main(void)
{
	struct err e = {0};
	if (hw_load(&base, "h200-datasheet", &e) < 0)
		return 1;
	truth = base;
	truth.eff_memory.max = 0.82;
	truth.eff_memory.half = 6.0 * 1048576;
	truth.eff_gemm.max = 0.74;
	truth.eff_gemm.half = 0.9e9;
	truth.gemm_wave_smoothing = 0.5;
	truth.gemm_fixed_cycles = 5000;
	truth.gemm_wave_cycles = 1400;
	truth.gemm_kstep_cycles = 60;
	truth.gemm_store_bytes_per_sm_cycle = 12;
	truth.gemm_eff[DT_BF16] = truth.gemm_eff[DT_FP16] = 0.74;
	truth.gemm_eff[DT_FP8] = 0.66;
	truth.kda_chunk_step_cycles = 2500;
	truth.eff_comm.max = 0.7;
	truth.eff_comm.half = 2.0 * 1048576;
	truth.nvlink_latency_s = 5e-6;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_presets_write_back),
	    cmocka_unit_test(test_nelder_mead),
	    cmocka_unit_test(test_recovers_curves),
	    cmocka_unit_test(test_recovers_kda_and_comm),
	    cmocka_unit_test(test_recovers_kda_overlap),
	    cmocka_unit_test(test_recovers_kda_pair),
	    cmocka_unit_test(test_recovers_fp4_rate),
	    cmocka_unit_test(test_mxfp4_table_apart),
	    cmocka_unit_test(test_tables_and_roundtrip),
	    cmocka_unit_test(test_own_kind_classes),
	    cmocka_unit_test(test_quant_class),
	    cmocka_unit_test(test_recovers_collectives),
	    cmocka_unit_test(test_recovers_power),
	    cmocka_unit_test(test_recovers_power_classes),
	    cmocka_unit_test(test_holds_active_classes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
