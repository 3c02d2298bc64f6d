#ifndef K3_TRACE_TRACEDB_H
#define K3_TRACE_TRACEDB_H

/* The trace database writer: an SQLite file with the table and column names of
 * `nsys export --type sqlite`, so the same queries work on nsys exports and on k3sim captures,
 * plus k3sim's own tables. Everything that produces a trace (CUPTI capture, the nsys and Kineto
 * importers, merge) writes through this API; the analysis reads the resulting file.
 *
 * Tables written (nsys names and column types; all times in ns on the producer's clock, CUPTI's for
 * captures). The activity tables leave out nsys' NOT NULL constraints, which cost a fifth of the
 * insert time; queries cannot tell the difference.
 *   StringIds(id, value)                      every name: kernels, API calls, GPUs' strings
 *   CUPTI_ACTIVITY_KIND_KERNEL                start, end, deviceId, contextId, greenContextId,
 *       streamId, correlationId, globalPid, demangledName, shortName, mangledName (StringIds ids),
 *       launchType, cacheConfig, registersPerThread, gridX..Z, blockX..Z, staticSharedMemory,
 *       dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted,
 *       graphNodeId, sharedMemoryLimitConfig
 *   CUPTI_ACTIVITY_KIND_MEMCPY                start, end, deviceId, contextId, streamId,
 *       correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId, ...
 *   CUPTI_ACTIVITY_KIND_MEMSET                start, end, deviceId, contextId, streamId,
 *       correlationId, globalPid, value, bytes, memKind, graphNodeId
 *   CUPTI_ACTIVITY_KIND_RUNTIME               start, end, eventClass (0 runtime, 1 driver),
 *       globalTid, correlationId, nameId, returnValue, callchainId. Like nsys, driver calls live
 *       here too (eventClass 1); CUPTI_ACTIVITY_KIND_DRIVER is a view of those rows.
 *   NVTX_EVENTS                               start, end (NULL for marks), eventType (59 push/pop,
 *       60 start/end, 34 mark), rangeId, category, color, text, globalTid, endGlobalTid,
 *       textId, domainId
 *   TARGET_INFO_GPU                           id, name, busLocation, totalMemory, smCount, ...
 *       One row per physical GPU; `id` is the deviceId of the activity rows on it. In a capture
 *       that is the CUDA ordinal of the capturing process; merge keeps one row per GPU (same uuid,
 *       else same bus id on the same host) and renumbers deviceIds where processes disagree.
 *   PROCESSES                                 globalPid, pid, name
 *   META_DATA_EXPORT(name, value)             who wrote the file, schema version
 * k3sim's own:
 *   K3SIM_CAPTURE(name, value)                command line, versions, device, clocks (keys below)
 *   K3SIM_DROPPED(source, deviceId, contextId, streamId, count)   records the producer lost
 *   K3SIM_KERNEL_METRICS(globalPid, deviceId, correlationId, nameId, metric, value, unit)
 *       per-kernel hardware counters (DRAM bytes, SM throughput) from a replay pass
 *   K3SIM_DEVICE_MAP(globalPid, cudaId, deviceId, uuid, host, rank)   written by merge: the
 *       CUDA ordinal a process knew a GPU by (cudaId), the deviceId its rows carry in the merged
 *       file, and the host and rank the process ran as (the role of nsys'
 *       TARGET_INFO_CUDA_DEVICE; unlike nsys, activity rows hold deviceId, not cudaId, so one GPU
 *       is one deviceId whatever CUDA_VISIBLE_DEVICES each process had). A device is known by
 *       (host, rank or process, ordinal), and by its UUID where the trace has one.
 *   K3SIM_GPU_METRICS(timestamp, globalPid, deviceId, smClockMHz, memClockMHz, powerW,
 *       temperatureC, throttleReasons)   GPU clocks, power and temperature sampled (NVML) while
 *       the trace was taken: timestamp in ns on the trace's clock, deviceId that of the activity
 *       rows, throttleReasons NVML's clocks-event reason bits; NULL where a reading failed
 *
 * Ownership: a trace_db owns its SQLite handle, prepared statements and the interned strings.
 * Every `const char *` in a record is only read during the call and may be freed right after.
 *
 * Thread-safety: none inside. One trace_db must be used by one thread at a time (the capture
 * writer thread); distinct trace_db objects are independent. No call blocks on anything but disk.
 *
 * Rows of the hot tables (kernels, memcpys, memsets, API calls) are buffered and inserted up to 128
 * at a time; about 1 M kernel rows/s on the 2-core dev box (bench/trace-bench.sh).
 *
 * Durability: rows are inserted in batched transactions (one COMMIT per `batch_rows` rows, and
 * at trace_db_flush / trace_db_close). With `crash_safe` (WAL journal), a crash of the writing
 * process loses only rows not yet committed and leaves a valid database; trace_db_close turns the
 * file back into a single self-contained file (journal_mode=DELETE).
 *
 * Errors: every function returns 0 or a negative errno (-EINVAL bad argument, -ENOMEM, -ENOSPC
 * when a bound is reached, -EEXIST, -EIO for SQLite failures) and fills `e` (may be NULL) with
 * the file name and reason. After an error other than -EINVAL the database should be closed
 * (or discarded). Rows buffered at the time of an error may be lost with it. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* nsys' serialized process and thread ids: pid in bits 24..47, tid in bits 0..23. */
