/* SPDX-License-Identifier: MIT */
/*
 * k3-bench: timings of the K3 layer kernels outside KDA (MLA decode and materialized prefill, the
 * LatentMoE GEMMs and pieces, Block AttnRes, DSA decode) on the GPU at
 * hand, written as CSV.
 *
 *   k3-bench -o results.csv [--quick] [--reps N]
 *            [--only copy|mla|mla_decode|mla_prefill|moe|moe_prefill|moe_decode|route|gemm|gemv|attnres|conv|dsa|wgmma_peak|quant|mla_uv]
 *            [--require-wgmma] [--warm-l2] [--expert-act bf16|e4m3]
 *
 * --expert-act e4m3 (default bf16: the rows as before, nothing added): the MXFP4 expert rows of
 * the full run, --only moe and --only moe_prefill (decode and prefill sizes) are each followed by the same GEMM as
 * moe_layer_forward() runs it with expert_act K3_A_E4M3_ROW: the FP8 wgmma kernel (its decode
 * rows also back to back; --only moe_decode adds the opt-in E4M3 gemv) on E4M3
 * activations with a scale a row (quantized before the timing), w13 writing its outputs as
 * E4M3 (out_e4m3), variants `mxfp4f8_w13` / `mxfp4f8_w2`, shape ending " a=e4m3", NVTX
 * "k3sim op=grouped_gemm ... dtype=fp8 w_dtype=mxfp4" (the op the layer announces); each w13
 * row by the layer's quantizer of the latent rows (op `e4m3_quant`, variant `latent`, NVTX
 * "k3sim op=quant tokens=<tokens> width=3584 dtype=fp8 group=0"). Needs the wgmma kernel.
 *
 * --only moe_decode: the MXFP4 experts at decode sizes with BF16 activations, the layer's E4M3 form
 * (the FP8 wgmma kernel) and that form through the opt-in E4M3 gemv, back to back
 * (bench_moe_decode()).
 *
 * --only mla_uv (also in the full run and --only gemm): MLA decode's per-head value up-projection,
 * the grouped BF16-weight GEMM of 96 heads the slice runs (bench_mla_uv()).
 *
 * --only quant: the layer's E4M3 quantizer of the latent rows at T = 1 .. 16K, its default kernel,
 * the one-pass and the two-pass one back to back (bench_quant()).
 *
 * --only wgmma_peak: the tensor pipe's rate at the expert GEMMs' MMA shapes with no copies
 * (bench/k3_wgmma_peak.h: wgmma m64nNk16 from shared memory, N 64 .. 256, 1-3 warpgroups, 1-2
 * m64 blocks each, A from shared memory or registers, the k loop's rhythm), one table on stdout.
 *
 * --only moe_prefill: the grouped expert GEMMs at prefill sizes (T = 16K, 4K; BF16 and MXFP4
 * weights; --quick: T = 16K) alone, each row twice back to back: the default wgmma kernel, then the same launch
 * with K3_GEMM_WG_CLUSTER=1 (no clusters; shape ending "wg_cluster=1", NVTX "k3-bench
 * wg-nocluster op=..."), each beside cuBLASLt; K3_BENCH_WG_KERNELS=q,epi,wide,... instead: one
 * row per named kernel (K3_GEMM_WG_KERNEL), back to back (shape ending "wg_kernel=<name>", NVTX
 * "k3-bench wg-<name> op=..."; "wide2f8": the FP8 kernel, E4M3 activations quantized before the
 * timing, the quantizer's time printed (its default form, 2eo since round 05o); "wide2f8s2" /
 * "wide2f8s4": it with K3_GEMM_F8_SETS=2 (the default before 05o) / 4,
 * "wide2f8m2" / "wide2f8m4" / "wide2f8m4k" with m2 / m4 / m4k: A through shared memory;
 * "wide2f8s2p" / "wide2f8s2r" / "wide2f8s2pr" / "wide2f8s2t" / "wide2f8s2prt" with 2p / 2r /
 * 2pr / 2t / 2prt: compact pair stages, early odd releases, both, scale tables by the warp, all;
 * "wide2f8s2l" / "wide2f8s2lr" / "wide2f8s2w" / "wide2f8s2lw" with 2l / 2lr / 2w / 2lw: a k
 * block's words by one 16-byte load, and with 2r, GLU's outputs two columns a 4-byte store, 2l and 2w;
 * "wide2f8s2e" / "wide2f8s2e4" / "wide2f8s2eo" with 2e / 2e4 / 2eo: the epilogue in blocks of 16 /
 * 32 tokens, 2e with GLU's outputs through shared memory);
 * K3_BENCH_MOE_T=<tokens>: that T alone.
 *
 * --only gemv: the MXFP4 expert gemv at decode with BF16 activations: the default kernel
 * (gemv_f16_kernel on the FP16-pair layout; fused up to 2 rows a group: each CTA converts its
 * activation rows; by programmatic dependent launch where its grid is short, B = 1) beside the persistent gemv_f16p_kernel (K3_GEMV_F16_PERSIST=1: `f16pers_*`,
 * opt-in), the two-kernel path (K3_GEMV_F16_FUSE=0: `f16twok_*`, `k3-bench
 * gemv-f16twok op=...`; the default before 2026-12-02b), the fused kernel at B = 256
 * (K3_GEMV_F16_FUSE=1: `f16fused_*`) and gemv_lean_kernel (K3_GEMV_FP4=lean: `mxfp4lean_*`) (bench_gemv();
 * K3_BENCH_GEMV_GLU=1 or 0: w13 or w2 alone); K3_BENCH_GEMV_ALL=1 adds the k-slice, tile-count,
 * no-PDL and no-prefetch variants, the older kernels and the MXFP8-activation gemv (the
 * FP8 path: `k3-bench mxfp8 op=...` ranges, not model ops) with the MXFP8 quantizer;
 * K3_BENCH_GEMV_BULK=1 the opt-in bulk-copy gemv (K3_GEMV_FP4=bulk: `mxfp4b_*` rows,
 * `k3-bench gemv-bulk op=...`; K3_GEMV8_PIPE=bulk: `mxfp4a8b_*`, `k3-bench mxfp8-bulk op=...`).
 * The fused kernel's launch knobs at B <= 64 (`f16fpdl*`, `f16w8pl0*`, `f16hpf*`, `f16prow*`,
 * `f16w4r1_*`, `f16af*`: bench_gemv()). Each decode row (--only gemv, moe) is also timed back to back over its rotated
 * routings beside a copy of the same bytes timed the same way (CSV rows `b2b`, `copy_b2b`; the
 * line "weight bytes, back to back"); K3_BENCH_GEMV_TRACE=path: the fused kernel's per-CTA trace
 * at B = 1 (a summary line; the CTAs appended to path).
 *
 * For each point:
 *  - `time_us` (p10, p90): the median of CUDA-event timings of single
 *    launches after warm-up, each launch inside an NVTX range whose text is
 *    the op in `k3sim op` syntax, so that `k3sim trace capture -- k3-bench ...`
 *    maps every kernel to its model op (a composite op, e.g. dsa_decode, is
 *    one range around its kernels);
 *  - `steady_us`: back-to-back launches averaged, through a CUDA graph for
 *    decode-size launches (`graph`) or a plain stream loop (`loop`);
 *  - operands rotate over enough sets that a launch never finds its inputs
 *    in L2 (caches, weights, activations), unless a set alone is far
 *    larger than L2 (dense GEMM weights over 16 GiB of sets, so that their
 *    pages are cold as in a step); and each timed single launch follows a read of 4x L2's
 *    bytes of another buffer (a cold L2, as in a serving step; --warm-l2:
 *    without, the figures before 2026-12-01 evening);
 *  - bytes (HBM bytes the op must move: cache, weights, activations) and
 *    FLOPs, GB/s and TFLOP/s, and GB/s over the copy bandwidth measured
 *    first; GEMMs of prefill size beside cuBLASLt at equal FLOPs;
 *  - copies from 4 KiB to 1 GiB (the full run and --only copy): the memory
 *    class from a kernel's fixed cost up, for a calibration on this bench;
 *  - routing, the combine, AttnRes and the ShortConv (ops of their own kind:
 *    `k3sim op attnres|route|combine|short_conv`) at tokens 1 to 16K
 *    (TOKEN_SIZES: k3sim calibrate trains on the powers of 4 and holds the
 *    other sizes out);
 *  - GEMM rows name the kernel k3_gemm() launches for them (gemv, tiled-mma,
 *    tiled-wgmma); where the build has the wgmma kernel (sm_90a, compute
 *    capability 9.0) prefill GEMMs run it by default and the mma.sync kernel
 *    is timed beside it at prefill size under its own range name
 *    (`k3-bench tiled-mma op=...`: a reference range, which k3sim's matcher
 *    skips, as `k3sim ref ...`; before 2026-12-01y a kernel-name rule took its
 *    kernels for the op, mixing mma.sync samples into the wgmma op). The first
 *    line says which tiled kernels the build has; --require-wgmma exits 2
 *    when the wgmma kernel is not there (a build configured before the
 *    sm_90a default keeps gpu_arch=sm_90: the 2026-12-01b call ran so).
 * Inputs are random, never zeros (fill kernels seeded per buffer).
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "common/bench_pace.cuh"
#include "common/bench_sustain.cuh"
#include "common/k3_upload.h"

#include "attnres/attnres.h"
#include "bench/k3_wgmma_peak.h"
#include "dsa/dsa_index.h"
#include "layer/short_conv.h"
#include "mla/mla_decode.h"
#include "mla/mla_prefill.h"
#include "moe/k3_gemm.h"
#include "moe/k3_gemm_internal.cuh" /* the fused gemv's per-CTA trace (gemv_trace_arm) */
#include "moe/moe_combine.h"
#include "moe/moe_route.h"

namespace {

constexpr int FILL_THREADS = 256;
constexpr size_t ROTATE_BYTES = (size_t)512 << 20; /* > 10x L2 */
constexpr size_t POOL_CAP = (size_t)24 << 30;      /* rotation pools stay below this */
constexpr size_t WPOOL_BYTES = (size_t)16 << 30;   /* dense GEMM weights: pages cold too */
constexpr size_t CUBLAS_WS = (size_t)64 << 20;

#define CK(call)                                                                                  \
	do {                                                                                      \
		cudaError_t e_ = (call);                                                          \
		if (e_ != cudaSuccess) {                                                          \
			fprintf(stderr, "k3-bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,  \
				cudaGetErrorString(e_));                                          \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

#define KOK(call)                                                                                 \
	do {                                                                                      \
		int r_ = (call);                                                                  \
		if (r_) {                                                                         \
			fprintf(stderr, "k3-bench: %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__,  \
				#call, r_, cudaGetErrorString(cudaGetLastError()));               \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

#define LTOK(call)                                                                                \
	do {                                                                                      \
		cublasStatus_t s_ = (call);                                                       \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                \
			fprintf(stderr, "k3-bench: %s:%d: %s: cublas status %d\n", __FILE__, __LINE__, \
				#call, (int)s_);                                                  \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

/* ---- random fills ------------------------------------------------------------ */

__device__ uint32_t hash32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (uint32_t)x;
}

__device__ float unit(uint64_t seed, size_t i)
{
	return (hash32(seed * 0x9e3779b97f4a7c15ull + i) >> 8) * (1.0f / 16777216.0f);
}

__global__ void fill_bf16_kernel(uint16_t *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		const float f = lo + (hi - lo) * unit(seed, i);
		const uint32_t b = __float_as_uint(f);
		p[i] = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
	}
}

__global__ void fill_f32_kernel(float *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = lo + (hi - lo) * unit(seed, i);
}

/* Bytes (hash & and_mask) | or_mask: E4M3 without NaN with and_mask 0xf7, E8M0 scales in a band. */
__global__ void fill_bytes_kernel(uint8_t *p, size_t n, uint64_t seed, uint32_t and_mask, uint32_t or_mask, uint32_t mod)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint32_t v = hash32(seed * 0x9e3779b97f4a7c15ull + i);
		v = mod ? (v % mod) : (v & and_mask);
		p[i] = (uint8_t)(v | or_mask);
	}
}

/* FlashMLA FP8 tokens: 512 E4M3 (no NaN), 4 FP32 scales in [1e-3, 1e-2], 64 BF16. */
__global__ void fill_mla_fp8_kernel(uint8_t *p, size_t tokens, uint64_t seed)
{
	const size_t n = tokens * MLA_FP8_TOKEN_BYTES;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		const size_t off = i % MLA_FP8_TOKEN_BYTES;
		const uint32_t h = hash32(seed * 0x9e3779b97f4a7c15ull + i);
		if (off < MLA_LATENT) {
			p[i] = (uint8_t)(h & 0xf7u);
		} else if (off < MLA_FP8_ROPE_OFFSET) {
			if ((off - MLA_LATENT) % 4 == 0) {
				const float s = 1e-3f + 9e-3f * unit(seed, i);
				memcpy(p + i, &s, 4);
			}
		} else if ((off - MLA_FP8_ROPE_OFFSET) % 2 == 0) {
			const uint16_t b = (uint16_t)(0x3c00u | (h & 0x80ffu)); /* |x| in [2^-7, 2^-6) */
			memcpy(p + i, &b, 2);
		}
	}
}

/* DSA key pages: 64 x 128 E4M3 (no NaN), then 64 FP32 scales in [1e-3, 1e-2]. */
__global__ void fill_dsa_kernel(uint8_t *p, size_t pages, uint64_t seed)
{
	const size_t n = pages * DSA_PAGE_BYTES;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		const size_t off = i % DSA_PAGE_BYTES;
		if (off < DSA_PAGE_TOKENS * DSA_INDEX_DIM) {
			p[i] = (uint8_t)(hash32(seed * 0x9e3779b97f4a7c15ull + i) & 0xf7u);
		} else if ((off - DSA_PAGE_TOKENS * DSA_INDEX_DIM) % 4 == 0) {
			const float s = 1e-3f + 9e-3f * unit(seed, i);
			memcpy(p + i, &s, 4);
		}
	}
}

uint64_t g_seed = 1;
cudaStream_t g_stream;

void fill_bf16(void *p, size_t n, float lo, float hi)
{
	fill_bf16_kernel<<<4096, FILL_THREADS, 0, g_stream>>>((uint16_t *)p, n, g_seed++, lo, hi);
	CK(cudaGetLastError());
}

void fill_f32(void *p, size_t n, float lo, float hi)
{
	fill_f32_kernel<<<4096, FILL_THREADS, 0, g_stream>>>((float *)p, n, g_seed++, lo, hi);
	CK(cudaGetLastError());
}

void fill_bytes(void *p, size_t n, uint32_t and_mask, uint32_t or_mask, uint32_t mod = 0)
{
	fill_bytes_kernel<<<4096, FILL_THREADS, 0, g_stream>>>((uint8_t *)p, n, g_seed++, and_mask, or_mask, mod);
	CK(cudaGetLastError());
}

void *dalloc(size_t bytes)
{
	void *p = nullptr;
	cudaError_t e = cudaMalloc(&p, bytes ? bytes : 16);
	if (e != cudaSuccess) {
		fprintf(stderr, "k3-bench: cudaMalloc(%zu bytes): %s\n", bytes, cudaGetErrorString(e));
		exit(1);
	}
	return p;
}

/* A device copy of v that the kernels launched after it on g_stream see (k3_upload.h: a plain
 * cudaMemcpy may still be landing when a kernel on the non-blocking g_stream starts). */
template <typename T>
T *upload(const std::vector<T> &v)
{
	T *d = (T *)dalloc(v.size() * sizeof(T));
	CK(k3_upload(d, v.data(), v.size() * sizeof(T), g_stream));
	return d;
}

uint64_t g_rng = 0x2026120188ull;

uint32_t rnd()
{
	g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
	return (uint32_t)(g_rng >> 16);
}

/* ---- timing ----------------------------------------------------------------- */

struct stats {
	double med_us = 0, p10_us = 0, p90_us = 0;
};

stats summarize(std::vector<float> ms)
{
	std::sort(ms.begin(), ms.end());
	auto at = [&](double f) { return 1e3 * ms[(size_t)std::min<double>(ms.size() - 1, f * (ms.size() - 1) + 0.5)]; };
	return { at(0.5), at(0.1), at(0.9) };
}

/* ---- a cold L2 before each timed launch ---------------------------------------
 * In a serving step nothing an op reads is still in L2 when it starts (the weights, caches and
 * states of every other op stream through in between), but a bench that repeats one launch
 * finds part of its inputs there: a set far larger than L2 still hits on ~10 % (the 528 MB
 * weight of gemm m=1 n=36864 k=7168: 168 us repeated against 183 us on its first launch and
 * 187-190 us in the K3 slice, 2026-12-01t), a small set rotated 16 ways (2 MB) fits whole. So,
 * unless --warm-l2, each timed launch of time_events() follows a read of 4x L2's bytes of a
 * buffer of its own (outside the NVTX range and the events): clean lines, so the op pays no
 * write-back of someone else's dirty lines either. Ops whose inputs the op before them has just
 * written in a step (routing, the combine) pass hot_inputs. (The decode-size expert gemv timed
 * that way, 2026-12-01y call 5, stayed 6-15 % above the slice as it was read cold: not L2.) */
const uint4 *g_l2_flush = nullptr;
size_t g_l2_flush_n = 0; /* uint4s */
unsigned *g_l2_sink = nullptr;

__global__ void l2_flush_kernel(const uint4 *__restrict__ p, size_t n, unsigned *sink)
{
	unsigned x = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		const uint4 v = p[i];
		x ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (x == 0x9e3779b9u) /* never in practice; keeps the loads */
		*sink = x;
}

/* ---- pacing: the clock each timed launch runs at (K3_BENCH_HOG_MS, K3_BENCH_COOL_MS;
 * common/bench_pace.cuh) ---------------------------------------------------------------------------- */
cublasLtHandle_t g_lt;
void *g_lt_ws;

/* Before a timed launch or loop: the pace of K3_BENCH_HOG_MS / K3_BENCH_COOL_MS (none by default). */
void pace()
{
	k3_bench_pace("k3-bench", g_stream);
}

void l2_flush()
{
	if (!g_l2_flush)
		return;
	l2_flush_kernel<<<1024, 256, 0, g_stream>>>(g_l2_flush, g_l2_flush_n, g_l2_sink);
	CK(cudaGetLastError());
}

/* Single launches between events, each in an NVTX range named `spec` (after l2_flush() unless
 * `hot_inputs`: an op whose inputs the op before it has just written, as routing reads the
 * router's logits and the combine the experts' rows: in a serving step they are in L2 when they
 * fit; measured cold in the K3 slice's own ops, 2026-12-01y call 1: route tokens=1 19.6 us and
 * combine 11.9 us against 15.7 and 6.8 us in the slice, 16.1 and 6.2 us warm). */
template <typename F>
stats time_events(const char *spec, int warm, int reps, F launch, bool hot_inputs = false)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < warm; i++)
		launch(i);
	CK(cudaStreamSynchronize(g_stream));
	std::vector<float> ms;
	for (int i = 0; i < reps; i++) {
		pace();
		if (!hot_inputs)
			l2_flush();
		nvtxRangePushA(spec);
		CK(cudaEventRecord(a, g_stream));
		launch(warm + i);
		CK(cudaEventRecord(b, g_stream));
		CK(cudaEventSynchronize(b));
		nvtxRangePop();
		float t;
		CK(cudaEventElapsedTime(&t, a, b));
		ms.push_back(t);
	}
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	stats st = summarize(ms);
	k3_bench_sustain(spec, warm + reps, st.med_us, g_stream, launch); /* K3_BENCH_SUSTAIN_MS */
	return st;
}

/* Average of `n` back-to-back launches (launch(0..n-1)), through one CUDA graph
 * replayed `replays` times when `graph`, else a stream loop. */
template <typename F>
double time_steady(bool graph, int n, int replays, F launch)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	double us = 0.0;
	if (graph) {
		cudaGraph_t gr;
		cudaGraphExec_t ex;
		CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
		for (int i = 0; i < n; i++)
			launch(i);
		CK(cudaStreamEndCapture(g_stream, &gr));
		CK(cudaGraphInstantiate(&ex, gr, 0));
		CK(cudaGraphLaunch(ex, g_stream));
		pace();
		CK(cudaEventRecord(a, g_stream));
		for (int r = 0; r < replays; r++)
			CK(cudaGraphLaunch(ex, g_stream));
		CK(cudaEventRecord(b, g_stream));
		CK(cudaEventSynchronize(b));
		float t;
		CK(cudaEventElapsedTime(&t, a, b));
		us = 1e3 * t / ((double)n * replays);
		CK(cudaGraphExecDestroy(ex));
		CK(cudaGraphDestroy(gr));
	} else {
		launch(0);
		pace();
		CK(cudaEventRecord(a, g_stream));
		for (int r = 0; r < replays; r++)
			for (int i = 0; i < n; i++)
				launch(i);
		CK(cudaEventRecord(b, g_stream));
		CK(cudaEventSynchronize(b));
		float t;
		CK(cudaEventElapsedTime(&t, a, b));
		us = 1e3 * t / ((double)n * replays);
	}
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	return us;
}

