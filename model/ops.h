#ifndef K3_MODEL_OPS_H
#define K3_MODEL_OPS_H

/* The ops of one forward step of a model, with shapes, dtypes, FLOPs and bytes.
 *
 * model_build_ops() lists the ops of a phase for the WHOLE model on ONE replica, unsharded: each op
 * stands for `layers` identical layers (layers with the same attention and FFN kinds share their
 * ops) and says how tensor and expert parallelism split it (`split`); sim/ maps it onto GPUs.
 * op_fill() derives FLOPs and bytes from an op's dims and dtypes, so a resized op stays consistent. */

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "util/dtype.h"

enum op_kind {
	OP_GEMM,         /* y[m,n] = x[m,k] W[k,n] */
	OP_GROUPED_GEMM, /* routed experts: m rows over `groups` experts, each W[k,n] */
	OP_ELEMENTWISE,  /* norms, activations, gates, copies: m x n elements streamed once */
	OP_KDA_CHUNK,    /* chunked KDA prefill: b sequences x t tokens x h heads */
	OP_KDA_DECODE,   /* fused KDA decode: b requests x h heads, t tokens each (1; >1 = verify) */
	OP_MLA_PREFILL,  /* attention of t new tokens over ctx prefix + themselves, h heads */
	OP_MLA_DECODE,   /* absorbed latent attention: b requests x h heads over ctx tokens */
	OP_DSA_PREFILL,  /* DSA: indexer over the prefix + sparse attention over top_k tokens */
	OP_DSA_DECODE,   /* DSA decode: indexer scan over ctx + sparse attention over top_k */
	OP_ALLREDUCE,
	OP_ALLGATHER,
	OP_REDUCESCATTER,
	OP_ALLTOALL,
	/* Ops whose work is not m x n elements streamed once, each with the sizes that drive its
	 * cost and a calibration class of its own (hw.h); appended so the kinds above keep their
	 * numbers. */
	OP_ATTNRES,      /* Block AttnRes (+ pre-norm): m tokens x n dim over `sources`, two passes */
	OP_ROUTE,        /* MoE routing: m tokens x n experts, top_k chosen, grouped per expert */
	OP_COMBINE,      /* weighted sum of top_k expert rows per token (+ RMSNorm): m x n out */
	OP_SHORT_CONV,   /* causal depthwise conv + SiLU: m tokens x n channels, k taps */
	OP_QUANT,        /* BF16 -> FP8 row quantizer: m tokens x n width, one scale per k elements
			  * (k = 0: one FP32 scale a row), o_dtype fp8 (FP32 scales) or mxfp8 (E8M0) */
	OP_KIND_COUNT
};

/* How parallelism divides an op (sim/ applies it). */
enum op_split {
	SPLIT_NONE,     /* replicated on every TP rank */
	SPLIT_TP_N,     /* column parallel: n / tp (heads for attention kinds) */
	SPLIT_TP_K,     /* row parallel: k / tp, followed by a reduction */
	SPLIT_EP,       /* routed experts: groups / ep, rows follow the routing */
	SPLIT_COMM,     /* a collective placed by the mapping, not by the model */
};

/* Where an op sits in a layer's data flow (sim/step.h schedules by it): the routed chain
 * (dispatch -> experts -> combine) and the shared experts both start from the MLP prologue and
 * join at the output; everything else is a chain. */
enum op_part {
	OP_PART_PRE,       /* before the layers: embedding */
	OP_PART_ATTN_PREP, /* AttnRes, norm, q/k/v and gate projections */
	OP_PART_ATTN_CORE, /* attention / KDA kernels, output projection, TP and CP collectives */
	OP_PART_MLP_PREP,  /* AttnRes, norm, router (and the latent down projection) */
	OP_PART_DENSE,     /* dense FFN */
	OP_PART_DISPATCH,  /* EP dispatch */
	OP_PART_SHARED,    /* shared experts */
	OP_PART_EXPERTS,   /* routed experts */
	OP_PART_COMBINE,   /* EP combine */
	OP_PART_OUTPUT,    /* combine weighting, up projection, TP all-reduce */
	OP_PART_RESIDUAL,  /* the residual (or AttnRes partial-sum) update closing the layer */
	OP_PART_POST,      /* after the layers: final norm, LM head, sampling */
	OP_PART_COUNT
};
const char *op_part_name(enum op_part p);

