/* gnuplot charts: data files, one script, one gnuplot process. */
#include "reports/chart.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reports/fmt.h"
#include "util/outfile.h"

extern char **environ;

/* Colors that stay apart for readers with common color-vision deficiencies (Okabe-Ito, then more). */
static const char *const palette[] = {
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
    "#F0E442", "#666666", "#882255", "#44AA99", "#999933", "#AA4499",
};
enum { N_PALETTE = sizeof palette / sizeof palette[0] };

static const char *color(int i)
{
	return i < 0 ? "#888888" : palette[i % N_PALETTE];
}

/* A gnuplot single-quoted string: quotes doubled. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* The name each image is written under: NAME.svg / NAME.png in the script users run, the
 * temporaries of the atomic outputs in the one k3sim runs (NULL: the former). */
struct image_names {
	const struct outfile *images; /* [2 * chart]: PNG, [2 * chart + 1]: SVG */
	int index;                    /* the chart being scripted */
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void terminal(FILE *f, const char *name, bool svg, int w, int h, const struct image_names *in)
{
	if (svg)
		fprintf(f,
		        "set terminal svg size %d,%d dynamic enhanced font 'DejaVu Sans,14' "
		        "background rgb 'white'\n",
		        w, h);
	else
		fprintf(f,
		        "set terminal pngcairo size %d,%d enhanced font 'DejaVu Sans,13' "
		        "background rgb 'white'\n",
		        w, h);
	if (in)
		fprintf(f, "set output '%s'\n", base_name(outfile_tmp_path(&in->images[2 * in->index + svg])));
	else
		fprintf(f, "set output '%s.%s'\n", name, svg ? "svg" : "png");
}

/* An atomic output (util/outfile.h) and its stream. */
static int open_out(struct outfile *of, const char *path, const struct outfile_opts *oo, FILE **f,
                    struct err *e)
{
	int rc = outfile_open(of, path, oo, e);
	if (rc < 0)
		return rc;
	if (!(*f = outfile_stream(of, e))) {
		outfile_abort(of);
		return -ENOMEM;
	}
	return 0;
}

static int write_line_data(const char *dir, const struct chart_line *c, const struct outfile_opts *oo,
                           struct err *e)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s.dat", dir, c->name);
	struct outfile of;
	FILE *f;
	int rc = open_out(&of, path, oo, &f, e);
	if (rc < 0)
		return rc;
	fprintf(f, "# context");
	for (int s = 0; s < c->n_series; s++)
		fprintf(f, "\t%s", c->series[s].title);
	fputc('\n', f);
	for (int i = 0; i < c->n_x; i++) {
		fprintf(f, "%lld", (long long)c->x[i]);
		for (int s = 0; s < c->n_series; s++) {
			double y = c->series[s].y[i];
			/* Missing, or not drawable on a log axis. */
			if (!isfinite(y) || (c->logy && y <= 0))
				fprintf(f, "\t?");
			else
				fprintf(f, "\t%.9g", y);
		}
		fputc('\n', f);
	}
	return outfile_commit(&of, e);
}

