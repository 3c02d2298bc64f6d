/* All knowledge of CUPTI's activity record layouts lives here (see decode.h). Built against the
 * CUDA 13.0 headers: CUpti_ActivityKernel10, Memcpy6, MemcpyPtoP4, Memset4, API, Device5,
 * Marker2. CUPTI hands out records of the newest layout its library knows; newer layouts append
 * fields, so an older build still reads the prefix it knows. When a new CUDA minor renames a
 * struct, change the typedefs just below and nothing else. */
#include "trace/capture/decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

typedef CUpti_ActivityKernel10 rec_kernel;
typedef CUpti_ActivityMemcpy6 rec_memcpy;
typedef CUpti_ActivityMemcpyPtoP4 rec_memcpy_p2p;
typedef CUpti_ActivityMemset4 rec_memset;
typedef CUpti_ActivityAPI rec_api;
typedef CUpti_ActivityDevice5 rec_device;
typedef CUpti_ActivityMarker2 rec_marker;

/* libstdc++'s demangler (C linkage); the library links libstdc++ for the range profiler anyway. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct capture_name_entry {
	uint64_t hash;                 /* 0: empty slot */
	char *mangled;
	char *demangled;               /* NULL: same as mangled */
};

struct capture_open_range {
	uint64_t id;                   /* 0: empty slot (CUPTI ids start at 1) */
	int64_t start_ns;
	int64_t tid;
	int64_t domain_id;
	char *text;
	bool start_end;                /* opened by nvtxRangeStart*, not nvtxRangePush* */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h ? h : 1;
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static size_t pow2_at_least(size_t n)
{
	size_t c = 16;
	while (c < n)
		c <<= 1;
	return c;
}

int capture_decoder_init(struct capture_decoder *d, int64_t pid, size_t max_open_ranges)
{
	memset(d, 0, sizeof *d);
	d->pid = pid;
	d->global_pid = trace_global_pid(pid);
	d->names_cap = 16384;
	d->open_cap = pow2_at_least(max_open_ranges * 2);
	d->ended_cap = 8192;
	d->max_open_text_bytes = 64 << 20;
	d->names = calloc(d->names_cap, sizeof *d->names);
	d->open = calloc(d->open_cap, sizeof *d->open);
	d->ended = calloc(d->ended_cap, sizeof *d->ended);
	if (!d->names || !d->open || !d->ended) {
		free(d->names);
		free(d->open);
		free(d->ended);
		memset(d, 0, sizeof *d);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->ended_lock, NULL);
	return 0;
}

void capture_decoder_release(struct capture_decoder *d)
{
	if (!d || !d->names)
		return;
	for (size_t i = 0; i < d->names_cap; i++) {
		free(d->names[i].mangled);
		free(d->names[i].demangled);
	}
	for (size_t i = 0; i < d->open_cap; i++)
		free(d->open[i].text);
	free(d->names);
	free(d->open);
	free(d->ended);
	pthread_mutex_destroy(&d->ended_lock);
	memset(d, 0, sizeof *d);
}

void capture_decoder_set_metrics(struct capture_decoder *d, const char *const *names,
				 const char *const *units, size_t n)
{
	if (n > CAPTURE_MAX_METRICS)
		n = CAPTURE_MAX_METRICS;
	for (size_t i = 0; i < n; i++) {
		d->metric_names[i] = names[i];
		d->metric_units[i] = units ? units[i] : NULL;
	}
	d->n_metrics = n;
}

/* ---- start/end range ids (set filled on application threads) ---- */

/* Keys of the set: marker ids below 2^63, (thread, text) of a range start above. */
static uint64_t start_key(int64_t tid, const char *text)
{
	return (hash_u64((uint64_t)tid) ^ hash_str(text)) | (1ULL << 63);
}

static void note_key(struct capture_decoder *d, uint64_t id);

void capture_decoder_note_range_end(struct capture_decoder *d, uint64_t id)
{
	note_key(d, id & ~(1ULL << 63));
}

void capture_decoder_note_range_start(struct capture_decoder *d, int64_t tid, const char *text)
{
	if (text)
		note_key(d, start_key(tid, text));
}

static void note_key(struct capture_decoder *d, uint64_t id)
{
	if (id == 0)
		return;
	pthread_mutex_lock(&d->ended_lock);
	if (d->ended_n * 2 < d->ended_cap) {
		size_t mask = d->ended_cap - 1;
		for (size_t i = hash_u64(id) & mask;; i = (i + 1) & mask) {
			if (d->ended[i] == id)
				break;
			if (d->ended[i] == 0) {
				d->ended[i] = id;
				d->ended_n++;
				break;
			}
		}
	}
	pthread_mutex_unlock(&d->ended_lock);
}

/* Remove id from the set; true when it was there. Backward-shift deletion keeps probes short. */
static bool ended_take(struct capture_decoder *d, uint64_t id)
{
	bool found = false;
	pthread_mutex_lock(&d->ended_lock);
	size_t mask = d->ended_cap - 1;
	size_t i = hash_u64(id) & mask;
	for (; d->ended[i]; i = (i + 1) & mask)
		if (d->ended[i] == id) {
			found = true;
			break;
		}
	if (found) {
		size_t j = i;
		for (;;) {
			d->ended[i] = 0;
			for (;;) {
				j = (j + 1) & mask;
				if (!d->ended[j])
					goto done;
				size_t k = hash_u64(d->ended[j]) & mask;
				/* can the entry at j move to i? */
				if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
					continue;
				break;
			}
			d->ended[i] = d->ended[j];
			i = j;
		}
done:
		d->ended_n--;
	}
	pthread_mutex_unlock(&d->ended_lock);
	return found;
}

/* ---- open NVTX ranges ---- */

static struct capture_open_range *open_find(struct capture_decoder *d, uint64_t id)
{
	size_t mask = d->open_cap - 1;
	for (size_t i = hash_u64(id) & mask; d->open[i].id; i = (i + 1) & mask)
		if (d->open[i].id == id)
			return &d->open[i];
	return NULL;
}

static void open_remove(struct capture_decoder *d, struct capture_open_range *r)
{
	size_t mask = d->open_cap - 1;
	size_t i = (size_t)(r - d->open), j = i;
	d->open_text_bytes -= r->text ? (int64_t)strlen(r->text) + 1 : 0;
	free(r->text);
	for (;;) {
		d->open[i].id = 0;
		d->open[i].text = NULL;
		for (;;) {
			j = (j + 1) & mask;
			if (!d->open[j].id)
				goto done;
			size_t k = hash_u64(d->open[j].id) & mask;
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		d->open[i] = d->open[j];
		i = j;
	}
done:
	d->open_n--;
}

static void open_add(struct capture_decoder *d, uint64_t id, int64_t start_ns, int64_t tid,
		     int64_t domain_id, const char *text, bool start_end)
{
	size_t len = strlen(text) + 1;
	if (d->open_n * 2 >= d->open_cap ||
	    d->open_text_bytes + (int64_t)len > d->max_open_text_bytes || open_find(d, id)) {
		d->open_overflow++;
		return;
	}
	char *copy = malloc(len);
	if (!copy) {
		d->open_overflow++;
		return;
	}
	memcpy(copy, text, len);
	size_t mask = d->open_cap - 1;
	size_t i = hash_u64(id) & mask;
	while (d->open[i].id)
		i = (i + 1) & mask;
	d->open[i] = (struct capture_open_range){id, start_ns, tid, domain_id, copy, start_end};
	d->open_n++;
	d->open_text_bytes += (int64_t)len;
}

/* ---- kernel names ---- */

static const char *demangled_name(struct capture_decoder *d, const char *mangled, char **tmp)
{
	*tmp = NULL;
	uint64_t h = hash_str(mangled);
	size_t mask = d->names_cap - 1;
	size_t i = h & mask;
	for (; d->names[i].hash; i = (i + 1) & mask)
		if (d->names[i].hash == h && strcmp(d->names[i].mangled, mangled) == 0)
			return d->names[i].demangled ? d->names[i].demangled : d->names[i].mangled;
	int status = -1;
	char *dem = NULL;
	if (mangled[0] == '_' && mangled[1] == 'Z')
		dem = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(dem);
		dem = NULL;
	}
	if (d->names_n * 2 >= d->names_cap) { /* cache full: answer without keeping it */
		*tmp = dem;
		return dem ? dem : mangled;
	}
	char *m = strdup(mangled);
	if (!m) {
		*tmp = dem;
		return dem ? dem : mangled;
	}
	d->names[i] = (struct capture_name_entry){h, m, dem};
	d->names_n++;
	return dem ? dem : m;
}

/* ---- record kinds ---- */

static void note_time(struct capture_decoder *d, uint64_t t)
{
	if ((int64_t)t > d->last_timestamp_ns)
		d->last_timestamp_ns = (int64_t)t;
}

static int decode_kernel(struct capture_decoder *d, struct trace_db *db, const rec_kernel *r,
			 struct err *e)
{
	if (!r->name)
		return 0;
	char *tmp;
	const char *name = demangled_name(d, r->name, &tmp);
	struct trace_kernel k = {
		.start_ns = (int64_t)r->start,
		.end_ns = (int64_t)(r->end >= r->start ? r->end : r->start),
		.global_pid = d->global_pid,
		.device_id = r->deviceId,
		.context_id = r->contextId,
		.stream_id = r->streamId,
		.correlation_id = r->correlationId,
		.name = name,
		.mangled_name = strcmp(name, r->name) != 0 ? r->name : NULL,
		.grid_x = r->gridX, .grid_y = r->gridY, .grid_z = r->gridZ,
		.block_x = r->blockX, .block_y = r->blockY, .block_z = r->blockZ,
		.registers_per_thread = r->registersPerThread,
		.static_shared_bytes = r->staticSharedMemory,
		.dynamic_shared_bytes = r->dynamicSharedMemory,
		.local_bytes_per_thread = (int32_t)r->localMemoryPerThread,
		.local_bytes_total = (int64_t)r->localMemoryTotal_v2,
		.grid_id = r->gridId,
		.launch_type = r->launchType,
		.cache_config = r->cacheConfig.both,
		.shared_memory_executed_bytes = (int32_t)r->sharedMemoryExecuted,
		.graph_node_id = (int64_t)r->graphNodeId,
	};
	note_time(d, r->end);
	int rc = trace_db_add_kernel(db, &k, e);
	free(tmp);
	return rc;
}

static int decode_memcpy(struct capture_decoder *d, struct trace_db *db, const rec_memcpy *r,
			 struct err *e)
{
	struct trace_memcpy m = {
		.start_ns = (int64_t)r->start,
		.end_ns = (int64_t)(r->end >= r->start ? r->end : r->start),
		.global_pid = d->global_pid,
		.device_id = r->deviceId,
		.context_id = r->contextId,
		.stream_id = r->streamId,
		/* the runtime call's id when the runtime issued it: what its API row carries */
		.correlation_id = r->runtimeCorrelationId ? r->runtimeCorrelationId
							  : r->correlationId,
		.bytes = (int64_t)r->bytes,
		.copy_kind = r->copyKind,
		.src_kind = r->srcKind,
		.dst_kind = r->dstKind,
		.src_device_id = -1,
		.dst_device_id = -1,
		.graph_node_id = (int64_t)r->graphNodeId,
	};
	note_time(d, r->end);
	return trace_db_add_memcpy(db, &m, e);
}

static int decode_memcpy_p2p(struct capture_decoder *d, struct trace_db *db,
			     const rec_memcpy_p2p *r, struct err *e)
{
	struct trace_memcpy m = {
		.start_ns = (int64_t)r->start,
		.end_ns = (int64_t)(r->end >= r->start ? r->end : r->start),
		.global_pid = d->global_pid,
		.device_id = r->deviceId,
		.context_id = r->contextId,
		.stream_id = r->streamId,
		.correlation_id = r->correlationId,
		.bytes = (int64_t)r->bytes,
		.copy_kind = r->copyKind,
		.src_kind = r->srcKind,
		.dst_kind = r->dstKind,
		.src_device_id = (int32_t)r->srcDeviceId,
		.dst_device_id = (int32_t)r->dstDeviceId,
		.graph_node_id = (int64_t)r->graphNodeId,
	};
	note_time(d, r->end);
	return trace_db_add_memcpy(db, &m, e);
}

static int decode_memset(struct capture_decoder *d, struct trace_db *db, const rec_memset *r,
			 struct err *e)
{
	struct trace_memset m = {
		.start_ns = (int64_t)r->start,
		.end_ns = (int64_t)(r->end >= r->start ? r->end : r->start),
		.global_pid = d->global_pid,
		.device_id = r->deviceId,
		.context_id = r->contextId,
		.stream_id = r->streamId,
		.correlation_id = r->correlationId,
		.bytes = (int64_t)r->bytes,
		.value = (int32_t)r->value,
		.mem_kind = r->memoryKind,
		.graph_node_id = (int64_t)r->graphNodeId,
	};
	note_time(d, r->end);
	return trace_db_add_memset(db, &m, e);
}

static const char *api_name(struct capture_decoder *d, bool driver, uint32_t cbid)
{
	const char **slot = NULL;
	if (cbid < 1024)
		slot = driver ? &d->driver_names[cbid] : &d->runtime_names[cbid];
	if (slot && *slot)
		return *slot;
	const char *name = NULL;
	CUpti_CallbackDomain dom = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
		name = driver ? "cuUnknown" : "cudaUnknown";
	if (slot)
		*slot = name;                  /* CUPTI keeps these strings for the process' life */
	return name;
}

static int decode_api(struct capture_decoder *d, struct trace_db *db, const rec_api *r,
		      bool driver, struct err *e)
{
	struct trace_api a = {
		.start_ns = (int64_t)r->start,
		.end_ns = (int64_t)(r->end >= r->start ? r->end : r->start),
		.global_tid = trace_global_tid(r->processId ? r->processId : d->pid, r->threadId),
		.correlation_id = r->correlationId,
		.return_value = (int32_t)r->returnValue,
		.kind = driver ? TRACE_API_DRIVER : TRACE_API_RUNTIME,
		.name = api_name(d, driver, (uint32_t)r->cbid),
	};
	note_time(d, r->end);
	return trace_db_add_api(db, &a, e);
}

static void format_uuid(const CUuuid *u, char *out, size_t n)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	snprintf(out, n,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

static int decode_device(struct capture_decoder *d, struct trace_db *db, const rec_device *r,
			 struct err *e)
{
	if (r->id < 64) {
		if (d->devices_seen & (1ULL << r->id))
			return 0;
		d->devices_seen |= 1ULL << r->id;
	}
	char uuid[64];
	format_uuid(&r->uuid, uuid, sizeof uuid);
	struct trace_gpu g = {
		.id = (int32_t)r->id,
		.name = r->name ? r->name : "unknown",
		.uuid = uuid,
		.total_memory_bytes = (int64_t)r->globalMemorySize,
		.l2_cache_bytes = r->l2CacheSize,
		.memory_bandwidth_bytes_per_s = (int64_t)r->globalMemoryBandwidth * 1000, /* KB/s */
		.clock_hz = (int64_t)r->coreClockRate * 1000,                             /* kHz */
		.sm_count = (int32_t)r->numMultiprocessors,
		.compute_major = (int32_t)r->computeCapabilityMajor,
		.compute_minor = (int32_t)r->computeCapabilityMinor,
		.cu_device = (int32_t)r->id,
		.threads_per_warp = (int32_t)r->numThreadsPerWarp,
		.max_threads_per_block = (int32_t)r->maxThreadsPerBlock,
		.max_shmem_per_block_bytes = (int32_t)r->maxSharedMemoryPerBlock,
		.max_shmem_per_sm_bytes = (int32_t)r->maxSharedMemoryPerMultiprocessor,
		.max_registers_per_block = (int32_t)r->maxRegistersPerBlock,
		.max_registers_per_sm = (int32_t)r->maxRegistersPerMultiprocessor,
		.max_warps_per_sm = (int32_t)r->maxWarpsPerMultiprocessor,
		.max_blocks_per_sm = (int32_t)r->maxBlocksPerMultiprocessor,
		.async_engines = (int32_t)r->numMemcpyEngines,
	};
	return trace_db_add_gpu(db, &g, e);
}

static int64_t domain_id_of(struct capture_decoder *d, struct trace_db *db, const char *domain)
{
	(void)d;
	int64_t id = 0;
	if (domain && *domain && trace_db_intern(db, domain, &id, NULL) < 0)
		id = 0;
	return id;
}

static int decode_marker(struct capture_decoder *d, struct trace_db *db, const rec_marker *r,
			 struct err *e)
{
	int64_t tid = 0;
	if (r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
	    r->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
		tid = r->objectId.pt.threadId;
	int64_t gtid = trace_global_tid(d->pid, tid);
	note_time(d, r->timestamp);
	if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		struct trace_nvtx n = {
			.start_ns = (int64_t)r->timestamp,
			.type = TRACE_NVTX_MARK,
			.global_tid = gtid,
			.domain_id = domain_id_of(d, db, r->domain),
			.text = r->name ? r->name : "",
		};
		return trace_db_add_nvtx(db, &n, e);
	}
	if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		const char *text = r->name ? r->name : "";
		bool start_end = ended_take(d, start_key(tid, text));
		open_add(d, r->id, (int64_t)r->timestamp, tid, domain_id_of(d, db, r->domain), text,
			 start_end);
		return 0;
	}
	if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		struct capture_open_range *o = open_find(d, r->id);
		bool start_end = ended_take(d, r->id & ~(1ULL << 63));
		if (!o) {
			d->unmatched_range_ends++;
			return 0;
		}
		if (o->tid != tid || o->start_end)
			start_end = true;      /* push/pop never crosses threads */
		struct trace_nvtx n = {
			.start_ns = o->start_ns,
			.end_ns = (int64_t)r->timestamp,
			.type = start_end ? TRACE_NVTX_START_END : TRACE_NVTX_PUSH_POP,
			.global_tid = trace_global_tid(d->pid, o->tid),
			.end_global_tid = o->tid != tid ? gtid : 0,
			.range_id = start_end ? (int64_t)r->id : 0,
			.domain_id = o->domain_id,
			.text = o->text,
		};
		int rc = trace_db_add_nvtx(db, &n, e);
		open_remove(d, o);
		return rc;
	}
	return 0;
}

