#ifndef K3_UTIL_TRACEJSON_H
#define K3_UTIL_TRACEJSON_H

/* Chrome trace-event JSON (what Perfetto, ui.perfetto.dev, and chrome://tracing open), the one
 * writer of it: trace/analyze/export.c writes measured traces with it, reports/ the simulated timeline.
 * A file is tj_begin, events (each after tj_event), tj_end. Timestamps and durations are written
 * in microseconds with nanosecond decimals, as Kineto writes them. Nothing is buffered here: the
 * stream's errors are the caller's to check (tj_end flushes and reports them). */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct tj {
	FILE *out;
	bool first;      /* no event written yet */
	int64_t events;  /* events begun so far */
};

/* The file's head: {"displayTimeUnit":"ns","otherData":{"producer":"k3sim"},"traceEvents":[ */
void tj_begin(struct tj *w, FILE *out);
/* The same head with "baseTimeNanoseconds": base_ns (times written are relative to it). */
void tj_begin_base(struct tj *w, FILE *out, int64_t base_ns);
/* Starts an event (the separator before it); the caller writes the object "{...}". */
void tj_event(struct tj *w);
/* Nanoseconds as microseconds with three decimals ("12.345"), exact for every int64 (INT64_MIN too). */
void tj_us(FILE *f, int64_t ns);
/* Metadata: what is "process_name" or "thread_name" (has_tid for threads). */
void tj_meta(struct tj *w, const char *what, int64_t pid, int64_t tid, bool has_tid, const char *name);
void tj_sort_index(struct tj *w, int64_t pid, int64_t index);
/* The file's tail; flushes. Returns 0, or -EIO when the stream failed. */
int tj_end(struct tj *w);

#endif
