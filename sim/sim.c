#include "sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MLA_PREFIX_BLOCK_TOKENS = 65536 };

static int64_t ceil_div64(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : a;
}

void sim_phase_init(const struct scenario *s, enum phase_kind kind, int64_t batch, int64_t tokens,
		    int64_t context, struct phase *p)
{
	p->kind = kind;
	p->batch = batch;
	p->tokens = tokens;
	p->context = context;
	p->kda_state = s->kda_state;
	p->mla_cache = s->mla_cache;
	p->act = s->act;
	p->expert_act = s->expert_act;
	p->dispatch = s->dispatch;
	p->kda_chunk = s->kda_chunk;
}

void sim_phase_reset(struct sim_phase *ph)
{
	ph->time_s = ph->compute_s = ph->memory_s = ph->latency_s = ph->comm_s = 0;
	ph->peak_act_bytes = 0;
	ph->n_rows = 0;
}

int sim_check(const struct scenario *s, const struct model *m, const struct hw *hw, struct err *e)
{
	struct model_inventory inv;
	model_inventory(m, &inv);
	if (inv.kda_layers && m->kda.heads % s->tp != 0) {
		err_set(e, s->file, 0, 0, "tp %lld does not divide the %lld KDA heads of %s", (long long)s->tp,
			(long long)m->kda.heads, m->name);
		return -EINVAL;
	}
	if (inv.mla_layers && m->mla.heads % s->tp != 0) {
		err_set(e, s->file, 0, 0, "tp %lld does not divide the %lld MLA heads of %s", (long long)s->tp,
			(long long)m->mla.heads, m->name);
		return -EINVAL;
	}
	if (s->gpus > 1 && s->gpus > hw->domain_gpus && s->tp > hw->domain_gpus) {
		err_set(e, s->file, 0, 0, "tp %lld spans more than one NVLink domain of %s (%lld GPUs)",
			(long long)s->tp, hw->name, (long long)hw->domain_gpus);
		return -EINVAL;
	}
	if (s->kda_chunk < 1 || s->prefill_chunk < 1) {
		err_set(e, s->file, 0, 0, "chunk sizes must be positive");
		return -EINVAL;
	}
	/* Sizes in 64-bit integers: the largest products a step counts (the whole KV cache and state
	 * of the batch, one chunk's attention over the prompt and its logits), bounded in double
	 * first, so that none of them can wrap. */
	double tokens = (double)s->batch * ((double)s->prompt_tokens + (double)s->output_tokens);
	double kv = tokens * (double)(model_mla_kv_bytes_per_token(m, s->mla_cache) + model_dsa_index_bytes_per_token(m) + 8);
	double state = (double)s->batch * (double)(model_kda_state_bytes_per_request(m, DT_FP32) +
						   model_conv_state_bytes_per_request(m, DT_FP32));
	double attn = ((double)s->prompt_tokens + (double)s->output_tokens) * (double)(m->mla.heads + m->kda.heads + 1) * 4096;
	double chunk = fmax((double)s->prefill_chunk, (double)s->batch) * (double)(m->vocab + 64 * m->hidden) * 4;
	double most = fmax(fmax(kv, state), fmax(attn, chunk));
	if (!(most < (double)OP_ELEMENTS_MAX)) {
		err_set(e, s->file, 0, 0,
			"workload too large: batch %lld x (prompt %lld + output %lld tokens) needs %.3g bytes, "
			"beyond the %.3g k3sim counts in 64-bit integers",
			(long long)s->batch, (long long)s->prompt_tokens, (long long)s->output_tokens, most,
			(double)OP_ELEMENTS_MAX);
		return -ERANGE;
	}
	return 0;
}

/* Expected experts of `held` that receive at least one of `tokens` tokens, each routed to top_k of
 * `experts` distinct experts uniformly. */
static double experts_touched(double held, double experts, double top_k, double tokens)
{
	if (experts <= 0)
		return 0;
	double miss = pow(1.0 - top_k / experts, tokens);
	return held * (1.0 - miss);
}

int64_t sim_ep_comm_bytes(const struct model_moe *x, int64_t tokens_per_gpu, int64_t row_bytes, int64_t ranks,
			  double imbalance)
{
	double rows = (double)tokens_per_gpu * model_ep_ranks_per_token(x, ranks, imbalance);
	double bytes = ceil(rows * (double)row_bytes);
	/* past what ops count, one more than the limit: op_fill flags it (never a wrapped value) */
	return bytes > (double)OP_ELEMENTS_MAX ? OP_ELEMENTS_MAX + 1 : (int64_t)bytes;
}

