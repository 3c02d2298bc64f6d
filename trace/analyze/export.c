#include "trace/analyze/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace/db/sqlread.h"
#include "trace/db/tracedb.h"
#include "util/tracejson.h"
#include "util/jsonw.h"

enum { MAX_TRACKS = 4096 };
#define GPU_PID_BASE 1000000000 /* GPU "processes" sit above real pids (24 bits) */

struct track {
	int64_t gpid;
	uint32_t dev;
};

struct ex {
	sqlite3 *sql;
	const char *path;
	FILE *out;
	const struct trace_export_opts *o;
	struct trace_export_stats *st;
	struct track tracks[MAX_TRACKS];
	size_t n_tracks;
	size_t last_track;
	bool one_process;
	struct tj w;
	int64_t from, to;
	int64_t base;        /* baseTimeNanoseconds: written times are relative to it */
};

static int64_t ci(sqlite3_stmt *st, int col)
{
	return (int64_t)sqlite3_column_int64(st, col);
}

/* ---- JSON output (util/tracejson.h) ---- */

#define put_str util_json_str
#define put_us tj_us

/* A duration: end - start, 0 for a row that ends before it starts, INT64_MAX at most. */
static void put_dur(FILE *f, int64_t start, int64_t end)
{
	int64_t d;
	if (end <= start)
		d = 0;
	else if (__builtin_sub_overflow(end, start, &d))
		d = INT64_MAX;
	put_us(f, d);
}

/* A time relative to the base (>= 0 for every row in the window: the base is their minimum). */
static void put_ts(struct ex *x, int64_t ns)
{
	int64_t rel;
	if (__builtin_sub_overflow(ns, x->base, &rel))
		rel = ns < x->base ? INT64_MIN : INT64_MAX;
	put_us(x->out, rel);
}

static void begin_event(struct ex *x)
{
	tj_event(&x->w);
	x->st->events++;
}

static void meta(struct ex *x, const char *what, int64_t pid, int64_t tid, bool has_tid,
		 const char *name)
{
	tj_meta(&x->w, what, pid, tid, has_tid, name);
	x->st->events++;
}

static void sort_meta(struct ex *x, int64_t pid, int64_t index)
{
	tj_sort_index(&x->w, pid, index);
	x->st->events++;
}

/* ---- queries ---- */

static bool has_col(struct ex *x, const char *table, const char *col)
{
	int idx;
	sqlite3_stmt *st = NULL;
	const char *want[] = {col};
	if (trace_sql_select(x->sql, x->path, table, want, 1, &idx, NULL, &st, NULL) || !st)
		return false;
	sqlite3_finalize(st);
	return idx >= 0;
}

static const char *colx(struct ex *x, const char *table, const char *col, char *buf, size_t n,
			const char *dflt)
{
	if (has_col(x, table, col))
		snprintf(buf, n, "t.\"%s\"", col);
	else
		snprintf(buf, n, "%s", dflt);
	return buf;
}

static int prepare(struct ex *x, const char *sql, const char *table, sqlite3_stmt **st,
		   struct err *e)
{
	if (sqlite3_prepare_v2(x->sql, sql, -1, st, NULL) != SQLITE_OK)
		return trace_sql_error(x->sql, x->path, table, e);
	sqlite3_bind_int64(*st, 1, x->from);
	sqlite3_bind_int64(*st, 2, x->to);
	return 0;
}

static int track_of(struct ex *x, int64_t gpid, uint32_t dev)
{
	if (x->last_track < x->n_tracks && x->tracks[x->last_track].gpid == gpid &&
	    x->tracks[x->last_track].dev == dev)
		return (int)x->last_track;
	for (size_t i = 0; i < x->n_tracks; i++)
		if (x->tracks[i].gpid == gpid && x->tracks[i].dev == dev) {
			x->last_track = i;
			return (int)i;
		}
	if (x->n_tracks == MAX_TRACKS)
		return -1;
	x->tracks[x->n_tracks] = (struct track){gpid, dev};
	return (int)x->n_tracks++;
}

