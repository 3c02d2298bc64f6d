/* Fuzz target: the nsys/k3sim SQLite importer (trace/import/import_sqlite.c: bound-by-name columns,
 * StringIds, GPUs, processes, k3sim's own tables) into an in-memory trace database. The input is
 * a database file (SQLite reads files: it is written to a scratch file first). Any input must give
 * 0 or an error with a message, never a crash, a leak or unbounded memory. Seeds: small nsys-like
 * and k3sim databases (fuzz/corpus/sqlite, made by fuzz/make-sqlite-seeds.py). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz/scratch.h"
#include "trace/import/import.h"
#include "trace/analyze/kclass.h"
#include "trace/db/tracedb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One in-memory database and one kernel-class table serve many inputs (creating the schema and
 * parsing the table cost more than most runs); the database is replaced every RUNS_PER_DB inputs
 * and after any error of the database itself. */
enum { RUNS_PER_DB = 500 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace_db *db;
	static int runs;
	static struct trace_kclass_rules classes;
	static bool have_classes;
	struct err e = {0};
	if (!have_classes) {
		if (trace_kclass_load(&classes, "default", &e))
			abort();
		have_classes = true;
	}
	char in[512];
	if (fuzz_scratch_write(in, sizeof in, "in", data, size))
		return 0;
	if (db && ++runs >= RUNS_PER_DB) {
		if (trace_db_close(db, &e))
			abort();
		db = NULL;
	}
	if (!db) {
		struct trace_db_opts o = {.max_strings = 4096, .max_string_bytes = 1 << 20,
					  .batch_rows = 256};
		if (trace_db_create(&db, ":memory:", &o, &e))
			abort();
		runs = 0;
	}
	struct trace_import_stats st;
	int rc = trace_import_sqlite(db, in, NULL, &st, &e);
	if (rc && !e.msg[0])
		abort(); /* every failure explains itself */
	/* an error of the input leaves the database usable; one of the database does not */
	if (rc && trace_db_flush(db, &e)) {
		trace_db_discard(db);
		db = NULL;
	}
	/* the summary reads such files directly too */
	struct trace_summary_opts so = {.max_rows = 100000, .classes = &classes};
	struct trace_summary s;
	rc = fuzz_summary(in, &so, &s, &e);
	if (rc && !e.msg[0])
		abort();
	unlink(in);
	return 0;
}
