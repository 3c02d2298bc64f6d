#include "trace/db/tracedb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "trace/db/schema.h"
#include "util/arena.h"

/* Column names and types follow nsys: INTEGER for ids, times and sizes; TEXT for inline strings.
 * The four activity tables (kernel, memcpy, memset, runtime API) are created from their column
 * lists in trace/db/schema.h, between StringIds and the rest; they carry no NOT NULL constraints
 * (nsys declares them): the checks cost a fifth of the insert time and the writer never leaves
 * a required column NULL. */
static const char SCHEMA_SQL_STRINGS[] =
	"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);\n";
static const char SCHEMA_SQL[] =
	"CREATE VIEW CUPTI_ACTIVITY_KIND_DRIVER AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME"
	" WHERE eventClass = 1;\n"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER,"
	" eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER,"
	" text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,"
	" uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,"
	" int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);\n"
	"CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL PRIMARY KEY, name TEXT,"
	" busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER,"
	" memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER,"
	" uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxCount INTEGER,"
	" ctxId TEXT, computeMajor INTEGER, computeMinor INTEGER, maxIPC INTEGER,"
	" maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER,"
	" maxShmemPerMultiprocessor INTEGER, maxRegistersPerMultiprocessor INTEGER,"
	" threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerMultiprocessor INTEGER,"
	" maxBlocksPerMultiprocessor INTEGER, maxThreadsPerBlock INTEGER);\n"
	"CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);\n"
	"CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);\n"
	"CREATE TABLE K3SIM_CAPTURE (name TEXT NOT NULL PRIMARY KEY, value TEXT);\n"
	"CREATE TABLE K3SIM_DROPPED (source TEXT NOT NULL, deviceId INTEGER, contextId INTEGER,"
	" streamId INTEGER, count INTEGER NOT NULL);\n"
	"CREATE TABLE K3SIM_KERNEL_METRICS (globalPid INTEGER, deviceId INTEGER,"
	" correlationId INTEGER, nameId INTEGER, metric TEXT NOT NULL, value REAL,"
	" unit TEXT);\n"
	"CREATE TABLE K3SIM_DEVICE_MAP (globalPid INTEGER NOT NULL, cudaId INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, uuid TEXT, host TEXT, rank INTEGER);\n"
	"CREATE TABLE K3SIM_GPU_METRICS (timestamp INTEGER NOT NULL, globalPid INTEGER,"
	" deviceId INTEGER, smClockMHz REAL, memClockMHz REAL, powerW REAL,"
	" temperatureC REAL, throttleReasons INTEGER, powerAvgW REAL);\n";

/* Hot tables are written through a row buffer and a multi-row INSERT (up to ROWBUF_ROWS rows per
 * statement, fewer when SQLite allows fewer parameters): one sqlite3_step per 128 rows roughly
 * doubles the insert rate. Their columns are
 * all integers, so a buffered row is an array of int64 plus a NULL mask. */
enum buf_id { BUF_KERNEL, BUF_MEMCPY, BUF_MEMSET, BUF_API, BUF_COUNT };

enum { ROWBUF_ROWS = 128, ROWBUF_MAX_COLS = 32 };

/* The row buffers' tables, in trace/db/schema.h's order. */
_Static_assert((int)BUF_KERNEL == (int)TRACE_SCHEMA_KERNEL && (int)BUF_MEMCPY == (int)TRACE_SCHEMA_MEMCPY &&
		       (int)BUF_MEMSET == (int)TRACE_SCHEMA_MEMSET && (int)BUF_API == (int)TRACE_SCHEMA_API,
	       "row buffers follow trace_schema_tables");
_Static_assert((int)TRACE_KERNEL_NCOLS <= (int)ROWBUF_MAX_COLS &&
		       (int)TRACE_MEMCPY_NCOLS <= (int)ROWBUF_MAX_COLS &&
		       (int)TRACE_MEMSET_NCOLS <= (int)ROWBUF_MAX_COLS &&
		       (int)TRACE_API_NCOLS <= (int)ROWBUF_MAX_COLS,
	       "a row's NULL mask is 32 bits");

struct rowbuf {
	sqlite3_stmt *one;   /* single-row INSERT, for the tail of a batch */
	sqlite3_stmt *many;  /* `rows`-row INSERT, prepared at the first full batch */
	const struct trace_schema_table *table;
	int rows;            /* rows per multi-row INSERT, <= ROWBUF_ROWS */
	int ncol;
	int n;               /* rows buffered */
	uint32_t nulls[ROWBUF_ROWS];  /* bit c: column c is NULL */
	int64_t vals[ROWBUF_ROWS * ROWBUF_MAX_COLS];
};

enum stmt_id {
	ST_STRING,
	ST_NVTX,
	ST_GPU,
	ST_PROCESS,
	ST_DROPPED,
	ST_METRIC,
	ST_CAPTURE,
	ST_DEVICE_MAP,
	ST_GPU_METRIC,
	ST_COUNT,
};

/* The other tables' INSERTs, each column listed once: the statement's SQL (made at
 * trace_db_create) and its parameter numbers, P_<STATEMENT>_<column> from 1, come from these lists,
 * so no bind names a column by position. */
#define STRING_COLS(X) X(id) X(value)
#define NVTX_COLS(X) X(start) X(end) X(eventType) X(rangeId) X(category) X(color) X(text) \
	X(globalTid) X(endGlobalTid) X(domainId)
#define GPU_COLS(X) X(id) X(name) X(busLocation) X(isDiscrete) X(l2CacheSize) X(totalMemory) \
	X(memoryBandwidth) X(clockRate) X(smCount) X(uuid) X(chipName) X(cuDevice) X(computeMajor) \
	X(computeMinor) X(maxRegistersPerBlock) X(maxShmemPerBlock) X(maxShmemPerMultiprocessor) \
	X(maxRegistersPerMultiprocessor) X(threadsPerWarp) X(asyncEngines) X(maxWarpsPerMultiprocessor) \
	X(maxBlocksPerMultiprocessor) X(maxThreadsPerBlock)
#define PROCESS_COLS(X) X(globalPid) X(pid) X(name)
#define DROPPED_COLS(X) X(source) X(deviceId) X(contextId) X(streamId) X(count)
#define METRIC_COLS(X) X(globalPid) X(deviceId) X(correlationId) X(nameId) X(metric) X(value) \
	X(unit)