struct mapper {
	const struct scenario *s;
	const struct model *m;
	const struct hw *hw;
	const struct phase *p;
	struct cost_opts opts;
	struct sim_phase *acc;
	double weight;
	double time_s;
	int index; /* position in the mapped list: rows line up across chunks */
	int64_t peak_act;
};

static void account(struct mapper *mp, const struct op *o)
{
	struct op_cost c;
	sim_op_cost(mp->hw, o, &mp->opts, &c);
	double t = c.time_s * (double)o->layers;
	mp->time_s += t;
	int64_t act = o->bytes_act_in + o->bytes_act_out;
	/* MLA prefill expands the cached prefix into per-head K/V block by block (64K tokens at a
	 * time, as chunked-prefix kernels do): the traffic is all there, the live buffer is not. */
	int64_t keys = o->kind == OP_MLA_PREFILL ? o->b * (o->ctx + o->t)
		       : (o->kind == OP_GEMM && strcmp(o->name, "mla.kv_b") == 0) ? o->m : 0;
	if (keys > MLA_PREFIX_BLOCK_TOKENS)
		act = (int64_t)((double)act * (double)MLA_PREFIX_BLOCK_TOKENS / (double)keys);
	if (act > mp->peak_act)
		mp->peak_act = act;
	struct sim_phase *ph = mp->acc;
	int i = mp->index++;
	if (!ph || i >= SIM_MAX_OPS)
		return;
	if (i >= ph->n_rows) {
		memset(&ph->rows[i], 0, sizeof ph->rows[i]);
		ph->n_rows = i + 1;
	}
	struct sim_op_row *r = &ph->rows[i];
	r->op = *o;
	r->cost = c;
	double w = mp->weight * (double)o->layers;
	r->total_s += c.time_s * w;
	r->total_cycles += c.cycles * w;
	r->total_flops += o->flops * w;
	r->total_bytes += (double)op_bytes(o) * w + (double)o->comm_bytes * w;
	double tw = c.time_s * w;
	ph->time_s += tw;
	switch (c.bound) {
	case BOUND_COMPUTE:
		ph->compute_s += tw;
		break;
	case BOUND_MEMORY:
		ph->memory_s += tw;
		break;
	case BOUND_LATENCY:
		ph->latency_s += tw;
		break;
	case BOUND_COMM:
		ph->comm_s += tw;
		break;
	}
}

static void collective(struct mapper *mp, enum op_kind kind, const char *name, int64_t layers,
		       int64_t bytes, int64_t ranks)
{
	if (ranks <= 1 || bytes <= 0)
		return;
	struct op o;
	memset(&o, 0, sizeof o);
	o.kind = kind;
	o.name = name;
	o.layers = layers;
	o.split = SPLIT_COMM;
	o.comm_bytes = bytes;
	o.ranks = ranks;
	account(mp, &o);
}

static void tp_sync(struct mapper *mp, const struct op *o, int64_t tokens_local)
{
	const struct scenario *s = mp->s;
	if (s->tp <= 1 || o->sync == SYNC_NONE)
		return;
	int64_t act = dtype_bytes(model_storage_dtype(mp->p->act), tokens_local * mp->m->hidden);
	switch (o->sync) {
	case SYNC_TP_GATHER:
		collective(mp, OP_ALLGATHER, "tp.logits_gather", o->layers,
			   dtype_bytes(o->o_dtype, o->m * mp->m->vocab), s->tp);
		return;
	case SYNC_TP_EMBED:
		collective(mp, OP_ALLREDUCE, "tp.embed_allreduce", o->layers, act, s->tp);
		return;
	default:
		break;
	}
	const char *what = o->sync == SYNC_TP_ATTN ? "attn" : "ffn";
	if (s->tp_rs_ag) {
		collective(mp, OP_REDUCESCATTER, o->sync == SYNC_TP_ATTN ? "tp.attn_reduce_scatter" : "tp.ffn_reduce_scatter",
			   o->layers, act, s->tp);
		collective(mp, OP_ALLGATHER, o->sync == SYNC_TP_ATTN ? "tp.attn_all_gather" : "tp.ffn_all_gather",
			   o->layers, act, s->tp);
	} else {
		collective(mp, OP_ALLREDUCE, o->sync == SYNC_TP_ATTN ? "tp.attn_allreduce" : "tp.ffn_allreduce",
			   o->layers, act, s->tp);
	}
	(void)what;
}

