/* The serving engine: an event loop over arrivals, steps, prefetches and P/D transfers
 * (serve/serve.h; docs/SERVING.md has the rules). */
#include "serve/serve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/costs.h"
#include "serve/pool.h"
#include "serve/rng.h"
#include "serve/vision.h"
#include "sim/sim.h"

enum role { ROLE_COLOC, ROLE_PREFILL, ROLE_DECODE };

enum { EV_ARRIVAL, EV_STEP_END, EV_PREFETCH_DONE, EV_TRANSFER_DONE, EV_SAMPLE };

struct ev {
	double t;
	uint64_t seq;
	int32_t kind, a;
};

struct group {
	struct serve_pool pool;
	int32_t wait_head, wait_tail;
	int64_t n_wait;
	int32_t *run;          /* admitted requests, in admission order */
	int32_t n_run, cap_run;
	double link_free_s;    /* the host link (CPU tier), per GPU, FIFO */
	double nic_free_s;     /* P/D: the outgoing state/KV link of a prefill group */
	/* the step being formed */
	int64_t b, p, n;
	double ctx_sum, prefix_sum, copy_bytes, vision_s;
	/* SGLang's admission (serve_config.admit_sglang) */
	double new_token_ratio;
	bool full;             /* a request did not fit: no admission until one leaves */
};

/* SGLang's PrefillAdder constants (python/sglang/srt/managers/schedule_policy.py and
 * global_config.py): outputs reserved up to 4096 tokens; the running requests' share starts at
 * 0.7 and decays linearly over 600 decode steps to 0.7 x 0.14. */
#define SGLANG_CLIP_NEW_TOKENS 4096
#define SGLANG_INIT_RATIO 0.7
#define SGLANG_MIN_RATIO (0.7 * 0.14)
#define SGLANG_RATIO_DECAY ((SGLANG_INIT_RATIO - SGLANG_MIN_RATIO) / 600.0)

struct side;

struct replica {
	struct side *side;
	int32_t index;         /* within its side */
	struct group *g;
	bool busy;
	double step_start_s;
};

struct side {
	enum role role;
	struct scenario s;     /* its layout */
	struct serve_costs costs;
	bool costs_borrowed;   /* costs belong to serve_opts.tables */
	int64_t n_rep;
	struct replica *rep;
	int64_t pool_bytes, fixed_bytes, token_bytes, state_bytes, page_tokens;
	int kda_groups;
	int64_t group_gpus;    /* GPUs of an attention DP group (tp x cp) */
};

struct req {
	int32_t qnext;
	uint8_t st;
	bool restoring, vision_pending, first_done, has_pseq;
	int32_t rep, grp;      /* where it is now (side index implied by state) */
	int32_t prep, pgrp;    /* P/D: the prefill group holding its state until the transfer ends */
	int64_t prompt, output, target, computed, generated, chunk;
	int64_t shared;        /* a shared prefix (system prompt) ends here: a message boundary */
	struct serve_pool_seq seq, pseq;
	double t_arrival, t_admit, t_first, t_last, t_done;
	int64_t cached, prefilled, steps;
	int32_t preempt;
	bool admitted_once, cpu_hit;
	int32_t next_turn;     /* the request of the next turn (-1) */
};

