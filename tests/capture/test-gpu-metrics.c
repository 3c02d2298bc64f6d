/* GPU clocks and power on the capture's path, without a GPU: the sampler thread reads a fake
 * source, its readings go through a side buffer and the capture pool to the writer thread, into
 * K3SIM_GPU_METRICS; `trace summary` and `trace merge` read them back. (The NVML source itself
 * needs a driver: tests/capture/capture_check runs it on a GPU.) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "trace/analyze/analyze.h"
#include "trace/capture/decode.h"
#include "trace/capture/gpumon.h"
#include "trace/capture/side.h"
#include "trace/capture/writer.h"
#include "trace/import/import.h"

enum { ROUNDS = 25, DEV_B = 3 };

/* Two GPUs, deviceIds 0 and DEV_B, for ROUNDS rounds, then none (count() says 0), so the number
 * of readings is exact however the thread is scheduled. Round r of GPU 0: SM 1400 + 4r MHz,
 * power 100 + 25r W (its 1 s mean 90 + 20r), 40 + r C, idle at r = 0, power-capped from r = 20.
 * GPU DEV_B: SM 1980, no temperature, power only in odd rounds (200 + r W, no 1 s mean), memory
 * clock never. */
struct fake {
	int rounds;          /* count() calls that returned devices */
	int64_t clock_ns;
};

static int fake_count(void *ctx)
{
	struct fake *f = ctx;
	return f->rounds++ < ROUNDS ? 2 : 0;
}

static int fake_read(void *ctx, int slot, struct gpumon_sample *out)
{
	struct fake *f = ctx;
	int r = f->rounds - 1;
	memset(out, 0, sizeof *out);
	if (slot == 0) {
		out->device = 0;
		out->fields = GPUMON_HAS_SM | GPUMON_HAS_MEM | GPUMON_HAS_POWER | GPUMON_HAS_TEMP |
			      GPUMON_HAS_THROTTLE | GPUMON_HAS_POWER_AVG;
		out->sm_mhz = 1400 + 4 * r;
		out->mem_mhz = 3201;
		out->power_w = 100 + 25 * r;
		out->power_avg_w = 90 + 20 * r;
		out->temp_c = 40 + r;
		out->throttle_reasons = r == 0 ? TRACE_THROTTLE_GPU_IDLE
				       : r >= 20 ? TRACE_THROTTLE_SW_POWER_CAP : 0;
	} else {
		out->device = DEV_B;
		out->fields = GPUMON_HAS_SM;
		out->sm_mhz = 1980;
		if (r % 2) {
			out->fields |= GPUMON_HAS_POWER;
			out->power_w = 200 + r;
		}
	}
	return 0;
}

/* A deterministic clock: 1 ms a reading, from 5 s. */
static struct fake *g_fake;
static int64_t fake_now(void)
{
	return g_fake->clock_ns += 1000000;
}

/* On the sampler thread: no cmocka asserts here (they longjmp); failures are counted. */
static int sink_failures;
static void sink_side(void *ctx, const struct gpumon_sample *s)
{
	if (capture_side_append(ctx, s, sizeof *s) != 0)
		sink_failures++;
}

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

