/* SPDX-License-Identifier: MIT */
/*
 * Float64 references of the DSA indexer and its top-k (see dsa_common.h),
 * and the key encoder. Plain C; nothing is printed. Functions return 0,
 * -EINVAL or -ENOMEM.
 */
#ifndef K3_KERNELS_DSA_REF_H
#define K3_KERNELS_DSA_REF_H

#include <stdint.h>

#include "dsa_common.h"

struct dsa_ref_index {
	int batch;                  /* B >= 1 */
	const uint8_t *q;           /* [B][64][128] E4M3 */
	const double *weights;      /* [B][64] */
	const uint8_t *cache;       /* pages of DSA_PAGE_BYTES */
	int64_t n_pages;
	const int32_t *block_table; /* [B][max_pages] */
	int max_pages;
	const int32_t *seqlens;     /* [B] */
	int stride;                 /* row stride of scores, >= every L */
	double *scores;             /* [B][stride]; positions >= L: -INFINITY */
};

int dsa_ref_index_scores(const struct dsa_ref_index *p);

/* The top `topk` of scores[0..L) (ties to the lower position) in ascending
 * position, then -1 up to topk entries. */
int dsa_ref_topk(const double *scores, int L, int topk, int32_t *out);

/* Token j's key (128 values) into its page: E4M3 of x / s with
 * s = amax / 448 (1 for zeros) stored as the token's FP32 scale. */
void dsa_encode_key(const double *x, uint8_t *page, int row);

#endif
