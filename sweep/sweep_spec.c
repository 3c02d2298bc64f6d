/* Sweep specs: the `sweep:` key of a scenario file, or axes added by hand; points of the product. */
#include "sweep/sweep.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/doc.h"
#include "util/embed.h"

static const char *const axis_names[AXIS_KIND_COUNT + 1] = {
    [AXIS_CONTEXT] = "context",
    [AXIS_BATCH] = "batch",
    [AXIS_PROMPT] = "prompt_tokens",
    [AXIS_OUTPUT] = "output_tokens",
    [AXIS_PREFILL_CHUNK] = "prefill_chunk",
    [AXIS_GPUS] = "gpus",
    [AXIS_TP] = "tp",
    [AXIS_DP] = "dp",
    [AXIS_CP] = "cp",
    [AXIS_EP] = "ep",
    [AXIS_MOE_IMBALANCE] = "moe_imbalance",
    [AXIS_TP_COMM] = "tp_comm",
    [AXIS_MODEL] = "model",
    [AXIS_HW] = "hw",
    [AXIS_KDA_STATE] = "kda_state",
    [AXIS_MLA_CACHE] = "mla_cache",
    [AXIS_EXPERT_ACT] = "expert_activations",
    [AXIS_DISPATCH] = "dispatch",
    [AXIS_KIND_COUNT] = NULL,
};

const char *sweep_axis_name(enum sweep_axis_kind k)
{
	return (unsigned)k < AXIS_KIND_COUNT ? axis_names[k] : "?";
}

const char *const *sweep_axis_names(void)
{
	return axis_names;
}

int sweep_axis_parse(const char *s, enum sweep_axis_kind *out)
{
	for (int i = 0; i < AXIS_KIND_COUNT; i++)
		if (strcmp(s, axis_names[i]) == 0) {
			*out = (enum sweep_axis_kind)i;
			return 0;
		}
	return -EINVAL;
}

static bool is_int_axis(enum sweep_axis_kind k)
{
	return k <= AXIS_EP;
}

static bool is_name_axis(enum sweep_axis_kind k)
{
	return k >= AXIS_TP_COMM;
}

/* Allowed values of the integer axes: [1, max]. */
static int64_t int_axis_max(enum sweep_axis_kind k)
{
	switch (k) {
	case AXIS_CONTEXT:
	case AXIS_PROMPT:
	case AXIS_OUTPUT:
	case AXIS_PREFILL_CHUNK:
		return INT64_C(1) << 40;
	case AXIS_BATCH:
		return 1 << 24;
	default:
		return 1 << 20;
	}
}

/* Dtypes each dtype axis accepts (as the scenario's dtypes section). */
static int dtype_choices(enum sweep_axis_kind k, const enum dtype **out)
{
	static const enum dtype state[] = {DT_FP32, DT_BF16};
	static const enum dtype cache[] = {DT_BF16, DT_FP8};
	static const enum dtype eact[] = {DT_MXFP8, DT_FP8, DT_BF16, DT_MXFP4};
	static const enum dtype disp[] = {DT_FP8, DT_BF16};
	switch (k) {
	case AXIS_KDA_STATE:
		*out = state;
		return 2;
	case AXIS_MLA_CACHE:
		*out = cache;
		return 2;
	case AXIS_EXPERT_ACT:
		*out = eact;
		return 4;
	case AXIS_DISPATCH:
		*out = disp;
		return 2;
	default:
		*out = NULL;
		return 0;
	}
}

void sweep_spec_init(struct sweep_spec *sp, const struct scenario *base, int64_t prefill_chunk)
{
	memset(sp, 0, sizeof *sp);
	sp->base = *base;
	sp->prefill_chunk = prefill_chunk > 0 ? prefill_chunk : base->prefill_chunk;
	sp->points = 1;
}