/* The block of the model an op belongs to (the prefix of its name), for breakdowns. */
enum op_block {
	OP_BLOCK_OTHER, /* embedding, norms, AttnRes, residual, LM head, sampling */
	OP_BLOCK_KDA,
	OP_BLOCK_KCP,   /* KDA context parallelism */
	OP_BLOCK_MLA,
	OP_BLOCK_DSA,   /* the DSA indexer and sparse attention */
	OP_BLOCK_CP,    /* MLA context parallelism */
	OP_BLOCK_FFN,   /* dense FFN */
	OP_BLOCK_MOE,   /* the MoE block: router, experts, EP and its tensor-parallel collectives */
	OP_BLOCK_TP,    /* tensor-parallel collectives of attention, FFN, embedding and logits */
};

/* What an op is: one row per op that model_build_ops lists or the mapping adds (sim/step.c: the
 * collectives and KDA context parallelism), set where the op is created. Everything that treats
 * ops differently reads the role (sim/ schedules, maps and splits by it, sweep/ classifies by it),
 * never the name, which is for display. Columns: role, name, block, part of the layer, and how
 * tensor and expert parallelism split the op (its time: sim/step.c divides its dims; its weights:
 * model_weight_split sums them by it, so the memory per GPU and the bytes a step reads agree). */
