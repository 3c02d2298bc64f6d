/* k3sim plan: the first pass (plan/plan.h): units enumerated, pruned by layout and weights,
 * costed with the step model, candidates scored with the rate model. */
#include "plan/plan.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

/* The axes' values of one unit. */
struct unit {
	int hw;
	int64_t gpus, tp, cp, ep_div, dp, ep;
	enum dtype kda, mla;
};

static void unit_of(const struct plan_spec *sp, int64_t u, struct unit *x)
{
	const struct plan_axes *a = &sp->ax;
	int64_t r = u;
	int i_mla = (int)(r % a->n_mla);
	r /= a->n_mla;
	int i_kda = (int)(r % a->n_kda);
	r /= a->n_kda;
	int i_ep = (int)(r % a->n_ep_div);
	r /= a->n_ep_div;
	int i_cp = (int)(r % a->n_cp);
	r /= a->n_cp;
	int i_tp = (int)(r % a->n_tp);
	r /= a->n_tp;
	int i_g = (int)(r % a->n_gpus);
	r /= a->n_gpus;
	x->hw = (int)r;
	x->gpus = a->gpus[i_g];
	x->tp = a->tp[i_tp];
	x->cp = a->cp[i_cp];
	x->ep_div = a->ep_div[i_ep];
	x->kda = a->kda[i_kda];
	x->mla = a->mla[i_mla];
	x->dp = x->gpus % (x->tp * x->cp) == 0 ? x->gpus / (x->tp * x->cp) : 0;
	x->ep = x->gpus % x->ep_div == 0 ? x->gpus / x->ep_div : 0;
}

/* The scenario of a unit at a prefill budget (0: one prompt alone) and a decode batch per DP
 * group. */
static void unit_scenario(const struct plan_spec *sp, const struct unit *x, int64_t budget, int64_t batch,
			  struct scenario *s)
{
	*s = sp->base;
	snprintf(s->hw, sizeof s->hw, "%s", sp->hw_names[x->hw]);
	s->gpus = x->gpus;
	s->tp = x->tp;
	s->dp = x->dp ? x->dp : 1;
	s->cp = x->cp;
	s->ep = x->ep ? x->ep : 1;
	s->pp = 1;
	s->kda_state = x->kda;
	s->mla_cache = x->mla;
	s->prompt_tokens = sp->isl;
	s->output_tokens = sp->osl;
	s->batch = (batch > 0 ? batch : 1) * s->dp;
	s->prefill_tokens = budget;
	s->prefill_chunk = budget > 0 && budget < sp->isl ? budget : sp->isl;
	s->mixed_prefill_tokens = 0;
}

static void cand_inputs(const struct plan_spec *sp, int64_t unit, const struct unit *x, enum plan_kind k,
			int64_t budget, int64_t batch, int64_t row, struct plan_cand *c)
{
	memset(c, 0, sizeof *c);
	c->id = unit * PLAN_UNIT_ROWS + row;
	c->unit = unit;
	snprintf(c->kind, sizeof c->kind, "%s", plan_kind_name(k));
	snprintf(c->hw, sizeof c->hw, "%s", sp->hw[x->hw]->name);
	c->gpus = x->gpus;
	c->tp = x->tp;
	c->dp = x->dp;
	c->cp = x->cp;
	c->ep = x->ep;
	c->budget = budget;
	c->batch = batch;
	snprintf(c->kda_state, sizeof c->kda_state, "%s", dtype_name(x->kda));
	snprintf(c->mla_cache, sizeof c->mla_cache, "%s", dtype_name(x->mla));
}

static void set_status(struct plan_cand *c, enum plan_status st)
{
	snprintf(c->status, sizeof c->status, "%s", plan_status_name(st));
}

/* Bytes one request's prefill hands to the decode pool: KDA and ShortConv state, the prompt's MLA
 * cache (and DSA index). */
