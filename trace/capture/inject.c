/* libk3capture.so: CUPTI subscription, activity buffers, flush points, and the two entry points
 * (InitializeInjection for CUDA_INJECTION64_PATH, trace_capture_* for bench drivers).
 *
 * What runs where:
 *  - CUPTI callbacks (application threads, CUPTI's thread): hand buffers to the pool, note NVTX
 *    start/end ids, measure kernels when metrics are on. No SQLite, no allocation.
 *  - the writer thread (writer.c): decoding and SQLite.
 *  - a control thread: performs the flush a SIGINT/SIGTERM asks for, since a signal handler can
 *    only write to a pipe and wait on another.
 *  - a GPU sampler thread (gpumon.h): reads NVML every gpu_metrics_ms and queues the readings,
 *    stamped on CUPTI's clock, for the writer (K3SIM_GPU_METRICS).
 *
 * The injection entry points are this library's user interface in a profiled child, so they may
 * write to stderr: the holder of a CUPTI subscription, and failures to start. */
#include "trace/capture/capture.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "trace/capture/decode.h"
#include "trace/capture/env.h"
#include "trace/capture/gpumon.h"
#include "trace/capture/metrics.h"
#include "trace/capture/pool.h"
#include "trace/capture/side.h"
#include "trace/capture/writer.h"

enum {
	DEFAULT_BUFFERS = 64,
	DEFAULT_BUFFER_BYTES = 4 << 20,
	FLUSH_TIMEOUT_MS = 60000,
	SIGNAL_FLUSH_TIMEOUT_MS = 10000,
	CUPTI_FLUSH_PERIOD_MS = 1000,
	DEFAULT_GPU_METRICS_MS = 20,
	GPU_SAMPLES_SUBMIT_NS = 1000000000, /* queue the readings at least once a second */
	GPU_ENUM_TRIES = 3000,              /* rounds to wait for CUDA to know its devices */
};

struct capture_state {
	pthread_mutex_t lock;          /* start/stop/flush */
	pthread_rwlock_t cb_lock;      /* buffer callbacks (read) vs. tearing the pool down (write) */
	bool active;
	atomic_bool accepting;         /* buffer callbacks may use the pool */
	CUpti_SubscriberHandle sub;
	struct trace_db *db;
	struct capture_writer w;
	struct capture_metrics *metrics;
	int64_t wait_ms;
	int64_t pid;
	int rank;
	bool driver_api;
	bool runtime_api;
	bool verbose;
	int64_t start_utc_ns;
	char path[PATH_MAX];
	/* marks and metric records collect in one pool buffer each, submitted when full/flushed */
	pthread_mutex_t side_lock;
	uint8_t *marks_buf;
	size_t marks_used;
	uint8_t *metrics_buf;
	size_t metrics_used;
	/* GPU clocks and power (NVML) */
	int64_t gpu_period_ms;         /* 0: off */
	struct gpumon *gpumon;         /* NULL: NVML not there */
	char gpumon_error[512];
	struct gpumon_sampler sampler;
	struct capture_side gpu_side;
	bool gpu_side_ready;
	bool gpu_devices_known;
	int64_t gpu_enum_tries;
	int64_t gpu_last_submit_ns;
	/* signals */
	bool signals_installed;
	struct sigaction old_int, old_term;
	int ctl_pipe[2], ack_pipe[2];
	pthread_t ctl_thread;
	bool atexit_registered;
};

static struct capture_state g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cb_lock = PTHREAD_RWLOCK_INITIALIZER,
	.side_lock = PTHREAD_MUTEX_INITIALIZER,
	.ctl_pipe = {-1, -1},
	.ack_pipe = {-1, -1},
};

static _Thread_local int launch_depth;  /* nested launch callbacks (runtime -> driver) */

static int64_t now_utc_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t env_int(const char *key, int64_t dflt, int64_t lo, int64_t hi)
{
	const char *v = getenv(key);
	if (!v || !*v)
		return dflt;
	char *end;
	long long x = strtoll(v, &end, 10);
	if (*end || x < lo || x > hi)
		return dflt;
	return x;
}

/* ---- CUPTI buffer callbacks ---- */

static void CUPTIAPI on_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	pthread_rwlock_rdlock(&g.cb_lock);
	if (atomic_load(&g.accepting)) {
		uint8_t *b = capture_pool_get(&g.w.pool, g.wait_ms);
		if (b) {
			*buffer = b;
			*size = g.w.pool.bytes;
		}
	}
	pthread_rwlock_unlock(&g.cb_lock);
}

static void CUPTIAPI on_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
					 size_t size, size_t valid_size)
{
	(void)size;
	size_t dropped = 0;
	uint32_t ctx_id = 0;
	if (ctx) {
		cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped);
		cuptiGetContextId(ctx, &ctx_id);
	} else {
		cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
	}
	pthread_rwlock_rdlock(&g.cb_lock);
	if (atomic_load(&g.accepting) && buffer) {
		/* Empty buffers go through the writer too: it zeroes them. */
		struct capture_item it = {
			.kind = CAPTURE_ITEM_ACTIVITY,
			.buf = buffer,
			.valid_bytes = valid_size,
			.context_id = ctx_id,
			.stream_id = stream_id,
			.dropped_records = (int64_t)dropped,
		};
		capture_pool_submit(&g.w.pool, &it);
	}
	/* Not accepting: the pool is gone or going; the buffer stays with the (kept) arena. */
	pthread_rwlock_unlock(&g.cb_lock);
}

