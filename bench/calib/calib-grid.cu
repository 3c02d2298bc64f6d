/* calib-grid: the measured grids for calibration (issues 5 and 11) on one GPU.
 *
 * What it measures (bench/calib/cgrid.h builds the list on the CPU; `--list` prints it):
 *  - cuBLASLt GEMMs of every per-GPU shape K3 runs at TP 1, 2, 4, 8, 16 (derived from the model
 *    through the simulator's own mapping), at token counts M = 1 .. 16384 (powers of two, and
 *    3 x 2^k held out), BF16 and FP8 E4M3 with BF16 output. FP8 uses one per-tensor scale per
 *    operand (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER): that is what cuBLASLt does on Hopper;
 *    DeepSeek-style per-block (1x128 / 128x128) scales are DeepGEMM's kernels, not measured here;
 *  - grouped expert GEMMs as an EP rank runs them (EP 8..64: 112..14 experts a rank, top-16
 *    routing, balanced: every expert the same rows): one cuBLASLt strided-batched matmul over the
 *    experts (one launch, like a grouped kernel), or, where cuBLASLt has no batched algorithm for
 *    the dtype, a loop of cuBLASLt calls, one per expert (the CSV's `impl` column says which);
 *  - device-to-device copies from 4 KiB to 4 GiB.
 * Operands are random (never zeros) and rotated over several buffer sets larger than L2.
 *
 * Every measured instance is wrapped in an NVTX range whose text is the op in `k3sim op` syntax
 * ("k3sim op=gemm m=64 n=12 k=7168 dtype=bf16"), so a capture of this program
 * (k3sim trace capture -- calib-grid) maps each kernel to its model op. The clock regime is not
 * an op key: the whole grid sits in an outer range "calib-grid regime=burst|sustained" (not a
 * k3sim range), the CSV has a `regime` column, and the run script stores it as the capture's
 * K3SIM_CAPTURE row meta.regime.
 *
 * Regimes:
 *  - burst (default): each instance is timed alone (event pair, then a synchronization), with
 *    idle gaps between instances and points: the GPU runs at its boost clock;
 *  - sustained: >= --preheat-s (10 s) of back-to-back large BF16 GEMMs first, then a heater GEMM
 *    (8192 x 8192 x 4096 BF16, ~1 ms) right before every instance, no synchronization inside a
 *    point: the GPU stays at its power limit (~1.5 GHz on an H200 at 700 W), as a serving GPU
 *    does all day. Use with --compute-only (the compute-bound subset).
 *
 * Clocks and power: with NVML (libnvidia-ml.so.1, loaded at run time) a sampler thread reads the
 * GPU every --gpu-metrics-ms (10) ms; each CSV row has the mean SM and memory clock and power,
 * the highest temperature and the throttle reasons seen while its point ran (the nearest
 * earlier reading when the point was shorter than the period: clock_samples = 0). Without NVML
 * those columns are empty and the header says why.
 *
 * It also times each point itself with CUDA events and writes a CSV
 * (op,reps,median_s,p10_s,p90_s,regime,impl,sm_mhz,mem_mhz,power_w,temp_c,throttle,clock_samples);
 * points it could not run are "# skipped ..." comment lines. The whole run is time-boxed
 * (--budget-s): past it, the remaining points are left out and the CSV says so.
 *
 * usage: calib-grid --help */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/calib/cgrid.h"
#include "trace/capture/gpumon.h"

enum {
	MAX_REPS = 64,
	WORKSPACE_BYTES = 64 << 20,
	ROTATE_SETS = 8,
	HEAT_M = 8192, HEAT_N = 8192, HEAT_K = 4096, /* ~0.55 TFLOP: ~1 ms at the power limit */
	HEAT_BATCH = 16,                               /* preheat: launches between two syncs */
};

static const char *const CSV_COLUMNS =
	"op,reps,median_s,p10_s,p90_s,regime,impl,sm_mhz,mem_mhz,power_w,temp_c,throttle,clock_samples";

/* ---- errors: a CUDA error is fatal (it may be sticky); a cuBLASLt refusal skips a point ---- */

static FILE *csv;
static struct gpumon_sampler sampler;
static bool sampler_on;

static void die(const char *file, int line, const char *what, const char *why)
{
	fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, why);
	if (csv) {
		fprintf(csv, "# aborted: %s: %s\n", what, why);
		fclose(csv);
		csv = NULL;
	}
	if (sampler_on)
		gpumon_sampler_stop(&sampler);
	exit(1);
}

