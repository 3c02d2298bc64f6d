/* A step: the model's ops mapped onto one GPU (TP, DP, EP, CP), costed, and laid out on a
 * timeline by an overlap strategy (sim/step.h). */
#include "sim/step.h"

#include "sim/ep.h"
#include "sim/power.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MLA_PREFIX_BLOCK_TOKENS = 65536 };

/* The reference path's KDA prefill is fla's Triton chunk_kda, measured on this project's H200 at
 * 2.25-2.30x the time of the production kernel the model is calibrated on (H = 96, T = 4K-64K and
 * varlen: bench/results/kda-prefill-vs-fla-h200-2026-11-29/README.md). */
#define FLA_CHUNK_KDA_OVER_PRODUCTION 2.27

static int64_t ceil_div64(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : a;
}

/* ---- ops a strategy treats specially ---- */

enum { TLOP_DOWN = 1, TLOP_ATTNRES_ATTN = 2, TLOP_ATTNRES_FFN = 4, TLOP_RING = 8, TLOP_KVB = 16, TLOP_ATTN = 32 };

static uint8_t tlop_flags(enum op_role r)
{
	switch (r) {
	case OP_ROLE_MOE_EXPERTS_DOWN:
		return TLOP_DOWN; /* pipelined with the combine in chunks */
	case OP_ROLE_ATTNRES_PRE_ATTN:
		return TLOP_ATTNRES_ATTN; /* the inter-block pass can run on the side stream */
	case OP_ROLE_ATTNRES_PRE_FFN:
		return TLOP_ATTNRES_FFN;
	case OP_ROLE_CP_MLA_KV_RING:
		return TLOP_RING; /* issued with the blocks it feeds */
	case OP_ROLE_MLA_KV_B:
		return TLOP_KVB;
	case OP_ROLE_MLA_ATTN:
	case OP_ROLE_DSA_ATTN:
		return TLOP_ATTN;
	default:
		return 0;
	}
}

/* ---- strategies (data) ---- */

enum { R_YIELD = OP_PART_COUNT, R_YIELD_COMM, MAX_ORDER = 24, MAX_CHUNKS = 8 };

/* SMs a strategy keeps for communication (the timeline's SM partition, sim/timeline.h). */
enum reserve {
	RESERVE_NONE, /* compute kernels launched on every SM: communication waits for SMs to free */
	RESERVE_EP,   /* compute launched on the SMs DeepEP's normal kernels leave (num_sms): none
		       * with low-latency kernels (they hold no SMs) nor with NCCL's all-to-all */
};

struct overlap_spec {
	int microbatches;    /* 1, or 2 */
	int delta_stages;    /* stages the first microbatch runs before the second starts */
	bool comm_stream;    /* collectives on their own stream; false: on the compute stream */
	int combine_chunks;  /* > 1: expert down GEMM and combine pipelined in this many chunks */
	int8_t reserve;      /* enum reserve */
	int n;
	int8_t order[MAX_ORDER]; /* parts of a layer in issue order; R_YIELD ends a stage, R_YIELD_COMM
				  * ends one when the part before ended with a collective */
};

#define A OP_PART_ATTN_PREP
#define C OP_PART_ATTN_CORE
#define M OP_PART_MLP_PREP
#define F OP_PART_DENSE
#define D OP_PART_DISPATCH
#define S OP_PART_SHARED
#define X OP_PART_EXPERTS
#define B OP_PART_COMBINE
#define O OP_PART_OUTPUT
#define R OP_PART_RESIDUAL
#define Y R_YIELD
#define YC R_YIELD_COMM
/* [strategy][phase: prefill, decode]. The two-batch-overlap rows follow SGLang's operation lists
 * for DeepSeek (python/sglang/srt/two_batch_overlap.py and operations_strategy.py, "deepseek blog"
 * strategies, 2025): in prefill both microbatches start together and each yields after sending
 * its dispatch and its combine (DeepEP normal kernels on their own stream); in decode the second
 * microbatch runs two stages behind, the first yields after the attention prologue, after the
 * router, after sending the dispatch with the shared experts, after sending the combine, and once
 * more while its combine arrives. Single-batch overlap: the shared experts compute while the
 * dispatch flies and the combine leaves as the down GEMM finishes expert blocks (SGLang's SBO,
 * here 4 chunks). YC: the other microbatch runs while a TP collective flies (attention TP > 1).
 * SMs: SGLang's prefill strategy launches DeepGEMM on total - DeepEPConfig.num_sms SMs
 * (deep_gemm_num_sms; DeepEP's Buffer.num_sms defaults to 20, its tests run 24; DeepSeek-V3's
 * report, section 3.2.2: 20 of 132 SMs for communication), its decode strategy reserves none
 * (deep_gemm_num_sms = None: the low-latency kernels hold no SMs while the transfer flies), and
 * SBO runs the overlapped GEMMs on total - the combine's SMs (compute_num_sms). A plain NCCL +
 * cuBLAS overlap reserves nothing (measured on two H200s: docs/perf/x2-overlap-kcp-2026-12-01.md). */
static const struct overlap_spec overlap_specs[OVERLAP_COUNT][2] = {
	[OVERLAP_NONE] = {
		{1, 0, false, 1, RESERVE_NONE, 10, {A, C, M, F, D, X, B, S, O, R}},
		{1, 0, false, 1, RESERVE_NONE, 10, {A, C, M, F, D, X, B, S, O, R}},
	},
	[OVERLAP_TBO] = {
		{2, 0, true, 1, RESERVE_EP, 14, {A, C, YC, M, F, D, Y, X, B, Y, S, O, YC, R}},
		{2, 2, true, 1, RESERVE_NONE, 17, {A, Y, C, YC, M, F, Y, D, S, Y, X, B, Y, Y, O, YC, R}},
	},
	[OVERLAP_SBO] = {
		{1, 0, true, 4, RESERVE_EP, 10, {A, C, M, F, D, S, X, B, O, R}},
		{1, 0, true, 4, RESERVE_EP, 10, {A, C, M, F, D, S, X, B, O, R}},
	},
};
#undef A
#undef C
#undef M
#undef F
#undef D
#undef S
#undef X
#undef B
#undef O
#undef R
#undef Y
#undef YC

/* ---- mapping ops onto one GPU ---- */

/* One op instance on one GPU, as the timeline needs it. */
struct tl_op {
	const char *name;
	double work_s;
	float sm, hbm, tail;
	int8_t part, group;  /* enum op_part of its role; layer group */
	bool comm;
	uint8_t flags;         /* TLOP_*: ops a strategy treats specially */
	int16_t row;           /* its row in the phase's op table */
};

struct mapped {
	struct tl_op ops[SIM_MAX_OPS];
	int n;
	int64_t peak_act;
	double ops_s;          /* all instances one after another */
	double comm_ops_s;     /* the collectives among them */
	/* per (layer group + 1, part): the ops in list order */
	int16_t first[5][OP_PART_COUNT], count[5][OP_PART_COUNT];
	int16_t order[SIM_MAX_OPS];
	bool has_combine[5];
};

struct mapper {
	const struct scenario *s;
	const struct model *m;
	const struct hw *hw;
	const struct phase *p;
	struct cost_opts opts;
	struct sim_phase *acc;
	double weight;
	int index; /* position in the mapped list: rows line up across chunks and microbatches */
	struct mapped *out;
	int overflow;
	int unroled; /* an op without a role was mapped (a bug where it was created) */
	/* the power regime (sim/power.h), by position in out->ops: the first pass collects each
	 * op's times at boost and at the floor (power_ops), the second costs each at the clock the
	 * controller gave it (power_clock_hz); both NULL in any other regime */
	struct sim_power_op *power_ops;
	const double *power_clock_hz;
};

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

void sim_op_demands(const struct hw *hw, const struct op *o, const struct op_cost *c, struct sim_demands *out)
{
	double t = c->time_s > 0 ? c->time_s : 1;
	out->tail = 0;
	if (op_is_comm(o->kind)) {
		out->sm = (float)fmin(1, sim_ep_sms(o) / (double)hw->sms);
		out->hbm = (float)fmin(1, 2.0 * (double)o->comm_bytes / (t * hw->hbm_bw_bytes_per_s));
		return;
	}
	out->hbm = (float)fmin(1, c->memory_s / t);
	if (o->kind == OP_GEMM || o->kind == OP_GROUPED_GEMM) {
		/* a GEMM of a wave of tiles or more holds every SM (persistent kernels: one CTA per SM,
		 * each with its share of the tiles) and progresses with the SMs it gets, memory-bound
		 * or not; fewer tiles, their share. Its CTAs retire in its last wave. */
		bool full = !(c->waves > 0 && c->waves < 1);
		out->sm = (float)(full ? 1 : c->waves);
		out->tail = (float)(full && c->waves >= 1 ? 1 / ceil(c->waves) : 0);
		return;
	}
	double need = fmax(c->compute_s, 0.5 * c->memory_s) / t;
	if (c->waves > 0 && c->waves < 1)
		need *= c->waves;
	out->sm = (float)fmin(1, need);
}

