/* SPDX-License-Identifier: MIT */
/*
 * Absorbed MLA decode (DeepSeek-V2/V3 form, K3's Gated MLA layers): the
 * conventions shared by the float64 reference (mla_ref.h) and the CUDA entry
 * point (mla_decode.h).
 *
 * Each cached token holds one latent row of MLA_DIM = 576 elements: the
 * compressed KV c (MLA_LATENT = 512, the "NoPE" part) followed by the
 * decoupled key part k_r (MLA_ROPE = 64; K3 runs NoPE, so no rotation is
 * applied, but the 64 columns are still cached and scored). With the
 * up-projections absorbed into q and into the output projection, every head
 * attends over the same rows (MQA over 576-wide keys, 512-wide values):
 *
 *   s_j = scale * (q . k_j),  k_j = row j (576),
 *   p_j = exp(s_j - lse),  lse = log sum_j exp(s_j),
 *   out = sum_j p_j * row_j[0..512).
 *
 * Query token i of t (i = 0..t-1) of a request with L cached tokens (the t
 * new ones included, appended last) sees tokens 0 .. L - t + i (causal among
 * the t). Decode runs t = 1..8 (MTP or speculative verify); larger t is a
 * causal prefill of t new tokens over the cached prefix in the same absorbed
 * form (576 + 512 MACs per (query, key, head): about 3.4 times the work of
 * the materialized 192 + 128 per head, so meant for short chunks and tests).
 *
 * Paged cache: pages of MLA_PAGE_TOKENS tokens; token j of request b lives
 * in page block_table[b][j / 64] at row j % 64.
 *   BF16 cache: a page is [64][576] BF16 (1152 bytes a token).
 *   FP8 cache (FlashMLA's layout, 656 bytes a token): 512 E4M3 bytes of the
 *     NoPE part, then 4 FP32 scales (scale i multiplies elements
 *     128 i .. 128 i + 127), then the 64 rope elements in BF16.
 *
 * Sparse mode (DSA): instead of all visible tokens, each query token attends
 * to the positions listed in indices[b][i][0..topk) (-1 entries and
 * positions outside 0 .. L - t + i are skipped).
 */
#ifndef K3_KERNELS_MLA_COMMON_H
#define K3_KERNELS_MLA_COMMON_H

#include <stdint.h>

#define MLA_LATENT 512
#define MLA_ROPE 64
#define MLA_DIM (MLA_LATENT + MLA_ROPE)
#define MLA_PAGE_TOKENS 64
#define MLA_MAX_QTOKENS 65536
#define MLA_MAX_HEADS 128
/* Materialized prefill (mla_prefill.h): per-head dims after the kv_b expansion. */
#define MLA_QK_NOPE 128                      /* NoPE query/key columns a head */
#define MLA_QK_HEAD (MLA_QK_NOPE + MLA_ROPE) /* 192: with the shared rope columns */
#define MLA_V_HEAD 128                       /* value columns a head */
#define MLA_PREFILL_MAX_TOKENS (1 << 22)     /* P + T a sequence */
/* FP8 layout: quantization tile, bytes of a token and offsets inside it. */
#define MLA_FP8_TILE 128
#define MLA_FP8_SCALES (MLA_LATENT / MLA_FP8_TILE)
#define MLA_FP8_SCALE_OFFSET MLA_LATENT
#define MLA_FP8_ROPE_OFFSET (MLA_LATENT + 4 * MLA_FP8_SCALES)
#define MLA_FP8_TOKEN_BYTES (MLA_FP8_ROPE_OFFSET + 2 * MLA_ROPE) /* 656 */
#define MLA_BF16_TOKEN_BYTES (2 * MLA_DIM)                      /* 1152 */

enum mla_kv {
	MLA_KV_BF16 = 0,
	MLA_KV_FP8 = 1,
};

#endif
