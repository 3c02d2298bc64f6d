/* SPDX-License-Identifier: MIT */
/*
 * The float64 LatentMoE references (kernels/moe/moe_ref.h): SiTU-GLU's
 * limits and bound, routing (bias selects, scores weigh, ties to the lower
 * index), the stable grouping and its inverse, every GEMM epilogue against
 * direct formulas, and a whole layer whose experts are all equal (routing
 * must then not matter) against its direct composition.
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

#include "kda_test_util.h"
#include "kernels/common/k3_quant.h"
#include "kernels/moe/moe_ref.h"

#define EXACT 1e-12

static struct test_rng rng = { 20261203 };

static double *dnew(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	assert_non_null(p);
	return p;
}

static double *drand(size_t n, double lo, double hi)
{
	double *p = dnew(n);
	test_fill(&rng, p, n, lo, hi);
	return p;
}

static void test_situ_glu(void **unused)
{
	(void)unused;
	const double b1 = K3_SITU_BETA_GATE, b2 = K3_SITU_BETA_UP;
	assert_true(moe_ref_situ_glu(0.0, 3.0, b1, b2) == 0.0);
	/* Small inputs: SwiGLU, g sigmoid(g) u. */
	for (double g = -0.1; g <= 0.1; g += 0.05)
		for (double u = -0.1; u <= 0.1; u += 0.05) {
			const double swiglu = g / (1 + exp(-g)) * u;
			assert_true(fabs(moe_ref_situ_glu(g, u, b1, b2) - swiglu) <= 1e-3 * fabs(swiglu) + 1e-15);
		}
	/* Both branches capped: |situ| <= b1 b2 for any input; large g, u approach b1 b2. */
	assert_true(fabs(moe_ref_situ_glu(1e6, -1e6, b1, b2) + b1 * b2) < 1e-9);
	assert_true(fabs(moe_ref_situ_glu(-1e6, 1e6, b1, b2)) < 1e-9); /* sigmoid(-inf) = 0 */
	for (int i = 0; i < 1000; i++) {
		const double g = test_rng_uniform(&rng, -200, 200), u = test_rng_uniform(&rng, -500, 500);
		assert_true(fabs(moe_ref_situ_glu(g, u, b1, b2)) <= b1 * b2);
	}
	/* The interleaved layout: blocks of 8 gate rows, then 8 up rows. */
	assert_int_equal(moe_glu_column(0, 0), 0);
	assert_int_equal(moe_glu_column(7, 0), 7);
	assert_int_equal(moe_glu_column(0, 1), 8);
	assert_int_equal(moe_glu_column(8, 0), 16);
	assert_int_equal(moe_glu_column(9, 1), 25);
}

static void test_route(void **unused)
{
	(void)unused;
	enum { E = 12, K = 3 };
	double logits[2][E], bias[E] = { 0 };
	for (int e = 0; e < E; e++)
		logits[0][e] = logits[1][e] = 0.1 * e - 0.5;
	logits[1][3] = logits[1][4] = 2.0; /* a tie: 3 before 4 */
	bias[0] = 10.0;                    /* selects expert 0 whatever its score */
	int32_t ids[2 * K];
	double w[2 * K];
	assert_int_equal(moe_ref_route(2, E, K, &logits[0][0], bias, 2.5, ids, w), 0);
	assert_int_equal(ids[0], 0), assert_int_equal(ids[1], 11), assert_int_equal(ids[2], 10);
	assert_int_equal(ids[3], 0), assert_int_equal(ids[4], 3), assert_int_equal(ids[5], 4);
	/* Weights: raw scores (the bias does not weigh), normalized, scaled. */
	const double s0 = 1 / (1 + exp(0.5)), s11 = 1 / (1 + exp(-0.6)), s10 = 1 / (1 + exp(-0.5));
	assert_true(fabs(w[0] - 2.5 * s0 / (s0 + s11 + s10)) < EXACT);
	assert_true(fabs(w[0] + w[1] + w[2] - 2.5) < EXACT);
	assert_int_equal(moe_ref_route(1, E, E + 1, &logits[0][0], bias, 1, ids, w), -EINVAL);
}

