/* SPDX-License-Identifier: MIT */
/*
 * Float64 CPU references of the LatentMoE pieces (see moe_common.h for the
 * function, the layouts and the grouping) and of the GEMM op the CUDA code
 * runs them with (k3_gemm.h). Plain C; nothing is printed. Functions
 * returning int return 0, -EINVAL (bad shapes or options) or -ENOMEM.
 */
#ifndef K3_KERNELS_MOE_REF_H
#define K3_KERNELS_MOE_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "moe_common.h"

double moe_ref_situ_glu(double g, double u, double beta_gate, double beta_up);

/* Fused column of output j's gate (is_up = 0) or up (1) row in an interleaved w13. */
int64_t moe_glu_column(int64_t j, int is_up);

/* Router: ids [T][K] (by score + bias, descending; ties to the lower index),
 * weights [T][K] = score / sum of the K scores * scaling. */
int moe_ref_route(int tokens, int experts, int topk, const double *logits, const double *bias, double scaling,
		  int32_t *ids, double *weights);

/* Weights of given choices ids [T][K]: score / sum of the K scores * scaling. */
int moe_ref_route_weights(int tokens, int experts, int topk, const double *logits, const int32_t *ids,
			  double scaling, double *weights);

/* Grouping of ids [T][K] by expert (moe_common.h). Arrays sized as noted. */
struct moe_ref_groups {
	int32_t *off;       /* [E + 1] */
	int32_t *tile_off;  /* [E + 1] */
	int32_t *touched;   /* [E], the first n_touched entries: experts with rows, ascending */
	int32_t n_touched;
	int32_t *row_token; /* [T K] */
	int32_t *row_of;    /* [T K] */
};
int moe_ref_group(int tokens, int experts, int topk, const int32_t *ids, int tile_rows, struct moe_ref_groups *g);

/* y[M][N] = x[M][K] W^T, W [N][K]. */
void moe_ref_linear(int64_t M, int64_t N, int64_t K, const double *x, const double *w, double *y);

/* y[M][N] = x / sqrt(mean x^2 + eps) * w. */
void moe_ref_rmsnorm(int64_t M, int64_t N, const double *x, const double *w, double eps, double *y);

/* W13 [2F][K] from W1, W3 [F][K] (interleaved in blocks of MOE_GLU_BLOCK). */
void moe_ref_interleave_w13(int64_t F, int64_t K, const double *w1, const double *w3, double *w13);

/* The GEMM op: dense (n_groups == 0: rows [0, rows), weights w) or grouped
 * (group g: rows [off[g], off[g+1]), weights w + g N K); A row of row r is
 * a_index ? a_index[r] : r. Writes the epilogue's outputs for every row. */
struct moe_ref_gemm {
	int64_t rows, N, K;
	int n_groups;
	const int32_t *off;      /* [n_groups + 1] or NULL */
	const int32_t *a_index;  /* [rows] or NULL */
	const int32_t *out_index; /* [rows] output row of each row, or NULL: r */
	const double *a;         /* [*][K] */
	bool a_mxfp8;            /* A rows quantized to MXFP8 first (k3_mxfp8_quantize(); K a multiple of 32),
				    as the gemv path with MXFP8 activations reads them */
	const double *w;         /* [max(1, n_groups)][N][K] */
	enum k3_epilogue epi;
	int64_t n_split;         /* SPLIT */
	double beta_gate, beta_up; /* GLU */
	const double *row_scale; /* SCALE: [rows] */
	const double *addend;    /* ADD, GATE: [out rows][N] */
	double *out;             /* [rows][N] (GLU: [rows][N / 2]; SPLIT: [rows][N - n_split]) */
	double *out_f32;         /* SPLIT: [rows][n_split] */
};
int moe_ref_gemm(const struct moe_ref_gemm *p);

/* One LatentMoE layer, composed from the pieces above. With round_bf16 the
 * intermediates the GPU stores in BF16 are rounded the same way (latent,
 * expert hidden, weighted expert outputs, normed latent, shared hidden and
 * shared output) and logits to FP32.
 * With e4m3_act the routed experts' activations are quantized as the GPU's
 * expert_act K3_A_E4M3_ROW path (moe_layer.h) quantizes them: each latent row
 * (after round_bf16's rounding) by k3_e4m3_row_quantize() (the device's
 * quantizer bit for bit) and taken as its E4M3 values times the row's FP32
 * scale; each expert hidden value h as E4M3 of e4m3_glu_mul x h, then divided
 * by e4m3_glu_mul (the GPU's out_e4m3; not rounded to BF16). The weights are
 * the caller's: for the GPU's FP8-word layout the MXFP4 values
 * (k3_wgf8_element() equals k3_mxfp4_element() where k3_gemm_repack_wgf8()
 * returned 0). What the reference cannot model: the GPU's E4M3 MMAs
 * accumulate in Hopper's FP8 accumulator (~14 bits, not FP32-exact), and an
 * h whose value sits near an E4M3 rounding boundary can round to the other
 * side there; a comparison's tolerance has to absorb both. */
struct moe_ref_layer {
	int tokens, hidden, latent, experts, topk, inter, shared_inter;
	double scaling, eps, beta_gate, beta_up;
	bool round_bf16;
	bool e4m3_act;               /* the routed experts' inputs quantized to E4M3 as above */
	double e4m3_glu_mul;         /* e4m3_act: m of h's E4M3 form, k3_gemm_glu_e4m3_mul() of the caps
					(K3's 4 and 25: 4); positive and finite */
	const double *x;             /* [T][hidden] */
	const double *w_router_down; /* [E + latent][hidden] */
	const double *bias;          /* [E] */
	const double *w13;           /* [E][2 inter][latent], interleaved */
	const double *w2;            /* [E][latent][inter] */
	const double *norm_w;        /* [latent] */
	const double *w_up;          /* [hidden][latent] */
	const double *ws13;          /* [2 shared_inter][hidden] interleaved, or NULL: no shared MLP */
	const double *ws2;           /* [hidden][shared_inter] */
	const double *logits_in;     /* NULL, or [T][E]: route by these (e.g. the GPU's FP32 logits) */
	const int32_t *ids_in;       /* NULL, or [T][K]: these experts (weights still from the logits) */
	double *logits;              /* [T][E] computed logits, or NULL */
	int32_t *ids;                /* [T][K] chosen experts, or NULL */
	double *out;                 /* [T][hidden] */
};
int moe_ref_layer(const struct moe_ref_layer *p);

#endif
