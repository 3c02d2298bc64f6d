/* SPDX-License-Identifier: MIT */
/*
 * kcp-x2: KDA context-parallel prefill (KCP) on two GPUs of one host, one process
 * (issue 20). The math is kernels/kda/kda_kcp_ref.h's, with the project's prefill:
 *
 *   rank 0 (GPU 0): tokens [0, T/2) from a zero state -> outputs, state Z0;
 *   rank 1 (GPU 1): tokens [T/2, T) from a zero state -> outputs o1, state Z1;
 *                   the same tokens with v = 0 from an identity state -> the
 *                   transition M1 = P1^T (its final state) and the effective
 *                   queries qeff = P_t^T q_t (its outputs);
 *   all-gather: each rank's fixed-size fragment (M, Z: H x 2 x 128 x 128 FP32,
 *               independent of T) copied to the other GPU (peer copies);
 *   scan (rank 1): final state = Z0 M1 + Z1;
 *   fix-up (rank 1): o1[t][h][v] += sum_k Z0[h][v][k] qeff[t][h][k].
 *
 * Rank 0 needs no transition (nothing comes before it); with more ranks every
 * rank but the first would run both passes. Modes: `serial` runs rank 1's two
 * passes one after another on one stream, `concurrent` on two streams.
 * Checked against the single-GPU prefill of the whole sequence (GPU 0): outputs of
 * both halves and the final state, relative error ||a - b|| / ||b||; with
 * --check also both against the float64 reference (kda_ref) on a small case.
 *
 *   kcp-x2 [--case T:H]... [--reps N] [--check] [--csv FILE]
 *
 * Default cases: 65536:96 262144:96 1048576:32 (H = 32 at 1M keeps the
 * single-GPU run of the whole sequence, ~75 GB, on one H200).
 * Every launch sits in an NVTX range in `k3sim op` syntax. Exit 0 when every
 * check passed, 1 when one failed, 2 on usage or setup errors.
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "kda/kda_prefill.h"
extern "C" {
#include "kda/kda_ref.h" /* plain C, no extern "C" of its own */
}

namespace {

constexpr int D = KDA_HEAD_DIM;
constexpr double TOL = 1.5e-2; /* BF16 outputs, as tests/kernels/test-kda-gpu.c */

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "kcp-x2: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
				cudaGetErrorString(e_));                                  \
			exit(2);                                                          \
		}                                                                         \
	} while (0)

#define KOK(call)                                                                         \
	do {                                                                              \
		int r_ = (call);                                                          \
		if (r_) {                                                                 \
			fprintf(stderr, "kcp-x2: %s:%d: %s returned %d (%s)\n", __FILE__,    \
				__LINE__, #call, r_, cudaGetErrorString(cudaGetLastError())); \
			exit(2);                                                          \
		}                                                                         \
	} while (0)

__device__ uint32_t hash32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* p[i] = value of global element `first + i` of tensor `seed`: both ranks and the
 * single-GPU run see the same sequence. */
__global__ void fill_bf16_kernel(uint16_t *p, size_t n, size_t first, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float u = (hash32(seed * 0x9e3779b97f4a7c15ull + first + i) >> 8) * (1.0f / 16777216.0f);
		float f = lo + (hi - lo) * u;
		uint32_t b = __float_as_uint(f);
		p[i] = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
	}
}

__global__ void identity_kernel(float *s, int heads)
{
	size_t n = (size_t)heads * D * D;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t r = (i / D) % D, c = i % D;
		s[i] = r == c ? 1.0f : 0.0f;
	}
}

/* out[h][v][k] = z[h][v][k] + sum_j s_in[h][v][j] m[h][j][k]; grid (D, H), D threads. */
__global__ void scan_kernel(const float *s_in, const float *m, const float *z, float *out)
{
	__shared__ float row[D];
	const size_t h = blockIdx.y, v = blockIdx.x, k = threadIdx.x;
	const size_t base = (h * D + v) * D;
	row[k] = s_in[base + k];
	__syncthreads();
	const float *mh = m + h * D * D;
	float acc = z[base + k];
	for (int j = 0; j < D; j++)
		acc = fmaf(row[j], mh[(size_t)j * D + k], acc);
	out[base + k] = acc;
}

__device__ inline float bf16_to_f32(uint16_t b)
{
	return __uint_as_float((uint32_t)b << 16);
}

