#ifndef K3_CALIB_PRESET_H
#define K3_CALIB_PRESET_H

/* Writing a hardware preset (hw/presets schema) from a struct hw: what `k3sim calibrate` leaves
 * behind, loadable by every command (--hw FILE.yaml). The `calibration:` section records where
 * the numbers came from; hw_load reads past it. */

#include <stdio.h>

#include "calib/fit.h"
#include "calib/points.h"
#include "hw/hw.h"
#include "util/err.h"

struct calib_class_summary {
	char label[32];
	int train, held_out;
	double held_med_pct, held_p90_pct; /* absolute % error on held-out points; < 0: none */
	/* cross-validation (validate.h), absolute % error; < 0: not done */
	double run_med_pct, run_p90_pct;       /* held out by run */
	double shape_med_pct, shape_p90_pct;   /* held out by GEMM shape */
	int noise_points;                      /* points measured by two runs or more */
	double noise_med_pct, noise_p90_pct;   /* their run-to-run spread, %; < 0: none */
};

struct calib_preset_meta {
	const char *base;               /* the preset the fit started from */
	const char *date;               /* UTC, YYYY-MM-DD */
	const char *command;            /* the command line that made it */
	const struct calib_points *pts; /* sources, runs, device info and the held-out points */
	const struct calib_fit_report *fit;
	const struct calib_class_summary *classes;
	int n_classes;
};

/* Write hw as YAML to f. Returns 0 or -EIO. */
int calib_preset_write(FILE *f, const struct hw *hw, const struct calib_preset_meta *meta, struct err *e);

#endif
