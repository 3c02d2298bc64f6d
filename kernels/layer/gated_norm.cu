/* SPDX-License-Identifier: MIT */
/* KDA's gated output RMSNorm: see gated_norm.h. */
#include "gated_norm.h"

#include <cerrno>
#include <cstdint>

#include "common/k3_device.cuh"

namespace {

constexpr int WARPS = 8;
constexpr int D = 128; /* head dim: 4 elements a lane */

__global__ void __launch_bounds__(WARPS * 32) gated_norm_kernel(const k3_gated_norm_args a)
{
	const int lane = (int)threadIdx.x & 31;
	const int64_t item = (int64_t)blockIdx.x * WARPS + ((int)threadIdx.x >> 5); /* (token, head) */
	if (item >= a.tokens * a.heads)
		return;
	const size_t base = (size_t)item * D + lane * 4;
	const uint2 ov = *reinterpret_cast<const uint2 *>(a.o + base);
	const uint2 gv = *reinterpret_cast<const uint2 *>(a.gate + base);
	const uint2 wv = *reinterpret_cast<const uint2 *>(a.norm_w + lane * 4);
	const float o[4] = { k3_lo_bf16(ov.x), k3_hi_bf16(ov.x), k3_lo_bf16(ov.y), k3_hi_bf16(ov.y) };
	const float g[4] = { k3_lo_bf16(gv.x), k3_hi_bf16(gv.x), k3_lo_bf16(gv.y), k3_hi_bf16(gv.y) };
	const float w[4] = { k3_lo_bf16(wv.x), k3_hi_bf16(wv.x), k3_lo_bf16(wv.y), k3_hi_bf16(wv.y) };
	float ss = o[0] * o[0] + o[1] * o[1] + o[2] * o[2] + o[3] * o[3];
	ss = k3_group_sum<32>(ss);
	const float r = rsqrtf(ss / (float)D + a.eps);
	uint2 y;
	y.x = k3_pack_bf16(o[0] * r * w[0] * k3_sigmoid(g[0]), o[1] * r * w[1] * k3_sigmoid(g[1]));
	y.y = k3_pack_bf16(o[2] * r * w[2] * k3_sigmoid(g[2]), o[3] * r * w[3] * k3_sigmoid(g[3]));
	*reinterpret_cast<uint2 *>(a.out + base) = y;
}

bool al16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

} // namespace

extern "C" int k3_gated_norm(const struct k3_gated_norm_args *a, cudaStream_t stream)
{
	if (!a || a->tokens < 0 || a->heads < 1 || a->tokens * a->heads >= ((int64_t)1 << 36) || !a->o || !al16(a->o) ||
	    !a->gate || !al16(a->gate) || !a->norm_w || !al16(a->norm_w) || !a->out || !al16(a->out))
		return -EINVAL;
	const int64_t items = a->tokens * a->heads;
	if (items == 0)
		return 0;
	gated_norm_kernel<<<(unsigned)((items + WARPS - 1) / WARPS), WARPS * 32, 0, stream>>>(*a);
	return k3_launch_status();
}
