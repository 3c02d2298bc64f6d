#include "fixtures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

static char dir[256];

const char *fx_dir(void)
{
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/k3trace-test-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
	}
	return dir;
}

void fx_cleanup(void)
{
	if (!dir[0])
		return;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	dir[0] = '\0';
}

const char *fx_path(const char *name)
{
	static char ring[64][512];
	static int next;
	char *p = ring[next++ % 64];
	snprintf(p, 512, "%s/%s", fx_dir(), name);
	return p;
}

void fx_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len) {
		perror(path);
		abort();
	}
	fclose(f);
}

void fx_write_str(const char *path, const char *text)
{
	fx_write(path, text, strlen(text));
}

void fx_sqlite(const char *path, const char *sql)
{
	unlink(path);
	sqlite3 *db;
	char *msg = NULL;
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "fixture %s: %s\n", path, msg ? msg : sqlite3_errmsg(db));
		abort();
	}
	sqlite3_close(db);
}

static sqlite3_stmt *one_row(const char *path, const char *sql, sqlite3 **db)
{
	sqlite3_stmt *st;
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(*db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "query %s on %s: %s\n", sql, path, sqlite3_errmsg(*db));
		abort();
	}
	return st;
}

int64_t fx_i64(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st = one_row(path, sql, &db);
	int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

double fx_f64(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st = one_row(path, sql, &db);
	double v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_double(st, 0) : 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

const char *fx_text(const char *path, const char *sql)
{
	static char buf[4096];
	sqlite3 *db;
	sqlite3_stmt *st = one_row(path, sql, &db);
	buf[0] = '\0';
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, sizeof buf, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return buf;
}

void fx_truncate_copy(const char *src, const char *dst, size_t len)
{
	FILE *f = fopen(src, "rb");
	if (!f)
		abort();
	char *buf = malloc(len ? len : 1);
	size_t n = fread(buf, 1, len, f);
	fclose(f);
	fx_write(dst, buf, n);
	free(buf);
}

size_t fx_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (size_t)sb.st_size : 0;
}
