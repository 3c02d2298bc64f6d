// The program the GPU capture tests run under `k3sim trace capture`. Each mode launches a known
// set of kernels, copies and NVTX ranges; capture_check.c knows what the database must then hold.
//   basic          k_alpha x3 on stream A, k_beta x2 on stream B, k_gamma x1 on the legacy default
//                  stream; one 1 MiB HtoD and one DtoH copy, one memset; NVTX: push/pop "outer",
//                  push/pop "phase_a" around stream A's launches, start/end "async_b" around
//                  stream B's, a mark "mark1"
//   copy BYTES     one k3_copy kernel reading and writing BYTES each (after one warm-up of k_gamma)
//   launches N     N launches of an empty kernel on one stream
//   timed N US     N launches of a kernel spinning ~US microseconds; prints the wall time
//   sigterm N      N launches, synchronize, then SIGTERM to itself
//   reset N        N launches, cudaDeviceReset, then _exit(0): no atexit handlers run
//   busy           subscribes to CUPTI itself before CUDA starts (as another profiler would)
// Exit 77 when there is no GPU.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef K3_CAPTURE_APP_BUSY
#include <cupti.h>

static void CUPTIAPI ignore_callback(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *)
{
}
#endif

#define CK(call)                                                                              \
	do {                                                                                  \
		cudaError_t e_ = (call);                                                      \
		if (e_ != cudaSuccess) {                                                      \
			fprintf(stderr, "capture_app: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

enum { BLOCK_THREADS = 256 };

extern "C" __global__ void k_alpha(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 2.0f + 1.0f;
}

extern "C" __global__ void k_beta(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f - 1.0f;
}

extern "C" __global__ void k_gamma(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 3.0f;
}

// 16-byte loads and stores, grid-stride: reads n4*16 bytes and writes as many.
extern "C" __global__ void k3_copy(const float4 *__restrict__ src, float4 *__restrict__ dst,
				   size_t n4)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

extern "C" __global__ void k_empty(void)
{
}

extern "C" __global__ void k_spin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int basic(void)
{
	const int n = 1 << 18; // 1 MiB of floats
	float *h = (float *)malloc(n * sizeof(float));
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 97);
	float *a, *b;
	cudaStream_t sa, sb;
	CK(cudaMalloc(&a, n * sizeof(float)));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
	int grid = (n + BLOCK_THREADS - 1) / BLOCK_THREADS;

	nvtxRangePushA("outer");
	CK(cudaMemcpy(a, h, n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemset(b, 0, n * sizeof(float)));
	nvtxMarkA("mark1");
	nvtxRangePushA("phase_a");
	for (int i = 0; i < 3; i++)
		k_alpha<<<grid, BLOCK_THREADS, 0, sa>>>(a, n);
	CK(cudaGetLastError());
	nvtxRangePop();
	nvtxRangeId_t r = nvtxRangeStartA("async_b");
	for (int i = 0; i < 2; i++)
		k_beta<<<grid, BLOCK_THREADS, 0, sb>>>(b, n);
	CK(cudaGetLastError());
	nvtxRangeEnd(r);
	CK(cudaDeviceSynchronize());
	k_gamma<<<grid, BLOCK_THREADS>>>(a, n);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h, a, n * sizeof(float), cudaMemcpyDeviceToHost));
	nvtxRangePop();
	// (x*2+1)*2+1)*2+1 + 3 = 8x + 10
	for (int i = 0; i < n; i++)
		if (h[i] != 8.0f * (float)(i % 97) + 10.0f) {
			fprintf(stderr, "capture_app: wrong result at %d: %g\n", i, h[i]);
			return 1;
		}
	CK(cudaStreamDestroy(sa));
	CK(cudaStreamDestroy(sb));
	CK(cudaFree(a));
	CK(cudaFree(b));
	free(h);
	return 0;
}

static int copy(size_t bytes)
{
	size_t n4 = bytes / sizeof(float4);
	float4 *src, *dst;
	CK(cudaMalloc(&src, n4 * sizeof(float4)));
	CK(cudaMalloc(&dst, n4 * sizeof(float4)));
	CK(cudaMemset(src, 0x3f, n4 * sizeof(float4)));
	CK(cudaMemset(dst, 0, n4 * sizeof(float4)));
	CK(cudaDeviceSynchronize());
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	k3_copy<<<sms * 8, BLOCK_THREADS>>>(src, dst, n4);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaFree(src));
	CK(cudaFree(dst));
	return 0;
}

static int launches(long n)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (long i = 0; i < n; i++)
		k_empty<<<1, 32, 0, s>>>();
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	return 0;
}

static int timed(long n, double us)
{
	int clock_khz = 0;
	CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
	long long cycles = (long long)(us * clock_khz / 1000.0);
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < 1000; i++) // warm-up: module load, first launches
		k_spin<<<1, 32, 0, s>>>(cycles);
	CK(cudaStreamSynchronize(s));
	double t0 = now_s();
	for (long i = 0; i < n; i++)
		k_spin<<<1, 32, 0, s>>>(cycles);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	double t1 = now_s();
	printf("timed launches=%ld kernel_us=%g wall_s=%.6f per_launch_us=%.4f\n", n, us, t1 - t0,
	       (t1 - t0) / n * 1e6);
	CK(cudaStreamDestroy(s));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
#ifdef K3_CAPTURE_APP_BUSY
	if (strcmp(mode, "busy") == 0) {
		CUpti_SubscriberHandle sub;
		if (cuptiSubscribe(&sub, ignore_callback, NULL) != CUPTI_SUCCESS)
			fprintf(stderr, "capture_app: could not subscribe first\n");
	}
#endif
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
		fprintf(stderr, "capture_app: no CUDA device\n");
		return 77;
	}
	if (strcmp(mode, "basic") == 0 || strcmp(mode, "busy") == 0)
		return basic();
	if (strcmp(mode, "copy") == 0 && argc > 2)
		return copy(strtoull(argv[2], NULL, 10));
	if (strcmp(mode, "launches") == 0 && argc > 2)
		return launches(atol(argv[2]));
	if (strcmp(mode, "timed") == 0 && argc > 3)
		return timed(atol(argv[2]), atof(argv[3]));
	if (strcmp(mode, "sigterm") == 0 && argc > 2) {
		launches(atol(argv[2]));
		raise(SIGTERM);
		return 3; // not reached
	}
	if (strcmp(mode, "reset") == 0 && argc > 2) {
		launches(atol(argv[2]));
		CK(cudaDeviceReset());
		_exit(0);
	}
	fprintf(stderr, "capture_app: unknown mode '%s'\n", mode);
	return 2;
}