static inline int64_t trace_global_pid(int64_t pid)
{
	return (pid & 0xffffff) << 24;
}
static inline int64_t trace_global_tid(int64_t pid, int64_t tid)
{
	return ((pid & 0xffffff) << 24) | (tid & 0xffffff);
}
static inline int64_t trace_global_to_pid(int64_t global_id)
{
	return (global_id >> 24) & 0xffffff;
}

/* nsys NVTX_EVENTS.eventType values. */
enum trace_nvtx_type {
	TRACE_NVTX_MARK = 34,
	TRACE_NVTX_PUSH_POP = 59,
	TRACE_NVTX_START_END = 60,
};

/* NVTX_EVENTS.domainId of GPU-side annotations (Kineto's gpu_user_annotation: a user range
 * projected onto the kernels it launched). Such rows are start/end ranges whose globalTid is
 * trace_global_tid(pid, streamId) and whose category is the deviceId; analyses that attribute
 * kernels to CPU ranges skip this domain, which would count them twice. */
#define TRACE_NVTX_DOMAIN_GPU ((int64_t)0x6b3367707500) /* "k3gpu" */

/* CUPTI_ACTIVITY_KIND_RUNTIME.eventClass values (nsys ENUM_NSYS_EVENT_CLASS). */
enum trace_api_kind {
	TRACE_API_RUNTIME = 0,
	TRACE_API_DRIVER = 1,
};

/* The one rule for a kernel's launching call (trace summary, calibration, validate): the API call
 * of the kernel's process with its correlation id; where a runtime and a driver call share the id,
 * the runtime call the program made rather than the driver call made under it, else the first
 * loaded. Whether cand should replace have. Calls of other classes (nsys eventClass 67, a
 * backtrace duplicate) and correlation id 0 launch nothing. */
static inline bool trace_launch_call_better(enum trace_api_kind have, enum trace_api_kind cand)
{
	return have == TRACE_API_DRIVER && cand == TRACE_API_RUNTIME;
}

/* copyKind values (CUpti_ActivityMemcpyKind). */
enum trace_copy_kind {
	TRACE_COPY_UNKNOWN = 0,
	TRACE_COPY_HTOD = 1,
	TRACE_COPY_DTOH = 2,
	TRACE_COPY_DTOD = 8,
	TRACE_COPY_HTOH = 9,
	TRACE_COPY_PTOP = 10,
};

/* One kernel execution. Zero-initialize and fill what is known: zero is the "unknown" value of
 * every numeric field, NULL of every string except `name`. */
struct trace_kernel {
	int64_t start_ns, end_ns;      /* GPU timestamps, ns; end_ns >= start_ns */
	int64_t global_pid;            /* trace_global_pid(pid) */
	uint32_t device_id, context_id, stream_id;
	uint32_t correlation_id;       /* matches the launching API call's correlation_id */
	const char *name;              /* demangled name, required */
	const char *short_name;        /* NULL: derived from name by trace_short_name() */
	const char *mangled_name;      /* NULL: column left NULL */
	int32_t grid_x, grid_y, grid_z;    /* CTAs */
	int32_t block_x, block_y, block_z; /* threads */
	int32_t registers_per_thread;
	int32_t static_shared_bytes;   /* per CTA */
	int32_t dynamic_shared_bytes;  /* per CTA */
	int32_t local_bytes_per_thread;
	int64_t local_bytes_total;
	int64_t grid_id;
	int32_t launch_type;           /* CUpti_ActivityLaunchType; 0 regular */
	int32_t cache_config;
	int32_t shared_memory_executed_bytes;
	int64_t graph_node_id;         /* 0: not launched from a graph */
};

