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

/* Order-preserving key of a float (larger float, larger key); 0 is below every float's key
 * (-inf maps to 0x007fffff) and marks entries that cannot be chosen. */
__device__ __forceinline__ uint32_t order_key(float f)
{
	const uint32_t u = __float_as_uint(f);
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* One warp per token, K rounds of a warp argmax over (sigmoid + bias), ties to
 * the lower expert; NaN scores count as -inf (still choosable). Each lane keeps
 * its experts lane, lane + 32, ... as order keys and its own best; a round is
 * two warp reductions (the largest key, then the lowest expert holding it) and
 * a rescan by the winning lane only. The round-by-round argmax with three
 * shuffles a step and a rescan by every lane ran 17-21 us at 1-16 tokens and
 * 59 us at 4096 (2026-12-01c slice). */
__global__ void __launch_bounds__(TOPK_WARPS * 32) topk_kernel(const moe_route_args a)
{
	const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
	const int t = (int)blockIdx.x * TOPK_WARPS + warp;
	if (t >= a.tokens)
		return;
	const float *lg = a.logits + (size_t)t * a.logits_stride;
	uint32_t key[EPL];
	float sc[EPL];
#pragma unroll
	for (int i = 0; i < EPL; i++) {
		const int e = lane + 32 * i;
		key[i] = 0u, sc[i] = 0.0f;
		if (e < a.experts) {
			const float s = k3_sigmoid(lg[e]);
			const float x = s + (a.bias ? a.bias[e] : 0.0f);
			sc[i] = s;
			key[i] = order_key(isnan(x) ? -INFINITY : x);
		}
	}
	auto lane_best = [&](uint32_t &bk, int &bi) {
		bk = key[0], bi = 0;
#pragma unroll
		for (int i = 1; i < EPL; i++)
			if (key[i] > bk)
				bk = key[i], bi = i;
	};
	uint32_t bk;
	int bi;
	lane_best(bk, bi);
	int my_e = 0;
	float my_s = 0.0f;
	for (int k = 0; k < a.topk; k++) {
		const uint32_t top = __reduce_max_sync(0xffffffffu, bk);
		const int be = __reduce_min_sync(0xffffffffu, bk == top ? lane + 32 * bi : INT_MAX);
		float s = 0.0f;
		if (lane == (be & 31)) {
#pragma unroll
			for (int i = 0; i < EPL; i++)
				if (i == bi)
					s = sc[i], key[i] = 0u;
			lane_best(bk, bi);
		}
		s = __shfl_sync(0xffffffffu, s, be & 31);
		if (lane == k)
			my_e = be, my_s = s;
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

/* Exclusive scans of three values at once over the threads of the CTA (SCAN_THREADS): warp
 * shuffles, then one warp over the warp totals (two barriers; the Hillis-Steele scan over shared
 * memory it replaces took 20 barriers a value). */
__device__ int3 block_scan3(int3 x, int3 *total)
{
	constexpr int NW = SCAN_THREADS / 32;
	static_assert(NW == 32, "one warp scans the warp totals");
	__shared__ int3 wt[NW];
	const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
	auto warp_scan = [&](int3 v) {
#pragma unroll
		for (int o = 1; o < 32; o <<= 1) {
			const int a = __shfl_up_sync(0xffffffffu, v.x, o), b = __shfl_up_sync(0xffffffffu, v.y, o);
			const int c = __shfl_up_sync(0xffffffffu, v.z, o);
			if (lane >= o)
				v.x += a, v.y += b, v.z += c;
		}
		return v;
	};
	const int3 v = warp_scan(x);
	if (lane == 31)
		wt[warp] = v;
	__syncthreads();
	if (warp == 0)
		wt[lane] = warp_scan(wt[lane]);
	__syncthreads();
	const int3 base = warp ? wt[warp - 1] : make_int3(0, 0, 0);
	*total = wt[NW - 1];
	return make_int3(base.x + v.x - x.x, base.y + v.y - x.y, base.z + v.z - x.z);
}

/* One CTA: per-expert bases of each block (in place), offsets, tile
 * offsets, touched list. */
__global__ void __launch_bounds__(SCAN_THREADS) scan_kernel(const moe_route_args a, int32_t *block_counts, int nblk)
{
	const int e = (int)threadIdx.x;
	int count = 0;
	if (e < a.experts)
		for (int b0 = 0; b0 < nblk; b0 += 8) { /* 8 loads in flight, then the bases */
			int c[8];
#pragma unroll
			for (int j = 0; j < 8; j++)
				c[j] = b0 + j < nblk ? block_counts[(size_t)(b0 + j) * a.experts + e] : 0;
#pragma unroll
			for (int j = 0; j < 8; j++)
				if (b0 + j < nblk) {
					block_counts[(size_t)(b0 + j) * a.experts + e] = count;
					count += c[j];
				}
		}
	const int tiles = (count + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS;
	int3 total;
	const int3 ex = block_scan3(make_int3(count, tiles, count > 0 ? 1 : 0), &total);
	if (e < a.experts) {
		a.off[e] = ex.x;
		a.tile_off[e] = ex.y;
		if (count > 0)
			a.touched[ex.z] = e;
	}
	if (e == 0) {
		a.off[a.experts] = total.x;
		a.tile_off[a.experts] = total.y;
		*a.n_touched = total.z;
	}
}

__global__ void __launch_bounds__(GROUP_THREADS) scatter_kernel(const moe_route_args a, const int32_t *block_base)
{
	extern __shared__ uint32_t mask[];
	const int t0 = (int)blockIdx.x * BLOCK_TOKENS, nt = min(BLOCK_TOKENS, a.tokens - t0);
	build_masks(a, mask, t0, nt);
	/* Four pairs a thread at a time, their loads issued together (one pair at a time, the
	 * dependent loads of 16 pairs a thread in turn took 18 us at 4096 tokens). */
	const int n = nt * a.topk;
	for (int i0 = (int)threadIdx.x; i0 < n; i0 += 4 * GROUP_THREADS) {
		int e[4], base[4];
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int i = i0 + j * GROUP_THREADS;
			e[j] = i < n ? a.topk_ids[(size_t)t0 * a.topk + i] : 0;
		}
#pragma unroll
		for (int j = 0; j < 4; j++)
			base[j] = i0 + j * GROUP_THREADS < n ? a.off[e[j]] + block_base[(size_t)blockIdx.x * a.experts + e[j]] : 0;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int i = i0 + j * GROUP_THREADS;
			if (i >= n)
				break;
			const int tl = i / a.topk;
			const size_t pair = (size_t)t0 * a.topk + i;
			const uint32_t *m = mask + e[j] * MASK_WORDS;
			int rank = __popc(m[tl >> 5] & ((1u << (tl & 31)) - 1u));
			for (int w = 0; w < (tl >> 5); w++)
				rank += __popc(m[w]);
			const int r = base[j] + rank;
			a.row_token[r] = t0 + tl;
			a.row_weight[r] = a.topk_weights[pair];
			a.row_of[pair] = r;
		}
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
