#include "calib-fixture.h"

#include <stdio.h>
#include <string.h>

int cfx_open(struct cfx *f, const char *path)
{
	struct trace_db_opts o = {.overwrite = true};
	struct err e = {0};
	memset(f, 0, sizeof *f);
	f->next_corr = 1;
	if (trace_db_create(&f->db, path, &o, &e) < 0) {
		fprintf(stderr, "cfx_open: %s\n", e.msg);
		return -1;
	}
	struct trace_gpu g = {.id = 0,
	                      .name = "NVIDIA H200",
	                      .total_memory_bytes = 150109880320,
	                      .clock_hz = 1980000000,
	                      .sm_count = 132};
	if (trace_db_add_gpu(f->db, &g, &e) < 0 ||
	    trace_db_set_capture(f->db, TRACE_CAPTURE_DRIVER_VERSION, "580.159.04", &e) < 0 ||
	    trace_db_set_capture(f->db, TRACE_CAPTURE_CUDA_DRIVER_VERSION, "13000", &e) < 0 ||
	    trace_db_set_capture(f->db, TRACE_CAPTURE_SOURCE, "cupti", &e) < 0) {
		fprintf(stderr, "cfx_open: %s\n", e.msg);
		return -1;
	}
	return 0;
}

int cfx_close(struct cfx *f)
{
	struct err e = {0};
	int rc = trace_db_close(f->db, &e);
	if (rc < 0)
		fprintf(stderr, "cfx_close: %s\n", e.msg);
	f->db = NULL;
	return rc;
}

static int api(struct cfx *f, int64_t pid, int64_t tid, int64_t api_ns, const char *name, uint32_t corr)
{
	struct trace_api a = {.start_ns = api_ns,
	                      .end_ns = api_ns + 2000,
	                      .global_tid = trace_global_tid(pid, tid),
	                      .correlation_id = corr,
	                      .kind = TRACE_API_RUNTIME,
	                      .name = name};
	return trace_db_add_api(f->db, &a, NULL);
}

int cfx_kernel(struct cfx *f, int64_t tid, int64_t api_ns, const char *name, int64_t gpu_ns, int64_t dur_ns,
               int32_t grid_x, int32_t grid_y)
{
	uint32_t corr = f->next_corr++;
	struct trace_kernel k = {.start_ns = gpu_ns,
	                         .end_ns = gpu_ns + dur_ns,
	                         .global_pid = trace_global_pid(CFX_PID),
	                         .stream_id = 7,
	                         .correlation_id = corr,
	                         .name = name,
	                         .grid_x = grid_x,
	                         .grid_y = grid_y,
	                         .grid_z = 1,
	                         .block_x = 128,
	                         .block_y = 1,
	                         .block_z = 1};
	if (api(f, CFX_PID, tid, api_ns, "cudaLaunchKernel_v7000", corr) < 0)
		return -1;
	return trace_db_add_kernel(f->db, &k, NULL);
}

int cfx_memcpy(struct cfx *f, int64_t tid, int64_t api_ns, int64_t bytes, int64_t gpu_ns, int64_t dur_ns)
{
	uint32_t corr = f->next_corr++;
	struct trace_memcpy m = {.start_ns = gpu_ns,
	                         .end_ns = gpu_ns + dur_ns,
	                         .global_pid = trace_global_pid(CFX_PID),
	                         .stream_id = 7,
	                         .correlation_id = corr,
	                         .bytes = bytes,
	                         .copy_kind = TRACE_COPY_DTOD,
	                         .src_device_id = 0,
	                         .dst_device_id = 0};
	if (api(f, CFX_PID, tid, api_ns, "cudaMemcpyAsync_v3020", corr) < 0)
		return -1;
	return trace_db_add_memcpy(f->db, &m, NULL);
}

int cfx_kernel_on(struct cfx *f, int64_t pid, uint32_t device, int64_t tid, int64_t api_ns, const char *name,
                  int64_t gpu_ns, int64_t dur_ns)
{
	uint32_t corr = f->next_corr++;
	struct trace_kernel k = {.start_ns = gpu_ns,
	                         .end_ns = gpu_ns + dur_ns,
	                         .global_pid = trace_global_pid(pid),
	                         .device_id = device,
	                         .stream_id = 7,
	                         .correlation_id = corr,
	                         .name = name,
	                         .grid_x = 1,
	                         .grid_y = 1,
	                         .grid_z = 1,
	                         .block_x = 128,
	                         .block_y = 1,
	                         .block_z = 1};
	if (api(f, pid, tid, api_ns, "cudaLaunchKernel_v7000", corr) < 0)
		return -1;
	return trace_db_add_kernel(f->db, &k, NULL);
}

int cfx_range_on(struct cfx *f, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns, const char *text)
{
	struct trace_nvtx n = {.start_ns = start_ns,
	                       .end_ns = end_ns,
	                       .type = TRACE_NVTX_PUSH_POP,
	                       .global_tid = trace_global_tid(pid, tid),
	                       .text = text};
	return trace_db_add_nvtx(f->db, &n, NULL);
}

int cfx_orphan(struct cfx *f, const char *name, int64_t gpu_ns, int64_t dur_ns)
{
	struct trace_kernel k = {.start_ns = gpu_ns,
	                         .end_ns = gpu_ns + dur_ns,
	                         .global_pid = trace_global_pid(CFX_PID),
	                         .stream_id = 7,
	                         .correlation_id = 0,
	                         .name = name};
	return trace_db_add_kernel(f->db, &k, NULL);
}

int cfx_range(struct cfx *f, int64_t tid, int64_t start_ns, int64_t end_ns, const char *text)
{
	struct trace_nvtx n = {.start_ns = start_ns,
	                       .end_ns = end_ns,
	                       .type = TRACE_NVTX_PUSH_POP,
	                       .global_tid = trace_global_tid(CFX_PID, tid),
	                       .text = text};
	return trace_db_add_nvtx(f->db, &n, NULL);
}
