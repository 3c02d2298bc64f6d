#include "sim/props.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "sim/cost.h"
#include "sim/opspec.h"
#include "sim/scenario.h"
#include "sim/sim.h"

const char *sim_props_kind_name(enum sim_props_kind k)
{
	static const char *const names[] = {"invalid", "below floor", "faster when larger", "TPOT fell with batch",
					    "faster with context"};
	return (unsigned)k < SIM_PROPS_KIND_COUNT ? names[k] : "?";
}

/* splitmix64: small, seedable, the same draws everywhere */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
	return (double)(next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* log-uniform integer in [lo, hi] */
static int64_t logu(uint64_t *s, int64_t lo, int64_t hi)
{
	double x = exp(log((double)lo) + uniform(s) * (log((double)hi) - log((double)lo)));
	int64_t v = (int64_t)llround(x);
	return v < lo ? lo : v > hi ? hi : v;
}

static const char *pick(uint64_t *s, const char *const *v, int n)
{
	return v[next(s) % (uint64_t)n];
}

/* One key of a drawn op: its value and whether growing it must not make the op faster. */
struct arg {
	char key[16];
	char val[24];
	bool grows; /* a size: checked for growth */
	int64_t max; /* growth stays at most this */
};

struct draw {
	const char *kind;
	struct arg a[12];
	int n;
};

static void add_int(struct draw *d, const char *key, int64_t v, int64_t max)
{
	struct arg *a = &d->a[d->n++];
	snprintf(a->key, sizeof a->key, "%s", key);
	snprintf(a->val, sizeof a->val, "%lld", (long long)v);
	a->grows = true;
	a->max = max;
}

static void add_str(struct draw *d, const char *key, const char *v)
{
	struct arg *a = &d->a[d->n++];
	snprintf(a->key, sizeof a->key, "%s", key);
	snprintf(a->val, sizeof a->val, "%s", v);
	a->grows = false;
}

static const char *const gemm_dt[] = {"bf16", "fp8"};
static const char *const state_dt[] = {"fp32", "bf16"};
static const char *const kv_dt[] = {"bf16", "fp8"};

/* A random op of a random kind, with sizes over the ranges serving K3-class models reach; own:
 * of the kinds added for AttnRes, routing, the combine, the ShortConv and the quantizer (drawn from a stream of
 * their own, so that adding kinds leaves every other kind's draws as they were). */
static void draw_op(uint64_t *s, struct draw *d, bool own)
{
	static const char *const kinds[] = {"gemm", "gemm", "gemm", "grouped_gemm", "kda_chunk", "kda_decode",
		"mla_prefill", "mla_decode", "dsa_decode", "allreduce", "allgather", "reducescatter", "alltoall",
		"ep_dispatch", "ep_combine", "copy", "elementwise"};
	static const char *const own_kinds[] = {"attnres", "route", "combine", "short_conv", "quant"};
	memset(d, 0, sizeof *d);
	d->kind = own ? pick(s, own_kinds, (int)(sizeof own_kinds / sizeof *own_kinds))
		      : pick(s, kinds, (int)(sizeof kinds / sizeof *kinds));
	const int64_t G = 1 << 30;
	if (strcmp(d->kind, "gemm") == 0) {
		add_int(d, "m", logu(s, 1, 65536), 262144);
		add_int(d, "n", logu(s, 1, 65536), 262144);
		add_int(d, "k", logu(s, 1, 65536), 262144);
		add_str(d, "dtype", pick(s, gemm_dt, 2));
	} else if (strcmp(d->kind, "grouped_gemm") == 0) {
		int64_t groups = logu(s, 1, 1024);
		add_int(d, "m", logu(s, 1, 262144), 1 << 20);
		add_int(d, "n", logu(s, 16, 8192), 65536);
		add_int(d, "k", logu(s, 16, 8192), 65536);
		add_int(d, "groups", groups, 4096);
		static const char *const dt[] = {"bf16", "fp8", "mxfp8"};
		add_str(d, "dtype", pick(s, dt, 3));
		if (next(s) % 2)
			add_str(d, "w_dtype", "mxfp4");
	} else if (strcmp(d->kind, "kda_chunk") == 0) {
		add_int(d, "b", logu(s, 1, 64), 256);
		add_int(d, "t", logu(s, 16, 1 << 18), 1 << 20);
		add_int(d, "h", logu(s, 1, 192), 768);
		add_str(d, "state", pick(s, state_dt, 2));
		if (next(s) % 2)
			add_int(d, "ctx", logu(s, 1, 1 << 20), 1 << 22);
	} else if (strcmp(d->kind, "kda_decode") == 0) {
		add_int(d, "b", logu(s, 1, 1024), 8192);
		add_int(d, "h", logu(s, 1, 192), 768);
		add_str(d, "state", pick(s, state_dt, 2));
		add_int(d, "t", logu(s, 1, 16), 64);
	} else if (strcmp(d->kind, "mla_prefill") == 0) {
		add_int(d, "b", logu(s, 1, 16), 64);
		add_int(d, "t", logu(s, 1, 65536), 1 << 18);
		add_int(d, "ctx", logu(s, 1, 1 << 20), 1 << 22);
		add_int(d, "heads", logu(s, 1, 128), 512);
		add_str(d, "kv", pick(s, kv_dt, 2));
	} else if (strcmp(d->kind, "mla_decode") == 0 || strcmp(d->kind, "dsa_decode") == 0) {
		add_int(d, "b", logu(s, 1, 1024), 8192);
		add_int(d, "heads", logu(s, 1, 128), 512);
		add_int(d, "ctx", logu(s, 1, 1 << 20), 1 << 22);
		add_str(d, "kv", pick(s, kv_dt, 2));
		if (d->kind[0] == 'm')
			add_int(d, "t", logu(s, 1, 256), 4096); /* across SIM_ATTN_PREFILL_T */
		else
			add_int(d, "topk", logu(s, 256, 4096), 16384);
	} else if (strcmp(d->kind, "ep_dispatch") == 0 || strcmp(d->kind, "ep_combine") == 0) {
		add_int(d, "tokens", logu(s, 1, 65536), 1 << 18);
		add_int(d, "ranks", logu(s, 2, 128), 1024);
		add_int(d, "top_k", logu(s, 1, 16), 64);
		add_int(d, "width", logu(s, 512, 8192), 32768);
	} else if (strcmp(d->kind, "copy") == 0) {
		add_int(d, "bytes", logu(s, 1, 16 * G), 64 * G);
	} else if (strcmp(d->kind, "elementwise") == 0) {
		add_int(d, "m", logu(s, 1, 1 << 20), 1 << 22);
		add_int(d, "n", logu(s, 1, 65536), 262144);
		add_int(d, "in", logu(s, 1, 4), 16);
		add_str(d, "dtype", pick(s, gemm_dt, 1));
	} else if (strcmp(d->kind, "attnres") == 0) {
		add_int(d, "tokens", logu(s, 1, 1 << 18), 1 << 20);
		add_int(d, "dim", logu(s, 8, 16384), 65536);
		add_int(d, "sources", logu(s, 1, 32), 128);
		add_int(d, "delta", (int64_t)(next(s) % 2), 1);
	} else if (strcmp(d->kind, "route") == 0) {
		int64_t experts = logu(s, 1, 1024);
		add_int(d, "tokens", logu(s, 1, 1 << 18), 1 << 20);
		add_int(d, "experts", experts, 4096);
		/* never past the experts */
		add_int(d, "top_k", logu(s, 1, experts < 32 ? experts : 32), experts);
	} else if (strcmp(d->kind, "combine") == 0) {
		add_int(d, "tokens", logu(s, 1, 1 << 18), 1 << 20);
		add_int(d, "width", logu(s, 64, 16384), 65536);
		add_int(d, "top_k", logu(s, 1, 32), 128);
	} else if (strcmp(d->kind, "short_conv") == 0) {
		add_int(d, "tokens", logu(s, 1, 1 << 18), 1 << 20);
		add_int(d, "channels", logu(s, 8, 65536), 262144);
		add_int(d, "taps", logu(s, 1, 8), 16);
	} else if (strcmp(d->kind, "quant") == 0) {
		static const char *const qdt[] = {"fp8", "fp8", "mxfp8"};
		static const char *const group[] = {"0", "128"};
		add_int(d, "tokens", logu(s, 1, 1 << 18), 1 << 20);
		add_int(d, "width", logu(s, 128, 65536), 262144);
		const char *dt = pick(s, qdt, 3);
		add_str(d, "dtype", dt);
		if (strcmp(dt, "fp8") == 0)
			add_str(d, "group", pick(s, group, 2));
	} else { /* collectives */
		add_int(d, "bytes", logu(s, 1, 4 * G), 16 * G);
		add_int(d, "ranks", logu(s, 2, 128), 1024);
	}
}

static bool is_boost(const struct hw_clock_sel *c)
{
	return !(c->given_hz > 0) && c->regime == HW_CLOCK_BOOST;
}

static void format_cmd(const struct draw *d, const struct sim_props_opts *o, char *out, size_t n)
{
	int off = snprintf(out, n, "k3sim op %s", d->kind);
	for (int i = 0; i < d->n && off > 0 && (size_t)off < n; i++)
		off += snprintf(out + off, n - (size_t)off, " %s=%s", d->a[i].key, d->a[i].val);
	if (off > 0 && (size_t)off < n)
		off += snprintf(out + off, n - (size_t)off, " --hw %s", o->hw_name ? o->hw_name : "?");
	char arg[32];
	if (!is_boost(&o->clock) && off > 0 && (size_t)off < n)
		snprintf(out + off, n - (size_t)off, " --clock %s", hw_clock_sel_arg(&o->clock, arg, sizeof arg));
}

static int cost_of(const struct hw *hw, const struct draw *d, const struct cost_opts *co, struct op_cost *c,
		   struct err *e)
{
	char buf[12][48];
	const char *args[12];
	for (int i = 0; i < d->n; i++) {
		snprintf(buf[i], sizeof buf[i], "%s=%s", d->a[i].key, d->a[i].val);
		args[i] = buf[i];
	}
	struct op op;
	int rc = opspec_parse(d->kind, d->n, args, &op, e);
	if (rc < 0)
		return rc;
	sim_op_cost(hw, &op, co, c);
	return 0;
}

static void keep(struct sim_props_report *r, const struct sim_props_violation *v)
{
	r->count[v->kind]++;
	r->violations++;
	/* each kind keeps up to its share of the slots first */
	int of_kind = 0;
	for (int i = 0; i < r->n; i++)
		of_kind += r->v[i].kind == v->kind;
	if (r->n < SIM_PROPS_KEEP && of_kind < SIM_PROPS_KEEP / 4)
		r->v[r->n++] = *v;
}

/* One drawn op: valid, never below its floor, never faster when a size grows (drawn from s). */
static int check_draw(const struct hw *hw, const struct sim_props_opts *o, uint64_t *s, const struct draw *d,
		      const struct cost_opts *co, struct sim_props_report *r, struct err *e)
{
	struct op_cost c;
	int rc = cost_of(hw, d, co, &c, e);
	if (rc == -EINVAL)
		return 0; /* a draw the op rejects (a size combination out of its domain) */
	if (rc < 0)
		return rc;
	r->ops_checked++;
	struct sim_props_violation v = {.before_s = c.time_s, .after_s = c.floor_s};
	snprintf(v.what, sizeof v.what, "time_s");
	if (!isfinite(c.time_s) || !(c.time_s > 0)) {
		v.kind = SIM_PROPS_INVALID;
		format_cmd(d, o, v.before, sizeof v.before);
		keep(r, &v);
		return 0;
	}
	if (c.time_s < c.floor_s * (1 - 1e-9)) {
		v.kind = SIM_PROPS_FLOOR;
		format_cmd(d, o, v.before, sizeof v.before);
		keep(r, &v);
	}
	/* grow one size by 1 % to 4x */
	int sizes[12], ns = 0;
	for (int j = 0; j < d->n; j++)
		if (d->a[j].grows)
			sizes[ns++] = j;
	if (!ns)
		return 0;
	struct draw g = *d;
	struct arg *a = &g.a[sizes[next(s) % (uint64_t)ns]];
	int64_t x = strtoll(a->val, NULL, 10);
	double f = next(s) % 3 == 0 ? 1.0 + 0.1 * uniform(s) : exp(uniform(s) * log(4.0));
	int64_t y = (int64_t)ceil((double)x * f);
	if (y <= x)
		y = x + 1;
	if (y > a->max)
		return 0;
	snprintf(a->val, sizeof a->val, "%lld", (long long)y);
	struct op_cost cg;
	rc = cost_of(hw, &g, co, &cg, e);
	if (rc == -EINVAL)
		return 0;
	if (rc < 0)
		return rc;
	double fall = 1 - cg.time_s / c.time_s;
	if (fall > r->worst_fall)
		r->worst_fall = fall;
	if (!(cg.time_s >= c.time_s * (1 - o->tolerance))) {
		v.kind = SIM_PROPS_OP_GROWTH;
		v.before_s = c.time_s;
		v.after_s = cg.time_s;
		format_cmd(d, o, v.before, sizeof v.before);
		format_cmd(&g, o, v.after, sizeof v.after);
		keep(r, &v);
	}
	return 0;
}

/* o->ops draws of the first kinds from s, and beside every fourth one a draw of the op kinds of
 * their own (AttnRes, routing, combine, ShortConv, quantizer) from a stream of their own. */
static int check_ops(const struct hw *hw, const struct sim_props_opts *o, uint64_t *s,
		     struct sim_props_report *r, struct err *e)
{
	struct cost_opts co = {.clock = o->clock}, co_own = co;
	uint64_t own = o->seed ^ UINT64_C(0x6f776e6b696e6473); /* "ownkinds" */
	for (int64_t i = 0; i < o->ops; i++) {
		struct draw d;
		draw_op(s, &d, false);
		if (next(s) % 4 == 0)
			co.cuda_graph = !co.cuda_graph;
		int rc = check_draw(hw, o, s, &d, &co, r, e);
		if (rc == 0 && i % 4 == 0) {
			draw_op(&own, &d, true);
			if (next(&own) % 4 == 0)
				co_own.cuda_graph = !co_own.cuda_graph;
			rc = check_draw(hw, o, &own, &d, &co_own, r, e);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The reproducing `k3sim run` line of a scenario preset with overrides. */
static void run_cmd(const char *name, const struct scenario *s, const struct sim_props_opts *o, char *out,
		    size_t n)
{
	char arg[32];
	snprintf(out, n, "k3sim run %s --hw %s --batch %lld --prompt %lld --output %lld%s%s", name,
		 o->hw_name ? o->hw_name : "?", (long long)s->batch, (long long)s->prompt_tokens,
		 (long long)s->output_tokens, is_boost(&o->clock) ? "" : " --clock ",
		 is_boost(&o->clock) ? "" : hw_clock_sel_arg(&o->clock, arg, sizeof arg));
}

static int check_scenarios(const struct hw *hw, const struct sim_props_opts *o, uint64_t *s,
			   struct sim_props_report *r, struct err *e)
{
	const char *const *names = scenario_preset_names();
	int n_names = 0;
	while (names[n_names])
		n_names++;
	if (n_names == 0 || o->scenarios <= 0)
		return 0;
	struct sim_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	struct model *m = malloc(sizeof *m);
	int rc = 0;
	if (!a || !b || !m) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	char loaded_model[256] = "";
	for (int64_t i = 0; i < o->scenarios; i++) {
		const char *name = names[next(s) % (uint64_t)n_names];
		struct scenario sc;
		if ((rc = scenario_load(&sc, name, e)) < 0)
			goto out;
		if (strcmp(loaded_model, sc.model) != 0) {
			if ((rc = model_load(m, sc.model, e)) < 0)
				goto out;
			snprintf(loaded_model, sizeof loaded_model, "%s", sc.model);
		}
		sc.clock = o->clock;
		sc.clock_line = sc.clock_col = 0;
		sc.batch = logu(s, 1, 1024);
		sc.prompt_tokens = logu(s, 128, 1 << 20);
		sc.output_tokens = logu(s, 1, 16384);
		if (sc.prefill_chunk > sc.prompt_tokens)
			sc.prefill_chunk = sc.prompt_tokens;
		struct scenario g = sc;
		int axis = (int)(next(s) % 3);
		int64_t *v = axis == 0 ? &g.batch : axis == 1 ? &g.prompt_tokens : &g.output_tokens;
		int64_t grown = (int64_t)ceil((double)*v * exp(uniform(s) * log(4.0)));
		*v = grown > *v ? grown : *v + 1;
		if (sim_check(&sc, m, hw, e) < 0 || sim_check(&g, m, hw, e) < 0)
			continue; /* a layout this draw cannot take */
		if (sim_run(&sc, m, hw, a, e) < 0 || sim_run(&g, m, hw, b, e) < 0)
			continue;
		r->scenarios_checked++;
		struct sim_props_violation vio = {0};
		const char *what = NULL;
		double before = 0, after = 0;
		if (!(b->tpot_s >= a->tpot_s * (1 - o->tolerance))) {
			what = "tpot_s";
			before = a->tpot_s;
			after = b->tpot_s;
		} else if (axis == 1 && !(b->ttft_s >= a->ttft_s * (1 - o->tolerance))) {
			what = "ttft_s";
			before = a->ttft_s;
			after = b->ttft_s;
		}
		if (!what)
			continue;
		vio.kind = axis == 0 ? SIM_PROPS_STEP_BATCH : SIM_PROPS_STEP_CONTEXT;
		vio.before_s = before;
		vio.after_s = after;
		snprintf(vio.what, sizeof vio.what, "%s", what);
		run_cmd(name, &sc, o, vio.before, sizeof vio.before);
		run_cmd(name, &g, o, vio.after, sizeof vio.after);
		keep(r, &vio);
	}
	rc = 0;
out:
	free(a);
	free(b);
	free(m);
	return rc;
}

int sim_props_check(const struct hw *hw, const struct sim_props_opts *o, struct sim_props_report *r,
		    struct err *e)
{
	memset(r, 0, sizeof *r);
	uint64_t s = o->seed;
	int rc = check_ops(hw, o, &s, r, e);
	if (rc == 0)
		rc = check_scenarios(hw, o, &s, r, e);
	return rc;
}
