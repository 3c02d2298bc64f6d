/* SPDX-License-Identifier: MIT */
/*
 * The GEMM op: see k3_gemm.h.
 *
 * Tiled path: a CTA of 8 warps computes a BM x 128 tile (BM 64 or 128),
 * warps 2 x 4 with (BM / 2) x 32 warp tiles, k in blocks of 64 through a
 * 4-stage cp.async pipeline. Shared-memory rows are 128 bytes with the
 * 16-byte chunk c of row r stored at c ^ (r & 7): the ldmatrix loads of 8
 * rows hit 8 distinct chunks. A rows past their group's end are zero-filled
 * (cp.async src-size 0) and not stored. MXFP4 tiles arrive raw (32 bytes a
 * row per k block) and are expanded into one BF16 tile (E2M1 through byte
 * permutes, times the E8M0 scale as a BF16 product, exact) before the MMAs.
 * Dense tiles are rasterized in groups of 8 row tiles so that the CTAs in
 * flight share their A rows and weight columns in L2. Dense GEMMs of few
 * tiles (decode batches of 17-256 rows) split k over gridDim.y slices of
 * kb_per_split blocks each (tiled_split()): each slice stores its FP32 sums
 * to the workspace and finish_kernel adds them and applies the epilogue.
 *
 * Gemv path: warp w of a CTA owns 16 weight rows (the MMA's M) and the
 * CTA's 8 or 16 tokens of the current pass are the N. Within each 128-deep
 * k block, lane (g, t) holds k 32t .. 32t + 31 of its rows g and g + 8 and
 * of token g: the MMA's k slots are a permutation of the block's k (the
 * same for A and B, so the sum is unchanged), which makes every load one
 * contiguous 16-byte access: 16 bytes of MXFP4 (32 weights, exactly one
 * scale group) or 4 x 16 bytes of BF16 per row and block, 4 x 16 bytes of x
 * per token. The next block's loads are issued before this block's MMAs;
 * MXFP4 scale bytes stay raw until their block's MMAs (converting them at
 * the load waited on it there: 10 % slower, 2026-12-01d call2). With
 * K3_GEMV_FP4_BLOCK=512 (measurements), MXFP4 with K a multiple of 512 runs
 * 512-deep blocks: lane t holds k 128t .. 128t + 127 (four scale groups: 4 x
 * 16 bytes per row, as many bytes in flight as BF16, the four scale bytes in
 * one word); measured no faster.
 *
 * Gemv with MXFP8 activations (gemv8_kernel): the same warp/row/token split,
 * FP8 MMAs m16n8k32, one per scale group: per 128-deep block lane (g, t)
 * holds 8 weights of each of the 4 groups (the FP8 layout puts them in one
 * 16-byte chunk), expands each 8 with 5 integer instructions (E2M1 -> E4M3 is
 * bit placement) and adds each MMA's zero-based FP32 sums times the product
 * of the two E8M0 powers of two (built by a byte permute and an add into the
 * exponent field). Weight blocks reach registers through a 6-slot cp.async
 * ring in shared memory private to each lane (5 blocks, 160 bytes a lane in
 * flight, no barrier) or, with K3_GEMV8_PIPE=regs, two register sets as
 * above. Measured 2026-12-01k (H200, bench/results/k3-kernels-h200-2026-12-01k):
 * w13 60.3 / 60.7 % of copy on weight bytes at B = 16 / 64 (the BF16-activation
 * kernel 58.5 / 60.1 in the same process), w2 58.2 / 59.7 (54.1 / 57.7); the
 * register-set variant 59.2 / 59.7 and 54.4 / 55.3. A 16-token pass only above
 * 8 rows a group on average (K3_GEMV8_WIDE; at 4, B = 256 lost 9-12 points).
 *
 * Default for BF16 activations since 2026-12-01x: gemv_lean_kernel (the same fragments and
 * arithmetic as gemv_kernel with fewer instructions around them; see the kernel), K3_GEMV_FP4=regs
 * for gemv_kernel; grouped grids of min(groups, rows) rows (K3_GEMV_GRID=full: one a group).
 * Since 2026-12-01zb grouped calls that give the weights in the FP16-pair layout too (w_f16; K a
 * multiple of 512) run gemv_f16_kernel (8 integer instructions for 8 weights, FP16 MMAs one scale
 * group each, FP16 activations from a first pass; see the kernel); K3_GEMV_FP4=lean:
 * gemv_lean_kernel there. Since 2026-12-02b up to 2 rows a group on average that first pass is
 * fused into the gemv (each CTA converts its rows in shared memory; K3_GEMV_F16_FUSE=0|1).
 * K3_GEMV_F16_PERSIST=1: gemv_f16p_kernel (after the first pass; a persistent grid of one wave,
 * the work cut evenly over the CTAs, split units summed without a second kernel): measured slower
 * at every batch (2026-12-02i), opt-in. Since 2026-12-02k the fused kernel is launched by
 * programmatic dependent launch where its grid is short (B = 1; gemv_f16_fpdl(),
 * K3_GEMV_F16_FPDL=0|1); K3_GEMV_F16_WPC / _PROW / _HPF: warps a CTA, rows a pass, a head
 * prefetch (measurements; see gemv_f16_wpc(), gemv_head_prefetch()); gemv_trace_arm(): a
 * per-CTA trace of one launch (k3_gemm_internal.cuh).
 *
 * Grouped gemv through the bulk copy engine (gemv_bulk_kernel, opt-in: K3_GEMV_FP4=bulk,
 * K3_GEMV8_PIPE=bulk): persistent, each warp its own pipeline of 16-row units with a private
 * shared-memory ring; see the kernel. Slower than the kernels above where measured.
 */
#include "k3_gemm.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "common/k3_device.cuh"
#include "common/k3_quant.h"
#include "k3_gemm_internal.cuh"

namespace {

constexpr int BN = 128;       /* columns per tile (tiled) */
constexpr int BK = 64;        /* k per block (tiled) */
constexpr int STAGES = 4;     /* cp.async pipeline depth (tiled) */
constexpr int THREADS = 256;  /* 8 warps, both paths */
constexpr int GROUP_M = 8;    /* dense rasterization: row tiles per group */
constexpr int GV_ROWS = 128;  /* weight rows per gemv CTA (8 warps x 16) */
constexpr int GV_K = 128;     /* k per gemv block */
constexpr int GV_MIN_KB_PER_SPLIT = 4;
constexpr int TS_MIN_KB = 8;   /* tiled split-k: at least 8 x 64 k a slice */
constexpr int TS_MAX = 32;     /* tiled split-k: at most 32 slices */
constexpr int EPI_PART = -1;   /* tiled epilogue: the slice's FP32 sums to p.part */
static_assert(MOE_TILE_ROWS == 64, "grouped tiles are 64 rows");

using params = k3gemm::params;

/* ---- tiled ---------------------------------------------------------------- */

template <int BM, bool FP4>
struct tcfg {
	static constexpr int MT = BM / 32;                    /* m16 tiles per warp */
	static constexpr int A_BYTES = BM * BK * 2;           /* per stage */
	static constexpr int B_BYTES = FP4 ? BN * BK / 2 : BN * BK * 2;
	static constexpr int OFF_B = STAGES * A_BYTES;
	static constexpr int OFF_BT = OFF_B + STAGES * B_BYTES; /* FP4: the expanded BF16 tile */
	static constexpr int SMEM = OFF_BT + (FP4 ? BN * BK * 2 : 0);
	static constexpr int AL = BM * (BK / 8) / THREADS;    /* A chunks per thread per stage */
	static constexpr int MIN_CTAS = BM == 64 ? 2 : 1;
	static_assert(AL >= 1 && SMEM <= 227 * 1024, "tile shape");
};

__device__ __forceinline__ int swz(int row, int chunk)
{
	return row * BK + ((chunk ^ (row & 7)) << 3); /* element offset in a 64-wide swizzled tile */
}

template <int BM, bool FP4, int EPI>
__global__ void __launch_bounds__(THREADS, tcfg<BM, FP4>::MIN_CTAS) tiled_kernel(const params p, int num_n, int num_m)
{
	using C = tcfg<BM, FP4>;
	extern __shared__ __align__(128) unsigned char smem[];
	uint16_t *As = reinterpret_cast<uint16_t *>(smem);
	unsigned char *Bs = smem + C::OFF_B;
	uint16_t *Bt = reinterpret_cast<uint16_t *>(smem + C::OFF_BT);
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;

	/* Tile: (row range, group, column tile). */
	const int id = (int)blockIdx.x;
	int n_tile, g = 0;
	int64_t rb, re;
	if (p.n_groups == 0) {
		const int per = GROUP_M * num_n, grp = id / per, first = grp * GROUP_M;
		const int gm = min(num_m - first, GROUP_M), in = id % per;
		n_tile = in / gm;
		rb = (int64_t)(first + in % gm) * BM;
		re = min(p.rows, rb + BM);
	} else {
		const int tile = id / num_n;
		n_tile = id % num_n;
		if (tile >= p.tile_off[p.n_groups])
			return;
		int lo = 0, hi = p.n_groups; /* the last group whose first tile is <= tile */
		while (lo < hi) {
			const int mid = (lo + hi + 1) >> 1;
			if (p.tile_off[mid] <= tile)
				lo = mid;
			else
				hi = mid - 1;
		}
		g = lo;
		rb = p.off[g] + (int64_t)(tile - p.tile_off[g]) * BM;
		re = min((int64_t)p.off[g + 1], rb + BM);
	}
	const int n0 = n_tile * BN;

	/* This thread's copy sources and destinations (fixed over k). */
	const uint16_t *asrc[C::AL];
	bool aok[C::AL];
	int adst[C::AL];
#pragma unroll
	for (int i = 0; i < C::AL; i++) {
		const int idx = tid + i * THREADS, row = idx >> 3, ch = idx & 7;
		const int64_t r = rb + row;
		aok[i] = r < re;
		const int64_t ar = aok[i] ? (p.a_index ? p.a_index[r] : r) : 0;
		asrc[i] = p.a + ar * p.K + ch * 8;
		adst[i] = swz(row, ch);
	}
	const size_t wrow0 = (size_t)g * p.N + n0;
	auto load_stage = [&](int st, int kb) {
#pragma unroll
		for (int i = 0; i < C::AL; i++)
			k3_cp_async16_zfill(As + st * (BM * BK) + adst[i], asrc[i] + kb * BK, aok[i]);
		/* Weight rows past N (the last column tile of an N not a multiple of 128) read as zeros. */
		if constexpr (FP4) {
			const int n = tid >> 1, ch = tid & 1; /* BN rows x 2 chunks of 16 bytes */
			const bool ok = n0 + n < p.N;
			k3_cp_async16_zfill(Bs + st * C::B_BYTES + n * 32 + ch * 16,
					    p.wp + (ok ? (wrow0 + n) * (size_t)(p.K / 2) + kb * (BK / 2) + ch * 16 : 0), ok);
		} else {
#pragma unroll
			for (int i = 0; i < BN * (BK / 8) / THREADS; i++) {
				const int idx = tid + i * THREADS, n = idx >> 3, ch = idx & 7;
				const bool ok = n0 + n < p.N;
				k3_cp_async16_zfill(reinterpret_cast<uint16_t *>(Bs + st * C::B_BYTES) + swz(n, ch),
						    p.w + (ok ? (wrow0 + n) * (size_t)p.K + kb * BK + ch * 8 : 0), ok);
			}
		}
	};

	/* k blocks [kb0, kb0 + nkb): all of them, or split-k slice blockIdx.y. */
	const int kb_all = p.K / BK, kb0 = (int)blockIdx.y * p.kb_per_split;
	const int nkb = p.kb_per_split > 0 ? min(p.kb_per_split, kb_all - kb0) : kb_all;
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < nkb)
			load_stage(s, kb0 + s);
		k3_cp_async_commit();
	}
	float acc[C::MT][4][4];
#pragma unroll
	for (int i = 0; i < C::MT; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
	const int wm0 = (warp >> 2) * (BM / 2), wn0 = (warp & 3) * 32;

#pragma unroll 1
	for (int kb = 0; kb < nkb; kb++) {
		k3_cp_async_wait<STAGES - 2>();
		__syncthreads();
		{
			const int nk = kb + STAGES - 1;
			if (nk < nkb)
				load_stage(nk % STAGES, kb0 + nk);
			k3_cp_async_commit();
		}
		const int st = kb % STAGES;
		const uint16_t *Bsrc;
		if constexpr (FP4) {
			const unsigned char *raw = Bs + st * C::B_BYTES;
#pragma unroll
			for (int i = 0; i < BN * (BK / 8) / THREADS; i++) {
				const int idx = tid + i * THREADS, n = idx >> 3, ch = idx & 7;
				const uint32_t w = *reinterpret_cast<const uint32_t *>(raw + n * 32 + ch * 4);
				const uint32_t sc = n0 + n < p.N ? k3_e8m0_to_bf16x2(p.ws[(wrow0 + n) * (size_t)(p.K / 32) +
											  (kb0 + kb) * (BK / 32) + (ch >> 2)])
								 : 0u;
				uint32_t o[4];
				k3_e2m1x8_to_bf16x8(w, o);
				uint4 v;
				v.x = k3_bf16x2_mul(o[0], sc), v.y = k3_bf16x2_mul(o[1], sc);
				v.z = k3_bf16x2_mul(o[2], sc), v.w = k3_bf16x2_mul(o[3], sc);
				*reinterpret_cast<uint4 *>(Bt + swz(n, ch)) = v;
			}
			__syncthreads();
			Bsrc = Bt;
		} else {
			Bsrc = reinterpret_cast<const uint16_t *>(Bs + st * C::B_BYTES);
		}
		const uint16_t *Ast = As + st * (BM * BK);
#pragma unroll
		for (int kk = 0; kk < BK / 16; kk++) {
			uint32_t af[C::MT][4], bf[2][4];
#pragma unroll
			for (int mt = 0; mt < C::MT; mt++) {
				const int row = wm0 + mt * 16 + (lane & 15);
				k3_ldsm_x4(af[mt], Ast + swz(row, kk * 2 + (lane >> 4)));
			}
#pragma unroll
			for (int np = 0; np < 2; np++) {
				const int n = wn0 + np * 16 + (lane >> 4) * 8 + (lane & 7);
				k3_ldsm_x4(bf[np], Bsrc + swz(n, kk * 2 + ((lane >> 3) & 1)));
			}
#pragma unroll
			for (int mt = 0; mt < C::MT; mt++)
#pragma unroll
				for (int nt = 0; nt < 4; nt++)
					k3_mma_bf16(acc[mt][nt], af[mt], bf[nt >> 1][(nt & 1) * 2],
						    bf[nt >> 1][(nt & 1) * 2 + 1]);
		}
	}
	k3_cp_async_wait<0>();

	const int gq = lane >> 2, tq = lane & 3;
#pragma unroll
	for (int mt = 0; mt < C::MT; mt++)
#pragma unroll
		for (int half = 0; half < 2; half++) {
			const int64_t r = rb + wm0 + mt * 16 + gq + half * 8;
			if (r >= re)
				continue;
			if constexpr (EPI == EPI_PART) {
				float *pp = p.part + ((size_t)blockIdx.y * p.rows + r) * p.N;
#pragma unroll
				for (int nt = 0; nt < 4; nt++) {
					const int n = n0 + wn0 + nt * 8 + 2 * tq;
					if (n < p.N)
						*reinterpret_cast<float2 *>(pp + n) =
							make_float2(acc[mt][nt][half * 2], acc[mt][nt][half * 2 + 1]);
				}
			} else if constexpr (EPI == K3_EPI_GLU) {
				const int64_t ro = out_row(p, r);
#pragma unroll
				for (int np = 0; np < 2; np++) {
					if (n0 + wn0 + np * 16 >= p.N)
						continue;
					const int j = (n0 + wn0 + np * 16) / 2 + 2 * tq;
					const float *gv = &acc[mt][2 * np][half * 2], *uv = &acc[mt][2 * np + 1][half * 2];
					*reinterpret_cast<uint32_t *>(p.out + ro * (p.N / 2) + j) =
						k3_pack_bf16(situ_glu(gv[0], uv[0], p.beta_gate, p.beta_up),
							     situ_glu(gv[1], uv[1], p.beta_gate, p.beta_up));
				}
			} else {
				const int64_t ro = out_row(p, r);
#pragma unroll
				for (int nt = 0; nt < 4; nt++) {
					const int n = n0 + wn0 + nt * 8 + 2 * tq;
					if (n < p.N)
						epi_store2<EPI>(p, ro, r, n, acc[mt][nt][half * 2], acc[mt][nt][half * 2 + 1]);
				}
			}
		}
}

/* ---- gemv ----------------------------------------------------------------- */

/* K3_GEMV_FP4_BLOCK=512: MXFP4 gemv blocks of GV_FP4_G scale groups per lane (512 k). */
constexpr int GV_FP4_G = 4;

template <bool FP4, int G>
struct wblock; /* one (128 G)-deep block of a lane's two weight rows */

template <int G>
struct wblock<true, G> {
	uint4 r0[G], r1[G]; /* 16 bytes (32 weights, one scale group) each */
	uint32_t s0, s1;    /* the G scale bytes of rows g and g + 8, byte j: group j */
};

template <>
struct wblock<false, 1> {
	uint4 r0[4], r1[4];
};

/* G: scale groups per lane per block (MXFP4: 1 or GV_FP4_G; BF16: 1). Lane (g, t) holds k
 * 32Gt .. 32G(t + 1) - 1 of each 128G-deep block: G contiguous 16-byte loads of packed weights
 * and one load of G scale bytes per row, the same k of x. */
/* CTAs an SM the register budget must allow: two at 8 tokens a pass and for MXFP4, one for BF16
 * at 16 tokens. Three for MXFP4 at 8 tokens (80 registers, no spills) measured slower
 * (2026-12-01e call2: w13 B = 64 55.1 vs 59.7 % of copy): the kernel is ALU-pipe bound (72 % of
 * peak; the E2M1 expansion), not short of warps. */
template <bool FP4, int G, int NT8>
constexpr int gemv_min_ctas()
{
	return NT8 == 1 || FP4 ? 2 : 1;
}

/* A gemv pass's sums to the output (or the split-k partials): acc[nt] holds c0, c1 (weight row
 * nb + g, tokens 2t, 2t + 1 of the pass's token tile nt) and c2, c3 (row nb + g + 8). */
template <int NT8, int EPI, bool PARTIAL>
__device__ __forceinline__ void gemv_store(const params &p, int64_t pr, int64_t re, int nb, int gq, int tq,
					   const float (&acc)[NT8][4])
{
#pragma unroll
	for (int nt = 0; nt < NT8; nt++)
#pragma unroll
		for (int e = 0; e < 2; e++) {
			const int64_t r = pr + nt * 8 + 2 * tq + e;
			if (r >= re)
				continue;
			if (PARTIAL) {
				float *pp = p.part + ((size_t)blockIdx.z * p.rows + r) * p.N + nb + gq;
				pp[0] = acc[nt][e];
				pp[8] = acc[nt][2 + e];
			} else if (EPI == K3_EPI_GLU) {
				const float o = situ_glu(acc[nt][e], acc[nt][2 + e], p.beta_gate, p.beta_up);
				if (p.out8) /* K3_A_E4M3_ROW: E4M3 of glu8_mul x o (k3_gemm_args.out_e4m3) */
					p.out8[out_row(p, r) * (p.N / 2) + nb / 2 + gq] =
						(uint8_t)k3_f32x2_to_e4m3x2(o * p.glu8_mul, 0.0f);
				else
					p.out[out_row(p, r) * (p.N / 2) + nb / 2 + gq] = k3_f2bf(o);
			} else {
				const int64_t ro = out_row(p, r);
				epi_store1<EPI>(p, ro, r, nb + gq, acc[nt][e]);
				epi_store1<EPI>(p, ro, r, nb + gq + 8, acc[nt][2 + e]);
			}
		}
}

