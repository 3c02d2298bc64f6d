#ifndef K3_TRACE_SQLREAD_H
#define K3_TRACE_SQLREAD_H

/* Reading nsys-style tables by column name (internal to trace/). nsys' schema drifts between
 * versions, so readers ask PRAGMA table_info which columns exist and select only those; a column
 * that is missing reads as the caller's default. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "util/err.h"

/* Open read-only after checking the file is SQLite and not truncated (the header's page count
 * against the file size), and that its schema can be read. */
int trace_sql_open(const char *path, sqlite3 **out, struct err *e);

/* Describe the last SQLite error of db in e ("not an SQLite database", "corrupt or truncated",
 * else SQLite's message), prefixed with the table when given. Returns -EIO (or -ENOMEM). */
int trace_sql_error(sqlite3 *db, const char *path, const char *table, struct err *e);

/* "table", "view" or "" (absent) into type. */
int trace_sql_object_type(sqlite3 *db, const char *path, const char *name, char *type, size_t n,
			  struct err *e);
bool trace_sql_has_table(sqlite3 *db, const char *name);

/* Prepare "SELECT <those of want[0..n) that exist> FROM table [WHERE where]": idx[i] is the result
 * column of want[i], or -1. *out is NULL when the table is absent or has none of the columns.
 * `where` may name only columns that exist (check idx first) or be NULL. */
int trace_sql_select(sqlite3 *db, const char *path, const char *table, const char *const *want,
		     int n, int *idx, const char *where, sqlite3_stmt **out, struct err *e);

static inline int64_t trace_sql_i64(sqlite3_stmt *st, int idx, int64_t dflt)
{
	if (idx < 0 || sqlite3_column_type(st, idx) == SQLITE_NULL)
		return dflt;
	return sqlite3_column_int64(st, idx);
}

static inline const char *trace_sql_text(sqlite3_stmt *st, int idx)
{
	return idx < 0 ? NULL : (const char *)sqlite3_column_text(st, idx);
}

#endif