#define CAPTURE_COLS(X) X(name) X(value)
#define DEVICE_MAP_COLS(X) X(globalPid) X(cudaId) X(deviceId) X(uuid) X(host) X(rank)
#define GPU_METRIC_COLS(X) X(timestamp) X(globalPid) X(deviceId) X(smClockMHz) X(memClockMHz) \
	X(powerW) X(temperatureC) X(throttleReasons) X(powerAvgW)

#define P_STRING(c) P_STRING_##c,
enum { P_STRING_0, STRING_COLS(P_STRING) };
#define P_NVTX(c) P_NVTX_##c,
enum { P_NVTX_0, NVTX_COLS(P_NVTX) };
#define P_GPU(c) P_GPU_##c,
enum { P_GPU_0, GPU_COLS(P_GPU) };
#define P_PROCESS(c) P_PROCESS_##c,
enum { P_PROCESS_0, PROCESS_COLS(P_PROCESS) };
#define P_DROPPED(c) P_DROPPED_##c,
enum { P_DROPPED_0, DROPPED_COLS(P_DROPPED) };
#define P_METRIC(c) P_METRIC_##c,
enum { P_METRIC_0, METRIC_COLS(P_METRIC) };
#define P_CAPTURE(c) P_CAPTURE_##c,
enum { P_CAPTURE_0, CAPTURE_COLS(P_CAPTURE) };
#define P_DEVICE_MAP(c) P_DEVICE_MAP_##c,
enum { P_DEVICE_MAP_0, DEVICE_MAP_COLS(P_DEVICE_MAP) };
#define P_GPU_METRIC(c) P_GPU_METRIC_##c,
enum { P_GPU_METRIC_0, GPU_METRIC_COLS(P_GPU_METRIC) };

#define COL_NAME(c) ", " #c
struct stmt_def {
	const char *verb;  /* INSERT or INSERT OR REPLACE */
	const char *table;
	const char *cols;  /* ", a, b, c" */
};
static const struct stmt_def STMTS[ST_COUNT] = {
	[ST_STRING] = {"INSERT", "StringIds", STRING_COLS(COL_NAME)},
	[ST_NVTX] = {"INSERT", "NVTX_EVENTS", NVTX_COLS(COL_NAME)},
	[ST_GPU] = {"INSERT OR REPLACE", "TARGET_INFO_GPU", GPU_COLS(COL_NAME)},
	[ST_PROCESS] = {"INSERT", "PROCESSES", PROCESS_COLS(COL_NAME)},
	[ST_DROPPED] = {"INSERT", "K3SIM_DROPPED", DROPPED_COLS(COL_NAME)},
	[ST_METRIC] = {"INSERT", "K3SIM_KERNEL_METRICS", METRIC_COLS(COL_NAME)},
	[ST_CAPTURE] = {"INSERT OR REPLACE", "K3SIM_CAPTURE", CAPTURE_COLS(COL_NAME)},
	[ST_DEVICE_MAP] = {"INSERT", "K3SIM_DEVICE_MAP", DEVICE_MAP_COLS(COL_NAME)},
	[ST_GPU_METRIC] = {"INSERT", "K3SIM_GPU_METRICS", GPU_METRIC_COLS(COL_NAME)},
};

/* "VERB INTO table (a, b, c) VALUES (?1, ?2, ?3)" into buf[cap]; -1 when cap is short. */
static int stmt_sql(const struct stmt_def *d, char *buf, size_t cap)
{
	const char *cols = d->cols + 2; /* past the first ", " */
	int n = 1;
	for (const char *p = cols; *p; p++)
		n += *p == ',';
	size_t p = (size_t)snprintf(buf, cap, "%s INTO %s (%s) VALUES (", d->verb, d->table, cols);
	for (int k = 1; k <= n && p < cap; k++)
		p += (size_t)snprintf(buf + p, cap - p, "%s?%d", k > 1 ? ", " : "", k);
	if (p + 2 > cap)
		return -1;
	snprintf(buf + p, cap - p, ")");
	return 0;
}

/* Interned strings: open addressing over (hash, id, text) slots; text lives in the arena. */
struct intern_slot {
	uint64_t hash;
	int64_t id;           /* 0: empty */
	const char *text;
	size_t len;
};

struct trace_db {
	sqlite3 *sql;
	sqlite3_stmt *st[ST_COUNT];
	struct rowbuf buf[BUF_COUNT];
	char path[4096];
	struct trace_db_opts opts;
	bool in_txn;
	int64_t pending_rows;
	struct intern_slot *slots;
	size_t slot_count;    /* power of two */
	struct arena strings;
	int64_t *short_of;    /* [string id]: id of its short name, 0 not yet known */
	size_t short_cap;
	struct trace_db_stats stats;
	/* the last kernel name: kernels repeat their name in runs */
	const char *last_name;
	int64_t last_name_id, last_short_id;
};

static int sql_fail(struct trace_db *db, struct err *e, const char *what)
{
	err_set(e, db->path, 0, 0, "%s: sqlite: %s", what, sqlite3_errmsg(db->sql));
	return -EIO;
}

