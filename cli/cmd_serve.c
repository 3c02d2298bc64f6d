/* k3sim serve [SCENARIO]: requests over time on a deployment (serve/serve.h): TTFT, TPOT, ITL and
 * E2E percentiles, throughput and goodput, the prefix cache and KDA checkpoints, HBM and CPU DRAM,
 * queues over time; JSON, per-request CSV/SQLite, a Perfetto timeline and a report directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "reports/fmt.h"
#include "reports/serve.h"
#include "serve/serve.h"
#include "util/doc.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim serve [SCENARIO] [--json] [-o DIR] [--csv FILE] [--db FILE] [--perfetto FILE]\n"
		"                   [--force] [--no-charts] [--gnuplot PROG] [overrides] [--quiet]\n\n"
		"Simulates serving over time: requests arrive (Poisson, gamma bursts, all at once, or a\n"
		"trace: k3sim JSONL/CSV, Mooncake JSONL, Azure CSV), are batched continuously under a token\n"
		"budget with chunked prefill beside decode, admitted and preempted by HBM through the hybrid\n"
		"paged pool (MLA pages, KDA state, KDA checkpoints, prefix reuse, a CPU DRAM tier), with\n"
		"speculative decoding, P/D disaggregation and vision encoding; every step is costed on the\n"
		"timeline. The scenario's serve: section says how (scenarios/README.md; docs/SERVING.md).\n\n"
		"  SCENARIO          a YAML file or an embedded scenario (default: serve-default)\n"
		"  --json            the summary as JSON on stdout (keys requests, ttft_s, tpot_s, itl_s,\n"
		"                    e2e_s {mean, p50, p90, p95, p99, max}, throughput_tokens_per_s,\n"
		"                    goodput_requests_per_s, prefix_hit_rate, cache, hbm, little, ...)\n"
		"  -o, --output DIR  a report: DIR/report.md, results.json, requests.csv, charts/ (gnuplot)\n"
		"  --csv FILE        one row per request\n"
		"  --db FILE         SQLite: tables requests, samples (queues over time), summary\n"
		"  --perfetto FILE   the requests and steps as Chrome/Perfetto trace JSON (ui.perfetto.dev)\n"
		"  --perfetto-requests N  requests drawn in it (default 2000; steps: the first 200,000)\n"
		"  -f, --force       replace existing output files\n"
		"  --no-charts       no gnuplot in the report\n"
		"  --gnuplot PROG    the gnuplot to run (default: gnuplot from PATH)\n"
		"  -j, --jobs N      threads evaluating the step-cost tables (default 2)\n"
		"  --quiet           errors only\n"
		"overrides (applied after loading):\n"
		"  --rate R          arrivals per second     --duration S   arrival window, seconds\n"
		"  --requests N      at most N requests      --seed N       the workload's seed\n"
		"  --trace FILE      arrivals from a trace   --model NAME|PATH  --hw NAME|PATH\n");
}

static int parse_num(const char *opt, const char *v, double *out)
{
	double x;
	if (!v || doc_parse_double(v, &x) < 0 || !(x > 0)) {
		fprintf(stderr, "k3sim serve: %s needs a positive number, got '%s'\n", opt, v ? v : "");
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int parse_int(const char *opt, const char *v, int64_t min, int64_t *out)
{
	int64_t x;
	if (!v || doc_parse_i64(v, &x) < 0 || x < min) {
		fprintf(stderr, "k3sim serve: %s needs an integer >= %lld, got '%s'\n", opt, (long long)min, v ? v : "");
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static void pct_line(const char *name, const struct serve_pct *p)
{
	char a[32], b[32], c[32], d[32], e[32];
	printf("  %-8s %12s %12s %12s %12s %12s\n", name, cli_time(p->mean, a, sizeof a), cli_time(p->p50, b, sizeof b),
	       cli_time(p->p90, c, sizeof c), cli_time(p->p99, d, sizeof d), cli_time(p->max, e, sizeof e));
}

static void print_human(const struct serve_report_in *in)
{
	const struct serve_summary *S = &in->r->sum;
	const struct serve_config *c = in->c;
	const struct scenario *s = in->s;
	char a[32], b[32];
	printf("k3sim serve: %s - %s on %s\n", s->name, in->m->name, in->hw->name);
	if (c->pd)
		printf("  P/D: prefill %lld x %lld GPUs (TP%lld DP%lld EP%lld), decode %lld x %lld GPUs (TP%lld DP%lld "
		       "EP%lld)\n",
		       (long long)c->prefill.replicas, (long long)c->prefill.gpus, (long long)c->prefill.tp,
		       (long long)c->prefill.dp, (long long)c->prefill.ep, (long long)c->decode.replicas,
		       (long long)c->decode.gpus, (long long)c->decode.tp, (long long)c->decode.dp, (long long)c->decode.ep);
	else
		printf("  %lld replica%s of %lld GPUs (TP%lld x DP%lld, EP%lld); %s steps, budget %lld tokens, %lld "
		       "running per DP group\n",
		       (long long)c->replicas, c->replicas == 1 ? "" : "s", (long long)s->gpus, (long long)s->tp,
		       (long long)s->dp, (long long)s->ep, c->mixed ? "mixed" : "prefill-first", (long long)c->token_budget,
		       (long long)c->max_running);
	printf("  workload: %s\n\n", in->w->source);
	printf("  %-8s %12s %12s %12s %12s %12s\n", "", "mean", "p50", "p90", "p99", "max");
	pct_line("TTFT", &S->ttft);
	pct_line("TPOT", &S->tpot);
	pct_line("ITL", &S->itl);
	pct_line("E2E", &S->e2e);
	pct_line("queue", &S->queue);
	printf("\n  completed          %lld of %lld requests in %s\n", (long long)S->completed, (long long)S->requests,
	       cli_time(S->makespan_s, a, sizeof a));
	printf("  throughput         %.1f output tokens/s, %.3f requests/s\n", S->throughput_tokens_per_s,
	       S->throughput_requests_per_s);
	printf("  goodput            %.3f requests/s (TTFT <= %s, TPOT <= %s: %.1f %% of requests)\n",
	       S->goodput_requests_per_s, cli_time(c->slo_ttft_s, a, sizeof a), cli_time(c->slo_tpot_s, b, sizeof b),
	       100 * S->slo_attainment);
	if (s->mtp_draft_tokens)
		printf("  speculative        %lld draft tokens, %.3f tokens per request per step\n",
		       (long long)s->mtp_draft_tokens, S->mean_accepted);
	printf("  prefix cache       %.1f %% of prompt tokens reused (%s of prefill saved), checkpoints %s\n",
	       100 * S->prefix_hit_rate, cli_time(S->saved_prefill_s, a, sizeof a), serve_ckpt_name(c->ckpt));
	printf("  KDA checkpoints    %s written, %s resident at peak (per GPU), %lld siblings invalidated\n",
	       cli_bytes((double)S->ckpt_bytes_written, a, sizeof a), cli_bytes((double)S->ckpt_bytes_peak, b, sizeof b),
	       (long long)S->ckpt_invalidated);
	printf("  HBM per GPU        peak %s of %s (pool %s)\n", cli_bytes((double)S->hbm_peak_bytes, a, sizeof a),
	       cli_bytes((double)in->hw->hbm_bytes, b, sizeof b), cli_bytes((double)S->hbm_pool_bytes, (char[32]){0}, 32));
	if (c->cpu_bytes)
		printf("  CPU DRAM per GPU   peak %s; %s written back, %s prefetched; %lld hits from it\n",
		       cli_bytes((double)S->cpu_peak_bytes, a, sizeof a), cli_bytes((double)S->offload_bytes, b, sizeof b),
		       cli_bytes((double)S->prefetch_bytes, (char[32]){0}, 32), (long long)S->cpu_hits);
	if (c->pd)
		printf("  P/D transfers      %s of state and KV\n", cli_bytes((double)S->pd_transfer_bytes, a, sizeof a));
	printf("  preemptions        %lld (%lld tokens recomputed)\n", (long long)S->preemptions,
	       (long long)S->recomputed_tokens);
	printf("  Little's law       L = %.3f, lambda x W = %.3f\n", S->little_l, S->little_lambda_w);
	printf("  wall               step costs %.2f s (%lld timeline steps), simulation %.2f s, %lld steps\n",
	       S->cost_build_s, (long long)S->cost_points, S->sim_s, (long long)S->steps);
}

/* One output file through util/outfile.h. */
static int write_one(const char *path, bool force, const char *const *inputs, size_t n_inputs,
		     int (*fn)(FILE *, const struct serve_report_in *, int64_t), const struct serve_report_in *in,
		     int64_t arg, bool sqlite)
{
	struct outfile of = {0};
	struct err e = {0};
	struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = n_inputs, .sqlite = sqlite};
	if (outfile_open(&of, path, &oo, &e) < 0) {
		cli_error("serve", &e);
		return 1;
	}
	int rc;
	if (sqlite) {
		rc = report_serve_sqlite(outfile_tmp_path(&of), in, &e);
		outfile_err_path(&of, &e);
	} else {
		FILE *f = outfile_stream(&of, &e);
		rc = f ? fn(f, in, arg) : -ENOMEM;
		if (rc < 0 && !e.msg[0])
			err_set(&e, path, 0, 0, "write failed");
	}
	if (rc < 0) {
		outfile_abort(&of);
		cli_error("serve", &e);
		return 1;
	}
	if (outfile_commit(&of, &e) < 0) {
		cli_error("serve", &e);
		return 1;
	}
	return 0;
}

