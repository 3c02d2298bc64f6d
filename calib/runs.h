#ifndef K3_CALIB_RUNS_H
#define K3_CALIB_RUNS_H

/* Measurements from several runs. A run is one measurement session on a device (another device
 * call, another day, another machine): its clocks, thermals, placement and neighbours are its
 * own, so two runs of the same grid differ by more than the samples within one suggest. The
 * fit takes one point per op: the median over runs of each run's median (a run that measured
 * the op twice, in two of its files, counts once), with the run-to-run range beside it.
 *
 * Inputs name their run: a file given alone is a run of its own, named by its path; a group
 * "NAME=FILE[,FILE...]" (the CLI's --run) puts several files (a capture and the CSV written
 * beside it, a grid split over two calls on the same device session) into one run. */

#include <stdbool.h>
#include <stddef.h>

#include "calib/match.h"
#include "calib/points.h"
#include "util/arena.h"
#include "util/err.h"

struct calib_input {
	const char *path;
	const char *run; /* NULL: a run of its own, named by the path */
};

/* Inputs in the order given; strings in the arena or borrowed from the caller (argv). */
struct calib_inputs {
	struct calib_input in[CALIB_SOURCES_MAX];
	int n;
	struct arena arena;
};

void calib_inputs_init(struct calib_inputs *in);
void calib_inputs_release(struct calib_inputs *in);
/* "NAME=FILE[,FILE...]": NAME of letters, digits and ._:+- (at most 63 bytes); a path with a
 * comma is given alone (its own run). The same NAME again adds files to that run. A file given
 * twice is an error (it would count twice). arg is copied. */
int calib_inputs_add_run(struct calib_inputs *in, const char *arg, struct err *e);
/* A file of its own run; path is borrowed (it must outlive in). */
int calib_inputs_add_path(struct calib_inputs *in, const char *path, struct err *e);

/* calib_points_add_file for every input, each into its run, kernels outside k3sim ranges
 * matched by the rules `rules_name` (default, or a YAML file; NULL or "none": NVTX ranges
 * only). *first (zeroed by the caller) keeps the match summary of the first input that read any
 * GPU work or measured samples (release it with calib_match_release); the others are released.
 * `inputs` receives the paths, comma separated (truncated to cap). Then the protocol's split of
 * collectives by series (calib_points_protocol). */
int calib_points_add_inputs(struct calib_points *pts, const struct calib_inputs *in, const char *rules_name,
                            struct calib_match *first, char *inputs, size_t cap, struct err *e);

/* Total order on ops by what the model sees of them (kind, dims, dtypes, derived FLOPs and
 * bytes): 0 when two specs name the same op, however spelled. */
int calib_op_cmp(const struct op *a, const struct op *b);

/* *out (initialized here; release it with calib_points_release, also after a failure): one
 * point per distinct op of `in` over the runs r with use_run[r] (use_run NULL: every run), in
 * order of first appearance. Per run the median of its points of the op; measured_s, p10_s and
 * p90_s the medians of those over runs (even counts: the mean of the middle two); run_min_s,
 * run_max_s, runs and spread from the per-run medians; samples summed; run: the run when one
 * measured it, else -1. Points whose run is out of range (built by hand) count as run 0. out
 * keeps in's runs and sources and owns its strings. */
int calib_points_by_op(struct calib_points *out, const struct calib_points *in, const bool *use_run,
                       struct err *e);

/* The merged points (of calib_points_by_op) whose runs ran different kernels for the op
 * (calib_point.kernel_other): their count, and the first of them in *first (NULL: none). A
 * point over two code paths describes neither (a build or a library that picks another kernel). */
size_t calib_points_mixed(const struct calib_points *pts, const struct calib_point **first);

#endif
