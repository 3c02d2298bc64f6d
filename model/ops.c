#include "model/ops.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const kind_names[OP_KIND_COUNT] = {
	"gemm", "grouped_gemm", "elementwise", "kda_chunk", "kda_decode", "mla_prefill",
	"mla_decode", "dsa_prefill", "dsa_decode", "allreduce", "allgather", "reducescatter",
	"alltoall", "attnres", "route", "combine", "short_conv", "quant",
};

const char *op_kind_name(enum op_kind k)
{
	return (unsigned)k < OP_KIND_COUNT ? kind_names[k] : "?";
}

int op_kind_parse(const char *s, enum op_kind *out)
{
	for (int i = 0; i < OP_KIND_COUNT; i++)
		if (strcmp(s, kind_names[i]) == 0) {
			*out = (enum op_kind)i;
			return 0;
		}
	return -EINVAL;
}

bool op_is_comm(enum op_kind k)
{
	return k == OP_ALLREDUCE || k == OP_ALLGATHER || k == OP_REDUCESCATTER || k == OP_ALLTOALL;
}

static const struct {
	const char *name;
	enum op_block block;
	enum op_part part;
	enum op_split split;
} roles[OP_ROLE_COUNT] = {
	[OP_ROLE_NONE] = {"?", OP_BLOCK_OTHER, OP_PART_PRE, SPLIT_NONE},
#define OP_ROLE_ROW(role, name, block, part, split) \
	[OP_ROLE_##role] = {name, OP_BLOCK_##block, OP_PART_##part, split},
	OP_ROLES(OP_ROLE_ROW)
#undef OP_ROLE_ROW
};

static enum op_role role_index(enum op_role r)
{
	return (unsigned)r < OP_ROLE_COUNT ? r : OP_ROLE_NONE;
}

const char *op_role_name(enum op_role r)
{
	return roles[role_index(r)].name;
}

enum op_block op_role_block(enum op_role r)
{
	return roles[role_index(r)].block;
}

enum op_part op_role_part(enum op_role r)
{
	return roles[role_index(r)].part;
}

enum op_split op_role_split(enum op_role r)
{
	return roles[role_index(r)].split;
}

struct op_state_split op_state_split(enum op_state s)
{
	static const struct op_state_split splits[OP_STATE_COUNT] = {
		[OP_STATE_NONE] = {false, false},
		/* every CP rank carries the state of its requests (KDA CP passes states, it does not
		 * shard them) */
		[OP_STATE_KDA] = {.tp = true, .cp = false},
		[OP_STATE_MLA_LATENT] = {.tp = false, .cp = true},
		[OP_STATE_MLA_PER_HEAD] = {.tp = true, .cp = true},
		[OP_STATE_DSA_INDEX] = {.tp = false, .cp = true},
	};
	return (unsigned)s < OP_STATE_COUNT ? splits[s] : splits[OP_STATE_NONE];
}

static const char *const part_names[OP_PART_COUNT] = {
	"pre", "attn_prep", "attn_core", "mlp_prep", "dense", "dispatch", "shared", "experts", "combine",
	"output", "residual", "post",
};

const char *op_part_name(enum op_part p)
{
	return (unsigned)p < OP_PART_COUNT ? part_names[p] : "?";
}

/* Sum over the t new queries at positions ctx+1 .. ctx+t of min(top_k, visible tokens), in
 * double (sizes may be anything a user typed). */
static double sparse_visible(int64_t ctx, int64_t t, int64_t top_k)
{
	double lo = (double)ctx + 1, hi = (double)ctx + (double)t, k = (double)top_k, n = (double)t;
	if (hi <= k)
		return (lo + hi) * n / 2;
	if (lo >= k)
		return k * n;
	double below = k - lo; /* queries lo .. top_k-1 see fewer than top_k */
	return (lo + k - 1) * below / 2 + k * (n - below);
}

enum dtype model_storage_dtype(enum dtype act)
{
	return act == DT_FP8 ? DT_BF16 : act;
}

/* An element count computed in double (exact below 2^53), checked: above OP_ELEMENTS_MAX the op is
 * flagged too large and 0 returned, so no 64-bit product downstream can wrap. */
static int64_t elems(struct op *op, double n)
{
	if (!(n >= 0) || n > (double)OP_ELEMENTS_MAX) {
		op->too_large = true;
		return 0;
	}
	return (int64_t)n;
}

#define D(x) ((double)(x))

int64_t op_quant_scale_bytes(const struct op *op)
{
	int64_t groups = op->k > 0 ? (op->n + op->k - 1) / op->k : 1;
	return groups * (op->o_dtype == DT_MXFP8 ? 1 : 4);
}

void op_fill(struct op *op)
{
	const double ab = dtype_bytes_per_element(op->a_dtype);
	op->flops = 0;
	op->flops_lowp = 0;
	op->bytes_weight = op->bytes_act_in = op->bytes_act_out = 0;
	op->bytes_kv_read = op->bytes_kv_write = op->bytes_state_read = op->bytes_state_write = 0;
	op->serial_steps = 0;
	op->too_large = false;
	switch (op->kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM:
		op->flops = 2.0 * D(op->m) * D(op->n) * D(op->k);
		op->bytes_weight = dtype_bytes(op->w_dtype, elems(op, D(op->n) * D(op->k)));
		if (op->kind == OP_GROUPED_GEMM)
			op->bytes_weight = elems(op, op->groups_touched * D(op->bytes_weight) + 0.5);
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, D(op->m) * D(op->k)));
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, D(op->m) * D(op->n)));
		break;
	case OP_ELEMENTWISE: {
		double e = D(op->m) * D(op->n);
		op->flops = op->flops_per_element * e;
		op->bytes_act_in = elems(op, op->in_tensors * e * ab);
		op->bytes_act_out = elems(op, op->out_tensors * e * dtype_bytes_per_element(op->o_dtype));
		break;
	}
	case OP_ATTNRES: {
		/* Per token: each source's sum of squares and its dot with the pseudo-query (4 FLOPs
		 * an element), the softmax over the sources, the weighted sum (2), then the delta
		 * and the pre-norm of the result. The second pass over the sources is L2's
		 * (sim/cost.c), not more HBM bytes. */
		double e = D(op->m) * D(op->n);
		op->flops = e * (6.0 * op->sources + 6.0) + D(op->m) * op->sources * 8.0;
		op->bytes_act_in = elems(op, (op->sources + op->in_tensors) * e * ab);
		op->bytes_act_out = elems(op, op->out_tensors * e * dtype_bytes_per_element(op->o_dtype));
		break;
	}
	case OP_ROUTE: {
		/* Per token: score (sigmoid + bias) of every expert, top_k rounds of an argmax over
		 * them, then each chosen row counted, placed and written: its expert, weight, token,
		 * slot (4 bytes each) and the per-expert offsets. */
		double rows = D(op->m) * D(op->top_k);
		op->flops = D(op->m) * D(op->n) * (6.0 + D(op->top_k)) + 4.0 * rows;
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, D(op->m) * D(op->n)));
		op->bytes_act_out = elems(op, 20.0 * rows + 12.0 * D(op->n));
		break;
	}
	case OP_COMBINE: {
		/* top_k gathered rows of n per token (with their slot and weight), weighted, summed,
		 * RMS-normalized: one row of n out. */
		double rows = D(op->m) * D(op->top_k);
		op->flops = D(op->m) * D(op->n) * (2.0 * D(op->top_k) + 4.0);
		op->bytes_act_in = elems(op, rows * D(op->n) * ab + 8.0 * rows);
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, D(op->m) * D(op->n)));
		break;
	}
	case OP_SHORT_CONV: {
		/* k taps over the previous tokens of each channel (those re-reads are L2's), SiLU, and
		 * the L2 norms of q and k over the head dim. */
		double e = D(op->m) * D(op->n);
		op->flops = e * (2.0 * D(op->k) + 8.0);
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, e));
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, e));
		break;
	}
	case OP_QUANT: {
		/* Per row: its amax (per group), the scale, each element scaled and rounded; the BF16
		 * row in, the FP8 row and its scales out (op_quant_scale_bytes). */
		double e = D(op->m) * D(op->n);
		op->flops = 4.0 * e;
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, e));
		op->bytes_act_out = elems(op, e + D(op->m) * D(op_quant_scale_bytes(op)));
		break;
	}
	case OP_KDA_CHUNK: {
		double tokens = D(op->b) * D(op->t) * D(op->h);
		int64_t state = dtype_bytes(op->s_dtype, elems(op, D(op->b) * D(op->h) * D(op->dk) * D(op->dv)));
		/* Per token and head: Q S, W S (state reads), K^T U (state update), the output
		 * correction, and the 16x16 intra-chunk products of width dk and dv. */
		op->flops = tokens * (8.0 * D(op->dk) * D(op->dv) + 4.0 * D(op->chunk) * D(op->dk + op->dv));
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, tokens * D(3 * op->dk + op->dv + 1)));
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, tokens * D(op->dv)));
		op->bytes_state_read = op->ctx > 0 ? state : 0;
		op->bytes_state_write = state;
		op->serial_steps = op->chunk > 0 ? (op->t + op->chunk - 1) / op->chunk : 0;
		break;
	}
	case OP_KDA_DECODE: {
		double tokens = D(op->b) * D(op->t) * D(op->h);
		int64_t state = dtype_bytes(op->s_dtype, elems(op, D(op->b) * D(op->h) * D(op->dk) * D(op->dv)));
		op->flops = tokens * (6.0 * D(op->dk) * D(op->dv) + 16.0 * D(op->dk));
		/* q, k, v before the ShortConv, the decay gate, beta, and the output gate. */
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, tokens * D(3 * op->dk + op->dk + 1 + op->dv)));
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, tokens * D(op->dv)));
		op->bytes_state_read = state + op->extra_state_bytes / 2;
		op->bytes_state_write = state + op->extra_state_bytes / 2;
		break;
	}
	case OP_MLA_PREFILL: {
		/* Materialized K/V of the prefix and the chunk (from kv_b), causal inside the chunk. */
		double pairs = D(op->t) * (D(op->ctx) + D(op->t + 1) / 2.0);
		op->flops = 2.0 * D(op->b) * D(op->h) * pairs * D(op->dk + op->dv);
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, D(op->b) * D(op->t) * D(op->h) * D(op->dk))) +
				   dtype_bytes(op->a_dtype, elems(op, D(op->b) * (D(op->ctx) + D(op->t)) * D(op->h) *
									  D(op->dk + op->dv)));
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, D(op->b) * D(op->t) * D(op->h) * D(op->dv)));
		op->bytes_kv_write = elems(op, D(op->b) * D(op->t) * D(op->cache_bytes_per_token));
		break;
	}
	case OP_MLA_DECODE: {
		double visible = D(op->ctx) + D(op->t);
		op->flops = 2.0 * D(op->b) * D(op->t) * D(op->h) * visible * D(op->dk + op->dv);
		op->bytes_kv_read = elems(op, D(op->b) * visible * D(op->cache_bytes_per_token));
		op->bytes_kv_write = elems(op, D(op->b) * D(op->t) * D(op->cache_bytes_per_token));
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, D(op->b) * D(op->t) * D(op->h) * D(op->dk)));
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, D(op->b) * D(op->t) * D(op->h) * D(op->dv)));
		break;
	}
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE: {
		double visible = D(op->ctx) + D(op->t);
		double index_pairs = D(op->t) * (D(op->ctx) + D(op->t + 1) / 2.0);
		double selected = sparse_visible(op->ctx, op->t, op->top_k);
		op->flops_lowp = 2.0 * D(op->b) * index_pairs * D(op->index_heads) * D(op->index_dim);
		op->flops = op->flops_lowp + 2.0 * D(op->b) * D(op->h) * selected * D(op->dk + op->dv);
		/* The indexer reads every cached index key once per step (per query tile in prefill,
		 * served from L2 after the first pass); sparse attention gathers the selected latents. */
		double gathered = op->kind == OP_DSA_DECODE ? D(op->t) * fmin(D(op->top_k), visible)
							     : fmin(selected, op->b ? visible * D(op->t) : 0);
		op->bytes_kv_read = elems(op, D(op->b) * visible * D(op->index_bytes_per_token) +
						  D(op->b) * gathered * D(op->cache_bytes_per_token));
		op->bytes_kv_write =
		    elems(op, D(op->b) * D(op->t) * D(op->cache_bytes_per_token + op->index_bytes_per_token));
		op->bytes_act_in = dtype_bytes(op->a_dtype, elems(op, D(op->b) * D(op->t) * D(op->h) * D(op->dk))) +
				   elems(op, D(op->b) * D(op->t) * D(op->index_heads) * D(op->index_dim)); /* FP8 queries */
		op->bytes_act_out = dtype_bytes(op->o_dtype, elems(op, D(op->b) * D(op->t) * D(op->h) * D(op->dv)));
		break;
	}
	case OP_ALLREDUCE:
	case OP_ALLGATHER:
	case OP_REDUCESCATTER:
	case OP_ALLTOALL:
		if (op->comm_bytes < 0 || op->comm_bytes > OP_ELEMENTS_MAX)
			op->too_large = true;
		break;
	case OP_KIND_COUNT:
		break;
	}
}

