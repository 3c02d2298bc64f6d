/* SPDX-License-Identifier: MIT */
/*
 * The float64 materialized MLA prefill reference (mla_ref_prefill(),
 * kernels/mla/mla_ref.h) against facts it must satisfy: one visible key is
 * returned as is; it equals the absorbed form (mla_ref_decode() with t = T
 * query tokens over the latent cache, q_nope folded through W_UK, the output
 * through W_UV), which fixes the conventions (causal rule, shared rope
 * columns, scale, LSE); a prefill in two chunks (the second over the first
 * as its prefix) equals the whole; the gate multiplies by its sigmoid; bad
 * arguments are refused.
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
#include "kernels/mla/mla_ref.h"

#define EXACT 1e-12

static struct test_rng rng = { 20261217 };

static double *dnew(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	assert_non_null(p);
	return p;
}

/* A prefill problem with random inputs: q, k_nope, v in [-1, 1), k_rope in [-1, 1). */
struct pcase {
	int B, H, T, P;
	double *q, *kn, *kr, *v, *gate, *out, *lse;
};

static void pcase_init(struct pcase *c, int B, int H, int T, int P)
{
	const size_t N = (size_t)P + T, rows = (size_t)B * T * H;
	*c = (struct pcase){ .B = B, .H = H, .T = T, .P = P };
	c->q = dnew(rows * MLA_QK_HEAD);
	c->kn = dnew((size_t)B * N * H * MLA_QK_NOPE);
	c->kr = dnew((size_t)B * N * MLA_ROPE);
	c->v = dnew((size_t)B * N * H * MLA_V_HEAD);
	c->gate = dnew(rows * MLA_V_HEAD);
	c->out = dnew(rows * MLA_V_HEAD);
	c->lse = dnew(rows);
	test_fill(&rng, c->q, rows * MLA_QK_HEAD, -1, 1);
	test_fill(&rng, c->kn, (size_t)B * N * H * MLA_QK_NOPE, -1, 1);
	test_fill(&rng, c->kr, (size_t)B * N * MLA_ROPE, -1, 1);
	test_fill(&rng, c->v, (size_t)B * N * H * MLA_V_HEAD, -1, 1);
	test_fill(&rng, c->gate, rows * MLA_V_HEAD, -3, 3);
}

static void pcase_release(struct pcase *c)
{
	free(c->q), free(c->kn), free(c->kr), free(c->v), free(c->gate), free(c->out), free(c->lse);
}

static struct mla_ref_prefill pcase_args(const struct pcase *c)
{
	struct mla_ref_prefill a = {
		.batch = c->B, .heads = c->H, .tokens = c->T, .prefix = c->P, .scale = 1.0 / sqrt(192.0),
		.q = c->q, .k_nope = c->kn, .k_rope = c->kr, .v = c->v, .out = c->out, .lse = c->lse,
	};
	return a;
}

static void test_one_key(void **unused)
{
	(void)unused;
	struct pcase c;
	pcase_init(&c, 1, 3, 1, 0);
	struct mla_ref_prefill a = pcase_args(&c);
	assert_int_equal(mla_ref_prefill(&a), 0);
	for (int h = 0; h < 3; h++) {
		double s = 0.0;
		for (int e = 0; e < MLA_QK_NOPE; e++)
			s += c.q[h * MLA_QK_HEAD + e] * c.kn[h * MLA_QK_NOPE + e];
		for (int e = 0; e < MLA_ROPE; e++)
			s += c.q[h * MLA_QK_HEAD + MLA_QK_NOPE + e] * c.kr[e];
		assert_true(fabs(c.lse[h] - s * a.scale) < EXACT);
		for (int e = 0; e < MLA_V_HEAD; e++)
			assert_true(c.out[h * MLA_V_HEAD + e] == c.v[h * MLA_V_HEAD + e]);
	}
	pcase_release(&c);
}

/* Materialized (K_nope = W_UK c, V = W_UV c per head) equals absorbed (q_nope W_UK over the
 * latent c, output through W_UV), for T query tokens after P cached ones. */