static void op_time(const struct mapper *mp, const struct op *o, const struct cost_opts *opts, struct op_cost *c)
{
	sim_op_cost_ep(mp->hw, o, opts, c);
	if (mp->p->reference_path && o->kind == OP_KDA_CHUNK) {
		c->time_s *= FLA_CHUNK_KDA_OVER_PRODUCTION;
		c->cycles *= FLA_CHUNK_KDA_OVER_PRODUCTION;
		c->latency_s *= FLA_CHUNK_KDA_OVER_PRODUCTION;
	}
}

static void account(struct mapper *mp, const struct op *o)
{
	struct op_cost c;
	struct cost_opts opts = mp->opts;
	const int at = mp->out->n;
	const bool comm = op_is_comm(o->kind);
	if (mp->power_clock_hz && at < SIM_MAX_OPS && !comm && mp->power_clock_hz[at] < mp->hw->sm_clock_hz)
		opts.clock = (struct hw_clock_sel){.given_hz = mp->power_clock_hz[at]};
	op_time(mp, o, &opts, &c);
	if (mp->power_ops && at < SIM_MAX_OPS) {
		struct op_cost cf = c;
		if (!comm) {
			opts.clock = (struct hw_clock_sel){.given_hz = mp->hw->power_min_sm_clock_hz};
			opts.full_clock_scaling = true; /* the class's clock_bound: sim_power_time_s */
			op_time(mp, o, &opts, &cf);
		}
		/* (the FLOPs as their energy counts them: until 2026-12-06 the raw FLOPs here, so the
		 * step ignored power_flop_fp8_scale, which `k3sim op` applied) */
		sim_power_op_from(mp->hw, o, c.time_s, cf.time_s, &mp->power_ops[at]);
	}
	int64_t act = o->bytes_act_in + o->bytes_act_out;
	/* MLA prefill expands the cached prefix into per-head K/V block by block (64K tokens at a
	 * time, as chunked-prefix kernels do): the traffic is all there, the live buffer is not. */
	int64_t keys = o->kind == OP_MLA_PREFILL ? o->b * (o->ctx + o->t)
		       : o->role == OP_ROLE_MLA_KV_B ? o->m : 0;
	if (keys > MLA_PREFIX_BLOCK_TOKENS)
		act = (int64_t)((double)act * (double)MLA_PREFIX_BLOCK_TOKENS / (double)keys);
	struct mapped *out = mp->out;
	if (act > out->peak_act)
		out->peak_act = act;
	out->ops_s += c.time_s * (double)o->layers;
	if (op_is_comm(o->kind))
		out->comm_ops_s += c.time_s * (double)o->layers;
	int i = mp->index++;
	if (out->n == SIM_MAX_OPS) {
		mp->overflow = 1;
		return;
	}
	struct tl_op *t = &out->ops[out->n++];
	t->name = o->name;
	t->work_s = c.time_s;
	t->flags = tlop_flags(o->role);
	t->part = (int8_t)op_role_part(o->role);
	t->group = (int8_t)o->layer_group;
	t->comm = op_is_comm(o->kind);
	t->row = (int16_t)i;
	struct sim_demands d;
	sim_op_demands(mp->hw, o, &c, &d);
	t->sm = d.sm;
	t->hbm = d.hbm;
	t->tail = d.tail;
	if (o->role == OP_ROLE_NONE) /* an op created without a role: a bug */
		mp->unroled = 1;

	struct sim_phase *ph = mp->acc;
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

static void collective(struct mapper *mp, enum op_kind kind, enum op_role role, const struct op *after,
		       int64_t bytes, int64_t ranks)
{
	if (ranks <= 1 || bytes <= 0)
		return;
	struct op o;
	memset(&o, 0, sizeof o);
	o.kind = kind;
	o.role = role;
	o.name = op_role_name(role);
	o.layers = after->layers;
	o.layer_group = after->layer_group;
	o.split = op_role_split(role);
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
		collective(mp, OP_ALLGATHER, OP_ROLE_TP_LOGITS_GATHER, o,
			   dtype_bytes(o->o_dtype, o->m * mp->m->vocab),
			   s->tp);
		return;
	case SYNC_TP_EMBED:
		collective(mp, OP_ALLREDUCE, OP_ROLE_TP_EMBED_ALLREDUCE, o, act, s->tp);
		return;
	default:
		break;
	}
	bool attn = o->sync == SYNC_TP_ATTN;
	if (s->tp_rs_ag) {
		collective(mp, OP_REDUCESCATTER, attn ? OP_ROLE_TP_ATTN_REDUCE_SCATTER : OP_ROLE_TP_FFN_REDUCE_SCATTER,
			   o, act, s->tp);
		collective(mp, OP_ALLGATHER, attn ? OP_ROLE_TP_ATTN_ALL_GATHER : OP_ROLE_TP_FFN_ALL_GATHER, o, act,
			   s->tp);
	} else {
		collective(mp, OP_ALLREDUCE, attn ? OP_ROLE_TP_ATTN_ALLREDUCE : OP_ROLE_TP_FFN_ALLREDUCE, o, act, s->tp);
	}
}

/* The busiest EP rank's share of the routing: its rows over the mean, the larger of the
 * scenario's skew (moe_imbalance) and the spread of random routing (the largest of `ranks`
 * Poisson counts of mean `rows`, about rows + sqrt(2 rows ln ranks)); and the experts it holds
 * that get a row, the mean plus the spread over ranks of a binomial count of its skewed share of
 * the tokens (at small batch most experts get none, and the busiest rank reads more weights). */
static void busiest_rank(const struct scenario *s, const struct model_moe *x, double tokens, double *rows_ratio,
			 double *touched)
{
	double R = (double)s->ep, held = (double)ceil_div64(x->experts + s->redundant_experts, s->ep);
	double rows = tokens * (double)x->top_k / R;
	double spread = R > 1 && rows > 0 ? 1 + sqrt(2 * log(R) / rows) : 1;
	*rows_ratio = fmax(s->moe_imbalance, spread);
	double t = tokens * (R > 1 ? fmin(*rows_ratio, R) : 1);
	double p = x->experts > 0 ? 1 - pow(1 - (double)x->top_k / (double)x->experts, t) : 0;
	double mean = held * p;
	*touched = fmin(held, mean + (R > 1 ? sqrt(held * p * (1 - p) * 2 * log(R)) : 0));
}

int sim_kcp_ops(const struct op *kda, int64_t cp, enum dtype act, struct op out[SIM_KCP_OPS])
{
	if (cp <= 1 || kda->kind != OP_KDA_CHUNK)
		return 0;
	/* every rank but the first runs its segment twice: from a zero state (kda), then with v = 0
	 * from the identity, v = K wide: its final state is the transition, its outputs the
	 * effective queries */
	struct op *tr = &out[0];
	*tr = *kda;
	tr->role = OP_ROLE_KCP_TRANSITION;
	tr->name = op_role_name(tr->role);
	tr->split = op_role_split(tr->role);
	tr->sync = SYNC_NONE;
	tr->dv = kda->dk;
	tr->ctx = kda->ctx > 0 ? kda->ctx : 1; /* it reads its initial state: the identity */
	op_fill(tr);
	/* all-gather per head the transition (K x K) and the zero-start state (V x K), FP32: the
	 * bytes do not grow with the context */
	struct op *ag = &out[1];
	memset(ag, 0, sizeof *ag);
	ag->kind = OP_ALLGATHER;
	ag->role = OP_ROLE_KCP_STATE_ALLGATHER;
	ag->name = op_role_name(ag->role);
	ag->layers = kda->layers;
	ag->layer_group = kda->layer_group;
	ag->split = op_role_split(ag->role);
	ag->comm_bytes = kda->b * kda->h * (kda->dk * kda->dk + kda->dk * kda->dv) * 4 * cp;
	ag->ranks = cp;
	/* the ordered scan: S_r = T_r S_(r-1) + S_r over the segments before this rank's (half of
	 * them on average), a K x K by K x V product per head each, in FP32 */
	struct op *scan = &out[2];
	memset(scan, 0, sizeof *scan);
	scan->kind = OP_GEMM;
	scan->role = OP_ROLE_KCP_SCAN;
	scan->name = op_role_name(scan->role);
	scan->layers = kda->layers;
	scan->layer_group = kda->layer_group;
	scan->m = ceil_div64(cp, 2) * kda->b * kda->h * kda->dk;
	scan->n = kda->dv;
	scan->k = kda->dk;
	scan->w_dtype = scan->a_dtype = scan->o_dtype = DT_FP32;
	op_fill(scan);
	/* the fix-up o_t += S_in^T q_eff,t in the measured form: an FP32 GEMM on the SIMT units
	 * (kcp-x2's fixup_kernel; sim/cost.c costs FP32 math without a tensor path there) */
	struct op *fix = &out[3];
	memset(fix, 0, sizeof *fix);
	fix->kind = OP_GEMM;
	fix->role = OP_ROLE_KCP_FIXUP;
	fix->name = op_role_name(fix->role);
	fix->layers = kda->layers;
	fix->layer_group = kda->layer_group;
	fix->m = kda->b * kda->t;
	fix->n = kda->h * kda->dv;
	fix->k = kda->dk;
	fix->w_dtype = DT_FP32;
	fix->a_dtype = act;
	fix->o_dtype = act;
	op_fill(fix);
	return SIM_KCP_OPS;
}

