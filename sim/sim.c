#include "sim/sim.h"

#include "sim/step.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
	p->mixed_tokens = p->mixed_context = 0;
	p->dp_groups = 0;
	p->reference_path = s->path == PATH_REFERENCE;
	p->attnres_fused_allreduce = s->path == PATH_PRODUCTION && s->tp > 1;
	int mode = s->ep_mode != EP_MODE_NONE ? s->ep_mode : kind == PHASE_PREFILL ? EP_MODE_NORMAL : EP_MODE_LOW_LATENCY;
	p->moe_permute = s->ep > 1 && s->moe_tp <= 1 && mode == EP_MODE_NORMAL;
	p->expert_quant_in = s->ep <= 1 && s->act != DT_FP8 && (s->expert_act == DT_FP8 || s->expert_act == DT_MXFP8);
}

void sim_phase_reset(struct sim_phase *ph)
{
	ph->time_s = ph->compute_s = ph->memory_s = ph->latency_s = ph->comm_s = 0;
	ph->step_s = ph->critical_comm_s = ph->critical_compute_s = ph->exposed_comm_s = 0;
	ph->power_busy_s = ph->power_energy_j = ph->power_boost_busy_s = ph->power_boost_energy_j = 0;
	ph->microbatches = 1;
	ph->overlap = OVERLAP_NONE;
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
	if (s->moe_tp > 1 && inv.moe_layers && m->moe.intermediate % s->moe_tp != 0) {
		err_set(e, s->file, 0, 0, "moe_tp %lld does not divide the expert intermediate size %lld of %s",
			(long long)s->moe_tp, (long long)m->moe.intermediate, m->name);
		return -EINVAL;
	}
	if (s->gpus > 1 && s->gpus > hw->domain_gpus && s->moe_tp > hw->domain_gpus) {
		err_set(e, s->file, 0, 0, "moe_tp %lld spans more than one NVLink domain of %s (%lld GPUs)",
			(long long)s->moe_tp, hw->name, (long long)hw->domain_gpus);
		return -EINVAL;
	}
	char why[200];
	if (hw_clock_sel_check(hw, &s->clock, why, sizeof why) < 0) {
		err_set(e, s->file, s->clock_line, s->clock_col, "clock: %s", why);
		return -EINVAL;
	}
	if (s->pp > m->n_layers) {
		err_set(e, s->file, 0, 0, "pp %lld: more pipeline stages than the %d layers of %s", (long long)s->pp,
			m->n_layers, m->name);
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

/* Why sim_step failed, for the error message. */
static const char *step_failure(int rc)
{
	switch (rc) {
	case -ENOMEM:
		return "out of memory";
	case -EINVAL:
		return "an op without a role was mapped (a bug in k3sim)";
	case -EDEADLK:
		return "an overlap strategy deadlocked (a bug in k3sim)";
	default:
		return "op list overflow";
	}
}

void sim_moe_split(const struct scenario *s, struct sim_moe_split *out)
{
	int64_t mtp = s->moe_tp > 1 ? s->moe_tp : 1;
	out->expert_groups = mtp > 1 ? 1 : s->ep;
	out->expert_slices = mtp;
	out->block_tp = mtp > s->tp ? mtp : s->tp;
	out->gather = mtp > s->tp ? mtp / s->tp : 1;
}

/* The GPUs of one request's attention group that divide a state between them. */
static int64_t state_gpus(const struct scenario *s, enum op_state st)
{
	struct op_state_split sp = op_state_split(st);
	return (sp.tp ? s->tp : 1) * (sp.cp ? s->cp : 1);
}

void sim_hbm(const struct scenario *s, const struct model *m, const struct hw *hw, int64_t batch,
	     int64_t context, int64_t activations, struct sim_hbm *out)
{
	struct model_weight_split ws;
	model_weight_split(m, &ws);
	struct model_inventory inv;
	model_inventory(m, &inv);
	struct sim_moe_split ms;
	sim_moe_split(s, &ms);
	int64_t req = ceil_div64(batch, s->dp);
	memset(out, 0, sizeof *out);
	out->weights = ceil_div64(ws.tp_sharded - ws.moe_sharded, s->tp) + ceil_div64(ws.moe_sharded, ms.block_tp) +
		       ws.replicated + ceil_div64(ws.vocab, s->tp) +
		       (int64_t)inv.moe_layers *
			       ceil_div64(ceil_div64(m->moe.experts + s->redundant_experts, ms.expert_groups) * ws.expert_bytes,
					  ms.expert_slices);
	/* Each state over the GPUs that divide it (op_state_split, which the step's ops follow too):
	 * the MLA latent is shared by all heads, so every TP rank holds the whole cache of its
	 * requests; the reference path caches every head's K and V in BF16, split with the heads. */
	out->kda_state = req * ceil_div64(model_kda_state_bytes_per_request(m, s->kda_state),
					  state_gpus(s, OP_STATE_KDA));
	out->conv_state = req * ceil_div64(model_conv_state_bytes_per_request(m, s->kda_state),
					   state_gpus(s, OP_STATE_KDA));
	if (s->path == PATH_REFERENCE)
		out->mla_kv = req * ceil_div64(context * model_mla_expanded_kv_bytes_per_token(m),
					       state_gpus(s, OP_STATE_MLA_PER_HEAD));
	else
		out->mla_kv = req * ceil_div64(context * model_mla_kv_bytes_per_token(m, s->mla_cache),
					       state_gpus(s, OP_STATE_MLA_LATENT));
	out->dsa_index = req * ceil_div64(context * model_dsa_index_bytes_per_token(m),
					  state_gpus(s, OP_STATE_DSA_INDEX));
	if (s->pp > 1) {
		/* A pipeline stage holds its share of the layers (and their state and cache), and the
		 * first or the last stage the embedding or the LM head. */
		int64_t layers = out->weights - ceil_div64(ws.vocab, s->tp);
		out->weights = ceil_div64(layers, s->pp) + ceil_div64(ws.vocab, 2 * s->tp);
		out->kda_state = ceil_div64(out->kda_state, s->pp);
		out->conv_state = ceil_div64(out->conv_state, s->pp);
		out->mla_kv = ceil_div64(out->mla_kv, s->pp);
		out->dsa_index = ceil_div64(out->dsa_index, s->pp);
	}
	out->activations = activations;
	out->workspace = s->reserved_bytes >= 0 ? s->reserved_bytes : hw->reserved_bytes;
	out->total = out->weights + out->kda_state + out->conv_state + out->mla_kv + out->dsa_index +
		     out->activations + out->workspace;
	out->capacity = hw->hbm_bytes;
}

/* Block AttnRes keeps every completed block's representation of each token in flight. */
int64_t sim_attn_res_store_bytes(const struct scenario *s, const struct model *m, int64_t tokens)
{
	if (!m->attn_res_block)
		return 0;
	int64_t sources = (m->n_layers + m->attn_res_block - 1) / m->attn_res_block + 1;
	int64_t bytes = dtype_bytes(model_storage_dtype(s->act), tokens * sources * m->hidden);
	return s->tp_rs_ag ? ceil_div64(bytes, s->tp) : bytes;
}

/* Handing `tokens` tokens' activations from one pipeline stage to the next: over NVLink when a
 * stage and its neighbour fit one NVLink domain, else over the NIC. */
static double pp_hop_s(const struct scenario *s, const struct model *m, const struct hw *hw, int64_t tokens)
{
	double bytes = (double)dtype_bytes(model_storage_dtype(s->act), tokens * m->hidden) / (double)s->tp;
	bool nvlink = 2 * s->tp * s->dp * s->cp <= hw->domain_gpus;
	return nvlink ? bytes / hw->nvlink_bw_bytes_per_s + hw->nvlink_latency_s
		      : bytes / hw->nic_bw_bytes_per_s + hw->nic_latency_s;
}

void sim_prefill_shape(const struct scenario *s, int64_t *batch, int64_t *chunk)
{
	*chunk = s->prefill_chunk;
	*batch = 1;
	if (s->prefill_tokens) {
		*chunk = s->prefill_tokens < s->prompt_tokens ? s->prefill_tokens : s->prompt_tokens;
		*batch = (s->prefill_tokens >= s->prompt_tokens ? s->prefill_tokens / s->prompt_tokens : 1) * s->dp;
	}
}

int sim_prefill(const struct scenario *s, const struct model *m, const struct hw *hw,
		struct sim_phase *ph, struct sim_prefill_result *out, struct err *e)
{
	/* The prompt in chunks. Very long prompts with small chunks are sampled at most 1024 times,
	 * each sample standing for `stride` chunks (the cost is smooth in the prefix). With a token
	 * budget per step (engine.prefill_tokens), every attention DP group fills its step: prompts
	 * that fit are batched, longer ones chunked at the budget. */
	sim_phase_reset(ph);
	out->pp_bubble_s = 0;
	struct phase p;
	double ttft = 0, last_step = 0;
	int64_t chunk, batch;
	sim_prefill_shape(s, &batch, &chunk);
	int64_t chunks = ceil_div64(s->prompt_tokens, chunk);
	int64_t stride = chunks > 1024 ? ceil_div64(chunks, 1024) : 1;
	/* An engine prefills a prompt one way. `auto` where it can matter (EP beyond one NVLink
	 * domain) takes whichever of none and two-batch overlap gives the prompt the shorter TTFT —
	 * the minimum of two times that never fall as the prompt grows, so neither does the choice's
	 * (deciding at one chunk let a 789-token last chunk turn TBO off for the whole prompt: TTFT
	 * fell 10 % from 8981 to 9645 tokens); elsewhere it decides at the middle chunk. */
	struct scenario sp = *s;
	int rc;
	if (s->overlap == OVERLAP_AUTO && s->ep > hw->domain_gpus) {
		static const enum scenario_overlap cand[] = {OVERLAP_NONE, OVERLAP_TBO};
		double best = -1;
		for (int c = 0; c < 2; c++) {
			struct scenario t = *s;
			t.overlap = cand[c];
			double sum = 0;
			for (int64_t i = 0; i < chunks; i += stride) {
				int64_t done = i * chunk;
				int64_t tk = s->prompt_tokens - done < chunk ? s->prompt_tokens - done : chunk;
				double w = (double)(i + stride <= chunks ? stride : chunks - i);
				sim_phase_init(&t, PHASE_PREFILL, batch, tk, done, &p);
				double step;
				rc = sim_step(&t, m, hw, &p, NULL, w, &step);
				if (rc < 0) {
					err_set(e, s->file, 0, 0, "%s", step_failure(rc));
					return rc == -ENOMEM ? -ENOMEM : -E2BIG;
				}
				sum += step * w;
			}
			if (best < 0 || sum < best) {
				best = sum;
				sp.overlap = cand[c];
			}
		}
	} else {
		int64_t mid = chunks / 2 * chunk;
		sim_phase_init(s, PHASE_PREFILL, batch, s->prompt_tokens - mid < chunk ? s->prompt_tokens - mid : chunk,
			       mid, &p);
		rc = sim_step_overlap(s, m, hw, &p, &sp.overlap);
		if (rc < 0) {
			err_set(e, s->file, 0, 0, "%s", step_failure(rc));
			return rc;
		}
	}
	s = &sp;
	for (int64_t i = 0; i < chunks; i += stride) {
		int64_t done = i * chunk;
		int64_t t = s->prompt_tokens - done < chunk ? s->prompt_tokens - done : chunk;
		double w = (double)(i + stride <= chunks ? stride : chunks - i);
		sim_phase_init(s, PHASE_PREFILL, batch, t, done, &p);
		double step;
		rc = sim_step(s, m, hw, &p, ph, w, &step);
		if (rc < 0) {
			err_set(e, s->file, 0, 0, "%s", step_failure(rc));
			return rc == -ENOMEM ? -ENOMEM : -E2BIG;
		}
		ttft += step * w;
		last_step = step;
	}
	if (s->pp > 1) {
		/* Pipeline stages: a chunk passes every stage, each taking its share of the layers and
		 * handing the chunk's activations to the next; chunks follow each other through the
		 * pipeline, so the prompt takes the stages' sum once plus the last chunk's trip
		 * through the other pp - 1 stages (the bubble). */
		double hop = pp_hop_s(s, m, hw, ceil_div64(batch, s->dp) * chunk);
		double stage_last = last_step / (double)s->pp + hop;
		ttft = ttft / (double)s->pp + (double)chunks * hop + (double)(s->pp - 1) * stage_last;
		out->pp_bubble_s = (double)(s->pp - 1) * stage_last;
	}
	ttft += (double)chunks * s->step_overhead_s; /* the host's share of every step */
	out->ttft_s = ttft;
	out->chunks = chunks;
	out->prompts_per_step = batch;
	out->tokens_per_s_per_gpu = ttft > 0 ? (double)(batch * s->prompt_tokens) / (ttft * (double)s->gpus) : 0;
	if (s->pp > 1 && chunks > 0)
		/* in steady state a new prompt's chunks enter as the last ones leave: no bubble */
		out->tokens_per_s_per_gpu = (double)(batch * s->prompt_tokens) /
					    ((ttft - out->pp_bubble_s) * (double)s->gpus);
	int64_t group_tokens = ceil_div64(batch, s->dp) * chunk;
	out->peak_bytes = ph->peak_act_bytes + sim_attn_res_store_bytes(s, m, ceil_div64(group_tokens, s->cp));
	return 0;
}

void sim_draft_model(const struct model *m, int64_t layers, struct model *out)
{
	*out = *m;
	out->n_layers = (int)layers;
	for (int i = 0; i < out->n_layers; i++) {
		out->attn[i] = m->attn[m->n_layers - 1];
		out->ffn[i] = m->ffn[m->n_layers - 1];
	}
}

/* One decode step at `context`: the verify of 1 + draft tokens per request (with a prefill chunk
 * riding along when the engine mixes them), after the draft module ran once per draft token. */
static void decode_phase(const struct scenario *s, int64_t context, struct phase *p)
{
	sim_phase_init(s, PHASE_DECODE, s->batch, 1 + s->mtp_draft_tokens, context, p);
	if (s->mixed_prefill_tokens) {
		p->mixed_tokens = s->mixed_prefill_tokens;
		/* the mean chunk of a prompt prefilled in chunks of this size */
		int64_t rest = s->prompt_tokens - s->mixed_prefill_tokens;
		p->mixed_context = rest > 0 ? rest / 2 : 0;
	}
}

/* One engine step of decode at `context`: 0 and its time in *time_s, or a negative errno. */
static int decode_step(const struct scenario *s, const struct model *m, const struct hw *hw, int64_t context,
		       struct sim_phase *acc, double *time_s)
{
	struct phase p;
	decode_phase(s, context, &p);
	double t;
	int rc = sim_step(s, m, hw, &p, acc, 1.0, &t);
	if (rc < 0)
		return rc;
	if (s->pp > 1)
		/* the stages one after another (decode is not microbatched across stages here) */
		t += (double)(s->pp - 1) * pp_hop_s(s, m, hw, ceil_div64(s->batch, s->dp) * p.tokens + p.mixed_tokens);
	t += s->step_overhead_s; /* one engine step: drafts and verify together */
	*time_s = t;
	if (s->mtp_draft_tokens == 0)
		return 0;
	static _Thread_local struct model draft;
	sim_draft_model(m, s->mtp_draft_layers, &draft);
	sim_phase_init(s, PHASE_DECODE, s->batch, 1, context, &p);
	double d;
	rc = sim_step_rows(s, &draft, hw, &p, acc, (double)s->mtp_draft_tokens, acc ? acc->n_rows : 0, &d);
	if (rc < 0)
		return rc;
	*time_s = t + (double)s->mtp_draft_tokens * d;
	return 0;
}

int sim_decode(const struct scenario *s, const struct model *m, const struct hw *hw,
	       const struct sim_prefill_result *pre, struct sim_phase *ph, struct sim_decode_result *out,
	       struct err *e)
{
	/* TPOT: the decode step's cost is affine in the context, so the step at the mean context
	 * is the mean step. A step yields mtp_acceptance tokens per request. */
	sim_phase_reset(ph);
	int64_t first = s->prompt_tokens, last = s->prompt_tokens + s->output_tokens - 1;
	out->decode_context = first + (s->output_tokens - 1) / 2;
	/* An engine runs a deployment's decode steps one way: `auto` decides at the mean step and
	 * keeps it for the first and the last. */
	struct scenario sd = *s;
	struct phase pm;
	decode_phase(s, out->decode_context, &pm);
	int rc = sim_step_overlap(s, m, hw, &pm, &sd.overlap);
	if (rc < 0) {
		err_set(e, s->file, 0, 0, "%s", step_failure(rc));
		return rc;
	}
	s = &sd;
	double step, step_first, step_last;
	rc = decode_step(s, m, hw, out->decode_context, ph, &step);
	if (rc == 0)
		rc = decode_step(s, m, hw, first, NULL, &step_first);
	if (rc == 0)
		rc = decode_step(s, m, hw, last, NULL, &step_last);
	if (rc < 0) {
		err_set(e, s->file, 0, 0, "%s", step_failure(rc));
		return rc == -ENOMEM ? -ENOMEM : -E2BIG;
	}
	double a = s->mtp_acceptance >= 1 ? s->mtp_acceptance : 1;
	out->step_s = step;
	out->tpot_s = step / a;
	out->tpot_first_s = step_first / a;
	out->tpot_last_s = step_last / a;
	out->requests_per_gpu = ceil_div64(s->batch, s->dp);
	out->mixed_prefill_tokens_per_s_per_gpu =
		s->mixed_prefill_tokens ? (double)(s->mixed_prefill_tokens * s->dp) / (step * (double)s->gpus) : 0;

	int64_t decode_peak = ph->peak_act_bytes + sim_attn_res_store_bytes(s, m, out->requests_per_gpu);
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
	r->prefill_prompts_per_step = pre.prompts_per_step;
	r->pp_bubble_s = pre.pp_bubble_s;
	r->prefill_tokens_per_s_per_gpu = pre.tokens_per_s_per_gpu;
	r->decode_step_s = dec.step_s;
	r->mixed_prefill_tokens_per_s_per_gpu = dec.mixed_prefill_tokens_per_s_per_gpu;
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