/* ---- output ------------------------------------------------------------------ */

struct options {
	const char *out = "k3-bench.csv";
	bool quick = false;
	bool require_wgmma = false;
	bool warm_l2 = false;
	int reps = 20;
	const char *only = nullptr;
	bool expert_e4m3 = false; /* --expert-act e4m3: the layer's E4M3 expert rows too */
};

FILE *g_csv;
double g_copy_gbps = 0.0;

struct row {
	const char *op = "", *variant = "";
	char shape[96] = "";
	stats t;
	double steady_us = 0;
	const char *steady_kind = "";
	int reps = 0;
	double bytes = 0, flops = 0, ref_us = 0;
	const char *spec = "";
};

void csv_header()
{
	fprintf(g_csv, "op,variant,shape,time_us,p10_us,p90_us,steady_us,steady_kind,reps,bytes,flops,gbps,tflops,"
		       "pct_copy_bw,steady_gbps,steady_pct_copy_bw,ref_us,pct_of_ref,spec,copy_gbps\n");
}

void csv_row(const row &r)
{
	const double gb = r.bytes / (r.t.med_us * 1e3), tf = r.flops / (r.t.med_us * 1e6);
	const double sgb = r.steady_us > 0 ? r.bytes / (r.steady_us * 1e3) : 0.0;
	const double pct_ref = r.ref_us > 0 ? 100.0 * r.ref_us / r.t.med_us : 0.0;
	fprintf(g_csv, "%s,%s,%s,%.3f,%.3f,%.3f,%.3f,%s,%d,%.0f,%.0f,%.1f,%.2f,%.1f,%.1f,%.1f,%.3f,%.1f,%s,%.1f\n",
		r.op, r.variant, r.shape, r.t.med_us, r.t.p10_us, r.t.p90_us, r.steady_us, r.steady_kind, r.reps,
		r.bytes, r.flops, gb, tf, g_copy_gbps > 0 ? 100.0 * gb / g_copy_gbps : 0.0, sgb,
		g_copy_gbps > 0 ? 100.0 * sgb / g_copy_gbps : 0.0, r.ref_us, pct_ref, r.spec, g_copy_gbps);
	fflush(g_csv);
	printf("%-14s %-10s %-40s %10.2f us  steady %10.2f  %8.1f GB/s (%5.1f%% copy)  %7.2f TF%s\n", r.op, r.variant,
	       r.shape, r.t.med_us, r.steady_us, gb, g_copy_gbps > 0 ? 100.0 * gb / g_copy_gbps : 0.0, tf,
	       r.ref_us > 0 ? "  (ref below)" : "");
	if (r.ref_us > 0)
		printf("%-14s %-10s %-40s %10.2f us  ours at %.1f%% of it\n", "", "cublasLt", "", r.ref_us, pct_ref);
	fflush(stdout);
}

/* Does this build run the wgmma tiled GEMM on this device? (set in main) */
bool g_wgmma = false;

/* The GEMM path a shape runs, as printed in the shape column. */
const char *path_name(int path)
{
	return path == K3_GEMM_GEMV ? "gemv" : path == K3_GEMM_TILED_MMA ? "tiled-mma" : path == K3_GEMM_TILED_WGMMA ? "tiled-wgmma" : "?";
}

/* ---- copy ceiling ------------------------------------------------------------- */

__global__ void copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

void bench_copy(const options &o)
{
	const size_t bytes = (size_t)2 << 30;
	void *a = dalloc(bytes), *b = dalloc(bytes);
	fill_f32(a, bytes / 4, -1, 1);
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	row r;
	r.op = "copy", r.variant = "memcpy", r.reps = o.reps, r.bytes = 2.0 * bytes, r.spec = "k3sim op=copy bytes=2147483648";
	snprintf(r.shape, sizeof r.shape, "bytes=%zu", bytes);
	r.t = time_events(r.spec, 3, o.reps, [&](int) { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, g_stream)); });
	const double g_memcpy = r.bytes / (r.t.med_us * 1e3);
	stats k = time_events(r.spec, 3, o.reps, [&](int) {
		copy_kernel<<<sms * 8, 512, 0, g_stream>>>((const uint4 *)a, (uint4 *)b, bytes / 16);
	});
	const double g_kernel = r.bytes / (k.med_us * 1e3);
	g_copy_gbps = std::max(g_memcpy, g_kernel);
	csv_row(r);
	r.variant = "kernel", r.t = k;
	csv_row(r);
	printf("copy ceiling: %.0f GB/s (read + write; memcpy %.0f, kernel %.0f)\n", g_copy_gbps, g_memcpy, g_kernel);
	CK(cudaFree(a));
	CK(cudaFree(b));
}

/* Copies from 4 KiB to 1 GiB (powers of 2, and 0.75 x from 16 KiB: k3sim calibrate holds those
 * out), each in a `k3sim op=copy bytes=N` range, one CTA per 8 KiB up to 8 an SM, each launch on
 * fresh addresses of the 2 GiB buffers: the memory class's curve down to a kernel's fixed cost.
 * Without them a fit on this bench knows one copy (2 GiB, ~1 ms), and k3sim's floor for non-GEMM
 * ops (below the smallest kernel a class measured, its measured time) charges every small
 * elementwise op that millisecond. */
void bench_copy_sizes(const options &o)
{
	const size_t cap = (size_t)2 << 30;
	void *a = dalloc(cap), *b = dalloc(cap);
	fill_f32(a, cap / 4, -1, 1);
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	for (size_t p2 = (size_t)4 << 10; p2 <= ((size_t)1 << 30); p2 *= 2)
		for (int h = 0; h < 2; h++) {
			const size_t bytes = h ? p2 / 4 * 3 : p2;
			if (h && p2 < 16384)
				continue;
			const size_t sets = std::max<size_t>(1, cap / bytes);
			const size_t n16 = bytes / 16;
			const unsigned grid = (unsigned)std::min<size_t>((size_t)sms * 8, std::max<size_t>(1, bytes / 8192));
			char spec[64];
			snprintf(spec, sizeof spec, "k3sim op=copy bytes=%zu", bytes);
			row r;
			r.op = "copy", r.variant = "sweep", r.reps = o.reps, r.bytes = 2.0 * bytes, r.spec = spec;
			snprintf(r.shape, sizeof r.shape, "bytes=%zu", bytes);
			r.t = time_events(spec, 3, o.reps, [&](int i) {
				const size_t off = (size_t)i % sets * bytes;
				copy_kernel<<<grid, 512, 0, g_stream>>>((const uint4 *)((const char *)a + off),
									(uint4 *)((char *)b + off), n16);
				CK(cudaGetLastError());
			});
			csv_row(r);
		}
	CK(cudaFree(a));
	CK(cudaFree(b));
}

/* ---- back to back, rotated (the gemv rows' second protocol) ---------------------------
 * An op launched back to back on one stream over rotated operand sets, events around the whole
 * batch, time a launch = total / launches (time_steady(false, ...)): no host launch gap and no
 * idle GPU before each launch, as in a CUDA-graph decode step. The copy ceiling the same way:
 * copy_b2b_us() copies bytes / 2 into the next bytes / 2 (bytes moved = bytes) of
 * max(3, 4 x L2 / bytes) distinct sets in turn (no set read again before the others have passed
 * through L2), back to back; bytes above COPY_B2B_CAP are copied as COPY_B2B_CAP (the
 * bandwidth is flat there). */
constexpr size_t COPY_B2B_CAP = (size_t)4 << 30;
constexpr size_t B2B_POOL_KEEP = (size_t)1 << 30; /* a pool up to this size stays for the next row */
void *g_b2b_pool = nullptr;
size_t g_b2b_pool_bytes = 0;
int g_l2_bytes = 0; /* set in main */

struct b2b_copy {
	double us = 0, bytes = 0; /* a launch; bytes moved (read + written) a launch */
	int sets = 0, launches = 0;
};

b2b_copy copy_b2b_us(double want_bytes)
{
	b2b_copy c;
	const size_t bytes = std::min<size_t>(COPY_B2B_CAP, std::max<size_t>(4096, (size_t)want_bytes / 4096 * 4096));
	c.sets = (int)std::max<size_t>(3, ((size_t)4 * (size_t)std::max(g_l2_bytes, 1 << 20) + bytes - 1) / bytes);
	const size_t need = (size_t)c.sets * bytes;
	if (need > g_b2b_pool_bytes) {
		if (g_b2b_pool)
			CK(cudaFree(g_b2b_pool));
		g_b2b_pool = dalloc(need);
		g_b2b_pool_bytes = need;
		fill_f32(g_b2b_pool, need / 4, -1, 1);
	}
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	const size_t half = bytes / 2, n16 = half / 16;
	const unsigned grid = (unsigned)std::min<size_t>((size_t)sms * 8, std::max<size_t>(1, half / 8192));
	c.launches = std::max(4 * c.sets, (int)std::min<size_t>(64, (size_t)(2e9 / (double)bytes) + 1));
	c.launches = (c.launches + c.sets - 1) / c.sets * c.sets;
	c.us = time_steady(false, c.sets, c.launches / c.sets, [&](int i) {
		char *b = (char *)g_b2b_pool + (size_t)(i % c.sets) * bytes;
		copy_kernel<<<grid, 512, 0, g_stream>>>((const uint4 *)b, (uint4 *)(b + half), n16);
		CK(cudaGetLastError());
	});
	c.bytes = (double)bytes;
	if (g_b2b_pool_bytes > B2B_POOL_KEEP) { /* the large sets' pool goes back (the rows after need the memory) */
		CK(cudaFree(g_b2b_pool));
		g_b2b_pool = nullptr, g_b2b_pool_bytes = 0;
	}
	return c;
}

/* ---- cuBLASLt reference GEMM (BF16, equal FLOPs) -------------------------------- */

/* Median microseconds of y[m, n] = x[m, k] W^T, W [n][k], BF16 (the TN form), in ranges named spec. */
double cublas_us(int64_t m, int64_t n, int64_t k, int reps)
{
	const size_t wb = (size_t)n * k * 2, xb = (size_t)m * k * 2, db = (size_t)m * n * 2;
	void *W = dalloc(wb), *X = dalloc(xb), *D = dalloc(db);
	fill_bf16(W, wb / 2, -0.1f, 0.1f);
	fill_bf16(X, xb / 2, -1, 1);
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	LTOK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	LTOK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	LTOK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	LTOK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, (uint64_t)k, (uint64_t)n, k));
	LTOK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, (uint64_t)k, (uint64_t)m, k));
	LTOK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, (uint64_t)n, (uint64_t)m, n));
	cublasLtMatmulPreference_t pref;
	LTOK(cublasLtMatmulPreferenceCreate(&pref));
	uint64_t ws = CUBLAS_WS;
	LTOK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
	cublasLtMatmulHeuristicResult_t heur;
	int found = 0;
	double us = 0.0;
	if (cublasLtMatmulAlgoGetHeuristic(g_lt, desc, la, lb, ld, ld, pref, 1, &heur, &found) ==
		    CUBLAS_STATUS_SUCCESS &&
	    found) {
		/* Not a `k3sim op` range: cuBLAS's samples must not join the op's (a capture of the bench
		 * calibrates these kernels; the first device call's did mix them). */
		char spec[128];
		snprintf(spec, sizeof spec, "k3-bench cublaslt gemm m=%lld n=%lld k=%lld dtype=bf16", (long long)m,
			 (long long)n, (long long)k);
		const float alpha = 1.0f, beta = 0.0f;
		us = time_events(spec, 2, reps, [&](int) {
			     LTOK(cublasLtMatmul(g_lt, desc, &alpha, W, la, X, lb, &beta, D, ld, D, ld, &heur.algo,
						 g_lt_ws, CUBLAS_WS, g_stream));
		     }).med_us;
	} else {
		fprintf(stderr, "k3-bench: no cuBLASLt algorithm for m=%lld n=%lld k=%lld\n", (long long)m,
			(long long)n, (long long)k);
	}
	cublasLtMatmulPreferenceDestroy(pref);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatrixLayoutDestroy(lb);
	cublasLtMatrixLayoutDestroy(ld);
	cublasLtMatmulDescDestroy(desc);
	CK(cudaFree(W));
	CK(cudaFree(X));
	CK(cudaFree(D));
	return us;
}

/* An op's second protocol: `launch` back to back over its R operand sets (each moving `bytes`,
 * R x bytes >> L2), n = R x replays launches between two events, a launch = total / n; then the
 * copy ceiling the same way over the same bytes (copy_b2b_us()). Printed beside the
 * single-launch row, and as CSV rows `b2b` (the op, spec `spec`, not an op a preset is fitted
 * on) and `copy_b2b` (the copy); `what` names the bytes, `sets` the operand sets, `op` the op. */
template <typename F>
void b2b_rows(const row &r, F &launch, int R, int replays, double bytes, const char *spec, const char *what,
	      const char *sets, const char *op)
{
	row b = r;
	b.op = "b2b";
	b.t.med_us = b.t.p10_us = b.t.p90_us = time_steady(false, R, replays, launch);
	b.steady_us = 0, b.steady_kind = "", b.reps = R * replays, b.ref_us = 0;
	b.spec = spec;
	csv_row(b);
	const b2b_copy c = copy_b2b_us(bytes);
	row cr;
	cr.op = "copy_b2b", cr.variant = r.variant, cr.reps = c.launches, cr.bytes = c.bytes;
	cr.t.med_us = cr.t.p10_us = cr.t.p90_us = c.us;
	snprintf(cr.shape, sizeof cr.shape, "bytes=%.0f sets=%d", c.bytes, c.sets);
	char cspec[96];
	snprintf(cspec, sizeof cspec, "k3-bench b2b copy bytes=%.0f", c.bytes);
	cr.spec = cspec;
	csv_row(cr);
	const double g_op = bytes / (b.t.med_us * 1e3), g_copy = c.bytes / (c.us * 1e3);
	printf("%-14s %-10s %s bytes, back to back (%d launches over %d %s, %.0f MB a launch, L2 %d MB): "
	       "%.2f us = %.1f%% of copy ceiling; copy of the same bytes back to back (%d sets): %.0f GB/s = %.1f%% of "
	       "ceiling; %s %.1f%% of that copy\n",
	       "", r.variant, what, R * replays, R, sets, bytes / 1e6, g_l2_bytes >> 20, b.t.med_us,
	       100.0 * g_op / g_copy_gbps, c.sets, g_copy, 100.0 * g_copy / g_copy_gbps, op, 100.0 * g_op / g_copy);
	fflush(stdout);
}

/* ---- MLA decode ---------------------------------------------------------------- */

/* K3_BENCH_MLA_TRACE: one more launch of an FP8 split-kernel row (after the cold-L2 read) with
 * mla_decode_set_trace(): where the time of a launch goes, in us from the first CTA's entry
 * (percentiles 0 / 50 / 100 over the CTAs): entry, the producer's first copies, tile 0 landed,
 * the tile loop's end, the epilogue, the merge's end (cluster or last split), and the span.
 * K3_BENCH_MLA_TRACE_RAW=FILE appends every CTA's line: variant, B, H, ctx, CTA, SM, merged as
 * last, then the six points in us (-1: not reached). */
