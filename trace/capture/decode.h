#ifndef K3_TRACE_CAPTURE_DECODE_H
#define K3_TRACE_CAPTURE_DECODE_H

/* CUPTI activity records -> trace database rows. This is the one place that knows CUPTI's record
 * structs (CUpti_ActivityKernel10, ...), which change with CUDA minors: when CUDA moves on, only
 * decode.c changes. Runs on the capture writer thread only, except capture_decoder_note_range_end
 * which the NVTX callback calls from the application's threads. */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/capture/gpumon.h"
#include "trace/db/tracedb.h"
#include "util/err.h"

enum {
	CAPTURE_MAX_METRICS = 8,       /* metrics per kernel in one capture */
	CAPTURE_SYMBOL_BYTES = 240,    /* kernel symbol kept with a metric record, NUL included */
};

/* A mark from trace_capture_mark(), as queued (8-byte aligned, name follows, NUL-terminated). */
struct capture_mark {
	int64_t timestamp_ns;          /* CUPTI clock */
	int64_t tid;
	uint32_t name_bytes;           /* including the NUL */
	uint32_t pad;
	/* char name[name_bytes]; then padding to 8 bytes */
};

/* One kernel's counters from the range profiler, as queued. */
struct capture_metric {
	uint32_t correlation_id;       /* the launching API call's (matches the kernel row) */
	uint32_t device_id;
	uint32_t n_values;
	uint32_t pad;
	double values[CAPTURE_MAX_METRICS]; /* in the order of capture_decoder_set_metrics */
	char symbol[CAPTURE_SYMBOL_BYTES];  /* mangled, cut to fit */
};

struct capture_open_range;
struct capture_name_entry;

struct capture_decoder {
	int64_t pid, global_pid;
	/* kernel names: mangled -> demangled, bounded cache */
	struct capture_name_entry *names;
	size_t names_cap, names_n;
	/* NVTX ranges whose start was seen and end not yet, by CUPTI marker id */
	struct capture_open_range *open;
	size_t open_cap, open_n;
	int64_t open_text_bytes, max_open_text_bytes;
	/* marker ids ended through nvtxRangeEnd/nvtxDomainRangeEnd (start/end ranges), filled by
	 * the NVTX callback on application threads */
	pthread_mutex_t ended_lock;
	uint64_t *ended;               /* open addressing; 0 = empty */
	size_t ended_cap, ended_n;
	/* API names by callback id, looked up once */
	const char *runtime_names[1024];
	const char *driver_names[1024];
	/* metrics, in the order the values come */
	const char *metric_names[CAPTURE_MAX_METRICS];
	const char *metric_units[CAPTURE_MAX_METRICS];
	size_t n_metrics;
	uint64_t devices_seen;         /* bit per deviceId < 64 */
	/* counts */
	int64_t records, unknown_records, unmatched_range_ends, open_overflow;
	int64_t last_timestamp_ns;
};

/* max_open_ranges: NVTX ranges open at once (beyond: the range is lost and counted). */
int capture_decoder_init(struct capture_decoder *d, int64_t pid, size_t max_open_ranges);
void capture_decoder_release(struct capture_decoder *d);

/* The metrics that capture_metric.values hold. names and units must outlive the decoder. */
void capture_decoder_set_metrics(struct capture_decoder *d, const char *const *names,
				 const char *const *units, size_t n);

/* From the NVTX callbacks (any thread), so that start/end ranges are told from push/pop ones
 * (CUPTI's marker records do not say which): a range named `text` was started by
 * nvtxRangeStart* on thread tid; marker id `id` was ended by nvtxRangeEnd*. */
void capture_decoder_note_range_start(struct capture_decoder *d, int64_t tid, const char *text);
void capture_decoder_note_range_end(struct capture_decoder *d, uint64_t id);

/* Decode one buffer of the given kind into db. Unknown record kinds are counted and skipped. */
int capture_decode_activity(struct capture_decoder *d, struct trace_db *db, uint8_t *buf,
			    size_t valid_bytes, struct err *e);
int capture_decode_marks(struct capture_decoder *d, struct trace_db *db, const uint8_t *buf,
			 size_t valid_bytes, struct err *e);
int capture_decode_metrics(struct capture_decoder *d, struct trace_db *db, const uint8_t *buf,
			   size_t valid_bytes, struct err *e);
/* struct gpumon_sample records (gpumon.h) -> K3SIM_GPU_METRICS rows of this process. */
int capture_decode_gpu_samples(struct capture_decoder *d, struct trace_db *db, const uint8_t *buf,
			       size_t valid_bytes, struct err *e);

/* Pack a mark into buf (bytes long) at *used; 0, or -ENOSPC when it does not fit. */
int capture_mark_pack(uint8_t *buf, size_t bytes, size_t *used, int64_t timestamp_ns, int64_t tid,
		      const char *name);

/* The ASCII name of the range an nvtxRangeStartA/Ex or nvtxDomainRangeStartEx callback starts
 * (CUpti_NvtxData *), else NULL. */
const char *capture_nvtx_range_start_text(uint32_t cbid, const void *cbdata);
/* The range id ended by an nvtxRangeEnd / nvtxDomainRangeEnd callback (CUpti_NvtxData *), else 0. */
uint64_t capture_nvtx_range_end_id(uint32_t cbid, const void *cbdata);

/* The human name of a CUPTI result code ("CUPTI_ERROR_NOT_INITIALIZED" ...). */
const char *capture_cupti_error_name(int result);

#endif