/* Submit the partly filled marks/metrics buffers (side_lock held). */
static void submit_side_locked(void)
{
	if (g.marks_buf && g.marks_used) {
		struct capture_item it = {.kind = CAPTURE_ITEM_MARKS, .buf = g.marks_buf,
					  .valid_bytes = g.marks_used};
		capture_pool_submit(&g.w.pool, &it);
		g.marks_buf = NULL;
		g.marks_used = 0;
	}
	if (g.metrics_buf && g.metrics_used) {
		struct capture_item it = {.kind = CAPTURE_ITEM_METRICS, .buf = g.metrics_buf,
					  .valid_bytes = g.metrics_used};
		capture_pool_submit(&g.w.pool, &it);
		g.metrics_buf = NULL;
		g.metrics_used = 0;
	}
}

static void add_metric_record(const struct capture_metric *rec)
{
	pthread_rwlock_rdlock(&g.cb_lock);
	if (!atomic_load(&g.accepting)) {
		pthread_rwlock_unlock(&g.cb_lock);
		return;
	}
	pthread_mutex_lock(&g.side_lock);
	if (g.metrics_buf && g.metrics_used + sizeof *rec > g.w.pool.bytes) {
		struct capture_item it = {.kind = CAPTURE_ITEM_METRICS, .buf = g.metrics_buf,
					  .valid_bytes = g.metrics_used};
		capture_pool_submit(&g.w.pool, &it);
		g.metrics_buf = NULL;
		g.metrics_used = 0;
	}
	if (!g.metrics_buf)
		g.metrics_buf = capture_pool_get(&g.w.pool, g.wait_ms);
	if (g.metrics_buf) {
		memcpy(g.metrics_buf + g.metrics_used, rec, sizeof *rec);
		g.metrics_used += sizeof *rec;
	}
	pthread_mutex_unlock(&g.side_lock);
	pthread_rwlock_unlock(&g.cb_lock);
}

/* ---- flushing ---- */

/* Everything CUPTI holds -> pool -> committed rows. Not from a buffer callback. */
static int flush_all(bool forced)
{
	cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	pthread_mutex_lock(&g.side_lock);
	submit_side_locked();
	pthread_mutex_unlock(&g.side_lock);
	if (g.gpu_side_ready)
		capture_side_submit(&g.gpu_side);
	return capture_writer_flush(&g.w, FLUSH_TIMEOUT_MS);
}

/* ---- the subscriber callback ---- */

static bool is_launch(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
			return true;
		default:
			return false;
		}
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API)
		switch (cbid) {
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
			return true;
		default:
			return false;
		}
	return false;
}

/* launch_depth is raised around all profiler work: the launches CUPTI makes itself (kernel
 * replay) and those of a runtime call's driver call are then not measured again. */
static void on_launch(const CUpti_CallbackData *cd)
{
	if (cd->callbackSite == CUPTI_API_ENTER) {
		if (launch_depth++ == 0)
			capture_metrics_launch_enter(g.metrics, cd->context);
		return;
	}
	struct capture_metric rec;
	if (launch_depth == 1 && capture_metrics_launch_exit(g.metrics, cd->context,
							     cd->correlationId, cd->symbolName,
							     &rec) == 1)
		add_metric_record(&rec);
	if (launch_depth > 0)
		launch_depth--;
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *cbdata)
{
	(void)userdata;
	if (dom == CUPTI_CB_DOMAIN_NVTX) {
		uint64_t id = capture_nvtx_range_end_id(cbid, cbdata);
		const char *text = capture_nvtx_range_start_text(cbid, cbdata);
		if (!id && !text)
			return;
		pthread_rwlock_rdlock(&g.cb_lock);
		if (atomic_load(&g.accepting)) {
			if (id)
				capture_decoder_note_range_end(&g.w.dec, id);
			else
				capture_decoder_note_range_start(&g.w.dec,
								 (int64_t)syscall(SYS_gettid), text);
		}
		pthread_rwlock_unlock(&g.cb_lock);
		return;
	}
	if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = cbdata;
		launch_depth++;
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && g.metrics)
			capture_metrics_context_created(g.metrics, rd->context);
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && g.metrics)
			capture_metrics_context_destroy(g.metrics, rd->context);
		launch_depth--;
		return;
	}
	const CUpti_CallbackData *cd = cbdata;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
		/* Before the reset destroys the context and the records CUPTI holds for it. */
		if (cd->callbackSite != CUPTI_API_ENTER)
			return;
		pthread_rwlock_rdlock(&g.cb_lock);
		if (atomic_load(&g.accepting))
			flush_all(false);
		pthread_rwlock_unlock(&g.cb_lock);
		return;
	}
	if (g.metrics && is_launch(dom, cbid))
		on_launch(cd);
}

/* ---- NVTX injection: NVTX_INJECTION64_PATH may name this library; CUPTI does the work ---- */

/* A function's address as dladdr takes it (ISO C has no cast between the two kinds). */
static void *fn_addr(void (*f)(void))
{
	void *p;
	memcpy(&p, &f, sizeof p);
	return p;
}

