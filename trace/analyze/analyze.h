#ifndef K3_TRACE_ANALYZE_H
#define K3_TRACE_ANALYZE_H

/* Trace analysis over a trace database (a k3sim capture or import, or an nsys SQLite export read
 * directly): the per-kernel table of nsys' cuda_gpu_kern_sum, the breakdown per NVTX range, device
 * and stream utilization, idle gaps, communication/compute overlap and launch overhead.
 *
 * Definitions (all times in ns; differences and sums saturate at the int64 range, and a row
 * that ends before it starts lasts 0, whatever the rows hold):
 * - kernel statistics group by demangled name (or short name with short_names); StdDev is the
 *   sample standard deviation (n - 1), Med the mean of the two middle values for even counts;
 *   Time % is the share of the summed kernel time.
 * - busy time of a device or stream is the union of its kernel, memcpy and memset intervals;
 *   utilization is busy time over the trace's GPU span (first GPU start to last GPU end).
 *   Devices are told apart by deviceId (processes sharing a GPU share its device row).
 * - idle gaps are the holes between a device's busy intervals, inside its own span.
 * - communication kernels are those the kernel classes (trace/analyze/kclass.h: NCCL, DeepEP, NVSHMEM,
 *   custom all-reduce, MoE all-to-all) call comm; compute is every other kernel; overlap is the
 *   time both run on one device (union of each, intersected).
 * - launch overhead of a kernel is its start minus the end of its launching call: the API call
 *   with the same correlationId in the same process (correlation ids are per process, so
 *   processes of a merged trace reuse them), the runtime call where a runtime and a driver call
 *   share the id. It is negative when the kernel started while the call was still running (a
 *   slow launch call: lazy module loading, a descheduled thread); that is real and counted in
 *   before_return. A kernel that starts before its call began cannot be on one clock: such
 *   matches (clock offset between GPU and CPU timestamps, or ids that do not belong together)
 *   are counted in inconsistent and left out of the statistics.
 * - API calls are the runtime and driver calls (eventClass 0 and 1), as imports keep them.
 * - a kernel belongs to every NVTX push/pop or start/end range open on the launching thread when
 *   the launching call started; kernels without a launching call fall back to the ranges of
 *   their process that contain their GPU start. GPU-projected ranges (TRACE_NVTX_DOMAIN_GPU) are
 *   not counted. A range's GPU time is the summed duration of its kernels.
 * - clocks and power come from K3SIM_GPU_METRICS (a k3sim capture's NVML readings), per
 *   deviceId: min / median / max of the SM clock and of the power over all readings. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"

struct trace_kclass_rules;

struct trace_summary_opts {
	bool short_names;       /* group by shortName (nsys' ":base") */
	const struct trace_kclass_rules *classes; /* kernel classes; NULL: the embedded default */
	int top_gaps;           /* how many of the longest gaps to list; 0: 10 */
	int64_t max_rows;       /* rows loaded per table; 0: 64 Mi (beyond: -E2BIG) */
};

struct trace_kernel_sum {
	const char *name;
	bool comm;              /* a communication kernel (trace/analyze/kclass.h) */
	const char *collective; /* comm: allreduce, dispatch, ...; NULL for compute */
	const char *library;    /* comm: nccl, deepep-ll, ...; NULL for compute */
	int64_t instances;
	int64_t total_ns, min_ns, max_ns;
	double avg_ns, med_ns, stddev_ns;
	double time_pct;        /* of all kernel time, 0..100 */
};

struct trace_device_sum {
	uint32_t device_id;
	int64_t kernels, memcpys, memsets;
	int64_t first_ns, last_ns;   /* this device's activity */
	int64_t busy_ns;
	double util_pct;             /* busy / the trace's GPU span */
	int64_t gaps, idle_ns, max_gap_ns;
	int64_t comm_ns, compute_ns, overlap_ns;
	double comm_hidden_pct;      /* overlap / comm, 0 when there is no communication */
};

struct trace_stream_sum {
	int64_t global_pid;
	uint32_t device_id, stream_id;
	int64_t kernels, memcpys, memsets;
	int64_t first_ns, last_ns;
	int64_t busy_ns;
	double util_pct;             /* busy / the trace's GPU span */
};

