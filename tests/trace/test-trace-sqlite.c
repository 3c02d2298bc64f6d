/* trace/import_sqlite: nsys SQLite exports (schema drift tolerated, bad files rejected) and merge. */
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
#include "trace/analyze/analyze.h"
#include "trace/import/import.h"
#include "trace/db/tracedb.h"

/* An nsys-style export: nsys' own column order with columns k3sim does not know (and without
 * some it does), enum tables, an old-style DRIVER table, NVTX text both inline and registered,
 * StringIds starting at 0. Process 1234 (globalPid 1234 << 24). */
static const char *const NSYS_SQL[] = {
	"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);\n",
	"INSERT INTO StringIds VALUES (0, 'void gemm_kernel<128>(float const*, float*)'),"
	" (1, 'gemm_kernel'), (2, 'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),"
	" (3, 'ncclDevKernel_AllGather_RING_LL'), (4, 'cudaLaunchKernel_v7000'),"
	" (5, 'cudaMemcpyAsync_v3020'), (6, 'registered range'), (7, 'cuLaunchKernel');\n",
	"CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);\n",
	"CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);\n",
	"INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.12.1');\n",
	"CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL PRIMARY KEY, name TEXT, busLocation TEXT,"
	" isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER,"
	" clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER,"
	" chipName TEXT, cuDevice INTEGER, ctxCount INTEGER, ctxId TEXT, computeMajor INTEGER,"
	" computeMinor INTEGER, newColumnFromTheFuture TEXT);\n",
	"INSERT INTO TARGET_INFO_GPU (id, name, smCount, chipName, computeMajor, totalMemory)"
	" VALUES (0, 'NVIDIA H200', 132, 'GH100', 9, 150754820096);\n",
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
	" streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
	" demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,"
	" launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,"
	" gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
	" blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
	" staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,"
	" localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,"
	" gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,"
	" sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, isSharedMemoryCarveout INTEGER);\n",
	"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"
	" correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ,"
	" blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,"
	" localMemoryTotal, gridId) VALUES"
	" (1000, 1100, 0, 1, 7, 11, 20703084544, 0, 1, 128, 132, 1, 1, 256, 1, 1, 0, 65536, 0, 0, 1),"
	" (1200, 1400, 0, 1, 7, 12, 20703084544, 0, 1, 128, 132, 1, 1, 256, 1, 1, 0, 65536, 0, 0, 2),"
	" (1150, 1450, 0, 1, 13, 13, 20703084544, 2, 3, 64, 8, 1, 1, 512, 1, 1, 1024, 0, 0, 0, 3);\n",
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
	" correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,"
	" deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,"
	" srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,"
	" graphNodeId INTEGER, virtualAddress INTEGER);\n",
	"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,"
	" correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES"
	" (900, 950, 0, 1, 7, 10, 20703084544, 4194304, 1, 1, 2);\n",
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
	" nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);\n",
	"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
	" (880, 890, 0, 20703084545, 10, 5, 0, NULL),"
	" (980, 990, 0, 20703084545, 11, 4, 0, NULL),"
	" (1000, 1010, 0, 20703084545, 12, 4, 0, NULL),"
	" (1100, 1110, 0, 20703084545, 13, 4, 0, NULL),"
	" (1200, 1300, 28, 20703084545, 0, 4, 0, NULL);\n",
	"CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER);\n",
	"INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (985, 988, 20703084545, 11, 7, 0);\n",
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
	" rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
	" endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,"
	" int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,"
	" floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData BLOB);\n",
	"INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, color) VALUES"
	" (850, 1500, 59, 'step', 20703084545, NULL, 4278190335),"
	" (975, 1050, 59, NULL, 20703084545, 6, NULL),"
	" (1060, NULL, 34, 'mark', 20703084545, NULL, NULL),"
	" (0, 0, 75, 'domain create', 20703084545, NULL, NULL);\n",
};

