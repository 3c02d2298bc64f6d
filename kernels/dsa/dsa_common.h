/* SPDX-License-Identifier: MIT */
/*
 * DeepSeek-V3.2 sparse attention (DSA) decode, the counterfactual `k3-dsa`
 * design: the lightning indexer picks the top-k cached tokens of each
 * request, then MLA decode runs over those only (mla_decode() in sparse
 * mode). Conventions shared by the float64 reference (dsa_ref.h) and the
 * CUDA entry point (dsa_index.h).
 *
 * Indexer score of cached token j for a request's query (decode: one token,
 * which sees every cached token 0..L-1), DeepSeek's fp8_index:
 *
 *   score_j = k_scale_j * sum_h w_h * relu(q_h . k_j),
 *
 * q_h (h < 64 heads) and k_j 128-element E4M3 vectors, k_scale_j the
 * key's FP32 quantization scale, w_h the head weights (FP32; the query's
 * per-head FP8 scale and any normalization folded in by the caller).
 *
 * Key cache: pages of DSA_PAGE_TOKENS tokens, page p holding the 64 tokens'
 * 128-byte keys, then their 64 FP32 scales (8448 bytes a page, DeepGEMM's
 * paged layout); token j of request b in page block_table[b][j / 64].
 *
 * Top-k: the DSA_TOPK (2048) highest scores, ties to the lower position,
 * listed in ascending position; with L <= k, positions 0..L-1 then -1.
 */
#ifndef K3_KERNELS_DSA_COMMON_H
#define K3_KERNELS_DSA_COMMON_H

#define DSA_INDEX_HEADS 64
#define DSA_INDEX_DIM 128
#define DSA_TOPK 2048
#define DSA_PAGE_TOKENS 64
#define DSA_PAGE_BYTES (DSA_PAGE_TOKENS * (DSA_INDEX_DIM + 4))
#define DSA_MAX_TOPK 4096

#endif