/* A tensor-parallel MoE over moe_tp > tp GPUs (DP attention) gathers the tokens of moe_tp / tp
 * attention DP groups before the MoE and reduces its output back after it, as SGLang's
 * dp_attention.py does (DpPaddingMode): a step with prefill in it pads every group's rows to the
 * sum of them and gathers by an all-reduce, then all-reduces the output (SUM_LEN); otherwise the
 * rows are padded to the largest group's and all-gathered, the output reduce-scattered (MAX_LEN),
 * unless the sum is less than half the padded size (then SUM_LEN). */
struct moe_gather {
	bool sum_len;
	int64_t rows;        /* rows the MoE of one GPU processes, padding included */
};

static void moe_gather_mode(const struct sim_moe_split *ms, bool extend, int64_t tokens_local, int64_t tokens_global,
			    struct moe_gather *out)
{
	int64_t sum = tokens_local * ms->gather < tokens_global ? tokens_local * ms->gather : tokens_global;
	int64_t padded = tokens_local * ms->gather;
	out->sum_len = ms->gather > 1 && (extend || 2 * sum < padded);
	out->rows = ms->gather <= 1 ? tokens_local : out->sum_len ? sum : padded;
}

/* Attention DP groups the step's batch spreads over (struct phase.dp_groups). */
static int64_t active_groups(const struct scenario *s, const struct phase *p)
{
	return p->dp_groups > 0 && p->dp_groups < s->dp ? p->dp_groups : s->dp;
}

static bool is_moe_op(const struct op *o)
{
	return op_role_block(o->role) == OP_BLOCK_MOE;
}

/* The ops of a step of phase p, costed, into out (map_step); with power_ops, each one's times for
 * the controller; with power_clock_hz, each at its clock. */
