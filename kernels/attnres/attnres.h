/* SPDX-License-Identifier: MIT */
/*
 * Block AttnRes fused with the sublayer pre-norm (CUDA): see
 * attnres_common.h for the function, attnres_ref() for it in float64.
 * One CTA per token: one pass over the sources accumulates each source's
 * sum of squares and its dot with the (key-norm-weighted) pseudo-query
 * (s_i = rsqrt(mean v_i^2 + eps) * sum_k v_ik w_k kw_k, so the keys are never
 * formed), the CTA reduces the 2n sums, and a second pass (L2-resident)
 * mixes the sources, normalizes and writes; the optional partial-sum update
 * is fused into the first pass.
 */
#ifndef K3_KERNELS_ATTNRES_H
#define K3_KERNELS_ATTNRES_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "attnres_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers, 16-byte aligned; BF16 as uint16_t bits. */
struct attnres_args {
	int tokens;                               /* T >= 0 */
	int dim;                                  /* a multiple of 8, <= ATTNRES_MAX_DIM (K3: 7168) */
	int n_sources;                            /* 1..ATTNRES_MAX_SOURCES */
	const uint16_t *src[ATTNRES_MAX_SOURCES]; /* [T][dim] each; src[n - 1] is the partial sum */
	const uint16_t *delta;                    /* [T][dim] added to the partial sum first, or NULL */
	uint16_t *partial_out;                    /* [T][dim] updated partial (needed with delta; may be src[n - 1]) */
	const uint16_t *query;                    /* [dim] pseudo-query */
	const uint16_t *key_norm_w;               /* [dim] or NULL */
	const uint16_t *norm_w;                   /* [dim] pre-norm weight */
	float eps;
	uint16_t *out;                            /* [T][dim] rmsnorm(h) * norm_w */
	uint16_t *h_out;                          /* [T][dim] h itself, or NULL */
};

/* Returns 0, -EINVAL (nothing launched) or -EIO (launch failed). */
int attnres(const struct attnres_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
