/* The scenario's serve: section (scenarios/README.md, section serve). */
#include "serve/serve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/doc.h"
#include "util/embed.h"

static const char *const arrival_names[SERVE_ARRIVAL_COUNT] = {"poisson", "gamma", "burst", "trace"};
static const char *const ckpt_names[SERVE_CKPT_COUNT] = {"none", "turns", "every", "every_n"};
static const char *const dist_names[SERVE_DIST_COUNT] = {"fixed", "uniform", "exponential", "lognormal"};
static const char *const state_names[SERVE_ST_COUNT] = {"pending", "queued", "prefetch", "prefill",
							"transfer", "decode_queued", "decode", "done"};

const char *serve_arrival_name(enum serve_arrival a)
{
	return (unsigned)a < SERVE_ARRIVAL_COUNT ? arrival_names[a] : "?";
}

const char *serve_ckpt_name(enum serve_ckpt c)
{
	return (unsigned)c < SERVE_CKPT_COUNT ? ckpt_names[c] : "?";
}

const char *serve_state_name(enum serve_state s)
{
	return (unsigned)s < SERVE_ST_COUNT ? state_names[s] : "?";
}

void serve_config_defaults(struct serve_config *c)
{
	memset(c, 0, sizeof *c);
	c->seed = 1;
	c->duration_s = 60;
	c->arrival = SERVE_ARRIVAL_POISSON;
	c->rate_per_s = 1;
	c->cv = 1;
	c->time_scale = 1;
	c->prompt = (struct serve_length){.dist = SERVE_DIST_FIXED, .mean = 2048, .min = 1, .max = INT64_C(1) << 30};
	c->output = (struct serve_length){.dist = SERVE_DIST_FIXED, .mean = 256, .min = 1, .max = INT64_C(1) << 30};
	c->turns = 1;
	c->turn_tokens = (struct serve_length){.dist = SERVE_DIST_FIXED, .mean = 256, .min = 1, .max = INT64_C(1) << 30};
	c->think_s = 0;
	c->system_prompts = 1;
	c->images = 1;
	c->image_px = 1024;
	c->video_frames = 16;
	c->video_px = 448;
	c->max_running = 256;
	c->token_budget = 8192;
	c->chunk_tokens = 8192;
	c->mixed = true;
	c->kv_watermark = 0.95;
	c->replicas = 1;
	c->prefix_cache = true;
	c->hash_tokens = 512;
	c->ckpt = SERVE_CKPT_TURNS;
	c->ckpt_every_tokens = 4096;
	/* PCIe 5.0 x16: 64 GB/s raw per direction, ~55 GB/s reached by pinned copies (H100/H200
	 * HGX); Grace's NVLink-C2C is 450 GB/s per direction (GH200, GB200). */
	c->host_link_bytes_per_s = 55e9;
	c->draft = SERVE_DRAFT_MTP;
	c->pd_link = SERVE_LINK_NIC;
	c->slo_ttft_s = 2.0;
	c->slo_tpot_s = 0.1;
	c->sample_s = 1.0;
}

