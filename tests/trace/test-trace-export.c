/* trace/export: Chrome/Perfetto JSON, checked by reading it back with the JSON reader. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include <sqlite3.h>

#include "trace/analyze/export.h"
#include "trace/import/import.h"
#include "trace/import/json.h"
#include "trace/db/tracedb.h"

static void build(const char *path)
{
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, path, &o, NULL), 0);
	for (int i = 0; i < 10; i++) {
		struct trace_kernel k = {.start_ns = 1000 * i, .end_ns = 1000 * i + 500,
					 .global_pid = trace_global_pid(7), .device_id = (uint32_t)(i % 2),
					 .stream_id = 13 + (uint32_t)(i % 2), .correlation_id = (uint32_t)i + 1,
					 .name = i == 3 ? "weird \"name\"\n\x01 \xff end" : "void k<2>(int)",
					 .grid_x = 4, .grid_y = 1, .grid_z = 1, .block_x = 128, .block_y = 1,
					 .block_z = 1};
		assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
		struct trace_api a = {.start_ns = 1000 * i - 100, .end_ns = 1000 * i - 50,
				      .global_tid = trace_global_tid(7, 8), .correlation_id = (uint32_t)i + 1,
				      .name = "cudaLaunchKernel"};
		assert_int_equal(trace_db_add_api(db, &a, NULL), 0);
	}
	struct trace_memcpy m = {.start_ns = 9600, .end_ns = 9700, .global_pid = trace_global_pid(7),
				 .stream_id = 13, .bytes = 64, .copy_kind = TRACE_COPY_DTOH,
				 .src_device_id = -1, .dst_device_id = -1};
	assert_int_equal(trace_db_add_memcpy(db, &m, NULL), 0);
	struct trace_memset s = {.start_ns = 9800, .end_ns = 9850, .global_pid = trace_global_pid(7),
				 .stream_id = 13, .bytes = 64};
	assert_int_equal(trace_db_add_memset(db, &s, NULL), 0);
	struct trace_nvtx n = {.start_ns = -200, .end_ns = 10000, .type = TRACE_NVTX_PUSH_POP,
			       .global_tid = trace_global_tid(7, 8), .text = "step"};
	assert_int_equal(trace_db_add_nvtx(db, &n, NULL), 0);
	struct trace_nvtx mark = {.start_ns = 4200, .type = TRACE_NVTX_MARK,
				  .global_tid = trace_global_tid(7, 8), .text = "mark"};
	assert_int_equal(trace_db_add_nvtx(db, &mark, NULL), 0);
	assert_int_equal(trace_db_add_process(db, trace_global_pid(7), 7, "python3", NULL), 0);
	assert_int_equal(trace_db_close(db, NULL), 0);
}

struct counts {
	int64_t events, kernels, memcpys, memsets, nvtx, api, meta;
	bool saw_weird, saw_gpu1_name;
};

/* Parse the export completely (it must be valid JSON) and count events by category. */
static void read_back(const char *path, struct counts *c)
{
	memset(c, 0, sizeof *c);
	struct json_reader *r = malloc(sizeof *r);
	struct err e = {0};
	assert_int_equal(json_reader_open_file(r, path, &e), 0);
	enum json_tok t;
	int depth = 0;
	bool in_events = false;
	char key[64] = "";
	for (;;) {
		int rc = json_next(r, &t, &e);
		if (rc)
			fprintf(stderr, "%s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
		assert_int_equal(rc, 0);
		if (t == JSON_EOF)
			break;
		if (t == JSON_OBJ_BEGIN || t == JSON_ARR_BEGIN) {
			depth++;
			if (depth == 3 && in_events)
				c->events++;
		} else if (t == JSON_OBJ_END || t == JSON_ARR_END) {
			depth--;
		} else if (t == JSON_KEY) {
			snprintf(key, sizeof key, "%s", r->str);
			if (depth == 1 && strcmp(key, "traceEvents") == 0)
				in_events = true;
		} else if (t == JSON_STRING && depth == 3) {
			if (strcmp(key, "cat") == 0) {
				c->kernels += strcmp(r->str, "kernel") == 0;
				c->memcpys += strcmp(r->str, "memcpy") == 0;
				c->memsets += strcmp(r->str, "memset") == 0;
				c->nvtx += strcmp(r->str, "nvtx") == 0;
				c->api += strcmp(r->str, "cuda_runtime") == 0;
			} else if (strcmp(key, "ph") == 0) {
				c->meta += strcmp(r->str, "M") == 0;
			}
		} else if (t == JSON_STRING && depth == 4 && strcmp(key, "name") == 0) {
			if (strcmp(r->str, "weird \"name\"\n\x01 \xef\xbf\xbd end") == 0)
				c->saw_weird = true;
			if (strcmp(r->str, "GPU 1") == 0)
				c->saw_gpu1_name = true;
		}
	}
	json_reader_close(r);
	free(r);
}

static void test_export_all(void **state)
{
	(void)state;
	const char *db = fx_path("x.db"), *out = fx_path("x.json");
	build(db);
	FILE *f = fopen(out, "w");
	struct trace_export_stats st;
	struct err e = {0};
	assert_int_equal(trace_export_perfetto(db, f, out, NULL, &st, &e), 0);
	fclose(f);
	assert_int_equal(st.kernels, 10);
	assert_int_equal(st.memcpys, 1);
	assert_int_equal(st.memsets, 1);
	assert_int_equal(st.nvtx, 2);
	assert_int_equal(st.api_calls, 10);
	struct counts c;
	read_back(out, &c);
	assert_int_equal(c.events, st.events);
	assert_int_equal(c.kernels, 10);
	assert_int_equal(c.memcpys, 1);
	assert_int_equal(c.memsets, 1);
	assert_int_equal(c.nvtx, 2);
	assert_int_equal(c.api, 10);
	assert_true(c.meta >= 2 + 2 + 1); /* 2 GPUs (name + order), their streams, the process */
	assert_true(c.saw_weird);         /* escaped, invalid UTF-8 replaced */
	assert_true(c.saw_gpu1_name);
}

static void test_export_window(void **state)
{
	(void)state;
	const char *db = fx_path("w.db"), *out = fx_path("w.json");
	build(db);
	FILE *f = fopen(out, "w");
	struct trace_export_opts o = {.has_from = true, .from_ns = 2400, .has_to = true,
				      .to_ns = 4100, .no_api = true};
	struct trace_export_stats st;
	assert_int_equal(trace_export_perfetto(db, f, out, &o, &st, NULL), 0);
	fclose(f);
	/* kernels [2000,2500] [3000,3500] [4000,4500] overlap the window; the step range spans it;
	 * the mark at 4200 is outside */
	assert_int_equal(st.kernels, 3);
	assert_int_equal(st.nvtx, 1);
	assert_int_equal(st.api_calls, 0);
	assert_int_equal(st.memcpys, 0);
	struct counts c;
	read_back(out, &c);
	assert_int_equal(c.kernels, 3);

	struct err e = {0};
	o.from_ns = 5000;
	o.to_ns = 1;
	assert_int_equal(trace_export_perfetto(db, stdout, "-", &o, &st, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "empty time window"));
}

static void test_export_errors(void **state)
{
	(void)state;
	struct err e = {0};
	struct trace_export_stats st;
	const char *bad = fx_path("bad.db");
	fx_write_str(bad, "{\"traceEvents\": []}");
	FILE *f = fopen(fx_path("bad.json"), "w");
	assert_int_not_equal(trace_export_perfetto(bad, f, "bad.json", NULL, &st, &e), 0);
	assert_non_null(strstr(e.msg, "not an SQLite database"));
	fclose(f);
}

/* Rows of `select` (with {} for the schema name) that differ between databases a and b: both
 * ways, duplicates counted. */
static int64_t differing_rows(const char *a, const char *b, const char *select)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(a, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	char sql[4096];
	snprintf(sql, sizeof sql, "ATTACH '%s' AS b", b);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	char qa[1024], qb[1024];
	/* every "{}" -> main / b */
	size_t na = 0, nb = 0;
	for (const char *p = select; *p && na + 8 < sizeof qa && nb + 8 < sizeof qb;) {
		if (p[0] == '{' && p[1] == '}') {
			na += (size_t)sprintf(qa + na, "main");
			nb += (size_t)sprintf(qb + nb, "b");
			p += 2;
		} else {
			qa[na++] = *p;
			qb[nb++] = *p++;
		}
	}
	qa[na] = qb[nb] = '\0';
	/* a multiset difference: group the rows with their counts */
	char *q = malloc(8192);
	snprintf(q, 8192,
		 "SELECT (SELECT count(*) FROM (SELECT *, count(*) FROM (%s) GROUP BY 1,2,3,4,5,6,7,8,9,10"
		 " EXCEPT SELECT *, count(*) FROM (%s) GROUP BY 1,2,3,4,5,6,7,8,9,10))"
		 " + (SELECT count(*) FROM (SELECT *, count(*) FROM (%s) GROUP BY 1,2,3,4,5,6,7,8,9,10"
		 " EXCEPT SELECT *, count(*) FROM (%s) GROUP BY 1,2,3,4,5,6,7,8,9,10))",
		 qa, qb, qb, qa);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sqlite3_errmsg(db), q);
	free(q);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* k3sim's own export imports back to the same kernels, names (demangled and short), devices,
 * streams, copies, NVTX ranges and marks (CPU and GPU-projected), API calls and processes
 * (issue 12: NVTX were lost, every device became 1000000000, names were cut to short names). */
static void test_round_trip(void **state)
{
	(void)state;
	const char *db = fx_path("rt.db"), *json = fx_path("rt.json"), *back = fx_path("rt-back.db");
	struct trace_db *w = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&w, db, &o, NULL), 0);
	const int64_t t0 = 1733000000123456789; /* epoch-sized: exact only with a base */
	static const char *const names[] = {
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,"
		" at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)",
	};
	for (int p = 0; p < 2; p++) {
		int64_t pid = 4242 + p;
		for (int i = 0; i < 12; i++) {
			struct trace_kernel k = {.start_ns = t0 + 1000 * i + p, .end_ns = t0 + 1000 * i + 777,
						 .global_pid = trace_global_pid(pid),
						 .device_id = (uint32_t)(i % 2 + 2 * p), .stream_id = 7 + (uint32_t)(i % 3),
						 .correlation_id = (uint32_t)i + 1, .name = names[i % 3],
						 .grid_x = 132, .grid_y = i, .grid_z = 1, .block_x = 256,
						 .block_y = 1, .block_z = 1, .registers_per_thread = 64,
						 .dynamic_shared_bytes = 4096};
			assert_int_equal(trace_db_add_kernel(w, &k, NULL), 0);
			struct trace_api a = {.start_ns = t0 + 1000 * i - 300, .end_ns = t0 + 1000 * i - 250,
					      .global_tid = trace_global_tid(pid, pid + 1),
					      .correlation_id = (uint32_t)i + 1,
					      .kind = i % 4 ? TRACE_API_RUNTIME : TRACE_API_DRIVER,
					      .name = i % 4 ? "cudaLaunchKernel" : "cuLaunchKernelEx"};
			assert_int_equal(trace_db_add_api(w, &a, NULL), 0);
		}
		struct trace_memcpy m = {.start_ns = t0 + 20000, .end_ns = t0 + 20100,
					 .global_pid = trace_global_pid(pid), .device_id = 2 * (uint32_t)p,
					 .stream_id = 7, .correlation_id = 50, .bytes = 1 << 20,
					 .copy_kind = TRACE_COPY_DTOH, .src_device_id = -1, .dst_device_id = -1};
		assert_int_equal(trace_db_add_memcpy(w, &m, NULL), 0);
		struct trace_memset ms = {.start_ns = t0 + 20200, .end_ns = t0 + 20250,
					  .global_pid = trace_global_pid(pid), .device_id = 2 * (uint32_t)p,
					  .stream_id = 8, .correlation_id = 51, .bytes = 4096};
		assert_int_equal(trace_db_add_memset(w, &ms, NULL), 0);
		struct trace_nvtx ranges[] = {
			{.start_ns = t0 - 500, .end_ns = t0 + 30000, .type = TRACE_NVTX_PUSH_POP,
			 .global_tid = trace_global_tid(pid, pid + 1), .text = "forward"},
			{.start_ns = t0 + 100, .type = TRACE_NVTX_MARK,
			 .global_tid = trace_global_tid(pid, pid + 1), .text = "a mark"},
			{.start_ns = t0, .end_ns = t0 + 12000, .type = TRACE_NVTX_START_END,
			 .global_tid = trace_global_tid(pid, 7), .category = 2 * p,
			 .domain_id = TRACE_NVTX_DOMAIN_GPU, .text = "forward"},
		};
		for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
			assert_int_equal(trace_db_add_nvtx(w, &ranges[i], NULL), 0);
		assert_int_equal(trace_db_add_process(w, trace_global_pid(pid), pid,
						      p ? "rank1" : "rank0", NULL), 0);
	}
	assert_int_equal(trace_db_close(w, NULL), 0);

	FILE *f = fopen(json, "w");
	struct trace_export_stats xs;
	struct err e = {0};
	assert_int_equal(trace_export_perfetto(db, f, json, NULL, &xs, &e), 0);
	fclose(f);
	assert_int_equal(trace_db_create(&w, back, &o, NULL), 0);
	struct trace_import_stats st;
	int rc = trace_import_file(w, json, &st, &e);
	if (rc)
		fprintf(stderr, "%s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(trace_db_close(w, NULL), 0);
	assert_int_equal(st.kernels, 24);
	assert_int_equal(st.unknown_events, 0);

	static const char *const same[] = {
		"SELECT k.start, k.\"end\", k.deviceId, k.streamId, k.correlationId, k.globalPid,"
		" d.value, s.value, k.gridY * 1000 + k.blockX, k.registersPerThread * 100000 +"
		" k.dynamicSharedMemory FROM {}.CUPTI_ACTIVITY_KIND_KERNEL k JOIN {}.StringIds d ON"
		" d.id = k.demangledName JOIN {}.StringIds s ON s.id = k.shortName",
		"SELECT start, \"end\", deviceId, streamId, correlationId, globalPid, bytes, copyKind, 0, 0"
		" FROM {}.CUPTI_ACTIVITY_KIND_MEMCPY",
		"SELECT start, \"end\", deviceId, streamId, correlationId, globalPid, bytes, 0, 0, 0"
		" FROM {}.CUPTI_ACTIVITY_KIND_MEMSET",
		"SELECT r.start, r.\"end\", r.eventClass, r.globalTid, r.correlationId, s.value, 0, 0, 0, 0"
		" FROM {}.CUPTI_ACTIVITY_KIND_RUNTIME r JOIN {}.StringIds s ON s.id = r.nameId",
		"SELECT start, \"end\", eventType, text, globalTid, coalesce(domainId, 0),"
		" coalesce(category, 0), 0, 0, 0 FROM {}.NVTX_EVENTS",
		"SELECT globalPid, pid, name, 0, 0, 0, 0, 0, 0, 0 FROM {}.PROCESSES",
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		int64_t d = differing_rows(db, back, same[i]);
		if (d)
			fail_msg("%" PRId64 " rows differ: %s", d, same[i]);
	}
	/* devices: the GPUs with activity, each by its own id */
	assert_string_equal(fx_text(back, "SELECT group_concat(id) FROM (SELECT id FROM TARGET_INFO_GPU"
					  " ORDER BY id)"), "0,1,2,3");
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
		cmocka_unit_test(test_export_all),
		cmocka_unit_test(test_export_window),
		cmocka_unit_test(test_export_errors),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
