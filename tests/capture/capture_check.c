/* GPU capture tests: run capture_app under `k3sim trace capture` (cmd_trace_capture, linked in)
 * and check the database. usage: capture_check MODE APP [ARGS...]; exit 77 without a GPU.
 * `capture_check run OUT.db CMD [ARGS...]` just captures CMD (K3CAPTURE_METRICS: --metrics,
 * K3CAPTURE_DRIVER_API=0: --no-driver-api, K3CAPTURE_API=0: --no-api).
 * K3SIM_CAPTURE_LIB must name the built libk3capture.so (meson sets it). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"

static int failures;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(ok ? stdout : stderr, "%s: ", ok ? "ok" : "FAIL");
	vfprintf(ok ? stdout : stderr, fmt, ap);
	fputc('\n', ok ? stdout : stderr);
	va_end(ap);
	if (!ok)
		failures++;
}

static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "sql error in '%s': %s\n", sql, sqlite3_errmsg(db));
		failures++;
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static double q_double(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	double v = NAN;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "sql error in '%s': %s\n", sql, sqlite3_errmsg(db));
		failures++;
		return NAN;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Run `capture [opts] -- app args` with stderr into err_path when given. */
static int run_capture(const char *db, const char *metrics, char **app_argv, const char *err_path)
{
	static char s_capture[] = "capture", s_o[] = "-o", s_force[] = "--force",
		    s_metrics[] = "--metrics", s_dashes[] = "--", s_no_driver[] = "--no-driver-api",
		    s_no_api[] = "--no-api";
	char db_arg[512], metrics_arg[256];
	snprintf(db_arg, sizeof db_arg, "%s", db);
	snprintf(metrics_arg, sizeof metrics_arg, "%s", metrics ? metrics : "");
	char *argv[64];
	int n = 0;
	argv[n++] = s_capture;
	argv[n++] = s_o;
	argv[n++] = db_arg;
	argv[n++] = s_force;
	if (metrics) {
		argv[n++] = s_metrics;
		argv[n++] = metrics_arg;
	}
	const char *drv = getenv("K3CAPTURE_DRIVER_API");
	if (drv && strcmp(drv, "0") == 0)
		argv[n++] = s_no_driver;
	const char *api = getenv("K3CAPTURE_API");
	if (api && strcmp(api, "0") == 0)
		argv[n++] = s_no_api;
	argv[n++] = s_dashes;
	for (int i = 0; app_argv[i] && n < 63; i++)
		argv[n++] = app_argv[i];
	argv[n] = NULL;
	int saved = -1;
	if (err_path) {
		fflush(stderr);
		saved = dup(2);
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		close(fd);
	}
	int rc = cmd_trace_capture(n, argv);
	if (err_path) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	return rc;
}

static sqlite3 *open_db(const char *path)
{
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		check(false, "open %s: %s", path, db ? sqlite3_errmsg(db) : "?");
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

static int64_t kernels_named(sqlite3 *db, const char *name)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
		 "ON s.id = k.shortName WHERE s.value = '%s'",
		 name);
	return q_int(db, sql);
}

static int64_t distinct_streams(sqlite3 *db, const char *name)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT count(DISTINCT k.streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
		 " ON s.id = k.shortName WHERE s.value = '%s'",
		 name);
	return q_int(db, sql);
}

static int64_t stream_of(sqlite3 *db, const char *name)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT min(k.streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
		 " ON s.id = k.shortName WHERE s.value = '%s'",
		 name);
	return q_int(db, sql);
}

/* Kernels of `name` whose launching runtime call starts outside NVTX range `range`. */
static int64_t launches_outside(sqlite3 *db, const char *name, const char *range)
{
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		 " JOIN StringIds s ON s.id = k.shortName"
		 " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId"
		 "  AND r.eventClass = 0"
		 " JOIN NVTX_EVENTS n ON n.text = '%s'"
		 " WHERE s.value = '%s' AND (r.start < n.start OR r.end > n.end)",
		 range, name);
	return q_int(db, sql);
}

static int64_t dropped(sqlite3 *db)
{
	return q_int(db, "SELECT coalesce(sum(count), 0) FROM K3SIM_DROPPED");
}

