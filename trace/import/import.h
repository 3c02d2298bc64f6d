#ifndef K3_TRACE_IMPORT_H
#define K3_TRACE_IMPORT_H

/* Importers into a trace database (trace/db/tracedb.h): nsys SQLite exports (and k3sim's own
 * databases, the same schema), and Kineto/Chrome JSON traces (PyTorch profiler output, k3sim's
 * own Perfetto export). JSON comes from a file, a pipe or standard input, gzip'd or not
 * (trace/import/input.h). Importers read their input in bounded memory and stream rows into the writer;
 * on error they return a negative errno with file:line:col (JSON) or file + table (SQLite) in e,
 * and the caller discards the half-written database. */

#include <stddef.h>
#include <stdint.h>

#include "trace/import/input.h"
#include "trace/db/tracedb.h"
#include "util/err.h"

enum trace_format {
	TRACE_FORMAT_UNKNOWN,
	TRACE_FORMAT_SQLITE,       /* nsys export or k3sim database */
	TRACE_FORMAT_KINETO_JSON,  /* Chrome trace event JSON, e.g. torch.profiler */
};

enum {
	TRACE_IMPORT_UNKNOWN_CATS = 8,     /* distinct unknown categories listed by name */
	TRACE_IMPORT_CAT_BYTES = 48,
};

/* What was read and written. */
struct trace_import_stats {
	int64_t events;            /* input records looked at */
	int64_t kernels, memcpys, memsets, api_calls, nvtx, gpus, processes;
	int64_t skipped;           /* records of kinds k3sim does not keep */
	int64_t dropped_records;   /* K3SIM_DROPPED counts carried over */
	int64_t hosts;             /* merge: distinct K3SIM_CAPTURE hosts of the inputs (0: none
				    * recorded); above 1, the inputs' clocks are not one clock */
	int64_t first_ns, last_ns; /* earliest start and latest end of what was imported
				    * (first_ns > last_ns: nothing timed) */
	enum trace_clock {
		TRACE_CLOCK_NOT_STATED,  /* the file says nothing (a CUPTI capture) */
		TRACE_CLOCK_EPOCH,       /* ns since the Unix epoch (K3SIM_CAPTURE clock) */
		TRACE_CLOCK_RELATIVE,    /* from an origin the file does not give */
	} clock;
	bool clock_mixed;          /* merge: inputs on the epoch and inputs on unknown origins */
	/* Kineto: */
	int64_t gpu_rows_no_process; /* GPU rows no CPU-side event gave a process id: process 0 */
	int64_t unknown_events;    /* events of categories k3sim does not know (skipped) */
	int n_unknown_cats;        /* the first TRACE_IMPORT_UNKNOWN_CATS of them, with counts */
	char unknown_cat[TRACE_IMPORT_UNKNOWN_CATS][TRACE_IMPORT_CAT_BYTES];
	int64_t unknown_cat_events[TRACE_IMPORT_UNKNOWN_CATS];
	int64_t strings_cut;       /* strings longer than the reader keeps, cut (never rejected) */
	int64_t base_time_ns;      /* Kineto baseTimeNanoseconds added to every time (0: none) */
	int64_t cpu_ops;           /* framework records kept as ranges (trace_kineto_opts.cpu_ops;
				    * counted in nvtx too) */
};

/* Guess the format from the first bytes: the SQLite header, or a JSON object/array (after a
 * UTF-8 BOM and whitespace). gzip is looked through; other compressions, a directory, an empty
 * file and an nsys report (.nsys-rep) get a clear error. "-" is standard input: use
 * trace_detect_input on an open input instead, which consumes nothing. */
int trace_detect_format(const char *path, enum trace_format *out, struct err *e);
int trace_detect_input(struct trace_input *in, enum trace_format *out, struct err *e);

/* "auto", "nsys"/"sqlite", "kineto"/"json"/"chrome" -> a format; -EINVAL for anything else. */
int trace_format_parse(const char *s, enum trace_format *out);
const char *trace_format_name(enum trace_format f);

