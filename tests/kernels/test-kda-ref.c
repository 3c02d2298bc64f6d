/* SPDX-License-Identifier: MIT */
/*
 * CPU float64 KDA references against each other: the chunked form against
 * the token-by-token definition, chains of prefill and decode, packed
 * variable-length batches against separate runs, and speculative verify with
 * rejection at every draft position against sequential decoding.
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

#include "kernels/kda/kda_ref.h"
#include "kda_test_util.h"

#define EXACT 1e-11

static double *dalloc(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	assert_non_null(p);
	return p;
}

/* Inputs of a packed prefill over the given sequence lengths. */
struct prefill_case {
	int n_seqs, heads, dk, dv;
	int64_t cu[9];
	double *q, *k, *v, *g, *b, *s0;
};

static void prefill_case_init(struct prefill_case *c, struct test_rng *r, int n_seqs,
			      const int *lens, int heads, int dk, int dv)
{
	memset(c, 0, sizeof(*c));
	c->n_seqs = n_seqs, c->heads = heads, c->dk = dk, c->dv = dv;
	for (int i = 0; i < n_seqs; i++)
		c->cu[i + 1] = c->cu[i] + lens[i];
	size_t T = (size_t)c->cu[n_seqs];
	c->q = dalloc(T * heads * dk), c->k = dalloc(T * heads * dk);
	c->v = dalloc(T * heads * dv), c->g = dalloc(T * heads * dk);
	c->b = dalloc(T * heads), c->s0 = dalloc((size_t)n_seqs * heads * dv * dk);
	test_fill(r, c->q, T * heads * dk, -1, 1);
	test_fill(r, c->k, T * heads * dk, -1, 1);
	test_fill(r, c->v, T * heads * dv, -1, 1);
	/* From nearly no decay (alpha ~ 0.99) to the bound's strongest. */
	test_fill(r, c->g, T * heads * dk, -6, 3);
	test_fill(r, c->b, T * heads, -3, 3);
	test_fill(r, c->s0, (size_t)n_seqs * heads * dv * dk, -0.5, 0.5);
}

static void prefill_case_release(struct prefill_case *c)
{
	free(c->q), free(c->k), free(c->v), free(c->g), free(c->b), free(c->s0);
}

static struct kda_ref_prefill prefill_args(const struct prefill_case *c, double *out, double *s1)
{
	return (struct kda_ref_prefill){
		.n_seqs = c->n_seqs, .cu_seqlens = c->cu, .heads = c->heads, .dk = c->dk,
		.dv = c->dv, .scale = 1.0 / sqrt((double)c->dk), .q = c->q, .k = c->k, .v = c->v,
		.g_raw = c->g, .beta_raw = c->b, .initial_state = c->s0, .final_state = s1,
		.out = out,
	};
}

static void test_chunked_equals_sequential(void **unused)
{
	(void)unused;
	struct test_rng r = { 1 };
	static const int lens[] = { 50, 37, 16, 1 };
	struct prefill_case c;
	prefill_case_init(&c, &r, 4, lens, 3, 32, 24);
	size_t T = (size_t)c.cu[c.n_seqs], on = T * c.heads * c.dv;
	size_t sn = (size_t)c.n_seqs * c.heads * c.dv * c.dk;
	double *o_seq = dalloc(on), *s_seq = dalloc(sn), *o_ch = dalloc(on), *s_ch = dalloc(sn);
	struct kda_ref_prefill a = prefill_args(&c, o_seq, s_seq);
	assert_int_equal(kda_ref_prefill_sequential(&a), 0);
	static const int chunks[] = { 16, 1, 7, 64 };
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct kda_ref_prefill b = prefill_args(&c, o_ch, s_ch);
		assert_int_equal(kda_ref_prefill_chunked(&b, chunks[i]), 0);
		double eo = test_rel_err(o_ch, o_seq, on), es = test_rel_err(s_ch, s_seq, sn);
		print_message("chunk %2d: out rel err %.3g, state rel err %.3g\n", chunks[i], eo, es);
		assert_true(eo < EXACT);
		assert_true(es < EXACT);
	}
	/* Zero initial state, in-place final state. */
	struct kda_ref_prefill z = prefill_args(&c, o_seq, s_seq);
	z.initial_state = NULL;
	assert_int_equal(kda_ref_prefill_sequential(&z), 0);
	memset(s_ch, 0, sn * sizeof(double));
	struct kda_ref_prefill zc = prefill_args(&c, o_ch, s_ch);
	zc.initial_state = s_ch;
	assert_int_equal(kda_ref_prefill_chunked(&zc, 16), 0);
	assert_true(test_rel_err(o_ch, o_seq, on) < EXACT);
	assert_true(test_rel_err(s_ch, s_seq, sn) < EXACT);
	free(o_seq), free(s_seq), free(o_ch), free(s_ch);
	prefill_case_release(&c);
}

