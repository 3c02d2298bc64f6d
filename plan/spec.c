/* k3sim plan: the search's inputs (plan/plan.h). */
#include "plan/plan.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/doc.h"

static const char *const mode_names[PLAN_MODE_COUNT] = {"all", "colocated", "disaggregated", "prefill", "decode"};
static const char *const kind_names[PLAN_KIND_COUNT] = {"colocated", "prefill", "decode"};
static const char *const status_names[PLAN_ST_COUNT] = {"ok", "slo", "memory", "layout"};

const char *plan_mode_name(enum plan_mode m)
{
	return m < PLAN_MODE_COUNT ? mode_names[m] : "?";
}

int plan_mode_parse(const char *s, enum plan_mode *out)
{
	for (int i = 0; i < PLAN_MODE_COUNT; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*out = (enum plan_mode)i;
			return 0;
		}
	return -EINVAL;
}

const char *plan_kind_name(enum plan_kind k)
{
	return k < PLAN_KIND_COUNT ? kind_names[k] : "?";
}

const char *plan_status_name(enum plan_status s)
{
	return s < PLAN_ST_COUNT ? status_names[s] : "?";
}

void plan_spec_init(struct plan_spec *sp)
{
	memset(sp, 0, sizeof *sp);
	snprintf(sp->base_src, sizeof sp->base_src, "default");
	sp->attainment = 0.9;
	sp->short_list = 2;
	sp->seed = 1;
	sp->mode = PLAN_MODE_ALL;
}

void plan_spec_release(struct plan_spec *sp)
{
	free(sp->model);
	sp->model = NULL;
	for (int i = 0; i < PLAN_MAX_HW; i++) {
		free(sp->hw[i]);
		sp->hw[i] = NULL;
	}
	serve_workload_release(&sp->trace);
}

/* ---- parsing ---- */

static int sorted_insert(int64_t *out, int *n, int64_t v)
{
	int i = 0;
	while (i < *n && out[i] < v)
		i++;
	if (i < *n && out[i] == v)
		return 0;
	if (*n >= PLAN_MAX_VALUES)
		return -E2BIG;
	memmove(out + i + 1, out + i, (size_t)(*n - i) * sizeof *out);
	out[i] = v;
	(*n)++;
	return 0;
}

int plan_parse_ints(const char *what, const char *s, int64_t *out, int *n, struct err *e)
{
	*n = 0;
	char buf[1024];
	if (!s || !*s || strlen(s) >= sizeof buf) {
		err_set(e, NULL, 0, 0, "%s: expected a list of positive integers such as 1,2,4, got '%s'", what,
			s ? s : "");
		return -EINVAL;
	}
	snprintf(buf, sizeof buf, "%s", s);
	int count = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int64_t v;
		if (doc_parse_i64(tok, &v) < 0 || v < 1) {
			err_set(e, NULL, 0, 0, "%s: '%s' is not a positive integer", what, tok);
			return -EINVAL;
		}
		int before = *n;
		if (sorted_insert(out, n, v) < 0) {
			err_set(e, NULL, 0, 0, "%s: more than %d values", what, PLAN_MAX_VALUES);
			return -E2BIG;
		}
		if (*n == before) {
			err_set(e, NULL, 0, 0, "%s: %lld is given twice", what, (long long)v);
			return -EINVAL;
		}
		count++;
	}
	if (!count) {
		err_set(e, NULL, 0, 0, "%s: no value in '%s'", what, s);
		return -EINVAL;
	}
	return 0;
}

int plan_parse_gpus(const char *s, int64_t *out, int *n, struct err *e)
{
	const char *dots = s ? strstr(s, "..") : NULL;
	if (!dots)
		return plan_parse_ints("--gpus", s, out, n, e);
	char a[64];
	int64_t lo, hi;
	snprintf(a, sizeof a, "%.*s", (int)(dots - s < 63 ? dots - s : 63), s);
	if (doc_parse_i64(a, &lo) < 0 || doc_parse_i64(dots + 2, &hi) < 0 || lo < 1 || hi < lo) {
		err_set(e, NULL, 0, 0, "--gpus: expected A..B with 1 <= A <= B (A, 2A, 4A, ... and B), got '%s'", s);
		return -EINVAL;
	}
	if (hi > 1000000) {
		err_set(e, NULL, 0, 0, "--gpus: %lld GPUs is more than k3sim plans for (1,000,000)", (long long)hi);
		return -ERANGE;
	}
	*n = 0;
	for (int64_t g = lo; g < hi; g *= 2)
		if (sorted_insert(out, n, g) < 0)
			goto big;
	if (sorted_insert(out, n, hi) < 0)
		goto big;
	return 0;
big:
	err_set(e, NULL, 0, 0, "--gpus: more than %d counts", PLAN_MAX_VALUES);
	return -E2BIG;
}

