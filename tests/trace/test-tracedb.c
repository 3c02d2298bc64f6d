/* trace/tracedb: the writer's schema, rows, interning, batching, bounds and durability. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixtures.h"
#include "trace/import/import.h"
#include "trace/db/schema.h"
#include "trace/db/tracedb.h"

static struct trace_db *create(const char *path, const struct trace_db_opts *o)
{
	struct trace_db *db = NULL;
	struct err e = {0};
	int rc = trace_db_create(&db, path, o, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	return db;
}

static void test_schema_has_nsys_tables(void **state)
{
	(void)state;
	const char *p = fx_path("schema.db");
	struct trace_db *db = create(p, NULL);
	assert_int_equal(trace_db_close(db, NULL), 0);
	static const char *const tables[] = {
		"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
		"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER",
		"NVTX_EVENTS", "TARGET_INFO_GPU", "META_DATA_EXPORT", "PROCESSES", "K3SIM_CAPTURE",
		"K3SIM_DROPPED", "K3SIM_KERNEL_METRICS", "K3SIM_GPU_METRICS",
	};
	char sql[256];
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE name = '%s'",
			 tables[i]);
		assert_int_equal(fx_i64(p, sql), 1);
	}
	/* the columns nsys queries use, by name */
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM pragma_table_info('CUPTI_ACTIVITY_KIND_KERNEL')"
				   " WHERE name IN ('start','end','deviceId','contextId','streamId',"
				   "'correlationId','globalPid','demangledName','shortName','mangledName',"
				   "'gridX','gridY','gridZ','blockX','blockY','blockZ','registersPerThread',"
				   "'staticSharedMemory','dynamicSharedMemory')"),
			 19);
	assert_string_equal(fx_text(p, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT'"),
			    "k3sim");
	assert_string_equal(fx_text(p, "PRAGMA journal_mode"), "delete");
}

/* GPU clock/power samples: values, NULL for what a reading lacked, and the throttle mask's 64
 * bits intact (bit 63 set reads back as the same mask). */
/* The activity tables are made from trace/db/schema.h's lists (issue 15): the created columns are
 * the list's, in its (nsys') order, and a record whose every field differs comes back from the
 * nsys importer with every written column equal, so writer and importer cannot drift apart. */
