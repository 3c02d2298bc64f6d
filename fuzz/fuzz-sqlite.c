/* Fuzz target: the nsys/k3sim SQLite importer (trace/import_sqlite.c: bound-by-name columns,
 * StringIds, GPUs, processes, k3sim's own tables) into an in-memory trace database. The input is
 * a database file (SQLite reads files: it is written to a scratch file first). Any input must give
 * 0 or an error with a message, never a crash, a leak or unbounded memory. Seeds: small nsys-like
 * and k3sim databases (fuzz/corpus/sqlite, made by fuzz/make-sqlite-seeds.py). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz/scratch.h"
#include "trace/import.h"
#include "trace/tracedb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[512];
	if (fuzz_scratch_write(in, sizeof in, "in", data, size))
		return 0;
	struct trace_db *db = NULL;
	struct err e = {0};
	struct trace_db_opts o = {.max_strings = 4096, .max_string_bytes = 1 << 20, .batch_rows = 256};
	if (trace_db_create(&db, ":memory:", &o, &e))
		abort();
	struct trace_import_stats st;
	int rc = trace_import_sqlite(db, in, NULL, &st, &e);
	if (rc && !e.msg[0])
		abort(); /* every failure explains itself */
	if (rc)
		trace_db_discard(db);
	else if (trace_db_close(db, &e) && !e.msg[0])
		abort();
	/* the summary reads such files directly too */
	struct trace_summary_opts so = {.max_rows = 100000};
	struct trace_summary s;
	rc = fuzz_summary(in, &so, &s, &e);
	if (rc && !e.msg[0])
		abort();
	unlink(in);
	return 0;
}
