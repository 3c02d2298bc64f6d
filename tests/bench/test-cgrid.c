/* bench/calib/cgrid: the calibration grid is K3's real per-GPU shapes (derived from the model
 * through the simulator's mapping, not listed by hand), every NVTX text is a valid `k3sim op`
 * line for the point it names, and the full grid fits its time budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <errno.h>

#include <cmocka.h>

#include "bench/calib/cgrid.h"
#include "sim/opspec.h"

static struct cgrid *build(bool quick, bool compute_only)
{
	struct cgrid_opts o = {.gemm = true, .grouped = true, .copy = true, .quick = quick,
			       .compute_only = compute_only};
	struct cgrid *g = NULL;
	struct err e = {0};
	int rc = cgrid_new(&g, &o, &e);
	if (rc < 0)
		fail_msg("cgrid_new: %s", e.msg);
	return g;
}

static const struct cgrid_shape *shape(const struct cgrid *g, int64_t n, int64_t k)
{
	for (int i = 0; i < g->n_shapes; i++)
		if (g->shapes[i].n == n && g->shapes[i].k == k)
			return &g->shapes[i];
	return NULL;
}

static int points_of(const struct cgrid *g, enum cgrid_kind kind, int64_t n, int64_t k, enum cgrid_dtype d)
{
	int c = 0;
	for (int i = 0; i < g->n_points; i++) {
		const struct cgrid_point *p = &g->points[i];
		c += p->kind == kind && p->n == n && p->k == k && p->dtype == d;
	}
	return c;
}

/* K3 (hidden 7168, 96 KDA heads of 128, MLA latent 512 + 64, 896 experts, vocab 163840). */
static void test_k3_shapes(void **state)
{
	(void)state;
	struct cgrid *g = build(false, false);
	assert_int_equal(g->n_tp, 5);
	assert_int_equal(g->tp[4], 16);
	/* beta_proj: one column per head, 96 / TP; the shape issue 11 found unmeasured */
	static const int64_t beta_n[] = {96, 48, 24, 12, 6};
	for (int i = 0; i < 5; i++) {
		const struct cgrid_shape *s = shape(g, beta_n[i], 7168);
		assert_non_null(s);
		assert_non_null(strstr(s->origin, "kda.beta_proj"));
	}
	assert_non_null(strstr(shape(g, 12, 7168)->origin, "kda.beta_proj tp8"));
	/* KDA qkv 3 x 12288 / TP, o_proj's K split */
	assert_non_null(shape(g, 36864, 7168));
	assert_non_null(shape(g, 2304, 7168));
	assert_non_null(strstr(shape(g, 7168, 768)->origin, "kda.o_proj tp16"));
	/* the 576-wide latent, replicated on every TP rank */
	assert_non_null(strstr(shape(g, 576, 7168)->origin, "mla.kv_a tp1 tp2 tp4 tp8 tp16"));
	/* router (896 experts) + latent down projection (3584), split by TP */
	assert_non_null(strstr(shape(g, 4480, 7168)->origin, "moe.router_down tp1"));
	assert_non_null(strstr(shape(g, 560, 7168)->origin, "moe.router_down tp8"));
	/* LM head slices, dense FFN (layer 1), shared expert */
	assert_non_null(strstr(shape(g, 20480, 7168)->origin, "lm_head tp8"));
	assert_non_null(strstr(shape(g, 10240, 7168)->origin, "lm_head tp16"));
	assert_non_null(strstr(shape(g, 8448, 7168)->origin, "ffn.gate_up tp8"));
	assert_non_null(strstr(shape(g, 7168, 6144)->origin, "moe.shared_down tp1"));
	/* no shape twice */
	for (int i = 0; i < g->n_shapes; i++)
		for (int j = i + 1; j < g->n_shapes; j++)
			assert_false(g->shapes[i].n == g->shapes[j].n && g->shapes[i].k == g->shapes[j].k);

	/* grouped: EP 8..64 -> 112, 56, 28, 14 experts a rank; gate_up and down */
	assert_int_equal(g->n_ep, 4);
	assert_int_equal(g->experts, 896);
	assert_int_equal(g->top_k, 16);
	int found = 0;
	for (int i = 0; i < g->n_gshapes; i++) {
		const struct cgrid_gshape *s = &g->gshapes[i];
		assert_int_equal(s->groups * s->ep, 896);
		assert_true((s->n == 6144 && s->k == 3584) || (s->n == 3584 && s->k == 3072));
		found += s->ep == 16 && s->n == 6144;
	}
	assert_int_equal(found, 1);
	assert_int_equal(g->n_gshapes, 8);
	cgrid_free(g);
}

