/* SPDX-License-Identifier: MIT */
/*
 * LatentMoE combine (CUDA): per token, the sum of its topk grouped expert
 * rows (already multiplied by their router weights in the second expert
 * GEMM's SCALE epilogue), in FP32, then K3's latent RMSNorm
 * (latent_moe_use_norm) with its weight, written BF16:
 *   out[t] = rmsnorm(sum_k y[row_of[t][k]]) * norm_w   (norm_w NULL: the plain sum).
 * One CTA per token. moe_ref_layer() composes the same in float64.
 */
#ifndef K3_KERNELS_MOE_COMBINE_H
#define K3_KERNELS_MOE_COMBINE_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers, 16-byte aligned; BF16 as uint16_t bits. */
struct moe_combine_args {
	int tokens;             /* T >= 0 */
	int topk;               /* K >= 1 */
	int width;              /* elements per row, a multiple of 8, <= 8192 (K3: 3584) */
	float eps;              /* RMSNorm epsilon */
	const uint16_t *y;      /* [T K][width] grouped rows */
	const int32_t *row_of;  /* [T][K] */
	const uint16_t *norm_w; /* [width], or NULL: no norm */
	uint16_t *out;          /* [T][width] */
};

/* Returns 0, -EINVAL (nothing launched) or -EIO (launch failed). */
int moe_combine(const struct moe_combine_args *a, cudaStream_t stream);

/* p[0 .. n) = v (FP32; p device memory, 4-byte aligned; n >= 0): the layer's constant row scales
 * (the E4M3 path's 1 / m a row of w2's input), written inside the forward so that a CUDA graph
 * captures them. Enqueued on `stream`; 0, -EINVAL (nothing launched) or -EIO. */
int moe_fill_f32(float *p, int64_t n, float v, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
