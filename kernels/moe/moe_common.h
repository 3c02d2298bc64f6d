/* SPDX-License-Identifier: MIT */
/*
 * K3's Stable LatentMoE (seed section 6, config kimi-k3-config.json): the
 * conventions shared by the float64 references (moe_ref.h) and the CUDA
 * entry points (k3_gemm.h, moe_route.h, moe_combine.h).
 *
 * For a token x (hidden 7168):
 *   logits = W_r x (896, FP32), score_e = sigmoid(logits_e);
 *   the top 16 experts by score_e + bias_e (bias: selection only, as
 *     "noaux_tc" with one group), weights w_k = score_k / sum_k score_k *
 *     routed_scaling_factor (moe_renormalize; K3's factor is 1);
 *   latent = W_down x (3584);
 *   y = sum_k w_k * expert_k(latent),
 *     expert(z) = W_2 situ_glu(W_1 z, W_3 z)  (intermediate 3072);
 *   out = W_up (rmsnorm(y) * norm_w) + shared(x),
 *     shared(x) = W_s2 situ_glu(W_s1 x, W_s3 x)  (two shared experts of
 *     3072 merged into one MLP of 6144).
 *
 * SiTU-GLU (seed 6.2; config activation_situ_beta = 4, activation_situ_linear_beta = 25):
 *   situ_glu(g, u) = [b1 tanh(g / b1) * sigmoid(g)] * [b2 tanh(u / b2)],
 * i.e. SwiGLU with both branches soft-capped. The seed prints the formula
 * with sigmoid(W_g x) of the uncapped gate pre-activation; that is what is
 * implemented (assumption: the published code was not available here).
 *
 * Weight layouts (row-major, y = W x with W [out][in], as torch Linear):
 *  - fused gate/up ("w13") [2 F][in]: rows interleaved in blocks of
 *    MOE_GLU_BLOCK = 8: rows 16 q .. 16 q + 7 are W_1 rows 8 q .. 8 q + 7 and
 *    rows 16 q + 8 .. 16 q + 15 are W_3 rows 8 q .. 8 q + 7 (so one 16-row
 *    tile holds the gate and up rows of the same 8 outputs);
 *  - fused router + down [E + 3584][7168]: the E router rows first;
 *  - routed experts [E][N][K] BF16, or MXFP4 (k3_quant.h): packed
 *    [E][N][K / 2] bytes, scales [E][N][K / 32] E8M0.
 *
 * Grouping: the T x topk (token, slot) pairs sorted by expert, stable (by
 * token within an expert): grouped row r of expert e, off[e] <= r < off[e+1],
 * belongs to token row_token[r]; row_of[t][k] is the grouped row of pair
 * (t, k). Tiles of the grouped GEMM: tile_off[e] = sum over e' < e of
 * ceil(count_e' / tile_rows).
 */
#ifndef K3_KERNELS_MOE_COMMON_H
#define K3_KERNELS_MOE_COMMON_H

#define MOE_GLU_BLOCK 8
/* Rows per tile of the grouped GEMM (tile_off counts tiles of this many rows). */
#define MOE_TILE_ROWS 64
#define MOE_MAX_EXPERTS 1024
#define MOE_MAX_TOPK 32

/* K3's dimensions and activation constants. */
#define K3_HIDDEN 7168
#define K3_LATENT 3584
#define K3_EXPERTS 896
#define K3_TOPK 16
#define K3_EXPERT_INTER 3072
#define K3_SHARED_INTER 6144
#define K3_SITU_BETA_GATE 4.0
#define K3_SITU_BETA_UP 25.0

/* Epilogues of the GEMM op (k3_gemm.h, moe_ref_gemm()), applied to
 * acc = A W^T at row r, column n; outputs BF16 except SPLIT's FP32 part:
 *   BF16:   out[r][n] = acc
 *   SPLIT:  n < n_split: out_f32[r][n] = acc; else out[r][n - n_split] = acc
 *   GLU:    out[r][j] = situ_glu(acc at the gate row of j, acc at its up row), N = 2 F, F columns
 *   SCALE:  out[r][n] = acc * row_scale[r]
 *   ADD:    out[r][n] = acc + addend[r][n]
 *   GATE:   out[r][n] = acc * sigmoid(addend[r][n])   (an output gate, e.g. Gated MLA's)
 * With an output row map, out, out_f32 and addend are indexed by out_index[r]
 * instead of r (row_scale stays at r). */
enum k3_epilogue {
	K3_EPI_BF16 = 0,
	K3_EPI_SPLIT = 1,
	K3_EPI_GLU = 2,
	K3_EPI_SCALE = 3,
	K3_EPI_ADD = 4,
	K3_EPI_GATE = 5,
};

/* Weight formats of the GEMM op. */
enum k3_wdtype {
	K3_W_BF16 = 0,
	K3_W_MXFP4 = 1,
};

#endif
