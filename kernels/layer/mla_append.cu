/* SPDX-License-Identifier: MIT */
/* New latent rows into the paged MLA cache: see mla_append.h. */
#include "mla_append.h"

#include <cerrno>
#include <cstdint>

#include "common/k3_device.cuh"

namespace {

constexpr int WARPS = 8;

__device__ __forceinline__ void unpack8(const uint4 v, float f[8])
{
	f[0] = k3_lo_bf16(v.x), f[1] = k3_hi_bf16(v.x), f[2] = k3_lo_bf16(v.y), f[3] = k3_hi_bf16(v.y);
	f[4] = k3_lo_bf16(v.z), f[5] = k3_hi_bf16(v.z), f[6] = k3_lo_bf16(v.w), f[7] = k3_hi_bf16(v.w);
}

/* E4M3 pair: lo in the low byte (cvt puts its first operand in the high byte). */
__device__ __forceinline__ uint32_t e4m3x2(float lo, float hi)
{
	uint16_t d;
	asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(hi), "f"(lo));
	return d;
}

/* One warp per row: lane l holds latent columns 16 l .. 16 l + 15 (tile l / 8) and rope columns 2 l, 2 l + 1. */
__global__ void __launch_bounds__(WARPS * 32) append_kernel(const mla_append_args a)
{
	const int lane = (int)threadIdx.x & 31;
	const int t = (int)blockIdx.x * WARPS + ((int)threadIdx.x >> 5);
	if (t >= a.tokens)
		return;
	const uint16_t *row = a.kv_in + (size_t)t * a.ld;
	float x[16], w[16];
	unpack8(*reinterpret_cast<const uint4 *>(row + lane * 16), x);
	unpack8(*reinterpret_cast<const uint4 *>(row + lane * 16 + 8), x + 8);
	unpack8(*reinterpret_cast<const uint4 *>(a.norm_w + lane * 16), w);
	unpack8(*reinterpret_cast<const uint4 *>(a.norm_w + lane * 16 + 8), w + 8);
	const uint32_t rope = *reinterpret_cast<const uint32_t *>(row + MLA_LATENT + lane * 2);
	float ss = 0.0f;
#pragma unroll
	for (int e = 0; e < 16; e++)
		ss += x[e] * x[e];
	ss = k3_group_sum<32>(ss);
	const float r = rsqrtf(ss / (float)MLA_LATENT + a.eps);
#pragma unroll
	for (int e = 0; e < 16; e++)
		x[e] *= r * w[e];
	const int pos = a.pos[t];
	const int32_t page = a.block_table[(size_t)a.req[t] * a.max_pages + pos / MLA_PAGE_TOKENS];
	const size_t tok = (size_t)page * MLA_PAGE_TOKENS + pos % MLA_PAGE_TOKENS;
	if (a.kv == MLA_KV_BF16) {
		uint16_t *dst = static_cast<uint16_t *>(a.cache) + tok * MLA_DIM;
		uint4 v0, v1;
		v0.x = k3_pack_bf16(x[0], x[1]), v0.y = k3_pack_bf16(x[2], x[3]);
		v0.z = k3_pack_bf16(x[4], x[5]), v0.w = k3_pack_bf16(x[6], x[7]);
		v1.x = k3_pack_bf16(x[8], x[9]), v1.y = k3_pack_bf16(x[10], x[11]);
		v1.z = k3_pack_bf16(x[12], x[13]), v1.w = k3_pack_bf16(x[14], x[15]);
		*reinterpret_cast<uint4 *>(dst + lane * 16) = v0;
		*reinterpret_cast<uint4 *>(dst + lane * 16 + 8) = v1;
		*reinterpret_cast<uint32_t *>(dst + MLA_LATENT + lane * 2) = rope;
		return;
	}
	unsigned char *dst = static_cast<unsigned char *>(a.cache) + tok * MLA_FP8_TOKEN_BYTES;
	float amax = 0.0f;
#pragma unroll
	for (int e = 0; e < 16; e++)
		amax = fmaxf(amax, fabsf(x[e]));
	amax = k3_group_max<8>(amax); /* the 8 lanes of a 128-column tile */
	const float s = amax > 0.0f ? amax / 448.0f : 1.0f;
	uint4 q;
	uint32_t b[8];
#pragma unroll
	for (int i = 0; i < 8; i++)
		b[i] = e4m3x2(x[2 * i] / s, x[2 * i + 1] / s);
	q.x = b[0] | (b[1] << 16), q.y = b[2] | (b[3] << 16), q.z = b[4] | (b[5] << 16), q.w = b[6] | (b[7] << 16);
	*reinterpret_cast<uint4 *>(dst + lane * 16) = q;
	if ((lane & 7) == 0)
		*reinterpret_cast<float *>(dst + MLA_FP8_SCALE_OFFSET + (lane / 8) * 4) = s;
	*reinterpret_cast<uint32_t *>(dst + MLA_FP8_ROPE_OFFSET + lane * 4) = rope;
}

bool al16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

} // namespace

extern "C" int mla_append(const struct mla_append_args *a, cudaStream_t stream)
{
	if (!a || a->tokens < 0 || (a->kv != MLA_KV_BF16 && a->kv != MLA_KV_FP8) || !a->kv_in || !al16(a->kv_in) ||
	    a->ld < MLA_DIM || a->ld % 8 || !a->norm_w || !al16(a->norm_w) || !a->req || !a->pos || !a->block_table ||
	    a->max_pages < 1 || !a->cache || !al16(a->cache))
		return -EINVAL;
	if (a->tokens == 0)
		return 0;
	append_kernel<<<(a->tokens + WARPS - 1) / WARPS, WARPS * 32, 0, stream>>>(*a);
	return k3_launch_status();
}
