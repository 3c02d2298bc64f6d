/* SPDX-License-Identifier: MIT */
/*
 * Fused KDA decode (CUDA): one token for each of B requests, all H heads of
 * one layer, K = V = 128. Per (request, head): ShortConv (width 4) on the
 * q, k, v projections with the conv state, SiLU, L2 norm of q and k, gate
 * g = -5 sigmoid(g_raw), beta = sigmoid(beta_raw), the state recurrence,
 * head-wise RMSNorm with weight and the sigmoid output gate (see
 * kda_common.h and kda_ref_decode() for the exact function). The state is
 * read once and written once, in place, in its slot of a paged pool.
 */
#ifndef K3_KERNELS_KDA_DECODE_H
#define K3_KERNELS_KDA_DECODE_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "kda_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* All pointers are device memory; BF16 as uint16_t bit patterns.
 * C = 3 * H * 128 channels per token: q of head h at [h*128, h*128+128),
 * k at [H*128 + h*128, ..), v at [2*H*128 + h*128, ..). */
struct kda_decode_args {
	int batch;                  /* B >= 1 */
	int heads;                  /* H >= 1, heads on this GPU */
	enum kda_dtype state_dtype; /* KDA_F32 or KDA_BF16 */
	float scale;                /* q scale after the L2 norm, usually 128^-1/2 */
	float norm_eps;             /* RMSNorm epsilon */
	const uint16_t *x;          /* [B][C] projections before ShortConv */
	const uint16_t *g_raw;      /* [B][H][128] */
	const uint16_t *beta_raw;   /* [B][H] */
	const uint16_t *gate_raw;   /* [B][H][128] output gate before its sigmoid */
	const uint16_t *conv_w;     /* [C][4], tap 3 multiplies the current token */
	const uint16_t *norm_w;     /* [128], shared by the heads */
	const int32_t *slot;        /* [B] state slot of each request; distinct within a call */
	void *state;                /* [slots][H][128][128] of state_dtype, updated in place */
	uint16_t *conv_state;       /* [slots][3][C], oldest tap first, updated in place */
	uint16_t *out;              /* [B][H][128] */
};

/* Enqueues the decode step on `stream`. Returns 0, -EINVAL for bad
 * arguments or a KDA_DECODE_RING_OPT naming options that were not built
 * (kda_decode.cu; nothing launched), or -EIO when the launch failed (the
 * CUDA error stays readable through cudaGetLastError()). */
int kda_decode(const struct kda_decode_args *a, cudaStream_t stream);

/* Diagnostics for kda-bench --trace (not for a serving path). While the environment variable
 * KDA_DECODE_RING_TRACE holds a digit n < KDA_DECODE_TRACE_LAUNCHES, each launch of the main
 * ring kernel writes record n of a device buffer (allocated at the first such launch):
 * KDA_DECODE_TRACE_CTAS x KDA_DECODE_TRACE_FIELDS u64 a launch, one row per CTA (field map:
 * kda_decode.cu, TR_*), %globaltimer in ns and clock64 cycles. A grid larger than
 * KDA_DECODE_TRACE_CTAS fails the launch with -EINVAL. */
enum {
	KDA_DECODE_TRACE_LAUNCHES = 4,
	KDA_DECODE_TRACE_CTAS = 264,
	KDA_DECODE_TRACE_ITEMS = 64,
	KDA_DECODE_TRACE_FIELDS = 12 + KDA_DECODE_TRACE_ITEMS,
};

/* Copies the first n u64 of the records (launch-major) to dst and zeroes the device copy.
 * Synchronous. Returns 0, -EINVAL (dst null), -ENODATA (no traced launch yet) or -EIO. */
int kda_decode_trace_read(unsigned long long *dst, size_t n);

#ifdef __cplusplus
}
#endif

#endif