struct trace_gap_sum {
	uint32_t device_id;
	int64_t start_ns, dur_ns;
};

struct trace_nvtx_sum {
	const char *name;
	int64_t instances;
	int64_t total_ns, min_ns, max_ns;   /* range durations (CPU side) */
	double avg_ns;
	int64_t kernels;                    /* kernels attributed to the range */
	int64_t gpu_ns;                     /* their summed durations */
};

struct trace_launch_sum {
	int64_t matched, unmatched;         /* kernels with / without a launching API call */
	int64_t inconsistent;               /* of matched: start before the call began (excluded) */
	int64_t before_return;              /* of matched: started before the call returned */
	/* over the matched kernels less the inconsistent ones: */
	double avg_ns, med_ns;
	int64_t min_ns, max_ns, p90_ns, p99_ns;
	int64_t min_from_call_start_ns;     /* kernel start - call start, the least; >= 0 */
	double api_avg_ns;                  /* duration of the launching calls */
};

/* GPU clocks and power of one device over the trace (K3SIM_GPU_METRICS, sampled by the capture).
 * Medians as for kernels (mean of the two middle values for even counts); 0 where no reading. */
struct trace_clock_sum {
	uint32_t device_id;
	int64_t samples;
	int64_t first_ns, last_ns;          /* of the readings */
	double sm_mhz_min, sm_mhz_med, sm_mhz_max;
	double mem_mhz_med;
	double power_w_min, power_w_med, power_w_max;
	double temp_c_max;
	uint64_t throttle_any;              /* OR of the clocks-event reason bits seen */
	int64_t power_capped;               /* readings with the SW power cap bit (0x4) set */
};

struct trace_summary {
	int64_t kernels, memcpys, memsets, api_calls, nvtx_ranges;
	int64_t kernel_ns;                  /* summed kernel durations */
	int64_t memcpy_bytes, memcpy_ns, memset_bytes, memset_ns;
	int64_t first_ns, last_ns;          /* GPU span */
	int64_t span_ns;                    /* last_ns - first_ns, saturated at INT64_MAX */
	int64_t dropped_records;            /* K3SIM_DROPPED total */
	struct trace_kernel_sum *kern;      /* by total time, longest first */
	size_t n_kern;
	struct trace_device_sum *dev;       /* by device id */
	size_t n_dev;
	struct trace_stream_sum *stream;    /* by device, process, stream */
	size_t n_stream;
	struct trace_gap_sum *gaps;         /* longest first */
	size_t n_gaps;
	struct trace_nvtx_sum *nvtx;        /* by total range time, longest first */
	size_t n_nvtx;
	struct trace_launch_sum launch;
	struct trace_clock_sum *clocks;     /* by device id; none without K3SIM_GPU_METRICS */
	size_t n_clocks;
	struct arena arena;                 /* owns the arrays and names */
};

/* Compute the summary of the database at path. On failure s holds nothing to release. */
int trace_summary_compute(struct trace_summary *s, const char *path,
			  const struct trace_summary_opts *o, struct err *e);
void trace_summary_release(struct trace_summary *s);

/* Attribution, the one walk for trace summary's NVTX times and calibration's matching. Points are
 * activities placed where they were launched (key: the launching thread's globalTid, or a process
 * for kernels without a launching call; t: the launching call's start), spans are NVTX ranges
 * (key: their thread or process; [s, e]). For each point, in (key, t) order, fn gets the spans
 * open at t on the point's key (s <= t <= e), outermost (earliest start) first, at most
 * TRACE_OPEN_SPANS_MAX of them. id is the caller's (an index, a duration). Sorts p and r in
 * place. Returns 0, or the first negative value fn returns (which stops the walk). */
enum { TRACE_OPEN_SPANS_MAX = 256 };
struct trace_point {
	int64_t key, t;
	int64_t id;
};
struct trace_span {
	int64_t key, s, e;
	int64_t id;
};
typedef int (*trace_attribute_fn)(void *ctx, const struct trace_point *p, const struct trace_span *const *open,
				  size_t n_open);
int trace_attribute(struct trace_point *p, size_t np, struct trace_span *r, size_t nr, trace_attribute_fn fn,
		    void *ctx);

#endif