/* A length: a number (fixed) or {dist, mean, cv, min, max}. */
static int length_field(struct doc_reader *c, const struct doc_node *map, const char *key,
			struct serve_length *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return 0;
	const int64_t big = INT64_C(1) << 30;
	struct serve_length l = *out;
	int rc;
	if (v->kind == DOC_SCALAR) {
		int64_t x;
		if ((rc = doc_i64(c->d, v, key, &x, c->e)) < 0)
			return rc;
		if (x < 1 || x > big)
			return doc_error(c->d, v, c->e, "%s: %lld is out of range [1, %lld]", key, (long long)x,
					 (long long)big);
		*out = (struct serve_length){.dist = SERVE_DIST_FIXED, .mean = (double)x, .min = 1, .max = big};
		return 0;
	}
	static const char *const keys[] = {"dist", "mean", "cv", "min", "max", NULL};
	if ((rc = doc_expect(c->d, v, DOC_MAP, key, c->e)) < 0 || (rc = doc_check_keys(c->d, v, keys, c->e)) < 0)
		return rc;
	int dist = (int)l.dist;
	l.min = 1;
	l.max = big;
	l.cv = 1;
	if ((rc = doc_field_enum(c, v, "dist", dist_names, SERVE_DIST_COUNT, &dist)) < 0 ||
	    (rc = doc_field_double(c, v, "mean", 1, (double)big, &l.mean)) < 0 ||
	    (rc = doc_field_double(c, v, "cv", 0, 100, &l.cv)) < 0 ||
	    (rc = doc_field_i64(c, v, "min", 1, big, &l.min)) < 0 ||
	    (rc = doc_field_i64(c, v, "max", 1, big, &l.max)) < 0)
		return rc;
	l.dist = (enum serve_dist)dist;
	if (l.min > l.max)
		return doc_error(c->d, v, c->e, "%s: min %lld is above max %lld", key, (long long)l.min, (long long)l.max);
	if (l.dist == SERVE_DIST_UNIFORM && !doc_get(v, "mean"))
		l.mean = 0.5 * (double)(l.min + l.max);
	if (l.dist != SERVE_DIST_UNIFORM && !doc_get(v, "mean"))
		return doc_error(c->d, v, c->e, "%s: %s needs a mean", key, dist_names[l.dist]);
	*out = l;
	return 0;
}

static int layout_field(struct doc_reader *c, const struct doc_node *map, const char *key,
			const struct scenario *s, struct serve_layout *out)
{
	static const char *const keys[] = {"replicas", "gpus", "tp", "dp", "ep", NULL};
	const struct doc_node *n;
	int rc = doc_section(c, map, key, keys, &n);
	if (rc < 0)
		return rc;
	struct serve_layout l = {.replicas = 1, .gpus = s->gpus, .tp = s->tp, .dp = s->dp, .ep = s->ep};
	if (n) {
		bool dp_given = doc_get(n, "dp") != NULL, ep_given = doc_get(n, "ep") != NULL;
		if ((rc = doc_field_i64(c, n, "replicas", 1, 4096, &l.replicas)) < 0 ||
		    (rc = doc_field_i64(c, n, "gpus", 1, SERVE_MAX_GPUS_POOL, &l.gpus)) < 0 ||
		    (rc = doc_field_i64(c, n, "tp", 1, 1024, &l.tp)) < 0 ||
		    (rc = doc_field_i64(c, n, "dp", 1, 4096, &l.dp)) < 0 ||
		    (rc = doc_field_i64(c, n, "ep", 1, 4096, &l.ep)) < 0)
			return rc;
		if (!dp_given)
			l.dp = l.gpus / l.tp > 0 ? l.gpus / l.tp : 1;
		if (!ep_given)
			l.ep = l.gpus;
		if (l.tp * l.dp != l.gpus)
			return doc_error(c->d, n, c->e, "%s: tp x dp = %lld x %lld = %lld, but gpus is %lld", key,
					 (long long)l.tp, (long long)l.dp, (long long)(l.tp * l.dp), (long long)l.gpus);
		if (l.gpus % l.ep != 0)
			return doc_error(c->d, n, c->e, "%s: ep %lld must divide gpus %lld", key, (long long)l.ep,
					 (long long)l.gpus);
	}
	*out = l;
	return 0;
}

/* Per-position acceptance giving `mean` tokens per step (bonus included) with k drafts at one
 * constant p: 1 + p + ... + p^k = mean. */
static double constant_acceptance(double mean, int64_t k)
{
	double lo = 0, hi = 1;
	for (int it = 0; it < 60; it++) {
		double p = 0.5 * (lo + hi), sum = 1, pk = 1;
		for (int64_t i = 0; i < k; i++) {
			pk *= p;
			sum += pk;
		}
		if (sum < mean)
			lo = p;
		else
			hi = p;
	}
	return 0.5 * (lo + hi);
}

