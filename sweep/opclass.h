#ifndef K3_SWEEP_OPCLASS_H
#define K3_SWEEP_OPCLASS_H

/* Where a step's time goes, by op class: the rows of a simulated phase (sim_phase) grouped into
 * eight classes that compare designs. The class of an op comes from its role (model/ops.h: its
 * block, and a few roles by name here; the names below are the roles' display names):
 *   attn_kda     kda.* (projections, ShortConv, chunked recurrence or fused decode, gate, o_proj)
 *                and kcp.* (KDA context parallelism: fixup GEMM and state all-gather)
 *   attn_mla     mla.* (projections, attention over the latent cache, gate, o_proj), cp.* (MLA
 *                context parallelism) and the sparse-attention part of dsa.attn
 *   dsa_indexer  dsa.index_q, dsa.index_k and the indexer-scan part of dsa.attn
 *   moe_experts  moe.* except dispatch/combine: router, top-k, routed experts, shared experts,
 *                latent down/up projections and combine norm
 *   moe_comm     moe.dispatch and moe.combine (EP all-to-alls)
 *   tp_comm      tp.* (attention/FFN all-reduce or reduce-scatter + all-gather, embedding
 *                all-reduce, logits all-gather)
 *   dense_gemm   ffn.* (dense FFN layers) and lm_head
 *   other        norms, Block AttnRes, residual adds, embedding lookup, sampling
 * dsa.attn is one op (indexer scan over the whole context + sparse attention over the top-k): its
 * time is split in proportion to the costs of the two parts costed on their own (for prefill, at
 * the dims of the last chunk). */

#include <stdbool.h>

#include "hw/hw.h"
#include "model/ops.h"
#include "sim/sim.h"

enum opclass {
	OPC_ATTN_KDA,
	OPC_ATTN_MLA,
	OPC_DSA_INDEXER,
	OPC_MOE_EXPERTS,
	OPC_MOE_COMM,
	OPC_TP_COMM,
	OPC_DENSE_GEMM,
	OPC_OTHER,
	OPC_COUNT
};

/* "attn_kda", ...: used in column names (decode_attn_kda_s). */
const char *opclass_key(enum opclass c);
/* "attention (KDA)", ...: used in reports. */
const char *opclass_label(enum opclass c);
/* The class of one op (dsa.attn counts as attn_mla here; opclass_phase_times splits it). */
enum opclass opclass_of(const struct op *op);

/* The share of a DSA attention op's time (dsa.attn) that is its indexer scan, in [0, 1]. */
double opclass_dsa_indexer_share(const struct hw *hw, const struct op *op, bool cuda_graph);

/* Seconds of phase ph by class (out_s[c], summed over its rows); `cuda_graph` is the launch mode
 * the phase was costed with (decode steps: the scenario's option; prefill: false). */
void opclass_phase_times(const struct hw *hw, const struct sim_phase *ph, bool cuda_graph,
                         double out_s[OPC_COUNT]);

#endif
