#include "calib/validate.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "calib/fit.h"
#include "util/outfile.h"

extern char **environ;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (numpy's default); v is sorted. */
static double percentile(const double *v, int n, double q)
{
	if (n <= 0)
		return NAN;
	double pos = q / 100.0 * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : n - 1;
	return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

static void errors_of(const double *err, const int *idx, int n, double *tmp, struct calib_errors *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n == 0) {
		out->med_abs_pct = out->p90_abs_pct = out->max_abs_pct = out->med_signed_pct = NAN;
		return;
	}
	for (int i = 0; i < n; i++)
		tmp[i] = err[idx[i]];
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
	out->med_signed_pct = percentile(tmp, n, 50);
	for (int i = 0; i < n; i++)
		tmp[i] = fabs(err[idx[i]]);
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
	out->med_abs_pct = percentile(tmp, n, 50);
	out->p90_abs_pct = percentile(tmp, n, 90);
	out->max_abs_pct = tmp[n - 1];
}

int calib_validate(struct calib_validation *v, const struct calib_points *pts, const struct hw *hw,
                   struct err *e)
{
	memset(v, 0, sizeof *v);
	size_t n = pts->n ? pts->n : 1;
	int *idx = malloc(n * sizeof *idx), *held = malloc(n * sizeof *held),
	    *train = malloc(n * sizeof *train);
	double *tmp = malloc(n * sizeof *tmp);
	v->predicted_s = malloc(n * sizeof *v->predicted_s);
	v->err_pct = malloc(n * sizeof *v->err_pct);
	int rc = 0;
	if (!idx || !held || !train || !tmp || !v->predicted_s || !v->err_pct) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	struct hw *dev = malloc(sizeof *dev);
	if (!dev) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	calib_device_hw(dev, hw);
	v->pts = pts;
	snprintf(v->hw_name, sizeof v->hw_name, "%s", hw->name);
	v->hw_calibrated = hw->calibrated;
	for (size_t i = 0; i < pts->n; i++) {
		v->predicted_s[i] = calib_predict_s(dev, &pts->p[i]);
		v->err_pct[i] = (v->predicted_s[i] - pts->p[i].measured_s) / pts->p[i].measured_s * 100.0;
	}
	free(dev);
	/* classes in order of first appearance */
	for (size_t i = 0; i < pts->n; i++) {
		int c = 0;
		while (c < v->n_cls && strcmp(v->cls[c].label, pts->p[i].label) != 0)
			c++;
		if (c == v->n_cls) {
			if (v->n_cls == CALIB_CLASSES_MAX)
				continue;
			snprintf(v->cls[c].label, sizeof v->cls[c].label, "%s", pts->p[i].label);
			v->n_cls++;
		}
	}
	int na = 0, nh = 0;
	for (int c = 0; c < v->n_cls; c++) {
		struct calib_class_stats *s = &v->cls[c];
		int ni = 0, nhc = 0, ntc = 0;
		for (size_t i = 0; i < pts->n; i++) {
			if (strcmp(pts->p[i].label, s->label) != 0)
				continue;
			idx[ni++] = (int)i;
			if (pts->p[i].held_out)
				held[nhc++] = (int)i;
			else
				train[ntc++] = (int)i;
		}
		errors_of(v->err_pct, idx, ni, tmp, &s->all);
		errors_of(v->err_pct, held, nhc, tmp, &s->held_out);
		errors_of(v->err_pct, train, ntc, tmp, &s->train);
		/* worst offenders: a partial selection by |error| */
		for (int w = 0; w < CALIB_WORST_MAX && w < ni; w++) {
			int best = w;
			for (int j = w + 1; j < ni; j++)
				if (fabs(v->err_pct[idx[j]]) > fabs(v->err_pct[idx[best]]))
					best = j;
			int t = idx[w];
			idx[w] = idx[best];
			idx[best] = t;
			s->worst[s->n_worst++] = idx[w];
		}
	}
	for (size_t i = 0; i < pts->n; i++) {
		idx[na++] = (int)i;
		if (pts->p[i].held_out)
			held[nh++] = (int)i;
	}
	errors_of(v->err_pct, idx, na, tmp, &v->all);
	errors_of(v->err_pct, held, nh, tmp, &v->held_out);
out:
	free(idx);
	free(held);
	free(train);
	free(tmp);
	if (rc < 0)
		calib_validation_release(v);
	return rc;
}

void calib_validation_release(struct calib_validation *v)
{
	free(v->predicted_s);
	free(v->err_pct);
	memset(v, 0, sizeof *v);
}

/* ---- reports ---- */

static const char *fmt_time(double s, char *buf, size_t n)
{
	if (s >= 1)
		snprintf(buf, n, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, n, "%.3f ms", s * 1e3);
	else
		snprintf(buf, n, "%.2f us", s * 1e6);
	return buf;
}

static const char *pct(double x, char *buf, size_t n)
{
	if (isnan(x))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f", x);
	return buf;
}

static void md_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void md_class_row(FILE *f, const char *label, int points, const struct calib_errors *all,
                         const struct calib_errors *held)
{
	char a[32], b[32], c[32], d[32], g[32];
	fprintf(f, "| %s | %d | %d | %s | %s | %s | %s | %s |\n", label, points, held->n,
	        pct(all->med_abs_pct, a, 32), pct(all->p90_abs_pct, b, 32), pct(held->med_abs_pct, c, 32),
	        pct(held->p90_abs_pct, d, 32), pct(all->med_signed_pct, g, 32));
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
		fprintf(f,
		        "- NVTX ranges: %" PRId64 " (%" PRId64 " k3sim op ranges, %" PRId64
		        " of them without GPU work, %zu"
		        " invalid op texts)\n",
		        m->ranges, m->k3sim_ranges, m->empty_ranges, m->n_bad);
		fprintf(f, "- samples: %zu (one per range instance or rule group), %zu distinct ops\n",
		        m->n_samples, m->n_specs);
	}
	fprintf(f,
	        "- points: %zu (one per distinct op: the median of its samples); %d held out by the protocol "
	        "(GEMM m and KDA decode b not a power of 4, copy sizes not a power of 2, ...)\n\n",
	        pts->n, v->held_out.n);
	fprintf(f,
	        "Measured: GPU time of each sample (kernel durations, no launch gaps). Predicted: the cost "
	        "model's device time of the op (sim_op_cost without launch latency). Error = (predicted - "
	        "measured) / measured. Percentiles interpolate linearly; bias is the median signed error "
	        "(positive: the model predicts too long).\n\n");
	fprintf(f, "## Error per op class\n\n");
	fprintf(f, "| class | points | held out | median abs %% | p90 abs %% | held-out median abs %% | "
	           "held-out p90 abs %% | bias %% |\n");
	fprintf(f, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (int c = 0; c < v->n_cls; c++)
		md_class_row(f, v->cls[c].label, v->cls[c].all.n, &v->cls[c].all, &v->cls[c].held_out);
	md_class_row(f, "all", v->all.n, &v->all, &v->held_out);
	fprintf(f, "\n## Worst offenders\n\n");
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
			md_escape(f, p->spec);
			fprintf(f, "` | %s | %s | %s | %s | %" PRId64 " |\n", fmt_time(p->measured_s, t1, 32),
			        fmt_time(v->predicted_s[i], t2, 32), pct(v->err_pct[i], b, 32),
			        p->held_out ? "yes" : "", p->samples);
		}
		fputc('\n', f);
	}
	fprintf(f, "## Plots\n\n");
	if (in->scatter_svg && in->error_svg)
		fprintf(f, "![predicted vs measured, log-log](%s)\n\n![error vs size](%s)\n\n",
		        in->scatter_svg, in->error_svg);
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
			fprintf(f, "| `");
			md_escape(f, u->name);
			fprintf(f, "` | ");
			md_escape(f, u->reason);
			fprintf(f, " | %" PRId64 " | %s |\n", u->count,
			        fmt_time((double)u->gpu_ns * 1e-9, t1, 32));
		}
		if (m->skipped) {
			fprintf(f, "\n## Skipped by rules\n\n| name | rule | count | GPU time |\n| --- | --- "
			           "| ---: | ---: |\n");
			for (size_t i = 0; i < m->n_unmatched; i++) {
				const struct calib_unmatched *u = &m->unmatched[i];
				if (!u->skipped)
					continue;
				fprintf(f, "| `");
				md_escape(f, u->name);
				fprintf(f, "` | ");
				md_escape(f, u->reason);
				fprintf(f, " | %" PRId64 " | %s |\n", u->count,
				        fmt_time((double)u->gpu_ns * 1e-9, t1, 32));
			}
		}
		if (m->n_bad) {
			fprintf(f, "\n## Invalid k3sim ranges\n\n| range text | error | instances |\n| --- | "
			           "--- | ---: |\n");
			for (size_t i = 0; i < m->n_bad; i++) {
				fprintf(f, "| `");
				md_escape(f, m->bad[i].text);
				fprintf(f, "` | ");
				md_escape(f, m->bad[i].error);
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

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void jpct(FILE *f, double x)
{
	if (isnan(x))
		fputs("null", f);
	else
		fprintf(f, "%.2f", x);
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
	jstr(f, in->database);
	fprintf(f, ",\n  \"hw\": ");
	jstr(f, v->hw_name);
	fprintf(f, ",\n  \"hw_calibrated\": %s,\n  \"points\": %zu,\n  ", v->hw_calibrated ? "true" : "false",
	        pts->n);
	j_errors(f, "all", &v->all);
	fprintf(f, ",\n  ");
	j_errors(f, "held_out", &v->held_out);
	fprintf(f, ",\n  \"classes\": [");
	for (int c = 0; c < v->n_cls; c++) {
		const struct calib_class_stats *s = &v->cls[c];
		fprintf(f, "%s\n    {\"class\": ", c ? "," : "");
		jstr(f, s->label);
		fprintf(f, ", ");
		j_errors(f, "all", &s->all);
		fprintf(f, ", ");
		j_errors(f, "held_out", &s->held_out);
		fprintf(f, ", ");
		j_errors(f, "train", &s->train);
		fprintf(f, ",\n     \"worst\": [");
		for (int w = 0; w < s->n_worst && w < (in->top > 0 ? in->top : 5); w++) {
			int i = s->worst[w];
			fprintf(f, "%s{\"op\": ", w ? ", " : "");
			jstr(f, pts->p[i].spec);
			fprintf(f, ", \"measured_s\": %.6g, \"predicted_s\": %.6g, \"error_pct\": ",
			        pts->p[i].measured_s, v->predicted_s[i]);
			jpct(f, v->err_pct[i]);
			fprintf(f, ", \"held_out\": %s, \"samples\": %" PRId64 "}",
			        pts->p[i].held_out ? "true" : "false", pts->p[i].samples);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ],\n  \"per_point\": [");
	for (size_t i = 0; i < pts->n; i++) {
		fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
		jstr(f, pts->p[i].spec);
		fprintf(f, ", \"class\": ");
		jstr(f, pts->p[i].label);
		fprintf(f, ", \"measured_s\": %.6g, \"predicted_s\": %.6g, \"error_pct\": ",
		        pts->p[i].measured_s, v->predicted_s[i]);
		jpct(f, v->err_pct[i]);
		fprintf(f, ", \"held_out\": %s, \"samples\": %" PRId64 "}",
		        pts->p[i].held_out ? "true" : "false", pts->p[i].samples);
	}
	fprintf(f, "\n  ],\n  \"plots\": ");
	if (in->scatter_svg && in->error_svg) {
		fprintf(f, "{\"scatter\": ");
		jstr(f, in->scatter_svg);
		fprintf(f, ", \"error\": ");
		jstr(f, in->error_svg);
		fputc('}', f);
	} else {
		fprintf(f, "null, \"plot_note\": ");
		jstr(f, in->plot_note ? in->plot_note : "not requested");
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
		fprintf(f, ",\n  \"unmatched\": [");
		for (size_t i = 0; i < m->n_unmatched; i++) {
			const struct calib_unmatched *u = &m->unmatched[i];
			fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
			jstr(f, u->name);
			fprintf(f, ", \"reason\": ");
			jstr(f, u->reason);
			fprintf(f, ", \"skipped\": %s, \"count\": %" PRId64 ", \"gpu_ns\": %" PRId64 "}",
			        u->skipped ? "true" : "false", u->count, u->gpu_ns);
		}
		fprintf(f, "\n  ],\n  \"invalid_ranges\": [");
		for (size_t i = 0; i < m->n_bad; i++) {
			fprintf(f, "%s\n    {\"text\": ", i ? "," : "");
			jstr(f, m->bad[i].text);
			fprintf(f, ", \"error\": ");
			jstr(f, m->bad[i].error);
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
	        "# gnuplot %s.gp  (k3sim trace validate)\nset terminal svg size 900,640 dynamic background "
	        "rgb 'white'\n"
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
	char gp[4096];
	snprintf(gp, sizeof gp, "%s", script);
	char prog[1024];
	snprintf(prog, sizeof prog, "%s", gnuplot && *gnuplot ? gnuplot : "gnuplot");
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = {prog, gp, NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		snprintf(note, n,
		         "gnuplot could not be run (%s: %s); the data (%s.dat) and script (%s.gp) are "
		         "written: install gnuplot and run 'gnuplot %s.gp' there",
		         prog, strerror(rc), prefix, prefix, prefix);
		return 1;
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = -1;
			break;
		}
	if (status != 0) {
		bool missing = WIFEXITED(status) && WEXITSTATUS(status) == 127;
		snprintf(note, n, "%s (%s); the data (%s.dat) and script (%s.gp) are written",
		         missing ? "gnuplot is not installed" : "gnuplot failed", prog, prefix, prefix);
		return 1;
	}
	return 0;
}

const char *const calib_plot_files[] = {".dat", ".gp", "-scatter.svg", "-error.svg", NULL};

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
	snprintf(scatter, sizeof scatter, "%s/%s-scatter.svg", dir, prefix);
	snprintf(error, sizeof error, "%s/%s-error.svg", dir, prefix);
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
