/* SPDX-License-Identifier: MIT */
/*
 * KDA's output norm after the prefill's recurrence (CUDA): head-wise
 * RMSNorm with weight times the sigmoid output gate (the decode kernel
 * fuses the same); kda_ref_gated_rmsnorm() is the float64 function. One
 * warp per (token, head).
 *
 * Device pointers, 16-byte aligned; BF16 as uint16_t bits. Returns 0,
 * -EINVAL (nothing launched) or -EIO (a launch failed).
 */
#ifndef K3_KERNELS_LAYER_GATED_NORM_H
#define K3_KERNELS_LAYER_GATED_NORM_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct k3_gated_norm_args {
	int64_t tokens;         /* T */
	int heads;              /* H, head dim 128 */
	float eps;
	const uint16_t *o;      /* [T][H][128] */
	const uint16_t *gate;   /* [T][H][128] before its sigmoid */
	const uint16_t *norm_w; /* [128] */
	uint16_t *out;          /* [T][H][128] */
};
int k3_gated_norm(const struct k3_gated_norm_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
