/* k3sim plan's report and recommended scenario (plan/render.h). */
#include "plan/render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/chart.h"

int plan_write_yaml(FILE *f, const struct plan_spec *sp, const struct plan_result *r, const struct plan_rec *rec,
		    struct err *e)
{
	if (!rec->found) {
		err_set(e, NULL, 0, 0, "no recommendation on %lld GPUs", (long long)rec->budget_gpus);
		return -EINVAL;
	}
	struct scenario s;
	struct serve_config c;
	double rate = 0;
	for (int i = 0; i < r->n_served; i++)
		if (r->served[i].pd == rec->pd && r->served[i].cand == rec->ref)
			rate = r->served[i].rate_per_s;
	if (!(rate > 0))
		rate = rec->pd ? plan_find_pd(r, rec->ref)->rate_per_s : plan_find(r, rec->ref)->rate_per_s;
	rate *= (double)rec->replicas;
	int64_t requests = sp->serve_requests ? sp->serve_requests : 2000;
	int rc = plan_deployment(sp, r, rec->pd, rec->ref, rec->replicas, rate, requests, &s, &c, e);
	if (rc < 0)
		return rc;
	char what[192];
	plan_describe(sp, r, rec->pd, rec->ref, what, sizeof what);
	fprintf(f, "# k3sim plan's recommendation for %lld GPUs (TTFT <= %g s, TPOT <= %g ms, %lld/%lld tokens):\n",
		(long long)rec->budget_gpus, sp->slo_ttft_s, sp->slo_tpot_s * 1e3, (long long)sp->isl, (long long)sp->osl);
	fprintf(f, "# %s\n# %s\n", what, rec->why);
	fprintf(f, "# `k3sim run` on this file gives the step model's TTFT/TPOT/HBM, `k3sim serve` the serving run.\n");
	fprintf(f, "name: plan-%lld-gpus\n", (long long)rec->budget_gpus);
	fprintf(f, "description: \"%s\"\n", what);
	fprintf(f, "model: %s\nhw: %s\ngpus: %lld\n", s.model, s.hw, (long long)s.gpus);
	fprintf(f, "parallel: {tp: %lld, dp: %lld, cp: %lld, ep: %lld, moe_imbalance: %.17g", (long long)s.tp,
		(long long)s.dp, (long long)s.cp, (long long)s.ep, s.moe_imbalance);
	if (s.moe_expert_cv > 0)
		fprintf(f, ", moe_expert_cv: %.17g", s.moe_expert_cv);
	fprintf(f, "}\n");
	fprintf(f, "workload: {batch: %lld, prompt_tokens: %lld, output_tokens: %lld, prefill_chunk: %lld}\n",
		(long long)s.batch, (long long)s.prompt_tokens, (long long)s.output_tokens, (long long)s.prefill_chunk);
	fprintf(f, "dtypes: {kda_state: %s, mla_cache: %s, activations: %s, expert_activations: %s, dispatch: %s}\n",
		dtype_name(s.kda_state), dtype_name(s.mla_cache), dtype_name(s.act), dtype_name(s.expert_act),
		dtype_name(s.dispatch));
	fprintf(f, "engine: {overlap: %s, prefill_tokens: %lld}\n", scenario_overlap_name(s.overlap),
		(long long)s.prefill_tokens);
	fprintf(f, "serve:\n  seed: %llu\n  duration_s: %.17g\n  max_requests: %lld\n", (unsigned long long)c.seed,
		c.duration_s, (long long)c.max_requests);
	fprintf(f, "  arrivals: {process: poisson, rate_per_s: %.6g}\n", c.rate_per_s);
	fprintf(f, "  requests: {prompt_tokens: %lld, output_tokens: %lld, system_tokens: %lld, system_prompts: 1}\n",
		(long long)c.prompt.mean, (long long)c.output.mean, (long long)c.system_tokens);
	fprintf(f, "  scheduler: {max_running: %lld, token_budget: %lld, chunk_tokens: %lld, mixed: false, replicas: %lld}\n",
		(long long)c.max_running, (long long)c.token_budget, (long long)c.chunk_tokens, (long long)c.replicas);
	if (c.pd)
		fprintf(f,
			"  pd:\n    prefill: {replicas: %lld, gpus: %lld, tp: %lld, dp: %lld, ep: %lld}\n"
			"    decode: {replicas: %lld, gpus: %lld, tp: %lld, dp: %lld, ep: %lld}\n    link: nic\n",
			(long long)c.prefill.replicas, (long long)c.prefill.gpus, (long long)c.prefill.tp,
			(long long)c.prefill.dp, (long long)c.prefill.ep, (long long)c.decode.replicas,
			(long long)c.decode.gpus, (long long)c.decode.tp, (long long)c.decode.dp, (long long)c.decode.ep);
	fprintf(f, "  slo: {ttft_s: %.17g, tpot_s: %.17g}\n", c.slo_ttft_s, c.slo_tpot_s);
	return 0;
}