template <typename F>
void mla_trace(const mla_decode_args &a, int B, int H, int ctx, const char *variant, double med_us, F launch)
{
	const int ctas = ((a.qtokens * H + 15) / 16) * mla_decode_splits(&a) * B;
	const size_t words = (size_t)ctas * 8;
	unsigned long long *d = (unsigned long long *)dalloc(words * 8);
	CK(cudaMemset(d, 0, words * 8));
	l2_flush();
	mla_decode_set_trace(d);
	launch(0);
	mla_decode_set_trace(nullptr);
	CK(cudaStreamSynchronize(g_stream));
	std::vector<unsigned long long> h(words);
	CK(cudaMemcpy(h.data(), d, words * 8, cudaMemcpyDeviceToHost));
	CK(cudaFree(d));
	unsigned long long t0 = ~0ull, t1 = 0;
	int merged = 0;
	for (int c = 0; c < ctas; c++) {
		if (h[8 * c])
			t0 = std::min(t0, h[8 * c]);
		for (int k = 0; k < 7; k++)
			t1 = std::max(t1, h[8 * c + k]);
		merged += (h[8 * c + 7] >> 16) & 1;
	}
	printf("trace %s b=%d heads=%d ctx=%d: %d CTAs, %d merged as last, span %.1f us (events: median %.1f);",
	       variant, B, H, ctx, ctas, merged, (t1 - t0) * 1e-3, med_us);
	if (const char *raw = getenv("K3_BENCH_MLA_TRACE_RAW")) { /* every CTA: us from the first entry */
		FILE *f = fopen(raw, "a");
		if (!f)
			fprintf(stderr, "k3-bench: K3_BENCH_MLA_TRACE_RAW=%s: %s (trace not written)\n", raw, strerror(errno));
		if (f) {
			for (int c = 0; c < ctas; c++) {
				fprintf(f, "%s,%d,%d,%d,%d,%llu,%llu", variant, B, H, ctx, c, h[8 * c + 7] & 0xffffu,
					(h[8 * c + 7] >> 16) & 1u);
				for (int k : { 0, 5, 1, 2, 3, 4 })
					fprintf(f, ",%.2f", h[8 * c + k] ? (h[8 * c + k] - t0) * 1e-3 : -1.0);
				fprintf(f, "\n");
			}
			fclose(f);
		}
	}
	static const char *const names[7] = { "entry", "tile0", "loop", "epi", "merge", "copy0", "" };
	for (int k : { 0, 5, 1, 2, 3, 4 }) {
		std::vector<double> v;
		for (int c = 0; c < ctas; c++)
			if (h[8 * c + k])
				v.push_back((h[8 * c + k] - t0) * 1e-3);
		if (v.empty())
			continue;
		std::sort(v.begin(), v.end());
		printf(" %s %.1f/%.1f/%.1f", names[k], v[0], v[v.size() / 2], v.back());
	}
	printf("\n");
}

void mla_point(const options &o, enum mla_kv kv, int H, int B, int ctx, int t, const char *variant = nullptr)
{
	const size_t tb = kv == MLA_KV_FP8 ? MLA_FP8_TOKEN_BYTES : MLA_BF16_TOKEN_BYTES;
	const int pages = (ctx + MLA_PAGE_TOKENS - 1) / MLA_PAGE_TOKENS;
	const size_t set_bytes = (size_t)B * pages * MLA_PAGE_TOKENS * tb;
	int R = (int)std::min<size_t>(16, std::max<size_t>(1, (ROTATE_BYTES + set_bytes - 1) / set_bytes));
	while (R > 1 && (size_t)R * set_bytes > POOL_CAP)
		R--;
	const size_t n_pages = (size_t)R * B * pages;
	uint8_t *pool = (uint8_t *)dalloc(n_pages * MLA_PAGE_TOKENS * tb);
	if (kv == MLA_KV_FP8) {
		fill_mla_fp8_kernel<<<4096, FILL_THREADS, 0, g_stream>>>(pool, n_pages * MLA_PAGE_TOKENS, g_seed++);
		CK(cudaGetLastError());
	} else {
		fill_bf16(pool, n_pages * MLA_PAGE_TOKENS * MLA_DIM, -1, 1);
	}
	/* Set r, request b: its pages scattered over the pool (a fixed permutation). */
	std::vector<int32_t> table(n_pages), lens((size_t)R * B, ctx);
	for (size_t i = 0; i < n_pages; i++)
		table[i] = (int32_t)((i * 40503u) % n_pages);
	std::vector<char> seen(n_pages, 0);
	for (size_t i = 0; i < n_pages; i++) {
		while (seen[table[i]])
			table[i] = (int32_t)((table[i] + 1) % n_pages);
		seen[table[i]] = 1;
	}
	int32_t *d_table = upload(table), *d_lens = upload(lens);
	const size_t qn = (size_t)B * t * H * MLA_DIM;
	uint16_t *q = (uint16_t *)dalloc((size_t)R * qn * 2);
	fill_bf16(q, (size_t)R * qn, -1, 1);
	uint16_t *out = (uint16_t *)dalloc((size_t)B * t * H * MLA_LATENT * 2);
	float *lse = (float *)dalloc((size_t)B * t * H * 4);
	mla_decode_args a = {};
	a.batch = B, a.heads = H, a.qtokens = t, a.kv = kv, a.scale = 1.0f / sqrtf(192.0f), a.max_seqlen = ctx;
	a.cache = pool, a.max_pages = pages, a.out = out, a.lse = lse;
	/* K3_BENCH_MLA_OVERLAP=1: mla_decode_args::overlap_prev (read at every row, so that
	 * K3_BENCH_MLA_AB can switch it); the bench's launches write nothing the next one reads. */
	const char *ov = getenv("K3_BENCH_MLA_OVERLAP");
	a.overlap_prev = ov && !strcmp(ov, "1");
	size_t ws = 0;
	KOK(mla_decode_workspace_bytes(&a, &ws));
	a.workspace = ws ? dalloc(ws) : nullptr, a.workspace_bytes = ws;
	if (ws) /* zeroed once: the last-split merge's counters with K3_MLA_FP8S_LAST_RESET=self */
		CK(cudaMemset(a.workspace, 0, ws));
	auto launch = [&](int i) {
		mla_decode_args x = a;
		const int r = i % R;
		x.q = q + (size_t)r * qn, x.block_table = d_table + (size_t)r * B * pages, x.seqlens = d_lens + (size_t)r * B;
		KOK(mla_decode(&x, g_stream));
	};
	row w;
	w.op = "mla_decode", w.variant = kv == MLA_KV_FP8 ? (variant ? variant : "fp8") : "bf16";
	const int clu = mla_decode_cluster(&a), last = mla_decode_last(&a);
	snprintf(w.shape, sizeof w.shape, "b=%d heads=%d ctx=%d t=%d splits=%d%s", B, H, ctx, t,
		 mla_decode_splits(&a), clu > 0 ? " cluster" : last > 0 ? " last" : "");
	char spec[160];
	/* The op's ctx counts the cached tokens before the t new ones (the kernel's length L = ctx
	 * here includes them): a decode at L = 4^k attends 4^k tokens, a calibration point. */
	snprintf(spec, sizeof spec, "k3sim op=mla_decode b=%d heads=%d ctx=%d kv=%s t=%d", B, H, ctx - t, w.variant, t);
	w.spec = spec;
	w.reps = o.reps;
	w.t = time_events(spec, 3, o.reps, launch);
	w.steady_us = time_steady(true, R, std::max(1, 40 / R), launch), w.steady_kind = "graph";
	w.bytes = (double)B * ctx * tb;
	if (getenv("K3_BENCH_MLA_TRACE") && kv == MLA_KV_FP8 && t * H <= 32)
		mla_trace(a, B, H, ctx, w.variant, w.t.med_us, launch);
	w.flops = 2.0 * B * t * H * (double)ctx * (MLA_DIM + MLA_LATENT);
	csv_row(w);
	if (getenv("K3_BENCH_MLA_B2B") && kv == MLA_KV_FP8 && t * H <= 32) { /* the second protocol */
		char bspec[160];
		snprintf(bspec, sizeof bspec, "k3-bench b2b op=mla_decode b=%d heads=%d ctx=%d kv=%s t=%d", B, H,
			 ctx - t, w.variant, t);
		b2b_rows(w, launch, R, std::max(1, 48 / R), w.bytes, bspec, "cache", "cache sets", "mla");
	}
	CK(cudaFree(pool));
	CK(cudaFree(d_table));
	CK(cudaFree(d_lens));
	CK(cudaFree(q));
	CK(cudaFree(out));
	CK(cudaFree(lse));
	if (a.workspace)
		CK(cudaFree(a.workspace));
}

/* Materialized MLA prefill (mla_prefill()): T new tokens over P cached ones, H heads, K/V as
 * views of one kv_b output [N][H][256], the output gate fused (as the slice runs it). */
void mla_prefill_point(const options &o, int H, int T, int P)
{
	const size_t N = (size_t)P + T;
	uint16_t *q = (uint16_t *)dalloc((size_t)T * H * MLA_QK_HEAD * 2);
	uint16_t *kv = (uint16_t *)dalloc(N * H * 256 * 2);
	uint16_t *kr = (uint16_t *)dalloc(N * MLA_ROPE * 2);
	uint16_t *gate = (uint16_t *)dalloc((size_t)T * H * MLA_V_HEAD * 2);
	uint16_t *out = (uint16_t *)dalloc((size_t)T * H * MLA_V_HEAD * 2);
	fill_bf16(q, (size_t)T * H * MLA_QK_HEAD, -1, 1);
	fill_bf16(kv, N * H * 256, -1, 1);
	fill_bf16(kr, N * MLA_ROPE, -1, 1);
	fill_bf16(gate, (size_t)T * H * MLA_V_HEAD, -2, 2);
	mla_prefill_args a = {};
	a.batch = 1, a.heads = H, a.tokens = T, a.prefix = P, a.scale = 1.0f / sqrtf((float)MLA_QK_HEAD);
	a.q = q, a.k_nope = kv, a.v = kv + MLA_QK_NOPE, a.ld_kv = (int64_t)H * 256, a.head_stride = 256;
	a.k_rope = kr, a.gate = gate, a.out = out;
	row w;
	w.op = "mla_prefill", w.variant = "bf16";
	snprintf(w.shape, sizeof w.shape, "b=1 heads=%d t=%d ctx=%d", H, T, P);
	char spec[160];
	snprintf(spec, sizeof spec, "k3sim op=mla_prefill b=1 t=%d ctx=%d heads=%d dqk=%d dv=%d kv=bf16", T, P, H,
		 MLA_QK_HEAD, MLA_V_HEAD);
	w.spec = spec;
	w.reps = std::max(3, o.reps / 2);
	w.t = time_events(spec, 2, w.reps, [&](int) { KOK(mla_prefill(&a, g_stream)); });
	w.flops = mla_prefill_flops(1, H, T, P);
	w.bytes = 2.0 * ((double)T * H * (MLA_QK_HEAD + 2 * MLA_V_HEAD) + (double)N * (H * 256 + MLA_ROPE));
	csv_row(w);
	CK(cudaFree(q));
	CK(cudaFree(kv));
	CK(cudaFree(kr));
	CK(cudaFree(gate));
	CK(cudaFree(out));
}

/* The materialized prefill at K3's 96 heads: ctx + t a power of 4 trains k3sim calibrate's
 * attention_prefill class (1K, 4K, 16K; 2K over a 2K prefix), the rest is held out. */
void bench_mla_prefill(const options &o)
{
	const int pts[][2] = { { 1024, 0 }, { 4096, 0 }, { 16384, 0 }, { 2048, 2048 }, { 2048, 0 }, { 8192, 0 },
			       { 1024, 7168 } };
	for (const auto &tp : pts)
		if (!o.quick || tp[0] <= 4096)
			mla_prefill_point(o, 96, tp[0], tp[1]);
}

/* --only mla: decode at 16, 64 and 128 heads, BF16 and FP8 caches, then K3's 96 heads with the
 * BF16 cache (K3_BENCH_MLA_H96=1: those alone, e.g. duty-cycled for power). */
void bench_mla(const options &o)
{
	const bool h96 = getenv("K3_BENCH_MLA_H96") != nullptr; /* K3's 96-head BF16 rows alone */
	for (int kvi = 0; kvi < 2; kvi++) {
		const enum mla_kv kv = kvi ? MLA_KV_FP8 : MLA_KV_BF16;
		if (h96) {
		} else if (o.quick) {
			for (int H : { 16, 128 })
				for (int B : { 1, 64 })
					mla_point(o, kv, H, B, 8192, 1);
			mla_point(o, kv, 128, 64, 8192, 2);
		} else {
			for (int ctx : { 8192, 32768 })
				for (int H : { 16, 64, 128 })
					for (int B : { 1, 16, 64, 128 })
						mla_point(o, kv, H, B, ctx, 1);
			for (int t : { 2, 4 })
				for (int H : { 16, 128 })
					mla_point(o, kv, H, 64, 8192, t);
		}
		/* K3's 96 heads with the slice's BF16 cache, attending 4^k tokens: training points of
		 * k3sim calibrate's protocol (attention ctx + t a power of 4), so that a preset fitted
		 * on this capture knows the kernel at the slice's batches (decode at 4K, 16K, 64K) and
		 * its prefill (the absorbed kernel with t = T new tokens, no prefix: the slice's). */
		if (kv != MLA_KV_BF16)
			continue;
		const std::vector<int> Bs = o.quick ? std::vector<int>{ 1, 64 } : std::vector<int>{ 1, 16, 64, 256 };
		for (int ctx : o.quick ? std::vector<int>{ 4096, 16384 } : std::vector<int>{ 4096, 16384, 65536 })
			for (int B : Bs)
				mla_point(o, kv, 96, B, ctx, 1);
		if (!o.quick)
			for (int T : { 1024, 4096 })
				mla_point(o, kv, 96, 1, T, T);
	}
}

/* The settings of an A/B environment variable: "VAR=VALUE[ VAR=VALUE...][;VAR=VALUE...]", each
 * ';'-separated group one set (the variants NAME-ab, NAME-ab2, ...); exits with a message on a
 * malformed entry. */
typedef std::vector<std::pair<std::string, std::string>> env_set;
std::vector<env_set> env_settings(const char *var)
{
	std::vector<env_set> sets;
	const char *v = getenv(var);
	const std::string all(v ? v : "");
	size_t i = 0;
	sets.emplace_back();
	while (i < all.size()) {
		size_t j = all.find_first_of(" ;", i);
		if (j == std::string::npos)
			j = all.size();
		const std::string kvs = all.substr(i, j - i);
		const bool next_set = j < all.size() && all[j] == ';';
		i = j + 1;
		if (!kvs.empty()) {
			const size_t eq = kvs.find('=');
			if (eq == std::string::npos || eq == 0) {
				fprintf(stderr, "k3-bench: %s: '%s' is not VAR=VALUE\n", var, kvs.c_str());
				exit(2);
			}
			sets.back().emplace_back(kvs.substr(0, eq), kvs.substr(eq + 1));
		}
		if (next_set && !sets.back().empty())
			sets.emplace_back();
	}
	if (sets.back().empty())
		sets.pop_back();
	return sets;
}

/* f() with the settings in the environment, then the environment as it was. */
template <typename F>
void with_env(const env_set &set, F f)
{
	std::vector<std::pair<std::string, std::string>> saved;
	std::vector<bool> had;
	for (const auto &e : set) {
		const char *old = getenv(e.first.c_str());
		had.push_back(old != nullptr);
		saved.emplace_back(e.first, old ? old : "");
		setenv(e.first.c_str(), e.second.c_str(), 1);
	}
	f();
	for (size_t i = saved.size(); i-- > 0;) {
		if (had[i])
			setenv(saved[i].first.c_str(), saved[i].second.c_str(), 1);
		else
			unsetenv(saved[i].first.c_str());
	}
}

/* The variant name of A/B set v (0-based): NAME-ab, NAME-ab2, ... */
std::string ab_name(const char *name, size_t v)
{
	return std::string(name) + (v ? "-ab" + std::to_string(v + 1) : "-ab");
}

/* --only mla_decode: the decode target's grid, BF16 and FP8 caches side by side in one process
 * (% of the copy ceiling measured first on the cache bytes): K3's heads per GPU at TP 8 (12)
 * and 16, t = 1 (decode) and 2, 4 (MTP), contexts 8K-64K, batches that fill the GPU; then 64 and
 * 128 heads (compute-bound: TFLOP/s). K3_MLA_FP8_KERNEL / K3_MLA_FP8_CVT pick the FP8 kernel
 * (mla_decode.cu: stage, reg, pipe, split; K3_MLA_FP8S_COPY / K3_MLA_FP8S_RESCALE /
 * K3_MLA_FP8S_COMBINE the split kernel's options). --quick: 16 heads, t = 1 and 4, 8K and 64K,
 * B = 128. K3_BENCH_MLA_AB="VAR=VALUE ..." repeats each FP8 row with those settings right after
 * it (variant fp8-ab, same process; several sets separated by ';': fp8-ab2, ...);
 * K3_BENCH_MLA_BATCHES=1 instead of the grid: FP8, H 16, t 1, B = 1, 16, 32, 64, 96, 128 at 8K,
 * 32K, 64K (=2: and H 12 at B = 64, 96, 128; =3: H 16, B = 64 and 128 only; =4: H 16 and 12, B = 64
 * and 128 at 8K only; =5: H 16, B 64, 8K). A shape ending
 * "cluster" merged its splits in a cluster, "last" by the last split of a row block to finish
 * (mla_decode_last()); K3_BENCH_MLA_TRACE: the per-CTA timer trace of each FP8 row (mla_trace()).
 * K3_BENCH_MLA_B2B: each FP8 row of up to 32 query rows also back to back over its cache sets
 * beside a copy of the same bytes timed the same way (b2b_rows()); K3_BENCH_MLA_OVERLAP=1: the
 * split kernel as a programmatic dependent launch (mla_decode_args::overlap_prev). */
