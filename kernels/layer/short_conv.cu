/* SPDX-License-Identifier: MIT */
/* KDA ShortConv + SiLU over a packed prefill: see short_conv.h. */
#include "short_conv.h"

#include <cerrno>
#include <cstdint>

#include "common/k3_device.cuh"

namespace {

constexpr int THREADS = 256;

__device__ __forceinline__ void unpack8(const uint4 v, float f[8])
{
	f[0] = k3_lo_bf16(v.x), f[1] = k3_hi_bf16(v.x), f[2] = k3_lo_bf16(v.y), f[3] = k3_hi_bf16(v.y);
	f[4] = k3_lo_bf16(v.z), f[5] = k3_hi_bf16(v.z), f[6] = k3_lo_bf16(v.w), f[7] = k3_hi_bf16(v.w);
}

/* The sequence holding token t: the last i with cu[i] <= t. */
__device__ __forceinline__ int seq_of(const int32_t *cu, int n, int64_t t)
{
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		const int mid = (lo + hi + 1) >> 1;
		if (cu[mid] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* One thread per (token, 8 channels). */
__global__ void __launch_bounds__(THREADS) conv_kernel(const k3_short_conv_args a)
{
	const int C = a.channels, chunks = C / 8, third = C / K3_CONV_OUTS;
	const int64_t idx = (int64_t)blockIdx.x * THREADS + threadIdx.x;
	if (idx >= a.total_tokens * chunks)
		return;
	const int64_t t = idx / chunks;
	const int ch = (int)(idx % chunks), c0 = ch * 8;
	const int s = seq_of(a.cu_seqlens, a.n_seqs, t);
	const int64_t start = a.cu_seqlens[s], pos = t - start;
	const int64_t slot = a.slot ? a.slot[s] : s;
	float w[8][K3_CONV_TAPS];
#pragma unroll
	for (int q = 0; q < 4; q++) { /* 8 channels x 4 taps = 4 x 16 bytes */
		float f[8];
		unpack8(*reinterpret_cast<const uint4 *>(a.w + (size_t)c0 * K3_CONV_TAPS + q * 8), f);
#pragma unroll
		for (int e = 0; e < 8; e++)
			w[2 * q + e / 4][e % 4] = f[e];
	}
	float acc[8] = { 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f };
#pragma unroll
	for (int i = 0; i < K3_CONV_TAPS; i++) {
		const int64_t p = pos - (K3_CONV_TAPS - 1) + i;
		uint4 v = make_uint4(0u, 0u, 0u, 0u);
		if (p >= 0)
			v = *reinterpret_cast<const uint4 *>(a.x + (start + p) * C + c0);
		else if (a.conv_state)
			v = *reinterpret_cast<const uint4 *>(a.conv_state + (slot * 3 + (3 + p)) * C + c0);
		float f[8];
		unpack8(v, f);
#pragma unroll
		for (int e = 0; e < 8; e++)
			acc[e] += w[e][i] * f[e];
	}
	uint4 o;
	float y[8];
#pragma unroll
	for (int e = 0; e < 8; e++)
		y[e] = acc[e] * k3_sigmoid(acc[e]);
	o.x = k3_pack_bf16(y[0], y[1]), o.y = k3_pack_bf16(y[2], y[3]);
	o.z = k3_pack_bf16(y[4], y[5]), o.w = k3_pack_bf16(y[6], y[7]);
	const int which = c0 / third;
	uint16_t *dst = which == 0 ? a.out[0] : which == 1 ? a.out[1] : a.out[2]; /* no local copy of a.out */
	*reinterpret_cast<uint4 *>(dst + t * third + (c0 - which * third)) = o;
}

/* One thread per (sequence, 8 channels): the state becomes the last three inputs. */
__global__ void __launch_bounds__(THREADS) state_kernel(const k3_short_conv_args a)
{
	const int C = a.channels, chunks = C / 8;
	const int64_t idx = (int64_t)blockIdx.x * THREADS + threadIdx.x;
	if (idx >= (int64_t)a.n_seqs * chunks)
		return;
	const int s = (int)(idx / chunks), c0 = (int)(idx % chunks) * 8;
	const int64_t start = a.cu_seqlens[s], L = a.cu_seqlens[s + 1] - start;
	const int64_t slot = a.slot ? a.slot[s] : s;
	uint16_t *st = a.conv_state + slot * 3 * C + c0;
	uint4 old[3], nw[3];
#pragma unroll
	for (int j = 0; j < 3; j++)
		old[j] = *reinterpret_cast<const uint4 *>(st + (size_t)j * C);
#pragma unroll
	for (int j = 0; j < 3; j++) {
		const int64_t p = L - 3 + j;
		const int64_t q = j + L; /* index in old[0..2], x[0..L-1] */
		nw[j] = p >= 0 ? *reinterpret_cast<const uint4 *>(a.x + (start + p) * C + c0)
			: q == 0 ? old[0] : q == 1 ? old[1] : old[2];
	}
#pragma unroll
	for (int j = 0; j < 3; j++)
		*reinterpret_cast<uint4 *>(st + (size_t)j * C) = nw[j];
}

bool al16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

} // namespace

extern "C" int k3_short_conv(const struct k3_short_conv_args *a, cudaStream_t stream)
{
	if (!a || a->n_seqs < 1 || a->total_tokens < 0 || a->total_tokens >= ((int64_t)1 << 31) || a->channels < 24 ||
	    a->channels % (8 * K3_CONV_OUTS) || !a->cu_seqlens || !a->x || !al16(a->x) || !a->w || !al16(a->w) ||
	    (a->conv_state && !al16(a->conv_state)))
		return -EINVAL;
	for (int i = 0; i < K3_CONV_OUTS; i++)
		if (!a->out[i] || !al16(a->out[i]))
			return -EINVAL;
	const int64_t work = a->total_tokens * (a->channels / 8);
	if (work > 0)
		conv_kernel<<<(unsigned)((work + THREADS - 1) / THREADS), THREADS, 0, stream>>>(*a);
	if (a->conv_state) {
		const int64_t sw = (int64_t)a->n_seqs * (a->channels / 8);
		state_kernel<<<(unsigned)((sw + THREADS - 1) / THREADS), THREADS, 0, stream>>>(*a);
	}
	return k3_launch_status();
}
