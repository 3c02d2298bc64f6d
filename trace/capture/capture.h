#ifndef K3_TRACE_CAPTURE_CAPTURE_H
#define K3_TRACE_CAPTURE_CAPTURE_H

/* Live CUPTI capture into a trace database (trace/db/tracedb.h), in-process.
 *
 * Two ways in:
 *  - libk3capture.so loaded by CUDA through CUDA_INJECTION64_PATH (what `k3sim trace capture`
 *    sets up): capture starts at cuInit with the settings in the environment (trace/capture/env.h)
 *    and stops at exit; nothing in the program changes.
 *  - these functions, for the project's own bench drivers (link libk3capture.so): start before the
 *    first CUDA call you want recorded, stop before exit (or let exit stop it).
 *
 * What is recorded: kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which keeps streams concurrent;
 * never KERNEL, which serializes them), memcpys (incl. peer), memsets, CUDA runtime and driver API
 * calls, NVTX ranges (push/pop, start/end) and marks, devices, and CUPTI's dropped-record counts,
 * and (NVML, on a sampler thread) every GPU's clocks, power, temperature and throttle reasons.
 * With `metrics`, each kernel is also replayed under CUPTI's range profiler and its counters are
 * stored per kernel (K3SIM_KERNEL_METRICS). Replay serializes kernels and adds time around each:
 * take durations from a capture without metrics.
 *
 * Threading: CUPTI hands full buffers to one writer thread, which decodes them and inserts rows in
 * batched transactions; the callbacks only move pointers. Memory is bounded: `buffers` buffers of
 * `buffer_bytes` each, preallocated. When all are in use the producer waits (up to
 * `wait_ms`), then CUPTI drops records and the drop is counted in the database.
 *
 * Durability: rows are committed in batches, at cudaDeviceReset, at trace_capture_stop, at exit and
 * on SIGINT/SIGTERM (the handler flushes, then passes the signal on). The database is in WAL mode
 * while capturing, so a crash loses at most the rows not yet committed and the file stays valid.
 *
 * Only one CUPTI client can subscribe per process: under Nsight Systems, Nsight Compute, cuda-gdb
 * or a running torch.profiler (Kineto), start fails with -EBUSY and names the holder in e. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/db/tracedb.h"
#include "util/err.h"

#define TRACE_CAPTURE_API __attribute__((visibility("default")))

struct trace_capture_opts {
	const char *metrics;           /* comma list: dram_read_bytes, dram_write_bytes,
					* sm_throughput, or raw CUPTI metric names; NULL: none */
	bool no_driver_api;            /* skip driver-API rows (runtime rows stay) */
	bool no_api;                   /* skip runtime- and driver-API rows: least overhead, but
					* kernels can no longer be tied to their launch calls */
	bool overwrite;                /* replace an existing database file */
	size_t buffers;                /* 0: 32 */
	size_t buffer_bytes;           /* 0: 8 MiB */
	int64_t wait_ms;               /* how long a producer waits for a free buffer; 0: 10 s */
	int64_t gpu_metrics_ms;        /* NVML sampling period of clocks, power, temperature into
					* K3SIM_GPU_METRICS; 0: 20 ms; < 0: off. Without NVML (no
					* driver) the capture goes on and says why in K3SIM_CAPTURE */
	const char *meta;              /* "key=value" lines stored as K3SIM_CAPTURE rows named
					* "meta.<key>" (e.g. a benchmark's clock regime); NULL: none */
};

/* What a stopped capture wrote. */
struct trace_capture_result {
	struct trace_db_stats stats;   /* rows written */
	int64_t dropped_records;       /* CUPTI's count, summed over contexts and streams */
	int64_t pool_waits;            /* times a producer had to wait for a buffer */
	char path[4096];               /* the database file */
};

/* Start capturing into `path` (a template: %p pid, %r rank, %h host; see env.h). opts may be NULL.
 * Returns 0; -EALREADY when a capture runs; -EBUSY when another CUPTI client holds the
 * subscription (e says which); -EEXIST (file exists, no overwrite); -EIO and others from CUPTI or
 * the database. */
TRACE_CAPTURE_API int trace_capture_start(const char *path, const struct trace_capture_opts *opts,
					  struct err *e);

/* Record an instantaneous NVTX-style mark named `name` on the calling thread, now. -ENOTCONN
 * when no capture runs. Costs a lock and a copy; no SQLite on the caller's thread. */
TRACE_CAPTURE_API int trace_capture_mark(const char *name);

/* Flush everything (CUPTI buffers, then the database), stop and close the database. res may be
 * NULL. -ENOTCONN when no capture runs. */
TRACE_CAPTURE_API int trace_capture_stop(struct trace_capture_result *res, struct err *e);

/* Commit what has been recorded so far without stopping (e.g. before a risky step). */
TRACE_CAPTURE_API int trace_capture_flush(struct err *e);

#endif
