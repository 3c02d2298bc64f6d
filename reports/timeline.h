#ifndef K3_REPORTS_TIMELINE_H
#define K3_REPORTS_TIMELINE_H

/* A simulated step (sim/step.h) as Chrome/Perfetto trace-event JSON, in the layout
 * `k3sim trace export` gives a measured trace (one process per GPU, one thread per stream), so
 * the two open side by side in ui.perfetto.dev. Each op instance is an "X" event of category
 * "kernel" named after the model op, with args device, stream (what the Kineto importer reads,
 * so `k3sim trace import` takes the file back), layer, microbatch, whether it is on the critical
 * path, and its time alone; a "step" process holds one event spanning the step with the
 * timeline's figures. Times start at 0 at the step's start. */

#include <stdio.h>

#include "sim/step.h"

struct timeline_report {
	const char *title;      /* e.g. "decode step (TPOT) at context 8703, batch 64" */
	const char *gpu_names[TL_MAX_GPUS]; /* NULL: "GPU n" */
	const struct sim_step_timing *timing;
};

/* Writes tl (after tl_run) to out; returns 0 or -EIO. */
int report_timeline_json(const struct timeline *tl, const struct timeline_report *r, FILE *out);

#endif