static void make_nsys(const char *path)
{
	size_t len = 1;
	for (size_t i = 0; i < sizeof NSYS_SQL / sizeof NSYS_SQL[0]; i++)
		len += strlen(NSYS_SQL[i]);
	char *sql = malloc(len);
	sql[0] = '\0';
	for (size_t i = 0; i < sizeof NSYS_SQL / sizeof NSYS_SQL[0]; i++)
		strcat(sql, NSYS_SQL[i]);
	fx_sqlite(path, sql);
	free(sql);
}

static int import_one(const char *in, const char *out, struct trace_import_stats *st,
		      struct err *e)
{
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, out, &o, e), 0);
	int rc = trace_import_sqlite(db, in, NULL, st, e);
	if (rc) {
		trace_db_discard(db);
		return rc;
	}
	assert_int_equal(trace_db_close(db, e), 0);
	return 0;
}

static void test_import_nsys(void **state)
{
	(void)state;
	const char *in = fx_path("nsys.sqlite"), *out = fx_path("imported.db");
	make_nsys(in);
	struct trace_import_stats st;
	struct err e = {0};
	int rc = import_one(in, out, &st, &e);
	if (rc)
		fprintf(stderr, "%s: %s\n", e.file, e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(st.kernels, 3);
	assert_int_equal(st.memcpys, 1);
	assert_int_equal(st.api_calls, 5);   /* 4 runtime + 1 from the DRIVER table */
	assert_int_equal(st.nvtx, 3);        /* the domain-create event is skipped */
	assert_int_equal(st.gpus, 1);
	assert_int_equal(fx_i64(out, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 600);
	assert_int_equal(fx_i64(out, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 24 = 1234"), 3);
	assert_string_equal(fx_text(out, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
					 " ON s.id = k.demangledName WHERE correlationId = 13"),
			    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
	assert_string_equal(fx_text(out, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
					 " ON s.id = k.shortName WHERE correlationId = 11"),
			    "gemm_kernel");
	assert_int_equal(fx_i64(out, "SELECT dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 12"),
			 65536);
	assert_int_equal(fx_i64(out, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 4194304);
	assert_int_equal(fx_i64(out, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER"), 1);
	assert_string_equal(fx_text(out, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_DRIVER d JOIN StringIds s"
					 " ON s.id = d.nameId"),
			    "cuLaunchKernel");
	assert_string_equal(fx_text(out, "SELECT text FROM NVTX_EVENTS WHERE start = 975"), "registered range");
	assert_int_equal(fx_i64(out, "SELECT color FROM NVTX_EVENTS WHERE start = 850"), 4278190335);
	assert_int_equal(fx_i64(out, "SELECT end IS NULL FROM NVTX_EVENTS WHERE eventType = 34"), 1);
	assert_string_equal(fx_text(out, "SELECT chipName FROM TARGET_INFO_GPU"), "GH100");
	assert_string_equal(fx_text(out, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'source'"), "nsys-import");
	assert_string_equal(fx_text(out, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'nsys_export_schema_version'"),
			    "3.12.1");
}

/* A minimal old export: only start/end/name columns; no StringIds for one name. */
static void test_import_minimal_schema(void **state)
{
	(void)state;
	const char *in = fx_path("old.sqlite"), *out = fx_path("old.db");
	fx_sqlite(in, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
		      "INSERT INTO StringIds VALUES (1, 'k1');"
		      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (name INTEGER, \"end\" INTEGER, start INTEGER);"
		      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 20, 10), (9, 50, 40);");
	struct trace_import_stats st;
	struct err e = {0};
	assert_int_equal(import_one(in, out, &st, &e), 0);
	assert_int_equal(st.kernels, 2);
	assert_int_equal(fx_i64(out, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 20);
	assert_string_equal(fx_text(out, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
					 " ON s.id = k.demangledName WHERE k.start = 40"),
			    "(unknown kernel 9)");
}

static void expect_reject(const char *path, const char *what)
{
	struct trace_import_stats st;
	struct err e = {0};
	int rc = import_one(path, fx_path("reject.db"), &st, &e);
	if (rc == 0 || !strstr(e.msg, what))
		fprintf(stderr, "%s: rc %d: %s\n", path, rc, e.msg);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(e.msg, what));
	assert_string_equal(e.file, path);
}

static void test_rejects_bad_files(void **state)
{
	(void)state;
	const char *text = fx_path("text.sqlite");
	fx_write_str(text, "this is not a database, it is a text file with enough bytes in it........"
			   "...............................................................\n");
	expect_reject(text, "not an SQLite database");

	const char *empty = fx_path("empty.sqlite");
	fx_write(empty, "", 0);
	expect_reject(empty, "not an SQLite database");

	const char *other = fx_path("other.sqlite");
	fx_sqlite(other, "CREATE TABLE customers (id INTEGER, name TEXT);"
			 "INSERT INTO customers VALUES (1, 'x');");
	expect_reject(other, "not an nsys export");

	/* a real export cut short: the header's size no longer matches */
	const char *full = fx_path("full.sqlite");
	make_nsys(full);
	const char *cut = fx_path("cut.sqlite");
	fx_truncate_copy(full, cut, fx_size(full) / 2);
	expect_reject(cut, "truncated");
	const char *cut2 = fx_path("cut2.sqlite");
	fx_truncate_copy(full, cut2, 60);
	expect_reject(cut2, "truncated");

	/* a kernel table without times */
	const char *wrong = fx_path("wrong.sqlite");
	fx_sqlite(wrong, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (foo INTEGER, deviceId INTEGER);"
			 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2);");
	expect_reject(wrong, "no start/end");

	expect_reject(fx_path("missing.sqlite"), "cannot open");

	/* format detection */
	enum trace_format f;
	struct err e = {0};
	const char *gz = fx_path("t.json.gz");
	fx_write(gz, "\x1f\x8b\x08\x00rest", 8);
	assert_int_equal(trace_detect_format(gz, &f, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "gzip"));
	assert_int_equal(trace_detect_format(text, &f, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown format"));
	assert_int_equal(trace_detect_format(full, &f, &e), 0);
	assert_int_equal(f, TRACE_FORMAT_SQLITE);
}

/* Two per-process databases with the same pid merge into one timeline, kept apart. */
static void test_merge(void **state)
{
	(void)state;
	const char *a = fx_path("rank0.db"), *b = fx_path("rank1.db"), *m = fx_path("merged.db");
	for (int r = 0; r < 2; r++) {
		struct trace_db *db = NULL;
		struct trace_db_opts o = {.overwrite = true};
		assert_int_equal(trace_db_create(&db, r ? b : a, &o, NULL), 0);
		/* different names in each file so the string ids differ */
		if (r)
			assert_int_equal(trace_db_set_capture(db, "pad", "x", NULL), 0);
		int64_t pad;
		if (r)
			assert_int_equal(trace_db_intern(db, "only in rank 1", &pad, NULL), 0);
		struct trace_kernel k = {.start_ns = 100 + r, .end_ns = 200, .device_id = (uint32_t)r,
					 .global_pid = trace_global_pid(555), .correlation_id = 1,
					 .name = r ? "ncclKernel_rank1" : "gemm_rank0"};
		assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
		struct trace_api api = {.start_ns = 50, .end_ns = 60, .correlation_id = 1,
					.global_tid = trace_global_tid(555, 556), .name = "cudaLaunchKernel"};
		assert_int_equal(trace_db_add_api(db, &api, NULL), 0);
		struct trace_dropped d = {.source = "cupti", .device_id = -1, .context_id = -1,
					  .stream_id = -1, .count = 3};
		assert_int_equal(trace_db_add_dropped(db, &d, NULL), 0);
		assert_int_equal(trace_db_set_capture(db, TRACE_CAPTURE_RANK, r ? "1" : "0", NULL), 0);
		assert_int_equal(trace_db_close(db, NULL), 0);
	}
	const char *inputs[] = {a, b};
	struct trace_import_stats st;
	struct err e = {0};
	int rc = trace_merge(m, inputs, 2, NULL, &st, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(st.kernels, 2);
	assert_int_equal(st.dropped_records, 6);
	assert_int_equal(fx_i64(m, "SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
	/* the first file keeps its pid; the second is renamed, API rows along with its kernels */
	assert_int_equal(fx_i64(m, "SELECT globalPid >> 24 FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0"), 555);
	int64_t pid1 = fx_i64(m, "SELECT globalPid >> 24 FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 1");
	assert_int_not_equal(pid1, 555);
	assert_int_equal(fx_i64(m, "SELECT count(DISTINCT globalTid >> 24) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 2);
	assert_int_equal(fx_i64(m, "SELECT (globalTid & 16777215) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 556);
	/* names follow their rows through the re-interning */
	assert_string_equal(fx_text(m, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
				       " ON s.id = k.demangledName WHERE deviceId = 1"),
			    "ncclKernel_rank1");
	assert_string_equal(fx_text(m, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
				       " ON s.id = k.demangledName WHERE deviceId = 0"),
			    "gemm_rank0");
	assert_string_equal(fx_text(m, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'input1.rank'"), "1");
	assert_string_equal(fx_text(m, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'source'"), "merge");
	assert_int_equal(fx_i64(m, "SELECT sum(count) FROM K3SIM_DROPPED"), 6);

	/* merging a non-database fails and leaves no output */
	const char *json = fx_path("x.json");
	fx_write_str(json, "{\"traceEvents\": []}");
	const char *bad[] = {a, json};
	const char *m2 = fx_path("merged2.db");
	assert_int_not_equal(trace_merge(m2, bad, 2, NULL, &st, &e), 0);
	assert_non_null(strstr(e.msg, "import this file first"));
	assert_int_equal(fx_size(m2), 0);
	const char *cut = fx_path("cut-rank.db");
	fx_truncate_copy(b, cut, 3000);
	const char *bad2[] = {a, cut};
	assert_int_not_equal(trace_merge(m2, bad2, 2, NULL, &st, &e), 0);
	assert_non_null(strstr(e.msg, "truncated"));
	assert_int_equal(fx_size(m2), 0);
}

/* One per-process capture for the GPU merge tests: pid's GPUs as listed, and on device `dev`
 * one kernel, a peer copy to `peer`, a drop, a metric and a GPU-projected NVTX range. */
struct gpu_def {
	int32_t id;
	const char *uuid, *bus;
};

static void gpu_capture(const char *path, int64_t pid, const char *host, const struct gpu_def *g,
			int n, uint32_t dev, int32_t peer)
{
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, path, &o, NULL), 0);
	if (host)
		assert_int_equal(trace_db_set_capture(db, TRACE_CAPTURE_HOST, host, NULL), 0);
	for (int i = 0; i < n; i++) {
		struct trace_gpu r = {.id = g[i].id, .name = "NVIDIA H200", .uuid = g[i].uuid,
				      .bus_location = g[i].bus, .sm_count = 132, .cu_device = g[i].id};
		assert_int_equal(trace_db_add_gpu(db, &r, NULL), 0);
	}
	assert_int_equal(trace_db_add_process(db, trace_global_pid(pid), pid, "rank", NULL), 0);
	struct trace_kernel k = {.start_ns = 10, .end_ns = 20, .global_pid = trace_global_pid(pid),
				 .device_id = dev, .stream_id = 7, .correlation_id = 1, .name = "k"};
	assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
	struct trace_memcpy m = {.start_ns = 30, .end_ns = 40, .global_pid = trace_global_pid(pid),
				 .device_id = dev, .stream_id = 7, .correlation_id = 2, .bytes = 64,
				 .copy_kind = TRACE_COPY_PTOP, .src_device_id = (int32_t)dev,
				 .dst_device_id = peer};
	assert_int_equal(trace_db_add_memcpy(db, &m, NULL), 0);
	struct trace_dropped d = {.source = "cupti", .device_id = (int32_t)dev, .context_id = -1,
				  .stream_id = -1, .count = 1};
	assert_int_equal(trace_db_add_dropped(db, &d, NULL), 0);
	struct trace_kernel_metric km = {.global_pid = trace_global_pid(pid), .device_id = dev,
					 .correlation_id = 1, .kernel_name = "k",
					 .metric = "dram_read_bytes", .value = 1, .unit = "bytes"};
	assert_int_equal(trace_db_add_kernel_metric(db, &km, NULL), 0);
	struct trace_nvtx r = {.start_ns = 10, .end_ns = 20, .type = TRACE_NVTX_START_END,
			       .global_tid = trace_global_tid(pid, 7), .category = (int32_t)dev,
			       .domain_id = TRACE_NVTX_DOMAIN_GPU, .text = "step"};
	assert_int_equal(trace_db_add_nvtx(db, &r, NULL), 0);
	assert_int_equal(trace_db_close(db, NULL), 0);
}

#define U0 "GPU-479a56ec-2ee0-f597-c784-b56f503f0971"
#define U1 "GPU-cde3b573-54a5-a56a-6ed3-b0ba548209ed"

/* Every process of a host lists every GPU it sees: merge keeps one row per GPU (by UUID, else
 * bus id on the same host) and rewrites each file's deviceIds to it. */
static void test_merge_gpus(void **state)
{
	(void)state;
	const struct gpu_def both[] = {{0, U0, "0000:17:00.0"}, {1, U1, "0000:3D:00.0"}};
	const struct gpu_def only1[] = {{0, U1, NULL}};                 /* CUDA_VISIBLE_DEVICES=1 */
	const struct gpu_def bus0[] = {{0, NULL, "0000:17:00.0"}};      /* no UUID */
	const char *in[] = {fx_path("g-rank0.db"), fx_path("g-rank1.db"), fx_path("g-cvd1.db"),
			    fx_path("g-bus.db"), fx_path("g-other-host.db")};
	gpu_capture(in[0], 10, "node-a", both, 2, 0, 1);
	gpu_capture(in[1], 11, "node-a", both, 2, 1, 0);
	gpu_capture(in[2], 12, "node-a", only1, 1, 0, 0);
	gpu_capture(in[3], 13, "node-a", bus0, 1, 0, -1);
	gpu_capture(in[4], 14, "node-b", bus0, 1, 0, -1);   /* same bus id, another host */
	const char *m = fx_path("g-merged.db");
	struct trace_import_stats st;
	struct err e = {0};
	int rc = trace_merge(m, in, 5, NULL, &st, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	/* U0 (0), U1 (1), node-b's GPU (its ordinal 0 is taken: 2) */
	assert_int_equal(st.gpus, 3);
	assert_int_equal(st.hosts, 2);
	assert_int_equal(fx_i64(m, "SELECT count(*) FROM TARGET_INFO_GPU"), 3);
	assert_string_equal(fx_text(m, "SELECT uuid FROM TARGET_INFO_GPU WHERE id = 0"), U0);
	assert_string_equal(fx_text(m, "SELECT uuid FROM TARGET_INFO_GPU WHERE id = 1"), U1);
	assert_string_equal(fx_text(m, "SELECT busLocation FROM TARGET_INFO_GPU WHERE id = 2"),
			    "0000:17:00.0");
	/* per process (pid 10..14): the device its rows are on in the merged file */
	static const int64_t want[] = {0, 1, 1, 0, 2};
	static const char *const per_pid[] = {
		"SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 24",
		"SELECT deviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE globalPid >> 24",
		"SELECT srcDeviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE globalPid >> 24",
		"SELECT deviceId FROM K3SIM_KERNEL_METRICS WHERE globalPid >> 24",
		"SELECT category FROM NVTX_EVENTS WHERE globalTid >> 24",
	};
	char sql[256];
	for (int p = 0; p < 5; p++)
		for (size_t q = 0; q < sizeof per_pid / sizeof per_pid[0]; q++) {
			snprintf(sql, sizeof sql, "%s = %d", per_pid[q], 10 + p);
			if (fx_i64(m, sql) != want[p])
				fail_msg("pid %d: %s gave %lld, want %lld", 10 + p, sql,
					 (long long)fx_i64(m, sql), (long long)want[p]);
		}
	/* peers follow: rank 1's copy to its ordinal 0 (U0), the CVD process' to its 0 (U1) */
	assert_int_equal(fx_i64(m, "SELECT dstDeviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE globalPid >> 24 = 11"), 0);
	assert_int_equal(fx_i64(m, "SELECT dstDeviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE globalPid >> 24 = 12"), 1);
	assert_int_equal(fx_i64(m, "SELECT count(*) FROM K3SIM_DROPPED WHERE deviceId = 1"), 2);
	/* each process' ordinals: the CVD process knew U1 as 0 */
	assert_int_equal(fx_i64(m, "SELECT count(*) FROM K3SIM_DEVICE_MAP"), 2 + 2 + 1 + 1 + 1);
	assert_int_equal(fx_i64(m, "SELECT deviceId FROM K3SIM_DEVICE_MAP WHERE globalPid >> 24 = 12"
				   " AND cudaId = 0"), 1);
	assert_string_equal(fx_text(m, "SELECT uuid FROM K3SIM_DEVICE_MAP WHERE globalPid >> 24 = 12"),
			    U1);

	/* merged again (alone, and with a file of its first host): rows and ordinals carried */
	const char *again[] = {m, in[1]};
	const char *m2 = fx_path("g-merged2.db");
	rc = trace_merge(m2, again, 2, NULL, &st, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(st.gpus, 3);
	assert_int_equal(fx_i64(m2, "SELECT count(*) FROM K3SIM_DEVICE_MAP"), 7 + 2);
	assert_int_equal(fx_i64(m2, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 1"), 3);

	/* a plain import of a file listing two GPUs keeps both rows as they are */
	struct trace_db *db = NULL;
	const char *imp = fx_path("g-import.db");
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, imp, &o, NULL), 0);
	assert_int_equal(trace_import_sqlite(db, in[2], NULL, &st, &e), 0);
	assert_int_equal(trace_db_close(db, NULL), 0);
	assert_int_equal(st.gpus, 1);
	assert_int_equal(fx_i64(imp, "SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"), 0);
	assert_int_equal(fx_i64(imp, "SELECT count(*) FROM K3SIM_DEVICE_MAP"), 0);
}

/* A Kineto trace of one rank on its GPU 0 (no UUID, no bus id: Kineto has neither). */
static void kineto_rank(const char *db_path, int rank, int64_t pid, bool with_rank, int64_t t0_us)
{
	char doc[2048];
	snprintf(doc, sizeof doc,
		 "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", \"numSms\": 132},"
		 " {\"id\": 1, \"name\": \"NVIDIA H200\", \"numSms\": 132}],"
		 " %s\"traceEvents\": ["
		 "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": %lld,"
		 " \"tid\": 1, \"ts\": %lld, \"dur\": 2, \"args\": {\"correlation\": 1}},"
		 "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_rank%d\", \"pid\": 0, \"tid\": 7,"
		 " \"ts\": %lld, \"dur\": 10, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1}}]}",
		 with_rank ? (rank ? "\"distributedInfo\": {\"rank\": 1, \"world_size\": 2}, "
				   : "\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, ")
			   : "",
		 (long long)pid, (long long)t0_us, rank, (long long)t0_us + 5);
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	struct err e = {0};
	assert_int_equal(trace_db_create(&db, db_path, &o, &e), 0);
	struct trace_import_stats st;
	int rc = trace_import_kineto_mem(db, "rank.json", doc, strlen(doc), NULL, &st, &e);
	if (rc)
		fprintf(stderr, "%s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(st.gpus, 1); /* the GPU with activity, not all the process saw */
	assert_int_equal(trace_db_close(db, &e), 0);
}

/* Two ranks' GPU 0 are two GPUs: Kineto traces carry no UUID, and each rank (distributedInfo) or
 * process tells them apart (issue 12: merged into one device, busy = the union of both). */
static void test_merge_kineto_ranks(void **state)
{
	(void)state;
	const char *r0 = fx_path("k-rank0.db"), *r1 = fx_path("k-rank1.db"), *m = fx_path("k-ranks.db");
	kineto_rank(r0, 0, 500, true, 1000);
	kineto_rank(r1, 1, 500, true, 1000); /* the same pid in two containers */
	const char *in[] = {r0, r1};
	struct trace_import_stats st;
	struct err e = {0};
	assert_int_equal(trace_merge(m, in, 2, NULL, &st, &e), 0);
	assert_int_equal(st.gpus, 2);
	assert_int_equal(fx_i64(m, "SELECT count(*) FROM TARGET_INFO_GPU"), 2);
	assert_int_equal(fx_i64(m, "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
	assert_string_equal(fx_text(m, "SELECT group_concat(rank || ':' || deviceId) FROM (SELECT rank,"
				       " deviceId FROM K3SIM_DEVICE_MAP ORDER BY rank)"), "0:0,1:1");
	struct trace_summary s;
	assert_int_equal(trace_summary_compute(&s, m, NULL, &e), 0);
	assert_int_equal(s.n_dev, 2);
	assert_int_equal(s.dev[0].busy_ns, 10000);
	assert_int_equal(s.dev[1].busy_ns, 10000);
	trace_summary_release(&s);

	/* no distributedInfo: the processes tell them apart */
	const char *p0 = fx_path("k-pid0.db"), *p1 = fx_path("k-pid1.db"), *mp = fx_path("k-pids.db");
	kineto_rank(p0, 0, 600, false, 1000);
	kineto_rank(p1, 1, 601, false, 1000);
	const char *inp[] = {p0, p1};
	assert_int_equal(trace_merge(mp, inp, 2, NULL, &st, &e), 0);
	assert_int_equal(st.gpus, 2);

	/* two profiles of one rank and process: one GPU */
	const char *a = fx_path("k-step1.db"), *b = fx_path("k-step2.db"), *ms = fx_path("k-steps.db");
	kineto_rank(a, 0, 700, true, 1000);
	kineto_rank(b, 0, 700, true, 9000);
	const char *ins[] = {a, b};
	assert_int_equal(trace_merge(ms, ins, 2, NULL, &st, &e), 0);
	assert_int_equal(st.gpus, 1);
	assert_int_equal(fx_i64(ms, "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	assert_false(st.clock_mixed);
}

/* UUIDs with and without nsys' missing "GPU-" prefix are one GPU; the same bus id on two unknown
 * hosts is not proof of one GPU. */
static void test_merge_uuid_forms(void **state)
{
	(void)state;
	const struct gpu_def cupti[] = {{0, "GPU-479a56ec-2ee0-f597-c784-b56f503f0971", NULL}};
	const struct gpu_def nsys[] = {{3, "479A56EC-2EE0-F597-C784-B56F503F0971", NULL}};
	const char *in[] = {fx_path("u-cupti.db"), fx_path("u-nsys.db")};
	gpu_capture(in[0], 20, NULL, cupti, 1, 0, -1);
	gpu_capture(in[1], 21, NULL, nsys, 1, 3, -1);
	const char *m = fx_path("u-merged.db");
	struct trace_import_stats st;
	struct err e = {0};
	assert_int_equal(trace_merge(m, in, 2, NULL, &st, &e), 0);
	assert_int_equal(st.gpus, 1);
	assert_int_equal(fx_i64(m, "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	const struct gpu_def bus[] = {{0, NULL, "0000:17:00.0"}};
	const char *in2[] = {fx_path("b-a.db"), fx_path("b-b.db")};
	gpu_capture(in2[0], 30, NULL, bus, 1, 0, -1);
	gpu_capture(in2[1], 31, NULL, bus, 1, 0, -1);
	assert_int_equal(trace_merge(fx_path("b-merged.db"), in2, 2, NULL, &st, &e), 0);
	assert_int_equal(st.gpus, 2);
}

/* An nsys export counts time from its session start: the import adds the session's UTC start, so
 * exports of several ranks line up (and say their clock). */
static void test_nsys_session_start(void **state)
{
	(void)state;
	const char *p = fx_path("session.sqlite");
	fx_sqlite(p, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
		     "INSERT INTO StringIds VALUES (1, 'k');"
		     "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT,"
		     " localTime TEXT);"
		     "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1687813257637297504, '', '');"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
		     " globalPid INTEGER, demangledName INTEGER);"
		     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 150, 0, 16777216, 1);");
	const char *out = fx_path("session.db");
	struct trace_import_stats st;
	struct err e = {0};
	assert_int_equal(import_one(p, out, &st, &e), 0);
	assert_int_equal(fx_i64(out, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 1687813257637297604);
	assert_string_equal(fx_text(out, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'clock'"),
			    "unix_epoch");
	assert_int_equal(st.clock, TRACE_CLOCK_EPOCH);
}

/* nsys-style files whose StringIds give the same id different strings (and differently
 * numbered the same strings): every name follows its row. */
static void test_merge_string_ids(void **state)
{
	(void)state;
	const char *in[] = {fx_path("s-a.sqlite"), fx_path("s-b.sqlite")};
	static const char *const strings[] = {
		"INSERT INTO StringIds VALUES (0, 'kernA'), (1, 'cudaLaunchKernel'), (2, 'range A');",
		"INSERT INTO StringIds VALUES (0, 'range B'), (1, 'kernB'), (2, 'cuLaunchKernel'),"
		" (3, 'kernA');",
	};
	static const char *const rows[] = {
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 5, 16777216, 0, 0);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90, 95, 0, 16777217, 5, 1);"
		"INSERT INTO NVTX_EVENTS VALUES (80, 300, 59, 16777217, NULL, 2);",
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 5, 16777216, 1, 1),"
		" (300, 400, 0, 6, 16777216, 3, 3);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90, 95, 1, 16777217, 5, 2),"
		" (290, 295, 1, 16777217, 6, 2);"
		"INSERT INTO NVTX_EVENTS VALUES (80, 500, 59, 16777217, NULL, 0);",
	};
	char sql[2048];
	for (int i = 0; i < 2; i++) {
		snprintf(sql, sizeof sql,
			 "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);%s"
			 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,"
			 " deviceId INTEGER, correlationId INTEGER, globalPid INTEGER,"
			 " demangledName INTEGER, shortName INTEGER);"
			 "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER,"
			 " eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER);"
			 "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER,"
			 " globalTid INTEGER, text TEXT, textId INTEGER);%s",
			 strings[i], rows[i]);
		fx_sqlite(in[i], sql);
	}
	const char *m = fx_path("s-merged.db");
	struct trace_import_stats st;
	struct err e = {0};
	int rc = trace_merge(m, in, 2, NULL, &st, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	/* both files are process 1: the second became another process */
	assert_int_equal(fx_i64(m, "SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
	static const char *const checks[][2] = {
		{"SELECT group_concat(s.value) FROM (SELECT demangledName d FROM CUPTI_ACTIVITY_KIND_KERNEL"
		 " WHERE globalPid >> 24 = 1) k JOIN StringIds s ON s.id = k.d", "kernA"},
		{"SELECT group_concat(s.value) FROM (SELECT demangledName d FROM CUPTI_ACTIVITY_KIND_KERNEL"
		 " WHERE globalPid >> 24 != 1 ORDER BY start) k JOIN StringIds s ON s.id = k.d",
		 "kernB,kernA"},
		{"SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
		 " WHERE globalTid >> 24 = 1", "cudaLaunchKernel"},
		{"SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s"
		 " ON s.id = r.nameId WHERE globalTid >> 24 != 1", "cuLaunchKernel"},
		{"SELECT text FROM NVTX_EVENTS WHERE globalTid >> 24 = 1", "range A"},
		{"SELECT text FROM NVTX_EVENTS WHERE globalTid >> 24 != 1", "range B"},
	};
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
		assert_string_equal(fx_text(m, checks[i][0]), checks[i][1]);
	/* one string, one id */
	assert_int_equal(fx_i64(m, "SELECT count(*) FROM StringIds WHERE value = 'kernA'"), 1);
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
		cmocka_unit_test(test_import_nsys),
		cmocka_unit_test(test_import_minimal_schema),
		cmocka_unit_test(test_rejects_bad_files),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_gpus),
		cmocka_unit_test(test_merge_kineto_ranks),
		cmocka_unit_test(test_merge_uuid_forms),
		cmocka_unit_test(test_nsys_session_start),
		cmocka_unit_test(test_merge_string_ids),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
