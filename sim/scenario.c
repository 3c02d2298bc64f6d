#include "sim/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ops.h"
#include "util/doc.h"
#include "util/embed.h"

extern const struct embedded_file scenario_presets[];

const char *const *scenario_preset_names(void)
{
	static const char *names[32];
	return embedded_names(scenario_presets, names, 32);
}

const char *scenario_preset_text(const char *name)
{
	const struct embedded_file *f = embedded_find(scenario_presets, name);
	return f ? f->data : NULL;
}

static void set_defaults(struct scenario *s)
{
	memset(s, 0, sizeof *s);
	snprintf(s->model, sizeof s->model, "kimi-k3");
	snprintf(s->hw, sizeof s->hw, "h200");
	s->gpus = 1;
	s->tp = s->dp = s->cp = 0; /* 0 = derive */
	s->pp = 1;
	s->ep = 0;
	s->moe_tp = 1;
	s->moe_imbalance = 1.1;
	s->batch = 1;
	s->prompt_tokens = 8192;
	s->output_tokens = 1024;
	s->prefill_chunk = 8192;
	s->kda_chunk = 16;
	s->kda_state = DT_FP32;
	s->mla_cache = DT_BF16;
	s->act = DT_BF16;
	s->expert_act = DT_MXFP8;
	s->dispatch = DT_FP8;
	s->cuda_graph = true;
	s->clock = (struct hw_clock_sel){.regime = HW_CLOCK_SUSTAINED};
	s->reserved_bytes = -1;
	s->overlap = OVERLAP_AUTO;
	s->path = PATH_PRODUCTION;
	s->mtp_acceptance = 1;
	s->mtp_draft_layers = 1;
	s->ep_sms = 20;
}

static int dtype_field(struct doc_reader *c, const struct doc_node *map, const char *key,
		       const enum dtype *allowed, int n_allowed, enum dtype *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return 0;
	const char *s;
	int rc = doc_str(c->d, v, key, &s, c->e);
	if (rc < 0)
		return rc;
	enum dtype t;
	char list[128] = "";
	for (int i = 0; i < n_allowed; i++) {
		strncat(list, dtype_name(allowed[i]), sizeof list - strlen(list) - 1);
		if (i + 1 < n_allowed)
			strncat(list, ", ", sizeof list - strlen(list) - 1);
	}
	if (dtype_parse(s, &t) == 0)
		for (int i = 0; i < n_allowed; i++)
			if (allowed[i] == t) {
				*out = t;
				return 0;
			}
	return doc_error(c->d, v, c->e, "%s: '%s' is not one of %s", key, s, list);
}

static int str_field(struct doc_reader *c, const struct doc_node *map, const char *key, char *dst, size_t cap)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return 0;
	const char *s;
	int rc = doc_str(c->d, v, key, &s, c->e);
	if (rc < 0)
		return rc;
	if (strlen(s) >= cap)
		return doc_error(c->d, v, c->e, "%s: too long (at most %zu characters)", key, cap - 1);
	snprintf(dst, cap, "%s", s);
	return 0;
}

/* ---- engine: how the serving engine runs a step (sim/step.c) ---- */

static const char *const overlap_names[OVERLAP_COUNT] = {"auto", "none", "tbo", "sbo"};
static const char *const path_names[PATH_COUNT] = {"production", "reference"};

const char *scenario_overlap_name(enum scenario_overlap o)
{
	return (unsigned)o < OVERLAP_COUNT ? overlap_names[o] : "?";
}

const char *scenario_path_name(enum scenario_path p)
{
	return (unsigned)p < PATH_COUNT ? path_names[p] : "?";
}