struct engine {
	const struct scenario *s;
	const struct model *m;
	const struct hw *hw;
	const struct serve_config *c;
	const struct serve_workload *w;
	struct serve_result *r;
	struct side sides[2];  /* co-located: sides[0]; P/D: prefill, decode */
	int n_sides;
	struct req *q;
	int32_t *order;        /* independent arrivals by time */
	int64_t n_order, next_order;
	struct ev *heap;
	int64_t n_heap, cap_heap;
	uint64_t ev_seq;
	double now;
	int64_t done;
	int64_t state_count[SERVE_ST_COUNT];
	double area, last_t;   /* integral of requests in the system */
	int64_t in_system;
	struct serve_rng rng;
	int64_t k;             /* draft tokens */
	struct model draft;
	bool has_draft;
	double accepted_sum;
	int64_t accepted_steps;
	double sample_tokens_prev;
	int64_t tokens_out;
	int64_t max_steps;
	int threads;           /* serve_opts.threads: the cost tables' */
	struct serve_costs *tables; /* serve_opts.tables */
	double sample_s;       /* the sampling interval (doubles when samples are thinned) */
	/* conversation -> (replica, group) affinity of the first side */
	uint64_t *aff_key;
	int32_t *aff_val;
	int64_t aff_cap, aff_used;
	/* inter-token gaps: consecutive equal gaps are added at once */
	double itl_gap;
	int64_t itl_times;
	struct err *e;
	int err_rc;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- events ---- */

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int ev_push(struct engine *E, double t, int kind, int32_t a)
{
	if (E->n_heap == E->cap_heap) {
		int64_t nc = E->cap_heap ? E->cap_heap * 2 : 1024;
		struct ev *h = realloc(E->heap, (size_t)nc * sizeof *h);
		if (!h)
			return -ENOMEM;
		E->heap = h;
		E->cap_heap = nc;
	}
	int64_t i = E->n_heap++;
	struct ev x = {.t = t, .seq = E->ev_seq++, .kind = kind, .a = a};
	while (i > 0) {
		int64_t up = (i - 1) / 2;
		if (!ev_less(&x, &E->heap[up]))
			break;
		E->heap[i] = E->heap[up];
		i = up;
	}
	E->heap[i] = x;
	return 0;
}

static struct ev ev_pop(struct engine *E)
{
	struct ev top = E->heap[0], x = E->heap[--E->n_heap];
	int64_t i = 0;
	for (;;) {
		int64_t l = 2 * i + 1, r = l + 1, m = i;
		const struct ev *best = &x;
		if (l < E->n_heap && ev_less(&E->heap[l], best))
			m = l, best = &E->heap[l];
		if (r < E->n_heap && ev_less(&E->heap[r], best))
			m = r;
		if (m == i)
			break;
		E->heap[i] = E->heap[m];
		i = m;
	}
	if (E->n_heap > 0)
		E->heap[i] = x;
	return top;
}

/* ---- bookkeeping ---- */

static void set_state(struct engine *E, struct req *r, int st)
{
	E->state_count[r->st]--;
	E->state_count[st]++;
	r->st = (uint8_t)st;
}

static void itl_flush(struct engine *E)
{
	if (E->itl_times > 0)
		serve_hist_add(&E->r->itl, E->itl_gap, E->itl_times);
	E->itl_times = 0;
}

static void itl_add(struct engine *E, double gap)
{
	if (E->itl_times > 0 && gap != E->itl_gap)
		itl_flush(E);
	E->itl_gap = gap;
	E->itl_times++;
}

static void advance(struct engine *E, double t)
{
	if (t > E->last_t) {
		E->area += (double)E->in_system * (t - E->last_t);
		E->last_t = t;
	}
	E->now = t;
}

static struct group *grp_of(struct engine *E, int side, int32_t rep, int32_t grp)
{
	return &E->sides[side].rep[rep].g[grp];
}

static int run_push(struct group *g, int32_t i)
{
	if (g->n_run == g->cap_run) {
		int32_t nc = g->cap_run ? g->cap_run * 2 : 64;
		int32_t *n = realloc(g->run, (size_t)nc * sizeof *n);
		if (!n)
			return -ENOMEM;
		g->run = n;
		g->cap_run = nc;
	}
	g->run[g->n_run++] = i;
	return 0;
}

static void run_remove(struct group *g, int32_t i)
{
	for (int32_t k = 0; k < g->n_run; k++)
		if (g->run[k] == i) {
			memmove(g->run + k, g->run + k + 1, (size_t)(g->n_run - k - 1) * sizeof *g->run);
			g->n_run--;
			g->full = false;
			return;
		}
}

static void wait_push(struct engine *E, struct group *g, int32_t i, bool front)
{
	struct req *r = &E->q[i];
	r->qnext = -1;
	if (g->wait_head < 0) {
		g->wait_head = g->wait_tail = i;
	} else if (front) {
		r->qnext = g->wait_head;
		g->wait_head = i;
	} else {
		E->q[g->wait_tail].qnext = i;
		g->wait_tail = i;
	}
	g->n_wait++;
}

static int32_t wait_pop(struct engine *E, struct group *g)
{
	int32_t i = g->wait_head;
	g->wait_head = E->q[i].qnext;
	if (g->wait_head < 0)
		g->wait_tail = -1;
	g->n_wait--;
	return i;
}

/* Bytes written back to CPU DRAM queue on the group's host link. */
static void take_offload(struct engine *E, struct group *g)
{
	int64_t b = serve_pool_take_offload(&g->pool);
	if (b > 0) {
		double start = fmax(E->now, g->link_free_s);
		g->link_free_s = start + (double)b / E->c->host_link_bytes_per_s;
	}
}

/* ---- routing ---- */

static int32_t *aff_slot(struct engine *E, uint64_t key, bool *found)
{
	uint64_t k = key | 1, mask = (uint64_t)E->aff_cap - 1;
	uint64_t i = serve_mix(k, 7) & mask;
	while (E->aff_key[i] && E->aff_key[i] != k)
		i = (i + 1) & mask;
	*found = E->aff_key[i] == k;
	E->aff_key[i] = k;
	return &E->aff_val[i];
}

static int aff_grow(struct engine *E)
{
	int64_t oc = E->aff_cap, nc = oc ? oc * 2 : 1024;
	uint64_t *ok = E->aff_key;
	int32_t *ov = E->aff_val;
	E->aff_key = calloc((size_t)nc, sizeof *E->aff_key);
	E->aff_val = calloc((size_t)nc, sizeof *E->aff_val);
	if (!E->aff_key || !E->aff_val) {
		free(E->aff_key);
		free(E->aff_val);
		E->aff_key = ok;
		E->aff_val = ov;
		return -ENOMEM;
	}
	E->aff_cap = nc;
	for (int64_t i = 0; i < oc; i++)
		if (ok[i]) {
			bool f;
			*aff_slot(E, ok[i], &f) = ov[i];
		}
	free(ok);
	free(ov);
	return 0;
}

/* The least loaded DP group of a side (waiting + admitted), the lowest index on ties. */
static void least_loaded(struct engine *E, int side, int32_t *rep, int32_t *grp)
{
	struct side *sd = &E->sides[side];
	int64_t best = INT64_MAX;
	for (int32_t i = 0; i < sd->n_rep; i++)
		for (int32_t k = 0; k < sd->s.dp; k++) {
			const struct group *g = &sd->rep[i].g[k];
			int64_t load = g->n_wait + g->n_run;
			if (load < best) {
				best = load;
				*rep = i;
				*grp = k;
			}
		}
}

/* Where a new request goes: its conversation's group (its prefix lives there), else the least
 * loaded. */
static int route(struct engine *E, int32_t i, int32_t *rep, int32_t *grp)
{
	const struct serve_request *q = &E->w->req[i];
	least_loaded(E, 0, rep, grp);
	if (q->conversation < 0)
		return 0;
	if ((E->aff_used + 1) * 2 > E->aff_cap && aff_grow(E) < 0)
		return -ENOMEM;
	bool found;
	int32_t *v = aff_slot(E, (uint64_t)q->conversation, &found);
	int32_t per = (int32_t)E->sides[0].s.dp;
	if (found) {
		*rep = *v / per;
		*grp = *v % per;
	} else {
		*v = *rep * per + *grp;
		E->aff_used++;
	}
	return 0;
}

/* ---- requests ---- */

static bool ckpt_policy(const void *ctx, int64_t tokens)
{
	const struct req *r = ((const void *const *)ctx)[0];
	const struct serve_config *c = ((const void *const *)ctx)[1];
	switch (c->ckpt) {
	case SERVE_CKPT_NONE:
		return false;
	case SERVE_CKPT_EVERY:
		return true;
	case SERVE_CKPT_EVERY_N:
		return tokens % c->ckpt_every_tokens == 0;
	case SERVE_CKPT_TURNS: {
		/* message boundaries: the end of a shared prefix (a system prompt), of the prompt, and of
		 * the output (the next turn's prefix), each at the last endpoint at or before it */
		int64_t h = c->hash_tokens;
		return tokens == r->prompt / h * h || tokens == (r->prompt + r->output - 1) / h * h ||
		       (r->shared > 0 && tokens == r->shared / h * h);
	}
	case SERVE_CKPT_COUNT:
		break;
	}
	return false;
}

/* Checkpoints a step will take for r, from `from` to `to` computed tokens (charged in the step
 * that passes them). */
static int64_t ckpt_bytes_between(struct engine *E, const struct side *sd, const struct req *r, int64_t from,
				  int64_t to)
{
	if (!E->c->prefix_cache || sd->kda_groups == 0)
		return 0;
	const void *ctx[2] = {r, E->c};
	int64_t h = E->c->hash_tokens, n = 0;
	for (int64_t t = (from / h + 1) * h; t <= to; t += h)
		if (ckpt_policy(ctx, t))
			n++;
	return n * sd->state_bytes;
}

static void reg(struct engine *E, struct group *g, struct req *r, int32_t i)
{
	const void *ctx[2] = {r, E->c};
	serve_pool_register(&g->pool, &r->seq, &E->w->req[i], r->computed, ckpt_policy, ctx);
	take_offload(E, g);
}

static void finish(struct engine *E, int32_t i);

static void preempt(struct engine *E, int side, struct replica *R, struct group *g, int32_t v)
{
	struct req *r = &E->q[v];
	serve_pool_release(&g->pool, &r->seq);
	take_offload(E, g);
	run_remove(g, v);
	r->preempt++;
	r->target = r->prompt + r->generated;
	r->computed = 0;
	r->restoring = false;
	r->chunk = 0;
	if (E->sides[side].role == ROLE_DECODE) {
		/* recomputed by the prefill pool */
		int32_t pr = 0, pg = 0;
		least_loaded(E, 0, &pr, &pg);
		r->rep = pr;
		r->grp = pg;
		set_state(E, r, SERVE_ST_QUEUED);
		wait_push(E, grp_of(E, 0, pr, pg), v, true);
	} else {
		r->rep = R->index;
		set_state(E, r, SERVE_ST_QUEUED);
		wait_push(E, g, v, true);
	}
}

/* Pages for r's next `more` tokens, preempting the latest admitted others (then r) when even
 * eviction does not make room. Returns false when r itself was preempted. */
static bool grow_or_preempt(struct engine *E, int side, struct replica *R, struct group *g, int32_t i, int64_t more)
{
	struct req *r = &E->q[i];
	while (serve_pool_grow(&g->pool, &r->seq, r->computed + more) < 0) {
		int32_t v = -1;
		for (int32_t k = g->n_run - 1; k >= 0; k--) {
			int32_t x = g->run[k];
			int st = E->q[x].st;
			if (x != i && (st == SERVE_ST_DECODE || st == SERVE_ST_PREFILL) && E->q[x].chunk == 0) {
				v = x;
				break;
			}
		}
		if (v < 0) {
			preempt(E, side, R, g, i);
			return false;
		}
		preempt(E, side, R, g, v);
	}
	take_offload(E, g);
	return true;
}

static void vision_cost(struct engine *E, const struct side *sd, struct group *g, struct req *r, int32_t i)
{
	if (!r->vision_pending)
		return;
	const struct serve_request *q = &E->w->req[i];
	double t = 0;
	if (q->images > 0)
		t += q->images * serve_vision_time(E->hw, &sd->s.clock, 1, q->image_px, E->m->hidden);
	if (q->video_frames > 0)
		t += serve_vision_time(E->hw, &sd->s.clock, q->video_frames, q->video_px, E->m->hidden);
	/* images of a step spread over the group's GPUs */
	g->vision_s += t / (double)sd->group_gpus;
	r->vision_pending = false;
}

/* A prefill chunk of r in this step. */
static void schedule_chunk(struct engine *E, const struct side *sd, struct group *g, struct req *r, int32_t i,
			   int64_t *budget)
{
	int64_t c = r->target - r->computed;
	if (c > E->c->chunk_tokens)
		c = E->c->chunk_tokens;
	if (c > *budget)
		c = *budget;
	if (c <= 0)
		return;
	r->chunk = c;
	g->p += c;
	g->n++;
	g->prefix_sum += (double)r->computed * (double)c;
	g->copy_bytes += 2.0 * (double)ckpt_bytes_between(E, sd, r, r->computed, r->computed + c);
	*budget -= c;
	vision_cost(E, sd, g, r, i);
}

/* Admits waiting requests into group g while the budget and HBM allow. */
/* SGLang's reservation beside a new request r's prompt: its own output (clipped) and the running
 * requests' remaining outputs at the group's new_token_ratio, in bytes of pool per GPU. */
static int64_t sglang_reserve_bytes(const struct engine *E, const struct side *sd, const struct group *g,
				    const struct req *r)
{
	double tokens = (double)(r->output < SGLANG_CLIP_NEW_TOKENS ? r->output : SGLANG_CLIP_NEW_TOKENS);
	for (int32_t x = 0; x < g->n_run; x++) {
		const struct req *o = &E->q[g->run[x]];
		int64_t left = o->output - o->generated;
		tokens += (double)(left < SGLANG_CLIP_NEW_TOKENS ? left : SGLANG_CLIP_NEW_TOKENS) * g->new_token_ratio;
	}
	return (int64_t)ceil(tokens * (double)sd->token_bytes);
}

static int admit_waiting(struct engine *E, int side, struct replica *R, struct group *g, int64_t *budget)
{
	struct side *sd = &E->sides[side];
	const struct serve_config *c = E->c;
	while (g->wait_head >= 0 && g->n_run < c->max_running && *budget > 0) {
		int32_t i = g->wait_head;
		struct req *r = &E->q[i];
		const struct serve_request *q = &E->w->req[i];
		struct serve_pool_match m = {0};
		if (c->prefix_cache && r->target > 1)
			serve_pool_lookup(&g->pool, q, r->target - 1, &m);
		int64_t need = serve_pool_need(&g->pool, r->target, m.tokens);
		int64_t pinned = serve_pool_pinned_bytes(&g->pool);
		if (c->admit_sglang) {
			if (g->full)
				break;
			if (g->n_run > 0 && pinned + need + sglang_reserve_bytes(E, sd, g, r) > g->pool.cfg.capacity_bytes) {
				g->full = true;
				break;
			}
		} else if (g->n_run > 0 && (double)(pinned + need) > c->kv_watermark * (double)g->pool.cfg.capacity_bytes) {
			break;
		}
		if (serve_pool_admit(&g->pool, &r->seq, q, &m, r->target) < 0) {
			if (g->n_run == 0 && serve_pool_pinned_bytes(&g->pool) == 0) {
				err_set(E->e, q->line ? E->c->trace : NULL, q->line, 0,
					"request %d (prompt %lld tokens) does not fit in the HBM pool of a DP group "
					"(%lld bytes per GPU)",
					(int)i, (long long)r->target, (long long)g->pool.cfg.capacity_bytes);
				return -ENOSPC;
			}
			break;
		}
		take_offload(E, g);
		wait_pop(E, g);
		if (run_push(g, i) < 0)
			return -ENOMEM;
		r->rep = R->index;
		r->grp = (int32_t)(g - R->g);
		if (!r->admitted_once) {
			r->admitted_once = true;
			r->t_admit = E->now;
			r->cached = m.tokens;
			r->cpu_hit = m.cpu;
		}
		r->computed = m.tokens;
		r->restoring = m.tokens > 0;
		g->copy_bytes += (double)m.copy_bytes;
		if (m.cpu) {
			/* the prefix comes back from CPU DRAM first */
			set_state(E, r, SERVE_ST_PREFETCH);
			double start = fmax(E->now, g->link_free_s);
			g->link_free_s = start + (double)m.cpu_bytes / c->host_link_bytes_per_s;
			if (ev_push(E, g->link_free_s, EV_PREFETCH_DONE, i) < 0)
				return -ENOMEM;
			continue;
		}
		set_state(E, r, SERVE_ST_PREFILL);
		schedule_chunk(E, sd, g, r, i, budget);
	}
	return 0;
}

/* P/D: bytes of a request's state and cache sent from the prefill to the decode pool (whole,
 * not per GPU), and the time on the link. */
static double transfer_time(struct engine *E, const struct req *r, int64_t *bytes_out)
{
	const struct side *P = &E->sides[0], *D = &E->sides[1];
	int64_t ctx = r->computed;
	/* the whole cache of every MLA layer once, every KDA layer's state once */
	int64_t kv = ctx * P->token_bytes * P->s.cp;
	int64_t state = P->state_bytes * P->s.tp;
	int64_t bytes = kv + state;
	*bytes_out = bytes;
	double links = (double)(P->s.tp < D->s.tp ? P->s.tp : D->s.tp);
	double bw = E->c->pd_link == SERVE_LINK_NVLINK ? E->hw->nvlink_bw_bytes_per_s : E->hw->nic_bw_bytes_per_s;
	double lat = E->c->pd_link == SERVE_LINK_NVLINK ? E->hw->nvlink_latency_s : E->hw->nic_latency_s;
	double t = (double)bytes / (links * bw) + lat;
	/* every decode TP rank holds the whole latent cache: it arrives once per group and is
	 * all-gathered over NVLink; KDA state re-laid out when the TP sizes differ */
	if (D->s.tp > 1)
		t += (double)kv * (double)(D->s.tp - 1) / (double)D->s.tp / E->hw->nvlink_bw_bytes_per_s;
	if (P->s.tp != D->s.tp)
		t += 2.0 * (double)D->state_bytes / E->hw->hbm_bw_bytes_per_s;
	return t;
}

/* P/D decode side: admits requests whose prefill is done, starting their transfers. */
static int admit_decode(struct engine *E, struct replica *R, struct group *g)
{
	const struct serve_config *c = E->c;
	while (g->wait_head >= 0 && g->n_run < c->max_running) {
		int32_t i = g->wait_head;
		struct req *r = &E->q[i];
		int64_t need = serve_pool_need(&g->pool, r->computed + 1 + E->k, 0);
		if (g->n_run > 0 && (double)(serve_pool_pinned_bytes(&g->pool) + need) >
					    c->kv_watermark * (double)g->pool.cfg.capacity_bytes)
			break;
		struct serve_pool_match none = {0};
		if (serve_pool_admit(&g->pool, &r->seq, &E->w->req[i], &none, r->computed + 1) < 0) {
			if (g->n_run == 0 && serve_pool_pinned_bytes(&g->pool) == 0) {
				err_set(E->e, NULL, 0, 0, "request %d (context %lld) does not fit in a decode DP group's pool",
					(int)i, (long long)r->computed);
				return -ENOSPC;
			}
			break;
		}
		take_offload(E, g);
		wait_pop(E, g);
		if (run_push(g, i) < 0)
			return -ENOMEM;
		r->rep = R->index;
		r->grp = (int32_t)(g - R->g);
		set_state(E, r, SERVE_ST_TRANSFER);
		struct group *pg = grp_of(E, 0, r->prep, r->pgrp);
		int64_t bytes;
		double t = transfer_time(E, r, &bytes);
		double start = fmax(E->now, pg->nic_free_s);
		pg->nic_free_s = start + t;
		E->r->sum.pd_transfer_bytes += bytes;
		if (ev_push(E, pg->nic_free_s, EV_TRANSFER_DONE, i) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int record_step(struct engine *E, const struct replica *R, int side, double t, int kind, int64_t b, int64_t p)
{
	struct serve_result *res = E->r;
	res->sum.steps++;
	res->sum.busy_s += t;
	if (res->n_steps < E->max_steps) {
		struct serve_step_rec *x = &res->steps[res->n_steps++];
		x->start_s = E->now;
		x->time_s = t;
		x->replica = (int32_t)(R->index + (side == 1 ? E->sides[0].n_rep : 0));
		x->decode = (int32_t)b;
		x->prefill_tokens = (int32_t)p;
		x->kind = kind;
	}
	return 0;
}

/* Group g's decoding requests take a step each (growing their pages, preempting when full). */
static void decode_part(struct engine *E, int side, struct replica *R, struct group *g, int64_t per_req)
{
	for (int32_t x = 0; x < g->n_run; x++) {
		int32_t i = g->run[x];
		struct req *r = &E->q[i];
		if (r->st != SERVE_ST_DECODE || r->chunk != 0)
			continue;
		if (!grow_or_preempt(E, side, R, g, i, per_req)) {
			x = -1; /* the run list changed: start over */
			g->b = 0;
			g->ctx_sum = 0;
			for (int32_t y = 0; y < g->n_run; y++)
				if (E->q[g->run[y]].chunk < 0)
					E->q[g->run[y]].chunk = 0;
			continue;
		}
		r->chunk = -1;
		g->b++;
		g->ctx_sum += (double)r->computed;
	}
	if (g->b > 0)
		g->new_token_ratio = fmax(g->new_token_ratio - SGLANG_RATIO_DECAY, SGLANG_MIN_RATIO);
}

/* Group g's prefill chunks in what the budget leaves: requests prefilling, then admissions. */
static int prefill_part(struct engine *E, int side, struct replica *R, struct group *g, int64_t budget)
{
	const struct side *sd = &E->sides[side];
	for (int32_t x = 0; x < g->n_run && budget > 0; x++) {
		int32_t i = g->run[x];
		struct req *r = &E->q[i];
		if (r->st == SERVE_ST_PREFILL && r->chunk == 0 && r->computed < r->target)
			schedule_chunk(E, sd, g, r, i, &budget);
	}
	return admit_waiting(E, side, R, g, &budget);
}

static bool has_prefill_work(struct engine *E, const struct group *g)
{
	if (g->wait_head >= 0 && g->n_run < E->c->max_running)
		return true;
	for (int32_t x = 0; x < g->n_run; x++)
		if (E->q[g->run[x]].st == SERVE_ST_PREFILL)
			return true;
	return false;
}

/* Forms and starts the next step of replica R when it has work. Per DP group: with mixed steps,
 * decode and then prefill chunks in the budget left; without (SGLang's default), a group with
 * prefill work prefills and the others decode (SGLang's DP-attention ranks schedule on their own
 * and meet at the MoE); a prefill pool only prefills, a decode pool only decodes. */
static int try_start(struct engine *E, int side, struct replica *R)
{
	if (R->busy)
		return 0;
	struct side *sd = &E->sides[side];
	const struct serve_config *c = E->c;
	const int64_t per_req = 1 + E->k;
	int rc;
	for (int32_t k = 0; k < sd->s.dp; k++) {
		struct group *g = &R->g[k];
		g->b = g->p = g->n = 0;
		g->ctx_sum = g->prefix_sum = g->copy_bytes = g->vision_s = 0;
		switch (sd->role) {
		case ROLE_DECODE:
			if ((rc = admit_decode(E, R, g)) < 0)
				return rc;
			decode_part(E, side, R, g, per_req);
			break;
		case ROLE_PREFILL:
			if ((rc = prefill_part(E, side, R, g, c->token_budget)) < 0)
				return rc;
			break;
		case ROLE_COLOC:
			if (c->mixed) {
				decode_part(E, side, R, g, per_req);
				if ((rc = prefill_part(E, side, R, g, c->token_budget - g->b * per_req)) < 0)
					return rc;
			} else {
				if (has_prefill_work(E, g) && (rc = prefill_part(E, side, R, g, c->token_budget)) < 0)
					return rc;
				if (g->p == 0)
					decode_part(E, side, R, g, per_req);
			}
			break;
		}
	}
	int64_t B = 0, P = 0, N = 1, sb = 0, sp = 0;
	double ctx = 0, prefix = 0, extra = 0;
	for (int32_t k = 0; k < sd->s.dp; k++) {
		const struct group *g = &R->g[k];
		if (g->b > B)
			B = g->b;
		if (g->p > P) {
			P = g->p;
			N = g->n;
		}
		sb += g->b;
		sp += g->p;
		ctx += g->ctx_sum;
		prefix += g->prefix_sum;
		double x = g->copy_bytes / E->hw->hbm_bw_bytes_per_s + g->vision_s;
		if (x > extra)
			extra = x;
	}
	if (B == 0 && P == 0)
		return 0;
	/* the groups' tokens over the busiest group's: how loaded the other groups are */
	int64_t busiest_tokens = 0;
	for (int32_t k = 0; k < sd->s.dp; k++) {
		int64_t x = R->g[k].b * per_req + R->g[k].p;
		if (x > busiest_tokens)
			busiest_tokens = x;
	}
	double fill = busiest_tokens > 0 ? (double)(sb * per_req + sp) / (double)busiest_tokens : (double)sd->s.dp;
	double t = serve_costs_step(&sd->costs, B, P, N, sb ? ctx / (double)sb : 0, sp ? prefix / (double)sp : 0,
				    fill) +
		   extra + sd->s.step_overhead_s;
	for (int32_t k = 0; k < sd->s.dp; k++) {
		E->r->sum.vision_s += R->g[k].vision_s;
		E->r->sum.step_prefill_tokens += R->g[k].p;
	}
	R->busy = true;
	R->step_start_s = E->now;
	record_step(E, R, side, t, P > 0 && B == 0 ? 1 : 0, B, P);
	return ev_push(E, E->now + t, EV_STEP_END, (int32_t)((side << 24) | R->index));
}

/* Tokens a decode step yields for one request: 1 + the drafts accepted in a row. */
static int64_t draw_accepted(struct engine *E)
{
	int64_t a = 1;
	for (int64_t d = 0; d < E->k; d++) {
		int pos = (int)(d < E->c->n_accept ? d : E->c->n_accept - 1);
		if (E->c->n_accept <= 0 || serve_rng_u01(&E->rng) >= E->c->accept[pos])
			break;
		a++;
	}
	return a;
}

static int spawn_next_turn(struct engine *E, int32_t i)
{
	int32_t nx = E->q[i].next_turn;
	if (nx < 0)
		return 0;
	double t = E->now + E->w->req[nx].think_s;
	return ev_push(E, t, EV_ARRIVAL, nx);
}

static void finish(struct engine *E, int32_t i)
{
	struct req *r = &E->q[i];
	set_state(E, r, SERVE_ST_DONE);
	r->t_done = E->now;
	E->done++;
	E->in_system--;
	E->tokens_out += r->generated;
}

static int step_end(struct engine *E, int side, struct replica *R)
{
	struct side *sd = &E->sides[side];
	R->busy = false;
	int rc;
	for (int32_t k = 0; k < sd->s.dp; k++) {
		struct group *g = &R->g[k];
		for (int32_t x = 0; x < g->n_run; x++) {
			int32_t i = g->run[x];
			struct req *r = &E->q[i];
			if (r->chunk > 0) {
				r->computed += r->chunk;
				r->prefilled += r->chunk;
				r->chunk = 0;
				if (r->restoring) {
					serve_pool_restored(&g->pool, &r->seq);
					r->restoring = false;
				}
				reg(E, g, r, i);
				if (r->computed < r->target)
					continue;
				/* prefill done: it samples the next token */
				r->generated++;
				E->r->sum.step_output_tokens++;
				if (sd->role == ROLE_PREFILL && r->generated < r->output) {
					/* hand over to the decode pool; the state stays here until sent */
					r->pseq = r->seq;
					memset(&r->seq, 0, sizeof r->seq);
					r->has_pseq = true;
					r->prep = R->index;
					r->pgrp = k;
					run_remove(g, i);
					x--;
					int32_t dr = 0, dg = 0;
					least_loaded(E, 1, &dr, &dg);
					set_state(E, r, SERVE_ST_DECODE_QUEUED);
					wait_push(E, grp_of(E, 1, dr, dg), i, false);
					if ((rc = try_start(E, 1, &E->sides[1].rep[dr])) < 0)
						return rc;
					continue;
				}
				if (!r->first_done) {
					r->first_done = true;
					r->t_first = E->now;
				} else {
					itl_add(E, E->now - r->t_last);
					r->steps++;
				}
				r->t_last = E->now;
				if (r->generated >= r->output) {
					serve_pool_release(&g->pool, &r->seq);
					take_offload(E, g);
					run_remove(g, i);
					x--;
					finish(E, i);
					if ((rc = spawn_next_turn(E, i)) < 0)
						return rc;
					continue;
				}
				set_state(E, r, SERVE_ST_DECODE);
			} else if (r->chunk < 0) {
				r->chunk = 0;
				int64_t a = draw_accepted(E);
				E->accepted_sum += (double)a;
				E->accepted_steps++;
				if (a > r->output - r->generated)
					a = r->output - r->generated;
				r->generated += a;
				E->r->sum.step_output_tokens += a;
				r->computed += a;
				r->steps++;
				itl_add(E, E->now - r->t_last);
				r->t_last = E->now;
				reg(E, g, r, i);
				if (r->generated >= r->output) {
					serve_pool_release(&g->pool, &r->seq);
					take_offload(E, g);
					run_remove(g, i);
					x--;
					finish(E, i);
					if ((rc = spawn_next_turn(E, i)) < 0)
						return rc;
				}
			}
		}
	}
	itl_flush(E);
	if ((rc = try_start(E, side, R)) < 0)
		return rc;
	/* P/D: the prefill pool's memory may have been freed: both sides may go on */
	return 0;
}

static int on_arrival(struct engine *E, int32_t i)
{
	struct req *r = &E->q[i];
	r->t_arrival = E->now;
	E->in_system++;
	int32_t rep = 0, grp = 0;
	int rc = route(E, i, &rep, &grp);
	if (rc < 0)
		return rc;
	r->rep = rep;
	r->grp = grp;
	set_state(E, r, SERVE_ST_QUEUED);
	wait_push(E, grp_of(E, 0, rep, grp), i, false);
	return try_start(E, 0, &E->sides[0].rep[rep]);
}

static int on_transfer_done(struct engine *E, int32_t i)
{
	struct req *r = &E->q[i];
	struct group *pg = grp_of(E, 0, r->prep, r->pgrp);
	serve_pool_release(&pg->pool, &r->pseq);
	take_offload(E, pg);
	r->has_pseq = false;
	set_state(E, r, SERVE_ST_DECODE);
	if (!r->first_done) {
		/* the token the prefill sampled reaches the user through the decode server */
		r->first_done = true;
		r->t_first = E->now;
	}
	r->t_last = E->now;
	int rc = try_start(E, 1, &E->sides[1].rep[r->rep]);
	return rc < 0 ? rc : try_start(E, 0, &E->sides[0].rep[r->prep]);
}

static int on_prefetch_done(struct engine *E, int32_t i)
{
	struct req *r = &E->q[i];
	struct group *g = grp_of(E, 0, r->rep, r->grp);
	serve_pool_prefetch_done(&g->pool, &r->seq);
	set_state(E, r, SERVE_ST_PREFILL);
	return try_start(E, 0, &E->sides[0].rep[r->rep]);
}

/* Samples are bounded: past SERVE_MAX_SAMPLES every other one is dropped and the interval
 * doubles. */
static void thin_samples(struct engine *E)
{
	struct serve_result *res = E->r;
	int64_t k = 0;
	for (int64_t i = 0; i < res->n_samples; i += 2)
		res->samples[k++] = res->samples[i];
	res->n_samples = k;
	E->sample_s *= 2;
}

static int sample(struct engine *E)
{
	struct serve_result *res = E->r;
	if (res->n_samples >= SERVE_MAX_SAMPLES)
		thin_samples(E);
	if (res->n_samples % 1024 == 0) {
		struct serve_sample *n = realloc(res->samples, (size_t)(res->n_samples + 1024) * sizeof *n);
		if (!n)
			return -ENOMEM;
		res->samples = n;
	}
	struct serve_sample *x = &res->samples[res->n_samples];
	memset(x, 0, sizeof *x);
	x->t_s = E->now;
	x->queued = E->state_count[SERVE_ST_QUEUED] + E->state_count[SERVE_ST_DECODE_QUEUED];
	x->prefill = E->state_count[SERVE_ST_PREFILL] + E->state_count[SERVE_ST_PREFETCH];
	x->decode = E->state_count[SERVE_ST_DECODE];
	x->transfer = E->state_count[SERVE_ST_TRANSFER];
	x->in_system = E->in_system;
	for (int sdi = 0; sdi < E->n_sides; sdi++)
		for (int32_t i = 0; i < E->sides[sdi].n_rep; i++)
			for (int32_t k = 0; k < E->sides[sdi].s.dp; k++) {
				const struct serve_pool *p = &E->sides[sdi].rep[i].g[k].pool;
				double share = p->cfg.capacity_bytes > 0 ? (double)serve_pool_pinned_bytes(p) /
										   (double)p->cfg.capacity_bytes
									 : 0;
				if (share > x->hbm_used_share)
					x->hbm_used_share = share;
				if (p->st.cpu_used_bytes > x->cpu_bytes)
					x->cpu_bytes = p->st.cpu_used_bytes;
			}
	double dt = res->n_samples > 0 ? E->now - res->samples[res->n_samples - 1].t_s : E->now;
	x->tokens_per_s = dt > 0 ? (double)(E->tokens_out - (int64_t)E->sample_tokens_prev) / dt : 0;
	E->sample_tokens_prev = (double)E->tokens_out;
	res->n_samples++;
	return 0;
}

/* ---- setup ---- */

/* Per-GPU geometry of a side's pool. */
static int side_init(struct engine *E, struct side *sd, enum role role, const struct serve_layout *l)
{
	const struct serve_config *c = E->c;
	sd->role = role;
	sd->s = *E->s;
	if (l) {
		sd->s.gpus = l->gpus;
		sd->s.tp = l->tp;
		sd->s.dp = l->dp;
		sd->s.ep = l->ep;
		sd->s.cp = 1;
		sd->n_rep = l->replicas;
	} else {
		sd->n_rep = c->replicas;
	}
	if (sd->s.pp > 1) {
		err_set(E->e, E->s->file, 0, 0, "serve: pipeline parallelism (pp %lld) is not modeled in serving",
			(long long)sd->s.pp);
		return -EINVAL;
	}
	int rc = sim_check(&sd->s, E->m, E->hw, E->e);
	if (rc < 0)
		return rc;
	sd->group_gpus = sd->s.tp * sd->s.cp;
	struct sim_hbm one;
	const int64_t C = INT64_C(1) << 20;
	sim_hbm(&sd->s, E->m, E->hw, sd->s.dp, C, 0, &one);
	sd->token_bytes = (one.mla_kv + one.dsa_index + C - 1) / C;
	sd->state_bytes = one.kda_state + one.conv_state;
	struct model_inventory inv;
	model_inventory(E->m, &inv);
	int G = (int)c->kda_groups;
	if (inv.kda_layers == 0)
		G = 0;
	else if (G == 0)
		G = inv.mla_layers > 0 ? (inv.kda_layers + inv.mla_layers - 1) / inv.mla_layers : 1;
	if (G > SERVE_MAX_KDA_GROUPS)
		G = SERVE_MAX_KDA_GROUPS;
	sd->kda_groups = G;
	int64_t group_bytes = G ? (sd->state_bytes + G - 1) / G : 0;
	const int64_t H = c->hash_tokens;
	int64_t pt = c->page_tokens;
	if (!pt) {
		pt = G && sd->token_bytes ? group_bytes / sd->token_bytes / H * H : H;
		if (pt < H)
			pt = H;
		if (pt > SERVE_MAX_PAGE_ENDPOINTS * H)
			pt = SERVE_MAX_PAGE_ENDPOINTS * H;
	}
	sd->page_tokens = pt;
	/* cost tables over what the workload can ask for */
	int64_t max_ctx = 1;
	for (int64_t i = 0; i < E->w->n; i++) {
		const struct serve_request *q = &E->w->req[i];
		int64_t t = q->prompt_tokens + q->vision_tokens + q->output_tokens + E->k + 1;
		if (t > max_ctx)
			max_ctx = t;
	}
	struct serve_costs_opts co = {
		.draft = E->has_draft ? &E->draft : NULL,
		.draft_tokens = E->k,
		.max_b = role == ROLE_PREFILL ? 0 : c->max_running,
		.max_p = role == ROLE_DECODE ? 0 : c->token_budget,
		.max_ctx = max_ctx,
		.decode = role != ROLE_PREFILL,
		.prefill = role != ROLE_DECODE,
		.threads = E->threads,
	};
	struct serve_costs *kept = E->tables ? &E->tables[role == ROLE_DECODE ? 1 : 0] : NULL;
	if (kept && serve_costs_match(kept, &co)) {
		sd->costs = *kept;
		sd->costs_borrowed = true;
	} else {
		if (kept)
			serve_costs_release(kept);
		if ((rc = serve_costs_build(&sd->costs, &sd->s, E->m, E->hw, &co, E->e)) < 0)
			return rc;
		E->r->sum.cost_points += sd->costs.points;
		E->r->sum.cost_build_s += sd->costs.build_s;
		if (kept) {
			*kept = sd->costs;
			sd->costs_borrowed = true;
		}
	}
	struct sim_hbm fixed;
	int64_t act = sd->costs.peak_act_bytes +
		      sim_attn_res_store_bytes(&sd->s, E->m, (c->token_budget > c->max_running ? c->token_budget : c->max_running));
	sim_hbm(&sd->s, E->m, E->hw, 0, 0, act, &fixed);
	sd->fixed_bytes = fixed.total;
	sd->pool_bytes = fixed.capacity - fixed.total;
	if (c->mem_fraction_static > 0) {
		/* SGLang: weights and the pool share mem_fraction_static of HBM */
		int64_t pool = (int64_t)(c->mem_fraction_static * (double)fixed.capacity) - fixed.weights;
		if (pool < sd->pool_bytes)
			sd->pool_bytes = pool;
	}
	if (sd->pool_bytes <= 0) {
		err_set(E->e, E->s->file, 0, 0,
			"serve: nothing left for KV and state: weights %.1f GiB, workspace %.1f GiB and activations %.1f "
			"GiB per GPU exceed the %.1f GiB of HBM",
			(double)fixed.weights / 1073741824.0, (double)fixed.workspace / 1073741824.0,
			(double)fixed.activations / 1073741824.0, (double)fixed.capacity / 1073741824.0);
		return -EINVAL;
	}
	sd->rep = calloc((size_t)sd->n_rep, sizeof *sd->rep);
	if (!sd->rep)
		return -ENOMEM;
	struct serve_pool_cfg pc = {
		.capacity_bytes = sd->pool_bytes,
		.cpu_bytes = c->cpu_bytes,
		.hash_tokens = H,
		.page_tokens = pt,
		.token_bytes = sd->token_bytes,
		.kda_groups = G,
		.group_bytes = group_bytes,
		.prefix = c->prefix_cache && role != ROLE_DECODE,
	};
	for (int32_t i = 0; i < sd->n_rep; i++) {
		struct replica *R = &sd->rep[i];
		R->side = sd;
		R->index = i;
		R->g = calloc((size_t)sd->s.dp, sizeof *R->g);
		if (!R->g)
			return -ENOMEM;
		for (int32_t k = 0; k < sd->s.dp; k++) {
			R->g[k].wait_head = R->g[k].wait_tail = -1;
			R->g[k].new_token_ratio = SGLANG_INIT_RATIO;
			if ((rc = serve_pool_init(&R->g[k].pool, &pc, E->e)) < 0)
				return rc;
		}
	}
	return 0;
}

static void side_release(struct side *sd)
{
	for (int32_t i = 0; sd->rep && i < sd->n_rep; i++) {
		struct replica *R = &sd->rep[i];
		for (int32_t k = 0; R->g && k < sd->s.dp; k++) {
			serve_pool_free(&R->g[k].pool);
			free(R->g[k].run);
		}
		free(R->g);
	}
	free(sd->rep);
	if (!sd->costs_borrowed)
		serve_costs_release(&sd->costs);
}

struct arr {
	double t;
	int32_t i;
};

static int cmp_arrival(const void *a, const void *b)
{
	const struct arr *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t ? 1 : (x->i > y->i) - (x->i < y->i);
}

void serve_result_release(struct serve_result *r)
{
	free(r->rec);
	free(r->samples);
	free(r->steps);
	memset(r, 0, sizeof *r);
}

static void summarize(struct engine *E)
{
	struct serve_result *res = E->r;
	struct serve_summary *S = &res->sum;
	const struct serve_config *c = E->c;
	int64_t n = E->w->n;
	double *ttft = malloc((size_t)n * sizeof *ttft), *tpot = malloc((size_t)n * sizeof *tpot);
	double *e2e = malloc((size_t)n * sizeof *e2e), *qs = malloc((size_t)n * sizeof *qs);
	double first = INFINITY, last = 0;
	int64_t nt = 0, np = 0, met = 0;
	for (int64_t i = 0; i < n; i++) {
		struct req *r = &E->q[i];
		struct serve_record *x = &res->rec[i];
		const struct serve_request *q = &E->w->req[i];
		x->arrival_s = r->t_arrival;
		x->admit_s = r->t_admit;
		x->first_token_s = r->t_first;
		x->done_s = r->t_done;
		x->ttft_s = r->t_first - r->t_arrival;
		x->e2e_s = r->t_done - r->t_arrival;
		x->tpot_s = r->generated > 1 ? (r->t_done - r->t_first) / (double)(r->generated - 1) : 0;
		x->queue_s = r->t_admit - r->t_arrival;
		x->prompt_tokens = r->prompt;
		x->output_tokens = r->generated;
		x->cached_tokens = r->cached;
		x->prefill_tokens = r->prefilled;
		x->steps = r->steps;
		x->preemptions = r->preempt;
		x->replica = r->rep;
		x->dp_group = r->grp;
		x->prefill_replica = E->n_sides == 2 ? r->prep : r->rep;
		x->conversation = q->conversation;
		x->turn = q->turn;
		x->cpu_hit = r->cpu_hit;
		x->slo_met = x->ttft_s <= c->slo_ttft_s && (r->generated <= 1 || x->tpot_s <= c->slo_tpot_s);
		if (r->st != SERVE_ST_DONE)
			continue;
		S->completed++;
		S->output_tokens += r->generated;
		S->prompt_tokens += r->prompt;
		S->prefill_tokens += r->prefilled;
		S->cached_tokens += r->cached;
		S->preemptions += r->preempt;
		S->cpu_hits += r->cpu_hit;
		met += x->slo_met;
		if (ttft)
			ttft[nt] = x->ttft_s;
		if (e2e)
			e2e[nt] = x->e2e_s;
		if (qs)
			qs[nt] = x->queue_s;
		nt++;
		if (r->generated > 1 && tpot)
			tpot[np++] = x->tpot_s;
		first = fmin(first, r->t_arrival);
		last = fmax(last, r->t_done);
	}
	S->requests = n;
	S->recomputed_tokens = S->prefill_tokens - (S->prompt_tokens - S->cached_tokens);
	if (ttft)
		serve_pct_of(ttft, nt, &S->ttft);
	if (tpot)
		serve_pct_of(tpot, np, &S->tpot);
	if (e2e)
		serve_pct_of(e2e, nt, &S->e2e);
	if (qs)
		serve_pct_of(qs, nt, &S->queue);
	free(ttft);
	free(tpot);
	free(e2e);
	free(qs);
	S->itl.n = res->itl.n;
	S->itl.mean = res->itl.n ? res->itl.sum / (double)res->itl.n : 0;
	S->itl.p50 = serve_hist_quantile(&res->itl, 0.50);
	S->itl.p90 = serve_hist_quantile(&res->itl, 0.90);
	S->itl.p95 = serve_hist_quantile(&res->itl, 0.95);
	S->itl.p99 = serve_hist_quantile(&res->itl, 0.99);
	S->itl.max = res->itl.max;
	S->makespan_s = nt ? last - first : 0;
	S->duration_s = c->duration_s;
	if (S->makespan_s > 0) {
		S->throughput_tokens_per_s = (double)S->output_tokens / S->makespan_s;
		S->throughput_requests_per_s = (double)S->completed / S->makespan_s;
		S->goodput_requests_per_s = (double)met / S->makespan_s;
	}
	S->slo_attainment = nt ? (double)met / (double)nt : 0;
	S->prefix_hit_rate = S->prompt_tokens ? (double)S->cached_tokens / (double)S->prompt_tokens : 0;
	S->mean_accepted = E->accepted_steps ? E->accepted_sum / (double)E->accepted_steps : 1;
	/* Little: the time-average requests in the system over [first arrival, last completion] */
	if (S->makespan_s > 0 && nt == n) {
		S->little_l = E->area / S->makespan_s;
		double sum_w = 0;
		for (int64_t i = 0; i < n; i++)
			sum_w += res->rec[i].e2e_s;
		S->little_lambda_w = ((double)n / S->makespan_s) * (sum_w / (double)n);
	}
	const struct side *s0 = &E->sides[0];
	/* the time the cached tokens would have taken: prefill at the token budget */
	if (s0->costs.prefill && c->token_budget > 0)
		S->saved_prefill_s = (double)S->cached_tokens *
				     serve_costs_step(&s0->costs, 0, c->token_budget, 1, 0, 0, (double)s0->s.dp) /
				     (double)c->token_budget;
	S->hbm_fixed_bytes = s0->fixed_bytes;
	S->hbm_pool_bytes = s0->pool_bytes;
	S->kda_state_bytes = s0->state_bytes;
	S->page_tokens = s0->page_tokens;
	S->page_bytes = s0->page_tokens * s0->token_bytes;
	S->kda_groups = s0->kda_groups;
	for (int sdi = 0; sdi < E->n_sides; sdi++)
		for (int32_t i = 0; i < E->sides[sdi].n_rep; i++)
			for (int32_t k = 0; k < E->sides[sdi].s.dp; k++) {
				const struct serve_pool_stats *st = &E->sides[sdi].rep[i].g[k].pool.st;
				int64_t peak = E->sides[sdi].fixed_bytes + st->peak_bytes;
				if (peak > S->hbm_peak_bytes)
					S->hbm_peak_bytes = peak;
				if (st->cpu_peak_bytes > S->cpu_peak_bytes)
					S->cpu_peak_bytes = st->cpu_peak_bytes;
				if (st->ckpt_peak_bytes > S->ckpt_bytes_peak)
					S->ckpt_bytes_peak = st->ckpt_peak_bytes;
				S->ckpt_bytes_written += st->ckpt_written_bytes;
				S->ckpt_invalidated += st->ckpt_invalidated;
				S->offload_bytes += st->offload_bytes;
				S->prefetch_bytes += st->prefetch_bytes;
			}
}

int serve_run(const struct scenario *s, const struct model *m, const struct hw *hw, const struct serve_config *c,
	      const struct serve_workload *w, const struct serve_opts *o, struct serve_result *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	struct engine *E = calloc(1, sizeof *E);
	if (!E) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	E->s = s;
	E->m = m;
	E->hw = hw;
	E->c = c;
	E->w = w;
	E->r = r;
	E->e = e;
	E->max_steps = o && o->max_steps > 0 ? o->max_steps : 0;
	E->threads = o ? o->threads : 0;
	E->tables = o ? o->tables : NULL;
	E->sample_s = c->sample_s;
	serve_rng_seed(&E->rng, c->seed ^ UINT64_C(0xacce97));
	serve_hist_init(&r->itl);
	int rc = 0;
	E->k = s->mtp_draft_tokens;
	if (E->k > 0) {
		if (c->draft == SERVE_DRAFT_MODEL) {
			if ((rc = model_load(&E->draft, c->draft_model, e)) < 0)
				goto out;
		} else {
			sim_draft_model(m, s->mtp_draft_layers, &E->draft);
		}
		E->has_draft = true;
	}
	r->rec = calloc((size_t)w->n, sizeof *r->rec);
	E->q = calloc((size_t)w->n, sizeof *E->q);
	E->order = malloc((size_t)w->n * sizeof *E->order);
	if (E->max_steps)
		r->steps = malloc((size_t)E->max_steps * sizeof *r->steps);
	if (!r->rec || !E->q || !E->order || (E->max_steps && !r->steps)) {
		rc = -ENOMEM;
		err_set(e, NULL, 0, 0, "out of memory");
		goto out;
	}
	double t0 = now_s();
	if (c->pd) {
		E->n_sides = 2;
		if ((rc = side_init(E, &E->sides[0], ROLE_PREFILL, &c->prefill)) < 0 ||
		    (rc = side_init(E, &E->sides[1], ROLE_DECODE, &c->decode)) < 0)
			goto out;
	} else {
		E->n_sides = 1;
		if ((rc = side_init(E, &E->sides[0], ROLE_COLOC, NULL)) < 0)
			goto out;
	}
	/* every request must fit in an empty pool */
	for (int64_t i = 0; i < w->n; i++) {
		const struct serve_request *q = &w->req[i];
		int64_t ctx = q->prompt_tokens + q->vision_tokens + q->output_tokens + E->k;
		for (int sdi = 0; sdi < E->n_sides; sdi++) {
			const struct serve_pool *p = &E->sides[sdi].rep[0].g[0].pool;
			int64_t need = serve_pool_need(p, ctx, 0);
			if (need > p->cfg.capacity_bytes) {
				err_set(e, q->line ? c->trace : NULL, q->line, 0,
					"request %lld (context %lld tokens) needs %.2f GiB per GPU, the HBM pool of a DP "
					"group holds %.2f GiB",
					(long long)i, (long long)ctx, (double)need / 1073741824.0,
					(double)p->cfg.capacity_bytes / 1073741824.0);
				rc = -ENOSPC;
				goto out;
			}
		}
	}
	for (int64_t i = 0; i < w->n; i++) {
		struct req *x = &E->q[i];
		const struct serve_request *q = &w->req[i];
		x->st = SERVE_ST_PENDING;
		x->prompt = q->prompt_tokens + q->vision_tokens;
		x->output = q->output_tokens;
		x->shared = q->seg_tokens;
		x->target = x->prompt;
		x->next_turn = -1;
		x->vision_pending = q->vision_tokens > 0;
		x->seq.state = x->seq.pin_ckpt = -1;
		x->t_arrival = q->arrival_s;
	}
	E->state_count[SERVE_ST_PENDING] = w->n;
	for (int64_t i = 0; i < w->n; i++)
		if (w->req[i].after >= 0 && w->req[i].after < w->n)
			E->q[w->req[i].after].next_turn = (int32_t)i;
		else
			E->order[E->n_order++] = (int32_t)i;
	struct arr *tmp = malloc((size_t)(E->n_order > 0 ? E->n_order : 1) * sizeof *tmp);
	if (!tmp) {
		rc = -ENOMEM;
		goto out;
	}
	for (int64_t i = 0; i < E->n_order; i++)
		tmp[i] = (struct arr){.t = w->req[E->order[i]].arrival_s, .i = E->order[i]};
	qsort(tmp, (size_t)E->n_order, sizeof *tmp, cmp_arrival);
	for (int64_t i = 0; i < E->n_order; i++)
		E->order[i] = tmp[i].i;
	free(tmp);
	if ((rc = ev_push(E, 0, EV_SAMPLE, 0)) < 0)
		goto out;
	/* the loop */
	while (E->done < w->n) {
		bool have_arr = E->next_order < E->n_order;
		double ta = have_arr ? w->req[E->order[E->next_order]].arrival_s : INFINITY;
		if (!have_arr && E->n_heap == 0)
			break;
		if (have_arr && (E->n_heap == 0 || ta <= E->heap[0].t)) {
			advance(E, ta);
			rc = on_arrival(E, E->order[E->next_order++]);
		} else {
			struct ev x = ev_pop(E);
			advance(E, x.t);
			switch (x.kind) {
			case EV_ARRIVAL:
				rc = on_arrival(E, x.a);
				break;
			case EV_STEP_END: {
				int side = x.a >> 24;
				rc = step_end(E, side, &E->sides[side].rep[x.a & 0xffffff]);
				if (rc == 0 && E->n_sides == 2) {
					/* freed memory may let the other side go on */
					for (int32_t i = 0; i < E->sides[1 - side].n_rep && rc == 0; i++)
						rc = try_start(E, 1 - side, &E->sides[1 - side].rep[i]);
				}
				break;
			}
			case EV_PREFETCH_DONE:
				rc = on_prefetch_done(E, x.a);
				break;
			case EV_TRANSFER_DONE:
				rc = on_transfer_done(E, x.a);
				break;
			case EV_SAMPLE:
				rc = sample(E);
				if (rc == 0 && E->done < w->n)
					rc = ev_push(E, E->now + E->sample_s, EV_SAMPLE, 0);
				break;
			}
		}
		if (rc < 0)
			goto out;
	}
	if (E->done < w->n) {
		err_set(e, NULL, 0, 0, "%lld of %lld requests never finished (an engine bug)", (long long)(w->n - E->done),
			(long long)w->n);
		rc = -EDEADLK;
		goto out;
	}
	if ((rc = sample(E)) < 0)
		goto out;
	r->n_rec = w->n;
	r->sum.sim_s = now_s() - t0 - r->sum.cost_build_s;
	summarize(E);
out:
	if (rc == -ENOMEM)
		err_set(e, NULL, 0, 0, "out of memory");
	for (int i = 0; i < 2; i++)
		side_release(&E->sides[i]);
	if (E->q)
		for (int64_t i = 0; i < w->n; i++) {
			free(E->q[i].seq.pages);
			free(E->q[i].pseq.pages);
		}
	free(E->q);
	free(E->order);
	free(E->heap);
	free(E->aff_key);
	free(E->aff_val);
	free(E);
	if (rc < 0)
		serve_result_release(r);
	return rc;
}