static int exec(struct trace_db *db, const char *sql, struct err *e)
{
	char *msg = NULL;
	if (sqlite3_exec(db->sql, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(e, db->path, 0, 0, "sqlite: %s", msg ? msg : "unknown error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

static void opts_defaults(struct trace_db_opts *o)
{
	if (o->batch_rows <= 0)
		o->batch_rows = TRACE_DB_DEFAULT_BATCH_ROWS;
	if (o->max_strings <= 0)
		o->max_strings = TRACE_DB_DEFAULT_MAX_STRINGS;
	if (o->max_string_bytes <= 0)
		o->max_string_bytes = TRACE_DB_DEFAULT_MAX_STRING_BYTES;
	if (o->max_string_len_bytes <= 0)
		o->max_string_len_bytes = TRACE_DB_DEFAULT_MAX_STRING_LEN_BYTES;
}

static void finalize_all(struct trace_db *db)
{
	for (int i = 0; i < ST_COUNT; i++) {
		sqlite3_finalize(db->st[i]);
		db->st[i] = NULL;
	}
	for (int i = 0; i < BUF_COUNT; i++) {
		sqlite3_finalize(db->buf[i].one);
		sqlite3_finalize(db->buf[i].many);
		db->buf[i].one = db->buf[i].many = NULL;
	}
}

static void db_free(struct trace_db *db)
{
	finalize_all(db);
	sqlite3_close(db->sql);
	free(db->slots);
	free(db->short_of);
	arena_release(&db->strings);
	free(db);
}

static void remove_files(const char *path)
{
	char side[4096 + 8];
	unlink(path);
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-journal", path);
	unlink(side);
}

/* "a, b, c": the columns of t that k3sim writes (all = false) or all of them, each followed by
 * suffix ("" or " INTEGER"), into buf[cap]. Returns the length, or -1 when cap is short. */
static int column_list(const struct trace_schema_table *t, bool all, const char *suffix, char *buf,
		       size_t cap)
{
	size_t p = 0;
	buf[0] = '\0';
	for (int i = 0; i < t->n_columns; i++) {
		if (!all && !t->columns[i].written)
			continue;
		int n = snprintf(buf + p, cap - p, "%s%s%s", p ? ", " : "", t->columns[i].name, suffix);
		if (n < 0 || (size_t)n >= cap - p)
			return -1;
		p += (size_t)n;
	}
	return (int)p;
}

/* CREATE TABLE for the activity tables, from trace/db/schema.h. */
static int create_activity_tables(struct trace_db *db, struct err *e)
{
	for (int i = 0; i < TRACE_SCHEMA_COUNT; i++) {
		const struct trace_schema_table *t = &trace_schema_tables[i];
		char cols[2048], sql[2200];
		if (column_list(t, true, " INTEGER", cols, sizeof cols) < 0) {
			err_set(e, db->path, 0, 0, "trace schema: %s: column list too long", t->table);
			return -EINVAL;
		}
		snprintf(sql, sizeof sql, "CREATE TABLE %s (%s);", t->table, cols);
		int rc = exec(db, sql, e);
		if (rc)
			return rc;
	}
	return 0;
}

static int prepare_one(struct trace_db *db, const struct trace_schema_table *t, int rows,
		       sqlite3_stmt **out, struct err *e)
{
	char columns[1024];
	if (column_list(t, false, "", columns, sizeof columns) < 0) {
		err_set(e, db->path, 0, 0, "trace schema: %s: column list too long", t->table);
		return -EINVAL;
	}
	int ncol = t->n_written;
	size_t cap = strlen(t->table) + strlen(columns) + 64 + (size_t)rows * (size_t)ncol * 2 +
		     (size_t)rows * 4;
	char *sql = malloc(cap);
	if (!sql) {
		err_set(e, db->path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	size_t p = (size_t)snprintf(sql, cap, "INSERT INTO %s (%s) VALUES ", t->table, columns);
	for (int r = 0; r < rows; r++) {
		sql[p++] = r ? ',' : ' ';
		sql[p++] = '(';
		for (int c = 0; c < ncol; c++) {
			if (c)
				sql[p++] = ',';
			sql[p++] = '?';
		}
		sql[p++] = ')';
	}
	sql[p] = '\0';
	int rc = 0;
	if (sqlite3_prepare_v3(db->sql, sql, (int)p, SQLITE_PREPARE_PERSISTENT, out, NULL) !=
	    SQLITE_OK)
		rc = sql_fail(db, e, "prepare");
	free(sql);
	return rc;
}

static int prepare_rowbuf(struct trace_db *db, struct rowbuf *b, const struct trace_schema_table *t,
			  struct err *e)
{
	b->ncol = t->n_written;
	b->n = 0;
	int max_params = sqlite3_limit(db->sql, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
	b->rows = max_params / b->ncol < ROWBUF_ROWS ? max_params / b->ncol : ROWBUF_ROWS;
	if (b->rows < 1)
		b->rows = 1;
	b->table = t;
	/* the many-row statement when the first full batch needs it: parsing it costs more than a
	 * small import */
	return prepare_one(db, t, 1, &b->one, e);
}

/* Bind rows [0, nrows) of b into s starting at row 0 of the statement, and run it. */
static int rowbuf_run(struct trace_db *db, struct rowbuf *b, sqlite3_stmt *s, int first,
		      int nrows, struct err *e)
{
	int param = 1;
	for (int r = first; r < first + nrows; r++) {
		const int64_t *v = &b->vals[r * b->ncol];
		uint32_t nulls = b->nulls[r];
		for (int c = 0; c < b->ncol; c++, param++) {
			if (nulls & (1u << c))
				sqlite3_bind_null(s, param);
			else
				sqlite3_bind_int64(s, param, v[c]);
		}
	}
	int r = sqlite3_step(s);
	sqlite3_reset(s);
	if (r != SQLITE_DONE)
		return sql_fail(db, e, "insert");
	return 0;
}

static int rowbuf_flush(struct trace_db *db, struct rowbuf *b, struct err *e)
{
	int rc = 0;
	if (b->n == b->rows) {
		if (!b->many)
			rc = prepare_one(db, b->table, b->rows, &b->many, e);
		if (!rc)
			rc = rowbuf_run(db, b, b->many, 0, b->rows, e);
	} else {
		for (int r = 0; r < b->n && !rc; r++)
			rc = rowbuf_run(db, b, b->one, r, 1, e);
	}
	b->n = 0; /* rows buffered at an error are lost with it */
	return rc;
}

int trace_db_create(struct trace_db **out, const char *path, const struct trace_db_opts *opts,
		    struct err *e)
{
	int rc = 0;
	bool created = false;
	struct trace_db *db = NULL;
	if (!out || !path || !path[0]) {
		err_set(e, NULL, 0, 0, "trace_db_create: no output path");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof db->path) {
		err_set(e, NULL, 0, 0, "output path is too long");
		return -EINVAL;
	}
	db = calloc(1, sizeof *db);
	if (!db) {
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	snprintf(db->path, sizeof db->path, "%s", path);
	if (opts)
		db->opts = *opts;
	opts_defaults(&db->opts);
	arena_init(&db->strings, (size_t)db->opts.max_string_bytes + 1024 * 1024);

	bool in_memory = strcmp(path, ":memory:") == 0;
	struct stat stbuf;
	/* An empty regular file is a new database to SQLite: the temporary of an atomic output
	 * (util/outfile.h) is taken as it is, never removed and created again. */
	bool empty_file = !in_memory && stat(path, &stbuf) == 0 && S_ISREG(stbuf.st_mode) &&
			  stbuf.st_size == 0;
	if (!in_memory && !empty_file && stat(path, &stbuf) == 0) {
		if (!db->opts.overwrite) {
			err_set(e, path, 0, 0, "file exists (use --force to replace it)");
			rc = -EEXIST;
			goto out;
		}
		if (!S_ISREG(stbuf.st_mode)) {
			err_set(e, path, 0, 0, "not a regular file");
			rc = -EINVAL;
			goto out;
		}
		remove_files(path);
	}
	created = !in_memory;
	if (sqlite3_open_v2(path, &db->sql,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		err_set(e, path, 0, 0, "cannot create database: %s",
			db->sql ? sqlite3_errmsg(db->sql) : "out of memory");
		rc = -EIO;
		goto out;
	}
	/* Speed over durability against OS crashes: a process crash still keeps committed batches
	 * in WAL mode; in the default mode a failed writer deletes its file. */
	rc = exec(db,
		  db->opts.crash_safe
			  ? "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
			    " PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;"
			  : "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			    " PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;"
			    " PRAGMA locking_mode=EXCLUSIVE;",
		  e);
	if (rc)
		goto out;
	rc = exec(db, "BEGIN", e);
	if (rc)
		goto out;
	rc = exec(db, SCHEMA_SQL_STRINGS, e);
	if (!rc)
		rc = create_activity_tables(db, e);
	if (!rc)
		rc = exec(db, SCHEMA_SQL, e);
	if (rc)
		goto out;
	char meta[512];
	snprintf(meta, sizeof meta,
		 "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT', 'k3sim');"
		 " INSERT INTO META_DATA_EXPORT VALUES ('K3SIM_SCHEMA_VERSION', '%d');"
		 " INSERT INTO META_DATA_EXPORT VALUES ('TIMESTAMP_UNIT', 'ns');",
		 TRACE_DB_SCHEMA_VERSION);
	rc = exec(db, meta, e);
	if (rc)
		goto out;
	rc = exec(db, "COMMIT", e);
	if (rc)
		goto out;
	for (int i = 0; i < ST_COUNT; i++) {
		char sql[1536];
		if (stmt_sql(&STMTS[i], sql, sizeof sql) < 0) {
			err_set(e, db->path, 0, 0, "trace schema: %s: statement too long", STMTS[i].table);
			rc = -EINVAL;
			goto out;
		}
		if (sqlite3_prepare_v3(db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, &db->st[i], NULL) !=
		    SQLITE_OK) {
			rc = sql_fail(db, e, "prepare");
			goto out;
		}
	}
	for (int i = 0; i < BUF_COUNT; i++) {
		rc = prepare_rowbuf(db, &db->buf[i], &trace_schema_tables[i], e);
		if (rc)
			goto out;
	}
	db->slot_count = 1024;
	db->slots = calloc(db->slot_count, sizeof *db->slots);
	if (!db->slots) {
		err_set(e, path, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	*out = db;
	db = NULL;
out:
	if (db) {
		db_free(db);
		if (created)
			remove_files(path);
	}
	return rc;
}

static int commit(struct trace_db *db, struct err *e)
{
	if (!db->in_txn)
		return 0;
	for (int i = 0; i < BUF_COUNT; i++) {
		int rc = rowbuf_flush(db, &db->buf[i], e);
		if (rc)
			return rc;
	}
	db->in_txn = false;
	db->pending_rows = 0;
	if (sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return sql_fail(db, e, "commit");
	return 0;
}

/* Called before each row: open a transaction, or commit a full batch and open the next. */
static int row_begin(struct trace_db *db, struct err *e)
{
	if (db->in_txn && db->pending_rows >= db->opts.batch_rows) {
		int rc = commit(db, e);
		if (rc)
			return rc;
	}
	if (!db->in_txn) {
		if (sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
			return sql_fail(db, e, "begin");
		db->in_txn = true;
	}
	db->pending_rows++;
	return 0;
}

static int step(struct trace_db *db, enum stmt_id id, struct err *e)
{
	sqlite3_stmt *s = db->st[id];
	int r = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (r != SQLITE_DONE)
		return sql_fail(db, e, "insert");
	return 0;
}

int trace_db_flush(struct trace_db *db, struct err *e)
{
	if (!db)
		return -EINVAL;
	return commit(db, e);
}

int trace_db_close(struct trace_db *db, struct err *e)
{
	if (!db)
		return 0;
	int rc = commit(db, e);
	if (!rc && db->opts.crash_safe) {
		/* back to one self-contained file */
		finalize_all(db);
		rc = exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", e);
	}
	finalize_all(db);
	if (sqlite3_close(db->sql) != SQLITE_OK && !rc)
		rc = sql_fail(db, e, "close");
	else
		db->sql = NULL;
	db_free(db);
	return rc;
}

void trace_db_discard(struct trace_db *db)
{
	if (!db)
		return;
	char path[sizeof db->path];
	memcpy(path, db->path, sizeof path);
	db_free(db);
	if (strcmp(path, ":memory:") != 0)
		remove_files(path);
}

const char *trace_db_path(const struct trace_db *db)
{
	return db->path;
}

void trace_db_stats(const struct trace_db *db, struct trace_db_stats *out)
{
	*out = db->stats;
}

/* ---- string interning ---- */

/* 8 bytes per step: kernel names are long (C++ templates), and interning is on the hot path. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = len * k;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	uint64_t w = 0;
	memcpy(&w, s + i, len - i);
	h = (h ^ w) * k;
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static size_t utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	size_t n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

static int grow_slots(struct trace_db *db, struct err *e)
{
	size_t n = db->slot_count * 2;
	struct intern_slot *slots = calloc(n, sizeof *slots);
	if (!slots) {
		err_set(e, db->path, 0, 0, "out of memory interning strings");
		return -ENOMEM;
	}
	for (size_t i = 0; i < db->slot_count; i++) {
		struct intern_slot *o = &db->slots[i];
		if (!o->id)
			continue;
		size_t j = o->hash & (n - 1);
		while (slots[j].id)
			j = (j + 1) & (n - 1);
		slots[j] = *o;
	}
	free(db->slots);
	db->slots = slots;
	db->slot_count = n;
	return 0;
}

/* *text_out (may be NULL) receives the interned copy, which lives as long as db. */
static int intern_len(struct trace_db *db, const char *s, size_t len, int64_t *id_out,
		      const char **text_out, struct err *e)
{
	len = utf8_cut(s, len, (size_t)db->opts.max_string_len_bytes);
	uint64_t h = hash_bytes(s, len);
	size_t mask = db->slot_count - 1;
	size_t j = h & mask;
	for (; db->slots[j].id; j = (j + 1) & mask) {
		struct intern_slot *sl = &db->slots[j];
		if (sl->hash == h && sl->len == len && memcmp(sl->text, s, len) == 0) {
			*id_out = sl->id;
			if (text_out)
				*text_out = sl->text;
			return 0;
		}
	}
	if (db->stats.strings >= db->opts.max_strings) {
		err_set(e, db->path, 0, 0, "too many distinct strings (limit %" PRId64 ")",
			db->opts.max_strings);
		return -ENOSPC;
	}
	if ((int64_t)(db->strings.used_bytes + len) > db->opts.max_string_bytes) {
		err_set(e, db->path, 0, 0, "interned strings exceed %" PRId64 " bytes",
			db->opts.max_string_bytes);
		return -ENOSPC;
	}
	char *copy = arena_strndup(&db->strings, s, len);
	if (!copy) {
		err_set(e, db->path, 0, 0, "interned strings exceed %" PRId64 " bytes",
			db->opts.max_string_bytes);
		return -ENOSPC;
	}
	int64_t id = db->stats.strings + 1;
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_bind_int64(db->st[ST_STRING], P_STRING_id, id);
	sqlite3_bind_text(db->st[ST_STRING], P_STRING_value, copy, (int)len, SQLITE_STATIC);
	rc = step(db, ST_STRING, e);
	if (rc)
		return rc;
	db->slots[j] = (struct intern_slot){.hash = h, .id = id, .text = copy, .len = len};
	db->stats.strings++;
	if ((size_t)db->stats.strings * 2 > db->slot_count) {
		rc = grow_slots(db, e);
		if (rc)
			return rc;
	}
	*id_out = id;
	if (text_out)
		*text_out = copy;
	return 0;
}

int trace_db_intern(struct trace_db *db, const char *s, int64_t *id_out, struct err *e)
{
	if (!db || !s || !id_out) {
		err_set(e, NULL, 0, 0, "trace_db_intern: NULL argument");
		return -EINVAL;
	}
	return intern_len(db, s, strlen(s), id_out, NULL, e);
}

/* ---- short names ---- */

size_t trace_short_name(const char *s, char *buf, size_t n)
{
	static const char anon[] = "(anonymous namespace)";
	size_t len = strlen(s);
	size_t begin = 0, end = len;
	bool have_end = false;
	int depth = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (depth == 0 && c == ' ') {
			begin = i + 1;
			have_end = false;
		} else if (depth == 0 && c == ':' && s[i + 1] == ':') {
			begin = i + 2;
			have_end = false;
			i++;
		} else if (c == '<') {
			if (depth == 0 && !have_end) {
				end = i;
				have_end = true;
			}
			depth++;
		} else if (c == '>') {
			if (depth > 0)
				depth--;
		} else if (c == '(') {
			if (depth == 0 && strncmp(s + i, anon, sizeof anon - 1) == 0) {
				i += sizeof anon - 2;
				continue;
			}
			if (depth == 0) {
				if (!have_end) {
					end = i;
					have_end = true;
				}
				break;
			}
			depth++;
		} else if (c == ')') {
			if (depth > 0)
				depth--;
		}
	}
	if (!have_end)
		end = len;
	if (begin >= end) {
		begin = 0;
		end = len;
	}
	size_t out = end - begin;
	if (n > 0) {
		size_t k = out < n - 1 ? out : n - 1;
		memcpy(buf, s + begin, k);
		buf[k] = '\0';
	}
	return out;
}

/* ---- rows ---- */

static void bind_i64(sqlite3_stmt *s, int i, int64_t v)
{
	sqlite3_bind_int64(s, i, v);
}

static void bind_opt_i64(sqlite3_stmt *s, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(s, i, v);
}

static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
	if (t)
		sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT);
}

static int bad_arg(struct err *e, const char *what)
{
	err_set(e, NULL, 0, 0, "%s", what);
	return -EINVAL;
}

static int short_id_of(struct trace_db *db, const char *name, int64_t name_id, int64_t *short_id,
		       struct err *e)
{
	if ((size_t)name_id < db->short_cap && db->short_of[name_id]) {
		*short_id = db->short_of[name_id];
		return 0;
	}
	int rc;
	char tmp[512];
	size_t need = trace_short_name(name, tmp, sizeof tmp);
	if (need < sizeof tmp) {
		rc = intern_len(db, tmp, need, short_id, NULL, e);
	} else {
		char *big = malloc(need + 1);
		if (!big) {
			err_set(e, db->path, 0, 0, "out of memory");
			return -ENOMEM;
		}
		trace_short_name(name, big, need + 1);
		rc = intern_len(db, big, need, short_id, NULL, e);
		free(big);
	}
	if (rc)
		return rc;
	if ((size_t)name_id >= db->short_cap) {
		size_t cap = db->short_cap ? db->short_cap : 1024;
		while (cap <= (size_t)name_id)
			cap *= 2;
		int64_t *p = realloc(db->short_of, cap * sizeof *p);
		if (!p) {
			err_set(e, db->path, 0, 0, "out of memory");
			return -ENOMEM;
		}
		memset(p + db->short_cap, 0, (cap - db->short_cap) * sizeof *p);
		db->short_of = p;
		db->short_cap = cap;
	}
	db->short_of[name_id] = *short_id;
	return 0;
}

static int kernel_names(struct trace_db *db, const struct trace_kernel *k, int64_t *name_id,
			int64_t *short_id, struct err *e)
{
	int rc;
	if (db->last_name && !k->short_name &&
	    (db->last_name == k->name || strcmp(db->last_name, k->name) == 0)) {
		*name_id = db->last_name_id;
		*short_id = db->last_short_id;
		return 0;
	}
	size_t len = strlen(k->name);
	const char *copy = NULL;
	rc = intern_len(db, k->name, len, name_id, &copy, e);
	if (rc)
		return rc;
	if (k->short_name)
		return trace_db_intern(db, k->short_name, short_id, e);
	rc = short_id_of(db, k->name, *name_id, short_id, e);
	if (rc)
		return rc;
	if (strlen(copy) == len) { /* not cut: the interned copy can stand for the name */
		db->last_name = copy;
		db->last_name_id = *name_id;
		db->last_short_id = *short_id;
	}
	return 0;
}

/* The next free row of buffer b (committing or flushing as needed); its NULL mask is clear. */
static int64_t *buf_row(struct trace_db *db, enum buf_id id, uint32_t **nulls, struct err *e,
			int *rc)
{
	*rc = row_begin(db, e);
	if (*rc)
		return NULL;
	struct rowbuf *b = &db->buf[id];
	if (b->n == b->rows) {
		*rc = rowbuf_flush(db, b, e);
		if (*rc)
			return NULL;
	}
	*nulls = &b->nulls[b->n];
	**nulls = 0;
	return &b->vals[b->n++ * b->ncol];
}

/* A buffered row from a record, column by column as trace/db/schema.h lists them: `rec` is the
 * record, ID columns take the local string id named in the list, and the NULL rules are the
 * list's (INTZ: 0, INTN: negative, IDZ: 0). */
#define PUT_HEAD(f) v[c++] = (int64_t)rec->f;
#define PUT_INT(f) v[c++] = (int64_t)rec->f;
#define PUT_RAW(f) v[c++] = (int64_t)rec->f;
#define PUT_INTZ(f) *nulls |= rec->f == 0 ? 1u << c : 0; v[c++] = (int64_t)rec->f;
#define PUT_INTN(f) *nulls |= rec->f < 0 ? 1u << c : 0; v[c++] = (int64_t)rec->f;
#define PUT_ID(f) v[c++] = f;
#define PUT_IDZ(f) *nulls |= f == 0 ? 1u << c : 0; v[c++] = f;
#define PUT_NONE(f)
#define PUT(col, f, how, absent) PUT_##how(f)

int trace_db_add_kernel(struct trace_db *db, const struct trace_kernel *k, struct err *e)
{
	if (!db || !k || !k->name)
		return bad_arg(e, "trace_db_add_kernel: NULL db, record or name");
	int64_t name_id, short_id, mangled_id = 0;
	int rc = kernel_names(db, k, &name_id, &short_id, e);
	if (rc)
		return rc;
	if (k->mangled_name) {
		rc = trace_db_intern(db, k->mangled_name, &mangled_id, e);
		if (rc)
			return rc;
	}
	uint32_t *nulls;
	int64_t *v = buf_row(db, BUF_KERNEL, &nulls, e, &rc);
	if (!v)
		return rc;
	const __typeof__(*k) *rec = k;
	int c = 0;
	TRACE_KERNEL_COLUMNS(PUT)
	(void)c;
	db->stats.kernels++;
	return 0;
}

int trace_db_add_memcpy(struct trace_db *db, const struct trace_memcpy *m, struct err *e)
{
	if (!db || !m)
		return bad_arg(e, "trace_db_add_memcpy: NULL argument");
	int rc;
	uint32_t *nulls;
	int64_t *v = buf_row(db, BUF_MEMCPY, &nulls, e, &rc);
	if (!v)
		return rc;
	const __typeof__(*m) *rec = m;
	int c = 0;
	TRACE_MEMCPY_COLUMNS(PUT)
	(void)c;
	db->stats.memcpys++;
	return 0;
}

int trace_db_add_memset(struct trace_db *db, const struct trace_memset *m, struct err *e)
{
	if (!db || !m)
		return bad_arg(e, "trace_db_add_memset: NULL argument");
	int rc;
	uint32_t *nulls;
	int64_t *v = buf_row(db, BUF_MEMSET, &nulls, e, &rc);
	if (!v)
		return rc;
	const __typeof__(*m) *rec = m;
	int c = 0;
	TRACE_MEMSET_COLUMNS(PUT)
	(void)c;
	db->stats.memsets++;
	return 0;
}

int trace_db_add_api(struct trace_db *db, const struct trace_api *a, struct err *e)
{
	if (!db || !a || !a->name)
		return bad_arg(e, "trace_db_add_api: NULL db, record or name");
	int64_t name_id;
	int rc = trace_db_intern(db, a->name, &name_id, e);
	if (rc)
		return rc;
	uint32_t *nulls;
	int64_t *v = buf_row(db, BUF_API, &nulls, e, &rc);
	if (!v)
		return rc;
	const __typeof__(*a) *rec = a;
	int c = 0;
	TRACE_API_COLUMNS(PUT)
	(void)c;
	db->stats.api_calls++;
	return 0;
}

int trace_db_add_nvtx(struct trace_db *db, const struct trace_nvtx *n, struct err *e)
{
	if (!db || !n || !n->text)
		return bad_arg(e, "trace_db_add_nvtx: NULL db, record or text");
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_NVTX];
	size_t len = utf8_cut(n->text, strlen(n->text), (size_t)db->opts.max_string_len_bytes);
	bind_i64(s, P_NVTX_start, n->start_ns);
	if (n->type != TRACE_NVTX_MARK)
		bind_i64(s, P_NVTX_end, n->end_ns);
	bind_i64(s, P_NVTX_eventType, n->type);
	bind_opt_i64(s, P_NVTX_rangeId, n->range_id);
	bind_opt_i64(s, P_NVTX_category, n->category);
	if (n->has_color)
		bind_i64(s, P_NVTX_color, n->color_argb);
	sqlite3_bind_text(s, P_NVTX_text, n->text, (int)len, SQLITE_TRANSIENT);
	bind_i64(s, P_NVTX_globalTid, n->global_tid);
	bind_opt_i64(s, P_NVTX_endGlobalTid, n->end_global_tid);
	bind_opt_i64(s, P_NVTX_domainId, n->domain_id);
	rc = step(db, ST_NVTX, e);
	if (!rc)
		db->stats.nvtx++;
	return rc;
}

int trace_db_add_gpu(struct trace_db *db, const struct trace_gpu *g, struct err *e)
{
	if (!db || !g)
		return bad_arg(e, "trace_db_add_gpu: NULL argument");
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_GPU];
	bind_i64(s, P_GPU_id, g->id);
	bind_i64(s, P_GPU_isDiscrete, 1);
	bind_text(s, P_GPU_name, g->name);
	bind_text(s, P_GPU_busLocation, g->bus_location);
	bind_i64(s, P_GPU_l2CacheSize, g->l2_cache_bytes);
	bind_i64(s, P_GPU_totalMemory, g->total_memory_bytes);
	bind_i64(s, P_GPU_memoryBandwidth, g->memory_bandwidth_bytes_per_s);
	bind_i64(s, P_GPU_clockRate, g->clock_hz);
	bind_i64(s, P_GPU_smCount, g->sm_count);
	bind_text(s, P_GPU_uuid, g->uuid);
	bind_text(s, P_GPU_chipName, g->chip_name);
	bind_i64(s, P_GPU_cuDevice, g->cu_device);
	bind_i64(s, P_GPU_computeMajor, g->compute_major);
	bind_i64(s, P_GPU_computeMinor, g->compute_minor);
	bind_i64(s, P_GPU_maxRegistersPerBlock, g->max_registers_per_block);
	bind_i64(s, P_GPU_maxShmemPerBlock, g->max_shmem_per_block_bytes);
	bind_i64(s, P_GPU_maxShmemPerMultiprocessor, g->max_shmem_per_sm_bytes);
	bind_i64(s, P_GPU_maxRegistersPerMultiprocessor, g->max_registers_per_sm);
	bind_i64(s, P_GPU_threadsPerWarp, g->threads_per_warp);
	bind_i64(s, P_GPU_asyncEngines, g->async_engines);
	bind_i64(s, P_GPU_maxWarpsPerMultiprocessor, g->max_warps_per_sm);
	bind_i64(s, P_GPU_maxBlocksPerMultiprocessor, g->max_blocks_per_sm);
	bind_i64(s, P_GPU_maxThreadsPerBlock, g->max_threads_per_block);
	rc = step(db, ST_GPU, e);
	if (!rc)
		db->stats.gpus++;
	return rc;
}

int trace_db_add_process(struct trace_db *db, int64_t global_pid, int64_t pid, const char *name,
			 struct err *e)
{
	if (!db)
		return bad_arg(e, "trace_db_add_process: NULL db");
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_PROCESS];
	bind_i64(s, P_PROCESS_globalPid, global_pid);
	bind_i64(s, P_PROCESS_pid, pid);
	bind_text(s, P_PROCESS_name, name);
	return step(db, ST_PROCESS, e);
}

int trace_db_add_dropped(struct trace_db *db, const struct trace_dropped *d, struct err *e)
{
	if (!db || !d || !d->source)
		return bad_arg(e, "trace_db_add_dropped: NULL db, record or source");
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_DROPPED];
	bind_text(s, P_DROPPED_source, d->source);
	if (d->device_id >= 0)
		bind_i64(s, P_DROPPED_deviceId, d->device_id);
	if (d->context_id >= 0)
		bind_i64(s, P_DROPPED_contextId, d->context_id);
	if (d->stream_id >= 0)
		bind_i64(s, P_DROPPED_streamId, d->stream_id);
	bind_i64(s, P_DROPPED_count, d->count);
	rc = step(db, ST_DROPPED, e);
	if (!rc)
		db->stats.dropped_records += d->count;
	return rc;
}

int trace_db_add_kernel_metric(struct trace_db *db, const struct trace_kernel_metric *m,
			       struct err *e)
{
	if (!db || !m || !m->metric)
		return bad_arg(e, "trace_db_add_kernel_metric: NULL db, record or metric");
	int64_t name_id = 0;
	int rc = 0;
	if (m->kernel_name) {
		rc = trace_db_intern(db, m->kernel_name, &name_id, e);
		if (rc)
			return rc;
	}
	rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_METRIC];
	bind_i64(s, P_METRIC_globalPid, m->global_pid);
	bind_i64(s, P_METRIC_deviceId, m->device_id);
	bind_i64(s, P_METRIC_correlationId, m->correlation_id);
	bind_opt_i64(s, P_METRIC_nameId, name_id);
	bind_text(s, P_METRIC_metric, m->metric);
	sqlite3_bind_double(s, P_METRIC_value, m->value);
	bind_text(s, P_METRIC_unit, m->unit);
	rc = step(db, ST_METRIC, e);
	if (!rc)
		db->stats.metrics++;
	return rc;
}

int trace_db_set_capture(struct trace_db *db, const char *key, const char *value, struct err *e)
{
	if (!db || !key)
		return bad_arg(e, "trace_db_set_capture: NULL db or key");
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_CAPTURE];
	bind_text(s, P_CAPTURE_name, key);
	bind_text(s, P_CAPTURE_value, value);
	return step(db, ST_CAPTURE, e);
}

int trace_db_add_device_map(struct trace_db *db, const struct trace_device_map *m, struct err *e)
{
	if (!db || !m)
		return bad_arg(e, "trace_db_add_device_map: NULL argument");
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_DEVICE_MAP];
	bind_i64(s, P_DEVICE_MAP_globalPid, m->global_pid);
	bind_i64(s, P_DEVICE_MAP_cudaId, m->cuda_id);
	bind_i64(s, P_DEVICE_MAP_deviceId, m->device_id);
	bind_text(s, P_DEVICE_MAP_uuid, m->uuid && *m->uuid ? m->uuid : NULL);
	bind_text(s, P_DEVICE_MAP_host, m->host);
	if (m->rank >= 0)
		bind_i64(s, P_DEVICE_MAP_rank, m->rank);
	return step(db, ST_DEVICE_MAP, e);
}

/* ---- rewrites of rows already written (importers that learn a fact late) ---- */

static int exec_changes(struct trace_db *db, const char *sql, int64_t a, int64_t b, int64_t *changes,
			struct err *e)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db->sql, sql, -1, &s, NULL) != SQLITE_OK)
		return sql_fail(db, e, "update");
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	int r = sqlite3_step(s);
	sqlite3_finalize(s);
	if (r != SQLITE_DONE)
		return sql_fail(db, e, "update");
	if (changes)
		*changes += sqlite3_changes64(db->sql);
	return 0;
}