static void *cupti_handle(void)
{
	Dl_info info;
	if (!dladdr(fn_addr((void (*)(void))cuptiSubscribe), &info) || !info.dli_fname)
		return NULL;
	return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

static int start_from_env(void);

TRACE_CAPTURE_API int InitializeInjectionNvtx2(const void *get_export_table);
TRACE_CAPTURE_API int InitializeInjectionNvtx2(const void *get_export_table)
{
	/* NVTX may initialize before CUDA does: start now so that the first ranges are kept. */
	if (getenv(CAPTURE_ENV_OUTPUT))
		start_from_env();
	void *h = cupti_handle();
	if (!h)
		return 0;
	int (*fn)(const void *);
	*(void **)&fn = dlsym(h, "InitializeInjectionNvtx2");
	int rc = fn ? fn(get_export_table) : 0;
	dlclose(h);
	return rc;
}

/* ---- signals ---- */

static void *ctl_main(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned char sig;
		ssize_t n = read(g.ctl_pipe[0], &sig, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		/* The process dies when the old disposition is the default: close the database
		 * properly. Otherwise the program's own handler decides; just make rows durable. */
		struct sigaction *old = sig == SIGINT ? &g.old_int : &g.old_term;
		bool dies = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
		pthread_mutex_lock(&g.lock);
		bool active = g.active;
		pthread_mutex_unlock(&g.lock);
		if (active) {
			if (dies) {
				struct err e = {0};
				trace_capture_stop(NULL, &e);
			} else {
				pthread_mutex_lock(&g.lock);
				if (g.active)
					flush_all(false);
				pthread_mutex_unlock(&g.lock);
			}
		}
		unsigned char ack = 1;
		while (write(g.ack_pipe[1], &ack, 1) < 0 && errno == EINTR)
			;
	}
}

static void on_signal(int sig, siginfo_t *info, void *uc)
{
	(void)info;
	(void)uc;
	int saved = errno;
	unsigned char s = (unsigned char)sig;
	/* A fork()ed child has no control thread and must not touch the parent's database. */
	if (getpid() == g.pid && write(g.ctl_pipe[1], &s, 1) == 1) {
		struct pollfd p = {.fd = g.ack_pipe[0], .events = POLLIN};
		if (poll(&p, 1, SIGNAL_FLUSH_TIMEOUT_MS) == 1) {
			unsigned char ack;
			(void)!read(g.ack_pipe[0], &ack, 1);
		}
	}
	/* Pass the signal on: restore what was there and raise it again; it is delivered when
	 * this handler returns (the signal is blocked while it runs). */
	sigaction(sig, sig == SIGINT ? &g.old_int : &g.old_term, NULL);
	raise(sig);
	errno = saved;
}

static void install_signals(void)
{
	if (g.signals_installed)
		return;
	if (pipe2(g.ctl_pipe, O_CLOEXEC) < 0)
		return;
	if (pipe2(g.ack_pipe, O_CLOEXEC) < 0) {
		close(g.ctl_pipe[0]);
		close(g.ctl_pipe[1]);
		g.ctl_pipe[0] = g.ctl_pipe[1] = -1;
		return;
	}
	sigset_t all, old;
	sigemptyset(&all);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&g.ctl_thread, NULL, ctl_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return;
	pthread_detach(g.ctl_thread);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	const int sigs[2] = {SIGINT, SIGTERM};
	for (int i = 0; i < 2; i++) {
		struct sigaction *old_sa = sigs[i] == SIGINT ? &g.old_int : &g.old_term;
		sigaction(sigs[i], NULL, old_sa);
		if (!(old_sa->sa_flags & SA_SIGINFO) && old_sa->sa_handler == SIG_IGN)
			continue;      /* ignored stays ignored */
		sigaction(sigs[i], &sa, NULL);
	}
	g.signals_installed = true;
}

static void at_exit(void)
{
	/* In a fork()ed child the writer thread does not exist and the database is the parent's:
	 * leave both alone (and the mutex, which another thread may have held at the fork). */
	if (getpid() != g.pid)
		return;
	pthread_mutex_lock(&g.lock);
	bool active = g.active;
	pthread_mutex_unlock(&g.lock);
	if (!active)
		return;
	struct err e = {0};
	int rc = trace_capture_stop(NULL, &e);
	if (rc < 0 && rc != -ENOTCONN) {
		char msg[1024];
		fprintf(stderr, "k3capture: %s\n", err_format(&e, msg, sizeof msg));
	}
}

/* ---- the CUDA driver, looked up at run time ----
 * libcuda is in the process whenever CUDA is (the injection is loaded by it), and linking the
 * toolkit's stub would put the stub on the build tree's rpath. */

struct cu_api {
	CUresult (*driver_get_version)(int *);
	CUresult (*device_get_count)(int *);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*device_get_name)(char *, int, CUdevice);
	CUresult (*device_total_mem)(size_t *, CUdevice);
	CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
};

static bool cu_load(struct cu_api *cu)
{
	memset(cu, 0, sizeof *cu);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return false;
	*(void **)&cu->driver_get_version = dlsym(h, "cuDriverGetVersion");
	*(void **)&cu->device_get_count = dlsym(h, "cuDeviceGetCount");
	*(void **)&cu->device_get = dlsym(h, "cuDeviceGet");
	*(void **)&cu->device_get_name = dlsym(h, "cuDeviceGetName");
	*(void **)&cu->device_total_mem = dlsym(h, "cuDeviceTotalMem_v2");
	*(void **)&cu->device_get_attribute = dlsym(h, "cuDeviceGetAttribute");
	dlclose(h);                    /* NOLOAD: only a reference was taken */
	return cu->driver_get_version && cu->device_get_count && cu->device_get &&
	       cu->device_get_name && cu->device_total_mem && cu->device_get_attribute;
}

/* ---- metadata ---- */

static void set_meta(const char *key, const char *value)
{
	trace_db_set_capture(g.db, key, value ? value : "", NULL);
}

static void set_meta_i64(const char *key, int64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)v);
	set_meta(key, buf);
}

/* "key=value" lines (K3CAPTURE_META) as K3SIM_CAPTURE rows "meta.<key>". */
static void write_user_meta(const char *meta)
{
	if (!meta)
		return;
	char line[1024], key[sizeof line + 8];
	while (*meta) {
		size_t len = strcspn(meta, "\n");
		if (len < sizeof line) {
			memcpy(line, meta, len);
			line[len] = '\0';
			char *eq = strchr(line, '=');
			if (eq && eq != line) {
				*eq = '\0';
				snprintf(key, sizeof key, "meta.%s", line);
				set_meta(key, eq + 1);
			}
		}
		meta += len;
		if (*meta == '\n')
			meta++;
	}
}