/* On failure: what the database holds, for whoever reads the log without the file. */
static void dump(sqlite3 *db)
{
	static const char *const queries[] = {
		"SELECT 'kernel', s.value, k.streamId, count(*), min(k.end - k.start) FROM "
		"CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName GROUP BY 2, 3 "
		"LIMIT 20",
		"SELECT 'nvtx', text, eventType, start, end, rangeId, globalTid FROM NVTX_EVENTS "
		"LIMIT 20",
		"SELECT 'memcpy', copyKind, bytes, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 10",
		"SELECT 'memset', bytes, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET LIMIT 10",
		"SELECT 'api', s.value, r.eventClass, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
		"JOIN StringIds s ON s.id = r.nameId GROUP BY 2, 3 LIMIT 30",
		"SELECT 'metric', correlationId, metric, value, unit FROM K3SIM_KERNEL_METRICS LIMIT 10",
		"SELECT 'dropped', source, contextId, streamId, count FROM K3SIM_DROPPED LIMIT 10",
		"SELECT 'gpu', id, name, smCount, chipName FROM TARGET_INFO_GPU",
		"SELECT 'capture', name, substr(value, 1, 200) FROM K3SIM_CAPTURE",
		"SELECT 'gpu_metrics', deviceId, timestamp, smClockMHz, powerW, throttleReasons FROM "
		"K3SIM_GPU_METRICS LIMIT 5",
	};
	for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) != SQLITE_OK) {
			printf("  (%s)\n", sqlite3_errmsg(db));
			continue;
		}
		while (sqlite3_step(st) == SQLITE_ROW) {
			printf(" ");
			for (int c = 0; c < sqlite3_column_count(st); c++)
				printf(" %s", sqlite3_column_text(st, c) ? (const char *)sqlite3_column_text(st, c) : "NULL");
			printf("\n");
		}
		sqlite3_finalize(st);
	}
}

static void check_basic(sqlite3 *db)
{
	check(q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == 6,
	      "exactly 6 kernels (got %lld)",
	      (long long)q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
	check(kernels_named(db, "k_alpha") == 3, "3 x k_alpha");
	check(kernels_named(db, "k_beta") == 2, "2 x k_beta");
	check(kernels_named(db, "k_gamma") == 1, "1 x k_gamma");
	int64_t sa = stream_of(db, "k_alpha"), sb = stream_of(db, "k_beta"),
		sc = stream_of(db, "k_gamma");
	check(distinct_streams(db, "k_alpha") == 1 && distinct_streams(db, "k_beta") == 1,
	      "each of k_alpha, k_beta on one stream");
	check(sa != sb && sc != sa && sc != sb,
	      "streams differ: k_alpha %lld, k_beta %lld, k_gamma (default) %lld", (long long)sa,
	      (long long)sb, (long long)sc);
	check(q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS ("
			"SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = "
			"k.correlationId AND r.eventClass = 0)") == 0,
	      "every kernel has its launching runtime call");
	check(q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end <= start") == 0,
	      "kernel durations positive");
	check(q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND "
			"bytes = 1048576") == 1,
	      "one 1 MiB HtoD copy");
	check(q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2 AND "
			"bytes = 1048576") == 1,
	      "one 1 MiB DtoH copy");
	check(q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE bytes = 1048576") ==
		      1,
	      "one 1 MiB memset");
	check(q_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'outer' AND eventType = 59 "
			"AND end > start") == 1,
	      "push/pop range 'outer'");
	check(q_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'phase_a' AND eventType = 59 "
			"AND end > start") == 1,
	      "push/pop range 'phase_a'");
	check(q_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'async_b' AND eventType = 60 "
			"AND end > start") == 1,
	      "start/end range 'async_b' (eventType %lld)",
	      (long long)q_int(db, "SELECT eventType FROM NVTX_EVENTS WHERE text = 'async_b'"));
	check(q_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'mark1' AND eventType = 34") ==
		      1,
	      "mark 'mark1'");
	check(launches_outside(db, "k_alpha", "phase_a") == 0, "k_alpha launched inside 'phase_a'");
	check(launches_outside(db, "k_beta", "async_b") == 0, "k_beta launched inside 'async_b'");
	check(launches_outside(db, "k_alpha", "outer") == 0 &&
		      launches_outside(db, "k_beta", "outer") == 0 &&
		      launches_outside(db, "k_gamma", "outer") == 0,
	      "all launches inside 'outer'");
	check(launches_outside(db, "k_gamma", "phase_a") == 1, "k_gamma launched after 'phase_a'");
	check(dropped(db) == 0, "no dropped records");
	check(q_int(db, "SELECT count(*) FROM TARGET_INFO_GPU WHERE smCount > 0") >= 1,
	      "device properties recorded");
	check(q_int(db, "SELECT count(*) FROM K3SIM_CAPTURE WHERE name = 'command_line' AND "
			"value LIKE '%capture_app basic%'") == 1,
	      "command line recorded");
	check(q_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 1") > 0,
	      "driver API rows present");
	/* GPU clocks and power (NVML): readings of the GPU the kernels ran on, on the trace's
	 * clock (inside or near the GPU span), with an SM clock */
	check(q_int(db, "SELECT count(*) FROM K3SIM_CAPTURE WHERE name = 'gpu_metrics' AND "
			"value LIKE 'nvml every %'") == 1,
	      "NVML sampled (K3SIM_CAPTURE.gpu_metrics; 'unavailable: ...' says why not)");
	check(q_int(db, "SELECT count(*) FROM K3SIM_GPU_METRICS g WHERE smClockMHz > 0 AND "
			"deviceId IN (SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL)") >= 1,
	      "GPU clock readings of the kernels' device");
	check(q_int(db, "SELECT count(*) FROM K3SIM_GPU_METRICS WHERE timestamp < "
			"(SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL) - 60000000000 OR timestamp > "
			"(SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL) + 60000000000") == 0,
	      "GPU readings on the trace's clock (within a minute of the kernels)");
}

