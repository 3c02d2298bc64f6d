/* trace/import_kineto: PyTorch profiler (Kineto) JSON into the trace database. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "trace/import/import.h"
#include "trace/db/tracedb.h"

/* A trace as torch.profiler writes it: CPU events (pid 4242), GPU events (pid = device,
 * tid = stream), epoch-sized microsecond timestamps with fractions. The kernel rows come before
 * any CPU event, so their process id has to be learned later. */
static const char KINETO[] =
	"{\n"
	"  \"schemaVersion\": 1,\n"
	"  \"deviceProperties\": [\n"
	"    {\"id\": 0, \"name\": \"NVIDIA H200\", \"totalGlobalMem\": 150754820096, \"computeMajor\": 9,"
	"     \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,"
	"     \"regsPerBlock\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": 132}\n"
	"  ],\n"
	"  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8},\n"
	"  \"traceEvents\": [\n"
	"    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)\","
	"     \"pid\": 0, \"tid\": 7, \"ts\": 1700000000123.456, \"dur\": 2.5,"
	"     \"args\": {\"External id\": 5, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7,"
	"       \"correlation\": 101, \"registers per thread\": 16, \"shared memory\": 0,"
	"       \"blocks per SM\": 0.5, \"warps per SM\": 2.0, \"grid\": [66, 1, 1], \"block\": [128, 1, 1],"
	"       \"est. achieved occupancy %\": 3}},\n"
	"    {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Pinned)\", \"pid\": 0, \"tid\": 7,"
	"     \"ts\": 1700000000130.001, \"dur\": 1.999, \"args\": {\"device\": 0, \"stream\": 7,"
	"     \"correlation\": 102, \"bytes\": 1048576, \"memory bandwidth (GB/s)\": 524.5}},\n"
	"    {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": 8,"
	"     \"ts\": 1700000000133, \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 8, \"bytes\": 256}},\n"
	"    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::fill_\", \"pid\": 4242, \"tid\": 4243,"
	"     \"ts\": 1700000000120.0, \"dur\": 6.0, \"args\": {\"External id\": 5}},\n"
	"    {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 4242, \"tid\": 4243,"
	"     \"ts\": 1700000000121.000, \"dur\": 1.5, \"args\": {\"cbid\": 211, \"correlation\": 101}},\n"
	"    {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"pid\": 4242, \"tid\": 4243,"
	"     \"ts\": 1700000000125.0, \"dur\": 0.25, \"args\": {\"correlation\": 103}},\n"
	"    {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"layer.0.mla\", \"pid\": 4242, \"tid\": 4243,"
	"     \"ts\": 1700000000119.5, \"dur\": 20},\n"
	"    {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"layer.0.mla\", \"pid\": 0, \"tid\": 7,"
	"     \"ts\": 1700000000123.456, \"dur\": 8.544, \"args\": {\"device\": 0, \"stream\": 7}},\n"
	"    {\"ph\": \"f\", \"id\": 101, \"pid\": 0, \"tid\": 7, \"ts\": 1700000000123.456, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	"    {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 4242, \"tid\": 0, \"args\": {\"name\": \"python3\"}},\n"
	"    {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"GPU 0\"}},\n"
	"    {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"old_style_kernel\", \"pid\": 0, \"tid\": \"stream 9\","
	"     \"ts\": 1700000000140, \"dur\": 3, \"args\": {\"device\": 0, \"correlation\": 104}},\n"
	"    [\"not\", \"an\", \"event\"]\n"
	"  ],\n"
	"  \"traceName\": \"rank3.pt.trace.json\",\n"
	"  \"baseTimeNanoseconds\": 1000\n"
	"}\n";

static int import_str(const char *db_path, const char *json, size_t len,
		      struct trace_import_stats *st, struct err *e)
{
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	int rc = trace_db_create(&db, db_path, &o, e);
	assert_int_equal(rc, 0);
	rc = trace_import_kineto_mem(db, "t.json", json, len, NULL, st, e);
	if (rc) {
		trace_db_discard(db);
		return rc;
	}
	assert_int_equal(trace_db_close(db, e), 0);
	return 0;
}

static void test_import_rows(void **state)
{
	(void)state;
	const char *p = fx_path("kineto.db");
	struct trace_import_stats st;
	struct err e = {0};
	int rc = import_str(p, KINETO, sizeof KINETO - 1, &st, &e);
	if (rc)
		fprintf(stderr, "%s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(st.kernels, 2);
	assert_int_equal(st.memcpys, 1);
	assert_int_equal(st.memsets, 1);
	assert_int_equal(st.api_calls, 2);
	assert_int_equal(st.nvtx, 2);
	assert_int_equal(st.gpus, 1);
	assert_int_equal(st.processes, 1);

	/* exact nanoseconds from the decimal text, plus baseTimeNanoseconds (1000 here, given after
	 * the events: they are shifted at the end) */
	assert_int_equal(fx_i64(p, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 101"),
			 1700000000124456);
	assert_int_equal(fx_i64(p, "SELECT end FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 101"),
			 1700000000126956);
	assert_int_equal(st.base_time_ns, 1000);
	assert_int_equal(st.first_ns, 1700000000120500); /* the annotation, 119.5 µs + base */
	assert_int_equal(fx_i64(p, "SELECT gridX * 1000000 + blockX * 1000 + registersPerThread FROM"
				   " CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 101"),
			 66128016);
	assert_int_equal(fx_i64(p, "SELECT streamId * 100 + deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"
				   " WHERE correlationId = 101"),
			 700);
	assert_string_equal(fx_text(p, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON"
				       " s.id = k.shortName WHERE correlationId = 101"),
			    "vectorized_elementwise_kernel");
	/* GPU rows written before the first CPU event still carry the process id */
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 24 = 4242"), 2);
	assert_int_equal(fx_i64(p, "SELECT globalPid >> 24 FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 4242);
	/* "tid": "stream 9" and the capitalized category of older Kineto */
	assert_int_equal(fx_i64(p, "SELECT streamId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 104"), 9);
	/* memcpy kind from the name, bytes from args */
	assert_int_equal(fx_i64(p, "SELECT copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"), TRACE_COPY_DTOH);
	assert_int_equal(fx_i64(p, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 1048576);
	assert_int_equal(fx_i64(p, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 1999);
	assert_int_equal(fx_i64(p, "SELECT bytes * 10 + streamId FROM CUPTI_ACTIVITY_KIND_MEMSET"), 2568);
	/* API calls: runtime and driver, on the CPU thread */
	assert_int_equal(fx_i64(p, "SELECT eventClass FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 103"),
			 TRACE_API_DRIVER);
	assert_int_equal(fx_i64(p, "SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 101"),
			 trace_global_tid(4242, 4243));
	assert_int_equal(fx_i64(p, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 103"),
			 250);
	/* annotations: a CPU push/pop range, and its GPU projection in the GPU domain */
	assert_int_equal(fx_i64(p, "SELECT end - start FROM NVTX_EVENTS WHERE eventType = 59"), 20000);
	assert_string_equal(fx_text(p, "SELECT text FROM NVTX_EVENTS WHERE eventType = 59"), "layer.0.mla");
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60 AND domainId = "
				   "0x6b3367707500 AND (globalTid & 16777215) = 7"), 1);
	/* device properties, distributed info, process name */
	assert_string_equal(fx_text(p, "SELECT name FROM TARGET_INFO_GPU WHERE id = 0"), "NVIDIA H200");
	assert_int_equal(fx_i64(p, "SELECT smCount FROM TARGET_INFO_GPU"), 132);
	assert_int_equal(fx_i64(p, "SELECT maxWarpsPerMultiprocessor FROM TARGET_INFO_GPU"), 64);
	assert_string_equal(fx_text(p, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'rank'"), "3");
	assert_string_equal(fx_text(p, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'source'"), "kineto-import");
	assert_string_equal(fx_text(p, "SELECT name FROM PROCESSES WHERE pid = 4242"), "python3");
}

static void test_import_file_and_pid_option(void **state)
{
	(void)state;
	const char *json = fx_path("k.json");
	fx_write_str(json, KINETO);
	const char *p = fx_path("k-file.db");
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	struct err e = {0};
	assert_int_equal(trace_db_create(&db, p, &o, &e), 0);
	struct trace_kineto_opts ko = {.pid = 77};
	struct trace_import_stats st;
	assert_int_equal(trace_import_kineto(db, json, &ko, &st, &e), 0);
	assert_int_equal(trace_db_close(db, &e), 0);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 24 = 77"), 2);
	enum trace_format f;
	assert_int_equal(trace_detect_format(json, &f, &e), 0);
	assert_int_equal(f, TRACE_FORMAT_KINETO_JSON);
}

/* The JSON Array Format: a bare list of events. */
static void test_array_format(void **state)
{
	(void)state;
	const char doc[] = "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 1,"
			   " \"ts\": 1.0, \"dur\": 2.0},"
			   " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\","
			   " \"pid\": 9, \"tid\": 9, \"ts\": 0.5, \"dur\": 0.25}]";
	const char *p = fx_path("array.db");
	struct trace_import_stats st;
	assert_int_equal(import_str(p, doc, sizeof doc - 1, &st, NULL), 0);
	assert_int_equal(st.kernels, 1);
	assert_int_equal(fx_i64(p, "SELECT end FROM CUPTI_ACTIVITY_KIND_KERNEL"), 3000);
}

static void expect_bad(const char *doc, size_t len, int line, const char *what)
{
	struct err e = {0};
	struct trace_import_stats st;
	int rc = import_str(fx_path("bad.db"), doc, len, &st, &e);
	if (rc == 0 || !strstr(e.msg, what) || e.line != line)
		fprintf(stderr, "rc %d %s:%d:%d: %s\n", rc, e.file, e.line, e.col, e.msg);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(e.msg, what));
	assert_int_equal(e.line, line);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	expect_bad("", 0, 1, "end of file");
	expect_bad("garbage", 7, 1, "unexpected 'g'");
	expect_bad("\"just a string\"", 15, 1, "not a JSON object");
	expect_bad("{\"displayTimeUnit\": \"ns\"}", 25, 0, "no 'traceEvents'");
	expect_bad("{\"traceEvents\": 5}", 18, 1, "not an array");
	/* truncated in the middle of an event */
	expect_bad(KINETO, 900, 8, "truncated");
	expect_bad("{\"traceEvents\": [{\"ph\": \"X\",}]}", 31, 1, "expected a string key");
	expect_bad("{\"traceEvents\": []} {}", 22, 1, "the end of the document");
	/* binary noise */
	const char noise[] = "{\"traceEvents\": [\x01\x02\xff]}";
	expect_bad(noise, sizeof noise - 1, 1, "unexpected byte");
	/* deep nesting inside args */
	char deep[400];
	int n = snprintf(deep, sizeof deep, "{\"traceEvents\": [{\"args\": ");
	for (int i = 0; i < 100; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	expect_bad(deep, (size_t)n, 1, "nesting deeper");
	/* a time past the int64 ns range is an error at its event, never an overflow */
	const char *far = "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\","
			  " \"ts\": 9223372036854775, \"dur\": 9223372036854775}]}";
	expect_bad(far, strlen(far), 2, "int64 nanosecond range");
	const char *base = "{\"baseTimeNanoseconds\": 9223372036854775807, \"traceEvents\": [\n{"
			   "\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1}]}";
	expect_bad(base, strlen(base), 2, "int64 nanosecond range");
}

/* Strings of any length: a huge name is kept cut, a huge ignored argument costs nothing (issue 12:
 * both aborted the import with "string longer than 1 MiB" before). */
static void test_long_strings(void **state)
{
	(void)state;
	size_t big = 3u << 20;
	char *doc = malloc(2 * big + 512);
	int h = snprintf(doc, 512, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\","
			 " \"ts\": 1, \"dur\": 1, \"name\": \"");
	memset(doc + h, 'x', big);
	size_t n = (size_t)h + big;
	n += (size_t)sprintf(doc + n, "\", \"args\": {\"Call stack\": \"");
	memset(doc + n, 'y', big);
	n += big;
	n += (size_t)sprintf(doc + n, "\", \"device\": 3}}]}");
	const char *p = fx_path("long.db");
	struct trace_import_stats st;
	struct err e = {0};
	int rc = import_str(p, doc, n, &st, &e);
	if (rc)
		fprintf(stderr, "%s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(st.kernels, 1);
	assert_int_equal(st.strings_cut, 1);
	assert_int_equal(fx_i64(p, "SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"), 3);
	/* the database keeps names up to 64 KiB */
	assert_int_equal(fx_i64(p, "SELECT length(s.value) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN"
				   " StringIds s ON s.id = k.demangledName"), 65536);
	free(doc);
}

/* GPU events listed before any CPU event, more than the old 65,536-row queue held: every row
 * gets the process of the CPU events, so every launch is matched (issue 12: past 65,536 pending
 * rows the rest got process 0 and no launch matched). */
static void test_gpu_events_first(void **state)
{
	(void)state;
	enum { N = 70000 };
	size_t cap = (size_t)N * 400 + 256;
	char *doc = malloc(cap);
	size_t n = (size_t)sprintf(doc, "{\"traceEvents\": [\n");
	for (int i = 0; i < N; i++)
		n += (size_t)sprintf(doc + n, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\","
				     " \"pid\": 0, \"tid\": 7, \"ts\": %d.5, \"dur\": 1,"
				     " \"args\": {\"device\": 0, \"correlation\": %d}},\n",
				     i % 3, 10 * i + 5, i + 1);
	for (int i = 0; i < N; i++)
		n += (size_t)sprintf(doc + n, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\":"
				     " \"cudaLaunchKernel\", \"pid\": 4242, \"tid\": 4243, \"ts\": %d,"
				     " \"dur\": 2, \"args\": {\"correlation\": %d}}%s\n",
				     10 * i, i + 1, i + 1 < N ? "," : "");
	n += (size_t)sprintf(doc + n, "]}");
	assert_true(n < cap);
	const char *p = fx_path("gpu-first.db");
	struct trace_import_stats st;
	struct err e = {0};
	assert_int_equal(import_str(p, doc, n, &st, &e), 0);
	assert_int_equal(st.kernels, N);
	assert_int_equal(st.gpu_rows_no_process, 0);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 24"
				   " = 4242"), N);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN"
				   " CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND"
				   " (r.globalTid >> 24) = (k.globalPid >> 24)"), N);

	/* no CPU event at all: process 0, and the stats say how many rows that is */
	const char only_gpu[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\","
				" \"pid\": 1, \"tid\": 7, \"ts\": 1, \"dur\": 1},"
				" {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset\","
				" \"pid\": 1, \"tid\": 7, \"ts\": 3, \"dur\": 1}]}";
	assert_int_equal(import_str(p, only_gpu, sizeof only_gpu - 1, &st, &e), 0);
	assert_int_equal(st.gpu_rows_no_process, 2);
	assert_int_equal(fx_i64(p, "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"), 0);
	assert_int_equal(fx_i64(p, "SELECT id FROM TARGET_INFO_GPU"), 1);
	free(doc);
}

/* Kineto repeats process_name metadata; PROCESSES keeps one row per pid (issue 12: 62,111 rows
 * for 2 pids before). Unknown categories and a trace without GPU activity are counted for the
 * warnings. Kineto's own order (baseTimeNanoseconds before the events) shifts each event. */
static void test_metadata_and_warnings(void **state)
{
	(void)state;
	char doc[8192];
	size_t n = (size_t)sprintf(doc, "{\"baseTimeNanoseconds\": 1700000000000000000,"
				  " \"traceEvents\": [");
	for (int i = 0; i < 50; i++)
		n += (size_t)sprintf(doc + n, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d,"
				     " \"tid\": %d, \"args\": {\"name\": \"python3\"}},", 100 + i % 2, i);
	n += (size_t)sprintf(doc + n,
			     "{\"ph\": \"X\", \"cat\": \"hpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1},"
			     "{\"ph\": \"X\", \"cat\": \"hpu_op\", \"name\": \"b\", \"ts\": 1, \"dur\": 1},"
			     "{\"ph\": \"X\", \"name\": \"no category\", \"ts\": 1, \"dur\": 1},"
			     "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"flow\", \"ts\": 1},"
			     "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step\","
			     " \"pid\": 100, \"tid\": 1, \"ts\": 2.5, \"dur\": 1}]}");
	const char *p = fx_path("meta.db");
	struct trace_import_stats st;
	struct err e = {0};
	assert_int_equal(import_str(p, doc, n, &st, &e), 0);
	assert_int_equal(st.processes, 2);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM PROCESSES"), 2);
	assert_int_equal(st.kernels + st.memcpys + st.memsets, 0);
	assert_int_equal(st.unknown_events, 3);
	assert_int_equal(st.n_unknown_cats, 2);
	assert_string_equal(st.unknown_cat[0], "hpu_op");
	assert_int_equal(st.unknown_cat_events[0], 2);
	assert_string_equal(st.unknown_cat[1], "(no category)");
	assert_int_equal(fx_i64(p, "SELECT start FROM NVTX_EVENTS"), 1700000000000002500);
	assert_string_equal(fx_text(p, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'clock'"),
			    "unix_epoch");
	assert_string_equal(fx_text(p, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'pid'"), "100");
}

/* gzip'd input (from memory here; files and pipes in test-trace-json and the CLI tests). */
static void test_gzip(void **state)
{
	(void)state;
	const char *json = fx_path("z.json");
	fx_write_str(json, KINETO);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "gzip -c %s > %s.gz", json, json);
	assert_int_equal(system(cmd), 0);
	char gz[4096];
	snprintf(gz, sizeof gz, "%s.gz", json);
	size_t len = fx_size(gz);
	char *data = malloc(len);
	FILE *f = fopen(gz, "rb");
	assert_int_equal(fread(data, 1, len, f), len);
	fclose(f);
	const char *p = fx_path("z.db");
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	struct err e = {0};
	assert_int_equal(trace_db_create(&db, p, &o, &e), 0);
	struct trace_import_stats st;
	assert_int_equal(trace_import_kineto_mem(db, "z.json.gz", data, len, NULL, &st, &e), 0);
	assert_int_equal(trace_db_close(db, &e), 0);
	assert_int_equal(st.kernels, 2);
	free(data);
}

/* Odd but valid events never crash and are counted as skipped. */
static void test_odd_events(void **state)
{
	(void)state;
	const char doc[] =
		"{\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no_dur\", \"ts\": 1},"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"neg\", \"ts\": 1, \"dur\": -1},"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": {\"obj\": 1}, \"ts\": 1, \"dur\": 1},"
		"{\"ph\": \"B\", \"cat\": \"kernel\", \"name\": \"begin\", \"ts\": 1},"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"big_ts\", \"ts\": 1e40, \"dur\": 1},"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ok\", \"ts\": \"5\", \"dur\": 1,"
		" \"args\": {\"grid\": [1, 2, 3, 4, [5]], \"block\": \"x\", \"device\": null}},"
		"{}, 1, null, \"s\""
		"], \"extra\": {\"nested\": [1, {\"a\": []}]}}";
	const char *p = fx_path("odd.db");
	struct trace_import_stats st;
	struct err e = {0};
	int rc = import_str(p, doc, sizeof doc - 1, &st, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(st.kernels, 1);
	assert_int_equal(fx_i64(p, "SELECT gridX * 100 + gridY * 10 + gridZ FROM CUPTI_ACTIVITY_KIND_KERNEL"), 123);
	assert_int_equal(st.skipped, 9);
}

static int teardown(void **state)
{
	(void)state;
	fx_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_rows),
		cmocka_unit_test(test_import_file_and_pid_option),
		cmocka_unit_test(test_array_format),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_odd_events),
		cmocka_unit_test(test_long_strings),
		cmocka_unit_test(test_gpu_events_first),
		cmocka_unit_test(test_metadata_and_warnings),
		cmocka_unit_test(test_gzip),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
