#ifndef K3_CALIB_PROFILE_H
#define K3_CALIB_PROFILE_H

/* Profile any program against the model (`k3sim trace profile`): the GPU activities of a trace
 * matched to model ops (calib/match.h: k3sim ranges, framework records through the derivation
 * rules, kernel-name rules), each op predicted by the cost model (sim_op_cost, launch latency
 * left out: device time), and
 *  - coverage: the share of GPU kernel time mapped to model ops with full shapes, and the rest
 *    by name and reason;
 *  - per op class (trace validate's: gemm.bf16, grouped_gemm.bf16, mla_prefill, memory, ...): measured GPU time
 *    (kernels, and the copies of mapped ops) against predicted, summed over the trace and per
 *    step; beside it the prediction with each op's eager launch latency (what `k3sim op`
 *    prints), the time an eager program cannot go below;
 *  - steps: ranges whose name matches a marker glob (prefill, decode, ProfilerStep#N, ...), or
 *    with --step-start a range that starts each step (the next one ends it), or, when no marker
 *    is found (or with --step-start auto), by repetition: the top-level framework record (one
 *    not inside another, on the thread that launches most kernels) that recurs at least three
 *    times and splits the kernels evenly (three quarters of the stretches between its calls
 *    within 10 % of their median kernel count: prefill stretches may differ; the fewest calls
 *    win, then the earliest first call), each call starting a step: the kernels whose
 *    launching call started inside the step on its thread. Per step the GPU span (first kernel
 *    start to last kernel end), busy time (union of its kernels), and idle time split into
 *    host-bound gaps (the next kernel's launch call had not returned when the GPU went idle: the
 *    GPU waited on the CPU) and other gaps. A step whose host-bound idle is at least half its span
 *    is CPU-bound: its span measures the host's launch rate, not the kernels, and the model's
 *    whole-step error there is not model error.
 * Errors are (predicted - measured) / measured. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calib/derive.h"
#include "calib/match.h"
#include "hw/hw.h"
#include "util/err.h"

enum { CALIB_PROFILE_CLASSES_MAX = 24 };

/* Op classes are calib_op_class's labels, as trace validate reports them ("gemm.bf16",
 * "grouped_gemm.bf16", "mla_prefill", "memory", "allreduce", ...); beyond
 * CALIB_PROFILE_CLASSES_MAX - 2 distinct labels the rest go to "other". The last class is
 * always "unmapped": kernels no op was found for. */
struct calib_pclass_sum {
	int64_t kernels;
	int64_t ops;          /* samples (one op each) */
	int64_t measured_ns;  /* summed GPU durations of the class's kernels (and, for mapped
			       * ops, their copies) */
	double predicted_s;   /* summed predictions of its ops (0 for unmapped) */
	double predicted_launch_s; /* the same with each op's eager launch latency */
};

struct calib_pstep {
	const char *label;    /* the marker's name (text before the first ',') */
	int64_t cpu_start_ns, cpu_end_ns, tid; /* with step_start: up to the next marker, the last
						* one up to the trace's last launch */
	int64_t kernels;
	int64_t gpu_first_ns, gpu_last_ns; /* of its kernels; both 0 when kernels is 0 */
	int64_t busy_ns;      /* union of the step's kernels */
	int64_t host_idle_ns; /* gaps where the GPU waited on a launch */
	int64_t other_idle_ns;
	bool cpu_bound;       /* host_idle_ns >= span / 2 */
	struct calib_pclass_sum *cls; /* [n_cls] */
};

struct calib_pspec {
	int32_t spec;         /* index in match.specs */
	int cls;              /* index in calib_profile.cls_label */
	int64_t ops, kernels, measured_ns;
	double predicted_s;   /* one op */
	bool dtype_assumed;
};

struct calib_profile_opts {
	const struct hw *hw;
	const struct calib_rules *rules;   /* kernel-name rules; NULL: none */
	const struct calib_derive *derive; /* NULL: framework records are not read */
	struct calib_derive_opts derive_opts;
	const char *const *steps;          /* marker globs; NULL: calib_profile_default_steps */
	int n_steps;
	bool step_start;                   /* a marker starts a step, the next one ends it */
	bool no_repetition;                /* no steps by repetition when no marker is found */
	int64_t max_rows;
};

extern const char *const calib_profile_default_steps[];
extern const int calib_profile_n_default_steps;

struct calib_profile {
	struct calib_match m;
	char cls_label[CALIB_PROFILE_CLASSES_MAX][32];
	int n_cls;                     /* the last is "unmapped" */
	struct calib_pclass_sum total[CALIB_PROFILE_CLASSES_MAX];
	int64_t kernel_ns;             /* all kernels */
	int64_t mapped_kernel_ns;      /* of them, in an op with full shapes */
	int64_t assumed_dtype_ns;      /* of those, from records without element types */
	int64_t kernels, mapped_kernels;
	struct calib_pstep *steps;
	size_t n_steps;
	struct calib_pclass_sum *step_cls; /* the steps' class sums, n_cls per step */
	int64_t in_steps_kernel_ns, in_steps_mapped_ns;
	char repeated[FW_NAME_MAX];    /* steps found by repetition: the record that starts each
					* ("" when markers gave the steps) */
	struct calib_pspec *ops;       /* by measured time, most first */
	size_t n_ops;
	char hw_name[64];
};

int calib_profile_run(struct calib_profile *p, const char *path, const struct calib_profile_opts *o,
                      struct err *e);
void calib_profile_release(struct calib_profile *p);

#endif