static void line_script(FILE *f, const struct chart_line *c, bool svg, const struct image_names *in)
{
	terminal(f, c->name, svg, svg ? 800 : 960, svg ? 460 : 540, in);
	fprintf(f, "reset\nset title ");
	put_quoted(f, c->title);
	fprintf(f, "\nset xlabel ");
	put_quoted(f, c->xlabel);
	fprintf(f, "\nset ylabel ");
	put_quoted(f, c->ylabel);
	fprintf(f,
	        "\nset datafile separator '\\t'\nset datafile missing '?'\n"
	        "set logscale x 2\nset xrange [%g:%g]\nset xtics (",
	        (double)c->x[0] / 1.25, (double)c->x[c->n_x - 1] * 1.25);
	for (int i = 0; i < c->n_x; i++) {
		char t[32];
		fmt_tokens(c->x[i], t, sizeof t);
		fprintf(f, "%s'%s' %lld", i ? ", " : "", t, (long long)c->x[i]);
	}
	fprintf(f, ")\n");
	if (c->logy)
		fprintf(f, "set logscale y 10\nset format y '%%g'\n");
	else
		fprintf(f, "set yrange [0:*]\n");
	fprintf(f, "set grid xtics ytics lc rgb '#dddddd' lt 1\nset border 3 lc rgb '#444444'\n"
	           "set tics nomirror\nset key outside right top Left reverse samplen 2\n"
	           "set lmargin 12\n");
	for (int k = 0; k < c->n_marks; k++) {
		fprintf(f,
		        "set arrow from %lld, graph 0 to %lld, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' "
		        "back\n",
		        (long long)c->mark_x[k], (long long)c->mark_x[k]);
		fprintf(f, "set label ");
		put_quoted(f, c->mark_label[k]);
		fprintf(f,
		        " at %lld, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'\n",
		        (long long)c->mark_x[k]);
	}
	fprintf(f, "plot ");
	for (int s = 0; s < c->n_series; s++) {
		const struct chart_series *se = &c->series[s];
		fprintf(f, "%s'%s.dat' using 1:%d title ", s ? ", \\\n     " : "", c->name, s + 2);
		put_quoted(f, se->title);
		fprintf(f, " with linespoints lw 2.5 pt 7 ps 0.9 dt %d lc rgb '%s'", se->dashed ? 2 : 1,
		        color(se->color));
	}
	fprintf(f, "\nunset output\n\n");
}

static int write_bar_data(const char *dir, const struct chart_bars *c, const struct outfile_opts *oo,
                          struct err *e)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s.dat", dir, c->name);
	struct outfile of;
	FILE *f;
	int rc = open_out(&of, path, oo, &f, e);
	if (rc < 0)
		return rc;
	fprintf(f, "# bar");
	for (int k = 0; k < c->n_stack; k++)
		fprintf(f, "\t%s", c->stack_titles[k]);
	fputc('\n', f);
	for (int b = 0; b < c->n_bars; b++) {
		fprintf(f, "\"%s\"", c->bar_labels[b]);
		for (int k = 0; k < c->n_stack; k++)
			fprintf(f, "\t%.6g", isfinite(c->values[b][k]) ? c->values[b][k] : 0.0);
		fputc('\n', f);
	}
	return outfile_commit(&of, e);
}

static void bar_script(FILE *f, const struct chart_bars *c, bool svg, const struct image_names *in)
{
	terminal(f, c->name, svg, 1100, 600, in);
	fprintf(f, "reset\nset title ");
	put_quoted(f, c->title);
	fprintf(f, "\nset ylabel ");
	put_quoted(f, c->ylabel);
	fprintf(f, "\nset datafile separator '\\t'\nset style data histograms\n"
	           "set style histogram rowstacked title offset 0,-1.2\n"
	           "set style fill solid 0.9 border rgb 'white'\nset boxwidth 0.8\n"
	           "set grid ytics lc rgb '#dddddd' lt 1\nset border 3 lc rgb '#444444'\nset tics nomirror\n"
	           "set xtics rotate by -30 left scale 0\nset bmargin 7\n"
	           "set key outside right top Left reverse samplen 2\n");
	if (c->ymax > 0)
		fprintf(f, "set yrange [0:%g]\n", c->ymax);
	else
		fprintf(f, "set yrange [0:*]\n");
	fprintf(f, "plot ");
	int first = 0;
	for (int g = 0; g < c->n_groups; g++) {
		int lo = -1, hi = -1;
		for (int b = 0; b < c->n_bars; b++)
			if (c->group_of[b] == g) {
				if (lo < 0)
					lo = b;
				hi = b;
			}
		if (lo < 0)
			continue;
		fprintf(f, "%snewhistogram ", first ? ", \\\n     " : "");
		put_quoted(f, c->group_titles[g]);
		fprintf(f, " lt 1");
		for (int k = 0; k < c->n_stack; k++) {
			fprintf(f, ", \\\n     '%s.dat' every ::%d::%d using %d%s ", c->name, lo, hi, k + 2,
			        k == 0 ? ":xtic(1)" : "");
			if (first)
				fprintf(f, "notitle");
			else {
				fprintf(f, "title ");
				put_quoted(f, c->stack_titles[k]);
			}
			fprintf(f, " lc rgb '%s'", color(k));
		}
		first = 1;
	}
	fprintf(f, "\nunset output\n\n");
}

