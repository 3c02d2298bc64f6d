/* SPDX-License-Identifier: MIT */
/* Block AttnRes fused with the pre-norm: see attnres.h. */
#include "attnres.h"

#include <cerrno>
#include <cstdint>

#include "common/k3_device.cuh"

namespace {

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int CPT = ATTNRES_MAX_DIM / 8 / THREADS; /* 8-element chunks per thread, at most */

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

__global__ void __launch_bounds__(THREADS) attnres_kernel(const attnres_args a)
{
	__shared__ float red[WARPS][ATTNRES_MAX_SOURCES][2];
	__shared__ float alpha[ATTNRES_MAX_SOURCES];
	__shared__ float hred[WARPS];
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const size_t row = (size_t)blockIdx.x * a.dim;
	const int chunks = a.dim / 8, n = a.n_sources;

	/* query * key-norm weight, per chunk of this thread. */
	float qk[CPT][8];
#pragma unroll
	for (int c = 0; c < CPT; c++) {
		const int ch = tid + c * THREADS;
		if (ch >= chunks)
			continue;
		unpack8(*reinterpret_cast<const uint4 *>(a.query + ch * 8), qk[c]);
		if (a.key_norm_w) {
			float kw[8];
			unpack8(*reinterpret_cast<const uint4 *>(a.key_norm_w + ch * 8), kw);
#pragma unroll
			for (int e = 0; e < 8; e++)
				qk[c][e] *= kw[e];
		}
	}

	/* Pass 1: per source, sum of squares and dot with the query. */
	for (int i = 0; i < n; i++) {
		const bool upd = a.delta && i == n - 1;
		float ss = 0.0f, dq = 0.0f;
#pragma unroll
		for (int c = 0; c < CPT; c++) {
			const int ch = tid + c * THREADS;
			if (ch >= chunks)
				continue;
			float v[8];
			unpack8(*reinterpret_cast<const uint4 *>(a.src[i] + row + ch * 8), v);
			if (upd) {
				float d[8];
				unpack8(*reinterpret_cast<const uint4 *>(a.delta + row + ch * 8), d);
#pragma unroll
				for (int e = 0; e < 8; e++)
					v[e] += d[e];
				const uint4 pv = pack8(v);
				*reinterpret_cast<uint4 *>(a.partial_out + row + ch * 8) = pv;
				unpack8(pv, v); /* the stored (BF16) partial is the source */
			}
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

	/* Pass 2 (the sources again, from L2): h = sum alpha_i v_i, then its RMSNorm. */
	float h[CPT][8];
#pragma unroll
	for (int c = 0; c < CPT; c++)
#pragma unroll
		for (int e = 0; e < 8; e++)
			h[c][e] = 0.0f;
	for (int i = 0; i < n; i++) {
		const uint16_t *s = a.delta && i == n - 1 ? a.partial_out : a.src[i];
		const float al = alpha[i];
#pragma unroll
		for (int c = 0; c < CPT; c++) {
			const int ch = tid + c * THREADS;
			if (ch >= chunks)
				continue;
			float v[8];
			unpack8(*reinterpret_cast<const uint4 *>(s + row + ch * 8), v);
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
	ss = 0.0f;
#pragma unroll
	for (int w = 0; w < WARPS; w++)
		ss += hred[w];
	const float r = rsqrtf(ss / (float)a.dim + a.eps);
#pragma unroll
	for (int c = 0; c < CPT; c++) {
		const int ch = tid + c * THREADS;
		if (ch >= chunks)
			continue;
		float g[8], o[8];
		unpack8(*reinterpret_cast<const uint4 *>(a.norm_w + ch * 8), g);
#pragma unroll
		for (int e = 0; e < 8; e++)
			o[e] = h[c][e] * r * g[e];
		*reinterpret_cast<uint4 *>(a.out + row + ch * 8) = pack8(o);
		if (a.h_out)
			*reinterpret_cast<uint4 *>(a.h_out + row + ch * 8) = pack8(h[c]);
	}
}

bool al16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

} // namespace

extern "C" int attnres(const struct attnres_args *a, cudaStream_t stream)
{
	if (!a || a->tokens < 0 || a->dim < 8 || a->dim % 8 || a->dim > ATTNRES_MAX_DIM || a->n_sources < 1 ||
	    a->n_sources > ATTNRES_MAX_SOURCES || !a->query || !al16(a->query) || !a->norm_w || !al16(a->norm_w) ||
	    !a->out || !al16(a->out) || (a->key_norm_w && !al16(a->key_norm_w)) || (a->h_out && !al16(a->h_out)) ||
	    (a->delta && (!al16(a->delta) || !a->partial_out || !al16(a->partial_out))))
		return -EINVAL;
	for (int i = 0; i < a->n_sources; i++)
		if (!a->src[i] || !al16(a->src[i]))
			return -EINVAL;
	if (a->tokens == 0)
		return 0;
	attnres_kernel<<<a->tokens, THREADS, 0, stream>>>(*a);
	return k3_launch_status();
}
