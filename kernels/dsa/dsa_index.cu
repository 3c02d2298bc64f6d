/* SPDX-License-Identifier: MIT */
/* DSA lightning indexer and top-k: see dsa_index.h. */
#include "dsa_index.h"

#include <cerrno>
#include <cstdint>

#include "common/k3_device.cuh"

namespace {

constexpr int SC_THREADS = 256;
constexpr int SC_WARPS = SC_THREADS / 32;
constexpr int TOK_PER_WARP = 32;                    /* two m16 tiles */
constexpr int TOK_PER_CTA = SC_WARPS * TOK_PER_WARP; /* 256 */
constexpr int QROW = DSA_INDEX_DIM + 8;             /* bytes per head in shared memory: 34 words, conflict-free */
constexpr int NT = DSA_INDEX_HEADS / 8;             /* n8 tiles of heads */
constexpr int TK_THREADS = 1024;
constexpr int TK_WARPS = TK_THREADS / 32;
static_assert(DSA_INDEX_DIM == 128 && DSA_INDEX_HEADS == 64, "the tiling assumes 64 heads x 128");

/* D = A B + D, A 16 x 32 (row) and B 32 x 8 (col) E4M3, FP32 accumulate:
 * a0 (g, 4t..4t+3) a1 (g+8, 4t..) a2 (g, 16+4t..) a3 (g+8, 16+4t..);
 * b0 (k 4t..4t+3, n g) b1 (k 16+4t.., n g); d as for m16n8k16. */
__device__ __forceinline__ void mma_e4m3(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t word_of(const uint4 &lo, const uint4 &hi, int w)
{
	const uint4 &v = w < 4 ? lo : hi;
	const int i = w & 3;
	return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/* Lane (g, t) of a warp: tokens g and g + 8 of each of its two 16-token
 * tiles, bytes 32t .. 32t + 31 of their keys; MMA k step s takes bytes
 * 8s .. 8s + 7 of them (slots 4t.. the first four, 16 + 4t.. the next four);
 * heads' query bytes are read in the same order. */
__global__ void __launch_bounds__(SC_THREADS) score_kernel(const dsa_index_args a)
{
	__shared__ __align__(16) uint8_t qs[DSA_INDEX_HEADS * QROW];
	__shared__ float ws[DSA_INDEX_HEADS];
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
	const int b = (int)blockIdx.y;
	const int L = min(a.seqlens[b], a.max_seqlen);
	const uint8_t *qb = a.q + (size_t)b * DSA_INDEX_HEADS * DSA_INDEX_DIM;
	for (int i = tid; i < DSA_INDEX_HEADS * DSA_INDEX_DIM / 16; i += SC_THREADS) {
		const int h = i >> 3, c = i & 7;
		const uint4 v = *reinterpret_cast<const uint4 *>(qb + h * DSA_INDEX_DIM + c * 16);
		*reinterpret_cast<uint2 *>(qs + h * QROW + c * 16) = make_uint2(v.x, v.y);
		*reinterpret_cast<uint2 *>(qs + h * QROW + c * 16 + 8) = make_uint2(v.z, v.w);
	}
	if (tid < DSA_INDEX_HEADS)
		ws[tid] = a.weights[(size_t)b * DSA_INDEX_HEADS + tid];
	__syncthreads();

	const int tw0 = (int)blockIdx.x * TOK_PER_CTA + warp * TOK_PER_WARP;
	uint4 klo[2][2], khi[2][2]; /* [tile][row g / g + 8] */
	float ks[2][2];
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int hf = 0; hf < 2; hf++) {
			const int j = tw0 + mt * 16 + g + hf * 8;
			klo[mt][hf] = khi[mt][hf] = make_uint4(0u, 0u, 0u, 0u);
			ks[mt][hf] = 0.0f;
			if (j < L) {
				const int32_t page = a.block_table[(size_t)b * a.max_pages + j / DSA_PAGE_TOKENS];
				const uint8_t *pg = a.cache + (size_t)page * DSA_PAGE_BYTES;
				const uint8_t *key = pg + (j % DSA_PAGE_TOKENS) * DSA_INDEX_DIM + t * 32;
				klo[mt][hf] = *reinterpret_cast<const uint4 *>(key);
				khi[mt][hf] = *reinterpret_cast<const uint4 *>(key + 16);
				ks[mt][hf] = *reinterpret_cast<const float *>(pg + DSA_PAGE_TOKENS * DSA_INDEX_DIM +
									      (j % DSA_PAGE_TOKENS) * 4);
			}
		}
	float acc[2][NT][4];
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int n = 0; n < NT; n++)
			acc[mt][n][0] = acc[mt][n][1] = acc[mt][n][2] = acc[mt][n][3] = 0.0f;
#pragma unroll
	for (int s = 0; s < DSA_INDEX_DIM / 32; s++) {
		uint32_t af[2][4];
#pragma unroll
		for (int mt = 0; mt < 2; mt++) {
			af[mt][0] = word_of(klo[mt][0], khi[mt][0], 2 * s);
			af[mt][1] = word_of(klo[mt][1], khi[mt][1], 2 * s);
			af[mt][2] = word_of(klo[mt][0], khi[mt][0], 2 * s + 1);
			af[mt][3] = word_of(klo[mt][1], khi[mt][1], 2 * s + 1);
		}
#pragma unroll
		for (int n = 0; n < NT; n++) {
			const uint2 bq = *reinterpret_cast<const uint2 *>(qs + (n * 8 + g) * QROW + t * 32 + s * 8);
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
				mma_e4m3(acc[mt][n], af[mt], bq.x, bq.y);
		}
	}
	/* d0, d1: token row g, heads 8n + 2t, 2t + 1; d2, d3: row g + 8. */
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int hf = 0; hf < 2; hf++) {
			float s = 0.0f;
#pragma unroll
			for (int n = 0; n < NT; n++)
#pragma unroll
				for (int e = 0; e < 2; e++)
					s += fmaxf(acc[mt][n][hf * 2 + e], 0.0f) * ws[n * 8 + 2 * t + e];
			s += __shfl_xor_sync(0xffffffffu, s, 1);
			s += __shfl_xor_sync(0xffffffffu, s, 2);
			const int j = tw0 + mt * 16 + g + hf * 8;
			if (t == 0 && j < a.max_seqlen)
				a.scores[(size_t)b * a.max_seqlen + j] = j < L ? s * ks[mt][hf] : -INFINITY;
		}
}

