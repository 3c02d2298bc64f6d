/* calib-grid: the measured grids for calibration (issue 5) on one GPU.
 *
 * Runs cuBLASLt GEMMs over K3's projection shapes (BF16, and FP8 E4M3 with BF16 output) at token
 * counts M from 1 to 16384, and device-to-device copies from 4 KiB to 4 GiB. Every measured
 * instance is wrapped in an NVTX range whose text is the op in `k3sim op` syntax
 * ("k3sim op=gemm m=64 n=7168 k=7168 dtype=bf16"), so a capture of this program
 * (k3sim trace capture -- calib-grid) maps each kernel to its model op without guessing. It also
 * times each point itself with CUDA events and writes a CSV (op, reps, median_s, p10_s, p90_s).
 *
 * Inputs are random (never zeros), rotated over several buffers larger than L2 for small shapes.
 *
 * usage: calib-grid [--out FILE.csv] [--quick] [--only gemm|copy] */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_CUDA(x)                                                                              \
	do {                                                                                       \
		cudaError_t err_ = (x);                                                            \
		if (err_ != cudaSuccess) {                                                         \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define CHECK_LT(x)                                                                                \
	do {                                                                                       \
		cublasStatus_t st_ = (x);                                                          \
		if (st_ != CUBLAS_STATUS_SUCCESS) {                                                \
			fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #x, (int)st_); \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

enum { MAX_REPS = 40, WARMUP = 3, WORKSPACE_BYTES = 64 << 20 };
static const double TIME_BUDGET_S = 0.25; /* per point, after warm-up */

struct shape {
	const char *what;
	int64_t n, k; /* weights [k, n]; activations [m, k] */
};

/* K3's projections at TP1, and the per-GPU shapes at TP8 where they differ. */
static const struct shape shapes[] = {
	{"kda.qkv_proj tp1", 36864, 7168}, {"kda.qkv_proj tp8", 4608, 7168},
	{"kda.gate_proj tp1", 12288, 7168}, {"kda.o_proj tp1", 7168, 12288},
	{"kda.o_proj tp8", 7168, 1536},    {"kda.beta_proj tp1", 96, 7168},
	{"mla.q_a", 1536, 7168},           {"mla.q_b tp1", 18432, 1536},
	{"mla.kv_a", 576, 7168},           {"mla.kv_b tp1", 24576, 512},
	{"moe.router_down", 4480, 7168},   {"moe.up tp1", 7168, 3584},
	{"moe.expert_gate_up", 6144, 3584}, {"moe.expert_down", 3584, 3072},
	{"moe.shared_down tp1", 7168, 6144}, {"lm_head tp8", 20480, 7168},
	{"ffn.down tp8", 7168, 4224},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

/* Training M values are powers of 4 and 16K; the held-out ones sit between them. */
static const int64_t m_values[] = {1, 2, 4, 8, 16, 32, 64, 96, 128, 256, 384, 512, 1024, 1536,
				   2048, 4096, 6144, 8192, 12288, 16384};
enum { N_M = sizeof m_values / sizeof m_values[0] };

static FILE *csv;

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

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

static void record(const char *spec, float *ms, int reps)
{
	qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
	fprintf(csv, "\"%s\",%d,%.9g,%.9g,%.9g\n", spec, reps, ms[reps / 2] * 1e-3, ms[reps / 10] * 1e-3,
		ms[(reps * 9) / 10] * 1e-3);
	fflush(csv);
}

struct gemm_ctx {
	cublasLtHandle_t lt;
	void *workspace;
	cudaStream_t stream;
	cudaEvent_t ev[2 * MAX_REPS + 2];
	void *pool;          /* random operands, rotated */
	size_t pool_bytes;
	float *scale;        /* 1.0f on the device, for FP8 */
};

/* y[m, n] = x[m, k] W[k, n] as column-major D[n, m] = W^T[n, k] x[k, m] (TN, the FP8 layout). */
static void run_gemm(struct gemm_ctx *g, int64_t m, int64_t n, int64_t k, bool fp8)
{
	size_t eb = fp8 ? 1 : 2;
	size_t a_bytes = (size_t)n * k * eb, b_bytes = (size_t)k * m * eb, d_bytes = (size_t)n * m * 2;
	size_t set = a_bytes + b_bytes + d_bytes;
	if (set + 256 > g->pool_bytes)
		return;
	int sets = (int)(g->pool_bytes / (set + 256));
	if (sets > 8)
		sets = 8;

	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	cudaDataType_t in_t = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
	CHECK_LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	if (fp8) {
		CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &g->scale, sizeof g->scale));
		CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &g->scale, sizeof g->scale));
	}
	CHECK_LT(cublasLtMatrixLayoutCreate(&la, in_t, (uint64_t)k, (uint64_t)n, k));
	CHECK_LT(cublasLtMatrixLayoutCreate(&lb, in_t, (uint64_t)k, (uint64_t)m, k));
	CHECK_LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, (uint64_t)n, (uint64_t)m, n));
	cublasLtMatmulPreference_t pref;
	CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
	uint64_t ws = WORKSPACE_BYTES;
	CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
	cublasLtMatmulHeuristicResult_t heur;
	int found = 0;
	cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(g->lt, desc, la, lb, ld, ld, pref, 1, &heur, &found);
	if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
		fprintf(stderr, "calib-grid: no cuBLASLt algorithm for m=%lld n=%lld k=%lld %s; skipped\n",
			(long long)m, (long long)n, (long long)k, fp8 ? "fp8" : "bf16");
		goto out;
	}
	{
		char spec[160];
		snprintf(spec, sizeof spec, "k3sim op=gemm m=%lld n=%lld k=%lld dtype=%s", (long long)m, (long long)n,
			 (long long)k, fp8 ? "fp8" : "bf16");
		float alpha = 1.0f, beta = 0.0f;
		float ms[MAX_REPS];
		int reps = 0;
		double spent = 0;
		for (int r = 0; r < WARMUP + MAX_REPS; r++) {
			char *base = (char *)g->pool + (size_t)(r % sets) * (set + 256);
			void *A = base, *B = base + a_bytes, *D = base + a_bytes + b_bytes;
			bool timed = r >= WARMUP;
			if (timed)
				nvtxRangePushA(spec);
			if (timed)
				CHECK_CUDA(cudaEventRecord(g->ev[2 * reps], g->stream));
			CHECK_LT(cublasLtMatmul(g->lt, desc, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heur.algo,
						g->workspace, WORKSPACE_BYTES, g->stream));
			if (timed) {
				CHECK_CUDA(cudaEventRecord(g->ev[2 * reps + 1], g->stream));
				CHECK_CUDA(cudaEventSynchronize(g->ev[2 * reps + 1]));
				nvtxRangePop();
				CHECK_CUDA(cudaEventElapsedTime(&ms[reps], g->ev[2 * reps], g->ev[2 * reps + 1]));
				spent += ms[reps] * 1e-3;
				reps++;
				if (reps >= 5 && spent > TIME_BUDGET_S)
					break;
			}
		}
		CHECK_CUDA(cudaGetLastError());
		record(spec, ms, reps);
	}