double sim_step(const struct scenario *s, const struct model *m, const struct hw *hw,
		const struct phase *p, struct sim_phase *acc, double weight)
{
	const bool prefill = p->kind == PHASE_PREFILL;
	const int64_t cp = prefill ? s->cp : 1;
	const int64_t b_local = ceil_div64(p->batch, s->dp);
	const int64_t t_local = ceil_div64(p->tokens, cp);
	const int64_t tokens_global = p->batch * p->tokens;
	const struct model_moe *x = &m->moe;

	struct phase local = *p;
	local.batch = b_local;
	local.tokens = t_local;
	static _Thread_local struct op_list list;
	if (model_build_ops(m, &local, &list) < 0)
		return -E2BIG;

	struct mapper mp = {.s = s, .m = m, .hw = hw, .p = p, .acc = acc, .weight = weight};
	mp.opts.cuda_graph = !prefill && s->cuda_graph;
	mp.opts.clock = s->clock;
	const int64_t tokens_local = b_local * t_local;

	for (int i = 0; i < list.n; i++) {
		struct op o = list.ops[i];
		switch (o.split) {
		case SPLIT_TP_N:
			if (o.kind == OP_GEMM || o.kind == OP_ELEMENTWISE)
				o.n = ceil_div64(o.n, s->tp);
			else
				o.h = ceil_div64(o.h, s->tp);
			o.extra_state_bytes /= s->tp;
			break;
		case SPLIT_TP_K:
			o.k = ceil_div64(o.k, s->tp);
			break;
		case SPLIT_EP: {
			double rows = (double)tokens_global * (double)x->top_k * s->moe_imbalance / (double)s->ep;
			o.m = (int64_t)ceil(rows);
			if (o.kind == OP_GROUPED_GEMM) {
				o.groups = ceil_div64(x->experts, s->ep);
				o.groups_touched = experts_touched((double)o.groups, (double)x->experts,
								   (double)x->top_k, (double)tokens_global);
			}
			break;
		}
		case SPLIT_COMM: {
			if (s->ep <= 1)
				continue;
			/* The attention GPUs that hold the step's tokens each send their share (a single
			 * prefill lives on one DP group), once per EP rank a token reaches, at the latent
			 * width; FP8 rows carry their scales. */
			int64_t groups = p->batch < s->dp ? p->batch : s->dp;
			int64_t tokens_per_gpu = ceil_div64(tokens_global, groups * s->tp * cp);
			int64_t width = o.a_dtype == DT_FP8 ? o.n + 4 * ceil_div64(o.n, 128)
							    : dtype_bytes(o.a_dtype, o.n);
			o.comm_bytes = sim_ep_comm_bytes(x, tokens_per_gpu, width, s->ep, s->moe_imbalance);
			o.ranks = s->ep;
			o.m = o.n = o.k = 0;
			break;
		}
		case SPLIT_NONE:
			break;
		}
		if (cp > 1) {
			/* Context parallel: every rank expands the whole chunk's keys; queries are
			 * split zig-zag, so a rank sees on average half of the other ranks' tokens. */
			if (o.kind == OP_GEMM && strcmp(o.name, "mla.kv_b") == 0)
				o.m = b_local * (p->context + p->tokens);
			if (o.kind == OP_MLA_PREFILL || o.kind == OP_DSA_PREFILL) {
				o.ctx = p->context + (p->tokens - t_local) / 2;
				collective(&mp, OP_ALLGATHER, "cp.mla_kv_allgather", o.layers,
					   b_local * p->tokens * o.cache_bytes_per_token, cp);
			}
		}
		if (!prefill && s->cp > 1 && (o.kind == OP_MLA_DECODE || o.kind == OP_DSA_DECODE)) {
			/* Decode over a context-parallel cache: each rank attends over its shard, then
			 * the partial outputs and their log-sum-exps are gathered and merged. */
			o.ctx = ceil_div64(o.ctx, s->cp);
			collective(&mp, OP_ALLGATHER, "cp.attn_merge", o.layers,
				   s->cp * b_local * o.t * o.h * (o.dv + 1) * 4, s->cp);
		}
		op_fill(&o);
		account(&mp, &o);
		tp_sync(&mp, &o, tokens_local);

		if (cp > 1 && o.kind == OP_KDA_CHUNK) {
			/* KDA context parallelism: all-gather each rank's segment transition (K x K) and
			 * zero-start state (V x K) per head in FP32, scan them in order, then correct the
			 * local outputs with the true incoming state. */
			int64_t frag = b_local * o.h * (o.dk * o.dk + o.dk * o.dv) * 4;
			collective(&mp, OP_ALLGATHER, "kcp.state_allgather", o.layers, frag * cp, cp);
			struct op fix;
			memset(&fix, 0, sizeof fix);
			fix.kind = OP_GEMM;
			fix.name = "kcp.fixup";
			fix.layers = o.layers;
			fix.m = b_local * t_local;
			fix.n = o.h * o.dv;
			fix.k = o.dk;
			fix.w_dtype = DT_FP32;
			fix.a_dtype = model_storage_dtype(p->act);
			fix.o_dtype = model_storage_dtype(p->act);
			op_fill(&fix);
			account(&mp, &fix);
		}
	}
	if (acc && mp.peak_act > acc->peak_act_bytes)
		acc->peak_act_bytes = mp.peak_act;
	return mp.time_s;
}