template <bool FP4, int G, int NT8, int EPI, bool PARTIAL>
__global__ void __launch_bounds__(THREADS, gemv_min_ctas<FP4, G, NT8>()) gemv_kernel(const params p)
{
	static_assert(G == 1 || (FP4 && G == GV_FP4_G), "block shape");
	/* Blocks per step (the next step's in flight during this one's MMAs): 64 or 128 bytes a lane.
	 * Two CTAs an SM for MXFP4 at 16 tokens a pass too (128 registers, a few bytes spilled):
	 * B = 256 at 49 % of copy, 26 % with one (2026-12-01d call1 / 01c). */
	constexpr int U = FP4 && G == 1 ? 2 : 1;
	constexpr int BKD = GV_K * G; /* k per block */
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, gq = lane >> 2, tq = lane & 3;
	int grp = 0;
	int64_t rb = 0, re = p.rows;
	if (p.n_groups) {
		if ((int)blockIdx.y >= *p.n_touched)
			return;
		grp = p.touched[blockIdx.y];
		rb = p.off[grp];
		re = p.off[grp + 1];
	}
	const int nb = (int)blockIdx.x * GV_ROWS + warp * 16; /* this warp's first weight row */
	if (nb >= p.N)
		return; /* N a multiple of 16, not of 128: the last CTA's spare warps (no CTA-wide sync follows) */
	const int nkb = p.K / BKD;
	const int kb0 = (int)blockIdx.z * p.kb_per_split, kb1 = min(nkb, kb0 + p.kb_per_split);
	const size_t wr0 = (size_t)grp * p.N + nb + gq; /* weight row of lane group gq; + 8: the other */
	const uint8_t *wp0 = nullptr, *sp0 = nullptr;
	const uint16_t *w0 = nullptr;
	if constexpr (FP4) {
		wp0 = p.wp + wr0 * (size_t)(p.K / 2) + tq * 16 * G;
		sp0 = p.ws + wr0 * (size_t)(p.K / 32) + tq * G;
	} else {
		w0 = p.w + wr0 * (size_t)p.K + tq * 32;
	}
	const size_t wstep = FP4 ? (size_t)8 * (p.K / 2) : (size_t)8 * p.K, sstep = (size_t)8 * (p.K / 32);
	const bool s_al4 = ((uintptr_t)p.ws & 3u) == 0; /* G = 4: whole-word scale loads */

	auto load_s = [&](const uint8_t *sp) -> uint32_t {
		if constexpr (G == 1)
			return *sp;
		else if (s_al4)
			return __ldg(reinterpret_cast<const unsigned int *>(sp));
		else
			return (uint32_t)sp[0] | (uint32_t)sp[1] << 8 | (uint32_t)sp[2] << 16 | (uint32_t)sp[3] << 24;
	};
	auto load_w = [&](int kb, wblock<FP4, G> &b) {
		if constexpr (FP4) {
#pragma unroll
			for (int j = 0; j < G; j++) {
				b.r0[j] = ld_stream16(wp0 + (size_t)kb * (BKD / 2) + 16 * j);
				b.r1[j] = ld_stream16(wp0 + wstep + (size_t)kb * (BKD / 2) + 16 * j);
			}
			b.s0 = load_s(sp0 + (size_t)kb * (BKD / 32));
			b.s1 = load_s(sp0 + sstep + (size_t)kb * (BKD / 32));
		} else {
#pragma unroll
			for (int q = 0; q < 4; q++) {
				b.r0[q] = ld_stream16(w0 + (size_t)kb * GV_K + q * 8);
				b.r1[q] = ld_stream16(w0 + wstep + (size_t)kb * GV_K + q * 8);
			}
		}
	};

	for (int64_t pr = rb; pr < re; pr += 8 * NT8) {
		const uint16_t *xr[NT8];
		bool xok[NT8];
#pragma unroll
		for (int nt = 0; nt < NT8; nt++) {
			const int64_t r = pr + nt * 8 + gq;
			xok[nt] = r < re;
			const int64_t ar = xok[nt] ? (p.a_index ? p.a_index[r] : r) : 0;
			xr[nt] = p.a + ar * p.K + tq * 32 * G;
		}
		/* x for scale group j of block kb (32 k of this lane). */
		auto load_x = [&](int kb, int j, uint4 (&x)[NT8][4]) {
#pragma unroll
			for (int nt = 0; nt < NT8; nt++)
#pragma unroll
				for (int q = 0; q < 4; q++)
					x[nt][q] = xok[nt] ? ld_nc16(xr[nt] + (size_t)kb * BKD + j * 32 + q * 8)
							   : make_uint4(0u, 0u, 0u, 0u);
		};
		float acc[NT8][4];
#pragma unroll
		for (int nt = 0; nt < NT8; nt++)
			acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
		/* Two register sets in turn (ping-pong, unrolled by two steps): while one set's MMAs run,
		 * the next step's loads land in the other, with no copy between them (the round-4 loop
		 * copied the set each step: 20 register moves per 256 k). */
		wblock<FP4, G> wa[U], wb[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			if (kb0 + u < kb1)
				load_w(kb0 + u, wa[u]);
		auto step = [&](int kb, wblock<FP4, G>(&wc)[U], wblock<FP4, G>(&wn)[U]) {
#pragma unroll
			for (int u = 0; u < U; u++)
				if (kb + U + u < kb1)
					load_w(kb + U + u, wn[u]);
#pragma unroll
			for (int u = 0; u < U; u++) {
				if (kb + u >= kb1)
					break;
#pragma unroll
				for (int j = 0; j < G; j++) {
					uint4 xc[NT8][4];
					load_x(kb + u, j, xc);
					uint32_t sc0 = 0, sc1 = 0;
					if constexpr (FP4) {
						sc0 = k3_e8m0_to_bf16x2((wc[u].s0 >> (8 * j)) & 0xffu);
						sc1 = k3_e8m0_to_bf16x2((wc[u].s1 >> (8 * j)) & 0xffu);
					}
#pragma unroll
					for (int q = 0; q < 4; q++) {
						uint32_t A0[4], A1[4]; /* rows g and g + 8: BF16 pairs of k 8q + 0..7 */
						if constexpr (FP4) {
							const uint4 &r0 = wc[u].r0[j], &r1 = wc[u].r1[j];
							const uint32_t u0 = q == 0 ? r0.x : q == 1 ? r0.y : q == 2 ? r0.z : r0.w;
							const uint32_t u1 = q == 0 ? r1.x : q == 1 ? r1.y : q == 2 ? r1.z : r1.w;
							k3_e2m1x8_to_bf16x8(u0, A0);
							k3_e2m1x8_to_bf16x8(u1, A1);
#pragma unroll
							for (int i = 0; i < 4; i++) {
								A0[i] = k3_bf16x2_mul(A0[i], sc0);
								A1[i] = k3_bf16x2_mul(A1[i], sc1);
							}
						} else {
							const uint4 &r0 = wc[u].r0[q], &r1 = wc[u].r1[q];
							A0[0] = r0.x, A0[1] = r0.y, A0[2] = r0.z, A0[3] = r0.w;
							A1[0] = r1.x, A1[1] = r1.y, A1[2] = r1.z, A1[3] = r1.w;
						}
						const uint32_t a_even[4] = { A0[0], A1[0], A0[1], A1[1] };
						const uint32_t a_odd[4] = { A0[2], A1[2], A0[3], A1[3] };
#pragma unroll
						for (int nt = 0; nt < NT8; nt++) {
							k3_mma_bf16(acc[nt], a_even, xc[nt][q].x, xc[nt][q].y);
							k3_mma_bf16(acc[nt], a_odd, xc[nt][q].z, xc[nt][q].w);
						}
					}
				}
			}
		};
#pragma unroll 1
		for (int kb = kb0; kb < kb1; kb += 2 * U) {
			step(kb, wa, wb);
			if (kb + U < kb1)
				step(kb + U, wb, wa);
		}
		gemv_store<NT8, EPI, PARTIAL>(p, pr, re, nb, gq, tq, acc);
	}
}

/* ---- gemv, MXFP4 weights, lean issue (the default for BF16 activations) ---- */

/* gemv_kernel's arithmetic (the same fragments, k permutation, E2M1 expansion and BF16 scale
 * products, so the same sums) with far fewer instructions around it, for a kernel bound by
 * instruction issue (2026-12-01s ncu: ~0.31 warp-instructions a weight byte, of which the
 * expansion and scale products are ~0.14):
 *  - each block's scale bytes of a row come as one word (the 4 groups of the 128-deep block;
 *    the 4 lanes of a quad read the same word) and become the BF16 scale pair in two
 *    instructions (a byte permute that puts the lane's byte in both halves, a shift): scale
 *    bytes 3..252 exact as before (the scaled E2M1 values stay normal BF16); 0 (2^-127)
 *    multiplies by 0 and 255 (NaN) by infinity;
 *  - the weight, scale and activation addresses are pointers advanced once per 4 blocks, every
 *    load at a constant offset from one of them; the loads past a lane's last block are
 *    predicated off (no branches, no zero fills);
 *  - activation rows past a group's end read the pass's first row instead of zeros (their
 *    output columns are never stored; an MMA's columns are independent);
 *  - grouped: a CTA walks touched groups blockIdx.y, + gridDim.y, ... (the grid's y is
 *    min(groups, rows), not groups: at B = 1, 16 CTAs a strip instead of 896, of which 880
 *    used to start only to exit);
 *  - 8 tokens a pass up to 8 rows a group on average (gemv_wide()).
 * Needs 4-byte aligned scales (else gemv_kernel runs). Measured (H200, 2026-12-01x calls 1-2,
 * bench/results/k3-kernels-h200-2026-12-01x; % of copy on weight bytes, median of single
 * launches, w13 / w2 at B = 1, 16, 64, 256): 51.6 / 39.5, 63.3 / 58.9, 61.5 / 59.9, 55.4 / 54.5;
 * the old default launch (gemv_kernel, a grid row a group) in the same process 37.3 / 31.7,
 * 57.7 / 54.8, 54.6 / 54.8, 50.3 / 49.7. ncu (w13 B = 1): 0.197 warp-instructions a weight byte
 * (gemv_kernel on the new grid 0.238, on the old ~0.31), 0.52 issued a cycle per scheduler. The
 * E2M1 expansion and scale products (19 of the ~27 instructions per 8 weights a lane) are most
 * of what is left: see docs/KERNELS.md (*gemv*, seventh round) for why the standard nibble
 * layout cannot go much lower. */
__device__ __forceinline__ void ld_stream16_if(bool c, const void *ptr, uint4 &v)
{
	asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %4, 0;\n\t"
		     "@q ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%5];\n\t}\n"
		     : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)
		     : "r"((int)c), "l"(ptr));
}

__device__ __forceinline__ void ld_u32_if(bool c, const void *ptr, uint32_t &v)
{
	asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %1, 0;\n\t@q ld.global.nc.u32 %0, [%2];\n\t}\n"
		     : "+r"(v)
		     : "r"((int)c), "l"(ptr));
}

/* One 128-deep block: lane (g, t) holds 16 bytes (k 32t .. 32t + 31) of rows g and g + 8 and
 * the block's scale word of each row; x[nt] points at k 32t of the block in token g's row. */
template <int NT8>
__device__ __forceinline__ void gemv_lean_block(const uint4 &r0, const uint4 &r1, uint32_t s0, uint32_t s1,
						uint32_t ssel, const uint16_t *const (&x)[NT8], float (&acc)[NT8][4])
{
	uint4 xc[NT8][4];
#pragma unroll
	for (int nt = 0; nt < NT8; nt++)
#pragma unroll
		for (int q = 0; q < 4; q++)
			xc[nt][q] = ld_nc16(x[nt] + q * 8);
	const uint32_t sc0 = __byte_perm(s0, 0u, ssel) << 7, sc1 = __byte_perm(s1, 0u, ssel) << 7;
#pragma unroll
	for (int q = 0; q < 4; q++) {
		uint32_t A0[4], A1[4];
		const uint32_t u0 = q == 0 ? r0.x : q == 1 ? r0.y : q == 2 ? r0.z : r0.w;
		const uint32_t u1 = q == 0 ? r1.x : q == 1 ? r1.y : q == 2 ? r1.z : r1.w;
		k3_e2m1x8_to_bf16x8(u0, A0);
		k3_e2m1x8_to_bf16x8(u1, A1);
#pragma unroll
		for (int i = 0; i < 4; i++) {
			A0[i] = k3_bf16x2_mul(A0[i], sc0);
			A1[i] = k3_bf16x2_mul(A1[i], sc1);
		}
		const uint32_t a_even[4] = { A0[0], A1[0], A0[1], A1[1] };
		const uint32_t a_odd[4] = { A0[2], A1[2], A0[3], A1[3] };
#pragma unroll
		for (int nt = 0; nt < NT8; nt++) {
			k3_mma_bf16(acc[nt], a_even, xc[nt][q].x, xc[nt][q].y);
			k3_mma_bf16(acc[nt], a_odd, xc[nt][q].z, xc[nt][q].w);
		}
	}
}

/* The k-slice sum of gemv_lean_kernel and gemv_f16_kernel (KS > 1 slices of RG warps a CTA): the
 * warps of slices 1.. write their sums to red ((KS - 1) RG NT8 4 32 floats), slice 0's warps add
 * them in slice order (the same sums whatever the timing). Every thread of the CTA calls it (two
 * barriers: the next pass writes red again). Returns whether this warp stores the pass (slice 0,
 * active). */
template <int KS, int RG, int NT8>
__device__ __forceinline__ bool gemv_kslice_sum(float *red, int ksl, int rg, int lane, bool active,
						float (&acc)[NT8][4])
{
	static_assert(KS > 1, "k slices");
	if (ksl > 0) {
		float *rw = red + (size_t)((ksl - 1) * RG + rg) * NT8 * 4 * 32 + lane;
#pragma unroll
		for (int nt = 0; nt < NT8; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				rw[(nt * 4 + e) * 32] = acc[nt][e];
	}
	__syncthreads();
	if (ksl == 0)
#pragma unroll
		for (int k = 1; k < KS; k++)
#pragma unroll
			for (int nt = 0; nt < NT8; nt++)
#pragma unroll
				for (int e = 0; e < 4; e++)
					acc[nt][e] += red[(size_t)(((k - 1) * RG + rg) * NT8 * 4 + nt * 4 + e) * 32 + lane];
	__syncthreads();
	return ksl == 0 && active;
}

/* KS: k slices a CTA (1, 2, 4; grouped, 8 tokens a pass): warp w takes rows (w % (8 / KS)) 16
 * of the CTA's 128 / KS and k slice w / (8 / KS) (ceil(blocks / KS) blocks); slices 1.. add
 * their sums into slice 0's through shared memory, which stores. For grids of few CTAs (B = 1:
 * 16 touched groups) a smaller wave quantum. */
template <int NT8, int EPI, bool PARTIAL, int KS>
__global__ void __launch_bounds__(THREADS, 2) gemv_lean_kernel(const params p)
{
	static_assert(KS == 1 || KS == 2 || KS == 4, "k slices");
	static_assert(KS == 1 || !PARTIAL, "split-k partials: one slice");
	constexpr int U = 2; /* blocks a register set: two sets in turn, 4 blocks a loop step */
	constexpr int RG = 8 / KS; /* warps (16-row groups) a k slice */
	__shared__ float red[KS > 1 ? (KS - 1) * RG * NT8 * 4 * 32 : 1];
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, gq = lane >> 2, tq = lane & 3;
	const int rg = warp % RG, ksl = warp / RG;
	const int nb = (int)blockIdx.x * (16 * RG) + rg * 16;
	const bool active = nb < p.N; /* N a multiple of 16, not of 16 RG: the last CTA's spare warps */
	if (KS == 1 && !active)
		return; /* no CTA-wide sync follows with one slice */
	const int nkb = p.K / GV_K;
	int kb0 = (int)blockIdx.z * p.kb_per_split, kb1 = min(nkb, kb0 + p.kb_per_split);
	if constexpr (KS > 1) {
		const int per = (kb1 - kb0 + KS - 1) / KS;
		kb0 += ksl * per;
		kb1 = min(kb1, kb0 + per);
	}
	const int nblk = active ? kb1 - kb0 : 0; /* may be <= 0 (a split or slice past the end): zeros */
	const uint32_t ssel = 0x4040u | (uint32_t)tq * 0x0101u; /* byte t of the word in both halves */
	const size_t wrow = (size_t)(p.K / 2), srow = (size_t)(p.K / 32);
	const int units = p.n_groups ? *p.n_touched : 1;
	for (int ui = (int)blockIdx.y; ui < units; ui += (int)gridDim.y) {
		int grp = 0;
		int64_t rb = 0, re = p.rows;
		if (p.n_groups) {
			grp = p.touched[ui];
			rb = p.off[grp];
			re = p.off[grp + 1];
		}
		const size_t wr0 = (size_t)grp * p.N + nb + gq; /* weight row of lane group gq; + 8: the other */
		const uint8_t *const w0b = p.wp + wr0 * wrow + tq * 16 + (size_t)kb0 * (GV_K / 2);
		const uint8_t *const s0b = p.ws + wr0 * srow + (size_t)kb0 * (GV_K / 32);
		for (int64_t pr = rb; pr < re; pr += 8 * NT8) {
			const uint16_t *xp[NT8];
#pragma unroll
			for (int nt = 0; nt < NT8; nt++) {
				const int64_t r0 = pr + nt * 8 + gq, r = r0 < re ? r0 : pr;
				const int64_t ar = p.a_index ? p.a_index[r] : r;
				xp[nt] = p.a + ar * p.K + tq * 32 + (size_t)kb0 * GV_K;
			}
			float acc[NT8][4];
#pragma unroll
			for (int nt = 0; nt < NT8; nt++)
				acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
			const uint8_t *w0 = w0b, *w1 = w0b + 8 * wrow, *s0 = s0b, *s1 = s0b + 8 * srow;
			uint4 wa0[U], wa1[U], wb0[U], wb1[U];
			uint32_t sa0[U], sa1[U], sb0[U], sb1[U];
#pragma unroll
			for (int u = 0; u < U; u++) {
				wa0[u] = wa1[u] = wb0[u] = wb1[u] = make_uint4(0u, 0u, 0u, 0u);
				sa0[u] = sa1[u] = sb0[u] = sb1[u] = 0u;
				const bool c = u < nblk;
				ld_stream16_if(c, w0 + u * (GV_K / 2), wa0[u]);
				ld_stream16_if(c, w1 + u * (GV_K / 2), wa1[u]);
				ld_u32_if(c, s0 + u * (GV_K / 32), sa0[u]);
				ld_u32_if(c, s1 + u * (GV_K / 32), sa1[u]);
			}
#pragma unroll 1
			for (int i = 0; i < nblk; i += 2 * U) {
#pragma unroll
				for (int u = 0; u < U; u++) { /* set b: blocks i + U + u */
					const bool c = i + U + u < nblk;
					ld_stream16_if(c, w0 + (U + u) * (GV_K / 2), wb0[u]);
					ld_stream16_if(c, w1 + (U + u) * (GV_K / 2), wb1[u]);
					ld_u32_if(c, s0 + (U + u) * (GV_K / 32), sb0[u]);
					ld_u32_if(c, s1 + (U + u) * (GV_K / 32), sb1[u]);
				}
#pragma unroll
				for (int u = 0; u < U; u++) {
					if (i + u >= nblk)
						break;
					const uint16_t *xb[NT8];
#pragma unroll
					for (int nt = 0; nt < NT8; nt++)
						xb[nt] = xp[nt] + u * GV_K;
					gemv_lean_block<NT8>(wa0[u], wa1[u], sa0[u], sa1[u], ssel, xb, acc);
				}
#pragma unroll
				for (int u = 0; u < U; u++) { /* set a: blocks i + 2U + u */
					const bool c = i + 2 * U + u < nblk;
					ld_stream16_if(c, w0 + (2 * U + u) * (GV_K / 2), wa0[u]);
					ld_stream16_if(c, w1 + (2 * U + u) * (GV_K / 2), wa1[u]);
					ld_u32_if(c, s0 + (2 * U + u) * (GV_K / 32), sa0[u]);
					ld_u32_if(c, s1 + (2 * U + u) * (GV_K / 32), sa1[u]);
				}
#pragma unroll
				for (int u = 0; u < U; u++) {
					if (i + U + u >= nblk)
						break;
					const uint16_t *xb[NT8];
#pragma unroll
					for (int nt = 0; nt < NT8; nt++)
						xb[nt] = xp[nt] + (U + u) * GV_K;
					gemv_lean_block<NT8>(wb0[u], wb1[u], sb0[u], sb1[u], ssel, xb, acc);
				}
				w0 += 2 * U * (GV_K / 2), w1 += 2 * U * (GV_K / 2);
				s0 += 2 * U * (GV_K / 32), s1 += 2 * U * (GV_K / 32);
#pragma unroll
				for (int nt = 0; nt < NT8; nt++)
					xp[nt] += 2 * U * GV_K;
			}
			if constexpr (KS > 1)
				if (!gemv_kslice_sum<KS, RG, NT8>(red, ksl, rg, lane, active, acc))
					continue;
			gemv_store<NT8, EPI, PARTIAL>(p, pr, re, nb, gq, tq, acc);
		}
	}
}
/* ---- gemv, MXFP4 weights in the FP16-pair layout (grouped; the default where w_f16 is given) ---- */

/* gemv_f16_kernel: the weights in the FP16-pair layout (k3_quant.h, k3_mxfp4_repack_f16enc()):
 * lane (g, t) loads 16 bytes of rows g and g + 8 a 128-deep block, word j the 8 weights 32 j +
 * 8 t .. + 7 of scale group j, and k3_f16enc_to_f16x8() turns each word into the 4 FP16 pairs
 * (v 2^-14) of two MMAs m16n8k16 whose 16 k lie in one scale group (8 integer instructions for 8
 * weights: a rotate and a LOP3 a pair; gemv_lean_kernel takes 15 and 4 BF16 scale products).
 * The two MMAs start from a zero accumulator and their FP32 sums are added times the group's
 * E8M0 scale (a shift and a mask make 2^(e - 127) from the scale byte: 0 multiplies by 0, 255 by
 * infinity, as in gemv_lean_kernel). The scales stay in the standard layout: one 8-byte load a
 * row gives a lane the scale words of a register set's 2 blocks (K a multiple of 512, the loop's
 * step of 4 blocks in two sets). The
 * activations come from a first pass (f16act_kernel): each grouped row as FP16 times 2^(14 - e)
 * (e = floor(log2) of the row's largest magnitude), the 8 elements of each 8-chunk as the pairs
 * (0, 4), (1, 5), (2, 6), (3, 7): lane t's 16 bytes of group j are the B fragments of its two
 * MMAs. The sums are multiplied by 2^e at the store. Elements below the row's largest magnitude
 * times 2^-28 become FP16 subnormals (absolute error 2^-25 of that magnitude), below 2^-39 zero.
 * A pass takes 8 tokens (a group of more rows takes several, each reading the weights again);
 * NT8 = 2 (K3_GEMV_F16_NT=2, measurements) takes up to 16 but runs the second tile's loads and
 * MMAs only where the group has more than 8 rows left: measured slower (B = 256: 38 against
 * 66 % of copy; 128 registers with spills). Grouped calls only, K a multiple of 512 up to 8192.
 * Measured (H200, 2026-12-01zb call 2, bench/results/k3-kernels-h200-2026-12-01zb; % of copy on
 * weight bytes, median of single launches, the first pass included, w13 / w2 at B = 1, 16, 64,
 * 256): 61.1 / 47.6, 81.4 / 80.6, 83.0 / 83.8, 69.1 / 68.5 (gemv_lean_kernel in the same process
 * 54.5 / 40.6, 63.5 / 59.8, 60.4 / 59.1, 52.2 / 54.5). ncu (w13 B = 1, no L2 prefetch): 21.5 M
 * warp-instructions, 0.115 a weight byte (gemv_lean_kernel 0.197), 0.38 issued a cycle per
 * scheduler, DRAM 59 %; f16act_kernel 3.1 us. Fused (FUSE, 2026-12-02b call 1, fused / two-kernel
 * in one process, power-capped bench): w13 / w2 at B = 1 61.2 / 59.6, 47.2 / 46.3; B = 16 83.2 /
 * 73.1, 79.2 / 78.6; ncu of w2 B = 1: 34.05 us (64 % of copy for the kernel alone) against 2.98
 * + 35.07, 8.15 cycles between issues against 9.52, SM active 83 % of the elapsed cycles. */
constexpr int GF_STEP = 4; /* blocks a loop step and a scale load */

/* The FP16 activations of gemv_f16_kernel: a CTA per grouped row (rows past off[n_groups] are
 * not read or written; cnt: gemv_f16p_kernel's N / 16 counters of row r set to 0), each thread up to GF_ACT_CH 8-chunks held in registers between the
 * row's max and its conversion (one read of the row); xf[r] = 2^e. With programmatic dependent
 * launch the gemv starts when every CTA of this grid has begun (it waits for this grid's writes
 * before reading them, griddepcontrol.wait), so its first weight loads overlap this pass. */
constexpr int GF_ACT_CH = 4; /* K <= 8 x THREADS x GF_ACT_CH = 8192 */

/* A row's FP16 conversion from m, the largest BF16 magnitude bits (|x| & 0x7fff) of the row: the
 * elements times 2^(14 - e) (e = floor(log2) of that magnitude; 0 for an all-zero row), xf = 2^e
 * (the factor the gemv multiplies its sums by), and chunk(): an 8-chunk of BF16 in the pair order
 * (0, 4), (1, 5), (2, 6), (3, 7). One place for f16act_kernel and the fused kernel. */
struct f16act_scale {
	float mul1, mul2, xf;
	__device__ __forceinline__ explicit f16act_scale(uint32_t m)
	{
		const int ef = (int)(m >> 7); /* BF16 exponent field of the largest magnitude */
		const int e = m == 0 ? 0 : ef == 0 ? -127 : min(ef, 254) - 127;
		const int sh = 14 - e, sh1 = sh / 2; /* 2^sh in two exact steps: sh is -113 .. 141 */
		mul1 = __uint_as_float((uint32_t)(127 + sh1) << 23);
		mul2 = __uint_as_float((uint32_t)(127 + sh - sh1) << 23);
		xf = e >= -126 ? __uint_as_float((uint32_t)(e + 127) << 23) : __uint_as_float(0x00400000u);
	}
	__device__ __forceinline__ uint4 chunk(const uint4 &v) const
	{
		const uint32_t w[4] = { v.x, v.y, v.z, v.w };
		float f[8];
#pragma unroll
		for (int q = 0; q < 4; q++) {
			f[2 * q] = k3_lo_bf16(w[q]) * mul1 * mul2;
			f[2 * q + 1] = k3_hi_bf16(w[q]) * mul1 * mul2;
		}
		return make_uint4(k3_pack_f16(f[0], f[4]), k3_pack_f16(f[1], f[5]), k3_pack_f16(f[2], f[6]),
				  k3_pack_f16(f[3], f[7]));
	}
};

/* The largest BF16 magnitude bits of the 8 elements of v (both halves of the result). */
__device__ __forceinline__ uint32_t bf16x8_absmax2(const uint4 &v)
{
	return __vmaxu2(__vmaxu2(v.x & 0x7fff7fffu, v.y & 0x7fff7fffu), __vmaxu2(v.z & 0x7fff7fffu, v.w & 0x7fff7fffu));
}

__global__ void __launch_bounds__(THREADS) f16act_kernel(const params p, uint16_t *xh, float *xf, int32_t *cnt)
{
	__shared__ uint32_t wmax[THREADS / 32];
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	const int tid = (int)threadIdx.x;
	const int64_t r = blockIdx.x;
	if (r >= p.rows || r >= (int64_t)p.off[p.n_groups])
		return; /* CTA-uniform */
	if (cnt) /* gemv_f16p_kernel's counters of the passes that start at row r */
		for (int i = tid; i < p.N / 16; i += THREADS)
			cnt[r * (p.N / 16) + i] = 0;
	const int64_t ar = p.a_index ? p.a_index[r] : r;
	const uint16_t *src = p.a + ar * p.K;
	const int chunks = p.K / 8;
	uint4 v[GF_ACT_CH];
	uint32_t m2 = 0;
#pragma unroll
	for (int i = 0; i < GF_ACT_CH; i++) {
		const int c = tid + i * THREADS;
		v[i] = c < chunks ? ld_nc16(src + (size_t)c * 8) : make_uint4(0u, 0u, 0u, 0u);
		m2 = __vmaxu2(m2, bf16x8_absmax2(v[i]));
	}
	uint32_t m = __reduce_max_sync(0xffffffffu, max(m2 & 0xffffu, m2 >> 16));
	if ((tid & 31) == 0)
		wmax[tid >> 5] = m;
	__syncthreads();
#pragma unroll
	for (int w = 0; w < THREADS / 32; w++)
		m = max(m, wmax[w]);
	const f16act_scale sc(m);
	if (tid == 0)
		xf[r] = sc.xf;
	uint16_t *dst = xh + r * p.K;
#pragma unroll
	for (int i = 0; i < GF_ACT_CH; i++) {
		const int c = tid + i * THREADS;
		if (c >= chunks)
			break;
		*reinterpret_cast<uint4 *>(dst + (size_t)c * 8) = sc.chunk(v[i]);
	}
}

/* The FP16 activations of gemv_f16_kernel from E4M3 rows with one FP32 scale a row
 * (K3_A_E4M3_ROW: the LatentMoE layer's decode with E4M3 expert inputs): a CTA per grouped row as
 * f16act_kernel (rows past off[n_groups] not read or written), each E4M3 element q as the FP16
 * q 2^7 (exact: E4M3 is a subset of FP16, 2^-9 .. 448, and 448 x 2^7 = 57344 is below FP16's
 * largest), the 8 of each 8-chunk in the pair order (0, 4), (1, 5), (2, 6), (3, 7), and xf[r] =
 * 2^7 s (s the row's scale a_row_scales[a_index[r]]; finite for every scale a BF16 row gives,
 * s <= 2^119), the factor the gemv multiplies its sums by: the weight pairs are v 2^-14, so each
 * product is q v 2^-7 and the sums times 2^7 s are s q v. No amax pass: the row's values are
 * E4M3's. Starts the gemv early as f16act_kernel does (programmatic dependent launch). */
constexpr float F8ACT_XF = 128.0f;
constexpr uint32_t F8ACT_F16X2 = 0x58005800u; /* FP16 128, 128 */
__global__ void __launch_bounds__(THREADS) f8act_kernel(const params p, uint16_t *xh, float *xf)
{
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	const int64_t r = blockIdx.x;
	if (r >= p.rows || r >= (int64_t)p.off[p.n_groups])
		return; /* CTA-uniform */
	const int64_t ar = p.a_index ? p.a_index[r] : r;
	const uint8_t *src = p.aq + ar * p.K;
	if (threadIdx.x == 0)
		xf[r] = p.aqs[ar] * F8ACT_XF;
	uint16_t *dst = xh + r * p.K;
	auto up7 = [](uint32_t &h) { asm("mul.rn.f16x2 %0, %0, %1;\n" : "+r"(h) : "r"(F8ACT_F16X2)); };
	for (int c = (int)threadIdx.x; c < p.K / 8; c += THREADS) {
		const uint2 v = __ldg(reinterpret_cast<const uint2 *>(src + (size_t)c * 8));
		uint4 h;
		k3_e4m3x4_to_f16x2x2(__byte_perm(v.x, v.y, 0x5140), h.x, h.y); /* bytes 0, 4, 1, 5 */
		k3_e4m3x4_to_f16x2x2(__byte_perm(v.x, v.y, 0x7362), h.z, h.w); /* bytes 2, 6, 3, 7 */
		up7(h.x), up7(h.y), up7(h.z), up7(h.w);
		*reinterpret_cast<uint4 *>(dst + (size_t)c * 8) = h;
	}
}

/* ld_stream16_if() with the L2 asked to fetch the whole 256-byte sector around the address
 * (.L2::256B: a row's next 3 blocks of 64 bytes come into L2 with the first). */
__device__ __forceinline__ void ld_stream16_pf_if(bool c, const void *ptr, uint4 &v)
{
	asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %4, 0;\n\t"
		     "@q ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%5];\n\t}\n"
		     : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)
		     : "r"((int)c), "l"(ptr));
}