/* x and y of one set of points, owned by the caller. */
struct xy {
	double *x, *y;
	int64_t n;
};

/* The front of one kind (0 colocated, 1 P/D, 2 both: the plan's) in the chart's units (TPOT in
 * ms), ascending in x; 3: the SLO as a vertical line from 0 to ymax. */
static int points(const struct plan_spec *sp, const struct plan_result *r, int which, bool tpot, double ymax,
		  struct xy *o)
{
	int64_t cap = r->n_cands + r->n_pd + 2;
	struct plan_point *pts = malloc((size_t)cap * sizeof *pts);
	int64_t *idx = malloc((size_t)cap * sizeof *idx);
	o->x = malloc((size_t)cap * sizeof *o->x);
	o->y = malloc((size_t)cap * sizeof *o->y);
	o->n = 0;
	int rc = 0;
	if (!pts || !idx || !o->x || !o->y) {
		rc = -ENOMEM;
		goto out;
	}
	double scale = tpot ? 1e3 : 1;
	if (which == 3) {
		double slo = (tpot ? sp->slo_tpot_s : sp->slo_ttft_s) * scale;
		o->x[0] = o->x[1] = slo;
		o->y[0] = 0;
		o->y[1] = ymax;
		o->n = 2;
		goto out;
	}
	if (which == 2) {
		const struct plan_point *p = tpot ? r->front_tpot : r->front_ttft;
		int64_t n = tpot ? r->n_front_tpot : r->n_front_ttft;
		for (int64_t i = 0; i < n; i++) {
			o->x[o->n] = p[i].x_s * scale;
			o->y[o->n++] = p[i].y;
		}
		goto out;
	}
	int64_t k = 0;
	if (which == 0) {
		for (int64_t i = 0; i < r->n_cands; i++) {
			const struct plan_cand *c = &r->cands[i];
			if ((strcmp(c->status, "ok") && strcmp(c->status, "slo")) ||
			    strcmp(c->kind, sp->mode == PLAN_MODE_PREFILL ? "prefill"
					    : sp->mode == PLAN_MODE_DECODE ? "decode"
									   : "colocated"))
				continue;
			pts[k++] = (struct plan_point){.x_s = tpot ? c->est_tpot_s : c->est_ttft_s, .y = c->tokens_per_s_per_gpu};
		}
	} else {
		for (int64_t i = 0; i < r->n_pd; i++)
			pts[k++] = (struct plan_point){.x_s = tpot ? r->pd[i].est_tpot_s : r->pd[i].est_ttft_s,
						       .y = r->pd[i].tokens_per_s_per_gpu};
	}
	int64_t n = plan_pareto(pts, k, idx);
	for (int64_t i = 0; i < n; i++) {
		o->x[o->n] = pts[idx[i]].x_s * scale;
		o->y[o->n++] = pts[idx[i]].y;
	}
out:
	free(idx);
	free(pts);
	return rc;
}

