#include "reports/calib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calib/fit.h"
#include "calib/runs.h"
#include "reports/chart.h"
#include "reports/fmt.h"
#include "util/jsonw.h"
#include "util/numfmt.h"
#include "util/outfile.h"
#include "util/units.h"

/* Calibration tables keep three decimals of milliseconds ("40.662 ms"). */
static const char *units_time_ms3(double s, char *buf, size_t n)
{
	return units_time(s, 3, buf, n);
}

/* Calibration reports (issue 15: calib/ computes, reports/ renders): Markdown, JSON and the gnuplot
 * charts of a validation. */

static const char *pct(double x, char *buf, size_t n)
{
	if (isnan(x))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f", x);
	return buf;
}

static void md_class_row(FILE *f, const char *label, int points, const struct calib_errors *all,
                         const struct calib_errors *held, const struct calib_noise *noise)
{
	char a[32], b[32], c[32], d[32], g[32], h[32], k[32];
	fprintf(f, "| %s | %d | %d | %s | %s | %s | %s | %s | %d | %s | %s |\n", label, points, held->n,
	        pct(all->med_abs_pct, a, 32), pct(all->p90_abs_pct, b, 32), pct(held->med_abs_pct, c, 32),
	        pct(held->p90_abs_pct, d, 32), pct(all->med_signed_pct, g, 32), noise->n,
	        pct(noise->med_pct, h, 32), pct(noise->p90_pct, k, 32));
}

/* "median / p90" of e, or "-" */
static const char *pair(const struct calib_errors *e, char *buf, size_t n)
{
	if (!e || e->n == 0 || isnan(e->med_abs_pct))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f / %.2f", e->med_abs_pct, e->p90_abs_pct);
	return buf;
}

static void md_runs(FILE *f, const struct calib_points *pts)
{
	fprintf(f, "## Runs\n\n%d run%s; a point is the median over runs of each run's median, its spread "
	           "(max - min) / median over them.\n\n",
	        pts->n_runs, pts->n_runs == 1 ? "" : "s");
	fprintf(f, "| run | inputs | device | uuid | SM clock |\n| --- | --- | --- | --- | ---: |\n");
	for (int r = 0; r < pts->n_runs; r++) {
		const struct calib_run *run = &pts->runs[r];
		fprintf(f, "| `");
		fmt_md_cell(f, run->name);
		fprintf(f, "` | ");
		for (int i = 0, k = 0; i < pts->n_sources; i++)
			if (pts->source_run[i] == r) {
				fprintf(f, "%s`", k++ ? ", " : "");
				fmt_md_cell(f, pts->sources[i]);
				fputc('`', f);
			}
		fprintf(f, " | ");
		fmt_md_cell(f, run->have_info && run->info.device[0] ? run->info.device : "-");
		fprintf(f, " | ");
		fmt_md_cell(f, run->have_info && run->info.uuid[0] ? run->info.uuid : "-");
		if (run->have_info && run->info.sm_clock_hz > 0)
			fprintf(f, " | %.0f MHz |\n", (double)run->info.sm_clock_hz / 1e6);
		else
			fprintf(f, " | - |\n");
	}
	fputc('\n', f);
}