static void test_group(void **unused)
{
	(void)unused;
	enum { T = 50, E = 12, K = 4, TILE = 8 };
	int32_t ids[T * K];
	for (int t = 0; t < T; t++) /* distinct experts per token; expert 11 never chosen */
		for (int k = 0; k < K; k++)
			ids[t * K + k] = (3 * (t % 3) + 2 * k) % 11;
	int32_t off[E + 1], tile_off[E + 1], touched[E], row_token[T * K], row_of[T * K];
	struct moe_ref_groups g = { off, tile_off, touched, 0, row_token, row_of };
	assert_int_equal(moe_ref_group(T, E, K, ids, TILE, &g), 0);
	assert_int_equal(off[0], 0);
	assert_int_equal(off[E], T * K);
	int32_t seen_tiles = 0, nt = 0;
	for (int e = 0; e < E; e++) {
		const int32_t c = off[e + 1] - off[e];
		assert_true(c >= 0);
		assert_int_equal(tile_off[e + 1] - tile_off[e], (c + TILE - 1) / TILE);
		seen_tiles += (c + TILE - 1) / TILE;
		if (c)
			assert_int_equal(touched[nt++], e);
		/* Stable: tokens ascending within an expert. */
		for (int32_t r = off[e] + 1; r < off[e + 1]; r++)
			assert_true(row_token[r] > row_token[r - 1]);
	}
	assert_int_equal(nt, g.n_touched);
	assert_int_equal(off[12] - off[11], 0);
	assert_int_equal(tile_off[E], seen_tiles);
	for (int i = 0; i < T * K; i++) {
		const int32_t r = row_of[i];
		assert_int_equal(row_token[r], i / K);
		assert_true(r >= off[ids[i]] && r < off[ids[i] + 1]);
	}
	ids[5] = E;
	assert_int_equal(moe_ref_group(T, E, K, ids, TILE, &g), -EINVAL);
}