__device__ inline uint16_t f32_to_bf16(float f)
{
	uint32_t b = __float_as_uint(f);
	return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

/* The fix-up, FP32 on the SIMT units: out[t][h][v] += sum_k s[h][v][k] q[t][h][k].
 * One CTA per (128 tokens, head); 256 threads each own 8 tokens x 8 values of v;
 * k in blocks of 32 through shared memory. */
constexpr int FX_T = 128, FX_KB = 32;
__global__ void __launch_bounds__(256) fixup_kernel(const float *__restrict__ s, const uint16_t *__restrict__ q,
						    uint16_t *__restrict__ out, int64_t tokens, int heads)
{
	/* padded rows: the transposing stores below spread over more banks */
	__shared__ __align__(16) float qs[FX_KB][FX_T + 4];
	__shared__ __align__(16) float ss[FX_KB][D + 4];
	const int h = blockIdx.y;
	const int64_t t0 = (int64_t)blockIdx.x * FX_T;
	const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
	float acc[8][8];
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			acc[i][j] = 0.0f;
	const float *sh = s + (size_t)h * D * D;
	for (int kb = 0; kb < D; kb += FX_KB) {
		/* q: 8 BF16 (16 bytes) per load, 4 loads per token */
		for (int i = tid; i < FX_T * (FX_KB / 8); i += 256) {
			int t = i / (FX_KB / 8), kq = (i % (FX_KB / 8)) * 8;
			int64_t gt = t0 + t;
			uint4 w = make_uint4(0, 0, 0, 0);
			if (gt < tokens)
				w = *reinterpret_cast<const uint4 *>(q + ((size_t)gt * heads + h) * D + kb + kq);
			uint32_t u[4] = {w.x, w.y, w.z, w.w};
			for (int j = 0; j < 4; j++) {
				qs[kq + 2 * j][t] = bf16_to_f32((uint16_t)(u[j] & 0xffffu));
				qs[kq + 2 * j + 1][t] = bf16_to_f32((uint16_t)(u[j] >> 16));
			}
		}
		/* s: 4 FP32 per load, 8 loads per row v */
		for (int i = tid; i < D * (FX_KB / 4); i += 256) {
			int v = i / (FX_KB / 4), kq = (i % (FX_KB / 4)) * 4;
			float4 f = *reinterpret_cast<const float4 *>(sh + (size_t)v * D + kb + kq);
			ss[kq][v] = f.x, ss[kq + 1][v] = f.y, ss[kq + 2][v] = f.z, ss[kq + 3][v] = f.w;
		}
		__syncthreads();
		for (int kk = 0; kk < FX_KB; kk++) {
			float a[8], b[8];
			float4 a0 = *reinterpret_cast<const float4 *>(&qs[kk][ty * 8]);
			float4 a1 = *reinterpret_cast<const float4 *>(&qs[kk][ty * 8 + 4]);
			float4 b0 = *reinterpret_cast<const float4 *>(&ss[kk][tx * 8]);
			float4 b1 = *reinterpret_cast<const float4 *>(&ss[kk][tx * 8 + 4]);
			a[0] = a0.x, a[1] = a0.y, a[2] = a0.z, a[3] = a0.w, a[4] = a1.x, a[5] = a1.y, a[6] = a1.z, a[7] = a1.w;
			b[0] = b0.x, b[1] = b0.y, b[2] = b0.z, b[3] = b0.w, b[4] = b1.x, b[5] = b1.y, b[6] = b1.z, b[7] = b1.w;
			for (int i = 0; i < 8; i++)
				for (int j = 0; j < 8; j++)
					acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
		}
		__syncthreads();
	}
	for (int i = 0; i < 8; i++) {
		int64_t gt = t0 + ty * 8 + i;
		if (gt >= tokens)
			break;
		uint4 *p = reinterpret_cast<uint4 *>(out + ((size_t)gt * heads + h) * D + tx * 8);
		uint4 w = *p;
		uint32_t u[4] = {w.x, w.y, w.z, w.w};
		for (int j = 0; j < 4; j++) {
			float lo = bf16_to_f32((uint16_t)(u[j] & 0xffffu)) + acc[i][2 * j];
			float hi = bf16_to_f32((uint16_t)(u[j] >> 16)) + acc[i][2 * j + 1];
			u[j] = (uint32_t)f32_to_bf16(lo) | ((uint32_t)f32_to_bf16(hi) << 16);
		}
		*p = make_uint4(u[0], u[1], u[2], u[3]);
	}
}

/* sums[0] += sum (a - b)^2, sums[1] += sum b^2 (a may live on the peer GPU). */
__global__ void diff_bf16_kernel(const uint16_t *a, const uint16_t *b, size_t n, double *sums)
{
	double num = 0, den = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		double x = bf16_to_f32(a[i]), y = bf16_to_f32(b[i]);
		num += (x - y) * (x - y);
		den += y * y;
	}
	atomicAdd(&sums[0], num);
	atomicAdd(&sums[1], den);
}

