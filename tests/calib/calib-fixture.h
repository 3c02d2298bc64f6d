#ifndef K3_TESTS_CALIB_FIXTURE_H
#define K3_TESTS_CALIB_FIXTURE_H

/* Trace databases for the calib tests, written through trace/db/tracedb.h: launches (a CUDA API call
 * on a thread and the kernel or memcpy it starts, joined by a fresh correlationId) and NVTX
 * ranges. One process (pid CFX_PID) unless a function takes another; times in ns. */

#include <stdint.h>

#include "trace/db/tracedb.h"

enum { CFX_PID = 4242 };

struct cfx {
	struct trace_db *db;
	uint32_t next_corr;
};

/* Create (replace) the database at path, with one GPU ("NVIDIA H200") and K3SIM_CAPTURE keys. */
int cfx_open(struct cfx *f, const char *path);
int cfx_close(struct cfx *f);

/* A launch API call on thread tid at api_ns, and its kernel on the GPU at [gpu_ns, gpu_ns + dur). */
int cfx_kernel(struct cfx *f, int64_t tid, int64_t api_ns, const char *name, int64_t gpu_ns, int64_t dur_ns,
               int32_t grid_x, int32_t grid_y);
/* The same for a device-to-device memcpy of `bytes`. */
int cfx_memcpy(struct cfx *f, int64_t tid, int64_t api_ns, int64_t bytes, int64_t gpu_ns, int64_t dur_ns);
/* cfx_kernel and cfx_range in process pid, the kernel on GPU `device` (another rank of a merged
 * capture). */
int cfx_kernel_on(struct cfx *f, int64_t pid, uint32_t device, int64_t tid, int64_t api_ns, const char *name,
                  int64_t gpu_ns, int64_t dur_ns);
int cfx_range_on(struct cfx *f, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns, const char *text);
/* A kernel with no launching API call (correlationId 0). */
int cfx_orphan(struct cfx *f, const char *name, int64_t gpu_ns, int64_t dur_ns);
/* A push/pop NVTX range on thread tid. */
int cfx_range(struct cfx *f, int64_t tid, int64_t start_ns, int64_t end_ns, const char *text);

#endif