#define OP_ROLES(X)                                                                                 \
	X(EMBED, "embed", OTHER, PRE, SPLIT_TP_N)                                                   \
	X(TP_EMBED_ALLREDUCE, "tp.embed_allreduce", TP, PRE, SPLIT_COMM)                            \
	X(ATTNRES_PRE_ATTN, "attnres.pre_attn", OTHER, ATTN_PREP, SPLIT_NONE)                       \
	X(NORM_ATTN, "norm.attn", OTHER, ATTN_PREP, SPLIT_NONE)                                     \
	X(MLA_QUANT_IN, "mla.quant_in", MLA, ATTN_PREP, SPLIT_NONE)                                 \
	X(MLA_QUANT_Q_B, "mla.quant_q_b", MLA, ATTN_PREP, SPLIT_NONE)                               \
	X(MLA_ROPE, "mla.rope", MLA, ATTN_PREP, SPLIT_TP_N)                                         \
	X(KDA_QKV_PROJ, "kda.qkv_proj", KDA, ATTN_PREP, SPLIT_TP_N)                                 \
	X(KDA_DECAY_A, "kda.decay_a", KDA, ATTN_PREP, SPLIT_NONE)                                   \
	X(KDA_DECAY_B, "kda.decay_b", KDA, ATTN_PREP, SPLIT_TP_N)                                   \
	X(KDA_BETA_PROJ, "kda.beta_proj", KDA, ATTN_PREP, SPLIT_TP_N)                               \
	X(KDA_GATE_PROJ, "kda.gate_proj", KDA, ATTN_PREP, SPLIT_TP_N)                               \
	X(KDA_GATE_A, "kda.gate_a", KDA, ATTN_PREP, SPLIT_NONE)                                     \
	X(KDA_GATE_B, "kda.gate_b", KDA, ATTN_PREP, SPLIT_TP_N)                                     \
	X(KDA_CONV_NORM, "kda.conv_norm", KDA, ATTN_PREP, SPLIT_TP_N)                               \
	X(MLA_Q_A, "mla.q_a", MLA, ATTN_PREP, SPLIT_NONE)                                           \
	X(MLA_Q_B, "mla.q_b", MLA, ATTN_PREP, SPLIT_TP_N)                                           \
	X(MLA_Q_PROJ, "mla.q_proj", MLA, ATTN_PREP, SPLIT_TP_N)                                     \
	X(MLA_KV_A, "mla.kv_a", MLA, ATTN_PREP, SPLIT_NONE)                                         \
	X(DSA_INDEX_Q, "dsa.index_q", DSA, ATTN_PREP, SPLIT_NONE)                                   \
	X(DSA_INDEX_K, "dsa.index_k", DSA, ATTN_PREP, SPLIT_NONE)                                   \
	X(MLA_Q_ABSORB, "mla.q_absorb", MLA, ATTN_PREP, SPLIT_TP_N)                                 \
	X(MLA_GATE_PROJ, "mla.gate_proj", MLA, ATTN_PREP, SPLIT_TP_N)                               \
	X(KDA_CHUNK, "kda.chunk", KDA, ATTN_CORE, SPLIT_TP_N)                                       \
	X(KCP_TRANSITION, "kcp.transition", KCP, ATTN_CORE, SPLIT_TP_N)                             \
	X(KCP_STATE_ALLGATHER, "kcp.state_allgather", KCP, ATTN_CORE, SPLIT_COMM)                   \
	X(KCP_SCAN, "kcp.scan", KCP, ATTN_CORE, SPLIT_NONE)                                         \
	X(KCP_FIXUP, "kcp.fixup", KCP, ATTN_CORE, SPLIT_NONE)                                       \
	X(KDA_NORM_GATE, "kda.norm_gate", KDA, ATTN_CORE, SPLIT_TP_N)                               \
	X(KDA_DECODE, "kda.decode", KDA, ATTN_CORE, SPLIT_TP_N)                                     \
	X(KDA_O_PROJ, "kda.o_proj", KDA, ATTN_CORE, SPLIT_TP_K)                                     \
	X(MLA_QUANT_KV_B, "mla.quant_kv_b", MLA, ATTN_CORE, SPLIT_NONE)                             \
	X(MLA_KV_B, "mla.kv_b", MLA, ATTN_CORE, SPLIT_TP_N)                                         \
	X(MLA_K_CONCAT, "mla.k_concat", MLA, ATTN_CORE, SPLIT_TP_N)                                 \
	X(CP_MLA_KV_ALLGATHER, "cp.mla_kv_allgather", CP, ATTN_CORE, SPLIT_COMM)                    \
	X(CP_MLA_KV_RING, "cp.mla_kv_ring", CP, ATTN_CORE, SPLIT_COMM)                              \
	X(CP_ATTN_MERGE, "cp.attn_merge", CP, ATTN_CORE, SPLIT_COMM)                                \
	X(MLA_ATTN, "mla.attn", MLA, ATTN_CORE, SPLIT_TP_N)                                         \
	X(DSA_ATTN, "dsa.attn", DSA, ATTN_CORE, SPLIT_TP_N)                                         \
	X(MLA_V_ABSORB, "mla.v_absorb", MLA, ATTN_CORE, SPLIT_TP_N)                                 \
	X(MLA_GATE_MUL, "mla.gate_mul", MLA, ATTN_CORE, SPLIT_TP_N)                                 \
	X(MLA_QUANT_O_PROJ, "mla.quant_o_proj", MLA, ATTN_CORE, SPLIT_TP_N)                         \
	X(MLA_O_PROJ, "mla.o_proj", MLA, ATTN_CORE, SPLIT_TP_K)                                     \
	X(TP_ATTN_ALLREDUCE, "tp.attn_allreduce", TP, ATTN_CORE, SPLIT_COMM)                        \
	X(TP_ATTN_REDUCE_SCATTER, "tp.attn_reduce_scatter", TP, ATTN_CORE, SPLIT_COMM)              \
	X(TP_ATTN_ALL_GATHER, "tp.attn_all_gather", TP, ATTN_CORE, SPLIT_COMM)                      \
	X(ATTNRES_PRE_FFN, "attnres.pre_ffn", OTHER, MLP_PREP, SPLIT_NONE)                          \
	X(NORM_FFN, "norm.ffn", OTHER, MLP_PREP, SPLIT_NONE)                                        \
	X(MOE_ROUTER_DOWN, "moe.router_down", MOE, MLP_PREP, SPLIT_TP_N)                            \
	X(MOE_ROUTER, "moe.router", MOE, MLP_PREP, SPLIT_TP_N)                                      \
	X(MOE_DOWN, "moe.down", MOE, MLP_PREP, SPLIT_TP_N)                                          \
	X(MOE_TOPK, "moe.topk", MOE, MLP_PREP, SPLIT_NONE)                                          \
	X(MOE_QUANT_IN, "moe.quant_in", MOE, MLP_PREP, SPLIT_NONE)                                  \
	X(MOE_DP_GATHER, "moe.dp_gather", MOE, MLP_PREP, SPLIT_COMM)                                \
	X(FFN_QUANT_IN, "ffn.quant_in", FFN, DENSE, SPLIT_NONE)                                     \
	X(FFN_GATE_UP, "ffn.gate_up", FFN, DENSE, SPLIT_TP_N)                                       \
	X(FFN_SITU_GLU, "ffn.situ_glu", FFN, DENSE, SPLIT_TP_N)                                     \
	X(FFN_DOWN, "ffn.down", FFN, DENSE, SPLIT_TP_K)                                             \
	X(MOE_DISPATCH, "moe.dispatch", MOE, DISPATCH, SPLIT_COMM)                                  \
	X(MOE_SHARED_GATE_UP, "moe.shared_gate_up", MOE, SHARED, SPLIT_TP_N)                        \
	X(MOE_SHARED_SITU_GLU, "moe.shared_situ_glu", MOE, SHARED, SPLIT_TP_N)                      \
	X(MOE_SHARED_DOWN, "moe.shared_down", MOE, SHARED, SPLIT_TP_K)                              \
	X(MOE_PERMUTE, "moe.permute", MOE, EXPERTS, SPLIT_EP)                                       \
	X(MOE_EXPERTS_GATE_UP, "moe.experts_gate_up", MOE, EXPERTS, SPLIT_EP)                       \
	X(MOE_SITU_GLU, "moe.situ_glu", MOE, EXPERTS, SPLIT_EP)                                     \
	X(MOE_EXPERTS_DOWN, "moe.experts_down", MOE, EXPERTS, SPLIT_EP)                             \
	X(MOE_UNPERMUTE, "moe.unpermute", MOE, EXPERTS, SPLIT_EP)                                   \
	X(MOE_TP_LATENT_ALLREDUCE, "moe.tp_latent_allreduce", MOE, EXPERTS, SPLIT_COMM)             \
	X(MOE_COMBINE, "moe.combine", MOE, COMBINE, SPLIT_COMM)                                     \
	X(MOE_COMBINE_NORM, "moe.combine_norm", MOE, OUTPUT, SPLIT_NONE)                            \
	X(MOE_UP, "moe.up", MOE, OUTPUT, SPLIT_TP_K)                                                \
	X(TP_FFN_ALLREDUCE, "tp.ffn_allreduce", TP, OUTPUT, SPLIT_COMM)                             \
	X(TP_FFN_REDUCE_SCATTER, "tp.ffn_reduce_scatter", TP, OUTPUT, SPLIT_COMM)                   \
	X(TP_FFN_ALL_GATHER, "tp.ffn_all_gather", TP, OUTPUT, SPLIT_COMM)                           \
	X(MOE_DP_REDUCE, "moe.dp_reduce", MOE, OUTPUT, SPLIT_COMM)                                  \
	X(MOE_DP_REDUCE_SCATTER, "moe.dp_reduce_scatter", MOE, OUTPUT, SPLIT_COMM)                  \
	X(MOE_ATTN_TP_GATHER, "moe.attn_tp_gather", MOE, OUTPUT, SPLIT_COMM)                        \
	X(RESIDUAL_ADD, "residual.add", OTHER, RESIDUAL, SPLIT_NONE)                                \
	X(ATTNRES_FINAL, "attnres.final", OTHER, POST, SPLIT_NONE)                                  \
	X(NORM_FINAL, "norm.final", OTHER, POST, SPLIT_NONE)                                        \
	X(LM_HEAD, "lm_head", OTHER, POST, SPLIT_TP_N)                                              \
	X(TP_LOGITS_GATHER, "tp.logits_gather", TP, POST, SPLIT_COMM)                               \
	X(SAMPLE, "sample", OTHER, POST, SPLIT_TP_N)