__global__ void diff_f32_kernel(const float *a, const float *b, size_t n, double *sums)
{
	double num = 0, den = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		double x = a[i], y = b[i];
		num += (x - y) * (x - y);
		den += y * y;
	}
	atomicAdd(&sums[0], num);
	atomicAdd(&sums[1], den);
}

enum { SEED_Q = 11, SEED_K, SEED_V, SEED_G, SEED_B };

void *dalloc(size_t bytes)
{
	void *p = nullptr;
	cudaError_t e = cudaMalloc(&p, bytes ? bytes : 16);
	if (e != cudaSuccess) {
		size_t fr = 0, tot = 0;
		cudaMemGetInfo(&fr, &tot);
		fprintf(stderr, "kcp-x2: cudaMalloc(%zu) failed: %s (%.1f of %.1f GB free)\n", bytes,
			cudaGetErrorString(e), fr / 1e9, tot / 1e9);
		exit(2);
	}
	return p;
}

void fill(uint16_t *p, size_t n, size_t first, uint64_t seed, float lo, float hi, cudaStream_t st)
{
	fill_bf16_kernel<<<4096, 256, 0, st>>>(p, n, first, seed, lo, hi);
	CK(cudaGetLastError());
}

/* The inputs and outputs of one prefill of `n` tokens starting at global token `first`. */
struct seg {
	int dev;
	int64_t first, n;
	int heads;
	uint16_t *q, *k, *v, *g, *b, *out;
	int32_t *cu;
	void *ws;
	size_t ws_bytes;
};

void seg_alloc(seg *s, int dev, int64_t first, int64_t n, int heads, cudaStream_t st)
{
	CK(cudaSetDevice(dev));
	s->dev = dev, s->first = first, s->n = n, s->heads = heads;
	size_t e = (size_t)n * heads * D, fe = (size_t)first * heads * D;
	s->q = (uint16_t *)dalloc(e * 2), s->k = (uint16_t *)dalloc(e * 2), s->v = (uint16_t *)dalloc(e * 2);
	s->g = (uint16_t *)dalloc(e * 2), s->b = (uint16_t *)dalloc((size_t)n * heads * 2);
	s->out = (uint16_t *)dalloc(e * 2);
	fill(s->q, e, fe, SEED_Q, -1, 1, st);
	fill(s->k, e, fe, SEED_K, -1, 1, st);
	fill(s->v, e, fe, SEED_V, -1, 1, st);
	fill(s->g, e, fe, SEED_G, -6, 3, st);
	fill(s->b, (size_t)n * heads, (size_t)first * heads, SEED_B, -3, 3, st);
	int32_t cu[2] = {0, (int32_t)n};
	s->cu = (int32_t *)dalloc(sizeof cu);
	CK(cudaMemcpy(s->cu, cu, sizeof cu, cudaMemcpyHostToDevice));
	s->ws_bytes = kda_prefill_workspace_bytes(1, heads, n);
	s->ws = dalloc(s->ws_bytes);
}

void seg_free(seg *s)
{
	CK(cudaSetDevice(s->dev));
	void *p[] = {s->q, s->k, s->v, s->g, s->b, s->out, s->cu, s->ws};
	for (void *x : p)
		if (x)
			CK(cudaFree(x));
	memset(s, 0, sizeof *s);
}

kda_prefill_args prefill_args(const seg *s, const uint16_t *v, const void *init, void *fin, uint16_t *out, void *ws)
{
	kda_prefill_args a;
	memset(&a, 0, sizeof a);
	a.n_seqs = 1, a.heads = s->heads, a.total_tokens = s->n, a.cu_seqlens = s->cu;
	a.state_dtype = KDA_F32, a.scale = 1.0f / sqrtf((float)D);
	a.q = s->q, a.k = s->k, a.v = v, a.g_raw = s->g, a.beta_raw = s->b;
	a.initial_state = init, a.final_state = fin, a.out = out, a.workspace = ws;
	return a;
}

struct ranged {
	explicit ranged(const char *spec) { nvtxRangePushA(spec); }
	~ranged() { nvtxRangePop(); }
};

