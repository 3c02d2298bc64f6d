/* The capture writer thread on its own records (no GPU): marks and per-kernel metrics go from
 * pool buffers through the decoder into the database; flush makes them visible to a reader while
 * the capture still runs; dropped counts are stored. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "trace/capture/decode.h"
#include "trace/capture/writer.h"

static int64_t count(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	int64_t v = -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void submit_marks(struct capture_writer *w, int n, int64_t t0)
{
	uint8_t *b = capture_pool_get(&w->pool, 1000);
	assert_non_null(b);
	size_t used = 0;
	for (int i = 0; i < n; i++) {
		if (capture_mark_pack(b, w->pool.bytes, &used, t0 + i, 77, i % 2 ? "odd" : "even") <
		    0) {
			struct capture_item it = {.kind = CAPTURE_ITEM_MARKS, .buf = b,
						  .valid_bytes = used};
			capture_pool_submit(&w->pool, &it);
			b = capture_pool_get(&w->pool, 1000);
			assert_non_null(b);
			used = 0;
			i--;
		}
	}
	struct capture_item it = {.kind = CAPTURE_ITEM_MARKS, .buf = b, .valid_bytes = used};
	capture_pool_submit(&w->pool, &it);
}

static void test_writer(void **state)
{
	(void)state;
	char path[] = "/tmp/k3capture-writer-XXXXXX.db";
	int fd = mkstemps(path, 3);
	assert_true(fd >= 0);
	close(fd);
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true, .crash_safe = true};
	struct err e = {0};
	assert_int_equal(trace_db_create(&db, path, &o, &e), 0);

	struct capture_writer w;
	assert_int_equal(capture_writer_start(&w, db, 4242, 3, 4096, &e), 0);
	const char *names[2] = {"dram_read_bytes", "sm_throughput"};
	const char *units[2] = {"bytes", "percent"};
	capture_decoder_set_metrics(&w.dec, names, units, 2);

	/* marks: more than one buffer's worth, through a pool of three */
	submit_marks(&w, 1000, 1000000);
	/* per-kernel metrics, one of them with a mangled name */
	uint8_t *b = capture_pool_get(&w.pool, 1000);
	assert_non_null(b);
	struct capture_metric m[2];
	memset(m, 0, sizeof m);
	m[0] = (struct capture_metric){.correlation_id = 7, .device_id = 0, .n_values = 2,
				       .values = {2147483648.0, 91.5}};
	snprintf(m[0].symbol, sizeof m[0].symbol, "_Z4copyPKfPfm");
	m[1] = (struct capture_metric){.correlation_id = 9, .device_id = 0, .n_values = 2,
				       .values = {1.0, 2.0}};
	snprintf(m[1].symbol, sizeof m[1].symbol, "plain_c_kernel");
	memcpy(b, m, sizeof m);
	struct capture_item it = {.kind = CAPTURE_ITEM_METRICS, .buf = b, .valid_bytes = sizeof m,
				  .context_id = 1, .stream_id = 13, .dropped_records = 5};
	capture_pool_submit(&w.pool, &it);

	/* flush: a reader sees every row while the capture still runs */
	assert_int_equal(capture_writer_flush(&w, 10000), 0);
	assert_int_equal(count(path, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34"), 1000);
	assert_int_equal(count(path, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'odd'"), 500);
	assert_int_equal(count(path, "SELECT min(start) FROM NVTX_EVENTS"), 1000000);
	assert_int_equal(count(path, "SELECT count(DISTINCT globalTid) FROM NVTX_EVENTS"), 1);
	assert_int_equal(count(path, "SELECT globalTid FROM NVTX_EVENTS LIMIT 1"),
			 trace_global_tid(4242, 77));
	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_KERNEL_METRICS"), 4);
	assert_int_equal(count(path, "SELECT value FROM K3SIM_KERNEL_METRICS WHERE correlationId = 7"
				     " AND metric = 'dram_read_bytes'"),
			 2147483648LL);
	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_KERNEL_METRICS m JOIN StringIds s "
				     "ON s.id = m.nameId WHERE s.value = 'copy(float const*, float*, "
				     "unsigned long)'"),
			 2);
	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_KERNEL_METRICS m JOIN StringIds s "
				     "ON s.id = m.nameId WHERE s.value = 'plain_c_kernel'"),
			 2);
	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_KERNEL_METRICS WHERE unit = "
				     "'percent'"),
			 2);
	assert_int_equal(count(path, "SELECT sum(count) FROM K3SIM_DROPPED WHERE streamId = 13"), 5);

	assert_int_equal(capture_writer_stop(&w, &e), 0);
	assert_int_equal(w.dropped_records, 5);
	assert_true(w.items >= 3);
	assert_int_equal(capture_writer_flush(&w, 0), -ENOTCONN);
	assert_int_equal(trace_db_close(db, &e), 0);
	assert_int_equal(count(path, "SELECT count(*) FROM NVTX_EVENTS"), 1000);
	unlink(path);
}

static void test_mark_pack(void **state)
{
	(void)state;
	uint8_t buf[64];
	size_t used = 0;
	assert_int_equal(capture_mark_pack(buf, sizeof buf, &used, 1, 2, "abc"), 0);
	assert_int_equal(used % 8, 0);
	size_t before = used;
	char big[100];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(capture_mark_pack(buf, sizeof buf, &used, 1, 2, big), -ENOSPC);
	assert_int_equal(used, before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark_pack),
		cmocka_unit_test(test_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