int plan_parse_seconds(const char *what, const char *s, double *out, struct err *e)
{
	char num[64];
	size_t len = s ? strlen(s) : 0, k = len;
	while (k > 0 && isalpha((unsigned char)s[k - 1]))
		k--;
	double scale = 1;
	const char *unit = s ? s + k : "";
	if (!*unit || strcmp(unit, "s") == 0)
		scale = 1;
	else if (strcmp(unit, "ms") == 0)
		scale = 1e-3;
	else if (strcmp(unit, "us") == 0)
		scale = 1e-6;
	else
		goto bad;
	if (k == 0 || k >= sizeof num)
		goto bad;
	snprintf(num, sizeof num, "%.*s", (int)k, s);
	double v;
	if (doc_parse_double(num, &v) < 0 || !(v > 0) || !isfinite(v))
		goto bad;
	*out = v * scale;
	return 0;
bad:
	err_set(e, NULL, 0, 0, "%s: expected a positive duration such as 2s, 50ms or 250us, got '%s'", what,
		s ? s : "");
	return -EINVAL;
}

/* ---- finishing ---- */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

#define FNV_SEED UINT64_C(0xcbf29ce484222325)

static bool is_path(const char *s)
{
	return strchr(s, '/') || strstr(s, ".yaml") || strstr(s, ".yml") || strstr(s, ".json");
}

/* FNV-1a of a file's bytes (0 when it cannot be read: the load that follows says why). */
static uint64_t hash_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	uint64_t h = FNV_SEED;
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, f)) > 0)
		h = fnv1a(h, buf, got);
	fclose(f);
	return h;
}

/* What a model, hardware or scenario name stands for: a preset's name, a file's bytes. */
static uint64_t hash_source(const char *name)
{
	if (!is_path(name)) {
		const char *t = scenario_preset_text(name);
		return t ? fnv1a(FNV_SEED, t, strlen(t)) : 0;
	}
	return hash_file(name);
}

struct text {
	char *p;
	size_t cap, len;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->p + t->len, t->len < t->cap ? t->cap - t->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len = t->len + (size_t)n < t->cap ? t->len + (size_t)n : t->cap - 1;
}

static void put_list(struct text *t, const char *key, const int64_t *v, int n)
{
	put(t, "%s: [", key);
	for (int i = 0; i < n; i++)
		put(t, "%s%lld", i ? ", " : "", (long long)v[i]);
	put(t, "]\n");
}

static void put_dtypes(struct text *t, const char *key, const enum dtype *v, int n)
{
	put(t, "%s: [", key);
	for (int i = 0; i < n; i++)
		put(t, "%s%s", i ? ", " : "", dtype_name(v[i]));
	put(t, "]\n");
}

static void describe(struct plan_spec *sp)
{
	struct text t = {sp->description, sizeof sp->description, 0};
	sp->description[0] = 0;
	put(&t, "format: k3sim-plan 1\n");
	put(&t, "base: %s (%016llx)\n", sp->base.file, (unsigned long long)hash_source(sp->base_src));
	put(&t, "model: %s (%016llx)\n", sp->model->name,
	    (unsigned long long)(is_path(sp->base.model) ? hash_file(sp->base.model) : 0));
	put(&t, "hw: [");
	for (int i = 0; i < sp->n_hw; i++)
		put(&t, "%s%s (%016llx)", i ? ", " : "", sp->hw[i]->name,
		    (unsigned long long)(is_path(sp->hw_names[i]) ? hash_file(sp->hw_names[i]) : 0));
	put(&t, "]\n");
	put_list(&t, "gpus", sp->ax.gpus, sp->ax.n_gpus);
	put_list(&t, "tp", sp->ax.tp, sp->ax.n_tp);
	put_list(&t, "cp", sp->ax.cp, sp->ax.n_cp);
	put_list(&t, "ep_div", sp->ax.ep_div, sp->ax.n_ep_div);
	put_list(&t, "batch", sp->ax.batch, sp->ax.n_batch);
	put_list(&t, "budget", sp->ax.budget, sp->ax.n_budget);
	put_dtypes(&t, "kda_state", sp->ax.kda, sp->ax.n_kda);
	put_dtypes(&t, "mla_cache", sp->ax.mla, sp->ax.n_mla);
	put(&t, "isl: %lld\nosl: %lld\nprefix_hit: %.17g\n", (long long)sp->isl, (long long)sp->osl, sp->prefix_hit);
	put(&t, "slo_ttft_s: %.17g\nslo_tpot_s: %.17g\n", sp->slo_ttft_s, sp->slo_tpot_s);
	put(&t, "mode: %s\nshort_list: %d\nattainment: %.17g\nserve_requests: %lld\nseed: %llu\n",
	    plan_mode_name(sp->mode), sp->short_list, sp->attainment, (long long)sp->serve_requests,
	    (unsigned long long)sp->seed);
	put(&t, "workload: %s (%016llx)\n", sp->workload[0] ? sp->workload : "-",
	    (unsigned long long)(sp->workload[0] ? hash_file(sp->workload) : 0));
	sp->hash = fnv1a(FNV_SEED, sp->description, strlen(sp->description));
}

