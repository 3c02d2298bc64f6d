#include "trace/db/sqlread.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A truncated copy of an SQLite file fails only when a missing page is read; the header states
 * the size, so check it up front. */
static int check_header(const char *path, struct err *e)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		int rc = -errno;
		err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
		return rc;
	}
	unsigned char h[100];
	size_t n = fread(h, 1, sizeof h, f);
	struct stat sb;
	int have_stat = fstat(fileno(f), &sb) == 0;
	fclose(f);
	if (n < 16 || memcmp(h, "SQLite format 3", 16) != 0) {
		err_set(e, path, 0, 0, "not an SQLite database");
		return -EINVAL;
	}
	if (n < 100) {
		err_set(e, path, 0, 0, "truncated SQLite file (%zu bytes, shorter than its header)", n);
		return -EINVAL;
	}
	uint32_t page = (uint32_t)h[16] << 8 | h[17];
	uint64_t page_bytes = page == 1 ? 65536 : page;
	uint32_t pages = be32(h + 28);
	int count_valid = be32(h + 92) == be32(h + 24) && pages > 0;
	if (page_bytes < 512 || (page_bytes & (page_bytes - 1))) {
		err_set(e, path, 0, 0, "corrupt SQLite header (page size %u)", page);
		return -EINVAL;
	}
	if (have_stat && count_valid && (uint64_t)sb.st_size < page_bytes * pages) {
		err_set(e, path, 0, 0,
			"truncated SQLite file: its header says %llu bytes, the file has %llu",
			(unsigned long long)(page_bytes * pages), (unsigned long long)sb.st_size);
		return -EINVAL;
	}
	return 0;
}

int trace_sql_error(sqlite3 *db, const char *path, const char *table, struct err *e)
{
	int code = db ? sqlite3_errcode(db) : SQLITE_NOMEM;
	const char *pre = table ? table : "", *sep = table ? ": " : "";
	if (code == SQLITE_NOTADB)
		err_set(e, path, 0, 0, "not an SQLite database");
	else if (code == SQLITE_CORRUPT)
		err_set(e, path, 0, 0, "%s%sdatabase is corrupt or truncated", pre, sep);
	else
		err_set(e, path, 0, 0, "%s%ssqlite: %s", pre, sep,
			db ? sqlite3_errmsg(db) : "out of memory");
	return code == SQLITE_NOMEM ? -ENOMEM : -EIO;
}

int trace_sql_open(const char *path, sqlite3 **out, struct err *e)
{
	sqlite3 *db = NULL;
	int rc = check_header(path, e);
	if (rc)
		return rc;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		err_set(e, path, 0, 0, "cannot open: %s", db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	/* touching the schema is where a non-database fails */
	if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
		rc = trace_sql_error(db, path, NULL, e);
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

int trace_sql_object_type(sqlite3 *db, const char *path, const char *name, char *type, size_t n,
			  struct err *e)
{
	sqlite3_stmt *st = NULL;
	type[0] = '\0';
	if (sqlite3_prepare_v2(db, "SELECT type FROM sqlite_master WHERE name = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return trace_sql_error(db, path, NULL, e);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		snprintf(type, n, "%s", t ? (const char *)t : "");
	}
	int rc = (r == SQLITE_ROW || r == SQLITE_DONE) ? 0 : trace_sql_error(db, path, NULL, e);
	sqlite3_finalize(st);
	return rc;
}

bool trace_sql_has_table(sqlite3 *db, const char *name)
{
	char type[16];
	return trace_sql_object_type(db, "", name, type, sizeof type, NULL) == 0 && type[0];
}

int trace_sql_select(sqlite3 *db, const char *path, const char *table, const char *const *want,
		     int n, int *idx, const char *where, sqlite3_stmt **out, struct err *e)
{
	*out = NULL;
	for (int i = 0; i < n; i++)
		idx[i] = -1;
	char type[16];
	int rc = trace_sql_object_type(db, path, table, type, sizeof type, e);
	if (rc || !type[0])
		return rc;
	char sql[8192];
	snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", table);
	sqlite3_stmt *info = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &info, NULL) != SQLITE_OK)
		return trace_sql_error(db, path, table, e);
	size_t p = (size_t)snprintf(sql, sizeof sql, "SELECT ");
	int ncols = 0, r;
	while ((r = sqlite3_step(info)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(info, 1);
		if (!col)
			continue;
		for (int i = 0; i < n; i++) {
			if (idx[i] < 0 && strcasecmp(col, want[i]) == 0 && p < sizeof sql - 256) {
				idx[i] = ncols++;
				p += (size_t)snprintf(sql + p, sizeof sql - p, "%s\"%s\"",
						      idx[i] ? ", " : "", want[i]);
				break;
			}
		}
	}
	if (r != SQLITE_DONE) {
		rc = trace_sql_error(db, path, table, e);
		sqlite3_finalize(info);
		return rc;
	}
	sqlite3_finalize(info);
	if (ncols == 0)
		return 0;
	snprintf(sql + p, sizeof sql - p, " FROM \"%s\"%s%s", table, where ? " WHERE " : "",
		 where ? where : "");
	if (sqlite3_prepare_v2(db, sql, -1, out, NULL) != SQLITE_OK)
		return trace_sql_error(db, path, table, e);
	return 0;
}
