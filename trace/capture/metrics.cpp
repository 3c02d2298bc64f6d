// Per-kernel counters through CUPTI's range profiler (see metrics.h). C++ only because
// cupti_profiler_host.h is; the code stays C-like: no exceptions, fixed arrays, malloc'd images.
// util/err.h and trace/db/tracedb.h are C headers without C++ guards.
extern "C" {
#include "trace/db/tracedb.h"
#include "util/err.h"
}
#include "trace/capture/metrics.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

namespace {

// k3sim metric names -> CUPTI (Perfworks) metric names on Hopper; units as stored.
struct known_metric {
	const char *name, *cupti, *unit;
};
const known_metric known[] = {
	{"dram_read_bytes", "dram__bytes_read.sum", "bytes"},
	{"dram_write_bytes", "dram__bytes_write.sum", "bytes"},
	{"sm_throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "percent"},
};

// Ranges one counter-data image holds before it is rebuilt; small keeps SetConfig cheap.
constexpr size_t ranges_per_image = 64;
constexpr size_t max_contexts = 64;

struct ctx_state {
	CUcontext ctx = nullptr;
	bool failed = false;
	bool started = false;
	CUpti_Profiler_Host_Object *host = nullptr;
	CUpti_RangeProfiler_Object *rp = nullptr;
	uint8_t *avail = nullptr;      // counter availability image: the host object refers to it
	uint8_t *config = nullptr;
	size_t config_bytes = 0;
	uint8_t *counters = nullptr;
	size_t counter_bytes = 0;
	size_t ranges_seen = 0;
	uint32_t device_id = 0;
};

} // namespace

struct capture_metrics {
	std::mutex lock;               // kernel replay serializes launches anyway
	size_t n = 0;
	char names[CAPTURE_MAX_METRICS][128] = {};
	char cupti[CAPTURE_MAX_METRICS][128] = {};
	const char *name_ptrs[CAPTURE_MAX_METRICS] = {};
	const char *unit_ptrs[CAPTURE_MAX_METRICS] = {};
	const char *cupti_ptrs[CAPTURE_MAX_METRICS] = {};
	ctx_state ctxs[max_contexts];
	size_t n_ctx = 0;
	bool profiler_initialized = false;
	bool push_ranges = false;      // K3CAPTURE_METRICS_PUSH=1: wrap each launch in a range
	char error[512] = {};
	int64_t measured = 0, missed = 0;
};

static void set_error(capture_metrics *m, const char *what, CUptiResult r)
{
	if (m->error[0])
		return;
	const char *s = nullptr;
	cuptiGetResultString(r, &s);
	snprintf(m->error, sizeof m->error, "%s: %s", what, s ? s : "unknown CUPTI error");
}

#define TRY(call, what)                                                                        \
	do {                                                                                   \
		CUptiResult r_ = (call);                                                       \
		if (r_ != CUPTI_SUCCESS) {                                                     \
			set_error(m, what, r_);                                                \
			return false;                                                          \
		}                                                                              \
	} while (0)

extern "C" int capture_metrics_create(capture_metrics **out, const char *list, err *e)
{
	if (!list || !*list) {
		err_set(e, nullptr, 0, 0, "empty metric list");
		return -EINVAL;
	}
	capture_metrics *m = new (std::nothrow) capture_metrics;
	if (!m)
		return -ENOMEM;
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= sizeof m->names[0]) {
			err_set(e, nullptr, 0, 0, "bad metric name in '%s'", list);
			delete m;
			return -EINVAL;
		}
		if (m->n == CAPTURE_MAX_METRICS) {
			err_set(e, nullptr, 0, 0, "at most %d metrics", CAPTURE_MAX_METRICS);
			delete m;
			return -E2BIG;
		}
		char word[128];
		memcpy(word, p, len);
		word[len] = '\0';
		const known_metric *k = nullptr;
		for (const known_metric &km : known)
			if (strcmp(km.name, word) == 0)
				k = &km;
		if (!k && !strstr(word, "__")) {
			err_set(e, nullptr, 0, 0,
				"unknown metric '%s' (known: dram_read_bytes, dram_write_bytes, "
				"sm_throughput, or a raw CUPTI name like dram__bytes_read.sum)",
				word);
			delete m;
			return -EINVAL;
		}
		snprintf(m->names[m->n], sizeof m->names[0], "%s", word);
		snprintf(m->cupti[m->n], sizeof m->cupti[0], "%s", k ? k->cupti : word);
		m->name_ptrs[m->n] = m->names[m->n];
		m->cupti_ptrs[m->n] = m->cupti[m->n];
		m->unit_ptrs[m->n] = k ? k->unit : nullptr;
		m->n++;
		p += len;
		if (*p == ',')
			p++;
	}
	const char *push = getenv("K3CAPTURE_METRICS_PUSH");
	m->push_ranges = push && strcmp(push, "1") == 0;
	*out = m;
	return 0;
}

