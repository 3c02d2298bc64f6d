/* nsys SQLite exports and k3sim databases -> trace database; and merge.
 *
 * nsys' schema drifts between versions (columns are added, renamed, reordered; tables appear only
 * when their data exists), so every table is read through its PRAGMA table_info: the SELECT names
 * only the columns present, and a column that is missing reads as its default. */
#include "trace/import/import.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "trace/db/schema.h"
#include "trace/db/sqlread.h"
#include "util/arena.h"

enum {
	MAX_STRINGS = 32 * 1024 * 1024,
	MAX_PIDS = 65536,
	MAX_GPUS = 4096,
	MAX_HOSTS = 4096,
	MAX_COLS = 40,
};
#define GPU_MAP_STRING_BYTES ((size_t)16 * 1024 * 1024)
#define MAX_STRING_BYTES ((size_t)1024 * 1024 * 1024)

/* ---- format detection ---- */

int trace_format_parse(const char *s, enum trace_format *out)
{
	static const struct {
		const char *name;
		enum trace_format f;
	} names[] = {
		{"auto", TRACE_FORMAT_UNKNOWN},       {"nsys", TRACE_FORMAT_SQLITE},
		{"sqlite", TRACE_FORMAT_SQLITE},      {"k3sim", TRACE_FORMAT_SQLITE},
		{"kineto", TRACE_FORMAT_KINETO_JSON}, {"json", TRACE_FORMAT_KINETO_JSON},
		{"chrome", TRACE_FORMAT_KINETO_JSON}, {"perfetto", TRACE_FORMAT_KINETO_JSON},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].f;
			return 0;
		}
	return -EINVAL;
}

const char *trace_format_name(enum trace_format f)
{
	switch (f) {
	case TRACE_FORMAT_SQLITE: return "sqlite";
	case TRACE_FORMAT_KINETO_JSON: return "kineto";
	default: return "unknown";
	}
}

int trace_detect_input(struct trace_input *in, enum trace_format *out, struct err *e)
{
	const unsigned char *head;
	size_t n;
	int rc = trace_input_peek(in, &head, &n, e);
	if (rc)
		return rc;
	*out = TRACE_FORMAT_UNKNOWN;
	if (n >= 16 && memcmp(head, "SQLite format 3", 16) == 0) {
		*out = TRACE_FORMAT_SQLITE;
		return 0;
	}
	size_t i = 0;
	if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf)
		i = 3; /* UTF-8 BOM */
	while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
		i++;
	if (i < n && (head[i] == '{' || head[i] == '[')) {
		*out = TRACE_FORMAT_KINETO_JSON;
		return 0;
	}
	const char *gz = in->gzip ? " (after gunzip)" : "";
	if (n == 0)
		err_set(e, in->name, 0, 0, "%s%s",
			in->kind == TRACE_INPUT_FILE && !in->gzip ? "empty file" : "empty input", gz);
	else if (i == n)
		err_set(e, in->name, 0, 0, "only whitespace in the first %zu bytes%s: not a trace", n,
			gz);
	else if (n >= 5 && memcmp(head, "QDREP", 5) == 0)
		err_set(e, in->name, 0, 0, "an nsys report: export it first"
			" (nsys export --type sqlite -o FILE.sqlite REPORT)");
	else if (n >= 4 && memcmp(head, "NSYS", 4) == 0)
		err_set(e, in->name, 0, 0, "an nsys report (.nsys-rep): export it first"
			" (nsys export --type sqlite -o FILE.sqlite REPORT)");
	else
		err_set(e, in->name, 0, 0, "unknown format%s: neither an SQLite database (nsys export"
			" --type sqlite) nor a Kineto/Chrome JSON trace", gz);
	return -EINVAL;
}

int trace_detect_format(const char *path, enum trace_format *out, struct err *e)
{
	struct trace_input in;
	int rc = trace_input_open(&in, path, e);
	if (rc)
		return rc;
	rc = trace_detect_input(&in, out, e);
	trace_input_close(&in);
	return rc;
}

/* ---- process-id remapping (merge) ---- */

struct pid_pair {
	int64_t from, to;
};

struct trace_pid_map {
	int64_t *used;          /* pids taken by earlier files (and this one) */
	size_t n_used, cap_used;
	struct pid_pair *cur;   /* this file's renames */
	size_t n_cur, cap_cur;
	struct pid_pair last;
	bool have_last;
};

static bool pid_used(const struct trace_pid_map *m, int64_t pid)
{
	for (size_t i = 0; i < m->n_used; i++)
		if (m->used[i] == pid)
			return true;
	return false;
}

static int grow(void **p, size_t *cap, size_t elem)
{
	size_t n = *cap ? *cap * 2 : 16;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static void pid_map_begin_file(struct trace_pid_map *m)
{
	m->n_cur = 0;
	m->have_last = false;
}

static int pid_map_pid(struct trace_pid_map *m, int64_t pid, int64_t *out)
{
	if (m->have_last && m->last.from == pid) {
		*out = m->last.to;
		return 0;
	}
	for (size_t i = 0; i < m->n_cur; i++)
		if (m->cur[i].from == pid) {
			m->last = m->cur[i];
			m->have_last = true;
			*out = m->cur[i].to;
			return 0;
		}
	if (m->n_used >= MAX_PIDS)
		return -ENOSPC;
	int64_t to = pid;
	if (pid_used(m, pid)) {
		to = pid;
		do
			to = (to + 1) & 0xffffff;
		while (pid_used(m, to) || to == 0);
	}
	if (m->n_used == m->cap_used && grow((void **)&m->used, &m->cap_used, sizeof *m->used))
		return -ENOMEM;
	if (m->n_cur == m->cap_cur && grow((void **)&m->cur, &m->cap_cur, sizeof *m->cur))
		return -ENOMEM;
	m->used[m->n_used++] = to;
	m->cur[m->n_cur++] = (struct pid_pair){pid, to};
	m->last = (struct pid_pair){pid, to};
	m->have_last = true;
	*out = to;
	return 0;
}

/* Rewrite the pid bits (24..47) of a globalPid / globalTid. */
static int pid_map_global(struct trace_pid_map *m, int64_t gid, int64_t *out)
{
	if (!m) {
		*out = gid;
		return 0;
	}
	int64_t pid = (gid >> 24) & 0xffffff, to;
	int rc = pid_map_pid(m, pid, &to);
	if (rc)
		return rc;
	*out = (gid & ~((int64_t)0xffffff << 24)) | (to << 24);
	return 0;
}

static void pid_map_release(struct trace_pid_map *m)
{
	free(m->used);
	free(m->cur);
}

/* ---- GPU identity (merge) ----
 *
 * A GPU is known by (host, rank or process, ordinal), and by its UUID where the trace has one.
 * Every process of a host may record every GPU it can see, under its own CUDA ordinals (which
 * CUDA_VISIBLE_DEVICES may shuffle). Merge keeps one TARGET_INFO_GPU row per physical GPU and
 * rewrites each file's deviceIds to that row's id. Two rows are one GPU when their UUIDs match
 * ("GPU-" prefix or not); without UUIDs on both sides, when their PCI bus ids match on the same
 * known host; with neither, only when the host or the rank is known and host, rank, process and
 * ordinal all match (two profiles of one process). So two ranks' "GPU 0" from Kineto traces, which
 * carry no UUID, stay two GPUs: the rank (distributedInfo) or the process tells them apart. */

struct gpu_ident {
	int32_t id;             /* deviceId in the merged file */
	int32_t first_id;       /* the ordinal of the file it was first seen in */
	int64_t rank, pid;      /* of that file; -1 unknown */
	const char *uuid, *bus, *host, *name;   /* "" when unknown; in the map's arena */
};

struct gpu_pair {
	int64_t from;           /* this file's deviceId */
	int32_t to;
	const char *uuid;       /* the GPU's, for K3SIM_DEVICE_MAP; may be "" */
};

struct trace_gpu_map {
	struct arena strings;
	struct gpu_ident *gpus;  /* every GPU of the merged files */
	size_t n, cap;
	struct gpu_pair *cur;    /* this file's GPUs */
	size_t n_cur, cap_cur;
	const char **hosts;      /* distinct K3SIM_CAPTURE hosts seen */
	size_t n_hosts, cap_hosts;
	const char *host;        /* this file's host; "" unknown */
	int64_t rank, pid;       /* this file's rank and process; -1 unknown or several */
};

static void gpu_map_init(struct trace_gpu_map *m)
{
	memset(m, 0, sizeof *m);
	arena_init(&m->strings, GPU_MAP_STRING_BYTES);
	m->host = "";
	m->rank = m->pid = -1;
}

static void gpu_map_release(struct trace_gpu_map *m)
{
	free(m->gpus);
	free(m->cur);
	free(m->hosts);
	arena_release(&m->strings);
}

static const char *gpu_map_str(struct trace_gpu_map *m, const char *s)
{
	if (!s || !*s)
		return "";
	return arena_strndup(&m->strings, s, strlen(s));
}

/* Start a file taken on host (NULL or "": unknown) by rank and process pid (-1: unknown). */
static int gpu_map_begin_file(struct trace_gpu_map *m, const char *host, int64_t rank, int64_t pid)
{
	m->n_cur = 0;
	m->host = "";
	m->rank = rank;
	m->pid = pid;
	if (!host || !*host)
		return 0;
	for (size_t i = 0; i < m->n_hosts; i++)
		if (strcmp(m->hosts[i], host) == 0) {
			m->host = m->hosts[i];
			return 0;
		}
	if (m->n_hosts >= MAX_HOSTS)
		return -ENOSPC;
	if (m->n_hosts == m->cap_hosts && grow((void **)&m->hosts, &m->cap_hosts, sizeof *m->hosts))
		return -ENOMEM;
	const char *copy = gpu_map_str(m, host);
	if (!copy)
		return -ENOMEM;
	m->hosts[m->n_hosts++] = copy;
	m->host = copy;
	return 0;
}

/* CUPTI writes "GPU-xxxxxxxx-...", nsys "xxxxxxxx-...": the same UUID. */
static const char *uuid_body(const char *u)
{
	return strncasecmp(u, "GPU-", 4) == 0 ? u + 4 : u;
}

static bool gpu_same(const struct trace_gpu_map *m, const struct gpu_ident *g,
		     const struct trace_gpu *r)
{
	const char *uuid = r->uuid ? r->uuid : "", *bus = r->bus_location ? r->bus_location : "";
	if (*g->uuid && *uuid)
		return strcasecmp(uuid_body(g->uuid), uuid_body(uuid)) == 0;
	if (*g->bus && *bus)
		return *m->host && strcmp(g->host, m->host) == 0 && strcasecmp(g->bus, bus) == 0;
	bool known = *m->host || m->rank >= 0;
	return known && strcmp(g->host, m->host) == 0 && g->rank == m->rank && g->pid == m->pid &&
	       g->first_id == r->id && strcmp(g->name, r->name ? r->name : "") == 0;
}

static bool gpu_id_taken(const struct trace_gpu_map *m, int32_t id)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->gpus[i].id == id)
			return true;
	return false;
}

