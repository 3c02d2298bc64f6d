#ifndef K3_CALIB_POINTS_H
#define K3_CALIB_POINTS_H

/* Measured points: one per distinct op of a source (a trace database or a CSV of measurements),
 * its time the median over that op's samples. Every source belongs to a run (a separate session
 * on a device: another device call, another day, another machine); calib/runs.h groups a run's
 * sources and merges the runs into one point per op, the median over runs, with its run-to-run
 * spread. Fitting and validation work on points, so an op
 * measured 40 times weighs as much as one measured 5 times. A collective measured on several
 * ranks (a merged capture: one process per GPU) has one sample per instance: the shortest of its
 * ranks' kernels, the rank that arrived last (the others include waiting for it), when every rank
 * ran the same number of instances.
 *
 * Protocol (which points train a fit and which are held out to report on; never both), by the
 * op's main size: GEMMs by m (train: powers of 4), copies and elementwise ops by elements
 * (train: powers of 2, so the grid's 0.75 x 2^k sizes are held out), KDA decode by b (powers of
 * 4), KDA prefill by t x h (4^k or 3 x 4^k), attention by the tokens the last query attends
 * (ctx + t: powers of 4), collectives by bytes (powers of 2, so the NCCL grid's 0.75 x 2^k sizes
 * and the EP points are held out; a series measured at powers of 2 only, nccl-tests' doubling
 * grid as the public tables have it, trains on powers of 4: calib_points_protocol). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calib/match.h"
#include "hw/hw.h"
#include "model/ops.h"
#include "util/arena.h"
#include "util/err.h"

enum { CALIB_SOURCES_MAX = 64, CALIB_POINTS_MAX = 1024 * 1024 };
/* The most samples one CSV row may claim behind its median (its reps column). */
#define CALIB_REPS_MAX INT64_C(1000000000000)

struct calib_point {
	enum hw_clock clock; /* the clock regime it was measured in (a capture's meta.regime, a CSV's
	                      * regime column; boost otherwise): part of its identity, and what the
	                      * model predicts it at; sustained points are labelled "CLASS@sustained" */
	const char *spec; /* the op in k3sim op syntax */
	struct op op;
	char label[32];    /* report class: "gemm.bf16", "gemm.fp8", "copy", "kda_decode.fp32" */
	enum hw_class cls; /* the hw efficiency class */
	double size;       /* FLOPs or bytes, as the class counts it (hw.h) */
	double main_size;  /* what the protocol splits on (see above) */
	bool held_out;
	double measured_s; /* median over samples */
	double p10_s, p90_s;
	int64_t samples;
	int32_t source; /* index in calib_points.sources (merged over runs: its first) */
	int32_t run;    /* index in calib_points.runs; merged over several runs: -1 */
	/* Over runs (calib_points_by_op): how many measured the op, the smallest and largest
	 * per-run median, and the relative spread (run_max_s - run_min_s) / measured_s. A point
	 * as read: 1 run, both its time, spread 0. */
	int32_t runs;
	double run_min_s, run_max_s, spread;
	/* The SM clock the capture recorded around its samples (calib_sample.sm_clock_hz): their
	 * median; merged over runs, the median of the runs' points that have one. 0: not known (a
	 * CSV, a trace without K3SIM_GPU_METRICS). */
	double sm_clock_hz;
	/* The code that ran (calib_sample.kernels_sig): the signature most of its samples have, and
	 * their longest kernel's name (in the points' arena); 0 / NULL from a CSV. Merged over runs
	 * (calib_points_by_op): the first run's, and kernel_other the name of a run's that differs
	 * (NULL: every run ran the same kernels; else the point is a median over two code paths). */
	uint64_t kernels_sig;
	const char *kernel, *kernel_other;
	int32_t kernel_other_run; /* that run, index in calib_points.runs */
};

/* A run: the sources of one measurement session. info: from its first trace database, or the
 * device a CSV's "# device NAME, N SMs, SM clock C MHz" line names. */
struct calib_run {
	const char *name; /* in the points' arena */
	int n_sources;
	bool have_info;
	struct calib_trace_info info;
};

/* A measured instance of an op (a k3sim range or a rule's kernels) where its capture recorded
 * SM clocks: what the power-limit fit (calib_fit stage 6) runs its controller over, in time
 * order per source. */
struct calib_instance {
	struct op op;
	int32_t source;     /* index in calib_points.sources */
	int64_t start_ns, end_ns;
	double sm_clock_hz; /* recorded around it (calib_sample.sm_clock_hz) */
	double power_w;     /* the board power recorded around it (calib_sample.power_w); 0: none */
	int32_t power_readings; /* the readings inside it (calib_sample.power_readings) */
};