void bench_mla_decode(const options &o)
{
	const char *k = getenv("K3_MLA_FP8_KERNEL"), *c = getenv("K3_MLA_FP8_CVT");
	printf("mla_decode grid: FP8 kernel %s, conversion %s\n", k ? k : "(default: split softmax up to 32 rows)",
	       c ? c : "(default: cc for split and pipe, ic for reg)");
	/* K3_BENCH_MLA_AB="VAR=VALUE[ VAR=VALUE...][;VAR=VALUE...]": each FP8 row again right after it
	 * with each ';'-separated set of settings (mla_decode.h: read at every call), variants
	 * "fp8-ab", "fp8-ab2", ...: A/B in one process. */
	const char *ab = getenv("K3_BENCH_MLA_AB");
	const std::vector<env_set> ab_sets = env_settings("K3_BENCH_MLA_AB");
	if (!ab_sets.empty())
		printf("mla_decode: each FP8 row again with each of the %zu sets of %s (fp8-ab, -ab2...)\n",
		       ab_sets.size(), ab);
	printf("mla_decode: clusters of the FP8 split kernel that fit at once:");
	for (int sz = 2; sz <= 8; sz++)
		printf(" %d:%d", sz, mla_decode_max_clusters(sz));
	printf("\n");
	auto point = [&](enum mla_kv kv, int H, int B, int ctx, int t) {
		mla_point(o, kv, H, B, ctx, t);
		if (kv != MLA_KV_FP8)
			return;
		for (size_t v = 0; v < ab_sets.size(); v++) {
			const std::string name = ab_name("fp8", v);
			with_env(ab_sets[v], [&] { mla_point(o, kv, H, B, ctx, t, name.c_str()); });
		}
	};
	const enum mla_kv kvs[2] = { MLA_KV_BF16, MLA_KV_FP8 };
	if (o.quick) {
		for (int ctx : { 8192, 65536 })
			for (int t : { 1, 4 })
				for (enum mla_kv kv : kvs)
					point(kv, 16, 128, ctx, t);
		return;
	}
	if (const char *bl = getenv("K3_BENCH_MLA_BATCHES")) { /* FP8 only, t 1, 8K-64K */
		const bool h12 = !strcmp(bl, "2");    /* =2: H 12 too */
		const bool target = !strcmp(bl, "3"); /* =3: B 64, 128 */
		const bool at8k = !strcmp(bl, "4");   /* =4: H 16 and 12, B 64, 128 at 8K only */
		if (!strcmp(bl, "5")) {               /* =5: H 16, B 64, 8K (one row: a profiler's) */
			point(MLA_KV_FP8, 16, 64, 8192, 1);
			return;
		}
		for (int ctx : { 8192, 32768, 65536 })
			for (int H : { 16, 12 })
				for (int B : { 1, 16, 32, 64, 96, 128 })
					if (at8k ? ctx == 8192 && (B == 64 || B == 128)
						 : (H == 16 && (!target || B == 64 || B == 128)) || (h12 && B >= 64))
						point(MLA_KV_FP8, H, B, ctx, 1);
		return;
	}
	for (int t : { 1, 2, 4 })
		for (int H : { 16, 12 })
			for (int ctx : { 8192, 32768, 65536 })
				for (int B : { 64, 128 })
					for (enum mla_kv kv : kvs)
						point(kv, H, B, ctx, t);
	for (int H : { 64, 128 })
		for (enum mla_kv kv : kvs)
			point(kv, H, 64, 8192, 1);
}

/* ---- LatentMoE ---------------------------------------------------------------- */

/* Expert weights of one matrix for all experts, BF16 or MXFP4, random. */
struct experts {
	int E, N, K;
	enum k3_wdtype dt;
	void *w = nullptr, *packed = nullptr, *scales = nullptr;
	void *packed8 = nullptr; /* MXFP4: the FP8 layout (k3_gemm_repack_fp8()), made on first use */
	void *packed16 = nullptr; /* MXFP4: the FP16-pair layout (k3_gemm_repack_f16enc()), made on first use */
	void *packedwg = nullptr; /* MXFP4: the wgmma tile layout (k3_gemm_repack_wg()), made on first use */
	void *packedf8 = nullptr, *floors = nullptr; /* MXFP4: the FP8-word layout (k3_gemm_repack_wgf8()), on first use */
	experts(int E_, int N_, int K_, enum k3_wdtype dt_) : E(E_), N(N_), K(K_), dt(dt_)
	{
		const size_t n = (size_t)E * N * K;
		if (dt == K3_W_BF16) {
			w = dalloc(n * 2);
			fill_bf16(w, n, -0.05f, 0.05f);
		} else {
			packed = dalloc(n / 2);
			scales = dalloc(n / 32);
			fill_bytes(packed, n / 2, 0xffu, 0u);
			fill_bytes(scales, n / 32, 0u, 116u, 4u); /* E8M0 116..119: 2^-11 .. 2^-8 */
		}
	}
	~experts()
	{
		cudaFree(w), cudaFree(packed), cudaFree(scales), cudaFree(packed8), cudaFree(packed16), cudaFree(packedwg);
		cudaFree(packedf8), cudaFree(floors);
	}
	/* The FP8-word tile layout and its floors (a one-time step; its time printed): the FP8 kernel's
	 * weights (K3_BENCH_WG_KERNELS=wide2f8). */
	void wgf8_layout()
	{
		if (!packedf8 && dt == K3_W_MXFP4) {
			const size_t n = (size_t)E * N * K;
			packedf8 = dalloc(n / 2);
			floors = dalloc((size_t)E * N);
			const auto t0 = std::chrono::steady_clock::now();
			KOK(k3_gemm_repack_wgf8((const uint8_t *)packed, (const uint8_t *)scales, (int64_t)E * N, K,
						(uint8_t *)packedf8, (uint8_t *)floors, g_stream));
			const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
			printf("# k3_gemm_repack_wgf8: %d x %d x %d MXFP4 in %.1f ms\n", E, N, K, ms);
		}
	}
	/* The wgmma tile layout of the nibbles (a one-time step; its time printed, the repack and the
	 * scale check through its read-back): from then on into() gives it as w_wg, which the grouped
	 * wgmma kernels "wide2rp", "wide2rq", "wide2rqt" and "wide2rqp" (the default) read. */
	void wg_layout()
	{
		if (!packedwg && dt == K3_W_MXFP4) {
			const size_t n = (size_t)E * N * K;
			packedwg = dalloc(n / 2);
			const auto t0 = std::chrono::steady_clock::now();
			KOK(k3_gemm_repack_wg((const uint8_t *)packed, (const uint8_t *)scales, (int64_t)E * N, K,
					      (uint8_t *)packedwg, g_stream));
			const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
			printf("# k3_gemm_repack_wg: %d x %d x %d MXFP4 (%.2f GB of nibbles) in %.1f ms\n", E, N, K, n / 2e9, ms);
		}
	}
	/* The FP16-pair layout of the nibbles (a one-time step, not timed): from then on into() gives
	 * it as w_f16, and the grouped gemv runs gemv_f16_kernel on it (unless K3_GEMV_FP4 says
	 * otherwise). */
	void f16_layout()
	{
		if (!packed16) {
			const size_t n = (size_t)E * N * K;
			packed16 = dalloc(n / 2);
			KOK(k3_gemm_repack_f16enc((const uint8_t *)packed, (int64_t)E * N, K, (uint8_t *)packed16, g_stream));
			CK(cudaStreamSynchronize(g_stream));
		}
	}
	/* The FP8 layout of the nibbles (a one-time step, not timed). */
	const uint8_t *fp8_layout()
	{
		if (!packed8) {
			const size_t n = (size_t)E * N * K;
			packed8 = dalloc(n / 2);
			KOK(k3_gemm_repack_fp8((const uint8_t *)packed, (int64_t)E * N, K, (uint8_t *)packed8, g_stream));
			CK(cudaStreamSynchronize(g_stream));
		}
		return (const uint8_t *)packed8;
	}
	double bytes_per_weight() const { return dt == K3_W_BF16 ? 2.0 : 0.5 + 1.0 / 32; }
	void into(k3_gemm_args &a) const
	{
		a.w_dtype = dt, a.w = (const uint16_t *)w, a.w_packed = (const uint8_t *)packed;
		a.w_scales = (const uint8_t *)scales, a.w_f16 = (const uint8_t *)packed16;
		a.w_wg = (const uint8_t *)packedwg;
	}
};

