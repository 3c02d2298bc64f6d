/* SPDX-License-Identifier: MIT */
/*
 * The FP8 cache's tile scales staged into shared memory by the MLA split
 * kernel (mla_decode.cu), host-callable so that a CPU test runs the same
 * thread mapping (tests/kernels/test-k3-formats.cu).
 *
 * A stage holds MLA_STAGE_TOKENS raw 656-byte tokens; each has
 * MLA_FP8_SCALES FP32 scales, staged to ksc[token][scale]. Thread `tid` of
 * `threads` stages every threads-th slot from tid, so every slot is written
 * whatever the block size. (A first version wrote slot tid only where tid <
 * 128: the 64-thread configuration, query rows <= 16, left the scales of
 * tokens 16..31 of each tile stale: output errors of 0.7-1655 relative on
 * the H200, 2026-12-01.)
 */
#ifndef K3_KERNELS_MLA_FP8_STAGE_CUH
#define K3_KERNELS_MLA_FP8_STAGE_CUH

#include <cstring>

#include "mla/mla_common.h"

#define MLA_STAGE_TOKENS 32 /* tokens per pipeline stage (the split kernel's TILE) */

__host__ __device__ __forceinline__ void mla_fp8_stage_scales(float *ksc, const unsigned char *raw, int tid,
							       int threads)
{
	for (int i = tid; i < MLA_STAGE_TOKENS * MLA_FP8_SCALES; i += threads) {
		const unsigned char *src =
			raw + (i / MLA_FP8_SCALES) * MLA_FP8_TOKEN_BYTES + MLA_FP8_SCALE_OFFSET + (i % MLA_FP8_SCALES) * 4;
#ifdef __CUDA_ARCH__
		ksc[i] = *reinterpret_cast<const float *>(src);
#else
		memcpy(&ksc[i], src, sizeof(float));
#endif
	}
}

#endif
