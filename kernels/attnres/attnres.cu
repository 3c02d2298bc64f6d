/* SPDX-License-Identifier: MIT */
/*
 * Block AttnRes fused with the pre-norm: see attnres.h.
 *
 * A token is the work of a cluster of CS CTAs (CS = 1, 2, 4 or 8; 128
 * threads each), CTA r owning chunks [r C / CS, (r + 1) C / CS) of the
 * row's C = dim / 8 chunks of 8 elements. Each thread copies its chunks of
 * every source (and of delta) into shared memory with cp.async, all at once
 * (n x 16 bytes a chunk in flight), then pass 1 reads them back for each
 * source's sum of squares and dot with the pseudo-query, the CTA reduces
 * those 2n sums and the cluster adds its CTAs' sums through distributed
 * shared memory (the same order in every CTA: the same scores); pass 2 mixes
 * the sources from shared memory, and a second cluster sum gives the RMSNorm
 * of h. Small T runs wide clusters (8 CTAs a token at K3's width), large T
 * clusters of 4 (36 KiB of shared memory, six CTAs an SM: 271 us at T = 4096,
 * 9 sources, 61 % of copy; clusters of 2, three CTAs an SM loading, reducing
 * and storing in lock step, ran 333 us, 50 %; of 8, 324 us; 2026-12-01 calls
 * 01k/01l). The one-CTA-a-token kernel it replaces ran 21-38 us at T = 1-256
 * and 340 us at T = 4096, the sources' loads one source in turn (01e bench).
 */
#include "attnres.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <cooperative_groups.h>

#include "common/k3_device.cuh"

namespace cg = cooperative_groups;