/* Random top-k routing of T tokens (distinct experts per token), grouped on the host. */
struct routing {
	int T, E, K;
	std::vector<int32_t> off, tile_off, touched, row_token;
	std::vector<float> row_weight;
	routing(int T_, int E_, int K_) : T(T_), E(E_), K(K_)
	{
		std::vector<int32_t> ids((size_t)T * K), count(E, 0);
		std::vector<int32_t> pick(E);
		for (int t = 0; t < T; t++) {
			for (int k = 0; k < K; k++) {
				int e;
				bool dup;
				do {
					e = (int)(rnd() % (uint32_t)E);
					dup = false;
					for (int j = 0; j < k; j++)
						dup = dup || ids[(size_t)t * K + j] == e;
				} while (dup);
				ids[(size_t)t * K + k] = e;
				count[e]++;
			}
		}
		off.assign(E + 1, 0), tile_off.assign(E + 1, 0);
		for (int e = 0; e < E; e++) {
			off[e + 1] = off[e] + count[e];
			tile_off[e + 1] = tile_off[e] + (count[e] + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS;
			if (count[e])
				touched.push_back(e);
		}
		row_token.assign((size_t)T * K, 0), row_weight.assign((size_t)T * K, 1.0f / K);
		std::vector<int32_t> fill(E, 0);
		for (size_t i = 0; i < ids.size(); i++)
			row_token[off[ids[i]] + fill[ids[i]]++] = (int32_t)(i / K);
	}
};

/* Device copies of a routing. */
struct droute {
	int32_t *off, *tile_off, *touched, *n_touched, *row_token;
	float *row_weight;
	int n;
	explicit droute(const routing &r)
	{
		off = upload(r.off), tile_off = upload(r.tile_off), row_token = upload(r.row_token);
		row_weight = upload(r.row_weight);
		std::vector<int32_t> t = r.touched;
		n = (int)t.size();
		t.resize(r.E, 0);
		touched = upload(t);
		n_touched = upload(std::vector<int32_t>{ n });
	}
	~droute()
	{
		cudaFree(off), cudaFree(tile_off), cudaFree(touched), cudaFree(n_touched), cudaFree(row_token);
		cudaFree(row_weight);
	}
	void into(k3_gemm_args &a) const
	{
		a.off = off, a.tile_off = tile_off, a.touched = touched, a.n_touched = n_touched;
	}
};

/* --only moe_prefill with K3_BENCH_WG_KERNELS: the grouped wgmma kernel forced by the caller
 * (K3_GEMM_WG_KERNEL), named in the rows' shape (" wg_kernel=<name>") and timed as
 * `k3-bench wg-<name> op=...` (not a calibration range). */
std::string g_wg_kernel;
/* K3_BENCH_WG_KERNELS's "wide2f8": not a K3_GEMM_WG_KERNEL name but the FP8 kernel, which E4M3
 * activations (K3_A_E4M3_ROW, quantized before timing: the GEMM alone is timed, the quantizer's
 * time printed beside) and the FP8-word layout select. */
bool g_wg_f8 = false;
/* --expert-act e4m3: expert_point() times the layer's E4M3 form of its GEMM (see the top). */
bool g_f8_layer = false;
/* The MXFP4 decode rows given the tile layout as the layer gives it (bench_moe(), bench_moe_decode():
 * since 2026-12-06 grouped calls with it above a quarter of a row a group take the tiled wgmma
 * path, k3_gemm.cu grouped_gemv_mode()); --only gemv's rows keep the gemv without it. */
bool g_decode_wg = false;

/* The gemv's second protocol (decode rows): `launch` back to back over its R routings (R
 * distinct sets of touched experts' weights and of activations; each set's weights alone are
 * wbytes, R x wbytes >> L2), n = R x replays launches between two events, a launch = total / n;
 * then the copy ceiling the same way over the same bytes (copy_b2b_us(), b2b_rows()). */
template <typename F>
void gemv_b2b(const row &r, F &launch, int R, int64_t rows, int N, int K, double touched, double wbytes, int E)
{
	char spec[192];
	snprintf(spec, sizeof spec, "k3-bench b2b op=grouped_gemm m=%lld n=%d k=%d groups=%d touched=%.0f", (long long)rows,
		 N, K, E, touched);
	b2b_rows(r, launch, R, std::max(1, (wbytes < 1e9 ? 64 : 16) / R), wbytes, spec, "weight", "routings", "gemv");
}

/* The fused gemv's per-CTA trace (K3_BENCH_GEMV_TRACE=path, B = 1 rows): one launch after a cold
 * L2 with k3gemm::gemv_trace_arm(); a summary line (span, the first conversion, CTA durations,
 * SMs' idle head and tail, resident CTAs over 16 slices of the span) and the CTAs appended to
 * path as CSV (variant, cta, sm, start, after the first conversion, end in ns from the first
 * start, cycles). Rows whose kernel is not the fused one record nothing and print nothing. */
template <typename F>
void gemv_trace(const char *variant, F &launch, int64_t touched)
{
	const int64_t cap = 1 << 16;
	const int words = k3gemm::gemv_trace_words();
	unsigned long long *d = (unsigned long long *)dalloc((size_t)cap * words * 8);
	CK(cudaMemset(d, 0, (size_t)cap * words * 8));
	l2_flush();
	KOK(k3gemm::gemv_trace_arm(d, cap));
	launch(0);
	CK(cudaStreamSynchronize(g_stream));
	KOK(k3gemm::gemv_trace_arm(nullptr, 0)); /* not taken: not the fused kernel */
	std::vector<unsigned long long> h((size_t)cap * words);
	CK(cudaMemcpy(h.data(), d, h.size() * 8, cudaMemcpyDeviceToHost));
	CK(cudaFree(d));
	struct cta {
		int id, sm;
		double t0, t1, t2, cyc;
	};
	std::vector<cta> c;
	for (int64_t i = 0; i < cap; i++) {
		const unsigned long long *t = &h[(size_t)i * words];
		if (t[2] != 0)
			c.push_back({ (int)i, (int)(t[3] >> 48), (double)t[0], (double)t[1], (double)t[2],
				      (double)(t[3] & 0xffffffffffffull) });
	}
	if (c.empty())
		return;
	double T0 = c[0].t0, T1 = c[0].t2;
	for (const cta &x : c)
		T0 = std::min(T0, x.t0), T1 = std::max(T1, x.t2);
	const double span = T1 - T0;
	std::vector<double> dur, conv;
	int nsm = 0;
	for (const cta &x : c) {
		dur.push_back(x.t2 - x.t0);
		conv.push_back(x.t1 - x.t0);
		nsm = std::max(nsm, x.sm + 1);
	}
	auto q = [](std::vector<double> v, double f) {
		std::sort(v.begin(), v.end());
		return v[(size_t)(f * (double)(v.size() - 1))];
	};
	/* per SM: the union of its CTAs' intervals, its first start and last end */
	double busy = 0, head = 0, tail = 0;
	int used = 0;
	for (int sm = 0; sm < nsm; sm++) {
		std::vector<std::pair<double, double>> iv;
		for (const cta &x : c)
			if (x.sm == sm)
				iv.push_back({ x.t0, x.t2 });
		if (iv.empty())
			continue;
		used++;
		std::sort(iv.begin(), iv.end());
		double a = iv[0].first, b = iv[0].second;
		head += a - T0;
		double last = b;
		for (size_t i = 1; i < iv.size(); i++) {
			last = std::max(last, iv[i].second);
			if (iv[i].first > b) {
				busy += b - a;
				a = iv[i].first, b = iv[i].second;
			} else
				b = std::max(b, iv[i].second);
		}
		busy += b - a;
		tail += T1 - last;
	}
	char occ[160] = "";
	for (int k = 0, n = 0; k < 16; k++) { /* resident CTAs at the middle of each 16th of the span */
		const double t = T0 + span * (k + 0.5) / 16;
		int m = 0;
		for (const cta &x : c)
			m += x.t0 <= t && t < x.t2;
		n += snprintf(occ + n, sizeof occ - (size_t)n, "%s%d", k ? " " : "", m);
	}
	printf("%-14s %-10s trace (one launch, cold L2, %zu CTAs, %lld groups, %d SMs): span %.2f us; first "
	       "conversion done after %.2f us (median; p90 %.2f); CTA %.2f us (p10 %.2f, p90 %.2f); SM idle head %.2f, "
	       "tail %.2f us (mean), SM busy %.1f%% of span; resident CTAs by 16ths: %s\n",
	       "", variant, c.size(), (long long)touched, used, span / 1e3, q(conv, 0.5) / 1e3, q(conv, 0.9) / 1e3,
	       q(dur, 0.5) / 1e3, q(dur, 0.1) / 1e3, q(dur, 0.9) / 1e3, head / used / 1e3, tail / used / 1e3,
	       100.0 * busy / (span * used), occ);
	const char *trace_path = getenv("K3_BENCH_GEMV_TRACE");
	FILE *f = fopen(trace_path, "a");
	if (!f)
		fprintf(stderr, "k3-bench: K3_BENCH_GEMV_TRACE=%s: %s (trace not written)\n", trace_path, strerror(errno));
	if (f) {
		for (const cta &x : c)
			fprintf(f, "%s,%d,%d,%.0f,%.0f,%.0f,%.0f\n", variant, x.id, x.sm, x.t0 - T0, x.t1 - T0, x.t2 - T0,
				x.cyc);
		fclose(f);
	}
	fflush(stdout);
}

/* One grouped expert GEMM point: T tokens routed to K of E experts, rotation over R routings.
 * a8: MXFP8 activations (quantized once per rotation set before timing: the gemv alone is
 * timed; the quantizer has its own row) and the FP8 gemv, timed under `k3-bench mxfp8 op=...`
 * (the model has no MXFP8-activation GEMM: not a calibration range). */
void expert_point(const options &o, experts &w, int T, bool glu, bool decode, int R,
		  enum k3_gemm_path gpath = K3_GEMM_AUTO, bool a8 = false, bool nocluster = false, bool bulk = false,
		  const char *alt = nullptr)
{
	const int E = w.E, K = K3_TOPK;
	std::vector<routing *> rs;
	std::vector<droute *> ds;
	double touched_avg = 0;
	for (int r = 0; r < R; r++) {
		rs.push_back(new routing(T, E, K));
		ds.push_back(new droute(*rs.back()));
		touched_avg += rs.back()->touched.size();
	}
	touched_avg /= R;
	const int64_t rows = (int64_t)T * K;
	/* A: glu: the latent of the T tokens (gathered); else h of the grouped rows. */
	const int64_t a_rows = glu ? T : rows;
	const size_t a_elems = (size_t)a_rows * w.K;
	const int Ra = (int)std::min<size_t>(8, std::max<size_t>(1, ROTATE_BYTES / (a_elems * 2 + 1)));
	uint16_t *A = (uint16_t *)dalloc((size_t)Ra * a_elems * 2);
	fill_bf16(A, (size_t)Ra * a_elems, -1, 1);
	uint8_t *Aq = nullptr, *As = nullptr;
	uint8_t *Aq8 = nullptr;
	float *Aqs = nullptr;
	/* The layer's E4M3 form (--expert-act e4m3): at every size, w13 writing E4M3 (w2's row scales
	 * are the quantizer's here, 1 / m in the layer: the same bytes). */
	const bool f8_layer = g_f8_layer && w.dt == K3_W_MXFP4 && !a8;
	const bool f8 = ((g_wg_f8 && !decode) || f8_layer) && w.dt == K3_W_MXFP4 && !a8;
	if (f8) {
		w.wgf8_layout();
		Aq8 = (uint8_t *)dalloc((size_t)Ra * a_elems);
		Aqs = (float *)dalloc((size_t)Ra * a_rows * sizeof(float));
		cudaEvent_t e0, e1;
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		CK(cudaEventRecord(e0, g_stream));
		KOK(k3_gemm_quantize_e4m3_rows(A, (int64_t)Ra * a_rows, w.K, Aq8, Aqs, g_stream));
		CK(cudaEventRecord(e1, g_stream));
		CK(cudaEventSynchronize(e1));
		float ms = 0;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		printf("# k3_gemm_quantize_e4m3_rows: %lld x %d BF16 in %.1f us (one launch over %d sets; %.1f us a set)\n",
		       (long long)Ra * a_rows, w.K, ms * 1e3, Ra, ms * 1e3 / Ra);
		CK(cudaEventDestroy(e0));
		CK(cudaEventDestroy(e1));
	}
	if (a8) {
		Aq = (uint8_t *)dalloc((size_t)Ra * a_elems);
		As = (uint8_t *)dalloc((size_t)Ra * a_elems / 32);
		KOK(k3_gemm_quantize_mxfp8(A, (int64_t)Ra * a_rows, w.K, Aq, As, g_stream));
	}
	const int width = glu ? w.N / 2 : w.N;
	uint16_t *out = (uint16_t *)dalloc((size_t)rows * width * 2);
	uint8_t *out8 = f8_layer && glu ? (uint8_t *)dalloc((size_t)rows * width) : nullptr;
	k3_gemm_args a = {};
	a.rows = rows, a.N = w.N, a.K = w.K, a.n_groups = E, a.epi = glu ? K3_EPI_GLU : K3_EPI_SCALE;
	a.beta_gate = 4.0f, a.beta_up = 25.0f, a.out = out, a.path = gpath;
	if (w.dt == K3_W_MXFP4 && decode && !a8)
		w.f16_layout();
	/* Prefill rows as the layer and the slice run them: with the wgmma tile layout (the default
	 * kernel "wide2rqp" reads it, as do wide2rp, wide2rq and wide2rqt; a kernel named by K3_GEMM_WG_KERNEL other than those, and the
	 * other paths, ignore it). Decode rows too when the wgmma path is asked for (--only moe_decode's
	 * `bf16wg_*`, K3_GEMM_GROUPED_GEMV=0): the layer gives the layout at every size. */
	const char *ggv = getenv("K3_GEMM_GROUPED_GEMV");
	if (w.dt == K3_W_MXFP4 && !a8 && (!decode || g_decode_wg || (ggv && !strcmp(ggv, "0"))))
		w.wg_layout();
	w.into(a);
	if (a8)
		a.a_dtype = K3_A_MXFP8, a.w_packed = w.fp8_layout(), a.a_q = Aq, a.a_scales = As;
	if (f8)
		a.a_dtype = K3_A_E4M3_ROW, a.w_wgf8 = (const uint8_t *)w.packedf8, a.w_floors = (const uint8_t *)w.floors;
	if (out8)
		a.out = nullptr, a.out_e4m3 = out8;
	size_t gws = 0; /* gemv_f16_kernel's FP16 activations */
	KOK(k3_gemm_workspace_bytes(&a, &gws));
	a.workspace = gws ? dalloc(gws) : nullptr, a.workspace_bytes = gws;
	auto launch = [&](int i) {
		k3_gemm_args x = a;
		ds[i % R]->into(x);
		if (a8)
			x.a_q = Aq + (size_t)(i % Ra) * a_elems, x.a_scales = As + (size_t)(i % Ra) * a_elems / 32;
		else if (f8)
			x.a_q = Aq8 + (size_t)(i % Ra) * a_elems, x.a_row_scales = Aqs + (size_t)(i % Ra) * a_rows;
		else
			x.a = A + (size_t)(i % Ra) * a_elems;
		if (glu)
			x.a_index = ds[i % R]->row_token;
		else
			x.row_scale = ds[i % R]->row_weight;
		KOK(k3_gemm(&x, g_stream));
	};
	row r;
	r.op = "grouped_gemm";
	/* alt: a gemv kernel other than the default, forced through the environment by the caller:
	 * rows `<alt>_w13` / `<alt>_w2`, timed as `k3-bench gemv-<alt> op=...`. */
	std::string alt_variant = alt ? std::string(alt) + (glu ? "_w13" : "_w2") : "";
	std::string alt_op = alt ? std::string("k3-bench gemv-") + alt + " op" : "";
	r.variant = alt ? alt_variant.c_str() : f8_layer ? (glu ? "mxfp4f8_w13" : "mxfp4f8_w2") : w.dt == K3_W_MXFP4 ? (a8 ? (bulk ? (glu ? "mxfp4a8b_w13" : "mxfp4a8b_w2") : (glu ? "mxfp4a8_w13" : "mxfp4a8_w2"))
					     : bulk ? (glu ? "mxfp4b_w13" : "mxfp4b_w2") : (glu ? "mxfp4_w13" : "mxfp4_w2"))
				       : (glu ? "bf16_w13" : "bf16_w2");
	const int path = k3_gemm_path_for(&a);
	snprintf(r.shape, sizeof r.shape, "tokens=%d m=%lld n=%d k=%d touched=%.0f %s%s%s%s%s", T, (long long)rows, w.N,
		 w.K, touched_avg, path_name(path), nocluster ? " wg_cluster=1" : "",
		 g_wg_kernel.empty() ? "" : " wg_kernel=", g_wg_kernel.c_str(), f8_layer ? " a=e4m3" : "");
	const std::string wg_op = "k3-bench wg-" + g_wg_kernel + " op";
	char spec[192];
	/* A forced kernel other than the default is timed under its own name, not as the op (a
	 * calibration of this capture must see the default kernel only). */
	snprintf(spec, sizeof spec, "%s=grouped_gemm m=%lld n=%d k=%d groups=%d touched=%.0f dtype=%s w_dtype=%s",
		 alt ? alt_op.c_str() : a8 ? (bulk ? "k3-bench mxfp8-bulk op" : "k3-bench mxfp8 op")
		    : gpath == K3_GEMM_TILED_MMA ? "k3-bench tiled-mma op"
		    : nocluster ? "k3-bench wg-nocluster op" : bulk ? "k3-bench gemv-bulk op"
		    : !g_wg_kernel.empty() ? wg_op.c_str() : "k3sim op",
		 (long long)rows, w.N, w.K, E, touched_avg, a8 ? "mxfp8" : f8_layer ? "fp8" : "bf16",
		 w.dt == K3_W_MXFP4 ? "mxfp4" : "bf16");
	r.spec = spec;
	r.reps = decode ? o.reps : std::max(3, o.reps / 4);
	const char *old_env = getenv("K3_GEMM_WG_CLUSTER");
	const std::string saved = old_env ? old_env : "";
	if (nocluster)
		setenv("K3_GEMM_WG_CLUSTER", "1", 1);
	r.t = time_events(spec, 2, r.reps, launch);
	r.steady_us = time_steady(decode, R, decode ? std::max(1, 32 / R) : 1, launch);
	if (nocluster) {
		if (old_env)
			setenv("K3_GEMM_WG_CLUSTER", saved.c_str(), 1);
		else
			unsetenv("K3_GEMM_WG_CLUSTER");
	}
	r.steady_kind = decode ? "graph" : "loop";
	/* Bytes: the touched experts' weights, A read, output written. */
	const double wbytes = touched_avg * w.N * (double)w.K * w.bytes_per_weight();
	r.bytes = wbytes + (double)a_elems * (a8 ? 1.0 + 1.0 / 32 : f8 ? 1.0 : 2.0) + (double)rows * width * (out8 ? 1 : 2);
	r.flops = 2.0 * rows * w.N * (double)w.K;
	if (!decode)
		r.ref_us = cublas_us(rows, w.N, w.K, std::max(3, o.reps / 4));
	csv_row(r);
	if (decode && g_copy_gbps > 0) /* the target's measure: weight bytes alone */
		printf("%-14s %-10s weight bytes only: %.1f%% of copy (median), %.1f%% (steady)\n", "", r.variant,
		       100.0 * wbytes / (r.t.med_us * 1e3) / g_copy_gbps, 100.0 * wbytes / (r.steady_us * 1e3) / g_copy_gbps);
	if (decode && g_copy_gbps > 0) /* back to back over the R routings, beside a copy of the same bytes */
		gemv_b2b(r, launch, R, rows, w.N, w.K, touched_avg, wbytes, E);
	if (decode && T == 1 && getenv("K3_BENCH_GEMV_TRACE"))
		gemv_trace(r.variant, launch, (int64_t)rs[0]->touched.size());
	if (a8 && decode && !bulk && !alt) { /* the activations' quantizer, once per GEMM input (not in the row above) */
		row q;
		q.op = "mxfp8_quant", q.variant = glu ? "latent" : "hidden";
		snprintf(q.shape, sizeof q.shape, "rows=%lld k=%d", (long long)a_rows, w.K);
		char qspec[96];
		snprintf(qspec, sizeof qspec, "k3-bench mxfp8 quantize rows=%lld k=%d", (long long)a_rows, w.K);
		q.spec = qspec;
		q.reps = o.reps;
		auto qlaunch = [&](int i) {
			KOK(k3_gemm_quantize_mxfp8(A + (size_t)(i % Ra) * a_elems, a_rows, w.K, Aq + (size_t)(i % Ra) * a_elems,
						   As + (size_t)(i % Ra) * a_elems / 32, g_stream));
		};
		q.t = time_events(qspec, 2, q.reps, qlaunch);
		q.steady_us = time_steady(true, Ra, std::max(1, 32 / Ra), qlaunch);
		q.steady_kind = "graph";
		q.bytes = (double)a_elems * (2.0 + 1.0 + 1.0 / 32);
		csv_row(q);
	}
	if (f8_layer && glu && !alt) { /* the layer's quantizer of the latent rows (its own op, before w13) */
		row q;
		q.op = "e4m3_quant", q.variant = "latent";
		snprintf(q.shape, sizeof q.shape, "rows=%lld k=%d", (long long)a_rows, w.K);
		char qspec[96];
		snprintf(qspec, sizeof qspec, "k3sim op=quant tokens=%lld width=%d dtype=fp8 group=0", (long long)a_rows, w.K);
		q.spec = qspec;
		q.reps = decode ? o.reps : std::max(3, o.reps / 4);
		auto qlaunch = [&](int i) {
			KOK(k3_gemm_quantize_e4m3_rows(A + (size_t)(i % Ra) * a_elems, a_rows, w.K,
						       Aq8 + (size_t)(i % Ra) * a_elems, Aqs + (size_t)(i % Ra) * a_rows,
						       g_stream));
		};
		q.t = time_events(qspec, 2, q.reps, qlaunch);
		q.steady_us = time_steady(decode, Ra, decode ? std::max(1, 32 / Ra) : 1, qlaunch);
		q.steady_kind = decode ? "graph" : "loop";
		q.bytes = (double)a_elems * 3.0 + (double)a_rows * 4.0;
		csv_row(q);
	}
	for (auto *p : rs)
		delete p;
	for (auto *p : ds)
		delete p;
	CK(cudaFree(A));
	CK(cudaFree(out));
	if (out8)
		CK(cudaFree(out8));
	if (a.workspace)
		CK(cudaFree(a.workspace));
	if (a8) {
		CK(cudaFree(Aq));
		CK(cudaFree(As));
	}
	if (f8) {
		CK(cudaFree(Aq8));
		CK(cudaFree(Aqs));
	}
}

/* --only quant: the layer's quantizer of the latent rows (k3_gemm_quantize_e4m3_rows(), K = 3584)
 * at T = 1 .. 16K tokens, each T three times back to back: the default kernel (`e4m3_quant,latent`,
 * NVTX "k3sim op=quant tokens=<T> width=3584 dtype=fp8 group=0", the op the layer announces), then
 * the one-pass kernel (K3_QUANT_E4M3=reg: `latent_reg`, NVTX "k3-bench quant-reg op=...") and the
 * two-pass one (=twopass: `latent_twopass`, "k3-bench quant-twopass op=..."), neither a model op.
 * Inputs rotated over sets of ROTATE_BYTES in all; steady: the sets back to back in a CUDA graph
 * (T <= 256) or a stream loop. */
void bench_quant(const options &o)
{
	const int K = K3_LATENT;
	const int Ts[] = { 1, 16, 64, 256, 1024, 4096, 16384 };
	for (int T : Ts) {
		const size_t elems = (size_t)T * K;
		const int R = (int)std::min<size_t>(64, std::max<size_t>(2, ROTATE_BYTES / (elems * 3)));
		uint16_t *A = (uint16_t *)dalloc((size_t)R * elems * 2);
		uint8_t *Q = (uint8_t *)dalloc((size_t)R * elems);
		float *S = (float *)dalloc((size_t)R * T * sizeof(float));
		fill_bf16(A, (size_t)R * elems, -1, 1);
		const bool decode = T <= 256;
		static const char *const kinds[] = { nullptr, "reg", "twopass" };
		for (int v = 0; v < 3; v++) {
			if (v)
				setenv("K3_QUANT_E4M3", kinds[v], 1);
			row q;
			q.op = "e4m3_quant", q.variant = v == 0 ? "latent" : v == 1 ? "latent_reg" : "latent_twopass";
			snprintf(q.shape, sizeof q.shape, "rows=%d k=%d", T, K);
			char spec[128];
			snprintf(spec, sizeof spec, "%s%s op=quant tokens=%d width=%d dtype=fp8 group=0",
				 v ? "k3-bench quant-" : "k3sim", v ? kinds[v] : "", T, K);
			q.spec = spec;
			q.reps = o.reps;
			auto launch = [&](int i) {
				const size_t at = (size_t)(i % R);
				KOK(k3_gemm_quantize_e4m3_rows(A + at * elems, T, K, Q + at * elems, S + at * T, g_stream));
			};
			q.t = time_events(spec, 2, q.reps, launch);
			q.steady_us = time_steady(decode, R, std::max(1, 32 / R), launch);
			q.steady_kind = decode ? "graph" : "loop";
			q.bytes = (double)elems * 3.0 + (double)T * 4.0;
			csv_row(q);
			if (v)
				unsetenv("K3_QUANT_E4M3");
		}
		CK(cudaFree(A));
		CK(cudaFree(Q));
		CK(cudaFree(S));
	}
}

/* A dense projection of the layer (BF16 weights) at M tokens. K3_BENCH_GEMM_AB="VAR=VALUE ...
 * [;...]": each row at up to 256 tokens again right after it with each set of settings (variants
 * NAME-ab, NAME-ab2, ...; spec "k3-bench ab op=...": outside the ops a preset is fitted on): A/B
 * in one process. */
void dense_point(const options &o, const char *name, int M, int N, int K, enum k3_epilogue epi, int n_split,
		 enum k3_gemm_path gpath = K3_GEMM_AUTO, bool ab = false);

void dense_point_ab(const options &o, const char *name, int M, int N, int K, enum k3_epilogue epi, int n_split)
{
	dense_point(o, name, M, N, K, epi, n_split);
	static const std::vector<env_set> sets = env_settings("K3_BENCH_GEMM_AB");
	if (M > 256)
		return;
	for (size_t v = 0; v < sets.size(); v++) {
		const std::string vn = ab_name(name, v);
		with_env(sets[v], [&] { dense_point(o, vn.c_str(), M, N, K, epi, n_split, K3_GEMM_AUTO, true); });
	}
}

void dense_point(const options &o, const char *name, int M, int N, int K, enum k3_epilogue epi, int n_split,
		 enum k3_gemm_path gpath, bool ab)
{
	const size_t wn = (size_t)N * K;
	/* The weights rotate over WPOOL_BYTES (up to 64 sets; K3_BENCH_WPOOL_MB sets another size):
	 * in a step a weight's pages are cold too, not only its bytes, and a GEMM reading one set
	 * again and again runs faster than it will there. H200, 2026-12-01y call 2, with a cold L2:
	 * gemm m=1 n=36864 k=7168 171 us over 512 MiB of sets, 189 us over 16 GiB, 187-190 us in the
	 * K3 slice (68 GB of weights); n=55296 k=1536 49 / 56 / 54 us; n=12288 k=7168 64 / 69 / 65;
	 * weights up to 64 MB the same either way. */
	const char *wp = getenv("K3_BENCH_WPOOL_MB");
	const size_t pool = wp && atol(wp) > 0 ? (size_t)atol(wp) << 20 : WPOOL_BYTES;
	const int Rw = (int)std::min<size_t>(64, std::max<size_t>(1, pool / (wn * 2)));
	uint16_t *W = (uint16_t *)dalloc((size_t)Rw * wn * 2);
	fill_bf16(W, (size_t)Rw * wn, -0.05f, 0.05f);
	uint16_t *X = (uint16_t *)dalloc((size_t)M * K * 2);
	fill_bf16(X, (size_t)M * K, -1, 1);
	const int width = epi == K3_EPI_GLU ? N / 2 : epi == K3_EPI_SPLIT ? N - n_split : N;
	uint16_t *out = (uint16_t *)dalloc((size_t)M * width * 2 + 16);
	float *f32 = (float *)dalloc((size_t)M * (n_split ? n_split : 1) * 4);
	uint16_t *addend = nullptr;
	k3_gemm_args a = {};
	a.rows = M, a.N = N, a.K = K, a.a = X, a.epi = epi, a.n_split = n_split, a.beta_gate = 4.0f, a.beta_up = 25.0f;
	a.path = gpath;
	a.out = out, a.out_f32 = f32, a.w_dtype = K3_W_BF16;
	if (epi == K3_EPI_ADD) {
		addend = (uint16_t *)dalloc((size_t)M * N * 2);
		fill_bf16(addend, (size_t)M * N, -1, 1);
		a.addend = addend;
	}
	size_t ws = 0;
	KOK(k3_gemm_workspace_bytes(&a, &ws));
	a.workspace = ws ? dalloc(ws) : nullptr, a.workspace_bytes = ws;
	auto launch = [&](int i) {
		k3_gemm_args x = a;
		x.w = W + (size_t)(i % Rw) * wn;
		KOK(k3_gemm(&x, g_stream));
	};
	const bool decode = M <= 256;
	row r;
	r.op = "gemm", r.variant = name;
	snprintf(r.shape, sizeof r.shape, "m=%d n=%d k=%d %s", M, N, K, path_name(k3_gemm_path_for(&a)));
	char spec[128];
	snprintf(spec, sizeof spec, "%s=gemm m=%d n=%d k=%d dtype=bf16",
		 ab ? "k3-bench ab op" : gpath == K3_GEMM_TILED_MMA ? "k3-bench tiled-mma op" : "k3sim op", M, N, K);
	r.spec = spec;
	r.reps = decode ? o.reps : std::max(3, o.reps / 4);
	r.t = time_events(spec, 2, r.reps, launch);
	r.steady_us = time_steady(decode, Rw, decode ? std::max(1, 32 / Rw) : 1, launch);
	r.steady_kind = decode ? "graph" : "loop";
	r.bytes = (double)wn * 2 + (double)M * K * 2 + (double)M * N * 2;
	r.flops = 2.0 * M * (double)N * K;
	if (!decode || M >= 64)
		r.ref_us = cublas_us(M, N, K, std::max(3, o.reps / 4));
	csv_row(r);
	CK(cudaFree(W));
	CK(cudaFree(X));
	CK(cudaFree(out));
	CK(cudaFree(f32));
	if (addend)
		CK(cudaFree(addend));
	if (a.workspace)
		CK(cudaFree(a.workspace));
}

void bench_gemm(const options &o)
{
	std::vector<int> Ms = o.quick ? std::vector<int>{ 1, 64, 4096 } : std::vector<int>{ 1, 16, 64, 256, 4096, 16384 };
	/* K3_BENCH_GEMM_M=1,16: only these token counts (A/B runs of the decode rows). */
	if (const char *e = getenv("K3_BENCH_GEMM_M")) {
		Ms.clear();
		for (const char *q = e;; q++) {
			char *end;
			const long m = strtol(q, &end, 10);
			if (end == q || m < 1 || m > 1 << 20 || (*end && *end != ',')) {
				fprintf(stderr, "k3-bench: K3_BENCH_GEMM_M: a comma-separated list of token counts, not '%s'\n", e);
				exit(2);
			}
			Ms.push_back((int)m);
			q = end;
			if (!*q)
				break;
		}
	}
	for (int M : Ms) {
		dense_point_ab(o, "router_down", M, K3_EXPERTS + K3_LATENT, K3_HIDDEN, K3_EPI_SPLIT, K3_EXPERTS);
		dense_point_ab(o, "up_add", M, K3_HIDDEN, K3_LATENT, K3_EPI_ADD, 0);
		dense_point_ab(o, "shared_w13", M, 2 * K3_SHARED_INTER, K3_HIDDEN, K3_EPI_GLU, 0);
		dense_point_ab(o, "shared_w2", M, K3_HIDDEN, K3_SHARED_INTER, K3_EPI_BF16, 0);
		/* The attention projections of the slice (KDA: q|k|v, output gate, beta, o_proj; Gated
		 * MLA: q_a, q_b with W_UK folded in, kv_a), so that a preset calibrated on this
		 * capture knows every dense GEMM shape of a K3 layer. */
		dense_point_ab(o, "kda_qkv", M, 3 * 12288, K3_HIDDEN, K3_EPI_BF16, 0);
		dense_point_ab(o, "kda_gate", M, 12288, K3_HIDDEN, K3_EPI_BF16, 0);
		dense_point_ab(o, "kda_beta", M, 96, K3_HIDDEN, K3_EPI_BF16, 0);
		dense_point_ab(o, "o_proj", M, K3_HIDDEN, 12288, K3_EPI_BF16, 0);
		dense_point_ab(o, "mla_q_a", M, 1536, K3_HIDDEN, K3_EPI_BF16, 0);
		dense_point_ab(o, "mla_q_b", M, 96 * 576, 1536, K3_EPI_BF16, 0);
		dense_point_ab(o, "mla_kv_a", M, 576, K3_HIDDEN, K3_EPI_BF16, 0);
		if (M >= 256) {
			/* The materialized prefill's q_b (192 a head) and kv_b expansion (k_nope | v). */
			dense_point_ab(o, "mla_q_b_pre", M, 96 * MLA_QK_HEAD, 1536, K3_EPI_BF16, 0);
			dense_point_ab(o, "mla_kv_b", M, 96 * (MLA_QK_NOPE + MLA_V_HEAD), MLA_LATENT, K3_EPI_BF16, 0);
		}
	}
	/* The mma.sync tiled kernel beside the default (wgmma on sm_90a) at prefill size; without
	 * the wgmma kernel the default rows are the mma.sync kernel already. */
	if (g_wgmma) {
		dense_point(o, "shared_w13", 4096, 2 * K3_SHARED_INTER, K3_HIDDEN, K3_EPI_GLU, 0, K3_GEMM_TILED_MMA);
		dense_point(o, "kda_qkv", 4096, 3 * 12288, K3_HIDDEN, K3_EPI_BF16, 0, K3_GEMM_TILED_MMA);
	}
}

/* --only wgmma_peak: k3_wgmma_peak.h's table, % of 4096 FLOP/clk/SM (H100/H200 dense BF16). */
void bench_wgmma_peak(const options &o)
{
	static const char *const mode[] = { "wait1", "wait0", "handshake" };
	int n = 0;
	const k3_wgmma_peak_cfg *t = k3_wgmma_peak_table(&n);
	printf("wgmma_peak: N wgs mb A rhythm | ms TFLOP/s | cycles/CTA MHz FLOP/clk/SM %%of4096\n");
	for (int i = 0; i < n; i++) {
		k3_wgmma_peak_result r = {};
		const int rc = k3_wgmma_peak_run(&t[i], std::max(o.reps, 5), &r);
		if (rc) {
			printf("wgmma_peak: n=%d wgs=%d mb=%d %s %s: not run (%d)\n", t[i].n, t[i].wgs, t[i].mb,
			       t[i].rs ? "RS" : "SS", mode[t[i].mode], rc);
			continue;
		}
		printf("wgmma_peak: n=%3d wgs=%d mb=%d %s %-9s | %7.3f %6.1f | %9.0f %5.0f %6.0f %5.1f%%\n", t[i].n,
		       t[i].wgs, t[i].mb, t[i].rs ? "RS" : "SS", mode[t[i].mode], r.ms, r.flops / r.ms * 1e-9, r.cycles,
		       r.clock_mhz, r.flop_per_clk_sm, r.flop_per_clk_sm / 40.96);
		fflush(stdout);
	}
}

/* --expert-act e4m3: the layer's E4M3 form of an MXFP4 expert point (nothing otherwise). */
void expert_point_e4m3(const options &o, experts &w, int T, bool glu, bool decode, int R)
{
	if (!o.expert_e4m3 || w.dt != K3_W_MXFP4)
		return;
	g_f8_layer = true;
	expert_point(o, w, T, glu, decode, R);
	g_f8_layer = false;
}

/* --only moe_decode: the MXFP4 experts at decode sizes (B = 1, 16, 64, 256; --quick 1, 64), w13
 * then w2, each point three ways back to back and then again in the other order (the clock under
 * the power cap moves with what ran before): BF16 activations (`mxfp4_*`, the default gemv), the
 * layer's E4M3 form (`mxfp4f8_*`: the FP8 wgmma kernel, the default), that form through the
 * opt-in E4M3 gemv (K3_GEMM_E4M3_GEMV=1: rows `f8gemv_*`, NVTX "k3-bench gemv-f8gemv op=...") and
 * BF16 activations on the tiled wgmma path (K3_GEMM_GROUPED_GEMV=0: rows `bf16wg_*`). Four ways
 * back to back, then in the other order. Needs the wgmma kernel (the FP8-word layout's kernel). */
void bench_moe_decode(const options &o)
{
	g_decode_wg = true;
	for (int glu = 1; glu >= 0; glu--) {
		experts w(K3_EXPERTS, glu ? 2 * K3_EXPERT_INTER : K3_LATENT, glu ? K3_LATENT : K3_EXPERT_INTER, K3_W_MXFP4);
		for (int B : o.quick ? std::vector<int>{ 1, 64 } : std::vector<int>{ 1, 16, 64, 256 })
			for (int pass = 0; pass < 2; pass++)
				for (int i = 0; i < 4; i++) {
					const int v = pass ? 3 - i : i;
					if (v == 0) {
						expert_point(o, w, B, glu, true, 8);
					} else if (v == 3) { /* BF16 activations on the tiled wgmma path */
						setenv("K3_GEMM_GROUPED_GEMV", "0", 1);
						expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "bf16wg");
						unsetenv("K3_GEMM_GROUPED_GEMV");
					} else if (v == 1) {
						g_f8_layer = true;
						expert_point(o, w, B, glu, true, 8);
						g_f8_layer = false;
					} else {
						g_f8_layer = true;
						setenv("K3_GEMM_E4M3_GEMV", "1", 1);
						expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f8gemv");
						unsetenv("K3_GEMM_E4M3_GEMV");
						g_f8_layer = false;
					}
				}
	}
}