static int load_engine(struct doc_reader *c, const struct doc_node *root, struct scenario *s)
{
	static const char *const keys[] = {"overlap", "shared_expert_stream", "attnres_side_stream", "path",
		"prefill_tokens", "mixed_prefill_tokens", "mtp", "mla_cp", "step_overhead_us", NULL};
	static const char *const mla_cp[] = {"allgather", "ring"};
	static const char *const mtp_keys[] = {"draft_tokens", "acceptance", "draft_layers", NULL};
	const int64_t big = INT64_C(1) << 40;
	const struct doc_node *n;
	int rc = doc_section(c, root, "engine", keys, &n);
	if (rc < 0 || !n)
		return rc;
	int ov = (int)s->overlap, path = (int)s->path;
	if ((rc = doc_field_enum(c, n, "overlap", overlap_names, OVERLAP_COUNT, &ov)) < 0 ||
	    (rc = doc_field_enum(c, n, "path", path_names, PATH_COUNT, &path)) < 0)
		return rc;
	s->overlap = (enum scenario_overlap)ov;
	s->path = (enum scenario_path)path;
	int ring = s->mla_cp_ring;
	if ((rc = doc_field_enum(c, n, "mla_cp", mla_cp, 2, &ring)) < 0)
		return rc;
	s->mla_cp_ring = ring;
	const struct doc_node *v;
	if ((v = doc_get(n, "shared_expert_stream")) &&
	    (rc = doc_bool(c->d, v, "shared_expert_stream", &s->shared_expert_stream, c->e)) < 0)
		return rc;
	if ((v = doc_get(n, "attnres_side_stream")) &&
	    (rc = doc_bool(c->d, v, "attnres_side_stream", &s->attnres_side_stream, c->e)) < 0)
		return rc;
	if ((rc = doc_field_i64(c, n, "prefill_tokens", 1, big, &s->prefill_tokens)) < 0 ||
	    (rc = doc_field_i64(c, n, "mixed_prefill_tokens", 0, big, &s->mixed_prefill_tokens)) < 0)
		return rc;
	if ((v = doc_get(n, "step_overhead_us"))) {
		double us;
		if ((rc = doc_double(c->d, v, "step_overhead_us", &us, c->e)) < 0)
			return rc;
		if (!(us >= 0 && us <= 1e6))
			return doc_error(c->d, v, c->e, "step_overhead_us: %g is outside [0, 1e6] (microseconds of host "
					 "time per engine step)", us);
		s->step_overhead_s = us * 1e-6;
	}
	const struct doc_node *m;
	if ((rc = doc_section(c, n, "mtp", mtp_keys, &m)) < 0)
		return rc;
	if (m) {
		if ((rc = doc_field_i64(c, m, "draft_tokens", 0, 16, &s->mtp_draft_tokens)) < 0 ||
		    (rc = doc_field_i64(c, m, "draft_layers", 1, 8, &s->mtp_draft_layers)) < 0)
			return rc;
		s->mtp_acceptance = 1 + (double)s->mtp_draft_tokens;
		if ((v = doc_get(m, "acceptance"))) {
			if ((rc = doc_double(c->d, v, "acceptance", &s->mtp_acceptance, c->e)) < 0)
				return rc;
			if (!(s->mtp_acceptance >= 1 && s->mtp_acceptance <= 1 + (double)s->mtp_draft_tokens))
				return doc_error(c->d, v, c->e,
						 "acceptance: %g is outside [1, 1 + draft_tokens = %lld] (tokens accepted "
						 "per request per step, the bonus token included)",
						 s->mtp_acceptance, (long long)(1 + s->mtp_draft_tokens));
		}
	}
	return 0;
}

/* ---- ep: how EP dispatch and combine travel (sim/ep.h) ---- */

static int load_ep(struct doc_reader *c, const struct doc_node *root, struct scenario *s)
{
	static const char *const keys[] = {"mode", "node_limit", "sms", "redundant_experts", NULL};
	/* the names of enum op_ep_mode, in its order (auto is EP_MODE_NONE) */
	static const char *const modes[] = {"auto", "normal", "low_latency", "alltoall"};
	const struct doc_node *n;
	int rc = doc_section(c, root, "ep", keys, &n);
	if (rc < 0 || !n)
		return rc;
	if ((rc = doc_field_enum(c, n, "mode", modes, 4, &s->ep_mode)) < 0 ||
	    (rc = doc_field_i64(c, n, "node_limit", 0, 1 << 20, &s->ep_node_limit)) < 0 ||
	    (rc = doc_field_i64(c, n, "sms", 0, 1024, &s->ep_sms)) < 0 ||
	    (rc = doc_field_i64(c, n, "redundant_experts", 0, 1 << 20, &s->redundant_experts)) < 0)
		return rc;
	return 0;
}