static int map_ops(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		   bool busiest, struct sim_phase *acc, double weight, int row_base, struct sim_power_op *power_ops,
		   const double *power_clock_hz, struct mapped *out)
{
	const bool prefill = p->kind == PHASE_PREFILL;
	const int64_t cp = prefill ? s->cp : 1;
	const int64_t dp = active_groups(s, p);
	const int64_t b_local = ceil_div64(p->batch, dp);
	const int64_t t_local = ceil_div64(p->tokens, cp);
	const int64_t mixed = prefill ? 0 : p->mixed_tokens; /* per DP group, every active group */
	/* attention groups holding the step's tokens (a single prefill lives on one DP group) */
	const int64_t groups = mixed ? dp : p->batch < dp ? p->batch : dp;
	const int64_t tokens_global = p->batch * p->tokens + mixed * dp;
	const struct model_moe *x = &m->moe;
	double rows_ratio = 1, touched_busiest = 0;
	busiest_rank(s, x, (double)tokens_global, &rows_ratio, &touched_busiest);
	const double comm_ratio = rows_ratio; /* a dispatch or combine ends with its busiest receiver */
	if (!busiest)
		rows_ratio = 1;

	struct phase local = *p;
	local.batch = b_local;
	local.tokens = t_local;
	static _Thread_local struct op_list list;
	if (model_build_ops(m, &local, &list) < 0)
		return -E2BIG;

	out->n = 0;
	out->peak_act = 0;
	out->ops_s = out->comm_ops_s = 0;
	struct mapper mp = {.s = s, .m = m, .hw = hw, .p = p, .acc = acc, .weight = weight, .index = row_base,
			    .out = out, .power_ops = power_ops, .power_clock_hz = power_clock_hz};
	mp.opts.cuda_graph = !prefill && s->cuda_graph;
	mp.opts.clock = s->clock;
	const int64_t tokens_local = b_local * t_local + mixed;
	bool cp_gathered = false; /* the MLA CP gather of this layer group came before its kv_b */
	struct sim_moe_split ms;
	sim_moe_split(s, &ms);
	const bool moe_tp = ms.expert_slices > 1;
	struct moe_gather mg;
	moe_gather_mode(&ms, prefill || mixed > 0, tokens_local, tokens_global, &mg);
	const int64_t act_bytes = dtype_bytes(model_storage_dtype(p->act), m->hidden);

	for (int i = 0; i < list.n; i++) {
		struct op o = list.ops[i];
		const bool in_moe = moe_tp && is_moe_op(&o);
		if (in_moe && ms.gather > 1 && (i == 0 || !is_moe_op(&list.ops[i - 1])))
			collective(&mp, mg.sum_len ? OP_ALLREDUCE : OP_ALLGATHER, OP_ROLE_MOE_DP_GATHER, &o, mg.rows * act_bytes,
				   ms.expert_slices);
		if (in_moe && o.split != SPLIT_EP && o.m == tokens_local)
			o.m = mg.rows; /* token-wise ops of the MoE block run on the gathered rows */
		/* the MoE block's tensor-parallel ops split over the MoE's group */
		const int64_t tp_split = in_moe ? ms.block_tp : s->tp;
		switch (o.split) {
		case SPLIT_TP_N:
			if (o.kind == OP_GEMM || o.kind == OP_ELEMENTWISE || o.kind == OP_SHORT_CONV || o.kind == OP_QUANT)
				o.n = ceil_div64(o.n, tp_split);
			else
				o.h = ceil_div64(o.h, tp_split);
			/* the state or cache, where tensor parallelism divides it (op_state_split): a KDA
			 * state through its heads (h above), its ShortConv state and a per-head cache
			 * here; a latent cache stays whole on every TP rank */
			if (op_state_split(o.cache).tp) {
				if (o.kind != OP_KDA_CHUNK && o.kind != OP_KDA_DECODE)
					o.cache_bytes_per_token = ceil_div64(o.cache_bytes_per_token, tp_split);
				o.extra_state_bytes /= tp_split;
			}
			break;
		case SPLIT_TP_K:
			o.k = ceil_div64(o.k, tp_split);
			break;
		case SPLIT_EP: {
			if (moe_tp) {
				/* every GPU: all of its group's rows, a 1/moe_tp slice of every expert */
				o.m = mg.rows * x->top_k;
				if (o.kind == OP_GROUPED_GEMM) {
					o.expert_cv = s->moe_expert_cv;
					o.groups = x->experts;
					o.groups_touched = experts_touched((double)x->experts, (double)x->experts,
									   (double)x->top_k, (double)mg.rows);
					if (o.role == OP_ROLE_MOE_EXPERTS_DOWN)
						o.k = o.k / ms.expert_slices;
					else
						o.n = o.n / ms.expert_slices;
				} else {
					o.n = o.n / ms.expert_slices;
				}
				break;
			}
			double rows = (double)tokens_global * (double)x->top_k * rows_ratio / (double)s->ep;
			o.m = (int64_t)ceil(rows);
			if (o.kind == OP_GROUPED_GEMM) {
				o.expert_cv = s->moe_expert_cv;
				o.groups = ceil_div64(x->experts + s->redundant_experts, s->ep);
				o.groups_touched = busiest ? touched_busiest
							   : experts_touched((double)o.groups, (double)x->experts,
									     (double)x->top_k, (double)tokens_global);
			}
			break;
		}
		case SPLIT_COMM: {
			if (s->ep <= 1)
				continue;
			/* The attention GPUs that hold the step's tokens each send their share, once per
			 * EP rank a token reaches, at the latent width; FP8 rows carry their scales. The
			 * busiest EP rank receives comm_ratio times the balanced share. */
			double senders = (double)(groups * s->tp * cp);
			double send = (double)tokens_global / senders, recv = (double)tokens_global / (double)s->ep;
			int64_t width = o.a_dtype == DT_FP8 ? o.n + 4 * ceil_div64(o.n, 128)
							    : dtype_bytes(o.a_dtype, o.n);
			double rows = fmax(send * model_ep_ranks_per_token(x, s->ep, 1.0),
					   recv * model_ep_ranks_per_token(x, s->ep, comm_ratio));
			double bytes = ceil(rows * (double)width);
			o.comm_bytes = bytes > (double)OP_ELEMENTS_MAX ? OP_ELEMENTS_MAX + 1 : (int64_t)bytes;
			o.ranks = s->ep;
			o.m = o.n = o.k = 0;
			o.ep.mode = s->ep_mode != EP_MODE_NONE ? (enum op_ep_mode)s->ep_mode
				    : prefill                  ? EP_MODE_NORMAL
							       : EP_MODE_LOW_LATENCY;
			o.ep.tokens = send;
			o.ep.recv_tokens = recv;
			o.ep.experts = x->experts;
			o.ep.top_k = x->top_k;
			o.ep.row_bytes = width;
			o.ep.node_limit = s->ep_node_limit;
			o.ep.rows_ratio = comm_ratio;
			o.ep.sms = (int)s->ep_sms;
			break;
		}
		case SPLIT_NONE:
			break;
		}
		if (cp > 1) {
			/* MLA context parallel: the cache is sharded over the CP ranks, so every chunk
			 * gathers the latent of the prefix and of the chunk from the others (all-gather,
			 * or a ring of blocks overlapped with their expansion and attention: bytes grow
			 * with the context), every rank expands all visible keys, and queries are split
			 * zig-zag, so a rank sees on average half of the other ranks' tokens. The gather
			 * comes before the expansion (production) or the attention (DSA, reference). */
			bool kvb = o.role == OP_ROLE_MLA_KV_B;
			bool attn = o.kind == OP_MLA_PREFILL || o.kind == OP_DSA_PREFILL;
			/* the expansion's input cast and the key it builds run over every visible token too */
			bool kv_rows = kvb || o.role == OP_ROLE_MLA_QUANT_KV_B || o.role == OP_ROLE_MLA_K_CONCAT;
			if (kv_rows && !p->reference_path)
				o.m = b_local * (p->context + p->tokens);
			if ((kvb && !p->reference_path) || (attn && !cp_gathered)) {
				int64_t cache_bpt = o.cache_bytes_per_token;
				int j = i + 1;
				while (kvb && j < list.n - 1 && list.ops[j].kind != OP_MLA_PREFILL)
					j++;
				if (kvb) /* the attention op's, which follows */
					cache_bpt = list.ops[j < list.n ? j : i].cache_bytes_per_token;
				collective(&mp, OP_ALLGATHER, s->mla_cp_ring ? OP_ROLE_CP_MLA_KV_RING : OP_ROLE_CP_MLA_KV_ALLGATHER, &o,
					   b_local * (p->context + p->tokens) * cache_bpt, cp);
				cp_gathered = kvb;
			} else if (attn) {
				cp_gathered = false;
			}
			if (attn)
				o.ctx = p->context + (p->tokens - t_local) / 2;
		}
		if (!prefill && s->cp > 1 && (o.kind == OP_MLA_DECODE || o.kind == OP_DSA_DECODE) &&
		    op_state_split(o.cache).cp) {
			/* Decode over a context-parallel cache (op_state_split: MLA and DSA caches are
			 * sharded by tokens): each rank attends over its shard, then the partial outputs
			 * and their log-sum-exps are gathered and merged. */
			o.ctx = ceil_div64(o.ctx, s->cp);
			collective(&mp, OP_ALLGATHER, OP_ROLE_CP_ATTN_MERGE, &o,
				   s->cp * b_local * o.t * o.h * (o.dv + 1) * 4, s->cp);
		}
		op_fill(&o);
		account(&mp, &o);
		if (in_moe && o.role == OP_ROLE_MOE_EXPERTS_DOWN && x->latent != m->hidden)
			/* the latent RMSNorm after the combine needs whole rows: sum the partial latents */
			collective(&mp, OP_ALLREDUCE, OP_ROLE_MOE_TP_LATENT_ALLREDUCE, &o,
				   dtype_bytes(model_storage_dtype(p->act), mg.rows * x->latent), ms.expert_slices);
		if (in_moe && ms.gather > 1 && o.sync == SYNC_TP_FFN) {
			/* the partial sums reduced, each attention group taking its rows back */
			collective(&mp, mg.sum_len ? OP_ALLREDUCE : OP_REDUCESCATTER,
				   mg.sum_len ? OP_ROLE_MOE_DP_REDUCE : OP_ROLE_MOE_DP_REDUCE_SCATTER, &o, mg.rows * act_bytes,
				   ms.expert_slices);
			if (!mg.sum_len)
				collective(&mp, OP_ALLGATHER, OP_ROLE_MOE_ATTN_TP_GATHER, &o, tokens_local * act_bytes, s->tp);
		} else {
			tp_sync(&mp, &o, tokens_local);
		}

		if (cp > 1 && o.kind == OP_KDA_CHUNK) {
			struct op kcp[SIM_KCP_OPS];
			int n = sim_kcp_ops(&o, cp, model_storage_dtype(p->act), kcp);
			for (int k = 0; k < n; k++)
				account(&mp, &kcp[k]);
		}
	}
	if (mp.overflow)
		return -E2BIG;
	if (mp.unroled)
		return -EINVAL;

	/* index the ops by (layer group, part), keeping list order */
	memset(out->count, 0, sizeof out->count);
	memset(out->has_combine, 0, sizeof out->has_combine);
	for (int i = 0; i < out->n; i++) {
		const struct tl_op *t = &out->ops[i];
		if (t->group < -1 || t->group > 3)
			return -E2BIG;
		out->count[t->group + 1][t->part]++;
		if (t->part == OP_PART_COMBINE)
			out->has_combine[t->group + 1] = true;
	}
	int16_t at = 0;
	for (int g = 0; g < 5; g++)
		for (int r = 0; r < OP_PART_COUNT; r++) {
			out->first[g][r] = at;
			at = (int16_t)(at + out->count[g][r]);
			out->count[g][r] = 0;
		}
	for (int i = 0; i < out->n; i++) {
		const struct tl_op *t = &out->ops[i];
		int g = t->group + 1;
		out->order[out->first[g][t->part] + out->count[g][t->part]++] = (int16_t)i;
	}
	return 0;
}

/* Calls fn(i, ctx) for each op instance of the step, i its index in mm->ops, in the order the
 * instances run on one GPU: the ops before the layers, each layer's in list order, those after. */
static void step_walk(const struct model *m, const int8_t *group_of, const struct mapped *mm,
		      void (*fn)(int i, void *ctx), void *ctx)
{
	for (int pass = 0; pass < m->n_layers + 2; pass++) {
		bool post = pass == m->n_layers + 1;
		int g = pass == 0 || post ? -1 : group_of[pass - 1];
		for (int i = 0; i < mm->n; i++) {
			const struct tl_op *t = &mm->ops[i];
			if (t->group == g && (g >= 0 || (t->part == OP_PART_POST) == post))
				fn(i, ctx);
		}
	}
}

struct power_walk {
	const struct hw *hw;
	const struct sim_power_op *ops;
	struct sim_power_state *st;
	double *time_s;
	int *count;
};

static void power_step_op(int i, void *ctx)
{
	struct power_walk *w = ctx;
	w->time_s[i] += sim_power_run(w->hw, w->st, &w->ops[i], NULL);
	w->count[i]++;
}

/* The controller over the step from state st (updated), in the order its instances run
 * (step_walk): each op's time summed over its instances, and their count. */
static void power_pass(const struct hw *hw, const struct model *m, const int8_t *group_of, const struct mapped *mm,
		       const struct sim_power_op *ops, struct sim_power_state *st, double *time_s, int *count)
{
	memset(time_s, 0, (size_t)mm->n * sizeof *time_s);
	memset(count, 0, (size_t)mm->n * sizeof *count);
	struct power_walk w = {.hw = hw, .ops = ops, .st = st, .time_s = time_s, .count = count};
	step_walk(m, group_of, mm, power_step_op, &w);
}

struct seq_walk {
	int *seq;
	size_t n;
};

static void seq_step_op(int i, void *ctx)
{
	struct seq_walk *w = ctx;
	w->seq[w->n++] = i;
}

/* The power regime under the window limiter: the step's op instances in the order they run
 * (step_walk), repeated back to back (steps of a run follow each other; a graph's replays too), each
 * instance at its window's clock; an op of several layers gets the clock of its mean time over
 * them. 0, or -ENOMEM (the caller falls back to the controller). */