#undef D

/* ---- building the op list ---- */

struct builder {
	struct op_list *list;
	const struct model *m;
	const struct phase *p;
	enum attn_kind attn;
	int64_t layers;
	int group; /* layer group of the ops pushed, -1 outside the layers */
	int64_t M; /* tokens in the step: batch x tokens */
	int overflow;
};

static struct op *push(struct builder *b, enum op_kind kind, enum op_role role)
{
	if (b->list->n == OP_LIST_MAX) {
		b->overflow = 1;
		static struct op sink;
		memset(&sink, 0, sizeof sink);
		return &sink;
	}
	struct op *op = &b->list->ops[b->list->n++];
	memset(op, 0, sizeof *op);
	op->kind = kind;
	op->role = role;
	op->name = op_role_name(role);
	op->split = op_role_split(role);
	op->attn = b->attn;
	op->layers = b->layers;
	op->layer_group = b->group;
	op->w_dtype = b->m->weight_dtype;
	/* FP8 activations are the inputs of dense GEMMs (quantized with per-block scales); what is
	 * stored, normalized and attended stays BF16 */
	op->a_dtype = kind == OP_GEMM ? b->p->act : model_storage_dtype(b->p->act);
	op->o_dtype = model_storage_dtype(b->p->act);
	op->s_dtype = b->p->kda_state;
	return op;
}