static const char *const GPU_TABLES[] = {
	"CUPTI_ACTIVITY_KIND_KERNEL",
	"CUPTI_ACTIVITY_KIND_MEMCPY",
	"CUPTI_ACTIVITY_KIND_MEMSET",
};

/* "SELECT DISTINCT <cols> FROM (<one SELECT per table that exists> UNION ...)" into sql;
 * false when no table qualifies. cols_of(table) gives the inner select list. */
static bool union_sql(struct ex *x, char *sql, size_t n, const char *outer,
		      const char *const *tables, size_t n_tables,
		      void (*cols_of)(struct ex *, const char *, char *, size_t))
{
	size_t p = (size_t)snprintf(sql, n, "SELECT DISTINCT %s FROM (", outer);
	bool any = false;
	for (size_t t = 0; t < n_tables; t++) {
		const char *table = tables[t];
		if (!table || !trace_sql_has_table(x->sql, table) || !has_col(x, table, "start"))
			continue;
		char cols[512];
		cols_of(x, table, cols, sizeof cols);
		const char *end = has_col(x, table, "end") ? "coalesce(t.\"end\", t.start)" : "t.start";
		p += (size_t)snprintf(sql + p, n - p,
				      "%sSELECT %s FROM \"%s\" t WHERE %s >= ?1 AND t.start <= ?2",
				      any ? " UNION ALL " : "", cols, table, end);
		any = true;
	}
	snprintf(sql + p, n - p, ")");
	return any && p < n - 1;
}

static void gpu_cols(struct ex *x, const char *table, char *out, size_t n)
{
	char g[64], d[64], s[64];
	snprintf(out, n, "%s AS g, %s AS d, %s AS s", colx(x, table, "globalPid", g, sizeof g, "0"),
		 colx(x, table, "deviceId", d, sizeof d, "0"),
		 colx(x, table, "streamId", s, sizeof s, "0"));
}

static void cpu_cols(struct ex *x, const char *table, char *out, size_t n)
{
	char g[64];
	snprintf(out, n, "(%s >> 24) & 16777215 AS p", colx(x, table, "globalTid", g, sizeof g, "0"));
}

/* Name the GPU processes and stream threads that have events in the window. */
static int gpu_tracks(struct ex *x, struct err *e)
{
	char sql[4096];
	if (!union_sql(x, sql, sizeof sql, "g, d, s", GPU_TABLES,
		       sizeof GPU_TABLES / sizeof GPU_TABLES[0], gpu_cols))
		return 0;
	sqlite3_stmt *st;
	int rc = prepare(x, sql, "GPU tables", &st, e);
	if (rc)
		return rc;
	/* rows come as (process, device, stream); first learn whether names need the pid */
	int r;
	bool any = false;
	int64_t first = 0;
	x->one_process = true;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t gpid = ci(st, 0);
		if (any && gpid != first)
			x->one_process = false;
		first = gpid;
		any = true;
	}
	if (r == SQLITE_DONE) {
		sqlite3_reset(st);
		r = sqlite3_step(st);
	}
	for (; r == SQLITE_ROW; r = sqlite3_step(st)) {
		int64_t gpid = ci(st, 0), stream = ci(st, 2);
		uint32_t dev = (uint32_t)ci(st, 1);
		size_t before = x->n_tracks;
		int ti = track_of(x, gpid, dev);
		if (ti < 0) {
			sqlite3_finalize(st);
			err_set(e, x->path, 0, 0, "more than %d GPU tracks", MAX_TRACKS);
			return -E2BIG;
		}
		int64_t pid = GPU_PID_BASE + ti;
		if (x->n_tracks != before) {
			char name[96];
			if (x->one_process)
				snprintf(name, sizeof name, "GPU %u", dev);
			else
				snprintf(name, sizeof name, "GPU %u (pid %" PRId64 ")", dev,
					 trace_global_to_pid(gpid));
			meta(x, "process_name", pid, 0, false, name);
			sort_meta(x, pid, ti);
		}
		char tname[64];
		snprintf(tname, sizeof tname, "stream %" PRId64, stream);
		meta(x, "thread_name", pid, stream, true, tname);
	}
	rc = r == SQLITE_DONE ? 0 : trace_sql_error(x->sql, x->path, NULL, e);
	sqlite3_finalize(st);
	return rc;
}