int plan_report(const char *dir, const char *gnuplot, const struct plan_spec *sp, const struct plan_result *r,
		const struct outfile_opts *oo, struct chart_outcome *co, struct err *e)
{
	struct chart_xy ch[2];
	struct xy pts[2][4];
	memset(ch, 0, sizeof ch);
	memset(pts, 0, sizeof pts);
	int rc = 0;
	struct outfile of = {0};
	for (int k = 0; k < 2; k++) {
		bool tpot = k == 0;
		struct chart_xy *c = &ch[k];
		snprintf(c->name, sizeof c->name, "front-%s", tpot ? "tpot" : "ttft");
		snprintf(c->title, sizeof c->title, "Output tokens/s per GPU vs %s: Pareto fronts (dashed: the SLO)",
			 tpot ? "TPOT" : "TTFT");
		snprintf(c->xlabel, sizeof c->xlabel, "%s", tpot ? "TPOT (ms)" : "TTFT, p90 estimate (s)");
		snprintf(c->ylabel, sizeof c->ylabel, "output tokens/s per GPU");
		c->logx = true;
		static const char *const titles[4] = {"co-located", "disaggregated (P/D)", "the plan's front", "SLO"};
		double ymax = 0;
		const struct plan_point *f = tpot ? r->front_tpot : r->front_ttft;
		int64_t nf = tpot ? r->n_front_tpot : r->n_front_ttft;
		for (int64_t i = 0; i < nf; i++)
			ymax = fmax(ymax, f[i].y);
		static const int order[4] = {2, 0, 1, 3}; /* the plan's front under the others */
		for (int o = 0; o < 4; o++) {
			int s = order[o];
			if ((rc = points(sp, r, s, tpot, ymax * 1.05, &pts[k][s])) < 0) {
				err_set(e, dir, 0, 0, "out of memory");
				goto out;
			}
			if (!pts[k][s].n || (s == 3 && !(ymax > 0)))
				continue;
			struct chart_xy_series *se = &c->series[c->n_series++];
			snprintf(se->title, sizeof se->title, "%s", titles[s]);
			se->x = pts[k][s].x;
			se->y = pts[k][s].y;
			se->n = pts[k][s].n;
			se->color = s == 3 ? -1 : s == 2 ? 3 : s;
			se->steps = s < 3;
			se->dashed = s == 3;
		}
	}
	if ((rc = chart_render_xy(dir, gnuplot, NULL, 0, NULL, 0, ch, 2, oo, co, e)) < 0)
		goto out;
	char path[4096];
	snprintf(path, sizeof path, "%s/plan.md", dir);
	if ((rc = outfile_open(&of, path, oo, e)) < 0)
		goto out;
	FILE *f = outfile_stream(&of, e);
	if (!f) {
		rc = -ENOMEM;
		goto out;
	}
	fprintf(f, "# k3sim plan: %s\n\n", sp->model->name);
	fprintf(f, "Prompt %lld tokens, output %lld, prefix hit %.0f %%; SLOs TTFT <= %g s, TPOT <= %g ms (goodput: "
		   "requests meeting both, at %.0f %% attainment when served).\n\n",
		(long long)sp->isl, (long long)sp->osl, sp->prefix_hit * 100, sp->slo_ttft_s, sp->slo_tpot_s * 1e3,
		sp->attainment * 100);
	fprintf(f, "%lld layouts: %lld pruned before costing (%lld by layout, %lld by memory of weights), %lld "
		   "candidates evaluated with the step model (%lld miss an SLO), %lld P/D deployments, %d deployments "
		   "served (%lld serving runs).\n\n",
		(long long)r->units, (long long)r->units_pruned, (long long)r->pruned_layout,
		(long long)(r->units_pruned - r->pruned_layout), (long long)r->evaluated, (long long)r->slo_missed,
		(long long)r->n_pd, r->n_served, (long long)r->serve_runs);
	fprintf(f, "## Recommendation per GPU budget\n\n| GPUs | deployment | goodput tok/s | per GPU | served | why |\n"
		   "| ---: | --- | ---: | ---: | :---: | --- |\n");
	for (int i = 0; i < r->n_recs; i++) {
		const struct plan_rec *x = &r->recs[i];
		char what[192] = "none", rep[32] = "";
		if (x->found)
			plan_describe(sp, r, x->pd, x->ref, what, sizeof what);
		if (x->found && x->replicas > 1)
			snprintf(rep, sizeof rep, "%lld copies of: ", (long long)x->replicas);
		fprintf(f, "| %lld | %s%s | %.5g | %.5g | %s | %s |\n", (long long)x->budget_gpus, rep, what,
			x->goodput_tokens_per_s, x->goodput_tokens_per_s_per_gpu,
			x->served ? "yes" : "no", x->why);
	}
	fprintf(f, "\nCo-located vs disaggregated (best goodput per GPU of each, served where served):\n\n"
		   "| GPUs | co-located | P/D |\n| ---: | ---: | ---: |\n");
	for (int i = 0; i < r->n_recs; i++)
		fprintf(f, "| %lld | %.5g | %.5g |\n", (long long)r->recs[i].budget_gpus, r->recs[i].coloc_goodput,
			r->recs[i].pd_goodput);
	for (int i = 0; i < r->n_recs; i++) {
		const struct plan_rec *x = &r->recs[i];
		fprintf(f, "\n### Why the runners-up lost on %lld GPUs\n\n", (long long)x->budget_gpus);
		for (int k = 0; k < x->n_losers; k++)
			fprintf(f, "%d. %s: %s\n", k + 1, x->losers[k].what, x->losers[k].why);
	}
	fprintf(f, "\n## Served short list\n\n| deployment | GPUs | first-pass rate req/s | served rate req/s | goodput tok/s/GPU "
		   "| attainment | TTFT p90 | TPOT p90 | note |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
	for (int i = 0; i < r->n_served; i++) {
		const struct plan_served *v = &r->served[i];
		char what[192];
		plan_describe(sp, r, v->pd, v->cand, what, sizeof what);
		fprintf(f, "| %s | %lld | %.4g | %.4g | %.5g | %.3f | %.3g s | %.3g ms | %s |\n", what, (long long)v->gpus,
			v->est_rate_per_s, v->rate_per_s, v->goodput_tokens_per_s_per_gpu, v->attainment, v->ttft_p90_s,
			v->tpot_p90_s * 1e3, v->reason);
	}
	for (int k = 0; k < 2; k++) {
		bool tpot = k == 0;
		const struct plan_point *p = tpot ? r->front_tpot : r->front_ttft;
		int64_t n = tpot ? r->n_front_tpot : r->n_front_ttft;
		fprintf(f, "\n## Pareto front: tokens/s per GPU vs %s\n\n![front](front-%s.svg)\n\n| %s | tok/s/GPU | deployment |\n"
			   "| ---: | ---: | --- |\n",
			tpot ? "TPOT" : "TTFT", tpot ? "tpot" : "ttft", tpot ? "TPOT" : "TTFT");
		for (int64_t i = 0; i < n; i++) {
			char what[192];
			plan_describe(sp, r, p[i].pd, p[i].ref, what, sizeof what);
			fprintf(f, "| %.4g %s | %.5g | %s |\n", tpot ? p[i].x_s * 1e3 : p[i].x_s, tpot ? "ms" : "s", p[i].y,
				what);
		}
	}
	fprintf(f, "\n## Inputs\n\n```\n%s```\n", sp->description);
	if (!co->rendered)
		fprintf(f, "\nCharts not rendered: %s\n", co->reason);
	rc = outfile_commit(&of, e);
out:
	if (rc < 0)
		outfile_abort(&of);
	for (int k = 0; k < 2; k++)
		for (int s = 0; s < 4; s++) {
			free(pts[k][s].x);
			free(pts[k][s].y);
		}
	return rc;
}