/* Whether a row of this file already is merged GPU id: the rows of one file are distinct GPUs
 * (a merged file no longer knows the hosts of UUID-less ones). */
static bool gpu_in_file(const struct trace_gpu_map *m, int32_t id)
{
	for (size_t i = 0; i < m->n_cur; i++)
		if (m->cur[i].to == id)
			return true;
	return false;
}

static bool gpu_map_has(const struct trace_gpu_map *m, int64_t dev)
{
	for (size_t i = 0; i < m->n_cur; i++)
		if (m->cur[i].from == dev)
			return true;
	return false;
}

/* The merged deviceId of this file's GPU row r in *to; *is_new when no earlier row was the same
 * GPU (the caller writes the row then). A GPU keeps its ordinal unless another GPU has it. */
static int gpu_map_add(struct trace_gpu_map *m, const struct trace_gpu *r, int32_t *to,
		       bool *is_new)
{
	*is_new = false;
	for (size_t i = 0; i < m->n_cur; i++)
		if (m->cur[i].from == r->id) {
			*to = m->cur[i].to;
			return 0;
		}
	const struct gpu_ident *g = NULL;
	for (size_t i = 0; i < m->n && !g; i++)
		if (!gpu_in_file(m, m->gpus[i].id) && gpu_same(m, &m->gpus[i], r))
			g = &m->gpus[i];
	if (m->n_cur == m->cap_cur && grow((void **)&m->cur, &m->cap_cur, sizeof *m->cur))
		return -ENOMEM;
	if (!g) {
		if (m->n >= MAX_GPUS)
			return -ENOSPC;
		if (m->n == m->cap && grow((void **)&m->gpus, &m->cap, sizeof *m->gpus))
			return -ENOMEM;
		int32_t id = r->id;
		if (id < 0 || gpu_id_taken(m, id))
			for (id = 0; gpu_id_taken(m, id); id++)
				;
		struct gpu_ident *ng = &m->gpus[m->n];
		*ng = (struct gpu_ident){
			.id = id,
			.first_id = r->id,
			.rank = m->rank,
			.pid = m->pid,
			.uuid = gpu_map_str(m, r->uuid),
			.bus = gpu_map_str(m, r->bus_location),
			.host = m->host,
			.name = gpu_map_str(m, r->name),
		};
		if (!ng->uuid || !ng->bus || !ng->name)
			return -ENOMEM;
		m->n++;
		g = ng;
		*is_new = true;
	}
	m->cur[m->n_cur++] = (struct gpu_pair){.from = r->id, .to = g->id, .uuid = g->uuid};
	*to = g->id;
	return 0;
}

/* A deviceId of this file in the merged file (unchanged without a map; every device the file's
 * rows use was added by import_gpus). */
static int64_t gpu_map_dev(const struct trace_gpu_map *m, int64_t dev)
{
	if (!m)
		return dev;
	for (size_t i = 0; i < m->n_cur; i++)
		if (m->cur[i].from == dev)
			return m->cur[i].to;
	return dev;
}

/* ---- reading ---- */

struct strtab {
	struct arena arena;
	const char **by_id;    /* dense ids: by_id[id] */
	size_t n_by_id;
	struct {
		int64_t id;
		const char *s;
	} *sorted;             /* sparse ids: sorted by id */
	size_t n_sorted;
};

struct src {
	sqlite3 *sql;
	const char *path;
	struct strtab strings;
	struct trace_db *db;
	struct trace_pid_map *pids;
	struct trace_gpu_map *gpus;
	bool has_device_map;     /* the file has K3SIM_DEVICE_MAP rows (a merged file) */
	const char *host;        /* merge: the file's host (NULL unknown; in host_buf) and rank (-1) */
	int64_t rank;
	char host_buf[256];
	int64_t time_offset_ns;  /* added to every time: an nsys export's session start (UTC) */
	struct trace_import_stats *st;
	char unknown[64];
};

static int sql_err(struct src *s, struct err *e, const char *table)
{
	return trace_sql_error(s->sql, s->path, table, e);
}

static int object_type(struct src *s, const char *name, char *type, size_t n, struct err *e)
{
	return trace_sql_object_type(s->sql, s->path, name, type, n, e);
}

static bool has_table(struct src *s, const char *name)
{
	return trace_sql_has_table(s->sql, name);
}

static int select_cols(struct src *s, const char *table, const char *const *want, int n, int *idx,
		       sqlite3_stmt **out, struct err *e)
{
	return trace_sql_select(s->sql, s->path, table, want, n, idx, NULL, out, e);
}

#define col_i64 trace_sql_i64
#define col_text trace_sql_text