int trace_db_rewrite_pid(struct trace_db *db, int64_t from_pid, int64_t to_pid, int64_t *rows,
			 struct err *e)
{
	static const char *const sql[] = {
#define PID_COL(t, c)                                                                             \
	"UPDATE " t " SET " c " = (" c " & ~(16777215 << 24)) | (?2 << 24) WHERE ((" c " >> 24) &" \
	" 16777215) = ?1"
		PID_COL("CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"),
		PID_COL("CUPTI_ACTIVITY_KIND_MEMCPY", "globalPid"),
		PID_COL("CUPTI_ACTIVITY_KIND_MEMSET", "globalPid"),
		PID_COL("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"),
		PID_COL("NVTX_EVENTS", "globalTid"),
		PID_COL("NVTX_EVENTS", "endGlobalTid"),
		PID_COL("K3SIM_KERNEL_METRICS", "globalPid"),
		PID_COL("K3SIM_DEVICE_MAP", "globalPid"),
		PID_COL("K3SIM_GPU_METRICS", "globalPid"),
		PID_COL("PROCESSES", "globalPid"),
#undef PID_COL
		"UPDATE PROCESSES SET pid = ?2 WHERE pid = ?1",
	};
	if (!db || from_pid < 0 || from_pid > 0xffffff || to_pid < 0 || to_pid > 0xffffff)
		return bad_arg(e, "trace_db_rewrite_pid: bad process id");
	int rc = commit(db, e);
	if (rc)
		return rc;
	int64_t n = 0;
	rc = exec(db, "BEGIN", e);
	for (size_t i = 0; i < sizeof sql / sizeof sql[0] && !rc; i++)
		rc = exec_changes(db, sql[i], from_pid, to_pid, i < 4 ? &n : NULL, e);
	if (!rc)
		rc = exec(db, "COMMIT", e);
	if (!rc && rows)
		*rows = n;
	return rc;
}

