/* NVML through dlopen, and the sampler thread (gpumon.h). The NVML declarations below are the
 * stable C ABI of nvml.h (types, enum values and the _v2 entry points), written out so that
 * neither nvml.h nor libnvidia-ml is needed to build. */
#include "trace/capture/gpumon.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- NVML's ABI (nvml.h) ---- */

typedef int nvml_return;                        /* nvmlReturn_t; NVML_SUCCESS = 0 */
typedef struct nvml_device_opaque *nvml_device; /* nvmlDevice_t */
enum {
	NVML_OK = 0,
	NVML_CLOCK_SM_ID = 1,   /* nvmlClockType_t NVML_CLOCK_SM */
	NVML_CLOCK_MEM_ID = 2,  /* NVML_CLOCK_MEM */
	NVML_TEMP_GPU = 0,      /* nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU */
	NVML_FIELD_POWER_INSTANT = 186, /* NVML_FI_DEV_POWER_INSTANT, mW */
	NVML_VALUE_DOUBLE = 0, NVML_VALUE_UINT = 1, NVML_VALUE_ULONG = 2, NVML_VALUE_ULONGLONG = 3,
	NVML_VALUE_SLONGLONG = 4, NVML_VALUE_SINT = 5,
};

union nvml_value {                               /* nvmlValue_t */
	double d;
	unsigned int ui;
	unsigned long ul;
	unsigned long long ull;
	long long sll;
	int si;
};

struct nvml_field_value {                        /* nvmlFieldValue_t */
	unsigned int field_id;
	unsigned int scope_id;
	long long timestamp;
	long long latency_usec;
	int value_type;                          /* nvmlValueType_t */
	nvml_return nvml_return;
	union nvml_value value;
};

struct gpumon_dev {
	nvml_device handle;
	int32_t device;
};

struct gpumon {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*by_index)(unsigned, nvml_device *);
	nvml_return (*by_pci)(const char *, nvml_device *);
	nvml_return (*clock)(nvml_device, int, unsigned *);
	nvml_return (*max_clock)(nvml_device, int, unsigned *);
	nvml_return (*power)(nvml_device, unsigned *);
	nvml_return (*power_limit)(nvml_device, unsigned *);
	nvml_return (*temperature)(nvml_device, int, unsigned *);
	nvml_return (*reasons)(nvml_device, unsigned long long *);
	nvml_return (*fields)(nvml_device, int, struct nvml_field_value *);
	bool instant_power;              /* the instant field answered on the first device */
	struct gpumon_dev dev[GPUMON_MAX_DEVICES];
	int n_dev;
};

static void *sym(void *lib, const char *name)
{
	return dlsym(lib, name);
}

#define LOAD(field, name) (*(void **)&m->field = sym(m->lib, name))