static void gemm(struct builder *b, enum op_role role, int64_t m, int64_t n, int64_t k, enum op_sync sync)
{
	struct op *op = push(b, OP_GEMM, role);
	op->m = m;
	op->n = n;
	op->k = k;
	op->sync = sync;
}

static void eltwise(struct builder *b, enum op_role role, int64_t m, int64_t n, double in, double out,
		    double flops_per_element)
{
	struct op *op = push(b, OP_ELEMENTWISE, role);
	op->m = m;
	op->n = n;
	op->in_tensors = in;
	op->out_tensors = out;
	op->flops_per_element = flops_per_element;
}

/* FP8 activations are quantized per token in groups of 128 before each FP8 GEMM that a BF16 op
 * feeds (DeepSeek-V3's 1 x 128 activation tiles; SGLang's per_token_group_quant_fp8): the BF16
 * tensor read, FP8 and one FP32 scale per group written (an OP_QUANT of group 128). Where SwiGLU feeds the GEMM the cast is
 * fused into it (DeepSeek's swiglu_forward_with_weight_and_per_token_cast_to_fp8). */
/* The quantizer op: m rows of n BF16 elements to FP8, one scale per `group` elements (0: a row). */
static void quant_op(struct builder *b, enum op_role role, int64_t m, int64_t n, int64_t group)
{
	struct op *op = push(b, OP_QUANT, role);
	op->m = m;
	op->n = n;
	op->k = group;
	op->a_dtype = DT_BF16;
	op->o_dtype = DT_FP8;
}

static void quant(struct builder *b, enum op_role role, int64_t m, int64_t n)
{
	if (b->p->act != DT_FP8)
		return;
	quant_op(b, role, m, n, 128);
}

