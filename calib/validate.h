#ifndef K3_CALIB_VALIDATE_H
#define K3_CALIB_VALIDATE_H

/* Predicted (sim_op_cost) against measured time for every point, and per op class the median and
 * p90 absolute percent error, the signed median (bias) and the worst offenders; over all points
 * and over the protocol's held-out points (points.h). Percentiles are linear interpolations
 * between the sorted values (numpy's default). */

#include <stdbool.h>
#include <stdio.h>

#include "calib/match.h"
#include "calib/points.h"
#include "hw/hw.h"
#include "util/err.h"

enum { CALIB_CLASSES_MAX = 64, CALIB_WORST_MAX = 8 };

struct calib_errors {
	int n;
	double med_abs_pct, p90_abs_pct, max_abs_pct;
	double med_signed_pct; /* > 0: the model predicts too long */
};

struct calib_class_stats {
	char label[32];
	struct calib_errors all, held_out, train;
	int worst[CALIB_WORST_MAX]; /* point indices, largest |error| first (all points) */
	int n_worst;
};

struct calib_validation {
	const struct calib_points *pts;
	double *predicted_s; /* per point */
	double *err_pct;     /* per point: (predicted - measured) / measured x 100 */
	struct calib_class_stats cls[CALIB_CLASSES_MAX];
	int n_cls;
	struct calib_errors all, held_out;
	char hw_name[64];
	bool hw_calibrated;
};

int calib_validate(struct calib_validation *v, const struct calib_points *pts, const struct hw *hw,
                   struct err *e);
void calib_validation_release(struct calib_validation *v);

/* What the reports say besides the numbers. */
struct calib_report_in {
	const char *title;
	const char *database;            /* input(s), for the header */
	const struct calib_match *match; /* may be NULL (CSV input): unmatched lists */
	const struct calib_validation *v;
	const char *scatter_svg, *error_svg; /* file names relative to the report, or NULL */
	const char *plot_note;               /* why there are no plots, or NULL */
	int top;                             /* worst offenders per class */
};

/* Markdown and JSON reports; the same numbers, rounded the same way (%.2f for percentages). */
int calib_report_markdown(FILE *f, const struct calib_report_in *in, struct err *e);
int calib_report_json(FILE *f, const struct calib_report_in *in, struct err *e);

/* Gnuplot charts in dir: <prefix>-scatter.svg (predicted vs measured, log-log) and
 * <prefix>-error.svg (error vs size), from <prefix>.dat and <prefix>.gp written beside them, by
 * running `gnuplot` (or the program `gnuplot` names; NULL: "gnuplot") as a subprocess. Returns 0
 * when the charts were made, 1 when gnuplot could not make them (note says why; the data and
 * script are still there), or a negative error. Every file is an atomic output by the rules of
 * oo (util/outfile.h: force, inputs; NULL: none), all checked before the first is written
 * (calib_plot_files names them): gnuplot draws into the charts' temporaries, which replace the
 * old charts only when it made both. */
struct outfile_opts;
int calib_plots(const struct calib_validation *v, const char *dir, const char *prefix, const char *gnuplot,
                const struct outfile_opts *oo, char *note, size_t n, struct err *e);

/* The suffixes of the files calib_plots writes: dir/<prefix><suffix>. NULL-terminated. */
extern const char *const calib_plot_files[];

#endif
