/* SPDX-License-Identifier: MIT */
/* LatentMoE combine + RMSNorm: see moe_combine.h. */
#include "moe_combine.h"

#include <cerrno>
#include <cstdint>

#include "common/k3_device.cuh"

namespace {

constexpr int THREADS = 256;
constexpr int MAX_WIDTH = 8192;
constexpr int CPT = MAX_WIDTH / 8 / THREADS; /* 8-element chunks per thread, at most */
constexpr int FILL_THREADS = 256;
constexpr int64_t FILL_MAX_BLOCKS = 1024; /* a grid-stride loop past 256K elements */

__global__ void __launch_bounds__(THREADS) combine_kernel(const moe_combine_args a)
{
	__shared__ float red[THREADS / 32];
	const int t = (int)blockIdx.x, tid = (int)threadIdx.x;
	const int chunks = a.width / 8;
	float acc[CPT][8];
#pragma unroll
	for (int c = 0; c < CPT; c++)
#pragma unroll
		for (int e = 0; e < 8; e++)
			acc[c][e] = 0.0f;
	for (int k = 0; k < a.topk; k++) {
		const uint16_t *row = a.y + (size_t)a.row_of[(size_t)t * a.topk + k] * a.width;
#pragma unroll
		for (int c = 0; c < CPT; c++) {
			const int ch = tid + c * THREADS;
			if (ch < chunks) {
				const uint4 v = *reinterpret_cast<const uint4 *>(row + ch * 8);
				acc[c][0] += k3_lo_bf16(v.x), acc[c][1] += k3_hi_bf16(v.x);
				acc[c][2] += k3_lo_bf16(v.y), acc[c][3] += k3_hi_bf16(v.y);
				acc[c][4] += k3_lo_bf16(v.z), acc[c][5] += k3_hi_bf16(v.z);
				acc[c][6] += k3_lo_bf16(v.w), acc[c][7] += k3_hi_bf16(v.w);
			}
		}
	}
	float r = 1.0f;
	if (a.norm_w) {
		float ss = 0.0f;
#pragma unroll
		for (int c = 0; c < CPT; c++)
#pragma unroll
			for (int e = 0; e < 8; e++)
				ss += acc[c][e] * acc[c][e];
		ss = k3_group_sum<32>(ss);
		if ((tid & 31) == 0)
			red[tid >> 5] = ss;
		__syncthreads();
		ss = 0.0f;
#pragma unroll
		for (int w = 0; w < THREADS / 32; w++)
			ss += red[w];
		r = rsqrtf(ss / (float)a.width + a.eps);
	}
	uint16_t *out = a.out + (size_t)t * a.width;
#pragma unroll
	for (int c = 0; c < CPT; c++) {
		const int ch = tid + c * THREADS;
		if (ch >= chunks)
			continue;
		float w[8];
		if (a.norm_w) {
			const uint4 nw = *reinterpret_cast<const uint4 *>(a.norm_w + ch * 8);
			w[0] = k3_lo_bf16(nw.x), w[1] = k3_hi_bf16(nw.x), w[2] = k3_lo_bf16(nw.y), w[3] = k3_hi_bf16(nw.y);
			w[4] = k3_lo_bf16(nw.z), w[5] = k3_hi_bf16(nw.z), w[6] = k3_lo_bf16(nw.w), w[7] = k3_hi_bf16(nw.w);
		} else {
#pragma unroll
			for (int e = 0; e < 8; e++)
				w[e] = 1.0f;
		}
		uint4 o;
		o.x = k3_pack_bf16(acc[c][0] * r * w[0], acc[c][1] * r * w[1]);
		o.y = k3_pack_bf16(acc[c][2] * r * w[2], acc[c][3] * r * w[3]);
		o.z = k3_pack_bf16(acc[c][4] * r * w[4], acc[c][5] * r * w[5]);
		o.w = k3_pack_bf16(acc[c][6] * r * w[6], acc[c][7] * r * w[7]);
		*reinterpret_cast<uint4 *>(out + ch * 8) = o;
	}
}

__global__ void __launch_bounds__(FILL_THREADS) fill_f32_kernel(float *p, int64_t n, float v)
{
	for (int64_t i = (int64_t)blockIdx.x * FILL_THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * FILL_THREADS)
		p[i] = v;
}

} // namespace

extern "C" int moe_combine(const struct moe_combine_args *a, cudaStream_t stream)
{
	if (!a || a->tokens < 0 || a->tokens > 0x7fffffff || a->topk < 1 || a->width < 8 || a->width % 8 ||
	    a->width > MAX_WIDTH || !a->y || !a->row_of || !a->out || ((uintptr_t)a->y & 15u) ||
	    ((uintptr_t)a->out & 15u) || (a->norm_w && ((uintptr_t)a->norm_w & 15u)))
		return -EINVAL;
	if (a->tokens == 0)
		return 0;
	combine_kernel<<<a->tokens, THREADS, 0, stream>>>(*a);
	return k3_launch_status();
}

extern "C" int moe_fill_f32(float *p, int64_t n, float v, cudaStream_t stream)
{
	if (!p || n < 0 || ((uintptr_t)p & 3u))
		return -EINVAL;
	if (n == 0)
		return 0;
	const int64_t blocks = (n + FILL_THREADS - 1) / FILL_THREADS;
	fill_f32_kernel<<<(unsigned)(blocks < FILL_MAX_BLOCKS ? blocks : FILL_MAX_BLOCKS), FILL_THREADS, 0, stream>>>(p, n, v);
	return k3_launch_status();
}
