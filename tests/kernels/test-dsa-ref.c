/* SPDX-License-Identifier: MIT */
/*
 * The float64 DSA references (kernels/dsa/dsa_ref.h): keys encode within
 * an E4M3 step; a score is k_scale * sum_h w_h relu(q_h . k) (negative dots
 * contribute nothing); the top-k breaks ties toward lower positions, lists
 * positions in ascending order and pads short contexts with -1.
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
#include "kernels/dsa/dsa_ref.h"

static struct test_rng rng = { 20261207 };

static void test_scores(void **unused)
{
	(void)unused;
	static uint8_t page[2][DSA_PAGE_BYTES];
	double x[DSA_INDEX_DIM];
	for (int p = 0; p < 2; p++)
		for (int r = 0; r < DSA_PAGE_TOKENS; r++) {
			test_fill(&rng, x, DSA_INDEX_DIM, -3, 3);
			dsa_encode_key(x, page[p], r);
			for (int d = 0; d < DSA_INDEX_DIM; d++) {
				float s;
				memcpy(&s, page[p] + DSA_PAGE_TOKENS * DSA_INDEX_DIM + 4 * r, sizeof s);
				const double y = k3_double_from_e4m3(page[p][r * DSA_INDEX_DIM + d]) * s;
				assert_true(fabs(y - x[d]) <= fmax(fabs(x[d]) * 0x1p-4, 0x1p-10 * s) * 1.0001);
			}
		}
	/* q: head 0 = +k direction of token 5, head 1 = its negative; weights 2 and 3. */
	uint8_t q[DSA_INDEX_HEADS * DSA_INDEX_DIM] = { 0 };
	double w[DSA_INDEX_HEADS] = { 2.0, 3.0 };
	for (int d = 0; d < DSA_INDEX_DIM; d++) {
		q[d] = page[1][5 * DSA_INDEX_DIM + d];
		q[DSA_INDEX_DIM + d] = (uint8_t)(q[d] ^ 0x80); /* negated */
	}
	const int32_t table[2] = { 1, 0 }, L = 70;
	double scores[80];
	struct dsa_ref_index p = { .batch = 1, .q = q, .weights = w, .cache = &page[0][0], .n_pages = 2,
				   .block_table = table, .max_pages = 2, .seqlens = &L, .stride = 80, .scores = scores };
	assert_int_equal(dsa_ref_index_scores(&p), 0);
	/* Token 5 (page 1, row 5): dot = |k|^2 > 0 for head 0, < 0 for head 1. */
	double kk = 0;
	for (int d = 0; d < DSA_INDEX_DIM; d++)
		kk += pow(k3_double_from_e4m3(q[d]), 2);
	float s5;
	memcpy(&s5, page[1] + DSA_PAGE_TOKENS * DSA_INDEX_DIM + 4 * 5, sizeof s5);
	assert_true(fabs(scores[5] - 2.0 * kk * s5) < 1e-9 * scores[5]);
	for (int j = L; j < 80; j++)
		assert_true(isinf(scores[j]) && scores[j] < 0);
	for (int j = 0; j < L; j++)
		assert_true(scores[j] >= 0); /* relu and positive weights */
	int32_t bad[2] = { 0, 2 };
	p.block_table = bad;
	assert_int_equal(dsa_ref_index_scores(&p), -EINVAL);
}

static void test_topk(void **unused)
{
	(void)unused;
	double s[10] = { 1, 5, 3, 5, 2, 5, 0, 4, -1, 5 };
	int32_t out[4];
	assert_int_equal(dsa_ref_topk(s, 10, 4, out), 0);
	/* The four 5s (positions 1 3 5 9). */
	assert_int_equal(out[0], 1), assert_int_equal(out[1], 3), assert_int_equal(out[2], 5), assert_int_equal(out[3], 9);
	assert_int_equal(dsa_ref_topk(s, 10, 3, out), 0); /* ties to the lower positions */
	assert_int_equal(out[0], 1), assert_int_equal(out[1], 3), assert_int_equal(out[2], 5);
	assert_int_equal(dsa_ref_topk(s, 10, 6, (int32_t[6]){ 0 }), 0);
	int32_t six[6];
	dsa_ref_topk(s, 10, 6, six); /* 5 5 5 5 4 3: positions 1 2 3 5 7 9 */
	const int32_t want6[6] = { 1, 2, 3, 5, 7, 9 };
	assert_memory_equal(six, want6, sizeof six);
	int32_t pad[4];
	assert_int_equal(dsa_ref_topk(s, 2, 4, pad), 0);
	assert_int_equal(pad[0], 0), assert_int_equal(pad[1], 1), assert_int_equal(pad[2], -1), assert_int_equal(pad[3], -1);
	/* Large random: the selection is exactly the k largest. */
	enum { N = 5000, K = 300 };
	double *r = malloc(N * sizeof *r);
	int32_t *o = malloc(K * sizeof *o);
	test_fill(&rng, r, N, -1, 1);
	assert_int_equal(dsa_ref_topk(r, N, K, o), 0);
	double lo = INFINITY;
	char *chosen = calloc(N, 1);
	for (int i = 0; i < K; i++) {
		if (i)
			assert_true(o[i] > o[i - 1]);
		chosen[o[i]] = 1, lo = fmin(lo, r[o[i]]);
	}
	for (int j = 0; j < N; j++)
		if (!chosen[j])
			assert_true(r[j] <= lo);
	free(r), free(o), free(chosen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scores),
		cmocka_unit_test(test_topk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
