#ifndef K3_TESTS_TRACE_FIXTURES_H
#define K3_TESTS_TRACE_FIXTURES_H

/* Fixtures the trace tests generate for themselves: a scratch directory, files written from
 * strings, SQLite databases built from SQL scripts, and one-value queries. */

#include <stddef.h>
#include <stdint.h>

/* A fresh scratch directory (removed with its files by fx_cleanup); returns its path. */
const char *fx_dir(void);
void fx_cleanup(void);
/* fx_dir()/name, in a static ring of 64 buffers (valid for the next 63 calls). */
const char *fx_path(const char *name);

void fx_write(const char *path, const void *data, size_t len);
void fx_write_str(const char *path, const char *text);
/* Create (replace) an SQLite database at path and run the SQL script in it. */
void fx_sqlite(const char *path, const char *sql);
/* The first column of the first row of sql on the database at path (0 / "" when no row). */
int64_t fx_i64(const char *path, const char *sql);
double fx_f64(const char *path, const char *sql);
const char *fx_text(const char *path, const char *sql); /* static buffer */
/* Copy the first `len` bytes of src to dst. */
void fx_truncate_copy(const char *src, const char *dst, size_t len);
size_t fx_size(const char *path);

#endif