int64_t plan_transfer_bytes(const struct plan_spec *sp, enum dtype kda, enum dtype mla)
{
	return model_kda_state_bytes_per_request(sp->model, kda) + model_conv_state_bytes_per_request(sp->model, kda) +
	       sp->isl * (model_mla_kv_bytes_per_token(sp->model, mla) + model_dsa_index_bytes_per_token(sp->model));
}

static const char *secs(double s, char *buf, size_t n)
{
	if (s >= 1)
		snprintf(buf, n, "%.3g s", s);
	else if (s >= 1e-3)
		snprintf(buf, n, "%.3g ms", s * 1e3);
	else
		snprintf(buf, n, "%.3g us", s * 1e6);
	return buf;
}

static const char *gib(int64_t b, char *buf, size_t n)
{
	snprintf(buf, n, "%.1f GiB", (double)b / (1024.0 * 1024 * 1024));
	return buf;
}

double plan_queue_share(double service_s, double slo_s)
{
	return service_s < slo_s ? 1 - service_s / slo_s : 0;
}

double plan_queue_p90_s(double service_s, double utilization)
{
	return utilization < 1 ? service_s + utilization * service_s / (1 - utilization) : INFINITY;
}

/* Status and goodput of a scored candidate from its estimates (1e-9: the rate at the SLO's edge
 * gives the SLO again up to rounding). */
static void judge(const struct plan_spec *sp, struct plan_cand *c, bool ttft, bool tpot)
{
	char a[32], b[32];
	bool miss_ttft = ttft && c->est_ttft_s > sp->slo_ttft_s * (1 + 1e-9);
	bool miss_tpot = tpot && c->est_tpot_s > sp->slo_tpot_s * (1 + 1e-9);
	if (miss_ttft) {
		set_status(c, PLAN_ST_SLO);
		snprintf(c->reason, sizeof c->reason, "TTFT %s > SLO %s", secs(c->est_ttft_s, a, sizeof a),
			 secs(sp->slo_ttft_s, b, sizeof b));
	} else if (miss_tpot) {
		set_status(c, PLAN_ST_SLO);
		snprintf(c->reason, sizeof c->reason, "TPOT %s > SLO %s", secs(c->est_tpot_s, a, sizeof a),
			 secs(sp->slo_tpot_s, b, sizeof b));
	} else {
		set_status(c, PLAN_ST_OK);
	}
	c->goodput_tokens_per_s_per_gpu = miss_ttft || miss_tpot ? 0 : c->tokens_per_s_per_gpu;
}

/* Per-thread scratch: two phases of SIM_MAX_OPS rows. */
struct scratch {
	struct sim_phase pre, dec;
	struct sim_prefill_result pr[PLAN_MAX_VALUES];
	int64_t pre_ok[PLAN_MAX_VALUES];
};

struct unit_out {
	struct plan_cand *c; /* PLAN_UNIT_ROWS */
	int n;
	int64_t sim_calls;
	int rc;
	struct err e;
};

