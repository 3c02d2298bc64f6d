/* SPDX-License-Identifier: MIT */
/* The benches' pacing (k3-bench, kda-bench): the clock each timed launch runs at.
 * The power limiter sets the SM clock from the draw of the last ~100 ms (sim/power.h), so a timed
 * launch runs at the clock what ran before it set. K3_BENCH_COOL_MS=X: before each timed launch (and
 * each back-to-back loop) the GPU idles X ms (the host sleeps after a sync): launches shorter than
 * the window run at boost. K3_BENCH_HOG_MS=X: before each, X ms of cuBLASLt BF16 GEMMs (8192^3, back
 * to back; ~1.4 ms each at boost), which hold the board at its limit, so the launch runs at the
 * clock a power-capped neighbour leaves it (~1480 MHz on an H200): the two give each op's time at
 * two clocks, the share of it bound by the SM clock (hw clock_bound; bench/power/clock-bound.py).
 * The hog's kernels run outside every NVTX range and event pair (the caller paces before it opens
 * its range). Values: milliseconds in 0 .. 10000; the two exclude each other; anything else exits 2
 * with a message. The program's name in messages: `who`. */
#ifndef K3_KERNELS_COMMON_BENCH_PACE_CUH
#define K3_KERNELS_COMMON_BENCH_PACE_CUH

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <cublasLt.h>
#include <cuda_runtime.h>

struct k3_bench_pacer {
	int hog_ms = -1, cool_ms = 0; /* -1: the environment not read yet */
	bool ready = false;
	cublasLtHandle_t lt = nullptr;
	void *ws = nullptr, *a = nullptr, *b = nullptr, *d = nullptr;
	size_t ws_bytes = 32u << 20;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulHeuristicResult_t heur;
	int calls = 0; /* a pace's GEMMs */
};

inline k3_bench_pacer &k3_bench_pacer_get()
{
	static k3_bench_pacer p;
	return p;
}

[[noreturn]] inline void k3_bench_pace_fail(const char *who, const char *what, int code)
{
	fprintf(stderr, "%s: pacing (K3_BENCH_HOG_MS / K3_BENCH_COOL_MS): %s failed (%d)\n", who, what, code);
	exit(1);
}

/* Reads K3_BENCH_HOG_MS / K3_BENCH_COOL_MS once. */
inline void k3_bench_pace_env(const char *who)
{
	k3_bench_pacer &p = k3_bench_pacer_get();
	if (p.hog_ms >= 0)
		return;
	auto ms = [who](const char *name) {
		const char *v = getenv(name);
		if (!v || !*v)
			return 0;
		char *end;
		long x = strtol(v, &end, 10);
		if (*end || x < 0 || x > 10000) {
			fprintf(stderr, "%s: %s=%s: milliseconds in 0 .. 10000\n", who, name, v);
			exit(2);
		}
		return (int)x;
	};
	p.hog_ms = ms("K3_BENCH_HOG_MS");
	p.cool_ms = ms("K3_BENCH_COOL_MS");
	if (p.hog_ms && p.cool_ms) {
		fprintf(stderr, "%s: K3_BENCH_HOG_MS and K3_BENCH_COOL_MS exclude each other\n", who);
		exit(2);
	}
}

/* The hog's operands, its cuBLASLt handle and algorithm, on first use. */
inline void k3_bench_hog_setup(const char *who)
{
	k3_bench_pacer &p = k3_bench_pacer_get();
	const int64_t n = 8192;
	const size_t bytes = (size_t)n * n * 2;
	cudaError_t ce;
	if ((ce = cudaMalloc(&p.a, bytes)) || (ce = cudaMalloc(&p.b, bytes)) || (ce = cudaMalloc(&p.d, bytes)) ||
	    (ce = cudaMalloc(&p.ws, p.ws_bytes)) || (ce = cudaMemset(p.a, 0x3c, bytes)) || /* BF16 0x3c3c: ~0.0115 */
	    (ce = cudaMemset(p.b, 0x3c, bytes)))
		k3_bench_pace_fail(who, cudaGetErrorString(ce), (int)ce);
	cublasStatus_t s;
	const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	if ((s = cublasLtCreate(&p.lt)) || (s = cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
	    (s = cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) ||
	    (s = cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) ||
	    (s = cublasLtMatrixLayoutCreate(&p.la, CUDA_R_16BF, n, n, n)) ||
	    (s = cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_16BF, n, n, n)) ||
	    (s = cublasLtMatrixLayoutCreate(&p.ld, CUDA_R_16BF, n, n, n)))
		k3_bench_pace_fail(who, "cuBLASLt set-up", (int)s);
	cublasLtMatmulPreference_t pref;
	const uint64_t ws = p.ws_bytes;
	int found = 0;
	if ((s = cublasLtMatmulPreferenceCreate(&pref)) ||
	    (s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)))
		k3_bench_pace_fail(who, "cuBLASLt preference", (int)s);
	if (cublasLtMatmulAlgoGetHeuristic(p.lt, p.desc, p.la, p.lb, p.ld, p.ld, pref, 1, &p.heur, &found) !=
		    CUBLAS_STATUS_SUCCESS ||
	    !found) {
		fprintf(stderr, "%s: K3_BENCH_HOG_MS: no cuBLASLt algorithm for the 8192^3 hog\n", who);
		exit(1);
	}
	cublasLtMatmulPreferenceDestroy(pref);
	p.ready = true;
	/* a GEMM's time at the limit (~1.65 ms on an H200): the count of a pace */
	p.calls = std::max(1, (int)ceil(p.hog_ms / 1.6));
	printf("pacing: %d ms of cuBLASLt BF16 8192^3 GEMMs (%d) before each timed launch\n", p.hog_ms, p.calls);
}

/* Before a timed launch or loop on stream s: the pace of K3_BENCH_HOG_MS / K3_BENCH_COOL_MS (none
 * by default). */
inline void k3_bench_pace(const char *who, cudaStream_t s)
{
	k3_bench_pace_env(who);
	k3_bench_pacer &p = k3_bench_pacer_get();
	if (p.cool_ms) {
		cudaError_t ce = cudaStreamSynchronize(s);
		if (ce)
			k3_bench_pace_fail(who, cudaGetErrorString(ce), (int)ce);
		struct timespec ts = {p.cool_ms / 1000, (long)(p.cool_ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
		}
		return;
	}
	if (!p.hog_ms)
		return;
	if (!p.ready)
		k3_bench_hog_setup(who);
	const float alpha = 1.0f, beta = 0.0f;
	for (int i = 0; i < p.calls; i++) {
		cublasStatus_t st = cublasLtMatmul(p.lt, p.desc, &alpha, p.a, p.la, p.b, p.lb, &beta, p.d, p.ld, p.d,
						   p.ld, &p.heur.algo, p.ws, p.ws_bytes, s);
		if (st)
			k3_bench_pace_fail(who, "cublasLtMatmul", (int)st);
	}
}

#endif