enum op_role {
	OP_ROLE_NONE, /* a standalone op (k3sim op, calibration, a ViT encoder): not part of a step */
#define OP_ROLE_ENUM(role, name, block, part, split) OP_ROLE_##role,
	OP_ROLES(OP_ROLE_ENUM)
#undef OP_ROLE_ENUM
	OP_ROLE_COUNT
};

/* The role's columns; "?", OP_BLOCK_OTHER, OP_PART_PRE and SPLIT_NONE for OP_ROLE_NONE or out of range. */
const char *op_role_name(enum op_role r);
enum op_block op_role_block(enum op_role r);
enum op_part op_role_part(enum op_role r);
enum op_split op_role_split(enum op_role r);

/* What a request keeps on the GPUs between steps, and which parallel modes divide it per GPU:
 * the one statement that the memory per GPU (sim_hbm) and the bytes a step's ops read on one GPU
 * (sim/step.c) both follow. Data parallelism divides the requests, never a request's state. */
enum op_state {
	OP_STATE_NONE,
	OP_STATE_KDA,          /* KDA recurrent state (heads x K x V) and its ShortConv state */
	OP_STATE_MLA_LATENT,   /* the MLA latent cache: one for all heads */
	OP_STATE_MLA_PER_HEAD, /* K and V expanded per head (the reference path's generic cache) */
	OP_STATE_DSA_INDEX,    /* the DSA indexer's key cache: one for all heads */
	OP_STATE_COUNT
};
struct op_state_split {
	bool tp; /* divided with the heads over tensor parallelism */
	bool cp; /* divided over context parallelism (tokens of the context sharded) */
};
struct op_state_split op_state_split(enum op_state s);