static int eval_unit(const struct plan_spec *sp, int64_t u, struct scratch *sc, struct unit_out *o)
{
	const struct plan_axes *a = &sp->ax;
	struct unit x;
	unit_of(sp, u, &x);
	const struct hw *hw = sp->hw[x.hw];
	struct plan_cand *pruned = &o->c[0];
	o->n = 0;
	cand_inputs(sp, u, &x, PLAN_KIND_COLOC, 0, 0, PLAN_UNIT_ROWS - 1, pruned);
	set_status(pruned, PLAN_ST_LAYOUT);
	if (!x.dp) {
		snprintf(pruned->reason, sizeof pruned->reason, "tp %lld x cp %lld does not divide %lld GPUs",
			 (long long)x.tp, (long long)x.cp, (long long)x.gpus);
		o->n = 1;
		return 0;
	}
	if (!x.ep) {
		snprintf(pruned->reason, sizeof pruned->reason, "EP = GPUs / %lld is not whole at %lld GPUs",
			 (long long)x.ep_div, (long long)x.gpus);
		o->n = 1;
		return 0;
	}
	struct scenario s;
	unit_scenario(sp, &x, 0, 1, &s);
	struct err e;
	if (sim_check(&s, sp->model, hw, &e) < 0) {
		snprintf(pruned->reason, sizeof pruned->reason, "%.199s", e.msg);
		o->n = 1;
		return 0;
	}
	struct sim_hbm base;
	sim_hbm(&s, sp->model, hw, 0, 0, 0, &base);
	if (base.weights + base.workspace >= base.capacity) {
		char b1[32], b2[32];
		set_status(pruned, PLAN_ST_MEMORY);
		snprintf(pruned->reason, sizeof pruned->reason, "weights and workspace %s per GPU > HBM %s",
			 gib(base.weights + base.workspace, b1, sizeof b1), gib(base.capacity, b2, sizeof b2));
		pruned->hbm_weights = base.weights;
		pruned->hbm_total = base.weights + base.workspace;
		pruned->hbm_capacity = base.capacity;
		o->n = 1;
		return 0;
	}
	bool want_coloc = sp->mode == PLAN_MODE_ALL || sp->mode == PLAN_MODE_COLOC;
	bool want_pool = x.cp == 1 && sp->mode != PLAN_MODE_COLOC;
	bool want_pre = want_pool && sp->mode != PLAN_MODE_DECODE;
	bool want_dec = want_pool && sp->mode != PLAN_MODE_PREFILL;
	double h = sp->prefix_hit;

	/* prefills, one per budget */
	int n_pre = want_coloc || want_pre ? a->n_budget : 0;
	for (int bi = 0; bi < n_pre; bi++) {
		unit_scenario(sp, &x, a->budget[bi], 1, &s);
		o->sim_calls++;
		if ((o->rc = sim_prefill(&s, sp->model, hw, &sc->pre, &sc->pr[bi], &o->e)) < 0)
			return o->rc;
		sc->pre_ok[bi] = 1;
	}
	/* decodes, one per batch, until one does not fit without the prefill's activations */
	struct sim_prefill_result none = {0};
	struct plan_cand *coloc = o->c;
	struct plan_cand dec_rows[PLAN_MAX_VALUES];
	int64_t act_dec[PLAN_MAX_VALUES]; /* decode activations alone (the prefill's were 0) */
	int n_dec = 0;
	bool any_dec = want_coloc || want_dec;
	for (int ki = 0; any_dec && ki < a->n_batch; ki++) {
		int64_t b = a->batch[ki];
		unit_scenario(sp, &x, 0, b, &s);
		struct sim_decode_result d;
		o->sim_calls++;
		if ((o->rc = sim_decode(&s, sp->model, hw, &none, &sc->dec, &d, &o->e)) < 0)
			return o->rc;
		struct plan_cand *c = &dec_rows[n_dec++];
		cand_inputs(sp, u, &x, PLAN_KIND_DECODE, 0, b, PLAN_MAX_VALUES * PLAN_MAX_VALUES + PLAN_MAX_VALUES + ki,
			    c);
		c->tpot_s = d.tpot_s;
		c->decode_step_s = d.step_s;
		c->decode_compute_s = sc->dec.compute_s;
		c->decode_memory_s = sc->dec.memory_s;
		c->decode_latency_s = sc->dec.latency_s;
		c->decode_comm_s = sc->dec.comm_s;
		c->decode_exposed_comm_s = sc->dec.exposed_comm_s;
		c->hbm_weights = d.hbm.weights;
		c->hbm_total = d.hbm.total;
		c->hbm_capacity = d.hbm.capacity;
		act_dec[n_dec - 1] = d.hbm.activations;
		if (!d.fits) {
			char b1[32], b2[32];
			set_status(c, PLAN_ST_MEMORY);
			snprintf(c->reason, sizeof c->reason, "batch %lld per DP group needs %s per GPU > HBM %s",
				 (long long)b, gib(d.hbm.total, b1, sizeof b1), gib(d.hbm.capacity, b2, sizeof b2));
			break;
		}
	}

	/* colocated: budget x batch */
	for (int bi = 0; want_coloc && bi < a->n_budget; bi++) {
		const struct sim_prefill_result *p = &sc->pr[bi];
		for (int ki = 0; ki < n_dec; ki++) {
			const struct plan_cand *d = &dec_rows[ki];
			struct plan_cand *c = &coloc[o->n++];
			cand_inputs(sp, u, &x, PLAN_KIND_COLOC, a->budget[bi], d->batch,
				    (int64_t)bi * PLAN_MAX_VALUES + ki, c);
			c->ttft_s = p->ttft_s;
			c->prompts_per_step = p->prompts_per_step;
			c->prefill_tokens_per_s_per_gpu = p->tokens_per_s_per_gpu;
			c->tpot_s = d->tpot_s;
			c->decode_step_s = d->decode_step_s;
			c->decode_compute_s = d->decode_compute_s;
			c->decode_memory_s = d->decode_memory_s;
			c->decode_latency_s = d->decode_latency_s;
			c->decode_comm_s = d->decode_comm_s;
			c->decode_exposed_comm_s = d->decode_exposed_comm_s;
			c->prefill_critical_comm_s = 0;
			c->hbm_weights = d->hbm_weights;
			c->hbm_capacity = d->hbm_capacity;
			if (strcmp(d->status, plan_status_name(PLAN_ST_MEMORY)) == 0) {
				c->hbm_total = d->hbm_total;
				set_status(c, PLAN_ST_MEMORY);
				snprintf(c->reason, sizeof c->reason, "%s", d->reason);
				continue;
			}
			/* as sim_decode with this prefill: the larger of the two activation peaks */
			int64_t act = p->peak_bytes > act_dec[ki] ? p->peak_bytes : act_dec[ki];
			c->hbm_total = d->hbm_total - act_dec[ki] + act;
			if (c->hbm_total > c->hbm_capacity) {
				char b1[32], b2[32];
				set_status(c, PLAN_ST_MEMORY);
				snprintf(c->reason, sizeof c->reason,
					 "batch %lld with %lld-token prefills needs %s per GPU > HBM %s",
					 (long long)d->batch, (long long)a->budget[bi], gib(c->hbm_total, b1, sizeof b1),
					 gib(c->hbm_capacity, b2, sizeof b2));
				continue;
			}
			/* Prefill steps stall every DP group (they meet at the MoE): with arrivals spread
			 * over the groups a step carries one group's prompts, not every group's. */
			double per_group = (double)p->prompts_per_step / (double)x.dp;
			double rp = (per_group < 1 ? 1 : per_group) / (p->ttft_s * (1 - h));
			double rd = (double)(d->batch * x.dp) / ((double)sp->osl * d->tpot_s);
			double sat = 1 / (1 / rp + 1 / rd);
			double s_eff = p->ttft_s * (1 - h) + d->decode_step_s;
			if (s_eff <= sp->slo_ttft_s && d->tpot_s <= sp->slo_tpot_s) {
				/* the most requests/s whose estimated p90 TTFT and mean TPOT meet the SLOs */
				double r_tpot = rp * (1 - d->tpot_s / sp->slo_tpot_s);
				double r_ttft = plan_queue_share(s_eff, sp->slo_ttft_s) * sat;
				double r = fmin(sat, fmin(r_tpot, r_ttft));
				c->rate_per_s = r;
				c->est_tpot_s = d->tpot_s / (1 - r / rp);
				c->est_ttft_s = plan_queue_p90_s(s_eff, r / sat);
			} else {
				/* saturated: what it would do, missing an SLO */
				c->rate_per_s = sat;
				c->est_tpot_s = d->tpot_s * (1 + rd / rp);
				c->est_ttft_s = s_eff;
			}
			c->tokens_per_s_per_gpu = c->rate_per_s * (double)sp->osl / (double)x.gpus;
			judge(sp, c, true, true);
		}
	}
	/* prefill pool replicas */
	for (int bi = 0; want_pre && bi < a->n_budget; bi++) {
		const struct sim_prefill_result *p = &sc->pr[bi];
		struct plan_cand *c = &coloc[o->n++];
		cand_inputs(sp, u, &x, PLAN_KIND_PREFILL, a->budget[bi], 0,
			    PLAN_MAX_VALUES * PLAN_MAX_VALUES + bi, c);
		c->ttft_s = p->ttft_s;
		c->prompts_per_step = p->prompts_per_step;
		c->prefill_tokens_per_s_per_gpu = p->tokens_per_s_per_gpu;
		struct sim_hbm hb;
		unit_scenario(sp, &x, a->budget[bi], 1, &s);
		/* a prompt's state and cache per DP group while it is prefilled */
		sim_hbm(&s, sp->model, hw, p->prompts_per_step, sp->isl, p->peak_bytes, &hb);
		c->hbm_weights = hb.weights;
		c->hbm_total = hb.total;
		c->hbm_capacity = hb.capacity;
		if (hb.total > hb.capacity) {
			char b1[32], b2[32];
			set_status(c, PLAN_ST_MEMORY);
			snprintf(c->reason, sizeof c->reason, "%lld-token prefills need %s per GPU > HBM %s",
				 (long long)a->budget[bi], gib(hb.total, b1, sizeof b1), gib(hb.capacity, b2, sizeof b2));
			continue;
		}
		c->rate_per_s = (double)p->prompts_per_step / (p->ttft_s * (1 - h));
		c->est_ttft_s = p->ttft_s * (1 - h);
		c->tokens_per_s_per_gpu = c->rate_per_s * (double)sp->isl / (double)x.gpus;
		judge(sp, c, true, false);
	}
	/* decode pool replicas */
	for (int ki = 0; want_dec && ki < n_dec; ki++) {
		struct plan_cand *c = &coloc[o->n++];
		*c = dec_rows[ki];
		if (strcmp(c->status, plan_status_name(PLAN_ST_MEMORY)) == 0)
			continue;
		c->rate_per_s = (double)(c->batch * x.dp) / ((double)sp->osl * c->tpot_s);
		c->est_tpot_s = c->tpot_s;
		c->tokens_per_s_per_gpu = (double)(c->batch * x.dp) / c->tpot_s / (double)x.gpus;
		judge(sp, c, false, true);
	}
	return 0;
}