static int window_clocks(const struct hw *hw, const struct model *m, const int8_t *group_of, const struct mapped *mm,
			 const struct sim_power_op *ops, double *clock_hz)
{
	size_t cap = (size_t)mm->n * ((size_t)m->n_layers + 2);
	int *seq = malloc((cap ? cap : 1) * sizeof *seq);
	double *hz = malloc((cap ? cap : 1) * sizeof *hz);
	int rc = -ENOMEM;
	if (!seq || !hz)
		goto out;
	struct seq_walk sw = {.seq = seq};
	step_walk(m, group_of, mm, seq_step_op, &sw);
	const size_t n = sw.n;
	rc = sim_power_window_clocks(hw, ops, seq, NULL, n, true, hz);
	if (rc < 0)
		goto out;
	static _Thread_local double time_s[SIM_MAX_OPS];
	static _Thread_local int count[SIM_MAX_OPS];
	memset(time_s, 0, (size_t)mm->n * sizeof *time_s);
	memset(count, 0, (size_t)mm->n * sizeof *count);
	for (size_t k = 0; k < n; k++) {
		time_s[seq[k]] += sim_power_time_s(hw, &ops[seq[k]], hz[k]);
		count[seq[k]]++;
	}
	for (int i = 0; i < mm->n; i++)
		clock_hz[i] = count[i] ? sim_power_clock_for(hw, &ops[i], time_s[i] / count[i]) : hw->sm_clock_hz;
out:
	free(hz);
	free(seq);
	return rc;
}

/* The power regime: each op's clock from the controller run over the step (power_pass) from an
 * idle GPU (a prefill, an eager decode step); an op of several layers gets the clock of its mean
 * time over them. Steps replayed back to back (steady: decode as CUDA graphs) are a steady state,
 * not a step after idle: the limiter lowers and recovers its clock over tens to hundreds of ms
 * (bench/results/k3-kernels-h200-2026-12-02w/README.md), so it holds one clock over the step's
 * mix, where the step's mean draw meets the limit (sim_power_mix_hz). */
static void power_clocks(const struct hw *hw, const struct model *m, const struct mapped *mm,
			 const struct sim_power_op *ops, bool steady, double *clock_hz)
{
	static _Thread_local double time_s[SIM_MAX_OPS];
	static _Thread_local int count[SIM_MAX_OPS];
	int8_t group_of[MODEL_MAX_LAYERS];
	model_layer_groups(m, group_of);
	if (sim_power_windowed(hw) && window_clocks(hw, m, group_of, mm, ops, clock_hz) == 0)
		return;
	struct sim_power_state st;
	sim_power_idle(hw, &st);
	power_pass(hw, m, group_of, mm, ops, &st, time_s, count);
	if (steady) {
		double hz = sim_power_mix_hz(hw, ops, count, mm->n);
		for (int i = 0; i < mm->n; i++)
			clock_hz[i] = hz;
		return;
	}
	for (int i = 0; i < mm->n; i++)
		clock_hz[i] = count[i] ? sim_power_clock_for(hw, &ops[i], time_s[i] / count[i]) : hw->sm_clock_hz;
}

static void count_step_op(int i, void *ctx)
{
	((int *)ctx)[i]++;
}

/* The step's draw as the power regime prices it into acc (weighted as its rows): its op instances
 * (step_walk) at the clocks clock_hz, and at boost. */
static void power_account(const struct hw *hw, const struct model *m, const struct mapped *mm,
			  const struct sim_power_op *ops, const double *clock_hz, struct sim_phase *acc, double weight)
{
	static _Thread_local int count[SIM_MAX_OPS];
	int8_t group_of[MODEL_MAX_LAYERS];
	model_layer_groups(m, group_of);
	memset(count, 0, (size_t)mm->n * sizeof *count);
	step_walk(m, group_of, mm, count_step_op, count);
	double busy, boost_busy = 0;
	double w = sim_power_mix_draw_at_w(hw, ops, count, mm->n, clock_hz, &busy);
	double wb = sim_power_mix_draw_w(hw, ops, count, mm->n, hw->sm_clock_hz);
	for (int i = 0; i < mm->n; i++)
		boost_busy += count[i] * sim_power_time_s(hw, &ops[i], hw->sm_clock_hz);
	acc->power_busy_s += weight * busy;
	acc->power_energy_j += weight * busy * w;
	acc->power_boost_busy_s += weight * boost_busy;
	acc->power_boost_energy_j += weight * boost_busy * wb;
}

/* The ops of a step of phase p on the busiest EP rank (or a rank at the mean load), costed, into
 * out; with acc, into its rows too. In the power regime, mapped twice: at boost for the
 * controller, then at its clocks (and, with acc, the step's draw into it). -E2BIG on overflow. */
static int map_step(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		    bool busiest, struct sim_phase *acc, double weight, int row_base, struct mapped *out)
{
	if (s->clock.given_hz > 0 || s->clock.regime != HW_CLOCK_POWER)
		return map_ops(s, m, hw, p, busiest, acc, weight, row_base, NULL, NULL, out);
	static _Thread_local struct sim_power_op ops[SIM_MAX_OPS];
	static _Thread_local double clock_hz[SIM_MAX_OPS];
	int rc = map_ops(s, m, hw, p, busiest, NULL, weight, row_base, ops, NULL, out);
	if (rc < 0)
		return rc;
	power_clocks(hw, m, out, ops, p->kind != PHASE_PREFILL && s->cuda_graph, clock_hz);
	if (acc)
		power_account(hw, m, out, ops, clock_hz, acc, weight);
	return map_ops(s, m, hw, p, busiest, acc, weight, row_base, NULL, clock_hz, out);
}

/* ---- the graph ---- */

/* Data-flow state of one microbatch on one rank: the main chain, the routed chain (dispatch ->
 * experts -> combine) and the shared chain since the MLP prologue, the down GEMM's chunks. */
struct flow {
	int32_t chain, routed, shared;
	int32_t down[MAX_CHUNKS];
	int n_down;
	int32_t block_end; /* AttnRes: the chain event that completed the last block */
	int32_t ring_start; /* MLA CP ring: where the ring's transfers may begin */
};

/* Where a microbatch's issue stands (SGLang's stage executor). */
struct cursor {
	int mb;
	bool last_comm; /* the last op it issued was a collective on the communication stream */
	int part;  /* 0: before the layers, 1: layers, 2: after, 3: done */
	int li;    /* position in the layer list */
	int oi;    /* position in the strategy's order */
};

struct graph {
	struct timeline *tl;
	const struct scenario *s;
	const struct model *m;
	const struct overlap_spec *spec;
	int n_ranks, n_mb;
	int compute[2], comm[2], side[2];
	const struct mapped *mapped[2][2]; /* [rank][microbatch] */
	struct flow flow[2][2];
	const int16_t *layers; /* the layers laid out, in order */
	int n_layers;
	const int8_t *group_of;
	double reserved_sm; /* share of each GPU's SMs kept for communication (the strategy's) */
	int rc;
};

static int32_t add(struct graph *g, int rank, int stream, int32_t group, const struct tl_op *t, double work,
		   const int32_t *deps, int n_deps, int layer, int mb)
{
	if (g->rc)
		return -1;
	int32_t id = tl_add_in_group(g->tl, stream, group, t->name, work, t->sm, t->hbm, deps, n_deps);
	if (id < 0) {
		g->rc = id;
		return -1;
	}
	struct tl_event *e = &g->tl->ev[id];
	e->kind = (int8_t)(t->comm ? TL_COMM : TL_COMPUTE);
	e->tail = t->tail;
	e->tag = t->row;
	e->layer = (int16_t)layer;
	e->mb = (int8_t)mb;
	(void)rank;
	return id;
}

/* Inter-block share of an AttnRes op at `layer`: the completed blocks and the embedding, over
 * every source read (and the partial sum). */
static double attnres_inter_share(const struct model *m, int layer, bool ffn)
{
	int64_t done = 1 + layer / m->attn_res_block;
	int64_t partial = ffn || layer % m->attn_res_block != 0;
	return (double)done / (double)(done + partial + 1);
}

