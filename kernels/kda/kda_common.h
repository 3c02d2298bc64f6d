/* SPDX-License-Identifier: MIT */
/*
 * Kimi Delta Attention (KDA): constants and conventions shared by the CPU
 * references (kda_ref.h) and the CUDA entry points (kda_prefill.h,
 * kda_decode.h, kda_verify.h).
 *
 * One head, with q, k in R^K and v in R^V, state S in R^{K x V}:
 *
 *   S_t = (I - beta_t k_t k_t^T) Diag(alpha_t) S_{t-1} + beta_t k_t v_t^T,
 *   o_t = S_t^T q_t,
 *
 * with q and k L2-normalized over the head dimension inside the op (q then
 * multiplied by `scale`), the per-channel log decay bounded from below,
 *
 *   g_t = KDA_GATE_LOWER_BOUND * sigmoid(g_raw_t),   alpha_t = exp(g_t),
 *
 * and beta_t = sigmoid(beta_raw_t). The bound keeps a 16-token chunk's
 * cumulative decay above exp(-80), inside the exponent range of FP32 and
 * BF16, which the chunked form relies on.
 *
 * State layout everywhere: [.., H, V, K], i.e. S^T per head, row v holds
 * S[0..K-1][v] contiguously (FlashKDA's layout). Rows are independent in the
 * recurrence, which is what the kernels parallelize over.
 *
 * BF16 values cross the C API as uint16_t bit patterns (the upper half of
 * an IEEE float32), rounded to nearest even.
 */
#ifndef K3_KERNELS_KDA_COMMON_H
#define K3_KERNELS_KDA_COMMON_H

#include <stdint.h>

/* Tokens per chunk of the chunked prefill (the seed's K3 setting). */
#define KDA_CHUNK 16
/* Causal depthwise ShortConv width; the conv state keeps the previous 3 inputs. */
#define KDA_CONV_TAPS 4
#define KDA_CONV_STATE_TAPS (KDA_CONV_TAPS - 1)
/* Head dimension the CUDA kernels are built for (K = V = 128, as in K3). */
#define KDA_HEAD_DIM 128
/* Longest speculative window the verify kernel takes. */
#define KDA_MAX_WINDOW 8

#define KDA_GATE_LOWER_BOUND (-5.0)
/* Added to the sum of squares before the L2 norm's reciprocal square root. */
#define KDA_L2_EPS 1e-6

enum kda_dtype {
	KDA_F32 = 0,
	KDA_BF16 = 1,
};

#endif
