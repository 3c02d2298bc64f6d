/* SPDX-License-Identifier: MIT */
/* LatentMoE routing and grouping: see moe_route.h. */
#include "moe_route.h"

#include <cerrno>
#include <climits>
#include <cstdint>

#include "common/k3_device.cuh"

namespace {

constexpr int TOPK_WARPS = 8;                       /* tokens per top-k CTA */
constexpr int EPL = MOE_MAX_EXPERTS / 32;           /* experts per lane, at most */
constexpr int BLOCK_TOKENS = 256;                   /* tokens per counting block */
constexpr int MASK_WORDS = BLOCK_TOKENS / 32;       /* bitmask words per expert */
constexpr int GROUP_THREADS = 256;
constexpr int SCAN_THREADS = 1024;
static_assert(MOE_MAX_EXPERTS <= SCAN_THREADS, "one scan thread per expert");

/* One warp per token: K rounds of a warp argmax over (sigmoid + bias), ties
 * to the lower expert; chosen entries become NaN (never chosen again; NaN
 * logits count as -inf, still choosable). */
__global__ void __launch_bounds__(TOPK_WARPS * 32) topk_kernel(const moe_route_args a)
{
	const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
	const int t = (int)blockIdx.x * TOPK_WARPS + warp;
	if (t >= a.tokens)
		return;
	const float *lg = a.logits + (size_t)t * a.logits_stride;
	float v[EPL], sc[EPL];
#pragma unroll
	for (int i = 0; i < EPL; i++) {
		const int e = lane + 32 * i;
		if (e < a.experts) {
			const float s = k3_sigmoid(lg[e]);
			sc[i] = s;
			const float x = s + (a.bias ? a.bias[e] : 0.0f);
			v[i] = isnan(x) ? -INFINITY : x;
		} else {
			sc[i] = 0.0f;
			v[i] = __int_as_float(0x7fc00000); /* not an expert */
		}
	}
	int my_e = 0;
	float my_s = 0.0f;
	for (int k = 0; k < a.topk; k++) {
		float bv = -INFINITY, bs = 0.0f;
		int be = INT_MAX;
#pragma unroll
		for (int i = 0; i < EPL; i++) {
			const int e = lane + 32 * i;
			if (v[i] > bv || (v[i] == bv && e < be))
				bv = v[i], be = e, bs = sc[i];
		}
#pragma unroll
		for (int o = 16; o > 0; o >>= 1) {
			const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
			const int oe = __shfl_xor_sync(0xffffffffu, be, o);
			const float os = __shfl_xor_sync(0xffffffffu, bs, o);
			if (ov > bv || (ov == bv && oe < be))
				bv = ov, be = oe, bs = os;
		}
#pragma unroll
		for (int i = 0; i < EPL; i++)
			if (lane + 32 * i == be)
				v[i] = __int_as_float(0x7fc00000);
		if (lane == k)
			my_e = be, my_s = bs;
	}
	const float sum = k3_group_sum<32>(lane < a.topk ? my_s : 0.0f);
	if (lane < a.topk) {
		a.topk_ids[(size_t)t * a.topk + lane] = my_e;
		a.topk_weights[(size_t)t * a.topk + lane] = my_s / sum * a.scaling;
	}
}

/* Bitmask of the block's tokens per expert: bit t of mask[e] when token t
 * (block-local) chose e. Experts of one token are distinct. */
__device__ void build_masks(const moe_route_args &a, uint32_t *mask, int t0, int nt)
{
	for (int i = (int)threadIdx.x; i < a.experts * MASK_WORDS; i += GROUP_THREADS)
		mask[i] = 0u;
	__syncthreads();
	for (int i = (int)threadIdx.x; i < nt * a.topk; i += GROUP_THREADS) {
		const int tl = i / a.topk;
		const int e = a.topk_ids[(size_t)(t0 + tl) * a.topk + i % a.topk];
		atomicOr(&mask[e * MASK_WORDS + (tl >> 5)], 1u << (tl & 31));
	}
	__syncthreads();
}

__global__ void __launch_bounds__(GROUP_THREADS) count_kernel(const moe_route_args a, int32_t *block_counts)
{
	extern __shared__ uint32_t mask[];
	const int t0 = (int)blockIdx.x * BLOCK_TOKENS, nt = min(BLOCK_TOKENS, a.tokens - t0);
	build_masks(a, mask, t0, nt);
	for (int e = (int)threadIdx.x; e < a.experts; e += GROUP_THREADS) {
		int c = 0;
#pragma unroll
		for (int w = 0; w < MASK_WORDS; w++)
			c += __popc(mask[e * MASK_WORDS + w]);
		block_counts[(size_t)blockIdx.x * a.experts + e] = c;
	}
}

/* Exclusive scan over the threads of the CTA (SCAN_THREADS). */
__device__ int block_scan(int x, int *tmp, int *total)
{
	const int tid = (int)threadIdx.x;
	tmp[tid] = x;
	__syncthreads();
	for (int o = 1; o < SCAN_THREADS; o <<= 1) {
		const int y = tid >= o ? tmp[tid - o] : 0;
		__syncthreads();
		tmp[tid] += y;
		__syncthreads();
	}
	const int incl = tmp[tid];
	*total = tmp[SCAN_THREADS - 1];
	__syncthreads();
	return incl - x;
}

/* One CTA: per-expert bases of each block (in place), offsets, tile
 * offsets, touched list. */
__global__ void __launch_bounds__(SCAN_THREADS) scan_kernel(const moe_route_args a, int32_t *block_counts, int nblk)
{
	__shared__ int tmp[SCAN_THREADS];
	const int e = (int)threadIdx.x;
	int count = 0;
	if (e < a.experts)
		for (int b = 0; b < nblk; b++) {
			const int c = block_counts[(size_t)b * a.experts + e];
			block_counts[(size_t)b * a.experts + e] = count;
			count += c;
		}
	int total;
	const int off = block_scan(count, tmp, &total);
	const int tiles = (count + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS;
	int total_tiles;
	const int toff = block_scan(tiles, tmp, &total_tiles);
	int n_touched;
	const int pos = block_scan(count > 0 ? 1 : 0, tmp, &n_touched);
	if (e < a.experts) {
		a.off[e] = off;
		a.tile_off[e] = toff;
		if (count > 0)
			a.touched[pos] = e;
	}
	if (e == 0) {
		a.off[a.experts] = total;
		a.tile_off[a.experts] = total_tiles;
		*a.n_touched = n_touched;
	}
}

__global__ void __launch_bounds__(GROUP_THREADS) scatter_kernel(const moe_route_args a, const int32_t *block_base)
{
	extern __shared__ uint32_t mask[];
	const int t0 = (int)blockIdx.x * BLOCK_TOKENS, nt = min(BLOCK_TOKENS, a.tokens - t0);
	build_masks(a, mask, t0, nt);
	for (int i = (int)threadIdx.x; i < nt * a.topk; i += GROUP_THREADS) {
		const int tl = i / a.topk, k = i % a.topk;
		const size_t pair = (size_t)(t0 + tl) * a.topk + k;
		const int e = a.topk_ids[pair];
		const uint32_t *m = mask + e * MASK_WORDS;
		int rank = __popc(m[tl >> 5] & ((1u << (tl & 31)) - 1u));
		for (int w = 0; w < (tl >> 5); w++)
			rank += __popc(m[w]);
		const int r = a.off[e] + block_base[(size_t)blockIdx.x * a.experts + e] + rank;
		a.row_token[r] = t0 + tl;
		a.row_weight[r] = a.topk_weights[pair];
		a.row_of[pair] = r;
	}
}

} // namespace

extern "C" size_t moe_route_workspace_bytes(int tokens, int experts)
{
	if (tokens < 0 || experts < 1)
		return 0;
	const size_t nblk = ((size_t)tokens + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
	return (nblk ? nblk : 1) * (size_t)experts * sizeof(int32_t);
}

extern "C" int moe_route(const struct moe_route_args *a, cudaStream_t stream)
{
	if (!a || a->tokens < 0 || a->experts < 1 || a->experts > MOE_MAX_EXPERTS || a->topk < 1 ||
	    a->topk > a->experts || a->topk > MOE_MAX_TOPK || (int64_t)a->tokens * a->topk > INT_MAX ||
	    a->logits_stride < a->experts || !a->logits || !a->topk_ids || !a->topk_weights || !a->off ||
	    !a->tile_off || !a->touched || !a->n_touched || !a->row_token || !a->row_weight || !a->row_of ||
	    !a->workspace || a->workspace_bytes < moe_route_workspace_bytes(a->tokens, a->experts) ||
	    ((uintptr_t)a->workspace & 3u))
		return -EINVAL;
	const int nblk = (a->tokens + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
	int32_t *counts = static_cast<int32_t *>(a->workspace);
	const size_t mask_bytes = (size_t)a->experts * MASK_WORDS * sizeof(uint32_t); /* <= 32 KiB */
	if (a->tokens > 0) {
		topk_kernel<<<(a->tokens + TOPK_WARPS - 1) / TOPK_WARPS, TOPK_WARPS * 32, 0, stream>>>(*a);
		count_kernel<<<nblk, GROUP_THREADS, mask_bytes, stream>>>(*a, counts);
	}
	scan_kernel<<<1, SCAN_THREADS, 0, stream>>>(*a, counts, nblk);
	if (a->tokens > 0)
		scatter_kernel<<<nblk, GROUP_THREADS, mask_bytes, stream>>>(*a, counts);
	return k3_launch_status();
}