static int load_serve(struct doc_reader *c, const struct doc_node *n, const struct scenario *s,
		      struct serve_config *o)
{
	static const char *const top[] = {"seed", "duration_s", "max_requests", "arrivals", "requests", "scheduler",
		"cache", "spec", "pd", "slo", "sample_s", NULL};
	static const char *const arr_keys[] = {"process", "rate_per_s", "cv", "trace", "format", "time_scale", NULL};
	static const char *const req_keys[] = {"prompt_tokens", "output_tokens", "system_tokens", "system_prompts",
		"turns", "turn_tokens", "think_s", "images", "video", NULL};
	static const char *const img_keys[] = {"fraction", "count", "px", NULL};
	static const char *const vid_keys[] = {"fraction", "frames", "px", NULL};
	static const char *const sch_keys[] = {"max_running", "token_budget", "chunk_tokens", "mixed", "kv_watermark",
		"replicas", "admission", "mem_fraction_static", NULL};
	static const char *const cache_keys[] = {"prefix", "hash_tokens", "page_tokens", "kda_groups", "checkpoints",
		"cpu_gib", "host_link_gb_per_s", NULL};
	static const char *const spec_keys[] = {"draft", "model", "acceptance", NULL};
	static const char *const pd_keys[] = {"prefill", "decode", "link", NULL};
	static const char *const slo_keys[] = {"ttft_s", "tpot_s", NULL};
	static const char *const formats[] = {"auto", "jsonl", "csv"};
	static const char *const drafts[] = {"mtp", "model"};
	static const char *const links[] = {"nic", "nvlink"};
	const int64_t big = INT64_C(1) << 30;
	int rc;
	if ((rc = doc_expect(c->d, n, DOC_MAP, "serve", c->e)) < 0 || (rc = doc_check_keys(c->d, n, top, c->e)) < 0)
		return rc;
	int64_t seed = (int64_t)o->seed;
	if ((rc = doc_field_i64(c, n, "seed", 0, INT64_MAX, &seed)) < 0 ||
	    (rc = doc_field_double(c, n, "duration_s", 1e-6, 1e7, &o->duration_s)) < 0 ||
	    (rc = doc_field_i64(c, n, "max_requests", 0, SERVE_MAX_REQUESTS, &o->max_requests)) < 0 ||
	    (rc = doc_field_double(c, n, "sample_s", 1e-3, 1e6, &o->sample_s)) < 0)
		return rc;
	o->seed = (uint64_t)seed;

	const struct doc_node *a;
	if ((rc = doc_section(c, n, "arrivals", arr_keys, &a)) < 0)
		return rc;
	if (a) {
		int proc = (int)o->arrival, fmt = (int)o->trace_format;
		if ((rc = doc_field_enum(c, a, "process", arrival_names, SERVE_ARRIVAL_COUNT, &proc)) < 0 ||
		    (rc = doc_field_double(c, a, "rate_per_s", 1e-9, 1e9, &o->rate_per_s)) < 0 ||
		    (rc = doc_field_double(c, a, "cv", 1e-3, 100, &o->cv)) < 0 ||
		    (rc = doc_field_enum(c, a, "format", formats, 3, &fmt)) < 0 ||
		    (rc = doc_field_double(c, a, "time_scale", 1e-9, 1e9, &o->time_scale)) < 0)
			return rc;
		o->arrival = (enum serve_arrival)proc;
		o->trace_format = (enum serve_trace_format)fmt;
		const struct doc_node *t = doc_get(a, "trace");
		if (t) {
			const char *str;
			if ((rc = doc_str(c->d, t, "trace", &str, c->e)) < 0)
				return rc;
			if (strlen(str) >= sizeof o->trace - 1 || !str[0])
				return doc_error(c->d, t, c->e, "trace: a path of 1 to %zu characters",
						 sizeof o->trace - 2);
			snprintf(o->trace, sizeof o->trace, "%s", str);
			if (!doc_get(a, "process"))
				o->arrival = SERVE_ARRIVAL_TRACE;
		}
		if (o->arrival == SERVE_ARRIVAL_TRACE && !o->trace[0])
			return doc_error(c->d, a, c->e, "process: trace needs a trace file (arrivals.trace)");
		if (o->arrival == SERVE_ARRIVAL_GAMMA && !doc_get(a, "cv"))
			return doc_error(c->d, a, c->e, "process: gamma needs cv (the gaps' coefficient of variation)");
	}

