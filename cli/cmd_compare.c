/* k3sim compare [SCENARIO] [--models A,B,...] [--contexts ...] [--batches ...] -o DIR: designs side
 * by side over context, as a Markdown/HTML report with gnuplot charts, JSON and SQLite. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "reports/compare.h"
#include "reports/fmt.h"
#include "reports/report.h"
#include "util/doc.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: k3sim compare [SCENARIO] [--models A,B,...] [--contexts C,...] [--batches B,...]\n"
	    "                     [-o DIR] [--force] [--no-charts] [--gnuplot PROG] [-j N] [--json]\n"
	    "                     [--quiet]\n\n"
	    "Puts model designs side by side on the same hardware, layout and workload across context\n"
	    "lengths: weights, state and KV per request, HBM per GPU and the largest batch that fits, TTFT,\n"
	    "TPOT, decode tokens/s per GPU, where each design's time goes (op classes), and the contexts\n"
	    "at which one design overtakes another. Writes DIR/report.md, DIR/report.html (self-contained),\n"
	    "DIR/results.json, DIR/results.db and DIR/charts/ (SVG and PNG by gnuplot).\n\n"
	    "  SCENARIO         a YAML file or an embedded scenario (default: compare-default, K3 vs\n"
	    "                   full-MLA vs DSA on 16xH200); its `sweep:` may list model, context, batch\n"
	    "  --models LIST    comma-separated presets or paths (default: the scenario's sweep.model,\n"
	    "                   else kimi-k3,k3-full-mla,k3-dsa); presets:");
	for (const char *const *p = model_preset_names(); *p; p++)
		fprintf(out, " %s", *p);
	fprintf(out,
	        "\n"
	        "  --contexts LIST  prompt lengths in tokens; 4K = 4096, 1M = 1048576 (default: the\n"
	        "                   scenario's sweep.context, else 4K,8K,...,1M)\n"
	        "  --batches LIST   batch sizes (default: the scenario's sweep.batch); the scenario's\n"
	        "                   workload.batch is the reference batch of the TPOT and HBM tables\n"
	        "  -o, --output DIR the report directory (default: compare-NAME, NAME the scenario's name);\n"
	        "                   each file is written beside its target and renamed into place. A\n"
	        "                   directory k3sim made (it holds .k3sim-report) is refreshed; in any\n"
	        "                   other non-empty directory an existing file takes --force\n"
	        "  -f, --force      replace existing files of the report's names in any directory\n"
	        "  --no-charts      tables only (no gnuplot)\n"
	        "  --gnuplot PROG   the gnuplot to run (default: gnuplot from PATH)\n"
	        "  -j, --jobs N     evaluating threads (default: the online CPUs)\n"
	        "  --json           a JSON summary on stdout\n"
	        "  --quiet          errors only\n");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Splits a comma list in place into at most cap items. */
static int split(char *s, char **items, int cap)
{
	int n = 0;
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		if (n == cap)
			return -E2BIG;
		items[n++] = tok;
	}
	return n;
}

