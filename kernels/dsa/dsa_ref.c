/* SPDX-License-Identifier: MIT */
/* Float64 DSA indexer and top-k: see dsa_ref.h. */
#include "kernels/dsa/dsa_ref.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/k3_quant.h"

void dsa_encode_key(const double *x, uint8_t *page, int row)
{
	double amax = 0.0;
	for (int i = 0; i < DSA_INDEX_DIM; i++)
		amax = fmax(amax, fabs(x[i]));
	const float s = amax > 0.0 ? (float)(amax / K3_E4M3_MAX) : 1.0f;
	for (int i = 0; i < DSA_INDEX_DIM; i++)
		page[row * DSA_INDEX_DIM + i] = k3_e4m3_from_double(x[i] / (double)s);
	memcpy(page + DSA_PAGE_TOKENS * DSA_INDEX_DIM + 4 * row, &s, sizeof s);
}

int dsa_ref_index_scores(const struct dsa_ref_index *p)
{
	if (!p || p->batch < 1 || !p->q || !p->weights || !p->cache || !p->block_table || !p->seqlens ||
	    !p->scores || p->max_pages < 1 || p->n_pages < 1)
		return -EINVAL;
	for (int b = 0; b < p->batch; b++) {
		const int L = p->seqlens[b];
		if (L < 0 || L > p->stride || L > (int64_t)p->max_pages * DSA_PAGE_TOKENS)
			return -EINVAL;
		double q[DSA_INDEX_HEADS][DSA_INDEX_DIM];
		for (int h = 0; h < DSA_INDEX_HEADS; h++)
			for (int d = 0; d < DSA_INDEX_DIM; d++)
				q[h][d] = k3_double_from_e4m3(p->q[((size_t)b * DSA_INDEX_HEADS + h) * DSA_INDEX_DIM + d]);
		double *out = p->scores + (size_t)b * p->stride;
		for (int j = 0; j < p->stride; j++)
			out[j] = -INFINITY;
		for (int j = 0; j < L; j++) {
			const int32_t page = p->block_table[(size_t)b * p->max_pages + j / DSA_PAGE_TOKENS];
			if (page < 0 || page >= p->n_pages)
				return -EINVAL;
			const uint8_t *pg = p->cache + (size_t)page * DSA_PAGE_BYTES;
			const int row = j % DSA_PAGE_TOKENS;
			double k[DSA_INDEX_DIM];
			for (int d = 0; d < DSA_INDEX_DIM; d++)
				k[d] = k3_double_from_e4m3(pg[row * DSA_INDEX_DIM + d]);
			float ks;
			memcpy(&ks, pg + DSA_PAGE_TOKENS * DSA_INDEX_DIM + 4 * row, sizeof ks);
			double s = 0.0;
			for (int h = 0; h < DSA_INDEX_HEADS; h++) {
				double dot = 0.0;
				for (int d = 0; d < DSA_INDEX_DIM; d++)
					dot += q[h][d] * k[d];
				s += p->weights[(size_t)b * DSA_INDEX_HEADS + h] * fmax(dot, 0.0);
			}
			out[j] = s * ks;
		}
	}
	return 0;
}

/* Position order of a candidate: higher score first, then lower position. */
static int better(const double *s, int a, int b)
{
	return s[a] > s[b] || (s[a] == s[b] && a < b);
}

static int cmp_int(const void *a, const void *b)
{
	const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

int dsa_ref_topk(const double *scores, int L, int topk, int32_t *out)
{
	if (L < 0 || topk < 1 || !scores || !out)
		return -EINVAL;
	const int n = L < topk ? L : topk;
	/* Selection by repeated scans would be O(L k); a heap of the best n keeps it O(L log k). */
	int32_t *heap = malloc((size_t)(n ? n : 1) * sizeof *heap); /* min-heap by `better` */
	if (!heap)
		return -ENOMEM;
	int size = 0;
	for (int j = 0; j < L; j++) {
		if (size < n) {
			int i = size++;
			heap[i] = j;
			while (i > 0 && better(scores, heap[(i - 1) / 2], heap[i])) {
				const int32_t t = heap[i];
				heap[i] = heap[(i - 1) / 2], heap[(i - 1) / 2] = t, i = (i - 1) / 2;
			}
		} else if (n > 0 && better(scores, j, heap[0])) {
			heap[0] = j;
			int i = 0;
			for (;;) {
				int m = i;
				const int l = 2 * i + 1, r = 2 * i + 2;
				if (l < size && better(scores, heap[m], heap[l]))
					m = l;
				if (r < size && better(scores, heap[m], heap[r]))
					m = r;
				if (m == i)
					break;
				const int32_t t = heap[i];
				heap[i] = heap[m], heap[m] = t, i = m;
			}
		}
	}
	qsort(heap, (size_t)size, sizeof *heap, cmp_int);
	for (int i = 0; i < topk; i++)
		out[i] = i < size ? heap[i] : -1;
	free(heap);
	return 0;
}