/* Block AttnRes before a sublayer: RMSNorm of each source, a pseudo-query score, softmax over
 * depth, the weighted sum; reads every source and the partial sum, writes the input. */
static void attn_res(struct builder *b, enum op_role role, double sources)
{
	if (!b->m->attn_res_block)
		return;
	/* with the intra-block merge fused into the TP all-reduce the partial sum is not read back */
	struct op *op = push(b, OP_ATTNRES, role);
	op->m = b->M;
	op->n = b->m->hidden;
	op->sources = sources;
	op->in_tensors = b->p->attnres_fused_allreduce ? 0 : 1;
	op->out_tensors = 1;
}

static void kda_layer(struct builder *b)
{
	const struct model *m = b->m;
	const struct model_kda *k = &m->kda;
	const struct phase *p = b->p;
	int64_t h = m->hidden, proj = k->heads * k->head_dim, M = b->M;
	gemm(b, OP_ROLE_KDA_QKV_PROJ, M, 3 * proj, h, SYNC_NONE);
	gemm(b, OP_ROLE_KDA_DECAY_A, M, k->decay_rank, h, SYNC_NONE);
	gemm(b, OP_ROLE_KDA_DECAY_B, M, proj, k->decay_rank, SYNC_NONE);
	gemm(b, OP_ROLE_KDA_BETA_PROJ, M, k->heads, h, SYNC_NONE);
	if (k->output_gate == GATE_FULL)
		gemm(b, OP_ROLE_KDA_GATE_PROJ, M, proj, h, SYNC_NONE);
	else if (k->output_gate == GATE_LOW_RANK) {
		gemm(b, OP_ROLE_KDA_GATE_A, M, k->output_gate_rank, h, SYNC_NONE);
		gemm(b, OP_ROLE_KDA_GATE_B, M, proj, k->output_gate_rank, SYNC_NONE);
	}
	int64_t taps = k->conv_kernel > 0 ? k->conv_kernel - 1 : 0;
	int64_t mixed = p->kind == PHASE_DECODE ? p->mixed_tokens : 0;
	if (p->kind == PHASE_PREFILL || mixed) {
		/* ShortConv + SiLU on q, k, v, L2 norm of q and k; the gate and beta activations. */
		int64_t pre_tokens = mixed ? mixed : M;
		struct op *op = push(b, OP_SHORT_CONV, OP_ROLE_KDA_CONV_NORM);
		op->m = pre_tokens;
		op->n = 3 * proj;
		op->k = k->conv_kernel;
		op = push(b, OP_KDA_CHUNK, OP_ROLE_KDA_CHUNK);
		op->cache = OP_STATE_KDA;
		op->b = mixed ? 1 : p->batch;
		op->t = mixed ? mixed : p->tokens;
		op->h = k->heads;
		op->ctx = mixed ? p->mixed_context : p->context;
		op->dk = op->dv = k->head_dim;
		op->chunk = p->kda_chunk;
		/* head-wise RMSNorm and the sigmoid output gate */
		eltwise(b, OP_ROLE_KDA_NORM_GATE, pre_tokens, proj, 2, 1, 8);
	}
	if (p->kind == PHASE_DECODE && p->reference_path) {
		/* causal_conv1d_update + SiLU and the L2 norms, then fused_recurrent_kda, then the
		 * gated RMSNorm: three kernels where production fuses one */
		eltwise(b, OP_ROLE_KDA_CONV_NORM, p->batch * p->tokens, 3 * proj, 1 + (double)taps, 1,
			2.0 * k->conv_kernel + 8);
	}
	if (p->kind == PHASE_DECODE) {
		struct op *op = push(b, OP_KDA_DECODE, OP_ROLE_KDA_DECODE);
		op->cache = OP_STATE_KDA;
		op->b = p->batch;
		op->t = p->tokens;
		op->h = k->heads;
		op->ctx = p->context;
		op->dk = op->dv = k->head_dim;
		op->extra_state_bytes = 2 * dtype_bytes(p->kda_state, p->batch * 3 * proj * taps);
		if (p->reference_path)
			eltwise(b, OP_ROLE_KDA_NORM_GATE, p->batch * p->tokens, proj, 2, 1, 8);
	}
	gemm(b, OP_ROLE_KDA_O_PROJ, M, h, proj, SYNC_TP_ATTN);
}