static const char *const TIME_TABLES[] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
	"CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
};

int trace_db_shift_time(struct trace_db *db, int64_t delta_ns, struct err *e)
{
	if (!db)
		return bad_arg(e, "trace_db_shift_time: NULL db");
	int rc = commit(db, e);
	if (rc || delta_ns == 0)
		return rc;
	char sql[256];
	/* every shifted time must stay an int64 (SQLite would turn it into a float silently) */
	for (size_t i = 0; i < sizeof TIME_TABLES / sizeof TIME_TABLES[0]; i++) {
		snprintf(sql, sizeof sql, "SELECT min(start), max(start), min(\"end\"), max(\"end\") FROM %s",
			 TIME_TABLES[i]);
		sqlite3_stmt *s;
		if (sqlite3_prepare_v2(db->sql, sql, -1, &s, NULL) != SQLITE_OK)
			return sql_fail(db, e, "select");
		if (sqlite3_step(s) == SQLITE_ROW)
			for (int c = 0; c < 4; c++) {
				int64_t v = sqlite3_column_int64(s, c), out;
				if (sqlite3_column_type(s, c) != SQLITE_NULL &&
				    __builtin_add_overflow(v, delta_ns, &out)) {
					sqlite3_finalize(s);
					err_set(e, db->path, 0, 0,
						"shifting %s by %" PRId64 " ns leaves the int64 ns range",
						TIME_TABLES[i], delta_ns);
					return -ERANGE;
				}
			}
		sqlite3_finalize(s);
	}
	sqlite3_stmt *g;
	if (sqlite3_prepare_v2(db->sql, "SELECT min(timestamp), max(timestamp) FROM K3SIM_GPU_METRICS",
			       -1, &g, NULL) != SQLITE_OK)
		return sql_fail(db, e, "select");
	if (sqlite3_step(g) == SQLITE_ROW)
		for (int c = 0; c < 2; c++) {
			int64_t out;
			if (sqlite3_column_type(g, c) != SQLITE_NULL &&
			    __builtin_add_overflow(sqlite3_column_int64(g, c), delta_ns, &out)) {
				sqlite3_finalize(g);
				err_set(e, db->path, 0, 0, "shifting K3SIM_GPU_METRICS by %" PRId64
					" ns leaves the int64 ns range", delta_ns);
				return -ERANGE;
			}
		}
	sqlite3_finalize(g);
	rc = exec(db, "BEGIN", e);
	for (size_t i = 0; i < sizeof TIME_TABLES / sizeof TIME_TABLES[0] && !rc; i++) {
		snprintf(sql, sizeof sql,
			 "UPDATE %s SET start = start + ?1, \"end\" = \"end\" + ?1",
			 TIME_TABLES[i]);
		rc = exec_changes(db, sql, delta_ns, 0, NULL, e);
	}
	if (!rc)
		rc = exec_changes(db, "UPDATE K3SIM_GPU_METRICS SET timestamp = timestamp + ?1",
				  delta_ns, 0, NULL, e);
	if (!rc)
		rc = exec(db, "COMMIT", e);
	return rc;
}