#define CHECK_CUDA(x)                                                          \
	do {                                                                   \
		cudaError_t err_ = (x);                                        \
		if (err_ != cudaSuccess)                                       \
			die(__FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
	} while (0)
#define CHECK_LT(x)                                                                      \
	do {                                                                             \
		cublasStatus_t st_ = (x);                                                \
		if (st_ != CUBLAS_STATUS_SUCCESS)                                        \
			die(__FILE__, __LINE__, #x, cublasLtGetStatusString(st_));       \
	} while (0)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- random operands ---- */

__global__ void fill_random_bf16(__nv_bfloat16 *p, int64_t n, uint32_t seed)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		uint32_t x = (uint32_t)i * 2654435761u ^ seed;
		x ^= x >> 13;
		x *= 0x5bd1e995u;
		x ^= x >> 15;
		p[i] = __float2bfloat16(((float)(x & 0xffff) / 65536.0f - 0.5f) * 0.25f);
	}
}

__global__ void fill_random_fp8(__nv_fp8_e4m3 *p, int64_t n, uint32_t seed)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		uint32_t x = (uint32_t)i * 2246822519u ^ seed;
		x ^= x >> 13;
		x *= 0x5bd1e995u;
		x ^= x >> 15;
		p[i] = __nv_fp8_e4m3(((float)(x & 0xffff) / 65536.0f - 0.5f) * 2.0f);
	}
}

/* ---- clocks and power per point ---- */

struct metrics {
	pthread_mutex_t lock;
	bool active, have_last;
	struct gpumon_acc acc;
	struct gpumon_sample last;
	char unavailable[512];         /* why there are no readings; "" when there are */
};

static struct metrics mx = {PTHREAD_MUTEX_INITIALIZER, false, false, {}, {}, ""};

static void metrics_sink(void *ctx, const struct gpumon_sample *s)
{
	(void)ctx;
	pthread_mutex_lock(&mx.lock);
	mx.last = *s;
	mx.have_last = true;
	if (mx.active)
		gpumon_acc_add(&mx.acc, s);
	pthread_mutex_unlock(&mx.lock);
}

static void point_begin(void)
{
	pthread_mutex_lock(&mx.lock);
	gpumon_acc_reset(&mx.acc);
	mx.active = true;
	pthread_mutex_unlock(&mx.lock);
}

/* The readings while the point ran; the last earlier one if none fell inside. */
static void point_end(struct gpumon_acc *out, int64_t *samples)
{
	pthread_mutex_lock(&mx.lock);
	mx.active = false;
	*out = mx.acc;
	*samples = mx.acc.n;
	if (!out->n && mx.have_last)
		gpumon_acc_add(out, &mx.last);
	pthread_mutex_unlock(&mx.lock);
}

static void start_metrics(struct gpumon **mon, int64_t period_ms, int device)
{
	*mon = NULL;
	if (period_ms <= 0) {
		snprintf(mx.unavailable, sizeof mx.unavailable, "off (--gpu-metrics-ms 0)");
		return;
	}
	struct err e = {};
	char pci[64] = "";
	if (gpumon_open(mon, &e) < 0) {
		snprintf(mx.unavailable, sizeof mx.unavailable, "%s", e.msg);
		*mon = NULL;
		return;
	}
	bool by_pci = cudaDeviceGetPCIBusId(pci, sizeof pci, device) == cudaSuccess &&
		      gpumon_add_device(*mon, device, pci, 0, &e) >= 0;
	/* no bus id match: NVML's index is the CUDA ordinal when no GPU is hidden */
	if (!by_pci && (getenv("CUDA_VISIBLE_DEVICES") ||
			gpumon_add_device(*mon, device, NULL, (unsigned)device, &e) < 0)) {
		snprintf(mx.unavailable, sizeof mx.unavailable, "NVML does not know the GPU at '%.60s': %.400s",
			 pci, e.msg);
		gpumon_free(*mon);
		*mon = NULL;
		return;
	}
	struct gpumon_source src;
	gpumon_source_nvml(*mon, &src);
	struct gpumon_sampler_opts so = {};
	so.period_ms = period_ms;
	so.sink = metrics_sink;
	if (gpumon_sampler_start(&sampler, &src, &so, &e) < 0) {
		snprintf(mx.unavailable, sizeof mx.unavailable, "%s", e.msg);
		return;
	}
	sampler_on = true;
}

/* ---- timing ---- */

struct gemm_ctx {
	cublasLtHandle_t lt;
	void *workspace;
	cudaStream_t stream;
	cudaEvent_t ev[2 * MAX_REPS + 2];
	char *pool[2];                 /* random operands, rotated: [0] BF16 values, [1] FP8 */
	size_t pool_bytes;             /* of each */
	float *scale;                  /* 1.0f on the device, for FP8 */
	/* sustained regime */
	bool sustained;
	cublasLtMatmulDesc_t heat_desc;
	cublasLtMatrixLayout_t heat_la, heat_lb, heat_ld;
	cublasLtMatmulAlgo_t heat_algo;
	void *heat_buf;
	struct cgrid_timing timing;
	const char *regime;
};