static void mla_layer(struct builder *b)
{
	const struct model *m = b->m;
	const struct model_mla *a = &m->mla;
	const struct phase *p = b->p;
	int64_t h = m->hidden, M = b->M;
	int64_t qk = a->qk_nope_head_dim + a->qk_rope_head_dim;
	int64_t latent = a->kv_lora_rank + a->qk_rope_head_dim;
	int64_t cache_bpt = p->mla_cache == DT_FP8
				    ? a->kv_lora_rank + 4 * ((a->kv_lora_rank + 127) / 128) + 2 * a->qk_rope_head_dim
				    : dtype_bytes(p->mla_cache, latent);
	bool dsa = m->dsa.index_heads > 0;

	quant(b, OP_ROLE_MLA_QUANT_IN, M, h);
	if (a->q_lora_rank) {
		gemm(b, OP_ROLE_MLA_Q_A, M, a->q_lora_rank, h, SYNC_NONE);
		quant(b, OP_ROLE_MLA_QUANT_Q_B, M, a->q_lora_rank);
		gemm(b, OP_ROLE_MLA_Q_B, M, a->heads * qk, a->q_lora_rank, SYNC_NONE);
	} else {
		gemm(b, OP_ROLE_MLA_Q_PROJ, M, a->heads * qk, h, SYNC_NONE);
	}
	gemm(b, OP_ROLE_MLA_KV_A, M, latent, h, SYNC_NONE);
	if (a->rope && a->qk_rope_head_dim > 0)
		/* the rotary embedding of the new tokens' q_pe (every head) and k_pe, in place */
		eltwise(b, OP_ROLE_MLA_ROPE, M, (a->heads + 1) * a->qk_rope_head_dim, 1, 1, 6);

	if (dsa) {
		const struct model_dsa *x = &m->dsa;
		int64_t qin = a->q_lora_rank ? a->q_lora_rank : h;
		gemm(b, OP_ROLE_DSA_INDEX_Q, M, x->index_heads * x->index_head_dim, qin, SYNC_NONE);
		gemm(b, OP_ROLE_DSA_INDEX_K, M, x->index_head_dim + x->index_heads, h, SYNC_NONE);
	}
	int64_t mixed = p->kind == PHASE_DECODE ? p->mixed_tokens : 0;
	if (p->reference_path && !dsa) {
		/* Hugging Face: the latent is expanded per head (kv_b) for the new tokens and K/V are
		 * cached per head in BF16; attention runs over them without absorption. */
		int64_t per_head = dtype_bytes(DT_BF16, qk + a->v_head_dim);
		gemm(b, OP_ROLE_MLA_KV_B, M, a->heads * (a->qk_nope_head_dim + a->v_head_dim), a->kv_lora_rank,
		     SYNC_NONE);
		int64_t dec = p->kind == PHASE_DECODE ? p->batch * p->tokens : 0;
		if (dec) {
			struct op *op = push(b, OP_MLA_DECODE, OP_ROLE_MLA_ATTN);
			op->b = p->batch;
			op->t = p->tokens;
			op->ctx = p->context;
			op->h = a->heads;
			op->dk = qk;
			op->dv = a->v_head_dim;
			op->cache_bytes_per_token = per_head * a->heads;
			op->cache = OP_STATE_MLA_PER_HEAD;
		}
		if (p->kind == PHASE_PREFILL || mixed) {
			struct op *op = push(b, OP_MLA_PREFILL, OP_ROLE_MLA_ATTN);
			op->b = mixed ? 1 : p->batch;
			op->t = mixed ? mixed : p->tokens;
			op->ctx = mixed ? p->mixed_context : p->context;
			op->h = a->heads;
			op->dk = qk;
			op->dv = a->v_head_dim;
			op->cache_bytes_per_token = per_head * a->heads;
			op->cache = OP_STATE_MLA_PER_HEAD;
		}
	} else if (dsa || p->kind == PHASE_DECODE) {
		/* Absorbed form: attention runs over the latent cache (MQA-like, 576-wide keys). */
		int64_t Mq = M - (dsa ? 0 : mixed); /* a mixed chunk takes the prefill kernels */
		gemm(b, OP_ROLE_MLA_Q_ABSORB, Mq, a->heads * a->kv_lora_rank, a->qk_nope_head_dim, SYNC_NONE);
		enum op_kind kind = dsa ? (p->kind == PHASE_DECODE ? OP_DSA_DECODE : OP_DSA_PREFILL)
					: OP_MLA_DECODE;
		struct op *op = push(b, kind, dsa ? OP_ROLE_DSA_ATTN : OP_ROLE_MLA_ATTN);
		op->b = p->batch;
		op->t = p->tokens;
		op->ctx = p->context;
		op->h = a->heads;
		op->dk = latent;
		op->dv = a->kv_lora_rank;
		op->cache_bytes_per_token = cache_bpt;
		op->cache = OP_STATE_MLA_LATENT;
		if (dsa) {
			op->top_k = m->dsa.top_k;
			op->index_heads = m->dsa.index_heads;
			op->index_dim = m->dsa.index_head_dim;
			op->index_bytes_per_token = m->dsa.index_key_bytes_per_token;
		}
		if (dsa && mixed && b->list->n < OP_LIST_MAX) {
			/* the mixed chunk through DSA's prefill kernels, with the decode op's dims */
			struct op *pre = &b->list->ops[b->list->n];
			*pre = *op;
			b->list->n++;
			pre->kind = OP_DSA_PREFILL;
			pre->b = 1;
			pre->t = mixed;
			pre->ctx = p->mixed_context;
		} else if (dsa && mixed) {
			b->overflow = 1;
		}
		gemm(b, OP_ROLE_MLA_V_ABSORB, Mq, a->heads * a->v_head_dim, a->kv_lora_rank, SYNC_NONE);
	}
	if (!dsa && !p->reference_path && (p->kind == PHASE_PREFILL || mixed)) {
		/* Prefill: expand the prefix and the chunk from the latent cache, then attention. */
		int64_t pb = mixed ? 1 : p->batch, pt = mixed ? mixed : p->tokens, pc = mixed ? p->mixed_context : p->context;
		quant(b, OP_ROLE_MLA_QUANT_KV_B, pb * (pc + pt), a->kv_lora_rank);
		gemm(b, OP_ROLE_MLA_KV_B, pb * (pc + pt),
		     a->heads * (a->qk_nope_head_dim + a->v_head_dim), a->kv_lora_rank, SYNC_NONE);
		/* The attention kernel (FlashAttention-3 at head dims 192/128) takes K whole: each
		 * head's k_nope from the expansion beside the shared k_pe, written as one tensor (V is
		 * read in place, strided). */
		eltwise(b, OP_ROLE_MLA_K_CONCAT, pb * (pc + pt), a->heads * qk,
			(double)a->qk_nope_head_dim / (double)qk, 1, 0);
		struct op *op = push(b, OP_MLA_PREFILL, OP_ROLE_MLA_ATTN);
		op->b = pb;
		op->t = pt;
		op->ctx = pc;
		op->h = a->heads;
		op->dk = qk;
		op->dv = a->v_head_dim;
		op->cache_bytes_per_token = cache_bpt;
		op->cache = OP_STATE_MLA_LATENT;
	}
	if (a->output_gate) {
		gemm(b, OP_ROLE_MLA_GATE_PROJ, M, a->heads * a->v_head_dim, h, SYNC_NONE);
		eltwise(b, OP_ROLE_MLA_GATE_MUL, M, a->heads * a->v_head_dim, 2, 1, 5);
	}
	quant(b, OP_ROLE_MLA_QUANT_O_PROJ, M, a->heads * a->v_head_dim);
	gemm(b, OP_ROLE_MLA_O_PROJ, M, h, a->heads * a->v_head_dim, SYNC_TP_ATTN);
}

