/* SPDX-License-Identifier: MIT */
/*
 * KDA context parallelism (KCP), float64 CPU reference (issue 20). A long
 * sequence is cut into R consecutive segments, one per rank. The recurrence
 * (kda_common.h) is affine in the state,
 *
 *   S_t = A_t S_(t-1) + B_t,   A_t = (I - beta_t k_t k_t^T) Diag(alpha_t),
 *
 * so over a segment S_end = P S_in + Z, with P = A_last .. A_first (K x K)
 * and Z the segment's state from a zero start; and each output
 * o_t = S_t^T q_t = o_t(zero start) + S_in^T (P_t^T q_t), P_t the product up
 * to token t. Both P and the "effective queries" P_t^T q_t come out of the
 * prefill itself, run with v = 0 from an identity initial state (possible
 * because K = V): its final state is P (stored transposed, like any state)
 * and its outputs are P_t^T q_t. A rank then needs, after its two passes,
 * only the states and transitions of the segments before it: one fixed-size
 * all-gather (H x (K x K + V x K) values per rank, independent of the
 * length), an ordered scan, and a fix-up of its outputs.
 *
 * Layouts as everywhere in kernels/kda: states [H][V][K] (S^T per head);
 * the transition as the identity-start pass leaves it, M = P^T, [H][K][K].
 * In these stored layouts the scan is a plain product per head:
 *   S_in(0) = 0,  S_in(r + 1) = S_in(r) M_r + Z_r   ([V][K] x [K][K]),
 * and the fix-up o[t][h][v] += sum_k S_in[h][v][k] qeff[t][h][k].
 *
 * Library code: nothing is printed; functions return 0, -EINVAL for bad
 * shapes, or -ENOMEM.
 */
#ifndef K3_KERNELS_KDA_KCP_REF_H
#define K3_KERNELS_KDA_KCP_REF_H

#include <stdint.h>

#include "kda_ref.h"

/* One scan step per head: s_out = s_in M + z (s_in may be NULL: zeros; s_out
 * may equal z, not s_in). s_in, z, s_out: [H][V][K]; m: [H][K][K]. */
int kda_kcp_ref_scan_step(int heads, int dk, int dv, const double *s_in, const double *m,
			  const double *z, double *s_out);

/* The fix-up of `tokens` outputs: out[t][h][v] += sum_k s_in[h][v][k] qeff[t][h][k].
 * s_in: [H][V][K]; qeff: [T][H][K]; out: [T][H][V]. */
int kda_kcp_ref_fixup(int64_t tokens, int heads, int dk, int dv, const double *s_in,
		      const double *qeff, double *out);

/* The whole of KCP for ONE sequence (p->n_seqs == 1, p->dk == p->dv) cut at
 * seg_start[0] = 0 < seg_start[1] < .. < seg_start[n_seg] = T: each segment's
 * zero-start pass and identity-start pass (with `chunk` > 0 the chunked form
 * of kda_ref, else the sequential one), the scan, the fix-ups. Writes p->out
 * and p->final_state (if non-NULL); p->initial_state must be NULL (a prefix
 * state would be one more segment before the first). */
int kda_kcp_ref_prefill(const struct kda_ref_prefill *p, int n_seg, const int64_t *seg_start, int chunk);

#endif
