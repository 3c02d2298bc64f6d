/* trace/export: Chrome/Perfetto JSON, checked by reading it back with the JSON reader. */
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
#include "trace/export.h"
#include "trace/json.h"
#include "trace/tracedb.h"

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
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