/* Which collective follows a row-parallel op. */
enum op_sync {
	SYNC_NONE,
	SYNC_TP_ATTN,   /* all-reduce (or reduce-scatter + all-gather) of the attention output */
	SYNC_TP_FFN,    /* the same after the dense FFN or the MoE */
	SYNC_TP_EMBED,  /* all-reduce of the vocab-parallel embedding */
	SYNC_TP_GATHER, /* all-gather of vocab-parallel logits */
};

/* How an EP dispatch or combine travels (sim/ep.h). */
enum op_ep_mode {
	EP_MODE_NONE,        /* not an EP dispatch or combine: a plain all-to-all */
	EP_MODE_NORMAL,      /* DeepEP normal kernels: per-node dedup, NVLink forwarding */
	EP_MODE_LOW_LATENCY, /* DeepEP low-latency kernels: one row per selected expert */
	EP_MODE_ALLTOALL,    /* NCCL all-to-all of one row per EP rank reached */
	EP_MODE_COUNT
};

struct op_ep {
	enum op_ep_mode mode;
	double tokens;        /* tokens each sending GPU sends (fractions: an average over GPUs) */
	double recv_tokens;   /* tokens whose rows each EP rank receives when balanced (the sum of
			       * tokens sent over the EP ranks); rows_ratio scales the busiest's */
	int64_t experts, top_k;
	int64_t row_bytes;    /* one token's payload */
	int64_t node_limit;   /* nodes a token may reach; 0: no limit */
	double rows_ratio;    /* the busiest rank's received rows over the mean (>= 1) */
	int sms;              /* SMs the normal kernels keep */
};

struct op {
	enum op_kind kind;
	enum op_role role;   /* what it is (OP_ROLE_NONE: standalone); never deduce it from the name */
	const char *name;    /* for display only: op_role_name(role), or NULL / a label for standalone ops */
	enum attn_kind attn; /* the layer group the op belongs to (informative) */
	int64_t layers;      /* identical instances per step (one per layer it stands for) */
	int layer_group;     /* the layer group it belongs to (model_layer_groups), -1 outside the
			      * layers (embedding, final norm, LM head, sampling) */
	enum op_split split; /* op_role_split(role) for ops of a step */
	enum op_sync sync;   /* collective after this op, when sharded */