double rel_err_bf16(int dev, const uint16_t *a, const uint16_t *b, size_t n)
{
	CK(cudaSetDevice(dev));
	double *d = (double *)dalloc(2 * sizeof(double)), h[2];
	CK(cudaMemset(d, 0, 2 * sizeof(double)));
	diff_bf16_kernel<<<1024, 256>>>(a, b, n, d);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
	CK(cudaFree(d));
	return h[1] > 0 ? sqrt(h[0] / h[1]) : sqrt(h[0]);
}

double rel_err_f32(int dev, const float *a, const float *b, size_t n)
{
	CK(cudaSetDevice(dev));
	double *d = (double *)dalloc(2 * sizeof(double)), h[2];
	CK(cudaMemset(d, 0, 2 * sizeof(double)));
	diff_f32_kernel<<<256, 256>>>(a, b, n, d);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
	CK(cudaFree(d));
	return h[1] > 0 ? sqrt(h[0] / h[1]) : sqrt(h[0]);
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

float ms_between(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, a, b));
	return ms;
}

struct kcp_times {
	double r0_zero, r0_total, r1_zero, r1_ident, r1_passes, r1_gather, r1_scan, r1_fixup, r1_total;
};

/* Everything one KCP case holds on the two GPUs. */
struct kcp {
	int64_t T, seg_n;
	int H;
	seg r[2];
	uint16_t *vzero, *qeff;   /* rank 1: v = 0, effective queries */
	float *eye;               /* rank 1: identity initial state [H][D][D] */
	void *ws2;                /* rank 1: a second workspace (concurrent passes) */
	float *frags[2];          /* per GPU: [2 ranks][M, Z][H][D][D] */
	float *final1;            /* rank 1: the sequence's final state [H][D][D] */
	cudaStream_t st[2], st1b;
	size_t frag_floats;       /* one rank's fragment: 2 x H x D x D */
};

float *frag_m(const kcp *c, int gpu, int rank)
{
	return c->frags[gpu] + (size_t)rank * c->frag_floats;
}

float *frag_z(const kcp *c, int gpu, int rank)
{
	return frag_m(c, gpu, rank) + c->frag_floats / 2;
}

void kcp_setup(kcp *c, int64_t T, int H)
{
	memset(c, 0, sizeof *c);
	c->T = T, c->H = H, c->seg_n = T / 2;
	c->frag_floats = (size_t)2 * H * D * D;
	for (int g = 0; g < 2; g++) {
		CK(cudaSetDevice(g));
		CK(cudaStreamCreateWithFlags(&c->st[g], cudaStreamNonBlocking));
		seg_alloc(&c->r[g], g, g * c->seg_n, g ? T - c->seg_n : c->seg_n, H, c->st[g]);
		c->frags[g] = (float *)dalloc(2 * c->frag_floats * sizeof(float));
		CK(cudaMemsetAsync(c->frags[g], 0, 2 * c->frag_floats * sizeof(float), c->st[g]));
	}
	CK(cudaSetDevice(1));
	CK(cudaStreamCreateWithFlags(&c->st1b, cudaStreamNonBlocking));
	size_t e = (size_t)c->r[1].n * H * D;
	c->vzero = (uint16_t *)dalloc(e * 2), c->qeff = (uint16_t *)dalloc(e * 2);
	CK(cudaMemsetAsync(c->vzero, 0, e * 2, c->st[1]));
	c->eye = (float *)dalloc((size_t)H * D * D * sizeof(float));
	identity_kernel<<<1024, 256, 0, c->st[1]>>>(c->eye, H);
	CK(cudaGetLastError());
	c->ws2 = dalloc(c->r[1].ws_bytes);
	c->final1 = (float *)dalloc((size_t)H * D * D * sizeof(float));
	for (int g = 0; g < 2; g++) {
		CK(cudaSetDevice(g));
		CK(cudaDeviceSynchronize());
	}
}

void kcp_free(kcp *c)
{
	for (int g = 0; g < 2; g++) {
		seg_free(&c->r[g]);
		CK(cudaSetDevice(g));
		CK(cudaFree(c->frags[g]));
		CK(cudaStreamDestroy(c->st[g]));
	}
	CK(cudaSetDevice(1));
	void *p[] = {c->vzero, c->qeff, c->eye, c->ws2, c->final1};
	for (void *x : p)
		CK(cudaFree(x));
	CK(cudaStreamDestroy(c->st1b));
}