void sim_hbm(const struct scenario *s, const struct model *m, const struct hw *hw, int64_t batch,
	     int64_t context, int64_t activations, struct sim_hbm *out)
{
	struct model_weight_split ws;
	model_weight_split(m, &ws);
	struct model_inventory inv;
	model_inventory(m, &inv);
	int64_t req = ceil_div64(batch, s->dp);
	memset(out, 0, sizeof *out);
	out->weights = ceil_div64(ws.tp_sharded, s->tp) + ws.replicated + ceil_div64(ws.vocab, s->tp) +
		       (int64_t)inv.moe_layers * ceil_div64(m->moe.experts, s->ep) * ws.expert_bytes;
	out->kda_state = req * ceil_div64(model_kda_state_bytes_per_request(m, s->kda_state), s->tp);
	out->conv_state = req * ceil_div64(model_conv_state_bytes_per_request(m, s->kda_state), s->tp);
	/* The MLA latent is shared by all heads: every TP rank holds the whole cache of its requests. */
	out->mla_kv = req * ceil_div64(context * model_mla_kv_bytes_per_token(m, s->mla_cache), s->cp);
	out->dsa_index = req * ceil_div64(context * model_dsa_index_bytes_per_token(m), s->cp);
	out->activations = activations;
	out->workspace = s->reserved_bytes >= 0 ? s->reserved_bytes : hw->reserved_bytes;
	out->total = out->weights + out->kda_state + out->conv_state + out->mla_kv + out->dsa_index +
		     out->activations + out->workspace;
	out->capacity = hw->hbm_bytes;
}

/* Block AttnRes keeps every completed block's representation of each token in flight. */
static int64_t attn_res_store_bytes(const struct scenario *s, const struct model *m, int64_t tokens)
{
	if (!m->attn_res_block)
		return 0;
	int64_t sources = (m->n_layers + m->attn_res_block - 1) / m->attn_res_block + 1;
	int64_t bytes = dtype_bytes(model_storage_dtype(s->act), tokens * sources * m->hidden);
	return s->tp_rs_ag ? ceil_div64(bytes, s->tp) : bytes;
}

int sim_prefill(const struct scenario *s, const struct model *m, const struct hw *hw,
		struct sim_phase *ph, struct sim_prefill_result *out, struct err *e)
{
	/* The prompt in chunks. Very long prompts with small chunks are sampled at most 1024 times,
	 * each sample standing for `stride` chunks (the cost is smooth in the prefix). */
	sim_phase_reset(ph);
	struct phase p;
	double ttft = 0;
	int64_t chunks = ceil_div64(s->prompt_tokens, s->prefill_chunk);
	int64_t stride = chunks > 1024 ? ceil_div64(chunks, 1024) : 1;
	for (int64_t i = 0; i < chunks; i += stride) {
		int64_t done = i * s->prefill_chunk;
		int64_t t = s->prompt_tokens - done < s->prefill_chunk ? s->prompt_tokens - done : s->prefill_chunk;
		double w = (double)(i + stride <= chunks ? stride : chunks - i);
		sim_phase_init(s, PHASE_PREFILL, 1, t, done, &p);
		double step = sim_step(s, m, hw, &p, ph, w);
		if (step < 0) {
			err_set(e, s->file, 0, 0, "op list overflow");
			return -E2BIG;
		}
		ttft += step * w;
	}
	out->ttft_s = ttft;
	out->chunks = chunks;
	out->peak_bytes = ph->peak_act_bytes + attn_res_store_bytes(s, m, ceil_div64(s->prefill_chunk, s->cp));
	return 0;
}

