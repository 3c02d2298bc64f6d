/* SPDX-License-Identifier: MIT */
/*
 * The float64 MLA decode reference (kernels/mla/mla_ref.h) against facts it
 * must satisfy: one visible token is returned as is; the page table only
 * moves bytes; query token i of t equals a decode of one token over the
 * first L - t + i + 1; sparse mode over all visible positions equals dense
 * mode; two halves combined by their log-sum-exp equal the whole (the
 * split-KV combine the GPU kernel runs); the FP8 layout decodes within its
 * quantization step; bad pages are refused. And the LSE tolerance of the GPU
 * tests (mla_test_util.h) separates an FP8 path that rounds the dequantized
 * cache to BF16 (off by up to 6e-3 on the H200) from one that applies the
 * scales in FP32 after exact tile products (emulated here in FP32).
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
#include "mla_test_util.h"
#include "kernels/common/k3_quant.h"
#include "kernels/mla/mla_ref.h"

#define EXACT 1e-12

static struct test_rng rng = { 20261201 };

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	assert_non_null(p);
	return p;
}

/* A paged cache of B requests with the given lengths, pages in shuffled order. */
struct cache_case {
	int B, H, t, max_pages;
	enum mla_kv kv;
	int64_t n_pages;
	int32_t seqlens[8];
	int32_t *table;
	void *pages;
	double *q;
	double *out, *lse;
};

static size_t tok_bytes(enum mla_kv kv)
{
	return kv == MLA_KV_BF16 ? MLA_BF16_TOKEN_BYTES : MLA_FP8_TOKEN_BYTES;
}

static void case_init(struct cache_case *c, enum mla_kv kv, int B, int H, int t, const int32_t *lens)
{
	memset(c, 0, sizeof *c);
	c->B = B, c->H = H, c->t = t, c->kv = kv;
	int most = 0;
	for (int b = 0; b < B; b++) {
		c->seqlens[b] = lens[b];
		most = lens[b] > most ? lens[b] : most;
	}
	c->max_pages = (most + MLA_PAGE_TOKENS - 1) / MLA_PAGE_TOKENS;
	c->n_pages = (int64_t)B * c->max_pages + 3;
	c->table = xcalloc((size_t)B * c->max_pages, sizeof(int32_t));
	/* Page i of request b at pool index (7 i + 3 b + 1) mod n_pages, all distinct. */
	int64_t next = 1;
	for (int b = 0; b < B; b++)
		for (int i = 0; i < c->max_pages; i++) {
			c->table[b * c->max_pages + i] = (int32_t)(next % c->n_pages);
			next += 1;
		}
	c->pages = xcalloc((size_t)c->n_pages * MLA_PAGE_TOKENS, tok_bytes(kv));
	double x[MLA_DIM];
	for (int64_t p = 0; p < c->n_pages; p++)
		for (int r = 0; r < MLA_PAGE_TOKENS; r++) {
			test_fill(&rng, x, MLA_DIM, -1, 1);
			unsigned char *dst = (unsigned char *)c->pages + ((size_t)p * MLA_PAGE_TOKENS + r) * tok_bytes(kv);
			if (kv == MLA_KV_BF16)
				mla_bf16_encode_token(x, (uint16_t *)dst);
			else
				mla_fp8_encode_token(x, dst);
		}
	const size_t rows = (size_t)B * t * H;
	c->q = xcalloc(rows * MLA_DIM, sizeof(double));
	test_fill(&rng, c->q, rows * MLA_DIM, -1, 1);
	c->out = xcalloc(rows * MLA_LATENT, sizeof(double));
	c->lse = xcalloc(rows, sizeof(double));
}

static void case_release(struct cache_case *c)
{
	free(c->table), free(c->pages), free(c->q), free(c->out), free(c->lse);
}

static struct mla_ref_decode case_args(const struct cache_case *c)
{
	struct mla_ref_decode a = {
		.batch = c->B, .heads = c->H, .qtokens = c->t, .kv = c->kv, .scale = 1.0 / sqrt(192.0),
		.q = c->q, .cache = c->pages, .n_pages = c->n_pages, .block_table = c->table,
		.max_pages = c->max_pages, .seqlens = c->seqlens, .out = c->out, .lse = c->lse,
	};
	return a;
}

/* Element e of token j of request b. */
static double cache_at(const struct cache_case *c, int b, int j, int e)
{
	const int32_t page = c->table[b * c->max_pages + j / MLA_PAGE_TOKENS];
	const unsigned char *pg = (const unsigned char *)c->pages + (size_t)page * MLA_PAGE_TOKENS * tok_bytes(c->kv);
	return mla_ref_cache_element(c->kv, pg, j % MLA_PAGE_TOKENS, e);
}

