/* SPDX-License-Identifier: MIT */
/*
 * Block AttnRes (seed section 5.2), the input of every attention and MoE
 * sublayer of K3, fused with that sublayer's pre-norm: the conventions of
 * the float64 reference (attnres_ref.h) and the CUDA entry point (attnres.h).
 *
 * Per token, with sources v_0 .. v_{n-1} (the embedding, the completed
 * 12-layer block representations, and last the current block's partial
 * sum), the sublayer's pseudo-query w and pre-norm weight gamma:
 *
 *   (optional) v_{n-1} <- bf16(v_{n-1} + delta)   the partial sum takes the previous
 *                                                 sublayer's output; stored and used in BF16
 *   key_i = rmsnorm(v_i) * key_norm_w             (key_norm_w optional)
 *   s_i   = w . key_i,  alpha = softmax_i(s)      (softmax over depth, no temperature)
 *   h     = sum_i alpha_i v_i
 *   out   = rmsnorm(h) * gamma                    (the fused pre-norm)
 *
 * rmsnorm(x) = x / sqrt(mean(x^2) + eps). Assumptions where the seed is
 * silent: no 1/sqrt(d) temperature on the scores, the keys' RMSNorm weight
 * optional, the partial sum kept in BF16.
 */
#ifndef K3_KERNELS_ATTNRES_COMMON_H
#define K3_KERNELS_ATTNRES_COMMON_H

/* Sources at most: the embedding, 8 blocks, the partial sum, and room. */
#define ATTNRES_MAX_SOURCES 16
#define ATTNRES_MAX_DIM 8192
/* K3: attn_res_block_size = 12 layers; 8 blocks + the embedding = 9 sources. */
#define K3_ATTNRES_BLOCK 12

#endif
