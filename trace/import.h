#ifndef K3_TRACE_IMPORT_H
#define K3_TRACE_IMPORT_H

/* Importers into a trace database (trace/tracedb.h): nsys SQLite exports (and k3sim's own
 * databases, the same schema), and Kineto/Chrome JSON traces (PyTorch profiler output).
 * Importers read their input in bounded memory and stream rows into the writer; on error they
 * return a negative errno with file:line:col (JSON) or file + table (SQLite) in e, and the caller
 * discards the half-written database. */

#include <stddef.h>
#include <stdint.h>

#include "trace/tracedb.h"
#include "util/err.h"

enum trace_format {
	TRACE_FORMAT_UNKNOWN,
	TRACE_FORMAT_SQLITE,       /* nsys export or k3sim database */
	TRACE_FORMAT_KINETO_JSON,  /* Chrome trace event JSON, e.g. torch.profiler */
};

/* What was read and written. */
struct trace_import_stats {
	int64_t events;            /* input records looked at */
	int64_t kernels, memcpys, memsets, api_calls, nvtx, gpus, processes;
	int64_t skipped;           /* records of kinds k3sim does not keep */
	int64_t dropped_records;   /* K3SIM_DROPPED counts carried over */
	int64_t hosts;             /* merge: distinct K3SIM_CAPTURE hosts of the inputs (0: none
				    * recorded); above 1, the inputs' clocks are not one clock */
};

/* Guess the format from the first bytes: the SQLite header, or a JSON object/array. Compressed
 * files (.gz, .zst) get a clear error. */
int trace_detect_format(const char *path, enum trace_format *out, struct err *e);

struct trace_kineto_opts {
	int64_t pid;               /* process id for GPU-side rows; 0: the pid of CPU-side events */
	size_t max_string_bytes;   /* one JSON string; 0: 1 MiB */
	int max_depth;             /* JSON nesting; 0: 64 */
};

int trace_import_kineto(struct trace_db *db, const char *path, const struct trace_kineto_opts *o,
			struct trace_import_stats *st, struct err *e);
int trace_import_kineto_mem(struct trace_db *db, const char *name, const void *data, size_t len,
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

/* Either importer, by trace_detect_format. */
int trace_import_file(struct trace_db *db, const char *path, struct trace_import_stats *st,
		      struct err *e);

/* Join per-process databases into one timeline at out_path: strings are re-interned, and a
 * process id that appears in more than one input is renamed in the later ones so every
 * process keeps its own globalPid. GPUs that several inputs list (same UUID; else same PCI bus
 * id on the same host; else same host, ordinal and name) become one TARGET_INFO_GPU row, and
 * every deviceId (activity rows, peer copies, drops, metrics, GPU-projected NVTX categories) is
 * rewritten to it; a GPU keeps its ordinal unless a different GPU already has it.
 * K3SIM_DEVICE_MAP records each process' ordinals. st->gpus counts distinct GPUs. Timestamps
 * are copied as they are. opts as for trace_db_create. */
int trace_merge(const char *out_path, const char *const *inputs, size_t n_inputs,
		const struct trace_db_opts *opts, struct trace_import_stats *st, struct err *e);

#endif