static void check_copy(sqlite3 *db, double bytes)
{
	double v[3];
	const char *names[3] = {"dram_read_bytes", "dram_write_bytes", "sm_throughput"};
	for (int i = 0; i < 3; i++) {
		char sql[512];
		snprintf(sql, sizeof sql,
			 "SELECT m.value FROM K3SIM_KERNEL_METRICS m JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
			 " ON k.correlationId = m.correlationId JOIN StringIds s ON s.id = "
			 "k.shortName WHERE s.value = 'k3_copy' AND m.metric = '%s'",
			 names[i]);
		v[i] = q_double(db, sql);
	}
	double rd = v[0], wr = v[1], smt = v[2];
	double rel = (rd + wr) / (2 * bytes) - 1;
	printf("metric: k3_copy of %.0f bytes: dram_read_bytes %.0f, dram_write_bytes %.0f, "
	       "sum/2N - 1 = %+.4f, sm_throughput %.2f %%\n",
	       bytes, rd, wr, rel, smt);
	check(!isnan(rd) && !isnan(wr) && fabs(rel) <= 0.02,
	      "DRAM read + write of the copy within 2 %% of 2N");
	check(!isnan(smt) && smt >= 0 && smt <= 100, "sm_throughput recorded");
	check(kernels_named(db, "k3_copy") == 1, "the copy kernel's trace row");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: capture_check MODE APP [ARGS...]\n");
		return 2;
	}
	const char *mode = argv[1];
	if (strcmp(mode, "run") == 0 && argc >= 4) {
		/* capture_check run OUT.db CMD [ARGS...]: `k3sim trace capture -o OUT.db --force --
		 * CMD ARGS`, for scripts on machines where only this binary was built. */
		return run_capture(argv[2], getenv("K3CAPTURE_METRICS"), argv + 3, NULL);
	}
	char dir[] = "/tmp/k3capture-test-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char db_path[512], err_path[512];
	snprintf(db_path, sizeof db_path, "%s/out.db", dir);
	snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
	char *app[16] = {argv[2], argv[1]};
	for (int i = 3; i < argc && i < 15; i++)
		app[i - 1] = argv[i];
	bool keep = getenv("K3CAPTURE_KEEP") != NULL;

	const char *metrics = strcmp(mode, "copy") == 0
				      ? "dram_read_bytes,dram_write_bytes,sm_throughput"
				      : NULL;
	double t0 = now_s();
	int rc = run_capture(db_path, metrics, app, strcmp(mode, "busy") == 0 ? err_path : NULL);
	double wall = now_s() - t0;
	if (rc == 77) {
		printf("no GPU: skipped\n");
		return 77;
	}
	if (strcmp(mode, "busy") == 0) {
		char text[8192] = "";
		FILE *f = fopen(err_path, "r");
		if (f) {
			text[fread(text, 1, sizeof text - 1, f)] = '\0';
			fclose(f);
		}
		fputs(text, stdout);
		check(rc == 0, "the program still runs (exit %d)", rc);
		check(strstr(text, "another CUPTI client") != NULL && strstr(text, "nsys") &&
			      strstr(text, "torch.profiler"),
		      "says another CUPTI client holds the subscription and names the likely ones");
		check(access(db_path, F_OK) != 0, "leaves no database behind");
		goto out;
	}
	if (strcmp(mode, "sigterm") == 0)
		check(rc == 128 + 15, "exit status 143 of a SIGTERM'd program propagated (got %d)",
		      rc);
	else
		check(rc == 0, "capture exit status 0 (got %d)", rc);
	sqlite3 *db = open_db(db_path);
	if (!db)
		goto out;
	if (strcmp(mode, "basic") == 0) {
		check_basic(db);
	} else if (strcmp(mode, "copy") == 0) {
		check_copy(db, argc > 3 ? atof(argv[3]) : 0);
	} else if (strcmp(mode, "launches") == 0 || strcmp(mode, "sigterm") == 0 ||
		   strcmp(mode, "reset") == 0) {
		int64_t want = argc > 3 ? atoll(argv[3]) : 0;
		int64_t got = kernels_named(db, "k_empty");
		int64_t drop = dropped(db);
		printf("%s: %lld launches, %lld kernel rows, %lld dropped, %.3f s wall under "
		       "capture\n",
		       mode, (long long)want, (long long)got, (long long)drop, wall);
		check(got == want, "all %lld kernels captured (got %lld)", (long long)want,
		      (long long)got);
		check(drop == 0, "zero dropped records");
	}
	if (failures)
		dump(db);
	sqlite3_close(db);
out:
	if (!keep) {
		char p[600];
		const char *sfx[] = {"", "-wal", "-shm", "-journal"};
		for (int i = 0; i < 4; i++) {
			snprintf(p, sizeof p, "%s%s", db_path, sfx[i]);
			unlink(p);
		}
		unlink(err_path);
		rmdir(dir);
	} else {
		printf("kept %s\n", db_path);
	}
	return failures ? 1 : 0;
}