static void test_gemm_epilogues(void **unused)
{
	(void)unused;
	enum { R = 23, N = 32, KK = 40, G = 3, A_ROWS = 11 };
	const int32_t off[G + 1] = { 0, 7, 7, 23 }; /* an empty group */
	int32_t a_index[R];
	for (int r = 0; r < R; r++)
		a_index[r] = (r * 5) % A_ROWS;
	double *a = drand((size_t)A_ROWS * KK, -1, 1), *w = drand((size_t)G * N * KK, -1, 1);
	double *out = dnew((size_t)R * N), *f32 = dnew((size_t)R * N), *ref = dnew(N);
	double *scale = drand(R, 0, 1), *add = drand((size_t)R * N, -1, 1);
	struct moe_ref_gemm p = { .rows = R, .N = N, .K = KK, .n_groups = G, .off = off, .a_index = a_index,
				  .a = a, .w = w, .epi = K3_EPI_BF16, .out = out };
	assert_int_equal(moe_ref_gemm(&p), 0);
	for (int r = 0; r < R; r++) {
		const int g = r < 7 ? 0 : 2;
		moe_ref_linear(1, N, KK, a + a_index[r] * KK, w + (size_t)g * N * KK, ref);
		assert_memory_equal(out + r * N, ref, N * sizeof(double));
	}
	/* SPLIT at 12: the first 12 columns FP32, the rest BF16-side. */
	p.epi = K3_EPI_SPLIT, p.n_split = 12, p.out_f32 = f32;
	assert_int_equal(moe_ref_gemm(&p), 0);
	moe_ref_linear(1, N, KK, a + a_index[20] * KK, w + (size_t)2 * N * KK, ref);
	assert_true(f32[20 * 12 + 11] == ref[11] && out[20 * (N - 12) + 0] == ref[12]);
	/* SCALE and ADD. */
	p.epi = K3_EPI_SCALE, p.row_scale = scale;
	assert_int_equal(moe_ref_gemm(&p), 0);
	assert_true(fabs(out[20 * N + 5] - ref[5] * scale[20]) < EXACT);
	p.epi = K3_EPI_ADD, p.addend = add;
	assert_int_equal(moe_ref_gemm(&p), 0);
	assert_true(fabs(out[20 * N + 5] - ref[5] - add[20 * N + 5]) < EXACT);
	p.epi = K3_EPI_GATE;
	assert_int_equal(moe_ref_gemm(&p), 0);
	assert_true(fabs(out[20 * N + 5] - ref[5] / (1 + exp(-add[20 * N + 5]))) < EXACT);
	/* An output row map moves whole rows (and the addend with them). */
	int32_t oi[R];
	for (int r = 0; r < R; r++)
		oi[r] = (r * 5 + 2) % R; /* 5 is prime to 23 */
	double *out2 = dnew((size_t)R * N);
	p.out_index = oi, p.out = out2;
	assert_int_equal(moe_ref_gemm(&p), 0);
	assert_true(fabs(out2[oi[20] * N + 5] - ref[5] / (1 + exp(-add[oi[20] * N + 5]))) < EXACT);
	p.out_index = NULL, p.out = out;
	free(out2);
	/* GLU with an interleaved w13 == separate gate and up products. */
	double *w1 = drand((size_t)(N / 2) * KK, -1, 1), *w3 = drand((size_t)(N / 2) * KK, -1, 1);
	double *w13 = dnew((size_t)N * KK), *gg = dnew(N / 2), *uu = dnew(N / 2);
	moe_ref_interleave_w13(N / 2, KK, w1, w3, w13);
	struct moe_ref_gemm q = { .rows = 4, .N = N, .K = KK, .a = a, .w = w13, .epi = K3_EPI_GLU, .beta_gate = 4,
				  .beta_up = 25, .out = out };
	assert_int_equal(moe_ref_gemm(&q), 0);
	for (int r = 0; r < 4; r++) {
		moe_ref_linear(1, N / 2, KK, a + r * KK, w1, gg);
		moe_ref_linear(1, N / 2, KK, a + r * KK, w3, uu);
		for (int j = 0; j < N / 2; j++)
			assert_true(fabs(out[r * (N / 2) + j] - moe_ref_situ_glu(gg[j], uu[j], 4, 25)) < EXACT);
	}
	q.N = 24; /* not a multiple of 16 */
	assert_int_equal(moe_ref_gemm(&q), -EINVAL);
	free(a), free(w), free(out), free(f32), free(ref), free(scale), free(add);
	free(w1), free(w3), free(w13), free(gg), free(uu);
}

/* E copies of one expert's n weights, one after the other (the caller frees). */
static double *repeat_expert(int E, const double *one, size_t n)
{
	double *w = dnew((size_t)E * n);
	for (int e = 0; e < E; e++)
		memcpy(w + (size_t)e * n, one, n * sizeof(double));
	return w;
}