struct trace_memcpy {
	int64_t start_ns, end_ns;
	int64_t global_pid;
	uint32_t device_id, context_id, stream_id, correlation_id;
	int64_t bytes;
	int32_t copy_kind;             /* enum trace_copy_kind */
	int32_t src_kind, dst_kind;    /* CUpti_ActivityMemoryKind */
	int32_t src_device_id, dst_device_id; /* peer copies; -1 unknown */
	int64_t graph_node_id;
};

struct trace_memset {
	int64_t start_ns, end_ns;
	int64_t global_pid;
	uint32_t device_id, context_id, stream_id, correlation_id;
	int64_t bytes;
	int32_t value;                 /* the byte value set */
	int32_t mem_kind;              /* CUpti_ActivityMemoryKind */
	int64_t graph_node_id;
};

/* One CUDA runtime or driver API call (CPU side). */
struct trace_api {
	int64_t start_ns, end_ns;
	int64_t global_tid;            /* trace_global_tid(pid, tid) */
	uint32_t correlation_id;
	int32_t return_value;          /* cudaError_t / CUresult */
	enum trace_api_kind kind;
	const char *name;              /* required, e.g. "cudaLaunchKernel_v7000" */
};

/* An NVTX range or mark (CPU side). */
struct trace_nvtx {
	int64_t start_ns;
	int64_t end_ns;                /* ignored for marks (stored as NULL) */
	enum trace_nvtx_type type;
	int64_t global_tid;            /* thread that opened the range */
	int64_t end_global_tid;        /* start/end ranges may end elsewhere; 0: same thread */
	int64_t range_id;              /* start/end ranges: nvtxRangeId_t; else 0 */
	int32_t category;
	uint32_t color_argb;
	bool has_color;
	int64_t domain_id;
	const char *text;              /* required */
};

struct trace_gpu {
	int32_t id;                    /* deviceId used by the activity rows */
	const char *name;              /* e.g. "NVIDIA H200" */
	const char *bus_location;      /* "0000:17:00.0"; may be NULL */
	const char *uuid;              /* may be NULL */
	const char *chip_name;         /* "GH100"; may be NULL */
	int64_t total_memory_bytes;
	int64_t l2_cache_bytes;
	int64_t memory_bandwidth_bytes_per_s;
	int64_t clock_hz;              /* SM clock */
	int32_t sm_count;
	int32_t compute_major, compute_minor;
	int32_t cu_device;             /* CUDA ordinal in the capturing process */
	int32_t threads_per_warp;
	int32_t max_threads_per_block;
	int32_t max_shmem_per_block_bytes;
	int32_t max_shmem_per_sm_bytes;
	int32_t max_registers_per_block;
	int32_t max_registers_per_sm;
	int32_t max_warps_per_sm;
	int32_t max_blocks_per_sm;
	int32_t async_engines;
};

/* Records that a producer lost (CUPTI buffer overflow, a full queue, ...). */
struct trace_dropped {
	const char *source;            /* "cupti", "queue", ...; required */
	int32_t device_id, context_id, stream_id; /* -1 where not applicable */
	int64_t count;
};

/* One hardware-counter value of one kernel execution. */
struct trace_kernel_metric {
	int64_t global_pid;
	uint32_t device_id;
	uint32_t correlation_id;       /* the kernel's, from the trace pass */
	const char *kernel_name;       /* demangled; may be NULL */
	const char *metric;            /* "dram_read_bytes", "dram_write_bytes", "sm_throughput" */
	double value;
	const char *unit;              /* "bytes", "percent", ...; may be NULL */
};

/* Well-known K3SIM_CAPTURE keys (values are text; numbers in decimal, units in the key). */
#define TRACE_CAPTURE_COMMAND_LINE "command_line"
#define TRACE_CAPTURE_CUDA_RUNTIME_VERSION "cuda_runtime_version"
#define TRACE_CAPTURE_CUDA_DRIVER_VERSION "cuda_driver_version"
#define TRACE_CAPTURE_CUPTI_VERSION "cupti_version"
#define TRACE_CAPTURE_DRIVER_VERSION "nvidia_driver_version"
#define TRACE_CAPTURE_HOST "host"
#define TRACE_CAPTURE_PID "pid"
#define TRACE_CAPTURE_RANK "rank"
#define TRACE_CAPTURE_START_UTC_NS "start_utc_ns"
#define TRACE_CAPTURE_END_UTC_NS "end_utc_ns"
#define TRACE_CAPTURE_SOURCE "source"      /* "cupti", "nsys-import", "kineto-import", "merge" */
#define TRACE_CAPTURE_WORLD_SIZE "world_size"
/* What the times are counted from: TRACE_CLOCK_UNIX_EPOCH (ns since 1970 UTC: Kineto traces with
 * baseTimeNanoseconds, nsys exports with their session start time) or TRACE_CLOCK_UNKNOWN (an
 * origin the file does not state). Times of different hosts are on different clocks either way;
 * merge says so. */