static int load_tree(struct doc_reader *c, const struct doc_node *root, struct scenario *s)
{
	static const char *const top[] = {"name", "description", "model", "hw", "gpus", "parallel",
		"workload", "dtypes", "options", "sweep", "engine", "ep", "serve", NULL};
	/* sweep: read by reports/sweep_spec.c; serve: by serve/config.c */
	static const char *const par_keys[] = {"tp", "dp", "cp", "ep", "moe_tp", "tp_comm", "moe_imbalance",
		"moe_expert_cv", "pp", NULL};
	static const char *const work_keys[] = {"batch", "prompt_tokens", "output_tokens",
		"prefill_chunk", "kda_chunk", NULL};
	static const char *const dt_keys[] = {"kda_state", "mla_cache", "activations",
		"expert_activations", "dispatch", NULL};
	static const char *const opt_keys[] = {"cuda_graph", "reserved_gib", "clock", NULL};
	const int64_t big = INT64_C(1) << 40;
	int rc = doc_expect(c->d, root, DOC_MAP, "scenario", c->e);
	if (rc < 0 || (rc = doc_check_keys(c->d, root, top, c->e)) < 0)
		return rc;
	if ((rc = str_field(c, root, "name", s->name, sizeof s->name)) < 0 ||
	    (rc = str_field(c, root, "description", s->description, sizeof s->description)) < 0 ||
	    (rc = str_field(c, root, "model", s->model, sizeof s->model)) < 0 ||
	    (rc = str_field(c, root, "hw", s->hw, sizeof s->hw)) < 0 ||
	    (rc = doc_field_i64(c, root, "gpus", 1, 1 << 20, &s->gpus)) < 0)
		return rc;

	const struct doc_node *n;
	if ((rc = doc_section(c, root, "parallel", par_keys, &n)) < 0)
		return rc;
	if (n) {
		if ((rc = doc_field_i64(c, n, "tp", 1, 1 << 20, &s->tp)) < 0 ||
		    (rc = doc_field_i64(c, n, "dp", 1, 1 << 20, &s->dp)) < 0 ||
		    (rc = doc_field_i64(c, n, "cp", 1, 1 << 20, &s->cp)) < 0 ||
		    (rc = doc_field_i64(c, n, "pp", 1, 1 << 10, &s->pp)) < 0 ||
		    (rc = doc_field_i64(c, n, "ep", 1, 1 << 20, &s->ep)) < 0 ||
		    (rc = doc_field_i64(c, n, "moe_tp", 1, 1 << 20, &s->moe_tp)) < 0)
			return rc;
		const struct doc_node *v = doc_get(n, "tp_comm");
		if (v) {
			const char *str;
			if ((rc = doc_str(c->d, v, "tp_comm", &str, c->e)) < 0)
				return rc;
			if (strcmp(str, "allreduce") == 0)
				s->tp_rs_ag = false;
			else if (strcmp(str, "rs_ag") == 0)
				s->tp_rs_ag = true;
			else
				return doc_error(c->d, v, c->e, "tp_comm: expected allreduce or rs_ag, got '%s'", str);
		}
		if ((v = doc_get(n, "moe_imbalance"))) {
			if ((rc = doc_double(c->d, v, "moe_imbalance", &s->moe_imbalance, c->e)) < 0)
				return rc;
			if (s->moe_imbalance < 1.0 || s->moe_imbalance > 64.0)
				return doc_error(c->d, v, c->e, "moe_imbalance: must be in [1, 64] (busiest rank over the mean)");
		}
		if ((v = doc_get(n, "moe_expert_cv"))) {
			if ((rc = doc_double(c->d, v, "moe_expert_cv", &s->moe_expert_cv, c->e)) < 0)
				return rc;
			if (!(s->moe_expert_cv >= 0 && s->moe_expert_cv <= OP_EXPERT_CV_MAX))
				return doc_error(c->d, v, c->e,
						 "moe_expert_cv: must be in [0, %g] (rows per touched expert: std over mean; "
						 "0: a uniform router's)",
						 OP_EXPERT_CV_MAX);
		}
	}
	if ((rc = doc_section(c, root, "workload", work_keys, &n)) < 0)
		return rc;
	if (n) {
		if ((rc = doc_field_i64(c, n, "batch", 1, 1 << 24, &s->batch)) < 0 ||
		    (rc = doc_field_i64(c, n, "prompt_tokens", 1, big, &s->prompt_tokens)) < 0 ||
		    (rc = doc_field_i64(c, n, "output_tokens", 1, big, &s->output_tokens)) < 0 ||
		    (rc = doc_field_i64(c, n, "prefill_chunk", 1, big, &s->prefill_chunk)) < 0 ||
		    (rc = doc_field_i64(c, n, "kda_chunk", 1, 1024, &s->kda_chunk)) < 0)
			return rc;
	}
	if ((rc = doc_section(c, root, "dtypes", dt_keys, &n)) < 0)
		return rc;
	if (n) {
		static const enum dtype state[] = {DT_FP32, DT_BF16};
		static const enum dtype cache[] = {DT_BF16, DT_FP8};
		static const enum dtype act[] = {DT_BF16, DT_FP16, DT_FP8};
		static const enum dtype eact[] = {DT_MXFP8, DT_FP8, DT_BF16, DT_MXFP4};
		static const enum dtype disp[] = {DT_FP8, DT_BF16};
		if ((rc = dtype_field(c, n, "kda_state", state, 2, &s->kda_state)) < 0 ||
		    (rc = dtype_field(c, n, "mla_cache", cache, 2, &s->mla_cache)) < 0 ||
		    (rc = dtype_field(c, n, "activations", act, 3, &s->act)) < 0 ||
		    (rc = dtype_field(c, n, "expert_activations", eact, 4, &s->expert_act)) < 0 ||
		    (rc = dtype_field(c, n, "dispatch", disp, 2, &s->dispatch)) < 0)
			return rc;
	}
	if ((rc = doc_section(c, root, "options", opt_keys, &n)) < 0)
		return rc;
	if (n) {
		const struct doc_node *v = doc_get(n, "cuda_graph");
		if (v && (rc = doc_bool(c->d, v, "cuda_graph", &s->cuda_graph, c->e)) < 0)
			return rc;
		if ((v = doc_get(n, "clock"))) {
			const char *str;
			if ((rc = doc_str(c->d, v, "clock", &str, c->e)) < 0)
				return rc;
			char why[200];
			if (hw_clock_sel_parse(str, &s->clock, why, sizeof why) < 0)
				return doc_error(c->d, v, c->e, "clock: %s", why);
			s->clock_line = v->line;
			s->clock_col = v->col;
		}
		if ((v = doc_get(n, "reserved_gib"))) {
			double gib;
			if ((rc = doc_double(c->d, v, "reserved_gib", &gib, c->e)) < 0)
				return rc;
			if (gib < 0 || gib > 1e6)
				return doc_error(c->d, v, c->e, "reserved_gib: must be in [0, 1e6]");
			s->reserved_bytes = (int64_t)(gib * 1073741824.0);
		}
	}

	if ((rc = load_engine(c, root, s)) < 0 || (rc = load_ep(c, root, s)) < 0)
		return rc;
	s->prefill_chunk_set = s->prefill_chunk;

	/* Layout defaults and consistency: tp x dp x cp GPUs for attention, ep for experts. */
	if (!s->tp)
		s->tp = 1;
	if (!s->cp)
		s->cp = 1;
	if (!s->dp)
		s->dp = s->gpus / (s->tp * s->cp * s->pp) > 0 ? s->gpus / (s->tp * s->cp * s->pp) : 1;
	const struct doc_node *where = doc_get(root, "parallel") ? doc_get(root, "parallel") : root;
	if (!s->ep)
		s->ep = s->moe_tp > 1 ? 1 : s->gpus / s->pp;
	struct err why = {0};
	if (scenario_check(s, &why) < 0)
		return doc_error(c->d, where, c->e, "%s", why.msg);
	return 0;
}

