/* k3sim plan: from the candidates to the recommendations (plan/plan.h): P/D deployments, Pareto
 * fronts, the serving pass and the reasons. */
#include "plan/plan.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/costs.h"
#include "sim/sim.h"

enum {
	PD_TOP_PREFILL = 2,  /* prefill pool layouts per (hw, dtypes, GPUs) paired */
	PD_TOP_DECODE = 12,  /* decode pool layouts per (hw, dtypes, GPUs): their Pareto front */
	PLAN_MAX_PD = 2000000,
	SERVE_MAX_PROBES = 8,
};

static bool is(const struct plan_cand *c, enum plan_status st)
{
	return strcmp(c->status, plan_status_name(st)) == 0;
}

static bool kind_is(const struct plan_cand *c, enum plan_kind k)
{
	return strcmp(c->kind, plan_kind_name(k)) == 0;
}

static bool evaluated(const struct plan_cand *c)
{
	return is(c, PLAN_ST_OK) || is(c, PLAN_ST_SLO);
}

const struct plan_cand *plan_find(const struct plan_result *r, int64_t id)
{
	int64_t lo = 0, hi = r->n_cands;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (r->cands[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_cands && r->cands[lo].id == id ? &r->cands[lo] : NULL;
}

const struct plan_pd *plan_find_pd(const struct plan_result *r, int64_t id)
{
	return id >= 0 && id < r->n_pd ? &r->pd[id] : NULL;
}

static int hw_index(const struct plan_spec *sp, const char *name)
{
	for (int i = 0; i < sp->n_hw; i++)
		if (strcmp(sp->hw[i]->name, name) == 0)
			return i;
	return 0;
}

/* ---- Pareto ---- */

static int cmp_pt(const void *a, const void *b, void *ctx)
{
	const struct plan_point *pts = ctx;
	const struct plan_point *p = &pts[*(const int64_t *)a], *q = &pts[*(const int64_t *)b];
	if (p->x_s != q->x_s)
		return p->x_s < q->x_s ? -1 : 1;
	if (p->y != q->y)
		return p->y > q->y ? -1 : 1;
	int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
	return (i > j) - (i < j);
}

int64_t plan_pareto(const struct plan_point *pts, int64_t n, int64_t *idx)
{
	for (int64_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, (size_t)n, sizeof *idx, cmp_pt, (void *)(uintptr_t)pts); /* read only */
	int64_t k = 0;
	double best = -INFINITY;
	for (int64_t i = 0; i < n; i++) {
		const struct plan_point *p = &pts[idx[i]];
		if (!(p->y > best))
			continue;
		best = p->y;
		idx[k++] = idx[i];
	}
	return k;
}

/* ---- P/D ---- */

static double transfer_s(const struct plan_spec *sp, const struct plan_cand *p, const struct plan_cand *d)
{
	const struct hw *hw = sp->hw[hw_index(sp, p->hw)];
	enum dtype kda = DT_FP32, mla = DT_BF16;
	dtype_parse(p->kda_state, &kda);
	dtype_parse(p->mla_cache, &mla);
	int64_t links = p->gpus < d->gpus ? p->gpus : d->gpus;
	return (double)plan_transfer_bytes(sp, kda, mla) / (hw->nic_bw_bytes_per_s * (double)links) + hw->nic_latency_s;
}

static int cmp_rate_desc(const void *a, const void *b)
{
	const struct plan_cand *p = *(const struct plan_cand *const *)a, *q = *(const struct plan_cand *const *)b;
	if (p->tokens_per_s_per_gpu != q->tokens_per_s_per_gpu)
		return p->tokens_per_s_per_gpu > q->tokens_per_s_per_gpu ? -1 : 1;
	return (p->id > q->id) - (p->id < q->id);
}

static bool same_group(const struct plan_cand *a, const struct plan_cand *b)
{
	return strcmp(a->hw, b->hw) == 0 && strcmp(a->kda_state, b->kda_state) == 0 &&
	       strcmp(a->mla_cache, b->mla_cache) == 0;
}

static int add_pd(struct plan_result *r, int64_t *cap, const struct plan_pd *x)
{
	if (r->n_pd >= PLAN_MAX_PD)
		return -E2BIG;
	if (r->n_pd == *cap) {
		int64_t nc = *cap ? *cap * 2 : 1024;
		struct plan_pd *p = realloc(r->pd, (size_t)nc * sizeof *p);
		if (!p)
			return -ENOMEM;
		r->pd = p;
		*cap = nc;
	}
	r->pd[r->n_pd] = *x;
	r->pd[r->n_pd].id = r->n_pd;
	r->n_pd++;
	return 0;
}

/* The best split of budget G between a prefill and a decode pool: the most output tokens per
 * second, then the fewest GPUs. */
static bool best_split(const struct plan_spec *sp, const struct plan_cand *p, const struct plan_cand *d, int64_t G,
		       struct plan_pd *x)
{
	double xfer = transfer_s(sp, p, d);
	double s = p->est_ttft_s; /* the prefill of a prompt, unloaded */
	bool feasible = s + xfer <= sp->slo_ttft_s && d->est_tpot_s <= sp->slo_tpot_s;
	double share = feasible ? plan_queue_share(s, sp->slo_ttft_s - xfer) : 1;
	double rp = p->rate_per_s * share; /* what one prefill replica takes within the TTFT SLO */
	bool found = false;
	double best = -1;
	for (int64_t a = 1; a * p->gpus + d->gpus <= G; a++) {
		int64_t bmax = (G - a * p->gpus) / d->gpus;
		int64_t need = (int64_t)ceil((double)a * rp / d->rate_per_s - 1e-9);
		int64_t b = need < 1 ? 1 : need > bmax ? bmax : need;
		double rate = fmin((double)a * rp, (double)b * d->rate_per_s);
		int64_t gpus = a * p->gpus + b * d->gpus;
		if (rate > best * (1 + 1e-12)) {
			best = rate;
			found = true;
			x->a = a;
			x->b = b;
			x->gpus = gpus;
			x->rate_per_s = rate;
		}
	}
	if (!found || !(best > 0))
		return false;
	x->budget_gpus = G;
	x->prefill = p->id;
	x->decode = d->id;
	x->transfer_s = xfer;
	x->est_ttft_s = feasible ? plan_queue_p90_s(s, x->rate_per_s / ((double)x->a * p->rate_per_s)) + xfer : s + xfer;
	x->est_tpot_s = d->est_tpot_s;
	x->tokens_per_s_per_gpu = x->rate_per_s * (double)sp->osl / (double)x->gpus;
	x->meets = feasible && x->est_ttft_s <= sp->slo_ttft_s * (1 + 1e-9);
	x->goodput_tokens_per_s_per_gpu = x->meets ? x->tokens_per_s_per_gpu : 0;
	return true;
}

static int form_pd(const struct plan_spec *sp, struct plan_result *r, struct err *e)
{
	int rc = 0;
	int64_t cap = 0;
	const struct plan_cand **pre = calloc((size_t)r->n_cands + 1, sizeof *pre);
	const struct plan_cand **dec = calloc((size_t)r->n_cands + 1, sizeof *dec);
	struct plan_point *pts = calloc((size_t)r->n_cands + 1, sizeof *pts);
	int64_t *idx = calloc((size_t)r->n_cands + 1, sizeof *idx);
	bool *done = calloc((size_t)r->n_cands + 1, sizeof *done);
	const struct plan_cand **sel = calloc((size_t)r->n_cands + 1, sizeof *sel);
	if (!pre || !dec || !pts || !idx || !done || !sel) {
		rc = -ENOMEM;
		goto out;
	}
	/* one group per (hw, KDA state, MLA cache), in the order of their first prefill row */
	for (int64_t g = 0; g < r->n_cands; g++) {
		const struct plan_cand *lead = &r->cands[g];
		if (done[g] || !kind_is(lead, PLAN_KIND_PREFILL))
			continue;
		int64_t np = 0, nd = 0;
		for (int64_t i = 0; i < r->n_cands; i++) {
			const struct plan_cand *c = &r->cands[i];
			if (!same_group(lead, c))
				continue;
			if (kind_is(c, PLAN_KIND_PREFILL)) {
				done[i] = true;
				if (is(c, PLAN_ST_OK))
					pre[np++] = c;
			} else if (kind_is(c, PLAN_KIND_DECODE) && evaluated(c)) {
				dec[nd++] = c;
			}
		}
		/* per pool size: the best prefill layouts by prompts/s per GPU, and the decode layouts on
		 * their front of tokens/s per GPU vs TPOT (a budget needs small pools as well as good ones) */
		qsort(pre, (size_t)np, sizeof *pre, cmp_rate_desc);
		int64_t npk = 0;
		for (int64_t i = 0; i < np; i++) {
			int64_t same = 0;
			for (int64_t j = 0; j < npk; j++)
				same += pre[j]->gpus == pre[i]->gpus;
			if (same < PD_TOP_PREFILL)
				pre[npk++] = pre[i];
		}
		int64_t ndk = 0;
		for (int gi = 0; gi < sp->ax.n_gpus; gi++) {
			int64_t k = 0;
			for (int64_t i = 0; i < nd; i++)
				if (dec[i]->gpus == sp->ax.gpus[gi])
					pts[k++] = (struct plan_point){.ref = i, .x_s = dec[i]->est_tpot_s,
								       .y = dec[i]->tokens_per_s_per_gpu};
			int64_t nf = plan_pareto(pts, k, idx);
			int64_t step = nf > PD_TOP_DECODE ? (nf + PD_TOP_DECODE - 1) / PD_TOP_DECODE : 1;
			for (int64_t fi = 0; fi < nf; fi += step)
				sel[ndk++] = dec[pts[idx[fi]].ref];
		}
		for (int bi = 0; bi < sp->ax.n_gpus; bi++) {
			int64_t G = sp->ax.gpus[bi];
			for (int64_t pi = 0; pi < npk; pi++)
				for (int64_t di = 0; di < ndk; di++) {
					struct plan_pd x = {0};
					if (!best_split(sp, pre[pi], sel[di], G, &x))
						continue;
					if ((rc = add_pd(r, &cap, &x)) < 0)
						goto out;
				}
		}
	}
out:
	if (rc == -ENOMEM)
		err_set(e, NULL, 0, 0, "out of memory (P/D deployments)");
	else if (rc == -E2BIG)
		err_set(e, NULL, 0, 0, "more than %d P/D deployments (narrow an axis)", PLAN_MAX_PD);
	free(sel);
	free(done);
	free(idx);
	free(pts);
	free(dec);
	free(pre);
	return rc;
}

/* ---- fronts ---- */

static int fronts(const struct plan_spec *sp, struct plan_result *r, struct err *e)
{
	int64_t n = r->n_cands + r->n_pd;
	struct plan_point *pts = calloc((size_t)n + 1, sizeof *pts);
	int64_t *idx = calloc((size_t)n + 1, sizeof *idx);
	int rc = 0;
	if (!pts || !idx) {
		rc = -ENOMEM;
		goto out;
	}
	enum plan_kind want = sp->mode == PLAN_MODE_PREFILL ? PLAN_KIND_PREFILL
			      : sp->mode == PLAN_MODE_DECODE ? PLAN_KIND_DECODE
							     : PLAN_KIND_COLOC;
	for (int f = 0; f < 2; f++) {
		bool tpot = f == 0;
		int64_t k = 0;
		if (sp->mode == PLAN_MODE_PREFILL && tpot)
			continue;
		if (sp->mode == PLAN_MODE_DECODE && !tpot)
			continue;
		for (int64_t i = 0; i < r->n_cands; i++) {
			const struct plan_cand *c = &r->cands[i];
			if (!evaluated(c) || !kind_is(c, want))
				continue;
			pts[k++] = (struct plan_point){.pd = false, .ref = c->id, .hw = hw_index(sp, c->hw),
						       .x_s = tpot ? c->est_tpot_s : c->est_ttft_s,
						       .y = c->tokens_per_s_per_gpu};
		}
		for (int64_t i = 0; i < r->n_pd; i++) {
			const struct plan_pd *d = &r->pd[i];
			const struct plan_cand *p = plan_find(r, d->prefill);
			pts[k++] = (struct plan_point){.pd = true, .ref = d->id, .hw = p ? hw_index(sp, p->hw) : 0,
						       .x_s = tpot ? d->est_tpot_s : d->est_ttft_s,
						       .y = d->tokens_per_s_per_gpu};
		}
		int64_t nf = plan_pareto(pts, k, idx);
		struct plan_point *out = malloc((size_t)(nf ? nf : 1) * sizeof *out);
		if (!out) {
			rc = -ENOMEM;
			goto out;
		}
		for (int64_t i = 0; i < nf; i++)
			out[i] = pts[idx[i]];
		if (tpot) {
			r->front_tpot = out;
			r->n_front_tpot = nf;
		} else {
			r->front_ttft = out;
			r->n_front_ttft = nf;
		}
	}
out:
	if (rc < 0)
		err_set(e, NULL, 0, 0, "out of memory (fronts)");
	free(idx);
	free(pts);
	return rc;
}

/* ---- deployments ---- */

/* KDA state dtypes are named only for models with KDA layers. */
static bool has_kda(const struct plan_spec *sp)
{
	struct model_inventory inv;
	model_inventory(sp->model, &inv);
	return inv.kda_layers > 0;
}

void plan_describe(const struct plan_spec *sp, const struct plan_result *r, bool pd, int64_t ref, char *buf,
		   size_t cap)
{
	if (pd) {
		const struct plan_pd *x = plan_find_pd(r, ref);
		const struct plan_cand *p = x ? plan_find(r, x->prefill) : NULL, *d = x ? plan_find(r, x->decode) : NULL;
		if (!p || !d) {
			snprintf(buf, cap, "?");
			return;
		}
		snprintf(buf, cap,
			 "P/D %lld x %lld %s TP%lld DP%lld EP%lld (%lld tok/step) + %lld x %lld TP%lld DP%lld EP%lld "
			 "(batch %lld/DP), %s%s%s",
			 (long long)x->a, (long long)p->gpus, p->hw, (long long)p->tp, (long long)p->dp, (long long)p->ep,
			 (long long)p->budget, (long long)x->b, (long long)d->gpus, (long long)d->tp, (long long)d->dp,
			 (long long)d->ep, (long long)d->batch, has_kda(sp) ? d->kda_state : "", has_kda(sp) ? "/" : "",
			 d->mla_cache);
		return;
	}
	const struct plan_cand *c = plan_find(r, ref);
	if (!c) {
		snprintf(buf, cap, "?");
		return;
	}
	char cp[24] = "";
	if (c->cp > 1)
		snprintf(cp, sizeof cp, " CP%lld", (long long)c->cp);
	char what[64] = "";
	if (c->batch && c->budget)
		snprintf(what, sizeof what, ", batch %lld/DP, %lld tok/step", (long long)c->batch, (long long)c->budget);
	else if (c->batch)
		snprintf(what, sizeof what, ", batch %lld/DP", (long long)c->batch);
	else if (c->budget)
		snprintf(what, sizeof what, ", %lld tok/step", (long long)c->budget);
	snprintf(buf, cap, "%s%lld x %s TP%lld DP%lld%s EP%lld%s, %s%s%s",
		 kind_is(c, PLAN_KIND_COLOC) ? "" : c->kind[0] == 'p' ? "prefill " : "decode ", (long long)c->gpus, c->hw,
		 (long long)c->tp, (long long)c->dp, cp, (long long)c->ep, what, has_kda(sp) ? c->kda_state : "",
		 has_kda(sp) ? "/" : "", c->mla_cache);
}

static void layout_of(const struct plan_spec *sp, const struct plan_cand *c, struct scenario *s)
{
	*s = sp->base;
	snprintf(s->hw, sizeof s->hw, "%s", sp->hw_names[hw_index(sp, c->hw)]);
	s->gpus = c->gpus;
	s->tp = c->tp;
	s->dp = c->dp;
	s->cp = c->cp;
	s->ep = c->ep;
	s->pp = 1;
	dtype_parse(c->kda_state, &s->kda_state);
	dtype_parse(c->mla_cache, &s->mla_cache);
	s->prompt_tokens = sp->isl;
	s->output_tokens = sp->osl;
	s->batch = (c->batch ? c->batch : 1) * c->dp;
	s->prefill_tokens = c->budget;
	s->prefill_chunk = c->budget && c->budget < sp->isl ? c->budget : sp->isl;
	s->mixed_prefill_tokens = 0;
}

int plan_deployment(const struct plan_spec *sp, const struct plan_result *r, bool pd, int64_t ref,
		    int64_t replicas, double rate_per_s, int64_t requests, struct scenario *s, struct serve_config *c,
		    struct err *e)
{
	const struct plan_cand *p = NULL, *d = NULL;
	const struct plan_pd *x = NULL;
	if (pd) {
		x = plan_find_pd(r, ref);
		p = x ? plan_find(r, x->prefill) : NULL;
		d = x ? plan_find(r, x->decode) : NULL;
	} else {
		p = d = plan_find(r, ref);
	}
	if (!p || !d) {
		err_set(e, NULL, 0, 0, "no %s deployment %lld in the plan", pd ? "P/D" : "candidate", (long long)ref);
		return -EINVAL;
	}
	layout_of(sp, d, s);
	if (pd) {
		s->prefill_tokens = p->budget;
		s->prefill_chunk = p->budget < sp->isl ? p->budget : sp->isl;
	}
	snprintf(s->name, sizeof s->name, "plan-%s-%lld", pd ? "pd" : "coloc", (long long)ref);
	plan_describe(sp, r, pd, ref, s->description, sizeof s->description);
	serve_config_defaults(c);
	c->seed = sp->seed;
	c->max_requests = requests;
	c->rate_per_s = rate_per_s > 0 ? rate_per_s : 1;
	c->duration_s = (double)requests / c->rate_per_s;
	if (sp->trace.n) {
		c->arrival = SERVE_ARRIVAL_TRACE;
		snprintf(c->trace, sizeof c->trace, "%s", sp->workload);
		c->time_scale = sp->trace_rate_per_s / c->rate_per_s;
	} else {
		c->arrival = SERVE_ARRIVAL_POISSON;
	}
	int64_t sys = (int64_t)llround(sp->prefix_hit * (double)sp->isl);
	c->system_tokens = sys;
	c->system_prompts = 1;
	c->prompt = (struct serve_length){.dist = SERVE_DIST_FIXED, .mean = (double)(sp->isl - sys), .min = 1,
					  .max = INT64_C(1) << 30};
	c->output = (struct serve_length){.dist = SERVE_DIST_FIXED, .mean = (double)sp->osl, .min = 1,
					  .max = INT64_C(1) << 30};
	c->max_running = d->batch;
	c->chunk_tokens = p->budget < sp->isl ? p->budget : sp->isl;
	c->token_budget = p->budget + d->batch;
	c->mixed = false; /* prefill steps between decode steps (SGLang's default), as the rate model alternates them */
	c->replicas = pd ? 1 : replicas;
	c->slo_ttft_s = sp->slo_ttft_s;
	c->slo_tpot_s = sp->slo_tpot_s;
	c->sample_s = 10;
	if (pd) {
		c->pd = true;
		c->prefill = (struct serve_layout){x->a * replicas, p->gpus, p->tp, p->dp, p->ep};
		c->decode = (struct serve_layout){x->b * replicas, d->gpus, d->tp, d->dp, d->ep};
		c->pd_link = SERVE_LINK_NIC;
	}
	return 0;
}

/* ---- serving ---- */

struct probe {
	double rate, attainment, ttft_p90, tpot_p90, ttft_p50, tpot_p50, tput;
};

static int serve_at(const struct plan_spec *sp, const struct plan_result *r, struct plan_served *v, double rate,
		    struct serve_costs *tables, struct probe *pr, struct err *e)
{
	struct scenario s;
	struct serve_config c;
	int rc = plan_deployment(sp, r, v->pd, v->cand, v->replicas, rate, v->requests, &s, &c, e);
	if (rc < 0)
		return rc;
	struct serve_workload w = {0};
	struct serve_result res = {0};
	const struct hw *hw = sp->hw[hw_index(sp, plan_find(r, v->pd ? plan_find_pd(r, v->cand)->decode : v->cand)->hw)];
	if ((rc = serve_workload_make(&w, &c, sp->model, e)) < 0)
		goto out;
	struct serve_opts o = {.threads = 1, .tables = tables};
	if ((rc = serve_run(&s, sp->model, hw, &c, &w, &o, &res, e)) < 0)
		goto out;
	pr->rate = rate;
	pr->attainment = res.sum.slo_attainment;
	pr->ttft_p90 = res.sum.ttft.p90;
	pr->tpot_p90 = res.sum.tpot.p90;
	pr->ttft_p50 = res.sum.ttft.p50;
	pr->tpot_p50 = res.sum.tpot.p50;
	pr->tput = res.sum.throughput_tokens_per_s;
out:
	serve_result_release(&res);
	serve_workload_release(&w);
	return rc;
}

static void take(struct plan_served *v, const struct probe *p)
{
	v->attainment = p->attainment;
	v->ttft_p90_s = p->ttft_p90;
	v->tpot_p90_s = p->tpot_p90;
	v->ttft_p50_s = p->ttft_p50;
	v->tpot_p50_s = p->tpot_p50;
	v->throughput_tokens_per_s = p->tput;
}

/* The highest Poisson rate at which `attainment` of the requests meet both SLOs: from the first
 * pass's rate up (x2) or down (x0.25) to a bracket, then geometric bisection to 15 %. */
static int serve_one(const struct plan_spec *sp, const struct plan_result *r, struct plan_served *v, struct err *e)
{
	struct serve_costs tables[2];
	memset(tables, 0, sizeof tables);
	struct probe pr;
	int rc = 0;
	double lo = 0, hi = 0, rate = v->est_rate_per_s;
	bool have_lo = false, have_hi = false;
	struct probe best = {0}, lowest = {0};
	while (v->probes < SERVE_MAX_PROBES) {
		if ((rc = serve_at(sp, r, v, rate, tables, &pr, e)) < 0)
			goto out;
		v->probes++;
		if (!lowest.rate || rate < lowest.rate)
			lowest = pr;
		bool met = pr.attainment >= sp->attainment;
		if (met) {
			if (!have_lo || rate > lo) {
				lo = rate;
				best = pr;
			}
			have_lo = true;
		} else {
			if (!have_hi || rate < hi)
				hi = rate;
			have_hi = true;
		}
		if (have_lo && have_hi) {
			if (hi / lo < 1.15)
				break;
			rate = sqrt(lo * hi);
		} else if (have_lo) {
			rate = lo * 2;
		} else {
			rate = hi * 0.25;
		}
	}
	if (have_lo) {
		v->rate_per_s = lo;
		take(v, &best);
		v->capped = !have_hi;
		if (v->capped)
			snprintf(v->reason, sizeof v->reason, "met at every rate probed: goodput at least this");
		else
			snprintf(v->reason, sizeof v->reason, "attainment falls below %.0f %% above %.4g req/s",
				 sp->attainment * 100, hi);
	} else {
		v->rate_per_s = 0;
		take(v, &lowest);
		snprintf(v->reason, sizeof v->reason,
			 "%.0f %% of requests meet the SLOs even at %.4g req/s (TTFT p90 %.3g s, TPOT p90 %.3g ms)",
			 lowest.attainment * 100, lowest.rate, lowest.ttft_p90, lowest.tpot_p90 * 1e3);
	}
	double out_tokens = v->rate_per_s * (double)sp->osl;
	v->goodput_tokens_per_s_per_gpu = out_tokens / (double)v->gpus;
out:
	serve_costs_release(&tables[0]);
	serve_costs_release(&tables[1]);
	return rc;
}

struct serve_pool {
	const struct plan_spec *sp;
	const struct plan_result *r;
	_Atomic int next;
	int n;
	int *rc;
	struct err *e;
};

static void *serve_worker(void *arg)
{
	struct serve_pool *P = arg;
	for (;;) {
		int i = atomic_fetch_add(&P->next, 1);
		if (i >= P->n)
			break;
		P->rc[i] = serve_one(P->sp, P->r, &P->r->served[i], &P->e[i]);
	}
	return NULL;
}

/* ---- recommendations ---- */

/* The same deployment: a candidate, or P/D deployments of the same pools and split (formed for
 * different budgets). */
static bool same_deployment(const struct plan_result *r, bool pd_a, int64_t a, bool pd_b, int64_t b)
{
	if (pd_a != pd_b)
		return false;
	if (!pd_a || a == b)
		return a == b;
	const struct plan_pd *x = plan_find_pd(r, a), *y = plan_find_pd(r, b);
	return x->prefill == y->prefill && x->decode == y->decode && x->a == y->a && x->b == y->b;
}

struct choice {
	bool pd;
	int64_t ref, gpus_used, gpus;
	double per_gpu, total;
	int served; /* index in r->served, -1 */
};

static bool better(const struct choice *a, const struct choice *b)
{
	if (a->total != b->total)
		return a->total > b->total;
	if (a->gpus_used != b->gpus_used)
		return a->gpus_used < b->gpus_used;
	if (a->pd != b->pd)
		return !a->pd;
	return a->ref < b->ref;
}

/* Colocated candidates and P/D deployments of budget G meeting the SLOs in the first pass, best
 * first. */
static int64_t choices(const struct plan_spec *sp, const struct plan_result *r, int64_t G, bool pd, struct choice *out,
		       int64_t cap)
{
	int64_t n = 0;
	if (!pd) {
		enum plan_kind want = sp->mode == PLAN_MODE_PREFILL ? PLAN_KIND_PREFILL
				      : sp->mode == PLAN_MODE_DECODE ? PLAN_KIND_DECODE
								     : PLAN_KIND_COLOC;
		for (int64_t i = 0; i < r->n_cands; i++) {
			const struct plan_cand *c = &r->cands[i];
			if (!is(c, PLAN_ST_OK) || !kind_is(c, want) || c->gpus > G)
				continue;
			struct choice x = {.pd = false, .ref = c->id,
					   .gpus = c->gpus, .gpus_used = G / c->gpus * c->gpus,
					   .per_gpu = c->goodput_tokens_per_s_per_gpu, .served = -1};
			x.total = x.per_gpu * (double)x.gpus_used;
			/* keep the cap best: insertion into a sorted list */
			int64_t j = n < cap ? n++ : cap - 1;
			if (j == cap - 1 && n == cap && !better(&x, &out[j]))
				continue;
			while (j > 0 && better(&x, &out[j - 1])) {
				out[j] = out[j - 1];
				j--;
			}
			out[j] = x;
		}
		return n;
	}
	for (int64_t i = 0; i < r->n_pd; i++) {
		const struct plan_pd *d = &r->pd[i];
		if (!d->meets || d->budget_gpus != G)
			continue;
		struct choice x = {.pd = true, .ref = d->id,
				   .gpus = d->gpus, .gpus_used = d->gpus, .per_gpu = d->goodput_tokens_per_s_per_gpu,
				   .served = -1};
		x.total = x.per_gpu * (double)x.gpus_used;
		int64_t j = n < cap ? n++ : cap - 1;
		if (j == cap - 1 && n == cap && !better(&x, &out[j]))
			continue;
		while (j > 0 && better(&x, &out[j - 1])) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = x;
	}
	return n;
}

static const char *bound_of(const struct plan_cand *c)
{
	double v[4] = {c->decode_compute_s, c->decode_memory_s, c->decode_latency_s, c->decode_comm_s};
	static const char *const names[4] = {"compute", "memory", "latency", "communication"};
	int k = 0;
	for (int i = 1; i < 4; i++)
		if (v[i] > v[k])
			k = i;
	return names[k];
}

static void add_loser(const struct plan_spec *sp, const struct plan_result *r, struct plan_rec *rec, bool pd,
		      int64_t ref, double goodput, const char *why)
{
	if (rec->n_losers >= PLAN_MAX_LOSERS)
		return;
	struct plan_loser *l = &rec->losers[rec->n_losers++];
	l->pd = pd;
	l->ref = ref;
	l->goodput_tokens_per_s_per_gpu = goodput;
	plan_describe(sp, r, pd, ref, l->what, sizeof l->what);
	snprintf(l->why, sizeof l->why, "%s", why);
}

/* The best candidate of each layout (hw, GPUs, TP, CP, EP, dtypes) that is not the winner, and
 * why it lost: those meeting the SLOs by goodput, then those missing one, then the pruned. */
struct lost {
	int cls;        /* 0 ok, 1 slo, 2 memory, 3 layout */
	double total;
	int64_t row;
};

static int cmp_lost(const void *a, const void *b)
{
	const struct lost *p = a, *q = b;
	if (p->cls != q->cls)
		return p->cls - q->cls;
	if (p->total != q->total)
		return p->total > q->total ? -1 : 1;
	return (p->row > q->row) - (p->row < q->row);
}

static void losers(const struct plan_spec *sp, const struct plan_result *r, struct plan_rec *rec, int64_t G,
		   const struct plan_cand *win, double win_total)
{
	enum plan_kind want = sp->mode == PLAN_MODE_PREFILL ? PLAN_KIND_PREFILL
			      : sp->mode == PLAN_MODE_DECODE ? PLAN_KIND_DECODE
							     : PLAN_KIND_COLOC;
	struct lost *L = malloc((size_t)(r->n_cands + 1) * sizeof *L);
	int64_t n = 0;
	if (!L)
		return; /* the reasons are an explanation: without memory for them the plan stands */
	for (int64_t i = 0; i < r->n_cands;) {
		/* a unit's rows are contiguous: take its best row, or its reason */
		int64_t unit = r->cands[i].unit, j = i, best = -1, any = -1;
		for (; j < r->n_cands && r->cands[j].unit == unit; j++) {
			const struct plan_cand *c = &r->cands[j];
			if (!kind_is(c, want) && !(c->id % PLAN_UNIT_ROWS == PLAN_UNIT_ROWS - 1))
				continue;
			if (any < 0 || (is(c, PLAN_ST_SLO) && !is(&r->cands[any], PLAN_ST_SLO)))
				any = j;
			if (is(c, PLAN_ST_OK) && (best < 0 || c->goodput_tokens_per_s_per_gpu >
								  r->cands[best].goodput_tokens_per_s_per_gpu))
				best = j;
		}
		i = j;
		int64_t row = best >= 0 ? best : any;
		if (row < 0)
			continue;
		const struct plan_cand *c = &r->cands[row];
		bool listed = false;
		for (int k = 0; k < rec->n_losers; k++)
			listed |= !rec->losers[k].pd && rec->losers[k].ref == c->id;
		if (c->gpus > G || (win && c->unit == win->unit) || listed)
			continue;
		int cls = best >= 0 ? 0 : is(c, PLAN_ST_SLO) ? 1 : is(c, PLAN_ST_MEMORY) ? 2 : 3;
		L[n++] = (struct lost){cls, best >= 0 ? c->goodput_tokens_per_s_per_gpu * (double)(G / c->gpus * c->gpus) : 0,
				       row};
	}
	qsort(L, (size_t)n, sizeof *L, cmp_lost);
	for (int64_t k = 0; k < n && rec->n_losers < PLAN_MAX_LOSERS; k++) {
		const struct plan_cand *c = &r->cands[L[k].row];
		char why[240];
		if (L[k].cls) {
			snprintf(why, sizeof why, "%s: %s%s", c->status, c->reason,
				 L[k].cls == 1 ? (c->est_tpot_s > sp->slo_tpot_s ? " (decode " : " (prefill ") : "");
			if (L[k].cls == 1) {
				size_t len = strlen(why);
				snprintf(why + len, sizeof why - len, "%s-bound at its best)",
					 c->est_tpot_s > sp->slo_tpot_s ? bound_of(c) : "TTFT");
			}
		} else {
			int64_t used = G / c->gpus * c->gpus;
			snprintf(why, sizeof why, "step model: %.0f %% less goodput (%.4g vs %.4g tok/s)%s; decode %s-bound%s",
				 win_total > 0 ? 100 * (1 - L[k].total / win_total) : 0, L[k].total, win_total,
				 used < G ? ", GPUs left idle" : "", bound_of(c),
				 c->decode_exposed_comm_s > 0.2 * c->tpot_s ? ", exposed communication" : "");
		}
		add_loser(sp, r, rec, false, c->id, L[k].cls ? 0 : c->goodput_tokens_per_s_per_gpu, why);
	}
	free(L);
}

static void recommend(const struct plan_spec *sp, bool served_only, struct plan_result *r, struct plan_rec *rec,
		      int64_t G, const struct choice *cc, int64_t ncc, const struct choice *pc, int64_t npc)
{
	rec->budget_gpus = G;
	rec->best_coloc = ncc ? cc[0].ref : -1;
	rec->best_pd = npc ? pc[0].ref : -1;
	/* served goodputs replace the first pass where present */
	struct choice all[2 * PLAN_MAX_SHORT + 2 + 2 * PLAN_MAX_SHORT * PLAN_MAX_VALUES];
	int n = 0;
	for (int k = 0; k < 2; k++) {
		const struct choice *set = k ? pc : cc;
		int64_t m = k ? npc : ncc;
		for (int64_t i = 0; i < m && n < (int)(sizeof all / sizeof all[0]); i++) {
			struct choice x = set[i];
			for (int s = 0; s < r->n_served; s++)
				if (same_deployment(r, r->served[s].pd, r->served[s].cand, x.pd, x.ref)) {
					x.served = s;
					x.per_gpu = r->served[s].goodput_tokens_per_s_per_gpu;
					x.total = x.per_gpu * (double)x.gpus_used;
				}
			if (served_only && x.served < 0)
				continue;
			all[n++] = x;
		}
	}
	/* copies of a deployment served for a smaller budget */
	for (int s = 0; served_only && s < r->n_served && n < (int)(sizeof all / sizeof all[0]); s++) {
		const struct plan_served *v = &r->served[s];
		bool have = false;
		for (int i = 0; i < n; i++)
			have |= all[i].served == s;
		if (have || v->gpus > G)
			continue;
		struct choice x = {.pd = v->pd, .ref = v->cand, .gpus = v->gpus, .gpus_used = G / v->gpus * v->gpus,
				   .per_gpu = v->goodput_tokens_per_s_per_gpu, .served = s};
		x.total = x.per_gpu * (double)x.gpus_used;
		all[n++] = x;
	}
	for (int i = 0; i < n; i++) {
		if (all[i].pd) {
			rec->pd_goodput = fmax(rec->pd_goodput, all[i].per_gpu);
		} else {
			rec->coloc_goodput = fmax(rec->coloc_goodput, all[i].per_gpu);
		}
	}
	int w = -1;
	for (int i = 0; i < n; i++)
		if (all[i].total > 0 && (w < 0 || better(&all[i], &all[w])))
			w = i;
	char name[160];
	if (w < 0) {
		rec->found = false;
		if (!ncc && !npc)
			snprintf(rec->why, sizeof rec->why,
				 "no layout on %lld GPUs meets the SLOs in the step model (see the losers)", (long long)G);
		else
			snprintf(rec->why, sizeof rec->why,
				 "the short list meets the SLOs in the step model but not when served (attainment "
				 "< %.0f %% at every rate)",
				 sp->attainment * 100);
		losers(sp, r, rec, G, NULL, 0);
		return;
	}
	const struct choice *x = &all[w];
	rec->found = true;
	rec->pd = x->pd;
	rec->ref = x->ref;
	rec->gpus_used = x->gpus_used;
	rec->replicas = x->gpus_used / x->gpus;
	rec->goodput_tokens_per_s_per_gpu = x->per_gpu;
	rec->goodput_tokens_per_s = x->total;
	rec->served = x->served >= 0;
	plan_describe(sp, r, x->pd, x->ref, name, sizeof name);
	const struct plan_cand *wc = x->pd ? plan_find(r, plan_find_pd(r, x->ref)->decode) : plan_find(r, x->ref);
	snprintf(rec->why, sizeof rec->why, "the most goodput on %lld GPUs: %.4g output tok/s (%.4g per GPU%s); decode %s-bound",
		 (long long)G, x->total, x->per_gpu, rec->served ? ", served" : ", step model", bound_of(wc));
	/* the other short-listed deployments first, then the best of each other layout */
	for (int i = 0; i < n; i++) {
		if (i == w)
			continue;
		char why[240];
		const struct plan_served *v = all[i].served >= 0 ? &r->served[all[i].served] : NULL;
		if (v && v->rate_per_s == 0)
			snprintf(why, sizeof why, "served: %s", v->reason);
		else
			snprintf(why, sizeof why, "%.0f %% less goodput when served (%.4g vs %.4g tok/s)%s",
				 100 * (1 - all[i].total / x->total), all[i].total, x->total,
				 all[i].gpus_used < G ? ", GPUs left idle" : "");
		add_loser(sp, r, rec, all[i].pd, all[i].ref, all[i].per_gpu, why);
	}
	/* the step model's goodput of the winner, to compare the step model's of the others with */
	double first = x->pd ? plan_find_pd(r, x->ref)->goodput_tokens_per_s_per_gpu
			     : plan_find(r, x->ref)->goodput_tokens_per_s_per_gpu;
	losers(sp, r, rec, G, x->pd ? NULL : wc, first * (double)x->gpus_used);
}

/* ---- the whole ---- */

static void count(struct plan_result *r)
{
	r->units_pruned = r->evaluated = r->pruned_layout = r->pruned_memory = r->slo_missed = 0;
	for (int64_t i = 0; i < r->n_cands; i++) {
		const struct plan_cand *c = &r->cands[i];
		if (c->id % PLAN_UNIT_ROWS == PLAN_UNIT_ROWS - 1)
			r->units_pruned++;
		if (is(c, PLAN_ST_LAYOUT))
			r->pruned_layout++;
		else if (is(c, PLAN_ST_MEMORY))
			r->pruned_memory++;
		else
			r->evaluated++;
		if (is(c, PLAN_ST_SLO))
			r->slo_missed++;
	}
}

static int64_t serve_requests(const struct plan_spec *sp, const struct plan_result *r, bool pd, int64_t ref)
{
	if (sp->serve_requests)
		return sp->serve_requests;
	const struct plan_cand *d = pd ? plan_find(r, plan_find_pd(r, ref)->decode) : plan_find(r, ref);
	int64_t slots = d->batch * d->dp * (pd ? plan_find_pd(r, ref)->b : 1);
	int64_t n = 2 * slots;
	return n < 300 ? 300 : n > 1000 ? 1000 : n;
}

int plan_finish(const struct plan_spec *sp, const struct plan_opts *o, struct plan_result *r, struct err *e)
{
	int rc = 0;
	int *rcs = NULL;
	struct err *errs = NULL;
	struct choice *cc = NULL, *pc = NULL;
	r->units = sp->units;
	count(r);
	if ((sp->mode == PLAN_MODE_ALL || sp->mode == PLAN_MODE_DISAGG) && (rc = form_pd(sp, r, e)) < 0)
		return rc;
	if ((rc = fronts(sp, r, e)) < 0)
		return rc;
	int cap = sp->short_list > 0 ? sp->short_list : 1;
	cc = calloc((size_t)sp->ax.n_gpus * (size_t)cap, sizeof *cc);
	pc = calloc((size_t)sp->ax.n_gpus * (size_t)cap, sizeof *pc);
	int64_t ncc[PLAN_MAX_VALUES] = {0}, npc[PLAN_MAX_VALUES] = {0};
	r->served = calloc((size_t)sp->ax.n_gpus * 2 * (size_t)cap + 1, sizeof *r->served);
	if (!cc || !pc || !r->served) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	bool coloc = sp->mode != PLAN_MODE_DISAGG, pd = sp->mode == PLAN_MODE_ALL || sp->mode == PLAN_MODE_DISAGG;
	for (int bi = 0; bi < sp->ax.n_gpus; bi++) {
		int64_t G = sp->ax.gpus[bi];
		if (coloc)
			ncc[bi] = choices(sp, r, G, false, cc + bi * cap, cap);
		if (pd)
			npc[bi] = choices(sp, r, G, true, pc + bi * cap, cap);
	}
	/* the short list: distinct deployments, served once each (pools alone are not served) */
	bool pools = sp->mode == PLAN_MODE_PREFILL || sp->mode == PLAN_MODE_DECODE;
	for (int bi = 0; sp->short_list && !pools && bi < sp->ax.n_gpus; bi++)
		for (int k = 0; k < 2; k++) {
			const struct choice *set = (k ? pc : cc) + bi * cap;
			for (int64_t i = 0; i < (k ? npc[bi] : ncc[bi]); i++) {
				bool seen = false;
				for (int s = 0; s < r->n_served; s++)
					seen |= same_deployment(r, r->served[s].pd, r->served[s].cand, set[i].pd, set[i].ref);
				if (seen)
					continue;
				struct plan_served *v = &r->served[r->n_served++];
				v->pd = set[i].pd;
				v->cand = set[i].ref;
				v->replicas = 1;
				v->gpus = set[i].gpus;
				v->est_rate_per_s = set[i].pd ? plan_find_pd(r, set[i].ref)->rate_per_s
							      : plan_find(r, set[i].ref)->rate_per_s;
				v->requests = serve_requests(sp, r, v->pd, v->cand);
			}
		}
	if (r->n_served) {
		rcs = calloc((size_t)r->n_served, sizeof *rcs);
		errs = calloc((size_t)r->n_served, sizeof *errs);
		int threads = o->threads > 0 ? o->threads : 1;
		pthread_t th[64];
		if (threads > 64)
			threads = 64;
		if (!rcs || !errs) {
			err_set(e, NULL, 0, 0, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
		struct serve_pool P = {.sp = sp, .r = r, .n = r->n_served, .rc = rcs, .e = errs};
		atomic_init(&P.next, 0);
		int started = 0;
		for (int t = 1; t < threads; t++, started++)
			if (pthread_create(&th[t], NULL, serve_worker, &P) != 0)
				break;
		serve_worker(&P);
		for (int t = 1; t <= started; t++)
			pthread_join(th[t], NULL);
		for (int i = 0; i < r->n_served; i++)
			if (rcs[i] < 0) {
				*e = errs[i];
				rc = rcs[i];
				goto out;
			}
		r->serve_runs = 0;
		for (int i = 0; i < r->n_served; i++)
			r->serve_runs += r->served[i].probes;
	}
	r->n_recs = sp->ax.n_gpus;
	for (int bi = 0; bi < sp->ax.n_gpus; bi++) {
		recommend(sp, sp->short_list > 0 && !pools, r, &r->recs[bi], sp->ax.gpus[bi], cc + bi * cap, ncc[bi], pc + bi * cap, npc[bi]);
	}
out:
	free(errs);
	free(rcs);
	free(pc);
	free(cc);
	return rc;
}

void plan_result_release(struct plan_result *r)
{
	free(r->cands);
	free(r->pd);
	free(r->served);
	free(r->front_tpot);
	free(r->front_ttft);
	memset(r, 0, sizeof *r);
}