static int cpu_processes(struct ex *x, struct err *e)
{
	const char *tables[] = {"NVTX_EVENTS", x->o->no_api ? NULL : "CUPTI_ACTIVITY_KIND_RUNTIME"};
	char sql[4096];
	if (!union_sql(x, sql, sizeof sql, "p", tables, 2, cpu_cols))
		return 0;
	bool have_proc = trace_sql_has_table(x->sql, "PROCESSES") &&
			 has_col(x, "PROCESSES", "pid") && has_col(x, "PROCESSES", "name");
	sqlite3_stmt *st, *pn = NULL;
	int rc = prepare(x, sql, "CPU tables", &st, e);
	if (rc)
		return rc;
	if (have_proc && sqlite3_prepare_v2(x->sql, "SELECT name FROM PROCESSES WHERE pid = ?1", -1,
					    &pn, NULL) != SQLITE_OK)
		pn = NULL;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = ci(st, 0);
		const char *pname = NULL;
		if (pn) {
			sqlite3_bind_int64(pn, 1, pid);
			if (sqlite3_step(pn) == SQLITE_ROW)
				pname = (const char *)sqlite3_column_text(pn, 0);
		}
		char name[300];
		/* the name alone: Perfetto shows the pid beside it, and an import reads it back */
		if (pname)
			snprintf(name, sizeof name, "%s", pname);
		else
			snprintf(name, sizeof name, "process %" PRId64, pid);
		meta(x, "process_name", pid, 0, false, name);
		if (pn)
			sqlite3_reset(pn);
	}
	rc = r == SQLITE_DONE ? 0 : trace_sql_error(x->sql, x->path, NULL, e);
	sqlite3_finalize(pn);
	sqlite3_finalize(st);
	return rc;
}

static int kernels(struct ex *x, struct err *e)
{
	const char *table = "CUPTI_ACTIVITY_KIND_KERNEL";
	if (!trace_sql_has_table(x->sql, table) || !has_col(x, table, "start") ||
	    !has_col(x, table, "end"))
		return 0;
	bool strings = trace_sql_has_table(x->sql, "StringIds");
	bool has_short = strings && has_col(x, table, "shortName");
	bool has_dem = strings && has_col(x, table, "demangledName");
	char c[12][64];
	static const char *const cols[] = {"globalPid", "deviceId", "streamId", "correlationId",
					   "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
					   "registersPerThread", "dynamicSharedMemory"};
	for (int i = 0; i < 12; i++)
		colx(x, table, cols[i], c[i], sizeof c[i], "0");
	char sql[2048];
	snprintf(sql, sizeof sql,
		 "SELECT t.start, t.\"end\", %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s"
		 " FROM \"%s\" t%s%s WHERE t.\"end\" >= ?1 AND t.start <= ?2",
		 c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11],
		 has_short ? "s.value" : has_dem ? "d.value" : "NULL",
		 has_dem ? "d.value" : "NULL", table,
		 has_short ? " LEFT JOIN StringIds s ON s.id = t.shortName" : "",
		 has_dem ? " LEFT JOIN StringIds d ON d.id = t.demangledName" : "");
	sqlite3_stmt *st;
	int rc = prepare(x, sql, table, &st, e);
	if (rc)
		return rc;
	int r;
	FILE *f = x->out;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = ci(st, 0), end = ci(st, 1);
		int ti = track_of(x, ci(st, 2), (uint32_t)ci(st, 3));
		if (ti < 0)
			continue;
		const char *shortn = (const char *)sqlite3_column_text(st, 14);
		const char *full = (const char *)sqlite3_column_text(st, 15);
		begin_event(x);
		fputs("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":", f);
		put_str(f, shortn ? shortn : full ? full : "kernel");
		fprintf(f, ",\"pid\":%d,\"tid\":%" PRId64 ",\"ts\":", GPU_PID_BASE + ti,
			ci(st, 4));
		put_ts(x, start);
		fputs(",\"dur\":", f);
		put_dur(f, start, end);
		fprintf(f,
			",\"args\":{\"device\":%" PRId64 ",\"stream\":%" PRId64 ",\"process\":%" PRId64
			",\"correlation\":%" PRId64 ",\"grid\":[%" PRId64 ",%" PRId64
			",%" PRId64 "],\"block\":[%" PRId64 ",%" PRId64 ",%" PRId64
			"],\"registers per thread\":%" PRId64 ",\"shared memory\":%" PRId64,
			ci(st, 3), ci(st, 4), trace_global_to_pid(ci(st, 2)), ci(st, 5), ci(st, 6),
			ci(st, 7), ci(st, 8),
			ci(st, 9), ci(st, 10),
			ci(st, 11), ci(st, 12),
			ci(st, 13));
		if (full) {
			fputs(",\"name\":", f);
			put_str(f, full);
		}
		fputs("}}", f);
		x->st->kernels++;
	}
	rc = r == SQLITE_DONE ? 0 : trace_sql_error(x->sql, x->path, table, e);
	sqlite3_finalize(st);
	return rc;
}