void sweep_spec_release(struct sweep_spec *sp)
{
	for (int i = 0; i < sp->n_axes; i++) {
		free(sp->axes[i].iv);
		free(sp->axes[i].fv);
	}
	for (int i = 0; i < sp->n_models; i++)
		free(sp->models[i]);
	for (int i = 0; i < sp->n_hws; i++)
		free(sp->hws[i]);
	memset(sp, 0, sizeof *sp);
}

const struct sweep_axis *sweep_spec_axis(const struct sweep_spec *sp, enum sweep_axis_kind k)
{
	for (int i = 0; i < sp->n_axes; i++)
		if (sp->axes[i].kind == k)
			return &sp->axes[i];
	return NULL;
}

static struct sweep_axis *axis_new(struct sweep_spec *sp, enum sweep_axis_kind k, size_t n, struct err *e)
{
	if (sweep_spec_axis(sp, k)) {
		err_set(e, NULL, 0, 0, "axis '%s' is given twice", sweep_axis_name(k));
		return NULL;
	}
	if ((k == AXIS_CONTEXT && sweep_spec_axis(sp, AXIS_PROMPT)) ||
	    (k == AXIS_PROMPT && sweep_spec_axis(sp, AXIS_CONTEXT))) {
		err_set(e, NULL, 0, 0, "context sets prompt_tokens: sweep one of them, not both");
		return NULL;
	}
	if (n == 0) {
		err_set(e, NULL, 0, 0, "%s: no values", sweep_axis_name(k));
		return NULL;
	}
	if (n > SWEEP_MAX_VALUES) {
		err_set(e, NULL, 0, 0, "%s: %zu values (at most %d per axis)", sweep_axis_name(k), n,
		        SWEEP_MAX_VALUES);
		return NULL;
	}
	struct sweep_axis *a = &sp->axes[sp->n_axes];
	memset(a, 0, sizeof *a);
	a->kind = k;
	a->iv = calloc(n, sizeof *a->iv);
	a->fv = calloc(n, sizeof *a->fv);
	if (!a->iv || !a->fv) {
		free(a->iv);
		free(a->fv);
		err_set(e, NULL, 0, 0, "out of memory");
		return NULL;
	}
	sp->n_axes++;
	return a;
}

static int append_int(struct sweep_axis *a, int64_t v, struct err *e)
{
	int64_t max = int_axis_max(a->kind);
	if (v < 1 || v > max) {
		err_set(e, NULL, 0, 0, "%s: %lld is out of range [1, %lld]", sweep_axis_name(a->kind),
		        (long long)v, (long long)max);
		return -EINVAL;
	}
	for (int i = 0; i < a->n; i++)
		if (a->iv[i] == v) {
			err_set(e, NULL, 0, 0, "%s: %lld is listed twice", sweep_axis_name(a->kind),
			        (long long)v);
			return -EINVAL;
		}
	a->iv[a->n++] = v;
	return 0;
}

static int append_double(struct sweep_axis *a, double v, struct err *e)
{
	if (!(v >= 1.0 && v <= 64.0)) {
		err_set(e, NULL, 0, 0, "moe_imbalance: must be in [1, 64] (busiest rank over the mean)");
		return -EINVAL;
	}
	for (int i = 0; i < a->n; i++)
		if (a->fv[i] == v) {
			err_set(e, NULL, 0, 0, "moe_imbalance: %g is listed twice", v);
			return -EINVAL;
		}
	a->fv[a->n++] = v;
	return 0;
}

static int load_model(struct sweep_spec *sp, const char *name, struct err *e)
{
	if (sp->n_models == SWEEP_MAX_MODELS) {
		err_set(e, NULL, 0, 0, "model: at most %d models", SWEEP_MAX_MODELS);
		return -E2BIG;
	}
	char path[256];
	snprintf(path, sizeof path, "%s", name);
	if (embedded_is_path(path))
		embedded_resolve_relative(path, sizeof path, sp->base.file);
	struct model *m = malloc(sizeof *m);
	if (!m) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = model_load(m, path, e);
	if (rc < 0) {
		free(m);
		return rc;
	}
	sp->models[sp->n_models] = m;
	snprintf(sp->model_src[sp->n_models], sizeof sp->model_src[0], "%s", name);
	return sp->n_models++;
}