/* A token count with an optional binary K/M suffix. */
static int parse_tokens(const char *s, int64_t *out)
{
	char buf[64];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof buf)
		return -EINVAL;
	snprintf(buf, sizeof buf, "%s", s);
	int64_t mul = 1;
	char last = (char)toupper((unsigned char)buf[n - 1]);
	if (last == 'K' || last == 'M') {
		mul = last == 'K' ? 1024 : 1048576;
		buf[n - 1] = 0;
	}
	int64_t v;
	if (doc_parse_i64(buf, &v) < 0 || v < 1 || v > (INT64_C(1) << 40) / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

static int parse_list(const char *opt, char *arg, int64_t *out, int cap, bool tokens)
{
	char *items[64];
	int n = split(arg, items, cap < 64 ? cap : 64);
	if (n <= 0) {
		fprintf(stderr, "k3sim compare: %s needs a comma-separated list of at most %d values\n", opt,
		        cap);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		int rc = tokens ? parse_tokens(items[i], &out[i]) : doc_parse_i64(items[i], &out[i]);
		if (rc < 0 || out[i] < 1) {
			fprintf(stderr, "k3sim compare: %s: '%s' is not a positive %s\n", opt, items[i],
			        tokens ? "token count (4096, 4K, 1M)" : "integer");
			return -EINVAL;
		}
	}
	return n;
}

static void print_human(const struct compare *c, const struct report_files *f, double total_s)
{
	char a[32], b[32], d[32], cm[32];
	const int last = c->n_contexts - 1;
	const struct scenario *s = &c->spec.base;
	printf("k3sim compare: %s - %d designs x %d contexts x %d batch sizes on %lld x %s\n", s->name,
	       c->n_models, c->n_contexts, c->n_batches, (long long)s->gpus, c->spec.hws[0]->name);
	printf("\nat %s context (batch %lld for TPOT):\n",
	       fmt_tokens(compare_context(c, last), cm, sizeof cm), (long long)s->batch);
	printf("  %-22s %14s %10s %12s %12s %16s\n", "design", "mem/request", "max batch", "TTFT", "TPOT",
	       "tok/s/GPU (max)");
	for (int m = 0; m < c->n_models; m++) {
		const struct sweep_row *r = compare_row(c, m, last, c->ref_batch),
		                       *best = compare_best(c, m, last);
		if (!r->ok) {
			printf("  %-22s %s\n", compare_model(c, m)->name, r->error);
			continue;
		}
		printf("  %-22s %14s %10lld %12s %12s %16s\n", compare_model(c, m)->name,
		       cli_bytes((double)compare_request_bytes(r, r->prompt_tokens + r->output_tokens), a,
		                 sizeof a),
		       (long long)r->max_batch, cli_time(r->ttft_s, b, sizeof b),
		       cli_time(r->tpot_s, d, sizeof d),
		       best->ok ? (snprintf(cm, sizeof cm, "%.1f", best->tokens_per_s_per_gpu), cm)
		                : "does not fit");
	}
	int shown = 0;
	for (int i = 0; i < c->n_cross; i++)
		if (c->cross[i].context) {
			if (!shown++)
				printf("\ncrossovers:\n");
			printf("  - %s\n", c->cross[i].text);
		}
	for (int i = 0; i < c->n_dsa; i++)
		printf("  - DSA: %s\n", c->dsa[i].text);
	printf("\nwrote %s, %s, %s, %s\n", f->md, f->html, f->json, f->db);
	if (f->charts.rendered)
		printf("charts: %d (SVG + PNG) in %s\n", f->n_charts, f->charts_dir);
	else
		printf("charts skipped: %s\n", f->charts.reason);
	printf("in %.3f s (evaluation %.3f s)\n", total_s, c->eval_s);
}

int cmd_compare(int argc, char **argv)
{
	const char *path = "compare-default", *dir = NULL, *gnuplot = "gnuplot";
	char *models_arg = NULL, *contexts_arg = NULL, *batches_arg = NULL;
	bool json = false, quiet = false, have_path = false, force = false;
	int64_t jobs = sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--models") == 0 ||
		           strcmp(a, "--contexts") == 0 || strcmp(a, "--batches") == 0 ||
		           strcmp(a, "--gnuplot") == 0) {
			if (!v || !v[0]) {
				fprintf(stderr, "k3sim compare: %s needs a value\n", a);
				return 2;
			}
			if (a[1] == 'o' || strcmp(a, "--output") == 0)
				dir = v;
			else if (strcmp(a, "--models") == 0)
				models_arg = v;
			else if (strcmp(a, "--contexts") == 0)
				contexts_arg = v;
			else if (strcmp(a, "--batches") == 0)
				batches_arg = v;
			else
				gnuplot = v;
			i++;
		} else if (strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0) {
			if (!v || doc_parse_i64(v, &jobs) < 0 || jobs < 1 || jobs > 1024) {
				fprintf(stderr, "k3sim compare: %s needs a thread count in 1..1024\n", a);
				return 2;
			}
			i++;
		} else if (strcmp(a, "--no-charts") == 0) {
			gnuplot = NULL;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			quiet = true;
		} else if (strcmp(a, "--force") == 0 || strcmp(a, "-f") == 0) {
			force = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "k3sim compare: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else if (!have_path) {
			path = a;
			have_path = true;
		} else {
			fprintf(stderr, "k3sim compare: one scenario at a time\n");
			return 2;
		}
	}
	char *model_items[COMPARE_MAX_MODELS + 1];
	int64_t contexts[COMPARE_MAX_CONTEXTS], batches[COMPARE_MAX_BATCHES];
	struct compare_opts o = {.threads = (int)jobs};
	if (models_arg) {
		int n = split(models_arg, model_items, COMPARE_MAX_MODELS);
		if (n <= 0) {
			fprintf(stderr,
			        "k3sim compare: --models needs a comma-separated list of at most %d models\n",
			        COMPARE_MAX_MODELS);
			return 2;
		}
		o.models = (const char *const *)model_items;
		o.n_models = n;
	}
	if (contexts_arg) {
		int n = parse_list("--contexts", contexts_arg, contexts, COMPARE_MAX_CONTEXTS, true);
		if (n < 0)
			return 2;
		o.contexts = contexts;
		o.n_contexts = n;
	}
	if (batches_arg) {
		int n = parse_list("--batches", batches_arg, batches, COMPARE_MAX_BATCHES, false);
		if (n < 0)
			return 2;
		o.batches = batches;
		o.n_batches = n;
	}

	double t0 = now_s();
	struct err e;
	struct compare *c = malloc(sizeof *c);
	struct report_files *f = malloc(sizeof *f);
	int status = 1;
	if (!c || !f) {
		fprintf(stderr, "k3sim compare: out of memory\n");
		goto out;
	}
	if (compare_run(c, path, &o, &e) < 0) {
		cli_error("compare", &e);
		free(c);
		c = NULL;
		goto out;
	}
	char default_dir[96], command[1024];
	if (!dir) {
		snprintf(default_dir, sizeof default_dir, "compare-%s", c->spec.base.name);
		dir = default_dir;
	}
	size_t len = 0;
	command[0] = 0;
	for (int i = 0; i < argc && len < sizeof command; i++)
		len += (size_t)snprintf(command + len, sizeof command - len, "%s%s", i ? " " : "k3sim ",
		                        argv[i]);
	/* the scenario and model files are inputs: never an output */
	const char *inputs[COMPARE_MAX_MODELS + 1];
	size_t n_inputs = 0;
	inputs[n_inputs++] = path;
	for (int m = 0; m < o.n_models; m++)
		inputs[n_inputs++] = o.models[m];
	struct report_opts ro = {.dir = dir,
	                         .force = force,
	                         .inputs = inputs,
	                         .n_inputs = n_inputs,
	                         .gnuplot = gnuplot,
	                         .version = K3SIM_VERSION,
	                         .command = command};
	if (report_write(c, &ro, f, &e) < 0) {
		cli_error("compare", &e);
		goto out;
	}
	double total = now_s() - t0;
	status = 0;
	if (quiet)
		goto out;
	if (json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_begin_object(&w, NULL);
		jw_str(&w, "dir", dir);
		jw_str(&w, "report_md", f->md);
		jw_str(&w, "report_html", f->html);
		jw_str(&w, "results_json", f->json);
		jw_str(&w, "results_db", f->db);
		jw_bool(&w, "charts_rendered", f->charts.rendered);
		jw_str(&w, "charts_reason", f->charts.reason);
		jw_i64(&w, "points", c->spec.points);
		jw_f64(&w, "eval_s", c->eval_s);
		jw_f64(&w, "total_s", total);
		jw_end_object(&w);
		jw_finish(&w);
	} else {
		print_human(c, f, total);
	}
out:
	if (c)
		compare_release(c);
	free(c);
	free(f);
	return status;
}