out:
	cublasLtMatmulPreferenceDestroy(pref);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatrixLayoutDestroy(lb);
	cublasLtMatrixLayoutDestroy(ld);
	cublasLtMatmulDescDestroy(desc);
}

static void run_copy(struct gemm_ctx *g, int64_t bytes)
{
	if ((size_t)bytes * 2 > g->pool_bytes)
		return;
	int sets = (int)(g->pool_bytes / (2 * (size_t)bytes));
	if (sets > 8)
		sets = 8;
	char spec[128];
	snprintf(spec, sizeof spec, "k3sim op=copy bytes=%lld", (long long)bytes);
	float ms[MAX_REPS];
	int reps = 0;
	double spent = 0;
	for (int r = 0; r < WARMUP + MAX_REPS; r++) {
		char *base = (char *)g->pool + (size_t)(r % sets) * 2 * (size_t)bytes;
		bool timed = r >= WARMUP;
		if (timed) {
			nvtxRangePushA(spec);
			CHECK_CUDA(cudaEventRecord(g->ev[2 * reps], g->stream));
		}
		CHECK_CUDA(cudaMemcpyAsync(base + bytes, base, (size_t)bytes, cudaMemcpyDeviceToDevice, g->stream));
		if (timed) {
			CHECK_CUDA(cudaEventRecord(g->ev[2 * reps + 1], g->stream));
			CHECK_CUDA(cudaEventSynchronize(g->ev[2 * reps + 1]));
			nvtxRangePop();
			CHECK_CUDA(cudaEventElapsedTime(&ms[reps], g->ev[2 * reps], g->ev[2 * reps + 1]));
			spent += ms[reps] * 1e-3;
			reps++;
			if (reps >= 5 && spent > TIME_BUDGET_S)
				break;
		}
	}
	record(spec, ms, reps);
}

