/* SPDX-License-Identifier: MIT */
/*
 * KDA chunked prefill (forward), CUDA, K = V = 128, 16-token chunks, packed
 * variable-length sequences. The function is kda_ref_prefill_*() (see
 * kda_ref.h): q and k L2-normalized in the op, g = -5 sigmoid(g_raw),
 * beta = sigmoid(beta_raw), initial and final state [.., H, V, K].
 *
 * Two kernels, as the seed describes FlashKDA's:
 *  1. intra-chunk, token-parallel (one CTA per chunk and head): gates,
 *     norms, the chunk's decays, the 16x16 UT transform (I + A)^-1 and the
 *     per-chunk operands of the recurrence, written to `workspace`;
 *  2. recurrent, head-parallel (one CTA per sequence, head and slice of V
 *     rows): the state in FP32 registers, three BF16 tensor-core products
 *     per chunk, chunk operands streamed ahead by the bulk copy engine.
 * The second either starts when the first has finished (serial) or runs beside it
 * (overlapped) on a side stream of higher priority, waiting on a ready flag per record
 * (kda_prefill.cu: wait_ready()). K3_KDA_PREFILL=serial | overlap (read per call) forces
 * one; =auto or unset takes the overlapped path where it won on the H200 (overlap_by_default()
 * in kda_prefill.cu: one sequence of >= 4K tokens at 96 heads; T = 16K: 1.82-1.92 ms
 * against 2.17-2.32 serial on 2026-12-02; the simulator costs the pair since 2026-12-02r,
 * prefill_config() gives the default's history). Its safety argument: the recurrent CTAs
 * spin on the intra kernel's progress, which the host's resource check guarantees within
 * this process, not against other work holding the SMs; a wait traps after 10 s). The
 * overlapped path falls back to the serial one where the recurrent CTAs could fill every
 * SM, past 65535 chunks or while `stream` is being captured. Same kernels' arithmetic: the two paths' results
 * are equal bit for bit (a state row's recurrence does not depend on the CTA width or
 * stage count either). K3_KDA_INTRA, K3_KDA_RECUR (the pair kernels; split: the split records,
 * opt-in, not bit for bit), K3_KDA_RECUR_STAGES, K3_KDA_RECUR_WARPS and K3_KDA_FLAG_WAIT
 * override the per-path defaults (A/B); a value of any K3_KDA_* knob not among
 * those kda_prefill.cu lists makes the call fail with -EINVAL (and a message on stderr).
 */
#ifndef K3_KERNELS_KDA_PREFILL_H
#define K3_KERNELS_KDA_PREFILL_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "kda_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* All pointers are device memory; BF16 as uint16_t bit patterns. */
struct kda_prefill_args {
	int n_seqs;                 /* N >= 1 sequences */
	int heads;                  /* H >= 1 */
	int64_t total_tokens;       /* T = cu_seqlens[N] (rows of q, k, v, out), < 2^31 */
	const int32_t *cu_seqlens;  /* [N + 1] token offsets: 0 = cu[0] <= cu[1] <= .. = T */
	enum kda_dtype state_dtype; /* KDA_F32 or KDA_BF16, initial and final state */
	float scale;                /* q scale after the L2 norm, usually 128^-1/2 */
	const uint16_t *q;          /* [T][H][128] after ShortConv + SiLU */
	const uint16_t *k;          /* [T][H][128] */
	const uint16_t *v;          /* [T][H][128] */
	const uint16_t *g_raw;      /* [T][H][128] */
	const uint16_t *beta_raw;   /* [T][H] */
	const int32_t *state_slot;  /* [N] slot of each sequence in the state pools, or NULL: slot i */
	const void *initial_state;  /* pool [slots][H][128][128], or NULL: zeros */
	void *final_state;          /* pool [slots][H][128][128], or NULL; may equal initial_state */
	uint16_t *out;              /* [T][H][128], o_t = S_t^T q_t (before the output norm) */
	void *workspace;            /* kda_prefill_workspace_bytes() bytes, 16-byte aligned */
	cudaEvent_t split_event;    /* if non-NULL, recorded between the two kernels (bench hook) */
};

/* Device workspace, in bytes, for N sequences of T tokens in all, H heads:
 * about 17 KiB per (chunk, head), i.e. 4.27x the bytes of q (the records and
 * a 4-byte ready flag each), and 8 bytes per chunk (the chunk table). */
size_t kda_prefill_workspace_bytes(int n_seqs, int heads, int64_t total_tokens);

/* Which path kda_prefill(a, stream) would take now (the environment, the shape, the
 * stream's capture state and the device): 1 overlapped, 0 serial, or -EINVAL / -EIO.
 * Launches nothing (bench and tests report it beside their timings). */
int kda_prefill_path(const struct kda_prefill_args *a, cudaStream_t stream);

/* What kda_prefill(a, stream) would run now, in full (bench and tests print it). */
struct kda_prefill_plan {
	int overlap;       /* 1 the overlapped path, 0 serial */
	int recur_warps;   /* state warps a recurrent CTA (16 state rows each) */
	const char *recur; /* the recurrent kernel: "chunk", "pairr", ... (K3_KDA_RECUR's names) */
};

/* Fills *plan as kda_prefill_path() decides; 0, -EINVAL or -EIO. Launches nothing. */
int kda_prefill_plan(const struct kda_prefill_args *a, cudaStream_t stream, struct kda_prefill_plan *plan);

/* Enqueues the prefill on `stream`. Returns 0, -EINVAL (nothing launched),
 * or -EIO when a launch failed (the CUDA error stays readable). */
int kda_prefill(const struct kda_prefill_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