/* Float bits ordered as unsigned integers; NaN lowest. */
__device__ __forceinline__ uint32_t sortable(float f)
{
	const uint32_t u = __float_as_uint(f);
	if (isnan(f))
		return 0u;
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* Exclusive scan over the CTA (TK_THREADS); *total gets the sum. */
__device__ int block_exscan(int x, int *warp_sums, int *total)
{
	const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
	int incl = x;
#pragma unroll
	for (int o = 1; o < 32; o <<= 1) {
		const int y = __shfl_up_sync(0xffffffffu, incl, o);
		if (lane >= o)
			incl += y;
	}
	if (lane == 31)
		warp_sums[warp] = incl;
	__syncthreads();
	if (warp == 0) {
		int w = warp_sums[lane];
		int wi = w;
#pragma unroll
		for (int o = 1; o < 32; o <<= 1) {
			const int y = __shfl_up_sync(0xffffffffu, wi, o);
			if (lane >= o)
				wi += y;
		}
		warp_sums[lane] = wi - w; /* exclusive prefix of warp sums */
		if (lane == 31)
			warp_sums[32] = wi;
	}
	__syncthreads();
	const int r = warp_sums[warp] + incl - x;
	*total = warp_sums[32];
	__syncthreads();
	return r;
}

__global__ void __launch_bounds__(TK_THREADS) topk_kernel(const dsa_index_args a)
{
	__shared__ uint32_t hist[256];
	__shared__ uint32_t s_prefix;
	__shared__ int s_need;
	__shared__ int warp_sums[TK_WARPS + 1];
	const int tid = (int)threadIdx.x, b = (int)blockIdx.x, k = a.topk;
	const int L = min(a.seqlens[b], a.max_seqlen);
	const float *sc = a.scores + (size_t)b * a.max_seqlen;
	int32_t *out = a.indices + (size_t)b * k;
	if (L <= k) {
		for (int i = tid; i < k; i += TK_THREADS)
			out[i] = i < L ? i : -1;
		return;
	}
	/* Radix select, 8 bits a pass from the top: the k-th largest key. */
	uint32_t prefix = 0u, mask = 0u;
	int need = k;
	for (int shift = 24; shift >= 0; shift -= 8) {
		if (tid < 256)
			hist[tid] = 0u;
		__syncthreads();
		for (int i = tid; i < L; i += TK_THREADS) {
			const uint32_t u = sortable(sc[i]);
			if ((u & mask) == prefix)
				atomicAdd(&hist[(u >> shift) & 255u], 1u);
		}
		__syncthreads();
		if (tid == 0) {
			int above = 0, bin = 255;
			for (; bin > 0; bin--) {
				if (above + (int)hist[bin] >= need)
					break;
				above += (int)hist[bin];
			}
			s_prefix = prefix | ((uint32_t)bin << shift);
			s_need = need - above;
		}
		__syncthreads();
		prefix = s_prefix;
		need = s_need;
		mask |= 0xffu << shift;
	}
	/* Positions in order: every key above the threshold, and the first `need` equal to it. */
	int base_eq = 0, base_sel = 0;
	for (int c0 = 0; c0 < L; c0 += TK_THREADS) {
		const int i = c0 + tid;
		const uint32_t u = i < L ? sortable(sc[i]) : 0u;
		const bool gt = i < L && u > prefix, eq = i < L && u == prefix;
		int total_eq, total_sel;
		const int eq_rank = base_eq + block_exscan(eq ? 1 : 0, warp_sums, &total_eq);
		const bool sel = gt || (eq && eq_rank < need);
		const int slot = base_sel + block_exscan(sel ? 1 : 0, warp_sums, &total_sel);
		if (sel && slot < k)
			out[slot] = i;
		base_eq += total_eq;
		base_sel += total_sel;
	}
}

bool al16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

} // namespace

extern "C" int dsa_index(const struct dsa_index_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->batch > 65535 || a->max_seqlen < 1 || a->topk < 1 || a->topk > DSA_MAX_TOPK ||
	    a->max_pages < 1 || (int64_t)a->max_pages * DSA_PAGE_TOKENS < a->max_seqlen || !a->q || !al16(a->q) ||
	    !a->weights || !a->cache || !al16(a->cache) || !a->block_table || !a->seqlens || !a->scores ||
	    !a->indices)
		return -EINVAL;
	const dim3 grid((unsigned)((a->max_seqlen + TOK_PER_CTA - 1) / TOK_PER_CTA), (unsigned)a->batch);
	score_kernel<<<grid, SC_THREADS, 0, stream>>>(*a);
	topk_kernel<<<a->batch, TK_THREADS, 0, stream>>>(*a);
	return k3_launch_status();
}