static int load_strings(struct src *s, struct err *e)
{
	enum { COL_id, COL_value, N_COLS };
	static const char *const want[N_COLS] = {"id", "value"};
	int idx[N_COLS];
	sqlite3_stmt *st;
	struct strtab *t = &s->strings;
	int rc = select_cols(s, "StringIds", want, N_COLS, idx, &st, e);
	if (rc || !st)
		return rc;
	if (idx[COL_id] < 0 || idx[COL_value] < 0) {
		sqlite3_finalize(st);
		return 0;
	}
	size_t cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, idx[COL_id]);
		const char *v = (const char *)sqlite3_column_text(st, idx[COL_value]);
		int len = sqlite3_column_bytes(st, idx[COL_value]);
		if (!v)
			continue;
		if (t->n_sorted >= MAX_STRINGS) {
			err_set(e, s->path, 0, 0, "StringIds: more than %d strings", MAX_STRINGS);
			rc = -E2BIG;
			break;
		}
		if (t->n_sorted == cap &&
		    grow((void **)&t->sorted, &cap, sizeof *t->sorted)) {
			rc = -ENOMEM;
			err_set(e, s->path, 0, 0, "out of memory reading StringIds");
			break;
		}
		char *copy = arena_strndup(&t->arena, v, (size_t)len);
		if (!copy) {
			err_set(e, s->path, 0, 0, "StringIds: strings exceed %zu bytes",
				MAX_STRING_BYTES);
			rc = -E2BIG;
			break;
		}
		t->sorted[t->n_sorted].id = id;
		t->sorted[t->n_sorted].s = copy;
		t->n_sorted++;
	}
	if (!rc && r != SQLITE_DONE)
		rc = sql_err(s, e, "StringIds");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	/* dense ids get a direct table */
	int64_t max_id = -1;
	bool sorted = true;
	for (size_t i = 0; i < t->n_sorted; i++) {
		if (t->sorted[i].id < 0)
			return 0;
		if (i && t->sorted[i].id <= t->sorted[i - 1].id)
			sorted = false;
		if (t->sorted[i].id > max_id)
			max_id = t->sorted[i].id;
	}
	if (max_id >= 0 && (uint64_t)max_id <= 2 * (uint64_t)t->n_sorted + 1024) {
		t->by_id = calloc((size_t)max_id + 1, sizeof *t->by_id);
		if (!t->by_id) {
			err_set(e, s->path, 0, 0, "out of memory reading StringIds");
			return -ENOMEM;
		}
		t->n_by_id = (size_t)max_id + 1;
		for (size_t i = 0; i < t->n_sorted; i++)
			t->by_id[t->sorted[i].id] = t->sorted[i].s;
	} else if (!sorted) {
		err_set(e, s->path, 0, 0, "StringIds: ids are neither dense nor ordered");
		return -EINVAL;
	}
	return 0;
}

static const char *string_of(struct src *s, int64_t id)
{
	struct strtab *t = &s->strings;
	if (t->by_id) {
		if (id >= 0 && (uint64_t)id < t->n_by_id && t->by_id[id])
			return t->by_id[id];
	} else {
		size_t lo = 0, hi = t->n_sorted;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->sorted[mid].id < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < t->n_sorted && t->sorted[lo].id == id)
			return t->sorted[lo].s;
	}
	return NULL;
}

static int step_done(struct src *s, sqlite3_stmt *st, int r, const char *table, struct err *e)
{
	int rc = r == SQLITE_DONE ? 0 : sql_err(s, e, table);
	sqlite3_finalize(st);
	return rc;
}

static int map_gid(struct src *s, int64_t gid, int64_t *out, struct err *e)
{
	int rc = pid_map_global(s->pids, gid, out);
	if (rc)
		err_set(e, s->path, 0, 0, "more than %d processes to merge", MAX_PIDS);
	return rc;
}

/* Columns read from an nsys export are named by trace/db/schema.h (TRACE_KERNEL_COL_gridX, ...); every
 * GPU activity table begins with the same head (start, end, deviceId, contextId, streamId,
 * correlationId, globalPid), read alike for kernels, memcpys and memsets. */
#define HEAD_AT(T)                                                                            \
	_Static_assert(T##_COL_start == 0 && T##_COL_end == 1 && T##_COL_deviceId == 2 &&    \
			       T##_COL_contextId == 3 && T##_COL_streamId == 4 &&                \
			       T##_COL_correlationId == 5 && T##_COL_globalPid == 6,             \
		       #T ": the GPU activity head comes first")
HEAD_AT(TRACE_KERNEL);
HEAD_AT(TRACE_MEMCPY);
HEAD_AT(TRACE_MEMSET);

/* A record's INT columns from the row (INTZ/INTN too; absent: the list's value). `rec` is the
 * record, c[] the column indexes of select_cols. */
#define GET_INT(T, col, f, absent) rec.f = col_i64(st, c[T##_COL_##col], absent);
#define GET_HEAD(T, col, f, absent)
#define GET_INTZ GET_INT
#define GET_INTN GET_INT
#define GET_RAW GET_HEAD
#define GET_ID GET_HEAD
#define GET_IDZ GET_HEAD
#define GET_NONE(T, col, f, absent)
#define GET_KERNEL(col, f, how, absent) GET_##how(TRACE_KERNEL, col, f, absent)
#define GET_MEMCPY(col, f, how, absent) GET_##how(TRACE_MEMCPY, col, f, absent)
#define GET_MEMSET(col, f, how, absent) GET_##how(TRACE_MEMSET, col, f, absent)
#define GET_API(col, f, how, absent) GET_##how(TRACE_API, col, f, absent)

struct gpu_head {
	int64_t start_ns, end_ns, global_pid;
	uint32_t device_id, context_id, stream_id, correlation_id;
};

/* A row's start and end on the output's clock (time_offset_ns added, checked), and the span of
 * what was imported. */
static int row_times(struct src *s, const char *table, int64_t *start, int64_t *end, struct err *e)
{
	if (__builtin_add_overflow(*start, s->time_offset_ns, start) ||
	    __builtin_add_overflow(*end, s->time_offset_ns, end)) {
		err_set(e, s->path, 0, 0, "%s: a time plus the session start (%lld ns) leaves the int64"
			" nanosecond range", table, (long long)s->time_offset_ns);
		return -ERANGE;
	}
	if (*start < s->st->first_ns)
		s->st->first_ns = *start;
	if (*end > s->st->last_ns)
		s->st->last_ns = *end;
	return 0;
}

static int read_gpu_head(struct src *s, sqlite3_stmt *st, const int *c, struct gpu_head *h, struct err *e)
{
	h->start_ns = col_i64(st, c[TRACE_KERNEL_COL_start], 0);
	h->end_ns = col_i64(st, c[TRACE_KERNEL_COL_end], 0);
	int rc = row_times(s, "GPU activity", &h->start_ns, &h->end_ns, e);
	if (rc)
		return rc;
	h->device_id = (uint32_t)gpu_map_dev(s->gpus, col_i64(st, c[TRACE_KERNEL_COL_deviceId], 0));
	h->context_id = (uint32_t)col_i64(st, c[TRACE_KERNEL_COL_contextId], 0);
	h->stream_id = (uint32_t)col_i64(st, c[TRACE_KERNEL_COL_streamId], 0);
	h->correlation_id = (uint32_t)col_i64(st, c[TRACE_KERNEL_COL_correlationId], 0);
	return map_gid(s, col_i64(st, c[TRACE_KERNEL_COL_globalPid], 0), &h->global_pid, e);
}

#define SET_GPU_HEAD(rec, h)                              \
	do {                                              \
		(rec).start_ns = (h).start_ns;            \
		(rec).end_ns = (h).end_ns;                \
		(rec).device_id = (h).device_id;          \
		(rec).context_id = (h).context_id;        \
		(rec).stream_id = (h).stream_id;          \
		(rec).correlation_id = (h).correlation_id; \
		(rec).global_pid = (h).global_pid;        \
	} while (0)

/* The end of a row loop: an error from the loop (rc), else SQLite's last step (r). */
static int finish_rows(struct src *s, sqlite3_stmt *st, int rc, int r, const char *table, struct err *e)
{
	if (rc) {
		sqlite3_finalize(st);
		return rc;
	}
	return step_done(s, st, r, table, e);
}

static int import_kernels(struct src *s, struct err *e)
{
	/* the schema's columns, and "name" (older nsys exports name kernels there) */
	enum { COL_name = TRACE_KERNEL_NCOLS, N };
	const char *want[N];
	trace_schema_written_names(&trace_schema_tables[TRACE_SCHEMA_KERNEL], want);
	want[COL_name] = "name";
	int c[N];
	sqlite3_stmt *st;
	const char *table = "CUPTI_ACTIVITY_KIND_KERNEL";
	int rc = select_cols(s, table, want, N, c, &st, e);
	if (rc || !st)
		return rc;
	if (c[TRACE_KERNEL_COL_start] < 0 || c[TRACE_KERNEL_COL_end] < 0) {
		sqlite3_finalize(st);
		err_set(e, s->path, 0, 0, "%s has no start/end columns: not an nsys export", table);
		return -EINVAL;
	}
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_kernel rec;
		memset(&rec, 0, sizeof rec);
		struct gpu_head h;
		if ((rc = read_gpu_head(s, st, c, &h, e)))
			break;
		SET_GPU_HEAD(rec, h);
		TRACE_KERNEL_COLUMNS(GET_KERNEL)
		int64_t dn = col_i64(st, c[TRACE_KERNEL_COL_demangledName], -1);
		int64_t sn = col_i64(st, c[TRACE_KERNEL_COL_shortName], -1);
		int64_t mn = col_i64(st, c[TRACE_KERNEL_COL_mangledName], -1);
		int64_t on = col_i64(st, c[COL_name], -1);
		const char *name = dn >= 0 ? string_of(s, dn) : NULL;
		const char *shortn = sn >= 0 ? string_of(s, sn) : NULL;
		if (!name)
			name = on >= 0 ? string_of(s, on) : NULL;
		if (!name)
			name = shortn;
		if (!name) {
			snprintf(s->unknown, sizeof s->unknown, "(unknown kernel %lld)",
				 (long long)(dn >= 0 ? dn : on >= 0 ? on : sn));
			name = s->unknown;
		}
		rec.name = name;
		rec.short_name = shortn;
		rec.mangled_name = mn >= 0 ? string_of(s, mn) : NULL;
		s->st->events++;
		rc = trace_db_add_kernel(s->db, &rec, e);
		if (rc)
			break;
		s->st->kernels++;
	}
	return finish_rows(s, st, rc, r, table, e);
}