static void read_cmdline(char *out, size_t n)
{
	out[0] = '\0';
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t len = read(fd, out, n - 1);
	close(fd);
	if (len <= 0)
		return;
	for (ssize_t i = 0; i < len; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	while (len > 0 && out[len - 1] == ' ')
		len--;
	out[len] = '\0';
}

/* The first token of /proc/driver/nvidia/version that looks like a version ("580.159.04"):
 * the line reads "NVRM version: NVIDIA UNIX [Open ]Kernel Module for x86_64  580.159.04 ...". */
static void nvidia_driver_version(char *out, size_t n)
{
	out[0] = '\0';
	FILE *f = fopen("/proc/driver/nvidia/version", "re");
	if (!f)
		return;
	char line[512];
	if (fgets(line, sizeof line, f)) {
		for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
			size_t len = strlen(tok), digits = strspn(tok, "0123456789.");
			if (len > 2 && digits == len && tok[0] != '.' && strchr(tok, '.')) {
				snprintf(out, n, "%s", tok);
				break;
			}
		}
	}
	fclose(f);
}

static void write_start_metadata(const struct trace_capture_opts *o)
{
	char buf[8192];
	read_cmdline(buf, sizeof buf);
	set_meta(TRACE_CAPTURE_COMMAND_LINE, buf);
	set_meta(TRACE_CAPTURE_SOURCE, "cupti");
	set_meta_i64(TRACE_CAPTURE_PID, g.pid);
	set_meta_i64(TRACE_CAPTURE_RANK, g.rank);
	if (gethostname(buf, sizeof buf) == 0) {
		buf[sizeof buf - 1] = '\0';
		set_meta(TRACE_CAPTURE_HOST, buf);
	}
	set_meta_i64(TRACE_CAPTURE_START_UTC_NS, g.start_utc_ns);
	uint32_t v = 0;
	if (cuptiGetVersion(&v) == CUPTI_SUCCESS)
		set_meta_i64(TRACE_CAPTURE_CUPTI_VERSION, v);
	int dv = 0;
	struct cu_api cu;
	if (cu_load(&cu) && cu.driver_get_version(&dv) == CUDA_SUCCESS)
		set_meta_i64(TRACE_CAPTURE_CUDA_DRIVER_VERSION, dv);
	nvidia_driver_version(buf, sizeof buf);
	if (buf[0])
		set_meta(TRACE_CAPTURE_DRIVER_VERSION, buf);
	set_meta("metrics", o->metrics ? o->metrics : "");
	set_meta("driver_api", g.driver_api ? "1" : "0");
	set_meta("runtime_api", g.runtime_api ? "1" : "0");
	set_meta_i64("buffers", (int64_t)o->buffers);
	set_meta_i64("buffer_bytes", (int64_t)o->buffer_bytes);
	set_meta("activity_kinds", "CONCURRENT_KERNEL MEMCPY MEMCPY2 MEMSET RUNTIME DRIVER MARKER "
				   "DEVICE");
	write_user_meta(o->meta);
	buf[0] = '\0';
	if (readlink("/proc/self/exe", buf, sizeof buf - 1) > 0) {
		buf[sizeof buf - 1] = '\0';
		const char *base = strrchr(buf, '/');
		trace_db_add_process(g.db, trace_global_pid(g.pid), g.pid, base ? base + 1 : buf,
				     NULL);
	}
}

/* Devices CUPTI sent no record for (capture started after CUDA did): ask the driver. */
static void add_missing_gpus(void)
{
	int n = 0;
	struct cu_api cu;
	if (!cu_load(&cu) || cu.device_get_count(&n) != CUDA_SUCCESS)
		return;
	for (int i = 0; i < n && i < 64; i++) {
		if (g.w.devices_seen & (1ULL << i))
			continue;
		CUdevice dev;
		if (cu.device_get(&dev, i) != CUDA_SUCCESS)
			continue;
		char name[256] = "unknown";
		cu.device_get_name(name, sizeof name, dev);
		size_t mem = 0;
		cu.device_total_mem(&mem, dev);
		int a[12] = {0};
		const CUdevice_attribute attrs[12] = {
			CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
			CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
			CU_DEVICE_ATTRIBUTE_WARP_SIZE,
			CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
			CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
			CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
			CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
			CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
			CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT,
		};
		for (int k = 0; k < 12; k++)
			cu.device_get_attribute(&a[k], attrs[k], dev);
		struct trace_gpu gpu = {
			.id = i,
			.name = name,
			.total_memory_bytes = (int64_t)mem,
			.sm_count = a[0],
			.compute_major = a[1],
			.compute_minor = a[2],
			.clock_hz = (int64_t)a[3] * 1000,
			.l2_cache_bytes = a[4],
			.cu_device = i,
			.threads_per_warp = a[5],
			.max_threads_per_block = a[6],
			.max_shmem_per_block_bytes = a[7],
			.max_shmem_per_sm_bytes = a[8],
			.max_registers_per_block = a[9],
			.max_registers_per_sm = a[10],
			.async_engines = a[11],
		};
		trace_db_add_gpu(g.db, &gpu, NULL);
	}
}

static void append_manifest(const struct trace_db_stats *st, int64_t dropped)
{
	const char *path = getenv(CAPTURE_ENV_MANIFEST);
	if (!path || !*path)
		return;
	char line[PATH_MAX + 256];
	int n = snprintf(line, sizeof line, "%s\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\n",
			 g.path, (long long)st->kernels, (long long)st->memcpys,
			 (long long)st->memsets, (long long)st->api_calls, (long long)st->nvtx,
			 (long long)dropped, (long long)st->metrics);
	if (n <= 0 || (size_t)n >= sizeof line)
		return;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	(void)!write(fd, line, (size_t)n);     /* one write: lines of processes never mix */
	close(fd);
}