/* 8 bytes (scale words), predicated as ld_stream16_if(). */
__device__ __forceinline__ void ld_u64_if(bool c, const void *ptr, uint2 &v)
{
	asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\t"
		     "@q ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%3];\n\t}\n"
		     : "+r"(v.x), "+r"(v.y)
		     : "r"((int)c), "l"(ptr));
}

/* 2^(e - 127) of byte J of a scale word as FP32 bits (0: 0; 255: infinity). */
template <int J>
__device__ __forceinline__ float f16_scale(uint32_t s)
{
	const uint32_t b = J == 0 ? s << 23 : J == 1 ? s << 15 : J == 2 ? s << 7 : s >> 1;
	return __uint_as_float(b & 0x7f800000u);
}

/* Activation operands of gemv_f16_block: a global pointer (the first pass's FP16 rows) or a
 * shared-memory address (the fused kernel's rows, FUSE); x_at(): e elements further. */
__device__ __forceinline__ uint4 ld_x16(const uint16_t *x)
{
	return ld_nc16(x);
}

__device__ __forceinline__ uint4 ld_x16(uint32_t x)
{
	uint4 v;
	asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(x));
	return v;
}

__device__ __forceinline__ const uint16_t *x_at(const uint16_t *x, int e)
{
	return x + e;
}

__device__ __forceinline__ uint32_t x_at(uint32_t x, int e)
{
	return x + 2u * (uint32_t)e;
}

/* One 128-deep block of gemv_f16_kernel: r0, r1 lane (g, t)'s 16 bytes of rows g and g + 8, s0,
 * s1 their 4 scale bytes (byte j: group j), x[nt] token g's FP16 row at k 8t of the block. */
template <int NT8, typename XP>
__device__ __forceinline__ void gemv_f16_block(const uint4 &r0, const uint4 &r1, uint32_t s0, uint32_t s1,
					       const XP (&x)[NT8], bool two, float (&acc)[NT8][4])
{
	const uint32_t q0[4] = { r0.x, r0.y, r0.z, r0.w }, q1[4] = { r1.x, r1.y, r1.z, r1.w };
#pragma unroll
	for (int j = 0; j < 4; j++) {
		uint4 xc[NT8];
#pragma unroll
		for (int nt = 0; nt < NT8; nt++)
			if (nt == 0 || two)
				xc[nt] = ld_x16(x_at(x[nt], 32 * j));
		uint32_t A0[4], A1[4];
		k3_f16enc_to_f16x8(q0[j], A0);
		k3_f16enc_to_f16x8(q1[j], A1);
		const float f0 = j == 0 ? f16_scale<0>(s0) : j == 1 ? f16_scale<1>(s0) : j == 2 ? f16_scale<2>(s0) : f16_scale<3>(s0);
		const float f1 = j == 0 ? f16_scale<0>(s1) : j == 1 ? f16_scale<1>(s1) : j == 2 ? f16_scale<2>(s1) : f16_scale<3>(s1);
		const uint32_t a_lo[4] = { A0[0], A1[0], A0[1], A1[1] }; /* elements (0, 4), (1, 5) */
		const uint32_t a_hi[4] = { A0[2], A1[2], A0[3], A1[3] }; /* (2, 6), (3, 7) */
#pragma unroll
		for (int nt = 0; nt < NT8; nt++) {
			if (nt > 0 && !two)
				continue;
			float d[4];
			k3_mma_f16_zero(d, a_lo, xc[nt].x, xc[nt].y);
			k3_mma_f16(d, a_hi, xc[nt].z, xc[nt].w);
			acc[nt][0] = fmaf(d[0], f0, acc[nt][0]);
			acc[nt][1] = fmaf(d[1], f0, acc[nt][1]);
			acc[nt][2] = fmaf(d[2], f1, acc[nt][2]);
			acc[nt][3] = fmaf(d[3], f1, acc[nt][3]);
		}
	}
}

/* The fused kernel's activations (gemv_f16_kernel with FUSE): shared memory holds GF_FHDR bytes
 * (the rows' factors 2^e and largest magnitudes, 8 each) and then up to 8 FP16 rows of K +
 * GF_XPAD elements (rows 64 bytes apart modulo 128: the 16-byte reads of an MMA's 8 rows hit
 * disjoint banks). */
constexpr int GF_FHDR = 64;
constexpr int GF_XPAD = 32;

/* The fused kernel's shared memory for rows_cap rows of K (bytes). */
constexpr size_t gemv_f16_fused_smem(int rows_cap, int K)
{
	return (size_t)GF_FHDR + (size_t)rows_cap * (size_t)(K + GF_XPAD) * 2;
}

/* A pass's activation rows pr .. pr + nr - 1 (nr <= 8) converted as f16act_kernel does, by the
 * whole CTA into shared memory: the BF16 rows copied in (cp.async, no registers: the weight loads
 * issued before stay in flight), each row's largest magnitude (a warp maximum a row, then a
 * shared-memory maximum over the warps), each 8-chunk converted in place. Every thread of the CTA
 * calls it; four barriers (the first: the previous pass's reads are done). In two parts:
 * f16act_smem_issue() (the first barrier and the copies) and f16act_smem_finish() (the rest), so
 * that the copies can be issued before the pass's first weight loads (K3_GEMV_F16_AFIRST). */
template <int NTH = THREADS>
__device__ __forceinline__ void f16act_smem_issue(const params &p, int64_t pr, int nr, unsigned char *smem)
{
	uint32_t *rmax = reinterpret_cast<uint32_t *>(smem) + 8;
	uint16_t *xs = reinterpret_cast<uint16_t *>(smem + GF_FHDR);
	const int tid = (int)threadIdx.x, chunks = p.K / 8, xst = p.K + GF_XPAD;
	__syncthreads();
	if (tid < 8)
		rmax[tid] = 0u;
	for (int r = 0; r < nr; r++) {
		const int64_t ar = p.a_index ? p.a_index[pr + r] : pr + r;
		const uint16_t *src = p.a + ar * p.K;
		for (int c = tid; c < chunks; c += NTH)
			k3_cp_async16(xs + (size_t)r * xst + (size_t)c * 8, src + (size_t)c * 8);
	}
	k3_cp_async_commit();
}

template <int NTH = THREADS>
__device__ __forceinline__ void f16act_smem_finish(const params &p, int nr, unsigned char *smem)
{
	float *xfs = reinterpret_cast<float *>(smem);
	uint32_t *rmax = reinterpret_cast<uint32_t *>(smem) + 8;
	uint16_t *xs = reinterpret_cast<uint16_t *>(smem + GF_FHDR);
	const int tid = (int)threadIdx.x, chunks = p.K / 8, xst = p.K + GF_XPAD;
	k3_cp_async_wait<0>();
	__syncthreads();
	for (int r = 0; r < nr; r++) {
		uint32_t m2 = 0;
		for (int c = tid; c < chunks; c += NTH)
			m2 = __vmaxu2(m2, bf16x8_absmax2(*reinterpret_cast<const uint4 *>(xs + (size_t)r * xst + (size_t)c * 8)));
		const uint32_t m = __reduce_max_sync(0xffffffffu, max(m2 & 0xffffu, m2 >> 16));
		if ((tid & 31) == 0)
			atomicMax(rmax + r, m);
	}
	__syncthreads();
	for (int r = 0; r < nr; r++) {
		const f16act_scale sc(rmax[r]);
		if (tid == 0)
			xfs[r] = sc.xf;
		for (int c = tid; c < chunks; c += NTH) {
			uint4 *q = reinterpret_cast<uint4 *>(xs + (size_t)r * xst + (size_t)c * 8);
			*q = sc.chunk(*q);
		}
	}
	__syncthreads();
}

/* The opt-in per-CTA trace of the fused gemv (gemv_trace_arm()): %globaltimer (ns, one clock for
 * every SM) at the CTA's start, after its first activation conversion (its first weight loads are
 * in flight by then: the first DRAM latency) and at its end (all warps done), and its SM with its
 * cycles (clock64) from start to end. 4 words a CTA at its linear index (GF_TRACE_WORDS). */
constexpr int GF_TRACE_WORDS = 4;

__device__ __forceinline__ unsigned long long gemv_globaltimer()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* The CTA's words (written by its thread 0 as it goes: no registers held over the loop). */
__device__ __forceinline__ unsigned long long *gemv_trace_at(unsigned long long *trace)
{
	return trace + (size_t)(blockIdx.y * gridDim.x + blockIdx.x) * GF_TRACE_WORDS;
}

__device__ __forceinline__ void gemv_trace_start(unsigned long long *trace)
{
	unsigned long long *t = gemv_trace_at(trace);
	t[0] = gemv_globaltimer();
	t[1] = 0;
	t[3] = (unsigned long long)clock64();
}

__device__ __forceinline__ void gemv_trace_conv(unsigned long long *trace)
{
	unsigned long long *t = gemv_trace_at(trace);
	if (t[1] == 0)
		t[1] = gemv_globaltimer();
}

__device__ __forceinline__ void gemv_trace_end(unsigned long long *trace)
{
	unsigned long long *t = gemv_trace_at(trace);
	unsigned smid;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
	const unsigned long long cyc = ((unsigned long long)clock64() - t[3]) & 0xffffffffffffull;
	t[2] = gemv_globaltimer();
	t[3] = (unsigned long long)smid << 48 | cyc;
}

/* The fused kernel's head prefetch (K3_GEMV_F16_HPF=n, opt-in): before a unit's first activation
 * conversion (whose DRAM latency each CTA waits for with only its first GF_STEP / 2 blocks a row
 * in flight) lane (g, t) asks the L2 for the 128-byte lines of blocks 4 + 8 j + 2 t, + 1 of its
 * rows g and g + 8 (j < n): 8 n blocks a row beyond the first 4 (w0, w1: the lane's addresses of
 * the rows' block 0; a row is 128-byte aligned: K / 2 bytes, K a multiple of 512). Measured slower
 * everywhere (H200, 2026-12-02k call 2, back to back, % of the copy ceiling on weight bytes): w2
 * B = 1 n = 1 53.3-53.6, n = 2 50.6-50.9 against 65.1-65.2 without; B = 16 62-68 against 86-89;
 * its first conversion took 6.4-7.9 us a CTA against 4.6 (the prefetches queue before the
 * activation row's loads). */
__device__ __forceinline__ void gemv_head_prefetch(const uint8_t *w0, const uint8_t *w1, int tq, int nblk, int n)
{
	for (int j = 0; j < n; j++) {
		const int b = 4 + 8 * j + 2 * tq;
		if (b >= nblk)
			break;
		const size_t off = (size_t)b * (GV_K / 2) - (size_t)tq * 16;
		asm volatile("prefetch.global.L2 [%0];" ::"l"(w0 + off));
		asm volatile("prefetch.global.L2 [%0];" ::"l"(w1 + off));
	}
}

/* KS: k slices a CTA (1, 2, 4; NT8 = 1) as in gemv_lean_kernel, each a multiple of GF_STEP blocks.
 * PF: the weight loads with the L2 256-byte hint (a row's next 3 blocks come with the first).
 * Measured and removed (2026-12-02b call 1): each row's sectors 2 and 3 ahead besides, by the bulk
 * copy engine's L2 prefetch: 5-25 points slower at every batch.
 * FUSE (NT8 = 1, KS = 1): no first pass: each CTA converts its pass's activation rows itself into
 * shared memory (f16act_smem_issue() and _finish(), after its first weight loads) and reads its
 * B fragments there;
 * xh, xf unused; by programmatic dependent launch where its grid is short (gemv_f16_fpdl(): it
 * waits for the kernel before it at its start, griddepcontrol.wait, a no-op after a plain launch)
 * and lets the kernels after it launch (griddepcontrol.launch_dependents); else a plain launch.
 * W (FUSE only): warps a CTA, 8 (128 rows), 4 or 2 (K3_GEMV_F16_WPC); prow: rows a pass (8, or
 * fewer for the fused kernel's shared memory). trace (FUSE only; nullptr: none): the CTA's
 * start, first conversion and end (gemv_trace_arm()). hpf (FUSE only): the head prefetch
 * (gemv_head_prefetch(), K3_GEMV_F16_HPF; 0: none). afirst (FUSE only): the activation rows'
 * copies issued before the pass's first weight loads (K3_GEMV_F16_AFIRST=1; 0: after them). */
template <int NT8, int EPI, int KS, bool PF = false, bool FUSE = false, int W = 8>
__global__ void __launch_bounds__(32 * W, 16 / W)
	gemv_f16_kernel(const params p, const uint16_t *xh, const float *xf, unsigned long long *trace, int prow, int hpf,
			int afirst)
{
	auto ldw = [](bool c, const void *ptr, uint4 &v) { /* PF: with the L2 256-byte prefetch */
		if constexpr (PF)
			ld_stream16_pf_if(c, ptr, v);
		else
			ld_stream16_if(c, ptr, v);
	};
	static_assert(KS == 1 || KS == 2 || KS == 4, "k slices");
	static_assert(KS == 1 || NT8 == 1, "k slices: 8 tokens a pass");
	static_assert(!FUSE || (KS == 1 && NT8 == 1), "fused: 8 tokens a pass, no k slices");
	static_assert(W == 8 || (FUSE && (W == 2 || W == 4)), "warps a CTA: 8; fused also 2 or 4");
	if (FUSE && trace && threadIdx.x == 0)
		gemv_trace_start(trace);
	if constexpr (FUSE) {
		/* Launched by programmatic dependent launch (K3_GEMV_F16_FPDL): the kernel before it
		 * may still run; nothing is read before it has finished (the routing, the activations:
		 * a no-op without the attribute). Kernels after it may start once every CTA is here. */
		asm volatile("griddepcontrol.wait;" ::: "memory");
		asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	}
	using XP = typename std::conditional<FUSE, uint32_t, const uint16_t *>::type;
	constexpr int U = 2; /* blocks a register set: two sets in turn, GF_STEP blocks a loop step */
	static_assert(2 * U == GF_STEP, "step");
	constexpr int RG = W / KS;
	__shared__ float red[KS > 1 ? (KS - 1) * RG * NT8 * 4 * 32 : 1];
	extern __shared__ __align__(16) unsigned char gf_smem[];
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, gq = lane >> 2, tq = lane & 3;
	const int rg = warp % RG, ksl = warp / RG;
	const int nb = (int)blockIdx.x * (16 * RG) + rg * 16;
	const bool active = nb < p.N;
	if (!FUSE && KS == 1 && !active)
		return; /* fused: every warp takes part in the conversion's barriers */
	const int nkb = p.K / GV_K; /* a multiple of GF_STEP */
	int kb0 = 0, kb1 = nkb;
	if constexpr (KS > 1) {
		const int per = (nkb / GF_STEP + KS - 1) / KS * GF_STEP;
		kb0 = min(nkb, ksl * per);
		kb1 = min(nkb, kb0 + per);
	}
	const int nblk = active ? kb1 - kb0 : 0;
	const size_t wrow = (size_t)(p.K / 2), srow = (size_t)(p.K / 32);
	const int units = *p.n_touched;
	for (int ui = (int)blockIdx.y; ui < units; ui += (int)gridDim.y) {
		const int grp = p.touched[ui];
		const int64_t rb = p.off[grp], re = p.off[grp + 1];
		const size_t wr0 = (size_t)grp * p.N + nb + gq;
		const uint8_t *const w0b = p.wp + wr0 * wrow + tq * 16 + (size_t)kb0 * (GV_K / 2);
		const uint8_t *const s0b = p.ws + wr0 * srow + (size_t)kb0 * (GV_K / 32);
		/* a pass: 8 NT8 rows (fused: prow <= 8, the rows its shared memory holds) */
		const int step = FUSE ? prow : 8 * NT8;
		for (int64_t pr = rb; pr < re; pr += step) {
			const int64_t pe = FUSE && pr + step < re ? pr + step : re; /* the pass's rows end */
			const bool two = NT8 > 1 && re - pr > 8;
			XP xp[NT8];
#pragma unroll
			for (int nt = 0; nt < NT8; nt++) {
				const int64_t r0 = pr + nt * 8 + gq, r = r0 < pe ? r0 : pr;
				if constexpr (FUSE)
					xp[nt] = k3_smem_u32(gf_smem + GF_FHDR) +
						 2u * (uint32_t)((r - pr) * (p.K + GF_XPAD) + tq * 8 + kb0 * GV_K);
				else
					xp[nt] = xh + r * p.K + tq * 8 + (size_t)kb0 * GV_K;
			}
			float acc[NT8][4];
#pragma unroll
			for (int nt = 0; nt < NT8; nt++)
				acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
			if constexpr (FUSE)
				if (afirst) /* the activation rows' copies first (CTA-uniform) */
					f16act_smem_issue<32 * W>(p, pr, (int)(pe - pr), gf_smem);
			const uint8_t *w0 = w0b, *w1 = w0b + 8 * wrow, *s0 = s0b, *s1 = s0b + 8 * srow;
			uint4 wa0[U], wa1[U], wb0[U], wb1[U];
			uint2 sa0 = make_uint2(0u, 0u), sa1 = sa0, sb0 = sa0, sb1 = sa0; /* a set's 2 scale words a row */
#pragma unroll
			for (int u = 0; u < U; u++) {
				wa0[u] = wa1[u] = wb0[u] = wb1[u] = make_uint4(0u, 0u, 0u, 0u);
				ldw(nblk > 0, w0 + u * (GV_K / 2), wa0[u]);
				ldw(nblk > 0, w1 + u * (GV_K / 2), wa1[u]);
			}
			ld_u64_if(nblk > 0, s0, sa0);
			ld_u64_if(nblk > 0, s1, sa1);
			if constexpr (FUSE) {
				if (hpf > 0 && pr == rb) /* a unit's first pass: its rows' next blocks into L2 */
					gemv_head_prefetch(w0, w1, tq, nblk, hpf);
				if (!afirst)
					f16act_smem_issue<32 * W>(p, pr, (int)(pe - pr), gf_smem);
				f16act_smem_finish<32 * W>(p, (int)(pe - pr), gf_smem);
				if (trace && threadIdx.x == 0)
					gemv_trace_conv(trace);
			} else {
				/* The activations and row factors are the first pass's (f16act_kernel, launched
				 * before this grid, which may start early: programmatic dependent launch); a
				 * no-op once that grid has finished or without it. */
				asm volatile("griddepcontrol.wait;" ::: "memory");
			}
#pragma unroll 1
			for (int i = 0; i < nblk; i += GF_STEP) {
#pragma unroll
				for (int u = 0; u < U; u++) { /* set b: blocks i + U + u */
					ldw(true, w0 + (U + u) * (GV_K / 2), wb0[u]);
					ldw(true, w1 + (U + u) * (GV_K / 2), wb1[u]);
				}
				ld_u64_if(true, s0 + U * (GV_K / 32), sb0);
				ld_u64_if(true, s1 + U * (GV_K / 32), sb1);
				const bool more = i + GF_STEP < nblk;
				{
					XP xb[NT8];
#pragma unroll
					for (int nt = 0; nt < NT8; nt++)
						xb[nt] = xp[nt];
					gemv_f16_block<NT8>(wa0[0], wa1[0], sa0.x, sa1.x, xb, two, acc);
#pragma unroll
					for (int nt = 0; nt < NT8; nt++)
						xb[nt] = x_at(xp[nt], GV_K);
					gemv_f16_block<NT8>(wa0[1], wa1[1], sa0.y, sa1.y, xb, two, acc);
				}
#pragma unroll
				for (int u = 0; u < U; u++) { /* set a: blocks i + 2U + u */
					ldw(more, w0 + (2 * U + u) * (GV_K / 2), wa0[u]);
					ldw(more, w1 + (2 * U + u) * (GV_K / 2), wa1[u]);
				}
				ld_u64_if(more, s0 + 2 * U * (GV_K / 32), sa0);
				ld_u64_if(more, s1 + 2 * U * (GV_K / 32), sa1);
				{
					XP xb[NT8];
#pragma unroll
					for (int nt = 0; nt < NT8; nt++)
						xb[nt] = x_at(xp[nt], 2 * GV_K);
					gemv_f16_block<NT8>(wb0[0], wb1[0], sb0.x, sb1.x, xb, two, acc);
#pragma unroll
					for (int nt = 0; nt < NT8; nt++)
						xb[nt] = x_at(xp[nt], 3 * GV_K);
					gemv_f16_block<NT8>(wb0[1], wb1[1], sb0.y, sb1.y, xb, two, acc);
				}
				w0 += GF_STEP * (GV_K / 2), w1 += GF_STEP * (GV_K / 2);
				s0 += GF_STEP * (GV_K / 32), s1 += GF_STEP * (GV_K / 32);
#pragma unroll
				for (int nt = 0; nt < NT8; nt++)
					xp[nt] = x_at(xp[nt], GF_STEP * GV_K);
			}
			if constexpr (KS > 1)
				if (!gemv_kslice_sum<KS, RG, NT8>(red, ksl, rg, lane, active, acc))
					continue;
			if (FUSE && !active)
				continue;
			/* The row factors 2^e back (columns 2t, 2t + 1 of each tile: tokens of rows pr + 8 nt + 2t + e). */
#pragma unroll
			for (int nt = 0; nt < NT8; nt++)
#pragma unroll
				for (int e = 0; e < 2; e++) {
					const int64_t r = pr + nt * 8 + 2 * tq + e;
					float f = 0.0f;
					if (r < pe)
						f = FUSE ? reinterpret_cast<const float *>(gf_smem)[r - pr] : xf[r];
					acc[nt][e] *= f;
					acc[nt][2 + e] *= f;
				}
			gemv_store<NT8, EPI, false>(p, pr, pe, nb, gq, tq, acc);
		}
	}
	if (FUSE && trace) { /* CTA-uniform */
		__syncthreads(); /* the CTA's last warp done */
		if (threadIdx.x == 0)
			gemv_trace_end(trace);
	}
}