/* Token counts: 1 .. 16384, powers of two and the 3 x 2^k held out between them. */
static void test_m_values(void **state)
{
	(void)state;
	int64_t m[64];
	int n = cgrid_m_values(false, m, 64);
	assert_int_equal(n, 28);
	assert_int_equal(m[0], 1);
	assert_int_equal(m[1], 2);
	assert_int_equal(m[2], 3);
	assert_int_equal(m[n - 2], 12288);
	assert_int_equal(m[n - 1], 16384);
	for (int i = 1; i < n; i++)
		assert_true(m[i] > m[i - 1]);
	int q = cgrid_m_values(true, m, 64);
	assert_true(q >= 9 && q <= 12);
	assert_int_equal(m[0], 1);
	assert_int_equal(m[q - 1], 16384);
	assert_int_equal(cgrid_m_values(false, m, 4), 4);
}

/* Every NVTX text parses as the op it measures (what `k3sim trace validate` and calibrate read). */
static void test_specs_parse(void **state)
{
	(void)state;
	struct cgrid *g = build(false, false);
	int grouped_touched = 0;
	for (int i = 0; i < g->n_points; i++) {
		const struct cgrid_point *p = &g->points[i];
		struct op op;
		struct err e = {0};
		if (opspec_parse_line(p->spec, &op, &e) < 0)
			fail_msg("'%s': %s", p->spec, e.msg);
		assert_int_equal(strncmp(p->spec, "k3sim op=", 9), 0);
		switch (p->kind) {
		case CGRID_GEMM:
			assert_int_equal(op.kind, OP_GEMM);
			assert_true(op.m == p->m && op.n == p->n && op.k == p->k);
			assert_int_equal(op.a_dtype, p->dtype == CGRID_FP8 ? DT_FP8 : DT_BF16);
			break;
		case CGRID_GROUPED:
			assert_int_equal(op.kind, OP_GROUPED_GEMM);
			assert_true(op.m == p->m && op.n == p->n && op.k == p->k && op.groups == p->groups);
			assert_true(op.groups_touched == (double)p->touched);
			assert_int_equal(p->m, p->touched * p->rows_per_group);
			grouped_touched += p->touched < p->groups;
			break;
		case CGRID_COPY:
			assert_int_equal(op.n, p->bytes);
			break;
		}
		assert_true(p->flops <= 6e12);
	}
	assert_true(grouped_touched > 0); /* decode batches that reach fewer experts than held */
	/* both dtypes everywhere; the largest point in range */
	assert_true(points_of(g, CGRID_GEMM, 12, 7168, CGRID_BF16) == 28);
	assert_true(points_of(g, CGRID_GEMM, 12, 7168, CGRID_FP8) == 28);
	assert_true(points_of(g, CGRID_GROUPED, 6144, 3584, CGRID_FP8) > 40);
	cgrid_free(g);
}

/* The full burst grid fits the run script's budget (150 s of measuring); the sustained subset is
 * compute-bound only, and its preheat is counted. */
static void test_budget(void **state)
{
	(void)state;
	struct cgrid *g = build(false, false);
	struct cgrid_timing t;
	cgrid_timing_default(&t, false);
	double full = cgrid_estimate_s(g, &t);
	assert_true(full > 5 && full < 150);
	int64_t instances = 0;
	for (int i = 0; i < g->n_points; i++) {
		int r = cgrid_point_reps(&g->points[i], &t);
		assert_true(r >= t.min_reps && r <= t.max_reps);
		instances += r;
	}
	/* a capture of ~320 B per instance (the 2026-11-29 run) must shrink under 16 MiB with xz */
	assert_true(instances < 120000);
	cgrid_free(g);

	struct cgrid *c = build(false, true);
	struct cgrid_timing ts;
	cgrid_timing_default(&ts, true);
	assert_true(c->n_points > 100);
	for (int i = 0; i < c->n_points; i++) {
		assert_true(c->points[i].compute_bound);
		assert_true(c->points[i].kind != CGRID_COPY);
	}
	double sus = cgrid_estimate_s(c, &ts);
	assert_true(sus > ts.preheat_s && sus < 90);
	cgrid_free(c);

	struct cgrid *q = build(true, false);
	assert_true(cgrid_estimate_s(q, &t) < full / 2);
	cgrid_free(q);
}

static void test_bad_options(void **state)
{
	(void)state;
	struct cgrid_opts o = {0};
	struct cgrid *g = NULL;
	struct err e = {0};
	assert_int_equal(cgrid_new(&g, &o, &e), -EINVAL);
	o.gemm = true;
	o.model = "no-such-model";
	assert_true(cgrid_new(&g, &o, &e) < 0);
	assert_non_null(strstr(e.msg, "no-such-model"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_k3_shapes),
		cmocka_unit_test(test_m_values),
		cmocka_unit_test(test_specs_parse),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