/* One KCP prefill; returns its event timings (both GPUs idle before). */
kcp_times kcp_run(kcp *c, bool concurrent)
{
	cudaEvent_t e0[4], e1[8];
	CK(cudaSetDevice(0));
	for (auto &e : e0)
		CK(cudaEventCreate(&e));
	CK(cudaSetDevice(1));
	for (auto &e : e1)
		CK(cudaEventCreate(&e));
	char spec[4][200];
	const int64_t n0 = c->r[0].n, n1 = c->r[1].n;
	const size_t frag_b = c->frag_floats * sizeof(float);
	snprintf(spec[0], sizeof spec[0], "k3sim op=kda_chunk b=1 t=%lld h=%d", (long long)n0, c->H);
	snprintf(spec[1], sizeof spec[1], "k3sim op=kda_chunk b=1 t=%lld h=%d", (long long)n1, c->H);
	snprintf(spec[2], sizeof spec[2], "k3sim op=gemm m=%d n=%d k=%d dtype=fp32", c->H * D, D, D);
	snprintf(spec[3], sizeof spec[3], "k3sim op=gemm m=%lld n=%d k=%d dtype=bf16 w_dtype=fp32",
		 (long long)n1, c->H * D, D);

	/* rank 0: zero-start pass into its fragment's Z */
	CK(cudaSetDevice(0));
	CK(cudaEventRecord(e0[0], c->st[0]));
	{
		ranged r(spec[0]);
		kda_prefill_args a = prefill_args(&c->r[0], c->r[0].v, nullptr, frag_z(c, 0, 0), c->r[0].out, c->r[0].ws);
		KOK(kda_prefill(&a, c->st[0]));
	}
	CK(cudaEventRecord(e0[1], c->st[0]));
	/* rank 1: zero-start and identity-start passes */
	CK(cudaSetDevice(1));
	CK(cudaEventRecord(e1[0], c->st[1]));
	{
		ranged r(spec[1]);
		kda_prefill_args a = prefill_args(&c->r[1], c->r[1].v, nullptr, frag_z(c, 1, 1), c->r[1].out, c->r[1].ws);
		KOK(kda_prefill(&a, c->st[1]));
	}
	CK(cudaEventRecord(e1[1], c->st[1]));
	cudaStream_t sb = concurrent ? c->st1b : c->st[1];
	if (concurrent)
		CK(cudaStreamWaitEvent(sb, e1[0], 0));
	{
		ranged r(spec[1]);
		kda_prefill_args a = prefill_args(&c->r[1], c->vzero, c->eye, frag_m(c, 1, 1), c->qeff,
						  concurrent ? c->ws2 : c->r[1].ws);
		KOK(kda_prefill(&a, sb));
	}
	CK(cudaEventRecord(e1[2], sb));
	CK(cudaStreamWaitEvent(c->st[1], e1[2], 0));
	CK(cudaEventRecord(e1[3], c->st[1])); /* both passes done */
	/* the all-gather: each GPU pulls the other's fragment once both are complete */
	char ag[128];
	snprintf(ag, sizeof ag, "k3sim op=allgather bytes=%zu ranks=2", 2 * frag_b);
	{
		ranged r(ag);
		CK(cudaStreamWaitEvent(c->st[1], e0[1], 0));
		CK(cudaMemcpyPeerAsync(frag_m(c, 1, 0), 1, frag_m(c, 0, 0), 0, frag_b, c->st[1]));
		CK(cudaSetDevice(0));
		CK(cudaStreamWaitEvent(c->st[0], e1[3], 0));
		CK(cudaMemcpyPeerAsync(frag_m(c, 0, 1), 0, frag_m(c, 1, 1), 1, frag_b, c->st[0]));
		CK(cudaEventRecord(e0[2], c->st[0]));
		CK(cudaSetDevice(1));
	}
	CK(cudaEventRecord(e1[4], c->st[1]));
	/* scan: the final state Z0 M1 + Z1; fix-up of rank 1's outputs with Z0 */
	{
		ranged r(spec[2]);
		scan_kernel<<<dim3(D, c->H), D, 0, c->st[1]>>>(frag_z(c, 1, 0), frag_m(c, 1, 1), frag_z(c, 1, 1), c->final1);
		CK(cudaGetLastError());
	}
	CK(cudaEventRecord(e1[5], c->st[1]));
	{
		ranged r(spec[3]);
		fixup_kernel<<<dim3((unsigned)((n1 + FX_T - 1) / FX_T), c->H), 256, 0, c->st[1]>>>(
			frag_z(c, 1, 0), c->qeff, c->r[1].out, n1, c->H);
		CK(cudaGetLastError());
	}
	CK(cudaEventRecord(e1[6], c->st[1]));
	CK(cudaSetDevice(0));
	CK(cudaDeviceSynchronize());
	CK(cudaSetDevice(1));
	CK(cudaDeviceSynchronize());
	kcp_times t;
	t.r0_zero = ms_between(e0[0], e0[1]) * 1e-3;
	t.r0_total = ms_between(e0[0], e0[2]) * 1e-3;
	t.r1_zero = ms_between(e1[0], e1[1]) * 1e-3;
	t.r1_ident = concurrent ? ms_between(e1[0], e1[2]) * 1e-3 : ms_between(e1[1], e1[2]) * 1e-3;
	t.r1_passes = ms_between(e1[0], e1[3]) * 1e-3;
	t.r1_gather = ms_between(e1[3], e1[4]) * 1e-3;
	t.r1_scan = ms_between(e1[4], e1[5]) * 1e-3;
	t.r1_fixup = ms_between(e1[5], e1[6]) * 1e-3;
	t.r1_total = ms_between(e1[0], e1[6]) * 1e-3;
	for (auto &e : e1)
		CK(cudaEventDestroy(e));
	CK(cudaSetDevice(0));
	for (auto &e : e0)
		CK(cudaEventDestroy(e));
	return t;
}