/* ---- gemv_f16, persistent (PERSIST: K3_GEMV_F16_PERSIST) ------------------------------------ */

/* gemv_f16p_kernel: gemv_f16_kernel's arithmetic (gemv_f16_block(), the first pass's FP16 rows,
 * 8 tokens a pass) on a persistent grid of one wave (gemv_f16p_ctas() CTAs of 8 warps). The work
 * is the touched groups' 128-row units (a CTA's 8 warps take 16 rows each, as in gemv_f16_kernel:
 * they share the activation rows in L1) times the K / 256 pairs of 128-deep blocks each (units in
 * (touched index, row block) order, pairs in k order), flattened and cut into equal ranges, one a
 * CTA: CTA c takes pairs [c P / C, (c + 1) P / C) of the P, with C the CTAs, at most P / (K / 256)
 * (each range at least a unit long, so a unit falls to at most two CTAs: the end of one range,
 * its head, k from 0, and the start of the next, its tail, k to K). Each warp streams its rows of
 * the range without a break: the first two blocks of its next unit (or next 8-row pass of a group
 * of more rows) are loaded before the last two of the current one are multiplied (the range's
 * groups and rows are read once, into the warp's lanes). A whole unit is stored as
 * gemv_f16_kernel does. A split one: each piece's warp writes its FP32 sums to its slot (head 0,
 * tail 1: part[slot][row][N]), fences and counts on the pass's counter (cnt[first row of the
 * pass][16-row block], zeroed by the first pass, f16act_kernel); the second to count adds the
 * other's sums to its own (one addition, the same either way round) and stores. Groups of more
 * than 8 rows take a pass a unit each as in gemv_f16_kernel (the ranges count one pass a unit:
 * such groups' CTAs run longer). No waiting on other CTAs: any order of residency finishes.
 * Measured slower than gemv_f16_kernel at every batch, so opt-in (K3_GEMV_F16_PERSIST=1; H200,
 * 2026-12-02i, bench/results/k3-kernels-h200-2026-12-02i): call 1 had each warp its own range of
 * 16-row units (the 8 warps of an SM read 8 groups' activation rows through L2): 5-28 points
 * slower; call 2, this kernel: 1-21 points slower (w2 B = 1 41.5 against 47.2 % of copy). ncu of
 * w2 B = 1 (1.81 GHz): 42.3 us against the fused gemv_f16_kernel's 34.7, SM active 84 % of the
 * elapsed cycles against 85 % (one even wave did not remove the idle cycles: not the 1.7-wave
 * tail), 10.2 cycles between issues against 8.2 (scoreboard waits on L1TEX: 4.7 against 3.4; the
 * activations come through L1 here, from shared memory there), DRAM 49 against 58 % of peak. */
template <int EPI, bool PF>
__global__ void __launch_bounds__(THREADS, 2) gemv_f16p_kernel(const params p, const uint16_t *xh, const float *xf,
							       float *part, int32_t *cnt)
{
	auto ldw = [](bool c, const void *ptr, uint4 &v) {
		if constexpr (PF)
			ld_stream16_pf_if(c, ptr, v);
		else
			ld_stream16_if(c, ptr, v);
	};
	const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5, gq = lane >> 2, tq = lane & 3;
	const int R = p.N / 16, U = (p.N + GV_ROWS - 1) / GV_ROWS, np = p.K / (2 * GV_K);
	const int64_t P = (int64_t)*p.n_touched * U * np;
	const int64_t C = min((int64_t)gridDim.x, P / np);
	const int64_t c = blockIdx.x;
	if (c >= C)
		return; /* CTA-uniform; no barriers below */
	const int64_t p0 = c * P / C, p1 = (c + 1) * P / C;
	const size_t wrow = (size_t)(p.K / 2), srow = (size_t)(p.K / 32);
	/* The range's groups (at most 32 kept): lane l holds touched index ui0 + l's group and rows,
	 * so a job's start reads no memory (a range spans few groups: a group is U units). */
	const int ui0 = (int)(p0 / np / U), nui = (int)((p1 - 1) / np / U) - ui0 + 1;
	int g_l = 0, rs_l = 0, re_l = 0;
	if (lane < nui) {
		g_l = p.touched[ui0 + lane];
		rs_l = p.off[g_l];
		re_l = p.off[g_l + 1];
	}
	/* The job: a unit's pass (rows pr .. min(pr + 8, re) - 1) over pairs a .. b - 1. */
	struct job {
		int64_t q;      /* flattened pair of its start */
		int64_t pr, re; /* the pass's first row, the group's end */
		int unit, a, b, grp, nb; /* nb: the warp's first weight row */
		bool act;                /* nb < N */
	};
	auto unit_job = [&](int64_t q, job &j) {
		j.q = q;
		j.unit = (int)(q / np);
		j.a = (int)(q % np);
		j.b = (int)min((int64_t)np, (int64_t)j.a + (p1 - q));
		j.nb = (j.unit % U) * GV_ROWS + warp * 16;
		j.act = j.nb < p.N;
		const int d = j.unit / U - ui0; /* warp-uniform */
		if (d < 32) {
			j.grp = __shfl_sync(0xffffffffu, g_l, d);
			j.pr = __shfl_sync(0xffffffffu, rs_l, d);
			j.re = __shfl_sync(0xffffffffu, re_l, d);
		} else {
			j.grp = p.touched[j.unit / U];
			j.pr = p.off[j.grp];
			j.re = p.off[j.grp + 1];
		}
	};
	auto next_job = [&](const job &c, job &n) -> bool { /* false: the range ends with c */
		if (c.pr + 8 < c.re) {
			n = c;
			n.pr = c.pr + 8;
			return true;
		}
		const int64_t q = c.q + (c.b - c.a);
		if (q >= p1)
			return false;
		unit_job(q, n);
		return true;
	};
	auto wptr = [&](const job &j, const uint8_t *&w0, const uint8_t *&s0) {
		const size_t wr0 = (size_t)j.grp * p.N + (size_t)(j.act ? j.nb : 0) + gq;
		w0 = p.wp + wr0 * wrow + tq * 16 + (size_t)j.a * GV_K;
		s0 = p.ws + wr0 * srow + (size_t)j.a * (2 * GV_K / 32);
	};
	job cur;
	unit_job(p0, cur);
	const uint8_t *w0, *s0;
	wptr(cur, w0, s0);
	uint4 wa0[2], wa1[2], wb0[2], wb1[2];
	uint2 sa0 = make_uint2(0u, 0u), sa1 = sa0, sb0 = sa0, sb1 = sa0;
#pragma unroll
	for (int u = 0; u < 2; u++) {
		wa0[u] = wa1[u] = wb0[u] = wb1[u] = make_uint4(0u, 0u, 0u, 0u);
		ldw(cur.act, w0 + u * (GV_K / 2), wa0[u]);
		ldw(cur.act, w0 + 8 * wrow + u * (GV_K / 2), wa1[u]);
	}
	ld_u64_if(cur.act, s0, sa0);
	ld_u64_if(cur.act, s0 + 8 * srow, sa1);
	/* The activations, row factors and counters are the first pass's (f16act_kernel, launched
	 * before this grid, which may start early: programmatic dependent launch). */
	asm volatile("griddepcontrol.wait;" ::: "memory");
	for (;;) {
		job nxt;
		const bool has_next = next_job(cur, nxt);
		const uint8_t *nw0 = w0, *ns0 = s0;
		if (has_next)
			wptr(nxt, nw0, ns0);
		const bool rows_in = cur.pr < cur.re; /* a touched group holds rows; else nothing is stored */
		const int64_t rr = cur.pr + gq < cur.re ? cur.pr + gq : rows_in ? cur.pr : 0;
		const uint16_t *xp = xh + rr * p.K + tq * 8 + (size_t)cur.a * (2 * GV_K);
		float acc[1][4] = { { 0.0f, 0.0f, 0.0f, 0.0f } };
		const int n2 = cur.b - cur.a;
#pragma unroll 1
		for (int i = 0; i < n2; i += 2) {
			const bool hasb = i + 1 < n2, more = i + 2 < n2, ldb = hasb && cur.act;
#pragma unroll
			for (int u = 0; u < 2; u++) { /* set b: pair i + 1 */
				ldw(ldb, w0 + (2 + u) * (GV_K / 2), wb0[u]);
				ldw(ldb, w0 + 8 * wrow + (2 + u) * (GV_K / 2), wb1[u]);
			}
			ld_u64_if(ldb, s0 + 2 * GV_K / 32, sb0);
			ld_u64_if(ldb, s0 + 8 * srow + 2 * GV_K / 32, sb1);
			{
				const uint16_t *xb[1] = { xp };
				gemv_f16_block<1>(wa0[0], wa1[0], sa0.x, sa1.x, xb, false, acc);
				xb[0] = xp + GV_K;
				gemv_f16_block<1>(wa0[1], wa1[1], sa0.y, sa1.y, xb, false, acc);
			}
			/* set a: pair i + 2, or the next job's first pair */
			const uint8_t *la = more ? w0 + 4 * (GV_K / 2) : nw0, *ls = more ? s0 + 4 * GV_K / 32 : ns0;
			const bool lda = more ? cur.act : has_next && nxt.act;
#pragma unroll
			for (int u = 0; u < 2; u++) {
				ldw(lda, la + u * (GV_K / 2), wa0[u]);
				ldw(lda, la + 8 * wrow + u * (GV_K / 2), wa1[u]);
			}
			ld_u64_if(lda, ls, sa0);
			ld_u64_if(lda, ls + 8 * srow, sa1);
			if (hasb) {
				const uint16_t *xb[1] = { xp + 2 * GV_K };
				gemv_f16_block<1>(wb0[0], wb1[0], sb0.x, sb1.x, xb, false, acc);
				xb[0] = xp + 3 * GV_K;
				gemv_f16_block<1>(wb0[1], wb1[1], sb0.y, sb1.y, xb, false, acc);
			}
			w0 += 4 * (GV_K / 2), s0 += 4 * GV_K / 32, xp += 4 * GV_K;
		}
		const int nb = cur.nb;
		bool store = rows_in && cur.act; /* past N (the last unit of an N not a multiple of 128): none */
		if (store && n2 < np) { /* a split unit: the second piece to arrive stores */
			const int slot = cur.a == 0 ? 0 : 1;
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const int64_t r = cur.pr + 2 * tq + e;
				if (r < cur.re) {
					float *sp = part + ((size_t)slot * p.rows + r) * p.N + nb + gq;
					sp[0] = acc[0][e];
					sp[8] = acc[0][2 + e];
				}
			}
			__threadfence();
			__syncwarp();
			int old = 0;
			if (lane == 0)
				old = atomicAdd(cnt + cur.pr * R + nb / 16, 1);
			old = __shfl_sync(0xffffffffu, old, 0);
			store = old != 0;
			if (store) {
				__threadfence();
#pragma unroll
				for (int e = 0; e < 2; e++) {
					const int64_t r = cur.pr + 2 * tq + e;
					if (r < cur.re) {
						const float *sp = part + ((size_t)(1 - slot) * p.rows + r) * p.N + nb + gq;
						acc[0][e] += __ldcg(sp);
						acc[0][2 + e] += __ldcg(sp + 8);
					}
				}
			}
		}
		if (store) {
#pragma unroll
			for (int e = 0; e < 2; e++) { /* the row factors 2^e back */
				const int64_t r = cur.pr + 2 * tq + e;
				const float f = r < cur.re ? xf[r] : 0.0f;
				acc[0][e] *= f;
				acc[0][2 + e] *= f;
			}
			gemv_store<1, EPI, false>(p, cur.pr, cur.re, nb, gq, tq, acc);
		}
		if (!has_next)
			break;
		cur = nxt;
		w0 = nw0, s0 = ns0;
	}
}

/* The FP16-pair layout: a thread per 16-byte output chunk (row, 128-block, t); enc[b] is the
 * encoding of the one-bit word 1 << b (the encoding is GF(2)-linear). */
struct f16enc_table {
	uint32_t col[32];
};

__global__ void __launch_bounds__(THREADS) repack16_kernel(const uint8_t *packed, int64_t chunks, uint8_t *out,
							   const f16enc_table enc)
{
	const int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x;
	if (i >= chunks)
		return;
	const int64_t blk = i >> 2;
	const int t = (int)(i & 3);
	const uint8_t *src = packed + blk * 64 + 4 * t;
	uint32_t o[4];
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const uint32_t w = __ldg(reinterpret_cast<const unsigned int *>(src + 16 * j));
		uint32_t q = 0;
#pragma unroll
		for (int b = 0; b < 32; b++)
			q ^= ((w >> b) & 1u) ? enc.col[b] : 0u;
		o[j] = q;
	}
	*reinterpret_cast<uint4 *>(out + i * 16) = make_uint4(o[0], o[1], o[2], o[3]);
}

/* ---- gemv with MXFP8 activations (FP8 MMA) -------------------------------- */

/* One 128-deep block of a lane's two weight rows in the FP8 layout: 16 bytes (8 weights of
 * each of the block's 4 scale groups) and the 4 scale bytes of each row. */
struct w8block {
	uint4 r0, r1;
	uint32_t s0, s1;
};

/* 2^(e + bias - 127) from byte j of an E8M0 word (bias: 1 for weights, 5 for activations;
 * exact while e + bias <= 254). */
template <int BIAS>
__device__ __forceinline__ float e8m0_pow2(uint32_t word, int j)
{
	return __uint_as_float((__byte_perm(word, 0u, 0x4440u + (uint32_t)j) + (uint32_t)BIAS) << 23);
}

/* A gemv8 pass's token operands: token g's E4M3 row (at k 8t) and the scale rows of tokens
 * 2t, 2t + 1 (the C fragment's) of each token tile. */
template <int NT8>
struct a8_rows {
	const uint8_t *xr[NT8];
	const uint8_t *xs[NT8][2];
	bool xok[NT8], sok[NT8][2];
};

template <int NT8>
__device__ __forceinline__ void a8_rows_init(a8_rows<NT8> &a, const params &p, int64_t pr, int64_t re, int gq, int tq)
{
#pragma unroll
	for (int nt = 0; nt < NT8; nt++) {
		const int64_t r = pr + nt * 8 + gq;
		a.xok[nt] = r < re;
		const int64_t ar = a.xok[nt] ? (p.a_index ? p.a_index[r] : r) : 0;
		a.xr[nt] = p.aq + (size_t)ar * p.K + tq * 8;
#pragma unroll
		for (int e = 0; e < 2; e++) {
			const int64_t rs = pr + nt * 8 + 2 * tq + e;
			a.sok[nt][e] = rs < re;
			const int64_t as = a.sok[nt][e] ? (p.a_index ? p.a_index[rs] : rs) : 0;
			a.xs[nt][e] = p.as + (size_t)as * (p.K / 32);
		}
	}
}

/* The FP8 MMAs of 128-deep block k of a lane's two weight rows (w) against the pass's tokens. */
template <int NT8>
__device__ __forceinline__ void gemv8_block(const w8block &w, int k, const a8_rows<NT8> &a, float (&acc)[NT8][4])
{
	uint2 x[NT8][4];
	uint32_t sa[NT8][2];
#pragma unroll
	for (int nt = 0; nt < NT8; nt++) {
#pragma unroll
		for (int j = 0; j < 4; j++)
			x[nt][j] = a.xok[nt] ? __ldg(reinterpret_cast<const uint2 *>(a.xr[nt] + (size_t)k * GV_K + 32 * j))
					     : make_uint2(0u, 0u);
#pragma unroll
		for (int e = 0; e < 2; e++)
			sa[nt][e] = a.sok[nt][e] ? __ldg(reinterpret_cast<const unsigned int *>(a.xs[nt][e] + (size_t)k * 4))
						 : 0u;
	}
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const uint32_t u0 = j == 0 ? w.r0.x : j == 1 ? w.r0.y : j == 2 ? w.r0.z : w.r0.w;
		const uint32_t u1 = j == 0 ? w.r1.x : j == 1 ? w.r1.y : j == 2 ? w.r1.z : w.r1.w;
		uint32_t A[4]; /* rows g, g + 8 at slots 4t.. (a0, a1) and 16 + 4t.. (a2, a3) */
		k3_e2m1r_to_e4m3x8(u0, A[0], A[2]);
		k3_e2m1r_to_e4m3x8(u1, A[1], A[3]);
		const float fw0 = e8m0_pow2<1>(w.s0, j), fw1 = e8m0_pow2<1>(w.s1, j);
#pragma unroll
		for (int nt = 0; nt < NT8; nt++) {
			float d[4];
			k3_mma_e4m3_zero(d, A, x[nt][j].x, x[nt][j].y);
			const float fa0 = e8m0_pow2<5>(sa[nt][0], j), fa1 = e8m0_pow2<5>(sa[nt][1], j);
			acc[nt][0] = fmaf(d[0], fw0 * fa0, acc[nt][0]);
			acc[nt][1] = fmaf(d[1], fw0 * fa1, acc[nt][1]);
			acc[nt][2] = fmaf(d[2], fw1 * fa0, acc[nt][2]);
			acc[nt][3] = fmaf(d[3], fw1 * fa1, acc[nt][3]);
		}
	}
}

/* As gemv_kernel, with MXFP8 activations and FP8 MMAs. Lane (g, t) holds, per 128-deep block,
 * k 32 j + 8 t .. + 7 of each scale group j of its rows g, g + 8 (one 16-byte load a row, the FP8
 * layout) and of token g (8 bytes per group). MMA j covers group j: its k slots 4t..4t+3 are k
 * 32 j + 8 t + 0..3 and slots 16 + 4t.. are + 4..7, the same for both operands. Its FP32 sums
 * (zero accumulator) are added times fw fa: fw = 2^(ew - 126) of the weight row, fa = 2^(ea -
 * 122) of the token (the 2^6 of the weights' E4M3 form folded in).
 * STAGES 0: the weights stream into two register sets in turn (gemv_kernel's MXFP4 scheme, 64
 * bytes a lane in flight); STAGES > 1: each lane copies its own weight blocks into a private
 * ring of STAGES shared-memory slots with cp.async (STAGES - 1 blocks, 32 (STAGES - 1) bytes a
 * lane, in flight at no register cost; no CTA barrier: a lane reads only what it copied). */