namespace {

constexpr int THREADS = 128;
constexpr int WARPS = THREADS / 32;
constexpr int MAX_CHUNKS = ATTNRES_MAX_DIM / 8;
constexpr size_t SMEM_MAX = 200 * 1024; /* the slices of all sources (and delta) of one CTA */
__device__ __forceinline__ void unpack8(const uint4 v, float f[8])
{
	f[0] = k3_lo_bf16(v.x), f[1] = k3_hi_bf16(v.x), f[2] = k3_lo_bf16(v.y), f[3] = k3_hi_bf16(v.y);
	f[4] = k3_lo_bf16(v.z), f[5] = k3_hi_bf16(v.z), f[6] = k3_lo_bf16(v.w), f[7] = k3_hi_bf16(v.w);
}

__device__ __forceinline__ uint4 pack8(const float f[8])
{
	uint4 v;
	v.x = k3_pack_bf16(f[0], f[1]), v.y = k3_pack_bf16(f[2], f[3]);
	v.z = k3_pack_bf16(f[4], f[5]), v.w = k3_pack_bf16(f[6], f[7]);
	return v;
}

/* Shared memory: [n + (delta ? 1 : 0)][slice chunks] uint4, then nothing else (the sums are static). */
template <int CS>
__global__ void __launch_bounds__(THREADS) attnres_kernel(const attnres_args a)
{
	/* Chunks per thread, at most: a CTA holds its share of the widest row; CS = 1 only for
	 * rows of at most 512 chunks (cluster_size()). */
	constexpr int CPT = CS == 1 ? 4 : MAX_CHUNKS / CS / THREADS;
	static_assert(CPT >= 1 && (CS == 1 || CPT * CS * THREADS == MAX_CHUNKS), "slice shape");
	extern __shared__ uint4 raw[];
	__shared__ float red[WARPS][ATTNRES_MAX_SOURCES][2];
	__shared__ float part[ATTNRES_MAX_SOURCES][2]; /* this CTA's sums (read by the cluster) */
	__shared__ float alpha[ATTNRES_MAX_SOURCES];
	__shared__ float hred[WARPS];
	__shared__ float hpart; /* this CTA's sum h^2 (read by the cluster) */
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
	int rank = 0;
	if constexpr (CS > 1)
		rank = (int)cg::this_cluster().block_rank();
	const size_t row = (size_t)(blockIdx.x / CS) * a.dim;
	const int chunks = a.dim / 8, n = a.n_sources;
	const int c0 = rank * chunks / CS, c1 = (rank + 1) * chunks / CS, sc = c1 - c0;
	const bool upd = a.delta != nullptr;

	/* Every source's (and delta's) chunks of this thread into shared memory at once. */
	for (int i = 0; i < n + (upd ? 1 : 0); i++) {
		const uint16_t *s = i < n ? a.src[i] : a.delta;
#pragma unroll
		for (int c = 0; c < CPT; c++) {
			const int lc = tid + c * THREADS;
			if (lc < sc)
				k3_cp_async16(&raw[i * sc + lc], s + row + (size_t)(c0 + lc) * 8);
		}
	}
	k3_cp_async_commit();

	/* query * key-norm weight, per chunk of this thread (while the copies fly). */
	float qk[CPT][8];
#pragma unroll
	for (int c = 0; c < CPT; c++) {
		const int lc = tid + c * THREADS;
		if (lc >= sc)
			continue;
		unpack8(*reinterpret_cast<const uint4 *>(a.query + (c0 + lc) * 8), qk[c]);
		if (a.key_norm_w) {
			float kw[8];
			unpack8(*reinterpret_cast<const uint4 *>(a.key_norm_w + (c0 + lc) * 8), kw);
#pragma unroll
			for (int e = 0; e < 8; e++)
				qk[c][e] *= kw[e];
		}
	}
	k3_cp_async_wait<0>(); /* each thread reads back only its own copies */

	/* The partial sum takes delta (BF16, stored, and used as stored). */
	if (upd) {
#pragma unroll
		for (int c = 0; c < CPT; c++) {
			const int lc = tid + c * THREADS;
			if (lc >= sc)
				continue;
			float v[8], d[8];
			unpack8(raw[(n - 1) * sc + lc], v);
			unpack8(raw[n * sc + lc], d);
#pragma unroll
			for (int e = 0; e < 8; e++)
				v[e] += d[e];
			const uint4 pv = pack8(v);
			raw[(n - 1) * sc + lc] = pv;
			*reinterpret_cast<uint4 *>(a.partial_out + row + (size_t)(c0 + lc) * 8) = pv;
		}
	}

	/* Pass 1: per source, sum of squares and dot with the query. */
#pragma unroll
	for (int i = 0; i < ATTNRES_MAX_SOURCES; i++) {
		if (i >= n)
			break;
		float ss = 0.0f, dq = 0.0f;
#pragma unroll
		for (int c = 0; c < CPT; c++) {
			const int lc = tid + c * THREADS;
			if (lc >= sc)
				continue;
			float v[8];
			unpack8(raw[i * sc + lc], v);
#pragma unroll
			for (int e = 0; e < 8; e++) {
				ss += v[e] * v[e];
				dq += v[e] * qk[c][e];
			}
		}
		ss = k3_group_sum<32>(ss);
		dq = k3_group_sum<32>(dq);
		if (lane == 0)
			red[warp][i][0] = ss, red[warp][i][1] = dq;
	}
	__syncthreads();
	if (tid < n) {
		float ss = 0.0f, dq = 0.0f;
#pragma unroll
		for (int w = 0; w < WARPS; w++)
			ss += red[w][tid][0], dq += red[w][tid][1];
		part[tid][0] = ss, part[tid][1] = dq;
	}
	if constexpr (CS > 1)
		cg::this_cluster().sync();
	else
		__syncthreads();
	if (tid < n) {
		float ss = 0.0f, dq = 0.0f;
#pragma unroll
		for (int r = 0; r < CS; r++) {
			const float *pp = &part[tid][0];
			if constexpr (CS > 1)
				pp = cg::this_cluster().map_shared_rank(pp, r);
			ss += pp[0], dq += pp[1];
		}
		alpha[tid] = dq * rsqrtf(ss / (float)a.dim + a.eps); /* the score, for now */
	}
	__syncthreads();
	float m = -INFINITY;
	for (int i = 0; i < n; i++)
		m = fmaxf(m, alpha[i]);
	float z = 0.0f;
	for (int i = 0; i < n; i++)
		z += __expf(alpha[i] - m);
	__syncthreads();
	if (tid < n)
		alpha[tid] = __expf(alpha[tid] - m) / z;
	__syncthreads();

	/* Pass 2 (the sources again, from shared memory): h = sum alpha_i v_i, then its RMSNorm. */
	float h[CPT][8];
#pragma unroll
	for (int c = 0; c < CPT; c++)
#pragma unroll
		for (int e = 0; e < 8; e++)
			h[c][e] = 0.0f;
	for (int i = 0; i < n; i++) {
		const float al = alpha[i];
#pragma unroll
		for (int c = 0; c < CPT; c++) {
			const int lc = tid + c * THREADS;
			if (lc >= sc)
				continue;
			float v[8];
			unpack8(raw[i * sc + lc], v);
#pragma unroll
			for (int e = 0; e < 8; e++)
				h[c][e] += al * v[e];
		}
	}
	float ss = 0.0f;
#pragma unroll
	for (int c = 0; c < CPT; c++)
#pragma unroll
		for (int e = 0; e < 8; e++)
			ss += h[c][e] * h[c][e];
	ss = k3_group_sum<32>(ss);
	if (lane == 0)
		hred[warp] = ss;
	__syncthreads();
	if (tid == 0) {
		float t = 0.0f;
#pragma unroll
		for (int w = 0; w < WARPS; w++)
			t += hred[w];
		hpart = t;
	}
	if constexpr (CS > 1)
		cg::this_cluster().sync();
	else
		__syncthreads();
	ss = 0.0f;
#pragma unroll
	for (int r = 0; r < CS; r++) {
		const float *pp = &hpart;
		if constexpr (CS > 1)
			pp = cg::this_cluster().map_shared_rank(pp, r);
		ss += *pp;
	}
	const float r = rsqrtf(ss / (float)a.dim + a.eps);
#pragma unroll
	for (int c = 0; c < CPT; c++) {
		const int lc = tid + c * THREADS;
		if (lc >= sc)
			continue;
		const int ch = c0 + lc;
		float g[8], o[8];
		unpack8(*reinterpret_cast<const uint4 *>(a.norm_w + ch * 8), g);
#pragma unroll
		for (int e = 0; e < 8; e++)
			o[e] = h[c][e] * r * g[e];
		*reinterpret_cast<uint4 *>(a.out + row + (size_t)ch * 8) = pack8(o);
		if (a.h_out)
			*reinterpret_cast<uint4 *>(a.h_out + row + (size_t)ch * 8) = pack8(h[c]);
	}
	if constexpr (CS > 1)
		cg::this_cluster().sync(); /* the peers have read this CTA's sums */
}

bool al16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

template <int CS>
int launch(const attnres_args &a, size_t smem, cudaStream_t stream)
{
	static bool set = false;
	if (!set) {
		if (cudaFuncSetAttribute(attnres_kernel<CS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					 (int)SMEM_MAX) != cudaSuccess)
			return k3_launch_status();
		set = true;
	}
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute at[1];
	cfg.gridDim = dim3((unsigned)a.tokens * CS);
	cfg.blockDim = dim3(THREADS);
	cfg.dynamicSmemBytes = smem;
	cfg.stream = stream;
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = CS, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
	cfg.attrs = at;
	cfg.numAttrs = 1;
	if (cudaLaunchKernelEx(&cfg, attnres_kernel<CS>, a) != cudaSuccess)
		return -EIO;
	return k3_launch_status();
}

/* CTAs a token: wide clusters while the tokens alone fill few SMs, else 2 at K3's width (1 for
 * narrow rows); wider where one CTA's slices of the sources would not fit in shared memory. */
int cluster_size(int tokens, int dim, int n_sources, bool with_delta)
{
	const int chunks = dim / 8;
	int cs;
	if (tokens < 1024) {
		const int w = chunks / 112;
		cs = w >= 8 ? 8 : w >= 4 ? 4 : w >= 2 ? 2 : 1;
	} else {
		cs = chunks > 4 * THREADS ? 4 : 1; /* 4 at K3's width: 61-64 % of copy, 2: 50-54, 8: 51-52 (01l) */
	}
	/* K3_ATTNRES_CLUSTER=1|2|4|8 forces a width (read per call: the bench and tests switch it);
	 * still at least 2 where one CTA's threads cannot hold the row, and wider where it won't fit. */
	const char *e = getenv("K3_ATTNRES_CLUSTER");
	if (e && (!strcmp(e, "1") || !strcmp(e, "2") || !strcmp(e, "4") || !strcmp(e, "8")))
		cs = atoi(e);
	if (cs == 1 && chunks > 4 * THREADS)
		cs = 2;
	while (cs < 8 && (size_t)(n_sources + (with_delta ? 1 : 0)) * ((chunks + cs - 1) / cs) * 16 > SMEM_MAX)
		cs *= 2;
	return cs;
}

} // namespace