/* --only moe_prefill: the grouped prefill rows alone, each with and without clusters
 * (K3_BENCH_MOE_VARIANT=bf16_w13 etc. in the environment: that variant only, e.g. under ncu; a
 * prefix names several: "mxfp4" the MXFP4 rows).
 * K3_BENCH_WG_KERNELS=q,wide,... : instead, each row once per named kernel (K3_GEMM_WG_KERNEL),
 * back to back, in clusters as the kernel picks them. */
void bench_moe_prefill(const options &o)
{
	const char *only = getenv("K3_BENCH_MOE_VARIANT");
	const char *kernels = getenv("K3_BENCH_WG_KERNELS");
	std::vector<std::string> ks;
	for (const char *c = kernels; c && *c;) {
		const char *e = strchr(c, ',');
		const std::string k = e ? std::string(c, (size_t)(e - c)) : std::string(c);
		if (!k.empty())
			ks.push_back(k);
		c = e ? e + 1 : nullptr;
	}
	for (int dti = 0; dti < 2; dti++) {
		const enum k3_wdtype dt = dti ? K3_W_MXFP4 : K3_W_BF16;
		for (int glu = 1; glu >= 0; glu--) {
			char name[16];
			snprintf(name, sizeof name, "%s_%s", dti ? "mxfp4" : "bf16", glu ? "w13" : "w2");
			if (only && *only && strncmp(only, name, strlen(only)) != 0) /* a name or its prefix ("mxfp4") */
				continue;
			experts w(K3_EXPERTS, glu ? 2 * K3_EXPERT_INTER : K3_LATENT, glu ? K3_LATENT : K3_EXPERT_INTER, dt);
			std::vector<int> Ts = o.quick ? std::vector<int>{ 16384 } : std::vector<int>{ 16384, 4096 };
			const char *te = getenv("K3_BENCH_MOE_T"); /* one T instead (ncu of a 4K launch) */
			if (te && *te) {
				char *end = nullptr;
				const long t = strtol(te, &end, 10);
				if (*end != '\0' || t < 1 || t > (1 << 20)) {
					fprintf(stderr, "k3-bench: K3_BENCH_MOE_T=%s: not a token count (1 .. 1048576)\n", te);
					exit(2);
				}
				Ts = { (int)t };
			}
			for (int T : Ts) {
				if (!ks.empty()) {
					for (const std::string &k : ks)
						if (k.rfind("wide2rp", 0) == 0 || k.rfind("wide2rq", 0) == 0)
							w.wg_layout();
					for (const std::string &k : ks) {
						/* "wide2f8" + a suffix: K3_GEMM_F8_SETS's value ("s" and the value:
						 * "s2" 2, "s4" 4, "s2p" 2p, ...; "m2", "m4", "m4k" as they are;
						 * launch_f8() rejects another) */
						g_wg_f8 = k.rfind("wide2f8", 0) == 0;
						if (g_wg_f8)
							unsetenv("K3_GEMM_WG_KERNEL");
						else
							setenv("K3_GEMM_WG_KERNEL", k.c_str(), 1);
						const char *sets = k.c_str() + 7;
						if (g_wg_f8 && *sets)
							setenv("K3_GEMM_F8_SETS", *sets == 's' ? sets + 1 : sets, 1);
						else
							unsetenv("K3_GEMM_F8_SETS");
						g_wg_kernel = k;
						expert_point(o, w, T, glu, false, 1);
					}
					unsetenv("K3_GEMM_WG_KERNEL");
					g_wg_kernel.clear();
					g_wg_f8 = false;
					continue;
				}
				expert_point(o, w, T, glu, false, 1);
				expert_point(o, w, T, glu, false, 1, K3_GEMM_AUTO, false, true);
				expert_point_e4m3(o, w, T, glu, false, 1);
			}
		}
	}
}

void bench_moe(const options &o)
{
	g_decode_wg = true;
	for (int dti = 0; dti < 2; dti++) {
		const enum k3_wdtype dt = dti ? K3_W_BF16 : K3_W_MXFP4;
		if (dt == K3_W_BF16 && o.quick)
			continue; /* 59 GB of BF16 experts: the full grid only */
		{
			experts w13(K3_EXPERTS, 2 * K3_EXPERT_INTER, K3_LATENT, dt);
			for (int B : o.quick ? std::vector<int>{ 1, 64 } : std::vector<int>{ 1, 16, 64, 256 }) {
				expert_point(o, w13, B, true, true, 8);
				expert_point_e4m3(o, w13, B, true, true, 8);
			}
			for (int T : o.quick ? std::vector<int>{ 4096 } : std::vector<int>{ 4096, 16384 }) {
				expert_point(o, w13, T, true, false, 1);
				expert_point_e4m3(o, w13, T, true, false, 1);
			}
			if (g_wgmma)
				expert_point(o, w13, 4096, true, false, 1, K3_GEMM_TILED_MMA);
		}
		{
			experts w2(K3_EXPERTS, K3_LATENT, K3_EXPERT_INTER, dt);
			for (int B : o.quick ? std::vector<int>{ 1, 64 } : std::vector<int>{ 1, 16, 64, 256 }) {
				expert_point(o, w2, B, false, true, 8);
				expert_point_e4m3(o, w2, B, false, true, 8);
			}
			for (int T : o.quick ? std::vector<int>{ 4096 } : std::vector<int>{ 4096, 16384 }) {
				expert_point(o, w2, T, false, false, 1);
				expert_point_e4m3(o, w2, T, false, false, 1);
			}
			if (g_wgmma)
				expert_point(o, w2, 4096, false, false, 1, K3_GEMM_TILED_MMA);
		}
	}
}

/* Token counts of the ops of their own kind (routing, combine, AttnRes, ShortConv): from a decode
 * step of one request to a 16K prefill. k3sim calibrate trains on the powers of 4 (1, 4, 16, 64,
 * 256, 1024, 4096, 16384) and holds the others out (2, 32, 512, 8192). */
std::vector<int> token_sizes(const options &o)
{
	if (o.quick)
		return { 64, 4096 };
	return { 1, 2, 4, 16, 32, 64, 256, 512, 1024, 4096, 8192, 16384 };
}