static int write_xy_data(const char *dir, const struct chart_xy *c, const struct outfile_opts *oo, struct err *e)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s.dat", dir, c->name);
	struct outfile of;
	FILE *f;
	int rc = open_out(&of, path, oo, &f, e);
	if (rc < 0)
		return rc;
	/* one block per series (gnuplot's index), two blank lines apart */
	for (int s = 0; s < c->n_series; s++) {
		const struct chart_xy_series *se = &c->series[s];
		fprintf(f, "# %s: x\ty\n", se->title);
		int64_t written = 0;
		for (int64_t i = 0; i < se->n; i++) {
			double x = se->x[i], y = se->y[i];
			if (!isfinite(x) || !isfinite(y) || (c->logx && x <= 0) || (c->logy && y <= 0))
				continue;
			fprintf(f, "%.9g\t%.9g\n", x, y);
			written++;
		}
		if (!written) /* an empty block would shift the indices */
			fprintf(f, "?\t?\n");
		fprintf(f, "\n\n");
	}
	return outfile_commit(&of, e);
}

static void xy_script(FILE *f, const struct chart_xy *c, bool svg, const struct image_names *in)
{
	terminal(f, c->name, svg, svg ? 800 : 960, svg ? 460 : 540, in);
	fprintf(f, "reset\nset title ");
	put_quoted(f, c->title);
	fprintf(f, "\nset xlabel ");
	put_quoted(f, c->xlabel);
	fprintf(f, "\nset ylabel ");
	put_quoted(f, c->ylabel);
	fprintf(f, "\nset datafile separator '\\t'\nset datafile missing '?'\n");
	if (c->logx)
		fprintf(f, "set logscale x 10\nset format x '%%g'\n");
	if (c->logy)
		fprintf(f, "set logscale y 10\nset format y '%%g'\n");
	else if (c->ymax > 0)
		fprintf(f, "set yrange [0:%g]\n", c->ymax);
	else
		fprintf(f, "set yrange [0:*]\n");
	fprintf(f, "set grid xtics ytics lc rgb '#dddddd' lt 1\nset border 3 lc rgb '#444444'\n"
		   "set tics nomirror\nset key outside right top Left reverse samplen 2\nset lmargin 12\n");
	fprintf(f, "plot ");
	for (int s = 0; s < c->n_series; s++) {
		const struct chart_xy_series *se = &c->series[s];
		fprintf(f, "%s'%s.dat' index %d using 1:2 title ", s ? ", \\\n     " : "", c->name, s);
		put_quoted(f, se->title);
		fprintf(f, " with %s lw 2 dt %d lc rgb '%s'", se->steps ? "steps" : "lines", se->dashed ? 2 : 1,
			color(se->color));
	}
	fprintf(f, "\nunset output\n\n");
}

static bool file_nonempty(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && st.st_size > 0;
}

int chart_run_gnuplot(const char *dir, const char *gnuplot, const char *script_name, const char *log,
                      char *reason, size_t cap)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log ? log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC,
	                                 0644);
	posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
	/* After the log is open (its path may be relative): the script's files are relative to dir. */
	if (dir)
		posix_spawn_file_actions_addchdir_np(&fa, dir);
	char prog[1024], script[4096];
	snprintf(prog, sizeof prog, "%s", gnuplot);
	snprintf(script, sizeof script, "%s", script_name);
	char *argv[] = {prog, script, NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, gnuplot, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		snprintf(reason, cap, "%s",
		         rc == ENOENT ? "gnuplot was not found (install gnuplot-nox)"
		                      : "gnuplot could not be started");
		return -rc;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(reason, cap, "waiting for gnuplot failed");
			return -errno;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(reason, cap, "gnuplot was not found (install gnuplot-nox)");
		return 127;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(reason, cap, log ? "gnuplot failed (see charts/gnuplot.log)" : "gnuplot failed");
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	}
	return 0;
}