/* With all experts equal, the routed part is scaling * expert(latent) whatever the routing. */
static void test_layer_equal_experts(void **unused)
{
	(void)unused;
	enum { T = 5, D = 48, DL = 32, E = 6, K = 3, F = 16, FS = 16 };
	double *x = drand((size_t)T * D, -1, 1), *wrd = drand((size_t)(E + DL) * D, -0.3, 0.3);
	double *bias = drand(E, -0.1, 0.1);
	double *one13 = drand((size_t)2 * F * DL, -0.3, 0.3), *one2 = drand((size_t)DL * F, -0.3, 0.3);
	double *w13 = repeat_expert(E, one13, (size_t)2 * F * DL), *w2 = repeat_expert(E, one2, (size_t)DL * F);
	double *nw = drand(DL, 0.5, 1.5), *wup = drand((size_t)D * DL, -0.3, 0.3);
	double *ws13 = drand((size_t)2 * FS * D, -0.3, 0.3), *ws2 = drand((size_t)D * FS, -0.3, 0.3);
	double *out = dnew((size_t)T * D);
	int32_t ids[T * K];
	struct moe_ref_layer p = { .tokens = T, .hidden = D, .latent = DL, .experts = E, .topk = K, .inter = F,
				   .shared_inter = FS, .scaling = 1.5, .eps = 1e-6, .beta_gate = 4, .beta_up = 25,
				   .x = x, .w_router_down = wrd, .bias = bias, .w13 = w13, .w2 = w2, .norm_w = nw,
				   .w_up = wup, .ws13 = ws13, .ws2 = ws2, .ids = ids, .out = out };
	assert_int_equal(moe_ref_layer(&p), 0);
	/* Direct: latent, one expert, times 1.5, rmsnorm, up, + shared. */
	double *rd = dnew((size_t)(E + DL)), *pre = dnew(2 * F), *h = dnew(F), *y = dnew(DL), *z = dnew(DL);
	double *o = dnew(D), *spre = dnew(2 * FS), *sh = dnew(FS), *so = dnew(D);
	for (int t = 0; t < T; t++) {
		moe_ref_linear(1, E + DL, D, x + t * D, wrd, rd);
		moe_ref_linear(1, 2 * F, DL, rd + E, one13, pre);
		for (int j = 0; j < F; j++)
			h[j] = moe_ref_situ_glu(pre[moe_glu_column(j, 0)], pre[moe_glu_column(j, 1)], 4, 25);
		moe_ref_linear(1, DL, F, h, one2, y);
		for (int i = 0; i < DL; i++)
			y[i] *= 1.5;
		moe_ref_rmsnorm(1, DL, y, nw, 1e-6, z);
		moe_ref_linear(1, D, DL, z, wup, o);
		moe_ref_linear(1, 2 * FS, D, x + t * D, ws13, spre);
		for (int j = 0; j < FS; j++)
			sh[j] = moe_ref_situ_glu(spre[moe_glu_column(j, 0)], spre[moe_glu_column(j, 1)], 4, 25);
		moe_ref_linear(1, D, FS, sh, ws2, so);
		for (int i = 0; i < D; i++)
			o[i] += so[i];
		assert_true(test_rel_err(out + t * D, o, D) < 1e-12);
		for (int k = 1; k < K; k++)
			assert_true(ids[t * K + k] != ids[t * K + k - 1]);
	}
	/* Rounding the stored intermediates to BF16 moves the result by about 2^-9. */
	double *out2 = dnew((size_t)T * D);
	p.round_bf16 = true, p.out = out2;
	assert_int_equal(moe_ref_layer(&p), 0);
	const double e = test_rel_err(out2, out, (size_t)T * D);
	assert_true(e > 1e-6 && e < 2e-2);
	free(x), free(wrd), free(bias), free(one13), free(one2), free(w13), free(w2), free(nw), free(wup);
	free(ws13), free(ws2), free(out), free(out2), free(rd), free(pre), free(h), free(y), free(z), free(o);
	free(spre), free(sh), free(so);
}

/* e4m3_act: with equal experts, against the direct composition with the GPU's E4M3 path's
 * quantization written out: the latent row by k3_e4m3_row_quantize() (E4M3 times the row's FP32
 * scale), h as E4M3 of m h over m; -EINVAL without a positive m. */