int scenario_check(struct scenario *s, struct err *e)
{
	if (s->moe_tp > 1 && s->ep > 1) {
		err_set(e, NULL, 0, 0,
			"moe_tp %lld with ep %lld: experts split both along their width and over EP ranks "
			"is not modeled (set ep: 1, or moe_tp: 1)",
			(long long)s->moe_tp, (long long)s->ep);
		return -EINVAL;
	}
	if (s->prefill_chunk > s->prompt_tokens)
		s->prefill_chunk = s->prompt_tokens;
	if (s->pp > 1 && s->tp * s->dp * s->cp * s->pp != s->gpus) {
		err_set(e, NULL, 0, 0, "tp x dp x cp x pp = %lld x %lld x %lld x %lld = %lld, but gpus is %lld",
			(long long)s->tp, (long long)s->dp, (long long)s->cp, (long long)s->pp,
			(long long)(s->tp * s->dp * s->cp * s->pp), (long long)s->gpus);
		return -EINVAL;
	}
	if (s->tp * s->dp * s->cp * s->pp != s->gpus) {
		err_set(e, NULL, 0, 0, "tp x dp x cp = %lld x %lld x %lld = %lld, but gpus is %lld",
			(long long)s->tp, (long long)s->dp, (long long)s->cp,
			(long long)(s->tp * s->dp * s->cp), (long long)s->gpus);
		return -EINVAL;
	}
	if (s->ep < 1 || s->ep > s->gpus / s->pp || (s->gpus / s->pp) % s->ep != 0) {
		err_set(e, NULL, 0, 0, "ep %lld must divide gpus %lld%s", (long long)s->ep,
			(long long)(s->gpus / s->pp), s->pp > 1 ? " of a pipeline stage" : "");
		return -EINVAL;
	}
	if (s->moe_tp > 1 && (s->moe_tp % s->tp != 0 || s->dp % (s->moe_tp / s->tp) != 0)) {
		err_set(e, NULL, 0, 0,
			"moe_tp %lld must be tp (%lld) times a divisor of dp (%lld): the MoE's tensor-parallel "
			"group covers whole attention groups",
			(long long)s->moe_tp, (long long)s->tp, (long long)s->dp);
		return -EINVAL;
	}
	if (s->moe_tp > s->tp && s->cp > 1) {
		err_set(e, NULL, 0, 0,
			"moe_tp %lld beyond tp %lld with cp %lld: gathering context-parallel tokens for the MoE "
			"is not modeled", (long long)s->moe_tp, (long long)s->tp, (long long)s->cp);
		return -EINVAL;
	}
	return 0;
}

