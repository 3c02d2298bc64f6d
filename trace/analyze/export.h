#ifndef K3_TRACE_EXPORT_H
#define K3_TRACE_EXPORT_H

/* Export a trace database to Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open. Layout: one process per (process, GPU) named "GPU <deviceId>", with one
 * thread per stream ("stream <streamId>") holding its kernels, memcpys and memsets; CPU-side NVTX
 * ranges and marks, and CUDA API calls, on their own process and thread. Timestamps are
 * microseconds with nanosecond decimals, relative to "baseTimeNanoseconds" (as Kineto writes
 * them: viewers read them as doubles). Events carry what an import needs to give the rows back
 * (trace import reads this format): device and stream of GPU rows, the demangled kernel name in
 * args.name beside the short name, correlation ids, GPU-projected NVTX ranges as
 * gpu_user_annotation. Rows are streamed from SQLite to the output: memory does not grow with the
 * trace. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

struct trace_export_opts {
	bool has_from, has_to;     /* time window: keep events overlapping [from_ns, to_ns] */
	int64_t from_ns, to_ns;
	bool no_api;               /* leave CUDA runtime/driver calls out */
};

struct trace_export_stats {
	int64_t kernels, memcpys, memsets, nvtx, api_calls;
	int64_t events;            /* everything written, metadata included */
};

/* Write to out (not closed). out_name is used in errors. */
int trace_export_perfetto(const char *db_path, FILE *out, const char *out_name,
			  const struct trace_export_opts *o, struct trace_export_stats *st,
			  struct err *e);

#endif
