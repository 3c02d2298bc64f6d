/* Sweep results in SQLite: writing in one transaction, reading back, CSV export and merging. */
#include "sweep/sweepdb.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FORMAT "k3sim-sweep 1"
enum { SQL_MAX = 8192 };

static int db_err(struct sqlite3 *db, const char *path, struct err *e, const char *what)
{
	err_set(e, path, 0, 0, "%s: %s", what, db ? sqlite3_errmsg(db) : "cannot open");
	return -EIO;
}

void sweepdb_meta_init(struct sweepdb_meta *meta, const struct sweep_spec *sp, int64_t shard_index,
                       int64_t shard_count)
{
	memset(meta, 0, sizeof *meta);
	snprintf(meta->scenario, sizeof meta->scenario, "%s", sp->base.name);
	snprintf(meta->scenario_file, sizeof meta->scenario_file, "%s", sp->base.file);
	meta->spec = sp->description;
	meta->spec_hash = sp->hash;
	meta->points_total = sp->points;
	meta->shard_count = shard_count;
	meta->shard_index = shard_count > 1 ? shard_index : -1;
}

/* "CREATE TABLE name (point INTEGER PRIMARY KEY, model TEXT, ...)" */
static void create_sql(char *sql, size_t cap, const char *table)
{
	const struct sweep_column *c = sweep_columns();
	size_t len = (size_t)snprintf(sql, cap, "CREATE TABLE %s (", table);
	for (int i = 0; i < sweep_n_columns() && len < cap; i++)
		len += (size_t)snprintf(sql + len, cap - len, "%s%s %s%s", i ? ", " : "", c[i].name,
		                        c[i].type == SWEEP_COL_INT    ? "INTEGER"
		                        : c[i].type == SWEEP_COL_REAL ? "REAL"
		                                                      : "TEXT",
		                        i == 0 ? " PRIMARY KEY" : "");
	if (len < cap)
		snprintf(sql + len, cap - len, ")");
}

/* "a, b, c" */
static void column_list(char *sql, size_t cap, const char *prefix)
{
	const struct sweep_column *c = sweep_columns();
	size_t len = 0;
	sql[0] = 0;
	for (int i = 0; i < sweep_n_columns() && len < cap; i++)
		len += (size_t)snprintf(sql + len, cap - len, "%s%s%s", i ? ", " : "", prefix, c[i].name);
}