/* Memcpys (which: TRACE_SCHEMA_MEMCPY) or memsets (TRACE_SCHEMA_MEMSET): the GPU activity head,
 * then their own columns. */
static int import_mem(struct src *s, int which, struct err *e)
{
	enum { N = (int)TRACE_MEMCPY_NCOLS > (int)TRACE_MEMSET_NCOLS ? (int)TRACE_MEMCPY_NCOLS
								 : (int)TRACE_MEMSET_NCOLS };
	const struct trace_schema_table *t = &trace_schema_tables[which];
	const char *want[N];
	trace_schema_written_names(t, want);
	int c[N];
	sqlite3_stmt *st;
	int rc = select_cols(s, t->table, want, t->n_written, c, &st, e);
	if (rc || !st)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct gpu_head h;
		if ((rc = read_gpu_head(s, st, c, &h, e)))
			break;
		s->st->events++;
		if (which == TRACE_SCHEMA_MEMCPY) {
			struct trace_memcpy rec;
			memset(&rec, 0, sizeof rec);
			SET_GPU_HEAD(rec, h);
			TRACE_MEMCPY_COLUMNS(GET_MEMCPY)
			if (rec.src_device_id >= 0)
				rec.src_device_id = (int32_t)gpu_map_dev(s->gpus, rec.src_device_id);
			if (rec.dst_device_id >= 0)
				rec.dst_device_id = (int32_t)gpu_map_dev(s->gpus, rec.dst_device_id);
			if ((rc = trace_db_add_memcpy(s->db, &rec, e)))
				break;
			s->st->memcpys++;
		} else {
			struct trace_memset rec;
			memset(&rec, 0, sizeof rec);
			SET_GPU_HEAD(rec, h);
			TRACE_MEMSET_COLUMNS(GET_MEMSET)
			if ((rc = trace_db_add_memset(s->db, &rec, e)))
				break;
			s->st->memsets++;
		}
	}
	return finish_rows(s, st, rc, r, t->table, e);
}

/* CUPTI_ACTIVITY_KIND_RUNTIME (eventClass 0 runtime, 1 driver) or an old-style DRIVER table. */
static int import_api(struct src *s, const char *table, bool driver_table, struct err *e)
{
	enum { N = TRACE_API_NCOLS };
	const char *want[N];
	trace_schema_written_names(&trace_schema_tables[TRACE_SCHEMA_API], want);
	int c[N];
	sqlite3_stmt *st;
	int rc = select_cols(s, table, want, N, c, &st, e);
	if (rc || !st)
		return rc;
	int r;
	char unknown[64];
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		s->st->events++;
		int64_t cls = driver_table ? TRACE_API_DRIVER
					   : col_i64(st, c[TRACE_API_COL_eventClass], TRACE_API_RUNTIME);
		if (cls != TRACE_API_RUNTIME && cls != TRACE_API_DRIVER) {
			s->st->skipped++; /* cuBLAS, cuDNN, backtraces... */
			continue;
		}
		struct trace_api rec;
		memset(&rec, 0, sizeof rec);
		TRACE_API_COLUMNS(GET_API)
		rec.start_ns = col_i64(st, c[TRACE_API_COL_start], 0);
		rec.end_ns = col_i64(st, c[TRACE_API_COL_end], 0);
		rec.kind = (enum trace_api_kind)cls;
		rc = row_times(s, table, &rec.start_ns, &rec.end_ns, e);
		if (!rc)
			rc = map_gid(s, col_i64(st, c[TRACE_API_COL_globalTid], 0), &rec.global_tid, e);
		if (rc)
			break;
		int64_t nid = col_i64(st, c[TRACE_API_COL_nameId], -1);
		rec.name = string_of(s, nid);
		if (!rec.name) {
			snprintf(unknown, sizeof unknown, "(unknown api %lld)", (long long)nid);
			rec.name = unknown;
		}
		rc = trace_db_add_api(s->db, &rec, e);
		if (rc)
			break;
		s->st->api_calls++;
	}
	return finish_rows(s, st, rc, r, table, e);
}

static int import_nvtx(struct src *s, struct err *e)
{
	enum { COL_start, COL_end, COL_eventType, COL_rangeId, COL_category, COL_color, COL_text,
	       COL_globalTid, COL_endGlobalTid, COL_textId, COL_domainId, N_COLS };
	static const char *const want[N_COLS] = {"start", "end", "eventType", "rangeId", "category",
		"color", "text", "globalTid", "endGlobalTid", "textId", "domainId"};
	int c[N_COLS];
	sqlite3_stmt *st;
	const char *table = "NVTX_EVENTS";
	int rc = select_cols(s, table, want, N_COLS, c, &st, e);
	if (rc || !st)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		s->st->events++;
		int64_t type = col_i64(st, c[COL_eventType], TRACE_NVTX_PUSH_POP);
		if (type != TRACE_NVTX_MARK && type != TRACE_NVTX_PUSH_POP &&
		    type != TRACE_NVTX_START_END) {
			s->st->skipped++;
			continue;
		}
		struct trace_nvtx n;
		memset(&n, 0, sizeof n);
		n.type = (enum trace_nvtx_type)type;
		n.start_ns = col_i64(st, c[COL_start], 0);
		n.end_ns = col_i64(st, c[COL_end], n.start_ns);
		rc = row_times(s, table, &n.start_ns, &n.end_ns, e);
		if (rc)
			break;
		n.range_id = col_i64(st, c[COL_rangeId], 0);
		n.category = (int32_t)col_i64(st, c[COL_category], 0);
		if (c[COL_color] >= 0 && sqlite3_column_type(st, c[COL_color]) != SQLITE_NULL) {
			n.has_color = true;
			n.color_argb = (uint32_t)sqlite3_column_int64(st, c[COL_color]);
		}
		rc = map_gid(s, col_i64(st, c[COL_globalTid], 0), &n.global_tid, e);
		if (!rc && col_i64(st, c[COL_endGlobalTid], 0))
			rc = map_gid(s, col_i64(st, c[COL_endGlobalTid], 0), &n.end_global_tid, e);
		if (rc)
			break;
		n.domain_id = col_i64(st, c[COL_domainId], 0);
		if (n.domain_id == TRACE_NVTX_DOMAIN_GPU) /* the category is a deviceId */
			n.category = (int32_t)gpu_map_dev(s->gpus, n.category);
		n.text = col_text(st, c[COL_text]);
		if (!n.text) {
			int64_t tid = col_i64(st, c[COL_textId], -1);
			n.text = tid >= 0 ? string_of(s, tid) : NULL;
		}
		if (!n.text)
			n.text = "";
		rc = trace_db_add_nvtx(s->db, &n, e);
		if (rc)
			break;
		s->st->nvtx++;
	}
	return finish_rows(s, st, rc, r, table, e);
}