static void bind_opt_double(sqlite3_stmt *s, int i, bool has, double v)
{
	if (has)
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

int trace_db_add_gpu_metric(struct trace_db *db, const struct trace_gpu_metric *m, struct err *e)
{
	if (!db || !m)
		return bad_arg(e, "trace_db_add_gpu_metric: NULL db or record");
	int rc = row_begin(db, e);
	if (rc)
		return rc;
	sqlite3_stmt *s = db->st[ST_GPU_METRIC];
	bind_i64(s, P_GPU_METRIC_timestamp, m->timestamp_ns);
	bind_i64(s, P_GPU_METRIC_globalPid, m->global_pid);
	bind_i64(s, P_GPU_METRIC_deviceId, m->device_id);
	bind_opt_double(s, P_GPU_METRIC_smClockMHz, m->has_sm, m->sm_mhz);
	bind_opt_double(s, P_GPU_METRIC_memClockMHz, m->has_mem, m->mem_mhz);
	bind_opt_double(s, P_GPU_METRIC_powerW, m->has_power, m->power_w);
	bind_opt_double(s, P_GPU_METRIC_temperatureC, m->has_temp, m->temp_c);
	bind_opt_double(s, P_GPU_METRIC_powerAvgW, m->has_power_avg, m->power_avg_w);
	if (m->has_throttle)
		/* a bit mask: stored as the same 64 bits, read back with (uint64_t) */
		sqlite3_bind_int64(s, P_GPU_METRIC_throttleReasons, (int64_t)m->throttle_reasons);
	else
		sqlite3_bind_null(s, P_GPU_METRIC_throttleReasons);
	rc = step(db, ST_GPU_METRIC, e);
	if (!rc)
		db->stats.gpu_metrics++;
	return rc;
}

const char *trace_throttle_names(uint64_t reasons, char *buf, size_t n)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{TRACE_THROTTLE_GPU_IDLE, "idle"},
		{TRACE_THROTTLE_APP_CLOCKS, "app_clocks"},
		{TRACE_THROTTLE_SW_POWER_CAP, "sw_power_cap"},
		{TRACE_THROTTLE_HW_SLOWDOWN, "hw_slowdown"},
		{TRACE_THROTTLE_SYNC_BOOST, "sync_boost"},
		{TRACE_THROTTLE_SW_THERMAL, "sw_thermal"},
		{TRACE_THROTTLE_HW_THERMAL, "hw_thermal"},
		{TRACE_THROTTLE_HW_POWER_BRAKE, "hw_power_brake"},
		{TRACE_THROTTLE_DISPLAY_CLOCKS, "display_clocks"},
	};
	if (!n)
		return buf;
	buf[0] = '\0';
	size_t used = 0;
	uint64_t known = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		known |= names[i].bit;
		if (!(reasons & names[i].bit))
			continue;
		int w = snprintf(buf + used, n - used, "%s%s", used ? "|" : "", names[i].name);
		if (w < 0 || (size_t)w >= n - used) {
			buf[used] = '\0'; /* whole names only */
			return buf;
		}
		used += (size_t)w;
	}
	if (reasons & ~known) {
		int w = snprintf(buf + used, n - used, "%s0x%llx", used ? "|" : "",
				 (unsigned long long)(reasons & ~known));
		if (w > 0 && (size_t)w < n - used)
			used += (size_t)w;
		else
			buf[used] = '\0';
	}
	if (!used)
		snprintf(buf, n, "none");
	return buf;
}