/* The charts' script (users run it in dir; with names set, the one k3sim runs). */
static void write_script(FILE *f, const struct chart_line *lines, int n_lines, const struct chart_bars *bars,
                         int n_bars, const struct chart_xy *xy, int n_xy, const struct outfile *images)
{
	fprintf(f, "# k3sim %s: the report's charts. Run `gnuplot charts.gp` in this directory.\n",
		n_xy ? "serve" : "compare");
	for (int svg = 1; svg >= 0; svg--) {
		for (int i = 0; i < n_lines; i++)
			line_script(f, &lines[i], svg, images ? &(struct image_names){images, i} : NULL);
		for (int i = 0; i < n_bars; i++)
			bar_script(f, &bars[i], svg,
			           images ? &(struct image_names){images, n_lines + i} : NULL);
		for (int i = 0; i < n_xy; i++)
			xy_script(f, &xy[i], svg, images ? &(struct image_names){images, n_lines + n_bars + i} : NULL);
	}
}

/* The name of chart i of all three kinds, in order. */
static const char *chart_name_of(const struct chart_line *lines, int n_lines, const struct chart_bars *bars,
				 int n_bars, const struct chart_xy *xy, int i)
{
	return i < n_lines ? lines[i].name : i < n_lines + n_bars ? bars[i - n_lines].name : xy[i - n_lines - n_bars].name;
}

/* Runs gnuplot with every image and the log written as atomic outputs (util/outfile.h): the
 * images reach their names only when gnuplot made all of them; the log whenever gnuplot ran. */
static int render(const char *dir, const char *gnuplot, const struct chart_line *lines, int n_lines,
                  const struct chart_bars *bars, int n_bars, const struct chart_xy *xy, int n_xy,
                  const struct outfile_opts *oo, struct chart_outcome *out, struct err *e)
{
	int n_images = 2 * (n_lines + n_bars + n_xy), rc = 0;
	struct outfile *images = calloc((size_t)n_images, sizeof *images);
	struct outfile *log = calloc(1, sizeof *log), *script = calloc(1, sizeof *script);
	char path[600];
	bool ran = false;
	if (!images || !log || !script) {
		err_set(e, dir, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < n_images && rc == 0; k++) {
		const char *name = chart_name_of(lines, n_lines, bars, n_bars, xy, k / 2);
		snprintf(path, sizeof path, "%s/%s.%s", dir, name, k % 2 ? "svg" : "png");
		rc = outfile_open(&images[k], path, oo, e);
	}
	if (rc < 0)
		goto out;
	snprintf(path, sizeof path, "%s/gnuplot.log", dir);
	if ((rc = outfile_open(log, path, oo, e)) < 0)
		goto out;
	/* The script k3sim runs lives only as a temporary beside charts.gp (never committed). */
	snprintf(path, sizeof path, "%s/charts.gp", dir);
	struct outfile_opts replace = *oo;
	replace.force = true;
	FILE *f;
	if ((rc = open_out(script, path, &replace, &f, e)) < 0)
		goto out;
	write_script(f, lines, n_lines, bars, n_bars, xy, n_xy, images);
	if (fflush(f) != 0 || ferror(f)) {
		err_set(e, path, 0, 0, "write failed");
		rc = -EIO;
		goto out;
	}
	ran = chart_run_gnuplot(dir, gnuplot, base_name(outfile_tmp_path(script)), outfile_tmp_path(log),
	                  out->reason, sizeof out->reason) == 0;
	if ((rc = outfile_commit(log, e)) < 0)
		goto out;
	if (!ran)
		goto out;
	for (int k = 0; k < n_images; k++) {
		if (!file_nonempty(outfile_tmp_path(&images[k]))) {
			snprintf(out->reason, sizeof out->reason,
			         "gnuplot did not write %.32s (see charts/gnuplot.log)",
			         chart_name_of(lines, n_lines, bars, n_bars, xy, k / 2));
			goto out;
		}
	}
	for (int k = 0; k < n_images && rc == 0; k++)
		rc = outfile_commit(&images[k], e);
	if (rc == 0)
		out->rendered = true;
out:
	for (int k = 0; images && k < n_images; k++)
		outfile_abort(&images[k]);
	if (log)
		outfile_abort(log);
	if (script)
		outfile_abort(script);
	free(images);
	free(log);
	free(script);
	return rc;
}

/* Every file of the charts checked before the first is written: a refusal changes nothing. */
static int check_outputs(const char *dir, bool with_images, const struct chart_line *lines, int n_lines,
                         const struct chart_bars *bars, int n_bars, const struct chart_xy *xy, int n_xy,
                         const struct outfile_opts *oo, struct err *e)
{
	static const char *const data_ext[] = {"dat"}, *const image_ext[] = {"dat", "svg", "png"};
	char path[600];
	snprintf(path, sizeof path, "%s/charts.gp", dir);
	int rc = outfile_check(path, oo, e);
	if (rc == 0 && with_images) {
		snprintf(path, sizeof path, "%s/gnuplot.log", dir);
		rc = outfile_check(path, oo, e);
	}
	const char *const *ext = with_images ? image_ext : data_ext;
	int n_ext = with_images ? 3 : 1;
	for (int i = 0; i < n_lines + n_bars + n_xy && rc == 0; i++)
		for (int x = 0; x < n_ext && rc == 0; x++) {
			const char *name = chart_name_of(lines, n_lines, bars, n_bars, xy, i);
			snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[x]);
			rc = outfile_check(path, oo, e);
		}
	return rc;
}