static void test_one_token(void **unused)
{
	(void)unused;
	struct cache_case c;
	const int32_t lens[1] = { 1 };
	case_init(&c, MLA_KV_BF16, 1, 3, 1, lens);
	struct mla_ref_decode a = case_args(&c);
	assert_int_equal(mla_ref_decode(&a), 0);
	for (int h = 0; h < 3; h++) {
		double s = 0;
		for (int e = 0; e < MLA_DIM; e++)
			s += c.q[h * MLA_DIM + e] * cache_at(&c, 0, 0, e);
		assert_true(fabs(c.lse[h] - s * a.scale) < EXACT);
		for (int e = 0; e < MLA_LATENT; e++)
			assert_true(c.out[h * MLA_LATENT + e] == cache_at(&c, 0, 0, e));
	}
	case_release(&c);
}

/* Moving the pages around (and the table with them) changes nothing. */
static void test_pages_only_move_bytes(void **unused)
{
	(void)unused;
	for (int kv = 0; kv < 2; kv++) {
		struct cache_case c;
		const int32_t lens[2] = { 200, 77 };
		case_init(&c, (enum mla_kv)kv, 2, 4, 2, lens);
		struct mla_ref_decode a = case_args(&c);
		assert_int_equal(mla_ref_decode(&a), 0);
		const size_t rows = (size_t)2 * 2 * 4;
		double *o1 = xcalloc(rows * MLA_LATENT, sizeof(double)), *l1 = xcalloc(rows, sizeof(double));
		memcpy(o1, c.out, rows * MLA_LATENT * sizeof(double));
		memcpy(l1, c.lse, rows * sizeof(double));
		/* Reverse the pool: page p goes to n - 1 - p. */
		const size_t pb = MLA_PAGE_TOKENS * tok_bytes(c.kv);
		unsigned char *rev = xcalloc((size_t)c.n_pages, pb);
		for (int64_t p = 0; p < c.n_pages; p++)
			memcpy(rev + (size_t)(c.n_pages - 1 - p) * pb, (unsigned char *)c.pages + (size_t)p * pb, pb);
		for (int i = 0; i < 2 * c.max_pages; i++)
			c.table[i] = (int32_t)(c.n_pages - 1 - c.table[i]);
		free(c.pages);
		c.pages = rev;
		a = case_args(&c);
		assert_int_equal(mla_ref_decode(&a), 0);
		assert_memory_equal(o1, c.out, rows * MLA_LATENT * sizeof(double));
		assert_memory_equal(l1, c.lse, rows * sizeof(double));
		free(o1), free(l1);
		case_release(&c);
	}
}

/* Query token i of t over L tokens == one query token over L - t + i + 1. */
static void test_causal_among_query_tokens(void **unused)
{
	(void)unused;
	struct cache_case c;
	const int t = 5, H = 3;
	const int32_t lens[1] = { 150 };
	case_init(&c, MLA_KV_FP8, 1, H, t, lens);
	struct mla_ref_decode a = case_args(&c);
	assert_int_equal(mla_ref_decode(&a), 0);
	for (int i = 0; i < t; i++) {
		int32_t len1 = 150 - t + i + 1;
		double out1[3 * MLA_LATENT], lse1[3];
		struct mla_ref_decode b = a;
		b.qtokens = 1, b.seqlens = &len1, b.q = c.q + (size_t)i * H * MLA_DIM;
		b.out = out1, b.lse = lse1;
		assert_int_equal(mla_ref_decode(&b), 0);
		assert_memory_equal(out1, c.out + (size_t)i * H * MLA_LATENT, sizeof out1);
		assert_memory_equal(lse1, c.lse + (size_t)i * H, sizeof lse1);
	}
	case_release(&c);
}

/* Sparse mode: all visible positions (shuffled, with -1 and out-of-range
 * entries mixed in) == dense; two disjoint halves combined == the whole. */
