/* SPDX-License-Identifier: MIT */
/*
 * Float64 CPU references of the KDA ops (see kda_common.h for the math and
 * the state layout). They define what the CUDA kernels must compute and are
 * plain C, built with or without CUDA. Library code: nothing is printed.
 *
 * Packed token layout ("varlen"): the tokens of all sequences are stored one
 * after the other; sequence i owns tokens [cu_seqlens[i], cu_seqlens[i+1]).
 * A fixed-length batch of B sequences of T tokens is cu_seqlens = {0, T, .., B*T}.
 *
 * All functions return 0, -EINVAL for bad shapes, or -ENOMEM.
 */
#ifndef K3_KERNELS_KDA_REF_H
#define K3_KERNELS_KDA_REF_H

#include <stdint.h>

#include "kda_common.h"

/* Prefill (forward) over packed sequences. q, k, v arrive after ShortConv and
 * SiLU; the op applies the L2 norm, the gate bound and the beta sigmoid. */
struct kda_ref_prefill {
	int n_seqs;                  /* N >= 1 */
	const int64_t *cu_seqlens;   /* [N + 1] token offsets, cu_seqlens[0] == 0, non-decreasing */
	int heads, dk, dv;           /* H, K, V */
	double scale;                /* multiplies q after its L2 norm (usually K^-1/2) */
	const double *q;             /* [T][H][K] */
	const double *k;             /* [T][H][K] */
	const double *v;             /* [T][H][V] */
	const double *g_raw;         /* [T][H][K]  g = -5 * sigmoid(g_raw) */
	const double *beta_raw;      /* [T][H]     beta = sigmoid(beta_raw) */
	const double *initial_state; /* [N][H][V][K], or NULL for zeros */
	double *final_state;         /* [N][H][V][K], or NULL; may equal initial_state */
	double *out;                 /* [T][H][V]  o_t = S_t^T q_t (before the output norm) */
};

/* Token by token: the definition. */
int kda_ref_prefill_sequential(const struct kda_ref_prefill *p);
/* The chunked (WY / UT-transform) form the GPU prefill uses, `chunk` tokens
 * per chunk; equal to the sequential form up to rounding. */
int kda_ref_prefill_chunked(const struct kda_ref_prefill *p, int chunk);
/* The chunked form two chunks at once, with the cross terms between them that the GPU's pair
 * kernel (K3_KDA_RECUR=pair) makes; equal to the chunked form up to rounding. */
int kda_ref_prefill_paired(const struct kda_ref_prefill *p, int chunk);

/* Causal depthwise ShortConv of width 4 with SiLU, over `tokens` tokens of
 * `channels` channels: y[t][c] = silu(sum_i w[c][i] * x[t-3+i][c]), where
 * inputs before token 0 come from conv_state[0..2][c] (oldest first; NULL
 * means zeros). When conv_state is non-NULL it is updated in place to the
 * last three inputs. x, y: [tokens][channels]; w: [channels][4]. */
int kda_ref_short_conv(int tokens, int channels, const double *x, const double *w,
		       double *conv_state, double *y);

/* Head-wise RMSNorm with weight and sigmoid output gate:
 * y[t][h][v] = o[t][h][v] / sqrt(mean_v o[t][h][.]^2 + eps) * norm_w[v]
 *              * sigmoid(gate_raw[t][h][v]).   o, gate_raw, y: [tokens][H][V]. */
int kda_ref_gated_rmsnorm(int tokens, int heads, int dv, const double *o,
			  const double *gate_raw, const double *norm_w, double eps, double *y);

/*
 * Fused decode and speculative verify / replay. Each request b owns a state
 * slot slot[b] in a paged pool. Per token: ShortConv (+ conv state) and SiLU
 * on the projections, L2 norm of q and k, gate, beta, recurrence, gated
 * RMSNorm of the output.
 *
 * Channel layout of a token's projections x (C = H * (2K + V) channels):
 *   q of head h at [h*K, h*K + K), k at [H*K + h*K, ..), v at [2*H*K + h*V, ..).
 */
struct kda_ref_step {
	int batch, heads, dk, dv;    /* B, H, K, V */
	int window;                  /* W: tokens per request in the arrays below (decode: 1) */
	double scale;                /* q scale after the L2 norm */
	double norm_eps;             /* RMSNorm epsilon */
	const double *x;             /* [B][W][C] projections before ShortConv */
	const double *g_raw;         /* [B][W][H][K] */
	const double *beta_raw;      /* [B][W][H] */
	const double *gate_raw;      /* [B][W][H][V] output gate before its sigmoid */
	const double *conv_w;        /* [C][4], tap 3 multiplies the current token */
	const double *norm_w;        /* [V], shared by the heads */
	const int32_t *slot;         /* [B] state slot of each request */
	double *state;               /* pool [slots][H][V][K] */
	double *conv_state;          /* pool [slots][3][C], oldest tap first */
	double *out;                 /* [B][W][H][V] */
};

/* One decode step per request (p->window must be 1): writes out, updates
 * state and conv state of each slot in place. */
int kda_ref_decode(const struct kda_ref_step *p);
/* Verify: for each request, outputs of its first n_draft[b] <= W tokens as
 * if all were accepted; state and conv state are left untouched. */
int kda_ref_verify(const struct kda_ref_step *p, const int32_t *n_draft);
/* Replay: advance state and conv state of each request by its first
 * n_accept[b] <= W tokens (the kept projected inputs); out is not written. */
int kda_ref_replay(const struct kda_ref_step *p, const int32_t *n_accept);

#endif