static void test_equals_absorbed(void **unused)
{
	(void)unused;
	const int H = 3, T = 37, P = 29, N = P + T;
	const int pages = (N + MLA_PAGE_TOKENS - 1) / MLA_PAGE_TOKENS;
	double *wuk = dnew((size_t)H * MLA_QK_NOPE * MLA_LATENT), *wuv = dnew((size_t)H * MLA_V_HEAD * MLA_LATENT);
	test_fill(&rng, wuk, (size_t)H * MLA_QK_NOPE * MLA_LATENT, -0.05, 0.05);
	test_fill(&rng, wuv, (size_t)H * MLA_V_HEAD * MLA_LATENT, -0.05, 0.05);
	/* Latent rows exact in BF16, so the absorbed reference's BF16 cache holds them exactly. */
	double *lat = dnew((size_t)N * MLA_DIM);
	uint16_t *cache = calloc((size_t)pages * MLA_PAGE_TOKENS * MLA_DIM, sizeof(uint16_t));
	assert_non_null(cache);
	for (int j = 0; j < N; j++) {
		for (int e = 0; e < MLA_DIM; e++)
			lat[j * MLA_DIM + e] = k3_round_bf16(test_rng_uniform(&rng, -1, 1));
		mla_bf16_encode_token(lat + j * MLA_DIM, cache + (size_t)j * MLA_DIM);
	}
	struct pcase c;
	pcase_init(&c, 1, H, T, P);
	for (int j = 0; j < N; j++) {
		for (int e = 0; e < MLA_ROPE; e++)
			c.kr[j * MLA_ROPE + e] = lat[j * MLA_DIM + MLA_LATENT + e];
		for (int h = 0; h < H; h++)
			for (int d = 0; d < MLA_QK_NOPE; d++) {
				double k = 0.0, v = 0.0;
				for (int e = 0; e < MLA_LATENT; e++) {
					k += wuk[((size_t)h * MLA_QK_NOPE + d) * MLA_LATENT + e] * lat[j * MLA_DIM + e];
					v += wuv[((size_t)h * MLA_V_HEAD + d) * MLA_LATENT + e] * lat[j * MLA_DIM + e];
				}
				c.kn[((size_t)j * H + h) * MLA_QK_NOPE + d] = k;
				c.v[((size_t)j * H + h) * MLA_V_HEAD + d] = v;
			}
	}
	struct mla_ref_prefill a = pcase_args(&c);
	assert_int_equal(mla_ref_prefill(&a), 0);

	const size_t rows = (size_t)T * H;
	double *qa = dnew(rows * MLA_DIM), *oa = dnew(rows * MLA_LATENT), *la = dnew(rows);
	for (size_t r = 0; r < rows; r++) {
		const int h = (int)(r % H);
		for (int e = 0; e < MLA_LATENT; e++) {
			double s = 0.0;
			for (int d = 0; d < MLA_QK_NOPE; d++)
				s += c.q[r * MLA_QK_HEAD + d] * wuk[((size_t)h * MLA_QK_NOPE + d) * MLA_LATENT + e];
			qa[r * MLA_DIM + e] = s;
		}
		for (int e = 0; e < MLA_ROPE; e++)
			qa[r * MLA_DIM + MLA_LATENT + e] = c.q[r * MLA_QK_HEAD + MLA_QK_NOPE + e];
	}
	int32_t *table = calloc((size_t)pages, sizeof(int32_t));
	assert_non_null(table);
	for (int i = 0; i < pages; i++)
		table[i] = i;
	const int32_t len = N;
	struct mla_ref_decode d = {
		.batch = 1, .heads = H, .qtokens = T, .kv = MLA_KV_BF16, .scale = a.scale, .q = qa, .cache = cache,
		.n_pages = pages, .block_table = table, .max_pages = pages, .seqlens = &len, .out = oa, .lse = la,
	};
	assert_int_equal(mla_ref_decode(&d), 0);
	double worst_out = 0.0, worst_lse = 0.0;
	for (size_t r = 0; r < rows; r++) {
		const int h = (int)(r % H);
		worst_lse = fmax(worst_lse, fabs(la[r] - c.lse[r]));
		for (int dd = 0; dd < MLA_V_HEAD; dd++) {
			double o = 0.0;
			for (int e = 0; e < MLA_LATENT; e++)
				o += wuv[((size_t)h * MLA_V_HEAD + dd) * MLA_LATENT + e] * oa[r * MLA_LATENT + e];
			worst_out = fmax(worst_out, fabs(o - c.out[r * MLA_V_HEAD + dd]));
		}
	}
	print_message("materialized vs absorbed: max |out diff| %.2e, max |lse diff| %.2e\n", worst_out, worst_lse);
	assert_true(worst_out < 1e-10);
	assert_true(worst_lse < 1e-10);
	free(qa), free(oa), free(la), free(table), free(cache), free(lat), free(wuk), free(wuv);
	pcase_release(&c);
}

