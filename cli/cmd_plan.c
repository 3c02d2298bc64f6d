/* k3sim plan: the best deployment under SLOs (plan/plan.h, docs/PLAN.md). Outputs are atomic
 * (util/outfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "plan/plan.h"
#include "plan/plandb.h"
#include "plan/render.h"
#include "util/doc.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim plan --gpus A..B|A,B,... --ttft T --tpot T [options]\n\n"
		"Which deployment to run for a workload under TTFT/TPOT SLOs: enumerates layouts (TP, DP, CP,\n"
		"EP, prefill tokens per step, decode batch, KDA-state and MLA-cache dtypes, GPU counts,\n"
		"hardware), prunes those whose layout does not divide or whose weights do not fit before\n"
		"costing, scores the rest with the step model, forms disaggregated (P/D) deployments from\n"
		"prefill and decode pools, serves a short list per GPU budget with the serving simulator,\n"
		"and prints the recommendation per budget with why each runner-up lost, and the Pareto fronts\n"
		"of output tokens/s per GPU vs TPOT and vs TTFT. docs/PLAN.md has the model.\n\n"
		"workload and SLOs\n"
		"  --model NAME|PATH     model preset or file (default: the base scenario's, kimi-k3)\n"
		"  --hw A[,B...]         hardware presets or files to compare (default: the base's)\n"
		"  --gpus A..B | A,B,..  GPU counts: of one replica and the budgets (A..B: A, 2A, 4A, ..., B)\n"
		"  --isl N, --osl N      prompt and output tokens (default: the base's, or the trace's means)\n"
		"  --ttft T, --tpot T    SLOs: 2s, 50ms, 250us or seconds (required)\n"
		"  --prefix-hit H        share of each prompt found in the prefix cache, [0, 1) (default 0)\n"
		"  --workload FILE       a trace (serve formats): lengths and, when served, its arrival pattern\n"
		"  --base SCENARIO       scenario whose engine, EP and other settings every layout keeps\n"
		"                        (default: the embedded 'default')\n"
		"search space (lists like 1,2,4; defaults in docs/PLAN.md)\n"
		"  --tp L, --cp L, --ep-div L (EP = GPUs / d), --batch L (per DP group), --budget L\n"
		"  (prefill tokens per step per DP group), --kda-state fp32,bf16, --mla-cache bf16,fp8\n"
		"  --mode M              all | colocated | disaggregated | prefill | decode (default all)\n"
		"  --short N             deployments served per budget and kind (default 2; 0: step model only)\n"
		"  --attainment A        share of requests meeting both SLOs when served (default 0.9)\n"
		"  --serve-requests N    requests per serving probe (default: 2 x decode slots in [300, 1000])\n"
		"  --seed N              the served workloads' seed (default 1)\n"
		"running and outputs\n"
		"  -j, --jobs N          threads (default: the online CPUs)\n"
		"  --shard K/N           the first pass of units K-1, K-1+N, ... only, into -o (a Slurm array\n"
		"                        task: --shard $((SLURM_ARRAY_TASK_ID+1))/$SLURM_ARRAY_TASK_COUNT);\n"
		"                        'k3sim merge' joins the shards, --from finishes the plan\n"
		"  --from DB[,DB...]     candidates from a merged plan database (or all shards) instead of\n"
		"                        the first pass; the flags must be the same (checked by hash)\n"
		"  -o, --output F        SQLite of every candidate, P/D deployment, front and recommendation\n"
		"  --report DIR          plan.md with gnuplot Pareto charts and plan-G.yaml per budget\n"
		"  --scenario F          the largest budget's recommendation as a ready scenario YAML\n"
		"  --gnuplot PATH        gnuplot program (default: gnuplot)\n"
		"  -f, --force           replace existing output files\n"
		"  --json                JSON on stdout instead of the table\n"
		"  --quiet               errors only\n");
}

static int parse_shard(const char *v, int64_t *k, int64_t *n)
{
	char a[32];
	const char *slash = v ? strchr(v, '/') : NULL;
	if (!slash || slash - v >= (long)sizeof a)
		return -EINVAL;
	snprintf(a, sizeof a, "%.*s", (int)(slash - v), v);
	if (doc_parse_i64(a, k) < 0 || doc_parse_i64(slash + 1, n) < 0 || *n < 1 || *k < 1 || *k > *n ||
	    *n > PLANDB_MAX_SHARDS)
		return -EINVAL;
	return 0;
}

static int parse_dtypes(const char *what, const char *v, enum dtype *out, int *n, struct err *e)
{
	char buf[128];
	*n = 0;
	snprintf(buf, sizeof buf, "%s", v ? v : "");
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n >= 4 || dtype_parse(t, &out[*n]) < 0) {
			err_set(e, NULL, 0, 0, "%s: '%s' is not a dtype (%s)", what, t, *n >= 4 ? "at most 4" : dtype_spellings());
			return -EINVAL;
		}
		(*n)++;
	}
	if (!*n) {
		err_set(e, NULL, 0, 0, "%s: no dtype given", what);
		return -EINVAL;
	}
	return 0;
}

static void json_cand_ref(struct jw *w, const struct plan_spec *sp, const struct plan_result *r, bool pd,
			  int64_t ref)
{
	char what[192];
	plan_describe(sp, r, pd, ref, what, sizeof what);
	jw_bool(w, "pd", pd);
	jw_i64(w, "ref", ref);
	jw_str(w, "layout", what);
}

static void json_out(FILE *out, const struct plan_spec *sp, const struct plan_result *r)
{
	struct jw w;
	jw_init(&w, out);
	jw_begin_object(&w, NULL);
	jw_str(&w, "model", sp->model->name);
	jw_i64(&w, "isl", sp->isl);
	jw_i64(&w, "osl", sp->osl);
	jw_f64(&w, "prefix_hit", sp->prefix_hit);
	jw_f64(&w, "slo_ttft_s", sp->slo_ttft_s);
	jw_f64(&w, "slo_tpot_s", sp->slo_tpot_s);
	jw_str(&w, "mode", plan_mode_name(sp->mode));
	char hash[32];
	snprintf(hash, sizeof hash, "%016llx", (unsigned long long)sp->hash);
	jw_str(&w, "spec_hash", hash);
	jw_i64(&w, "units", r->units);
	jw_i64(&w, "units_pruned", r->units_pruned);
	jw_i64(&w, "pruned_layout", r->pruned_layout);
	jw_i64(&w, "pruned_memory", r->pruned_memory);
	jw_i64(&w, "candidates", r->n_cands);
	jw_i64(&w, "evaluated", r->evaluated);
	jw_i64(&w, "slo_missed", r->slo_missed);
	jw_i64(&w, "pd_deployments", r->n_pd);
	jw_i64(&w, "served", r->n_served);
	jw_i64(&w, "serve_runs", r->serve_runs);
	jw_begin_array(&w, "recommendations");
	for (int i = 0; i < r->n_recs; i++) {
		const struct plan_rec *x = &r->recs[i];
		jw_begin_object(&w, NULL);
		jw_i64(&w, "budget_gpus", x->budget_gpus);
		jw_bool(&w, "found", x->found);
		if (x->found) {
			json_cand_ref(&w, sp, r, x->pd, x->ref);
			jw_i64(&w, "replicas", x->replicas);
			jw_i64(&w, "gpus_used", x->gpus_used);
			jw_f64(&w, "goodput_tokens_per_s", x->goodput_tokens_per_s);
			jw_f64(&w, "goodput_tokens_per_s_per_gpu", x->goodput_tokens_per_s_per_gpu);
			jw_bool(&w, "served", x->served);
		}
		jw_f64(&w, "colocated_goodput_tokens_per_s_per_gpu", x->coloc_goodput);
		jw_f64(&w, "pd_goodput_tokens_per_s_per_gpu", x->pd_goodput);
		jw_str(&w, "why", x->why);
		jw_begin_array(&w, "losers");
		for (int k = 0; k < x->n_losers; k++) {
			jw_begin_object(&w, NULL);
			jw_bool(&w, "pd", x->losers[k].pd);
			jw_i64(&w, "ref", x->losers[k].ref);
			jw_str(&w, "layout", x->losers[k].what);
			jw_f64(&w, "goodput_tokens_per_s_per_gpu", x->losers[k].goodput_tokens_per_s_per_gpu);
			jw_str(&w, "why", x->losers[k].why);
			jw_end_object(&w);
		}
		jw_end_array(&w);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_begin_array(&w, "served_list");
	for (int i = 0; i < r->n_served; i++) {
		const struct plan_served *v = &r->served[i];
		jw_begin_object(&w, NULL);
		json_cand_ref(&w, sp, r, v->pd, v->cand);
		jw_i64(&w, "gpus", v->gpus);
		jw_f64(&w, "est_rate_per_s", v->est_rate_per_s);
		jw_f64(&w, "rate_per_s", v->rate_per_s);
		jw_f64(&w, "goodput_tokens_per_s_per_gpu", v->goodput_tokens_per_s_per_gpu);
		jw_i64(&w, "probes", v->probes);
		jw_i64(&w, "requests", v->requests);
		jw_f64(&w, "attainment", v->attainment);
		jw_f64(&w, "ttft_p90_s", v->ttft_p90_s);
		jw_f64(&w, "tpot_p90_s", v->tpot_p90_s);
		jw_bool(&w, "capped", v->capped);
		jw_str(&w, "reason", v->reason);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	for (int f = 0; f < 2; f++) {
		const struct plan_point *p = f ? r->front_ttft : r->front_tpot;
		int64_t n = f ? r->n_front_ttft : r->n_front_tpot;
		jw_begin_array(&w, f ? "front_ttft" : "front_tpot");
		for (int64_t i = 0; i < n; i++) {
			jw_begin_object(&w, NULL);
			json_cand_ref(&w, sp, r, p[i].pd, p[i].ref);
			jw_f64(&w, f ? "ttft_s" : "tpot_s", p[i].x_s);
			jw_f64(&w, "tokens_per_s_per_gpu", p[i].y);
			jw_end_object(&w);
		}
		jw_end_array(&w);
	}
	jw_end_object(&w);
	jw_finish(&w);
}

static void table_out(FILE *out, const struct plan_spec *sp, const struct plan_result *r)
{
	char a[32], b[32];
	fprintf(out, "k3sim plan: %s, %lld/%lld tokens, prefix hit %.0f %%, TTFT <= %s, TPOT <= %s%s%s\n", sp->model->name,
		(long long)sp->isl, (long long)sp->osl, sp->prefix_hit * 100,
		sp->slo_ttft_s > 0 ? cli_time(sp->slo_ttft_s, a, sizeof a) : "-",
		sp->slo_tpot_s > 0 ? cli_time(sp->slo_tpot_s, b, sizeof b) : "-",
		sp->mode == PLAN_MODE_ALL ? "" : ", mode ", sp->mode == PLAN_MODE_ALL ? "" : plan_mode_name(sp->mode));
	fprintf(out,
		"  %lld layouts, %lld pruned before costing (%lld layout, %lld weights); %lld candidates evaluated "
		"(%lld miss an SLO), %lld P/D deployments, %d served (%lld runs)\n\n",
		(long long)r->units, (long long)r->units_pruned, (long long)r->pruned_layout,
		(long long)(r->units_pruned - r->pruned_layout), (long long)r->evaluated, (long long)r->slo_missed,
		(long long)r->n_pd, r->n_served, (long long)r->serve_runs);
	fprintf(out, "  %6s  %-72s %12s %10s %10s %10s\n", "GPUs", "recommended deployment", "goodput tok/s", "per GPU",
		"coloc/GPU", "P/D/GPU");
	for (int i = 0; i < r->n_recs; i++) {
		const struct plan_rec *x = &r->recs[i];
		char what[192] = "none meets the SLOs";
		if (x->found)
			plan_describe(sp, r, x->pd, x->ref, what, sizeof what);
		char rep[32] = "";
		if (x->found && x->replicas > 1)
			snprintf(rep, sizeof rep, "%lld x ", (long long)x->replicas);
		char full[224];
		snprintf(full, sizeof full, "%s%s", rep, what);
		fprintf(out, "  %6lld  %-72s %12.5g %10.5g %10.5g %10.5g\n", (long long)x->budget_gpus, full,
			x->goodput_tokens_per_s, x->goodput_tokens_per_s_per_gpu, x->coloc_goodput, x->pd_goodput);
		fprintf(out, "          %s\n", x->why);
		for (int k = 0; k < x->n_losers && k < 3; k++)
			fprintf(out, "          lost: %s: %s\n", x->losers[k].what, x->losers[k].why);
	}
	fprintf(out, "\n  Pareto front, tokens/s per GPU vs TPOT (%lld points):\n", (long long)r->n_front_tpot);
	for (int64_t i = 0; i < r->n_front_tpot; i++) {
		char what[192];
		plan_describe(sp, r, r->front_tpot[i].pd, r->front_tpot[i].ref, what, sizeof what);
		fprintf(out, "    %10s %10.5g  %s\n", cli_time(r->front_tpot[i].x_s, a, sizeof a), r->front_tpot[i].y, what);
	}
}

int cmd_plan(int argc, char **argv)
{
	struct plan_spec *sp = calloc(1, sizeof *sp);
	struct plan_result r;
	memset(&r, 0, sizeof r);
	struct err e = {0};
	int status = 1, rc;
	const char *db = NULL, *report = NULL, *scen = NULL, *gnuplot = "gnuplot", *from = NULL;
	bool json = false, quiet = false, force = false;
	int64_t jobs = sysconf(_SC_NPROCESSORS_ONLN), shard_k = 1, shard_n = 1;
	struct outfile yaml_out = {0};
	if (!sp) {
		fprintf(stderr, "k3sim plan: out of memory\n");
		return 1;
	}
	plan_spec_init(sp);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			usage(stdout);
			status = 0;
			goto out;
		}
		if (strcmp(a, "--json") == 0) {
			json = true;
			continue;
		} else if (strcmp(a, "--quiet") == 0) {
			quiet = true;
			continue;
		} else if (strcmp(a, "-f") == 0 || strcmp(a, "--force") == 0) {
			force = true;
			continue;
		}
		if (strncmp(a, "-j", 2) == 0 && a[2]) {
			int64_t n;
			if (doc_parse_i64(a + 2, &n) < 0 || n < 1) {
				fprintf(stderr, "k3sim plan: -j: '%s' is not a positive integer\n", a + 2);
				status = 2;
				goto out;
			}
			jobs = n > 256 ? 256 : n;
			continue;
		}
		if (a[0] != '-') {
			fprintf(stderr, "k3sim plan: unexpected argument '%s' (see 'k3sim plan --help')\n", a);
			status = 2;
			goto out;
		}
		if (!v) {
			fprintf(stderr, "k3sim plan: %s needs a value (see 'k3sim plan --help')\n", a);
			status = 2;
			goto out;
		}
		i++;
		rc = 0;
		double d;
		int64_t n;
		if (strcmp(a, "--model") == 0)
			snprintf(sp->model_name, sizeof sp->model_name, "%s", v);
		else if (strcmp(a, "--base") == 0)
			snprintf(sp->base_src, sizeof sp->base_src, "%s", v);
		else if (strcmp(a, "--workload") == 0)
			snprintf(sp->workload, sizeof sp->workload, "%s", v);
		else if (strcmp(a, "--hw") == 0) {
			char buf[2048];
			snprintf(buf, sizeof buf, "%s", v);
			sp->n_hw = 0;
			for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (sp->n_hw >= PLAN_MAX_HW) {
					err_set(&e, NULL, 0, 0, "--hw: more than %d", PLAN_MAX_HW);
					rc = -E2BIG;
					break;
				}
				snprintf(sp->hw_names[sp->n_hw++], sizeof sp->hw_names[0], "%s", t);
			}
		} else if (strcmp(a, "--gpus") == 0)
			rc = plan_parse_gpus(v, sp->ax.gpus, &sp->ax.n_gpus, &e);
		else if (strcmp(a, "--tp") == 0)
			rc = plan_parse_ints("--tp", v, sp->ax.tp, &sp->ax.n_tp, &e);
		else if (strcmp(a, "--cp") == 0)
			rc = plan_parse_ints("--cp", v, sp->ax.cp, &sp->ax.n_cp, &e);
		else if (strcmp(a, "--ep-div") == 0)
			rc = plan_parse_ints("--ep-div", v, sp->ax.ep_div, &sp->ax.n_ep_div, &e);
		else if (strcmp(a, "--batch") == 0)
			rc = plan_parse_ints("--batch", v, sp->ax.batch, &sp->ax.n_batch, &e);
		else if (strcmp(a, "--budget") == 0)
			rc = plan_parse_ints("--budget", v, sp->ax.budget, &sp->ax.n_budget, &e);
		else if (strcmp(a, "--kda-state") == 0)
			rc = parse_dtypes("--kda-state", v, sp->ax.kda, &sp->ax.n_kda, &e);
		else if (strcmp(a, "--mla-cache") == 0)
			rc = parse_dtypes("--mla-cache", v, sp->ax.mla, &sp->ax.n_mla, &e);
		else if (strcmp(a, "--ttft") == 0)
			rc = plan_parse_seconds("--ttft", v, &sp->slo_ttft_s, &e);
		else if (strcmp(a, "--tpot") == 0)
			rc = plan_parse_seconds("--tpot", v, &sp->slo_tpot_s, &e);
		else if (strcmp(a, "--isl") == 0 || strcmp(a, "--osl") == 0 || strcmp(a, "--short") == 0 ||
			 strcmp(a, "--serve-requests") == 0 || strcmp(a, "--seed") == 0 || strcmp(a, "-j") == 0 ||
			 strcmp(a, "--jobs") == 0) {
			if (doc_parse_i64(v, &n) < 0 || n < (strcmp(a, "--short") == 0 || strcmp(a, "--seed") == 0 ||
									     strcmp(a, "--serve-requests") == 0
								     ? 0
								     : 1)) {
				err_set(&e, NULL, 0, 0, "%s: '%s' is not a %s integer", a, v,
					strcmp(a, "--short") == 0 || strcmp(a, "--seed") == 0 ? "non-negative" : "positive");
				rc = -EINVAL;
			} else if (strcmp(a, "--isl") == 0)
				sp->isl = n;
			else if (strcmp(a, "--osl") == 0)
				sp->osl = n;
			else if (strcmp(a, "--short") == 0)
				sp->short_list = n > 1000 ? 1000 : (int)n;
			else if (strcmp(a, "--serve-requests") == 0)
				sp->serve_requests = n;
			else if (strcmp(a, "--seed") == 0)
				sp->seed = (uint64_t)n;
			else
				jobs = n > 256 ? 256 : n;
		} else if (strcmp(a, "--prefix-hit") == 0 || strcmp(a, "--attainment") == 0) {
			if (doc_parse_double(v, &d) < 0) {
				err_set(&e, NULL, 0, 0, "%s: '%s' is not a number", a, v);
				rc = -EINVAL;
			} else
				*(strcmp(a, "--prefix-hit") == 0 ? &sp->prefix_hit : &sp->attainment) = d;
		} else if (strcmp(a, "--mode") == 0) {
			if (plan_mode_parse(v, &sp->mode) < 0) {
				err_set(&e, NULL, 0, 0,
					"--mode: '%s' is not one of all, colocated, disaggregated, prefill, decode", v);
				rc = -EINVAL;
			}
		} else if (strcmp(a, "--shard") == 0) {
			if (parse_shard(v, &shard_k, &shard_n) < 0) {
				err_set(&e, NULL, 0, 0, "--shard: expected K/N with 1 <= K <= N, got '%s'", v);
				rc = -EINVAL;
			}
		} else if (strcmp(a, "--from") == 0)
			from = v;
		else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
			db = v;
		else if (strcmp(a, "--report") == 0)
			report = v;
		else if (strcmp(a, "--scenario") == 0)
			scen = v;
		else if (strcmp(a, "--gnuplot") == 0)
			gnuplot = v;
		else {
			fprintf(stderr, "k3sim plan: unknown option '%s' (see 'k3sim plan --help')\n", a);
			status = 2;
			goto out;
		}
		if (rc < 0) {
			cli_error("plan", &e);
			status = 2;
			goto out;
		}
	}
	if (shard_n > 1 && (!db || from || report || scen)) {
		fprintf(stderr, "k3sim plan: --shard writes the shard's candidates to -o DB only (then 'k3sim merge' "
				"and 'k3sim plan ... --from MERGED.db')\n");
		status = 2;
		goto out;
	}
	if ((rc = plan_spec_finish(sp, &e)) < 0) {
		cli_error("plan", &e);
		status = 2;
		goto out;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct plan_opts po = {.threads = (int)(jobs > 0 ? jobs : 1), .shard_index = shard_k - 1, .shard_count = shard_n};
	const char *inputs[64];
	int n_inputs = 0;
	char from_buf[4096];
	if (from) {
		snprintf(from_buf, sizeof from_buf, "%s", from);
		for (char *save = NULL, *t = strtok_r(from_buf, ",", &save); t && n_inputs < 64;
		     t = strtok_r(NULL, ",", &save))
			inputs[n_inputs++] = t;
		rc = plandb_read(inputs, n_inputs, sp, &r, NULL, &e);
	} else {
		rc = plan_first_pass(sp, &po, &r, &e);
	}
	if (rc < 0) {
		cli_error("plan", &e);
		goto out;
	}
	struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = (size_t)n_inputs};
	if (shard_n > 1) {
		if ((rc = plandb_write(db, sp, &r, shard_k - 1, shard_n, false, &oo, &e)) < 0) {
			cli_error("plan", &e);
			goto out;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (!quiet)
			fprintf(json ? stderr : stdout,
				"k3sim plan: shard %lld/%lld: %lld layouts, %lld candidates, %lld step-model calls in %.2f s -> %s\n",
				(long long)shard_k, (long long)shard_n, (long long)r.units, (long long)r.n_cands,
				(long long)r.sim_calls, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
				db);
		status = 0;
		goto out;
	}
	int64_t sim_calls = r.sim_calls;
	if ((rc = plan_finish(sp, &po, &r, &e)) < 0) {
		cli_error("plan", &e);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (db && (rc = plandb_write(db, sp, &r, 0, 1, true, &oo, &e)) < 0) {
		cli_error("plan", &e);
		goto out;
	}
	if (scen) {
		const struct plan_rec *best = NULL;
		for (int i = 0; i < r.n_recs; i++)
			if (r.recs[i].found)
				best = &r.recs[i];
		if (!best) {
			fprintf(stderr, "k3sim plan: --scenario: no budget has a deployment meeting the SLOs\n");
			goto out;
		}
		FILE *f;
		if ((rc = outfile_open(&yaml_out, scen, &oo, &e)) < 0 || !(f = outfile_stream(&yaml_out, &e)) ||
		    (rc = plan_write_yaml(f, sp, &r, best, &e)) < 0 || (rc = outfile_commit(&yaml_out, &e)) < 0) {
			outfile_abort(&yaml_out);
			cli_error("plan", &e);
			goto out;
		}
	}
	if (report) {
		struct chart_outcome co = {0};
		bool ours = false;
		if ((rc = outfile_dir_open(report, &ours, &e)) < 0) {
			cli_error("plan", &e);
			goto out;
		}
		struct outfile_opts ro = oo;
		ro.force = force || ours;
		if ((rc = plan_report(report, gnuplot, sp, &r, &ro, &co, &e)) < 0) {
			cli_error("plan", &e);
			goto out;
		}
		for (int i = 0; i < r.n_recs; i++) {
			if (!r.recs[i].found)
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/plan-%lld.yaml", report, (long long)r.recs[i].budget_gpus);
			struct outfile yo = {0};
			FILE *f;
			if ((rc = outfile_open(&yo, path, &ro, &e)) < 0 || !(f = outfile_stream(&yo, &e)) ||
			    (rc = plan_write_yaml(f, sp, &r, &r.recs[i], &e)) < 0 || (rc = outfile_commit(&yo, &e)) < 0) {
				outfile_abort(&yo);
				cli_error("plan", &e);
				goto out;
			}
		}
		if ((rc = outfile_dir_mark(report, "k3sim plan", &e)) < 0) {
			cli_error("plan", &e);
			goto out;
		}
		if (!co.rendered && !quiet)
			fprintf(stderr, "k3sim plan: charts not rendered: %s\n", co.reason);
	}
	if (json)
		json_out(stdout, sp, &r);
	else if (!quiet) {
		table_out(stdout, sp, &r);
		fprintf(stdout, "\n  %lld step-model calls, %lld serving runs, %.2f s on %lld threads\n", (long long)sim_calls,
			(long long)r.serve_runs,
			(double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), (long long)jobs);
	}
	status = 0;
out:
	plan_result_release(&r);
	plan_spec_release(sp);
	free(sp);
	return status;
}