static void test_layer_e4m3_act(void **unused)
{
	(void)unused;
	enum { T = 4, D = 48, DL = 32, E = 5, K = 2, F = 16 };
	const double m = 4.0; /* k3_gemm_glu_e4m3_mul(4, 25) */
	double *x = drand((size_t)T * D, -1, 1), *wrd = drand((size_t)(E + DL) * D, -0.3, 0.3);
	double *one13 = drand((size_t)2 * F * DL, -0.3, 0.3), *one2 = drand((size_t)DL * F, -0.3, 0.3);
	double *w13 = repeat_expert(E, one13, (size_t)2 * F * DL), *w2 = repeat_expert(E, one2, (size_t)DL * F);
	double *nw = drand(DL, 0.5, 1.5), *wup = drand((size_t)D * DL, -0.3, 0.3);
	double *out = dnew((size_t)T * D), *plain = dnew((size_t)T * D);
	struct moe_ref_layer p = { .tokens = T, .hidden = D, .latent = DL, .experts = E, .topk = K, .inter = F,
				   .scaling = 1.0, .eps = 1e-6, .beta_gate = 4, .beta_up = 25, .x = x,
				   .w_router_down = wrd, .w13 = w13, .w2 = w2, .norm_w = nw, .w_up = wup,
				   .out = plain };
	assert_int_equal(moe_ref_layer(&p), 0);
	p.e4m3_act = true, p.out = out;
	assert_int_equal(moe_ref_layer(&p), -EINVAL); /* no m */
	p.e4m3_glu_mul = m;
	assert_int_equal(moe_ref_layer(&p), 0);
	double *rd = dnew((size_t)(E + DL)), *lat = dnew(DL), *pre = dnew(2 * F), *h = dnew(F), *y = dnew(DL);
	double *z = dnew(DL), *o = dnew(D);
	uint8_t q[DL];
	for (int t = 0; t < T; t++) {
		moe_ref_linear(1, E + DL, D, x + t * D, wrd, rd);
		float sc = 0.0f;
		k3_e4m3_row_quantize(rd + E, DL, q, &sc);
		for (int i = 0; i < DL; i++)
			lat[i] = k3_double_from_e4m3(q[i]) * (double)sc;
		moe_ref_linear(1, 2 * F, DL, lat, one13, pre);
		for (int j = 0; j < F; j++)
			h[j] = k3_double_from_e4m3(k3_e4m3_from_double(
				       m * moe_ref_situ_glu(pre[moe_glu_column(j, 0)], pre[moe_glu_column(j, 1)], 4, 25))) /
			       m;
		moe_ref_linear(1, DL, F, h, one2, y); /* K equal experts, weights summing to 1 */
		moe_ref_rmsnorm(1, DL, y, nw, 1e-6, z);
		moe_ref_linear(1, D, DL, z, wup, o);
		assert_true(test_rel_err(out + t * D, o, D) < 1e-12);
	}
	const double e = test_rel_err(out, plain, (size_t)T * D); /* the E4M3 roundings show */
	assert_true(e > 1e-4 && e < 0.2);
	free(x), free(wrd), free(one13), free(one2), free(w13), free(w2), free(nw), free(wup), free(out), free(plain);
	free(rd), free(lat), free(pre), free(h), free(y), free(z), free(o);
}

/* a_mxfp8: each A row is quantized to MXFP8 (k3_mxfp8_quantize) before the product, exactly
 * the product of the pre-quantized rows; K must be a multiple of 32. */
static void test_gemm_mxfp8_activations(void **unused)
{
	(void)unused;
	enum { R = 5, N = 8, KK = 64, A_ROWS = 3 };
	const int32_t a_index[R] = { 2, 0, 1, 2, 0 };
	double *a = drand((size_t)A_ROWS * KK, -3, 3), *w = drand((size_t)N * KK, -1, 1);
	for (int k = 32; k < KK; k++)
		a[KK + k] *= 0x1p-40; /* a second group of row 1 at another scale */
	double *out = dnew((size_t)R * N), *want = dnew((size_t)R * N), *aq = dnew((size_t)A_ROWS * KK);
	uint8_t q[A_ROWS * KK], sc[A_ROWS * KK / 32];
	k3_mxfp8_quantize(a, (size_t)A_ROWS * KK, q, sc);
	for (int i = 0; i < A_ROWS * KK; i++)
		aq[i] = k3_mxfp8_element(q, sc, (size_t)i);
	struct moe_ref_gemm p = { .rows = R, .N = N, .K = KK, .a_index = a_index, .a = a, .a_mxfp8 = true, .w = w,
				  .epi = K3_EPI_BF16, .out = out };
	assert_int_equal(moe_ref_gemm(&p), 0);
	p.a = aq, p.a_mxfp8 = false, p.out = want;
	assert_int_equal(moe_ref_gemm(&p), 0);
	assert_memory_equal(out, want, (size_t)R * N * sizeof(double));
	p.a = a;
	assert_int_equal(moe_ref_gemm(&p), 0);
	assert_true(memcmp(out, want, (size_t)R * N * sizeof(double)) != 0); /* the quantization shows */
	p.a_mxfp8 = true, p.K = 48;
	assert_int_equal(moe_ref_gemm(&p), -EINVAL);
	free(a), free(w), free(out), free(want), free(aq);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_situ_glu),
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_gemm_epilogues),
		cmocka_unit_test(test_gemm_mxfp8_activations),
		cmocka_unit_test(test_layer_equal_experts),
		cmocka_unit_test(test_layer_e4m3_act),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
