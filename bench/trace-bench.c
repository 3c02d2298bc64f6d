/* Trace benchmarks (issue 3): ingest rate of the trace database writer, `trace summary` time on
 * a 10^6-kernel database, and Kineto JSON import rate.
 *
 * usage: bench-trace [-n KERNELS] [-d DIR] [--keep]
 *
 * The generated trace looks like a serving step: ~60 distinct kernel names (templated C++ names
 * as CUPTI reports them, NCCL kernels among them), 2 devices x 4 streams, one launching API call
 * per kernel (same correlation id), NVTX ranges around groups of launches. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/analyze/analyze.h"
#include "trace/import/import.h"
#include "trace/db/tracedb.h"

enum { NAMES = 60 };

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char names[NAMES][256];

static void make_names(void)
{
	for (int i = 0; i < NAMES; i++) {
		if (i % 10 == 9)
			snprintf(names[i], sizeof names[i],
				 "ncclDevKernel_AllReduce_Sum_bf16_RING_LL_%d(ncclDevKernelArgsStorage<4096ul>)",
				 i);
		else
			snprintf(names[i], sizeof names[i],
				 "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_%d"
				 "<at::native::BinaryFunctor<float, float, float> >(at::TensorIteratorBase&,"
				 " int)::{lambda(int)#1}>(int, at::native::BinaryFunctor<float, float, float>)",
				 i);
	}
}

struct gen {
	int64_t i, t_ns;
};

/* Kernel i of the synthetic trace and its launching call. */
static void gen_kernel(int64_t i, struct trace_kernel *k, struct trace_api *a)
{
	int64_t dev = i % 2, stream = (i / 2) % 4;
	int64_t start = i * 1500 + (i % 7) * 100;
	memset(k, 0, sizeof *k);
	k->start_ns = start;
	k->end_ns = start + 800 + (i % 13) * 150;
	k->global_pid = trace_global_pid(4242);
	k->device_id = (uint32_t)dev;
	k->context_id = 1;
	k->stream_id = (uint32_t)(7 + stream);
	k->correlation_id = (uint32_t)(i + 1);
	k->name = names[(i * 7 + i / 100) % NAMES];
	k->grid_x = 132;
	k->grid_y = 1;
	k->grid_z = 1;
	k->block_x = 256;
	k->block_y = 1;
	k->block_z = 1;
	k->registers_per_thread = 64;
	k->static_shared_bytes = 1024;
	k->dynamic_shared_bytes = 49152;
	/* fields CUPTI fills for every kernel, so the rows are as wide as a capture's */
	k->local_bytes_per_thread = 16;
	k->local_bytes_total = 65536000;
	k->grid_id = i + 1;
	k->cache_config = 1;
	k->shared_memory_executed_bytes = 65536;
	memset(a, 0, sizeof *a);
	a->start_ns = start - 5000;
	a->end_ns = start - 3000;
	a->global_tid = trace_global_tid(4242, 4243);
	a->correlation_id = k->correlation_id;
	a->name = "cudaLaunchKernel";
}

static int fail(const char *what, const struct err *e)
{
	char buf[1024];
	fprintf(stderr, "bench-trace: %s: %s\n", what, err_format(e, buf, sizeof buf));
	return 1;
}