static void ctx_teardown(ctx_state *c)
{
	if (c->rp) {
		CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
		p.pRangeProfilerObject = c->rp;
		cuptiRangeProfilerDisable(&p);
		c->rp = nullptr;
	}
	if (c->host) {
		CUpti_Profiler_Host_Deinitialize_Params p = {
			CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
		p.pHostObject = c->host;
		cuptiProfilerHostDeinitialize(&p);
		c->host = nullptr;
	}
	free(c->avail);
	free(c->config);
	free(c->counters);
	*c = ctx_state();
}

extern "C" void capture_metrics_free(capture_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_ctx; i++)
		ctx_teardown(&m->ctxs[i]);
	delete m;
}

extern "C" size_t capture_metrics_count(const capture_metrics *m)
{
	return m->n;
}

extern "C" const char *const *capture_metrics_names(const capture_metrics *m)
{
	return m->name_ptrs;
}

extern "C" const char *const *capture_metrics_units(const capture_metrics *m)
{
	return m->unit_ptrs;
}

extern "C" const char *capture_metrics_error(const capture_metrics *m)
{
	return m->error;
}

extern "C" int64_t capture_metrics_measured(const capture_metrics *m)
{
	return m->measured;
}

extern "C" int64_t capture_metrics_missed(const capture_metrics *m)
{
	return m->missed;
}