	/* dims (which ones matter depends on kind) */
	int64_t m, n, k;     /* GEMM; ELEMENTWISE: m x n elements; ATTNRES, ROUTE, COMBINE, SHORT_CONV,
			      * QUANT: m tokens, n dim / experts / width / channels; SHORT_CONV: k taps;
			      * QUANT: k elements per scale (0: one a row) */
	int64_t groups;      /* GROUPED_GEMM: experts held; groups_touched: experts that get rows */
	double groups_touched;
	double expert_cv;    /* GROUPED_GEMM: the rows per touched expert's coefficient of variation
			      * (standard deviation over mean, at most OP_EXPERT_CV_MAX); 0: a uniform
			      * router's (Poisson, 1/sqrt(mean)) */
	int64_t b, t, h;     /* attention: sequences, tokens per sequence, heads */
	int64_t ctx;         /* attention: tokens already in context (prefix) */
	int64_t dk, dv;      /* KDA: key/value head dims; MLA: qk dim, v dim (prefill) or latent dims (decode) */
	int64_t top_k;       /* DSA: tokens selected per query; ROUTE, COMBINE: experts per token */
	int64_t index_heads, index_dim; /* DSA indexer */
	int64_t chunk;       /* KDA chunk length in tokens */
	int64_t ranks;       /* collectives */
	int64_t comm_bytes;  /* collectives: buffer per rank, as nccl-tests counts it */
	struct op_ep ep;     /* EP dispatch / combine: how it travels (mode NONE otherwise) */
	double in_tensors, out_tensors, flops_per_element; /* ELEMENTWISE; ATTNRES: in_tensors are the
			      * full-width inputs besides the sources (the partial sum's delta), out_tensors
			      * its outputs (the input of the sublayer, the updated partial sum) */
	double sources;      /* ATTNRES: the tensors the softmax over depth mixes (an average over a
			      * layer group's layers may be fractional) */
	int64_t extra_state_bytes; /* KDA decode: ShortConv state read+write */
	bool cold;           /* inputs and outputs go to HBM even when small enough for L2: a
			      * standalone copy, or a benchmark that rotates its buffers */

	enum dtype w_dtype;  /* weights */
	enum dtype a_dtype;  /* activations in, and math precision of the tensor-core work */
	enum dtype o_dtype;  /* activations out */
	enum dtype s_dtype;  /* KDA state / MLA cache */
	int64_t cache_bytes_per_token; /* MLA / DSA: bytes of one cached token of one layer */
	enum op_state cache;           /* what the op's state or cache bytes are (op_state_split) */
	int64_t index_bytes_per_token; /* DSA: indexer key bytes per token per layer */

	/* derived by op_fill(), per instance */
	double flops;        /* all of it, at a_dtype's rate except flops_lowp */
	double flops_lowp;   /* the part that runs at FP8 (DSA indexer) */
	int64_t bytes_weight, bytes_act_in, bytes_act_out;
	int64_t bytes_kv_read, bytes_kv_write, bytes_state_read, bytes_state_write;
	int64_t serial_steps; /* KDA chunk: dependent chunk steps per (sequence, head) */
	bool too_large;       /* a size product passed OP_ELEMENTS_MAX: the bytes above are not valid */
};

/* The largest element (or byte) count op_fill computes in 64-bit integers: 2^56, so that a
 * byte count (at most 4 bytes per element) and the sum of an op's seven byte counts stay far
 * from INT64_MAX. */
#define OP_ELEMENTS_MAX (INT64_C(1) << 56)
/* The largest coefficient of variation of rows per expert a grouped GEMM may carry. */
#define OP_EXPERT_CV_MAX 16.0

/* What activations of type `act` are stored in between ops (FP8 ones: BF16). */
enum dtype model_storage_dtype(enum dtype act);

/* FLOPs and bytes of op from its dims and dtypes. */
void op_fill(struct op *op);
/* OP_QUANT: the scale bytes of one row: ceil(n / k) scales (one where k is 0), 4 bytes each
 * (FP32) or 1 for o_dtype mxfp8 (E8M0). */
int64_t op_quant_scale_bytes(const struct op *op);
static inline int64_t op_bytes(const struct op *op)
{
	return op->bytes_weight + op->bytes_act_in + op->bytes_act_out + op->bytes_kv_read +
	       op->bytes_kv_write + op->bytes_state_read + op->bytes_state_write;
}
const char *op_kind_name(enum op_kind k);
int op_kind_parse(const char *s, enum op_kind *out);
bool op_is_comm(enum op_kind k);

enum phase_kind { PHASE_PREFILL, PHASE_DECODE };