static void test_schema_lists_roundtrip(void **state)
{
	(void)state;
	const char *pa = fx_path("schema-a.db");
	struct trace_db *db = create(pa, NULL);
	struct err e = {0};
	struct trace_kernel k = {
		.start_ns = 1000, .end_ns = 2000, .global_pid = trace_global_pid(7), .device_id = 0,
		.context_id = 3, .stream_id = 4, .correlation_id = 5, .name = "k(int)",
		.short_name = "k", .mangled_name = "_Z1ki", .launch_type = 6, .cache_config = 7,
		.registers_per_thread = 8, .grid_x = 9, .grid_y = 10, .grid_z = 11, .block_x = 12,
		.block_y = 13, .block_z = 14, .static_shared_bytes = 15, .dynamic_shared_bytes = 16,
		.local_bytes_per_thread = 17, .local_bytes_total = 18, .grid_id = 19,
		.shared_memory_executed_bytes = 20, .graph_node_id = 21,
	};
	assert_int_equal(trace_db_add_kernel(db, &k, &e), 0);
	struct trace_memcpy m = {.start_ns = 1100, .end_ns = 1200, .device_id = 0, .context_id = 3,
				 .stream_id = 4, .correlation_id = 6, .global_pid = trace_global_pid(7),
				 .bytes = 22, .copy_kind = 8, .src_kind = 2, .dst_kind = 3,
				 .src_device_id = -1, .dst_device_id = 0, .graph_node_id = 23};
	assert_int_equal(trace_db_add_memcpy(db, &m, &e), 0);
	struct trace_memset ms = {.start_ns = 1300, .end_ns = 1400, .device_id = 0, .context_id = 3,
				  .stream_id = 4, .correlation_id = 7, .global_pid = trace_global_pid(7),
				  .bytes = 24, .value = 25, .mem_kind = 2};
	assert_int_equal(trace_db_add_memset(db, &ms, &e), 0);
	struct trace_api a = {.start_ns = 900, .end_ns = 950, .global_tid = trace_global_tid(7, 8),
			      .correlation_id = 5, .kind = TRACE_API_RUNTIME, .return_value = 26,
			      .name = "cudaLaunchKernel"};
	assert_int_equal(trace_db_add_api(db, &a, &e), 0);
	assert_int_equal(trace_db_close(db, &e), 0);

	const char *pb = fx_path("schema-b.db");
	struct trace_db *b = create(pb, NULL);
	struct trace_import_stats st;
	memset(&st, 0, sizeof st);
	int rc = trace_import_sqlite(b, pa, NULL, &st, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(trace_db_close(b, &e), 0);

	char sql[512];
	for (int t = 0; t < TRACE_SCHEMA_COUNT; t++) {
		const struct trace_schema_table *tb = &trace_schema_tables[t];
		for (int i = 0; i < tb->n_columns; i++) {
			const char *col = tb->columns[i].name;
			snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s') WHERE cid = %d",
				 tb->table, i);
			assert_string_equal(fx_text(pa, sql), col);
			if (!tb->columns[i].written || strstr(col, "Name") || strcmp(col, "nameId") == 0)
				continue; /* NULL; string ids are renumbered */
			snprintf(sql, sizeof sql, "SELECT coalesce(%s, -999) FROM %s", col, tb->table);
			int64_t va = fx_i64(pa, sql), vb = fx_i64(pb, sql);
			if (va != vb)
				fprintf(stderr, "%s.%s: %lld written, %lld imported\n", tb->table, col,
					(long long)va, (long long)vb);
			assert_int_equal(va, vb);
		}
	}
	/* the NULL rules: unknown peer device, no graph node */
	assert_int_equal(fx_i64(pb, "SELECT srcDeviceId IS NULL FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 1);
	assert_int_equal(fx_i64(pb, "SELECT graphNodeId IS NULL FROM CUPTI_ACTIVITY_KIND_MEMSET"), 1);
	assert_string_equal(fx_text(pb, "SELECT value FROM StringIds s JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
					" ON s.id = k.mangledName"), "_Z1ki");
}

static void test_gpu_metrics(void **state)
{
	(void)state;
	const char *p = fx_path("gpu-metrics.db");
	struct trace_db *db = create(p, NULL);
	struct err e = {0};
	struct trace_gpu_metric m = {.timestamp_ns = 1000, .global_pid = trace_global_pid(7),
				     .device_id = 2, .has_sm = true, .has_mem = true,
				     .has_power = true, .has_temp = true, .has_throttle = true,
				     .sm_mhz = 1515, .mem_mhz = 3201, .power_w = 684.5,
				     .temp_c = 71, .throttle_reasons = 0x4};
	assert_int_equal(trace_db_add_gpu_metric(db, &m, &e), 0);
	struct trace_gpu_metric partial = {.timestamp_ns = 2000, .device_id = 2, .has_sm = true,
					   .sm_mhz = 1980, .has_throttle = true,
					   .throttle_reasons = 0x8000000000000001ULL};
	assert_int_equal(trace_db_add_gpu_metric(db, &partial, &e), 0);
	assert_int_equal(trace_db_add_gpu_metric(NULL, &m, &e), -EINVAL);
	assert_int_equal(trace_db_add_gpu_metric(db, NULL, &e), -EINVAL);
	struct trace_db_stats st;
	trace_db_stats(db, &st);
	assert_int_equal(st.gpu_metrics, 2);
	assert_int_equal(trace_db_close(db, &e), 0);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM K3SIM_GPU_METRICS"), 2);
	assert_true(fx_f64(p, "SELECT powerW FROM K3SIM_GPU_METRICS WHERE timestamp = 1000") == 684.5);
	assert_int_equal(fx_i64(p, "SELECT globalPid >> 24 FROM K3SIM_GPU_METRICS WHERE timestamp = 1000"), 7);
	assert_int_equal(fx_i64(p, "SELECT smClockMHz FROM K3SIM_GPU_METRICS WHERE timestamp = 2000"), 1980);
	assert_int_equal(fx_i64(p, "SELECT (powerW IS NULL) + (temperatureC IS NULL) + (memClockMHz IS NULL)"
				   " FROM K3SIM_GPU_METRICS WHERE timestamp = 2000"), 3);
	assert_true((uint64_t)fx_i64(p, "SELECT throttleReasons FROM K3SIM_GPU_METRICS WHERE timestamp = 2000") ==
		    0x8000000000000001ULL);
}

static void test_rows_roundtrip(void **state)
{
	(void)state;
	const char *p = fx_path("rows.db");
	struct trace_db *db = create(p, NULL);
	struct err e = {0};
	struct trace_kernel k = {
		.start_ns = 1700000000123456789, .end_ns = 1700000000123466789,
		.global_pid = trace_global_pid(4242), .device_id = 3, .context_id = 1, .stream_id = 7,
		.correlation_id = 99, .name = "void ns::gemm<128, 4>(float*, int)",
		.mangled_name = "_ZN2ns4gemmILi128ELi4EEEvPfi", .grid_x = 132, .grid_y = 2, .grid_z = 1,
		.block_x = 256, .block_y = 1, .block_z = 1, .registers_per_thread = 96,
		.static_shared_bytes = 1024, .dynamic_shared_bytes = 49152,
	};
	assert_int_equal(trace_db_add_kernel(db, &k, &e), 0);
	struct trace_memcpy m = {.start_ns = 10, .end_ns = 20, .device_id = 3, .stream_id = 7,
				 .bytes = 1 << 20, .copy_kind = TRACE_COPY_HTOD, .src_device_id = -1,
				 .dst_device_id = 3};
	assert_int_equal(trace_db_add_memcpy(db, &m, &e), 0);
	struct trace_memset s = {.start_ns = 30, .end_ns = 35, .device_id = 3, .bytes = 4096, .value = 7};
	assert_int_equal(trace_db_add_memset(db, &s, &e), 0);
	struct trace_api a = {.start_ns = 1, .end_ns = 5, .global_tid = trace_global_tid(4242, 17),
			      .correlation_id = 99, .kind = TRACE_API_DRIVER, .name = "cuLaunchKernel"};
	assert_int_equal(trace_db_add_api(db, &a, &e), 0);
	struct trace_nvtx n = {.start_ns = 0, .end_ns = 100, .type = TRACE_NVTX_PUSH_POP,
			       .global_tid = trace_global_tid(4242, 17), .text = "layer 3: mla_decode",
			       .has_color = true, .color_argb = 0xff00ff00u};
	assert_int_equal(trace_db_add_nvtx(db, &n, &e), 0);
	struct trace_nvtx mark = {.start_ns = 50, .end_ns = 999, .type = TRACE_NVTX_MARK,
				  .text = "here"};
	assert_int_equal(trace_db_add_nvtx(db, &mark, &e), 0);
	struct trace_gpu g = {.id = 3, .name = "NVIDIA H200", .sm_count = 132, .compute_major = 9,
			      .total_memory_bytes = 150754820096, .clock_hz = 1980000000};
	assert_int_equal(trace_db_add_gpu(db, &g, &e), 0);
	struct trace_dropped d = {.source = "cupti", .device_id = 3, .context_id = -1,
				  .stream_id = -1, .count = 12};
	assert_int_equal(trace_db_add_dropped(db, &d, &e), 0);
	struct trace_kernel_metric km = {.global_pid = k.global_pid, .device_id = 3,
					 .correlation_id = 99, .kernel_name = k.name,
					 .metric = "dram_read_bytes", .value = 2097152, .unit = "bytes"};
	assert_int_equal(trace_db_add_kernel_metric(db, &km, &e), 0);
	assert_int_equal(trace_db_set_capture(db, TRACE_CAPTURE_COMMAND_LINE, "./a.out --x", &e), 0);
	assert_int_equal(trace_db_set_capture(db, TRACE_CAPTURE_COMMAND_LINE, "./b.out", &e), 0);
	struct trace_db_stats st;
	trace_db_stats(db, &st);
	assert_int_equal(st.kernels, 1);
	assert_int_equal(st.dropped_records, 12);
	assert_int_equal(trace_db_close(db, &e), 0);

	assert_int_equal(fx_i64(p, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1700000000123456789);
	assert_int_equal(fx_i64(p, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"), 10000);
	assert_int_equal(fx_i64(p, "SELECT globalPid >> 24 FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4242);
	assert_string_equal(fx_text(p, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
				       " ON s.id = k.demangledName"),
			    "void ns::gemm<128, 4>(float*, int)");
	assert_string_equal(fx_text(p, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
				       " ON s.id = k.shortName"),
			    "gemm");
	assert_string_equal(fx_text(p, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
				       " ON s.id = k.mangledName"),
			    "_ZN2ns4gemmILi128ELi4EEEvPfi");
	assert_int_equal(fx_i64(p, "SELECT gridX * gridY * blockX FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 132 * 2 * 256);
	assert_int_equal(fx_i64(p, "SELECT dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL"), 49152);
	assert_int_equal(fx_i64(p, "SELECT graphNodeId IS NULL FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	assert_int_equal(fx_i64(p, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 1 << 20);
	assert_int_equal(fx_i64(p, "SELECT srcDeviceId IS NULL AND dstDeviceId = 3 FROM"
				   " CUPTI_ACTIVITY_KIND_MEMCPY"), 1);
	assert_int_equal(fx_i64(p, "SELECT value FROM CUPTI_ACTIVITY_KIND_MEMSET"), 7);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER"), 1);
	assert_int_equal(fx_i64(p, "SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s"
				   " ON s.id = r.nameId WHERE s.value = 'cuLaunchKernel'"), 99);
	assert_int_equal(fx_i64(p, "SELECT color FROM NVTX_EVENTS WHERE eventType = 59"), 0xff00ff00u);
	assert_int_equal(fx_i64(p, "SELECT end IS NULL FROM NVTX_EVENTS WHERE eventType = 34"), 1);
	assert_int_equal(fx_i64(p, "SELECT globalTid & 16777215 FROM NVTX_EVENTS WHERE eventType = 59"), 17);
	assert_int_equal(fx_i64(p, "SELECT smCount FROM TARGET_INFO_GPU WHERE id = 3"), 132);
	assert_int_equal(fx_i64(p, "SELECT count FROM K3SIM_DROPPED WHERE contextId IS NULL"), 12);
	assert_int_equal(fx_i64(p, "SELECT value FROM K3SIM_KERNEL_METRICS"), 2097152);
	assert_string_equal(fx_text(p, "SELECT value FROM K3SIM_CAPTURE WHERE name = 'command_line'"),
			    "./b.out");
	/* every string once */
	assert_int_equal(fx_i64(p, "SELECT count(*) - count(DISTINCT value) FROM StringIds"), 0);
}

static void test_intern_dedupes_and_cuts(void **state)
{
	(void)state;
	struct trace_db_opts o = {.max_string_len_bytes = 8};
	struct trace_db *db = create(":memory:", &o);
	int64_t a, b, c, d;
	assert_int_equal(trace_db_intern(db, "kernel", &a, NULL), 0);
	assert_int_equal(trace_db_intern(db, "other", &b, NULL), 0);
	assert_int_equal(trace_db_intern(db, "kernel", &c, NULL), 0);
	assert_int_equal(a, c);
	assert_int_not_equal(a, b);
	/* cut at 8 bytes, on a UTF-8 boundary: "abcdefgé" keeps "abcdefg" */
	assert_int_equal(trace_db_intern(db, "abcdefg\xc3\xa9xyz", &c, NULL), 0);
	assert_int_equal(trace_db_intern(db, "abcdefg", &d, NULL), 0);
	assert_int_equal(c, d);
	assert_int_equal(trace_db_close(db, NULL), 0);
}

static void test_intern_bounded(void **state)
{
	(void)state;
	struct trace_db_opts o = {.max_strings = 100};
	struct trace_db *db = create(":memory:", &o);
	struct err e = {0};
	char name[32];
	int64_t id;
	int rc = 0;
	int i;
	for (i = 0; i < 1000 && !rc; i++) {
		snprintf(name, sizeof name, "k%d", i);
		rc = trace_db_intern(db, name, &id, &e);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(i, 101);
	assert_non_null(strstr(e.msg, "too many distinct strings"));
	trace_db_discard(db);
}

static void test_short_names(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,"
		 " at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>,"
		 " at::detail::Array<char*, 1>)",
		 "vectorized_elementwise_kernel"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		 "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"},
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"},
		{"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>"
		 "(float*, float const*, int, int, int)",
		 "softmax_warp_forward"},
		{"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>, true>(Flash_fwd_params)",
		 "flash_fwd_kernel"},
		{"kda_decode", "kda_decode"},
		{"", ""},
	};
	char buf[256];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t need = trace_short_name(cases[i][0], buf, sizeof buf);
		assert_string_equal(buf, cases[i][1]);
		assert_int_equal(need, strlen(cases[i][1]));
	}
	/* a small buffer is never overrun and the needed length is reported */
	char tiny[4];
	assert_int_equal(trace_short_name("void abcdefgh(int)", tiny, sizeof tiny), 8);
	assert_string_equal(tiny, "abc");
}

/* Batches: rows across transaction and multi-row-insert boundaries all land. */
static void test_batching(void **state)
{
	(void)state;
	const char *p = fx_path("batch.db");
	struct trace_db_opts o = {.batch_rows = 100};
	struct trace_db *db = create(p, &o);
	char name[32];
	int64_t total = 0;
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof name, "kernel_%d", i % 7);
		struct trace_kernel k = {.start_ns = i * 100, .end_ns = i * 100 + i % 13, .name = name,
					 .stream_id = (uint32_t)(i % 3)};
		assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
		struct trace_api a = {.start_ns = i, .end_ns = i + 1, .correlation_id = (uint32_t)i,
				      .name = "cudaLaunchKernel"};
		assert_int_equal(trace_db_add_api(db, &a, NULL), 0);
		total += i % 13;
		if (i == 500)
			assert_int_equal(trace_db_flush(db, NULL), 0);
	}
	assert_int_equal(trace_db_close(db, NULL), 0);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1000);
	assert_int_equal(fx_i64(p, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), total);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 1000);
	assert_int_equal(fx_i64(p, "SELECT count(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 7);
	assert_string_equal(fx_text(p, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
				       " ON s.id = k.demangledName WHERE k.start = 99900"),
			    "kernel_5");
}

static void test_refuses_existing_file(void **state)
{
	(void)state;
	const char *p = fx_path("exists.db");
	fx_write_str(p, "precious");
	struct trace_db *db = NULL;
	struct err e = {0};
	assert_int_equal(trace_db_create(&db, p, NULL, &e), -EEXIST);
	assert_null(db);
	assert_int_equal(fx_size(p), 8);
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, p, &o, &e), 0);
	assert_int_equal(trace_db_close(db, &e), 0);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 0);
}

/* An empty regular file (an atomic output's temporary, util/outfile.h) is taken as it is: the
 * same inode, never removed and created again. */
static void test_takes_empty_file(void **state)
{
	(void)state;
	const char *p = fx_path("empty.db");
	fx_write_str(p, "");
	struct stat before, after;
	assert_int_equal(stat(p, &before), 0);
	struct trace_db *db = NULL;
	struct err e = {0};
	assert_int_equal(trace_db_create(&db, p, NULL, &e), 0);
	assert_int_equal(trace_db_close(db, &e), 0);
	assert_int_equal(stat(p, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 0);
}

static void test_discard_removes_file(void **state)
{
	(void)state;
	const char *p = fx_path("discard.db");
	struct trace_db *db = create(p, NULL);
	struct trace_kernel k = {.name = "k"};
	assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
	trace_db_discard(db);
	assert_int_equal(access(p, F_OK), -1);
	trace_db_discard(NULL);
	assert_int_equal(trace_db_close(NULL, NULL), 0);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct trace_db *db = create(":memory:", NULL);
	struct err e = {0};
	struct trace_kernel k = {0};
	assert_int_equal(trace_db_add_kernel(db, &k, &e), -EINVAL); /* no name */
	struct trace_api a = {0};
	assert_int_equal(trace_db_add_api(db, &a, &e), -EINVAL);
	struct trace_nvtx n = {0};
	assert_int_equal(trace_db_add_nvtx(db, &n, &e), -EINVAL);
	assert_int_equal(trace_db_create(NULL, "x", NULL, &e), -EINVAL);
	struct trace_db *db2 = NULL;
	assert_int_not_equal(trace_db_create(&db2, "/nonexistent-dir/x.db", NULL, &e), 0);
	assert_null(db2);
	assert_int_equal(trace_db_close(db, NULL), 0);
}

/* A writer that dies after a flush leaves a valid database with every flushed row. */
static void test_crash_keeps_flushed_rows(void **state)
{
	(void)state;
	const char *p = fx_path("crash.db");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct trace_db_opts o = {.crash_safe = true, .batch_rows = 1000};
		struct trace_db *db = NULL;
		if (trace_db_create(&db, p, &o, NULL))
			_exit(3);
		for (int i = 0; i < 2500; i++) {
			struct trace_kernel k = {.start_ns = i, .end_ns = i + 1, .name = "k"};
			if (trace_db_add_kernel(db, &k, NULL))
				_exit(4);
			if (i == 1999 && trace_db_flush(db, NULL))
				_exit(5);
		}
		_exit(0); /* no close: rows after the flush are not committed */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* 2000 flushed rows; the batch boundary at 1000 committed too, nothing after 2000 */
	assert_int_equal(fx_i64(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2000);
	assert_string_equal(fx_text(p, "PRAGMA integrity_check"), "ok");
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
		cmocka_unit_test(test_schema_has_nsys_tables),
		cmocka_unit_test(test_rows_roundtrip),
		cmocka_unit_test(test_schema_lists_roundtrip),
		cmocka_unit_test(test_intern_dedupes_and_cuts),
		cmocka_unit_test(test_intern_bounded),
		cmocka_unit_test(test_short_names),
		cmocka_unit_test(test_gpu_metrics),
		cmocka_unit_test(test_batching),
		cmocka_unit_test(test_refuses_existing_file),
		cmocka_unit_test(test_takes_empty_file),
		cmocka_unit_test(test_discard_removes_file),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_crash_keeps_flushed_rows),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