template <int NT8, int EPI, bool PARTIAL, int STAGES>
__global__ void __launch_bounds__(THREADS, 2) gemv8_kernel(const params p)
{
	constexpr int U = 2; /* STAGES 0: blocks per step */
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, gq = lane >> 2, tq = lane & 3;
	int grp = 0;
	int64_t rb = 0, re = p.rows;
	if (p.n_groups) {
		if ((int)blockIdx.y >= *p.n_touched)
			return;
		grp = p.touched[blockIdx.y];
		rb = p.off[grp];
		re = p.off[grp + 1];
	}
	const int nb = (int)blockIdx.x * GV_ROWS + warp * 16;
	if (nb >= p.N)
		return;
	const int nkb = p.K / GV_K;
	const int kb0 = (int)blockIdx.z * p.kb_per_split, kb1 = min(nkb, kb0 + p.kb_per_split);
	const size_t wr0 = (size_t)grp * p.N + nb + gq;
	const uint8_t *wp0 = p.wp + wr0 * (size_t)(p.K / 2) + tq * 16;
	const uint8_t *sp0 = p.ws + wr0 * (size_t)(p.K / 32);
	const size_t wstep = (size_t)8 * (p.K / 2), sstep = (size_t)8 * (p.K / 32);

	auto load_w = [&](int kb, w8block &b) {
		b.r0 = ld_stream16(wp0 + (size_t)kb * 64);
		b.r1 = ld_stream16(wp0 + wstep + (size_t)kb * 64);
		b.s0 = __ldg(reinterpret_cast<const unsigned int *>(sp0 + (size_t)kb * 4));
		b.s1 = __ldg(reinterpret_cast<const unsigned int *>(sp0 + sstep + (size_t)kb * 4));
	};
	extern __shared__ __align__(16) unsigned char gv8_smem[];
	/* STAGES > 1: slot s of this thread: r0, r1 (16 bytes each), s0, s1 (4 each). */
	uint4 *R0 = reinterpret_cast<uint4 *>(gv8_smem), *R1 = R0 + STAGES * THREADS;
	uint32_t *S0 = reinterpret_cast<uint32_t *>(R1 + STAGES * THREADS), *S1 = S0 + STAGES * THREADS;
	auto issue = [&](int kb, int slot) { /* an empty group past the end keeps the wait counts */
		if (kb < kb1) {
			const int i = slot * THREADS + tid;
			k3_cp_async16(R0 + i, wp0 + (size_t)kb * 64);
			k3_cp_async16(R1 + i, wp0 + wstep + (size_t)kb * 64);
			k3_cp_async4_zfill(S0 + i, sp0 + (size_t)kb * 4, true);
			k3_cp_async4_zfill(S1 + i, sp0 + sstep + (size_t)kb * 4, true);
		}
		k3_cp_async_commit();
	};

	for (int64_t pr = rb; pr < re; pr += 8 * NT8) {
		a8_rows<NT8> a;
		a8_rows_init<NT8>(a, p, pr, re, gq, tq);
		float acc[NT8][4];
#pragma unroll
		for (int nt = 0; nt < NT8; nt++)
			acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
		if constexpr (STAGES > 1) {
#pragma unroll
			for (int st = 0; st < STAGES - 1; st++)
				issue(kb0 + st, st);
			int slot = 0;
#pragma unroll 1
			for (int kb = kb0; kb < kb1; kb++) {
				k3_cp_async_wait<STAGES - 2>(); /* block kb has landed */
				const int i = slot * THREADS + tid;
				const w8block w = { R0[i], R1[i], S0[i], S1[i] };
				/* Refill the slot of block kb - 1 (read into registers an iteration ago). */
				issue(kb + STAGES - 1, slot == 0 ? STAGES - 1 : slot - 1);
				gemv8_block<NT8>(w, kb, a, acc);
				slot = slot == STAGES - 1 ? 0 : slot + 1;
			}
			k3_cp_async_wait<0>();
		} else {
			w8block wa[U], wb[U];
#pragma unroll
			for (int u = 0; u < U; u++)
				if (kb0 + u < kb1)
					load_w(kb0 + u, wa[u]);
			auto step = [&](int kb, w8block(&wc)[U], w8block(&wn)[U]) {
#pragma unroll
				for (int u = 0; u < U; u++)
					if (kb + U + u < kb1)
						load_w(kb + U + u, wn[u]);
#pragma unroll
				for (int u = 0; u < U; u++) {
					if (kb + u >= kb1)
						break;
					gemv8_block<NT8>(wc[u], kb + u, a, acc);
				}
			};
#pragma unroll 1
			for (int kb = kb0; kb < kb1; kb += 2 * U) {
				step(kb, wa, wb);
				if (kb + U < kb1)
					step(kb + U, wb, wa);
			}
		}
		gemv_store<NT8, EPI, PARTIAL>(p, pr, re, nb, gq, tq, acc);
	}
}

/* ---- gemv, MXFP4 weights through the bulk copy engine (grouped) ---------- */

/* Opt-in (gemv_bulk()). A persistent grid (two CTAs of 8 warps an SM) in which every warp is its
 * own pipeline: the work is the touched experts' 16-row strips (warp units: the MMA's M), handed
 * out round-robin to the grid's warps numbered across CTAs first (warp w of CTA b is warp w *
 * grid + b, so that the units left over after whole rounds spread over all SMs, not the first
 * CTAs). A warp walks its units' (token pass, 512-deep k stage) sequence and keeps up to
 * GB_STAGES stages of it in flight in a private shared-memory ring filled by the bulk copy
 * engine: per stage 16 row copies of 256 bytes (512 MXFP4 weights) and 16 of 16 scale bytes,
 * issued by lanes 0..15, completion counted on the slot's mbarrier, L2 evict-first (the weights
 * are read once); no register holds a byte in flight. Each 128-deep block's weights are read from
 * the slot just before its MMAs, which are gemv_kernel's (BF16: lane (g, t) k 32t .. 32t + 31 of
 * rows g, g + 8) or gemv8_block's (MXFP8 activations, the FP8 layout); the slot is refilled after
 * the stage. Rows of a slot sit in pairs 576 bytes apart, the odd row 320 bytes into its pair: the
 * eight lanes of a 16-byte shared load's phase (rows 2m, 2m + 1) hit disjoint banks.
 * Measured (2026-12-01s call1) with one CTA an SM and 4 slots a warp (139 KB an SM in flight):
 * 31-38 % of copy, slower than gemv_kernel (33-59 %) and the same with 1 or 2 stages in flight:
 * issue-bound at 8 warps an SM (0.45 warp-instructions a cycle per scheduler). */
constexpr int GB_STAGES = 2;                   /* ring slots a warp */
constexpr int GB_KS = 512;                     /* k per stage */
constexpr int GB_ROW = GB_KS / 2;              /* packed bytes a row per stage */
constexpr int GB_WBYTES = 8 * 576;             /* the 16 rows' weights of a slot */
constexpr int GB_SLOT = GB_WBYTES + 16 * 16;   /* + 16 scale bytes a row */
constexpr int GB_TX = 16 * (GB_ROW + 16);      /* bytes a stage's copies deliver */
constexpr int GB_SMEM = 8 * GB_STAGES * GB_SLOT + 8 * GB_STAGES * 8;
static_assert(GB_SMEM <= 227 * 1024, "gemv bulk ring");

__device__ __forceinline__ int gb_row_off(int r)
{
	return (r >> 1) * 576 + (r & 1) * 320;
}

/* A warp's position in its work: unit u (touched expert u / strips, strip u % strips), token pass,
 * k stage. */
struct gb_pos {
	int u, grp, strip, pass, npass, ks;
};

/* The first unit at or after pos.u (step W) whose expert has rows; false past the last. */
template <int NT8>
__device__ __forceinline__ bool gb_seek(const params &p, int strips, int total, int W, gb_pos &s)
{
	for (; s.u < total; s.u += W) {
		const int e = s.u / strips;
		s.grp = p.touched[e];
		s.strip = s.u - e * strips;
		const int64_t rows = (int64_t)p.off[s.grp + 1] - p.off[s.grp];
		if (rows > 0) {
			s.npass = (int)((rows + 8 * NT8 - 1) / (8 * NT8));
			s.pass = 0, s.ks = 0;
			return true;
		}
	}
	return false;
}

template <int NT8>
__device__ __forceinline__ bool gb_next(const params &p, int strips, int total, int W, int nks, gb_pos &s)
{
	if (++s.ks < nks)
		return true;
	s.ks = 0;
	if (++s.pass < s.npass)
		return true;
	s.u += W;
	return gb_seek<NT8>(p, strips, total, W, s);
}

/* Bulk copy global -> shared with an L2 cache policy. */
__device__ __forceinline__ void gb_bulk(void *dst, const void *src, uint32_t bytes, uint64_t *bar, uint64_t pol)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, "
		     "[%3], %4;\n" ::"r"(k3_smem_u32(dst)),
		     "l"(src), "r"(bytes), "r"(k3_smem_u32(bar)), "l"(pol)
		     : "memory");
#endif
}

/* Two CTAs an SM (128 registers: none spilled at 8 tokens a pass, 8-24 bytes at 16): 16 warps.
 * The first device call ran one CTA of 8 warps with 4 slots a warp and was issue-bound (0.45
 * instructions a cycle per scheduler, 2 warps each; 1, 2 or 4 stages in flight made no
 * difference: 2026-12-01s call1). */
template <int NT8, int EPI, bool A8>
__global__ void __launch_bounds__(THREADS, 2) gemv_bulk_kernel(const params p, int depth)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	extern __shared__ __align__(128) unsigned char gb_smem[];
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, gq = lane >> 2, tq = lane & 3;
	unsigned char *ring = gb_smem + warp * GB_STAGES * GB_SLOT;
	uint64_t *full = reinterpret_cast<uint64_t *>(gb_smem + 8 * GB_STAGES * GB_SLOT) + warp * GB_STAGES;
	if (lane == 0) {
#pragma unroll
		for (int s = 0; s < GB_STAGES; s++)
			k3_mbar_init(full + s, 1);
		k3_mbar_fence_init();
	}
	__syncwarp();
	uint64_t pol;
	asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
	const int strips = p.N / 16, nks = p.K / GB_KS, W = (int)gridDim.x * 8;
	const int total = *p.n_touched * strips;
	const size_t rbytes = (size_t)p.K / 2, sbytes = (size_t)p.K / 32;

	auto issue = [&](const gb_pos &s, int slot) {
		unsigned char *dst = ring + slot * GB_SLOT;
		if (lane == 0)
			k3_mbar_expect_tx(full + slot, GB_TX);
		__syncwarp();
		if (lane < 16) {
			const size_t row = (size_t)s.grp * p.N + (size_t)s.strip * 16 + lane;
			k3_fence_proxy_async(); /* the slot's earlier shared loads before the copies' writes */
			gb_bulk(dst + gb_row_off(lane), p.wp + row * rbytes + (size_t)s.ks * GB_ROW, GB_ROW, full + slot, pol);
			gb_bulk(dst + GB_WBYTES + lane * 16, p.ws + row * sbytes + (size_t)s.ks * 16, 16, full + slot, pol);
		}
	};

	gb_pos pq = { warp * (int)gridDim.x + (int)blockIdx.x, 0, 0, 0, 0, 0 };
	bool pv = gb_seek<NT8>(p, strips, total, W, pq);
	gb_pos cq = pq; /* the consumer's position */
	bool cv = pv;
	uint32_t produced = 0, consumed = 0; /* stage j lands in slot j % GB_STAGES */
	for (; (int)produced < depth && pv; produced++) {
		issue(pq, (int)(produced % GB_STAGES));
		pv = gb_next<NT8>(p, strips, total, W, nks, pq);
	}

	const uint16_t *xr[NT8];
	bool xok[NT8];
	a8_rows<NT8> a8; /* A8: the pass's MXFP8 token rows */
	float acc[NT8][4];
	int64_t pr = 0, re = 0;
	uint4 xc[2][NT8][4]; /* x of the current and the next 128-deep block */
	auto load_x = [&](int kb, uint4 (&x)[NT8][4]) {
#pragma unroll
		for (int nt = 0; nt < NT8; nt++)
#pragma unroll
			for (int q = 0; q < 4; q++)
				x[nt][q] = xok[nt] ? ld_nc16(xr[nt] + (size_t)kb * GV_K + q * 8) : make_uint4(0u, 0u, 0u, 0u);
	};
#pragma unroll 1
	while (cv) {
		if (cq.ks == 0) { /* a new token pass: its rows, x pointers, zero sums */
			const int64_t rb = p.off[cq.grp];
			re = p.off[cq.grp + 1];
			pr = rb + (int64_t)cq.pass * 8 * NT8;
			if constexpr (A8)
				a8_rows_init<NT8>(a8, p, pr, re, gq, tq);
#pragma unroll
			for (int nt = 0; nt < NT8; nt++) {
				const int64_t r = pr + nt * 8 + gq;
				xok[nt] = !A8 && r < re;
				const int64_t ar = xok[nt] ? (p.a_index ? p.a_index[r] : r) : 0;
				xr[nt] = p.a + ar * p.K + tq * 32;
				acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
			}
			if constexpr (!A8)
				load_x(0, xc[0]);
		}
		const int slot = (int)(consumed % GB_STAGES);
		k3_mbar_wait(full + slot, (consumed / GB_STAGES) & 1u);
		const unsigned char *sl = ring + slot * GB_SLOT;
		const unsigned char *sw0 = sl + gb_row_off(gq) + tq * 16, *sw1 = sl + gb_row_off(gq + 8) + tq * 16;
		const uint4 s0 = *reinterpret_cast<const uint4 *>(sl + GB_WBYTES + gq * 16);
		const uint4 s1 = *reinterpret_cast<const uint4 *>(sl + GB_WBYTES + (gq + 8) * 16);
		uint4 w0[4], w1[4]; /* block b read just before its MMAs (registers: two CTAs an SM) */
		const bool more = cq.ks + 1 < nks; /* the pass's next stage follows: prefetch its first x */
		if constexpr (A8) { /* the FP8 layout: block b's 4 scale bytes of a row are word b */
#pragma unroll
			for (int b = 0; b < 4; b++) {
				w0[b] = *reinterpret_cast<const uint4 *>(sw0 + b * 64);
				w1[b] = *reinterpret_cast<const uint4 *>(sw1 + b * 64);
				const w8block w = { w0[b], w1[b], b == 0 ? s0.x : b == 1 ? s0.y : b == 2 ? s0.z : s0.w,
						    b == 0 ? s1.x : b == 1 ? s1.y : b == 2 ? s1.z : s1.w };
				gemv8_block<NT8>(w, cq.ks * 4 + b, a8, acc);
			}
		} else {
#pragma unroll
		for (int b = 0; b < 4; b++) {
			const int kb = cq.ks * 4 + b;
			if (b < 3)
				load_x(kb + 1, xc[(b + 1) & 1]);
			else if (more)
				load_x(kb + 1, xc[0]);
			const uint4 (&x)[NT8][4] = xc[b & 1];
			w0[b] = *reinterpret_cast<const uint4 *>(sw0 + b * 64);
			w1[b] = *reinterpret_cast<const uint4 *>(sw1 + b * 64);
			const uint32_t e0 = b == 0 ? s0.x : b == 1 ? s0.y : b == 2 ? s0.z : s0.w;
			const uint32_t e1 = b == 0 ? s1.x : b == 1 ? s1.y : b == 2 ? s1.z : s1.w;
			const uint32_t sc0 = k3_e8m0_to_bf16x2((e0 >> (8 * tq)) & 0xffu);
			const uint32_t sc1 = k3_e8m0_to_bf16x2((e1 >> (8 * tq)) & 0xffu);
#pragma unroll
			for (int q = 0; q < 4; q++) {
				const uint32_t u0 = q == 0 ? w0[b].x : q == 1 ? w0[b].y : q == 2 ? w0[b].z : w0[b].w;
				const uint32_t u1 = q == 0 ? w1[b].x : q == 1 ? w1[b].y : q == 2 ? w1[b].z : w1[b].w;
				uint32_t A0[4], A1[4];
				k3_e2m1x8_to_bf16x8(u0, A0);
				k3_e2m1x8_to_bf16x8(u1, A1);
#pragma unroll
				for (int i = 0; i < 4; i++) {
					A0[i] = k3_bf16x2_mul(A0[i], sc0);
					A1[i] = k3_bf16x2_mul(A1[i], sc1);
				}
				const uint32_t a_even[4] = { A0[0], A1[0], A0[1], A1[1] };
				const uint32_t a_odd[4] = { A0[2], A1[2], A0[3], A1[3] };
#pragma unroll
				for (int nt = 0; nt < NT8; nt++) {
					k3_mma_bf16(acc[nt], a_even, x[nt][q].x, x[nt][q].y);
					k3_mma_bf16(acc[nt], a_odd, x[nt][q].z, x[nt][q].w);
				}
			}
		}
		}
		__syncwarp(); /* every lane's reads of the slot done: refill it (the stage `depth` ahead) */
		if (pv) {
			issue(pq, (int)(produced % GB_STAGES));
			produced++;
			pv = gb_next<NT8>(p, strips, total, W, nks, pq);
		}
		consumed++;
		if (!more) /* the pass's last stage: its sums out */
			gemv_store<NT8, EPI, false>(p, pr, re, cq.strip * 16, gq, tq, acc);
		cv = gb_next<NT8>(p, strips, total, W, nks, cq);
	}
#endif
}

/* MXFP8 of BF16 rows: a thread per 8 elements, 4 threads per scale group (the group's amax by
 * two shuffles). The largest magnitude's BF16 exponent field f gives the scale exponent
 * max(f - 127 - 8, -127) (a subnormal or zero amax: -127, as the host's frexp). */
__global__ void __launch_bounds__(THREADS) quant8_kernel(const uint16_t *x, int64_t chunks, uint8_t *q,
							 uint8_t *scales)
{
	const int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x;
	const bool ok = i < chunks; /* chunks is a multiple of 4: a group's 4 threads agree */
	const uint4 v = ok ? ld_nc16(x + i * 8) : make_uint4(0u, 0u, 0u, 0u);
	const uint32_t w[4] = { v.x, v.y, v.z, v.w };
	uint32_t m = 0;
#pragma unroll
	for (int c = 0; c < 4; c++)
		m = max(m, max(w[c] & 0x7fffu, (w[c] >> 16) & 0x7fffu));
	m = max(m, __shfl_xor_sync(0xffffffffu, m, 1));
	m = max(m, __shfl_xor_sync(0xffffffffu, m, 2));
	const int se = max((int)(m >> 7) - 135, -127);
	const float mul = __uint_as_float((uint32_t)(127 - se) << 23); /* 2^-se, exact */
	uint32_t o[2];
#pragma unroll
	for (int c = 0; c < 2; c++)
		o[c] = k3_f32x2_to_e4m3x2(k3_lo_bf16(w[2 * c]) * mul, k3_hi_bf16(w[2 * c]) * mul) |
		       k3_f32x2_to_e4m3x2(k3_lo_bf16(w[2 * c + 1]) * mul, k3_hi_bf16(w[2 * c + 1]) * mul) << 16;
	if (!ok)
		return;
	*reinterpret_cast<uint2 *>(q + i * 8) = make_uint2(o[0], o[1]);
	if ((i & 3) == 0)
		scales[i >> 2] = (uint8_t)(se + 127);
}

/* The FP8 layout: a thread per 16-byte output chunk (row, 128-block, t). */
__global__ void __launch_bounds__(THREADS) repack8_kernel(const uint8_t *packed, int64_t chunks, uint8_t *out)
{
	const int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x;
	if (i >= chunks)
		return;
	const int64_t blk = i >> 2; /* (row, 128-block): 64 bytes in both layouts */
	const int t = (int)(i & 3);
	const uint8_t *src = packed + blk * 64 + 4 * t;
	uint32_t o[4];
#pragma unroll
	for (int j = 0; j < 4; j++)
		o[j] = k3_fp8r_word(__ldg(reinterpret_cast<const unsigned int *>(src + 16 * j)));
	*reinterpret_cast<uint4 *>(out + i * 16) = make_uint4(o[0], o[1], o[2], o[3]);
}

/* Sums the split-k partials of the dense gemv or tiled kernel and applies the epilogue. */
template <int EPI>
__global__ void __launch_bounds__(THREADS) finish_kernel(const params p)
{
	const int width = EPI == K3_EPI_GLU ? p.N / 2 : p.N;
	const int64_t total = p.rows * width;
	const size_t zs = (size_t)p.rows * p.N;
	for (int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x; i < total; i += (int64_t)gridDim.x * THREADS) {
		const int64_t r = i / width;
		const int c = (int)(i % width);
		if (EPI == K3_EPI_GLU) {
			const int gc = (c / MOE_GLU_BLOCK) * 2 * MOE_GLU_BLOCK + c % MOE_GLU_BLOCK;
			float gs = 0.0f, us = 0.0f;
			for (int z = 0; z < p.ksplit; z++) {
				gs += p.part[z * zs + r * p.N + gc];
				us += p.part[z * zs + r * p.N + gc + MOE_GLU_BLOCK];
			}
			p.out[out_row(p, r) * width + c] = k3_f2bf(situ_glu(gs, us, p.beta_gate, p.beta_up));
		} else {
			float s = 0.0f;
			for (int z = 0; z < p.ksplit; z++)
				s += p.part[z * zs + r * p.N + c];
			epi_store1<EPI>(p, out_row(p, r), r, c, s);
		}
	}
}

/* ---- host ----------------------------------------------------------------- */

int device_sms()
{
	static int cached = 0;
	if (!cached) {
		int dev = 0, n = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1)
			return -EIO;
		cached = n;
	}
	return cached;
}

bool al16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

/* Shapes valid? */
bool shapes_ok(const struct k3_gemm_args *a)
{
	return a && a->rows >= 0 && a->rows <= ((int64_t)1 << 31) && a->N >= 16 && a->N % 16 == 0 &&
	       a->K >= GV_K && a->K % GV_K == 0 && a->n_groups >= 0 && a->n_groups <= MOE_MAX_EXPERTS &&
	       (a->w_dtype == K3_W_BF16 || a->w_dtype == K3_W_MXFP4) &&
	       (a->epi != K3_EPI_SPLIT || (a->n_split >= 0 && a->n_split <= a->N && a->n_split % BN == 0));
}

bool al4(const void *p)
{
	return ((uintptr_t)p & 3u) == 0;
}