static const char *copy_name(int64_t kind)
{
	switch (kind) {
	case TRACE_COPY_HTOD: return "Memcpy HtoD";
	case TRACE_COPY_DTOH: return "Memcpy DtoH";
	case TRACE_COPY_DTOD: return "Memcpy DtoD";
	case TRACE_COPY_HTOH: return "Memcpy HtoH";
	case TRACE_COPY_PTOP: return "Memcpy PtoP";
	default: return "Memcpy";
	}
}

static int copies(struct ex *x, const char *table, bool is_memcpy, struct err *e)
{
	if (!trace_sql_has_table(x->sql, table) || !has_col(x, table, "start") ||
	    !has_col(x, table, "end"))
		return 0;
	char c[6][64];
	static const char *const cols[] = {"globalPid", "deviceId", "streamId", "bytes", "copyKind",
					   "correlationId"};
	for (int i = 0; i < 6; i++)
		colx(x, table, cols[i], c[i], sizeof c[i], "0");
	if (!is_memcpy)
		snprintf(c[4], sizeof c[4], "0");
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT t.start, t.\"end\", %s, %s, %s, %s, %s, %s FROM \"%s\" t"
		 " WHERE t.\"end\" >= ?1 AND t.start <= ?2",
		 c[0], c[1], c[2], c[3], c[4], c[5], table);
	sqlite3_stmt *st;
	int rc = prepare(x, sql, table, &st, e);
	if (rc)
		return rc;
	int r;
	FILE *f = x->out;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = ci(st, 0), end = ci(st, 1);
		int ti = track_of(x, ci(st, 2), (uint32_t)ci(st, 3));
		if (ti < 0)
			continue;
		begin_event(x);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\"", is_memcpy ? "memcpy" : "memset",
			is_memcpy ? copy_name(ci(st, 6)) : "Memset");
		fprintf(f, ",\"pid\":%d,\"tid\":%" PRId64 ",\"ts\":", GPU_PID_BASE + ti,
			ci(st, 4));
		put_ts(x, start);
		fputs(",\"dur\":", f);
		put_dur(f, start, end);
		fprintf(f,
			",\"args\":{\"device\":%" PRId64 ",\"stream\":%" PRId64 ",\"process\":%" PRId64
			",\"correlation\":%" PRId64 ",\"bytes\":%" PRId64 "}}",
			ci(st, 3), ci(st, 4), trace_global_to_pid(ci(st, 2)), ci(st, 7), ci(st, 5));
		if (is_memcpy)
			x->st->memcpys++;
		else
			x->st->memsets++;
	}
	rc = r == SQLITE_DONE ? 0 : trace_sql_error(x->sql, x->path, table, e);
	sqlite3_finalize(st);
	return rc;
}