/* The pair form (two chunks a step with the cross terms the GPU's pair kernel makes) against the
 * chunked form: sequences of an odd and an even number of chunks, a partial last chunk (alone and
 * as a pair's second), 1-token, 16-token and empty sequences; chunks of 16 (the GPU's) and 7. */
static void test_paired_equals_chunked(void **unused)
{
	(void)unused;
	struct test_rng r = { 5 };
	static const int lens[] = { 50, 37, 16, 1, 0, 33, 64, 48 };
	struct prefill_case c;
	prefill_case_init(&c, &r, 8, lens, 3, 32, 24);
	size_t T = (size_t)c.cu[c.n_seqs], on = T * c.heads * c.dv;
	size_t sn = (size_t)c.n_seqs * c.heads * c.dv * c.dk;
	double *o_ch = dalloc(on), *s_ch = dalloc(sn), *o_pr = dalloc(on), *s_pr = dalloc(sn);
	static const int chunks[] = { 16, 7 };
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct kda_ref_prefill a = prefill_args(&c, o_ch, s_ch), b = prefill_args(&c, o_pr, s_pr);
		assert_int_equal(kda_ref_prefill_chunked(&a, chunks[i]), 0);
		assert_int_equal(kda_ref_prefill_paired(&b, chunks[i]), 0);
		double eo = test_rel_err(o_pr, o_ch, on), es = test_rel_err(s_pr, s_ch, sn);
		print_message("paired, chunk %2d: out rel err %.3g, state rel err %.3g\n", chunks[i], eo, es);
		assert_true(eo < EXACT);
		assert_true(es < EXACT);
	}
	assert_int_equal(kda_ref_prefill_paired(NULL, 16), -EINVAL);
	free(o_ch), free(s_ch), free(o_pr), free(s_pr);
	prefill_case_release(&c);
}

static void test_varlen_equals_separate(void **unused)
{
	(void)unused;
	struct test_rng r = { 2 };
	static const int lens[] = { 33, 0, 70, 5 };
	struct prefill_case c;
	prefill_case_init(&c, &r, 4, lens, 2, 16, 16);
	size_t T = (size_t)c.cu[c.n_seqs], on = T * c.heads * c.dv;
	size_t sn1 = (size_t)c.heads * c.dv * c.dk;
	double *o = dalloc(on), *s = dalloc(sn1 * c.n_seqs), *o1 = dalloc(on), *s1 = dalloc(sn1);
	struct kda_ref_prefill a = prefill_args(&c, o, s);
	assert_int_equal(kda_ref_prefill_chunked(&a, 16), 0);
	for (int i = 0; i < c.n_seqs; i++) {
		int64_t t0 = c.cu[i], len = c.cu[i + 1] - t0;
		int64_t cu1[2] = { 0, len };
		struct kda_ref_prefill b = {
			.n_seqs = 1, .cu_seqlens = cu1, .heads = c.heads, .dk = c.dk, .dv = c.dv,
			.scale = a.scale, .q = c.q + t0 * c.heads * c.dk,
			.k = c.k + t0 * c.heads * c.dk, .v = c.v + t0 * c.heads * c.dv,
			.g_raw = c.g + t0 * c.heads * c.dk, .beta_raw = c.b + t0 * c.heads,
			.initial_state = c.s0 + i * sn1, .final_state = s1, .out = o1,
		};
		assert_int_equal(kda_ref_prefill_sequential(&b), 0);
		size_t n = (size_t)len * c.heads * c.dv;
		if (n)
			assert_true(test_rel_err(o + t0 * c.heads * c.dv, o1, n) < EXACT);
		assert_true(test_rel_err(s + i * sn1, s1, sn1) < EXACT);
	}
	free(o), free(s), free(o1), free(s1);
	prefill_case_release(&c);
}