/* One op of microbatch mb at `layer` (-1 outside the layers), on every rank. */
static void emit(struct graph *g, int mb, int layer, int op_index)
{
	/* a collective's instances on the ranks start together: one group per piece (the chunks of
	 * a pipelined combine each have theirs) */
	int32_t groups[MAX_CHUNKS], group = -1;
	const struct tl_op *t0 = &g->mapped[0][mb]->ops[op_index];
	if (t0->comm && g->n_ranks > 1) {
		int pieces = t0->part == OP_PART_COMBINE && g->spec->combine_chunks > 1 ? g->spec->combine_chunks : 1;
		for (int k = 0; k < pieces; k++)
			if ((groups[k] = tl_group(g->tl)) < 0) {
				g->rc = groups[k];
				return;
			}
		group = groups[0];
	}
	for (int r = 0; r < g->n_ranks; r++) {
		const struct tl_op *t = &g->mapped[r][mb]->ops[op_index];
		struct flow *f = &g->flow[r][mb];
		int stream = g->compute[r];
		if (t->comm && g->spec->comm_stream)
			stream = g->comm[r];
		else if (t->part == OP_PART_SHARED && g->s->shared_expert_stream)
			stream = g->side[r];
		int32_t deps[3] = {-1, -1, -1};
		int32_t id;
		switch (t->part) {
		case OP_PART_DISPATCH:
		case OP_PART_EXPERTS:
		case OP_PART_COMBINE: {
			deps[0] = f->routed >= 0 ? f->routed : f->chain;
			int chunks = g->spec->combine_chunks;
			bool pipelined = chunks > 1 && layer >= 0 && g->mapped[r][mb]->has_combine[t->group + 1];
			if (pipelined && (t->flags & TLOP_DOWN)) {
				/* the down GEMM in chunks, each releasing its part of the combine */
				for (int k = 0; k < chunks; k++) {
					id = add(g, r, stream, group, t, t->work_s / chunks, deps, 1, layer, mb);
					f->down[k] = deps[0] = id;
				}
				f->n_down = chunks;
				f->routed = deps[0];
				continue;
			}
			if (pipelined && t->part == OP_PART_COMBINE && f->n_down == chunks) {
				for (int k = 0; k < chunks; k++) {
					deps[0] = f->down[k];
					id = add(g, r, stream, group >= 0 ? groups[k] : -1, t, t->work_s / chunks, deps, 1,
						 layer, mb);
				}
				f->n_down = 0;
				f->routed = id;
				continue;
			}
			id = add(g, r, stream, group, t, t->work_s, deps, 1, layer, mb);
			f->routed = id;
			continue;
		}
		case OP_PART_SHARED:
			deps[0] = f->shared >= 0 ? f->shared : f->chain;
			f->shared = add(g, r, stream, group, t, t->work_s, deps, 1, layer, mb);
			continue;
		case OP_PART_OUTPUT:
			deps[0] = f->chain;
			deps[1] = f->routed;
			deps[2] = f->shared;
			f->routed = f->shared = -1;
			break;
		default:
			deps[0] = f->chain;
			break;
		}
		if (g->s->attnres_side_stream && g->m->attn_res_block && layer >= 0 &&
		    (t->flags & (TLOP_ATTNRES_ATTN | TLOP_ATTNRES_FFN))) {
			/* the inter-block pass over completed blocks on the side stream, ahead of time */
			double share = attnres_inter_share(g->m, layer, t->flags & TLOP_ATTNRES_FFN);
			int32_t side_dep = f->block_end;
			int32_t side = add(g, r, g->side[r], group, t, t->work_s * share, &side_dep, 1, layer, mb);
			deps[1] = side;
			f->chain = add(g, r, stream, group, t, t->work_s * (1 - share), deps, 2, layer, mb);
			continue;
		}
		f->chain = add(g, r, stream, group, t, t->work_s, deps, 3, layer, mb);
	}
}

/* MLA context parallel as a ring: the gather in cp - 1 block transfers on the communication
 * stream, the expansion (kv_b, when there is one) and the attention in cp blocks on the compute
 * stream, block j waiting for its transfer, so each transfer flies while the block before it is
 * expanded and attended. */
static void emit_ring(struct graph *g, int mb, int layer, int comm_op, int kvb_op, int attn_op)
{
	int cp = (int)g->s->cp;
	for (int j = 0; j < cp; j++) {
		int32_t group = -1;
		if (j > 0 && g->n_ranks > 1 && (group = tl_group(g->tl)) < 0) {
			g->rc = group;
			return;
		}
		for (int r = 0; r < g->n_ranks; r++) {
			const struct mapped *mm = g->mapped[r][mb];
			struct flow *f = &g->flow[r][mb];
			int32_t dep = f->chain;
			if (j > 0) {
				const struct tl_op *c = &mm->ops[comm_op];
				int32_t start = f->ring_start;
				int32_t id = add(g, r, g->comm[r], group, c, c->work_s / (cp - 1), &start, 1, layer, mb);
				g->tl->ev[id >= 0 ? id : 0].kind = TL_COMM;
				int32_t deps[2] = {f->chain, id};
				if (kvb_op >= 0) {
					const struct tl_op *k = &mm->ops[kvb_op];
					f->chain = add(g, r, g->compute[r], -1, k, k->work_s / cp, deps, 2, layer, mb);
					deps[0] = f->chain;
					deps[1] = -1;
				}
				const struct tl_op *a = &mm->ops[attn_op];
				f->chain = add(g, r, g->compute[r], -1, a, a->work_s / cp, deps, 2, layer, mb);
				continue;
			}
			f->ring_start = dep;
			if (kvb_op >= 0) {
				const struct tl_op *k = &mm->ops[kvb_op];
				f->chain = add(g, r, g->compute[r], -1, k, k->work_s / cp, &dep, 1, layer, mb);
			}
			const struct tl_op *a = &mm->ops[attn_op];
			f->chain = add(g, r, g->compute[r], -1, a, a->work_s / cp, &f->chain, 1, layer, mb);
		}
	}
}

/* Every op of (layer group, part) of microbatch mb; true when the last was a collective on the
 * communication stream (false when there was none). */
static bool emit_part(struct graph *g, int mb, int layer, int group, int part)
{
	const struct mapped *mm = g->mapped[0][mb];
	int k = group + 1, n = mm->count[k][part];
	const int16_t *ops = mm->order + mm->first[k][part];
	bool comm = false;
	int ring = -1;
	for (int i = 0; i < n; i++) {
		int op = ops[i];
		uint8_t fl = mm->ops[op].flags;
		if ((fl & TLOP_RING) && g->s->cp > 1) {
			ring = op; /* issued with the blocks it feeds */
			continue;
		}
		if (ring >= 0 && (fl & (TLOP_KVB | TLOP_ATTN))) {
			int kvb = -1, attn = op, between = i + 1, j = i + 1;
			while ((fl & TLOP_KVB) && j < n && !(mm->ops[ops[j]].flags & TLOP_ATTN))
				j++;
			if ((fl & TLOP_KVB) && j < n) {
				kvb = op;
				attn = ops[j];
			}
			emit_ring(g, mb, layer, ring, kvb, attn);
			/* the ops between the expansion and the attention (the key's layout), whole */
			for (; kvb >= 0 && between < j; between++)
				emit(g, mb, layer, ops[between]);
			if (kvb >= 0)
				i = j;
			ring = -1;
			comm = false;
			continue;
		}
		emit(g, mb, layer, op);
		comm = mm->ops[op].comm && g->spec->comm_stream;
	}
	return comm;
}

/* Issues the next stage of a microbatch: its ops up to the next yield (or the end). */
static void stage(struct graph *g, struct cursor *c)
{
	const struct overlap_spec *sp = g->spec;
	while (c->part < 3 && !g->rc) {
		if (c->part == 0) {
			emit_part(g, c->mb, -1, -1, OP_PART_PRE);
			for (int r = 0; r < g->n_ranks; r++)
				g->flow[r][c->mb].block_end = g->flow[r][c->mb].chain;
			c->part = g->n_layers ? 1 : 2;
			continue;
		}
		if (c->part == 2) {
			emit_part(g, c->mb, -1, -1, OP_PART_POST);
			c->part = 3;
			return;
		}
		int layer = g->layers[c->li];
		int part = sp->order[c->oi++];
		bool yield = part == R_YIELD || (part == R_YIELD_COMM && c->last_comm);
		if (part < OP_PART_COUNT) {
			const struct mapped *mm = g->mapped[0][c->mb];
			int k = g->group_of[layer] + 1;
			if (mm->count[k][part])
				c->last_comm = emit_part(g, c->mb, layer, g->group_of[layer], part);
		}
		if (c->oi == sp->n) {
			if (g->m->attn_res_block && (layer + 1) % g->m->attn_res_block == 0)
				for (int r = 0; r < g->n_ranks; r++)
					g->flow[r][c->mb].block_end = g->flow[r][c->mb].chain;
			c->oi = 0;
			if (++c->li == g->n_layers)
				c->part = 2;
		}
		if (yield)
			return;
	}
}