/* One instance, launched on the stream; the caller times it. */
typedef cublasStatus_t (*launch_fn)(struct gemm_ctx *g, void *arg, int set);

static void heat(struct gemm_ctx *g)
{
	float alpha = 1.0f, beta = 0.0f;
	char *b = (char *)g->heat_buf;
	size_t a_bytes = (size_t)HEAT_M * HEAT_K * 2, b_bytes = (size_t)HEAT_K * HEAT_N * 2;
	CHECK_LT(cublasLtMatmul(g->lt, g->heat_desc, &alpha, b, g->heat_la, b + a_bytes, g->heat_lb, &beta,
				b + a_bytes + b_bytes, g->heat_ld, b + a_bytes + b_bytes, g->heat_ld,
				&g->heat_algo, g->workspace, WORKSPACE_BYTES, g->stream));
}

struct result {
	int reps;
	float ms[MAX_REPS];
	const char *skipped;           /* NULL: measured */
	char why[256];
};

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* Warm-ups, then timed instances of fn inside NVTX ranges named spec. Burst: each instance
 * synchronized; sustained: a heater before each, one synchronization at the end. */
static void time_point(struct gemm_ctx *g, const struct cgrid_point *p, launch_fn fn, void *arg, int sets,
		       struct result *res)
{
	const struct cgrid_timing *t = &g->timing;
	int want = cgrid_point_reps(p, t);
	if (want > MAX_REPS)
		want = MAX_REPS;
	res->reps = 0;
	/* the first call tells whether cuBLASLt accepts the problem at all */
	if (g->sustained)
		heat(g);
	cublasStatus_t st = fn(g, arg, 0);
	if (st != CUBLAS_STATUS_SUCCESS) {
		res->skipped = "cuBLASLt refused the launch";
		snprintf(res->why, sizeof res->why, "%s", cublasLtGetStatusString(st));
		CHECK_CUDA(cudaStreamSynchronize(g->stream));
		return;
	}
	for (int r = 1; r < t->warmup; r++) {
		if (g->sustained)
			heat(g);
		CHECK_LT(fn(g, arg, r % sets));
	}
	double spent = 0;
	for (int r = 0; r < want; r++) {
		if (g->sustained)
			heat(g);
		nvtxRangePushA(p->spec);
		CHECK_CUDA(cudaEventRecord(g->ev[2 * r], g->stream));
		CHECK_LT(fn(g, arg, (t->warmup + r) % sets));
		CHECK_CUDA(cudaEventRecord(g->ev[2 * r + 1], g->stream));
		nvtxRangePop();
		res->reps = r + 1;
		if (g->sustained)
			continue;
		CHECK_CUDA(cudaEventSynchronize(g->ev[2 * r + 1]));
		CHECK_CUDA(cudaEventElapsedTime(&res->ms[r], g->ev[2 * r], g->ev[2 * r + 1]));
		spent += res->ms[r] * 1e-3;
		if (r + 1 >= t->min_reps && spent > t->budget_s)
			break;
	}
	if (g->sustained) {
		CHECK_CUDA(cudaEventSynchronize(g->ev[2 * res->reps - 1]));
		for (int r = 0; r < res->reps; r++)
			CHECK_CUDA(cudaEventElapsedTime(&res->ms[r], g->ev[2 * r], g->ev[2 * r + 1]));
	}
	CHECK_CUDA(cudaGetLastError());
}

/* ---- GEMMs: y[m, n] = x[m, k] W[k, n] as column-major D[n, m] = W^T[n, k] x[k, m] (TN, the
 * layout FP8 needs). Grouped: the same per expert, batched over the experts. ---- */

struct gemm_op {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulHeuristicResult_t heur;
	char *base;                    /* pool of the dtype */
	size_t set_bytes;              /* one operand set, 256-aligned */
	size_t a_bytes, b_bytes;       /* weights, activations of one set */
	/* loop of per-expert calls (grouped fallback) */
	int loop;                      /* experts, or 0 for one call */
	size_t a_stride, b_stride, d_stride; /* bytes between experts */
};