/* ---- GPU clocks and power ---- */

static int64_t cupti_now_ns(void)
{
	uint64_t ts = 0;
	cuptiGetTimestamp(&ts);
	return (int64_t)ts;
}

/* The sampler's device count: 0 until CUDA knows its devices (the injection starts inside
 * cuInit), then every CUDA device, found in NVML by PCI bus id so that the rows carry the
 * deviceId (CUDA ordinal) of the activity rows whatever CUDA_VISIBLE_DEVICES says. NVML is
 * loaded here, on the sampler thread, so that its initialization (up to a second on some
 * machines) does not hold up the program's cuInit. Runs on the sampler thread only. */
static int gpu_count(void *ctx)
{
	(void)ctx;
	if (g.gpu_devices_known)
		return gpumon_devices(g.gpumon);
	if (g.gpumon_error[0] || g.gpu_enum_tries++ >= GPU_ENUM_TRIES)
		return 0;
	if (!g.gpumon) {
		struct err e = {0};
		if (gpumon_open(&g.gpumon, &e) < 0) {
			snprintf(g.gpumon_error, sizeof g.gpumon_error, "%s", e.msg);
			g.gpumon = NULL;
			return 0;
		}
	}
	struct cu_api cu;
	int n = 0;
	if (!cu_load(&cu) || cu.device_get_count(&n) != CUDA_SUCCESS || n <= 0)
		return 0;
	CUresult (*bus_id)(char *, int, CUdevice) = NULL;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (h) {
		*(void **)&bus_id = dlsym(h, "cuDeviceGetPCIBusId");
		dlclose(h);
	}
	bool visible_all = !getenv("CUDA_VISIBLE_DEVICES");
	for (int i = 0; i < n && i < GPUMON_MAX_DEVICES; i++) {
		CUdevice dev;
		char pci[64] = "";
		if (cu.device_get(&dev, i) != CUDA_SUCCESS)
			continue;
		if (bus_id && bus_id(pci, sizeof pci, dev) == CUDA_SUCCESS &&
		    gpumon_add_device(g.gpumon, i, pci, 0, NULL) >= 0)
			continue;
		/* no bus id: NVML's index is the CUDA ordinal only when nothing is hidden */
		if (visible_all)
			gpumon_add_device(g.gpumon, i, NULL, (unsigned)i, NULL);
	}
	g.gpu_devices_known = true;
	return gpumon_devices(g.gpumon);
}

static int gpu_read(void *ctx, int slot, struct gpumon_sample *out)
{
	(void)ctx;
	return gpumon_read(g.gpumon, slot, out);
}

static void gpu_sink(void *ctx, const struct gpumon_sample *smp)
{
	(void)ctx;
	pthread_rwlock_rdlock(&g.cb_lock);
	if (atomic_load(&g.accepting)) {
		capture_side_append(&g.gpu_side, smp, sizeof *smp);
		if (smp->timestamp_ns - g.gpu_last_submit_ns >= GPU_SAMPLES_SUBMIT_NS) {
			capture_side_submit(&g.gpu_side);
			g.gpu_last_submit_ns = smp->timestamp_ns;
		}
	}
	pthread_rwlock_unlock(&g.cb_lock);
}

/* After the writer started. A capture without NVML goes on; gpumon_error says why. */
static void gpu_start(void)
{
	g.gpumon_error[0] = '\0';
	g.gpumon = NULL;
	if (g.gpu_period_ms <= 0)
		return;
	struct err e = {0};
	capture_side_init(&g.gpu_side, &g.w.pool, CAPTURE_ITEM_GPU_SAMPLES, g.wait_ms);
	g.gpu_side_ready = true;
	g.gpu_devices_known = false;
	g.gpu_enum_tries = 0;
	g.gpu_last_submit_ns = cupti_now_ns();
	struct gpumon_source src = {.count = gpu_count, .read = gpu_read};
	struct gpumon_sampler_opts so = {.period_ms = g.gpu_period_ms, .now_ns = cupti_now_ns,
					 .sink = gpu_sink};
	if (gpumon_sampler_start(&g.sampler, &src, &so, &e) < 0)
		snprintf(g.gpumon_error, sizeof g.gpumon_error, "%s", e.msg);
}

/* Before the final flush: no more readings, the last ones queued. */
static void gpu_stop_sampling(void)
{
	gpumon_sampler_stop(&g.sampler);
	if (g.gpu_side_ready)
		capture_side_submit(&g.gpu_side);
}

/* After the writer stopped (this thread owns the database): what the readings were, then free. */
static void gpu_finish(void)
{
	char key[64], buf[1024];
	if (g.gpu_period_ms <= 0) {
		set_meta("gpu_metrics", "off");
	} else if (!g.gpumon || g.gpumon_error[0] || !g.gpu_devices_known) {
		const char *why = g.gpumon_error;
		if (!why[0])
			why = g.gpumon ? "CUDA named no device while the capture ran"
				       : "NVML was not loaded (the capture ended first)";
		snprintf(buf, sizeof buf, "unavailable: %s", why);
		set_meta("gpu_metrics", buf);
	} else {
		snprintf(buf, sizeof buf,
			 "nvml every %lld ms: %lld readings of %d GPUs (%lld failed, %lld lost for "
			 "want of a buffer); power %s",
			 (long long)g.gpu_period_ms, (long long)g.sampler.samples,
			 gpumon_devices(g.gpumon), (long long)g.sampler.failed_reads,
			 (long long)g.gpu_side.lost, gpumon_power_source(g.gpumon));
		set_meta("gpu_metrics", buf);
		for (int i = 0; i < gpumon_devices(g.gpumon); i++) {
			struct gpumon_sample smp;
			if (gpumon_read(g.gpumon, i, &smp) < 0)
				continue;
			snprintf(key, sizeof key, "gpu%d_power_limit_w", smp.device);
			snprintf(buf, sizeof buf, "%.1f", gpumon_power_limit_w(g.gpumon, i));
			set_meta(key, buf);
			snprintf(key, sizeof key, "gpu%d_max_sm_mhz", smp.device);
			snprintf(buf, sizeof buf, "%.0f", gpumon_max_sm_mhz(g.gpumon, i));
			set_meta(key, buf);
		}
	}
	if (g.gpu_side_ready) {
		capture_side_release(&g.gpu_side);
		g.gpu_side_ready = false;
	}
	gpumon_free(g.gpumon);
	g.gpumon = NULL;
}

