#ifndef K3_TRACE_CAPTURE_GPUMON_H
#define K3_TRACE_CAPTURE_GPUMON_H

/* GPU clocks, power and temperature while something runs (issue 11: a fit to one run carries
 * the clock of that run; under sustained load an H200 runs power-limited at ~1.5 GHz, not its
 * 1.98 GHz boost). Two parts:
 *
 *  - a reader of NVML, loaded at run time (dlopen "libnvidia-ml.so.1", which the driver ships):
 *    nothing at build time, and a clean -ENOENT where there is no driver (a CPU box, a container
 *    without the NVML library). The functions are looked up by name and declared here, so no
 *    nvml.h is needed (the CUDA 13 toolkit does not ship one);
 *  - a sampler thread that reads every device of a source every `period_ms` and hands each
 *    sample to a sink. The source is an interface, so tests drive the sampler with a fake one.
 *
 * Users: libk3capture.so (samples go to the K3SIM_GPU_METRICS table on the trace's clock) and
 * bench/calib/calib-grid (per measured point: mean SM clock, mean power, max temperature, the
 * throttle reasons seen). Library code: nothing here prints.
 *
 * Thread safety: a gpumon may be read from several threads at once (NVML is thread-safe); the
 * sampler calls its source and sink from its own thread only. */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "trace/db/tracedb.h" /* enum trace_throttle: the reason bits */
#include "util/err.h"

/* Which fields of a sample were read (the others are 0). */
enum gpumon_field {
	GPUMON_HAS_SM = 0x1,
	GPUMON_HAS_MEM = 0x2,
	GPUMON_HAS_POWER = 0x4,
	GPUMON_HAS_TEMP = 0x8,
	GPUMON_HAS_THROTTLE = 0x10,
	GPUMON_HAS_POWER_AVG = 0x20,
};

/* One reading of one GPU: a plain record of fixed size (the capture queues it as bytes). */
struct gpumon_sample {
	int64_t timestamp_ns;          /* the sampler's clock (gpumon_sampler_opts.now_ns) */
	int32_t device;                /* the caller's id for the GPU (the trace's deviceId) */
	uint32_t fields;               /* enum gpumon_field bits */
	double sm_mhz;                 /* current SM clock */
	double mem_mhz;                /* current memory clock */
	double power_w;                /* board power draw (instantaneous where NVML has it) */
	double power_avg_w;            /* nvmlDeviceGetPowerUsage: on Ampere and newer a trailing 1 s mean
	                                * (it ramps over a load's first second; the instant reading changes
	                                * every ~100 ms: bench/results/power-h100-2026-12-06/limiter-mild/) */
	double temp_c;                 /* GPU core temperature */
	uint64_t throttle_reasons;     /* enum trace_throttle bits active at the reading */
};

/* ---- NVML ---- */

struct gpumon;

/* Load NVML and initialize it. -ENOENT (no libnvidia-ml.so.1, or a symbol missing), -EIO
 * (nvmlInit failed: no driver, no permission); e says which. */
int gpumon_open(struct gpumon **out, struct err *e);
/* nvmlShutdown and unload. NULL is accepted. */
void gpumon_free(struct gpumon *m);

/* Watch one GPU under the caller's id `device`, found by PCI bus id ("0000:17:00.0", as
 * cudaDeviceGetPCIBusId gives it: the same GPU whatever CUDA_VISIBLE_DEVICES says) or, with
 * pci_bus_id NULL, by NVML index `nvml_index`. Returns the slot (>= 0) for gpumon_read, -ENOENT
 * (no such GPU), -ENOSPC (GPUMON_MAX_DEVICES watched already). */
enum { GPUMON_MAX_DEVICES = 64 };
int gpumon_add_device(struct gpumon *m, int32_t device, const char *pci_bus_id,
		      unsigned nvml_index, struct err *e);
int gpumon_devices(const struct gpumon *m);

/* Read slot now into *out (timestamp_ns left 0: the caller's clock). Returns 0 when at least
 * one field was read, -EIO when none was. */
int gpumon_read(struct gpumon *m, int slot, struct gpumon_sample *out);

/* What the readings mean, for metadata: the power source ("instantaneous" or "1 s average"), the
 * enforced power limit (W) and the maximum SM clock (MHz) of slot; 0 where unknown. */
const char *gpumon_power_source(const struct gpumon *m);
double gpumon_power_limit_w(struct gpumon *m, int slot);
double gpumon_max_sm_mhz(struct gpumon *m, int slot);

/* ---- the sampler thread ---- */

/* Where samples come from: each round asks count(ctx) how many devices there are now (0 is
 * fine: nothing to read yet, e.g. before CUDA is initialized), then read(ctx, slot, out) for slot
 * in [0, count). gpumon_source_nvml makes one from a gpumon; tests make fake ones. */
struct gpumon_source {
	int (*count)(void *ctx);
	int (*read)(void *ctx, int slot, struct gpumon_sample *out);
	void *ctx;
};
void gpumon_source_nvml(struct gpumon *m, struct gpumon_source *out);

struct gpumon_sampler_opts {
	int64_t period_ms;             /* between rounds (1 .. 60000) */
	int64_t (*now_ns)(void);       /* timestamps; NULL: CLOCK_MONOTONIC */
	/* Gets every sample, on the sampler thread; must not block for long. */
	void (*sink)(void *ctx, const struct gpumon_sample *s);
	void *sink_ctx;
};

struct gpumon_sampler {
	struct gpumon_source src;
	struct gpumon_sampler_opts o;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool running, stop;
	int64_t rounds, samples, failed_reads; /* counts (under lock while running), final after stop */
};

/* Start the thread; the first round is taken at once. -EINVAL (bad period, no sink, no source),
 * -EAGAIN (no thread). Counts (rounds, samples, failed_reads) are final after stop. */
int gpumon_sampler_start(struct gpumon_sampler *s, const struct gpumon_source *src,
			 const struct gpumon_sampler_opts *o, struct err *e);
/* Stop and join (takes one last round first, so a short run still has a reading at its end).
 * Safe on a sampler that never started. */
void gpumon_sampler_stop(struct gpumon_sampler *s);

/* ---- summaries ---- */

/* Running summary of samples of one device over a window (calib-grid's per point). */
struct gpumon_acc {
	int64_t n;
	double sm_mhz_sum, mem_mhz_sum, power_w_sum;
	int64_t n_sm, n_mem, n_power;
	double sm_mhz_min, sm_mhz_max;
	double temp_c_max;             /* -1: none read */
	uint64_t throttle_any;         /* OR of the reasons seen */
};
void gpumon_acc_reset(struct gpumon_acc *a);
void gpumon_acc_add(struct gpumon_acc *a, const struct gpumon_sample *s);
/* Means of what was read; 0 where nothing was. */
double gpumon_acc_sm_mhz(const struct gpumon_acc *a);
double gpumon_acc_mem_mhz(const struct gpumon_acc *a);
double gpumon_acc_power_w(const struct gpumon_acc *a);

#ifdef __cplusplus
}
#endif

#endif
