/* SPDX-License-Identifier: MIT */
/*
 * LatentMoE routing and grouping (CUDA): from FP32 router logits, the top-k
 * experts of each token by sigmoid score + bias with the normalized score
 * weights (moe_ref_route()), then the stable grouping of the (token, slot)
 * pairs by expert (moe_ref_group()): row offsets, tile offsets for the
 * grouped GEMM, the list of touched experts, and both directions of the
 * permutation. Deterministic: no result depends on the order of atomics
 * (ranks inside a block of 256 tokens come from per-expert token bitmasks).
 *
 * Four kernels: top-k (one warp per token), per-block expert counts, one
 * CTA that scans them, and the scatter.
 */
#ifndef K3_KERNELS_MOE_ROUTE_H
#define K3_KERNELS_MOE_ROUTE_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "moe_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers. */
struct moe_route_args {
	int tokens;            /* T >= 0, T * topk < 2^31 */
	int experts;           /* E, 1..MOE_MAX_EXPERTS */
	int topk;              /* K, 1..min(E, MOE_MAX_TOPK) */
	float scaling;         /* routed_scaling_factor (K3: 1) */
	const float *logits;   /* [T][logits_stride], experts in columns 0..E-1 */
	int logits_stride;     /* >= E */
	const float *bias;     /* [E] selection bias, or NULL */
	int32_t *topk_ids;     /* [T][K] */
	float *topk_weights;   /* [T][K] */
	int32_t *off;          /* [E + 1] grouped row offsets */
	int32_t *tile_off;     /* [E + 1] offsets in MOE_TILE_ROWS tiles */
	int32_t *touched;      /* [E] experts with rows, ascending (the first *n_touched) */
	int32_t *n_touched;    /* [1] */
	int32_t *row_token;    /* [T K] token of each grouped row */
	float *row_weight;     /* [T K] router weight of each grouped row */
	int32_t *row_of;       /* [T K] grouped row of pair (t, k) */
	void *workspace;       /* moe_route_workspace_bytes() */
	size_t workspace_bytes;
};

/* Workspace for T tokens and E experts (per-block counts), in bytes. */
size_t moe_route_workspace_bytes(int tokens, int experts);

/* Enqueues routing and grouping on `stream`. Returns 0, -EINVAL (nothing
 * launched), or -EIO when a launch failed. */
int moe_route(const struct moe_route_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