/* The whole sequence on GPU 0 (after the KCP buffers of GPU 0 but its outputs are freed). */
struct single {
	seg s;
	float *fin;
	cudaStream_t st;
};

double single_run(single *x, int64_t T, int H)
{
	char spec[128];
	snprintf(spec, sizeof spec, "k3sim op=kda_chunk b=1 t=%lld h=%d", (long long)T, H);
	cudaEvent_t a, b;
	CK(cudaSetDevice(0));
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	CK(cudaEventRecord(a, x->st));
	{
		ranged r(spec);
		kda_prefill_args p = prefill_args(&x->s, x->s.v, nullptr, x->fin, x->s.out, x->s.ws);
		KOK(kda_prefill(&p, x->st));
	}
	CK(cudaEventRecord(b, x->st));
	CK(cudaEventSynchronize(b));
	double t = ms_between(a, b) * 1e-3;
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	return t;
}

std::vector<double> to_host_bf16(const uint16_t *d, size_t n)
{
	std::vector<uint16_t> h(n);
	CK(cudaMemcpy(h.data(), d, n * 2, cudaMemcpyDeviceToHost));
	std::vector<double> o(n);
	for (size_t i = 0; i < n; i++) {
		uint32_t b = (uint32_t)h[i] << 16;
		float f;
		memcpy(&f, &b, 4);
		o[i] = f;
	}
	return o;
}

std::vector<double> to_host_f32(const float *d, size_t n)
{
	std::vector<float> h(n);
	CK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
	return std::vector<double>(h.begin(), h.end());
}