	const struct doc_node *r;
	if ((rc = doc_section(c, n, "requests", req_keys, &r)) < 0)
		return rc;
	if (r) {
		if ((rc = length_field(c, r, "prompt_tokens", &o->prompt)) < 0 ||
		    (rc = length_field(c, r, "output_tokens", &o->output)) < 0 ||
		    (rc = length_field(c, r, "turn_tokens", &o->turn_tokens)) < 0 ||
		    (rc = doc_field_i64(c, r, "system_tokens", 0, big, &o->system_tokens)) < 0 ||
		    (rc = doc_field_i64(c, r, "system_prompts", 1, 1 << 20, &o->system_prompts)) < 0 ||
		    (rc = doc_field_i64(c, r, "turns", 1, 1 << 16, &o->turns)) < 0 ||
		    (rc = doc_field_double(c, r, "think_s", 0, 1e6, &o->think_s)) < 0)
			return rc;
		const struct doc_node *im;
		if ((rc = doc_section(c, r, "images", img_keys, &im)) < 0)
			return rc;
		if (im && ((rc = doc_field_double(c, im, "fraction", 0, 1, &o->image_fraction)) < 0 ||
			   (rc = doc_field_i64(c, im, "count", 1, 64, &o->images)) < 0 ||
			   (rc = doc_field_i64(c, im, "px", 14, 3584, &o->image_px)) < 0))
			return rc;
		const struct doc_node *vd;
		if ((rc = doc_section(c, r, "video", vid_keys, &vd)) < 0)
			return rc;
		if (vd && ((rc = doc_field_double(c, vd, "fraction", 0, 1, &o->video_fraction)) < 0 ||
			   (rc = doc_field_i64(c, vd, "frames", 1, 4096, &o->video_frames)) < 0 ||
			   (rc = doc_field_i64(c, vd, "px", 14, 3584, &o->video_px)) < 0))
			return rc;
	}

	const struct doc_node *sc;
	if ((rc = doc_section(c, n, "scheduler", sch_keys, &sc)) < 0)
		return rc;
	if (sc && ((rc = doc_field_i64(c, sc, "max_running", 1, 1 << 20, &o->max_running)) < 0 ||
		   (rc = doc_field_i64(c, sc, "token_budget", 1, 1 << 24, &o->token_budget)) < 0 ||
		   (rc = doc_field_i64(c, sc, "chunk_tokens", 1, 1 << 24, &o->chunk_tokens)) < 0 ||
		   (rc = doc_field_bool(c, sc, "mixed", &o->mixed)) < 0 ||
		   (rc = doc_field_double(c, sc, "kv_watermark", 0.01, 1, &o->kv_watermark)) < 0 ||
		   (rc = doc_field_i64(c, sc, "replicas", 1, 4096, &o->replicas)) < 0 ||
		   (rc = doc_field_double(c, sc, "mem_fraction_static", 0.01, 1,
					   &o->mem_fraction_static)) < 0))
		return rc;
	if (sc) {
		static const char *const admissions[] = {"watermark", "sglang"};
		int adm = o->admit_sglang;
		if ((rc = doc_field_enum(c, sc, "admission", admissions, 2, &adm)) < 0)
			return rc;
		o->admit_sglang = adm == 1;
	}
	if (sc && !doc_get(sc, "chunk_tokens"))
		o->chunk_tokens = o->token_budget;