/* ---- start / stop ---- */

static int subscribe(struct err *e)
{
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = "";
	CUpti_SubscriberParams sp;
	memset(&sp, 0, sizeof sp);
	sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	sp.subscriberName = "k3sim";
	sp.oldSubscriberName = holder;
	sp.oldSubscriberSize = sizeof holder;
	CUptiResult r = cuptiSubscribe_v2(&g.sub, on_callback, NULL, &sp);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		holder[sizeof holder - 1] = '\0';
		err_set(e, NULL, 0, 0,
			"another CUPTI client already holds the subscription%s%s%s: this is usually "
			"Nsight Systems (nsys), Nsight Compute (ncu), cuda-gdb or the PyTorch "
			"profiler (torch.profiler / Kineto). Only one can trace a process: capture "
			"with k3sim alone (run the program without the other tool and without "
			"torch.profiler), or keep that tool and bring its output in with "
			"'k3sim trace import' (nsys: 'nsys export --type sqlite'; torch.profiler: "
			"export_chrome_trace)",
			holder[0] ? " ('" : "", holder, holder[0] ? "')" : "");
		return -EBUSY;
	}
	if (r != CUPTI_SUCCESS) {
		err_set(e, NULL, 0, 0, "cuptiSubscribe: %s", capture_cupti_error_name(r));
		return -EIO;
	}
	return 0;
}

static const CUpti_ActivityKind activity_kinds[] = {
	CUPTI_ACTIVITY_KIND_DEVICE,   CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMCPY2,
	CUPTI_ACTIVITY_KIND_MEMSET,   CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,   CUPTI_ACTIVITY_KIND_MARKER,
};