static size_t align256(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

static cublasStatus_t launch_gemm(struct gemm_ctx *g, void *arg, int set)
{
	struct gemm_op *o = (struct gemm_op *)arg;
	float alpha = 1.0f, beta = 0.0f;
	char *A = o->base + (size_t)set * o->set_bytes, *B = A + o->a_bytes,
	     *D = B + o->b_bytes;
	int calls = o->loop ? o->loop : 1;
	for (int e = 0; e < calls; e++) {
		cublasStatus_t st = cublasLtMatmul(g->lt, o->desc, &alpha, A + e * o->a_stride, o->la,
						   B + e * o->b_stride, o->lb, &beta, D + e * o->d_stride,
						   o->ld, D + e * o->d_stride, o->ld, &o->heur.algo,
						   g->workspace, WORKSPACE_BYTES, g->stream);
		if (st != CUBLAS_STATUS_SUCCESS)
			return st;
	}
	return CUBLAS_STATUS_SUCCESS;
}

static void gemm_op_release(struct gemm_op *o)
{
	if (o->la)
		cublasLtMatrixLayoutDestroy(o->la);
	if (o->lb)
		cublasLtMatrixLayoutDestroy(o->lb);
	if (o->ld)
		cublasLtMatrixLayoutDestroy(o->ld);
	if (o->desc)
		cublasLtMatmulDescDestroy(o->desc);
	memset(o, 0, sizeof *o);
}

/* Descriptors and an algorithm for D[n, rows] = W^T x, batch `batch` (1: plain). Returns false
 * (and releases) when cuBLASLt has no algorithm. */
static bool gemm_op_setup(struct gemm_ctx *g, struct gemm_op *o, int64_t rows, int64_t n, int64_t k, bool fp8,
			  int64_t batch)
{
	cudaDataType_t in_t = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
	CHECK_LT(cublasLtMatmulDescCreate(&o->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	CHECK_LT(cublasLtMatmulDescSetAttribute(o->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	CHECK_LT(cublasLtMatmulDescSetAttribute(o->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	if (fp8) {
		/* per-tensor scales, the only FP8 scaling cuBLASLt offers on Hopper */
		CHECK_LT(cublasLtMatmulDescSetAttribute(o->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &g->scale,
							sizeof g->scale));
		CHECK_LT(cublasLtMatmulDescSetAttribute(o->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &g->scale,
							sizeof g->scale));
	}
	CHECK_LT(cublasLtMatrixLayoutCreate(&o->la, in_t, (uint64_t)k, (uint64_t)n, k));
	CHECK_LT(cublasLtMatrixLayoutCreate(&o->lb, in_t, (uint64_t)k, (uint64_t)rows, k));
	CHECK_LT(cublasLtMatrixLayoutCreate(&o->ld, CUDA_R_16BF, (uint64_t)n, (uint64_t)rows, n));
	if (batch > 1) {
		int32_t count = (int32_t)batch;
		int64_t sa = n * k, sb = k * rows, sd = n * rows;
		cublasLtMatrixLayout_t ls[3] = {o->la, o->lb, o->ld};
		int64_t strides[3] = {sa, sb, sd};
		for (int i = 0; i < 3; i++) {
			CHECK_LT(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
								  sizeof count));
			CHECK_LT(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
								  &strides[i], sizeof strides[i]));
		}
	}
	cublasLtMatmulPreference_t pref;
	CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
	uint64_t ws = WORKSPACE_BYTES;
	CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
	int found = 0;
	cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(g->lt, o->desc, o->la, o->lb, o->ld, o->ld, pref, 1,
							   &o->heur, &found);
	cublasLtMatmulPreferenceDestroy(pref);
	if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
		gemm_op_release(o);
		return false;
	}
	return true;
}

/* Operand sets that fit the pool, at most ROTATE_SETS; 0 when one does not fit. */
static int sets_for(const struct gemm_ctx *g, size_t set_bytes)
{
	if (set_bytes > g->pool_bytes)
		return 0;
	size_t sets = g->pool_bytes / set_bytes;
	return sets > ROTATE_SETS ? ROTATE_SETS : (int)sets;
}

static void run_gemm_point(struct gemm_ctx *g, const struct cgrid_point *p, struct result *res, const char **impl)
{
	bool fp8 = p->dtype == CGRID_FP8;
	size_t eb = fp8 ? 1 : 2;
	bool grouped = p->kind == CGRID_GROUPED;
	int64_t experts = grouped ? p->touched : 1, rows = grouped ? p->rows_per_group : p->m;
	struct gemm_op o;
	memset(&o, 0, sizeof o);
	o.a_bytes = align256((size_t)experts * p->n * p->k * eb);
	o.b_bytes = align256((size_t)experts * p->k * rows * eb);
	size_t d_bytes = align256((size_t)experts * p->n * rows * 2);
	o.set_bytes = o.a_bytes + o.b_bytes + d_bytes;
	o.base = g->pool[fp8 ? 1 : 0];
	int sets = sets_for(g, o.set_bytes);
	*impl = grouped ? "batched" : "single";
	if (!sets) {
		res->skipped = "operands larger than the pool";
		snprintf(res->why, sizeof res->why, "%zu bytes", o.set_bytes);
		return;
	}
	if (!gemm_op_setup(g, &o, rows, p->n, p->k, fp8, experts)) {
		if (!grouped) {
			res->skipped = "no cuBLASLt algorithm";
			return;
		}
		/* no batched algorithm: one call per expert */
		if (!gemm_op_setup(g, &o, rows, p->n, p->k, fp8, 1)) {
			res->skipped = "no cuBLASLt algorithm (batched or per expert)";
			return;
		}
		o.loop = (int)experts;
		o.a_stride = (size_t)p->n * p->k * eb;
		o.b_stride = (size_t)p->k * rows * eb;
		o.d_stride = (size_t)p->n * rows * 2;
		*impl = "loop";
	}
	time_point(g, p, launch_gemm, &o, sets, res);
	gemm_op_release(&o);
}

struct copy_op {
	char *base;
	int64_t bytes;
};

static cublasStatus_t launch_copy(struct gemm_ctx *g, void *arg, int set)
{
	struct copy_op *c = (struct copy_op *)arg;
	char *b = c->base + (size_t)set * 2 * (size_t)c->bytes;
	CHECK_CUDA(cudaMemcpyAsync(b + c->bytes, b, (size_t)c->bytes, cudaMemcpyDeviceToDevice, g->stream));
	return CUBLAS_STATUS_SUCCESS;
}

static void run_copy_point(struct gemm_ctx *g, const struct cgrid_point *p, struct result *res)
{
	int sets = sets_for(g, 2 * (size_t)p->bytes);
	if (!sets) {
		res->skipped = "larger than the pool";
		return;
	}
	struct copy_op c = {g->pool[0], p->bytes};
	time_point(g, p, launch_copy, &c, sets, res);
}

/* ---- the heater (sustained) ---- */

static void heat_setup(struct gemm_ctx *g)
{
	size_t bytes = (size_t)HEAT_M * HEAT_K * 2 + (size_t)HEAT_K * HEAT_N * 2 + (size_t)HEAT_M * HEAT_N * 2;
	CHECK_CUDA(cudaMalloc(&g->heat_buf, bytes));
	fill_random_bf16<<<4096, 256, 0, g->stream>>>((__nv_bfloat16 *)g->heat_buf, (int64_t)(bytes / 2), 4242u);
	CHECK_CUDA(cudaGetLastError());
	struct gemm_op o;
	memset(&o, 0, sizeof o);
	/* D[n, m] = W^T x with rows = HEAT_N, n = HEAT_M, k = HEAT_K */
	if (!gemm_op_setup(g, &o, HEAT_N, HEAT_M, HEAT_K, false, 1))
		die(__FILE__, __LINE__, "heater GEMM", "no cuBLASLt algorithm for 8192 x 8192 x 4096 BF16");
	g->heat_desc = o.desc;
	g->heat_la = o.la;
	g->heat_lb = o.lb;
	g->heat_ld = o.ld;
	g->heat_algo = o.heur.algo;
}

/* Back-to-back heater GEMMs for seconds_s, the queue kept short. */
static void preheat(struct gemm_ctx *g, double seconds_s)
{
	nvtxRangePushA("calib-grid heat");
	double t0 = now_s();
	int batches = 0;
	while (now_s() - t0 < seconds_s) {
		for (int i = 0; i < HEAT_BATCH; i++)
			heat(g);
		CHECK_CUDA(cudaEventRecord(g->ev[batches % 2], g->stream));
		if (batches > 0)
			CHECK_CUDA(cudaEventSynchronize(g->ev[(batches - 1) % 2]));
		batches++;
	}
	CHECK_CUDA(cudaStreamSynchronize(g->stream));
	nvtxRangePop();
	fprintf(stderr, "calib-grid: preheated %.1f s (%d GEMMs of %dx%dx%d BF16)\n", now_s() - t0,
		batches * HEAT_BATCH, HEAT_M, HEAT_N, HEAT_K);
}

/* ---- output ---- */

static void record(const struct cgrid_point *p, struct result *res, const char *regime, const char *impl,
		   const struct gpumon_acc *acc, int64_t clock_samples)
{
	if (res->skipped) {
		fprintf(csv, "# skipped: %s: %s%s%s\n", p->spec, res->skipped, res->why[0] ? ": " : "", res->why);
		return;
	}
	int reps = res->reps;
	qsort(res->ms, (size_t)reps, sizeof res->ms[0], cmp_float);
	fprintf(csv, "\"%s\",%d,%.9g,%.9g,%.9g,%s,%s", p->spec, reps, res->ms[reps / 2] * 1e-3,
		res->ms[reps / 10] * 1e-3, res->ms[(reps * 9) / 10] * 1e-3, regime, impl);
	if (acc->n) {
		char why[128];
		fprintf(csv, ",%.0f,%.0f,%.1f,", gpumon_acc_sm_mhz(acc), gpumon_acc_mem_mhz(acc), gpumon_acc_power_w(acc));
		if (acc->temp_c_max >= 0)
			fprintf(csv, "%.0f", acc->temp_c_max);
		fprintf(csv, ",%s,%lld\n", trace_throttle_names(acc->throttle_any, why, sizeof why),
			(long long)clock_samples);
	} else {
		fprintf(csv, ",,,,,,0\n");
	}
	fflush(csv);
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: calib-grid [--out FILE.csv] [--quick] [--only CLASSES] [--regime burst|sustained]\n"
		"                  [--compute-only] [--budget-s S] [--preheat-s S] [--gpu-metrics-ms N]\n"
		"                  [--pool-gib N] [--list | --estimate | --version]\n\n"
		"Times cuBLASLt GEMMs of every shape Kimi K3 runs on one GPU (TP 1..16), grouped expert\n"
		"GEMMs of an EP rank (EP 8..64), BF16 and FP8, and device copies; each instance in an\n"
		"NVTX range in `k3sim op` syntax. Run it under `k3sim trace capture` for calibration.\n\n"
		"  --out FILE.csv      CUDA-event timings and clocks per point (default calib-grid.csv)\n"
		"  --quick             about a third of the token counts\n"
		"  --only CLASSES      comma list of gemm, grouped, copy (default all)\n"
		"  --regime R          burst (default: idle gaps, boost clock) or sustained (10 s of\n"
		"                      BF16 GEMM load first and a heater GEMM before every instance:\n"
		"                      power-limited clock)\n"
		"  --compute-only      only the points the roofline calls compute-bound (>= 20 us)\n"
		"  --budget-s S        stop after S seconds of measuring (default 170); the CSV says\n"
		"                      what was left out\n"
		"  --preheat-s S       sustained: load before the first point (default 10)\n"
		"  --gpu-metrics-ms N  NVML sampling period (default 10; 0: off)\n"
		"  --pool-gib N        operand pool per dtype in GiB (default 16; shrunk to fit)\n"
		"  --list              print the grid (shapes, points, estimated time) and exit: no GPU\n"
		"  --estimate          print only the point counts and the estimated time\n"
		"  --version           cuBLASLt, CUDA runtime and driver versions\n"
		"  -h, --help          this text\n");
}

static int parse_double(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	double x = v ? strtod(v, &end) : 0;
	if (!v || *end || !(x >= lo && x <= hi)) {
		fprintf(stderr, "calib-grid: %s wants a number in [%g, %g], not '%s'\n", opt, lo, hi, v ? v : "");
		return -1;
	}
	*out = x;
	return 0;
}

static void print_grid(const struct cgrid *g, const struct cgrid_timing *t, bool points, const char *regime)
{
	int count[3][2] = {{0}};
	double est[3][2] = {{0}};
	int64_t instances = 0;
	for (int i = 0; i < g->n_points; i++) {
		const struct cgrid_point *p = &g->points[i];
		double s = cgrid_point_estimate_s(p, t);
		int reps = cgrid_point_reps(p, t);
		count[p->kind][p->dtype]++;
		est[p->kind][p->dtype] += s;
		instances += reps;
		if (points)
			printf("%-12s %-4s %10.1f %3d  %s\n", cgrid_kind_name(p->kind),
			       p->kind == CGRID_COPY ? "-" : cgrid_dtype_name(p->dtype), p->est_op_s * 1e6, reps, p->spec);
	}
	if (points) {
		printf("# %d GEMM shapes (per GPU, from the model at TP", g->n_shapes);
		for (int i = 0; i < g->n_tp; i++)
			printf(" %lld", (long long)g->tp[i]);
		printf("):\n");
		for (int i = 0; i < g->n_shapes; i++)
			printf("#   n=%lld k=%lld: %s\n", (long long)g->shapes[i].n, (long long)g->shapes[i].k,
			       g->shapes[i].origin);
		printf("# %d grouped GEMM shapes (per EP rank, %lld experts, top-%lld, balanced):\n", g->n_gshapes,
		       (long long)g->experts, (long long)g->top_k);
		for (int i = 0; i < g->n_gshapes; i++)
			printf("#   n=%lld k=%lld groups=%lld: %s\n", (long long)g->gshapes[i].n,
			       (long long)g->gshapes[i].k, (long long)g->gshapes[i].groups, g->gshapes[i].origin);
	}
	for (int k = 0; k < 3; k++)
		for (int d = 0; d < 2; d++)
			if (count[k][d])
				printf("# %-12s %-4s %5d points, estimated %6.1f s\n", cgrid_kind_name((enum cgrid_kind)k),
				       k == CGRID_COPY ? "-" : cgrid_dtype_name((enum cgrid_dtype)d), count[k][d], est[k][d]);
	printf("# regime %s: %d points, %lld timed instances (NVTX ranges), estimated %.0f s of measuring%s"
	       " + ~5 s start-up\n",
	       regime, g->n_points, (long long)instances, cgrid_estimate_s(g, t),
	       t->sustained ? " (preheat included)" : "");
}

int main(int argc, char **argv)
{
	const char *out = "calib-grid.csv", *regime = "burst";
	bool list = false, estimate = false;
	double budget_s = 170, preheat_s = 10, metrics_ms = 10, pool_gib = 16;
	struct cgrid_opts go = {};
	go.gemm = go.grouped = go.copy = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--out") == 0 && v) {
			out = v;
			i++;
		} else if (strcmp(a, "--quick") == 0) {
			go.quick = true;
		} else if (strcmp(a, "--only") == 0 && v) {
			go.gemm = strstr(v, "gemm") != NULL;
			go.grouped = strstr(v, "grouped") != NULL;
			go.copy = strstr(v, "copy") != NULL;
			char tmp[128];
			snprintf(tmp, sizeof tmp, "%s", v);
			for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ","))
				if (strcmp(tok, "gemm") && strcmp(tok, "grouped") && strcmp(tok, "copy")) {
					fprintf(stderr, "calib-grid: --only takes gemm, grouped, copy; not '%s'\n", tok);
					return 2;
				}
			i++;
		} else if (strcmp(a, "--regime") == 0 && v) {
			if (strcmp(v, "burst") && strcmp(v, "sustained")) {
				fprintf(stderr, "calib-grid: --regime is burst or sustained, not '%s'\n", v);
				return 2;
			}
			regime = v;
			i++;
		} else if (strcmp(a, "--compute-only") == 0) {
			go.compute_only = true;
		} else if (strcmp(a, "--budget-s") == 0) {
			if (parse_double(a, v, 1, 86400, &budget_s) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--preheat-s") == 0) {
			if (parse_double(a, v, 0, 600, &preheat_s) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--gpu-metrics-ms") == 0) {
			if (parse_double(a, v, 0, 60000, &metrics_ms) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--pool-gib") == 0) {
			if (parse_double(a, v, 1, 64, &pool_gib) < 0)
				return 2;
			i++;
		} else if (strcmp(a, "--list") == 0) {
			list = true;
		} else if (strcmp(a, "--estimate") == 0) {
			estimate = true;
		} else if (strcmp(a, "--version") == 0) {
			int rt = 0, drv = 0;
			cudaRuntimeGetVersion(&rt);
			cudaDriverGetVersion(&drv);
			printf("calib-grid: cuBLASLt %zu (library; built against %d), CUDA runtime %d, driver API %d\n",
			       cublasLtGetVersion(), CUBLAS_VERSION, rt, drv);
			return 0;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "calib-grid: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	bool sustained = strcmp(regime, "sustained") == 0;
	struct cgrid *grid = NULL;
	struct err e = {};
	if (cgrid_new(&grid, &go, &e) < 0) {
		fprintf(stderr, "calib-grid: %s\n", e.msg);
		return 2;
	}
	struct cgrid_timing timing;
	cgrid_timing_default(&timing, sustained);
	timing.preheat_s = sustained ? preheat_s : 0;
	if (list || estimate) {
		print_grid(grid, &timing, list, regime);
		cgrid_free(grid);
		return 0;
	}

	int devices = 0;
	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		fprintf(stderr, "calib-grid: no CUDA device\n");
		cgrid_free(grid);
		return 77;
	}
	double t_start = now_s();
	csv = fopen(out, "w");
	if (!csv) {
		fprintf(stderr, "calib-grid: cannot create %s\n", out);
		return 1;
	}
	cudaDeviceProp prop;
	CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
	int clock_khz = 0;
	cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
	char date[64];
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(csv, "# device %s, %d SMs, SM clock %d MHz, L2 %d B; cuBLASLt %zu; %s\n", prop.name,
		prop.multiProcessorCount, clock_khz / 1000, prop.l2CacheSize, cublasLtGetVersion(), date);
	fprintf(csv, "# regime %s; %d points (%s); estimated %.0f s; budget %.0f s\n", regime, grid->n_points,
		go.compute_only ? "compute-bound subset" : go.quick ? "quick" : "full", cgrid_estimate_s(grid, &timing),
		budget_s);
	fprintf(csv, "# fp8: E4M3 operands, one per-tensor scale each (cuBLASLt on Hopper), BF16 output\n");

	struct gpumon *mon = NULL;
	start_metrics(&mon, (int64_t)metrics_ms, 0);
	if (mon)
		fprintf(csv, "# gpu metrics: NVML every %.0f ms; power %s; power limit %.0f W; max SM clock %.0f MHz\n",
			metrics_ms, gpumon_power_source(mon), gpumon_power_limit_w(mon, 0), gpumon_max_sm_mhz(mon, 0));
	else
		fprintf(csv, "# gpu metrics: unavailable: %s\n", mx.unavailable);
	fprintf(csv, "%s\n", CSV_COLUMNS);
	fflush(csv);

	struct gemm_ctx g;
	memset(&g, 0, sizeof g);
	g.timing = timing;
	g.sustained = sustained;
	g.regime = regime;
	CHECK_LT(cublasLtCreate(&g.lt));
	CHECK_CUDA(cudaStreamCreate(&g.stream));
	for (int i = 0; i < 2 * MAX_REPS + 2; i++)
		CHECK_CUDA(cudaEventCreate(&g.ev[i]));
	CHECK_CUDA(cudaMalloc(&g.workspace, WORKSPACE_BYTES));
	size_t free_b = 0, total_b = 0;
	CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
	/* two pools (BF16 values, FP8 values) and 4 GiB to spare for the heater and cuBLASLt */
	size_t want = (size_t)(pool_gib * (double)(1ull << 30));
	size_t spare = (size_t)4 << 30;
	if (2 * want + spare > free_b)
		want = free_b > spare ? (free_b - spare) / 2 : free_b / 4;
	g.pool_bytes = want & ~(size_t)255;
	for (int d = 0; d < 2; d++)
		CHECK_CUDA(cudaMalloc((void **)&g.pool[d], g.pool_bytes));
	fill_random_bf16<<<4096, 256, 0, g.stream>>>((__nv_bfloat16 *)g.pool[0], (int64_t)(g.pool_bytes / 2), 12345u);
	CHECK_CUDA(cudaGetLastError());
	fill_random_fp8<<<4096, 256, 0, g.stream>>>((__nv_fp8_e4m3 *)g.pool[1], (int64_t)g.pool_bytes, 777u);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMalloc(&g.scale, sizeof(float)));
	float one = 1.0f;
	CHECK_CUDA(cudaMemcpy(g.scale, &one, sizeof one, cudaMemcpyHostToDevice));
	if (sustained)
		heat_setup(&g);
	CHECK_CUDA(cudaDeviceSynchronize());
	fprintf(stderr, "calib-grid: %s, %d points, pools 2 x %.1f GiB, estimated %.0f s (budget %.0f s)\n", regime,
		grid->n_points, (double)g.pool_bytes / (double)(1ull << 30), cgrid_estimate_s(grid, &timing), budget_s);

	char range[64];
	snprintf(range, sizeof range, "calib-grid regime=%s", regime);
	nvtxRangePushA(range);
	double t0 = now_s();
	if (sustained && preheat_s > 0)
		preheat(&g, preheat_s);
	int measured = 0, skipped = 0, done = 0;
	for (; done < grid->n_points; done++) {
		if (now_s() - t0 > budget_s)
			break;
		const struct cgrid_point *p = &grid->points[done];
		struct result res;
		memset(&res, 0, sizeof res);
		const char *impl = "single";
		point_begin();
		if (p->kind == CGRID_COPY) {
			impl = "memcpy";
			run_copy_point(&g, p, &res);
		} else {
			run_gemm_point(&g, p, &res, &impl);
		}
		struct gpumon_acc acc;
		int64_t samples = 0;
		point_end(&acc, &samples);
		record(p, &res, regime, impl, &acc, samples);
		if (res.skipped)
			skipped++;
		else
			measured++;
	}
	nvtxRangePop();
	CHECK_CUDA(cudaDeviceSynchronize());
	if (sampler_on) {
		gpumon_sampler_stop(&sampler);
		sampler_on = false;
	}
	double elapsed = now_s() - t0;
	if (done < grid->n_points) {
		fprintf(csv, "# stopped: the time budget of %.0f s ran out after %d of %d points; the rest were not measured\n",
			budget_s, done, grid->n_points);
		fprintf(stderr, "calib-grid: warning: time budget of %.0f s reached: %d of %d points not measured\n",
			budget_s, grid->n_points - done, grid->n_points);
	}
	fprintf(csv, "# done: %d measured, %d skipped, %.1f s measuring, %.1f s in all\n", measured, skipped, elapsed,
		now_s() - t_start);
	fclose(csv);
	csv = NULL;
	fprintf(stderr, "calib-grid: %s: %d measured, %d skipped, %.1f s; wrote %s\n", regime, measured, skipped,
		elapsed, out);
	gpumon_free(mon);
	cudaFree(g.pool[0]);
	cudaFree(g.pool[1]);
	cudaFree(g.workspace);
	if (g.heat_buf)
		cudaFree(g.heat_buf);
	cublasLtDestroy(g.lt);
	cgrid_free(grid);
	return 0;
}