/* A GPU row of this file: written as is, or (merge) once per physical GPU under its merged id. */
static int add_gpu(struct src *s, struct trace_gpu *g, struct err *e)
{
	if (s->gpus) {
		int32_t to;
		bool is_new;
		int rc = gpu_map_add(s->gpus, g, &to, &is_new);
		if (rc == -ENOSPC)
			err_set(e, s->path, 0, 0, "more than %d GPUs to merge", MAX_GPUS);
		else if (rc)
			err_set(e, s->path, 0, 0, "out of memory merging GPUs");
		if (rc)
			return rc;
		if (!is_new)
			return 0; /* another process' row of the same GPU */
		g->id = to;
	}
	int rc = trace_db_add_gpu(s->db, g, e);
	if (!rc)
		s->st->gpus++;
	return rc;
}

static int import_gpu_rows(struct src *s, struct err *e)
{
	enum { COL_id, COL_name, COL_busLocation, COL_l2CacheSize, COL_totalMemory, COL_memoryBandwidth,
	       COL_clockRate, COL_smCount, COL_uuid, COL_chipName, COL_cuDevice, COL_computeMajor,
	       COL_computeMinor, COL_maxRegistersPerBlock, COL_maxShmemPerBlock,
	       COL_maxShmemPerMultiprocessor, COL_maxRegistersPerMultiprocessor, COL_threadsPerWarp,
	       COL_asyncEngines, COL_maxWarpsPerMultiprocessor, COL_maxBlocksPerMultiprocessor,
	       COL_maxThreadsPerBlock, N_COLS };
	static const char *const want[N_COLS] = {"id", "name", "busLocation", "l2CacheSize", "totalMemory",
		"memoryBandwidth", "clockRate", "smCount", "uuid", "chipName", "cuDevice", "computeMajor",
		"computeMinor", "maxRegistersPerBlock", "maxShmemPerBlock", "maxShmemPerMultiprocessor",
		"maxRegistersPerMultiprocessor", "threadsPerWarp", "asyncEngines", "maxWarpsPerMultiprocessor",
		"maxBlocksPerMultiprocessor", "maxThreadsPerBlock"};
	int c[N_COLS];
	sqlite3_stmt *st;
	const char *table = "TARGET_INFO_GPU";
	int rc = select_cols(s, table, want, N_COLS, c, &st, e);
	if (rc || !st)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_gpu g;
		memset(&g, 0, sizeof g);
		g.id = (int32_t)col_i64(st, c[COL_id], 0);
		g.name = col_text(st, c[COL_name]);
		g.bus_location = col_text(st, c[COL_busLocation]);
		g.l2_cache_bytes = col_i64(st, c[COL_l2CacheSize], 0);
		g.total_memory_bytes = col_i64(st, c[COL_totalMemory], 0);
		g.memory_bandwidth_bytes_per_s = col_i64(st, c[COL_memoryBandwidth], 0);
		g.clock_hz = col_i64(st, c[COL_clockRate], 0);
		g.sm_count = (int32_t)col_i64(st, c[COL_smCount], 0);
		g.uuid = col_text(st, c[COL_uuid]);
		g.chip_name = col_text(st, c[COL_chipName]);
		g.cu_device = (int32_t)col_i64(st, c[COL_cuDevice], 0);
		g.compute_major = (int32_t)col_i64(st, c[COL_computeMajor], 0);
		g.compute_minor = (int32_t)col_i64(st, c[COL_computeMinor], 0);
		g.max_registers_per_block = (int32_t)col_i64(st, c[COL_maxRegistersPerBlock], 0);
		g.max_shmem_per_block_bytes = (int32_t)col_i64(st, c[COL_maxShmemPerBlock], 0);
		g.max_shmem_per_sm_bytes = (int32_t)col_i64(st, c[COL_maxShmemPerMultiprocessor], 0);
		g.max_registers_per_sm = (int32_t)col_i64(st, c[COL_maxRegistersPerMultiprocessor], 0);
		g.threads_per_warp = (int32_t)col_i64(st, c[COL_threadsPerWarp], 0);
		g.async_engines = (int32_t)col_i64(st, c[COL_asyncEngines], 0);
		g.max_warps_per_sm = (int32_t)col_i64(st, c[COL_maxWarpsPerMultiprocessor], 0);
		g.max_blocks_per_sm = (int32_t)col_i64(st, c[COL_maxBlocksPerMultiprocessor], 0);
		g.max_threads_per_block = (int32_t)col_i64(st, c[COL_maxThreadsPerBlock], 0);
		rc = add_gpu(s, &g, e);
		if (rc)
			break;
	}
	return finish_rows(s, st, rc, r, table, e);
}

/* Merge: devices the activity rows use that TARGET_INFO_GPU does not list (a Kineto trace without
 * deviceProperties, a hand-made database) get an identity too, so that two files' "device 0"
 * are told apart as listed GPUs are. */
static int import_unlisted_gpus(struct src *s, struct err *e)
{
	static const struct {
		const char *table, *col;
	} uses[] = {
		{"CUPTI_ACTIVITY_KIND_KERNEL", "deviceId"}, {"CUPTI_ACTIVITY_KIND_MEMCPY", "deviceId"},
		{"CUPTI_ACTIVITY_KIND_MEMCPY", "srcDeviceId"}, {"CUPTI_ACTIVITY_KIND_MEMCPY", "dstDeviceId"},
		{"CUPTI_ACTIVITY_KIND_MEMSET", "deviceId"},
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof uses / sizeof uses[0] && !rc; i++) {
		const char *want[] = {uses[i].col};
		int idx;
		sqlite3_stmt *st;
		rc = select_cols(s, uses[i].table, want, 1, &idx, &st, e);
		if (rc || !st)
			continue;
		sqlite3_finalize(st);
		if (idx < 0)
			continue;
		char sql[256];
		snprintf(sql, sizeof sql, "SELECT DISTINCT \"%s\" FROM \"%s\" WHERE \"%s\" IS NOT NULL",
			 uses[i].col, uses[i].table, uses[i].col);
		if (sqlite3_prepare_v2(s->sql, sql, -1, &st, NULL) != SQLITE_OK)
			return sql_err(s, e, uses[i].table);
		int r;
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t dev = sqlite3_column_int64(st, 0);
			if (dev < 0 || dev > INT32_MAX || gpu_map_has(s->gpus, dev))
				continue;
			struct trace_gpu g = {.id = (int32_t)dev, .cu_device = (int32_t)dev};
			rc = add_gpu(s, &g, e);
			if (rc)
				break;
		}
		if (rc) {
			sqlite3_finalize(st);
			return rc;
		}
		rc = step_done(s, st, r, uses[i].table, e);
	}
	return rc;
}

static int import_gpus(struct src *s, struct err *e)
{
	int rc = import_gpu_rows(s, e);
	if (!rc && s->gpus)
		rc = import_unlisted_gpus(s, e);
	return rc;
}

