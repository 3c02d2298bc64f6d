/* SPDX-License-Identifier: MIT */
/*
 * Gated MLA's new latent rows into the paged cache (CUDA): RMSNorm (with
 * weight) of the 512-wide compressed KV, the 64 decoupled columns as they
 * are (K3 is NoPE), stored BF16 or in FlashMLA's FP8 layout (mla_common.h;
 * per 128-element tile, scale = amax / 448, as mla_fp8_encode_token()).
 * One warp per row.
 *
 * Device pointers, 16-byte aligned; BF16 as uint16_t bits. Returns 0,
 * -EINVAL (nothing launched) or -EIO (a launch failed).
 */
#ifndef K3_KERNELS_LAYER_MLA_APPEND_H
#define K3_KERNELS_LAYER_MLA_APPEND_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "../mla/mla_common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mla_append_args {
	int tokens;                 /* T >= 0 new rows */
	enum mla_kv kv;
	float eps;                  /* RMSNorm of the 512 latent columns */
	const uint16_t *kv_in;      /* [T][ld] BF16: 512 latent then 64 rope columns */
	int ld;                     /* >= 576, a multiple of 8 */
	const uint16_t *norm_w;     /* [512] */
	const int32_t *req;         /* [T] request of each row */
	const int32_t *pos;         /* [T] its position in the request */
	const int32_t *block_table; /* [requests][max_pages] */
	int max_pages;
	void *cache;                /* pages as in mla_common.h */
};
int mla_append(const struct mla_append_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
