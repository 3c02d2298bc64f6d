#ifndef K3_TRACE_CAPTURE_WRITER_H
#define K3_TRACE_CAPTURE_WRITER_H

/* The capture writer thread: takes filled buffers from the pool, decodes them (decode.c) and
 * inserts rows through trace/db/tracedb.h, which commits in batches. It is the only thread that
 * touches the database between capture_writer_start and capture_writer_stop. */

#include <pthread.h>
#include <stdbool.h>

#include "trace/capture/decode.h"
#include "trace/capture/pool.h"
#include "trace/db/tracedb.h"
#include "util/err.h"

struct capture_writer {
	struct capture_pool pool;
	struct capture_decoder dec;
	struct trace_db *db;           /* borrowed: the owner closes it after stop */
	pthread_t thread;
	bool running;
	int status;                    /* first error of the thread, 0 if none */
	struct err err;
	int64_t dropped_records;       /* CUPTI's counts, as reported with the buffers */
	int64_t items;
	/* the decoder's counters, kept by capture_writer_stop */
	int64_t nvtx_unmatched_ends, nvtx_lost_ranges, unknown_records;
	uint64_t devices_seen;
	uint64_t pool_waits;
};

/* Preallocate `buffers` x `buffer_bytes` and start the thread on db. */
int capture_writer_start(struct capture_writer *w, struct trace_db *db, int64_t pid,
			 size_t buffers, size_t buffer_bytes, struct err *e);

/* Wait until everything submitted so far is committed (up to timeout_ms). */
int capture_writer_flush(struct capture_writer *w, int64_t timeout_ms);

/* Drain the queue, commit, stop the thread and free the pool and decoder. The database stays
 * open. Returns the thread's first error (and its message in e), else 0. */
int capture_writer_stop(struct capture_writer *w, struct err *e);

#endif
