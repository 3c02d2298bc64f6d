/* SPDX-License-Identifier: MIT */
/*
 * KDA speculative verify with replay (CUDA), K = V = 128.
 *
 * A speculative step of B requests keeps only the projected inputs of its
 * draft window (the per-token q|k|v projections and gates), never per-token
 * states. One launch does, per (request, head), with the state read once:
 *
 *  1. replay: the first n_accept[b] tokens of the previous window (the
 *     accepted prefix, bonus token included if the caller puts it there) run
 *     through the recurrence and ShortConv; state and conv state are written
 *     back in place, exactly as sequential decoding would leave them;
 *  2. verify: the first n_draft[b] tokens of the new window run on from that
 *     state as if all were accepted, writing their outputs; the state is
 *     not written.
 *
 * Either window may be absent (x == NULL): replay only, or verify only. The
 * per-token function is kda_decode()'s (kda_ref_verify / kda_ref_replay).
 */
#ifndef K3_KERNELS_KDA_VERIFY_H
#define K3_KERNELS_KDA_VERIFY_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "kda_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A window of up to W tokens per request; device memory, BF16 bit patterns,
 * C = 3 * H * 128 channels as in kda_decode.h. */
struct kda_window {
	const uint16_t *x;        /* [B][W][C] projections before ShortConv */
	const uint16_t *g_raw;    /* [B][W][H][128] */
	const uint16_t *beta_raw; /* [B][W][H] */
	const uint16_t *gate_raw; /* [B][W][H][128] (unused for the replay window) */
	const int32_t *n_tokens;  /* [B] tokens used per request, 0..W */
};

struct kda_verify_args {
	int batch;                  /* B >= 1 */
	int heads;                  /* H >= 1 */
	int window;                 /* W, 1..KDA_MAX_WINDOW, capacity of both windows */
	enum kda_dtype state_dtype; /* KDA_F32 or KDA_BF16 */
	float scale;                /* q scale after the L2 norm */
	float norm_eps;             /* RMSNorm epsilon */
	const uint16_t *conv_w;     /* [C][4] */
	const uint16_t *norm_w;     /* [128] */
	const int32_t *slot;        /* [B] state slot of each request; distinct within a call */
	void *state;                /* [slots][H][128][128] of state_dtype */
	uint16_t *conv_state;       /* [slots][3][C] */
	struct kda_window replay;   /* accepted prefix of the previous window, or x == NULL */
	struct kda_window draft;    /* drafts to verify, or x == NULL */
	uint16_t *out;              /* [B][W][H][128] outputs of the draft tokens */
};

/* Enqueues replay then verify on `stream`. Returns 0, -EINVAL, or -EIO. */
int kda_verify_replay(const struct kda_verify_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