/* The repeating part of the layer sequence: `reps` periods of `period` layers from `start`. */
static void find_period(const int8_t *sig, int n, int *start, int *period, int *reps)
{
	*start = 0, *period = n > 0 ? n : 1, *reps = 1;
	int best = 0;
	for (int p = 1; p <= 12 && p <= n; p++)
		for (int a = 0; a < p && a + p <= n; a++) {
			int r = 1;
			while (a + (r + 1) * p <= n && memcmp(sig + a, sig + a + r * p, (size_t)p) == 0)
				r++;
			if (r >= 2 && r * p > best) {
				best = r * p;
				*start = a, *period = p, *reps = r;
			}
		}
}

/* The phase of microbatch k of n: a decode step's requests, or a prefill's prompts (or the
 * tokens of one prompt) split in two. */
static void split_phase(const struct scenario *s, const struct phase *p, int k, int n, struct phase *out)
{
	*out = *p;
	if (n == 1)
		return;
	const int64_t dp = active_groups(s, p);
	int64_t b_local = ceil_div64(p->batch, dp);
	int64_t groups = p->batch < dp ? p->batch : dp;
	if (b_local >= 2) {
		int64_t half = k == 0 ? (b_local + 1) / 2 : b_local / 2;
		out->batch = half * groups;
		return;
	}
	int64_t first = (p->tokens + 1) / 2;
	out->tokens = k == 0 ? first : p->tokens - first;
	out->context = k == 0 ? p->context : p->context + first;
}

/* Per-thread timeline storage for sim_step (released when the thread ends). */
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static pthread_key_t tls_key;

struct tls_timeline {
	struct timeline tl;
	_Alignas(double) unsigned char mem[];
};

static void tls_free(void *p)
{
	free(p);
}

static void tls_make_key(void)
{
	(void)pthread_key_create(&tls_key, tls_free);
}

static struct timeline *thread_timeline(void)
{
	pthread_once(&tls_once, tls_make_key);
	struct tls_timeline *t = pthread_getspecific(tls_key);
	if (t)
		return &t->tl;
	size_t bytes = (size_t)tl_storage_bytes(SIM_TL_EVENTS, SIM_TL_DEPS);
	t = malloc(sizeof *t + bytes);
	if (!t)
		return NULL;
	tl_init(&t->tl, t->mem, SIM_TL_EVENTS, SIM_TL_DEPS);
	if (pthread_setspecific(tls_key, t) != 0) {
		free(t);
		return NULL;
	}
	return &t->tl;
}

/* Per-thread scratch of mapped ops: [rank][microbatch]. */
static _Thread_local struct mapped mapped_tls[2][2];

static int build_and_run(struct graph *g, const int16_t *layers, int n_layers)
{
	g->layers = layers;
	g->n_layers = n_layers;
	g->rc = 0;
	tl_reset(g->tl);
	for (int r = 0; r < g->n_ranks; r++) {
		static const char *const compute_names[2] = {"compute", "compute (mean rank)"};
		static const char *const comm_names[2] = {"communication", "communication (mean rank)"};
		static const char *const side_names[2] = {"side", "side (mean rank)"};
		if ((g->rc = tl_partition(g->tl, r, g->reserved_sm, SIM_GEMM_CLUSTER_SMS)) < 0)
			return g->rc;
		g->compute[r] = tl_stream(g->tl, r, TL_COMPUTE, compute_names[r]);
		bool ring = g->s->mla_cp_ring && g->s->cp > 1;
		g->comm[r] = g->spec->comm_stream || ring ? tl_stream(g->tl, r, TL_COMM, comm_names[r]) : g->compute[r];
		g->side[r] = g->s->shared_expert_stream || g->s->attnres_side_stream
				     ? tl_stream(g->tl, r, TL_COMPUTE, side_names[r])
				     : g->compute[r];
		for (int k = 0; k < g->n_mb; k++) {
			struct flow *f = &g->flow[r][k];
			f->chain = f->routed = f->shared = f->block_end = -1;
			f->n_down = 0;
		}
	}
	struct cursor c[2] = {{.mb = 0}, {.mb = 1}};
	if (g->n_mb == 1) {
		while (c[0].part < 3 && !g->rc)
			stage(g, &c[0]);
	} else {
		for (int d = 0; d < g->spec->delta_stages && c[0].part < 3; d++)
			stage(g, &c[0]);
		while ((c[0].part < 3 || c[1].part < 3) && !g->rc) {
			if (c[0].part < 3)
				stage(g, &c[0]);
			if (c[1].part < 3)
				stage(g, &c[1]);
		}
	}
	if (g->rc)
		return g->rc;
	return tl_run(g->tl);
}

static double stream_busy(const struct timeline *tl, int stream)
{
	return stream >= 0 ? tl->streams[stream].busy_s : 0;
}

/* The SMs strategy sp keeps for communication in a step of phase p: DeepEP normal kernels' under
 * RESERVE_EP (with EP), else none. */
static int step_reserved_sms(const struct scenario *s, const struct hw *hw, const struct phase *p,
			     const struct overlap_spec *sp)
{
	if (sp->reserve != RESERVE_EP || s->ep <= 1)
		return 0;
	int mode = s->ep_mode != EP_MODE_NONE ? s->ep_mode
		   : p->kind == PHASE_PREFILL ? EP_MODE_NORMAL
					      : EP_MODE_LOW_LATENCY;
	if (mode != EP_MODE_NORMAL)
		return 0;
	return s->ep_sms < hw->sms ? (int)s->ep_sms : (int)hw->sms;
}

int sim_step_reserved_sms(const struct scenario *s, const struct hw *hw, const struct phase *p,
			  enum scenario_overlap ov)
{
	if ((unsigned)ov >= OVERLAP_COUNT || ov == OVERLAP_AUTO)
		return 0;
	return step_reserved_sms(s, hw, p, &overlap_specs[ov][p->kind == PHASE_DECODE]);
}

/* The step under strategy ov. With bound_s > 0, gives up (returning 1) when the step cannot
 * take less than bound_s: its busiest stream alone needs that long. */
static int step_with(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		     enum scenario_overlap ov, const struct sim_step_opts *o, double bound_s, struct timeline *tl,
		     struct sim_phase *acc, double weight, struct sim_step_timing *out)
{
	memset(out, 0, sizeof *out);
	const struct overlap_spec *spec = &overlap_specs[ov][p->kind == PHASE_DECODE];
	int n_mb = spec->microbatches;
	if (n_mb == 2) {
		struct phase half;
		split_phase(s, p, 1, 2, &half);
		if (half.batch < 1 || half.tokens < 1)
			n_mb = 1; /* one request, one token: nothing to split */
	}
	int n_ranks = o->mean_rank && s->moe_imbalance > 1 && s->ep > 1 ? 2 : 1;
	struct graph g = {.tl = tl, .s = s, .m = m, .spec = spec, .n_ranks = n_ranks, .n_mb = n_mb};
	int reserved_sms = step_reserved_sms(s, hw, p, spec);
	g.reserved_sm = fmin(0.95, (double)reserved_sms / (double)hw->sms);

	int64_t peak = 0;
	struct phase p0, p1;
	split_phase(s, p, 0, n_mb, &p0);
	split_phase(s, p, 1, n_mb, &p1);
	/* two equal halves map to the same ops: map one, count it twice */
	bool same = n_mb == 2 && p0.batch == p1.batch && p0.tokens == p1.tokens && p0.context == p1.context;
	for (int r = 0; r < n_ranks; r++)
		for (int k = 0; k < n_mb; k++) {
			struct mapped *mm = &mapped_tls[r][k];
			if (same && k == 1) {
				g.mapped[r][1] = g.mapped[r][0];
				if (r == 0) {
					out->ops_s += g.mapped[0][0]->ops_s;
					peak += g.mapped[0][0]->peak_act;
				}
				continue;
			}
			int rc = map_step(s, m, hw, k ? &p1 : &p0, r == 0, r == 0 ? acc : NULL, same ? 2 * weight : weight,
					  o->row_base, mm);
			if (rc < 0)
				return rc;
			if (k > 0 && mm->n != mapped_tls[r][0].n)
				return -E2BIG; /* microbatches map to different op lists: cannot happen */
			g.mapped[r][k] = mm;
			if (r == 0) {
				out->ops_s += mm->ops_s;
				peak += mm->peak_act;
			}
		}