int main(int argc, char **argv)
{
	int64_t n = 1000000;
	const char *dir = "/tmp";
	int keep = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			n = strtoll(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--keep") == 0)
			keep = 1;
		else {
			fprintf(stderr, "usage: bench-trace [-n KERNELS] [-d DIR] [--keep]\n");
			return 2;
		}
	}
	make_names();
	char kdb[4096], fdb[4096], json[4096], jdb[4096];
	snprintf(kdb, sizeof kdb, "%s/bench-trace-kernels-%ld.db", dir, (long)getpid());
	snprintf(fdb, sizeof fdb, "%s/bench-trace-full-%ld.db", dir, (long)getpid());
	snprintf(json, sizeof json, "%s/bench-trace-%ld.json", dir, (long)getpid());
	snprintf(jdb, sizeof jdb, "%s/bench-trace-json-%ld.db", dir, (long)getpid());
	struct err e = {0};
	struct trace_db *db;
	struct trace_kernel k;
	struct trace_api a;

	/* 1. kernel records only, default (import) mode and crash-safe (capture) mode */
	for (int safe = 0; safe < 2; safe++) {
		struct trace_db_opts o = {.overwrite = true, .crash_safe = safe != 0};
		double t0 = now_s();
		if (trace_db_create(&db, kdb, &o, &e))
			return fail("create", &e);
		for (int64_t i = 0; i < n; i++) {
			gen_kernel(i, &k, &a);
			if (trace_db_add_kernel(db, &k, &e))
				return fail("add kernel", &e);
		}
		if (trace_db_close(db, &e))
			return fail("close", &e);
		double t = now_s() - t0;
		printf("ingest_kernels%s: %" PRId64 " kernel records in %.3f s = %.3g records/s\n",
		       safe ? "_crash_safe" : "", n, t, (double)n / t);
	}

	/* 2. the full trace: kernels + launch calls + NVTX ranges, then its summary */
	{
		struct trace_db_opts o = {.overwrite = true};
		double t0 = now_s();
		if (trace_db_create(&db, fdb, &o, &e))
			return fail("create", &e);
		int64_t rows = 0;
		for (int64_t i = 0; i < n; i++) {
			gen_kernel(i, &k, &a);
			if (trace_db_add_kernel(db, &k, &e) || trace_db_add_api(db, &a, &e))
				return fail("add", &e);
			rows += 2;
			if (i % 1000 == 0) {
				struct trace_nvtx r = {.start_ns = i * 1500 - 6000,
						       .end_ns = (i + 1000) * 1500 - 6000,
						       .type = TRACE_NVTX_PUSH_POP,
						       .global_tid = trace_global_tid(4242, 4243),
						       .text = (i / 1000) % 2 ? "decode step" : "prefill chunk"};
				if (trace_db_add_nvtx(db, &r, &e))
					return fail("add nvtx", &e);
				rows++;
			}
		}
		if (trace_db_close(db, &e))
			return fail("close", &e);
		double t = now_s() - t0;
		printf("ingest_full: %" PRId64 " rows (%" PRId64 " kernels + launch calls + NVTX) in %.3f"
		       " s = %.3g rows/s\n",
		       rows, n, t, (double)rows / t);
		struct trace_summary s;
		t0 = now_s();
		if (trace_summary_compute(&s, fdb, NULL, &e))
			return fail("summary", &e);
		t = now_s() - t0;
		printf("summary: %" PRId64 " kernels, %" PRId64 " API calls, %" PRId64
		       " NVTX ranges in %.3f s (%zu kernel names, launch matched %" PRId64 ")\n",
		       s.kernels, s.api_calls, s.nvtx_ranges, t, s.n_kern, s.launch.matched);
		trace_summary_release(&s);
	}

	/* 3. Kineto JSON import of the same kernels and calls */
	{
		FILE *f = fopen(json, "w");
		if (!f) {
			perror(json);
			return 1;
		}
		fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
		const int64_t base = 1700000000000000000; /* an epoch in ns: positive, large */
		for (int64_t i = 0; i < n; i++) {
			gen_kernel(i, &k, &a);
			a.start_ns += base;
			k.start_ns += base;
			k.end_ns += base;
			fprintf(f,
				"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 4242,"
				" \"tid\": 4243, \"ts\": %" PRId64 ".%03" PRId64 ", \"dur\": 2.000, \"args\":"
				" {\"correlation\": %u}},\n",
				a.name, a.start_ns / 1000, a.start_ns % 1000,
				a.correlation_id);
			fprintf(f,
				"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": %u, \"tid\":"
				" %u, \"ts\": %" PRId64 ".%03" PRId64 ", \"dur\": %" PRId64 ".%03" PRId64
				", \"args\": {\"device\": %u, \"stream\": %u, \"correlation\": %u,"
				" \"registers per thread\": 64, \"shared memory\": 49152, \"grid\": [132, 1,"
				" 1], \"block\": [256, 1, 1]}}%s\n",
				k.name, k.device_id, k.stream_id, k.start_ns / 1000,
				k.start_ns % 1000, (k.end_ns - k.start_ns) / 1000,
				(k.end_ns - k.start_ns) % 1000, k.device_id, k.stream_id, k.correlation_id,
				i + 1 < n ? "," : "");
		}
		fputs("]}\n", f);
		long bytes = ftell(f);
		fclose(f);
		struct trace_db_opts o = {.overwrite = true};
		double t0 = now_s();
		if (trace_db_create(&db, jdb, &o, &e))
			return fail("create", &e);
		struct trace_import_stats st;
		if (trace_import_kineto(db, json, NULL, &st, &e))
			return fail("kineto import", &e);
		if (trace_db_close(db, &e))
			return fail("close", &e);
		double t = now_s() - t0;
		printf("kineto_import: %.1f MB JSON, %" PRId64 " kernels + %" PRId64 " API calls in %.3f s"
		       " = %.3g events/s, %.1f MB/s\n",
		       (double)bytes / 1e6, st.kernels, st.api_calls, t,
		       (double)(st.kernels + st.api_calls) / t, (double)bytes / 1e6 / t);
	}
	if (!keep) {
		unlink(kdb);
		unlink(json);
		unlink(jdb);
		unlink(fdb);
	} else {
		printf("kept: %s %s %s %s\n", kdb, fdb, json, jdb);
	}
	return 0;
}