static void dense_ffn(struct builder *b)
{
	int64_t h = b->m->hidden, I = b->m->dense_intermediate, M = b->M;
	quant(b, OP_ROLE_FFN_QUANT_IN, M, h);
	gemm(b, OP_ROLE_FFN_GATE_UP, M, 2 * I, h, SYNC_NONE);
	eltwise(b, OP_ROLE_FFN_SITU_GLU, M, I, 2, 1, 12);
	gemm(b, OP_ROLE_FFN_DOWN, M, h, I, SYNC_TP_FFN);
}

static void moe(struct builder *b)
{
	const struct model *m = b->m;
	const struct model_moe *x = &m->moe;
	const struct phase *p = b->p;
	int64_t h = m->hidden, L = x->latent, M = b->M, rows = M * x->top_k;
	bool latent = L != h;
	/* Router and the down projection share one GEMM (the router sees full width); the reference
	 * implementation runs them as two. */
	if (latent && p->reference_path) {
		gemm(b, OP_ROLE_MOE_ROUTER, M, x->experts, h, SYNC_NONE);
		gemm(b, OP_ROLE_MOE_DOWN, M, L, h, SYNC_NONE);
	} else {
		gemm(b, latent ? OP_ROLE_MOE_ROUTER_DOWN : OP_ROLE_MOE_ROUTER, M, x->experts + (latent ? L : 0),
		     h, SYNC_NONE);
	}
	struct op *op = push(b, OP_ROUTE, OP_ROLE_MOE_TOPK);
	op->m = M;
	op->n = x->experts;
	op->top_k = x->top_k;
	/* one FP8 copy of the MoE input: the dispatch payload and the shared expert's input */
	quant(b, OP_ROLE_MOE_QUANT_IN, M, L);
	/* FP8 expert inputs from BF16 activations and no dispatch to quantize in (phase.expert_quant_in):
	 * the quantizer as an op of its own, over the rows the experts read (measured missing from the
	 * slice's elementwise class, -22 % on an H200: bench/results/k3-kernels-h200-2026-12-05v/) */
	if (p->expert_quant_in && p->act != DT_FP8) {
		/* E4M3 rows with one FP32 scale a row (the slice's k3_gemm_quantize_e4m3_rows), or
		 * MXFP8 with an E8M0 byte per 32 */
		bool mx = p->expert_act == DT_MXFP8;
		quant_op(b, OP_ROLE_MOE_QUANT_IN, M, L, mx ? 32 : 0);
		op = &b->list->ops[b->list->n - 1];
		op->o_dtype = mx ? DT_MXFP8 : DT_FP8;
	}

	op = push(b, OP_ALLTOALL, OP_ROLE_MOE_DISPATCH);
	op->m = M;
	op->n = L;
	op->k = x->top_k;
	op->a_dtype = p->dispatch;

	if (p->moe_permute) {
		/* the received rows copied into each local expert's contiguous rows (with scales) */
		op = push(b, OP_ELEMENTWISE, OP_ROLE_MOE_PERMUTE);
		op->m = rows;
		op->n = L;
		op->in_tensors = op->out_tensors = 1;
		op->a_dtype = op->o_dtype = p->expert_act;
	}
	op = push(b, OP_GROUPED_GEMM, OP_ROLE_MOE_EXPERTS_GATE_UP);
	op->m = rows;
	op->n = 2 * x->intermediate;
	op->k = L;
	op->groups = x->experts;
	op->groups_touched = (double)x->experts;
	op->w_dtype = m->expert_dtype;
	op->a_dtype = p->expert_act;
	eltwise(b, OP_ROLE_MOE_SITU_GLU, rows, x->intermediate, 2, 1, 12);
	op = push(b, OP_GROUPED_GEMM, OP_ROLE_MOE_EXPERTS_DOWN);
	op->m = rows;
	op->n = L;
	op->k = x->intermediate;
	op->groups = x->experts;
	op->groups_touched = (double)x->experts;
	op->w_dtype = m->expert_dtype;
	op->a_dtype = p->expert_act;

	if (p->moe_permute)
		/* each expert row back to its token's slot, weighted by its gate (a received token's
		 * rows on this GPU summed: written once per row at most) */
		eltwise(b, OP_ROLE_MOE_UNPERMUTE, rows, L, 1, 1, 2);
	op = push(b, OP_ALLTOALL, OP_ROLE_MOE_COMBINE);
	op->m = M;
	op->n = L;
	op->k = x->top_k;
	op->a_dtype = model_storage_dtype(p->act);

	/* Weighted sum of the top_k rows (and the latent RMSNorm), then back to full width. */
	op = push(b, OP_COMBINE, OP_ROLE_MOE_COMBINE_NORM);
	op->m = M;
	op->n = L;
	op->top_k = x->top_k;
	if (x->shared_intermediate) {
		gemm(b, OP_ROLE_MOE_SHARED_GATE_UP, M, 2 * x->shared_intermediate, h, SYNC_NONE);
		eltwise(b, OP_ROLE_MOE_SHARED_SITU_GLU, M, x->shared_intermediate, 2, 1, 12);
		gemm(b, OP_ROLE_MOE_SHARED_DOWN, M, h, x->shared_intermediate, SYNC_NONE);
	}
	if (latent)
		gemm(b, OP_ROLE_MOE_UP, M, h, L, SYNC_TP_FFN);
	else
		b->list->ops[b->list->n - 1].sync = SYNC_TP_FFN;
}