	const struct doc_node *ca;
	if ((rc = doc_section(c, n, "cache", cache_keys, &ca)) < 0)
		return rc;
	if (ca) {
		double cpu_gib = 0, link = o->host_link_bytes_per_s / 1e9;
		if ((rc = doc_field_bool(c, ca, "prefix", &o->prefix_cache)) < 0 ||
		    (rc = doc_field_i64(c, ca, "hash_tokens", 16, 1 << 20, &o->hash_tokens)) < 0 ||
		    (rc = doc_field_i64(c, ca, "page_tokens", 0, 1 << 24, &o->page_tokens)) < 0 ||
		    (rc = doc_field_i64(c, ca, "kda_groups", 0, SERVE_MAX_KDA_GROUPS, &o->kda_groups)) < 0 ||
		    (rc = doc_field_double(c, ca, "cpu_gib", 0, 1 << 20, &cpu_gib)) < 0 ||
		    (rc = doc_field_double(c, ca, "host_link_gb_per_s", 0.001, 1e5, &link)) < 0)
			return rc;
		o->cpu_bytes = (int64_t)(cpu_gib * 1073741824.0);
		o->host_link_bytes_per_s = link * 1e9;
		const struct doc_node *ck = doc_get(ca, "checkpoints");
		if (ck) {
			/* none | turns | every, or a token count: every N tokens */
			int64_t every;
			if (ck->kind == DOC_SCALAR && ck->plain && doc_parse_i64(ck->str, &every) == 0) {
				if (every < o->hash_tokens || every % o->hash_tokens != 0)
					return doc_error(c->d, ck, c->e,
							 "checkpoints: every %lld tokens must be a multiple of hash_tokens "
							 "(%lld)",
							 (long long)every, (long long)o->hash_tokens);
				o->ckpt = SERVE_CKPT_EVERY_N;
				o->ckpt_every_tokens = every;
			} else {
				static const char *const ck_names[] = {"none", "turns", "every"};
				int v = 0;
				if ((rc = doc_field_enum(c, ca, "checkpoints", ck_names, 3, &v)) < 0)
					return rc;
				o->ckpt = (enum serve_ckpt)v;
			}
		}
		const struct doc_node *pt = doc_get(ca, "page_tokens");
		if (o->page_tokens && o->page_tokens % o->hash_tokens != 0)
			return doc_error(c->d, pt, c->e, "page_tokens: %lld is not a multiple of hash_tokens (%lld)",
					 (long long)o->page_tokens, (long long)o->hash_tokens);
		if (o->page_tokens / o->hash_tokens > SERVE_MAX_PAGE_ENDPOINTS)
			return doc_error(c->d, pt, c->e, "page_tokens: at most %d hash endpoints per page",
					 SERVE_MAX_PAGE_ENDPOINTS);
	}