static int load_hw(struct sweep_spec *sp, const char *name, struct err *e)
{
	if (sp->n_hws == SWEEP_MAX_HWS) {
		err_set(e, NULL, 0, 0, "hw: at most %d hardware presets", SWEEP_MAX_HWS);
		return -E2BIG;
	}
	char path[256];
	snprintf(path, sizeof path, "%s", name);
	if (embedded_is_path(path))
		embedded_resolve_relative(path, sizeof path, sp->base.file);
	struct hw *hw = malloc(sizeof *hw);
	if (!hw) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = hw_load(hw, path, e);
	if (rc < 0) {
		free(hw);
		return rc;
	}
	sp->hws[sp->n_hws] = hw;
	return sp->n_hws++;
}

static int append_name(struct sweep_spec *sp, struct sweep_axis *a, const char *name, struct err *e)
{
	int64_t v = -1;
	const char *what = sweep_axis_name(a->kind);
	switch (a->kind) {
	case AXIS_MODEL: {
		int rc = load_model(sp, name, e);
		if (rc < 0)
			return rc;
		v = rc;
		for (int i = 0; i < a->n; i++)
			if (strcmp(sp->models[a->iv[i]]->name, sp->models[v]->name) == 0) {
				err_set(e, NULL, 0, 0, "model: '%s' is listed twice", name);
				return -EINVAL;
			}
		break;
	}
	case AXIS_HW: {
		int rc = load_hw(sp, name, e);
		if (rc < 0)
			return rc;
		v = rc;
		for (int i = 0; i < a->n; i++)
			if (strcmp(sp->hws[a->iv[i]]->name, sp->hws[v]->name) == 0) {
				err_set(e, NULL, 0, 0, "hw: '%s' is listed twice", name);
				return -EINVAL;
			}
		break;
	}
	case AXIS_TP_COMM:
		if (strcmp(name, "allreduce") == 0)
			v = 0;
		else if (strcmp(name, "rs_ag") == 0)
			v = 1;
		else {
			err_set(e, NULL, 0, 0, "tp_comm: expected allreduce or rs_ag, got '%s'", name);
			return -EINVAL;
		}
		break;
	default: {
		const enum dtype *allowed;
		int n = dtype_choices(a->kind, &allowed);
		enum dtype t;
		char list[128] = "";
		for (int i = 0; i < n; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
			         dtype_name(allowed[i]));
		if (dtype_parse(name, &t) == 0)
			for (int i = 0; i < n; i++)
				if (allowed[i] == t)
					v = t;
		if (v < 0) {
			err_set(e, NULL, 0, 0, "%s: '%s' is not one of %s", what, name, list);
			return -EINVAL;
		}
		break;
	}
	}
	for (int i = 0; i < a->n && a->kind != AXIS_MODEL && a->kind != AXIS_HW; i++)
		if (a->iv[i] == v) {
			err_set(e, NULL, 0, 0, "%s: '%s' is listed twice", what, name);
			return -EINVAL;
		}
	a->iv[a->n++] = v;
	return 0;
}