	if (bound_s > 0) {
		double comm = 0, compute = 0;
		for (int k = 0; k < n_mb; k++) {
			comm += g.mapped[0][k]->comm_ops_s;
			compute += g.mapped[0][k]->ops_s - g.mapped[0][k]->comm_ops_s;
		}
		int streams = 1 + (s->shared_expert_stream || s->attnres_side_stream);
		if (fmax(comm, compute / streams) >= bound_s)
			return 1;
	}
	if (!o->every_layer && n_mb == 1 && !spec->comm_stream && !s->shared_expert_stream &&
	    !s->attnres_side_stream && !(s->mla_cp_ring && s->cp > 1 && p->kind == PHASE_PREFILL)) {
		/* one stream: the timeline is the ops one after another (tests check it equals the
		 * engine's); skip laying it out */
		const struct mapped *mm = g.mapped[0][0];
		out->time_s = out->compute_stream_s = mm->ops_s;
		out->critical_comm_s = out->exposed_comm_s = mm->comm_ops_s;
		out->critical_compute_s = mm->ops_s - mm->comm_ops_s;
		goto done;
	}

	/* the layers to lay out: all, or the repeating part cut to three periods */
	int8_t group_of[MODEL_MAX_LAYERS];
	model_layer_groups(m, group_of);
	int8_t sig[MODEL_MAX_LAYERS];
	for (int i = 0; i < m->n_layers; i++)
		sig[i] = (int8_t)(group_of[i] +
				  (s->attnres_side_stream && m->attn_res_block ? 4 * (i % m->attn_res_block == 0) : 0));
	g.group_of = group_of;
	int start, period, reps;
	find_period(sig, m->n_layers, &start, &period, &reps);
	enum { SIM_PERIODS = 3 };
	int16_t layers[MODEL_MAX_LAYERS];
	int n = 0;
	bool extrapolate = !o->every_layer && n_ranks == 1 && reps > SIM_PERIODS + 1;
	for (int i = 0; i < m->n_layers; i++)
		if (!extrapolate || i < start + SIM_PERIODS * period || i >= start + reps * period)
			layers[n++] = (int16_t)i;
	int rc = build_and_run(&g, layers, n);
	double extra = 0, extra_exposed = 0, extra_crit_comm = 0, extra_busy[3] = {0, 0, 0};
	if (rc == 0 && extrapolate) {
		/* the end of each simulated period: its layers' last event on the busiest rank */
		double end[SIM_PERIODS] = {0};
		int32_t at[SIM_PERIODS] = {-1, -1, -1};
		for (int32_t i = 0; i < tl->n_events; i++) {
			const struct tl_event *e = &tl->ev[i];
			int k = e->layer < start ? -1 : (e->layer - start) / period;
			if (e->layer >= 0 && k >= 0 && k < SIM_PERIODS && tl->streams[e->stream].gpu == 0 &&
			    e->end_s >= end[k]) {
				end[k] = e->end_s;
				at[k] = i;
			}
		}
		double d1 = end[1] - end[0], d2 = end[2] - end[1];
		if (at[0] >= 0 && fabs(d2 - d1) <= 1e-6 * fabs(d2) + 1e-15) {
			int more = reps - SIM_PERIODS;
			extra = more * d2;
			extra_exposed = more * (tl->ev[at[2]].exposed_at_end_s - tl->ev[at[1]].exposed_at_end_s);
			/* the critical path and the streams inside the last period, repeated */
			double lo = end[1], hi = end[2], crit_comm = 0;
			for (int32_t i = tl->result.last_event; i >= 0; i = tl->ev[i].released_by) {
				const struct tl_event *e = &tl->ev[i];
				double a = fmax(e->start_s, lo), b = fmin(e->end_s, hi);
				if (b > a && e->kind == TL_COMM)
					crit_comm += b - a;
			}
			extra_crit_comm = more * crit_comm;
			for (int32_t i = 0; i < tl->n_events; i++) {
				const struct tl_event *e = &tl->ev[i];
				if (e->layer < start + 2 * period || e->layer >= start + 3 * period)
					continue;
				int st = e->stream;
				int which = st == g.compute[0] ? 0 : st == g.comm[0] ? 1 : 2;
				extra_busy[which] += more * (e->end_s - e->start_s);
			}
			out->extrapolated = true;
		} else {
			/* not periodic yet: lay out every layer */
			n = 0;
			for (int i = 0; i < m->n_layers; i++)
				layers[n++] = (int16_t)i;
			rc = build_and_run(&g, layers, n);
		}
	}
	if (rc < 0)
		return rc;
	const struct tl_result *res = &tl->result;
	out->time_s = res->makespan_s + extra;
	out->critical_comm_s = res->critical_comm_s + extra_crit_comm;
	out->critical_compute_s = out->time_s - out->critical_comm_s;
	out->exposed_comm_s = res->exposed_comm_s[0] + extra_exposed;
	out->compute_stream_s = stream_busy(tl, g.compute[0]) + extra_busy[0];
	out->comm_stream_s = (g.comm[0] != g.compute[0] ? stream_busy(tl, g.comm[0]) : 0) + extra_busy[1];
	out->side_stream_s = (g.side[0] != g.compute[0] ? stream_busy(tl, g.side[0]) : 0) + extra_busy[2];
done:
	out->microbatches = n_mb;
	out->overlap = ov;
	out->comm_sms_reserved = reserved_sms;
	if (acc) {
		if (peak > acc->peak_act_bytes)
			acc->peak_act_bytes = peak;
		acc->step_s += weight * out->time_s;
		acc->critical_comm_s += weight * out->critical_comm_s;
		acc->critical_compute_s += weight * out->critical_compute_s;
		acc->exposed_comm_s += weight * out->exposed_comm_s;
		acc->microbatches = n_mb;
		acc->overlap = ov;
		acc->comm_sms_reserved = reserved_sms;
	}
	return 0;
}

/* auto: none, or two-batch overlap where EP crosses NVLink domains (its all-to-alls go through
 * the NIC, where DeepSeek and SGLang run it) and it pays; splitting a step in two can cost more
 * than it hides (expert weights are read once per microbatch), which an operator would see.
 * *pick gets the choice; with `out`, the step under it (when no acc is needed: both were run). */
static int choose_overlap(const struct scenario *s, const struct model *m, const struct hw *hw,
			  const struct phase *p, struct timeline *tl, enum scenario_overlap *pick,
			  struct sim_step_timing *chosen)
{
	static const struct sim_step_opts fast = {0};
	struct sim_step_timing serial, tbo;
	int rc = step_with(s, m, hw, p, OVERLAP_NONE, &fast, 0, tl, NULL, 1, &serial);
	if (rc < 0 || s->ep <= hw->domain_gpus) {
		*pick = OVERLAP_NONE;
		if (chosen)
			*chosen = serial;
		return rc < 0 ? rc : 0;
	}
	rc = step_with(s, m, hw, p, OVERLAP_TBO, &fast, serial.time_s, tl, NULL, 1, &tbo);
	if (rc < 0)
		return rc;
	bool win = rc == 0 && tbo.microbatches == 2 && tbo.time_s < serial.time_s;
	*pick = win ? OVERLAP_TBO : OVERLAP_NONE;
	if (chosen)
		*chosen = win ? tbo : serial;
	return 0;
}

int sim_step_overlap(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		     enum scenario_overlap *out)
{
	if (s->overlap != OVERLAP_AUTO) {
		*out = s->overlap;
		return 0;
	}
	struct timeline *tl = thread_timeline();
	if (!tl)
		return -ENOMEM;
	return choose_overlap(s, m, hw, p, tl, out, NULL);
}

int sim_step_timeline(const struct scenario *s, const struct model *m, const struct hw *hw,
		      const struct phase *p, const struct sim_step_opts *o, struct timeline *tl,
		      struct sim_phase *acc, double weight, struct sim_step_timing *out)
{
	static const struct sim_step_opts dflt = {0};
	if (!o)
		o = &dflt;
	if (s->overlap != OVERLAP_AUTO)
		return step_with(s, m, hw, p, s->overlap, o, 0, tl, acc, weight, out);
	enum scenario_overlap pick;
	bool reuse = !acc && !o->every_layer && !o->mean_rank && o->row_base == 0;
	int rc = choose_overlap(s, m, hw, p, tl, &pick, reuse ? out : NULL);
	if (rc < 0 || reuse)
		return rc;
	return step_with(s, m, hw, p, pick, o, 0, tl, acc, weight, out);
}

int sim_step_rows(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		  struct sim_phase *acc, double weight, int row_base, double *time_s)
{
	*time_s = 0;
	struct timeline *tl = thread_timeline();
	if (!tl)
		return -ENOMEM;
	struct sim_step_opts o = {.row_base = row_base};
	struct sim_step_timing t;
	int rc = sim_step_timeline(s, m, hw, p, &o, tl, acc, weight, &t);
	if (rc < 0)
		return rc;
	*time_s = t.time_s;
	return 0;
}

int sim_step(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
	     struct sim_phase *acc, double weight, double *time_s)
{
	return sim_step_rows(s, m, hw, p, acc, weight, 0, time_s);
}
