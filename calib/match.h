#ifndef K3_CALIB_MATCH_H
#define K3_CALIB_MATCH_H

/* Matching measured GPU work in a trace database (a k3sim capture, an import, or an nsys SQLite
 * export) to model ops.
 *
 * 1. NVTX: a kernel, memcpy or memset belongs to the innermost NVTX range whose text starts with
 *    "k3sim " ("k3sim op=gemm m=64 n=7168 k=7168 dtype=bf16", parsed by opspec_parse_line) that
 *    was open on the launching thread when its launching API call started (joined through
 *    correlationId within the process). One range instance is one sample; its time is the GPU
 *    time its activities cover (the union of their intervals: kernels that overlap, on two
 *    streams or by programmatic dependent launch, count once; sum_ns keeps the plain sum).
 *    Other ranges are transparent; GPU-projected ranges (TRACE_NVTX_DOMAIN_GPU) are ignored.
 *    In the range of a collective, when the kernel classes (trace/analyze/kclass.h, the rule set trace
 *    summary uses too) call any of its kernels communication, only those count: the rest (the gather of an EP dispatch's rows, the weighted sum of a
 *    combine) is skipped, listed with its reason.
 * 2. Framework records (trace/analyze/shapes.h, with opts.derive): an activity outside k3sim ranges
 *    whose launching call ran inside a framework record ("aten::mm, ..., sizes = [[..], [..]]":
 *    emit_nvtx(record_shapes=True), or a Kineto import with --cpu-ops) gets the op the
 *    derivation rules (calib/derive.h) make of the innermost such record; one record instance
 *    is one sample (all the kernels it launched). Records the rules cannot price are listed
 *    with the reason.
 * 3. Rules (calib/rules.h): activities outside k3sim ranges and framework records are named by
 *    kernel-name rules; shapes come from the enclosing ranges' key=value tokens or from launch
 *    geometry.
 * Nothing is dropped silently: every activity is counted as matched, skipped by a rule, or
 * unmatched, and unmatched ones are listed by name with the reason.
 *
 * Memory is bounded by opts.max_rows per table (default CALIB_MATCH_MAX_ROWS, else -E2BIG). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calib/derive.h"
#include "calib/rules.h"
#include "model/ops.h"
#include "util/arena.h"
#include "util/err.h"

enum { CALIB_MATCH_MAX_ROWS = 32 * 1024 * 1024 };

struct calib_match_opts {
	const struct calib_rules *rules; /* NULL: NVTX ranges only */
	int64_t max_rows;                /* per table; 0: CALIB_MATCH_MAX_ROWS */
	const struct calib_derive *derive; /* NULL: framework records are not read */
	struct calib_derive_opts derive_opts;
	bool keep_activities;            /* fill calib_match.acts (trace profile) */
	const char *const *marks;        /* globs over range names (the text before the first
					  * ','): matching ranges go to calib_match.marks */
	int n_marks;
};

/* One GPU activity as matched (opts.keep_activities), in the order of the tables read. */
struct calib_activity {
	int64_t start_ns, end_ns;         /* on the GPU */
	int64_t launch_ns, launch_end_ns; /* the launching call (with launched) */
	int64_t tid;                      /* the launching thread (with launched) */
	bool launched;                    /* its launching call is in the trace */
	int32_t spec;                     /* the op it was matched to; -1: unmatched or skipped */
	bool first;                       /* the first activity of its sample: the op's time is
					   * predicted once per sample */
	bool dtype_assumed;               /* a framework record without element types */
	uint8_t kind;                     /* 0 kernel, 1 memcpy, 2 memset */
	uint32_t device_id;
};

/* A range whose name matched opts.marks (step markers). */
struct calib_mark {
	const char *text;
	int64_t start_ns, end_ns, tid;
};

/* A distinct op measured in the trace. */
struct calib_spec {
	const char *text; /* "gemm m=64 n=7168 k=7168 dtype=bf16" or the range text */
	struct op op;
};

/* One measured instance of an op: a k3sim range instance, or a rule's kernel (group). */
struct calib_sample {
	int32_t spec; /* index in calib_match.specs */
	int32_t rule; /* -1: an NVTX range; else the rule's index */
	int32_t activities;
	uint32_t device_id;
	int64_t pid;      /* process of the first activity (with device_id: the rank) */
	int64_t start_ns; /* first activity's GPU start */
	int64_t end_ns;   /* last activity's GPU end */
	int64_t gpu_ns;   /* GPU time: the union of its activities' intervals (on each device; summed
			   * over devices): kernels that run at once count once */
	int64_t sum_ns;   /* its activities' GPU durations summed (above gpu_ns where they overlap) */
	double sm_clock_hz; /* the SM clock the capture recorded around it (K3SIM_GPU_METRICS of its
			     * device): the median of the readings inside [start_ns, end_ns], else
			     * the nearest reading; 0 without readings */
	double power_w;     /* the board power it recorded (K3SIM_GPU_METRICS powerW), likewise (the
			     * readings with a power; W); 0 without */
	int32_t power_readings; /* the readings with a power inside [start_ns, end_ns] */
	/* Which code ran: the sum (mod 2^64) of its activities' name hashes (FNV-1a; 0: none), and
	 * the name of its longest activity (in calib_match.arena), with that activity's duration. */
	uint64_t kernels_sig;
	const char *kernel;
	int64_t kernel_ns;
};

/* Activities left unmatched (or skipped by a rule), grouped by name and reason. */
struct calib_unmatched {
	const char *name;
	const char *reason;
	bool skipped; /* a skip rule: known, not a model op */
	int64_t count;
	int64_t gpu_ns;
};

/* A k3sim range text that is not a valid op. */
struct calib_bad_range {
	const char *text;
	const char *error;
	int64_t instances;
};

struct calib_trace_info {
	char device[128]; /* TARGET_INFO_GPU.name */
	char uuid[64];    /* TARGET_INFO_GPU.uuid, when the trace has it */
	int64_t sm_clock_hz, sms, memory_bytes, memory_bw_bytes_per_s;
	char driver[64]; /* K3SIM_CAPTURE keys, when present */
	char cuda_driver[32], cuda_runtime[32], host[128], command[512], source[32];
	int64_t start_utc_ns;
	char regime[16]; /* K3SIM_CAPTURE meta.regime (calib-grid: burst or sustained), when present */
};

struct calib_match {
	struct calib_spec *specs;
	size_t n_specs;
	struct calib_sample *samples;
	size_t n_samples;
	struct calib_unmatched *unmatched; /* most GPU time first */
	size_t n_unmatched;
	struct calib_bad_range *bad;
	size_t n_bad;
	int64_t kernels, memcpys, memsets; /* activities read */
	int64_t matched_nvtx, matched_rules, skipped, unmatched_total;
	int64_t matched_framework;          /* of the activities: by a framework record */
	int64_t framework_ranges;           /* ranges that are framework records */
	struct calib_activity *acts;        /* opts.keep_activities */
	size_t n_acts;
	struct calib_mark *marks;           /* opts.marks, by start */
	size_t n_marks;
	int64_t ranges, k3sim_ranges, empty_ranges; /* k3sim ranges with no GPU work */
	int64_t clock_readings;             /* K3SIM_GPU_METRICS SM clock readings (0: none, or
					     * not a k3sim capture: samples have no clock) */
	struct calib_trace_info info;
	struct arena arena;
};

/* Match the trace at path. On failure m holds nothing to release. */
int calib_match_db(struct calib_match *m, const char *path, const struct calib_match_opts *o, struct err *e);
void calib_match_release(struct calib_match *m);

#endif
