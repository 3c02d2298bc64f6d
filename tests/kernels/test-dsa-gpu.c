/* SPDX-License-Identifier: MIT */
/*
 * DSA decode on the GPU against the float64 references (suite 'gpu'; exit 77
 * without a GPU): indexer scores over paged FP8 keys, the top-k (exactly the
 * host selection rule applied to the GPU's scores, and a valid top-k of the
 * float64 scores up to FP32 rounding), then sparse MLA decode over the
 * selected tokens (FP8 latent cache) against mla_ref_decode() in sparse
 * mode. Fresh random inputs; outputs poisoned. DSA_TEST_FILTER selects tests.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "k3_gpu_test_util.h"
#include "mla_test_util.h"
#include "kernels/dsa/dsa_index.h"
#include "kernels/dsa/dsa_ref.h"
#include "kernels/mla/mla_decode.h"
#include "kernels/mla/mla_ref.h"

static struct test_rng rng = { 20261208 };

static void run(int B, const int32_t *lens, int topk, int heads)
{
	int max_seqlen = 1;
	for (int b = 0; b < B; b++)
		max_seqlen = lens[b] > max_seqlen ? lens[b] : max_seqlen;
	print_message("dsa B=%d max ctx %d topk %d mla heads %d\n", B, max_seqlen, topk, heads);
	const int max_pages = (max_seqlen + 63) / 64;
	int64_t n_pages = (int64_t)B * max_pages + 3;
	while (n_pages % 5 == 0)
		n_pages++;
	int32_t *table = gt_xmalloc((size_t)B * max_pages * 4);
	for (int i = 0; i < B * max_pages; i++)
		table[i] = (int32_t)(((int64_t)i * 5 + 1) % n_pages); /* scattered, distinct */
	/* Index keys and MLA latents of every page (unused rows too: finite). */
	uint8_t *keys = gt_xmalloc((size_t)n_pages * DSA_PAGE_BYTES);
	uint8_t *lat = gt_xmalloc((size_t)n_pages * 64 * MLA_FP8_TOKEN_BYTES);
	double x[MLA_DIM];
	for (int64_t p = 0; p < n_pages; p++)
		for (int r = 0; r < 64; r++) {
			test_fill(&rng, x, DSA_INDEX_DIM, -2, 2);
			dsa_encode_key(x, keys + p * DSA_PAGE_BYTES, r);
			test_fill(&rng, x, MLA_DIM, -1, 1);
			mla_fp8_encode_token(x, lat + ((size_t)p * 64 + r) * MLA_FP8_TOKEN_BYTES);
		}
	uint8_t *q = gt_xmalloc((size_t)B * DSA_INDEX_HEADS * DSA_INDEX_DIM);
	for (size_t i = 0; i < (size_t)B * DSA_INDEX_HEADS * DSA_INDEX_DIM; i++)
		q[i] = k3_e4m3_from_double(test_rng_uniform(&rng, -3, 3));
	float *w = gt_xmalloc((size_t)B * DSA_INDEX_HEADS * 4);
	double *wd = gt_dnew((size_t)B * DSA_INDEX_HEADS);
	for (int i = 0; i < B * DSA_INDEX_HEADS; i++)
		w[i] = (float)test_rng_uniform(&rng, 0, 1.0 / 64), wd[i] = w[i];
	double *rs = gt_dnew((size_t)B * max_seqlen);
	struct dsa_ref_index ref = { .batch = B, .q = q, .weights = wd, .cache = keys, .n_pages = n_pages,
				     .block_table = table, .max_pages = max_pages, .seqlens = lens, .stride = max_seqlen,
				     .scores = rs };
	assert_int_equal(dsa_ref_index_scores(&ref), 0);

	struct dsa_index_args a = {
		.batch = B, .max_seqlen = max_seqlen, .topk = topk,
		.q = gt_dev_copy(q, (size_t)B * DSA_INDEX_HEADS * DSA_INDEX_DIM), .weights = gt_dev_copy(w, (size_t)B * 256),
		.cache = gt_dev_copy(keys, (size_t)n_pages * DSA_PAGE_BYTES), .block_table = gt_dev_copy(table, (size_t)B * max_pages * 4),
		.max_pages = max_pages, .seqlens = gt_dev_copy(lens, (size_t)B * 4),
		.scores = gt_dev_poisoned((size_t)B * max_seqlen * 4), .indices = gt_dev_poisoned((size_t)B * topk * 4),
	};
	KERNEL_OK(dsa_index(&a, 0));
	double *gs = gt_dnew((size_t)B * max_seqlen);
	gt_f32_read(a.scores, gs, (size_t)B * max_seqlen);
	int32_t *gi = gt_xmalloc((size_t)B * topk * 4), *hi = gt_xmalloc((size_t)B * topk * 4);
	CUDA_OK(cudaMemcpy(gi, a.indices, (size_t)B * topk * 4, cudaMemcpyDeviceToHost));
	for (int b = 0; b < B; b++) {
		const double *g = gs + (size_t)b * max_seqlen, *r = rs + (size_t)b * max_seqlen;
		for (int j = lens[b]; j < max_seqlen; j++)
			assert_true(isinf(g[j]) && g[j] < 0);
		char what[64];
		snprintf(what, sizeof what, "scores of request %d (L=%d)", b, lens[b]);
		gt_check(what, g, r, (size_t)lens[b], 1e-5);
		/* The GPU's list is the rule applied to its own scores ... */
		assert_int_equal(dsa_ref_topk(g, lens[b], topk, hi + (size_t)b * topk), 0);
		assert_memory_equal(gi + (size_t)b * topk, hi + (size_t)b * topk, (size_t)topk * 4);
		/* ... and a top-k of the float64 scores up to FP32 rounding. */
		char *chosen = calloc((size_t)lens[b], 1);
		double lo = INFINITY, top = -INFINITY;
		for (int i = 0; i < topk; i++) {
			const int32_t j = gi[(size_t)b * topk + i];
			if (j < 0)
				continue;
			chosen[j] = 1, lo = fmin(lo, r[j]);
		}
		for (int j = 0; j < lens[b]; j++)
			if (!chosen[j])
				top = fmax(top, r[j]);
		assert_true(lens[b] <= topk || lo >= top - 1e-5 * fabs(top));
		free(chosen);
	}

	/* Sparse MLA decode over the chosen tokens. */
	const int rows = B * heads;
	struct gt_bf16 qm = gt_bf16_rand(&rng, (size_t)rows * MLA_DIM, -2, 2);
	struct mla_ref_decode mr = {
		.batch = B, .heads = heads, .qtokens = 1, .kv = MLA_KV_FP8, .scale = 1.0 / sqrt(192.0), .q = qm.h,
		.cache = lat, .n_pages = n_pages, .block_table = table, .max_pages = max_pages, .seqlens = lens,
		.indices = gi, .topk = topk, .out = gt_dnew((size_t)rows * MLA_LATENT), .lse = gt_dnew((size_t)rows),
		.score_abs = gt_dnew((size_t)rows), .n_visible = gt_xmalloc((size_t)rows * sizeof(int32_t)),
	};
	assert_int_equal(mla_ref_decode(&mr), 0);
	struct gt_bf16 out = gt_bf16_out((size_t)rows * MLA_LATENT);
	struct mla_decode_args m = {
		.batch = B, .heads = heads, .qtokens = 1, .kv = MLA_KV_FP8, .scale = (float)mr.scale,
		.max_seqlen = max_seqlen, .q = qm.d, .cache = gt_dev_copy(lat, (size_t)n_pages * 64 * MLA_FP8_TOKEN_BYTES),
		.block_table = a.block_table, .max_pages = max_pages, .seqlens = a.seqlens, .indices = a.indices,
		.topk = topk, .out = out.d, .lse = gt_dev_poisoned((size_t)rows * 4),
	};
	size_t ws = 0;
	assert_int_equal(mla_decode_workspace_bytes(&m, &ws), 0);
	m.workspace = ws ? gt_dev_poisoned(ws) : NULL;
	m.workspace_bytes = ws;
	KERNEL_OK(mla_decode(&m, 0));
	gt_bf16_read(&out);
	double *lse = gt_dnew((size_t)rows);
	gt_f32_read(m.lse, lse, (size_t)rows);
	gt_check("sparse MLA out", out.h, mr.out, (size_t)rows * MLA_LATENT, 1.5e-2);
	mla_check_lse("sparse MLA lse", lse, mr.lse, mr.score_abs, mr.n_visible, (size_t)rows);

	free(table), free(keys), free(lat), free(q), free(w), free(wd), free(rs), free(gs), free(gi), free(hi);
	free(mr.out), free(mr.lse), free(mr.score_abs), free(mr.n_visible), free(lse);
	gt_bf16_release(&qm), gt_bf16_release(&out);
	gt_free(a.q), gt_free(a.weights), gt_free(a.cache), gt_free(a.block_table), gt_free(a.seqlens);
	cudaFree(a.scores), cudaFree(a.indices), gt_free(m.cache), cudaFree(m.lse), cudaFree(m.workspace);
}

static void test_short_and_long(void **unused)
{
	(void)unused;
	const int32_t lens[3] = { 100, 3000, 70000 };
	run(3, lens, DSA_TOPK, 16);
}

static void test_small_topk_many_heads(void **unused)
{
	(void)unused;
	const int32_t lens[2] = { 1, 5000 };
	run(2, lens, 64, 128);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct dsa_index_args a = { .batch = 1, .max_seqlen = 100, .topk = DSA_MAX_TOPK + 1, .max_pages = 2 };
	assert_int_equal(dsa_index(&a, 0), -EINVAL);
	a.topk = 16, a.max_pages = 1; /* 100 tokens need 2 pages */
	assert_int_equal(dsa_index(&a, 0), -EINVAL);
}

int main(void)
{
	int rc = gt_device_or_skip("DSA_TEST_FILTER");
	if (rc)
		return rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_short_and_long),
		cmocka_unit_test(test_small_topk_many_heads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
