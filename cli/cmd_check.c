/* k3sim check [--hw PRESET|PATH]...: physical sanity of hardware presets on random ops and
 * scenarios (sim/props.h); every violation printed with the commands that reproduce it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "sim/props.h"
#include "util/doc.h"

enum { HW_ARGS_MAX = 32 };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim check [--hw NAME|PATH]... [--ops N] [--scenarios N] [--seed S]\n"
		"                   [--tolerance PCT] [--clock boost|sustained|power|MHZ] [--json] [--quiet]\n\n"
		"Checks that a hardware preset's predictions are physically sane, on seeded random draws:\n"
		"  - every op takes a finite, positive time, never below its floor (launch gaps + the\n"
		"    larger of its FLOPs at the peak rate and its bytes at the peak bandwidth);\n"
		"  - no op gets faster when one of its sizes grows (m, n, k, tokens, heads, context,\n"
		"    bytes, ranks, ...), within the tolerance;\n"
		"  - no scenario's TPOT falls when the batch, prompt or output grows, nor its TTFT when\n"
		"    the prompt grows (the embedded scenarios with random workloads).\n"
		"Each violation is printed with the command(s) that reproduce it. Exit status 1 when\n"
		"any is found, 0 when none.\n\n"
		"  --hw NAME|PATH   a preset or YAML to check; repeatable (default: every shipped preset)\n"
		"  --ops N          random ops per preset (default 100000)\n"
		"  --scenarios N    random scenario pairs per preset (default 2000)\n"
		"  --seed S         the draws' seed (default 1)\n"
		"  --tolerance PCT  allowed fall when a size grows, percent (default 5)\n"
		"  --clock R        SM clock of the ops and scenarios: boost (default), sustained, power\n"
		"                   (presets with the power-limit model), or a clock in MHz (1830,\n"
		"                   1830MHz; not above a preset's boost clock)\n"
		"  --json           machine-readable report\n"
		"  -q, --quiet      only the summary line per preset\n");
}

static int parse_count(const char *opt, const char *v, int64_t max, int64_t *out)
{
	int64_t x;
	if (!v || doc_parse_i64(v, &x) < 0 || x < 0 || x > max) {
		fprintf(stderr, "k3sim check: %s takes an integer in [0, %lld]\n", opt, (long long)max);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static void print_text(const char *name, const struct sim_props_report *r, double secs, bool quiet)
{
	printf("%s: %lld ops, %lld scenario pairs in %.2f s: %lld violation%s", name, (long long)r->ops_checked,
	       (long long)r->scenarios_checked, secs, (long long)r->violations, r->violations == 1 ? "" : "s");
	if (r->violations) {
		const char *sep = " (";
		for (int k = 0; k < SIM_PROPS_KIND_COUNT; k++)
			if (r->count[k]) {
				printf("%s%lld %s", sep, (long long)r->count[k], sim_props_kind_name((enum sim_props_kind)k));
				sep = ", ";
			}
		printf(")");
	}
	printf("; largest fall when a size grew %.2f %%\n", 100 * r->worst_fall);
	if (quiet)
		return;
	for (int i = 0; i < r->n; i++) {
		const struct sim_props_violation *v = &r->v[i];
		char a[32], b[32];
		if (v->kind == SIM_PROPS_FLOOR || v->kind == SIM_PROPS_INVALID) {
			printf("  %s: %s = %s, floor %s\n    %s\n", sim_props_kind_name(v->kind), v->what,
			       cli_time(v->before_s, a, sizeof a), cli_time(v->after_s, b, sizeof b), v->before);
		} else {
			printf("  %s: %s %s -> %s (%.1f %% less)\n    %s\n    %s\n", sim_props_kind_name(v->kind), v->what,
			       cli_time(v->before_s, a, sizeof a), cli_time(v->after_s, b, sizeof b),
			       100 * (1 - v->after_s / v->before_s), v->before, v->after);
		}
	}
	if (r->violations > r->n)
		printf("  ... %lld more\n", (long long)(r->violations - r->n));
}

static void print_json(struct jw *w, const char *name, const struct sim_props_report *r, double secs)
{
	jw_begin_object(w, NULL);
	jw_str(w, "hw", name);
	jw_i64(w, "ops", r->ops_checked);
	jw_i64(w, "scenarios", r->scenarios_checked);
	jw_f64(w, "seconds", secs);
	jw_i64(w, "violations", r->violations);
	jw_f64(w, "largest_fall", r->worst_fall);
	jw_begin_object(w, "by_kind");
	for (int k = 0; k < SIM_PROPS_KIND_COUNT; k++)
		jw_i64(w, sim_props_kind_name((enum sim_props_kind)k), r->count[k]);
	jw_end_object(w);
	jw_begin_array(w, "examples");
	for (int i = 0; i < r->n; i++) {
		const struct sim_props_violation *v = &r->v[i];
		jw_begin_object(w, NULL);
		jw_str(w, "kind", sim_props_kind_name(v->kind));
		jw_str(w, "what", v->what);
		jw_str(w, "command", v->before);
		if (v->after[0])
			jw_str(w, "grown_command", v->after);
		jw_f64(w, "before_s", v->before_s);
		jw_f64(w, v->kind == SIM_PROPS_FLOOR || v->kind == SIM_PROPS_INVALID ? "floor_s" : "after_s", v->after_s);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

int cmd_check(int argc, char **argv)
{
	const char *hws[HW_ARGS_MAX];
	int n_hw = 0;
	struct sim_props_opts o = {.seed = 1, .ops = 100000, .scenarios = 2000, .tolerance = 0.05};
	bool json = false, quiet = false;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int64_t x;
		if (cli_is_help(s)) {
			usage(stdout);
			return 0;
		} else if (strcmp(s, "--json") == 0) {
			json = true;
		} else if (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0) {
			quiet = true;
		} else if (strcmp(s, "--hw") == 0) {
			if (!v) {
				fprintf(stderr, "k3sim check: --hw needs a value\n");
				return 2;
			}
			if (n_hw == HW_ARGS_MAX) {
				fprintf(stderr, "k3sim check: at most %d --hw\n", HW_ARGS_MAX);
				return 2;
			}
			hws[n_hw++] = v;
			i++;
		} else if (strcmp(s, "--ops") == 0) {
			if (parse_count(s, v, INT64_C(1) << 40, &o.ops) < 0)
				return 2;
			i++;
		} else if (strcmp(s, "--scenarios") == 0) {
			if (parse_count(s, v, INT64_C(1) << 32, &o.scenarios) < 0)
				return 2;
			i++;
		} else if (strcmp(s, "--seed") == 0) {
			if (parse_count(s, v, INT64_MAX, &x) < 0)
				return 2;
			o.seed = (uint64_t)x;
			i++;
		} else if (strcmp(s, "--tolerance") == 0) {
			char *end = NULL;
			double pct = v ? strtod(v, &end) : -1;
			if (!v || end == v || *end || !(pct >= 0 && pct < 100)) {
				fprintf(stderr, "k3sim check: --tolerance takes a percentage in [0, 100)\n");
				return 2;
			}
			o.tolerance = pct / 100;
			i++;
		} else if (strcmp(s, "--clock") == 0) {
			char why[200];
			if (!v) {
				fprintf(stderr, "k3sim check: --clock takes boost, sustained, power or a clock in MHz\n");
				return 2;
			}
			if (hw_clock_sel_parse(v, &o.clock, why, sizeof why) < 0) {
				fprintf(stderr, "k3sim check: --clock: %s\n", why);
				return 2;
			}
			i++;
		} else {
			fprintf(stderr, "k3sim check: unknown argument '%s' (see --help)\n", s);
			return 2;
		}
	}
	if (n_hw == 0)
		for (const char *const *p = hw_preset_names(); *p && n_hw < HW_ARGS_MAX; p++)
			hws[n_hw++] = *p;

	struct hw *hw = malloc(sizeof *hw);
	struct sim_props_report *r = malloc(sizeof *r);
	int status = 0;
	struct jw w;
	if (!hw || !r) {
		fprintf(stderr, "k3sim check: out of memory\n");
		status = 1;
		goto out;
	}
	if (json) {
		jw_init(&w, stdout);
		jw_begin_object(&w, NULL);
		jw_f64(&w, "tolerance", o.tolerance);
		jw_i64(&w, "seed", (int64_t)o.seed);
		jw_str(&w, "clock", hw_clock_sel_kind(&o.clock));
		if (o.clock.given_hz > 0)
			jw_f64(&w, "clock_hz", o.clock.given_hz);
		jw_begin_array(&w, "presets");
	}
	for (int i = 0; i < n_hw; i++) {
		struct err e;
		if (hw_load(hw, hws[i], &e) < 0) {
			cli_error("check", &e);
			status = 1;
			continue;
		}
		char why[200];
		if (hw_clock_sel_check(hw, &o.clock, why, sizeof why) < 0) {
			fprintf(stderr, "k3sim check: %s: --clock %s\n", hws[i], why);
			status = 2;
			continue;
		}
		o.hw_name = hws[i];
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (sim_props_check(hw, &o, r, &e) < 0) {
			cli_error("check", &e);
			status = 1;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
		if (json)
			print_json(&w, hws[i], r, secs);
		else
			print_text(hws[i], r, secs, quiet);
		if (r->violations)
			status = 1;
	}
	if (json) {
		jw_end_array(&w);
		jw_end_object(&w);
		jw_finish(&w);
	}
out:
	free(hw);
	free(r);
	return status;
}