/* --only gemv: the MXFP4 expert gemv at decode (B = 1, 16, 64, 256; w13 and w2) with BF16
 * activations, side by side in one process: the default kernel (gemv_f16_kernel on the FP16-pair
 * layout, its first pass included: mxfp4_*), gemv_lean_kernel, the default before 2026-12-01zb
 * (K3_GEMV_FP4=lean: mxfp4lean_*); at B <= 16 gemv_f16_kernel launched without programmatic
 * dependent launch (K3_GEMV_F16_PDL=0: f16pdl0_*), at B = 1 with 2 k slices a CTA
 * (K3_GEMV_KSPLIT=2: f16ks2_*), at B = 256 with 16-token passes (K3_GEMV_F16_NT=2: f16nt2_*),
 * at every B without the L2 256-byte prefetch of the weight loads (K3_GEMV_F16_L2PF=0: f16nopf_*;
 * 2026-12-01zb call 2 ran it as the opt-in f16pf_* rows and these as the default rows).
 * K3_BENCH_GEMV_DEFAULT=1: the default kernel's rows alone (mxfp4_*; e.g. duty-cycled for power).
 * K3_BENCH_GEMV_ALL=1 in the environment adds the older rows: lean without k slices or with 16
 * tokens a pass above 4 rows a group (mxfp4ks1_*, mxfp4w4_*), K3_GEMV_FP4=regs (mxfp4regs_*),
 * the old grid (mxfp4old_*), MXFP8 activations (mxfp4a8_*, mxfp4a8old_*) and the quantizer;
 * K3_BENCH_GEMV_BULK=1 the bulk-copy rows (mxfp4b_*, mxfp4a8b_*). At B <= 64 (where the fused
 * kernel runs) its launch knobs back to back, in pairs that alternate (order effects):
 * K3_GEMV_F16_FPDL=1 (`f16fpdl_*`, `f16fpdlb_*`: programmatic dependent launch), 8 warps by a
 * plain launch (`f16w8pl0_*`, `f16w8pl0b_*`: the fused default before 2026-12-02k),
 * K3_GEMV_F16_HPF=1, 2 (`f16hpf1_*`, `f16hpf2_*`: the head prefetch; call 2 also ran
 * `f16hpf2b_*` and with PDL `f16hpf2pdl_*`), K3_GEMV_F16_PROW=4 (`f16prow4_*`: 4 rows a pass, a quarter of the shared memory)
 * and at B = 1 =1 (`f16prow1_*`; with 4 warps a CTA `f16w4r1_*`; call 1 of 2026-12-02k ran 4 and 2
 * warps a CTA with 8 / 4 rows a pass: 41-49 % at w2 B = 1, slower), K3_GEMV_F16_AFIRST=1
 * (`f16afirst_*`, with PDL `f16afpdl_*`: the activation copies before the first weight loads),
 * then PDL and the plain launch once more (`f16fpdlc_*`, `f16w8pl0c_*`). Since call 2 PDL is the
 * default at B = 1 (`mxfp4_*` there). Every decode row also runs back to back over its routings beside a copy of the same
 * bytes (gemv_b2b(): rows `b2b`, `copy_b2b`); K3_BENCH_GEMV_TRACE=path: the fused kernel's per-CTA
 * trace at B = 1 (gemv_trace()). */
void bench_gemv(const options &o)
{
	g_decode_wg = false; /* the gemv's own rows: no tile layout (the gemv whatever the rows) */
	const bool bulk = getenv("K3_BENCH_GEMV_BULK") != nullptr, all = getenv("K3_BENCH_GEMV_ALL") != nullptr;
	const char *only_glu = getenv("K3_BENCH_GEMV_GLU"); /* 1: w13 alone, 0: w2 alone (profiles) */
	for (int glu = 1; glu >= 0; glu--) {
		if (only_glu && atoi(only_glu) != glu)
			continue;
		experts w(K3_EXPERTS, glu ? 2 * K3_EXPERT_INTER : K3_LATENT, glu ? K3_LATENT : K3_EXPERT_INTER, K3_W_MXFP4);
		for (int B : o.quick ? std::vector<int>{ 1, 64 } : std::vector<int>{ 1, 16, 64, 256 }) {
			expert_point(o, w, B, glu, true, 8);
			if (getenv("K3_BENCH_GEMV_DEFAULT")) /* the default kernel's rows alone (e.g. duty-cycled power) */
				continue;
			if (B <= 64) { /* the fused kernel's launch knobs where it runs (<= 2 rows a group), back to back */
				/* name, K3_GEMV_F16_WPC, _FPDL, _HPF, _PROW, _AFIRST ("-": unset); pairs alternate to see
				 * order effects (the clock under the power cap moves with what ran before) */
				static const char *const kn[][6] = {
					{ "f16fpdl", "8", "1", "0", "-", "0" },   { "f16w8pl0", "8", "0", "0", "-", "0" },
					{ "f16hpf1", "8", "0", "1", "-", "0" },   { "f16hpf2", "8", "0", "2", "-", "0" },
					{ "f16prow4", "8", "0", "0", "4", "0" },  { "f16prow1", "8", "0", "0", "1", "0" },
					{ "f16w4r1", "4", "0", "0", "1", "0" },   { "f16fpdlb", "8", "1", "0", "-", "0" },
					{ "f16w8pl0b", "8", "0", "0", "-", "0" }, { "f16afirst", "8", "0", "0", "-", "1" },
					{ "f16afpdl", "8", "1", "0", "-", "1" },  { "f16fpdlc", "8", "1", "0", "-", "0" },
					{ "f16w8pl0c", "8", "0", "0", "-", "0" }
				};
				static const char *const ev[5] = { "K3_GEMV_F16_WPC", "K3_GEMV_F16_FPDL", "K3_GEMV_F16_HPF",
								   "K3_GEMV_F16_PROW", "K3_GEMV_F16_AFIRST" };
				std::string old[5];
				bool had[5];
				for (int v = 0; v < 5; v++)
					had[v] = getenv(ev[v]) != nullptr, old[v] = had[v] ? getenv(ev[v]) : "";
				for (const auto &k : kn) {
					if (B > 1 && (!strcmp(k[4], "1"))) /* one row a pass: B = 1 only (one row a group) */
						continue;
					for (int v = 0; v < 5; v++)
						if (strcmp(k[1 + v], "-"))
							setenv(ev[v], k[1 + v], 1);
						else
							unsetenv(ev[v]);
					expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, k[0]);
				}
				for (int v = 0; v < 5; v++)
					if (had[v])
						setenv(ev[v], old[v].c_str(), 1);
					else
						unsetenv(ev[v]);
			}
			/* The persistent gemv (gemv_f16p_kernel, opt-in: K3_GEMV_F16_PERSIST=1: `f16pers_*`), back
			 * to back. (2026-12-02i's calls ran it as the default at B = 1, `mxfp4_*` there, beside
			 * the default before as `f16old_*`.) */
			setenv("K3_GEMV_F16_PERSIST", "1", 1);
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f16pers");
			/* the default before 2026-12-02b, back to back: the first pass (f16act_kernel), then
			 * the gemv by programmatic dependent launch */
			setenv("K3_GEMV_F16_PERSIST", "0", 1);
			setenv("K3_GEMV_F16_FUSE", "0", 1);
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f16twok");
			/* and the fused kernel where the default is the two-kernel path (above 2 rows a group) */
			setenv("K3_GEMV_F16_FUSE", "1", 1);
			if (B >= 256)
				expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f16fused");
			unsetenv("K3_GEMV_F16_FUSE");
			unsetenv("K3_GEMV_F16_PERSIST");
			setenv("K3_GEMV_FP4", "lean", 1); /* gemv_lean_kernel on the standard layout */
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "mxfp4lean");
			unsetenv("K3_GEMV_FP4");
			if (!all && !bulk)
				continue;
			if (B <= 16) { /* without programmatic dependent launch: the first pass, then the gemv */
				setenv("K3_GEMV_F16_FUSE", "0", 1);
				setenv("K3_GEMV_F16_PDL", "0", 1);
				expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f16pdl0");
				unsetenv("K3_GEMV_F16_PDL");
				unsetenv("K3_GEMV_F16_FUSE");
			}
			/* the weight loads without the L2 256-byte prefetch (K3_GEMV_F16_L2PF=0) */
			setenv("K3_GEMV_F16_L2PF", "0", 1);
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f16nopf");
			unsetenv("K3_GEMV_F16_L2PF");
			if (B == 1) { /* 2 k slices a CTA (the two-kernel path) */
				setenv("K3_GEMV_KSPLIT", "2", 1);
				expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f16ks2");
				unsetenv("K3_GEMV_KSPLIT");
			}
			if (B >= 256) { /* 16-token passes, the second tile only where a group has more than 8 rows left */
				setenv("K3_GEMV_F16_NT", "2", 1);
				expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "f16nt2");
				unsetenv("K3_GEMV_F16_NT");
			}
			if (!all && !bulk)
				continue;
			setenv("K3_GEMV_FP4", "lean", 1);
			setenv(B <= 16 ? "K3_GEMV_KSPLIT" : "K3_GEMV_WIDE", B <= 16 ? "1" : "4", 1);
			/* lean without k slices (B <= 16) or with 16 tokens a pass above 4 rows a group */
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, B <= 16 ? "mxfp4ks1" : "mxfp4w4");
			unsetenv("K3_GEMV_KSPLIT");
			unsetenv("K3_GEMV_WIDE");
			setenv("K3_GEMV_FP4", "regs", 1); /* the register-pipelined gemv_kernel, back to back */
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "mxfp4regs");
			setenv("K3_GEMV_GRID", "full", 1); /* and on one grid row a group: the default before 01x */
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, false, "mxfp4old");
			unsetenv("K3_GEMV_FP4");
			unsetenv("K3_GEMV_GRID");
			if (bulk) {
				setenv("K3_GEMV_FP4", "bulk", 1);
				expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, false, false, true);
				unsetenv("K3_GEMV_FP4");
			}
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, true);
			setenv("K3_GEMV_GRID", "full", 1);
			expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, true, false, false, "mxfp4a8old");
			unsetenv("K3_GEMV_GRID");
			if (bulk) {
				setenv("K3_GEMV8_PIPE", "bulk", 1);
				expert_point(o, w, B, glu, true, 8, K3_GEMM_AUTO, true, false, true);
				unsetenv("K3_GEMV8_PIPE");
			}
		}
	}
}

/* Routing + grouping, and the combine + latent norm (--only route: these alone). */
void bench_route(const options &o)
{
	for (int T : token_sizes(o)) {
		const int E = K3_EXPERTS, K = K3_TOPK;
		const size_t TK = (size_t)T * K;
		float *logits = (float *)dalloc((size_t)T * E * 4), *bias = (float *)dalloc(E * 4);
		fill_f32(logits, (size_t)T * E, -4, 4);
		fill_f32(bias, E, -0.01f, 0.01f);
		moe_route_args r = {};
		r.tokens = T, r.experts = E, r.topk = K, r.scaling = 1.0f, r.logits = logits, r.logits_stride = E, r.bias = bias;
		r.topk_ids = (int32_t *)dalloc(TK * 4), r.topk_weights = (float *)dalloc(TK * 4);
		r.off = (int32_t *)dalloc((E + 1) * 4), r.tile_off = (int32_t *)dalloc((E + 1) * 4);
		r.touched = (int32_t *)dalloc(E * 4), r.n_touched = (int32_t *)dalloc(4);
		r.row_token = (int32_t *)dalloc(TK * 4), r.row_weight = (float *)dalloc(TK * 4);
		r.row_of = (int32_t *)dalloc(TK * 4);
		r.workspace_bytes = moe_route_workspace_bytes(T, E), r.workspace = dalloc(r.workspace_bytes);
		row w;
		w.op = "moe_route", w.variant = "topk_group";
		snprintf(w.shape, sizeof w.shape, "tokens=%d experts=%d topk=%d", T, E, K);
		char spec[128];
		snprintf(spec, sizeof spec, "k3sim op=route tokens=%d experts=%d top_k=%d dtype=fp32", T, E, K);
		w.spec = spec, w.reps = o.reps;
		w.t = time_events(spec, 2, o.reps, [&](int) { KOK(moe_route(&r, g_stream)); }, true);
		w.steady_us = time_steady(T <= 256, 4, 8, [&](int) { KOK(moe_route(&r, g_stream)); });
		w.steady_kind = T <= 256 ? "graph" : "loop";
		w.bytes = (double)T * E * 4 + TK * 24.0;
		csv_row(w);
		/* combine reads K grouped rows of 3584 per token (the grouping above). */
		uint16_t *y = (uint16_t *)dalloc(TK * K3_LATENT * 2), *z = (uint16_t *)dalloc((size_t)T * K3_LATENT * 2);
		uint16_t *nw = (uint16_t *)dalloc(K3_LATENT * 2);
		fill_bf16(y, TK * K3_LATENT, -1, 1);
		fill_bf16(nw, K3_LATENT, 0.5f, 1.5f);
		moe_combine_args c = {};
		c.tokens = T, c.topk = K, c.width = K3_LATENT, c.eps = 1e-6f, c.y = y, c.row_of = r.row_of, c.norm_w = nw, c.out = z;
		row cw;
		cw.op = "moe_combine", cw.variant = "sum_norm";
		snprintf(cw.shape, sizeof cw.shape, "tokens=%d topk=%d width=%d", T, K, K3_LATENT);
		snprintf(spec, sizeof spec, "k3sim op=combine tokens=%d width=%d top_k=%d dtype=bf16", T, K3_LATENT, K);
		cw.spec = spec, cw.reps = o.reps;
		cw.t = time_events(spec, 2, o.reps, [&](int) { KOK(moe_combine(&c, g_stream)); }, true);
		cw.steady_us = time_steady(T <= 256, 4, 8, [&](int) { KOK(moe_combine(&c, g_stream)); });
		cw.steady_kind = T <= 256 ? "graph" : "loop";
		cw.bytes = (double)TK * K3_LATENT * 2 + (double)T * K3_LATENT * 2;
		csv_row(cw);
		for (void *p : { (void *)logits, (void *)bias, (void *)r.topk_ids, (void *)r.topk_weights, (void *)r.off,
				 (void *)r.tile_off, (void *)r.touched, (void *)r.n_touched, (void *)r.row_token,
				 (void *)r.row_weight, (void *)r.row_of, r.workspace, (void *)y, (void *)z, (void *)nw })
			CK(cudaFree(p));
	}
}

/* ---- AttnRes ------------------------------------------------------------------ */

/* Three series, as the slice runs them: 9 sources + the partial-sum update at K3's width (every
 * sublayer but the first), 9 sources without it (the first), and one source at 1536 (MLA's q_a
 * RMSNorm: AttnRes of one source). */
struct attnres_series {
	const char *variant;
	int dim, sources;
	bool delta;
};

void bench_attnres(const options &o)
{
	static const attnres_series series[] = { { "block9_delta", K3_HIDDEN, 9, true },
						 { "block9", K3_HIDDEN, 9, false },
						 { "rmsnorm1536", 1536, 1, false } };
	for (const attnres_series &sr : series)
		for (int T : token_sizes(o)) {
			const int D = sr.dim, n = sr.sources;
			const size_t e = (size_t)T * D, set = e * 2 * (n + 3);
			const int R = (int)std::min<size_t>(16, std::max<size_t>(1, (ROTATE_BYTES + set - 1) / set));
			uint16_t *buf = (uint16_t *)dalloc((size_t)R * set);
			fill_bf16(buf, (size_t)R * set / 2, -1, 1);
			uint16_t *vec = (uint16_t *)dalloc((size_t)3 * D * 2);
			fill_bf16(vec, D, -0.05f, 0.05f);
			fill_bf16(vec + D, 2 * (size_t)D, 0.5f, 1.5f);
			auto launch = [&](int i) {
				uint16_t *s = buf + (size_t)(i % R) * (set / 2);
				attnres_args a = {};
				a.tokens = T, a.dim = D, a.n_sources = n;
				for (int k = 0; k < n; k++)
					a.src[k] = s + (size_t)k * e;
				if (sr.delta)
					a.delta = s + (size_t)n * e, a.partial_out = s + (size_t)(n - 1) * e;
				a.query = vec, a.key_norm_w = nullptr, a.norm_w = vec + D, a.eps = 1e-6f;
				a.out = s + (size_t)(n + 1) * e;
				KOK(attnres(&a, g_stream));
			};
			row w;
			w.op = "attnres", w.variant = sr.variant;
			snprintf(w.shape, sizeof w.shape, "tokens=%d dim=%d sources=%d", T, D, n);
			char spec[128];
			/* reads the sources (+ delta), writes the output (+ the partial) */
			snprintf(spec, sizeof spec, "k3sim op=attnres tokens=%d dim=%d sources=%d delta=%d dtype=bf16", T, D, n,
				 sr.delta ? 1 : 0);
			w.spec = spec, w.reps = o.reps;
			w.t = time_events(spec, 2, o.reps, launch);
			w.steady_us = time_steady(T <= 256, R, std::max(1, 32 / R), launch);
			w.steady_kind = T <= 256 ? "graph" : "loop";
			w.bytes = (double)e * 2 * (n + 1 + (sr.delta ? 2 : 0));
			csv_row(w);
			CK(cudaFree(buf));
			CK(cudaFree(vec));
		}
}

/* ---- MLA decode's per-head value up-projection -------------------------------------- */

/* The slice's MLA decode value up-projection with the output gate: a grouped BF16-weight GEMM of
 * 96 heads (n = 128 values, k = 512 latent), group h holding row t H + h of every token t (read
 * and written in place through a_index / out_index), as kernels/slice/k3-slice.cu runs it. The
 * rows m = 96 T at T = 1, 16, 64, 256 (the slice's decode batches) are the held-out points of a
 * calibration; m = 4^k from 256 to 16384 (uneven heads: h m / 96 rows before head h) its training
 * points (k3sim calibrate trains GEMMs on m a power of 4), up to m = 65536 (683 rows a head, past
 * the 256 K3's decode gives). Weights and rows rotate over sets beyond L2. At m = 65536, after
 * --only gemm's rows, the first launch once read row indices upload() had not finished copying
 * (a cudaMemcpy on the legacy stream, this launch on the non-blocking g_stream) and ended in an
 * illegal address on the H100 (2026-12-06, round 06h; k3_upload.h). */