static int nvtx(struct ex *x, struct err *e)
{
	const char *table = "NVTX_EVENTS";
	if (!trace_sql_has_table(x->sql, table) || !has_col(x, table, "start"))
		return 0;
	char c[6][64];
	static const char *const cols[] = {"end", "eventType", "globalTid", "text", "domainId",
					   "category"};
	static const char *const dflt[] = {"NULL", "59", "0", "NULL", "0", "0"};
	for (int i = 0; i < 6; i++)
		colx(x, table, cols[i], c[i], sizeof c[i], dflt[i]);
	bool text_id = trace_sql_has_table(x->sql, "StringIds") && has_col(x, table, "textId");
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT t.start, %s, %s, %s, coalesce(%s, %s), %s, %s FROM \"%s\" t%s"
		 " WHERE coalesce(%s, t.start) >= ?1 AND t.start <= ?2",
		 c[0], c[1], c[2], c[3], text_id ? "s.value" : "NULL", c[4], c[5], table,
		 text_id ? " LEFT JOIN StringIds s ON s.id = t.textId" : "", c[0]);
	sqlite3_stmt *st;
	int rc = prepare(x, sql, table, &st, e);
	if (rc)
		return rc;
	int r;
	FILE *f = x->out;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = ci(st, 0);
		bool has_end = sqlite3_column_type(st, 1) != SQLITE_NULL;
		int64_t end = ci(st, 1);
		int64_t type = ci(st, 2);
		int64_t gtid = ci(st, 3);
		const char *text = (const char *)sqlite3_column_text(st, 4);
		int64_t domain = ci(st, 5);
		int64_t pid = trace_global_to_pid(gtid), tid = gtid & 0xffffff;
		if (type != TRACE_NVTX_MARK && type != TRACE_NVTX_PUSH_POP &&
		    type != TRACE_NVTX_START_END)
			continue;
		bool gpu = domain == TRACE_NVTX_DOMAIN_GPU;
		int64_t proc = pid, dev = ci(st, 6);
		if (gpu) {
			/* GPU projection: on the stream's track of that device, as Kineto writes it */
			int ti = track_of(x, trace_global_pid(pid), (uint32_t)dev);
			if (ti < 0)
				continue;
			pid = GPU_PID_BASE + ti;
		}
		begin_event(x);
		if (type == TRACE_NVTX_MARK || !has_end) {
			fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx\",\"name\":", f);
			put_str(f, text);
		} else {
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
				gpu ? "gpu_user_annotation" : "nvtx");
			put_str(f, text);
			fputs(",\"dur\":", f);
			put_dur(f, start, end);
		}
		fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", pid, tid);
		put_ts(x, start);
		if (gpu)
			fprintf(f, ",\"args\":{\"device\":%" PRId64 ",\"stream\":%" PRId64
				   ",\"process\":%" PRId64 "}", dev, tid, proc);
		fputs("}", f);
		x->st->nvtx++;
	}
	rc = r == SQLITE_DONE ? 0 : trace_sql_error(x->sql, x->path, table, e);
	sqlite3_finalize(st);
	return rc;
}

static int api(struct ex *x, struct err *e)
{
	const char *table = "CUPTI_ACTIVITY_KIND_RUNTIME";
	if (x->o->no_api || !trace_sql_has_table(x->sql, table) || !has_col(x, table, "start") ||
	    !has_col(x, table, "end"))
		return 0;
	char c[4][64];
	static const char *const cols[] = {"globalTid", "correlationId", "eventClass", "nameId"};
	for (int i = 0; i < 4; i++)
		colx(x, table, cols[i], c[i], sizeof c[i], "0");
	bool names = trace_sql_has_table(x->sql, "StringIds") && has_col(x, table, "nameId");
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT t.start, t.\"end\", %s, %s, %s, %s FROM \"%s\" t%s"
		 " WHERE t.\"end\" >= ?1 AND t.start <= ?2",
		 c[0], c[1], c[2], names ? "s.value" : "NULL", table,
		 names ? " LEFT JOIN StringIds s ON s.id = t.nameId" : "");
	sqlite3_stmt *st;
	int rc = prepare(x, sql, table, &st, e);
	if (rc)
		return rc;
	int r;
	FILE *f = x->out;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cls = ci(st, 4);
		if (cls != TRACE_API_RUNTIME && cls != TRACE_API_DRIVER)
			continue;
		int64_t start = ci(st, 0), end = ci(st, 1);
		int64_t gtid = ci(st, 2);
		const char *name = (const char *)sqlite3_column_text(st, 5);
		begin_event(x);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
			cls == TRACE_API_DRIVER ? "cuda_driver" : "cuda_runtime");
		put_str(f, name ? name : "(api)");
		fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", trace_global_to_pid(gtid),
			gtid & 0xffffff);
		put_ts(x, start);
		fputs(",\"dur\":", f);
		put_dur(f, start, end);
		fprintf(f, ",\"args\":{\"correlation\":%" PRId64 "}}", ci(st, 3));
		x->st->api_calls++;
	}
	rc = r == SQLITE_DONE ? 0 : trace_sql_error(x->sql, x->path, table, e);
	sqlite3_finalize(st);
	return rc;
}