static int import_processes(struct src *s, struct err *e)
{
	enum { COL_globalPid, COL_pid, COL_name, N_COLS };
	static const char *const want[N_COLS] = {"globalPid", "pid", "name"};
	int c[N_COLS];
	sqlite3_stmt *st;
	const char *table = "PROCESSES";
	int rc = select_cols(s, table, want, N_COLS, c, &st, e);
	if (rc || !st)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t gpid;
		rc = map_gid(s, col_i64(st, c[COL_globalPid], 0), &gpid, e);
		if (rc)
			break;
		rc = trace_db_add_process(s->db, gpid, trace_global_to_pid(gpid), col_text(st, c[COL_name]),
					  e);
		if (rc)
			break;
		s->st->processes++;
	}
	return finish_rows(s, st, rc, r, table, e);
}

static int import_k3sim(struct src *s, const char *prefix, struct err *e)
{
	enum { CAP_name, CAP_value, CAP_N };
	static const char *const cap_want[CAP_N] = {"name", "value"};
	enum { DROP_source, DROP_deviceId, DROP_contextId, DROP_streamId, DROP_count, DROP_N };
	static const char *const drop_want[DROP_N] = {"source", "deviceId", "contextId", "streamId",
						      "count"};
	enum { MET_globalPid, MET_deviceId, MET_correlationId, MET_nameId, MET_metric, MET_value,
	       MET_unit, MET_N };
	static const char *const met_want[MET_N] = {"globalPid", "deviceId", "correlationId",
						    "nameId", "metric", "value", "unit"};
	int c[8];
	sqlite3_stmt *st;
	int r, rc = select_cols(s, "K3SIM_CAPTURE", cap_want, CAP_N, c, &st, e);
	if (rc)
		return rc;
	if (st) {
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			const char *k = col_text(st, c[CAP_name]);
			if (!k)
				continue;
			char key[512];
			snprintf(key, sizeof key, "%s%s", prefix ? prefix : "", k);
			rc = trace_db_set_capture(s->db, key, col_text(st, c[CAP_value]), e);
			if (rc)
				break;
		}
		if (rc) {
			sqlite3_finalize(st);
			return rc;
		}
		rc = step_done(s, st, r, "K3SIM_CAPTURE", e);
		if (rc)
			return rc;
	}
	rc = select_cols(s, "K3SIM_DROPPED", drop_want, DROP_N, c, &st, e);
	if (rc)
		return rc;
	if (st) {
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			const char *src = col_text(st, c[DROP_source]);
			struct trace_dropped d = {
				.source = src ? src : "unknown",
				.device_id = (int32_t)col_i64(st, c[DROP_deviceId], -1),
				.context_id = (int32_t)col_i64(st, c[DROP_contextId], -1),
				.stream_id = (int32_t)col_i64(st, c[DROP_streamId], -1),
				.count = col_i64(st, c[DROP_count], 0),
			};
			if (d.device_id >= 0)
				d.device_id = (int32_t)gpu_map_dev(s->gpus, d.device_id);
			rc = trace_db_add_dropped(s->db, &d, e);
			if (rc)
				break;
			s->st->dropped_records += d.count;
		}
		if (rc) {
			sqlite3_finalize(st);
			return rc;
		}
		rc = step_done(s, st, r, "K3SIM_DROPPED", e);
		if (rc)
			return rc;
	}
	rc = select_cols(s, "K3SIM_KERNEL_METRICS", met_want, MET_N, c, &st, e);
	if (rc || !st)
		return rc;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *metric = col_text(st, c[MET_metric]);
		if (!metric)
			continue;
		struct trace_kernel_metric m;
		memset(&m, 0, sizeof m);
		rc = map_gid(s, col_i64(st, c[MET_globalPid], 0), &m.global_pid, e);
		if (rc)
			break;
		m.device_id = (uint32_t)gpu_map_dev(s->gpus, col_i64(st, c[MET_deviceId], 0));
		m.correlation_id = (uint32_t)col_i64(st, c[MET_correlationId], 0);
		int64_t nid = col_i64(st, c[MET_nameId], -1);
		m.kernel_name = nid >= 0 ? string_of(s, nid) : NULL;
		m.metric = metric;
		m.value = c[MET_value] >= 0 ? sqlite3_column_double(st, c[MET_value]) : 0;
		m.unit = col_text(st, c[MET_unit]);
		rc = trace_db_add_kernel_metric(s->db, &m, e);
		if (rc)
			break;
	}
	if (rc) {
		sqlite3_finalize(st);
		return rc;
	}
	return step_done(s, st, r, "K3SIM_KERNEL_METRICS", e);
}

/* K3SIM_DEVICE_MAP rows of a merged file, carried over with their processes and GPUs renamed. */
static int import_device_map(struct src *s, struct err *e)
{
	enum { COL_globalPid, COL_cudaId, COL_deviceId, COL_uuid, COL_host, COL_rank, N_COLS };
	static const char *const want[N_COLS] = {"globalPid", "cudaId", "deviceId", "uuid", "host",
		"rank"};
	int c[N_COLS];
	sqlite3_stmt *st;
	const char *table = "K3SIM_DEVICE_MAP";
	int rc = select_cols(s, table, want, N_COLS, c, &st, e);
	if (rc || !st)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t gpid;
		rc = map_gid(s, col_i64(st, c[COL_globalPid], 0), &gpid, e);
		if (rc)
			break;
		struct trace_device_map dm = {
			.global_pid = gpid,
			.cuda_id = (int32_t)col_i64(st, c[COL_cudaId], 0),
			.device_id = (int32_t)gpu_map_dev(s->gpus, col_i64(st, c[COL_deviceId], 0)),
			.uuid = col_text(st, c[COL_uuid]),
			.host = col_text(st, c[COL_host]),
			.rank = col_i64(st, c[COL_rank], -1),
		};
		rc = trace_db_add_device_map(s->db, &dm, e);
		if (rc)
			break;
		s->has_device_map = true;
	}
	return finish_rows(s, st, rc, r, table, e);
}

/* K3SIM_GPU_METRICS rows (GPU clocks and power sampled during a capture), with their process and
 * GPU renamed like every other row. */
static int import_gpu_metrics(struct src *s, struct err *e)
{
	enum { COL_timestamp, COL_globalPid, COL_deviceId, COL_smClockMHz, COL_memClockMHz, COL_powerW,
	       COL_temperatureC, COL_throttleReasons, COL_powerAvgW, N_COLS };
	static const char *const want[N_COLS] = {"timestamp", "globalPid", "deviceId", "smClockMHz",
		"memClockMHz", "powerW", "temperatureC", "throttleReasons", "powerAvgW"};
	int c[N_COLS];
	sqlite3_stmt *st;
	const char *table = "K3SIM_GPU_METRICS";
	int rc = select_cols(s, table, want, N_COLS, c, &st, e);
	if (rc || !st)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_gpu_metric m;
		memset(&m, 0, sizeof m);
		m.timestamp_ns = col_i64(st, c[COL_timestamp], 0);
		if (__builtin_add_overflow(m.timestamp_ns, s->time_offset_ns, &m.timestamp_ns)) {
			err_set(e, s->path, 0, 0, "%s: a time plus the session start leaves the int64"
				" nanosecond range", table);
			rc = -ERANGE;
			break;
		}
		rc = map_gid(s, col_i64(st, c[COL_globalPid], 0), &m.global_pid, e);
		if (rc)
			break;
		m.device_id = (int32_t)gpu_map_dev(s->gpus, col_i64(st, c[COL_deviceId], 0));
		bool *has[5] = {&m.has_sm, &m.has_mem, &m.has_power, &m.has_temp, &m.has_power_avg};
		double *val[5] = {&m.sm_mhz, &m.mem_mhz, &m.power_w, &m.temp_c, &m.power_avg_w};
		const int col[5] = {c[COL_smClockMHz], c[COL_memClockMHz], c[COL_powerW],
				    c[COL_temperatureC], c[COL_powerAvgW]};
		for (int k = 0; k < 5; k++)
			if (col[k] >= 0 && sqlite3_column_type(st, col[k]) != SQLITE_NULL) {
				*has[k] = true;
				*val[k] = sqlite3_column_double(st, col[k]);
			}
		if (c[COL_throttleReasons] >= 0 &&
		    sqlite3_column_type(st, c[COL_throttleReasons]) != SQLITE_NULL) {
			m.has_throttle = true;
			m.throttle_reasons = (uint64_t)sqlite3_column_int64(st, c[COL_throttleReasons]);
		}
		rc = trace_db_add_gpu_metric(s->db, &m, e);
		if (rc)
			break;
	}
	return finish_rows(s, st, rc, r, table, e);
}