static void wait_rounds(struct gpumon_sampler *s, int64_t rounds)
{
	for (int i = 0; i < 5000; i++) {
		pthread_mutex_lock(&s->lock);
		int64_t done = s->rounds;
		pthread_mutex_unlock(&s->lock);
		if (done >= rounds)
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	fail_msg("the sampler took fewer than %lld rounds in 5 s", (long long)rounds);
}

static void temp_path(char *path)
{
	int fd = mkstemps(path, 3);
	assert_true(fd >= 0);
	close(fd);
}

static void test_sampler_to_db(void **state)
{
	(void)state;
	char path[] = "/tmp/k3gpumetrics-XXXXXX.db";
	temp_path(path);
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true, .crash_safe = true};
	struct err e = {0};
	assert_int_equal(trace_db_create(&db, path, &o, &e), 0);
	struct trace_kernel k = {.start_ns = 5000000000, .end_ns = 5100000000, .name = "k",
				 .global_pid = trace_global_pid(4242)};
	assert_int_equal(trace_db_add_kernel(db, &k, &e), 0);

	struct capture_writer w;
	/* 3 buffers of 1 KiB: 18 readings each, so full buffers are queued on the way */
	assert_int_equal(capture_writer_start(&w, db, 4242, 3, 1024, &e), 0);
	struct capture_side side;
	capture_side_init(&side, &w.pool, CAPTURE_ITEM_GPU_SAMPLES, 5000);
	struct fake f = {.clock_ns = 5000000000};
	g_fake = &f;
	struct gpumon_source src = {.count = fake_count, .read = fake_read, .ctx = &f};
	struct gpumon_sampler_opts so = {.period_ms = 1, .now_ns = fake_now, .sink = sink_side,
					 .sink_ctx = &side};
	struct gpumon_sampler s;
	assert_int_equal(gpumon_sampler_start(&s, &src, &so, &e), 0);
	wait_rounds(&s, ROUNDS + 2);
	gpumon_sampler_stop(&s);
	assert_int_equal(sink_failures, 0);
	assert_int_equal(s.samples, 2 * ROUNDS);
	assert_int_equal(s.failed_reads, 0);
	capture_side_submit(&side);
	assert_int_equal(side.appended, 2 * ROUNDS);
	assert_int_equal(side.lost, 0);
	capture_side_release(&side);
	assert_int_equal(capture_writer_stop(&w, &e), 0);
	assert_int_equal(trace_db_close(db, &e), 0);

	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_GPU_METRICS"), 2 * ROUNDS);
	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_GPU_METRICS WHERE deviceId = 3"), ROUNDS);
	assert_int_equal(count(path, "SELECT count(DISTINCT globalPid) FROM K3SIM_GPU_METRICS"), 1);
	assert_int_equal(count(path, "SELECT globalPid >> 24 FROM K3SIM_GPU_METRICS LIMIT 1"), 4242);
	/* timestamps: the sampler's clock, increasing, as read */
	assert_int_equal(count(path, "SELECT min(timestamp) FROM K3SIM_GPU_METRICS"), 5001000000);
	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_GPU_METRICS a JOIN K3SIM_GPU_METRICS b"
				     " ON a.deviceId = b.deviceId AND a.rowid < b.rowid"
				     " WHERE a.timestamp >= b.timestamp"),
			 0);
	/* what a reading lacked is NULL, not 0 */
	assert_int_equal(count(path, "SELECT count(*) FROM K3SIM_GPU_METRICS WHERE deviceId = 3 AND"
				     " temperatureC IS NULL AND memClockMHz IS NULL AND"
				     " throttleReasons IS NULL"),
			 ROUNDS);
	assert_int_equal(count(path, "SELECT count(powerW) FROM K3SIM_GPU_METRICS WHERE deviceId = 3"),
			 ROUNDS / 2);
	/* the 1 s mean beside the instant reading, its own column; NULL where not read */
	assert_int_equal(count(path, "SELECT count(powerAvgW) FROM K3SIM_GPU_METRICS WHERE deviceId = 3"), 0);
	assert_int_equal(count(path, "SELECT sum(powerAvgW) FROM K3SIM_GPU_METRICS WHERE deviceId = 0"),
			 90 * ROUNDS + 20 * (ROUNDS - 1) * ROUNDS / 2);

	/* trace summary: min / median / max per GPU */
	struct trace_summary sum;
	assert_int_equal(trace_summary_compute(&sum, path, NULL, &e), 0);
	assert_int_equal(sum.n_clocks, 2);
	const struct trace_clock_sum *a = &sum.clocks[0], *b = &sum.clocks[1];
	assert_int_equal(a->device_id, 0);
	assert_int_equal(a->samples, ROUNDS);
	assert_true(a->sm_mhz_min == 1400 && a->sm_mhz_max == 1496 && a->sm_mhz_med == 1448);
	assert_true(a->power_w_min == 100 && a->power_w_max == 700 && a->power_w_med == 400);
	assert_true(a->mem_mhz_med == 3201 && a->temp_c_max == 64);
	assert_int_equal(a->power_capped, 5);
	assert_int_equal(a->throttle_any, TRACE_THROTTLE_GPU_IDLE | TRACE_THROTTLE_SW_POWER_CAP);
	assert_int_equal(b->device_id, DEV_B);
	/* odd rounds 1..23: 12 readings, median of 211 and 213 */
	assert_true(b->power_w_med == 212 && b->power_w_min == 201 && b->power_w_max == 223);
	assert_true(b->sm_mhz_med == 1980);
	assert_int_equal(b->throttle_any, 0);
	trace_summary_release(&sum);

	/* merge keeps them (one input: same process, same GPUs) */
	char merged[] = "/tmp/k3gpumetrics-merged-XXXXXX.db";
	temp_path(merged);
	const char *in[1] = {path};
	struct trace_db_opts mo = {.overwrite = true};
	assert_int_equal(trace_merge(merged, in, 1, &mo, NULL, &e), 0);
	assert_int_equal(count(merged, "SELECT count(*) FROM K3SIM_GPU_METRICS"), 2 * ROUNDS);
	assert_int_equal(count(merged, "SELECT count(powerW) FROM K3SIM_GPU_METRICS"), ROUNDS + ROUNDS / 2);
	assert_int_equal(count(merged, "SELECT sum(powerAvgW) FROM K3SIM_GPU_METRICS"),
			 90 * ROUNDS + 20 * (ROUNDS - 1) * ROUNDS / 2);
	unlink(merged);
	unlink(path);
}

