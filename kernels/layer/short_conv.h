/* SPDX-License-Identifier: MIT */
/*
 * KDA's causal depthwise ShortConv (4 taps) + SiLU over a packed prefill
 * (CUDA), the q | k | v projections split into separate outputs (what
 * kda_prefill() reads), the conv state read first and then advanced to the
 * last three inputs of each sequence (what kda_decode() continues from).
 * kda_ref_short_conv() is the float64 function. Two kernels: the
 * convolution (a thread per 8 channels of a token), then the state update.
 *
 * Device pointers, 16-byte aligned; BF16 as uint16_t bits. Returns 0,
 * -EINVAL (nothing launched) or -EIO (a launch failed).
 */
#ifndef K3_KERNELS_LAYER_SHORT_CONV_H
#define K3_KERNELS_LAYER_SHORT_CONV_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define K3_CONV_TAPS 4
#define K3_CONV_OUTS 3

struct k3_short_conv_args {
	int n_seqs;                       /* N >= 1 */
	int64_t total_tokens;             /* T = cu_seqlens[N] < 2^31 */
	int channels;                     /* C, a multiple of 8 * K3_CONV_OUTS (K3 KDA: 3 x 96 x 128) */
	const int32_t *cu_seqlens;        /* [N + 1] */
	const uint16_t *x;                /* [T][C] projections */
	const uint16_t *w;                /* [C][4], tap 3 multiplies the current token */
	uint16_t *conv_state;             /* [slots][3][C] oldest tap first, or NULL: zeros, not kept */
	const int32_t *slot;              /* [N] state slot of each sequence, or NULL: slot i */
	uint16_t *out[K3_CONV_OUTS];      /* [T][C / 3] each: channels [i C/3, (i + 1) C/3) */
};
int k3_short_conv(const struct k3_short_conv_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