static int enable_cupti(struct err *e)
{
	CUptiResult r;
	const char *what = NULL;
#define CK(call)                                                                               \
	do {                                                                                   \
		r = (call);                                                                    \
		if (r != CUPTI_SUCCESS) {                                                      \
			what = #call;                                                          \
			goto fail;                                                             \
		}                                                                              \
	} while (0)
	CK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
	/* Our buffers come zeroed (the writer clears them), so CUPTI need not on the app's threads. */
	uint8_t zeroed = 1;
	size_t zeroed_size = sizeof zeroed;
	cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size,
				  &zeroed);
	CK(cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed));
	CK(cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
			       CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020));
	/* NVTX: only to tell start/end ranges from push/pop ones (marker records do not). */
	const CUpti_CallbackId nvtx_cbids[] = {
		CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartEx,
		CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
		CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
	};
	for (size_t i = 0; i < sizeof nvtx_cbids / sizeof nvtx_cbids[0]; i++)
		CK(cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_NVTX, nvtx_cbids[i]));
	if (g.metrics) {
		CK(cuptiEnableDomain(1, g.sub, CUPTI_CB_DOMAIN_RUNTIME_API));
		CK(cuptiEnableDomain(1, g.sub, CUPTI_CB_DOMAIN_DRIVER_API));
		CK(cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
				       CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
		CK(cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
				       CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
	}
	for (size_t i = 0; i < sizeof activity_kinds / sizeof activity_kinds[0]; i++) {
		if ((activity_kinds[i] == CUPTI_ACTIVITY_KIND_DRIVER && !g.driver_api) ||
		    (activity_kinds[i] == CUPTI_ACTIVITY_KIND_RUNTIME && !g.runtime_api))
			continue;
		r = cuptiActivityEnable(activity_kinds[i]);
		/* DEVICE and MEMCPY2 are extras: go on without them. */
		if (r != CUPTI_SUCCESS && activity_kinds[i] != CUPTI_ACTIVITY_KIND_DEVICE &&
		    activity_kinds[i] != CUPTI_ACTIVITY_KIND_MEMCPY2) {
			what = "cuptiActivityEnable";
			goto fail;
		}
	}
	cuptiActivityFlushPeriod(CUPTI_FLUSH_PERIOD_MS);
	return 0;
fail:
#undef CK
	err_set(e, NULL, 0, 0, "%s: %s", what, capture_cupti_error_name(r));
	return -EIO;
}

static void disable_cupti(void)
{
	for (size_t i = 0; i < sizeof activity_kinds / sizeof activity_kinds[0]; i++)
		cuptiActivityDisable(activity_kinds[i]);
	cuptiActivityFlushPeriod(0);
}

/* The path of this library, for NVTX_INJECTION64_PATH in-process. */
static void self_path(char *out, size_t n)
{
	Dl_info info;
	out[0] = '\0';
	if (dladdr(fn_addr((void (*)(void))trace_capture_start), &info) && info.dli_fname)
		snprintf(out, n, "%s", info.dli_fname);
}

int trace_capture_start(const char *path, const struct trace_capture_opts *opts, struct err *e)
{
	struct trace_capture_opts o = opts ? *opts : (struct trace_capture_opts){0};
	int rc = 0;
	bool subscribed = false, writer = false;
	pthread_mutex_lock(&g.lock);
	if (g.active) {
		err_set(e, NULL, 0, 0, "a capture is already running (into '%s')", g.path);
		rc = -EALREADY;
		goto out;
	}
	g.pid = getpid();
	g.rank = capture_rank_from_env((const char *const *)environ);
	g.driver_api = !o.no_driver_api && !o.no_api;
	g.runtime_api = !o.no_api;
	g.wait_ms = o.wait_ms > 0 ? o.wait_ms : 10000;
	g.gpu_period_ms = o.gpu_metrics_ms < 0 ? 0 : o.gpu_metrics_ms == 0 ? DEFAULT_GPU_METRICS_MS
									   : o.gpu_metrics_ms;
	g.start_utc_ns = now_utc_ns();
	char host[256] = "localhost";
	gethostname(host, sizeof host);
	host[sizeof host - 1] = '\0';
	rc = capture_path_expand(path && *path ? path : "k3capture-%p.db", g.pid, g.rank, host,
				 false, g.path, sizeof g.path);
	if (rc < 0) {
		err_set(e, path, 0, 0, "bad output path template");
		goto out;
	}
	if (o.metrics && *o.metrics) {
		rc = capture_metrics_create(&g.metrics, o.metrics, e);
		if (rc < 0)
			goto out;
	}
	/* Subscribe before creating the file: a refused capture leaves nothing behind. */
	rc = subscribe(e);
	if (rc < 0)
		goto out;
	subscribed = true;
	struct trace_db_opts dbo = {.overwrite = o.overwrite, .crash_safe = true};
	rc = trace_db_create(&g.db, g.path, &dbo, e);
	if (rc < 0)
		goto out;
	if (!o.buffers)
		o.buffers = DEFAULT_BUFFERS;
	if (!o.buffer_bytes)
		o.buffer_bytes = DEFAULT_BUFFER_BYTES;
	write_start_metadata(&o);
	/* From here the writer thread owns the database, until capture_writer_stop. */
	rc = capture_writer_start(&g.w, g.db, g.pid, o.buffers, o.buffer_bytes, e);
	if (rc < 0)
		goto out;
	writer = true;
	if (g.metrics)
		capture_decoder_set_metrics(&g.w.dec, capture_metrics_names(g.metrics),
					    capture_metrics_units(g.metrics),
					    capture_metrics_count(g.metrics));
	atomic_store(&g.accepting, true);
	rc = enable_cupti(e);
	if (rc < 0)
		goto out;
	gpu_start();
	if (!getenv(CAPTURE_ENV_NVTX)) {
		char self[PATH_MAX];
		self_path(self, sizeof self);
		if (self[0])
			setenv(CAPTURE_ENV_NVTX, self, 0);
	}
	install_signals();
	if (!g.atexit_registered && atexit(at_exit) == 0)
		g.atexit_registered = true;
	g.active = true;
out:
	if (rc < 0) {
		atomic_store(&g.accepting, false);
		if (writer) {
			disable_cupti();
			pthread_rwlock_wrlock(&g.cb_lock);
			capture_writer_stop(&g.w, NULL);
			pthread_rwlock_unlock(&g.cb_lock);
		}
		if (g.db) {
			trace_db_discard(g.db);
			g.db = NULL;
		}
		if (subscribed)
			cuptiUnsubscribe(g.sub);
		capture_metrics_free(g.metrics);
		g.metrics = NULL;
	}
	pthread_mutex_unlock(&g.lock);
	return rc;
}

int trace_capture_flush(struct err *e)
{
	pthread_mutex_lock(&g.lock);
	int rc = g.active ? flush_all(false) : -ENOTCONN;
	pthread_mutex_unlock(&g.lock);
	if (rc == -ETIMEDOUT)
		err_set(e, NULL, 0, 0, "the capture writer did not commit within %d ms",
			FLUSH_TIMEOUT_MS);
	else if (rc == -ENOTCONN)
		err_set(e, NULL, 0, 0, "no capture is running");
	return rc;
}

int trace_capture_mark(const char *name)
{
	if (!name || !atomic_load(&g.accepting))
		return -ENOTCONN;
	uint64_t ts = 0;
	cuptiGetTimestamp(&ts);
	int64_t tid = (int64_t)syscall(SYS_gettid);
	int rc = 0;
	pthread_rwlock_rdlock(&g.cb_lock);
	if (!atomic_load(&g.accepting)) {
		rc = -ENOTCONN;
		goto out;
	}
	pthread_mutex_lock(&g.side_lock);
	for (int tries = 0; tries < 2; tries++) {
		if (!g.marks_buf)
			g.marks_buf = capture_pool_get(&g.w.pool, g.wait_ms);
		if (!g.marks_buf) {
			rc = -ENOBUFS;
			break;
		}
		rc = capture_mark_pack(g.marks_buf, g.w.pool.bytes, &g.marks_used, (int64_t)ts, tid,
				       name);
		if (rc == 0)
			break;
		struct capture_item it = {.kind = CAPTURE_ITEM_MARKS, .buf = g.marks_buf,
					  .valid_bytes = g.marks_used};
		capture_pool_submit(&g.w.pool, &it);
		g.marks_buf = NULL;
		g.marks_used = 0;
	}
	pthread_mutex_unlock(&g.side_lock);
out:
	pthread_rwlock_unlock(&g.cb_lock);
	return rc;
}

int trace_capture_stop(struct trace_capture_result *res, struct err *e)
{
	int rc = 0;
	pthread_mutex_lock(&g.lock);
	if (!g.active) {
		pthread_mutex_unlock(&g.lock);
		err_set(e, NULL, 0, 0, "no capture is running");
		return -ENOTCONN;
	}
	/* 0. No more GPU readings; 1. everything CUPTI has, into the pool; 2. no more callbacks;
	 * 3. stragglers. */
	gpu_stop_sampling();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	cuptiUnsubscribe(g.sub);
	disable_cupti();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&g.side_lock);
	submit_side_locked();
	pthread_mutex_unlock(&g.side_lock);
	pthread_rwlock_wrlock(&g.cb_lock);
	atomic_store(&g.accepting, false);
	pthread_rwlock_unlock(&g.cb_lock);

	struct err we = {0};
	int wrc = capture_writer_stop(&g.w, &we);
	int64_t dropped = g.w.dropped_records;
	int64_t waits = (int64_t)g.w.pool_waits;
	/* The writer is gone: this thread owns the database now. */
	add_missing_gpus();
	int rv = 0;
	void *cudart_get = dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
	if (cudart_get) {
		int (*fn)(int *);
		*(void **)&fn = cudart_get;
		if (fn(&rv) == 0)
			set_meta_i64(TRACE_CAPTURE_CUDA_RUNTIME_VERSION, rv);
	}
	set_meta_i64(TRACE_CAPTURE_END_UTC_NS, now_utc_ns());
	set_meta_i64("dropped_records", dropped);
	set_meta_i64("pool_waits", waits);
	set_meta_i64("nvtx_unmatched_range_ends", g.w.nvtx_unmatched_ends);
	set_meta_i64("nvtx_ranges_never_closed", g.w.nvtx_lost_ranges);
	set_meta_i64("unknown_records", g.w.unknown_records);
	gpu_finish();
	if (g.metrics) {
		set_meta_i64("metrics_kernels_measured", capture_metrics_measured(g.metrics));
		set_meta_i64("metrics_kernels_missed", capture_metrics_missed(g.metrics));
		set_meta("metrics_error", capture_metrics_error(g.metrics));
		set_meta("metrics_note", "kernels were replayed and serialized for counters: take "
					 "durations from a capture without --metrics");
	}
	struct trace_db_stats st;
	trace_db_stats(g.db, &st);
	struct err ce = {0};
	int crc = trace_db_close(g.db, &ce);
	g.db = NULL;
	if (wrc < 0) {
		rc = wrc;
		if (e)
			*e = we;
	} else if (crc < 0) {
		rc = crc;
		if (e)
			*e = ce;
	}
	append_manifest(&st, dropped);
	if (res) {
		res->stats = st;
		res->dropped_records = dropped;
		res->pool_waits = waits;
		snprintf(res->path, sizeof res->path, "%s", g.path);
	}
	capture_metrics_free(g.metrics);
	g.metrics = NULL;
	g.active = false;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

/* ---- CUDA_INJECTION64_PATH ---- */

static int start_from_env(void)
{
	/* NVTX and CUDA may each call in: one attempt, one message. */
	static atomic_bool tried;
	if (atomic_exchange(&tried, true))
		return 0;
	struct trace_capture_opts o = {0};
	o.metrics = getenv(CAPTURE_ENV_METRICS);
	const char *drv = getenv(CAPTURE_ENV_DRIVER);
	o.no_driver_api = drv && strcmp(drv, "0") == 0;
	const char *api = getenv(CAPTURE_ENV_API);
	o.no_api = api && strcmp(api, "0") == 0;
	o.buffers = (size_t)env_int(CAPTURE_ENV_BUFFERS, DEFAULT_BUFFERS, 2, 4096);
	o.buffer_bytes = (size_t)env_int(CAPTURE_ENV_BUFFER_BYTES, DEFAULT_BUFFER_BYTES, 1 << 16,
					 (int64_t)1 << 30);
	/* "0" turns the sampler off; unset or invalid: the default period */
	o.gpu_metrics_ms = env_int(CAPTURE_ENV_GPU_METRICS, DEFAULT_GPU_METRICS_MS, 0, 60000);
	if (o.gpu_metrics_ms == 0)
		o.gpu_metrics_ms = -1;
	o.meta = getenv(CAPTURE_ENV_META);
	const char *tmpl = getenv(CAPTURE_ENV_OUTPUT);
	/* Processes other than the one k3sim started (workers of torchrun, ...) get their own
	 * file: pid and rank go into the name. */
	const char *root = getenv(CAPTURE_ENV_ROOT_PID);
	bool is_root = root && strtoll(root, NULL, 10) == (long long)getpid();
	int rank = capture_rank_from_env((const char *const *)environ);
	char path[PATH_MAX];
	char host[256] = "localhost";
	gethostname(host, sizeof host);
	host[sizeof host - 1] = '\0';
	int rc = capture_path_expand(tmpl && *tmpl ? tmpl : "k3capture-%p.db", getpid(), rank,
				     host, !(is_root && rank < 0), path, sizeof path);
	if (rc < 0) {
		fprintf(stderr, "k3capture: bad output path '%s'\n", tmpl ? tmpl : "");
		return rc;
	}
	o.overwrite = true;        /* the CLI removed its own target; reruns replace old files */
	struct err e = {0};
	rc = trace_capture_start(path, &o, &e);
	if (rc < 0 && rc != -EALREADY) {
		char msg[2048];
		fprintf(stderr, "k3capture: %s\n", err_format(&e, msg, sizeof msg));
	} else if (rc == 0 && getenv(CAPTURE_ENV_VERBOSE)) {
		fprintf(stderr, "k3capture: capturing pid %ld into %s\n", (long)getpid(), path);
	}
	return rc;
}

TRACE_CAPTURE_API int InitializeInjection(void);
TRACE_CAPTURE_API int InitializeInjection(void)
{
	start_from_env();
	/* A failed capture must not fail the program: CUDA goes on either way. */
	return 1;
}