int gpumon_open(struct gpumon **out, struct err *e)
{
	struct gpumon *m = calloc(1, sizeof *m);
	if (!m) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = 0;
	m->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!m->lib) {
		const char *why = dlerror();
		err_set(e, NULL, 0, 0, "cannot load libnvidia-ml.so.1 (%s): no GPU clocks or power",
			why ? why : "not found");
		rc = -ENOENT;
		goto fail;
	}
	LOAD(init, "nvmlInit_v2");
	LOAD(shutdown, "nvmlShutdown");
	LOAD(error_string, "nvmlErrorString");
	LOAD(by_index, "nvmlDeviceGetHandleByIndex_v2");
	LOAD(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
	LOAD(clock, "nvmlDeviceGetClockInfo");
	LOAD(max_clock, "nvmlDeviceGetMaxClockInfo");
	LOAD(power, "nvmlDeviceGetPowerUsage");
	LOAD(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
	LOAD(temperature, "nvmlDeviceGetTemperature");
	LOAD(fields, "nvmlDeviceGetFieldValues");
	/* Renamed in CUDA 12.2's NVML; the old name stays for older drivers. */
	if (!LOAD(reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
		LOAD(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
	if (!m->init || !m->shutdown || !m->by_index || !m->clock) {
		err_set(e, NULL, 0, 0, "libnvidia-ml.so.1 lacks nvmlInit_v2 or the device queries");
		rc = -ENOENT;
		goto fail;
	}
	nvml_return r = m->init();
	if (r != NVML_OK) {
		err_set(e, NULL, 0, 0, "nvmlInit: %s", m->error_string ? m->error_string(r) : "failed");
		rc = -EIO;
		goto fail;
	}
	*out = m;
	return 0;
fail:
	if (m->lib)
		dlclose(m->lib);
	free(m);
	return rc;
}

void gpumon_free(struct gpumon *m)
{
	if (!m)
		return;
	m->shutdown();
	dlclose(m->lib);
	free(m);
}

int gpumon_add_device(struct gpumon *m, int32_t device, const char *pci_bus_id,
		      unsigned nvml_index, struct err *e)
{
	if (m->n_dev >= GPUMON_MAX_DEVICES) {
		err_set(e, NULL, 0, 0, "more than %d GPUs to watch", GPUMON_MAX_DEVICES);
		return -ENOSPC;
	}
	nvml_device h = NULL;
	nvml_return r;
	if (pci_bus_id && m->by_pci)
		r = m->by_pci(pci_bus_id, &h);
	else
		r = m->by_index(nvml_index, &h);
	if (r != NVML_OK || !h) {
		if (pci_bus_id)
			err_set(e, NULL, 0, 0, "NVML has no GPU at PCI bus id '%s'", pci_bus_id);
		else
			err_set(e, NULL, 0, 0, "NVML has no GPU %u", nvml_index);
		return -ENOENT;
	}
	int slot = m->n_dev++;
	m->dev[slot].handle = h;
	m->dev[slot].device = device;
	if (slot == 0 && m->fields) {
		struct nvml_field_value fv;
		memset(&fv, 0, sizeof fv);
		fv.field_id = NVML_FIELD_POWER_INSTANT;
		m->instant_power = m->fields(h, 1, &fv) == NVML_OK && fv.nvml_return == NVML_OK;
	}
	return slot;
}

int gpumon_devices(const struct gpumon *m)
{
	return m->n_dev;
}

static double field_number(const struct nvml_field_value *fv)
{
	switch (fv->value_type) {
	case NVML_VALUE_DOUBLE: return fv->value.d;
	case NVML_VALUE_UINT: return (double)fv->value.ui;
	case NVML_VALUE_ULONG: return (double)fv->value.ul;
	case NVML_VALUE_ULONGLONG: return (double)fv->value.ull;
	case NVML_VALUE_SLONGLONG: return (double)fv->value.sll;
	case NVML_VALUE_SINT: return (double)fv->value.si;
	default: return -1;
	}
}

int gpumon_read(struct gpumon *m, int slot, struct gpumon_sample *out)
{
	memset(out, 0, sizeof *out);
	if (slot < 0 || slot >= m->n_dev)
		return -EINVAL;
	nvml_device h = m->dev[slot].handle;
	out->device = m->dev[slot].device;
	unsigned v = 0;
	if (m->clock(h, NVML_CLOCK_SM_ID, &v) == NVML_OK) {
		out->sm_mhz = v;
		out->fields |= GPUMON_HAS_SM;
	}
	if (m->clock(h, NVML_CLOCK_MEM_ID, &v) == NVML_OK) {
		out->mem_mhz = v;
		out->fields |= GPUMON_HAS_MEM;
	}
	bool have_power = false;
	if (m->instant_power) {
		struct nvml_field_value fv;
		memset(&fv, 0, sizeof fv);
		fv.field_id = NVML_FIELD_POWER_INSTANT;
		if (m->fields(h, 1, &fv) == NVML_OK && fv.nvml_return == NVML_OK) {
			double mw = field_number(&fv);
			if (mw >= 0) {
				out->power_w = mw / 1000.0;
				have_power = true;
			}
		}
	}
	if (m->power && m->power(h, &v) == NVML_OK) {
		out->power_avg_w = v / 1000.0;
		out->fields |= GPUMON_HAS_POWER_AVG;
		if (!have_power) {
			out->power_w = out->power_avg_w;
			have_power = true;
		}
	}
	if (have_power)
		out->fields |= GPUMON_HAS_POWER;
	if (m->temperature && m->temperature(h, NVML_TEMP_GPU, &v) == NVML_OK) {
		out->temp_c = v;
		out->fields |= GPUMON_HAS_TEMP;
	}
	unsigned long long reasons = 0;
	if (m->reasons && m->reasons(h, &reasons) == NVML_OK) {
		out->throttle_reasons = reasons;
		out->fields |= GPUMON_HAS_THROTTLE;
	}
	return out->fields ? 0 : -EIO;
}

const char *gpumon_power_source(const struct gpumon *m)
{
	return m->instant_power ? "instantaneous (NVML_FI_DEV_POWER_INSTANT)"
				: "1 s average (nvmlDeviceGetPowerUsage)";
}

double gpumon_power_limit_w(struct gpumon *m, int slot)
{
	unsigned v = 0;
	if (slot < 0 || slot >= m->n_dev || !m->power_limit ||
	    m->power_limit(m->dev[slot].handle, &v) != NVML_OK)
		return 0;
	return v / 1000.0;
}

double gpumon_max_sm_mhz(struct gpumon *m, int slot)
{
	unsigned v = 0;
	if (slot < 0 || slot >= m->n_dev || !m->max_clock ||
	    m->max_clock(m->dev[slot].handle, NVML_CLOCK_SM_ID, &v) != NVML_OK)
		return 0;
	return v;
}

/* ---- the sampler ---- */

static int nvml_source_read(void *ctx, int slot, struct gpumon_sample *out)
{
	return gpumon_read(ctx, slot, out);
}

static int nvml_source_count(void *ctx)
{
	return gpumon_devices(ctx);
}

void gpumon_source_nvml(struct gpumon *m, struct gpumon_source *out)
{
	out->count = nvml_source_count;
	out->read = nvml_source_read;
	out->ctx = m;
}

static int64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One reading of every device; the counts are updated under the lock (readers may poll them). */
static void round_once(struct gpumon_sampler *s)
{
	int64_t samples = 0, failed = 0;
	int n = s->src.count(s->src.ctx);
	for (int i = 0; i < n; i++) {
		struct gpumon_sample smp;
		memset(&smp, 0, sizeof smp);
		int64_t t = s->o.now_ns();
		if (s->src.read(s->src.ctx, i, &smp) < 0) {
			failed++;
			continue;
		}
		smp.timestamp_ns = t;
		s->o.sink(s->o.sink_ctx, &smp);
		samples++;
	}
	pthread_mutex_lock(&s->lock);
	s->samples += samples;
	s->failed_reads += failed;
	s->rounds++;
	pthread_mutex_unlock(&s->lock);
}

static void *sampler_main(void *arg)
{
	struct gpumon_sampler *s = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		bool stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		round_once(s);    /* the last round runs after stop was asked */
		pthread_mutex_lock(&s->lock);
		if (stop)
			break;
		int64_t ns = next.tv_nsec + (s->o.period_ms % 1000) * 1000000LL;
		next.tv_sec += (time_t)(s->o.period_ms / 1000 + ns / 1000000000LL);
		next.tv_nsec = (long)(ns % 1000000000LL);
		/* Behind by more than a period (a stalled thread): restart the schedule from now
		 * rather than firing a burst of catch-up rounds. */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec + 1)
			next = now;
		while (!s->stop &&
		       pthread_cond_timedwait(&s->cv, &s->lock, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int gpumon_sampler_start(struct gpumon_sampler *s, const struct gpumon_source *src,
			 const struct gpumon_sampler_opts *o, struct err *e)
{
	memset(s, 0, sizeof *s);
	if (!src || !src->read || !src->count || !o || !o->sink || o->period_ms < 1 ||
	    o->period_ms > 60000) {
		err_set(e, NULL, 0, 0, "gpumon sampler: needs a source, a sink and a "
				       "period of 1 .. 60000 ms");
		return -EINVAL;
	}
	s->src = *src;
	s->o = *o;
	if (!s->o.now_ns)
		s->o.now_ns = monotonic_ns;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->lock, NULL);
	if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->lock);
		err_set(e, NULL, 0, 0, "gpumon sampler: cannot start a thread");
		return -EAGAIN;
	}
	s->running = true;
	return 0;
}

void gpumon_sampler_stop(struct gpumon_sampler *s)
{
	if (!s->running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->lock);
	s->running = false;
}

/* ---- summaries ---- */

void gpumon_acc_reset(struct gpumon_acc *a)
{
	memset(a, 0, sizeof *a);
	a->temp_c_max = -1;
}

void gpumon_acc_add(struct gpumon_acc *a, const struct gpumon_sample *s)
{
	a->n++;
	if (s->fields & GPUMON_HAS_SM) {
		if (!a->n_sm || s->sm_mhz < a->sm_mhz_min)
			a->sm_mhz_min = s->sm_mhz;
		if (!a->n_sm || s->sm_mhz > a->sm_mhz_max)
			a->sm_mhz_max = s->sm_mhz;
		a->sm_mhz_sum += s->sm_mhz;
		a->n_sm++;
	}
	if (s->fields & GPUMON_HAS_MEM) {
		a->mem_mhz_sum += s->mem_mhz;
		a->n_mem++;
	}
	if (s->fields & GPUMON_HAS_POWER) {
		a->power_w_sum += s->power_w;
		a->n_power++;
	}
	if ((s->fields & GPUMON_HAS_TEMP) && s->temp_c > a->temp_c_max)
		a->temp_c_max = s->temp_c;
	if (s->fields & GPUMON_HAS_THROTTLE)
		a->throttle_any |= s->throttle_reasons;
}

double gpumon_acc_sm_mhz(const struct gpumon_acc *a)
{
	return a->n_sm ? a->sm_mhz_sum / (double)a->n_sm : 0;
}

double gpumon_acc_mem_mhz(const struct gpumon_acc *a)
{
	return a->n_mem ? a->mem_mhz_sum / (double)a->n_mem : 0;
}

double gpumon_acc_power_w(const struct gpumon_acc *a)
{
	return a->n_power ? a->power_w_sum / (double)a->n_power : 0;
}