struct phase {
	enum phase_kind kind;
	int64_t batch;    /* sequences in the step */
	int64_t tokens;   /* new tokens per sequence: a prefill chunk, or 1 for decode */
	int64_t context;  /* tokens already cached per sequence before this step */
	enum dtype kda_state;  /* fp32 or bf16 */
	enum dtype mla_cache;  /* bf16 or fp8 (FlashMLA layout) */
	enum dtype act;        /* activations (bf16; fp8: dense GEMM inputs in FP8, the rest BF16) */
	enum dtype expert_act; /* routed-expert inputs: mxfp8 (K3's QAT recipe), fp8 or bf16 */
	enum dtype dispatch;   /* EP dispatch payload: fp8 (+ scales) or bf16 */
	int64_t kda_chunk;     /* KDA kernel chunk, tokens (16) */
	/* Decode only: a chunk of one prompt's prefill riding in the step (chunked prefill beside
	 * decode): its tokens go through every token-wise op with the decode tokens, its attention
	 * through the prefill kernels after a prefix of mixed_context tokens. 0: pure decode. */
	int64_t mixed_tokens, mixed_context;
	/* Attention DP groups with work in this step, each holding batch / dp_groups sequences (and
	 * mixed_tokens): a serving step whose other groups are idle. 0: the batch spread over every
	 * group (a batch below dp: one sequence per group, the rest idle). */
	int64_t dp_groups;
	/* The Hugging Face reference implementation (modeling_kimi_linear.py) instead of the
	 * production kernels: MLA K/V expanded per head into a generic BF16 cache and attended
	 * without absorption; KDA decode as ShortConv, norms and gate kernels around the recurrence;
	 * the router and the latent down projection as two GEMMs; AttnRes unfused. */
	bool reference_path;
	/* Production with TP: Block AttnRes' intra-block merge is fused into the TP all-reduce that
	 * produces the partial sum, so the AttnRes op does not read it back. */
	bool attnres_fused_allreduce;
	/* Routed rows arrive per source token (DeepEP's normal kernels) and are permuted into each
	 * expert's contiguous rows for the grouped GEMMs (DeepGEMM's contiguous layout), then
	 * gathered back per token before the combine; the low-latency kernels write the masked
	 * per-expert layout themselves. */
	bool moe_permute;
	/* The routed experts' FP8 inputs made by a quantizer op of their own: expert inputs FP8 or
	 * MXFP8 from BF16 activations with no EP dispatch to fuse the quantization into (ep 1, as the
	 * four-layer slice runs it: kernels/slice/k3-slice --expert-act e4m3; sim_phase_init()). */
	bool expert_quant_in;
};

enum { OP_LIST_MAX = 256 };

struct op_list {
	struct op ops[OP_LIST_MAX];
	int n;
};

/* Layers with the same (attention, FFN) kinds form one layer group; groups are numbered in order
 * of first appearance, the order model_build_ops lists their ops in. Fills group_of_layer[i] for
 * each of the model's layers and returns the number of groups (at most 4). */
int model_layer_groups(const struct model *m, int8_t *group_of_layer);

/* The ops of one step of `phase` on model m. Returns 0 or -E2BIG if the list overflowed. */
int model_build_ops(const struct model *m, const struct phase *phase, struct op_list *out);

/* Weight bytes of the model by how parallelism divides them: each GEMM's weights by its role's
 * split (op_role_split, the split sim/step.c maps the op's dims by), and the weights no GEMM reads
 * (norm gains, biases, ShortConv taps, the embedding table) by theirs. So the weights a step's
 * ops read on one GPU and the weights sim_hbm holds there come from one statement. */
struct model_weight_split {
	int64_t tp_sharded;   /* divided by tp (heads, columns, rows) */
	int64_t moe_sharded;  /* the part of tp_sharded in MoE layers (router, shared experts, latent
			       * projections): a tensor-parallel MoE wider than tp divides it by its
			       * own width (sim_moe_split) */
	int64_t replicated;   /* held whole by every GPU */
	int64_t vocab;        /* embedding + LM head, vocab-parallel over tp */
	int64_t experts;      /* routed experts, divided by ep */
	int64_t expert_bytes; /* one routed expert of one layer */
	/* the parts of tp_sharded, replicated and vocab that no GEMM reads */
	int64_t held_tp, held_replicated, held_vocab;
};
void model_weight_split(const struct model *m, struct model_weight_split *ws);

#endif