/* Shapes and pointers valid? */
bool args_ok(const struct k3_gemm_args *a)
{
	if (!shapes_ok(a))
		return false;
	if (a->a_dtype == K3_A_MXFP8) {
		if (!a->a_q || !al16(a->a_q) || !a->a_scales || !al4(a->a_scales) || a->w_dtype != K3_W_MXFP4 ||
		    !al4(a->w_scales))
			return false;
	} else if (a->a_dtype == K3_A_E4M3_ROW) {
		if (!a->a_q || !al16(a->a_q) || !a->a_row_scales || !al4(a->a_row_scales) || a->w_dtype != K3_W_MXFP4 ||
		    !a->w_wgf8 || !al16(a->w_wgf8) || !a->w_floors || a->n_groups <= 0 ||
		    (a->epi != K3_EPI_GLU && a->epi != K3_EPI_SCALE))
			return false;
	} else if (a->a_dtype != K3_A_BF16 || !a->a || !al16(a->a)) {
		return false;
	}
	if (a->n_groups > 0 && !a->off)
		return false;
	if (a->w_dtype == K3_W_BF16) {
		if (!a->w || !al16(a->w))
			return false;
	} else if (a->w_dtype == K3_W_MXFP4) {
		if (!a->w_packed || !a->w_scales || !al16(a->w_packed))
			return false;
	} else {
		return false;
	}
	switch (a->epi) {
	case K3_EPI_BF16:
		return a->out && al16(a->out);
	case K3_EPI_SPLIT:
		return a->n_split >= 0 && a->n_split <= a->N && a->n_split % BN == 0 && a->out_f32 &&
		       al16(a->out_f32) && (a->n_split == a->N || (a->out && al16(a->out)));
	case K3_EPI_GLU:
		if (a->out_e4m3) /* the FP8 kernel's E4M3 outputs instead of out */
			return a->a_dtype == K3_A_E4M3_ROW && k3_gemm_glu_e4m3_mul(a->beta_gate, a->beta_up) > 0.0f;
		return a->out && al16(a->out) && a->beta_gate > 0.0f && a->beta_up > 0.0f;
	case K3_EPI_SCALE:
		return a->out && al16(a->out) && a->row_scale;
	case K3_EPI_ADD:
	case K3_EPI_GATE:
		return a->out && al16(a->out) && a->addend && al16(a->addend);
	}
	return false;
}

/* K3_GEMM_TILED=mma in the environment: the mma.sync kernel for every tiled call (read once). */
bool tiled_mma_forced()
{
	static int forced = -1;
	if (forced < 0) {
		const char *e = getenv("K3_GEMM_TILED");
		forced = e && !strcmp(e, "mma");
	}
	return forced == 1;
}

/* Does the wgmma kernel's grid fill the GPU? Its tiles are 256 weight rows by up to 128 rows of
 * A; a dense GEMM of few rows has fewer tiles than SMs (m = 64, n = 4480: 18), where the mma.sync
 * kernel's 64 x 128 tiles spread the weights over more SMs. Grouped: always (prefill sizes). */
bool wg_fills(const struct k3_gemm_args *a)
{
	if (a->n_groups > 0)
		return true;
	const int sms = device_sms();
	return sms > 0 && (a->rows + 127) / 128 * ((a->N + 255) / 256) >= sms;
}

/* The concrete path: K3_GEMM_GEMV, K3_GEMM_TILED_MMA or K3_GEMM_TILED_WGMMA, or -EINVAL. */
/* Does the code this build runs on the current device have the FP8 MMA and the E4M3 convert
 * (sm_89+: k3_mma_e4m3_zero() and k3_f32x2_to_e4m3x2() are NaN stubs below)? Read once. */
bool fp8_mma_available()
{
	static int avail = -1;
	if (avail < 0) {
		cudaFuncAttributes fa;
		avail = cudaFuncGetAttributes(&fa, quant8_kernel) == cudaSuccess && fa.binaryVersion >= 89;
	}
	return avail == 1;
}

/* Dense GEMMs of up to 8 rows take the gemv; of 9-16 rows the gemv too unless N's 128-column
 * tiles fill 70 % of the SMs, where the tiled kernel (its 64-row tile a quarter used) streams the
 * weights faster than the 16-token gemv. H200, 2026-12-01t bench, the gemv at m = 16 against the
 * tiled kernel at m = 64, same weights: n = 12288 k = 7168 77.4 vs 66.6 us, n = 36864 k = 7168
 * 217 vs 172, n = 55296 k = 1536 67 vs 51 (96-432 tiles); narrower the other way: n = 7168
 * k = 12288 74 vs 105, n = 4480 k = 7168 35 vs 63, n = 1536 17 vs 63 (12-56 tiles). */
bool dense_gemv(const struct k3_gemm_args *a)
{
	/* K3_GEMM_DENSE_GEMV=0: 1-8 rows under the 9-16 rows' rule too (read per call: benches
	 * switch it; measurements of the gemv against the tiled kernel at one token). */
	const char *e = getenv("K3_GEMM_DENSE_GEMV");
	if (a->rows <= 8 && !(e && !strcmp(e, "0")))
		return true;
	if (a->rows > 16)
		return false;
	const int sms = device_sms();
	return sms <= 0 || (int64_t)a->N * 10 < (int64_t)128 * 7 * sms;
}

/* The gemv for E4M3 activations (K3_A_E4M3_ROW): f8act_kernel, then gemv_f16_kernel on the
 * FP16-pair weights (k3_gemm_args.w_f16), the sums times the rows' scales; grouped, MXFP4, K a
 * multiple of 512 up to 8192, sm_89+ (the E4M3 convert). Shapes only: without w_f16 (or with
 * scales not 16-byte aligned) a K3_GEMM_AUTO call runs the FP8 wgmma kernel instead (k3_gemm()). */
bool gemv_e4m3_shapes(const struct k3_gemm_args *a)
{
	return a->a_dtype == K3_A_E4M3_ROW && a->n_groups > 0 && a->w_dtype == K3_W_MXFP4 && a->K % (GV_K * 4) == 0 &&
	       a->K <= 8 * THREADS * GF_ACT_CH && a->rows <= 0x7fffffff && fp8_mma_available();
}

/* K3_GEMM_AUTO with E4M3 activations takes that gemv only where K3_GEMM_E4M3_GEMV=1 (read per
 * call), then at up to 1.5 rows a group on average (over all n_groups); by default the FP8 wgmma
 * kernel at every size. Measured on an H100 (2026-12-06, round 06c; us, gemv / wgmma / the
 * BF16-activation default gemv):
 * - k3-bench --only moe_decode back to back over 8 routings (call 3; 896 experts, top 16): w13
 *   B = 1 70.1 / 81.4 / 69.1, B = 16 850 / 966 / 858, B = 64 2368 / 2638 / 2376, B = 256 4597 /
 *   3803 / 4691; w2 44.6 / 49.2 / 42.8, 432 / 473 / 438, 1413 / 1257 / 1324, 2375 / 1834 / 2390;
 *   single launches after a cold L2: w13 B = 1 97.7 / 82.6 / 99.6, B = 16 1124-1145 / 1013-1037 /
 *   1133.
 * - the K3 slice's eager decode steps (call 5 against call 2, C = 8K; each op's kernels summed
 *   over its launches, the mean of 12): w13 B = 1 100.6 / 88.7 / 98.7, B = 16 1059 / 962 / 1031,
 *   B = 64 2612 / 2615 / 2619; w2 50.7 / 47.7 / 73.3, 500 / 473 / 481, 1432 / 1264 / 1353; the
 *   slice's decode step 1-5 % slower with the gemv as the default (B = 16 9.25-9.27 against
 *   8.82 ms).
 * So the gemv wins only where a launch follows its own kind (back to back: its first loads overlap
 * the previous launch's tail), not inside a step; the wgmma kernel is the default. */
bool gemv_e4m3_on()
{
	const char *e = getenv("K3_GEMM_E4M3_GEMV");
	return e && !strcmp(e, "1");
}

/* Grouped BF16-activation calls under K3_GEMM_AUTO: the gemv at up to 16 rows a group on average,
 * except where the wgmma tile layout is given (w_wg), the wgmma kernel runs here and there are
 * more than a quarter of a row a group (GROUPED_GEMV_TILED_DIV): then the tiled wgmma path.
 * K3_GEMM_GROUPED_GEMV (read per call): 0 the tiled path at every size, 1 the gemv up to 16 rows a
 * group whatever the layout (the rule before 2026-12-06). Measured on an H100 (round 06c,
 * bench/results/k3-kernels-h100-2026-12-06c/): the K3 slice's BF16 decode steps with the tiled
 * path (K3_GEMM_GROUPED_GEMV=0) against the gemv, eager: B = 256 (4.6 rows a group) 34.6 against
 * 40.6-40.8 ms (-15 %), B = 64 (1.14) 20.3 against 20.3-21.1, B = 16 (0.29) 8.95-8.97 against
 * 9.04-9.07 (-1 %), B = 1 (0.018) 2.95-2.98 against 2.91-2.93 (+1-2 %: the gemv there is a
 * programmatic dependent launch); k3-bench single launches with the layout, B = 256: w13 3.85
 * against 4.69 ms, w2 2.03 against 2.40. */
constexpr int64_t GROUPED_GEMV_TILED_DIV = 4;
int grouped_gemv_mode()
{
	const char *e = getenv("K3_GEMM_GROUPED_GEMV");
	return e && !strcmp(e, "0") ? 0 : e && !strcmp(e, "1") ? 1 : 2;
}

int resolve_path(const struct k3_gemm_args *a)
{
	if (a->a_dtype == K3_A_MXFP8) /* the gemv path only, sm_89+ */
		return a->w_dtype == K3_W_MXFP4 && (a->path == K3_GEMM_AUTO || a->path == K3_GEMM_GEMV) &&
				       fp8_mma_available()
			       ? K3_GEMM_GEMV
			       : -EINVAL;
	if (a->a_dtype == K3_A_E4M3_ROW) { /* the FP8 wgmma kernel, or the gemv (gemv_e4m3_shapes()) */
		const bool wg = a->w_dtype == K3_W_MXFP4 && a->n_groups > 0 && !tiled_mma_forced() &&
				k3gemm::wg_supported(a);
		const bool gv = gemv_e4m3_shapes(a);
		switch (a->path) {
		case K3_GEMM_AUTO:
			if (gv && gemv_e4m3_on() && 2 * a->rows <= (int64_t)3 * a->n_groups) /* GEMV_E4M3_ROWS */
				return K3_GEMM_GEMV;
			return wg ? K3_GEMM_TILED_WGMMA : -EINVAL;
		case K3_GEMM_GEMV:
			return gv ? K3_GEMM_GEMV : -EINVAL;
		case K3_GEMM_TILED:
		case K3_GEMM_TILED_WGMMA:
			return wg ? K3_GEMM_TILED_WGMMA : -EINVAL;
		default:
			return -EINVAL;
		}
	}
	if (a->a_dtype != K3_A_BF16)
		return -EINVAL;
	int path = a->path;
	if (path == K3_GEMM_AUTO) {
		bool gemv = a->n_groups == 0 ? dense_gemv(a) : a->rows <= (int64_t)16 * a->n_groups;
		if (gemv && a->n_groups > 0) {
			const int mode = grouped_gemv_mode();
			if (mode == 0)
				gemv = false;
			else if (mode == 2 && a->w_wg && a->w_dtype == K3_W_MXFP4 &&
				 a->rows * GROUPED_GEMV_TILED_DIV > (int64_t)a->n_groups && !tiled_mma_forced() &&
				 k3gemm::wg_supported(a))
				gemv = false;
		}
		path = gemv ? K3_GEMM_GEMV : K3_GEMM_TILED;
	}
	switch (path) {
	case K3_GEMM_GEMV:
	case K3_GEMM_TILED_MMA:
		return path;
	case K3_GEMM_TILED:
		return !tiled_mma_forced() && k3gemm::wg_supported(a) && wg_fills(a) ? K3_GEMM_TILED_WGMMA
										      : K3_GEMM_TILED_MMA;
	case K3_GEMM_TILED_WGMMA:
		return k3gemm::wg_supported(a) ? K3_GEMM_TILED_WGMMA : -EINVAL;
	}
	return -EINVAL;
}

/* The BF16-activation MXFP4 gemv kernel: gemv_lean_kernel by default (128-deep blocks, 4-byte
 * aligned scales); K3_GEMV_FP4=regs in the environment: gemv_kernel, the register-pipelined
 * kernel it replaced (measurements; read per call: tests switch it). */
bool gemv_lean(const struct k3_gemm_args *a, int block_k)
{
	if (a->w_dtype != K3_W_MXFP4 || a->a_dtype != K3_A_BF16 || block_k != GV_K || !al4(a->w_scales))
		return false;
	const char *e = getenv("K3_GEMV_FP4");
	return !e || strcmp(e, "regs");
}

/* gemv_f16_kernel's shapes: grouped, MXFP4 weights, BF16 activations, K a multiple of 512, the
 * gemv path, and K3_GEMV_FP4 unset or "f16" (K3_GEMV_FP4=lean: gemv_lean_kernel, regs and bulk
 * their kernels; read per call: tests and benches switch it). Pointers not looked at. */
bool gemv_f16_shapes(const struct k3_gemm_args *a)
{
	if (a->n_groups <= 0 || a->w_dtype != K3_W_MXFP4 || a->a_dtype != K3_A_BF16 || a->K % (GV_K * 4) ||
	    a->K > 8 * THREADS * GF_ACT_CH || a->rows > 0x7fffffff)
		return false;
	const char *e = getenv("K3_GEMV_FP4");
	return !e || !strcmp(e, "f16");
}

/* gemv_f16p_kernel (persistent, one wave, the work cut evenly over the CTAs) instead of
 * gemv_f16_kernel (fused or after the first pass) at 8-token passes without k slices: opt-in,
 * K3_GEMV_F16_PERSIST=1 (read per call: tests and benches switch it). Measured slower at every
 * batch (H200, 2026-12-02i call 2, bench/results/k3-kernels-h200-2026-12-02i; % of copy on weight
 * bytes, median of single launches, three runs, persistent / default, w13; w2): B = 1 52.5-52.8 /
 * 61.4-61.6; 41.3-41.7 / 47.2-47.4, B = 16 69.3-74.1 / 82.5-82.8; 68.2-70.1 / 71.2-71.8, B = 64
 * 73.0-74.2 / 80.2-81.1; 69.3-70.6 / 79.1-79.6, B = 256 47.9-49.4 / 56.1-61.3; 44.9-46.1 /
 * 66.5-66.8. */
bool gemv_f16p_on(const struct k3_gemm_args *a)
{
	(void)a;
	const char *e = getenv("K3_GEMV_F16_PERSIST");
	return e && !strcmp(e, "1");
}

/* Its workspace: FP16 activations [rows][K] and the rows' factors [rows] (FP32); with the
 * persistent kernel besides, 16-byte aligned, its split units' FP32 sums [2][rows][N] and
 * counters [rows][N / 16]. */
size_t gemv_f16_act_bytes(const struct k3_gemm_args *a)
{
	return ((size_t)a->rows * (size_t)a->K * 2 + (size_t)a->rows * 4 + 15) & ~(size_t)15;
}

size_t gemv_f16_ws_bytes(const struct k3_gemm_args *a)
{
	size_t b = gemv_f16_act_bytes(a);
	if (gemv_f16p_on(a))
		b += (size_t)a->rows * (size_t)a->N * 8 + (size_t)a->rows * (size_t)(a->N / 16) * 4;
	return b;
}

/* gemv_f16p_kernel's CTAs: two an SM (one wave; its register bound); K3_GEMV_F16_PCTAS=n forces n
 * (tests: fewer warps, longer ranges, units split at other places). */
int gemv_f16p_ctas(int sms)
{
	const char *e = getenv("K3_GEMV_F16_PCTAS");
	const int v = e ? atoi(e) : 0;
	return v > 0 && v <= 65535 ? v : 2 * sms;
}

/* gemv_f16_kernel runs: its shapes, the layout given, aligned scales. */
bool gemv_f16(const struct k3_gemm_args *a)
{
	return gemv_f16_shapes(a) && a->w_f16 && al16(a->w_f16) && al16(a->w_scales);
}

/* gemv_f16_kernel's tiles a pass: 1 (8 tokens; a group of more rows takes several passes);
 * K3_GEMV_F16_NT=2: 16-token passes whose second tile runs only where the group has more than 8
 * rows left (measurements). H200, 2026-12-01zb call 1, B = 256 (4.6 rows a group on average, the
 * largest about 12), % of copy on weight bytes: w13 39.6 with 2 (the default then), 63.9 with 1;
 * w2 40.1 / 54.7. Read per call. */
int gemv_f16_nt(const struct k3_gemm_args *a)
{
	(void)a;
	const char *e = getenv("K3_GEMV_F16_NT");
	return e && !strcmp(e, "2") ? 2 : 1;
}

/* gemv_f16_kernel's k slices a CTA: 1; K3_GEMV_KSPLIT=2|4 forces (measurements; read per call).
 * 2026-12-01zb call 1, B = 1 (% of copy, 1 / 2 / 4 slices): w13 55.4 / 53.2 / 50.0, w2 39.1 /
 * 37.1 / 33.7. */
int gemv_f16_kslices(const struct k3_gemm_args *a)
{
	(void)a;
	const char *e = getenv("K3_GEMV_KSPLIT");
	const int v = e ? atoi(e) : 1;
	return v == 2 || v == 4 ? v : 1;
}

/* gemv_f16_kernel fused (FUSE: no first pass, no workspace read; each CTA converts its pass's
 * activation rows into shared memory): its shared memory in bytes, or 0 for the two-kernel path
 * (f16act_kernel, then the gemv by programmatic dependent launch; the default before 2026-12-02b).
 * Fused where groups hold at most GF_FUSE_ROWS rows on average and a pass's rows (min(8, rows))
 * fit two CTAs an SM (<= GF_FUSED_MAX bytes each); K3_GEMV_F16_FUSE=0: never, =1: wherever they
 * fit (read per call: tests and benches switch it). H200, 2026-12-02b call 1 (% of copy on weight
 * bytes, median of single launches, fused / two-kernel in one process, w13; w2): B = 1 61.2 /
 * 59.6; 47.2 / 46.3, B = 16 83.2 / 73.1; 79.2 / 78.6, B = 64 78.9 / 75.7; 80.0 / 77.7, B = 256
 * (4.6 rows a group) 61.6 / 66.0; 67.4 / 61.3 (steady 63.6 / 65.1; 57.9 / 61.2): the two-kernel
 * path stays above 2 rows a group (each CTA converts its group's rows, up to 8 a pass, itself). */
constexpr size_t GF_FUSED_MAX = 100 * 1024;
constexpr size_t GF_SM_SMEM = 228 * 1024; /* an SM's shared memory (H100 / H200) */
constexpr int GF_FUSE_ROWS = 2;
size_t gemv_f16_fused_bytes(const struct k3_gemm_args *a)
{
	const char *e = getenv("K3_GEMV_F16_FUSE");
	if (e && !strcmp(e, "0"))
		return 0;
	if (!(e && !strcmp(e, "1")) && a->rows > (int64_t)GF_FUSE_ROWS * a->n_groups)
		return 0;
	const size_t b = gemv_f16_fused_smem((int)(a->rows < 8 ? a->rows : 8), a->K);
	return b <= GF_FUSED_MAX ? b : 0;
}

/* Grouped gemv grid rows: min(groups, rows) (the touched groups are at most the rows; the
 * CTAs past *n_touched exit at once: at B = 1 with 896 experts, 880 of every 896 did);
 * K3_GEMV_GRID=full in the environment: one a group, as before (measurements). */
unsigned gemv_grid_y(const struct k3_gemm_args *a)
{
	if (a->n_groups <= 0)
		return 1;
	const char *e = getenv("K3_GEMV_GRID");
	if (e && !strcmp(e, "full"))
		return (unsigned)a->n_groups;
	return (unsigned)(a->rows < (int64_t)a->n_groups ? a->rows : (int64_t)a->n_groups);
}

/* gemv_lean_kernel's tokens a pass for grouped calls: 16 when groups hold more than this many
 * rows on average (K3_GEMV_WIDE, default 8, as the MXFP8 gemv's K3_GEMV8_WIDE; gemv_kernel
 * switches above 4). Read per call (benches switch it). */
int gemv_wide()
{
	const char *e = getenv("K3_GEMV_WIDE");
	const int v = e ? atoi(e) : 8;
	return v >= 1 && v <= 16 ? v : 8;
}

/* gemv_lean_kernel's k slices a CTA (grouped calls, 8 tokens a pass, no split over CTAs): 2 where
 * the grid has fewer than 4 waves of 2 CTAs an SM (at B = 1 the 16 touched experts make 768
 * CTAs of w13 and 448 of w2: 2.9 and 1.7 waves on 132 SMs) and each slice keeps at least 4
 * blocks, else 1; K3_GEMV_KSPLIT=1, 2 or 4 forces it (measurements; read per call). Measured
 * (2026-12-01x call 2, B = 1, % of copy on weight bytes, 1 / 2 / 4 slices): w13 51.5 / 51.6 /
 * 50.4, w2 38.7 / 39.5 / 37.2: the wave tail is not what holds B = 1 back. */
int gemv_kslices(const struct k3_gemm_args *a, dim3 grid, int sms)
{
	if (a->n_groups <= 0 || grid.z > 1)
		return 1;
	const char *e = getenv("K3_GEMV_KSPLIT");
	if (e) {
		const int v = atoi(e);
		return v == 2 || v == 4 ? v : 1;
	}
	const int64_t ctas = (int64_t)grid.x * grid.y, want = (int64_t)8 * sms;
	const int nkb = a->K / GV_K;
	int k = 1;
	if (ctas < want && nkb >= 2 * 4)
		k = 2;
	return k;
}

/* k per gemv block: 128 (G = 1). K3_GEMV_FP4_BLOCK=512 in the environment runs MXFP4 with K a
 * multiple of 512 at 512-deep blocks (G = GV_FP4_G), for measurements: on an H200 (2026-12-01d,
 * call1) they ran as fast as 128-deep ones at 8 tokens a pass (w13 B = 16: 56.3 vs 54.7 % of
 * copy; w2 B = 1: 27.7 vs 30.6 %) and slower at 16 (B = 256: 43 vs 49 %), so 128 is the default. */
int gemv_block_k(const struct k3_gemm_args *a)
{
	const char *e = getenv("K3_GEMV_FP4_BLOCK"); /* read per call: tests switch it */
	const bool deep = e && !strcmp(e, "512");
	return a->w_dtype == K3_W_MXFP4 && a->a_dtype == K3_A_BF16 && deep && a->K % (GV_K * GV_FP4_G) == 0 ? GV_K * GV_FP4_G : GV_K;
}

/* The MXFP8-activation gemv8_kernel's weight stream (K3_GEMV8_PIPE=bulk: gemv_bulk_kernel
 * instead, where it runs): cp.async into GV8_STAGES shared-memory slots a lane (smem, the
 * default) or two register sets (K3_GEMV8_PIPE=regs); read per call (tests switch it). */
constexpr int GV8_STAGES = 6;
bool gemv8_smem()
{
	const char *e = getenv("K3_GEMV8_PIPE");
	return !(e && !strcmp(e, "regs"));
}

/* Grouped MXFP8-activation gemv: 16 tokens a pass when groups hold more than this many rows on
 * average (K3_GEMV8_WIDE, default 8; the BF16-activation kernel switches above 4): a pass's
 * per-token work (scales, 4 FP32 products per MMA) is the larger share in this kernel, and at
 * 4-8 rows a 16-token pass computes mostly empty tokens. */
int gemv8_wide()
{
	const char *e = getenv("K3_GEMV8_WIDE");
	const int v = e ? atoi(e) : 8;
	return v > 0 ? v : 8;
}