static void test_sparse_and_split_combine(void **unused)
{
	(void)unused;
	struct cache_case c;
	const int H = 4, L = 300;
	const int32_t lens[1] = { L };
	case_init(&c, MLA_KV_BF16, 1, H, 1, lens);
	struct mla_ref_decode a = case_args(&c);
	assert_int_equal(mla_ref_decode(&a), 0);

	const int topk = L + 20;
	int32_t *ix = xcalloc((size_t)topk, sizeof(int32_t));
	for (int j = 0; j < L; j++)
		ix[j] = (int32_t)((j * 97 + 13) % L); /* a permutation: 97 is prime to 300 */
	for (int j = L; j < topk; j++)
		ix[j] = j % 2 ? -1 : L + j; /* skipped */
	double out[4 * MLA_LATENT], lse[4];
	struct mla_ref_decode s = a;
	s.indices = ix, s.topk = topk, s.out = out, s.lse = lse;
	assert_int_equal(mla_ref_decode(&s), 0);
	assert_true(test_rel_err(out, c.out, (size_t)H * MLA_LATENT) < EXACT);
	for (int h = 0; h < H; h++)
		assert_true(fabs(lse[h] - c.lse[h]) < EXACT);

	/* Halves [0, 137) and [137, L): o = (e^lse0 o0 + e^lse1 o1) / (e^lse0 + e^lse1). */
	double o0[4 * MLA_LATENT], o1[4 * MLA_LATENT], l0[4], l1[4];
	int32_t *h0 = xcalloc(137, sizeof(int32_t)), *h1 = xcalloc(L - 137, sizeof(int32_t));
	for (int j = 0; j < 137; j++)
		h0[j] = j;
	for (int j = 137; j < L; j++)
		h1[j - 137] = j;
	s.indices = h0, s.topk = 137, s.out = o0, s.lse = l0;
	assert_int_equal(mla_ref_decode(&s), 0);
	s.indices = h1, s.topk = L - 137, s.out = o1, s.lse = l1;
	assert_int_equal(mla_ref_decode(&s), 0);
	double comb[4 * MLA_LATENT];
	for (int h = 0; h < H; h++) {
		const double m = fmax(l0[h], l1[h]);
		const double w0 = exp(l0[h] - m), w1 = exp(l1[h] - m);
		for (int e = 0; e < MLA_LATENT; e++)
			comb[h * MLA_LATENT + e] = (w0 * o0[h * MLA_LATENT + e] + w1 * o1[h * MLA_LATENT + e]) / (w0 + w1);
		assert_true(fabs(m + log(w0 + w1) - c.lse[h]) < EXACT);
	}
	assert_true(test_rel_err(comb, c.out, (size_t)H * MLA_LATENT) < EXACT);

	/* Nothing visible: lse = -inf, zeros. */
	int32_t none[2] = { -1, L + 5 };
	s.indices = none, s.topk = 2, s.out = o0, s.lse = l0;
	assert_int_equal(mla_ref_decode(&s), 0);
	assert_true(isinf(l0[0]) && l0[0] < 0 && o0[0] == 0.0);
	free(ix), free(h0), free(h1);
	case_release(&c);
}

static void test_fp8_layout(void **unused)
{
	(void)unused;
	double x[MLA_DIM];
	uint8_t t[MLA_FP8_TOKEN_BYTES];
	test_fill(&rng, x, MLA_DIM, -3, 3);
	for (int i = 128; i < 256; i++)
		x[i] = 0.0; /* a tile of zeros */
	x[300] = 50.0;  /* a tile with an outlier */
	mla_fp8_encode_token(x, t);
	float s[4];
	memcpy(s, t + MLA_FP8_SCALE_OFFSET, sizeof s);
	assert_true(s[1] == 1.0f);
	assert_true(fabs(s[2] - 50.0 / 448) < 1e-6);
	for (int e = 0; e < MLA_DIM; e++) {
		const double y = mla_ref_cache_element(MLA_KV_FP8, t, 0, e);
		if (e >= MLA_LATENT)
			assert_true(y == k3_round_bf16(x[e]));
		else /* half an E4M3 step of the tile's scale */
			assert_true(fabs(y - x[e]) <= fmax(fabs(x[e]) * 0x1p-4, 0x1p-10 * s[e / 128]) * 1.0001);
	}
	assert_int_equal(MLA_FP8_TOKEN_BYTES, 656);
}

/* LSE of each query row, dense, computed from the cache the way a kernel does:
 * ROUNDED: keys e4m3 * scale rounded to BF16 (FP32 product), the rest in float64;
 * FP32: per 128-column tile an FP32 sum of exact products (q BF16 times E4M3), times the
 * tile scale in FP32, plus the rope part, then the softmax sum and log in FP32. */
enum lse_emulation { LSE_ROUNDED, LSE_FP32 };

