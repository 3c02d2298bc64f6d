/* SPDX-License-Identifier: MIT */
/*
 * The DSA lightning indexer for decode (CUDA): each request's scores over
 * its L cached keys (see dsa_common.h), then their top-k positions; the
 * sparse MLA decode over them is mla_decode() with `indices`.
 *
 * Scores: one CTA per 256 cached tokens of a request, 8 warps x 32 tokens;
 * the keys are the A operand (16 tokens x 32 bytes per FP8 tensor-core MMA,
 * m16n8k32 E4M3 -> FP32, exact products), the 64 query heads the B
 * operand (kept in shared memory), k slots permuted within each 128-byte
 * key so that every lane loads 2 x 16 contiguous bytes of a key; the
 * ReLU, head weights, head sum and key scale in registers and shuffles.
 * Top-k: one CTA per request, a 4-pass radix select on the scores' bits
 * (shared-memory histograms), then one ordered pass that lists the
 * positions, ties at the threshold to the lower positions. Deterministic.
 */
#ifndef K3_KERNELS_DSA_INDEX_H
#define K3_KERNELS_DSA_INDEX_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "dsa_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers, 16-byte aligned. */
struct dsa_index_args {
	int batch;                  /* B, 1..65535 */
	int max_seqlen;             /* >= every seqlens[b] (host bound, sizes the grid) */
	int topk;                   /* 1..DSA_MAX_TOPK (DSA: 2048) */
	const uint8_t *q;           /* [B][64][128] E4M3 */
	const float *weights;       /* [B][64] */
	const uint8_t *cache;       /* key pages, DSA_PAGE_BYTES each */
	const int32_t *block_table; /* [B][max_pages] */
	int max_pages;              /* >= ceil(max_seqlen / 64) */
	const int32_t *seqlens;     /* [B] */
	float *scores;              /* [B][max_seqlen] out (positions >= L: -inf) */
	int32_t *indices;           /* [B][topk] out, ascending positions, -1 padded */
};

/* Returns 0, -EINVAL (nothing launched) or -EIO (a launch failed). */
int dsa_index(const struct dsa_index_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