/* Times are written relative to a base, as Kineto does: viewers read "ts" as a double, which
 * holds epoch-sized microseconds only to 0.25 us. The base is the earliest start in the window,
 * rounded down to a second; 0 when that is negative (times are small then). */
static int64_t time_base(struct ex *x)
{
	static const char *const tables[] = {
		"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
		"CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
	};
	int64_t lo = INT64_MAX;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		if (!trace_sql_has_table(x->sql, tables[i]) || !has_col(x, tables[i], "start"))
			continue;
		char sql[256];
		snprintf(sql, sizeof sql, "SELECT min(start) FROM \"%s\" t WHERE %s >= ?1 AND"
			 " t.start <= ?2", tables[i],
			 has_col(x, tables[i], "end") ? "coalesce(t.\"end\", t.start)" : "t.start");
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(x->sql, sql, -1, &st, NULL) != SQLITE_OK)
			continue;
		sqlite3_bind_int64(st, 1, x->from);
		sqlite3_bind_int64(st, 2, x->to);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
		    sqlite3_column_int64(st, 0) < lo)
			lo = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (lo == INT64_MAX || lo < 0)
		return 0;
	return lo - lo % 1000000000;
}

int trace_export_perfetto(const char *db_path, FILE *out, const char *out_name,
			  const struct trace_export_opts *o, struct trace_export_stats *st,
			  struct err *e)
{
	struct trace_export_opts dflt = {0};
	struct trace_export_stats local;
	memset(&local, 0, sizeof local);
	struct ex *x = calloc(1, sizeof *x);
	if (!x) {
		err_set(e, db_path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	x->path = db_path;
	x->out = out;
	x->o = o ? o : &dflt;
	x->st = &local;
	x->from = x->o->has_from ? x->o->from_ns : INT64_MIN;
	x->to = x->o->has_to ? x->o->to_ns : INT64_MAX;
	int rc = 0;
	if (x->from > x->to) {
		err_set(e, NULL, 0, 0, "empty time window: --from-ns is after --to-ns");
		rc = -EINVAL;
		goto out;
	}
	rc = trace_sql_open(db_path, &x->sql, e);
	if (rc)
		goto out;
	x->base = time_base(x);
	tj_begin_base(&x->w, out, x->base);
	rc = gpu_tracks(x, e);
	if (!rc)
		rc = cpu_processes(x, e);
	if (!rc)
		rc = kernels(x, e);
	if (!rc)
		rc = copies(x, "CUPTI_ACTIVITY_KIND_MEMCPY", true, e);
	if (!rc)
		rc = copies(x, "CUPTI_ACTIVITY_KIND_MEMSET", false, e);
	if (!rc)
		rc = nvtx(x, e);
	if (!rc)
		rc = api(x, e);
	if (rc)
		goto out;
	if (tj_end(&x->w) < 0) {
		err_set(e, out_name, 0, 0, "write failed: %s", strerror(errno));
		rc = -EIO;
	}
out:
	sqlite3_close(x->sql);
	free(x);
	if (st)
		*st = local;
	return rc;
}