int64_t plan_shard_units(int64_t units, int64_t k, int64_t n)
{
	return units > k ? (units - k + n - 1) / n : 0;
}

enum { BLOCK_UNITS = 1024 }; /* units evaluated between two compactions of their rows */

struct pool {
	const struct plan_spec *sp;
	const struct plan_opts *o;
	int64_t first, n;      /* the block: units first .. first + n - 1 of the shard */
	_Atomic int64_t next;
	_Atomic int failed;
	struct unit_out *out;  /* per unit of the block */
};

static void *worker(void *arg)
{
	struct pool *P = arg;
	struct scratch *sc = malloc(sizeof *sc);
	if (!sc) {
		atomic_store(&P->failed, 1);
		return NULL;
	}
	for (;;) {
		int64_t i = atomic_fetch_add(&P->next, 1);
		if (i >= P->n || atomic_load(&P->failed))
			break;
		int64_t u = P->o->shard_index + (P->first + i) * P->o->shard_count;
		memset(sc->pre_ok, 0, sizeof sc->pre_ok);
		if (eval_unit(P->sp, u, sc, &P->out[i]) < 0)
			atomic_store(&P->failed, 1);
	}
	free(sc);
	return NULL;
}

/* Rows a unit yields at most with the spec's axes. */
static int64_t unit_rows(const struct plan_spec *sp)
{
	const struct plan_axes *a = &sp->ax;
	return (int64_t)a->n_budget * a->n_batch + a->n_budget + a->n_batch + 1;
}

