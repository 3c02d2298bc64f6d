/* Fuzz target: Kineto/Chrome JSON import (trace/import/json.c + trace/import/import_kineto.c) into an in-memory
 * trace database. Any input must give 0 or an error with a message, never a crash, a leak or
 * unbounded memory. With gcc, driver.c replays files given on the command line. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "trace/import/import.h"
#include "trace/db/tracedb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One in-memory database serves many inputs (creating the schema costs more than most runs);
 * it is replaced every RUNS_PER_DB inputs and after any error of the database itself. */
enum { RUNS_PER_DB = 500 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace_db *db;
	static int runs;
	struct err e = {0};
	if (db && ++runs >= RUNS_PER_DB) {
		if (trace_db_close(db, &e))
			abort();
		db = NULL;
	}
	if (!db) {
		/* small bounds keep each run cheap */
		struct trace_db_opts o = {.max_strings = 4096, .max_string_bytes = 1 << 20,
					  .batch_rows = 256};
		if (trace_db_create(&db, ":memory:", &o, &e))
			abort();
		runs = 0;
	}
	/* odd-sized inputs also keep cpu_op shape records (trace import --cpu-ops) */
	struct trace_kineto_opts ko = {.max_string_bytes = 64 * 1024, .max_depth = 32, .cpu_ops = size % 2 == 1};
	struct trace_import_stats st;
	int rc = trace_import_kineto_mem(db, "fuzz.json", data, size, &ko, &st, &e);
	if (rc && !e.msg[0])
		abort(); /* every failure explains itself */
	if (rc == -EIO || rc == -ENOMEM || rc == -ENOSPC) {
		trace_db_discard(db);
		db = NULL;
	}
	return 0;
}
