/* SPDX-License-Identifier: MIT */
/* The benches' sustained mode (k3-bench, kda-bench): K3_BENCH_SUSTAIN_MS=N in the environment, and
 * after a row's timed launches the op runs back to back for ~N ms in one NVTX range
 * "k3-bench sustained op=..." (its steady draw and the clock the power limiter settles it at: a
 * capture's NVML readings over the range's second half, bench/power/op-sustained-extract.py),
 * operands cycling over the timed launches' indices, no L2 flush. Only rows of this project's
 * kernels (an NVTX text "k3sim op=..."). */
#ifndef K3_KERNELS_COMMON_BENCH_SUSTAIN_CUH
#define K3_KERNELS_COMMON_BENCH_SUSTAIN_CUH

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define K3_SUSTAIN_CK(call)                                                                       \
	do {                                                                                      \
		cudaError_t e_ = (call);                                                          \
		if (e_ != cudaSuccess) {                                                          \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
				cudaGetErrorString(e_));                                          \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

/* K3_BENCH_SUSTAIN_MS, read once: 0 (unset) or milliseconds in 1 .. 600000; exits 2 with a message
 * on anything else. */
inline int k3_bench_sustain_ms()
{
	static int ms = -1;
	if (ms < 0) {
		const char *v = getenv("K3_BENCH_SUSTAIN_MS");
		char *end = nullptr;
		long x = v && *v ? strtol(v, &end, 10) : 0;
		if (v && *v && (*end || x < 0 || x > 600000)) {
			fprintf(stderr, "K3_BENCH_SUSTAIN_MS=%s: milliseconds in 0 .. 600000\n", v);
			exit(2);
		}
		ms = (int)x;
	}
	return ms;
}

/* The sustained run of the op `spec` (its NVTX text) on stream s after its timed launches: about
 * sustain_ms / t_us launches of launch(i % n_idx); prints the time a launch over each half. */
template <typename F>
void k3_bench_sustain(const char *spec, int n_idx, double t_us, cudaStream_t s, F launch)
{
	const int sustain_ms = k3_bench_sustain_ms();
	if (!sustain_ms || strncmp(spec, "k3sim op=", 9) != 0 || !(t_us > 0) || n_idx < 1)
		return;
	const long n = std::min(2000000L, std::max(4L, (long)ceil(sustain_ms * 1e3 / t_us)));
	char label[320];
	snprintf(label, sizeof label, "k3-bench sustained %s", spec + 6);
	cudaEvent_t a, m, b;
	K3_SUSTAIN_CK(cudaEventCreate(&a));
	K3_SUSTAIN_CK(cudaEventCreate(&m));
	K3_SUSTAIN_CK(cudaEventCreate(&b));
	K3_SUSTAIN_CK(cudaStreamSynchronize(s));
	nvtxRangePushA(label);
	K3_SUSTAIN_CK(cudaEventRecord(a, s));
	for (long i = 0; i < n; i++) {
		if (i == n / 2)
			K3_SUSTAIN_CK(cudaEventRecord(m, s));
		launch((int)(i % n_idx));
	}
	K3_SUSTAIN_CK(cudaEventRecord(b, s));
	K3_SUSTAIN_CK(cudaEventSynchronize(b));
	nvtxRangePop();
	float t1, t2;
	K3_SUSTAIN_CK(cudaEventElapsedTime(&t1, a, m));
	K3_SUSTAIN_CK(cudaEventElapsedTime(&t2, m, b));
	printf("%-14s sustained %s: %ld launches in %.0f ms, %.2f us a launch (first half), %.2f (second)\n", "",
	       spec + 9, n, t1 + t2, 1e3 * t1 / (n / 2), 1e3 * t2 / (n - n / 2));
	fflush(stdout);
	K3_SUSTAIN_CK(cudaEventDestroy(a));
	K3_SUSTAIN_CK(cudaEventDestroy(m));
	K3_SUSTAIN_CK(cudaEventDestroy(b));
}

#endif