/* Average AttnRes sources seen by the sublayers of the layers in `mask`: the embedding, every
 * completed block, and the current block's partial sum when it is not empty (a slice's layers
 * count the blocks before them). */
static double attn_res_sources(const struct model *m, const bool *mask, int count, bool ffn)
{
	if (!m->attn_res_block || count == 0)
		return 0;
	double sum = 0;
	for (int i = 0; i < m->n_layers; i++) {
		if (!mask[i])
			continue;
		const int64_t layer = m->slice_layers_before + i;
		int64_t done = layer / m->attn_res_block;
		bool partial = ffn || (layer % m->attn_res_block) != 0;
		sum += 1.0 + (double)done + (partial ? 1.0 : 0.0);
	}
	return sum / count;
}

int model_layer_groups(const struct model *m, int8_t *group_of_layer)
{
	int8_t index[2][2];
	memset(index, -1, sizeof index);
	int n = 0;
	for (int i = 0; i < m->n_layers; i++) {
		int8_t *g = &index[m->attn[i]][m->ffn[i]];
		if (*g < 0)
			*g = (int8_t)n++;
		group_of_layer[i] = *g;
	}
	return n;
}

int model_build_ops(const struct model *m, const struct phase *phase, struct op_list *out)
{
	struct builder b = {.list = out, .m = m, .p = phase, .layers = 1, .group = -1};
	out->n = 0;
	b.M = phase->batch * phase->tokens + (phase->kind == PHASE_DECODE ? phase->mixed_tokens : 0);
	int64_t h = m->hidden;

	if (!m->slice_layers_only) {
		eltwise(&b, OP_ROLE_EMBED, b.M, h, 1, 1, 0);
		b.list->ops[b.list->n - 1].sync = SYNC_TP_EMBED;
	}

	/* One group of ops per (attention kind, FFN kind) signature, in order of first appearance. */
	int8_t group_of[MODEL_MAX_LAYERS];
	int groups = model_layer_groups(m, group_of);
	for (int g = 0; g < groups; g++) {
		bool mask[MODEL_MAX_LAYERS] = {false};
		int count = 0, first = -1;
		for (int i = 0; i < m->n_layers; i++)
			if (group_of[i] == g) {
				mask[i] = true;
				count++;
				if (first < 0)
					first = i;
			}
		enum attn_kind ak = m->attn[first];
		enum ffn_kind fk = m->ffn[first];
		b.attn = ak;
		b.layers = count;
		b.group = g;
		attn_res(&b, OP_ROLE_ATTNRES_PRE_ATTN, attn_res_sources(m, mask, count, false));
		eltwise(&b, OP_ROLE_NORM_ATTN, b.M, h, 1, 1, 4);
		if (ak == ATTN_KDA)
			kda_layer(&b);
		else
			mla_layer(&b);
		attn_res(&b, OP_ROLE_ATTNRES_PRE_FFN, attn_res_sources(m, mask, count, true));
		eltwise(&b, OP_ROLE_NORM_FFN, b.M, h, 1, 1, 4);
		if (fk == FFN_DENSE)
			dense_ffn(&b);
		else
			moe(&b);
		/* Residual or block partial-sum updates after both sublayers. */
		eltwise(&b, OP_ROLE_RESIDUAL_ADD, b.M, h, 4, 2, 2);
	}

	if (m->slice_layers_only)
		goto fill;
	b.attn = ATTN_KDA;
	b.layers = 1;
	b.group = -1;
	double final_sources = m->attn_res_block
				       ? 1.0 + (double)((m->slice_layers_before + m->n_layers + m->attn_res_block - 1) /
							m->attn_res_block)
				       : 0;
	attn_res(&b, OP_ROLE_ATTNRES_FINAL, final_sources);
	/* Only the last position of each sequence needs logits. */
	int64_t rows = phase->kind == PHASE_PREFILL ? phase->batch
		       : b.M - phase->mixed_tokens + (phase->mixed_tokens ? 1 : 0);
	eltwise(&b, OP_ROLE_NORM_FINAL, rows, h, 1, 1, 4);
	gemm(&b, OP_ROLE_LM_HEAD, rows, m->vocab, h, SYNC_NONE);
	b.list->ops[b.list->n - 1].o_dtype = DT_FP32;
	b.list->ops[b.list->n - 1].sync = SYNC_TP_GATHER;
	eltwise(&b, OP_ROLE_SAMPLE, rows, m->vocab, 1, 0, 4);
	b.list->ops[b.list->n - 1].a_dtype = DT_FP32;

fill:
	for (int i = 0; i < out->n; i++)
		op_fill(&out->ops[i]);
	return b.overflow ? -E2BIG : 0;
}