int main(int argc, char **argv)
{
	const char *out = "calib-grid.csv";
	bool quick = false, do_gemm = true, do_copy = true;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			const char *w = argv[++i];
			do_gemm = strcmp(w, "gemm") == 0;
			do_copy = strcmp(w, "copy") == 0;
		} else {
			fprintf(stderr, "usage: calib-grid [--out FILE.csv] [--quick] [--only gemm|copy]\n");
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	int devices = 0;
	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		fprintf(stderr, "calib-grid: no CUDA device\n");
		return 77;
	}
	csv = fopen(out, "w");
	if (!csv) {
		fprintf(stderr, "calib-grid: cannot create %s\n", out);
		return 1;
	}
	cudaDeviceProp prop;
	CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
	int clock_khz = 0, mem_khz = 0;
	cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
	cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
	fprintf(csv, "# device %s, %d SMs, SM clock %d MHz, L2 %d B; cuBLASLt %zu\n", prop.name,
		prop.multiProcessorCount, clock_khz / 1000, prop.l2CacheSize, cublasLtGetVersion());
	fprintf(csv, "op,reps,median_s,p10_s,p90_s\n");

	struct gemm_ctx g;
	memset(&g, 0, sizeof g);
	CHECK_LT(cublasLtCreate(&g.lt));
	CHECK_CUDA(cudaStreamCreate(&g.stream));
	for (int i = 0; i < 2 * MAX_REPS + 2; i++)
		CHECK_CUDA(cudaEventCreate(&g.ev[i]));
	CHECK_CUDA(cudaMalloc(&g.workspace, WORKSPACE_BYTES));
	g.pool_bytes = (size_t)10 << 30;
	CHECK_CUDA(cudaMalloc(&g.pool, g.pool_bytes));
	fill_random_bf16<<<4096, 256>>>((__nv_bfloat16 *)g.pool, (int64_t)(g.pool_bytes / 2), 12345u);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMalloc(&g.scale, sizeof(float)));
	float one = 1.0f;
	CHECK_CUDA(cudaMemcpy(g.scale, &one, sizeof one, cudaMemcpyHostToDevice));
	CHECK_CUDA(cudaDeviceSynchronize());

	if (do_copy)
		for (int64_t b = 4096; b <= ((int64_t)4 << 30); b *= 2) {
			run_copy(&g, b);
			if (!quick && b >= 16384)
				run_copy(&g, b / 4 * 3); /* held out: 0.75 x the power of two */
		}
	if (do_gemm)
		for (int fp8 = 0; fp8 < 2; fp8++) {
			if (fp8) /* FP8 operands: overwrite the pool with E4M3 values */
				fill_random_fp8<<<4096, 256>>>((__nv_fp8_e4m3 *)g.pool, (int64_t)g.pool_bytes, 777u);
			CHECK_CUDA(cudaDeviceSynchronize());
			for (int s = 0; s < N_SHAPES; s++)
				for (int mi = 0; mi < N_M; mi++) {
					int64_t m = m_values[mi];
					if (quick && (mi % 3) != 0)
						continue;
					if (fp8 && m % 16 != 0)
						continue; /* cuBLASLt FP8 wants 16-aligned dims */
					if (2.0 * m * shapes[s].n * shapes[s].k > 6e12)
						continue;
					run_gemm(&g, m, shapes[s].n, shapes[s].k, fp8 != 0);
				}
			fprintf(stderr, "calib-grid: %s GEMMs done\n", fp8 ? "fp8" : "bf16");
		}
	CHECK_CUDA(cudaDeviceSynchronize());
	fclose(csv);
	cudaFree(g.pool);
	cudaFree(g.workspace);
	cublasLtDestroy(g.lt);
	fprintf(stderr, "calib-grid: wrote %s\n", out);
	return 0;
}