#define TRACE_CAPTURE_CLOCK "clock"
#define TRACE_CLOCK_UNIX_EPOCH "unix_epoch"
#define TRACE_CLOCK_UNKNOWN "unknown"

/* Bounds and tuning. Zero fields take the defaults below. */
struct trace_db_opts {
	bool overwrite;                /* replace an existing file; otherwise -EEXIST */
	bool crash_safe;               /* WAL journal: a crash keeps all committed rows */
	int64_t batch_rows;            /* rows per transaction; default 65536 */
	int64_t max_strings;           /* distinct interned strings; default 4 Mi */
	int64_t max_string_bytes;      /* total bytes of interned strings; default 512 MiB */
	int64_t max_string_len_bytes;  /* one string; longer ones are cut, never rejected; 64 KiB */
};

enum {
	TRACE_DB_DEFAULT_BATCH_ROWS = 65536,
	TRACE_DB_DEFAULT_MAX_STRINGS = 4 * 1024 * 1024,
	TRACE_DB_DEFAULT_MAX_STRING_LEN_BYTES = 64 * 1024,
};
#define TRACE_DB_DEFAULT_MAX_STRING_BYTES ((int64_t)512 * 1024 * 1024)
#define TRACE_DB_SCHEMA_VERSION 1

/* Counts of what was written so far. */
struct trace_db_stats {
	int64_t kernels, memcpys, memsets, api_calls, nvtx, gpus, strings, dropped_records;
	int64_t metrics;
	int64_t gpu_metrics;
};

struct trace_db;

/* Create the file at `path` with the full schema and return a writer in *out. opts may be NULL.
 * An existing empty regular file is used as it is (an atomic output's temporary: the CLI writes
 * through util/outfile.h and renames the file into place after trace_db_close); any other
 * existing file is -EEXIST, or removed first with `overwrite` (tests, capture). On failure nothing
 * is left at path (unless it existed and overwrite was false). The path ":memory:" makes a
 * database that lives and dies with the writer (tests, fuzzers). */
int trace_db_create(struct trace_db **out, const char *path, const struct trace_db_opts *opts,
		    struct err *e);

/* Commit pending rows, write META_DATA_EXPORT, close, and free db (NULL is accepted). The file is
 * a valid, self-contained database afterwards. On error the rows of the last batch may be lost but
 * db is still freed. */
int trace_db_close(struct trace_db *db, struct err *e);

/* Close without the final commit, and delete the file: for a failed import. NULL is accepted. */
void trace_db_discard(struct trace_db *db);

/* Commit pending rows now (capture calls this at cudaDeviceReset and on SIGINT/SIGTERM). */
int trace_db_flush(struct trace_db *db, struct err *e);

/* The StringIds id of s (added on first use). Strings longer than max_string_len_bytes are cut
 * there (on a UTF-8 boundary). -ENOSPC when max_strings or max_string_bytes is reached. */
int trace_db_intern(struct trace_db *db, const char *s, int64_t *id_out, struct err *e);

int trace_db_add_kernel(struct trace_db *db, const struct trace_kernel *k, struct err *e);
int trace_db_add_memcpy(struct trace_db *db, const struct trace_memcpy *m, struct err *e);
int trace_db_add_memset(struct trace_db *db, const struct trace_memset *m, struct err *e);
int trace_db_add_api(struct trace_db *db, const struct trace_api *a, struct err *e);
int trace_db_add_nvtx(struct trace_db *db, const struct trace_nvtx *n, struct err *e);
int trace_db_add_gpu(struct trace_db *db, const struct trace_gpu *g, struct err *e);
int trace_db_add_process(struct trace_db *db, int64_t global_pid, int64_t pid, const char *name,
			 struct err *e);