/* Weights an op's role holds that no GEMM reads (RMSNorm gains, AttnRes pseudo-queries, ShortConv
 * taps, KDA's dt_bias and A_log, the router's score bias, the embedding table), per layer it
 * stands for, in elements, by how the memory holding them is split: tp (per head: ShortConv and
 * KDA's per-head vectors), replicated (as wide as one head, a latent or the model), vocab (the
 * embedding, vocab-parallel). Attached to roles a one-token production decode always lists. */
static void held_elements(const struct model *m, enum op_role r, int64_t *tp, int64_t *repl, int64_t *vocab)
{
	const int64_t h = m->hidden;
	const struct model_kda *k = &m->kda;
	*tp = *repl = *vocab = 0;
	switch (r) {
	case OP_ROLE_NORM_ATTN:
	case OP_ROLE_NORM_FFN:
	case OP_ROLE_NORM_FINAL:
	case OP_ROLE_ATTNRES_PRE_ATTN: /* AttnRes ops are listed only with Block AttnRes */
	case OP_ROLE_ATTNRES_PRE_FFN:
	case OP_ROLE_ATTNRES_FINAL:
		*repl = h;
		return;
	case OP_ROLE_KDA_DECODE:
		*tp = 3 * k->heads * k->head_dim * k->conv_kernel /* ShortConv on q, k, v */
		      + k->heads * k->head_dim + k->heads;       /* dt_bias, A_log */
		*repl = k->head_dim;                             /* head-wise RMSNorm */
		return;
	case OP_ROLE_MLA_Q_A:
		*repl = m->mla.q_lora_rank; /* its RMSNorm */
		return;
	case OP_ROLE_MLA_KV_A:
		*repl = m->mla.kv_lora_rank;
		return;
	case OP_ROLE_DSA_INDEX_K:
		*repl = 2 * m->dsa.index_head_dim; /* the index key's LayerNorm */
		return;
	case OP_ROLE_MOE_TOPK:
		*repl = m->moe.experts; /* the score bias */
		return;
	case OP_ROLE_MOE_COMBINE_NORM:
		*repl = m->moe.latent_norm ? m->moe.latent : 0;
		return;
	case OP_ROLE_EMBED:
		*vocab = m->tie_embeddings ? 0 : m->vocab * h; /* tied: the LM head's GEMM reads it */
		return;
	default:
		return;
	}
}

void model_weight_split(const struct model *m, struct model_weight_split *ws)
{
	memset(ws, 0, sizeof *ws);
	/* The ops of a one-token production decode list every weight once (the absorbed q and v
	 * projections are kv_b's two halves), and each op's role says how parallelism splits it:
	 * the same split sim/step.c maps the op's dims by. */
	const struct phase p = {.kind = PHASE_DECODE, .batch = 1, .tokens = 1, .kda_state = DT_FP32,
				.mla_cache = DT_BF16, .act = DT_BF16, .expert_act = DT_BF16,
				.dispatch = DT_BF16,
				.kda_chunk = 16};
	static _Thread_local struct op_list list;
	if (model_build_ops(m, &p, &list) < 0)
		return; /* cannot happen: a decode step lists far fewer than OP_LIST_MAX ops */
	int64_t tp = 0, moe = 0, repl = 0, vocab = 0, expert = 0, moe_layers = 0;
	int64_t held_tp = 0, held_repl = 0, held_vocab = 0;
	int expert_group = -2;
	for (int i = 0; i < list.n; i++) {
		const struct op *o = &list.ops[i];
		int64_t ht, hr, hv;
		held_elements(m, o->role, &ht, &hr, &hv);
		held_tp += ht * o->layers;
		held_repl += hr * o->layers;
		held_vocab += hv * o->layers;
		if (o->kind != OP_GEMM && o->kind != OP_GROUPED_GEMM)
			continue;
		int64_t w = o->n * o->k; /* a grouped GEMM: one expert's */
		if (o->role == OP_ROLE_LM_HEAD) {
			vocab += w;
			continue;
		}
		switch (o->split) {
		case SPLIT_TP_N:
		case SPLIT_TP_K:
			tp += w * o->layers;
			if (op_role_block(o->role) == OP_BLOCK_MOE)
				moe += w * o->layers;
			break;
		case SPLIT_EP:
			/* one routed expert: its GEMMs in the first MoE layer group */
			if (expert_group == -2)
				expert_group = o->layer_group;
			if (o->layer_group == expert_group)
				expert += w;
			if (o->role == OP_ROLE_MOE_EXPERTS_DOWN)
				moe_layers += o->layers;
			break;
		case SPLIT_NONE:
		case SPLIT_COMM:
			repl += w * o->layers;
			break;
		}
	}
	const enum dtype wd = m->weight_dtype;
	ws->tp_sharded = dtype_bytes(wd, tp + held_tp);
	ws->moe_sharded = dtype_bytes(wd, moe);
	ws->replicated = dtype_bytes(wd, repl + held_repl);
	ws->vocab = dtype_bytes(wd, vocab + held_vocab);
	ws->expert_bytes = dtype_bytes(m->expert_dtype, expert);
	ws->experts = moe_layers * m->moe.experts * ws->expert_bytes;
	ws->held_tp = dtype_bytes(wd, held_tp);
	ws->held_replicated = dtype_bytes(wd, held_repl);
	ws->held_vocab = dtype_bytes(wd, held_vocab);
}
