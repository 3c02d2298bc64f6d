/* SPDX-License-Identifier: MIT */
/*
 * KDA context parallelism (issue 20) in float64: segments run from a zero
 * state and from an identity state with v = 0, scanned in order and fixed
 * up, must equal the token-by-token prefill of the whole sequence (outputs
 * and final state), with 2 and 3 segments, sequential and chunked passes.
 * The math the two-GPU program (kernels/kda/bench/kcp-x2.cu) runs.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kda/kda_kcp_ref.h"
#include "kda_test_util.h"

#define EXACT 1e-11

static double *dalloc(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	assert_non_null(p);
	return p;
}

struct seq {
	int64_t T;
	int H, K;
	int64_t cu[2];
	double *q, *k, *v, *g, *b;
};

static void seq_init(struct seq *s, uint64_t seed, int64_t T, int H, int K)
{
	struct test_rng r = {seed};
	s->T = T, s->H = H, s->K = K, s->cu[0] = 0, s->cu[1] = T;
	size_t n = (size_t)T * H * K;
	s->q = dalloc(n), s->k = dalloc(n), s->v = dalloc(n), s->g = dalloc(n);
	s->b = dalloc((size_t)T * H);
	test_fill(&r, s->q, n, -1, 1);
	test_fill(&r, s->k, n, -1, 1);
	test_fill(&r, s->v, n, -1, 1);
	test_fill(&r, s->g, n, -6, 3);
	test_fill(&r, s->b, (size_t)T * H, -3, 3);
}

static void seq_release(struct seq *s)
{
	free(s->q), free(s->k), free(s->v), free(s->g), free(s->b);
}

static struct kda_ref_prefill seq_args(const struct seq *s, double *out, double *fin)
{
	return (struct kda_ref_prefill){
		.n_seqs = 1, .cu_seqlens = s->cu, .heads = s->H, .dk = s->K, .dv = s->K,
		.scale = 1.0 / sqrt((double)s->K), .q = s->q, .k = s->k, .v = s->v, .g_raw = s->g,
		.beta_raw = s->b, .initial_state = NULL, .final_state = fin, .out = out,
	};
}

/* KCP over the cuts against the whole sequence, token by token. */
static void kcp_case(int64_t T, int H, int K, int n_seg, const int64_t *cuts, int chunk)
{
	struct seq s;
	seq_init(&s, 7 + (uint64_t)T, T, H, K);
	size_t on = (size_t)T * H * K, sn = (size_t)H * K * K;
	double *ro = dalloc(on), *rs = dalloc(sn), *ko = dalloc(on), *ks = dalloc(sn);
	struct kda_ref_prefill whole = seq_args(&s, ro, rs);
	assert_int_equal(kda_ref_prefill_sequential(&whole), 0);
	struct kda_ref_prefill kcp = seq_args(&s, ko, ks);
	assert_int_equal(kda_kcp_ref_prefill(&kcp, n_seg, cuts, chunk), 0);
	double eo = test_rel_err(ko, ro, on), es = test_rel_err(ks, rs, sn);
	print_message("  T=%lld H=%d K=%d %d segments, %s: outputs %.2e, final state %.2e\n", (long long)T,
		      H, K, n_seg, chunk ? "chunked" : "sequential", eo, es);
	assert_true(eo < EXACT);
	assert_true(es < EXACT);
	/* the last segment's outputs really needed the fix-up */
	int64_t t0 = cuts[n_seg - 1];
	size_t at = (size_t)t0 * H * K;
	int64_t cu[2] = {0, T - t0};
	struct kda_ref_prefill zero = seq_args(&s, ko + at, ks);
	zero.cu_seqlens = cu;
	zero.q += at, zero.k += at, zero.v += at, zero.g_raw += at, zero.beta_raw += (size_t)t0 * H;
	assert_int_equal(kda_ref_prefill_sequential(&zero), 0);
	assert_true(test_rel_err(ko + at, ro + at, on - at) > 1e-3);
	free(ro), free(rs), free(ko), free(ks);
	seq_release(&s);
}

static void test_two_segments(void **unused)
{
	(void)unused;
	static const int64_t cuts[] = {0, 40, 80};
	kcp_case(80, 2, 8, 2, cuts, 0);
}

static void test_three_uneven_chunked(void **unused)
{
	(void)unused;
	/* segment boundaries inside chunks, a segment shorter than a chunk */
	static const int64_t cuts[] = {0, 37, 45, 100};
	kcp_case(100, 3, 16, 3, cuts, 16);
}

static void test_head_dim_128(void **unused)
{
	(void)unused;
	/* the kernels' head size, two ranks as on nvidia-h200-x2 */
	static const int64_t cuts[] = {0, 48, 96};
	kcp_case(96, 1, 128, 2, cuts, 16);
}

static void test_scan_step(void **unused)
{
	(void)unused;
	/* s_out = s_in M + z on a 2 x 2 head, by hand */
	const double s_in[4] = {1, 2, 3, 4}, m[4] = {0, 1, 1, 0}, z[4] = {10, 20, 30, 40};
	double o[4];
	assert_int_equal(kda_kcp_ref_scan_step(1, 2, 2, s_in, m, z, o), 0);
	assert_true(o[0] == 12 && o[1] == 21 && o[2] == 34 && o[3] == 43);
	assert_int_equal(kda_kcp_ref_scan_step(1, 2, 2, NULL, m, z, o), 0);
	assert_true(o[0] == 10 && o[3] == 40);
	double q[2] = {1, -1}, out[2] = {0.5, 0.5};
	assert_int_equal(kda_kcp_ref_fixup(1, 1, 2, 2, s_in, q, out), 0);
	assert_true(out[0] == 0.5 - 1 && out[1] == 0.5 - 1);
}

static void test_bad_input(void **unused)
{
	(void)unused;
	struct seq s;
	seq_init(&s, 3, 8, 1, 4);
	double o[32], f[16];
	struct kda_ref_prefill p = seq_args(&s, o, f);
	static const int64_t ok[] = {0, 4, 8}, unordered[] = {0, 6, 4, 8}, short_end[] = {0, 4, 7};
	assert_int_equal(kda_kcp_ref_prefill(&p, 2, unordered + 1, 0), -EINVAL);
	assert_int_equal(kda_kcp_ref_prefill(&p, 3, unordered, 0), -EINVAL);
	assert_int_equal(kda_kcp_ref_prefill(&p, 2, short_end, 0), -EINVAL);
	assert_int_equal(kda_kcp_ref_prefill(&p, 0, ok, 0), -EINVAL);
	p.dv = 2; /* the identity start needs K = V */
	assert_int_equal(kda_kcp_ref_prefill(&p, 2, ok, 0), -EINVAL);
	p.dv = 4;
	p.initial_state = f;
	assert_int_equal(kda_kcp_ref_prefill(&p, 2, ok, 0), -EINVAL);
	double x[4] = {0};
	assert_int_equal(kda_kcp_ref_scan_step(1, 2, 2, x, x, x, x), -EINVAL);
	assert_int_equal(kda_kcp_ref_fixup(-1, 1, 2, 2, x, x, x), -EINVAL);
	seq_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_step),
		cmocka_unit_test(test_two_segments),
		cmocka_unit_test(test_three_uneven_chunked),
		cmocka_unit_test(test_head_dim_128),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
