/* Comparing designs: the sweep model x context x batch, throughput at the largest batch that fits,
 * crossovers by bisection on the context, the DSA indexer's share, and published claims. */
#include "reports/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reports/fmt.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const default_models[] = {"kimi-k3", "k3-full-mla", "k3-dsa"};

static const char *const metric_names[CMP_METRIC_COUNT] = {
    "state_kv_per_request",
    "hbm_per_request_gpu",
    "ttft",
    "tpot",
};

const char *compare_metric_name(enum compare_metric m)
{
	return (unsigned)m < CMP_METRIC_COUNT ? metric_names[m] : "?";
}

const struct model *compare_model(const struct compare *c, int m)
{
	const struct sweep_axis *a = sweep_spec_axis(&c->spec, AXIS_MODEL);
	return c->spec.models[a->iv[m]];
}

int64_t compare_context(const struct compare *c, int ctx)
{
	return sweep_spec_axis(&c->spec, AXIS_CONTEXT)->iv[ctx];
}

int64_t compare_batch(const struct compare *c, int b)
{
	return sweep_spec_axis(&c->spec, AXIS_BATCH)->iv[b];
}

int64_t compare_request_bytes(const struct sweep_row *r, int64_t context)
{
	return r->state_bytes_per_request + r->kv_bytes_per_token * context;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

struct collector {
	struct sweep_row *rows;
	int64_t n, cap;
};

static int collect(void *ctx, const struct sweep_row *rows, int64_t n, struct err *e)
{
	struct collector *c = ctx;
	if (c->n + n > c->cap) {
		err_set(e, NULL, 0, 0, "more rows than points");
		return -E2BIG;
	}
	memcpy(c->rows + c->n, rows, (size_t)n * sizeof *rows);
	c->n += n;
	return 0;
}

/* ---- the spec: scenario axes, options, defaults ---- */

static int build_spec(struct compare *c, const char *scenario, const struct compare_opts *o, struct err *e)
{
	struct sweep_spec *in = malloc(sizeof *in);
	const char *names[COMPARE_MAX_MODELS];
	int64_t ctx[COMPARE_MAX_CONTEXTS], bat[COMPARE_MAX_BATCHES + 1];
	int n_names = 0, n_ctx = 0, n_bat = 0, rc;
	if (!in) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	if ((rc = sweep_spec_load(in, scenario, e)) < 0) {
		free(in);
		return rc;
	}
	for (int i = 0; i < in->n_axes; i++) {
		const struct sweep_axis *a = &in->axes[i];
		if (a->kind != AXIS_MODEL && a->kind != AXIS_CONTEXT && a->kind != AXIS_BATCH) {
			err_set(e, in->base.file, a->line, a->col,
			        "sweep: compare varies model, context and batch; '%s' is for 'k3sim sweep'",
			        sweep_axis_name(a->kind));
			rc = -EINVAL;
			goto out;
		}
		int cap = a->kind == AXIS_MODEL     ? COMPARE_MAX_MODELS
		          : a->kind == AXIS_CONTEXT ? COMPARE_MAX_CONTEXTS
		                                    : COMPARE_MAX_BATCHES;
		if (a->n > cap) {
			err_set(e, in->base.file, a->line, a->col,
			        "sweep: %s: compare takes at most %d values", sweep_axis_name(a->kind), cap);
			rc = -E2BIG;
			goto out;
		}
	}
	/* Models: the options, the scenario's axis, or the three designs. */
	const struct sweep_axis *ax;
	if (o->models) {
		if (o->n_models > COMPARE_MAX_MODELS) {
			err_set(e, NULL, 0, 0, "at most %d models", COMPARE_MAX_MODELS);
			rc = -E2BIG;
			goto out;
		}
		for (int i = 0; i < o->n_models; i++)
			names[n_names++] = o->models[i];
	} else if ((ax = sweep_spec_axis(in, AXIS_MODEL))) {
		for (int i = 0; i < ax->n; i++)
			names[n_names++] = in->model_src[ax->iv[i]];
	} else {
		for (int i = 0; i < 3; i++)
			names[n_names++] = default_models[i];
	}
	if (o->contexts) {
		if (o->n_contexts > COMPARE_MAX_CONTEXTS) {
			err_set(e, NULL, 0, 0, "at most %d contexts", COMPARE_MAX_CONTEXTS);
			rc = -E2BIG;
			goto out;
		}
		for (int i = 0; i < o->n_contexts; i++)
			ctx[n_ctx++] = o->contexts[i];
	} else if ((ax = sweep_spec_axis(in, AXIS_CONTEXT))) {
		for (int i = 0; i < ax->n; i++)
			ctx[n_ctx++] = ax->iv[i];
	} else {
		for (int64_t t = 4096; t <= 1048576; t *= 2)
			ctx[n_ctx++] = t;
	}
	if (o->batches) {
		if (o->n_batches > COMPARE_MAX_BATCHES) {
			err_set(e, NULL, 0, 0, "at most %d batch sizes", COMPARE_MAX_BATCHES);
			rc = -E2BIG;
			goto out;
		}
		for (int i = 0; i < o->n_batches; i++)
			bat[n_bat++] = o->batches[i];
	} else if ((ax = sweep_spec_axis(in, AXIS_BATCH))) {
		for (int i = 0; i < ax->n; i++)
			bat[n_bat++] = ax->iv[i];
	}
	/* The scenario's batch is the reference: in the list, which is sorted. */
	bool have_ref = false;
	for (int i = 0; i < n_bat; i++)
		have_ref |= bat[i] == in->base.batch;
	if (!have_ref)
		bat[n_bat++] = in->base.batch;
	qsort(ctx, (size_t)n_ctx, sizeof ctx[0], cmp_i64);
	qsort(bat, (size_t)n_bat, sizeof bat[0], cmp_i64);

	sweep_spec_init(&c->spec, &in->base, in->prefill_chunk);
	if ((rc = sweep_spec_add_names(&c->spec, AXIS_MODEL, names, n_names, e)) < 0 ||
	    (rc = sweep_spec_add_ints(&c->spec, AXIS_CONTEXT, ctx, n_ctx, e)) < 0 ||
	    (rc = sweep_spec_add_ints(&c->spec, AXIS_BATCH, bat, n_bat, e)) < 0 ||
	    (rc = sweep_spec_finish(&c->spec, e)) < 0)
		goto out;
	c->n_models = n_names;
	c->n_contexts = n_ctx;
	c->n_batches = n_bat;
	for (int i = 0; i < n_bat; i++)
		if (bat[i] == in->base.batch)
			c->ref_batch = i;
out:
	sweep_spec_release(in);
	free(in);
	return rc;
}

/* ---- metrics as functions of the context ---- */

struct probe {
	const struct compare *c;
	struct sweep_scratch *sc;
	int model;
	enum compare_metric metric;
};

/* The point of model m at the reference batch with `context` prompt tokens. */
static int point_at(const struct compare *c, int m, int64_t context, struct sweep_point *pt)
{
	struct err e;
	int64_t index = ((int64_t)m * c->n_contexts) * c->n_batches + c->ref_batch;
	int rc = sweep_spec_point(&c->spec, index, pt, &e);
	pt->s.prompt_tokens = context;
	pt->s.prefill_chunk = c->spec.prefill_chunk < context ? c->spec.prefill_chunk : context;
	return rc;
}

/* The metric for model p->model at a context; NAN when it cannot be evaluated. */
static double metric_at(struct probe *p, int64_t context)
{
	struct sweep_point pt;
	struct err e;
	if (point_at(p->c, p->model, context, &pt) < 0 || sim_check(&pt.s, pt.m, pt.hw, &e) < 0)
		return NAN;
	const struct scenario *s = &pt.s;
	int64_t kv_tokens = context + s->output_tokens;
	switch (p->metric) {
	case CMP_STATE_KV_PER_REQUEST:
		return (double)(model_kda_state_bytes_per_request(pt.m, s->kda_state) +
		                model_conv_state_bytes_per_request(pt.m, s->kda_state) +
		                (model_mla_kv_bytes_per_token(pt.m, s->mla_cache) +
		                 model_dsa_index_bytes_per_token(pt.m)) *
		                    kv_tokens);
	case CMP_HBM_PER_REQUEST_GPU: {
		struct sim_hbm h;
		sim_hbm(s, pt.m, pt.hw, s->dp, kv_tokens, 0, &h); /* one request per DP group */
		return (double)(h.kda_state + h.conv_state + h.mla_kv + h.dsa_index);
	}
	case CMP_TTFT: {
		struct sweep_prefill pre;
		if (sweep_eval_prefill(&pt, p->sc, &pre, &e) < 0)
			return NAN;
		return pre.ttft_s;
	}
	case CMP_TPOT: {
		struct phase ph;
		sim_phase_init(s, PHASE_DECODE, s->batch, 1, context + (s->output_tokens - 1) / 2, &ph);
		double t;
		return sim_step(s, pt.m, pt.hw, &ph, NULL, 1.0, &t) < 0 ? NAN : t;
	}
	case CMP_METRIC_COUNT:
		break;
	}
	return NAN;
}

/* Smallest context in (lo, hi] where pred holds, given it fails at lo and holds at hi. */
static int64_t bisect(bool (*pred)(void *ctx, int64_t context), void *ctx, int64_t lo, int64_t hi)
{
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		if (pred(ctx, mid))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

struct pair_probe {
	struct probe a, b;
	int sign_low; /* sign of a - b below the crossing */
};

static int sign_of(double x)
{
	return x > 0 ? 1 : x < 0 ? -1 : 0;
}

static bool pair_flipped(void *ctx, int64_t context)
{
	struct pair_probe *pp = ctx;
	int s = sign_of(metric_at(&pp->a, context) - metric_at(&pp->b, context));
	return s != 0 && s != pp->sign_low;
}

static void metric_value(enum compare_metric m, double v, char *buf, size_t cap)
{
	if (m == CMP_TTFT || m == CMP_TPOT)
		fmt_time(v, buf, cap);
	else
		fmt_bytes(v, buf, cap);
}

static const char *metric_phrase(const struct compare *c, enum compare_metric m, char *buf, size_t cap)
{
	const struct scenario *s = &c->spec.base;
	switch (m) {
	case CMP_STATE_KV_PER_REQUEST:
		return "Memory per request (state + KV cache)";
	case CMP_HBM_PER_REQUEST_GPU:
		snprintf(buf, cap,
		         "HBM per request on one GPU (TP%lld: state split over TP, latent cache "
		         "replicated)",
		         (long long)s->tp);
		return buf;
	case CMP_TTFT:
		return "TTFT";
	case CMP_TPOT:
		snprintf(buf, cap, "TPOT at batch %lld", (long long)s->batch);
		return buf;
	case CMP_METRIC_COUNT:
		break;
	}
	return "?";
}

static void find_crossover(struct compare *c, struct sweep_scratch *sc, enum compare_metric metric, int a,
                           int b)
{
	if (c->n_cross == COMPARE_MAX_CROSSOVERS)
		return;
	struct pair_probe pp = {.a = {c, sc, a, metric}, .b = {c, sc, b, metric}};
	double va[COMPARE_MAX_CONTEXTS], vb[COMPARE_MAX_CONTEXTS];
	for (int i = 0; i < c->n_contexts; i++) {
		va[i] = metric_at(&pp.a, compare_context(c, i));
		vb[i] = metric_at(&pp.b, compare_context(c, i));
		if (isnan(va[i]) || isnan(vb[i]))
			return; /* a model that cannot run this layout */
	}
	struct compare_crossover *x = &c->cross[c->n_cross++];
	memset(x, 0, sizeof *x);
	x->metric = metric;
	x->a = a;
	x->b = b;
	const char *na = compare_model(c, a)->name, *nb = compare_model(c, b)->name;
	char phrase[160], t1[32], t2[32], t3[32], t4[32];
	const char *what = metric_phrase(c, metric, phrase, sizeof phrase);
	int s0 = 0, i = 0;
	for (; i < c->n_contexts && !s0; i++)
		s0 = sign_of(va[i] - vb[i]);
	int flip = -1;
	for (; i < c->n_contexts; i++) {
		int s = sign_of(va[i] - vb[i]);
		if (s && s != s0) {
			flip = i;
			break;
		}
	}
	fmt_tokens(compare_context(c, 0), t1, sizeof t1);
	fmt_tokens(compare_context(c, c->n_contexts - 1), t2, sizeof t2);
	if (flip < 0) {
		x->context = 0;
		x->a_lower_above = s0 < 0;
		x->a_value = va[0];
		x->b_value = vb[0];
		const double *vlo = s0 < 0 ? va : vb, *vhi = s0 < 0 ? vb : va;
		int n = c->n_contexts - 1;
		metric_value(metric, vlo[0], t3, sizeof t3);
		metric_value(metric, vhi[0], t4, sizeof t4);
		char t5[32], t6[32];
		metric_value(metric, vlo[n], t5, sizeof t5);
		metric_value(metric, vhi[n], t6, sizeof t6);
		char text[1024];
		snprintf(text, sizeof text,
		         "%s: %s is lower than %s over the whole range (%s vs %s at %s, "
		         "%s vs %s at %s).",
		         what, s0 < 0 ? na : nb, s0 < 0 ? nb : na, t3, t4, t1, t5, t6, t2);
		snprintf(x->text, sizeof x->text, "%.*s", (int)sizeof x->text - 1, text);
		return;
	}
	pp.sign_low = s0;
	x->context = bisect(pair_flipped, &pp, compare_context(c, flip - 1), compare_context(c, flip));
	x->a_value = metric_at(&pp.a, x->context);
	x->b_value = metric_at(&pp.b, x->context);
	x->a_lower_above = s0 > 0;
	const char *lo = s0 > 0 ? na : nb, *hi = s0 > 0 ? nb : na;
	const double *vlo = s0 > 0 ? va : vb, *vhi = s0 > 0 ? vb : va;
	int n = c->n_contexts - 1;
	char ctx_s[32], t5[32], t6[32], text[1024];
	fmt_int(x->context, ctx_s, sizeof ctx_s);
	metric_value(metric, vlo[0], t3, sizeof t3);
	metric_value(metric, vhi[0], t4, sizeof t4);
	metric_value(metric, vlo[n], t5, sizeof t5);
	metric_value(metric, vhi[n], t6, sizeof t6);
	snprintf(text, sizeof text,
	         "%s: %s is lower than %s from %s tokens of context on, higher below "
	         "(%s vs %s at %s, %s vs %s at %s).",
	         what, lo, hi, ctx_s, t3, t4, t1, t5, t6, t2);
	snprintf(x->text, sizeof x->text, "%.*s", (int)sizeof x->text - 1, text);
}

/* ---- DSA ---- */

struct dsa_parts {
	double indexer_s, sparse_s, moe_s, step_s;
};

static int dsa_parts_at(const struct compare *c, struct sweep_scratch *sc, int m, int64_t context,
                        struct dsa_parts *out)
{
	struct sweep_point pt;
	struct err e;
	if (point_at(c, m, context, &pt) < 0 || sim_check(&pt.s, pt.m, pt.hw, &e) < 0)
		return -EINVAL;
	struct phase ph;
	struct sim_phase *acc = &sc->decode;
	sim_phase_reset(acc);
	sim_phase_init(&pt.s, PHASE_DECODE, pt.s.batch, 1, context + (pt.s.output_tokens - 1) / 2, &ph);
	int rc = sim_step(&pt.s, pt.m, pt.hw, &ph, acc, 1.0, &out->step_s);
	if (rc < 0)
		return rc;
	out->indexer_s = out->sparse_s = out->moe_s = 0;
	for (int i = 0; i < acc->n_rows; i++) {
		const struct sim_op_row *r = &acc->rows[i];
		if (r->op.kind == OP_DSA_DECODE) {
			double share = opclass_dsa_indexer_share(pt.hw, &r->op, pt.s.cuda_graph);
			out->indexer_s += share * r->total_s;
			out->sparse_s += (1 - share) * r->total_s;
		} else if (opclass_of(&r->op) == OPC_DSA_INDEXER) {
			out->indexer_s += r->total_s;
		} else if (opclass_of(&r->op) == OPC_MOE_EXPERTS) {
			out->moe_s += r->total_s;
		}
	}
	return 0;
}

struct dsa_probe {
	const struct compare *c;
	struct sweep_scratch *sc;
	int model;
	int which; /* 0: > sparse, 1: > half the step, 2: > MoE experts */
};

static bool dsa_pred(void *ctx, int64_t context)
{
	struct dsa_probe *p = ctx;
	struct dsa_parts d;
	if (dsa_parts_at(p->c, p->sc, p->model, context, &d) < 0)
		return false;
	return p->which == 0   ? d.indexer_s > d.sparse_s
	       : p->which == 1 ? d.indexer_s > 0.5 * d.step_s
	                       : d.indexer_s > d.moe_s;
}

/* The smallest context where the predicate holds: a swept context, refined by bisection. */
static int64_t first_context(const struct compare *c, struct dsa_probe *p)
{
	for (int i = 0; i < c->n_contexts; i++)
		if (dsa_pred(p, compare_context(c, i)))
			return i == 0 ? compare_context(c, 0)
			              : bisect(dsa_pred, p, compare_context(c, i - 1), compare_context(c, i));
	return 0;
}

static void analyze_dsa(struct compare *c, struct sweep_scratch *sc, int m)
{
	struct compare_dsa *d = &c->dsa[c->n_dsa++];
	memset(d, 0, sizeof *d);
	d->model = m;
	int64_t *found[3] = {&d->over_sparse, &d->over_half, &d->over_moe};
	for (int w = 0; w < 3; w++) {
		struct dsa_probe p = {c, sc, m, w};
		*found[w] = first_context(c, &p);
	}
	struct dsa_parts last;
	int64_t cmax = compare_context(c, c->n_contexts - 1);
	char a[32], b[32], cm[32];
	fmt_tokens(cmax, cm, sizeof cm);
	size_t len = (size_t)snprintf(d->text, sizeof d->text, "%s, decode at batch %lld: the indexer scan ",
	                              compare_model(c, m)->name, (long long)c->spec.base.batch);
	const char *what[3] = {"takes longer than the sparse attention it selects for",
	                       "is more than half of the decode step", "takes longer than the MoE experts"};
	int order[3] = {0, 2, 1};
	for (int k = 0; k < 3 && len < sizeof d->text; k++) {
		int w = order[k];
		if (*found[w] == compare_context(c, 0))
			len += (size_t)snprintf(d->text + len, sizeof d->text - len, "%s%s already at %s",
			                        k ? "; " : "", what[w], fmt_tokens(*found[w], a, sizeof a));
		else if (*found[w])
			len += (size_t)snprintf(d->text + len, sizeof d->text - len, "%s%s from %s tokens on",
			                        k ? "; " : "", what[w], fmt_int(*found[w], a, sizeof a));
		else
			len += (size_t)snprintf(d->text + len, sizeof d->text - len, "%snever %s up to %s",
			                        k ? "; " : "", what[w], cm);
	}
	if (len < sizeof d->text && dsa_parts_at(c, sc, m, cmax, &last) == 0 && last.step_s > 0)
		snprintf(d->text + len, sizeof d->text - len, ". At %s it is %.0f%% of the step (%s of %s).",
		         cm, 100 * last.indexer_s / last.step_s, fmt_time(last.indexer_s, a, sizeof a),
		         fmt_time(last.step_s, b, sizeof b));
}

/* ---- published claims ---- */

static int find_model(const struct compare *c, const char *name)
{
	for (int m = 0; m < c->n_models; m++)
		if (strcmp(compare_model(c, m)->name, name) == 0)
			return m;
	return -1;
}

static void kimi_linear_claims(struct compare *c)
{
	int a = find_model(c, "kimi-linear"), b = find_model(c, "kimi-linear-full-mla");
	if (a < 0 || b < 0)
		return;
	static const char src[] = "Kimi Linear tech report (arXiv:2510.26692), abstract and README";
	int last = c->n_contexts - 1;
	int64_t cmax = compare_context(c, last);
	char cm[32], x[32], y[32];
	fmt_tokens(cmax, cm, sizeof cm);
	const struct sweep_row *ra = compare_row(c, a, last, c->ref_batch),
	                       *rb = compare_row(c, b, last, c->ref_batch);

	struct compare_claim *k = &c->claims[c->n_claims++];
	memset(k, 0, sizeof *k);
	snprintf(k->what, sizeof k->what, "KV cache, Kimi Linear vs full MLA");
	snprintf(k->published, sizeof k->published, "up to 75%% less KV cache");
	snprintf(k->source, sizeof k->source, "%s", src);
	double kv = 1.0 - (double)ra->kv_bytes_per_token / (double)rb->kv_bytes_per_token;
	int64_t kv_tokens = cmax + ra->output_tokens;
	double with_state =
	    1.0 - (double)compare_request_bytes(ra, kv_tokens) / (double)compare_request_bytes(rb, kv_tokens);
	k->tool_value = kv;
	snprintf(k->tool, sizeof k->tool,
	         "%.1f%% less per token (%s vs %s: 7 of 27 layers keep a latent cache); "
	         "%.1f%% less per request at %s with the KDA state (%s state)",
	         100 * kv, fmt_bytes((double)ra->kv_bytes_per_token, x, sizeof x),
	         fmt_bytes((double)rb->kv_bytes_per_token, y, sizeof y), 100 * with_state, cm, ra->kda_state);

	if (ra->ok && rb->ok) {
		k = &c->claims[c->n_claims++];
		memset(k, 0, sizeof *k);
		snprintf(k->what, sizeof k->what, "decode speed at %s context, same batch (%lld)", cm,
		         (long long)ra->batch);
		snprintf(k->published, sizeof k->published, "6.3x faster TPOT at 1M (README figure)");
		snprintf(k->source, sizeof k->source, "%s", src);
		k->tool_value = rb->tpot_s / ra->tpot_s;
		double attn_a = ra->decode_s[OPC_ATTN_KDA] + ra->decode_s[OPC_ATTN_MLA];
		double attn_b = rb->decode_s[OPC_ATTN_KDA] + rb->decode_s[OPC_ATTN_MLA];
		snprintf(k->tool, sizeof k->tool,
		         "%.2fx (TPOT %s vs %s); attention alone %.1fx: the weights "
		         "both designs read every step bound the whole-step ratio",
		         k->tool_value, fmt_time(ra->tpot_s, x, sizeof x), fmt_time(rb->tpot_s, y, sizeof y),
		         attn_a > 0 ? attn_b / attn_a : 0.0);
	}
	const struct sweep_row *ba = compare_best(c, a, last), *bb = compare_best(c, b, last);
	k = &c->claims[c->n_claims++];
	memset(k, 0, sizeof *k);
	snprintf(k->what, sizeof k->what, "decoding throughput at %s context, largest batch that fits", cm);
	snprintf(k->published, sizeof k->published, "up to 6x decoding throughput at 1M context");
	snprintf(k->source, sizeof k->source, "%s", src);
	if (ba->ok && bb->ok) {
		k->tool_value = ba->tokens_per_s_per_gpu / bb->tokens_per_s_per_gpu;
		snprintf(k->tool, sizeof k->tool,
		         "%.2fx (%.1f vs %.1f tokens/s per GPU at batch %lld vs %lld)", k->tool_value,
		         ba->tokens_per_s_per_gpu, bb->tokens_per_s_per_gpu, (long long)ba->batch,
		         (long long)bb->batch);
	} else if (ba->ok) {
		k->tool_value = INFINITY;
		snprintf(k->tool, sizeof k->tool,
		         "full MLA fits no %s request on this hardware; Kimi Linear "
		         "decodes %.1f tokens/s per GPU at batch %lld",
		         cm, ba->tokens_per_s_per_gpu, (long long)ba->batch);
	} else {
		k->tool_value = NAN;
		snprintf(k->tool, sizeof k->tool, "neither fits a %s request on this hardware", cm);
	}
}

/* ---- running ---- */

int compare_run(struct compare *c, const char *scenario, const struct compare_opts *o, struct err *e)
{
	memset(c, 0, sizeof *c);
	double t0 = now_s();
	struct sweep_scratch *sc = NULL;
	int rc = build_spec(c, scenario, o, e);
	if (rc < 0)
		goto out;
	int64_t n_best = (int64_t)c->n_models * c->n_contexts;
	struct collector col = {.rows = calloc((size_t)c->spec.points, sizeof *c->rows),
	                        .cap = c->spec.points};
	c->rows = col.rows;
	c->best = calloc((size_t)n_best, sizeof *c->best);
	sc = malloc(sizeof *sc);
	if (!c->rows || !c->best || !sc) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	struct sweep_opts so = {.threads = o->threads > 0 ? o->threads : 1, .shard_count = 1};
	struct sweep_stats st;
	if ((rc = sweep_run(&c->spec, &so, collect, &col, &st, e)) < 0)
		goto out;
	/* Throughput at the largest batch that fits each context (from the reference row). */
	for (int m = 0; m < c->n_models; m++)
		for (int x = 0; x < c->n_contexts; x++) {
			const struct sweep_row *ref = compare_row(c, m, x, c->ref_batch);
			struct sweep_row *out = &c->best[(int64_t)m * c->n_contexts + x];
			struct sweep_point pt;
			struct err pe;
			sweep_spec_point(&c->spec, ref->point, &pt, &pe);
			if (ref->ok && ref->max_batch >= 1) {
				pt.s.batch = ref->max_batch;
				sweep_eval_point(&pt, sc, out);
			} else {
				sweep_row_inputs(&pt, out);
				out->ok = 0;
				snprintf(out->error, sizeof out->error, "%s",
				         ref->ok ? "not one request fits in HBM at this context"
				                 : "the layout does not work");
			}
			out->point = c->spec.points + (int64_t)m * c->n_contexts + x;
		}
	/* Crossovers between every pair of designs. */
	for (int a = 0; a < c->n_models; a++)
		for (int b = a + 1; b < c->n_models; b++)
			for (int metric = 0; metric < CMP_METRIC_COUNT; metric++)
				find_crossover(c, sc, (enum compare_metric)metric, a, b);
	for (int m = 0; m < c->n_models; m++)
		if (compare_model(c, m)->dsa.index_heads && compare_row(c, m, 0, c->ref_batch)->ok)
			analyze_dsa(c, sc, m);
	kimi_linear_claims(c);
	c->eval_s = now_s() - t0;
out:
	free(sc);
	if (rc < 0)
		compare_release(c);
	return rc;
}

void compare_release(struct compare *c)
{
	free(c->rows);
	free(c->best);
	sweep_spec_release(&c->spec);
	memset(c, 0, sizeof *c);
}