int sim_decode(const struct scenario *s, const struct model *m, const struct hw *hw,
	       const struct sim_prefill_result *pre, struct sim_phase *ph, struct sim_decode_result *out,
	       struct err *e)
{
	/* TPOT: the decode step's cost is affine in the context, so the step at the mean context
	 * is the mean step. */
	sim_phase_reset(ph);
	struct phase p;
	int64_t first = s->prompt_tokens, last = s->prompt_tokens + s->output_tokens - 1;
	out->decode_context = first + (s->output_tokens - 1) / 2;
	sim_phase_init(s, PHASE_DECODE, s->batch, 1, out->decode_context, &p);
	out->tpot_s = sim_step(s, m, hw, &p, ph, 1.0);
	sim_phase_init(s, PHASE_DECODE, s->batch, 1, first, &p);
	out->tpot_first_s = sim_step(s, m, hw, &p, NULL, 1.0);
	sim_phase_init(s, PHASE_DECODE, s->batch, 1, last, &p);
	out->tpot_last_s = sim_step(s, m, hw, &p, NULL, 1.0);
	if (out->tpot_s < 0 || out->tpot_first_s < 0 || out->tpot_last_s < 0) {
		err_set(e, s->file, 0, 0, "op list overflow");
		return -E2BIG;
	}
	out->requests_per_gpu = ceil_div64(s->batch, s->dp);

	int64_t decode_peak = ph->peak_act_bytes + attn_res_store_bytes(s, m, out->requests_per_gpu);
	int64_t act = pre->peak_bytes > decode_peak ? pre->peak_bytes : decode_peak;
	int64_t ctx_final = s->prompt_tokens + s->output_tokens;
	sim_hbm(s, m, hw, s->batch, ctx_final, act, &out->hbm);
	out->fits = out->hbm.total <= out->hbm.capacity;
	out->missing_bytes = out->fits ? 0 : out->hbm.total - out->hbm.capacity;

	/* Largest batch at the final context: per-request state and cache, plus decode activations
	 * growing with the batch, in what weights, workspace and the prefill peak leave. */
	struct sim_hbm one;
	sim_hbm(s, m, hw, s->dp, ctx_final, 0, &one); /* one request per DP group */
	int64_t per_req = one.kda_state + one.conv_state + one.mla_kv + one.dsa_index +
			  ceil_div64(decode_peak, out->requests_per_gpu);
	int64_t fixed = one.weights + one.workspace + pre->peak_bytes;
	int64_t free_bytes = out->hbm.capacity - fixed;
	out->max_batch = free_bytes > 0 && per_req > 0 ? (free_bytes / per_req) * s->dp : 0;
	return 0;
}

int sim_run(const struct scenario *s, const struct model *m, const struct hw *hw,
	    struct sim_result *r, struct err *e)
{
	int rc = sim_check(s, m, hw, e);
	if (rc < 0)
		return rc;
	struct sim_prefill_result pre;
	struct sim_decode_result dec;
	if ((rc = sim_prefill(s, m, hw, &r->prefill, &pre, e)) < 0 ||
	    (rc = sim_decode(s, m, hw, &pre, &r->decode, &dec, e)) < 0)
		return rc;
	r->ttft_s = pre.ttft_s;
	r->prefill_chunks = pre.chunks;
	r->tpot_s = dec.tpot_s;
	r->tpot_first_s = dec.tpot_first_s;
	r->tpot_last_s = dec.tpot_last_s;
	r->decode_context = dec.decode_context;
	r->requests_per_gpu = dec.requests_per_gpu;
	r->e2e_s = r->ttft_s + (double)(s->output_tokens - 1) * r->tpot_s;
	r->tokens_per_s = r->tpot_s > 0 ? (double)s->batch / r->tpot_s : 0;
	r->tokens_per_s_per_gpu = r->tokens_per_s / (double)s->gpus;
	r->hbm = dec.hbm;
	r->fits = dec.fits;
	r->missing_bytes = dec.missing_bytes;
	r->max_batch = dec.max_batch;
	return 0;
}