/* Weights and raw per-token inputs of the fused decode path. */
struct step_case {
	int heads, dk, dv, C;
	double *conv_w, *norm_w;
};

static void step_case_init(struct step_case *c, struct test_rng *r, int heads, int dk, int dv)
{
	c->heads = heads, c->dk = dk, c->dv = dv, c->C = heads * (2 * dk + dv);
	c->conv_w = dalloc((size_t)c->C * KDA_CONV_TAPS);
	c->norm_w = dalloc((size_t)dv);
	test_fill(r, c->conv_w, (size_t)c->C * KDA_CONV_TAPS, -0.6, 0.6);
	test_fill(r, c->norm_w, (size_t)dv, 0.5, 1.5);
}

static void test_prefill_then_decode_equals_prefill(void **unused)
{
	(void)unused;
	struct test_rng r = { 3 };
	enum { H = 2, K = 32, V = 32, T = 37, N = 5 };
	struct step_case sc;
	step_case_init(&sc, &r, H, K, V);
	const size_t C = (size_t)sc.C, TN = T + N;
	double *x = dalloc(TN * C), *y = dalloc(TN * C), *g = dalloc(TN * H * K);
	double *b = dalloc(TN * H), *gate = dalloc(TN * H * V);
	test_fill(&r, x, TN * C, -1.5, 1.5);
	test_fill(&r, g, TN * H * K, -6, 3);
	test_fill(&r, b, TN * H, -3, 3);
	test_fill(&r, gate, TN * H * V, -2, 2);
	/* Full prefill of T + N tokens: conv over the raw inputs, split q|k|v. */
	assert_int_equal(kda_ref_short_conv((int)TN, (int)C, x, sc.conv_w, NULL, y), 0);
	double *q = dalloc(TN * H * K), *k = dalloc(TN * H * K), *v = dalloc(TN * H * V);
	for (size_t t = 0; t < TN; t++) {
		memcpy(q + t * H * K, y + t * C, H * K * sizeof(double));
		memcpy(k + t * H * K, y + t * C + H * K, H * K * sizeof(double));
		memcpy(v + t * H * V, y + t * C + 2 * H * K, H * V * sizeof(double));
	}
	double *o_full = dalloc(TN * H * V), *y_full = dalloc(TN * H * V);
	double *s_full = dalloc((size_t)H * V * K);
	int64_t cu_full[2] = { 0, (int64_t)TN }, cu_t[2] = { 0, T };
	struct kda_ref_prefill pf = {
		.n_seqs = 1, .cu_seqlens = cu_full, .heads = H, .dk = K, .dv = V,
		.scale = 1.0 / sqrt((double)K), .q = q, .k = k, .v = v, .g_raw = g, .beta_raw = b,
		.final_state = s_full, .out = o_full,
	};
	assert_int_equal(kda_ref_prefill_sequential(&pf), 0);
	assert_int_equal(kda_ref_gated_rmsnorm((int)TN, H, V, o_full, gate, sc.norm_w, 1e-5, y_full),
			 0);
	/* Prefill of T tokens (chunked) into slot 1 of a 2-slot pool, conv state
	 * from the first T raw inputs; then N decode steps. */
	double *pool = dalloc(2 * (size_t)H * V * K), *conv = dalloc(2 * 3 * C);
	double *o_t = dalloc((size_t)T * H * V), *ytmp = dalloc((size_t)T * C);
	test_fill(&r, pool, 2 * (size_t)H * V * K, -1, 1); /* slot 1 gets overwritten */
	struct kda_ref_prefill pt = pf;
	pt.cu_seqlens = cu_t, pt.final_state = pool + (size_t)H * V * K, pt.out = o_t;
	assert_int_equal(kda_ref_prefill_chunked(&pt, 16), 0);
	assert_int_equal(kda_ref_short_conv(T, (int)C, x, sc.conv_w, conv + 3 * C, ytmp), 0);
	int32_t slot = 1;
	double *yd = dalloc((size_t)H * V);
	for (int n = 0; n < N; n++) {
		struct kda_ref_step d = {
			.batch = 1, .heads = H, .dk = K, .dv = V, .window = 1, .scale = pf.scale,
			.norm_eps = 1e-5, .x = x + (size_t)(T + n) * C,
			.g_raw = g + (size_t)(T + n) * H * K, .beta_raw = b + (size_t)(T + n) * H,
			.gate_raw = gate + (size_t)(T + n) * H * V, .conv_w = sc.conv_w,
			.norm_w = sc.norm_w, .slot = &slot, .state = pool, .conv_state = conv,
			.out = yd,
		};
		assert_int_equal(kda_ref_decode(&d), 0);
		double e = test_rel_err(yd, y_full + (size_t)(T + n) * H * V, (size_t)H * V);
		assert_true(e < EXACT);
	}
	double es = test_rel_err(pool + (size_t)H * V * K, s_full, (size_t)H * V * K);
	print_message("prefill %d + decode %d vs prefill %d: state rel err %.3g\n", T, N, T + N, es);
	assert_true(es < EXACT);
	free(x), free(y), free(g), free(b), free(gate), free(q), free(k), free(v);
	free(o_full), free(y_full), free(s_full), free(pool), free(conv), free(o_t), free(ytmp);
	free(yd), free(sc.conv_w), free(sc.norm_w);
}