int chart_render_xy(const char *dir, const char *gnuplot, const struct chart_line *lines, int n_lines,
		    const struct chart_bars *bars, int n_bars, const struct chart_xy *xy, int n_xy,
		    const struct outfile_opts *oo, struct chart_outcome *out, struct err *e)
{
	char path[600];
	int rc;
	out->rendered = false;
	out->reason[0] = 0;
	if ((rc = check_outputs(dir, gnuplot && gnuplot[0], lines, n_lines, bars, n_bars, xy, n_xy, oo, e)) < 0)
		return rc;
	for (int i = 0; i < n_lines; i++)
		if ((rc = write_line_data(dir, &lines[i], oo, e)) < 0)
			return rc;
	for (int i = 0; i < n_bars; i++)
		if ((rc = write_bar_data(dir, &bars[i], oo, e)) < 0)
			return rc;
	for (int i = 0; i < n_xy; i++)
		if ((rc = write_xy_data(dir, &xy[i], oo, e)) < 0)
			return rc;
	snprintf(path, sizeof path, "%s/charts.gp", dir);
	struct outfile of;
	FILE *f;
	if ((rc = open_out(&of, path, oo, &f, e)) < 0)
		return rc;
	write_script(f, lines, n_lines, bars, n_bars, xy, n_xy, NULL);
	if ((rc = outfile_commit(&of, e)) < 0)
		return rc;
	if (!gnuplot || !gnuplot[0]) {
		snprintf(out->reason, sizeof out->reason, "charts were not requested");
		return 0;
	}
	return render(dir, gnuplot, lines, n_lines, bars, n_bars, xy, n_xy, oo, out, e);
}

int chart_render(const char *dir, const char *gnuplot, const struct chart_line *lines, int n_lines,
                 const struct chart_bars *bars, int n_bars, const struct outfile_opts *oo,
                 struct chart_outcome *out, struct err *e)
{
	return chart_render_xy(dir, gnuplot, lines, n_lines, bars, n_bars, NULL, 0, oo, out, e);
}
