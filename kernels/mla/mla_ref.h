/* SPDX-License-Identifier: MIT */
/*
 * Float64 CPU reference of absorbed MLA decode over a paged latent cache
 * (see mla_common.h for the function, the layouts and the causal rule), and
 * the FP8 cache encoder. Plain C, built with or without CUDA; nothing is
 * printed. Functions return 0, -EINVAL (bad shapes, pages or indices) or
 * -ENOMEM.
 */
#ifndef K3_KERNELS_MLA_REF_H
#define K3_KERNELS_MLA_REF_H

#include <stddef.h>
#include <stdint.h>

#include "mla_common.h"

struct mla_ref_decode {
	int batch;                  /* B >= 1 */
	int heads;                  /* H >= 1 */
	int qtokens;                /* t, 1..MLA_MAX_QTOKENS */
	enum mla_kv kv;             /* cache format */
	double scale;               /* softmax scale (K3: 192^-1/2) */
	const double *q;            /* [B][t][H][576] absorbed queries */
	const void *cache;          /* pages: [n][64][576] BF16 bits, or [n][64][656] bytes */
	int64_t n_pages;            /* pages in the pool (block table entries are checked) */
	const int32_t *block_table; /* [B][max_pages] */
	int max_pages;              /* row stride of block_table */
	const int32_t *seqlens;     /* [B] cached tokens L_b >= t, the t new ones included */
	const int32_t *indices;     /* NULL (dense), or [B][t][topk] positions (sparse) */
	int topk;                   /* entries per query token in sparse mode */
	double *out;                /* [B][t][H][512] */
	double *lse;                /* [B][t][H] natural log; -INFINITY when nothing is visible */
	/* Optional (NULL: not written), for error bounds of tests: [B][t][H] the largest
	 * scale * sum_e |q_e k_e| over the row's visible tokens (0 when none), and the number
	 * of visible tokens. */
	double *score_abs;
	int32_t *n_visible;
};

int mla_ref_decode(const struct mla_ref_decode *p);

/* Materialized MLA prefill (mla_prefill.h has the function): causal attention of T new
 * tokens (query i at position P + i sees keys 0 .. P + i) per head, keys of 192 columns
 * (the head's 128 NoPE ones and the token's 64 rope ones, shared by all heads), values of
 * 128. N = P + T keys a sequence. */
struct mla_ref_prefill {
	int batch, heads, tokens, prefix; /* B, H, T >= 1; P >= 0 */
	double scale;                     /* softmax scale */
	const double *q;                  /* [B][T][H][192] */
	const double *k_nope;             /* [B][N][H][128] */
	const double *k_rope;             /* [B][N][64] */
	const double *v;                  /* [B][N][H][128] */
	const double *gate;               /* NULL, or [B][T][H][128]: out times sigmoid(gate) */
	double *out;                      /* [B][T][H][128] */
	double *lse;                      /* [B][T][H] natural log (before the gate) */
	double *score_abs;                /* optional: [B][T][H] the largest scale sum_e |q_e k_e| */
};

int mla_ref_prefill(const struct mla_ref_prefill *p);

/* Element e (0..575) of token `row` (0..63) of a page, dequantized. */
double mla_ref_cache_element(enum mla_kv kv, const void *page, int row, int e);

/* Encodes one token (576 values) into the FP8 layout (656 bytes): per
 * 128-element tile, scale = amax / 448 (1 for a tile of zeros) stored as
 * FP32, elements E4M3 of x / scale; rope rounded to BF16. */
void mla_fp8_encode_token(const double *x, uint8_t *dst);
/* Encodes one token into BF16 (576 elements, 1152 bytes). */
void mla_bf16_encode_token(const double *x, uint16_t *dst);

#endif