int sweepdb_exec(struct sweepdb *w, const char *sql, struct err *e)
{
	char *msg = NULL;
	if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(e, w->path, 0, 0, "sqlite: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

int sweepdb_set_meta(struct sweepdb *w, const char *key, const char *value, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(w->db, w->path, e, "meta");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(w->db, w->path, e, "meta");
	sqlite3_finalize(st);
	return rc;
}

static int prepare_insert(struct sweepdb *w, const char *table, struct err *e)
{
	char sql[SQL_MAX], cols[SQL_MAX];
	column_list(cols, sizeof cols, "");
	size_t len = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s (%s) VALUES (", table, cols);
	for (int i = 0; i < sweep_n_columns() && len < sizeof sql; i++)
		len += (size_t)snprintf(sql + len, sizeof sql - len, "%s?", i ? "," : "");
	if (len < sizeof sql)
		snprintf(sql + len, sizeof sql - len, ")");
	if (w->insert)
		sqlite3_finalize(w->insert);
	w->insert = NULL;
	if (sqlite3_prepare_v2(w->db, sql, -1, &w->insert, NULL) != SQLITE_OK)
		return db_err(w->db, w->path, e, "prepare insert");
	w->table = table;
	return 0;
}

static int write_meta(struct sweepdb *w, const struct sweepdb_meta *meta, const char *shards, struct err *e)
{
	char buf[64], when[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	int rc;
	if ((rc = sweepdb_set_meta(w, "format", FORMAT, e)) < 0 ||
	    (rc = sweepdb_set_meta(w, "scenario", meta->scenario, e)) < 0 ||
	    (rc = sweepdb_set_meta(w, "scenario_file", meta->scenario_file, e)) < 0 ||
	    (rc = sweepdb_set_meta(w, "spec", meta->spec ? meta->spec : "", e)) < 0)
		return rc;
	snprintf(buf, sizeof buf, "%016" PRIx64, meta->spec_hash);
	if ((rc = sweepdb_set_meta(w, "spec_hash", buf, e)) < 0)
		return rc;
	snprintf(buf, sizeof buf, "%lld", (long long)meta->points_total);
	if ((rc = sweepdb_set_meta(w, "points_total", buf, e)) < 0)
		return rc;
	snprintf(buf, sizeof buf, "%lld", (long long)meta->shard_count);
	if ((rc = sweepdb_set_meta(w, "shard_count", buf, e)) < 0)
		return rc;
	if ((rc = sweepdb_set_meta(w, "shards", shards, e)) < 0)
		return rc;
	return sweepdb_set_meta(w, "created_utc", when, e);
}

/* Opens the temporary file of path with the schema; shards: the "shards" meta value. */
static int create_with_shards(struct sweepdb *w, const char *path, const struct sweepdb_meta *meta,
                              const char *shards, const struct outfile_opts *oo, struct err *e)
{
	memset(w, 0, sizeof *w);
	if (strlen(path) >= sizeof w->path) {
		err_set(e, path, 0, 0, "path too long");
		return -ENAMETOOLONG;
	}
	snprintf(w->path, sizeof w->path, "%s", path);
	struct outfile_opts o = {0};
	if (oo)
		o = *oo;
	o.sqlite = true;
	int orc = outfile_open(&w->out, path, &o, e);
	if (orc < 0)
		return orc;
	if (sqlite3_open_v2(outfile_tmp_path(&w->out), &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
	                    NULL) != SQLITE_OK) {
		int rc = db_err(w->db, w->path, e, "cannot create the database");
		sweepdb_abort(w);
		return rc;
	}
	char sql[SQL_MAX];
	create_sql(sql, sizeof sql, "points");
	int rc;
	if ((rc = sweepdb_exec(w, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", e)) < 0 ||
	    (rc = sweepdb_exec(w, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)", e)) < 0 ||
	    (rc = sweepdb_exec(w, sql, e)) < 0 || (rc = write_meta(w, meta, shards, e)) < 0 ||
	    (rc = prepare_insert(w, "points", e)) < 0) {
		sweepdb_abort(w);
		return rc;
	}
	return 0;
}

static void shards_text(char *buf, size_t cap, int64_t shard_index, int64_t shard_count)
{
	size_t len = 0;
	buf[0] = 0;
	if (shard_index >= 0) {
		snprintf(buf, cap, "%lld", (long long)shard_index + 1);
		return;
	}
	for (int64_t k = 1; k <= shard_count && len < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld", k > 1 ? "," : "", (long long)k);
}

int sweepdb_create(struct sweepdb *w, const char *path, const struct sweepdb_meta *meta,
                   const struct outfile_opts *oo, struct err *e)
{
	char shards[4096];
	shards_text(shards, sizeof shards, meta->shard_index, meta->shard_count);
	return create_with_shards(w, path, meta, shards, oo, e);
}

int sweepdb_use_table(struct sweepdb *w, const char *table, struct err *e)
{
	if (strcmp(table, "points") != 0) {
		char sql[SQL_MAX];
		create_sql(sql, sizeof sql, table);
		int rc = sweepdb_exec(w, sql, e);
		if (rc < 0)
			return rc;
	}
	return prepare_insert(w, table, e);
}

int sweepdb_add(struct sweepdb *w, const struct sweep_row *rows, int64_t n, struct err *e)
{
	const struct sweep_column *c = sweep_columns();
	const int nc = sweep_n_columns();
	sqlite3_stmt *st = w->insert;
	for (int64_t r = 0; r < n; r++) {
		const char *base = (const char *)&rows[r];
		for (int i = 0; i < nc; i++) {
			const void *p = base + c[i].offset;
			if (c[i].output && !rows[r].ok) {
				sqlite3_bind_null(st, i + 1);
				continue;
			}
			switch (c[i].type) {
			case SWEEP_COL_INT: {
				int64_t v;
				memcpy(&v, p, sizeof v);
				sqlite3_bind_int64(st, i + 1, v);
				break;
			}
			case SWEEP_COL_REAL: {
				double v;
				memcpy(&v, p, sizeof v);
				sqlite3_bind_double(st, i + 1, v);
				break;
			}
			case SWEEP_COL_TEXT:
				sqlite3_bind_text(st, i + 1, (const char *)p, -1, SQLITE_STATIC);
				break;
			}
		}
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return db_err(w->db, w->path, e, "insert");
	}
	return 0;
}

int sweepdb_sink(void *w, const struct sweep_row *rows, int64_t n, struct err *e)
{
	return sweepdb_add(w, rows, n, e);
}

void sweepdb_abort(struct sweepdb *w)
{
	if (w->insert)
		sqlite3_finalize(w->insert);
	w->insert = NULL;
	if (w->db) {
		sqlite3_close(w->db);
		w->db = NULL;
	}
	outfile_abort(&w->out);
}

int sweepdb_commit(struct sweepdb *w, struct err *e)
{
	int rc = sweepdb_exec(w, "COMMIT", e);
	if (rc < 0) {
		sweepdb_abort(w);
		return rc;
	}
	sqlite3_finalize(w->insert);
	w->insert = NULL;
	if (sqlite3_close(w->db) != SQLITE_OK) {
		rc = db_err(w->db, w->path, e, "close");
		sweepdb_abort(w);
		return rc;
	}
	w->db = NULL;
	return outfile_commit(&w->out, e);
}

/* ---- reading ---- */

static int open_ro(const char *path, sqlite3 **db, struct err *e)
{
	if (access(path, R_OK) != 0) {
		err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
		return -ENOENT;
	}
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		int rc = db_err(*db, path, e, "cannot open");
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	return 0;
}

/* Prepares SELECT of every column of `table` in point order, checking the columns exist. */
static int select_rows(sqlite3 *db, const char *path, const char *table, sqlite3_stmt **st, struct err *e)
{
	char sql[SQL_MAX + 256], cols[SQL_MAX];
	column_list(cols, sizeof cols, "");
	snprintf(sql, sizeof sql, "SELECT %s FROM %.64s ORDER BY point", cols, table);
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		err_set(e, path, 0, 0, "not a k3sim sweep database (table '%s': %s)", table,
		        sqlite3_errmsg(db));
		return -EINVAL;
	}
	return 0;
}

static void row_from_stmt(sqlite3_stmt *st, struct sweep_row *row)
{
	const struct sweep_column *c = sweep_columns();
	memset(row, 0, sizeof *row);
	char *base = (char *)row;
	for (int i = 0; i < sweep_n_columns(); i++) {
		void *p = base + c[i].offset;
		if (sqlite3_column_type(st, i) == SQLITE_NULL)
			continue;
		switch (c[i].type) {
		case SWEEP_COL_INT: {
			int64_t v = sqlite3_column_int64(st, i);
			memcpy(p, &v, sizeof v);
			break;
		}
		case SWEEP_COL_REAL: {
			double v = sqlite3_column_double(st, i);
			memcpy(p, &v, sizeof v);
			break;
		}
		case SWEEP_COL_TEXT: {
			const unsigned char *s = sqlite3_column_text(st, i);
			snprintf((char *)p, c[i].cap_bytes, "%s", s ? (const char *)s : "");
			break;
		}
		}
	}
}

int sweepdb_read(const char *path, const char *table, struct sweep_row **rows, int64_t *n, int64_t cap_rows,
                 struct err *e)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct sweep_row *out = NULL;
	int64_t count = 0, cap = 0;
	int rc = open_ro(path, &db, e);
	if (rc < 0)
		return rc;
	if ((rc = select_rows(db, path, table, &st, e)) < 0)
		goto out;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (count == cap_rows) {
			err_set(e, path, 0, 0, "more than %lld rows", (long long)cap_rows);
			rc = -E2BIG;
			goto out;
		}
		if (count == cap) {
			int64_t ncap = cap ? 2 * cap : 256;
			struct sweep_row *grown = realloc(out, (size_t)ncap * sizeof *out);
			if (!grown) {
				err_set(e, path, 0, 0, "out of memory");
				rc = -ENOMEM;
				goto out;
			}
			out = grown;
			cap = ncap;
		}
		row_from_stmt(st, &out[count++]);
	}
	if (step != SQLITE_DONE) {
		rc = db_err(db, path, e, "read");
		goto out;
	}
	*rows = out;
	*n = count;
	out = NULL;
out:
	free(out);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

int sweepdb_export_csv(const char *path, FILE *out, struct err *e)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = open_ro(path, &db, e);
	if (rc < 0)
		return rc;
	if ((rc = select_rows(db, path, "points", &st, e)) < 0)
		goto out;
	sweep_csv_header(out);
	struct sweep_row row;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		row_from_stmt(st, &row);
		sweep_csv_rows(out, &row, 1);
	}
	if (step != SQLITE_DONE)
		rc = db_err(db, path, e, "read");
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* ---- merging ---- */

struct shard_file {
	const char *path;
	char scenario[64], scenario_file[256], spec_hash[32];
	char *spec;
	int64_t points_total, shard_count, rows;
	uint8_t *has; /* has[k] for 0-based shard k */
};

static int meta_text(sqlite3 *db, const char *key, char *buf, size_t cap)
{
	sqlite3_stmt *st;
	buf[0] = 0;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
		return -EINVAL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int rc = -ENOENT;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *s = sqlite3_column_text(st, 0);
		snprintf(buf, cap, "%s", s ? (const char *)s : "");
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

static int meta_i64(sqlite3 *db, const char *path, const char *key, int64_t *out, struct err *e)
{
	char buf[64];
	char *end;
	if (meta_text(db, key, buf, sizeof buf) < 0) {
		err_set(e, path, 0, 0, "not a k3sim sweep database (no '%s' in meta)", key);
		return -EINVAL;
	}
	long long v = strtoll(buf, &end, 10);
	if (*end || end == buf || v < 0) {
		err_set(e, path, 0, 0, "meta '%s' is not a count: '%s'", key, buf);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* The largest shard count a merge accepts (one flag byte per shard). */
#define MERGE_MAX_SHARDS INT64_C(1000000)

static int read_shard_file(struct shard_file *f, struct err *e)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *shards = NULL;
	int rc = open_ro(f->path, &db, e);
	if (rc < 0)
		return rc;
	char fmt[64];
	if (meta_text(db, "format", fmt, sizeof fmt) < 0 || strcmp(fmt, FORMAT) != 0) {
		err_set(e, f->path, 0, 0, "not a k3sim sweep database (meta format '%s', expected '%s')", fmt,
		        FORMAT);
		rc = -EINVAL;
		goto out;
	}
	if ((rc = meta_i64(db, f->path, "points_total", &f->points_total, e)) < 0 ||
	    (rc = meta_i64(db, f->path, "shard_count", &f->shard_count, e)) < 0)
		goto out;
	if (f->shard_count < 1 || f->shard_count > MERGE_MAX_SHARDS) {
		err_set(e, f->path, 0, 0, "shard count %lld is out of range", (long long)f->shard_count);
		rc = -EINVAL;
		goto out;
	}
	meta_text(db, "scenario", f->scenario, sizeof f->scenario);
	meta_text(db, "scenario_file", f->scenario_file, sizeof f->scenario_file);
	meta_text(db, "spec_hash", f->spec_hash, sizeof f->spec_hash);
	size_t cap = 16 * (size_t)f->shard_count + 64;
	shards = malloc(cap);
	f->spec = malloc(4096);
	f->has = calloc((size_t)f->shard_count, 1);
	if (!shards || !f->spec || !f->has) {
		err_set(e, f->path, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	meta_text(db, "spec", f->spec, 4096);
	meta_text(db, "shards", shards, cap);
	for (char *p = shards; *p;) {
		char *end;
		long long k = strtoll(p, &end, 10);
		if (end == p || k < 1 || k > f->shard_count || (*end && *end != ',')) {
			err_set(e, f->path, 0, 0, "meta 'shards' is malformed: '%.64s'", shards);
			rc = -EINVAL;
			goto out;
		}
		f->has[k - 1] = 1;
		p = *end ? end + 1 : end;
	}
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM points", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		rc = db_err(db, f->path, e, "not a k3sim sweep database");
		goto out;
	}
	f->rows = sqlite3_column_int64(st, 0);
out:
	free(shards);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

static void release_shard_files(struct shard_file *files, int n)
{
	for (int i = 0; i < n; i++) {
		free(files[i].spec);
		free(files[i].has);
	}
	free(files);
}

int sweepdb_merge(const char *out, const char *const *inputs, int n_inputs, bool allow_partial,
                  bool force, struct sweepdb_merge_stats *stats, struct err *e)
{
	struct sweepdb w = {0};
	struct shard_file *files = calloc((size_t)(n_inputs > 0 ? n_inputs : 1), sizeof *files);
	uint8_t *owner_set = NULL;
	int *owner = NULL;
	char *shards = NULL;
	int rc = 0;
	memset(stats, 0, sizeof *stats);
	if (!files) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	if (n_inputs < 1) {
		err_set(e, NULL, 0, 0, "no databases to merge");
		rc = -EINVAL;
		goto out;
	}
	for (int i = 0; i < n_inputs; i++) {
		files[i].path = inputs[i];
		if ((rc = read_shard_file(&files[i], e)) < 0)
			goto out;
	}
	const struct shard_file *f0 = &files[0];
	int64_t N = f0->shard_count;
	for (int i = 1; i < n_inputs; i++) {
		const struct shard_file *f = &files[i];
		if (strcmp(f->spec_hash, f0->spec_hash) != 0 || f->points_total != f0->points_total) {
			err_set(e, f->path, 0, 0,
			        "comes from a different sweep than %s (spec %s vs %s, %lld vs %lld points)",
			        f0->path, f->spec_hash, f0->spec_hash, (long long)f->points_total,
			        (long long)f0->points_total);
			rc = -EINVAL;
			goto out;
		}
		if (f->shard_count != N) {
			err_set(e, f->path, 0, 0,
			        "was split into %lld shards, %s into %lld: merge shards of one split",
			        (long long)f->shard_count, f0->path, (long long)N);
			rc = -EINVAL;
			goto out;
		}
	}
	owner = malloc((size_t)N * sizeof *owner);
	owner_set = calloc((size_t)N, 1);
	if (!owner || !owner_set) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n_inputs; i++) {
		int64_t expect = 0;
		for (int64_t k = 0; k < N; k++) {
			if (!files[i].has[k])
				continue;
			if (owner_set[k]) {
				err_set(e, files[i].path, 0, 0, "overlaps %s: both hold shard %lld/%lld",
				        files[owner[k]].path, (long long)k + 1, (long long)N);
				rc = -EINVAL;
				goto out;
			}
			owner_set[k] = 1;
			owner[k] = i;
			expect += sweep_shard_points(files[i].points_total, k, N);
		}
		if (files[i].rows != expect) {
			err_set(e, files[i].path, 0, 0, "holds %lld points, but its shards should have %lld",
			        (long long)files[i].rows, (long long)expect);
			rc = -EINVAL;
			goto out;
		}
	}
	size_t cap = 16 * (size_t)N + 64, len = 0;
	shards = malloc(cap);
	if (!shards) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	shards[0] = 0;
	int64_t missing = 0;
	char missing_list[256] = "";
	for (int64_t k = 0; k < N; k++) {
		if (owner_set[k]) {
			len += (size_t)snprintf(shards + len, cap - len, "%s%lld", len ? "," : "",
			                        (long long)k + 1);
			continue;
		}
		if (missing < 16)
			snprintf(missing_list + strlen(missing_list),
			         sizeof missing_list - strlen(missing_list), "%s%lld", missing ? ", " : "",
			         (long long)k + 1);
		missing++;
	}
	stats->points_total = f0->points_total;
	stats->shard_count = N;
	stats->missing_shards = missing;
	if (missing && !allow_partial) {
		err_set(e, NULL, 0, 0,
		        "%lld of %lld shards missing: %s%s (--allow-partial writes what there is)",
		        (long long)missing, (long long)N, missing_list, missing > 16 ? ", ..." : "");
		rc = -EINVAL;
		goto out;
	}

	struct sweepdb_meta meta = {
	    .spec = f0->spec, .points_total = f0->points_total, .shard_count = N, .shard_index = -1};
	snprintf(meta.scenario, sizeof meta.scenario, "%s", f0->scenario);
	snprintf(meta.scenario_file, sizeof meta.scenario_file, "%s", f0->scenario_file);
	meta.spec_hash = strtoull(f0->spec_hash, NULL, 16);
	struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = (size_t)n_inputs};
	if ((rc = create_with_shards(&w, out, &meta, shards, &oo, e)) < 0)
		goto out;
	char cols[SQL_MAX], sql[2 * SQL_MAX + 256];
	column_list(cols, sizeof cols, "");
	/* ATTACH is not allowed inside a transaction: one per input (no journal: cheap). */
	if ((rc = sweepdb_exec(&w, "COMMIT", e)) < 0)
		goto out;
	for (int i = 0; i < n_inputs; i++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(w.db, "ATTACH DATABASE ? AS src", -1, &st, NULL) != SQLITE_OK) {
			rc = db_err(w.db, out, e, "attach");
			goto out;
		}
		sqlite3_bind_text(st, 1, files[i].path, -1, SQLITE_STATIC);
		int step = sqlite3_step(st);
		sqlite3_finalize(st);
		if (step != SQLITE_DONE) {
			rc = db_err(w.db, files[i].path, e, "attach");
			goto out;
		}
		snprintf(sql, sizeof sql,
		         "BEGIN; INSERT INTO main.points (%s) SELECT %s FROM src.points "
		         "ORDER BY point; COMMIT",
		         cols, cols);
		if ((rc = sweepdb_exec(&w, sql, e)) < 0) {
			char why[400];
			snprintf(why, sizeof why, "%.399s", e->msg);
			err_set(e, files[i].path, 0, 0, "cannot merge: %s", why);
			goto out;
		}
		if ((rc = sweepdb_exec(&w, "DETACH DATABASE src", e)) < 0)
			goto out;
	}
	if ((rc = sweepdb_exec(&w, "BEGIN", e)) < 0)
		goto out;
	for (int i = 0; i < n_inputs; i++)
		stats->points += files[i].rows;
	rc = sweepdb_commit(&w, e);
out:
	if (rc < 0)
		sweepdb_abort(&w);
	free(shards);
	free(owner_set);
	free(owner);
	release_shard_files(files, n_inputs > 0 ? n_inputs : 1);
	return rc;
}