static void md_xval(FILE *f, const struct calib_validation *v, const struct calib_xval *x)
{
	char a[48], b[48], c[48], d[48], g[48];
	fprintf(f,
	        "## Cross-validation\n\n"
	        "Each fit is `k3sim calibrate`'s, refitted with data held out and scored on what it never "
	        "saw (absolute %% error, median / p90). **By shape**: the protocol's held-out points (the "
	        "table above). **By run**: leave one run out, fit to the other runs' medians, scored on "
	        "every op of the held-out run that another run measured too; **run floor**: the same "
	        "points predicted by the other runs' median itself, what a model fitted to them can hardly "
	        "beat. **By GEMM shape**: leave one dense GEMM shape (n, k) out, scored at every m and "
	        "dtype. **Run spread**: (max - min) / median of the per-run medians, over the points "
	        "two runs or more measured. %d fits.\n\n",
	        x->fits);
	fprintf(f, "| class | by shape | by run | run floor | by GEMM shape | run spread |\n"
	           "| --- | ---: | ---: | ---: | ---: | ---: |\n");
	for (int c0 = 0; c0 < v->n_cls; c0++) {
		const struct calib_class_stats *s = &v->cls[c0];
		const struct calib_xval_class *xc = calib_xval_class(x, s->label);
		if (s->noise.n && !isnan(s->noise.med_pct))
			snprintf(g, sizeof g, "%.2f / %.2f", s->noise.med_pct, s->noise.p90_pct);
		else
			snprintf(g, sizeof g, "-");
		fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", s->label, pair(&s->held_out, a, sizeof a),
		        pair(xc ? &xc->by_run : NULL, b, sizeof b), pair(xc ? &xc->run_floor : NULL, c, sizeof c),
		        pair(xc ? &xc->by_gemm_shape : NULL, d, sizeof d), g);
	}
	if (x->n_runs) {
		fprintf(f, "\n### Held out by run\n\n| held-out run | points | unpaired | median abs %% | p90 abs %% "
		           "| floor median %% | floor p90 %% | bias %% |\n"
		           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
		for (int r = 0; r < x->n_runs; r++) {
			const struct calib_xval_run *xr = &x->runs[r];
			fprintf(f, "| `");
			fmt_md_cell(f, xr->name);
			if (!xr->fitted) {
				fprintf(f, "` | not fitted: ");
				fmt_md_cell(f, xr->note);
				fprintf(f, " | | | | | | |\n");
				continue;
			}
			fprintf(f, "` | %d | %d | %s | %s | %s | %s | %s |\n", xr->err.n, xr->unpaired,
			        pct(xr->err.med_abs_pct, a, 32), pct(xr->err.p90_abs_pct, b, 32),
			        pct(xr->floor.med_abs_pct, c, 32), pct(xr->floor.p90_abs_pct, d, 32),
			        pct(xr->err.med_signed_pct, g, 32));
		}
	}
	if (x->n_shapes) {
		fprintf(f, "\n### Held out by GEMM shape\n\n| shape | points | median abs %% | p90 abs %% | max "
		           "abs %% | bias %% |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
		for (int i = 0; i < x->n_shapes; i++) {
			const struct calib_xval_shape *xs = &x->shapes[i];
			fprintf(f, "| n=%" PRId64 " k=%" PRId64 " | ", xs->n, xs->k);
			if (!xs->fitted) {
				fprintf(f, "not fitted | | | | |\n");
				continue;
			}
			fprintf(f, "%d | %s | %s | %s | %s |\n", xs->err.n, pct(xs->err.med_abs_pct, a, 32),
			        pct(xs->err.p90_abs_pct, b, 32), pct(xs->err.max_abs_pct, c, 32),
			        pct(xs->err.med_signed_pct, d, 32));
		}
	}
	fputc('\n', f);
}

/* One row of the unmatched or skipped table: name, reason or rule, count, GPU time. */
static void unmatched_row(FILE *f, const struct calib_unmatched *u)
{
	char t[32];
	fprintf(f, "| `");
	fmt_md_cell(f, u->name);
	fprintf(f, "` | ");
	fmt_md_cell(f, u->reason);
	fprintf(f, " | %" PRId64 " | %s |\n", u->count, units_time_ms3((double)u->gpu_ns * 1e-9, t, sizeof t));
}

int calib_report_markdown(FILE *f, const struct calib_report_in *in, struct err *e)
{
	const struct calib_validation *v = in->v;
	const struct calib_points *pts = v->pts;
	const struct calib_match *m = in->match;
	char t1[32], t2[32];
	fprintf(f, "# %s\n\n", in->title ? in->title : "Predicted vs measured");
	fprintf(f, "- inputs: `%s`\n- hardware: `%s`%s\n", in->database ? in->database : "?", v->hw_name,
	        v->hw_calibrated ? " (calibrated)" : " (datasheet)");
	if (m) {
		fprintf(f,
		        "- GPU work read: %" PRId64 " kernels, %" PRId64 " memcpys, %" PRId64
		        " memsets; matched %" PRId64 " by NVTX ranges, %" PRId64 " by name rules; %" PRId64
		        " skipped by rules; %" PRId64 " unmatched\n",
		        m->kernels, m->memcpys, m->memsets, m->matched_nvtx, m->matched_rules, m->skipped,
		        m->unmatched_total);
		if (m->matched_framework)
			fprintf(f, "- matched by framework records (shapes from emit_nvtx or torch.profiler "
			           "record_shapes, trace/rules/aten.yaml): %" PRId64 " of them\n",
			        m->matched_framework);
		fprintf(f,
		        "- NVTX ranges: %" PRId64 " (%" PRId64 " k3sim op ranges, %" PRId64
		        " of them without GPU work, %zu"
		        " invalid op texts)\n",
		        m->ranges, m->k3sim_ranges, m->empty_ranges, m->n_bad);
		fprintf(f, "- samples: %zu (one per range instance or rule group), %zu distinct ops\n",
		        m->n_samples, m->n_specs);
	}
	fprintf(f,
	        "- points: %zu (one per distinct op: the median of its samples, over runs the median of "
	        "the per-run medians); %d held out by the protocol "
	        "(GEMM m and KDA decode b not a power of 4, copy sizes not a power of 2, ...)\n\n",
	        pts->n, v->held_out.n);
	fprintf(f,
	        "Measured: GPU time of each sample (kernel durations, no launch gaps). Predicted: the cost "
	        "model's device time of the op (sim_op_cost without launch latency). Error = (predicted - "
	        "measured) / measured. Percentiles interpolate linearly; bias is the median signed error "
	        "(positive: the model predicts too long).\n\n");
	fprintf(f, "## Error per op class\n\n");
	fprintf(f, "The noise floor beside the errors: over the points that two runs or more measured "
	           "(runs > 1), the run-to-run spread ((max - min) / median of the per-run medians).\n\n");
	fprintf(f, "| class | points | held out | median abs %% | p90 abs %% | held-out median abs %% | "
	           "held-out p90 abs %% | bias %% | runs > 1 | spread median %% | spread p90 %% |\n");
	fprintf(f, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (int c = 0; c < v->n_cls; c++)
		md_class_row(f, v->cls[c].label, v->cls[c].all.n, &v->cls[c].all, &v->cls[c].held_out,
		             &v->cls[c].noise);
	md_class_row(f, "all", v->all.n, &v->all, &v->held_out, &v->noise);
	fputc('\n', f);
	if (v->clock_mode == CALIB_CLOCK_MEASURED) {
		if (in->power_clock)
			fprintf(f, "## Clocks\n\nPredicted at the SM clock the preset's power-limit model gives each "
			           "op (sim/power.h: each capture's ops walked in time order from an idle GPU; no "
			           "reading used), not at the boost clock (%.0f MHz). Per class the mean clock, "
			           "weighted by measured time.\n\n",
			        v->boost_hz / 1e6);
		else
			fprintf(f, "## Clocks\n\nPredicted at the SM clock each capture recorded around the op's "
			           "samples (K3SIM_GPU_METRICS: the median of the readings inside a sample's span, "
			           "else the nearest; the median over the samples), not at the boost clock (%.0f "
			           "MHz): an input the prediction takes. Per class the mean clock, weighted by "
			           "measured time.\n\n",
			        v->boost_hz / 1e6);
		fprintf(f, "| class | clock MHz |\n| --- | ---: |\n");
		for (int c = 0; c < v->n_cls; c++)
			fprintf(f, "| %s | %.0f |\n", v->cls[c].label, v->cls[c].clock_hz / 1e6);
		fprintf(f, "| all | %.0f |\n\n", v->clock_hz_all / 1e6);
		if (v->without_clock && !in->power_clock)
			fprintf(f, "%d point%s had no clock reading (a CSV, or a trace without K3SIM_GPU_METRICS): "
			           "predicted at their regime's clock.\n\n",
			        v->without_clock, v->without_clock == 1 ? "" : "s");
		if (v->above_boost && !in->power_clock)
			fprintf(f, "%d point%s read above the preset's boost clock: predicted at the boost clock.\n\n",
			        v->above_boost, v->above_boost == 1 ? "" : "s");
	}
	if (in->xval)
		md_xval(f, v, in->xval);
	md_runs(f, pts);
	fprintf(f, "## Worst offenders\n\n");
	for (int c = 0; c < v->n_cls; c++) {
		const struct calib_class_stats *s = &v->cls[c];
		fprintf(f,
		        "### %s\n\n| op | measured | predicted | error %% | held out | samples |\n"
		        "| --- | ---: | ---: | ---: | :---: | ---: |\n",
		        s->label);
		for (int w = 0; w < s->n_worst && w < (in->top > 0 ? in->top : 5); w++) {
			int i = s->worst[w];
			const struct calib_point *p = &pts->p[i];
			char b[32];
			fprintf(f, "| `");
			fmt_md_cell(f, p->spec);
			fprintf(f, "` | %s | %s | %s | %s | %" PRId64 " |\n", units_time_ms3(p->measured_s, t1, 32),
			        units_time_ms3(v->predicted_s[i], t2, 32), pct(v->err_pct[i], b, 32),
			        p->held_out ? "yes" : "", p->samples);
		}
		fputc('\n', f);
	}
	fprintf(f, "## Plots\n\n");
	if (in->scatter_img && in->error_img)
		fprintf(f, "![predicted vs measured, log-log](%s)\n\n![error vs size](%s)\n\n",
		        in->scatter_img, in->error_img);
	else
		fprintf(f, "No plots: %s\n\n", in->plot_note ? in->plot_note : "not requested (give -o DIR)");
	if (m) {
		int listed = 0;
		fprintf(f, "## Unmatched GPU work\n\n");
		if (m->unmatched_total == 0)
			fprintf(f, "None: every kernel, memcpy and memset was matched to an op or skipped by "
			           "a rule.\n\n");
		else
			fprintf(f, "| name | reason | count | GPU time |\n| --- | --- | ---: | ---: |\n");
		for (size_t i = 0; i < m->n_unmatched; i++) {
			const struct calib_unmatched *u = &m->unmatched[i];
			if (u->skipped)
				continue;
			if (listed++ == 40) {
				fprintf(f, "| ... | more names: see --json | | |\n");
				break;
			}
			unmatched_row(f, u);
		}
		if (m->skipped) {
			fprintf(f, "\n## Skipped by rules\n\n| name | rule | count | GPU time |\n| --- | --- "
			           "| ---: | ---: |\n");
			for (size_t i = 0; i < m->n_unmatched; i++) {
				const struct calib_unmatched *u = &m->unmatched[i];
				if (!u->skipped)
					continue;
				unmatched_row(f, u);
			}
		}
		if (m->n_bad) {
			fprintf(f, "\n## Invalid k3sim ranges\n\n| range text | error | instances |\n| --- | "
			           "--- | ---: |\n");
			for (size_t i = 0; i < m->n_bad; i++) {
				fprintf(f, "| `");
				fmt_md_cell(f, m->bad[i].text);
				fprintf(f, "` | ");
				fmt_md_cell(f, m->bad[i].error);
				fprintf(f, " | %" PRId64 " |\n", m->bad[i].instances);
			}
		}
		fputc('\n', f);
	}
	if (ferror(f)) {
		err_set(e, NULL, 0, 0, "write failed");
		return -EIO;
	}
	return 0;
}

static void jpct(FILE *f, double x)
{
	util_json_double(f, x); /* full precision; null for NaN */
}

static void j_noise(FILE *f, const struct calib_noise *x)
{
	fprintf(f, "\"noise\": {\"n\": %d, \"median_pct\": ", x->n);
	jpct(f, x->med_pct);
	fprintf(f, ", \"p90_pct\": ");
	jpct(f, x->p90_pct);
	fprintf(f, ", \"max_pct\": ");
	jpct(f, x->max_pct);
	fputc('}', f);
}

static void j_errors(FILE *f, const char *key, const struct calib_errors *x);

static void j_runs(FILE *f, const struct calib_points *pts)
{
	fprintf(f, ",\n  \"runs\": [");
	for (int r = 0; r < pts->n_runs; r++) {
		const struct calib_run *run = &pts->runs[r];
		fprintf(f, "%s\n    {\"name\": ", r ? "," : "");
		util_json_str(f, run->name);
		fprintf(f, ", \"inputs\": [");
		for (int i = 0, k = 0; i < pts->n_sources; i++)
			if (pts->source_run[i] == r) {
				fprintf(f, "%s", k++ ? ", " : "");
				util_json_str(f, pts->sources[i]);
			}
		fprintf(f, "], \"device\": ");
		if (run->have_info)
			util_json_str(f, run->info.device);
		else
			fputs("null", f);
		fprintf(f, ", \"uuid\": ");
		if (run->have_info && run->info.uuid[0])
			util_json_str(f, run->info.uuid);
		else
			fputs("null", f);
		fprintf(f, ", \"nvidia_driver\": ");
		if (run->have_info && run->info.driver[0])
			util_json_str(f, run->info.driver);
		else
			fputs("null", f);
		if (run->have_info && run->info.sm_clock_hz > 0) {
			fprintf(f, ", \"sm_clock_mhz\": ");
			util_json_double(f, (double)run->info.sm_clock_hz / 1e6);
			fputc('}', f);
		} else
			fprintf(f, ", \"sm_clock_mhz\": null}");
	}
	fprintf(f, "\n  ]");
}

static void j_xval(FILE *f, const struct calib_xval *x)
{
	fprintf(f, ",\n  \"xval\": ");
	if (!x) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"fits\": %d,\n    \"classes\": [", x->fits);
	for (int c = 0; c <= x->n_cls; c++) {
		const struct calib_xval_class *xc = c < x->n_cls ? &x->cls[c] : &x->all;
		fprintf(f, "%s\n      {\"class\": ", c ? "," : "");
		util_json_str(f, xc->label);
		fprintf(f, ", ");
		j_errors(f, "by_run", &xc->by_run);
		fprintf(f, ", ");
		j_errors(f, "run_floor", &xc->run_floor);
		fprintf(f, ", ");
		j_errors(f, "by_gemm_shape", &xc->by_gemm_shape);
		fputc('}', f);
	}
	fprintf(f, "\n    ],\n    \"runs\": [");
	for (int r = 0; r < x->n_runs; r++) {
		const struct calib_xval_run *xr = &x->runs[r];
		fprintf(f, "%s\n      {\"run\": ", r ? "," : "");
		util_json_str(f, xr->name);
		fprintf(f, ", \"fitted\": %s, \"note\": ", xr->fitted ? "true" : "false");
		util_json_str(f, xr->note);
		fprintf(f, ", \"unpaired\": %d, ", xr->unpaired);
		j_errors(f, "errors", &xr->err);
		fprintf(f, ", ");
		j_errors(f, "floor", &xr->floor);
		fputc('}', f);
	}
	fprintf(f, "\n    ],\n    \"gemm_shapes\": [");
	for (int i = 0; i < x->n_shapes; i++) {
		const struct calib_xval_shape *xs = &x->shapes[i];
		fprintf(f, "%s\n      {\"n\": %" PRId64 ", \"k\": %" PRId64 ", \"fitted\": %s, ", i ? "," : "",
		        xs->n, xs->k, xs->fitted ? "true" : "false");
		j_errors(f, "errors", &xs->err);
		fputc('}', f);
	}
	fprintf(f, "\n    ]}");
}

static void j_errors(FILE *f, const char *key, const struct calib_errors *x)
{
	fprintf(f, "\"%s\": {\"n\": %d, \"median_abs_pct\": ", key, x->n);
	jpct(f, x->med_abs_pct);
	fprintf(f, ", \"p90_abs_pct\": ");
	jpct(f, x->p90_abs_pct);
	fprintf(f, ", \"max_abs_pct\": ");
	jpct(f, x->max_abs_pct);
	fprintf(f, ", \"median_signed_pct\": ");
	jpct(f, x->med_signed_pct);
	fputc('}', f);
}

int calib_report_json(FILE *f, const struct calib_report_in *in, struct err *e)
{
	const struct calib_validation *v = in->v;
	const struct calib_points *pts = v->pts;
	const struct calib_match *m = in->match;
	fprintf(f, "{\n  \"inputs\": ");
	util_json_str(f, in->database);
	fprintf(f, ",\n  \"hw\": ");
	util_json_str(f, v->hw_name);
	fprintf(f, ",\n  \"hw_calibrated\": %s,\n  \"points\": %zu,\n  ", v->hw_calibrated ? "true" : "false",
	        pts->n);
	j_errors(f, "all", &v->all);
	fprintf(f, ",\n  ");
	j_errors(f, "held_out", &v->held_out);
	fprintf(f, ",\n  ");
	j_noise(f, &v->noise);
	j_runs(f, pts);
	j_xval(f, in->xval);
	if (v->clock_mode == CALIB_CLOCK_MEASURED) {
		fprintf(f, ",\n  \"clock\": \"%s\", \"clock_mhz\": ", in->power_clock ? "power" : "measured");
		util_json_double(f, v->clock_hz_all / 1e6);
		fprintf(f, ", \"boost_mhz\": ");
		util_json_double(f, v->boost_hz / 1e6);
		fprintf(f, ", \"points_without_clock\": %d, \"points_above_boost\": %d", v->without_clock,
		        v->above_boost);
	}
	fprintf(f, ",\n  \"classes\": [");
	for (int c = 0; c < v->n_cls; c++) {
		const struct calib_class_stats *s = &v->cls[c];
		fprintf(f, "%s\n    {\"class\": ", c ? "," : "");
		util_json_str(f, s->label);
		fprintf(f, ", ");
		j_errors(f, "all", &s->all);
		fprintf(f, ", ");
		j_errors(f, "held_out", &s->held_out);
		fprintf(f, ", ");
		j_errors(f, "train", &s->train);
		fprintf(f, ", ");
		j_noise(f, &s->noise);
		if (v->clock_mode == CALIB_CLOCK_MEASURED) {
			fprintf(f, ", \"clock_mhz\": ");
			util_json_double(f, s->clock_hz / 1e6);
		}
		fprintf(f, ",\n     \"worst\": [");
		for (int w = 0; w < s->n_worst && w < (in->top > 0 ? in->top : 5); w++) {
			int i = s->worst[w];
			fprintf(f, "%s{\"op\": ", w ? ", " : "");
			util_json_str(f, pts->p[i].spec);
			fprintf(f, ", \"measured_s\": ");
			util_json_double(f, pts->p[i].measured_s);
			fprintf(f, ", \"predicted_s\": ");
			util_json_double(f, v->predicted_s[i]);
			fprintf(f, ", \"error_pct\": ");
			jpct(f, v->err_pct[i]);
			fprintf(f, ", \"held_out\": %s, \"samples\": %" PRId64 "}",
			        pts->p[i].held_out ? "true" : "false", pts->p[i].samples);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ],\n  \"per_point\": [");
	for (size_t i = 0; i < pts->n; i++) {
		fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
		util_json_str(f, pts->p[i].spec);
		fprintf(f, ", \"class\": ");
		util_json_str(f, pts->p[i].label);
		fprintf(f, ", \"measured_s\": ");
		util_json_double(f, pts->p[i].measured_s);
		fprintf(f, ", \"predicted_s\": ");
		util_json_double(f, v->predicted_s[i]);
		fprintf(f, ", \"error_pct\": ");
		jpct(f, v->err_pct[i]);
		fprintf(f, ", \"held_out\": %s, \"samples\": %" PRId64 ", \"runs\": %d",
		        pts->p[i].held_out ? "true" : "false", pts->p[i].samples, pts->p[i].runs);
		if (v->clock_mode == CALIB_CLOCK_MEASURED) {
			fprintf(f, ", \"clock_mhz\": ");
			util_json_double(f, v->clock_hz[i] / 1e6);
			if (!in->power_clock)
				fprintf(f, ", \"measured_clock\": %s", pts->p[i].sm_clock_hz > 0 ? "true" : "false");
		}
		if (pts->p[i].runs > 1) {
			fprintf(f, ", \"run_min_s\": ");
			util_json_double(f, pts->p[i].run_min_s);
			fprintf(f, ", \"run_max_s\": ");
			util_json_double(f, pts->p[i].run_max_s);
			fprintf(f, ", \"spread_pct\": ");
			util_json_double(f, pts->p[i].spread * 100.0);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"plots\": ");
	if (in->scatter_img && in->error_img) {
		fprintf(f, "{\"scatter\": ");
		util_json_str(f, in->scatter_img);
		fprintf(f, ", \"error\": ");
		util_json_str(f, in->error_img);
		fputc('}', f);
	} else {
		fprintf(f, "null, \"plot_note\": ");
		util_json_str(f, in->plot_note ? in->plot_note : "not requested");
	}
	if (m) {
		fprintf(f,
		        ",\n  \"match\": {\"kernels\": %" PRId64 ", \"memcpys\": %" PRId64
		        ", \"memsets\": %" PRId64 ", \"matched_nvtx\": %" PRId64
		        ", \"matched_rules\": %" PRId64 ", \"skipped\": %" PRId64 ", \"unmatched\": %" PRId64
		        ", \"ranges\": %" PRId64 ", \"k3sim_ranges\": %" PRId64 ", \"empty_ranges\": %" PRId64
		        ", \"invalid_ranges\": %zu, \"samples\": %zu, \"ops\": %zu}",
		        m->kernels, m->memcpys, m->memsets, m->matched_nvtx, m->matched_rules, m->skipped,
		        m->unmatched_total, m->ranges, m->k3sim_ranges, m->empty_ranges, m->n_bad,
		        m->n_samples, m->n_specs);
		if (m->matched_framework) /* only then: older reports stay byte for byte */
			fprintf(f, ",\n  \"matched_framework\": %" PRId64, m->matched_framework);
		fprintf(f, ",\n  \"unmatched\": [");
		for (size_t i = 0; i < m->n_unmatched; i++) {
			const struct calib_unmatched *u = &m->unmatched[i];
			fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
			util_json_str(f, u->name);
			fprintf(f, ", \"reason\": ");
			util_json_str(f, u->reason);
			fprintf(f, ", \"skipped\": %s, \"count\": %" PRId64 ", \"gpu_ns\": %" PRId64 "}",
			        u->skipped ? "true" : "false", u->count, u->gpu_ns);
		}
		fprintf(f, "\n  ],\n  \"invalid_ranges\": [");
		for (size_t i = 0; i < m->n_bad; i++) {
			fprintf(f, "%s\n    {\"text\": ", i ? "," : "");
			util_json_str(f, m->bad[i].text);
			fprintf(f, ", \"error\": ");
			util_json_str(f, m->bad[i].error);
			fprintf(f, ", \"instances\": %" PRId64 "}", m->bad[i].instances);
		}
		fprintf(f, "\n  ]");
	}
	fprintf(f, "\n}\n");
	if (ferror(f)) {
		err_set(e, NULL, 0, 0, "write failed");
		return -EIO;
	}
	return 0;
}

/* ---- plots ---- */

/* The charts' gnuplot script, drawing into scatter and error. */
static void plot_script(FILE *f, const struct calib_validation *v, const char *prefix, const char *dat,
                        const char *scatter, const char *error)
{
	fprintf(f,
	        "# gnuplot %s.gp  (k3sim trace validate)\nset terminal pngcairo size 1100,780 background "
	        "rgb 'white' font 'DejaVu Sans,11'\n"
	        "set termoption noenhanced\nset key top left\nset grid\n",
	        prefix);
	fprintf(f,
	        "set output '%s'\nset logscale xy\nset format x '1e%%L'\nset format y '1e%%L'\n"
	        "set xlabel 'measured (s)'\nset ylabel 'predicted (s)'\n"
	        "set title 'predicted vs measured (%s; filled: held out, open: training)'\n",
	        scatter, v->hw_name);
	fprintf(f, "plot x title 'exact' lw 1 lc rgb '#888888', 1.15*x title '+-15%%' dt 2 lc rgb '#bbbbbb', "
	           "x/1.15 notitle dt 2 lc rgb '#bbbbbb'");
	for (int c = 0; c < v->n_cls; c++)
		fprintf(
		    f,
		    ", '%s' index %d using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc %d title '%s', "
		    "'' index %d using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc %d notitle",
		    dat, c, c + 1, v->cls[c].label, c, c + 1);
	fprintf(f,
	        "\nset output '%s'\nunset logscale y\nset format y '%%g'\nset logscale x\n"
	        "set xlabel 'size (GEMMs, attention, KDA prefill: FLOPs; copies, KDA decode, collectives: "
	        "bytes)'\n"
	        "set ylabel 'error (%%)'\nset title 'error vs size (%s; filled: held out, open: training)'\n",
	        error, v->hw_name);
	fprintf(
	    f,
	    "plot 0 notitle lc rgb '#888888', 5 title '+-5%%' dt 2 lc rgb '#bbbbbb', -5 notitle dt 2 lc rgb "
	    "'#bbbbbb'");
	for (int c = 0; c < v->n_cls; c++)
		fprintf(
		    f,
		    ", '%s' index %d using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc %d title '%s', "
		    "'' index %d using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc %d notitle",
		    dat, c, c + 1, v->cls[c].label, c, c + 1);
	fprintf(f, "\n");
}

/* Runs gnuplot on script; 0 when it succeeded, 1 (note says why) when it did not. */
static int run_plot(const char *gnuplot, const char *script, const char *prefix, char *note, size_t n)
{
	char why[256];
	int rc = chart_run_gnuplot(NULL, gnuplot && *gnuplot ? gnuplot : "gnuplot", script, NULL, why, sizeof why);
	if (rc == 0)
		return 0;
	if (rc < 0)
		snprintf(note, n,
		         "gnuplot could not be run (%s: %s); the data (%s.dat) and script (%s.gp) are "
		         "written: install gnuplot and run 'gnuplot %s.gp' there",
		         gnuplot && *gnuplot ? gnuplot : "gnuplot", strerror(-rc), prefix, prefix, prefix);
	else
		snprintf(note, n, "%s (%s); the data (%s.dat) and script (%s.gp) are written",
		         rc == 127 ? "gnuplot is not installed" : "gnuplot failed", gnuplot && *gnuplot ? gnuplot : "gnuplot",
		         prefix, prefix);
	return 1;
}

/* PNG, not SVG: a scatter of thousands of points is ~0.75 MB of SVG per chart and ~0.1 MB of PNG */
const char *const calib_plot_files[] = {".dat", ".gp", "-scatter.png", "-error.png", NULL};

int calib_plots(const struct calib_validation *v, const char *dir, const char *prefix, const char *gnuplot,
                const struct outfile_opts *oo, char *note, size_t n, struct err *e)
{
	const struct calib_points *pts = v->pts;
	char dat[4096], gp[4096], scatter[4096], error[4096];
	if (strchr(dir, '\'') || strchr(prefix, '\'')) {
		snprintf(note, n,
		         "the output path contains a single quote, which gnuplot scripts cannot hold");
		return 1;
	}
	snprintf(dat, sizeof dat, "%s/%s.dat", dir, prefix);
	snprintf(gp, sizeof gp, "%s/%s.gp", dir, prefix);
	snprintf(scatter, sizeof scatter, "%s/%s-scatter.png", dir, prefix);
	snprintf(error, sizeof error, "%s/%s-error.png", dir, prefix);
	int orc;
	if ((orc = outfile_check(scatter, oo, e)) < 0 || (orc = outfile_check(error, oo, e)) < 0)
		return orc;
	struct outfile of;
	if ((orc = outfile_open(&of, dat, oo, e)) < 0)
		return orc;
	FILE *f = outfile_stream(&of, e);
	if (!f) {
		outfile_abort(&of);
		return -ENOMEM;
	}
	fprintf(f, "# measured_s predicted_s size error_pct held_out   (one block per class)\n");
	for (int c = 0; c < v->n_cls; c++) {
		fprintf(f, "# %s\n", v->cls[c].label);
		for (size_t i = 0; i < pts->n; i++)
			if (strcmp(pts->p[i].label, v->cls[c].label) == 0)
				fprintf(f, "%.6g %.6g %.6g %.4f %d\n", pts->p[i].measured_s,
				        v->predicted_s[i], pts->p[i].size, v->err_pct[i],
				        pts->p[i].held_out ? 1 : 0);
		fprintf(f, "\n\n");
	}
	if ((orc = outfile_commit(&of, e)) < 0)
		return orc;
	if ((orc = outfile_open(&of, gp, oo, e)) < 0)
		return orc;
	if (!(f = outfile_stream(&of, e))) {
		outfile_abort(&of);
		return -ENOMEM;
	}
	plot_script(f, v, prefix, dat, scatter, error);
	if ((orc = outfile_commit(&of, e)) < 0)
		return orc;
	/* gnuplot draws into the charts' temporaries (util/outfile.h), from a script that lives only
	 * as a temporary beside the .gp: the charts replace the old ones only when both were made. */
	struct outfile *outs = calloc(3, sizeof *outs);
	if (!outs) {
		err_set(e, dir, 0, 0, "out of memory");
		return -ENOMEM;
	}
	struct outfile_opts replace = {0};
	if (oo)
		replace = *oo;
	replace.force = true;
	int rc = 0;
	if ((rc = outfile_open(&outs[0], scatter, oo, e)) < 0 ||
	    (rc = outfile_open(&outs[1], error, oo, e)) < 0 ||
	    (rc = outfile_open(&outs[2], gp, &replace, e)) < 0)
		goto out;
	if (!(f = outfile_stream(&outs[2], e))) {
		rc = -ENOMEM;
		goto out;
	}
	plot_script(f, v, prefix, dat, outfile_tmp_path(&outs[0]), outfile_tmp_path(&outs[1]));
	if (fflush(f) != 0 || ferror(f)) {
		err_set(e, gp, 0, 0, "write failed");
		rc = -EIO;
		goto out;
	}
	rc = run_plot(gnuplot, outfile_tmp_path(&outs[2]), prefix, note, n);
	if (rc == 0) {
		struct stat st0, st1;
		if (stat(outfile_tmp_path(&outs[0]), &st0) < 0 || st0.st_size == 0 ||
		    stat(outfile_tmp_path(&outs[1]), &st1) < 0 || st1.st_size == 0) {
			snprintf(note, n, "gnuplot wrote no charts; the data (%s.dat) and script (%s.gp) are written",
			         prefix, prefix);
			rc = 1;
		}
	}
	if (rc == 0 && ((rc = outfile_commit(&outs[0], e)) < 0 || (rc = outfile_commit(&outs[1], e)) < 0))
		goto out;
out:
	for (int i = 0; i < 3; i++)
		outfile_abort(&outs[i]);
	free(outs);
	return rc;
}