int capture_decode_activity(struct capture_decoder *d, struct trace_db *db, uint8_t *buf,
			    size_t valid_bytes, struct err *e)
{
	CUpti_Activity *rec = NULL;
	int rc = 0;
	for (;;) {
		CUptiResult st = cuptiActivityGetNextRecord(buf, valid_bytes, &rec);
		if (st == CUPTI_ERROR_MAX_LIMIT_REACHED)
			break;
		if (st != CUPTI_SUCCESS) {
			err_set(e, NULL, 0, 0, "cuptiActivityGetNextRecord: %s",
				capture_cupti_error_name(st));
			return -EIO;
		}
		d->records++;
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL:
			rc = decode_kernel(d, db, (const rec_kernel *)rec, e);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			rc = decode_memcpy(d, db, (const rec_memcpy *)rec, e);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY2:
			rc = decode_memcpy_p2p(d, db, (const rec_memcpy_p2p *)rec, e);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			rc = decode_memset(d, db, (const rec_memset *)rec, e);
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
			rc = decode_api(d, db, (const rec_api *)rec, false, e);
			break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
			rc = decode_api(d, db, (const rec_api *)rec, true, e);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			rc = decode_device(d, db, (const rec_device *)rec, e);
			break;
		case CUPTI_ACTIVITY_KIND_MARKER:
			rc = decode_marker(d, db, (const rec_marker *)rec, e);
			break;
		default:
			d->unknown_records++;
			break;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- our own records ---- */

static size_t mark_size(uint32_t name_bytes)
{
	return (sizeof(struct capture_mark) + name_bytes + 7) & ~(size_t)7;
}

int capture_mark_pack(uint8_t *buf, size_t bytes, size_t *used, int64_t timestamp_ns, int64_t tid,
		      const char *name)
{
	size_t len = strlen(name);
	if (len > 4095)
		len = 4095;
	size_t need = mark_size((uint32_t)len + 1);
	if (*used + need > bytes)
		return -ENOSPC;
	struct capture_mark m = {timestamp_ns, tid, (uint32_t)len + 1, 0};
	memcpy(buf + *used, &m, sizeof m);
	memcpy(buf + *used + sizeof m, name, len);
	buf[*used + sizeof m + len] = '\0';
	*used += need;
	return 0;
}

int capture_decode_marks(struct capture_decoder *d, struct trace_db *db, const uint8_t *buf,
			 size_t valid_bytes, struct err *e)
{
	size_t off = 0;
	while (off + sizeof(struct capture_mark) <= valid_bytes) {
		struct capture_mark m;
		memcpy(&m, buf + off, sizeof m);
		size_t sz = mark_size(m.name_bytes);
		if (m.name_bytes == 0 || off + sz > valid_bytes)
			break;
		struct trace_nvtx n = {
			.start_ns = m.timestamp_ns,
			.type = TRACE_NVTX_MARK,
			.global_tid = trace_global_tid(d->pid, m.tid),
			.text = (const char *)buf + off + sizeof m,
		};
		note_time(d, (uint64_t)m.timestamp_ns);
		int rc = trace_db_add_nvtx(db, &n, e);
		if (rc < 0)
			return rc;
		off += sz;
	}
	return 0;
}

int capture_decode_gpu_samples(struct capture_decoder *d, struct trace_db *db, const uint8_t *buf,
			       size_t valid_bytes, struct err *e)
{
	for (size_t off = 0; off + sizeof(struct gpumon_sample) <= valid_bytes;
	     off += sizeof(struct gpumon_sample)) {
		struct gpumon_sample g;
		memcpy(&g, buf + off, sizeof g);
		struct trace_gpu_metric m = {
			.timestamp_ns = g.timestamp_ns,
			.global_pid = d->global_pid,
			.device_id = g.device,
			.has_sm = (g.fields & GPUMON_HAS_SM) != 0,
			.has_mem = (g.fields & GPUMON_HAS_MEM) != 0,
			.has_power = (g.fields & GPUMON_HAS_POWER) != 0,
			.has_temp = (g.fields & GPUMON_HAS_TEMP) != 0,
			.has_throttle = (g.fields & GPUMON_HAS_THROTTLE) != 0,
			.has_power_avg = (g.fields & GPUMON_HAS_POWER_AVG) != 0,
			.sm_mhz = g.sm_mhz,
			.mem_mhz = g.mem_mhz,
			.power_w = g.power_w,
			.power_avg_w = g.power_avg_w,
			.temp_c = g.temp_c,
			.throttle_reasons = g.throttle_reasons,
		};
		int rc = trace_db_add_gpu_metric(db, &m, e);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int capture_decode_metrics(struct capture_decoder *d, struct trace_db *db, const uint8_t *buf,
			   size_t valid_bytes, struct err *e)
{
	for (size_t off = 0; off + sizeof(struct capture_metric) <= valid_bytes;
	     off += sizeof(struct capture_metric)) {
		struct capture_metric m;
		memcpy(&m, buf + off, sizeof m);
		m.symbol[sizeof m.symbol - 1] = '\0';
		char *tmp = NULL;
		const char *name = m.symbol[0] ? demangled_name(d, m.symbol, &tmp) : NULL;
		int rc = 0;
		for (size_t i = 0; i < m.n_values && i < d->n_metrics; i++) {
			struct trace_kernel_metric km = {
				.global_pid = d->global_pid,
				.device_id = m.device_id,
				.correlation_id = m.correlation_id,
				.kernel_name = name,
				.metric = d->metric_names[i],
				.value = m.values[i],
				.unit = d->metric_units[i],
			};
			rc = trace_db_add_kernel_metric(db, &km, e);
			if (rc < 0)
				break;
		}
		free(tmp);
		if (rc < 0)
			return rc;
	}
	return 0;
}

const char *capture_cupti_error_name(int result)
{
	const char *s = NULL;
	if (cuptiGetResultString((CUptiResult)result, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/* NVTX callback parameters (generated_nvtx_meta.h), declared here to keep NVTX's header-only
 * implementation out of this library. */
struct nvtx_range_end_params {
	uint64_t id;                   /* nvtxRangeId_t */
};
struct nvtx_domain_range_end_params {
	void *domain;                  /* nvtxDomainHandle_t */
	struct nvtx_range_end_params core;
};

struct nvtx_event_attributes {     /* nvtxEventAttributes_v2 */
	uint16_t version, size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type;
	int32_t reserved0;
	uint64_t payload;
	int32_t message_type;          /* 1: ASCII */
	const char *message;
};
struct nvtx_range_start_a_params {
	const char *message;
};
struct nvtx_range_start_ex_params {
	const struct nvtx_event_attributes *attr;
};
struct nvtx_domain_range_start_ex_params {
	void *domain;
	struct nvtx_range_start_ex_params core;
};

const char *capture_nvtx_range_start_text(uint32_t cbid, const void *cbdata)
{
	const CUpti_NvtxData *nd = cbdata;
	if (!nd || !nd->functionParams)
		return NULL;
	const struct nvtx_event_attributes *a = NULL;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
		return ((const struct nvtx_range_start_a_params *)nd->functionParams)->message;
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		a = ((const struct nvtx_range_start_ex_params *)nd->functionParams)->attr;
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
		a = ((const struct nvtx_domain_range_start_ex_params *)nd->functionParams)->core.attr;
		break;
	default:
		return NULL;
	}
	return a && a->message_type == 1 ? a->message : NULL;
}

uint64_t capture_nvtx_range_end_id(uint32_t cbid, const void *cbdata)
{
	const CUpti_NvtxData *nd = cbdata;
	if (!nd || !nd->functionParams)
		return 0;
	if (cbid == CUPTI_CBID_NVTX_nvtxRangeEnd)
		return ((const struct nvtx_range_end_params *)nd->functionParams)->id;
	if (cbid == CUPTI_CBID_NVTX_nvtxDomainRangeEnd)
		return ((const struct nvtx_domain_range_end_params *)nd->functionParams)->core.id;
	return 0;
}