/* The grouped MXFP4 gemv (BF16 or MXFP8 activations) through gemv_bulk_kernel (the bulk-copy
 * ring), opt-in: K3_GEMV_FP4=bulk (BF16 activations) or K3_GEMV8_PIPE=bulk (MXFP8) in the
 * environment, where this build's code for the device has the bulk copy engine (sm_90+), K is a
 * multiple of 512 and the weight and scale arrays are 16-byte aligned; read per call (tests and
 * k3-bench switch them). Not the default: its one measured form (one CTA of 8 warps an SM, 4
 * slots a warp) ran 31-36 % of copy where gemv_kernel ran 33-59 % (2026-12-01s call1); this
 * two-CTA form did not run on a device (the session's device time was spent). K3_GEMV_FP4_CTAS=n
 * caps the persistent grid at n CTAs (tests: many units a warp). */
bool gemv_bulk_available()
{
	static int avail = -1;
	if (avail < 0) {
		cudaFuncAttributes fa;
		avail = cudaFuncGetAttributes(&fa, gemv_bulk_kernel<1, K3_EPI_BF16, false>) == cudaSuccess && fa.binaryVersion >= 90;
	}
	return avail == 1;
}

bool gemv_bulk(const struct k3_gemm_args *a)
{
	if (a->a_dtype == K3_A_MXFP8) {
		const char *e = getenv("K3_GEMV8_PIPE");
		if (!e || strcmp(e, "bulk"))
			return false;
	} else {
		const char *e = getenv("K3_GEMV_FP4");
		if (!e || strcmp(e, "bulk") || gemv_block_k(a) != GV_K)
			return false;
	}
	/* Warp units (touched experts x 16-row strips) and the grid's warps count in int. */
	return a->w_dtype == K3_W_MXFP4 && a->n_groups > 0 && a->K % GB_KS == 0 && al16(a->w_packed) &&
	       al16(a->w_scales) && (int64_t)a->n_groups * (a->N / 16) < ((int64_t)1 << 30) && gemv_bulk_available();
}

/* Stages a warp keeps in flight: GB_STAGES; K3_GEMV_FP4_DEPTH=1..GB_STAGES fewer (measurements:
 * throughput against bytes in flight). */
int gemv_bulk_depth()
{
	const char *e = getenv("K3_GEMV_FP4_DEPTH");
	const int d = e ? atoi(e) : GB_STAGES;
	return d >= 1 && d <= GB_STAGES ? d : GB_STAGES;
}

int gemv_bulk_ctas()
{
	const char *e = getenv("K3_GEMV_FP4_CTAS");
	const int cap = e ? atoi(e) : 0;
	return cap > 0 ? cap : 1 << 30;
}

/* ctas: the persistent grid's cap (gemv_bulk_ctas()); the grid is the SMs times the CTAs an SM
 * holds, at most that. */
template <int NT8, int EPI, bool A8>
int gemv_bulk_launch(const params &p, int ctas, cudaStream_t s)
{
	auto kern = gemv_bulk_kernel<NT8, EPI, A8>;
	static int per_sm = 0;
	if (!per_sm) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, GB_SMEM) != cudaSuccess ||
		    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, THREADS, GB_SMEM) != cudaSuccess ||
		    per_sm < 1) {
			per_sm = 0;
			return -EIO;
		}
	}
	const int sms = device_sms();
	if (sms < 0)
		return sms;
	const int grid = ctas < sms * per_sm ? ctas : sms * per_sm;
	kern<<<grid, THREADS, GB_SMEM, s>>>(p, gemv_bulk_depth());
	return k3_launch_status();
}

template <int NT8, bool A8>
int gemv_bulk_epi(const params &p, enum k3_epilogue epi, int ctas, cudaStream_t s)
{
	switch (epi) {
	case K3_EPI_BF16:
		return gemv_bulk_launch<NT8, K3_EPI_BF16, A8>(p, ctas, s);
	case K3_EPI_SPLIT:
		return gemv_bulk_launch<NT8, K3_EPI_SPLIT, A8>(p, ctas, s);
	case K3_EPI_GLU:
		return gemv_bulk_launch<NT8, K3_EPI_GLU, A8>(p, ctas, s);
	case K3_EPI_SCALE:
		return gemv_bulk_launch<NT8, K3_EPI_SCALE, A8>(p, ctas, s);
	case K3_EPI_ADD:
		return gemv_bulk_launch<NT8, K3_EPI_ADD, A8>(p, ctas, s);
	case K3_EPI_GATE:
		return gemv_bulk_launch<NT8, K3_EPI_GATE, A8>(p, ctas, s);
	}
	return -EINVAL;
}

/* CTAs of the dense BF16 gemv (gemv_kernel, the split-k instance) an SM holds at once, for 8
 * (nt8 1) or 16 (nt8 2) tokens a pass: the launch bounds promise 2 and 1; the occupancy query
 * says what this build gets. */
int gemv_dense_per_sm(int nt8)
{
	static int per[3];
	if (!per[nt8]) {
		int n = 0;
		const cudaError_t r =
			nt8 == 2 ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
					   &n, gemv_kernel<false, 1, 2, K3_EPI_BF16, true>, THREADS, 0)
				 : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
					   &n, gemv_kernel<false, 1, 1, K3_EPI_BF16, true>, THREADS, 0);
		per[nt8] = r == cudaSuccess && n >= 1 ? n : nt8 == 2 ? 1 : 2;
	}
	return per[nt8];
}

/* Dense gemv split over k (in blocks of gemv_block_k()), at least GV_MIN_KB_PER_SPLIT blocks a
 * slice. BF16 weights: the slice count with the least estimated time, where a wave of CTAs (the
 * SMs times the CTAs an SM holds) streams its weights at the full rate and a last wave only
 * partly filled takes as long as a full one: waves x blocks a slice, plus, for a split, the FP32
 * partials written and read and the finishing kernel (~2 us, as 8 MB of traffic). The rule it
 * replaced (K3_GEMV_DENSE_SPLIT=old; MXFP4 and MXFP8 dense weights keep it) asked for about two
 * CTAs an SM, which put every K3 projection at 1.06-1.09 waves of 8 tokens a pass (and 2.1 of 16
 * tokens, one CTA an SM): H200, 2026-12-02z call, m = 1 at 47-66 % of copy, m = 16 at 39-51 %. */
void gemv_split(const struct k3_gemm_args *a, int sms, int *ksplit, int *kb_per)
{
	const int nkb = a->K / gemv_block_k(a), strips = (a->N + GV_ROWS - 1) / GV_ROWS;
	int ks = 1;
	if (a->n_groups == 0) {
		int most = a->K / GV_K / GV_MIN_KB_PER_SPLIT;
		most = most < 1 ? 1 : most > nkb ? nkb : most;
		const char *e = getenv("K3_GEMV_DENSE_SPLIT"); /* read per call: benches switch it */
		if (a->w_dtype != K3_W_BF16 || (e && !strcmp(e, "old"))) {
			ks = (2 * sms + strips - 1) / strips;
			ks = ks < 1 ? 1 : ks > most ? most : ks;
		} else {
			const int64_t slots = (int64_t)sms * gemv_dense_per_sm(a->rows > 8 ? 2 : 1);
			const double blk = (double)GV_ROWS * GV_K * 2, fin = 8e6; /* bytes */
			double best = 0;
			for (int k = 1; k <= most; k++) {
				const int per = (nkb + k - 1) / k, kk = (nkb + per - 1) / per;
				if (kk != k)
					continue; /* the same slices as a smaller count */
				const int64_t waves = ((int64_t)strips * k + slots - 1) / slots;
				double t = (double)waves * per * (double)slots * blk;
				if (k > 1)
					t += 2.0 * k * (double)a->rows * (double)a->N * 4 + fin;
				if (k == 1 || t < best) {
					best = t;
					ks = k;
				}
			}
		}
	}
	const int per = (nkb + ks - 1) / ks;
	*kb_per = per;
	*ksplit = (nkb + per - 1) / per;
}

/* Dense mma.sync GEMMs of 64-row tiles split over k when their tiles are few (decode batches of
 * 17-256 rows: m = 64, n = 96 .. 4480, k = 7168 ran one CTA's whole k loop, 63-65 us whatever n,
 * H200, 2026-12-02a call 1, the k3-kernels preset's gemm points): the slice count with the least
 * estimated time, from what that bench measured: a 64-deep k block takes a CTA ~0.57 us alone on
 * its SM and ~0.92 us two to an SM (m = 64 vs 256 rows at n = 4480, 7168), and a split pays the
 * finishing kernel (~3 us) and its FP32 partials written and read (~3 TB/s). Slices of at least
 * TS_MIN_KB blocks, at most TS_MAX. K3_GEMM_TILED_SPLIT=off (or 1): never; =N: N slices where k
 * allows (tests). Returns the slice count (1: no split) and the blocks a slice in *kb_per. */
int tiled_split(const struct k3_gemm_args *a, int sms, int64_t tiles, int *kb_per)
{
	const int nkb = a->K / BK;
	*kb_per = nkb;
	if (a->n_groups > 0 || sms <= 0 || tiles <= 0)
		return 1;
	const char *e = getenv("K3_GEMM_TILED_SPLIT");
	if (e && (!strcmp(e, "off") || atoi(e) == 1))
		return 1;
	/* Two tiles an SM already: a split measured no faster or slower (m = 256, n = 12288,
	 * k = 7168, 384 tiles: 175-179 us unsplit, 180-215 in two slices; 2026-12-02f). */
	if (tiles >= 2 * (int64_t)sms && !(e && atoi(e) > 1))
		return 1;
	int most = nkb / TS_MIN_KB;
	most = most > TS_MAX ? TS_MAX : most;
	int best = 1;
	if (e && atoi(e) > 1) {
		best = atoi(e) < nkb ? atoi(e) : nkb;
	} else {
		double best_us = 0;
		for (int ks = 1; ks <= most || ks == 1; ks++) {
			const int64_t load = (tiles * ks + sms - 1) / sms; /* CTAs an SM */
			const double kb_us = load == 1 ? 0.57 : 0.92 * (double)((load + 1) / 2);
			double us = kb_us * (double)((nkb + ks - 1) / ks);
			if (ks > 1)
				us += 3.0 + (double)ks * (double)a->rows * a->N * 8.0 / 3e6;
			if (ks == 1 || us < best_us)
				best = ks, best_us = us;
		}
	}
	const int per = (nkb + best - 1) / best;
	*kb_per = per;
	return (nkb + per - 1) / per;
}

/* The dense mma.sync path's tiles: 128 rows when they fill the SMs twice over, else 64. */
bool tiled_big(const struct k3_gemm_args *a, int sms)
{
	return (a->rows + 127) / 128 * ((a->N + BN - 1) / BN) >= 2 * sms;
}

/* Split-k slices of a dense mma.sync GEMM of 64-row tiles (1: none). */
int dense_tiled_split(const struct k3_gemm_args *a, int sms, int *kb_per)
{
	*kb_per = a->K / BK;
	if (a->n_groups > 0 || tiled_big(a, sms))
		return 1;
	return tiled_split(a, sms, (a->rows + 63) / 64 * ((a->N + BN - 1) / BN), kb_per);
}

template <int BM, bool FP4, int EPI>
int launch_tiled(const params &p, int grid, int num_n, int num_m, cudaStream_t stream, int ks = 1)
{
	using C = tcfg<BM, FP4>;
	auto kern = tiled_kernel<BM, FP4, EPI>;
	static bool configured = false;
	if (!configured) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM) != cudaSuccess)
			return k3_launch_status();
		configured = true;
	}
	kern<<<dim3((unsigned)grid, (unsigned)ks), THREADS, C::SMEM, stream>>>(p, num_n, num_m);
	return k3_launch_status();
}

template <int BM, bool FP4>
int tiled_epi(const params &p, enum k3_epilogue epi, int grid, int num_n, int num_m, cudaStream_t s)
{
	switch (epi) {
	case K3_EPI_BF16:
		return launch_tiled<BM, FP4, K3_EPI_BF16>(p, grid, num_n, num_m, s);
	case K3_EPI_SPLIT:
		return launch_tiled<BM, FP4, K3_EPI_SPLIT>(p, grid, num_n, num_m, s);
	case K3_EPI_GLU:
		return launch_tiled<BM, FP4, K3_EPI_GLU>(p, grid, num_n, num_m, s);
	case K3_EPI_SCALE:
		return launch_tiled<BM, FP4, K3_EPI_SCALE>(p, grid, num_n, num_m, s);
	case K3_EPI_ADD:
		return launch_tiled<BM, FP4, K3_EPI_ADD>(p, grid, num_n, num_m, s);
	case K3_EPI_GATE:
		return launch_tiled<BM, FP4, K3_EPI_GATE>(p, grid, num_n, num_m, s);
	}
	return -EINVAL;
}

template <int NT8, bool PARTIAL, int KS = 1>
int gemv_lean_epi(const params &p, enum k3_epilogue epi, dim3 grid, cudaStream_t s)
{
	switch (epi) {
	case K3_EPI_BF16:
		gemv_lean_kernel<NT8, K3_EPI_BF16, PARTIAL, KS><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_SPLIT:
		gemv_lean_kernel<NT8, K3_EPI_SPLIT, PARTIAL, KS><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_GLU:
		gemv_lean_kernel<NT8, K3_EPI_GLU, PARTIAL, KS><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_SCALE:
		gemv_lean_kernel<NT8, K3_EPI_SCALE, PARTIAL, KS><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_ADD:
		gemv_lean_kernel<NT8, K3_EPI_ADD, PARTIAL, KS><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_GATE:
		gemv_lean_kernel<NT8, K3_EPI_GATE, PARTIAL, KS><<<grid, THREADS, 0, s>>>(p);
		break;
	}
	return k3_launch_status();
}

/* The launch of a gemv kernel after f16act_kernel on stream s: grid x THREADS, by programmatic
 * dependent launch unless K3_GEMV_F16_PDL=0 (attr: the caller's storage for the attribute). */
cudaLaunchConfig_t gemv_f16_pdl_config(dim3 grid, cudaStream_t s, cudaLaunchAttribute (&attr)[1])
{
	const char *e = getenv("K3_GEMV_F16_PDL");
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = grid;
	cfg.blockDim = dim3(THREADS);
	cfg.dynamicSmemBytes = 0;
	cfg.stream = s;
	attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = attr;
	cfg.numAttrs = e && !strcmp(e, "0") ? 0 : 1;
	return cfg;
}

/* The weight loads with the L2 256-byte hint unless K3_GEMV_F16_L2PF=0 (read per call). */
bool gemv_f16_l2pf()
{
	const char *pf = getenv("K3_GEMV_F16_L2PF");
	return !(pf && !strcmp(pf, "0"));
}

/* The fused gemv's launch knobs (read per call: tests and benches switch them).
 * K3_GEMV_F16_WPC=8|4|2: warps a CTA (16 weight rows each; 8: 128 rows, the default; 4 and 2 give
 * smaller, more CTAs). K3_GEMV_F16_FPDL: programmatic dependent launch (gemv_f16_fpdl()).
 * H200, 2026-12-02k (bench/results/k3-kernels-h200-2026-12-02k, README there; % of the copy
 * ceiling on weight bytes, back to back over 8 rotated routings, w2 B = 1): 4 warps a CTA with 8
 * rows a pass (4 CTAs x 50 KB of shared memory an SM) 40.8-40.9 % and 2 warps with 4 rows 44.0-47.2
 * against 8 warps' 60.8-61.0 % in the same process; 4 warps with 1 row a pass (K3_GEMV_F16_PROW=1,
 * 6 KB a CTA) 68.4-68.7 against 65.1-65.2 (w13 B = 1 76.4-76.5 against 76.4): opt-in (the rows a
 * group are not known at the launch: a group of more rows takes more passes). */
int gemv_f16_wpc()
{
	const char *e = getenv("K3_GEMV_F16_WPC");
	const int v = e ? atoi(e) : 8;
	return v == 2 || v == 4 ? v : 8;
}

/* K3_GEMV_F16_HPF=n (0 .. 2): the fused kernel's head prefetch, 8 n blocks a row (gemv_head_prefetch()). */
int gemv_f16_hpf()
{
	const char *e = getenv("K3_GEMV_F16_HPF");
	const int v = e ? atoi(e) : 0;
	return v >= 1 && v <= 2 ? v : 0;
}

/* K3_GEMV_F16_AFIRST=1: the fused kernel issues each pass's activation copies before its first
 * weight loads (the trace of 2026-12-02k: each CTA waited 2.8-5.4 us for its first activation row,
 * behind its weight loads); opt-in, not measured yet. */
bool gemv_f16_afirst()
{
	const char *e = getenv("K3_GEMV_F16_AFIRST");
	return e && !strcmp(e, "1");
}

/* The fused gemv launched by programmatic dependent launch: it waits for the kernel before it at
 * its start, before reading anything (griddepcontrol.wait), so only its launch and CTA placement
 * overlap that kernel's tail. By default where its grid of 8-warp CTAs has fewer than GF_PDL_WAVES
 * waves at 2 CTAs an SM (B = 1: w2 448 CTAs, w13 768 on 132 SMs; B = 16: 7168); K3_GEMV_F16_FPDL=1:
 * always, =0: never (a plain launch, the default before 2026-12-02k). H200, 2026-12-02k (% of the
 * copy ceiling on weight bytes, back to back over 8 rotated routings, two runs in each of two
 * calls; the rows right after the B = 256 ones run at a lower clock): w2 B = 1 63.3-63.5 against
 * 60.7-61.1 % early in the process, 67.9-68.1 against 65.1-65.3 later; w13 B = 1 77.5-78.1 against
 * 75.6-76.5; single launches (cold L2) within 1.4 points; at B = 16 single launches 0-5 points
 * lower, back to back mixed: not there. */
constexpr int GF_PDL_WAVES = 4;
bool gemv_f16_fpdl(unsigned ctas)
{
	const char *e = getenv("K3_GEMV_F16_FPDL");
	if (e && !strcmp(e, "1"))
		return true;
	if (e && !strcmp(e, "0"))
		return false;
	const int sms = device_sms();
	return sms > 0 && (int64_t)ctas < (int64_t)GF_PDL_WAVES * 2 * sms;
}

/* The per-CTA trace of the next fused launch (gemv_trace_arm()): the buffer and its CTAs. */
unsigned long long *g_gemv_trace = nullptr;
int64_t g_gemv_trace_ctas = 0;

} // namespace

namespace k3gemm {

bool fp8_available()
{
	return fp8_mma_available();
}

int gemv_trace_arm(unsigned long long *buf, int64_t ctas)
{
	if ((buf == nullptr) != (ctas == 0) || ctas < 0)
		return -EINVAL;
	g_gemv_trace = buf;
	g_gemv_trace_ctas = ctas;
	return 0;
}

int gemv_trace_words()
{
	return GF_TRACE_WORDS;
}

} // namespace k3gemm

namespace {

/* The armed trace buffer if a grid of `ctas` CTAs fits it (then disarmed), else nullptr. */
unsigned long long *gemv_trace_take(int64_t ctas)
{
	unsigned long long *t = g_gemv_trace && ctas <= g_gemv_trace_ctas ? g_gemv_trace : nullptr;
	if (t)
		g_gemv_trace = nullptr, g_gemv_trace_ctas = 0;
	return t;
}

/* The fused kernel of W warps a CTA on cfg (grid x: 16 W rows a CTA). */
template <int EPI, bool PF, int W>
cudaError_t gemv_f16_fused_launch(cudaLaunchConfig_t &cfg, const params &p, size_t fused_smem)
{
	auto kern = gemv_f16_kernel<1, EPI, 1, PF, true, W>;
	/* rows a pass: min(rows, 8); with fewer warps a CTA, what lets 16 / W CTAs share an SM's
	 * shared memory (GF_SM_SMEM, 1 KB a CTA reserved): W = 4: 8 rows at w2 (K 3072), 7 at w13
	 * (K 3584); W = 2: 4 and 3 (a group of more rows takes more passes, each reading its weights);
	 * K3_GEMV_F16_PROW=n: at most n (tests) */
	int prow = (int)(p.rows < 8 ? p.rows : 8);
	if (W < 8)
		while (prow > 1 && (size_t)(16 / W) * (gemv_f16_fused_smem(prow, p.K) + 1024) > GF_SM_SMEM)
			prow--;
	const char *e = getenv("K3_GEMV_F16_PROW"); /* tests: fewer rows a pass (1 .. 8) */
	if (e && atoi(e) >= 1 && atoi(e) < prow)
		prow = atoi(e);
	fused_smem = gemv_f16_fused_smem(prow, p.K); /* <= the caller's (min(rows, 8) rows) */
	if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fused_smem) != cudaSuccess)
		return cudaErrorInvalidValue;
	cfg.gridDim.x = (unsigned)((p.N + 16 * W - 1) / (16 * W));
	cfg.blockDim = dim3(32 * W);
	cfg.dynamicSmemBytes = fused_smem;
	unsigned long long *tr = gemv_trace_take((int64_t)cfg.gridDim.x * cfg.gridDim.y);
	return cudaLaunchKernelEx(&cfg, kern, p, (const uint16_t *)nullptr, (const float *)nullptr, tr, prow,
				  gemv_f16_hpf(), gemv_f16_afirst() ? 1 : 0);
}

/* gemv_f16_kernel on stream s: fused (fused_smem > 0: one kernel, fused_smem bytes of dynamic
 * shared memory; 8-token passes, no k slices; by programmatic dependent launch where its grid
 * is short, gemv_f16_fpdl(), else a plain launch; W warps a
 * CTA by K3_GEMV_F16_WPC) or after f16act_kernel, with
 * programmatic dependent launch (the gemv's weight loads start while the first pass runs) unless
 * K3_GEMV_F16_PDL=0; with 8-token passes and no k slices (the default) the weight loads ask the
 * L2 for whole 256-byte sectors unless K3_GEMV_F16_L2PF=0; all read per call. H200, 2026-12-01zb call 2, % of copy
 * on weight bytes at B = 1, 16, 64, 256: the prefetch w13 61.1, 81.4, 83.0, 69.1 / w2 47.6,
 * 80.6, 83.8, 68.5; without 61.8, 75.1, 73.9, 66.0 / 48.9, 74.4, 75.9, 66.5 (steady graph
 * replays at B = 1: 75.2 / 60.9 against 68.1 / 54.8); without PDL at B = 1, 16: w13 60.0,
 * 74.1, w2 46.0, 74.4 (no prefetch). */
template <int NT8, int EPI, int KS>
int gemv_f16_launch(const params &p, const uint16_t *xh, const float *xf, dim3 grid, size_t fused_smem,
		    cudaStream_t s)
{
	const bool pfl = gemv_f16_l2pf();
	cudaLaunchAttribute attr[1];
	cudaLaunchConfig_t cfg = gemv_f16_pdl_config(grid, s, attr);
	cudaError_t rc;
	if constexpr (NT8 == 1 && KS == 1) {
		if (fused_smem) { /* one kernel, no first pass to wait for */
			cfg.numAttrs = gemv_f16_fpdl(grid.x * grid.y) ? 1 : 0; /* grid: 8-warp CTAs */
			const int w = gemv_f16_wpc();
			if (w == 2)
				rc = gemv_f16_fused_launch<EPI, true, 2>(cfg, p, fused_smem);
			else if (w == 4)
				rc = gemv_f16_fused_launch<EPI, true, 4>(cfg, p, fused_smem);
			else
				rc = pfl ? gemv_f16_fused_launch<EPI, true, 8>(cfg, p, fused_smem)
					 : gemv_f16_fused_launch<EPI, false, 8>(cfg, p, fused_smem);
		} else {
			auto kern = pfl ? gemv_f16_kernel<1, EPI, 1, true> : gemv_f16_kernel<1, EPI, 1, false>;
			rc = cudaLaunchKernelEx(&cfg, kern, p, xh, xf, (unsigned long long *)nullptr, 8, 0, 0);
		}
	} else {
		(void)fused_smem;
		rc = cudaLaunchKernelEx(&cfg, gemv_f16_kernel<NT8, EPI, KS>, p, xh, xf, (unsigned long long *)nullptr, 8 * NT8,
					0, 0);
	}
	if (rc != cudaSuccess)
		return -EIO;
	return k3_launch_status();
}