static int csv_fn(FILE *f, const struct serve_report_in *in, int64_t arg)
{
	(void)arg;
	return report_serve_csv(f, in);
}

static int perfetto_fn(FILE *f, const struct serve_report_in *in, int64_t arg)
{
	return report_serve_perfetto(f, in, arg);
}

int cmd_serve(int argc, char **argv)
{
	const char *path = "serve-default", *dir = NULL, *csv = NULL, *db = NULL, *perfetto = NULL;
	const char *gnuplot = "gnuplot", *model_over = NULL, *hw_over = NULL, *trace_over = NULL;
	bool json = false, force = false, quiet = false, have_path = false;
	double rate = 0, duration = 0;
	int64_t requests = -1, seed = -1, threads = 2, perfetto_requests = 2000;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "-f") == 0 || strcmp(a, "--force") == 0) {
			force = true;
		} else if (strcmp(a, "--quiet") == 0) {
			quiet = true;
		} else if (strcmp(a, "--no-charts") == 0) {
			gnuplot = NULL;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--csv") == 0 ||
			   strcmp(a, "--db") == 0 || strcmp(a, "--perfetto") == 0 || strcmp(a, "--gnuplot") == 0 ||
			   strcmp(a, "--model") == 0 || strcmp(a, "--hw") == 0 || strcmp(a, "--trace") == 0) {
			if (!v || !v[0]) {
				fprintf(stderr, "k3sim serve: %s needs a value\n", a);
				return 2;
			}
			const char **dst = a[1] == 'o' || strcmp(a, "--output") == 0 ? &dir
					   : strcmp(a, "--csv") == 0		      ? &csv
					   : strcmp(a, "--db") == 0		      ? &db
					   : strcmp(a, "--perfetto") == 0	      ? &perfetto
					   : strcmp(a, "--gnuplot") == 0	      ? &gnuplot
					   : strcmp(a, "--model") == 0		      ? &model_over
					   : strcmp(a, "--hw") == 0		      ? &hw_over
										      : &trace_over;
			*dst = v;
			i++;
		} else if (strcmp(a, "--rate") == 0 || strcmp(a, "--duration") == 0) {
			if (parse_num(a, v, a[2] == 'r' ? &rate : &duration) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--requests") == 0 || strcmp(a, "--seed") == 0 || strcmp(a, "-j") == 0 ||
			   strcmp(a, "--jobs") == 0 || strcmp(a, "--perfetto-requests") == 0) {
			int64_t *dst = strcmp(a, "--requests") == 0 ? &requests
				       : strcmp(a, "--seed") == 0   ? &seed
				       : strcmp(a, "--perfetto-requests") == 0 ? &perfetto_requests
									       : &threads;
			if (parse_int(a, v, dst == &seed ? 0 : 1, dst) < 0)
				return 2;
			i++;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "k3sim serve: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else if (!have_path) {
			path = a;
			have_path = true;
		} else {
			fprintf(stderr, "k3sim serve: one scenario at a time\n");
			return 2;
		}
	}
	struct err e = {0};
	struct scenario s;
	if (scenario_load(&s, path, &e) < 0) {
		cli_error("serve", &e);
		return 1;
	}
	/* the serve: section from the same text */
	char *text = NULL;
	size_t len = 0;
	const char *preset = s.file[0] == '<' ? scenario_preset_text(path) : NULL;
	if (!preset && doc_read_file(path, &text, &len, &e) < 0) {
		cli_error("serve", &e);
		return 1;
	}
	struct serve_config c;
	int rc = serve_config_load_yaml(&c, &s, s.file, preset ? preset : text, preset ? strlen(preset) : len, &e);
	free(text);
	if (rc < 0) {
		cli_error("serve", &e);
		return 1;
	}
	if (model_over)
		snprintf(s.model, sizeof s.model, "%s", model_over);
	if (hw_over)
		snprintf(s.hw, sizeof s.hw, "%s", hw_over);
	if (rate > 0) {
		c.rate_per_s = rate;
		if (c.arrival == SERVE_ARRIVAL_TRACE)
			c.arrival = SERVE_ARRIVAL_POISSON;
	}
	if (duration > 0)
		c.duration_s = duration;
	if (requests > 0)
		c.max_requests = requests;
	if (seed >= 0)
		c.seed = (uint64_t)seed;
	if (trace_over) {
		if (strlen(trace_over) >= sizeof c.trace) {
			fprintf(stderr, "k3sim serve: --trace: path too long\n");
			return 2;
		}
		snprintf(c.trace, sizeof c.trace, "%s", trace_over);
		c.arrival = SERVE_ARRIVAL_TRACE;
	}
	struct model m;
	struct hw hw;
	if (model_load(&m, s.model, &e) < 0 || hw_load(&hw, s.hw, &e) < 0) {
		cli_error("serve", &e);
		return 1;
	}
	struct serve_workload w;
	if (serve_workload_make(&w, &c, &m, &e) < 0) {
		cli_error("serve", &e);
		return 1;
	}
	struct serve_result r;
	struct serve_opts o = {.max_steps = perfetto ? 200000 : 0, .threads = (int)threads};
	if (serve_run(&s, &m, &hw, &c, &w, &o, &r, &e) < 0) {
		cli_error("serve", &e);
		serve_workload_release(&w);
		return 1;
	}
	struct serve_report_in in = {.s = &s, .m = &m, .hw = &hw, .c = &c, .w = &w, .r = &r};
	const char *inputs[3];
	size_t n_inputs = 0;
	if (s.file[0] != '<')
		inputs[n_inputs++] = s.file;
	if (c.arrival == SERVE_ARRIVAL_TRACE)
		inputs[n_inputs++] = c.trace;
	int status = 0;
	if (csv && write_one(csv, force, inputs, n_inputs, csv_fn, &in, 0, false))
		status = 1;
	if (!status && db && write_one(db, force, inputs, n_inputs, NULL, &in, 0, true))
		status = 1;
	if (!status && perfetto && write_one(perfetto, force, inputs, n_inputs, perfetto_fn, &in, perfetto_requests, false))
		status = 1;
	if (!status && dir) {
		char cmdline[1024] = "k3sim";
		for (int i = 0; i < argc; i++)
			snprintf(cmdline + strlen(cmdline), sizeof cmdline - strlen(cmdline), " %s", argv[i]);
		struct serve_report_opts ro = {.dir = dir, .force = force, .inputs = inputs, .n_inputs = n_inputs,
					       .gnuplot = gnuplot, .version = K3SIM_VERSION, .command = cmdline};
		struct serve_report_files files;
		if (report_serve_write(&in, &ro, &files, &e) < 0) {
			cli_error("serve", &e);
			status = 1;
		} else if (!quiet && !json) {
			printf("wrote %s, %s, %s and %d charts in %s", files.md, files.json, files.csv, files.n_charts,
			       files.charts_dir);
			if (!files.charts.rendered)
				printf(" (not drawn: %s)", files.charts.reason);
			printf("\n\n");
		}
	}
	if (!status) {
		if (json)
			status = report_serve_json(stdout, &in) < 0 ? 1 : 0;
		else if (!quiet)
			print_human(&in);
	}
	serve_result_release(&r);
	serve_workload_release(&w);
	return status;
}