int trace_db_add_dropped(struct trace_db *db, const struct trace_dropped *d, struct err *e);
int trace_db_add_kernel_metric(struct trace_db *db, const struct trace_kernel_metric *m,
			       struct err *e);

/* A K3SIM_DEVICE_MAP row: process global_pid (rank `rank` on host `host`) knew GPU device_id
 * (TARGET_INFO_GPU.id) as CUDA ordinal cuda_id. */
struct trace_device_map {
	int64_t global_pid;
	int32_t cuda_id, device_id;
	const char *uuid;              /* may be NULL */
	const char *host;              /* may be NULL: unknown */
	int64_t rank;                  /* -1: unknown */
};
int trace_db_add_device_map(struct trace_db *db, const struct trace_device_map *m, struct err *e);

/* Rewrite process from_pid as to_pid (pid bits of every globalPid and globalTid, and PROCESSES)
 * in all rows written so far: for an importer that learns a process id after it wrote rows.
 * *rows (may be NULL) gets the activity rows changed (kernels, memcpys, memsets, API calls).
 * Commits pending rows first. */
int trace_db_rewrite_pid(struct trace_db *db, int64_t from_pid, int64_t to_pid, int64_t *rows,
			 struct err *e);

/* Add delta_ns to every start and end written so far (an importer that learns its time base after
 * the rows). -ERANGE, with nothing changed, when a time would leave the int64 ns range. */
int trace_db_shift_time(struct trace_db *db, int64_t delta_ns, struct err *e);

/* NVML's clocks-event ("throttle") reason bits, as nvmlDeviceGetCurrentClocksEventReasons reports
 * them (nvml.h nvmlClocksEventReason*) and K3SIM_GPU_METRICS.throttleReasons stores them. */
enum trace_throttle {
	TRACE_THROTTLE_GPU_IDLE = 0x1,
	TRACE_THROTTLE_APP_CLOCKS = 0x2,        /* applications clocks setting */
	TRACE_THROTTLE_SW_POWER_CAP = 0x4,      /* the power limit: the sustained regime */
	TRACE_THROTTLE_HW_SLOWDOWN = 0x8,
	TRACE_THROTTLE_SYNC_BOOST = 0x10,
	TRACE_THROTTLE_SW_THERMAL = 0x20,
	TRACE_THROTTLE_HW_THERMAL = 0x40,
	TRACE_THROTTLE_HW_POWER_BRAKE = 0x80,
	TRACE_THROTTLE_DISPLAY_CLOCKS = 0x100,
};

/* Names of the reason bits in `reasons`, '|'-separated ("sw_power_cap|sw_thermal"; unknown bits
 * in hex), "none" for 0, into buf (n bytes, cut to fit). Returns buf. */
const char *trace_throttle_names(uint64_t reasons, char *buf, size_t n);

/* One K3SIM_GPU_METRICS row: a reading of one GPU's clocks, power and temperature. */
struct trace_gpu_metric {
	int64_t timestamp_ns;          /* the trace's clock (CUPTI's in a capture) */
	int64_t global_pid;            /* the process that sampled */
	int32_t device_id;
	bool has_sm, has_mem, has_power, has_temp, has_throttle; /* false: stored as NULL */
	bool has_power_avg;
	double sm_mhz, mem_mhz;        /* current clocks */
	double power_w;                /* board power: instantaneous where NVML has it */
	double power_avg_w;            /* board power as nvmlDeviceGetPowerUsage gives it: a trailing
	                                * 1 s mean on Ampere and newer (powerAvgW; NULL in captures
	                                * before 2026-12-06) */
	double temp_c;
	uint64_t throttle_reasons;     /* NVML clocks-event reason bits */
};
int trace_db_add_gpu_metric(struct trace_db *db, const struct trace_gpu_metric *m, struct err *e);

/* K3SIM_CAPTURE[key] = value (replacing an earlier value of key). */
int trace_db_set_capture(struct trace_db *db, const char *key, const char *value, struct err *e);

void trace_db_stats(const struct trace_db *db, struct trace_db_stats *out);

/* The file path the writer was created with. */
const char *trace_db_path(const struct trace_db *db);

/* nsys' "short name" of a demangled kernel name: without return type, namespaces, template
 * arguments and parameters ("void ns::k<4>(float*)" -> "k"). Writes at most n bytes including the
 * NUL into buf and returns the length it needed (like snprintf). */
size_t trace_short_name(const char *demangled, char *buf, size_t n);

#endif