// (Re)build the range profiler of one context: enable, fresh counter image, config.
static bool rp_arm(capture_metrics *m, ctx_state *c)
{
	if (c->rp) {
		CUpti_RangeProfiler_Disable_Params d = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
		d.pRangeProfilerObject = c->rp;
		cuptiRangeProfilerDisable(&d);
		c->rp = nullptr;
	}
	CUpti_RangeProfiler_Enable_Params en = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	en.ctx = c->ctx;
	TRY(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
	c->rp = en.pRangeProfilerObject;

	if (!c->counters) {
		CUpti_RangeProfiler_GetCounterDataSize_Params sz = {
			CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
		sz.pRangeProfilerObject = c->rp;
		sz.pMetricNames = m->cupti_ptrs;
		sz.numMetrics = m->n;
		sz.maxNumOfRanges = ranges_per_image;
		sz.maxNumRangeTreeNodes = ranges_per_image;
		TRY(cuptiRangeProfilerGetCounterDataSize(&sz), "cuptiRangeProfilerGetCounterDataSize");
		c->counters = static_cast<uint8_t *>(calloc(1, sz.counterDataSize));
		if (!c->counters) {
			snprintf(m->error, sizeof m->error, "out of memory for the counter image");
			return false;
		}
		c->counter_bytes = sz.counterDataSize;
	}
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = {
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	ci.pRangeProfilerObject = c->rp;
	ci.counterDataSize = c->counter_bytes;
	ci.pCounterData = c->counters;
	TRY(cuptiRangeProfilerCounterDataImageInitialize(&ci),
	    "cuptiRangeProfilerCounterDataImageInitialize");

	CUpti_RangeProfiler_SetConfig_Params sc = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	sc.pRangeProfilerObject = c->rp;
	sc.configSize = c->config_bytes;
	sc.pConfig = c->config;
	sc.counterDataImageSize = c->counter_bytes;
	sc.pCounterDataImage = c->counters;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = ranges_per_image;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	TRY(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
	c->ranges_seen = 0;
	return true;
}

static bool ctx_setup(capture_metrics *m, ctx_state *c)
{
	if (!m->profiler_initialized) {
		CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		TRY(cuptiProfilerInitialize(&ip), "cuptiProfilerInitialize");
		m->profiler_initialized = true;
	}
	TRY(cuptiGetDeviceId(c->ctx, &c->device_id), "cuptiGetDeviceId");

	CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	cn.deviceIndex = c->device_id;
	TRY(cuptiDeviceGetChipName(&cn), "cuptiDeviceGetChipName");

	CUpti_Profiler_GetCounterAvailability_Params ca = {
		CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
	ca.ctx = c->ctx;
	TRY(cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability");
	c->avail = static_cast<uint8_t *>(calloc(1, ca.counterAvailabilityImageSize));
	if (!c->avail)
		return false;
	ca.pCounterAvailabilityImage = c->avail;
	TRY(cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability");

	// The image stays allocated as long as the host object: it may keep referring to it.
	CUpti_Profiler_Host_Initialize_Params hi = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = cn.pChipName;
	hi.pCounterAvailabilityImage = c->avail;
	TRY(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize");
	c->host = hi.pHostObject;

	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
		CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	am.pHostObject = c->host;
	am.ppMetricNames = m->cupti_ptrs;
	am.numMetrics = m->n;
	TRY(cuptiProfilerHostConfigAddMetrics(&am), "cuptiProfilerHostConfigAddMetrics");

	CUpti_Profiler_Host_GetConfigImageSize_Params gs = {
		CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	gs.pHostObject = c->host;
	TRY(cuptiProfilerHostGetConfigImageSize(&gs), "cuptiProfilerHostGetConfigImageSize");
	c->config = static_cast<uint8_t *>(calloc(1, gs.configImageSize));
	if (!c->config)
		return false;
	c->config_bytes = gs.configImageSize;
	CUpti_Profiler_Host_GetConfigImage_Params gi = {
		CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	gi.pHostObject = c->host;
	gi.configImageSize = c->config_bytes;
	gi.pConfigImage = c->config;
	TRY(cuptiProfilerHostGetConfigImage(&gi), "cuptiProfilerHostGetConfigImage");
	return rp_arm(m, c);
}

// The slot of ctx (a new one with `create`), without setting its profiler up.
static ctx_state *ctx_slot(capture_metrics *m, CUcontext ctx, bool create)
{
	for (size_t i = 0; i < m->n_ctx; i++)
		if (m->ctxs[i].ctx == ctx)
			return &m->ctxs[i];
	if (!create || m->n_ctx == max_contexts)
		return nullptr;
	ctx_state *c = &m->ctxs[m->n_ctx++];
	c->ctx = ctx;
	return c;
}

// The context's profiler, set up on first use; nullptr when it cannot be.
static ctx_state *ctx_ready(capture_metrics *m, CUcontext ctx)
{
	ctx_state *c = ctx_slot(m, ctx, true);
	if (!c || c->failed)
		return nullptr;
	if (!c->rp && !ctx_setup(m, c)) {
		ctx_teardown(c);
		c->ctx = ctx;
		c->failed = true;
		return nullptr;
	}
	return c;
}

extern "C" void capture_metrics_launch_enter(capture_metrics *m, void *ctx)
{
	if (!ctx)
		return;
	std::lock_guard<std::mutex> g(m->lock);
	ctx_state *c = ctx_ready(m, static_cast<CUcontext>(ctx));
	if (!c)
		return;
	CUpti_RangeProfiler_Start_Params sp = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	sp.pRangeProfilerObject = c->rp;
	CUptiResult r = cuptiRangeProfilerStart(&sp);
	if (r != CUPTI_SUCCESS) {
		set_error(m, "cuptiRangeProfilerStart", r);
		c->failed = true;
		return;
	}
	c->started = true;
	if (m->push_ranges) {
		CUpti_RangeProfiler_PushRange_Params pp = {
			CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
		pp.pRangeProfilerObject = c->rp;
		pp.pRangeName = "k";
		r = cuptiRangeProfilerPushRange(&pp);
		if (r != CUPTI_SUCCESS)
			set_error(m, "cuptiRangeProfilerPushRange", r);
	}
}

extern "C" int capture_metrics_launch_exit(capture_metrics *m, void *ctx, uint32_t correlation_id,
					   const char *symbol, capture_metric *out)
{
	if (!ctx)
		return 0;
	std::lock_guard<std::mutex> g(m->lock);
	ctx_state *c = ctx_slot(m, static_cast<CUcontext>(ctx), false);
	if (!c || c->failed || !c->started)
		return 0;
	c->started = false;
	CUptiResult r;
	if (m->push_ranges) {
		CUpti_RangeProfiler_PopRange_Params pp = {
			CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
		pp.pRangeProfilerObject = c->rp;
		cuptiRangeProfilerPopRange(&pp);
	}
	CUpti_RangeProfiler_Stop_Params st = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	st.pRangeProfilerObject = c->rp;
	r = cuptiRangeProfilerStop(&st);
	if (r != CUPTI_SUCCESS) {
		set_error(m, "cuptiRangeProfilerStop", r);
		c->failed = true;
		return -EIO;
	}
	CUpti_RangeProfiler_DecodeData_Params dd = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	dd.pRangeProfilerObject = c->rp;
	r = cuptiRangeProfilerDecodeData(&dd);
	if (r != CUPTI_SUCCESS) {
		set_error(m, "cuptiRangeProfilerDecodeData", r);
		c->failed = true;
		return -EIO;
	}
	CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {
		CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
	gi.pCounterDataImage = c->counters;
	gi.counterDataImageSize = c->counter_bytes;
	r = cuptiRangeProfilerGetCounterDataInfo(&gi);
	if (r != CUPTI_SUCCESS) {
		set_error(m, "cuptiRangeProfilerGetCounterDataInfo", r);
		c->failed = true;
		return -EIO;
	}
	int rc = 0;
	if (gi.numTotalRanges == 0 || gi.numTotalRanges <= c->ranges_seen) {
		// No new range: this launch was not profiled (or the image is full).
		m->missed++;
		if (!m->error[0])
			snprintf(m->error, sizeof m->error,
				 "a launch produced no profiler range (%zu ranges in the image)",
				 gi.numTotalRanges);
	} else {
		size_t idx = gi.numTotalRanges - 1;
		double values[CAPTURE_MAX_METRICS] = {};
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
		ev.pHostObject = c->host;
		ev.pCounterDataImage = c->counters;
		ev.counterDataImageSize = c->counter_bytes;
		ev.rangeIndex = idx;
		ev.ppMetricNames = m->cupti_ptrs;
		ev.numMetrics = m->n;
		ev.pMetricValues = values;
		r = cuptiProfilerHostEvaluateToGpuValues(&ev);
		if (r != CUPTI_SUCCESS) {
			set_error(m, "cuptiProfilerHostEvaluateToGpuValues", r);
			m->missed++;
		} else {
			memset(out, 0, sizeof *out);
			out->correlation_id = correlation_id;
			out->device_id = c->device_id;
			out->n_values = (uint32_t)m->n;
			for (size_t i = 0; i < m->n; i++)
				out->values[i] = values[i];
			if (symbol)
				snprintf(out->symbol, sizeof out->symbol, "%s", symbol);
			m->measured++;
			rc = 1;
		}
		c->ranges_seen = gi.numTotalRanges;
	}
	if (c->ranges_seen + 1 >= ranges_per_image && !rp_arm(m, c))
		c->failed = true;
	return rc;
}

extern "C" void capture_metrics_context_created(capture_metrics *m, void *ctx)
{
	if (!ctx)
		return;
	std::lock_guard<std::mutex> g(m->lock);
	ctx_state *c = ctx_slot(m, static_cast<CUcontext>(ctx), true);
	// If the profiler cannot be set up from inside this callback, the first launch tries again.
	if (c && !c->rp && !ctx_setup(m, c)) {
		ctx_teardown(c);
		c->ctx = static_cast<CUcontext>(ctx);
	}
}

extern "C" void capture_metrics_context_destroy(capture_metrics *m, void *ctx)
{
	std::lock_guard<std::mutex> g(m->lock);
	ctx_state *c = ctx_slot(m, static_cast<CUcontext>(ctx), false);
	if (!c)
		return;
	ctx_teardown(c);
	// the slot stays (ctx == nullptr); a new context takes a new one
}