static void test_sampler_arguments(void **state)
{
	(void)state;
	struct fake f = {0};
	g_fake = &f;
	struct gpumon_source src = {.count = fake_count, .read = fake_read, .ctx = &f};
	struct side_dummy {
		int x;
	} dummy;
	struct gpumon_sampler_opts so = {.period_ms = 0, .sink = NULL, .sink_ctx = &dummy};
	struct gpumon_sampler s;
	struct err e = {0};
	assert_int_equal(gpumon_sampler_start(&s, &src, &so, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "period"));
	gpumon_sampler_stop(&s); /* never started: nothing to do */
	so.period_ms = 10;
	assert_int_equal(gpumon_sampler_start(&s, &src, &so, &e), -EINVAL); /* no sink */
	assert_int_equal(gpumon_sampler_start(&s, NULL, &so, &e), -EINVAL);
}

/* No free buffer: the reading is counted as lost, the producer is not blocked past wait_ms. */
static void test_side_full_pool(void **state)
{
	(void)state;
	struct capture_pool pool;
	assert_int_equal(capture_pool_init(&pool, 1, 256), 0);
	uint8_t *held = capture_pool_get(&pool, 0);
	assert_non_null(held);
	struct capture_side side;
	capture_side_init(&side, &pool, CAPTURE_ITEM_GPU_SAMPLES, 0);
	struct gpumon_sample smp = {.device = 1};
	assert_int_equal(capture_side_append(&side, &smp, sizeof smp), -ENOBUFS);
	assert_int_equal(side.lost, 1);
	uint8_t big[512] = {0};
	assert_int_equal(capture_side_append(&side, big, sizeof big), -E2BIG);
	capture_pool_put(&pool, held);
	assert_int_equal(capture_side_append(&side, &smp, sizeof smp), 0);
	capture_side_release(&side); /* hands the unqueued buffer back */
	assert_non_null(capture_pool_get(&pool, 0));
	capture_pool_release(&pool);
}

/* The accumulator calib-grid keeps per point. */
static void test_acc(void **state)
{
	(void)state;
	struct gpumon_acc a;
	gpumon_acc_reset(&a);
	assert_true(gpumon_acc_sm_mhz(&a) == 0 && a.temp_c_max == -1);
	struct gpumon_sample s1 = {.fields = GPUMON_HAS_SM | GPUMON_HAS_POWER | GPUMON_HAS_THROTTLE,
				   .sm_mhz = 1500, .power_w = 690, .throttle_reasons = 4};
	struct gpumon_sample s2 = {.fields = GPUMON_HAS_SM | GPUMON_HAS_TEMP, .sm_mhz = 1700,
				   .temp_c = 70};
	gpumon_acc_add(&a, &s1);
	gpumon_acc_add(&a, &s2);
	assert_true(gpumon_acc_sm_mhz(&a) == 1600);
	assert_true(gpumon_acc_power_w(&a) == 690); /* one power reading */
	assert_true(a.sm_mhz_min == 1500 && a.sm_mhz_max == 1700 && a.temp_c_max == 70);
	assert_int_equal(a.throttle_any, 4);
	char buf[64];
	assert_string_equal(trace_throttle_names(0, buf, sizeof buf), "none");
	assert_string_equal(trace_throttle_names(0x5, buf, sizeof buf), "idle|sw_power_cap");
	assert_string_equal(trace_throttle_names(0x10004, buf, sizeof buf), "sw_power_cap|0x10000");
	assert_string_equal(trace_throttle_names(0x5, buf, 6), "idle");
}

/* Without a driver, NVML is absent: a clean error, never a crash. (On a GPU machine it opens.) */
static void test_open_without_driver(void **state)
{
	(void)state;
	struct gpumon *m = NULL;
	struct err e = {0};
	int rc = gpumon_open(&m, &e);
	if (rc == 0) {
		gpumon_free(m);
		skip();
	}
	assert_true(rc == -ENOENT || rc == -EIO);
	assert_true(e.msg[0] != '\0');
	gpumon_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampler_to_db),
		cmocka_unit_test(test_sampler_arguments),
		cmocka_unit_test(test_side_full_pool),
		cmocka_unit_test(test_acc),
		cmocka_unit_test(test_open_without_driver),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