int scenario_load_yaml(struct scenario *s, const char *name, const char *text, size_t len_bytes,
		       struct err *e)
{
	struct doc d;
	int rc = doc_load_string(&d, name, text, len_bytes, e);
	if (rc < 0)
		return rc;
	struct scenario tmp;
	set_defaults(&tmp);
	snprintf(tmp.file, sizeof tmp.file, "%s", name);
	struct doc_reader c = {.d = &d, .e = e};
	if (!d.root) {
		rc = doc_error(&d, NULL, e, "empty scenario file");
		goto out;
	}
	if ((rc = load_tree(&c, d.root, &tmp)) < 0)
		goto out;
	if (!tmp.name[0]) {
		const char *base = strrchr(name, '/');
		base = base ? base + 1 : name;
		snprintf(tmp.name, sizeof tmp.name, "%.*s", (int)strcspn(base, "."), base);
	}
	if (embedded_is_path(tmp.model))
		embedded_resolve_relative(tmp.model, sizeof tmp.model, name);
	if (embedded_is_path(tmp.hw))
		embedded_resolve_relative(tmp.hw, sizeof tmp.hw, name);
	*s = tmp;
out:
	doc_release(&d);
	return rc;
}

static int parse_scenario(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	return scenario_load_yaml(obj, label, text, len_bytes, e);
}

int scenario_load(struct scenario *s, const char *name_or_path, struct err *e)
{
	return embedded_load(scenario_presets, "scenario", "scenario", name_or_path, parse_scenario, s, e);
}

const struct embedded_file *scenario_preset_table(void)
{
	return scenario_presets;
}
