/* SPDX-License-Identifier: MIT */
/*
 * clock-probe: the SM clock read inside the GPU, against the one NVML reports, under the 700 W
 * limit (2026-12-03, lead). The power model's draw and clock fits read NVML's SM clock; under the
 * cap a back-to-back cuBLAS GEMM ran at 90 % of its uncapped rate while NVML read a 25 % lower
 * clock (bench/results/power-stream-h200-2026-12-03/gemm/): either NVML's clock is not the one the
 * kernels ran at, or a compute-bound kernel's time is not linear in 1 / clock. This settles which.
 *
 * Segments, each SECS seconds (idle 0.6 s between): `ffma` (a kernel of dependent FMA chains on
 * every SM: its time is cycles / clock by construction, so its rate checks the probe), `gemm`
 * (cuBLAS BF16 8192^3, back to back), `gemm_sN` (the same with a sleep kernel of N us after each
 * GEMM: duty cycles between back to back and ~60 %, so the limiter settles at clocks between its
 * floor and boost), `gemm` again. Work runs in batches of ~15 ms timed by CUDA events; after each batch, in the
 * same stream, a one-thread probe kernel spins 100 us of %globaltimer and counts %clock64 over it:
 * the SM clock right after the batch (the limiter's clock moves over ~100 ms, so it is the clock the
 * batch ended at). The GPU waits for nothing else: the host syncs each batch once its probe is
 * queued (one batch in flight ahead).
 *
 * --step: instead, the limiter's step response at ~1 ms resolution (batches of one GEMM, four FFMA
 * launches or 1 ms of sleep, each followed by a 50 us probe): capped by GEMMs, then an FFMA load
 * (~400 W at boost, under the limit), GEMMs, idle, GEMMs from idle.
 * Writes OUT/batches.csv: segment, batch, host unix time (s) at the batch's end, batch ms, work
 * (FLOPs), TFLOP/s, probe MHz. Run nvidia-smi beside it for NVML's view (clock-probe.sh).
 * --pulse: a pattern for checking a limiter fitted on --step (capped GEMMs broken by light loads of
 * 5-160 ms, GEMM bursts of 5-80 ms after idle, duty cycles of a few ms; ~12 s).
 * --mild: loads over the limit by a little, each from idle (2026-12-06): GEMMs with a sleep of
 * 1200 .. 500 us after each (`gemm_sN`, N in us: at the H100's limit at ~1000 us, +20 % at boost at
 * 500), SECS seconds each after 1 s idle, in ~15 ms batches: how fast the limiter trims a mild excess
 * (bench/results/power-h100-2026-12-06/limiter-mild/).
 * --mix: the same from idle with HBM copies in the place of the sleeps: GEMMs each followed by N
 * device-to-device copies of 512 MiB (`gemm_cN`, N = 2 .. 8), SECS seconds each after 1 s idle: does
 * the limiter trim a compute and memory mix (the K3 slice's decode steps: memory-bound kernels between
 * the expert kernels, which ran over the limit for ~1 s) as fast as a duty cycle of the same draw?
 * --mix3: is --mix's delayed cut a property of the load? `gemm_c3` (the mix cut at ~1 s on the first
 * card) three times after 1 s idle, once after 0.2 s idle (the limiter's state from the run before),
 * then `gemm_c2` and `gemm_c4` after 1 s idle (2026-12-06, evening).
 * --heat: does the draw of a fixed load grow with the chip's temperature (leakage), and the clock
 * the limiter holds fall with it? (2026-12-07: the power model has no temperature, and its error on
 * the draw of ops run back to back fell as they ran hotter, bench/results/power-h100-2026-12-06/
 * README.md "Left".) From a cool GPU: an FFMA load at boost (`ffma_cold`, under the limit) and
 * GEMMs at the limit (`gemm_cold`, SECS seconds after 1 s idle); then `heat`: eight stretches of
 * 6 s of GEMMs, each followed by 0.8 s of the FFMA load (`ffma_hot`, at boost again: its draw at a
 * higher temperature, same clock and work); then GEMMs after 1 s idle (`gemm_hot`) and 4 s idle
 * (the idle draw while it cools). ~70 s.
 * usage: clock-probe OUT_DIR [SECS [--step|--pulse|--mild|--mix|--mix3|--heat]]
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <vector>

#define CK(x)                                                                                          \
	do {                                                                                           \
		cudaError_t e_ = (x);                                                                  \
		if (e_ != cudaSuccess) {                                                               \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
			exit(1);                                                                       \
		}                                                                                      \
	} while (0)

static __device__ __forceinline__ uint64_t gtimer()
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* One thread: clock64 cycles over ns nanoseconds of globaltimer, into out[2 slot], out[2 slot + 1]. */
__global__ void probe_kernel(unsigned long long *out, int slot, unsigned ns)
{
	uint64_t t0 = gtimer(), t1;
	long long c0 = clock64(), c1;
	do {
		t1 = gtimer();
		c1 = clock64();
	} while (t1 - t0 < ns);
	out[2 * slot] = (unsigned long long)(c1 - c0);
	out[2 * slot + 1] = t1 - t0;
}