extern "C" int attnres(const struct attnres_args *a, cudaStream_t stream)
{
	if (!a || a->tokens < 0 || a->dim < 8 || a->dim % 8 || a->dim > ATTNRES_MAX_DIM || a->n_sources < 1 ||
	    a->n_sources > ATTNRES_MAX_SOURCES || !a->query || !al16(a->query) || !a->norm_w || !al16(a->norm_w) ||
	    !a->out || !al16(a->out) || (a->key_norm_w && !al16(a->key_norm_w)) || (a->h_out && !al16(a->h_out)) ||
	    (a->delta && (!al16(a->delta) || !a->partial_out || !al16(a->partial_out))) ||
	    a->tokens > (1 << 27))
		return -EINVAL;
	for (int i = 0; i < a->n_sources; i++)
		if (!a->src[i] || !al16(a->src[i]))
			return -EINVAL;
	if (a->tokens == 0)
		return 0;
	const int cs = cluster_size(a->tokens, a->dim, a->n_sources, a->delta != nullptr);
	const int chunks = a->dim / 8;
	const size_t smem = (size_t)(a->n_sources + (a->delta ? 1 : 0)) * ((chunks + cs - 1) / cs) * 16;
	switch (cs) {
	case 1:
		return launch<1>(*a, smem, stream);
	case 2:
		return launch<2>(*a, smem, stream);
	case 4:
		return launch<4>(*a, smem, stream);
	default:
		return launch<8>(*a, smem, stream);
	}
}