void bench_mla_uv(const options &o)
{
	const int H = 96, N = MLA_V_HEAD, K = MLA_LATENT;
	std::vector<int64_t> ms = { 96, 1536, 6144, 24576 };
	if (!o.quick)
		for (int64_t m = 256; m <= 65536; m *= 4)
			ms.push_back(m);
	std::sort(ms.begin(), ms.end());
	const size_t wset = (size_t)H * N * K * 2;
	const int Rw = (int)std::min<size_t>(8, std::max<size_t>(1, ROTATE_BYTES / wset));
	uint16_t *W = (uint16_t *)dalloc((size_t)Rw * wset);
	fill_bf16(W, (size_t)Rw * wset / 2, -0.05f, 0.05f);
	for (int64_t m : ms) {
		const int64_t T = (m + H - 1) / H; /* the attention rows: T x H, the last token's partly unused */
		const size_t aset = (size_t)T * H * K * 2, oset = (size_t)T * H * N * 2;
		const int R = (int)std::min<size_t>(8, std::max<size_t>(1, ROTATE_BYTES / (aset + 2 * oset)));
		uint16_t *A = (uint16_t *)dalloc((size_t)R * aset), *G = (uint16_t *)dalloc((size_t)R * oset);
		uint16_t *out = (uint16_t *)dalloc((size_t)R * oset);
		fill_bf16(A, (size_t)R * aset / 2, -1, 1);
		fill_bf16(G, (size_t)R * oset / 2, -1, 1);
		std::vector<int32_t> off(H + 1), toff(H + 1), touched, idx((size_t)m);
		int32_t ntiles = 0;
		for (int h = 0; h <= H; h++) {
			off[h] = (int32_t)((int64_t)h * m / H);
			if (h > 0)
				ntiles += (off[h] - off[h - 1] + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS;
			toff[h] = h == 0 ? 0 : ntiles;
		}
		for (int h = 0; h < H; h++) {
			if (off[h + 1] > off[h])
				touched.push_back(h);
			for (int32_t r = off[h]; r < off[h + 1]; r++)
				idx[r] = (r - off[h]) * H + h; /* token r - off[h] of head h */
		}
		const int n_touched = (int)touched.size();
		int32_t *d_off = upload(off), *d_toff = upload(toff), *d_touched = upload(touched);
		int32_t *d_nt = upload(std::vector<int32_t>{ n_touched }), *d_idx = upload(idx);
		k3_gemm_args a = {};
		a.rows = m, a.N = N, a.K = K, a.n_groups = H, a.off = d_off, a.tile_off = d_toff;
		a.touched = d_touched, a.n_touched = d_nt, a.a_index = d_idx, a.out_index = d_idx;
		a.w_dtype = K3_W_BF16, a.epi = K3_EPI_GATE;
		size_t ws = 0;
		KOK(k3_gemm_workspace_bytes(&a, &ws));
		a.workspace = ws ? dalloc(ws) : nullptr, a.workspace_bytes = ws;
		auto launch = [&](int i) {
			k3_gemm_args x = a;
			x.w = W + (size_t)(i % Rw) * (wset / 2);
			x.a = A + (size_t)(i % R) * (aset / 2);
			x.addend = G + (size_t)(i % R) * (oset / 2);
			x.out = out + (size_t)(i % R) * (oset / 2);
			KOK(k3_gemm(&x, g_stream));
		};
		row r;
		r.op = "grouped_gemm", r.variant = "mla_uv";
		snprintf(r.shape, sizeof r.shape, "m=%lld n=%d k=%d groups=%d touched=%d %s", (long long)m, N, K, H,
			 n_touched, path_name(k3_gemm_path_for(&a)));
		char spec[160];
		snprintf(spec, sizeof spec, "k3sim op=grouped_gemm m=%lld n=%d k=%d groups=%d touched=%d dtype=bf16",
			 (long long)m, N, K, H, n_touched);
		r.spec = spec, r.reps = o.reps;
		r.t = time_events(spec, 2, o.reps, launch);
		const bool small = m <= 24576;
		r.steady_us = time_steady(small, std::min(R, Rw), small ? std::max(1, 32 / std::min(R, Rw)) : 1, launch);
		r.steady_kind = small ? "graph" : "loop";
		r.bytes = (double)n_touched * N * K * 2 + (double)m * K * 2 + 2.0 * m * N * 2;
		r.flops = 2.0 * m * N * (double)K;
		csv_row(r);
		CK(cudaFree(A));
		CK(cudaFree(G));
		CK(cudaFree(out));
		for (int32_t *q : { d_off, d_toff, d_touched, d_nt, d_idx })
			CK(cudaFree(q));
		if (a.workspace)
			CK(cudaFree(a.workspace));
	}
	CK(cudaFree(W));
}

/* ---- KDA prefill ShortConv ------------------------------------------------------- */

/* The prefill ShortConv + SiLU of K3's KDA layers (q | k | v: 3 x 96 x 128 channels, one
 * sequence of T tokens, its state read and advanced), over rotating sets. */
void bench_short_conv(const options &o)
{
	const int C = 3 * 96 * 128;
	for (int T : token_sizes(o)) {
		const size_t e = (size_t)T * C, set = e * 2 * 2;
		const int R = (int)std::min<size_t>(16, std::max<size_t>(1, (ROTATE_BYTES + set - 1) / set));
		uint16_t *buf = (uint16_t *)dalloc((size_t)R * set);
		fill_bf16(buf, (size_t)R * set / 2, -1, 1);
		uint16_t *w = (uint16_t *)dalloc((size_t)C * K3_CONV_TAPS * 2);
		fill_bf16(w, (size_t)C * K3_CONV_TAPS, -0.6f, 0.6f);
		uint16_t *state = (uint16_t *)dalloc((size_t)3 * C * 2);
		fill_bf16(state, (size_t)3 * C, -1, 1);
		int32_t *cu = upload(std::vector<int32_t>{ 0, T });
		auto launch = [&](int i) {
			uint16_t *s = buf + (size_t)(i % R) * (set / 2);
			k3_short_conv_args c = {};
			c.n_seqs = 1, c.total_tokens = T, c.channels = C, c.cu_seqlens = cu, c.x = s, c.w = w;
			c.conv_state = state, c.slot = nullptr;
			for (int q = 0; q < K3_CONV_OUTS; q++)
				c.out[q] = s + e + (size_t)q * (e / K3_CONV_OUTS);
			KOK(k3_short_conv(&c, g_stream));
		};
		row r;
		r.op = "short_conv", r.variant = "kda_qkv";
		snprintf(r.shape, sizeof r.shape, "tokens=%d channels=%d taps=%d", T, C, K3_CONV_TAPS);
		char spec[128];
		snprintf(spec, sizeof spec, "k3sim op=short_conv tokens=%d channels=%d taps=%d dtype=bf16", T, C, K3_CONV_TAPS);
		r.spec = spec, r.reps = o.reps;
		r.t = time_events(spec, 2, o.reps, launch);
		r.steady_us = time_steady(T <= 256, R, std::max(1, 32 / R), launch);
		r.steady_kind = T <= 256 ? "graph" : "loop";
		r.bytes = (double)e * 2 * 2;
		csv_row(r);
		CK(cudaFree(buf));
		CK(cudaFree(w));
		CK(cudaFree(state));
		CK(cudaFree(cu));
	}
}

/* ---- DSA decode ----------------------------------------------------------------- */

void dsa_point(const options &o, int B, int ctx, int H)
{
	const int topk = DSA_TOPK, pages = (ctx + 63) / 64;
	const size_t set = (size_t)B * pages * (DSA_PAGE_BYTES + 64 * MLA_FP8_TOKEN_BYTES);
	int R = (int)std::min<size_t>(8, std::max<size_t>(1, (ROTATE_BYTES + set - 1) / set));
	while (R > 1 && (size_t)R * set > POOL_CAP)
		R--;
	const size_t n_pages = (size_t)R * B * pages;
	uint8_t *keys = (uint8_t *)dalloc(n_pages * DSA_PAGE_BYTES);
	uint8_t *lat = (uint8_t *)dalloc(n_pages * 64 * MLA_FP8_TOKEN_BYTES);
	fill_dsa_kernel<<<4096, FILL_THREADS, 0, g_stream>>>(keys, n_pages, g_seed++);
	fill_mla_fp8_kernel<<<4096, FILL_THREADS, 0, g_stream>>>(lat, n_pages * 64, g_seed++);
	CK(cudaGetLastError());
	std::vector<int32_t> table(n_pages), lens((size_t)R * B, ctx);
	for (size_t i = 0; i < n_pages; i++)
		table[i] = (int32_t)i;
	int32_t *d_table = upload(table), *d_lens = upload(lens);
	uint8_t *q = (uint8_t *)dalloc((size_t)R * B * DSA_INDEX_HEADS * DSA_INDEX_DIM);
	fill_bytes(q, (size_t)R * B * DSA_INDEX_HEADS * DSA_INDEX_DIM, 0xf7u, 0u);
	float *wts = (float *)dalloc((size_t)R * B * DSA_INDEX_HEADS * 4);
	fill_f32(wts, (size_t)R * B * DSA_INDEX_HEADS, 0, 1.0f / 64);
	float *scores = (float *)dalloc((size_t)B * ctx * 4);
	int32_t *idx = (int32_t *)dalloc((size_t)B * topk * 4);
	uint16_t *qm = (uint16_t *)dalloc((size_t)R * B * H * MLA_DIM * 2);
	fill_bf16(qm, (size_t)R * B * H * MLA_DIM, -1, 1);
	uint16_t *out = (uint16_t *)dalloc((size_t)B * H * MLA_LATENT * 2);
	mla_decode_args m = {};
	m.batch = B, m.heads = H, m.qtokens = 1, m.kv = MLA_KV_FP8, m.scale = 1.0f / sqrtf(192.0f), m.max_seqlen = ctx;
	m.cache = lat, m.max_pages = pages, m.indices = idx, m.topk = topk, m.out = out;
	size_t ws = 0;
	KOK(mla_decode_workspace_bytes(&m, &ws));
	m.workspace = ws ? dalloc(ws) : nullptr, m.workspace_bytes = ws;
	auto launch = [&](int i) {
		const int r = i % R;
		dsa_index_args a = {};
		a.batch = B, a.max_seqlen = ctx, a.topk = topk;
		a.q = q + (size_t)r * B * DSA_INDEX_HEADS * DSA_INDEX_DIM, a.weights = wts + (size_t)r * B * DSA_INDEX_HEADS;
		a.cache = keys, a.block_table = d_table + (size_t)r * B * pages, a.max_pages = pages;
		a.seqlens = d_lens + (size_t)r * B, a.scores = scores, a.indices = idx;
		KOK(dsa_index(&a, g_stream));
		mla_decode_args x = m;
		x.q = qm + (size_t)r * B * H * MLA_DIM, x.block_table = a.block_table, x.seqlens = a.seqlens;
		KOK(mla_decode(&x, g_stream));
	};
	row w;
	w.op = "dsa_decode", w.variant = "fp8";
	snprintf(w.shape, sizeof w.shape, "b=%d heads=%d ctx=%d topk=%d", B, H, ctx, topk);
	char spec[160];
	snprintf(spec, sizeof spec, "k3sim op=dsa_decode b=%d heads=%d ctx=%d kv=fp8 topk=%d", B, H, ctx - 1, topk);
	w.spec = spec, w.reps = o.reps;
	w.t = time_events(spec, 2, o.reps, launch);
	w.steady_us = time_steady(true, R, std::max(1, 16 / R), launch), w.steady_kind = "graph";
	/* indexer cache of the whole context, the selected latents, scores written and read */
	w.bytes = (double)B * ctx * (DSA_INDEX_DIM + 4) + (double)B * topk * MLA_FP8_TOKEN_BYTES + 2.0 * B * ctx * 4;
	w.flops = 2.0 * B * ctx * DSA_INDEX_HEADS * DSA_INDEX_DIM + 2.0 * B * H * (double)topk * (MLA_DIM + MLA_LATENT);
	csv_row(w);
	for (void *p : { (void *)keys, (void *)lat, (void *)d_table, (void *)d_lens, (void *)q, (void *)wts,
			 (void *)scores, (void *)idx, (void *)qm, (void *)out })
		CK(cudaFree(p));
	if (m.workspace)
		CK(cudaFree(m.workspace));
}

void bench_dsa(const options &o)
{
	if (o.quick) {
		dsa_point(o, 16, 32768, 16);
		dsa_point(o, 1, 131072, 128);
		return;
	}
	for (int ctx : { 32768, 131072 })
		for (int B : { 1, 16, 64 })
			for (int H : { 16, 128 })
				dsa_point(o, B, ctx, H);
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			o.out = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			o.quick = true;
		else if (!strcmp(argv[i], "--require-wgmma"))
			o.require_wgmma = true;
		else if (!strcmp(argv[i], "--warm-l2"))
			o.warm_l2 = true;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			o.reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			o.only = argv[++i];
		else if (!strcmp(argv[i], "--expert-act") && i + 1 < argc &&
			 (!strcmp(argv[i + 1], "bf16") || !strcmp(argv[i + 1], "e4m3")))
			o.expert_e4m3 = !strcmp(argv[++i], "e4m3");
		else {
			fprintf(stderr,
				"usage: %s [-o FILE.csv] [--quick] [--reps N]"
				" [--only copy|mla|mla_decode|mla_prefill|moe|moe_prefill|moe_decode|route|gemm|gemv|attnres|conv|dsa|"
				"wgmma_peak|quant|mla_uv]"
				" [--require-wgmma] [--warm-l2] [--expert-act bf16|e4m3]\n"
				"--expert-act e4m3: after each MXFP4 expert row (full run, --only moe, moe_prefill), the GEMM\n"
				"as the layer runs it with E4M3 expert activations (variants mxfp4f8_*, NVTX 'k3sim op=grouped_gemm\n"
				"... dtype=fp8'), and after each w13 row the latent's quantizer (e4m3_quant, 'k3sim\n"
				"op=quant ... dtype=fp8 group=0'); needs the wgmma kernel. Default bf16: those rows only.\n",
				argv[0]);
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	if (o.reps < 3)
		o.reps = 3;
	if (o.only && strcmp(o.only, "copy") && strcmp(o.only, "mla") && strcmp(o.only, "mla_decode") &&
	    strcmp(o.only, "mla_prefill") && strcmp(o.only, "moe") && strcmp(o.only, "moe_prefill") &&
	    strcmp(o.only, "gemm") && strcmp(o.only, "gemv") && strcmp(o.only, "route") && strcmp(o.only, "attnres") &&
	    strcmp(o.only, "conv") && strcmp(o.only, "dsa") && strcmp(o.only, "wgmma_peak") && strcmp(o.only, "quant") &&
	    strcmp(o.only, "moe_decode") && strcmp(o.only, "mla_uv")) {
		fprintf(stderr,
			"k3-bench: unknown --only '%s' (copy, mla, mla_decode, mla_prefill, moe, moe_prefill, moe_decode, "
			"route, gemm, gemv, attnres, conv, dsa, wgmma_peak, quant, mla_uv)\n",
			o.only);
		return 2;
	}
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		fprintf(stderr, "k3-bench: no CUDA device\n");
		return 1;
	}
	g_csv = fopen(o.out, "w");
	if (!g_csv) {
		fprintf(stderr, "k3-bench: cannot write '%s': %s\n", o.out, strerror(errno));
		return 1;
	}
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	g_l2_bytes = prop.l2CacheSize;
	printf("device: %s, %d SMs, L2 %d MiB, %.1f GiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
	       prop.totalGlobalMem / 1073741824.0);
	{
		/* A grouped prefill shape asks for the wgmma kernel: -EINVAL where it is not there. */
		k3_gemm_args probe = {};
		probe.rows = 4096, probe.N = 4096, probe.K = 4096, probe.n_groups = 8;
		probe.w_dtype = K3_W_BF16, probe.path = K3_GEMM_TILED_WGMMA;
		g_wgmma = k3_gemm_path_for(&probe) == K3_GEMM_TILED_WGMMA;
		printf("tiled GEMM kernels: %s\n",
		       g_wgmma ? "wgmma (default for grouped and GPU-filling dense shapes) and mma.sync"
			       : "mma.sync only (no wgmma kernel in this build for this device: sm_90a build, "
				 "compute capability 9.0 needed)");
		if (o.require_wgmma && !g_wgmma) {
			fprintf(stderr, "k3-bench: --require-wgmma: the wgmma tiled GEMM is not available "
					"(configure with -Dgpu_arch=sm_90a; run on compute capability 9.0)\n");
			return 2;
		}
		if (o.expert_e4m3 && !g_wgmma) {
			fprintf(stderr, "k3-bench: --expert-act e4m3: the FP8 expert kernel is a wgmma kernel, not available "
					"here (configure with -Dgpu_arch=sm_90a; run on compute capability 9.0)\n");
			return 2;
		}
	}
	CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
	LTOK(cublasLtCreate(&g_lt));
	g_lt_ws = dalloc(CUBLAS_WS);
	if (!o.warm_l2) {
		const size_t fb = (size_t)4 * (size_t)std::max(prop.l2CacheSize, 1 << 20);
		g_l2_flush_n = fb / sizeof(uint4);
		uint8_t *f = (uint8_t *)dalloc(fb);
		fill_bytes(f, fb, 0xffu, 0u);
		g_l2_flush = (const uint4 *)f;
		g_l2_sink = (unsigned *)dalloc(sizeof(unsigned));
	}
	printf("timed launches: %s\n", o.warm_l2 ? "as they come (--warm-l2)"
						   : "each after a read of 4x L2's bytes (a cold L2; --warm-l2: without)");
	csv_header();
	auto want = [&](const char *w) { return !o.only || !strcmp(o.only, w); };
	bench_copy(o); /* always: the ceiling */
	if (want("copy"))
		bench_copy_sizes(o);
	if (want("mla") || want("mla_prefill"))
		bench_mla_prefill(o);
	if (want("mla"))
		bench_mla(o);
	if (o.only && !strcmp(o.only, "mla_decode"))
		bench_mla_decode(o);
	if (want("attnres"))
		bench_attnres(o);
	if (want("conv"))
		bench_short_conv(o);
	if (want("dsa"))
		bench_dsa(o);
	if (want("gemm"))
		bench_gemm(o);
	if (want("gemm") || want("mla_uv"))
		bench_mla_uv(o);
	if (want("moe"))
		bench_moe(o);
	if (o.only && !strcmp(o.only, "moe_prefill"))
		bench_moe_prefill(o);
	if (o.only && !strcmp(o.only, "gemv"))
		bench_gemv(o);
	if (o.only && !strcmp(o.only, "wgmma_peak"))
		bench_wgmma_peak(o);
	if (o.only && !strcmp(o.only, "quant"))
		bench_quant(o);
	if (o.only && !strcmp(o.only, "moe_decode")) {
		if (!g_wgmma) {
			fprintf(stderr, "k3-bench: --only moe_decode: the E4M3 rows need the wgmma kernel's layout "
					"(sm_90a build, compute capability 9.0)\n");
			return 2;
		}
		bench_moe_decode(o);
	}
	if (want("moe") || want("route"))
		bench_route(o);
	CK(cudaStreamSynchronize(g_stream));
	CK(cudaGetLastError());
	cublasLtDestroy(g_lt);
	CK(cudaFree(g_lt_ws));
	fclose(g_csv);
	printf("k3-bench: done, %s\n", o.out);
	return 0;
}
