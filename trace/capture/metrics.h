#ifndef K3_TRACE_CAPTURE_METRICS_H
#define K3_TRACE_CAPTURE_METRICS_H

/* Per-kernel hardware counters through CUPTI's range profiler (auto range, kernel replay): each
 * kernel launch is one range, replayed by CUPTI until every counter is collected, then evaluated
 * on the host. Implemented in metrics.cpp (the profiler host API header is C++); this is its C
 * face. All functions run on the application thread that launches, inside CUPTI's launch
 * callbacks, with the launch's context current. */

#include <stddef.h>
#include <stdint.h>

#include "trace/capture/decode.h"
#include "util/err.h"

#ifdef __cplusplus
extern "C" {
#endif

struct capture_metrics;

/* Parse a comma list of metric names: dram_read_bytes, dram_write_bytes, sm_throughput (the
 * k3sim names), or raw CUPTI metric names (containing "__", e.g. "dram__bytes_read.sum").
 * -EINVAL with a message in e for an unknown or empty name, -E2BIG past CAPTURE_MAX_METRICS. */
int capture_metrics_create(struct capture_metrics **out, const char *list, struct err *e);
/* Disable every context's profiler and free (NULL is accepted). */
void capture_metrics_free(struct capture_metrics *m);

size_t capture_metrics_count(const struct capture_metrics *m);
/* The names (as stored in the database) and units ("bytes", "percent", or NULL). */
const char *const *capture_metrics_names(const struct capture_metrics *m);
const char *const *capture_metrics_units(const struct capture_metrics *m);

/* Around one kernel launch on `ctx` (a CUcontext). exit returns 1 with *out filled, 0 when the
 * launch was not measured (profiling unavailable on this context; see capture_metrics_error),
 * or a negative error. */
void capture_metrics_launch_enter(struct capture_metrics *m, void *ctx);
int capture_metrics_launch_exit(struct capture_metrics *m, void *ctx, uint32_t correlation_id,
				const char *symbol, struct capture_metric *out);
/* When ctx was created: set its profiler up there rather than in its first launch. */
void capture_metrics_context_created(struct capture_metrics *m, void *ctx);
/* Before ctx is destroyed. */
void capture_metrics_context_destroy(struct capture_metrics *m, void *ctx);

/* The first failure seen (empty when none), for the capture report. */
const char *capture_metrics_error(const struct capture_metrics *m);
/* Kernels measured, and kernels whose launch produced no range. */
int64_t capture_metrics_measured(const struct capture_metrics *m);
int64_t capture_metrics_missed(const struct capture_metrics *m);

#ifdef __cplusplus
}
#endif

#endif