struct trace_kineto_opts {
	int64_t pid;               /* process id for GPU-side rows; 0: the pid of CPU-side events */
	size_t max_string_bytes;   /* one JSON string is kept up to this, longer ones are cut;
				    * 0: 1 MiB */
	int max_depth;             /* JSON nesting; 0: 64 */
	bool cpu_ops;              /* keep cpu_op events that carry "Input Dims" (record_shapes=True)
				    * as ranges "NAME, sizes = [...], types = [...]" on their
				    * thread: the framework records trace/analyze/shapes.h reads */
};

int trace_import_kineto(struct trace_db *db, const char *path, const struct trace_kineto_opts *o,
			struct trace_import_stats *st, struct err *e);
/* From memory (gzip'd or not): fuzzers, tests. */
int trace_import_kineto_mem(struct trace_db *db, const char *name, const void *data, size_t len,
			    const struct trace_kineto_opts *o, struct trace_import_stats *st,
			    struct err *e);
/* From an open input (a pipe whose head was sniffed): it is read to its end, not closed. */
int trace_import_kineto_input(struct trace_db *db, struct trace_input *in,
			      const struct trace_kineto_opts *o, struct trace_import_stats *st,
			      struct err *e);

/* The pid part of globalPid/globalTid values can be rewritten on the way in (merge keeps the
 * processes of different files apart), and so can deviceIds (merge keeps one row per GPU). */
struct trace_pid_map;
struct trace_gpu_map;

struct trace_sqlite_opts {
	struct trace_pid_map *pids;    /* NULL: ids copied unchanged */
	struct trace_gpu_map *gpus;    /* NULL: GPU rows and deviceIds copied unchanged */
	const char *capture_prefix;    /* prefix for K3SIM_CAPTURE keys; NULL: none */
};

/* Import an nsys `export --type sqlite` file or a k3sim database. Columns are bound by name, so
 * schema versions that add, drop or reorder columns import; a file without any trace table is
 * rejected as "not an nsys export". */
int trace_import_sqlite(struct trace_db *db, const char *path, const struct trace_sqlite_opts *o,
			struct trace_import_stats *st, struct err *e);

struct trace_import_opts {
	enum trace_format format;          /* TRACE_FORMAT_UNKNOWN: sniffed from the content */
	struct trace_kineto_opts kineto;
};

/* Either importer: path is a file, "-" (standard input) or a FIFO, gzip'd or not. The format is
 * sniffed from the head of the content without consuming it (or given in o, and then checked);
 * an SQLite database that comes through a pipe or gzip is copied to a temporary file ($TMPDIR)
 * and removed after. *fmt_out (may be NULL) gets the format read. o may be NULL. */
int trace_import_path(struct trace_db *db, const char *path, const struct trace_import_opts *o,
		      enum trace_format *fmt_out, struct trace_import_stats *st, struct err *e);
int trace_import_file(struct trace_db *db, const char *path, struct trace_import_stats *st,
		      struct err *e);

/* Join per-process databases into one timeline at out_path: strings are re-interned, and a
 * process id that appears in more than one input is renamed in the later ones so every
 * process keeps its own globalPid. GPUs that several inputs list (same UUID; else same PCI bus
 * id on the same host; else same host, ordinal and name) become one TARGET_INFO_GPU row, and
 * every deviceId (activity rows, peer copies, drops, metrics, GPU-projected NVTX categories) is
 * rewritten to it; a GPU keeps its ordinal unless a different GPU already has it. Without UUID or
 * bus id, a GPU is (host, rank, process, ordinal): two ranks' "GPU 0" stay two GPUs.
 * K3SIM_DEVICE_MAP records each process' ordinals, host and rank. st->gpus counts distinct GPUs.
 * Timestamps are copied as they are (imports put Kineto and nsys times on the Unix epoch when the
 * file gives its origin); st->first_ns/last_ns span everything, st->hosts > 1 and
 * st->clock_mixed say the inputs' clocks are not one clock. opts as for trace_db_create. */
int trace_merge(const char *out_path, const char *const *inputs, size_t n_inputs,
		const struct trace_db_opts *opts, struct trace_import_stats *st, struct err *e);

#endif
