#ifndef K3_REPORTS_CALIB_H
#define K3_REPORTS_CALIB_H

/* Calibration and validation reports: what calib/ computed (calib/validate.h: the validation,
 * the cross-validation, calib/match.h: what was left unmatched) as Markdown, JSON and gnuplot
 * charts. Writers return 0 or a negative error (the stream's, as -EIO); they print nothing else. */

#include <stdbool.h>
#include <stdio.h>

#include "calib/match.h"
#include "calib/validate.h"
#include "util/err.h"

/* What the reports say besides the numbers. */
struct calib_report_in {
	const char *title;
	const char *database;            /* input(s), for the header */
	const struct calib_match *match; /* may be NULL (CSV input): unmatched lists */
	const struct calib_validation *v;
	const struct calib_xval *xval;       /* may be NULL: not done */
	const char *scatter_img, *error_img; /* file names relative to the report, or NULL */
	const char *plot_note;               /* why there are no plots, or NULL */
	int top;                             /* worst offenders per class */
	bool power_clock; /* the clocks (v->clock_mode CALIB_CLOCK_MEASURED) are the preset's power-limit
			   * model's (`trace validate --clock power`, sim/power.h), not readings */
};

/* Markdown and JSON reports; the same numbers, rounded the same way (%.2f for percentages). */
int calib_report_markdown(FILE *f, const struct calib_report_in *in, struct err *e);
int calib_report_json(FILE *f, const struct calib_report_in *in, struct err *e);

/* Gnuplot charts in dir: <prefix>-scatter.png (predicted vs measured, log-log) and
 * <prefix>-error.png (error vs size), from <prefix>.dat and <prefix>.gp written beside them, by
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