static void test_verify_reject_every_position(void **unused)
{
	(void)unused;
	struct test_rng r = { 4 };
	enum { B = 3, SLOTS = 4, H = 2, K = 16, V = 24, W = KDA_MAX_WINDOW };
	struct step_case sc;
	step_case_init(&sc, &r, H, K, V);
	const size_t C = (size_t)sc.C, SN = (size_t)H * V * K, CN = 3 * C;
	double *x = dalloc(B * W * C), *g = dalloc(B * W * H * K), *b = dalloc(B * W * H);
	double *gate = dalloc(B * W * H * V);
	test_fill(&r, x, B * W * C, -1.5, 1.5);
	test_fill(&r, g, B * W * H * K, -6, 3);
	test_fill(&r, b, B * W * H, -3, 3);
	test_fill(&r, gate, B * W * H * V, -2, 2);
	double *pool0 = dalloc(SLOTS * SN), *conv0 = dalloc(SLOTS * CN);
	test_fill(&r, pool0, SLOTS * SN, -1, 1);
	test_fill(&r, conv0, SLOTS * CN, -1.5, 1.5);
	double *pool = dalloc(SLOTS * SN), *conv = dalloc(SLOTS * CN);
	double *out_v = dalloc(B * W * H * V), *seq_out = dalloc(B * W * H * V);
	double *seq_pool = dalloc(SLOTS * SN), *seq_conv = dalloc(SLOTS * CN);
	const int32_t slot[B] = { 2, 0, 3 };
	struct kda_ref_step s = {
		.batch = B, .heads = H, .dk = K, .dv = V, .window = W, .scale = 0.25, .norm_eps = 1e-6,
		.x = x, .g_raw = g, .beta_raw = b, .gate_raw = gate, .conv_w = sc.conv_w,
		.norm_w = sc.norm_w, .slot = slot, .state = pool, .conv_state = conv, .out = out_v,
	};
	for (int m = 0; m <= W; m++) {
		/* Sequential decoding of the first W tokens of each request, one step
		 * at a time (window 1), keeping the state after m of them. */
		memcpy(seq_pool, pool0, SLOTS * SN * sizeof(double));
		memcpy(seq_conv, conv0, SLOTS * CN * sizeof(double));
		double *pool_m = dalloc(SLOTS * SN), *conv_m = dalloc(SLOTS * CN);
		for (int t = 0; t < W; t++) {
			if (t == m) {
				memcpy(pool_m, seq_pool, SLOTS * SN * sizeof(double));
				memcpy(conv_m, seq_conv, SLOTS * CN * sizeof(double));
			}
			for (int i = 0; i < B; i++) {
				size_t bt = (size_t)i * W + t;
				struct kda_ref_step d = s;
				d.batch = 1, d.window = 1, d.slot = &slot[i], d.x = x + bt * C;
				d.g_raw = g + bt * H * K, d.beta_raw = b + bt * H;
				d.gate_raw = gate + bt * H * V, d.state = seq_pool, d.conv_state = seq_conv;
				d.out = seq_out + bt * H * V;
				assert_int_equal(kda_ref_decode(&d), 0);
			}
		}
		if (m == W) {
			memcpy(pool_m, seq_pool, SLOTS * SN * sizeof(double));
			memcpy(conv_m, seq_conv, SLOTS * CN * sizeof(double));
		}
		/* Verify all W drafts: outputs as if accepted, state untouched. */
		memcpy(pool, pool0, SLOTS * SN * sizeof(double));
		memcpy(conv, conv0, SLOTS * CN * sizeof(double));
		const int32_t n_draft[B] = { W, W, W };
		for (size_t i = 0; i < B * W * H * V; i++)
			out_v[i] = NAN;
		assert_int_equal(kda_ref_verify(&s, n_draft), 0);
		assert_true(test_rel_err(out_v, seq_out, B * W * H * V) < EXACT);
		assert_memory_equal(pool, pool0, SLOTS * SN * sizeof(double));
		assert_memory_equal(conv, conv0, SLOTS * CN * sizeof(double));
		/* Reject at position m: replay the accepted prefix. */
		const int32_t n_acc[B] = { m, m, m };
		assert_int_equal(kda_ref_replay(&s, n_acc), 0);
		for (int i = 0; i < B; i++) {
			size_t so = (size_t)slot[i] * SN, co = (size_t)slot[i] * CN;
			assert_true(test_rel_err(pool + so, pool_m + so, SN) < EXACT);
			assert_true(test_rel_err(conv + co, conv_m + co, CN) < EXACT);
		}
		/* The untouched slot stays as it was. */
		assert_memory_equal(pool + SN, pool0 + SN, SN * sizeof(double));
		free(pool_m), free(conv_m);
	}
	/* Mixed accept counts in one batch. */
	memcpy(pool, pool0, SLOTS * SN * sizeof(double));
	memcpy(conv, conv0, SLOTS * CN * sizeof(double));
	const int32_t n_mixed[B] = { 0, 5, W };
	assert_int_equal(kda_ref_replay(&s, n_mixed), 0);
	assert_memory_equal(pool + 2 * SN, pool0 + 2 * SN, SN * sizeof(double));
	const int32_t bad[B] = { 0, W + 1, 0 };
	assert_int_equal(kda_ref_replay(&s, bad), -EINVAL);
	free(x), free(g), free(b), free(gate), free(pool0), free(conv0), free(pool), free(conv);
	free(out_v), free(seq_out), free(seq_pool), free(seq_conv), free(sc.conv_w), free(sc.norm_w);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	int64_t cu[2] = { 0, 4 };
	struct kda_ref_prefill p = { .n_seqs = 1, .cu_seqlens = cu, .heads = 1, .dk = 4, .dv = 4 };
	assert_int_equal(kda_ref_prefill_sequential(&p), -EINVAL);
	assert_int_equal(kda_ref_prefill_chunked(NULL, 16), -EINVAL);
	assert_int_equal(kda_ref_decode(NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunked_equals_sequential),
		cmocka_unit_test(test_paired_equals_chunked),
		cmocka_unit_test(test_varlen_equals_separate),
		cmocka_unit_test(test_prefill_then_decode_equals_prefill),
		cmocka_unit_test(test_verify_reject_every_position),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