int plan_first_pass(const struct plan_spec *sp, const struct plan_opts *o, struct plan_result *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	if (o->shard_count < 1 || o->shard_index < 0 || o->shard_index >= o->shard_count) {
		err_set(e, NULL, 0, 0, "--shard: %lld/%lld is not a shard (K/N with 1 <= K <= N)",
			(long long)o->shard_index + 1, (long long)o->shard_count);
		return -EINVAL;
	}
	int rc = 0;
	int64_t units = plan_shard_units(sp->units, o->shard_index, o->shard_count), stride = unit_rows(sp);
	int64_t cap = 0;
	struct pool P = {.sp = sp, .o = o};
	int threads = o->threads > 0 ? o->threads : 1;
	pthread_t *th = calloc((size_t)threads, sizeof *th);
	P.out = calloc(BLOCK_UNITS, sizeof *P.out);
	struct plan_cand *rows = calloc((size_t)BLOCK_UNITS * (size_t)stride, sizeof *rows);
	if (!th || !P.out || !rows) {
		err_set(e, NULL, 0, 0, "out of memory (%lld candidates per layout)", (long long)stride);
		rc = -ENOMEM;
		goto out;
	}
	for (P.first = 0; P.first < units; P.first += P.n) {
		P.n = units - P.first < BLOCK_UNITS ? units - P.first : BLOCK_UNITS;
		atomic_init(&P.next, 0);
		atomic_init(&P.failed, 0);
		for (int64_t i = 0; i < P.n; i++)
			P.out[i] = (struct unit_out){.c = rows + i * stride};
		int started = 0;
		for (int t = 1; t < threads; t++, started++)
			if (pthread_create(&th[t], NULL, worker, &P) != 0)
				break;
		worker(&P);
		for (int t = 1; t <= started; t++)
			pthread_join(th[t], NULL);
		if (atomic_load(&P.failed)) {
			err_set(e, NULL, 0, 0, "out of memory");
			rc = -ENOMEM;
			for (int64_t i = 0; i < P.n; i++)
				if (P.out[i].rc < 0) {
					*e = P.out[i].e;
					rc = P.out[i].rc;
					break;
				}
			goto out;
		}
		for (int64_t i = 0; i < P.n; i++) {
			if (r->n_cands + P.out[i].n > PLAN_MAX_ROWS) {
				err_set(e, NULL, 0, 0, "more than %d candidates in one process (use --shard K/N)",
					PLAN_MAX_ROWS);
				rc = -E2BIG;
				goto out;
			}
			if (r->n_cands + P.out[i].n > cap) {
				int64_t nc = cap ? cap * 2 : 4096;
				while (nc < r->n_cands + P.out[i].n)
					nc *= 2;
				if (nc > PLAN_MAX_ROWS)
					nc = PLAN_MAX_ROWS;
				struct plan_cand *p = realloc(r->cands, (size_t)nc * sizeof *p);
				if (!p) {
					err_set(e, NULL, 0, 0, "out of memory (%lld candidates)", (long long)nc);
					rc = -ENOMEM;
					goto out;
				}
				r->cands = p;
				cap = nc;
			}
			memcpy(r->cands + r->n_cands, P.out[i].c, (size_t)P.out[i].n * sizeof *r->cands);
			r->n_cands += P.out[i].n;
			r->sim_calls += P.out[i].sim_calls;
		}
	}
	r->units = units;
out:
	if (rc < 0) {
		free(r->cands);
		r->cands = NULL;
		r->n_cands = 0;
	}
	free(rows);
	free(P.out);
	free(th);
	return rc;
}
