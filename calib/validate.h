#ifndef K3_CALIB_VALIDATE_H
#define K3_CALIB_VALIDATE_H

/* Predicted (sim_op_cost) against measured time for every point, and per op class the median and
 * p90 absolute percent error, the signed median (bias) and the worst offenders; over all points
 * and over the protocol's held-out points (points.h). Beside them the noise floor: over the
 * points that several runs measured (calib/runs.h), the median and p90 of their run-to-run
 * spread. Cross-validation (calib_xval) refits with whole runs or whole GEMM shapes held out.
 * Percentiles are linear interpolations between the sorted values (numpy's default). */

#include <stdbool.h>
#include <stdio.h>

#include "calib/fit.h"
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

/* Run-to-run spread ((max - min) / median of the per-run medians, calib_point.spread) in percent,
 * over the n points that two runs or more measured. */
struct calib_noise {
	int n;
	double med_pct, p90_pct, max_pct; /* NAN when n = 0 */
};

/* Which SM clock each point is predicted at. */
enum calib_clock_mode {
	CALIB_CLOCK_REGIME,   /* its regime's (calib_point.clock: boost unless measured sustained) */
	CALIB_CLOCK_MEASURED, /* the clock its capture recorded around it (calib_point.sm_clock_hz),
			       * at most the preset's boost; the regime's where it has none. An
			       * input the prediction takes, not something the model predicts */
};

struct calib_class_stats {
	char label[32];
	double clock_hz; /* the clock its points were predicted at, weighted by their measured time
			  * (measured_s x samples) */
	struct calib_errors all, held_out, train;
	struct calib_noise noise;
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
	struct calib_noise noise;
	char hw_name[64];
	bool hw_calibrated;
	enum calib_clock_mode clock_mode;
	double *clock_hz;     /* per point: the SM clock it was predicted at */
	double clock_hz_all;  /* over all points, weighted as calib_class_stats.clock_hz */
	double boost_hz;      /* the preset's boost clock */
	int without_clock;    /* CALIB_CLOCK_MEASURED: points with no clock reading (predicted at
			       * their regime's clock) */
	int above_boost;      /* CALIB_CLOCK_MEASURED: points read above the preset's boost clock
			       * (predicted at the boost clock) */
};


int calib_validate(struct calib_validation *v, const struct calib_points *pts, const struct hw *hw,
                   struct err *e);
/* calib_validate at the clocks of `mode`. */
int calib_validate_clock(struct calib_validation *v, const struct calib_points *pts, const struct hw *hw,
                         enum calib_clock_mode mode, struct err *e);
void calib_validation_release(struct calib_validation *v);

/* Cross-validation: calib_fit (a black box: whatever model it fits) refitted with data held out,
 * scored on what it never saw; errors pooled over the rotations, per class.
 *  - by run (leave-one-run-out; two runs or more): for each run, the fit to the other runs'
 *    per-op medians (calib_points_by_op; only the points protocol's training points train, as
 *    in calibrate), scored on every op of the held-out run that another run measured too (the
 *    others are "unpaired": no other run to learn them from). Beside it the run floor: the same
 *    points predicted by the other runs' median itself, which a model fitted to those runs
 *    cannot beat by much.
 *  - by GEMM shape (leave-one-shape-out; two dense GEMM shapes (n, k) or more): for each shape,
 *    the fit to the per-op medians over all runs without any point of that shape, scored on
 *    all of its points (every m and dtype): what a shape the grid never measured gets. */
struct calib_xval_class {
	char label[32];
	struct calib_errors by_run, run_floor, by_gemm_shape;
};

struct calib_xval_run {
	const char *name; /* borrowed from the points given to calib_xval */
	bool fitted;
	char note[160];   /* why not, when not */
	int unpaired;     /* ops of this run that no other run measured */
	struct calib_errors err, floor;
};

struct calib_xval_shape {
	int64_t n, k;
	bool fitted;
	struct calib_errors err;
};

struct calib_xval {
	struct calib_xval_class cls[CALIB_CLASSES_MAX];
	int n_cls;
	struct calib_xval_class all;
	struct calib_xval_run runs[CALIB_SOURCES_MAX];
	int n_runs; /* 0: fewer than two runs, not done */
	struct calib_xval_shape *shapes;
	int n_shapes; /* 0: fewer than two GEMM shapes, not done */
	int fits;     /* calib_fit calls made */
};

/* Leave-one-run-out and leave-one-GEMM-shape-out on pts as read (one point per op and run, or
 * several; not merged), each fit from `base` with options o. */
int calib_xval(struct calib_xval *x, const struct calib_points *pts, const struct hw *base,
               const struct calib_fit_opts *o, struct err *e);
void calib_xval_release(struct calib_xval *x);
/* The class's entry, or NULL. */
const struct calib_xval_class *calib_xval_class(const struct calib_xval *x, const char *label);

/* The reports of a validation (Markdown, JSON, charts) are rendered by reports/calib.h. */

#endif