static void emulate_lse(const struct cache_case *c, enum lse_emulation mode, double *lse)
{
	const double scale = 1.0 / sqrt(192.0);
	for (int b = 0; b < c->B; b++)
		for (int i = 0; i < c->t; i++)
			for (int h = 0; h < c->H; h++) {
				const size_t r = ((size_t)b * c->t + i) * c->H + h;
				const double *q = c->q + r * MLA_DIM;
				const int end = c->seqlens[b] - c->t + i + 1;
				double *s = xcalloc((size_t)end, sizeof(double));
				double m = -INFINITY;
				for (int j = 0; j < end; j++) {
					const int32_t page = c->table[b * c->max_pages + j / MLA_PAGE_TOKENS];
					const unsigned char *tok = (const unsigned char *)c->pages +
								   ((size_t)page * MLA_PAGE_TOKENS + j % MLA_PAGE_TOKENS) *
									   MLA_FP8_TOKEN_BYTES;
					if (mode == LSE_ROUNDED) {
						double d = 0.0;
						for (int e = 0; e < MLA_DIM; e++) {
							double k = cache_at(c, b, j, e);
							if (e < MLA_LATENT)
								k = k3_round_bf16((float)k);
							d += q[e] * k;
						}
						s[j] = d * scale;
					} else {
						float d = 0.0f;
						for (int t = 0; t < MLA_FP8_SCALES; t++) {
							float sc, part = 0.0f;
							memcpy(&sc, tok + MLA_FP8_SCALE_OFFSET + 4 * t, sizeof sc);
							for (int e = t * MLA_FP8_TILE; e < (t + 1) * MLA_FP8_TILE; e++)
								part += (float)q[e] * (float)k3_double_from_e4m3(tok[e]);
							d = fmaf(part, sc, d);
						}
						for (int e = MLA_LATENT; e < MLA_DIM; e++)
							d += (float)q[e] * (float)cache_at(c, b, j, e);
						s[j] = (double)(d * (float)scale);
					}
					m = fmax(m, s[j]);
				}
				if (mode == LSE_ROUNDED) {
					double sum = 0.0;
					for (int j = 0; j < end; j++)
						sum += exp(s[j] - m);
					lse[r] = m + log(sum);
				} else {
					float sum = 0.0f;
					for (int j = 0; j < end; j++)
						sum += expf((float)(s[j] - m));
					lse[r] = (double)((float)m + logf(sum));
				}
				free(s);
			}
}

static void test_lse_tolerance_catches_fp8_rounding(void **unused)
{
	(void)unused;
	/* The shape of the GPU test that failed on 2026-12-01 (fp8 H=12 t=3), |q| <= 2 in BF16. */
	struct cache_case c;
	const int32_t lens[4] = { 3, 500, 129, 64 };
	case_init(&c, MLA_KV_FP8, 4, 12, 3, lens);
	const size_t rows = (size_t)c.B * c.t * c.H;
	for (size_t i = 0; i < rows * MLA_DIM; i++)
		c.q[i] = k3_round_bf16(2.0 * c.q[i]);
	struct mla_ref_decode a = case_args(&c);
	double *sa = xcalloc(rows, sizeof(double)), *lse = xcalloc(rows, sizeof(double));
	int32_t *nv = xcalloc(rows, sizeof(int32_t));
	a.score_abs = sa, a.n_visible = nv;
	assert_int_equal(mla_ref_decode(&a), 0);
	double wa, wt;
	emulate_lse(&c, LSE_ROUNDED, lse);
	const double rounded = mla_lse_worst(lse, c.lse, sa, nv, rows, &wa, &wt);
	print_message("BF16-rounded keys: max abs err %.2e, worst err/tol %.2f\n", wa, rounded);
	assert_true(rounded > 3.0);
	emulate_lse(&c, LSE_FP32, lse);
	const double fp32 = mla_lse_worst(lse, c.lse, sa, nv, rows, &wa, &wt);
	print_message("scales after exact products, FP32: max abs err %.2e, worst err/tol %.3f\n", wa, fp32);
	assert_true(fp32 < 0.25);
	free(sa), free(lse), free(nv);
	case_release(&c);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct cache_case c;
	const int32_t lens[1] = { 70 };
	case_init(&c, MLA_KV_BF16, 1, 2, 1, lens);
	struct mla_ref_decode a = case_args(&c);
	c.table[1] = (int32_t)c.n_pages; /* out of the pool */
	assert_int_equal(mla_ref_decode(&a), -EINVAL);
	c.table[1] = 0;
	a.qtokens = MLA_MAX_QTOKENS + 1;
	assert_int_equal(mla_ref_decode(&a), -EINVAL);
	a = case_args(&c);
	int32_t longer = 200; /* more tokens than the table maps */
	a.seqlens = &longer;
	assert_int_equal(mla_ref_decode(&a), -EINVAL);
	case_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_token),
		cmocka_unit_test(test_pages_only_move_bytes),
		cmocka_unit_test(test_causal_among_query_tokens),
		cmocka_unit_test(test_sparse_and_split_combine),
		cmocka_unit_test(test_fp8_layout),
		cmocka_unit_test(test_lse_tolerance_catches_fp8_rounding),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