double host_rel(const std::vector<double> &a, const double *b, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double d = a[i] - b[i];
		num += d * d;
		den += b[i] * b[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

bool ok(double e)
{
	return e < TOL; /* NaN fails */
}

int usage(FILE *f)
{
	fprintf(f, "usage: kcp-x2 [--case T:H]... [--reps N] [--check] [--csv FILE]\n\n"
		   "KDA context-parallel prefill on GPUs 0 and 1 (one process, peer copies), checked\n"
		   "against the single-GPU prefill of the whole sequence and timed.\n"
		   "  --case T:H  sequence length and heads (default 65536:96 262144:96 1048576:32)\n"
		   "  --reps N    timed repetitions after one warm-up (default 3)\n"
		   "  --check     also a small case against the float64 reference (kda_ref)\n"
		   "  --csv FILE  one row per case and mode (default: stdout only)\n");
	return f == stdout ? 0 : 2;
}

} // namespace

int main(int argc, char **argv)
{
	std::vector<std::pair<int64_t, int>> cases;
	int reps = 3;
	bool check = false;
	const char *csv = nullptr;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(stdout);
		if (!strcmp(a, "--check")) {
			check = true;
		} else if (!strcmp(a, "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1 || reps > 1000) {
				fprintf(stderr, "kcp-x2: --reps must be 1..1000\n");
				return 2;
			}
		} else if (!strcmp(a, "--csv") && i + 1 < argc) {
			csv = argv[++i];
		} else if (!strcmp(a, "--case") && i + 1 < argc) {
			long long T = 0;
			int H = 0;
			char tail = 0;
			if (sscanf(argv[++i], "%lld:%d%c", &T, &H, &tail) != 2 || T < 2 || T >= (1ll << 31) || H < 1 ||
			    H > 4096) {
				fprintf(stderr, "kcp-x2: --case wants T:H with 2 <= T < 2^31, 1 <= H <= 4096 (got '%s')\n",
					argv[i]);
				return 2;
			}
			cases.push_back({(int64_t)T, H});
		} else {
			fprintf(stderr, "kcp-x2: unknown argument '%s'\n", a);
			return usage(stderr);
		}
	}
	if (cases.empty())
		cases = {{65536, 96}, {262144, 96}, {1048576, 32}};
	int n_dev = 0;
	CK(cudaGetDeviceCount(&n_dev));
	if (n_dev < 2) {
		fprintf(stderr, "kcp-x2: needs 2 GPUs, found %d\n", n_dev);
		return 2;
	}
	int p01 = 0, p10 = 0;
	CK(cudaDeviceCanAccessPeer(&p01, 0, 1));
	CK(cudaDeviceCanAccessPeer(&p10, 1, 0));
	if (!p01 || !p10) {
		fprintf(stderr, "kcp-x2: GPUs 0 and 1 cannot access each other (peer access)\n");
		return 2;
	}
	CK(cudaSetDevice(0));
	CK(cudaDeviceEnablePeerAccess(1, 0));
	CK(cudaSetDevice(1));
	CK(cudaDeviceEnablePeerAccess(0, 0));
	FILE *out = csv ? fopen(csv, "w") : nullptr;
	if (csv && !out) {
		fprintf(stderr, "kcp-x2: cannot write %s: %s\n", csv, strerror(errno));
		return 2;
	}
	if (out)
		fprintf(out, "T,H,mode,reps,single_s,kcp_s,r0_zero_s,r0_total_s,r1_zero_s,r1_ident_s,r1_passes_s,"
			     "r1_gather_s,r1_scan_s,r1_fixup_s,frag_bytes,err_out0,err_out1,err_state\n");
	bool all_ok = true;
	std::vector<std::pair<int64_t, int>> todo = cases;
	if (check)
		todo.insert(todo.begin(), {400, 2});
	for (size_t ci = 0; ci < todo.size(); ci++) {
		const int64_t T = todo[ci].first;
		const int H = todo[ci].second;
		const bool small = check && ci == 0;
		auto t_start = std::chrono::steady_clock::now();
		kcp c;
		kcp_setup(&c, T, H);
		kcp_times tm[2][1000];
		for (int mode = 0; mode < 2; mode++) {
			kcp_run(&c, mode == 1); /* warm-up (and the outputs checked below) */
			for (int r = 0; r < reps; r++) {
				/* the fix-up adds into rank 1's outputs: recompute them each time (the
				 * zero pass overwrites out), so every repetition is a whole KCP */
				tm[mode][r] = kcp_run(&c, mode == 1);
			}
		}
		/* the whole sequence on GPU 0: free GPU 0's inputs, keep its outputs */
		CK(cudaSetDevice(0));
		uint16_t *out0 = c.r[0].out;
		c.r[0].out = nullptr;
		{
			void *p[] = {c.r[0].q, c.r[0].k, c.r[0].v, c.r[0].g, c.r[0].b, c.r[0].ws};
			for (void *x : p)
				CK(cudaFree(x));
			c.r[0].q = c.r[0].k = c.r[0].v = c.r[0].g = c.r[0].b = nullptr;
			c.r[0].ws = nullptr;
		}
		single sg;
		CK(cudaStreamCreateWithFlags(&sg.st, cudaStreamNonBlocking));
		seg_alloc(&sg.s, 0, 0, T, H, sg.st);
		sg.fin = (float *)dalloc((size_t)H * D * D * sizeof(float));
		CK(cudaDeviceSynchronize());
		single_run(&sg, T, H);
		std::vector<double> ts;
		for (int r = 0; r < reps; r++)
			ts.push_back(single_run(&sg, T, H));
		const size_t e0 = (size_t)c.r[0].n * H * D, e1 = (size_t)c.r[1].n * H * D, sn = (size_t)H * D * D;
		double err0 = rel_err_bf16(0, out0, sg.s.out, e0);
		double err1 = rel_err_bf16(0, c.r[1].out, sg.s.out + e0, e1); /* rank 1's, read over NVLink */
		double errs = rel_err_f32(0, c.final1, sg.fin, sn);
		bool good = ok(err0) && ok(err1) && ok(errs);
		printf("kcp-x2: T=%lld H=%d: KCP vs single GPU: outputs rank 0 %.3e, rank 1 %.3e, final state %.3e: %s\n",
		       (long long)T, H, err0, err1, errs, good ? "PASS" : "FAIL");
		all_ok = all_ok && good;
		if (small) {
			/* both against float64 */
			std::vector<double> hq = to_host_bf16(sg.s.q, e0 + e1), hk = to_host_bf16(sg.s.k, e0 + e1);
			std::vector<double> hv = to_host_bf16(sg.s.v, e0 + e1), hg = to_host_bf16(sg.s.g, e0 + e1);
			std::vector<double> hb = to_host_bf16(sg.s.b, (size_t)T * H);
			std::vector<double> ro(e0 + e1), rs(sn);
			int64_t cu[2] = {0, T};
			kda_ref_prefill rp;
			memset(&rp, 0, sizeof rp);
			rp.n_seqs = 1, rp.cu_seqlens = cu, rp.heads = H, rp.dk = D, rp.dv = D;
			rp.scale = 1.0 / sqrt((double)D), rp.q = hq.data(), rp.k = hk.data(), rp.v = hv.data();
			rp.g_raw = hg.data(), rp.beta_raw = hb.data(), rp.final_state = rs.data(), rp.out = ro.data();
			if (kda_ref_prefill_sequential(&rp) != 0) {
				fprintf(stderr, "kcp-x2: float64 reference failed\n");
				return 2;
			}
			std::vector<double> so = to_host_bf16(sg.s.out, e0 + e1), ss = to_host_f32(sg.fin, sn);
			std::vector<double> k0 = to_host_bf16(out0, e0);
			CK(cudaSetDevice(1));
			std::vector<double> k1 = to_host_bf16(c.r[1].out, e1), ks = to_host_f32(c.final1, sn);
			k0.insert(k0.end(), k1.begin(), k1.end());
			double a = host_rel(so, ro.data(), e0 + e1), b = host_rel(ss, rs.data(), sn);
			double cc = host_rel(k0, ro.data(), e0 + e1), d = host_rel(ks, rs.data(), sn);
			bool g2 = ok(a) && ok(b) && ok(cc) && ok(d);
			printf("kcp-x2: T=%lld H=%d vs float64: single GPU outputs %.3e state %.3e; KCP outputs %.3e "
			       "state %.3e: %s\n",
			       (long long)T, H, a, b, cc, d, g2 ? "PASS" : "FAIL");
			all_ok = all_ok && g2;
		}
		double single_s = median(ts);
		for (int mode = 0; mode < 2; mode++) {
			std::vector<double> v[10];
			for (int r = 0; r < reps; r++) {
				const kcp_times &x = tm[mode][r];
				double f[10] = {x.r1_total, x.r0_zero, x.r0_total, x.r1_zero, x.r1_ident,
						x.r1_passes, x.r1_gather, x.r1_scan, x.r1_fixup, 0};
				for (int j = 0; j < 9; j++)
					v[j].push_back(f[j]);
			}
			double m[9];
			for (int j = 0; j < 9; j++)
				m[j] = median(v[j]);
			const char *mn = mode ? "concurrent" : "serial";
			printf("kcp-x2: T=%lld H=%d %-10s single %.3f ms, KCP %.3f ms (%.2fx): rank 0 zero pass %.3f; "
			       "rank 1 zero %.3f, identity %.3f, both %.3f, gather %.3f, scan %.3f, fix-up %.3f ms\n",
			       (long long)T, H, mn, single_s * 1e3, m[0] * 1e3, single_s / m[0], m[1] * 1e3, m[3] * 1e3,
			       m[4] * 1e3, m[5] * 1e3, m[6] * 1e3, m[7] * 1e3, m[8] * 1e3);
			if (out)
				fprintf(out, "%lld,%d,%s,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%zu,%.4g,%.4g,%.4g\n",
					(long long)T, H, mn, reps, single_s, m[0], m[1], m[2], m[3], m[4], m[5], m[6],
					m[7], m[8], 2 * c.frag_floats * sizeof(float), err0, err1, errs);
		}
		if (out)
			fflush(out);
		seg_free(&sg.s);
		CK(cudaSetDevice(0));
		CK(cudaFree(sg.fin));
		CK(cudaFree(out0));
		CK(cudaStreamDestroy(sg.st));
		kcp_free(&c);
		double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
		printf("kcp-x2: T=%lld H=%d done in %.1f s\n", (long long)T, H, wall);
		fflush(stdout);
	}
	if (out)
		fclose(out);
	printf("RESULT %s\n", all_ok ? "PASS" : "FAIL");
	return all_ok ? 0 : 1;
}