/* Sleep ns nanoseconds on one thread (the GPU otherwise idle). */
__global__ void sleep_kernel(unsigned ns)
{
	uint64_t t0 = gtimer();
	while (gtimer() - t0 < ns)
		__nanosleep(1000);
}

enum { FFMA_CHAINS = 8, FFMA_ITERS = 4096, FFMA_THREADS = 256 };

/* FFMA_CHAINS dependent chains a thread, FFMA_ITERS steps each: 2 FLOPs a step. */
__global__ void __launch_bounds__(FFMA_THREADS) ffma_kernel(float *sink, float a, float b)
{
	float x[FFMA_CHAINS];
#pragma unroll
	for (int i = 0; i < FFMA_CHAINS; i++)
		x[i] = threadIdx.x * 1e-3f + i;
	for (int it = 0; it < FFMA_ITERS; it++) {
#pragma unroll
		for (int i = 0; i < FFMA_CHAINS; i++)
			x[i] = fmaf(x[i], a, b);
	}
	float s = 0;
#pragma unroll
	for (int i = 0; i < FFMA_CHAINS; i++)
		s += x[i];
	if (s == 12345.0f)
		sink[blockIdx.x] = s;
}

static double unix_s()
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct batch_rec {
	const char *seg;
	int batch;
	double host_s, ms, flops;
	int slot;
};

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: clock-probe OUT_DIR [SECS [--step|--pulse|--mild|--mix|--mix3|--heat]]\n");
		return argc < 2 ? 2 : 0;
	}
	if (argc > 4 || (argc > 3 && strcmp(argv[3], "--step") && strcmp(argv[3], "--pulse") && strcmp(argv[3], "--mild") &&
			 strcmp(argv[3], "--mix") && strcmp(argv[3], "--mix3") && strcmp(argv[3], "--heat"))) {
		fprintf(stderr, "clock-probe: unknown mode '%s' (--step, --pulse, --mild, --mix, --mix3 or --heat)\n",
			argv[argc > 4 ? 4 : 3]);
		return 2;
	}
	const char *out = argv[1];
	double secs = argc > 2 ? atof(argv[2]) : 3.0;
	if (!(secs > 0 && secs < 60)) {
		fprintf(stderr, "clock-probe: SECS in (0, 60)\n");
		return 2;
	}
	/* written to a temporary beside it, renamed into place at the end: an interrupted run leaves
	 * the old batches.csv */
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/batches.csv", out);
	snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "clock-probe: %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	const int d = 8192;
	__nv_bfloat16 *A, *B, *C;
	CK(cudaMalloc(&A, (size_t)d * d * 2));
	CK(cudaMalloc(&B, (size_t)d * d * 2));
	CK(cudaMalloc(&C, (size_t)d * d * 2));
	{
		std::vector<__nv_bfloat16> h((size_t)d * d);
		unsigned s = 12345;
		for (auto &x : h) {
			s = s * 1664525u + 1013904223u;
			x = __float2bfloat16(((s >> 8) & 0xffff) / 65536.0f - 0.5f);
		}
		CK(cudaMemcpy(A, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(B, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
	}
	float *sink;
	CK(cudaMalloc(&sink, 1 << 20));
	const int max_slots = 1 << 16;
	unsigned long long *probe;
	CK(cudaMalloc(&probe, (size_t)max_slots * 2 * sizeof *probe));
	cudaStream_t st;
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	cublasHandle_t h;
	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, st) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "clock-probe: cublas set-up failed\n");
		return 1;
	}
	const float alpha = 1, beta = 0;
	auto gemm = [&]() {
		if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, d, d, d, &alpha, A, CUDA_R_16BF, d, B, CUDA_R_16BF, d, &beta,
				 C, CUDA_R_16BF, d, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
			fprintf(stderr, "clock-probe: cublasGemmEx failed\n");
			exit(1);
		}
	};
	const int ffma_blocks = sms * 8;
	const double ffma_flops = 2.0 * FFMA_CHAINS * FFMA_ITERS * FFMA_THREADS * ffma_blocks;
	const double gemm_flops = 2.0 * d * d * d;
	auto ffma = [&]() { ffma_kernel<<<ffma_blocks, FFMA_THREADS, 0, st>>>(sink, 0.999f, 1e-3f); };
	/* warm up, and the per-call times at rest (to size batches of ~15 ms) */
	cudaEvent_t e0[2], e1[2];
	for (int i = 0; i < 2; i++) {
		CK(cudaEventCreate(&e0[i]));
		CK(cudaEventCreate(&e1[i]));
	}
	for (int i = 0; i < 5; i++) {
		gemm();
		ffma();
	}
	CK(cudaStreamSynchronize(st));
	float ms_g = 0, ms_f = 0;
	CK(cudaEventRecord(e0[0], st));
	for (int i = 0; i < 5; i++)
		gemm();
	CK(cudaEventRecord(e1[0], st));
	for (int i = 0; i < 5; i++)
		ffma();
	CK(cudaEventRecord(e1[1], st));
	CK(cudaStreamSynchronize(st));
	CK(cudaEventElapsedTime(&ms_g, e0[0], e1[0]));
	CK(cudaEventElapsedTime(&ms_f, e1[0], e1[1]));
	ms_g /= 5;
	ms_f /= 5;
	const int n_gemm = ms_g > 0 ? (int)(15 / ms_g) + 1 : 10, n_ffma = ms_f > 0 ? (int)(15 / ms_f) + 1 : 10;
	fprintf(stderr, "clock-probe: %d SMs; a gemm %.3f ms (%.0f TFLOP/s), an ffma launch %.3f ms (%.1f TFLOP/s); "
			"batches of %d / %d\n",
		sms, ms_g, gemm_flops / ms_g * 1e-9, ms_f, ffma_flops / ms_f * 1e-9, n_gemm, n_ffma);
	std::vector<batch_rec> recs;
	int slot = 0;
	struct seg {
		const char *name;
		int kind;       /* 0 idle, 1 ffma, 2 gemm */
		unsigned sleep_ns; /* after each call */
		double s;
		bool fine = false; /* ~1 ms batches: the limiter's step response */
		int copies = 0;    /* after each GEMM: this many 512 MiB device-to-device copies (--mix) */
	};
	static const seg coarse[] = {{"idle", 0, 0, 1.0},         {"ffma", 1, 0, secs},          {"idle", 0, 0, 0.6},
		    {"gemm", 2, 0, secs},         {"idle", 0, 0, 0.6},           {"gemm_s100", 2, 100000, secs},
		    {"idle", 0, 0, 0.6},          {"gemm_s250", 2, 250000, secs}, {"idle", 0, 0, 0.6},
		    {"gemm_s500", 2, 500000, secs}, {"idle", 0, 0, 0.6},         {"gemm_s1000", 2, 1000000, secs},
		    {"idle", 0, 0, 0.6},          {"gemm", 2, 0, secs},          {"idle", 0, 0, 1.0}};
	/* --step: the limiter's step response at ~1 ms resolution: capped by GEMMs, then an FFMA load
	 * (~400 W at boost: headroom under the limit), then GEMMs again, idle, GEMMs from idle */
	static const seg step[] = {{"idle", 0, 0, 1.0},          {"gemm", 2, 0, 2.0},
				   {"ffma_fine", 1, 0, 1.0, true}, {"gemm", 2, 0, 2.0},
				   {"idle_fine", 0, 0, 0.6, true}, {"gemm_fine", 2, 0, 1.0, true},
				   {"idle_fine", 0, 0, 0.6, true}};
	const bool step_mode = argc > 3 && !strcmp(argv[3], "--step");
	const bool pulse_mode = argc > 3 && !strcmp(argv[3], "--pulse");
	/* --pulse: a pattern the limiter's fit (on --step) never saw, at ~1 ms: capped GEMMs broken by
	 * a light load (FFMA or idle) of 5-160 ms, then GEMM bursts of 5-80 ms after idle, then short
	 * duty cycles (GEMM and idle of a few ms each, repeated for 0.6 s) */
	std::vector<seg> pulse;
	if (pulse_mode) {
		pulse.push_back({"idle", 0, 0, 0.5});
		pulse.push_back({"gemm", 2, 0, 1.0});
		static const double light_ms[] = {5, 10, 20, 40, 80, 160};
		for (int kind = 1; kind >= 0; kind--)
			for (double ms : light_ms) {
				pulse.push_back({kind ? "ffma_fine" : "idle_fine", kind, 0, ms * 1e-3, true});
				pulse.push_back({"gemm_fine", 2, 0, 0.3, true});
			}
		static const double burst_ms[] = {5, 10, 20, 40, 80};
		for (double ms : burst_ms) {
			pulse.push_back({"idle_fine", 0, 0, 0.4, true});
			pulse.push_back({"gemm_fine", 2, 0, ms * 1e-3, true});
		}
		static const double duty[][2] = {{3, 3}, {6, 3}, {3, 6}, {10, 10}};
		for (const auto &d : duty) {
			pulse.push_back({"idle_fine", 0, 0, 0.4, true});
			for (double t = 0; t < 0.6; t += (d[0] + d[1]) * 1e-3) {
				pulse.push_back({"gemm_fine", 2, 0, d[0] * 1e-3, true});
				pulse.push_back({"idle_fine", 0, 0, d[1] * 1e-3, true});
			}
		}
		pulse.push_back({"idle_fine", 0, 0, 0.4, true});
	}
	const bool mild_mode = argc > 3 && !strcmp(argv[3], "--mild");
	static const char *const mild_names[] = {"gemm_s1200", "gemm_s1000", "gemm_s900", "gemm_s800",
						 "gemm_s700",  "gemm_s600",  "gemm_s500"};
	static const unsigned mild_us[] = {1200, 1000, 900, 800, 700, 600, 500};
	if (mild_mode)
		for (size_t i = 0; i < sizeof mild_us / sizeof *mild_us; i++) {
			pulse.push_back({"idle", 0, 0, 1.0});
			pulse.push_back({mild_names[i], 2, mild_us[i] * 1000u, secs});
		}
	if (mild_mode)
		pulse.push_back({"idle", 0, 0, 1.0});
	const bool mix3_mode = argc > 3 && !strcmp(argv[3], "--mix3");
	const bool mix_mode = mix3_mode || (argc > 3 && !strcmp(argv[3], "--mix"));
	static const char *const mix_names[] = {"gemm_c2", "gemm_c3", "gemm_c4", "gemm_c6", "gemm_c8"};
	static const int mix_copies[] = {2, 3, 4, 6, 8};
	/* --mix3: indices into mix_copies and the idle before each */
	static const int mix3_load[] = {1, 1, 1, 1, 0, 2};
	static const double mix3_idle_s[] = {1.0, 1.0, 1.0, 0.2, 1.0, 1.0};
	const size_t copy_bytes = (size_t)512 << 20;
	void *copy_src = nullptr, *copy_dst = nullptr;
	if (mix_mode) {
		CK(cudaMalloc(&copy_src, copy_bytes));
		CK(cudaMalloc(&copy_dst, copy_bytes));
		CK(cudaMemset(copy_src, 1, copy_bytes));
		const size_t n = mix3_mode ? sizeof mix3_load / sizeof *mix3_load : sizeof mix_copies / sizeof *mix_copies;
		for (size_t i = 0; i < n; i++) {
			const int l = mix3_mode ? mix3_load[i] : (int)i;
			pulse.push_back({"idle", 0, 0, mix3_mode ? mix3_idle_s[i] : 1.0});
			pulse.push_back({mix_names[l], 2, 0, secs, false, mix_copies[l]});
		}
		pulse.push_back({"idle", 0, 0, 1.0});
	}
	const bool heat_mode = argc > 3 && !strcmp(argv[3], "--heat");
	if (heat_mode) {
		pulse.push_back({"idle", 0, 0, 2.0});
		pulse.push_back({"ffma_cold", 1, 0, 1.0});
		pulse.push_back({"idle", 0, 0, 1.0});
		pulse.push_back({"gemm_cold", 2, 0, secs});
		for (int i = 0; i < 8; i++) {
			pulse.push_back({"heat", 2, 0, 6.0});
			pulse.push_back({"ffma_hot", 1, 0, 0.8});
		}
		pulse.push_back({"idle", 0, 0, 1.0});
		pulse.push_back({"gemm_hot", 2, 0, secs});
		pulse.push_back({"idle", 0, 0, 4.0});
	}
	const bool built = pulse_mode || mild_mode || mix_mode || heat_mode;
	const seg *segs = step_mode ? step : built ? pulse.data() : coarse;
	const size_t n_segs = step_mode ? sizeof step / sizeof *step : built ? pulse.size() : sizeof coarse / sizeof *coarse;
	for (size_t si = 0; si < n_segs; si++) {
		const seg &sg = segs[si];
		double t_end = unix_s() + sg.s;
		int b = 0, cur = 0;
		bool pending = false;
		batch_rec prev{};
		for (;;) {
			bool more = unix_s() < t_end && slot < max_slots - 1;
			if (more) {
				int n = sg.kind == 2 ? (sg.fine ? 1 : n_gemm) : sg.kind == 1 ? (sg.fine ? 4 : n_ffma) : 0;
				CK(cudaEventRecord(e0[cur], st));
				if (sg.kind == 0)
					sleep_kernel<<<1, 1, 0, st>>>(sg.fine ? 1000000u : 20000000u); /* 1 or 20 ms idle */
				for (int i = 0; i < n; i++) {
					if (sg.kind == 2)
						gemm();
					else
						ffma();
					if (sg.sleep_ns)
						sleep_kernel<<<1, 1, 0, st>>>(sg.sleep_ns);
					for (int c = 0; c < sg.copies; c++)
						CK(cudaMemcpyAsync(copy_dst, copy_src, copy_bytes, cudaMemcpyDeviceToDevice, st));
				}
				CK(cudaEventRecord(e1[cur], st));
				probe_kernel<<<1, 1, 0, st>>>(probe, slot, sg.fine ? 50000u : 100000u);
				CK(cudaGetLastError());
			}
			if (pending) { /* the batch before: done once its stop event is */
				CK(cudaEventSynchronize(e1[cur ^ 1]));
				prev.host_s = unix_s();
				float ms = 0;
				CK(cudaEventElapsedTime(&ms, e0[cur ^ 1], e1[cur ^ 1]));
				prev.ms = ms;
				recs.push_back(prev);
				pending = false;
			}
			if (!more)
				break;
			int n = sg.kind == 2 ? (sg.fine ? 1 : n_gemm) : sg.kind == 1 ? (sg.fine ? 4 : n_ffma) : 0;
			prev = batch_rec{sg.name, b++, 0, 0, (sg.kind == 2 ? gemm_flops : ffma_flops) * n * (sg.kind != 0), slot++};
			pending = true;
			cur ^= 1;
		}
		CK(cudaStreamSynchronize(st));
	}
	std::vector<unsigned long long> hp((size_t)slot * 2);
	CK(cudaMemcpy(hp.data(), probe, hp.size() * sizeof hp[0], cudaMemcpyDeviceToHost));
	fprintf(f, "segment,batch,host_unix_s,batch_ms,flops,tflops,probe_mhz\n");
	for (const batch_rec &r : recs) {
		double mhz = hp[2 * r.slot + 1] ? (double)hp[2 * r.slot] / (double)hp[2 * r.slot + 1] * 1e3 : 0;
		fprintf(f, "%s,%d,%.6f,%.4f,%.6g,%.2f,%.1f\n", r.seg, r.batch, r.host_s, r.ms, r.flops,
			r.ms > 0 ? r.flops / r.ms * 1e-9 : 0, mhz);
	}
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "clock-probe: %s: %s\n", path, strerror(errno));
		remove(tmp);
		return 1;
	}
	fprintf(stderr, "clock-probe: %zu batches into %s\n", recs.size(), path);
	return 0;
}
