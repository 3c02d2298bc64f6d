#ifndef K3_REPORTS_CHART_H
#define K3_REPORTS_CHART_H

/* Charts by gnuplot, run as a subprocess: each chart is written as NAME.svg and NAME.png into a
 * directory, from a data file (NAME.dat) and one script (charts.gp) that stay beside them, so a
 * reader can restyle a chart by editing the script. gnuplot's output goes to gnuplot.log. */

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

enum {
	CHART_MAX_SERIES = 16,
	CHART_MAX_X = 64,
	CHART_MAX_BARS = 96,
	CHART_MAX_STACK = 12,
	CHART_MAX_GROUPS = 16
};

/* y over a context axis (log2 x, tics at the swept contexts). */
struct chart_series {
	char title[64];
	double y[CHART_MAX_X]; /* NAN: no point */
	bool dashed;
	int color; /* index into the palette; -1: gray */
};

struct chart_line {
	char name[32]; /* file stem */
	char title[128];
	char xlabel[64], ylabel[64];
	int64_t x[CHART_MAX_X];
	int n_x;
	bool logy;
	struct chart_series series[CHART_MAX_SERIES];
	int n_series;
	int64_t mark_x[4]; /* vertical marker lines (crossovers) at these contexts */
	char mark_label[4][96];
	int n_marks;
};

/* Stacked bars in groups (e.g. one group per context, one bar per model, one stack per op class). */
struct chart_bars {
	char name[32];
	char title[128];
	char ylabel[64];
	char stack_titles[CHART_MAX_STACK][48];
	int n_stack;
	char group_titles[CHART_MAX_GROUPS][32];
	int n_groups;
	char bar_labels[CHART_MAX_BARS][48];
	int group_of[CHART_MAX_BARS];
	double values[CHART_MAX_BARS][CHART_MAX_STACK];
	int n_bars;  /* bars of a group are contiguous, groups in order */
	double ymax; /* 0: automatic */
};

/* y over x for any x (time series, distributions): series of points given by pointers the
 * caller keeps alive during chart_render_xy; linear or log axes. */
struct chart_xy_series {
	char title[64];
	const double *x, *y;
	int64_t n;
	int color; /* index into the palette; -1: gray */
	bool dashed;
	bool steps; /* a step function (queue lengths) instead of straight segments */
};

struct chart_xy {
	char name[32]; /* file stem */
	char title[128];
	char xlabel[64], ylabel[64];
	bool logx, logy;
	double ymax;   /* 0: automatic */
	struct chart_xy_series series[CHART_MAX_SERIES];
	int n_series;
};

struct chart_outcome {
	bool rendered;    /* every chart's SVG and PNG exists and is not empty */
	char reason[256]; /* why not (gnuplot missing, failed, ...) */
};

/* Writes the data files and the script into dir (which must exist) and runs `gnuplot` (a program
 * name looked up in PATH, or a path). Every file, gnuplot's images and log included, is an
 * atomic output by the rules of oo (util/outfile.h): all are checked before the first is written;
 * gnuplot draws into the images' temporaries, which reach their names only when it made all of
 * them (else the old images stay). Returns 0 when the inputs were written, whether or not
 * gnuplot ran (out says); a negative errno when a file could not be written or is refused. */
struct outfile_opts;
int chart_render(const char *dir, const char *gnuplot, const struct chart_line *lines, int n_lines,
                 const struct chart_bars *bars, int n_bars, const struct outfile_opts *oo,
                 struct chart_outcome *out, struct err *e);

/* chart_render with x-y charts too (lines and bars may be NULL with their counts 0). */
int chart_render_xy(const char *dir, const char *gnuplot, const struct chart_line *lines, int n_lines,
		    const struct chart_bars *bars, int n_bars, const struct chart_xy *xy, int n_xy,
		    const struct outfile_opts *oo, struct chart_outcome *out, struct err *e);

/* The one gnuplot launcher: runs `gnuplot SCRIPT` (gnuplot: a program name looked up in PATH, or a
 * path) in dir (NULL: here; script_name relative to it) with stdout and stderr in log (NULL:
 * discarded). Returns 0, gnuplot's exit status (127: not installed), or -errno when it could
 * not be started; reason says why in words when not 0. */
int chart_run_gnuplot(const char *dir, const char *gnuplot, const char *script_name, const char *log,
                      char *reason, size_t cap);

#endif