int sweep_spec_add_ints(struct sweep_spec *sp, enum sweep_axis_kind k, const int64_t *v, int n, struct err *e)
{
	if (!is_int_axis(k)) {
		err_set(e, NULL, 0, 0, "%s: not an integer axis", sweep_axis_name(k));
		return -EINVAL;
	}
	struct sweep_axis *a = axis_new(sp, k, (size_t)(n > 0 ? n : 0), e);
	if (!a)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int rc = append_int(a, v[i], e);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int sweep_spec_add_names(struct sweep_spec *sp, enum sweep_axis_kind k, const char *const *names, int n,
                         struct err *e)
{
	if (!is_name_axis(k)) {
		err_set(e, NULL, 0, 0, "%s: not a named axis", sweep_axis_name(k));
		return -EINVAL;
	}
	struct sweep_axis *a = axis_new(sp, k, (size_t)(n > 0 ? n : 0), e);
	if (!a)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int rc = append_name(sp, a, names[i], e);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- canonical description and hash ---- */

struct desc {
	char *buf;
	size_t cap, len;
	uint64_t hash;
};

static void desc_add(struct desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void desc_add(struct desc *d, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof tmp)
		n = sizeof tmp - 1;
	for (int i = 0; i < n; i++) {
		d->hash ^= (unsigned char)tmp[i];
		d->hash *= UINT64_C(1099511628211);
	}
	if (d->len + 1 < d->cap) {
		size_t room = d->cap - d->len - 1;
		size_t take = (size_t)n < room ? (size_t)n : room;
		memcpy(d->buf + d->len, tmp, take);
		d->len += take;
		d->buf[d->len] = 0;
		if (take < (size_t)n && d->cap > 4)
			memcpy(d->buf + d->cap - 4, "...", 4);
	}
}

static void describe(struct sweep_spec *sp)
{
	const struct scenario *s = &sp->base;
	struct desc d = {
	    .buf = sp->description, .cap = sizeof sp->description, .hash = UINT64_C(14695981039346656037)};
	sp->description[0] = 0;
	desc_add(&d,
	         "scenario %s: model %s, hw %s, gpus %lld, tp %lld, dp %lld, cp %lld, ep %lld, "
	         "tp_comm %s, moe_imbalance %.17g; ",
	         s->name, sp->models[0]->name, sp->hws[0]->name, (long long)s->gpus, (long long)s->tp,
	         (long long)s->dp, (long long)s->cp, (long long)s->ep, s->tp_rs_ag ? "rs_ag" : "allreduce",
	         s->moe_imbalance);
	desc_add(&d, "batch %lld, prompt %lld, output %lld, prefill_chunk %lld, kda_chunk %lld; ",
	         (long long)s->batch, (long long)s->prompt_tokens, (long long)s->output_tokens,
	         (long long)sp->prefill_chunk, (long long)s->kda_chunk);
	desc_add(&d,
	         "kda_state %s, mla_cache %s, activations %s, expert_activations %s, dispatch %s, "
	         "cuda_graph %d, reserved %lld",
	         dtype_name(s->kda_state), dtype_name(s->mla_cache), dtype_name(s->act),
	         dtype_name(s->expert_act), dtype_name(s->dispatch), s->cuda_graph ? 1 : 0,
	         (long long)s->reserved_bytes);
	for (int i = 0; i < sp->n_axes; i++) {
		const struct sweep_axis *a = &sp->axes[i];
		desc_add(&d, "; %s [", sweep_axis_name(a->kind));
		for (int j = 0; j < a->n; j++) {
			const char *sep = j ? ", " : "";
			if (is_int_axis(a->kind))
				desc_add(&d, "%s%lld", sep, (long long)a->iv[j]);
			else if (a->kind == AXIS_MOE_IMBALANCE)
				desc_add(&d, "%s%.17g", sep, a->fv[j]);
			else if (a->kind == AXIS_MODEL)
				desc_add(&d, "%s%s", sep, sp->models[a->iv[j]]->name);
			else if (a->kind == AXIS_HW)
				desc_add(&d, "%s%s", sep, sp->hws[a->iv[j]]->name);
			else if (a->kind == AXIS_TP_COMM)
				desc_add(&d, "%s%s", sep, a->iv[j] ? "rs_ag" : "allreduce");
			else
				desc_add(&d, "%s%s", sep, dtype_name((enum dtype)a->iv[j]));
		}
		desc_add(&d, "]");
	}
	sp->hash = d.hash;
}

int sweep_spec_finish(struct sweep_spec *sp, struct err *e)
{
	int rc;
	if (!sweep_spec_axis(sp, AXIS_MODEL) && sp->n_models == 0 &&
	    (rc = load_model(sp, sp->base.model, e)) < 0)
		return rc;
	if (!sweep_spec_axis(sp, AXIS_HW) && sp->n_hws == 0 && (rc = load_hw(sp, sp->base.hw, e)) < 0)
		return rc;
	/* With a model axis, models[0] is its first value: the description names it as the base. */
	int64_t points = 1;
	for (int i = sp->n_axes - 1; i >= 0; i--) {
		sp->axes[i].stride = points;
		if (points > SWEEP_MAX_POINTS / sp->axes[i].n) {
			err_set(e, sp->base.file, 0, 0,
			        "the sweep has more than %lld points; narrow its axes",
			        (long long)SWEEP_MAX_POINTS);
			return -E2BIG;
		}
		points *= sp->axes[i].n;
	}
	sp->points = points;
	describe(sp);
	return 0;
}

/* ---- points ---- */

int sweep_spec_point(const struct sweep_spec *sp, int64_t index, struct sweep_point *pt, struct err *e)
{
	struct scenario *s = &pt->s;
	pt->index = index;
	*s = sp->base;
	pt->m = sp->models[0];
	pt->hw = sp->hws[0];
	int64_t chunk = sp->prefill_chunk;
	bool layout = false, dp_set = false, ep_set = false, gpus_set = false;
	for (int i = 0; i < sp->n_axes; i++) {
		const struct sweep_axis *a = &sp->axes[i];
		int64_t j = (index / a->stride) % a->n;
		int64_t v = a->iv[j];
		switch (a->kind) {
		case AXIS_CONTEXT:
		case AXIS_PROMPT:
			s->prompt_tokens = v;
			break;
		case AXIS_BATCH:
			s->batch = v;
			break;
		case AXIS_OUTPUT:
			s->output_tokens = v;
			break;
		case AXIS_PREFILL_CHUNK:
			chunk = v;
			break;
		case AXIS_GPUS:
			s->gpus = v;
			layout = gpus_set = true;
			break;
		case AXIS_TP:
			s->tp = v;
			layout = true;
			break;
		case AXIS_DP:
			s->dp = v;
			dp_set = true;
			break;
		case AXIS_CP:
			s->cp = v;
			layout = true;
			break;
		case AXIS_EP:
			s->ep = v;
			ep_set = true;
			break;
		case AXIS_MOE_IMBALANCE:
			s->moe_imbalance = a->fv[j];
			break;
		case AXIS_TP_COMM:
			s->tp_rs_ag = v != 0;
			break;
		case AXIS_MODEL:
			pt->m = sp->models[v];
			break;
		case AXIS_HW:
			pt->hw = sp->hws[v];
			break;
		case AXIS_KDA_STATE:
			s->kda_state = (enum dtype)v;
			break;
		case AXIS_MLA_CACHE:
			s->mla_cache = (enum dtype)v;
			break;
		case AXIS_EXPERT_ACT:
			s->expert_act = (enum dtype)v;
			break;
		case AXIS_DISPATCH:
			s->dispatch = (enum dtype)v;
			break;
		case AXIS_KIND_COUNT:
			break;
		}
	}
	snprintf(s->model, sizeof s->model, "%s", pt->m->name);
	snprintf(s->hw, sizeof s->hw, "%s", pt->hw->name);
	s->prefill_chunk = chunk < s->prompt_tokens ? chunk : s->prompt_tokens; /* as scenario_check */
	if (gpus_set && !ep_set && sp->base.ep == sp->base.gpus)
		s->ep = s->gpus;
	if (layout && !dp_set) {
		int64_t tc = s->tp * s->cp * (s->pp > 1 ? s->pp : 1); /* dp as a scenario file defaults it */
		if (s->gpus % tc != 0) {
			if (s->pp > 1)
				err_set(e, NULL, 0, 0, "tp x cp x pp = %lld x %lld x %lld does not divide gpus %lld",
				        (long long)s->tp, (long long)s->cp, (long long)s->pp, (long long)s->gpus);
			else
				err_set(e, NULL, 0, 0, "tp x cp = %lld x %lld does not divide gpus %lld",
				        (long long)s->tp, (long long)s->cp, (long long)s->gpus);
			s->dp = 0;
			return -EINVAL;
		}
		s->dp = s->gpus / tc;
	}
	return scenario_check(s, e); /* the scenario file's rules, prefill_chunk capped */
}

/* ---- the `sweep:` key of a scenario file ---- */

struct parser {
	struct sweep_spec *sp;
	const struct doc *d;
	struct err *e;
};

/* Re-locates an error from the spec functions (no position) at node n. */
static int at(struct parser *p, const struct doc_node *n, int rc)
{
	if (p->e->line > 0)
		return rc < 0 ? rc : -EINVAL; /* located in another file (a model or hardware YAML) */
	char msg[sizeof p->e->msg];
	snprintf(msg, sizeof msg, "%s", p->e->msg);
	doc_error(p->d, n, p->e, "sweep: %s", msg);
	return rc < 0 ? rc : -EINVAL;
}

static int range_values(struct parser *p, const struct doc_node *n, struct sweep_axis *a)
{
	static const char *const keys[] = {"from", "to", "times", "step", NULL};
	int rc = doc_check_keys(p->d, n, keys, p->e);
	if (rc < 0)
		return rc;
	const struct doc_node *from = doc_get(n, "from"), *to = doc_get(n, "to");
	const struct doc_node *times = doc_get(n, "times"), *step = doc_get(n, "step");
	if (!from || !to)
		return doc_error(p->d, n, p->e, "sweep: %s: a range needs 'from' and 'to'",
		                 sweep_axis_name(a->kind));
	if (!times == !step)
		return doc_error(p->d, n, p->e,
		                 "sweep: %s: a range needs 'times' (geometric) or 'step' "
		                 "(arithmetic), one of them",
		                 sweep_axis_name(a->kind));
	int64_t lo, hi, by;
	if ((rc = doc_i64(p->d, from, "from", &lo, p->e)) < 0 ||
	    (rc = doc_i64(p->d, to, "to", &hi, p->e)) < 0 ||
	    (rc = doc_i64(p->d, times ? times : step, times ? "times" : "step", &by, p->e)) < 0)
		return rc;
	if (lo < 1 || hi < lo)
		return doc_error(p->d, n, p->e, "sweep: %s: a range needs 1 <= from <= to",
		                 sweep_axis_name(a->kind));
	if (by < (times ? 2 : 1))
		return doc_error(p->d, times ? times : step, p->e, "sweep: %s: %s must be at least %d",
		                 sweep_axis_name(a->kind), times ? "times" : "step", times ? 2 : 1);
	for (int64_t v = lo; v <= hi;) {
		if (a->n == SWEEP_MAX_VALUES)
			return doc_error(p->d, n, p->e, "sweep: %s: the range has more than %d values",
			                 sweep_axis_name(a->kind), SWEEP_MAX_VALUES);
		if ((rc = append_int(a, v, p->e)) < 0)
			return at(p, n, rc);
		if (times ? v > hi / by : v > hi - by)
			break;
		v = times ? v * by : v + by;
	}
	return 0;
}

static int parse_axis(struct parser *p, const struct doc_node *key, const struct doc_node *val)
{
	enum sweep_axis_kind k;
	if (sweep_axis_parse(key->str, &k) < 0) {
		const char *hint = err_suggest(key->str, axis_names);
		if (hint)
			return doc_error(p->d, key, p->e, "sweep: unknown axis '%s' (did you mean '%s'?)",
			                 key->str, hint);
		return doc_error(
		    p->d, key, p->e,
		    "sweep: unknown axis '%s' (axes: context, batch, "
		    "prompt_tokens, output_tokens, prefill_chunk, gpus, tp, dp, cp, ep, "
		    "moe_imbalance, tp_comm, model, hw, kda_state, mla_cache, expert_activations, "
		    "dispatch)",
		    key->str);
	}
	size_t n = val->kind == DOC_SEQ ? val->n : val->kind == DOC_MAP ? SWEEP_MAX_VALUES : 1;
	if (val->kind == DOC_MAP && !is_int_axis(k))
		return doc_error(p->d, val, p->e, "sweep: %s: ranges are for integer axes; give a list",
		                 key->str);
	if (val->kind == DOC_SEQ && val->n == 0)
		return doc_error(p->d, val, p->e, "sweep: %s: the list is empty", key->str);
	struct sweep_axis *a = axis_new(p->sp, k, n, p->e);
	if (!a)
		return at(p, key, -EINVAL);
	a->line = key->line;
	a->col = key->col;
	if (val->kind == DOC_MAP)
		return range_values(p, val, a);
	for (size_t i = 0; i < (val->kind == DOC_SEQ ? val->n : 1); i++) {
		const struct doc_node *v = val->kind == DOC_SEQ ? val->items[i] : val;
		int rc;
		if (is_int_axis(k)) {
			int64_t x;
			if ((rc = doc_i64(p->d, v, key->str, &x, p->e)) < 0)
				return rc;
			rc = append_int(a, x, p->e);
		} else if (k == AXIS_MOE_IMBALANCE) {
			double x;
			if ((rc = doc_double(p->d, v, key->str, &x, p->e)) < 0)
				return rc;
			rc = append_double(a, x, p->e);
		} else {
			const char *s;
			if ((rc = doc_str(p->d, v, key->str, &s, p->e)) < 0)
				return rc;
			rc = append_name(p->sp, a, s, p->e);
		}
		if (rc < 0)
			return at(p, v, rc);
	}
	return 0;
}

static int parse_tree(struct parser *p, const struct doc_node *root)
{
	/* The scenario loader has checked everything else; read the uncapped prefill chunk. */
	const struct doc_node *w = doc_get(root, "workload"), *n;
	int rc;
	if (w && w->kind == DOC_MAP && (n = doc_get(w, "prefill_chunk")) &&
	    (rc = doc_i64(p->d, n, "prefill_chunk", &p->sp->prefill_chunk, p->e)) < 0)
		return rc;
	const struct doc_node *sw = doc_get(root, "sweep");
	if (!sw || doc_is_null(sw))
		return 0;
	if ((rc = doc_expect(p->d, sw, DOC_MAP, "sweep", p->e)) < 0)
		return rc;
	for (size_t i = 0; i < sw->n; i++) {
		const struct doc_node *key = doc_key(sw, i);
		if (key->kind != DOC_SCALAR)
			return doc_error(p->d, key, p->e, "sweep: axis names are plain words");
		for (size_t j = 0; j < i; j++)
			if (strcmp(doc_key(sw, j)->str, key->str) == 0)
				return doc_error(p->d, key, p->e, "sweep: axis '%s' is given twice",
				                 key->str);
		if ((rc = parse_axis(p, key, doc_value(sw, i))) < 0)
			return rc;
	}
	return 0;
}

int sweep_spec_load_yaml(struct sweep_spec *sp, const char *name, const char *text, size_t len_bytes,
                         struct err *e)
{
	struct scenario base;
	int rc = scenario_load_yaml(&base, name, text, len_bytes, e);
	if (rc < 0)
		return rc;
	sweep_spec_init(sp, &base, base.prefill_chunk_set > 0 ? base.prefill_chunk_set : base.prefill_chunk);
	struct doc d;
	if ((rc = doc_load_string(&d, name, text, len_bytes, e)) < 0) {
		sweep_spec_release(sp);
		return rc;
	}
	struct parser p = {.sp = sp, .d = &d, .e = e};
	if (d.root)
		rc = parse_tree(&p, d.root);
	if (rc == 0)
		rc = sweep_spec_finish(sp, e);
	doc_release(&d);
	if (rc < 0)
		sweep_spec_release(sp);
	return rc;
}

static int parse_sweep(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	return sweep_spec_load_yaml(obj, label, text, len_bytes, e);
}

int sweep_spec_load(struct sweep_spec *sp, const char *name_or_path, struct err *e)
{
	return embedded_load(scenario_preset_table(), "scenario", "scenario", name_or_path, parse_sweep, sp, e);
}