/* gemv_f16p_kernel on stream s after f16act_kernel, by programmatic dependent launch unless
 * K3_GEMV_F16_PDL=0, the weight loads with the L2 256-byte hint unless K3_GEMV_F16_L2PF=0. */
template <int EPI>
int gemv_f16p_launch(const params &p, const uint16_t *xh, const float *xf, float *part, int32_t *cnt, int ctas,
		     cudaStream_t s)
{
	cudaLaunchAttribute attr[1];
	cudaLaunchConfig_t cfg = gemv_f16_pdl_config(dim3((unsigned)ctas), s, attr);
	auto kern = gemv_f16_l2pf() ? gemv_f16p_kernel<EPI, true> : gemv_f16p_kernel<EPI, false>;
	if (cudaLaunchKernelEx(&cfg, kern, p, xh, xf, part, cnt) != cudaSuccess)
		return -EIO;
	return k3_launch_status();
}

int gemv_f16p_epi(const params &p, const uint16_t *xh, const float *xf, float *part, int32_t *cnt, int ctas,
		  enum k3_epilogue epi, cudaStream_t s)
{
	switch (epi) {
	case K3_EPI_BF16:
		return gemv_f16p_launch<K3_EPI_BF16>(p, xh, xf, part, cnt, ctas, s);
	case K3_EPI_SPLIT:
		return gemv_f16p_launch<K3_EPI_SPLIT>(p, xh, xf, part, cnt, ctas, s);
	case K3_EPI_GLU:
		return gemv_f16p_launch<K3_EPI_GLU>(p, xh, xf, part, cnt, ctas, s);
	case K3_EPI_SCALE:
		return gemv_f16p_launch<K3_EPI_SCALE>(p, xh, xf, part, cnt, ctas, s);
	case K3_EPI_ADD:
		return gemv_f16p_launch<K3_EPI_ADD>(p, xh, xf, part, cnt, ctas, s);
	case K3_EPI_GATE:
		return gemv_f16p_launch<K3_EPI_GATE>(p, xh, xf, part, cnt, ctas, s);
	}
	return -EINVAL;
}

template <int NT8, int KS = 1>
int gemv_f16_epi(const params &p, const uint16_t *xh, const float *xf, enum k3_epilogue epi, dim3 grid,
		 size_t fused_smem, cudaStream_t s)
{
	switch (epi) {
	case K3_EPI_BF16:
		return gemv_f16_launch<NT8, K3_EPI_BF16, KS>(p, xh, xf, grid, fused_smem, s);
	case K3_EPI_SPLIT:
		return gemv_f16_launch<NT8, K3_EPI_SPLIT, KS>(p, xh, xf, grid, fused_smem, s);
	case K3_EPI_GLU:
		return gemv_f16_launch<NT8, K3_EPI_GLU, KS>(p, xh, xf, grid, fused_smem, s);
	case K3_EPI_SCALE:
		return gemv_f16_launch<NT8, K3_EPI_SCALE, KS>(p, xh, xf, grid, fused_smem, s);
	case K3_EPI_ADD:
		return gemv_f16_launch<NT8, K3_EPI_ADD, KS>(p, xh, xf, grid, fused_smem, s);
	case K3_EPI_GATE:
		return gemv_f16_launch<NT8, K3_EPI_GATE, KS>(p, xh, xf, grid, fused_smem, s);
	}
	return -EINVAL;
}

/* A8 < 0: gemv_kernel; else the MXFP8-activation kernel gemv8_kernel with STAGES = A8 (FP4
 * true, G 1). */
template <bool FP4, int G, int NT8, int A8, int EPI, bool PARTIAL>
void gemv_launch(const params &p, dim3 grid, cudaStream_t s)
{
	if constexpr (A8 >= 0) {
		auto kern = gemv8_kernel<NT8, EPI, PARTIAL, A8>;
		constexpr int smem = A8 > 1 ? A8 * THREADS * 40 : 0; /* 2 x 16 + 2 x 4 bytes a slot */
		static bool configured = false;
		if (smem > 48 * 1024 && !configured) {
			if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
				return;
			configured = true;
		}
		kern<<<grid, THREADS, smem, s>>>(p);
	} else {
		gemv_kernel<FP4, G, NT8, EPI, PARTIAL><<<grid, THREADS, 0, s>>>(p);
	}
}

template <bool FP4, int G, int NT8, int A8 = -1>
int gemv_epi(const params &p, enum k3_epilogue epi, dim3 grid, cudaStream_t s)
{
	if (p.ksplit > 1)
		gemv_launch<FP4, G, NT8, A8, K3_EPI_BF16, true>(p, grid, s);
	else if (epi == K3_EPI_BF16)
		gemv_launch<FP4, G, NT8, A8, K3_EPI_BF16, false>(p, grid, s);
	else if (epi == K3_EPI_SPLIT)
		gemv_launch<FP4, G, NT8, A8, K3_EPI_SPLIT, false>(p, grid, s);
	else if (epi == K3_EPI_GLU)
		gemv_launch<FP4, G, NT8, A8, K3_EPI_GLU, false>(p, grid, s);
	else if (epi == K3_EPI_SCALE)
		gemv_launch<FP4, G, NT8, A8, K3_EPI_SCALE, false>(p, grid, s);
	else if (epi == K3_EPI_ADD)
		gemv_launch<FP4, G, NT8, A8, K3_EPI_ADD, false>(p, grid, s);
	else
		gemv_launch<FP4, G, NT8, A8, K3_EPI_GATE, false>(p, grid, s);
	return k3_launch_status();
}

int finish(const params &p, enum k3_epilogue epi, int sms, cudaStream_t s)
{
	const int64_t width = epi == K3_EPI_GLU ? p.N / 2 : p.N;
	int64_t blocks = (p.rows * width + THREADS - 1) / THREADS;
	if (blocks > 4L * sms)
		blocks = 4L * sms;
	const int grid = (int)(blocks < 1 ? 1 : blocks);
	switch (epi) {
	case K3_EPI_BF16:
		finish_kernel<K3_EPI_BF16><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_SPLIT:
		finish_kernel<K3_EPI_SPLIT><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_GLU:
		finish_kernel<K3_EPI_GLU><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_SCALE:
		finish_kernel<K3_EPI_SCALE><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_ADD:
		finish_kernel<K3_EPI_ADD><<<grid, THREADS, 0, s>>>(p);
		break;
	case K3_EPI_GATE:
		finish_kernel<K3_EPI_GATE><<<grid, THREADS, 0, s>>>(p);
		break;
	}
	return k3_launch_status();
}

} // namespace

extern "C" float k3_gemm_glu_e4m3_mul(float beta_gate, float beta_up)
{
	const double cap = (double)beta_gate * (double)beta_up;
	if (!(beta_gate > 0.0f && beta_up > 0.0f && cap < 1e30))
		return 0.0f;
	/* m = 2^e, the largest with m cap <= 448 (e clamped to -60 .. 60) */
	int e = (int)floor(log2(448.0 / cap));
	e = e < -60 ? -60 : e > 60 ? 60 : e;
	const float m = ldexpf(1.0f, e);
	return (double)m * cap <= 448.0 ? m : m * 0.5f;
}

extern "C" int k3_gemm_path_for(const struct k3_gemm_args *a)
{
	if (!shapes_ok(a))
		return -EINVAL;
	return resolve_path(a);
}

extern "C" int k3_gemm_workspace_bytes(const struct k3_gemm_args *a, size_t *bytes)
{
	if (!shapes_ok(a) || !bytes)
		return -EINVAL;
	const int path = resolve_path(a);
	if (path < 0)
		return path;
	*bytes = 0;
	if (path == K3_GEMM_GEMV && a->n_groups == 0) {
		const int sms = device_sms();
		if (sms < 0)
			return sms;
		int ks, per;
		gemv_split(a, sms, &ks, &per);
		if (ks > 1)
			*bytes = (size_t)ks * (size_t)a->rows * (size_t)a->N * sizeof(float);
	}
	if (path == K3_GEMM_GEMV && gemv_f16_shapes(a))
		*bytes = gemv_f16_ws_bytes(a);
	if (path == K3_GEMM_GEMV && a->a_dtype == K3_A_E4M3_ROW) /* f8act_kernel's FP16 rows and scales */
		*bytes = gemv_f16_act_bytes(a);
	if (path == K3_GEMM_TILED_MMA && a->n_groups == 0) {
		const int sms = device_sms();
		if (sms < 0)
			return sms;
		int per;
		const int ks = dense_tiled_split(a, sms, &per);
		if (ks > 1)
			*bytes = (size_t)ks * (size_t)a->rows * (size_t)a->N * sizeof(float);
	}
	return 0;
}

extern "C" int k3_gemm(const struct k3_gemm_args *a, cudaStream_t stream)
{
	if (!args_ok(a))
		return -EINVAL;
	int path = resolve_path(a);
	if (path == K3_GEMM_GEMV && a->a_dtype == K3_A_E4M3_ROW && !(a->w_f16 && al16(a->w_f16) && al16(a->w_scales)))
		path = a->path == K3_GEMM_AUTO && !tiled_mma_forced() && k3gemm::wg_supported(a) ? K3_GEMM_TILED_WGMMA
												 : -EINVAL;
	if (path < 0)
		return path;
	if (a->n_groups > 0 && path == K3_GEMM_TILED_MMA && !a->tile_off)
		return -EINVAL;
	if (a->n_groups > 0 && path == K3_GEMM_GEMV && (!a->touched || !a->n_touched))
		return -EINVAL;
	if (a->rows == 0)
		return 0;
	const int sms = device_sms();
	if (sms < 0)
		return sms;
	params p = {};
	p.rows = a->rows;
	p.N = a->N;
	p.K = a->K;
	p.n_groups = a->n_groups;
	p.n_split = a->n_split;
	p.off = a->off;
	p.tile_off = a->tile_off;
	p.touched = a->touched;
	p.n_touched = a->n_touched;
	p.a_index = a->a_index;
	p.out_index = a->out_index;
	p.a = a->a;
	p.w = a->w;
	p.wp = a->w_packed;
	p.ws = a->w_scales;
	p.wwg = a->w_wg;
	p.beta_gate = a->beta_gate;
	p.beta_up = a->beta_up;
	p.row_scale = a->row_scale;
	p.addend = a->addend;
	p.out = a->out;
	p.out_f32 = a->out_f32;
	p.aq = a->a_q;
	p.as = a->a_scales;
	if (a->a_dtype == K3_A_E4M3_ROW) {
		p.aqs = a->a_row_scales;
		p.wwg = a->w_wgf8;
		p.wfl = a->w_floors;
		if (a->epi == K3_EPI_GLU && a->out_e4m3) {
			p.out8 = a->out_e4m3;
			p.glu8_mul = k3_gemm_glu_e4m3_mul(a->beta_gate, a->beta_up);
		}
	}
	const bool fp4 = a->w_dtype == K3_W_MXFP4;
	if (path == K3_GEMM_TILED_WGMMA)
		return k3gemm::wg_launch(p, fp4, a->epi, sms, stream);
	const int num_n = (a->N + BN - 1) / BN;
	if (path == K3_GEMM_TILED_MMA) {
		if (a->n_groups > 0) {
			const int64_t tiles = (a->rows + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS + a->n_groups;
			if (tiles * num_n > 0x7fffffff)
				return -EINVAL;
			const int grid = (int)(tiles * num_n);
			return fp4 ? tiled_epi<64, true>(p, a->epi, grid, num_n, 0, stream)
				   : tiled_epi<64, false>(p, a->epi, grid, num_n, 0, stream);
		}
		/* 128-row tiles when they still fill the SMs twice over. */
		const bool big = tiled_big(a, sms);
		const int bm = big ? 128 : 64;
		const int64_t num_m = (a->rows + bm - 1) / bm;
		if (num_m * num_n > 0x7fffffff)
			return -EINVAL;
		const int grid = (int)(num_m * num_n);
		if (big)
			return fp4 ? tiled_epi<128, true>(p, a->epi, grid, num_n, (int)num_m, stream)
				   : tiled_epi<128, false>(p, a->epi, grid, num_n, (int)num_m, stream);
		int per;
		const int ks = dense_tiled_split(a, sms, &per);
		if (ks > 1) {
			const size_t need = (size_t)ks * (size_t)a->rows * (size_t)a->N * sizeof(float);
			if (!a->workspace || a->workspace_bytes < need || !al16(a->workspace))
				return -EINVAL;
			p.part = static_cast<float *>(a->workspace);
			p.ksplit = ks;
			p.kb_per_split = per;
			const int r = fp4 ? launch_tiled<64, true, EPI_PART>(p, grid, num_n, (int)num_m, stream, ks)
					  : launch_tiled<64, false, EPI_PART>(p, grid, num_n, (int)num_m, stream, ks);
			return r ? r : finish(p, a->epi, sms, stream);
		}
		return fp4 ? tiled_epi<64, true>(p, a->epi, grid, num_n, (int)num_m, stream)
			   : tiled_epi<64, false>(p, a->epi, grid, num_n, (int)num_m, stream);
	}
	int ks, per;
	gemv_split(a, sms, &ks, &per);
	p.ksplit = ks;
	p.kb_per_split = per;
	if (ks > 1) {
		const size_t need = (size_t)ks * (size_t)a->rows * (size_t)a->N * sizeof(float);
		if (!a->workspace || a->workspace_bytes < need || !al16(a->workspace))
			return -EINVAL;
		p.part = static_cast<float *>(a->workspace);
	}
	const dim3 grid((unsigned)((a->N + GV_ROWS - 1) / GV_ROWS), gemv_grid_y(a), (unsigned)ks);
	/* Tokens per pass: 16 when groups hold more than 4 rows on average (dense: more than 8 rows). */
	const bool wide = a->n_groups > 0 ? a->rows > (int64_t)4 * a->n_groups : a->rows > 8;
	int r;
	if (a->a_dtype == K3_A_E4M3_ROW) { /* grouped (ks 1): f8act_kernel, then gemv_f16_kernel */
		if (ks != 1 || !a->workspace || a->workspace_bytes < gemv_f16_act_bytes(a) || !al16(a->workspace))
			return -EINVAL;
		p.wp = a->w_f16;
		uint16_t *xh = static_cast<uint16_t *>(a->workspace);
		float *xf = reinterpret_cast<float *>(xh + (size_t)a->rows * a->K);
		f8act_kernel<<<(unsigned)a->rows, THREADS, 0, stream>>>(p, xh, xf);
		r = k3_launch_status();
		return r ? r : gemv_f16_epi<1>(p, xh, xf, a->epi, grid, 0, stream);
	}
	if (a->a_dtype == K3_A_MXFP8) {
		const bool w8 = a->n_groups > 0 ? a->rows > (int64_t)gemv8_wide() * a->n_groups : a->rows > 8;
		if (gemv_bulk(a))
			r = w8 ? gemv_bulk_epi<2, true>(p, a->epi, gemv_bulk_ctas(), stream)
			       : gemv_bulk_epi<1, true>(p, a->epi, gemv_bulk_ctas(), stream);
		else if (gemv8_smem())
			r = w8 ? gemv_epi<true, 1, 2, GV8_STAGES>(p, a->epi, grid, stream)
			       : gemv_epi<true, 1, 1, GV8_STAGES>(p, a->epi, grid, stream);
		else
			r = w8 ? gemv_epi<true, 1, 2, 0>(p, a->epi, grid, stream)
			       : gemv_epi<true, 1, 1, 0>(p, a->epi, grid, stream);
	} else if (gemv_f16(a) && ks == 1) {
		const int nt = gemv_f16_nt(a);
		const int kslices = nt == 2 ? 1 : gemv_f16_kslices(a);
		p.wp = a->w_f16;
		const bool pers = nt == 1 && kslices == 1 && gemv_f16p_on(a);
		const size_t fsm = nt == 1 && kslices == 1 && !pers ? gemv_f16_fused_bytes(a) : 0;
		if (fsm) /* one kernel: each CTA converts its activation rows itself */
			return gemv_f16_epi<1>(p, nullptr, nullptr, a->epi, grid, fsm, stream);
		if (!a->workspace || a->workspace_bytes < gemv_f16_ws_bytes(a) || !al16(a->workspace))
			return -EINVAL;
		uint16_t *xh = static_cast<uint16_t *>(a->workspace);
		float *xf = reinterpret_cast<float *>(xh + (size_t)a->rows * a->K);
		float *part = reinterpret_cast<float *>(static_cast<char *>(a->workspace) + gemv_f16_act_bytes(a));
		int32_t *cnt = reinterpret_cast<int32_t *>(part + (size_t)2 * a->rows * a->N);
		f16act_kernel<<<(unsigned)a->rows, THREADS, 0, stream>>>(p, xh, xf, pers ? cnt : nullptr);
		r = k3_launch_status();
		if (r)
			return r;
		if (pers) /* one wave, the work cut evenly over the warps */
			return gemv_f16p_epi(p, xh, xf, part, cnt, gemv_f16p_ctas(sms), a->epi, stream);
		dim3 g = grid;
		g.x = (unsigned)((a->N + GV_ROWS / kslices - 1) / (GV_ROWS / kslices));
		if (nt == 2)
			r = gemv_f16_epi<2>(p, xh, xf, a->epi, grid, 0, stream);
		else if (kslices == 4)
			r = gemv_f16_epi<1, 4>(p, xh, xf, a->epi, g, 0, stream);
		else if (kslices == 2)
			r = gemv_f16_epi<1, 2>(p, xh, xf, a->epi, g, 0, stream);
		else
			r = gemv_f16_epi<1>(p, xh, xf, a->epi, grid, 0, stream);
	} else if (gemv_bulk(a))
		r = wide ? gemv_bulk_epi<2, false>(p, a->epi, gemv_bulk_ctas(), stream)
			 : gemv_bulk_epi<1, false>(p, a->epi, gemv_bulk_ctas(), stream);
	else if (gemv_lean(a, gemv_block_k(a))) {
		/* The split-k partials (dense, ks > 1) are stored as PARTIAL; the epilogue after. */
		const bool lw = a->n_groups > 0 ? a->rows > (int64_t)gemv_wide() * a->n_groups : a->rows > 8;
		const int kslices = lw ? 1 : gemv_kslices(a, grid, sms);
		dim3 g = grid;
		g.x = (unsigned)((a->N + GV_ROWS / kslices - 1) / (GV_ROWS / kslices));
		if (ks > 1)
			r = lw ? gemv_lean_epi<2, true>(p, K3_EPI_BF16, grid, stream)
			       : gemv_lean_epi<1, true>(p, K3_EPI_BF16, grid, stream);
		else if (lw)
			r = gemv_lean_epi<2, false>(p, a->epi, grid, stream);
		else if (kslices == 4)
			r = gemv_lean_epi<1, false, 4>(p, a->epi, g, stream);
		else if (kslices == 2)
			r = gemv_lean_epi<1, false, 2>(p, a->epi, g, stream);
		else
			r = gemv_lean_epi<1, false>(p, a->epi, grid, stream);
	} else if (fp4 && gemv_block_k(a) > GV_K)
		r = wide ? gemv_epi<true, GV_FP4_G, 2>(p, a->epi, grid, stream)
			 : gemv_epi<true, GV_FP4_G, 1>(p, a->epi, grid, stream);
	else if (fp4)
		r = wide ? gemv_epi<true, 1, 2>(p, a->epi, grid, stream) : gemv_epi<true, 1, 1>(p, a->epi, grid, stream);
	else
		r = wide ? gemv_epi<false, 1, 2>(p, a->epi, grid, stream) : gemv_epi<false, 1, 1>(p, a->epi, grid, stream);
	if (r || ks == 1)
		return r;
	return finish(p, a->epi, sms, stream);
}

extern "C" int k3_gemm_quantize_mxfp8(const uint16_t *x, int64_t rows, int K, uint8_t *q, uint8_t *scales,
				      cudaStream_t stream)
{
	if (!x || !q || !scales || !al16(x) || !al16(q) || !al4(scales) || rows < 0 || K < K3_MX_GROUP ||
	    K % K3_MX_GROUP || rows > ((int64_t)1 << 40) / K || !fp8_mma_available())
		return -EINVAL;
	const int64_t chunks = rows * (K / 8);
	if (chunks == 0)
		return 0;
	quant8_kernel<<<(unsigned)((chunks + THREADS - 1) / THREADS), THREADS, 0, stream>>>(x, chunks, q, scales);
	return k3_launch_status();
}

extern "C" int k3_gemm_repack_fp8(const uint8_t *packed, int64_t rows, int K, uint8_t *out, cudaStream_t stream)
{
	if (!packed || !out || !al16(packed) || !al16(out) || rows < 0 || K < GV_K || K % GV_K ||
	    rows > ((int64_t)1 << 40) / K)
		return -EINVAL;
	const int64_t bytes = rows * (K / 2);
	if (bytes == 0)
		return 0;
	if ((packed < out + bytes) && (out < packed + bytes))
		return -EINVAL; /* overlapping */
	const int64_t chunks = bytes / 16;
	repack8_kernel<<<(unsigned)((chunks + THREADS - 1) / THREADS), THREADS, 0, stream>>>(packed, chunks, out);
	return k3_launch_status();
}

extern "C" int k3_gemm_repack_f16enc(const uint8_t *packed, int64_t rows, int K, uint8_t *out, cudaStream_t stream)
{
	if (!packed || !out || !al16(packed) || !al16(out) || rows < 0 || K < GV_K || K % GV_K ||
	    rows > ((int64_t)1 << 40) / K)
		return -EINVAL;
	const int64_t bytes = rows * (K / 2);
	if (bytes == 0)
		return 0;
	if ((packed < out + bytes) && (out < packed + bytes))
		return -EINVAL; /* overlapping */
	static const uint32_t col[32] = K3_MXFP4_F16ENC_COLS; /* the host encoder's, k3_quant.h */
	f16enc_table enc;
	for (int i = 0; i < 32; i++) { /* bit i: bit i % 4 of element i / 4 */
		const int e = i / 4, b = i % 4;
		enc.col[i] = col[8 * (e % 4) + 4 * (e / 4) + b];
	}
	const int64_t chunks = bytes / 16;
	repack16_kernel<<<(unsigned)((chunks + THREADS - 1) / THREADS), THREADS, 0, stream>>>(packed, chunks, out, enc);
	return k3_launch_status();
}