	const struct doc_node *sp;
	if ((rc = doc_section(c, n, "spec", spec_keys, &sp)) < 0)
		return rc;
	int64_t k = s->mtp_draft_tokens;
	if (k > 0) {
		double p = constant_acceptance(s->mtp_acceptance, k);
		o->accept[0] = p;
		o->n_accept = 1;
	}
	if (sp) {
		int dr = (int)o->draft;
		if ((rc = doc_field_enum(c, sp, "draft", drafts, 2, &dr)) < 0)
			return rc;
		o->draft = (enum serve_draft)dr;
		const struct doc_node *mv = doc_get(sp, "model");
		if (mv) {
			const char *str;
			if ((rc = doc_str(c->d, mv, "model", &str, c->e)) < 0)
				return rc;
			if (strlen(str) >= sizeof o->draft_model)
				return doc_error(c->d, mv, c->e, "model: too long");
			snprintf(o->draft_model, sizeof o->draft_model, "%s", str);
			if (embedded_is_path(str))
				embedded_resolve_relative(o->draft_model, sizeof o->draft_model, s->file);
		}
		if (o->draft == SERVE_DRAFT_MODEL && !o->draft_model[0])
			return doc_error(c->d, sp, c->e, "draft: model needs spec.model (a model preset or path)");
		const struct doc_node *ac = doc_get(sp, "acceptance");
		if (ac) {
			if (k == 0)
				return doc_error(c->d, ac, c->e,
						 "acceptance: no draft tokens (set engine.mtp.draft_tokens)");
			if (ac->kind == DOC_SCALAR) {
				double p;
				if ((rc = doc_double(c->d, ac, "acceptance", &p, c->e)) < 0)
					return rc;
				if (!(p >= 0 && p <= 1))
					return doc_error(c->d, ac, c->e, "acceptance: %g is not a probability", p);
				o->accept[0] = p;
				o->n_accept = 1;
			} else {
				if ((rc = doc_expect(c->d, ac, DOC_SEQ, "acceptance", c->e)) < 0)
					return rc;
				if (ac->n == 0 || ac->n > SERVE_MAX_ACCEPT)
					return doc_error(c->d, ac, c->e, "acceptance: 1 to %d probabilities",
							 SERVE_MAX_ACCEPT);
				for (size_t i = 0; i < ac->n; i++) {
					double p;
					if ((rc = doc_double(c->d, ac->items[i], "acceptance", &p, c->e)) < 0)
						return rc;
					if (!(p >= 0 && p <= 1))
						return doc_error(c->d, ac->items[i], c->e,
								 "acceptance: %g is not a probability", p);
					o->accept[i] = p;
				}
				o->n_accept = (int)ac->n;
			}
		}
	}

	const struct doc_node *pd;
	if ((rc = doc_section(c, n, "pd", pd_keys, &pd)) < 0)
		return rc;
	if (pd) {
		o->pd = true;
		int link = (int)o->pd_link;
		if ((rc = layout_field(c, pd, "prefill", s, &o->prefill)) < 0 ||
		    (rc = layout_field(c, pd, "decode", s, &o->decode)) < 0 ||
		    (rc = doc_field_enum(c, pd, "link", links, 2, &link)) < 0)
			return rc;
		o->pd_link = (enum serve_link)link;
	}

	const struct doc_node *sl;
	if ((rc = doc_section(c, n, "slo", slo_keys, &sl)) < 0)
		return rc;
	if (sl && ((rc = doc_field_double(c, sl, "ttft_s", 1e-6, 1e6, &o->slo_ttft_s)) < 0 ||
		   (rc = doc_field_double(c, sl, "tpot_s", 1e-6, 1e6, &o->slo_tpot_s)) < 0))
		return rc;
	return 0;
}

int serve_config_load_yaml(struct serve_config *c, const struct scenario *s, const char *name, const char *text,
			   size_t len_bytes, struct err *e)
{
	struct serve_config tmp;
	serve_config_defaults(&tmp);
	/* Defaults from the scenario: its workload's lengths, its decode batch per DP group, the
	 * engine's prefill budget. */
	tmp.prompt.mean = (double)s->prompt_tokens;
	tmp.output.mean = (double)s->output_tokens;
	tmp.max_running = s->batch / s->dp > 0 ? s->batch / s->dp : 1;
	if (s->prefill_tokens)
		tmp.token_budget = tmp.chunk_tokens = s->prefill_tokens;
	if (s->mtp_draft_tokens > 0) {
		tmp.accept[0] = constant_acceptance(s->mtp_acceptance, s->mtp_draft_tokens);
		tmp.n_accept = 1;
	}
	struct doc d;
	int rc = doc_load_string(&d, name, text, len_bytes, e);
	if (rc < 0)
		return rc;
	struct doc_reader cx = {.d = &d, .e = e};
	const struct doc_node *n = d.root && d.root->kind == DOC_MAP ? doc_get(d.root, "serve") : NULL;
	if (n && (rc = load_serve(&cx, n, s, &tmp)) < 0)
		goto out;
	if (tmp.trace[0])
		embedded_resolve_relative(tmp.trace, sizeof tmp.trace, name);
	*c = tmp;
out:
	doc_release(&d);
	return rc;
}