/* The last T2 rows of a prefill of T over P are a prefill of T2 over P + T - T2. */
static void test_chunks_equal_whole(void **unused)
{
	(void)unused;
	const int B = 2, H = 2, T = 21, P = 9, T2 = 8;
	struct pcase c;
	pcase_init(&c, B, H, T, P);
	struct mla_ref_prefill a = pcase_args(&c);
	assert_int_equal(mla_ref_prefill(&a), 0);
	const int N = P + T;
	double *q2 = dnew((size_t)B * T2 * H * MLA_QK_HEAD), *o2 = dnew((size_t)B * T2 * H * MLA_V_HEAD);
	double *l2 = dnew((size_t)B * T2 * H);
	for (int b = 0; b < B; b++)
		memcpy(q2 + (size_t)b * T2 * H * MLA_QK_HEAD, c.q + ((size_t)b * T + T - T2) * H * MLA_QK_HEAD,
		       (size_t)T2 * H * MLA_QK_HEAD * sizeof(double));
	struct mla_ref_prefill a2 = a;
	a2.tokens = T2, a2.prefix = N - T2, a2.q = q2, a2.out = o2, a2.lse = l2;
	assert_int_equal(mla_ref_prefill(&a2), 0);
	for (int b = 0; b < B; b++)
		for (int i = 0; i < T2; i++)
			for (int h = 0; h < H; h++) {
				const size_t r1 = ((size_t)b * T + T - T2 + i) * H + h, r2 = ((size_t)b * T2 + i) * H + h;
				assert_true(c.lse[r1] == l2[r2]);
				for (int e = 0; e < MLA_V_HEAD; e++)
					assert_true(c.out[r1 * MLA_V_HEAD + e] == o2[r2 * MLA_V_HEAD + e]);
			}
	free(q2), free(o2), free(l2);
	pcase_release(&c);
}

static void test_gate(void **unused)
{
	(void)unused;
	struct pcase c;
	pcase_init(&c, 1, 2, 5, 3);
	struct mla_ref_prefill a = pcase_args(&c);
	assert_int_equal(mla_ref_prefill(&a), 0);
	const size_t n = (size_t)5 * 2 * MLA_V_HEAD;
	double *plain = dnew(n), *lse = dnew(10);
	memcpy(plain, c.out, n * sizeof(double));
	memcpy(lse, c.lse, 10 * sizeof(double));
	a.gate = c.gate;
	assert_int_equal(mla_ref_prefill(&a), 0);
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(c.out[i] - plain[i] / (1.0 + exp(-c.gate[i]))) < EXACT);
	for (int i = 0; i < 10; i++)
		assert_true(c.lse[i] == lse[i]);
	free(plain), free(lse);
	pcase_release(&c);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct pcase c;
	pcase_init(&c, 1, 1, 2, 0);
	struct mla_ref_prefill a = pcase_args(&c);
	assert_int_equal(mla_ref_prefill(NULL), -EINVAL);
	a.tokens = 0;
	assert_int_equal(mla_ref_prefill(&a), -EINVAL);
	a = pcase_args(&c);
	a.prefix = -1;
	assert_int_equal(mla_ref_prefill(&a), -EINVAL);
	a = pcase_args(&c);
	a.prefix = MLA_PREFILL_MAX_TOKENS;
	assert_int_equal(mla_ref_prefill(&a), -EINVAL);
	a = pcase_args(&c);
	a.v = NULL;
	assert_int_equal(mla_ref_prefill(&a), -EINVAL);
	pcase_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_key),
		cmocka_unit_test(test_equals_absorbed),
		cmocka_unit_test(test_chunks_equal_whole),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