struct calib_points {
	struct calib_point *p;
	size_t n, cap;
	struct calib_instance *inst; /* of the traces with clock readings, each trace's in start
				      * order; at most CALIB_POINTS_MAX */
	size_t n_inst, cap_inst;
	const char *sources[CALIB_SOURCES_MAX];
	int32_t source_run[CALIB_SOURCES_MAX]; /* index in runs */
	int64_t source_clock_readings[CALIB_SOURCES_MAX]; /* a trace's SM clock readings
							   * (calib_match.clock_readings); -1: a CSV */
	int n_sources;
	struct calib_run runs[CALIB_SOURCES_MAX];
	int n_runs;
	int32_t cur_run; /* the run new sources join; -1: each source a run of its own */
	bool have_info;
	struct calib_trace_info info; /* of the first trace database */
	int64_t csv_rows_skipped;     /* rows of CSVs that name no model op */
	/* Set (by the caller, before adding traces): each sample's SM clock is not the one its
	 * capture recorded but the one hw's power-limit model (sim/power.h) gives it, run over the
	 * trace's samples in time order from an idle GPU, idle between them (`--clock power`);
	 * points take their median as they take the recorded ones. Not owned. */
	const struct hw *power_hw;
	struct arena arena;
};

void calib_points_init(struct calib_points *pts);
void calib_points_release(struct calib_points *pts);

/* The sources added from now on join the run `name` (made if new).
 * calib_points_end_run: from now on each source is a run of its own, named by its path. */
int calib_points_begin_run(struct calib_points *pts, const char *name, struct err *e);
void calib_points_end_run(struct calib_points *pts);

/* Appends an instance: 0, -E2BIG past CALIB_POINTS_MAX, -ENOMEM. */
int calib_points_add_instance(struct calib_points *pts, const struct calib_instance *x);

/* One point per distinct op of the match's samples; where the trace recorded SM clocks (and
 * power_hw is not set), its instances too. */
int calib_points_add_match(struct calib_points *pts, const struct calib_match *m, const char *source,
                           struct err *e);
/* A CSV of measurements: calib-grid's ("op,reps,median_s,p10_s,p90_s", op in k3sim op syntax) or
 * the KDA bench's ("op,state,batch,seq_len,heads,...,time_us,p10_us,p90_us,..."). */
int calib_points_add_csv(struct calib_points *pts, const char *path, struct err *e);
int calib_points_add_csv_string(struct calib_points *pts, const char *path, const char *text,
                                size_t len_bytes, struct err *e);
/* Keep only the points whose spec matches (keep = true) or does not match (false) the glob. */
void calib_points_filter(struct calib_points *pts, const char *glob, bool keep);

/* A trace database (SQLite: matched with `rules`, may be NULL) or a CSV. With m_out, a database's
 * match is handed over (the caller releases it; m_out->n_samples is 0 for a CSV). */
int calib_points_add_file(struct calib_points *pts, const char *path, const struct calib_rules *rules,
                          struct calib_match *m_out, struct err *e);

/* Each point measured below the boost clock (its sm_clock_hz, as recorded by its capture) at the
 * time the physical model says it would have taken at hw's boost clock: measured_s (p10, p90, run
 * minimum and maximum alike) times model(boost) / model(its clock), the device time of hw
 * without its calibration (so the ratio is the physical model's, as sim_op_cost scales a
 * calibrated time to another clock). What a fit at the boost clock needs when the measurements
 * ran power-capped: `k3sim calibrate --clock measured`. Points of another regime, without a
 * clock, or at boost or above are left as they are. *n_scaled (may be NULL): how many changed.
 * 0, or -ENOMEM (nothing changed). */
int calib_points_at_boost(struct calib_points *pts, const struct hw *hw, int *n_scaled, struct err *e);

/* The protocol's split of collectives, which depends on their series: a collective kind (and
 * name) at one rank count and clock whose sizes are all powers of 2 trains on the powers of 4 and
 * holds out the others (else nothing of it would be held out); any other series trains on the
 * powers of 2 (calib_op_trains). calib_points_add_inputs calls it once every input is read, so a
 * split never depends on which runs a cross-validation fold takes. */
int calib_points_protocol(struct calib_points *pts, struct err *e);

/* Points in the same regime and of the same op (calib_op_cmp): 0. */
int calib_point_cmp(const struct calib_point *a, const struct calib_point *b);

/* Class label, hw class and size of an op (sizes as hw.h counts them). */
void calib_op_class(const struct op *op, char *label, size_t n, enum hw_class *cls, double *size);
/* The protocol's main size of an op and whether it trains (false: held out). */
bool calib_op_trains(const struct op *op, double *main_size);

#endif