/* Merge: which ordinal each process of this file knew each of its GPUs by. */
static int write_device_map(struct src *s, struct err *e)
{
	const struct trace_gpu_map *g = s->gpus;
	const struct trace_pid_map *p = s->pids;
	if (!g || !p || s->has_device_map)
		return 0;
	for (size_t i = 0; i < p->n_cur; i++)
		for (size_t j = 0; j < g->n_cur; j++) {
			const struct gpu_pair *d = &g->cur[j];
			struct trace_device_map dm = {
				.global_pid = trace_global_pid(p->cur[i].to),
				.cuda_id = (int32_t)d->from,
				.device_id = d->to,
				.uuid = d->uuid,
				.host = s->host,
				.rank = s->rank,
			};
			int rc = trace_db_add_device_map(s->db, &dm, e);
			if (rc)
				return rc;
		}
	return 0;
}

/* The value of name in a (name, value) table, "" when absent. */
static void name_value(struct src *s, const char *table, const char *name, char *out, size_t n)
{
	out[0] = '\0';
	if (!has_table(s, table))
		return;
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT value FROM %s WHERE name = ?1", table);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

static void meta_value(struct src *s, const char *name, char *out, size_t n)
{
	name_value(s, "META_DATA_EXPORT", name, out, n);
}

static void capture_value(struct src *s, const char *name, char *out, size_t n)
{
	name_value(s, "K3SIM_CAPTURE", name, out, n);
}

/* An nsys export's session start, UTC ns (TARGET_INFO_SESSION_START_TIME.utcEpochNs); -1 when
 * the file does not say. */
static int64_t session_start(struct src *s)
{
	if (!has_table(s, "TARGET_INFO_SESSION_START_TIME"))
		return -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->sql, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	int64_t v = -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static bool has_rows(struct src *s, const char *table)
{
	if (!has_table(s, table))
		return false;
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT 1 FROM \"%s\" LIMIT 1", table);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	bool any = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return any;
}

/* A non-negative decimal count ("3"); -EINVAL otherwise. */
static int parse_count(const char *text, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (end == text || *end || errno || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int trace_import_sqlite(struct trace_db *db, const char *path, const struct trace_sqlite_opts *o,
			struct trace_import_stats *st, struct err *e)
{
	struct trace_import_stats local;
	memset(&local, 0, sizeof local);
	local.first_ns = INT64_MAX;
	local.last_ns = INT64_MIN;
	struct src s = {.path = path, .db = db, .st = &local, .pids = o ? o->pids : NULL,
			.gpus = o ? o->gpus : NULL, .rank = -1};
	arena_init(&s.strings.arena, MAX_STRING_BYTES);
	const char *prefix = o ? o->capture_prefix : NULL;
	int rc = trace_sql_open(path, &s.sql, e);
	if (rc)
		goto out;
	static const char *const trace_tables[] = {
		"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
		"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
	};
	bool any = false;
	for (size_t i = 0; i < sizeof trace_tables / sizeof trace_tables[0]; i++)
		any = any || has_table(&s, trace_tables[i]);
	if (!any) {
		err_set(e, path, 0, 0, "not an nsys export: none of CUPTI_ACTIVITY_KIND_KERNEL,"
			" _MEMCPY, _MEMSET, _RUNTIME or NVTX_EVENTS is there"
			" (make it with: nsys export --type sqlite)");
		rc = -EINVAL;
		goto out;
	}
	rc = load_strings(&s, e);
	if (rc)
		goto out;
	if (s.gpus) {
		/* the file's identity: where and by whom it was taken (a merged file has several) */
		char host[256], rank[32], pid[32];
		capture_value(&s, TRACE_CAPTURE_HOST, host, sizeof host);
		capture_value(&s, TRACE_CAPTURE_RANK, rank, sizeof rank);
		capture_value(&s, TRACE_CAPTURE_PID, pid, sizeof pid);
		int64_t rank_v = -1, pid_v = -1;
		if (!has_rows(&s, "K3SIM_DEVICE_MAP")) {
			if (rank[0] && parse_count(rank, &rank_v))
				rank_v = -1;
			if (pid[0] && parse_count(pid, &pid_v))
				pid_v = -1;
		}
		s.rank = rank_v;
		snprintf(s.host_buf, sizeof s.host_buf, "%s", host);
		s.host = s.host_buf[0] ? s.host_buf : NULL;
		rc = gpu_map_begin_file(s.gpus, host, rank_v, pid_v);
		if (rc == -ENOSPC)
			err_set(e, path, 0, 0, "more than %d hosts to merge", MAX_HOSTS);
		else if (rc)
			err_set(e, path, 0, 0, "out of memory");
		if (rc)
			goto out;
	}
	char product[64], version[64], key[512];
	meta_value(&s, "EXPORT_PRODUCT", product, sizeof product);
	bool k3sim = strcmp(product, "k3sim") == 0;
	int64_t session_ns = k3sim ? -1 : session_start(&s);
	if (session_ns > 0)
		s.time_offset_ns = session_ns; /* nsys times count from the session start */
	rc = import_gpus(&s, e);
	if (!rc)
		rc = import_processes(&s, e);
	if (!rc)
		rc = import_kernels(&s, e);
	if (!rc)
		rc = import_mem(&s, TRACE_SCHEMA_MEMCPY, e);
	if (!rc)
		rc = import_mem(&s, TRACE_SCHEMA_MEMSET, e);
	if (!rc)
		rc = import_api(&s, "CUPTI_ACTIVITY_KIND_RUNTIME", false, e);
	if (!rc) {
		char type[16];
		rc = object_type(&s, "CUPTI_ACTIVITY_KIND_DRIVER", type, sizeof type, e);
		if (!rc && strcmp(type, "table") == 0)
			rc = import_api(&s, "CUPTI_ACTIVITY_KIND_DRIVER", true, e);
	}
	if (!rc)
		rc = import_nvtx(&s, e);
	if (rc)
		goto out;
	if (!k3sim) {
		meta_value(&s, "EXPORT_SCHEMA_VERSION", version, sizeof version);
		snprintf(key, sizeof key, "%s%s", prefix ? prefix : "", TRACE_CAPTURE_SOURCE);
		rc = trace_db_set_capture(db, key, "nsys-import", e);
		if (!rc) {
			snprintf(key, sizeof key, "%s%s", prefix ? prefix : "", TRACE_CAPTURE_CLOCK);
			rc = trace_db_set_capture(db, key, session_ns > 0 ? TRACE_CLOCK_UNIX_EPOCH
									 : TRACE_CLOCK_UNKNOWN, e);
		}
		if (!rc && session_ns > 0) {
			char num[32];
			snprintf(key, sizeof key, "%snsys_session_start_utc_ns", prefix ? prefix : "");
			snprintf(num, sizeof num, "%lld", (long long)session_ns);
			rc = trace_db_set_capture(db, key, num, e);
		}
		if (!rc && version[0]) {
			snprintf(key, sizeof key, "%snsys_export_schema_version",
				 prefix ? prefix : "");
			rc = trace_db_set_capture(db, key, version, e);
		}
		if (rc)
			goto out;
	}
	if (!k3sim) {
		local.clock = session_ns > 0 ? TRACE_CLOCK_EPOCH : TRACE_CLOCK_RELATIVE;
	} else {
		char clock[32];
		capture_value(&s, TRACE_CAPTURE_CLOCK, clock, sizeof clock);
		local.clock = strcmp(clock, TRACE_CLOCK_UNIX_EPOCH) == 0 ? TRACE_CLOCK_EPOCH
			      : strcmp(clock, TRACE_CLOCK_UNKNOWN) == 0  ? TRACE_CLOCK_RELATIVE
									 : TRACE_CLOCK_NOT_STATED;
	}
	rc = import_k3sim(&s, prefix, e);
	if (!rc)
		rc = import_device_map(&s, e);
	if (!rc)
		rc = import_gpu_metrics(&s, e);
	if (!rc)
		rc = write_device_map(&s, e);
out:
	sqlite3_close(s.sql);
	free((void *)s.strings.by_id);
	free(s.strings.sorted);
	arena_release(&s.strings.arena);
	if (st)
		*st = local;
	return rc;
}

/* SQLite reads files, not streams: a database that arrives through a pipe or gzip'd is copied to
 * a temporary file first (disk, not memory). */
static int spool(struct trace_input *in, char *tmp, size_t n, struct err *e)
{
	const char *dir = getenv("TMPDIR");
	snprintf(tmp, n, "%s/k3sim-import-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int rc = -errno;
		err_set(e, tmp, 0, 0, "cannot create a temporary copy of %s: %s", in->name,
			strerror(errno));
		tmp[0] = '\0';
		return rc;
	}
	enum { CHUNK = 1 << 20 };
	unsigned char *buf = malloc(CHUNK);
	int rc = buf ? 0 : -ENOMEM;
	if (!buf)
		err_set(e, in->name, 0, 0, "out of memory");
	while (!rc) {
		size_t got;
		rc = trace_input_read(in, buf, CHUNK, &got, e);
		if (rc || !got)
			break;
		for (size_t off = 0; off < got && !rc;) {
			ssize_t w = write(fd, buf + off, got - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = -errno;
				err_set(e, tmp, 0, 0, "cannot write a temporary copy of %s: %s",
					in->name, strerror(errno));
			} else {
				off += (size_t)w;
			}
		}
	}
	free(buf);
	if (close(fd) && !rc) {
		rc = -EIO;
		err_set(e, tmp, 0, 0, "cannot write a temporary copy of %s", in->name);
	}
	if (rc) {
		unlink(tmp);
		tmp[0] = '\0';
	}
	return rc;
}

int trace_import_path(struct trace_db *db, const char *path, const struct trace_import_opts *o,
		      enum trace_format *fmt_out, struct trace_import_stats *st, struct err *e)
{
	struct trace_input in;
	int rc = trace_input_open(&in, path, e);
	if (rc)
		return rc;
	enum trace_format fmt = o ? o->format : TRACE_FORMAT_UNKNOWN, seen;
	/* sniffing looks at the head without consuming it, so a pipe is read once */
	rc = trace_detect_input(&in, &seen, e);
	if (rc && fmt == TRACE_FORMAT_UNKNOWN)
		goto out;
	if (fmt == TRACE_FORMAT_UNKNOWN) {
		fmt = seen;
	} else if (!rc && seen != fmt) {
		err_set(e, in.name, 0, 0, "--format %s, but this is %s", trace_format_name(fmt),
			seen == TRACE_FORMAT_SQLITE ? "an SQLite database" : "a JSON trace");
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
	if (fmt_out)
		*fmt_out = fmt;
	if (fmt == TRACE_FORMAT_KINETO_JSON) {
		rc = trace_import_kineto_input(db, &in, o ? &o->kineto : NULL, st, e);
	} else if (in.kind == TRACE_INPUT_FILE && !in.gzip) {
		rc = trace_import_sqlite(db, in.path, NULL, st, e);
	} else {
		char tmp[4096];
		rc = spool(&in, tmp, sizeof tmp, e);
		if (!rc) {
			rc = trace_import_sqlite(db, tmp, NULL, st, e);
			if (rc && e && strcmp(e->file, tmp) == 0)
				snprintf(e->file, sizeof e->file, "%s", in.name);
			unlink(tmp);
		}
	}
out:
	trace_input_close(&in);
	return rc;
}

int trace_import_file(struct trace_db *db, const char *path, struct trace_import_stats *st,
		      struct err *e)
{
	return trace_import_path(db, path, NULL, NULL, st, e);
}

static void add_stats(struct trace_import_stats *to, const struct trace_import_stats *a)
{
	to->events += a->events;
	to->kernels += a->kernels;
	to->memcpys += a->memcpys;
	to->memsets += a->memsets;
	to->api_calls += a->api_calls;
	to->nvtx += a->nvtx;
	to->gpus += a->gpus;
	to->processes += a->processes;
	to->skipped += a->skipped;
	to->dropped_records += a->dropped_records;
	if (a->first_ns < to->first_ns)
		to->first_ns = a->first_ns;
	if (a->last_ns > to->last_ns)
		to->last_ns = a->last_ns;
}

int trace_merge(const char *out_path, const char *const *inputs, size_t n_inputs,
		const struct trace_db_opts *opts, struct trace_import_stats *st, struct err *e)
{
	if (n_inputs == 0) {
		err_set(e, NULL, 0, 0, "nothing to merge");
		return -EINVAL;
	}
	struct trace_import_stats total;
	memset(&total, 0, sizeof total);
	total.first_ns = INT64_MAX;
	total.last_ns = INT64_MIN;
	bool epoch = false, relative = false;
	struct trace_pid_map pids;
	memset(&pids, 0, sizeof pids);
	struct trace_gpu_map gpus;
	gpu_map_init(&gpus);
	struct trace_db *db = NULL;
	int rc = 0;
	for (size_t i = 0; i < n_inputs && !rc; i++) {
		enum trace_format f;
		struct trace_input in;
		if (strcmp(inputs[i], "-") == 0) {
			err_set(e, inputs[i], 0, 0, "merge reads database files, not standard input;"
				" import the stream first (k3sim trace import - -o FILE.db)");
			rc = -EINVAL;
			break;
		}
		rc = trace_input_open(&in, inputs[i], e);
		if (rc)
			break;
		rc = trace_detect_input(&in, &f, e);
		if (!rc && (f != TRACE_FORMAT_SQLITE || in.gzip || in.kind != TRACE_INPUT_FILE)) {
			err_set(e, inputs[i], 0, 0, "merge takes trace database files%s; import this file"
				" first (k3sim trace import)",
				f == TRACE_FORMAT_SQLITE ? " (not gzip'd, not a pipe)" : "");
			rc = -EINVAL;
		}
		trace_input_close(&in);
	}
	if (!rc)
		rc = trace_db_create(&db, out_path, opts, e);
	for (size_t i = 0; i < n_inputs && !rc; i++) {
		char prefix[32];
		snprintf(prefix, sizeof prefix, "input%zu.", i);
		struct trace_sqlite_opts so = {.pids = &pids, .gpus = &gpus, .capture_prefix = prefix};
		struct trace_import_stats one;
		pid_map_begin_file(&pids);
		rc = trace_import_sqlite(db, inputs[i], &so, &one, e);
		if (rc)
			break;
		add_stats(&total, &one);
		epoch = epoch || one.clock == TRACE_CLOCK_EPOCH;
		relative = relative || one.clock == TRACE_CLOCK_RELATIVE;
		char key[64];
		snprintf(key, sizeof key, "input%zu", i);
		rc = trace_db_set_capture(db, key, inputs[i], e);
	}
	total.hosts = (int64_t)gpus.n_hosts;
	total.clock_mixed = epoch && relative;
	if (!rc)
		rc = trace_db_set_capture(db, TRACE_CAPTURE_SOURCE, "merge", e);
	if (db && rc) {
		trace_db_discard(db);
	} else if (db) {
		rc = trace_db_close(db, e);
		if (rc)
			unlink(out_path);
	}
	gpu_map_release(&gpus);
	pid_map_release(&pids);
	if (st)
		*st = total;
	return rc;
}
