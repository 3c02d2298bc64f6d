/* SPDX-License-Identifier: MIT */
/*
 * Materialized MLA prefill (CUDA): causal attention of T new tokens over P
 * cached ones and themselves, per head, with K and V expanded from the
 * latent cache (DeepSeek-V2/V3 prefill; K3's Gated MLA layers). The
 * expansion itself is a GEMM (the latent rows times kv_b, k3_gemm()); this
 * header holds the two other steps:
 *
 *  - mla_prefill_gather(): the P + T latent rows of each sequence out of the
 *    paged cache (BF16, or FlashMLA's FP8 layout dequantized and rounded to
 *    BF16) into contiguous [n][512] latent and [n][64] k_rope tensors: the
 *    GEMM's input and the key part shared by every head;
 *  - mla_prefill(): the attention. Per head h, query token i (0..T-1, at
 *    position P + i) and key j (0..P + i):
 *      s_ij = scale * (q_nope . k_nope_j + q_rope . k_rope_j),
 *      out_i = sum_j exp(s_ij - lse_i) v_j,   lse_i = log sum_j exp(s_ij),
 *    q: 192 columns per head (128 NoPE, 64 rope), k_nope and v: 128 per head
 *    (the kv_b expansion), k_rope: 64 per token shared by all heads (MLA's
 *    decoupled key; K3 is NoPE, so nothing is rotated). Optionally times
 *    sigmoid(gate) (Gated MLA's output gate, fused). float64 reference:
 *    mla_ref_prefill().
 *
 * Flash-attention on BF16 tensor cores: one CTA per (128 query rows, head,
 * sequence), the last row blocks first (they carry the most keys); warps of
 * 16 rows; K and V tiles of 64 keys double-buffered in shared memory through
 * cp.async; QK^T on wgmma (a warpgroup's 64 rows at once; sm_90a builds on
 * compute capability 9.0) or mma.sync m16n8k16 (any sm_80+ GPU), PV on
 * mma.sync with P straight from the score registers; the online softmax in
 * FP32 registers, P rounded to BF16 for the PV product; FP32 accumulation.
 * The query block's rows are independent: T need not be a multiple of 128.
 */
#ifndef K3_KERNELS_MLA_PREFILL_H
#define K3_KERNELS_MLA_PREFILL_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mla_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* All pointers device memory, 16-byte aligned; BF16 as uint16_t bits. N = P + T keys a
 * sequence. Key element (b, j, h, e) of K_nope is k_nope[(b N + j) ld_kv + h head_stride + e]
 * (e < 128), of V the same at v (so both may be views of one kv_b output [N][H][256]). */
struct mla_prefill_args {
	int batch;              /* B >= 1 sequences of the same T and P */
	int heads;              /* H, 1..MLA_MAX_HEADS */
	int tokens;             /* T >= 1 new tokens a sequence */
	int prefix;             /* P >= 0 cached tokens before them; P + T <= MLA_PREFILL_MAX_TOKENS */
	float scale;            /* softmax scale (K3: 192^-1/2) */
	const uint16_t *q;      /* [B][T][H][192] */
	const uint16_t *k_nope; /* see above */
	const uint16_t *v;      /* see above */
	int64_t ld_kv;          /* elements between keys, a multiple of 8 */
	int64_t head_stride;    /* elements between heads, a multiple of 8 */
	const uint16_t *k_rope; /* [B][N][64] */
	const uint16_t *gate;   /* NULL, or [B][T][H][128]: out *= sigmoid(gate) */
	uint16_t *out;          /* [B][T][H][128] */
	float *lse;             /* NULL, or [B][T][H] natural log of the softmax sum (before the gate) */
};

/* Enqueues the attention on `stream` (capturable in a CUDA graph after one call outside
 * capture). Returns 0, -EINVAL (nothing launched: bad shapes, misaligned pointers or
 * strides), or -EIO when the launch failed (the CUDA error stays readable). */
int mla_prefill(const struct mla_prefill_args *a, cudaStream_t stream);

/* Query rows a CTA (64 or 128): MLA_PREFILL_DEFAULT_BM, or the environment variable
 * K3_MLA_PREFILL_BM=64|128 (read at every call; for measuring the two side by side). */
#define MLA_PREFILL_DEFAULT_BM 128
int mla_prefill_block_rows(void);

/* Whether QK^T runs on wgmma (sm_90a builds on compute capability 9.0; PV stays on
 * mma.sync): MLA_PREFILL_DEFAULT_WGMMA where available, or K3_MLA_PREFILL_KERNEL=wgmma|mma
 * (read at every call). H200, 2026-12-01, H = 96, T = 16K: wgmma with 128-row blocks 31.6 ms
 * (261 TFLOP/s), mma.sync 36.6 ms (225); 64-row blocks slower on both (38.5, 40.4 ms). */
#define MLA_PREFILL_DEFAULT_WGMMA 1
bool mla_prefill_kernel_wgmma(void);

/* Multiply-adds of the attention (the causal triangle: T (P + (T + 1) / 2) pairs a head and
 * sequence, 192 + 128 MACs each), times 2: FLOPs, as k3sim's mla_prefill op counts them. */
double mla_prefill_flops(int batch, int heads, int tokens, int prefix);

struct mla_gather_args {
	int batch;                  /* B >= 1 */
	int tokens;                 /* N >= 1 rows a sequence: positions 0..N-1 */
	enum mla_kv kv;             /* cache format */
	const void *cache;          /* pages as in mla_common.h */
	const int32_t *block_table; /* [B][max_pages], entries < pages in the pool */
	int max_pages;              /* >= ceil(N / 64) */
	uint16_t *latent;           /* [B][N][512] BF16 */
	uint16_t *k_rope;           /* [B][N][64] BF16 */
};

/* Enqueues the gather; returns 0, -EINVAL (nothing launched) or -EIO. FP8 elements are
 * e4m3 * scale rounded to BF16 (the expansion GEMM takes BF16). */
int mla_prefill_gather(const struct mla_gather_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