static void default_pow2(int64_t *out, int *n, int64_t from, int64_t to)
{
	*n = 0;
	for (int64_t v = from; v <= to && *n < PLAN_MAX_VALUES; v *= 2)
		out[(*n)++] = v;
}

int plan_spec_finish(struct plan_spec *sp, struct err *e)
{
	int rc;
	if ((rc = scenario_load(&sp->base, sp->base_src, e)) < 0)
		return rc;
	if (sp->base.pp != 1) {
		err_set(e, sp->base.file, 0, 0,
			"the base scenario has pp %lld: plan searches layouts without pipeline parallelism "
			"(serving does not model it)",
			(long long)sp->base.pp);
		return -EINVAL;
	}
	if (sp->model_name[0])
		snprintf(sp->base.model, sizeof sp->base.model, "%s", sp->model_name);
	if (!(sp->model = malloc(sizeof *sp->model))) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	if ((rc = model_load(sp->model, sp->base.model, e)) < 0)
		return rc;
	if (sp->n_hw == 0) {
		snprintf(sp->hw_names[0], sizeof sp->hw_names[0], "%s", sp->base.hw);
		sp->n_hw = 1;
	}
	for (int i = 0; i < sp->n_hw; i++) {
		if (!(sp->hw[i] = malloc(sizeof *sp->hw[i]))) {
			err_set(e, NULL, 0, 0, "out of memory");
			return -ENOMEM;
		}
		if ((rc = hw_load(sp->hw[i], sp->hw_names[i], e)) < 0)
			return rc;
		for (int j = 0; j < i; j++)
			if (strcmp(sp->hw[i]->name, sp->hw[j]->name) == 0) {
				err_set(e, NULL, 0, 0, "--hw: '%s' and '%s' are both named '%s'", sp->hw_names[j],
					sp->hw_names[i], sp->hw[i]->name);
				return -EINVAL;
			}
	}
	if (sp->workload[0]) {
		if ((rc = serve_trace_load(&sp->trace, sp->workload, SERVE_TRACE_AUTO, 1.0, e)) < 0)
			return rc;
		if (sp->trace.n < 2) {
			err_set(e, sp->workload, 0, 0, "--workload: a trace needs at least two requests (it has %lld)",
				(long long)sp->trace.n);
			return -EINVAL;
		}
		double span = sp->trace.req[sp->trace.n - 1].arrival_s - sp->trace.req[0].arrival_s;
		if (!(span > 0)) {
			err_set(e, sp->workload, 0, 0, "--workload: every request arrives at once (no rate to scale)");
			return -EINVAL;
		}
		sp->trace_rate_per_s = (double)(sp->trace.n - 1) / span;
		double pin = 0, pout = 0;
		for (int64_t i = 0; i < sp->trace.n; i++) {
			pin += (double)(sp->trace.req[i].prompt_tokens + sp->trace.req[i].vision_tokens);
			pout += (double)sp->trace.req[i].output_tokens;
		}
		if (!sp->isl)
			sp->isl = (int64_t)llround(pin / (double)sp->trace.n);
		if (!sp->osl)
			sp->osl = (int64_t)llround(pout / (double)sp->trace.n);
	}
	if (!sp->isl)
		sp->isl = sp->base.prompt_tokens;
	if (!sp->osl)
		sp->osl = sp->base.output_tokens;
	if (sp->isl < 1 || sp->osl < 1 || sp->isl > (INT64_C(1) << 24) || sp->osl > (INT64_C(1) << 24)) {
		err_set(e, NULL, 0, 0, "--isl/--osl: prompt and output tokens must be in 1..16777216 (got %lld, %lld)",
			(long long)sp->isl, (long long)sp->osl);
		return -EINVAL;
	}
	if (!(sp->prefix_hit >= 0 && sp->prefix_hit < 1)) {
		err_set(e, NULL, 0, 0, "--prefix-hit: %g is not in [0, 1)", sp->prefix_hit);
		return -EINVAL;
	}
	bool need_ttft = sp->mode != PLAN_MODE_DECODE, need_tpot = sp->mode != PLAN_MODE_PREFILL;
	if ((need_ttft && !(sp->slo_ttft_s > 0)) || (need_tpot && !(sp->slo_tpot_s > 0))) {
		err_set(e, NULL, 0, 0, "%s is required (the SLO the plan is for)", need_ttft && !(sp->slo_ttft_s > 0) ? "--ttft" : "--tpot");
		return -EINVAL;
	}
	if (!(sp->attainment > 0 && sp->attainment <= 1)) {
		err_set(e, NULL, 0, 0, "--attainment: %g is not in (0, 1]", sp->attainment);
		return -EINVAL;
	}
	if (sp->short_list < 0 || sp->short_list > PLAN_MAX_SHORT) {
		err_set(e, NULL, 0, 0, "--short: %d is not in 0..%d", sp->short_list, PLAN_MAX_SHORT);
		return -EINVAL;
	}
	if (sp->serve_requests < 0 || sp->serve_requests > PLAN_MAX_SERVE_REQUESTS) {
		err_set(e, NULL, 0, 0, "--serve-requests: %lld is not in 0..%d", (long long)sp->serve_requests,
			PLAN_MAX_SERVE_REQUESTS);
		return -EINVAL;
	}
	if (sp->ax.n_gpus == 0) {
		err_set(e, NULL, 0, 0, "--gpus is required (e.g. --gpus 8..128 or --gpus 16,32)");
		return -EINVAL;
	}
	struct plan_axes *ax = &sp->ax;
	if (!ax->n_tp)
		default_pow2(ax->tp, &ax->n_tp, 1, 16);
	if (!ax->n_cp) {
		ax->n_cp = 0;
		for (int64_t c = 1; c <= 16; c++)
			if (c == 1 || sp->isl / c >= 16384)
				ax->cp[ax->n_cp++] = c;
	}
	if (!ax->n_ep_div)
		default_pow2(ax->ep_div, &ax->n_ep_div, 1, 4);
	if (!ax->n_batch)
		default_pow2(ax->batch, &ax->n_batch, 1, 1024);
	if (!ax->n_budget)
		default_pow2(ax->budget, &ax->n_budget, 4096, 32768);
	struct model_inventory inv;
	model_inventory(sp->model, &inv);
	if (!ax->n_kda) {
		ax->kda[ax->n_kda++] = inv.kda_layers ? DT_FP32 : sp->base.kda_state;
		if (inv.kda_layers)
			ax->kda[ax->n_kda++] = DT_BF16;
	}
	if (!ax->n_mla) {
		ax->mla[ax->n_mla++] = inv.mla_layers ? DT_BF16 : sp->base.mla_cache;
		if (inv.mla_layers)
			ax->mla[ax->n_mla++] = DT_FP8;
	}
	for (int i = 0; i < ax->n_kda; i++)
		if (ax->kda[i] != DT_FP32 && ax->kda[i] != DT_BF16) {
			err_set(e, NULL, 0, 0, "--kda-state: %s is not a KDA state dtype (fp32, bf16)", dtype_name(ax->kda[i]));
			return -EINVAL;
		}
	for (int i = 0; i < ax->n_mla; i++)
		if (ax->mla[i] != DT_BF16 && ax->mla[i] != DT_FP8) {
			err_set(e, NULL, 0, 0, "--mla-cache: %s is not an MLA cache dtype (bf16, fp8)", dtype_name(ax->mla[i]));
			return -EINVAL;
		}
	double units = (double)sp->n_hw * ax->n_gpus * ax->n_tp * ax->n_cp * ax->n_ep_div * ax->n_kda * ax->n_mla;
	if (units > PLAN_MAX_UNITS) {
		err_set(e, NULL, 0, 0, "%.0f layouts: more than the %d one plan holds (narrow an axis)", units,
			PLAN_MAX_UNITS);
		return -E2BIG;
	}
	sp->units = (int64_t)units;
	describe(sp);
	return 0;
}
