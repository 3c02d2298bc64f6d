/* SPDX-License-Identifier: MIT */
/*
 * The GEMM op's wgmma path (sm_90a): see k3_gemm.h.
 *
 * Swapped operands: the CTA computes a tile of out^T = W X^T, 256 weight rows
 * (the MMA's M) by up to 128 tokens (its N), so that a group (expert) with few
 * tokens wastes little: the N of the MMA is the tile's token count rounded up
 * to 16 (wgmma m64nNk16, N = 16 .. 128, one instantiation of the main loop
 * each). Persistent: one CTA per SM walks the tiles (dense: groups of 16
 * token tiles per weight column band, for L2 reuse; grouped: expert by
 * expert, each expert's weight tiles in turn and its token chunks of 128
 * within them, so the weights come from HBM once and the few token rows stay
 * in L2).
 *
 * Warp specialization, 384 threads:
 *  - warpgroup 0 (producer, 72 registers) fills each 64-deep k block of the
 *    tile into one of STAGES shared-memory stages: the token tile [128][64]
 *    BF16 with cp.async (16 bytes a copy; token rows gathered through
 *    a_index, rows past the tile's tokens zero-filled), 128-byte rows in the
 *    128-byte swizzle; the weight tile by one tensor copy (TMA) of a box of
 *    a 3D map {K, N, groups} issued by thread 0 with the bytes expected on
 *    the stage's barrier (rows past N zero-filled): [256][64] BF16 in the
 *    128-byte swizzle, or for MXFP4 the raw tile [256][32 bytes] in the
 *    32-byte swizzle (the two 16-byte halves of row r swapped when r & 4:
 *    conflict-free reads below); MXFP4: 4 scale bytes a row by cp.async (the
 *    scales of this k block and its pair). Each thread arrives on the
 *    stage's `full` barrier when its copies have landed
 *    (cp.async.mbarrier.arrive.noinc; 128 arrivals + thread 0's expect-tx).
 *    K3_GEMM_WG_WEIGHTS=cp: the weight tiles by cp.async too (the kernel
 *    before TMA, for measurements; also where the map cannot be built);
 *  - warpgroups 1 and 2 (consumers, 216 registers) own 128 weight rows each
 *    (two m64 blocks), B being the token tile through a 128-byte-swizzle
 *    descriptor. BF16 weights: A from shared memory too, a stage's 8 MMAs in
 *    flight while the next stage's are issued. MXFP4: A from registers, built
 *    per k step (the lane's 4 nibbles of each row picked from two 8-byte
 *    loads with byte permutes, expanded to BF16 and scaled by the E8M0 scale,
 *    exact; each scale loaded and converted once for the two k steps of its
 *    group), two k steps at a time into one of two register sets while the
 *    MMAs of the other set run; each half stage ends with wait_group 0, since
 *    ptxas serializes all MMAs of a kernel that writes a register an MMA in
 *    flight may read within one wait_group-0 interval (warning C7513): the
 *    other consumer warpgroup keeps the tensor cores busy meanwhile. After a
 *    stage's last MMA has completed, every consumer thread arrives on its
 *    `empty` barrier (256 arrivals), which the producer waits on before
 *    reusing it. Waiting on `full`, a consumer fences the proxies (cp.async
 *    writes through the generic proxy, wgmma reads through the async proxy);
 *  - the epilogue runs from the accumulators: thread (g, t) of warp w holds
 *    weight rows 16 w + g and + 8 (GLU: the gate and up rows of one output,
 *    by the interleaving of moe_common.h) for tokens 8 j + 2 t, + 1.
 *
 * Clusters (grouped, BF16 weights by TMA; K3_GEMM_WG_CLUSTER, cluster_ctas()):
 * the ncl CTAs of a cluster walk units (group, weight tile, ncl token chunks):
 * CTA r takes chunk ncl j + r of the group's ceil(count / TT) equal chunks (none
 * past them: its stages pass through) and all share the weight tile, whose four
 * 64-row boxes CTA b % ncl copies into every CTA's stage (TMA multicast; each
 * CTA expects the whole tile's bytes on its own `full` barrier). A stage is
 * rewritten only when the consumers of every CTA released it: lane 0 of each
 * consumer warp arrives on the `empty` barrier of every CTA (8 ncl a phase).
 * The weight tiles thus come from L2 once per unit instead of once per chunk.
 *
 * Kernels (K3_GEMM_WG_KERNEL, kernel_variant(); round za, bench/results/k3-kernels-h200-2026-12-01za):
 * "q", round q's as described above; "epi", the same with epilogue_nb (each tile's per-token
 * scalars loaded before its k loop and kept in a shared buffer, no branches in the epilogue but
 * the stores' predicates, SiTU-GLU without divisions) and one MMA descriptor a stage; "wide" (the
 * default for grouped launches; dense ones default to "q"), that, and grouped BF16 launches in
 * clusters take token chunks of up to TT_WIDE = 176
 * rows (wgmma N up to 176, in steps of 8 past 128): K3's ~292-token experts at T = 16K in 2 chunks,
 * clusters of 2 on all 132 SMs instead of 39 clusters of 3 on 117. Measured (2026-12-01z call 2,
 * kernels/calls/k3-2026-12-01za-2.sh): BF16 w13 / w2 at T = 16K 26.5-27.5 / 11.0-11.9 ms against
 * round q's 29.1-29.4 / 14.7-14.8 ms; MXFP4 (epi) w13 37.2-38.3 against 41.9 ms.
 */
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <cuda.h> /* CUtensorMap and its enums only: the encoder is reached through the runtime */

#include "common/k3_device.cuh"
#include "common/k3_watchdog.cuh"
#include "common/k3_wgmma.cuh"
#include "k3_gemm_internal.cuh"
#include "k3_gemm_wg_layout.cuh"
#include "k3_gemm_wg_rp.cuh"

/* Built for every target the kernels are (kernels/meson.build): where the target has no wgmma
 * (plain sm_90, -Dgpu_arch=sm_90) the device code below compiles to nothing, and nvcc would warn
 * (an error under -Werror all-warnings) that its helpers are unused. */
#pragma nv_diag_suppress 177

namespace {

using k3gemm::params;

constexpr int THREADS = 384;  /* producer warpgroup + two consumer warpgroups */
constexpr int TW = 256;       /* weight rows per tile: 128 per consumer warpgroup (two m64 blocks) */
constexpr int TT = 128;       /* tokens per tile at most (the MMA's N) */
constexpr int TT_WIDE = 176;  /* the wide kernel's (grouped BF16 in clusters; kernel_variant()) */
constexpr int TT_RSV = 160;   /* "wide2rv": MXFP4 chunks of up to 160 (176: ptxas serializes, C7512) */
constexpr int KB = 64;        /* k per stage: one 128-byte row of BF16 */
constexpr int GROUP_M = 16;   /* dense raster: token tiles per group */
constexpr long long OFS_CYCLES = 4000; /* XV_OFS: the second consumer warpgroup's late start (~3 k blocks at T = 4K) */
/* Register split of the warpgroups (setmaxnreg): the consumers get what the producer gives up
 * from the launch's 168 a thread (128 x (168 - P) >= 256 x (C - 168)). The wide kernel's tiles of
 * N tokens keep N / 2 accumulators a consumer thread live (176 at N = 176). */
template <int TTV, int XV = 0>
struct regs {
	static constexpr int PRODUCER = 72, CONSUMER = 216;
	static_assert(128 * (168 - PRODUCER) >= 256 * (CONSUMER - 168), "registers");
};
constexpr int TAB_INTS = MOE_MAX_EXPERTS + 1 + 24; /* chunk offsets, then scan scratch (a warp's int each) */
static_assert(THREADS * 3 >= MOE_MAX_EXPERTS, "the chunk table is built 3 groups a thread");

/* Kernel extras (the XV template bits; kernel_variant()), described at produce(); XV_XP (MXFP4
 * weights only): the expander kernel (produce_xp()), whose consumers run the BF16 code. */
enum {
	XV_NOEPI = 1, XV_NOFEED = 2, XV_NOMMA = 4, XV_FGLU = 8, XV_ONE = 16, XV_XP = 32, XV_RS1 = 64, XV_PF = 128,
	XV_LEAN = 256, XV_RP = 512, XV_RQ = 1024, XV_OFS = 2048, XV_W4 = 4096, XV_V16 = 8192, XV_TX = 16384,
	XV_PP = 32768, XV_F8D = 65536, XV_F8B = 131072, XV_F8 = 262144, XV_F8S2 = 524288, XV_F8M = 1048576,
	XV_F8K = 2097152, XV_F8P = 4194304, XV_F8R = 8388608, XV_F8T = 16777216, XV_F8L = 33554432,
	XV_F8W = 67108864, XV_F8E = 134217728, XV_F8E4 = 268435456,
	XV_F8O = 536870912
};

/* The kernel's tensor maps: the weights' (weight_map()) and, for XV_TX, the token rows' (a_map()). */
struct tmaps {
	CUtensorMap w, a;
};

/* XV_W4 ("wide2rq4", 2026-12-03s, opt-in: measured no faster, kernel_variant()): the tile's 256 weight rows over four consumer
 * warpgroups of one m64 block each (64 rows) instead of two of two, 640 threads, so that each
 * scheduler holds four consumer warps instead of two (the wide2rq profile at T = 4K: a consumer
 * warp issues every ~6.5 cycles, mostly waiting on fixed-latency dependencies of its own
 * conversions, with no other warp to issue; bench/results/k3-kernels-h200-2026-12-03q); the
 * accumulators of a thread halve (one m64 block), the conversions and MMAs of a k block are the
 * same in all. With wide2rq's k loop (XV_RQ) and token tiles of TT_W4 = 96 rows (a consumer
 * thread's 48 accumulators within its 104 registers); wide2rq's chunks of 160 where the groups
 * hold more than 128 rows on average. */
constexpr int TT_W4 = 96;
template <int XV>
constexpr int nwg() /* consumer warpgroups */
{
	return (XV & XV_W4) ? 4 : 2;
}
template <int XV>
constexpr int mbs() /* m64 blocks a consumer warpgroup */
{
	return (XV & XV_W4) ? 1 : 2;
}
template <int XV>
constexpr int nthreads()
{
	return 128 * (1 + nwg<XV>());
}
/* XV_W4: launched with 640 threads (96 registers each); the producer gives up 56, 4 consumers
 * take 8 more each: 128 x (96 - 40) >= 512 x (104 - 96). */
template <int TTV>
struct regs<TTV, 1> {
	static constexpr int PRODUCER = 40, CONSUMER = 104;
	static_assert(128 * (96 - PRODUCER) >= 512 * (CONSUMER - 96), "registers");
};
template <int XV>
constexpr int regs_key()
{
	return (XV & XV_W4) ? 1 : 0;
}
static_assert(nthreads<XV_W4>() / 32 <= 24, "the scan scratch: one int a warp");

/* Shared memory of the kernel with token tiles of TTV rows: STAGES stages (token tile, weight tile,
 * MXFP4 scales), the barriers, the chunk table, and (the epilogue of kernel_variant() >= 1) each
 * consumer warpgroup's token scalars of its tile: TTV row scales (float), then TTV output rows
 * (int32, from out_index). */
template <bool FP4, int TTV = TT, int XV = 0>
struct wcfg {
	/* XP (MXFP4, XV_XP): the stages hold the token tile and the weight tile expanded to BF16 (as
	 * the BF16 kernel's, which its consumers read); the raw MXFP4 tiles and their scales come by
	 * TMA and cp.async into a ring of their own (RSTAGES raw stages after the stages). */
	static constexpr bool XP = FP4 && (XV & XV_XP) != 0;
	static constexpr bool RS = FP4 && !XP; /* round q's MXFP4 kernel: A from registers */
	static constexpr int X_BYTES = TTV * KB * 2;
	static constexpr int W_BYTES = RS ? TW * KB / 2 : TW * KB * 2;
	static constexpr int S_BYTES = RS ? TW * 4 : 0;
	static constexpr int STAGE = X_BYTES + W_BYTES + S_BYTES;
	/* XV_F8P (the FP8 kernel's compact pairs, opt-in; 2026-12-05): the F8 producer fills a k-block
	 * pair's odd stage with its weight tile only (produce_pp()), so an odd stage is placed
	 * STAGE - OFF_W past its even one, its weight tile right after the even stage's scales: a pair
	 * takes PAIR bytes (33 KB at 128 tokens, where two stages take 50), and 12 stages fit where 8
	 * did. Nothing but those weight bytes of an odd stage is ever written or read (its token and
	 * scale regions overlap the even stage and the next pair). Pairs start at even stages: the
	 * stage cursor advances by whole pairs (nkb even) and STAGES is even. */
	static constexpr bool F8P = RS && (XV & XV_F8P) != 0;
	static constexpr int PAIR = STAGE + W_BYTES;
	static constexpr int STAGES = F8P ? 12 : RS ? (TTV > TT ? 6 : 8) : XP ? 3 : 4; /* RS at 176 tokens: 31 KB a stage */
	static constexpr int W_BOX = FP4 ? KB / 2 : KB; /* TMA box: elements (bytes / BF16) of a row */
	static constexpr int OFF_W = X_BYTES;
	static constexpr int OFF_S = X_BYTES + W_BYTES; /* round q's MXFP4 only */
	static constexpr int R_W = XP ? TW * KB / 2 : 0; /* XP: raw tile [256][32 bytes], 32-byte swizzle */
	static constexpr int R_STAGE = XP ? R_W + TW * 4 : 0; /* + 4 scale bytes a row (k block pair) */
	static constexpr int RSTAGES = XP ? 5 : 0;
	static constexpr int OFF_RAW = F8P ? STAGES / 2 * PAIR : STAGES * STAGE;
	/* Byte offset of stage s from the stages' base. */
	__host__ __device__ static constexpr uint32_t stage_off(int s)
	{
		return F8P ? (uint32_t)((s >> 1) * PAIR + (s & 1) * (STAGE - OFF_W)) : (uint32_t)(s * STAGE);
	}
	static constexpr int OFF_BAR = OFF_RAW + RSTAGES * R_STAGE; /* full, empty, then XP's rfull */
	static constexpr int OFF_TAB = OFF_BAR + (2 * STAGES + RSTAGES) * 8;
	static constexpr int OFF_TOK = OFF_TAB + TAB_INTS * 4;
	static constexpr int TOK_INTS = 2 * TTV; /* one tile of one warpgroup */
	static constexpr int OFF_XROW = (OFF_TOK + nwg<XV>() * TOK_INTS * 4 + 15) & ~15; /* XP: the producer's token rows of its tile */
	/* XV_F8T: each consumer warp's scale tables of a k-block pair (f8t_tables()), F8T_WARP bytes */
	static constexpr bool F8T = RS && (XV & XV_F8T) != 0;
	static constexpr int F8T_WARP = 4 * 32 * 8; /* 4 groups x 32 rows x 8 bytes */
	static constexpr int OFF_F8T = (OFF_XROW + (XP ? TTV * 4 : 0) + 15) & ~15;
	static constexpr int SMEM = OFF_F8T + (F8T ? 4 * nwg<XV>() * F8T_WARP : 0) + 1024; /* + slack to align the base to 1024 */
	static_assert(STAGE % 1024 == 0 && OFF_S + S_BYTES == STAGE, "every stage 1024-byte aligned (128-byte swizzle)");
	static_assert(!F8P || (PAIR % 1024 == 0 && STAGES % 2 == 0 && (XV & XV_F8) && !(XV & XV_F8M)),
		      "XV_F8P: the FP8 kernel's registers form, pairs (and so even stages and odd weight tiles) 1024-byte aligned");
	static_assert(R_STAGE % 1024 == 0, "every raw stage 1024-byte aligned (the 32-byte swizzle's rows)");
	static_assert(SMEM <= 227 * 1024, "shared memory");
	static_assert(TTV % 16 == 0 && TTV <= 256, "token tile");
};

/* k3_mbar_wait with a watchdog: a pipeline that stopped (a bug) traps after 10 s instead of
 * hanging the GPU, so that a test or bench reports the error and the process goes on. */
__device__ __forceinline__ void wait_or_trap(uint64_t *bar, uint32_t parity)
{
	uint32_t done = 0;
	uint64_t t0 = 0;
	for (uint32_t spins = 0;; spins++) {
		asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			     " selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(k3_smem_u32(bar)), "r"(parity)
			     : "memory");
		if (done)
			return;
		k3_trap_if_stuck(spins, 1023u, t0);
	}
}

/* The stage after (s, phase): the cursor of `it` + 1 (XV_RQ's stage cursor, rq_kblock()). */
template <int STAGES>
__device__ __forceinline__ void rq_advance(int &s, uint32_t &ph)
{
	if (++s == STAGES) {
		s = 0;
		ph ^= 1u;
	}
}

/* ---- clusters (K3_GEMM_WG_CLUSTER) ---------------------------------------------- */

__device__ __forceinline__ uint32_t cluster_rank()
{
	uint32_t r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

__device__ __forceinline__ uint32_t cluster_size()
{
	uint32_t n;
	asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
	return n;
}

/* Every thread of every CTA of the cluster: memory before it seen by all after it. */
__device__ __forceinline__ void cluster_sync()
{
	asm volatile("barrier.cluster.arrive.release;\n barrier.cluster.wait.acquire;\n" ::: "memory");
}

/* One arrival on the barrier at the same offset as `bar` in the shared memory of CTA `cta`
 * (the default .release.cta: a .release.cluster arrival, as in round q's first call, fences
 * every earlier memory access of the thread at cluster scope and made the kernel 1.65x
 * slower). */
__device__ __forceinline__ void mbar_arrive_cta(uint64_t *bar, uint32_t cta)
{
	uint32_t remote;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(k3_smem_u32(bar)), "r"(cta));
	asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

struct tile {
	int g, n0;      /* group (0: dense), first weight row */
	int64_t rb, re; /* rows [rb, re) of the (grouped) row space */
};

/* Tile t of this launch (CTA `rank` of a cluster of ncl). Grouped: tab[e] = the units of the
 * groups before e: ncl == 1, token chunks of TT; ncl > 1, clusters' units, ncl chunks each (the
 * group's rows in ceil(count / TT) chunks of equal size, q <= TT; CTA `rank` takes chunk
 * ncl j + rank of unit j, none (re == rb) past the group's chunks), the weight tile shared. */
template <int TTV, int TWV = TW>
__device__ __forceinline__ tile decode(const params &p, const int32_t *tab, int t, int rank = 0, int ncl = 1)
{
	tile r;
	if (p.n_groups == 0) {
		const int per = GROUP_M * p.num_n, grp = t / per, first = grp * GROUP_M;
		const int gm = min(p.num_m - first, GROUP_M), in = t % per;
		r.g = 0;
		r.rb = (int64_t)(first + in % gm) * TTV;
		r.re = min(p.rows, r.rb + TTV);
		r.n0 = (in / gm) * TW;
		return r;
	}
	int lo = 0, hi = p.n_groups - 1; /* the last group whose first tile is <= t */
	while (lo < hi) {
		const int mid = (lo + hi + 1) >> 1;
		if (tab[mid] * p.num_n <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	const int local = t - tab[lo] * p.num_n, chunks = tab[lo + 1] - tab[lo];
	r.g = lo;
	r.n0 = (local / chunks) * TWV;
	if (ncl > 1 || TTV > TT) { /* equal chunks (the wide kernel's, in clusters or not) */
		const int cnt = p.off[lo + 1] - p.off[lo], nch = (cnt + TTV - 1) / TTV, q = (cnt + nch - 1) / nch;
		const int i = (local % chunks) * ncl + rank;
		r.rb = p.off[lo] + min(i * q, cnt);
		r.re = p.off[lo] + min(i * q + q, cnt);
		return r;
	}
	r.rb = p.off[lo] + (int64_t)(local % chunks) * TTV;
	r.re = min((int64_t)p.off[lo + 1], r.rb + TTV);
	return r;
}

/* tab[0 .. n_groups] = prefix sums of ceil(ceil(count_e / TTV) / ncl); all threads, two barriers. */
template <int TTV>
__device__ void build_tab(const params &p, int32_t *tab, int ncl)
{
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
	int32_t *scratch = tab + MOE_MAX_EXPERTS + 1;
	int inc[3], s = 0;
#pragma unroll
	for (int i = 0; i < 3; i++) {
		const int e = tid * 3 + i;
		if (e < p.n_groups)
			s += ((p.off[e + 1] - p.off[e] + TTV - 1) / TTV + ncl - 1) / ncl;
		inc[i] = s;
	}
	int x = s;
#pragma unroll
	for (int o = 1; o < 32; o <<= 1) {
		const int y = __shfl_up_sync(0xffffffffu, x, o);
		if (lane >= o)
			x += y;
	}
	if (lane == 31)
		scratch[warp] = x;
	__syncthreads();
	int before = x - s;
	for (int w = 0; w < warp; w++)
		before += scratch[w];
#pragma unroll
	for (int i = 0; i < 3; i++)
		if (tid * 3 + i < p.n_groups)
			tab[tid * 3 + i + 1] = before + inc[i];
	if (tid == 0)
		tab[0] = 0;
	__syncthreads();
}

/* ---- producer ----------------------------------------------------------------- */

/* The weight tile of one stage by the tensor copy engine: box {W_BOX, 256, 1} at (k, n0, group) of
 * the map (k3gemm's wg_launch: {K or K / 2 bytes, N, groups}, the 128- or 32-byte swizzle, rows past
 * N zero-filled); its bytes counted on `bar`. */
__device__ __forceinline__ void tma_load_w(void *dst, const CUtensorMap *map, int c0, int c1, int c2, uint64_t *bar)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(k3_smem_u32(dst)),
		     "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(k3_smem_u32(bar))
		     : "memory");
}

/* The same copy of a box {W_BOX, 64, 1} into the shared memory of every CTA in `mask` (same
 * offset), its bytes counted on each one's barrier at the offset of `bar`. */
__device__ __forceinline__ void tma_load_w_mc(void *dst, const CUtensorMap *map, int c0, int c1, int c2, uint64_t *bar,
					      uint16_t mask)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
		     " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(k3_smem_u32(dst)),
		     "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(k3_smem_u32(bar)), "h"(mask)
		     : "memory");
}

/* Token rows' k block by the tensor copy engine (XV_TX): the box of the map {K, rows} (a_map():
 * {64 BF16, 16 rows}) at (k, row) into the 128-byte rows at dst (2 KB aligned), in the 128-byte
 * swizzle (row r's 16-byte chunk c lands at c ^ (r & 7), as the cp.async copies put it); rows
 * outside the map read as zeros, their bytes counted all the same. */
__device__ __forceinline__ void tma_load_rows(void *dst, const CUtensorMap *map, int k, int row, uint64_t *bar)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(k3_smem_u32(dst)),
		     "l"(reinterpret_cast<uint64_t>(map)), "r"(k), "r"(row), "r"(k3_smem_u32(bar))
		     : "memory");
}

/* `bytes` more expected on bar's current phase, no arrival (the thread's own copy after it). */
__device__ __forceinline__ void mbar_expect_tx_only(uint64_t *bar, uint32_t bytes)
{
	asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(k3_smem_u32(bar)), "r"(bytes)
		     : "memory");
}

constexpr int MC_ROWS = 64; /* cluster mode: weight rows of one tensor copy (a quarter tile) */

/* Kernel extras (the XV template bits; kernel_variant()): XV_FGLU, SiTU-GLU through tanh.approx
 * (epilogue_nb); XV_ONE, one epilogue a kernel (epilogue_nb for the widest tile, after the width
 * switch, stopping after the tile's last group of 8 tokens) instead of one a width: the
 * epilogue is straight-line code run once a tile, and one copy a width (15 in the wide kernel,
 * ~3000 instructions each) did not stay in the instruction cache (round 22: ncu's no-instruction
 * stalls, the epilogue ~13 of 27 ms at BF16 w13). The others leave a stage out, for
 * measurements only (the outputs are then wrong): XV_NOEPI no epilogue, XV_NOFEED no copies (the
 * stages stale), XV_NOMMA no MMAs. */

/* XV_PP: row J of this thread's token rows that hold a token for every thread (no zero-fill):
 * 16 bytes from xp[J] + O into the stage at d + 2048 J (rows r8 + 16 J share r8's swizzle), then
 * xp[J] on by ADV bytes (the k block pair's 256 BF16 bytes, XV_F8's 128 E4M3 ones; 0: not). */
template <int J, int O, int ADV, int NR>
__device__ __forceinline__ void pp_row(unsigned char *d, const unsigned char *(&xp)[NR])
{
	if constexpr (J < NR) {
		k3_cp_async16(d + J * 16 * 128, xp[J] + O);
		if constexpr (ADV != 0)
			xp[J] += ADV;
	}
}

/* XV_PP: rows 0 .. n - 1 by pp_row, in a switch that falls through: one jump a k block where the
 * LEAN copies test each row (n is the same for the whole warpgroup: no divergence). */
template <int O, int ADV, int NR>
__device__ __forceinline__ void pp_rows(unsigned char *d, const unsigned char *(&xp)[NR], int n)
{
	static_assert(NR <= 9, "the cases below: rows 0 .. 8 (TT_RSV / 16 - 1)");
	switch (n) {
	case 9:
		pp_row<8, O, ADV>(d, xp);
		[[fallthrough]];
	case 8:
		pp_row<7, O, ADV>(d, xp);
		[[fallthrough]];
	case 7:
		pp_row<6, O, ADV>(d, xp);
		[[fallthrough]];
	case 6:
		pp_row<5, O, ADV>(d, xp);
		[[fallthrough]];
	case 5:
		pp_row<4, O, ADV>(d, xp);
		[[fallthrough]];
	case 4:
		pp_row<3, O, ADV>(d, xp);
		[[fallthrough]];
	case 3:
		pp_row<2, O, ADV>(d, xp);
		[[fallthrough]];
	case 2:
		pp_row<1, O, ADV>(d, xp);
		[[fallthrough]];
	case 1:
		pp_row<0, O, ADV>(d, xp);
		[[fallthrough]];
	default:
		break;
	}
}

/* XV_PP ("wide2rqp", 2026-12-04m, the grouped default; gathered launches of the RQ kernel:
 * w13): the k blocks of one tile, as produce()'s XV_RQ | XV_LEAN loop copies them (the same bytes
 * to the same places: the weight tile by thread 0's tensor copy, the scale words of a pair in its
 * even k block, the token rows by 16-byte cp.async, zero-filled past the tile's tokens), with the
 * token rows' addresses made once a tile instead of once a k block. Thread pt copies chunk ch of
 * rows r8 + 16 i, i < nlive = ceil(ntok / 16) (the same for every thread); rows i < nlive - 1 hold
 * a token for every thread (r8 + 16 i < 16 (nlive - 1) < ntok), only row nlive - 1 may be zero-
 * filled. So per tile: one 64-bit pointer a row (row, chunk; advanced 256 bytes a k block pair)
 * and the last row's pointer, zero-fill and stage offset; per k block: a jump into pp_rows(), one
 * cp.async a row with an immediate offset (+0 / +128 bytes, the pair's k blocks unrolled; nkb is
 * even, K % 128 == 0), one 64-bit add a row a pair. Why: the LEAN loop's ~115 producer
 * instructions a k block (10 copies; ~60 integer address and predicate instructions, 7 branches,
 * 35 % of its stalls fixed-latency waits on the 64-bit address chains) were the k block's critical
 * path for w13 at T = 4K (bench/results/k3-kernels-h200-2026-12-03t, last paragraph). Needs
 * p.a_index (wg_launch() keeps XV_PP only for gathered launches). */
template <class C, int TTV, bool F8 = false>
__device__ __forceinline__ void produce_pp(const params &p, const CUtensorMap *tmw, unsigned char *sm, uint64_t *full,
					   uint64_t *empty, const tile &tl, const uint8_t *const (&sq)[TW / 128],
					   const bool (&sok)[TW / 128], int &s, uint32_t &ph)
{
	/* F8 (XV_F8, the FP8 kernel): the token rows are E4M3 (p.aq, K bytes a row), gathered or not
	 * (a_index null: the grouped rows in place); a k block pair's 128 bytes a row all go into its
	 * even stage (the same 8 chunks at the same places as a BF16 k block's), the odd stage gets
	 * the weight tile only. */
	constexpr int NR = TTV / 16 - 1; /* rows in pp_rows(); the tile's last row apart */
	static_assert(NR >= 1, "token tile");
	const int pt = (int)threadIdx.x, ch = pt & 7, r8 = pt >> 3;
	const int ntok = (int)(tl.re - tl.rb), nlive = (ntok + 15) >> 4, nfull = nlive - 1;
	const uint32_t row_bytes = (uint32_t)(F8 ? p.K : 2 * p.K);
	const unsigned char *a0 = (F8 ? p.aq : reinterpret_cast<const unsigned char *>(p.a)) + ch * 16;
	auto arow = [&](int r) { return (uint32_t)(p.a_index ? p.a_index[tl.rb + r] : (int32_t)(tl.rb + r)); };
	const unsigned char *xp[NR];
#pragma unroll
	for (int i = 0; i < NR; i++) /* rows past nfull: never read */
		xp[i] = a0 + (size_t)(i < nfull ? arow(r8 + 16 * i) : 0u) * row_bytes;
	const int rl = r8 + 16 * nfull; /* the last row (none where nlive == 0) */
	const bool lok = nlive > 0 && rl < ntok;
	const unsigned char *xl = a0 + (size_t)(lok ? arow(rl) : 0u) * row_bytes;
	const uint32_t d0 = (uint32_t)(r8 * 128 + ((ch ^ (r8 & 7)) << 4)), dl = d0 + (uint32_t)nfull * 16 * 128;
	const int nkb = p.K / KB;
	auto kblock = [&](int kb, auto odd) {
		constexpr int h = decltype(odd)::value;
		wait_or_trap(&empty[s], ph ^ 1u);
		unsigned char *st = sm + C::stage_off(s);
		if (pt == 0) { /* this thread's arrival carries the tile's bytes */
			k3_mbar_expect_tx(&full[s], (uint32_t)C::W_BYTES);
			tma_load_w(st + C::OFF_W, tmw, (kb + h) * C::W_BOX, tl.n0, tl.g, &full[s]);
		}
		if constexpr (F8) {
			if constexpr (h == 0) {
				if (nlive > 0)
					k3_cp_async16_zfill(st + dl, xl, lok);
				pp_rows<0, 2 * KB>(st + d0, xp, nfull);
			}
		} else {
			if (nlive > 0)
				k3_cp_async16_zfill(st + dl, xl + h * KB * 2, lok);
			pp_rows<h * KB * 2, h == 1 ? 2 * KB * 2 : 0>(st + d0, xp, nfull);
		}
		if constexpr (h == 0) {
#pragma unroll
			for (int i = 0; i < TW / 128; i++)
				k3_cp_async4_zfill(st + C::OFF_S + (pt + 128 * i) * 4, sq[i] + kb * 2, sok[i]);
		}
		k3_cp_async_arrive(&full[s]);
		rq_advance<C::STAGES>(s, ph);
	};
#pragma unroll 1
	for (int kb = 0; kb < nkb; kb += 2) {
		kblock(kb, std::integral_constant<int, 0>{});
		kblock(kb, std::integral_constant<int, 1>{});
		xl += F8 ? 2 * KB : 2 * KB * 2;
	}
}

template <bool FP4, bool TMA, bool CLU, int TTV, int XV>
__device__ __forceinline__ void produce(const params &p, const CUtensorMap *tmw, const CUtensorMap *tma, unsigned char *sm,
					uint64_t *full, uint64_t *empty, const int32_t *tab, int total)
{
	using C = wcfg<FP4, TTV, XV & (XV_F8 | XV_F8P)>; /* the stages' places (XV_F8P: produce_pp() only) */
	const int pt = (int)threadIdx.x; /* 0 .. 127 */
	const int ch = pt & 7, r8 = pt >> 3; /* BF16 tiles: 16-byte chunk ch of rows r8 + 16 i */
	const int nkb = p.K / KB;
	const int ncl = CLU ? (int)cluster_size() : 1, rank = CLU ? (int)cluster_rank() : 0;
	const uint16_t mask = (uint16_t)((1u << ncl) - 1u);
	constexpr bool feed = !(XV & XV_NOFEED); /* measurements: no copies, stale stages */
	constexpr bool LEAN = (XV & XV_LEAN) != 0;
	/* XV_RQ: the stage cursor by increments, the scale words of a k block pair copied into the
	 * even k block's stage only (the consumers keep them in registers for the odd one), from
	 * pointers made once a tile. */
	constexpr bool RQ = FP4 && (XV & XV_RQ) != 0;
	/* XV_TX (on XV_RQ; launches without a_index, the grouped rows contiguous: w2): the token tile
	 * of a k block by tensor copies of 16 rows each (box {64 BF16, 16}, a_map()), copy j from
	 * producer thread j, which expects its 2 KB on the stage's barrier first; rows past the
	 * tile's tokens are the next group's or, past the map, zeros (their output columns are not
	 * stored). Instead of 16-byte cp.async copies with their addresses: ~115 producer
	 * instructions a k block were the k block's critical path at T = 4K
	 * (bench/results/k3-kernels-h200-2026-12-03t). (A tensor copy a row, which would gather: 2x
	 * slower than the cp.async copies, 2026-12-03u: the copy engine takes ~25 cycles a
	 * 128-byte box.) */
	constexpr bool TX = RQ && (XV & XV_TX) != 0 && feed;
	/* XV_PP (on XV_RQ | XV_LEAN; gathered launches, where XV_TX does not run: w13): the token
	 * rows from pointers made once a tile, the k blocks in pairs (produce_pp()). */
	constexpr bool PP = RQ && LEAN && (XV & XV_PP) != 0 && !TX && feed;
	static_assert(!PP || (TMA && !CLU), "XV_PP: the weight tile by one tensor copy, no clusters");
	static_assert(!(XV & XV_F8) || PP, "XV_F8: the token rows by produce_pp()");
	int it = 0, s_rq = 0;
	uint32_t ph_rq = 0;
	for (int t = (int)blockIdx.x / ncl; t < total; t += (int)gridDim.x / ncl) {
		const tile tl = decode<TTV>(p, tab, t, rank, ncl);
		const int ntok = (int)(tl.re - tl.rb), xrows = (ntok + 15) & ~15;
		int32_t xrow[TX ? 1 : TTV / 16]; /* A row of token row r8 + 16 i, -1: zeros (TX: of row 16 pt) */
		if constexpr (TX) {
			xrow[0] = (int32_t)tl.rb + 16 * pt;
		} else if constexpr (!PP) {
#pragma unroll
			for (int i = 0; i < TTV / 16; i++) {
				const int r = r8 + 16 * i;
				xrow[i] = r < ntok ? (p.a_index ? p.a_index[tl.rb + r] : (int32_t)(tl.rb + r)) : LEAN ? 0 : -1;
			}
		}
		/* Weight rows of this thread: BF16 r8 + 16 i (chunk ch); MXFP4 (pt >> 1) + 64 i (half
		 * pt & 1), scales pt + 128 i. Rows past N read as zeros. */
		const int wrows = min(TW, p.N - tl.n0);
		const size_t wrow0 = (size_t)tl.g * p.N + tl.n0;
		const uint8_t *sq[TW / 128]; /* RQ: this thread's scale rows pt + 128 i (row 0 past N) */
		bool sok[TW / 128];
#pragma unroll
		for (int i = 0; i < TW / 128; i++) {
			sok[i] = pt + 128 * i < wrows;
			sq[i] = p.ws + (sok[i] ? (wrow0 + pt + 128 * i) * (size_t)(p.K / 32) : 0);
		}
		if constexpr (PP) {
			produce_pp<C, TTV, (XV & XV_F8) != 0>(p, tmw, sm, full, empty, tl, sq, sok, s_rq, ph_rq);
		} else {
#pragma unroll 1
			for (int kb = 0; kb < nkb; kb++, it++) {
				const int s = RQ ? s_rq : it % C::STAGES;
				wait_or_trap(&empty[s], RQ ? ph_rq ^ 1u : (uint32_t)(((it / C::STAGES) & 1) ^ 1));
				unsigned char *st = sm + (size_t)s * C::STAGE;
				if (TMA && pt == 0 && !feed) {
					k3_mbar_arrive(&full[s]);
				} else if (TMA && pt == 0) { /* this thread's arrival carries the tile's bytes */
					k3_mbar_expect_tx(&full[s], (uint32_t)C::W_BYTES);
					if (CLU) /* quarter b of the tile from CTA b % ncl, to every CTA of the cluster */
						for (int b = rank; b < TW / MC_ROWS; b += ncl)
							tma_load_w_mc(st + C::OFF_W + b * (C::W_BYTES / (TW / MC_ROWS)), tmw,
								      kb * C::W_BOX, tl.n0 + b * MC_ROWS, tl.g, &full[s], mask);
					else
						tma_load_w(st + C::OFF_W, tmw, kb * C::W_BOX, tl.n0, tl.g, &full[s]);
				}
				if constexpr (TX) {
					if (16 * pt < xrows) {
						mbar_expect_tx_only(&full[s], 16 * KB * 2);
						tma_load_rows(st + pt * 16 * 128, tma, kb * KB, xrow[0], &full[s]);
					}
				} else if constexpr (LEAN) {
					/* XV_LEAN: one multiply-add a row from the k block's base (rows past the tile's
					 * tokens read row 0's address with no bytes: zero-filled); the rows' swizzle is
					 * r8's (r & 7 == r8 & 7), so the destinations are immediate offsets. */
					const unsigned char *a0 = reinterpret_cast<const unsigned char *>(p.a + kb * KB + ch * 8);
					unsigned char *d0 = st + r8 * 128 + ((ch ^ (r8 & 7)) << 4);
#pragma unroll
					for (int i = 0; i < TTV / 16; i++)
						if (feed && r8 + 16 * i < xrows)
							k3_cp_async16_zfill(d0 + i * 16 * 128,
									    a0 + (size_t)(uint32_t)xrow[i] * (uint32_t)(2 * p.K),
									    r8 + 16 * i < ntok);
				} else {
#pragma unroll
					for (int i = 0; i < TTV / 16; i++) {
						const int r = r8 + 16 * i;
						if (feed && r < xrows) {
							const bool ok = xrow[i] >= 0;
							const uint16_t *src = p.a + (ok ? (size_t)xrow[i] * p.K + kb * KB + ch * 8 : 0);
							k3_cp_async16_zfill(st + r * 128 + ((ch ^ (r & 7)) << 4), src, ok);
						}
					}
				}
				if constexpr (FP4 && !TMA) {
					const uint8_t *wsrc = p.wp + (wrow0 + (pt >> 1)) * (size_t)(p.K / 2) + kb * (KB / 2) + (pt & 1) * 16;
					const size_t wstep = (size_t)64 * (p.K / 2);
#pragma unroll 1
					for (int i = 0; i < TW * 2 / 128; i++, wsrc += wstep) {
						const int j = (pt >> 1) + 64 * i, h = pt & 1;
						const bool ok = j < wrows;
						k3_cp_async16_zfill(st + C::OFF_W + k3_wg_fp4_half_offset(j, h), ok ? wsrc : p.wp, ok);
					}
				}
				if constexpr (RQ) {
					if (!(kb & 1)) {
#pragma unroll
						for (int i = 0; i < TW / 128; i++)
							k3_cp_async4_zfill(st + C::OFF_S + (pt + 128 * i) * 4, sq[i] + kb * 2, sok[i]);
					}
				} else if constexpr (FP4) {
					const uint8_t *ssrc = p.ws + (wrow0 + pt) * (size_t)(p.K / 32) + (kb & ~1) * 2;
					const size_t sstep = (size_t)128 * (p.K / 32);
#pragma unroll 1
					for (int i = 0; i < TW / 128; i++, ssrc += sstep) {
						const int j = pt + 128 * i;
						const bool ok = j < wrows;
						k3_cp_async4_zfill(st + C::OFF_S + j * 4, ok ? ssrc : p.ws, ok);
					}
				} else if constexpr (!TMA) {
					const uint16_t *wsrc = p.w + (wrow0 + r8) * (size_t)p.K + kb * KB + ch * 8;
					const size_t wstep = (size_t)16 * p.K;
#pragma unroll 4
					for (int i = 0; i < TW / 16; i++, wsrc += wstep) {
						const int j = r8 + 16 * i;
						const bool ok = j < wrows;
						k3_cp_async16_zfill(st + C::OFF_W + j * 128 + ((ch ^ (j & 7)) << 4), ok ? wsrc : p.w, ok);
					}
				}
				k3_cp_async_arrive(&full[s]);
				if constexpr (RQ)
					rq_advance<C::STAGES>(s_rq, ph_rq);
			}
		}
	}
	k3_cp_async_wait_all(); /* nothing in flight when the thread exits */
}

/* The MXFP4 producer of the expander kernel (XV_XP; wcfg's XP layout): the producer warpgroup
 * feeds the BF16 consumers. For each k block `it` of the CTA's tiles, in order:
 *  - waits until stage it % STAGES is released, copies the token tile into it by cp.async (as
 *    produce(): rows gathered through a_index, zero-filled past the tile's tokens) and arrives on
 *    its `full` barrier when they landed (128 arrivals);
 *  - issues the raw MXFP4 tile of k block it + RSTAGES - 1 (one TMA copy of [256][32 bytes] in the
 *    32-byte swizzle, k3_gemm_wg_layout.cuh, by thread 0) and its rows' 4 scale bytes (cp.async)
 *    into raw stage (it - 1) % RSTAGES, freed by the last k block's closing barrier: the HBM
 *    reads run RSTAGES - 1 k blocks ahead of the expansion;
 *  - waits for the raw tile of k block it, expands it into the stage's BF16 weight tile (thread
 *    pt: 16-byte chunk c = pt % 8, k 8c .. 8c + 7, of rows pt / 8 + 16 i; one 4-byte read of 8
 *    nibbles, k3_e2m1x8_to_bf16x8, the scale as a BF16 product, exact as in load_a_fp4; one
 *    16-byte store at the 128-byte swizzle's place, as the BF16 kernel's TMA writes it: conflict-
 *    free reads and writes), fences the generic writes for wgmma's async-proxy reads and arrives
 *    on `full` (128 more arrivals); then a barrier of the warpgroup (named barrier 3) before the
 *    raw stage is rewritten.
 * Budget at 176-token chunks: a k block is 256 x 176 x 64 MACs, ~1410 tensor cycles; its
 * expansion ~16 x 25 instructions a producer thread (~400 issue slots of each scheduler). */
template <int TTV, int XV>
__device__ __forceinline__ void produce_xp(const params &p, const CUtensorMap *tmw, unsigned char *sm, uint64_t *full,
					   uint64_t *empty, uint64_t *rfull, const int32_t *tab, int total)
{
	using C = wcfg<true, TTV, XV>;
	static_assert(C::XP, "the expander layout");
	const int pt = (int)threadIdx.x; /* 0 .. 127 */
	const int ch = pt & 7, r8 = pt >> 3;
	const int nkb = p.K / KB;
	/* The raw tiles' cursor: tile rt (its k block rkb), rq raw tiles issued so far. */
	int rt = (int)blockIdx.x, rkb = 0, rq = 0;
	int rg = 0, rn0 = 0; /* its group and first weight row */
	if (rt < total) {
		const tile x = decode<TTV>(p, tab, rt);
		rg = x.g, rn0 = x.n0;
	}
	auto issue_raw = [&]() {
		if (rt >= total)
			return;
		const int r = rq % C::RSTAGES;
		unsigned char *rs = sm + C::OFF_RAW + (size_t)r * C::R_STAGE;
		if (pt == 0) { /* the warpgroup's generic reads of this raw stage (barrier 3) before the copy */
			k3_fence_proxy_async();
			k3_mbar_expect_tx(&rfull[r], (uint32_t)C::R_W);
			tma_load_w(rs, tmw, rkb * C::W_BOX, rn0, rg, &rfull[r]);
		}
		const int wrows = min(TW, p.N - rn0);
		const uint8_t *ssrc = p.ws + ((size_t)rg * p.N + rn0 + pt) * (size_t)(p.K / 32) + (rkb & ~1) * 2;
#pragma unroll
		for (int i = 0; i < TW / 128; i++) {
			const int j = pt + 128 * i;
			const bool ok = j < wrows;
			k3_cp_async4_zfill(rs + C::R_W + j * 4, ok ? ssrc + (size_t)i * 128 * (p.K / 32) : p.ws, ok);
		}
		k3_cp_async_arrive(&rfull[r]);
		rq++;
		if (++rkb == nkb) {
			rkb = 0;
			rt += (int)gridDim.x;
			if (rt < total) {
				const tile x = decode<TTV>(p, tab, rt);
				rg = x.g, rn0 = x.n0;
			}
		}
	};
	for (int i = 0; i < C::RSTAGES - 1; i++)
		issue_raw();
	/* The expansion's fixed places: raw word (c & 3) of half c >> 2 of each row (the rows'
	 * swizzle bit (j >> 2) & 1 is that of r8), BF16 chunk c ^ (j & 7) (j & 7 = r8 & 7). */
	const int roff = (((ch >> 2) ^ (r8 >> 2)) & 1) * 16 + (ch & 3) * 4;
	const int woff = r8 * 128 + ((ch ^ (r8 & 7)) << 4);
	/* The A row of each token row of the tile (-1: zeros), in shared memory rather than in 11
	 * registers a thread (2026-12-02g call 1: the producer's 72 registers spilled, 3 local loads
	 * a k block that missed L1 behind the 227 KB of shared memory: ~4300 cycles a k block). */
	int32_t *sxrow = reinterpret_cast<int32_t *>(sm + C::OFF_XROW);
	int it = 0;
	for (int t = (int)blockIdx.x; t < total; t += (int)gridDim.x) {
		const tile tl = decode<TTV>(p, tab, t);
		const int ntok = (int)(tl.re - tl.rb), xrows = (ntok + 15) & ~15;
		/* (every read of the last tile's rows ended at the last k block's barrier 3) */
		for (int r = pt; r < TTV; r += 128)
			sxrow[r] = r < ntok ? (p.a_index ? p.a_index[tl.rb + r] : (int32_t)(tl.rb + r)) : -1;
		k3_named_sync(3, 128);
#pragma unroll 1
		for (int kb = 0; kb < nkb; kb++, it++) {
			const int s = it % C::STAGES, r = it % C::RSTAGES;
			wait_or_trap(&empty[s], (uint32_t)(((it / C::STAGES) & 1) ^ 1));
			unsigned char *st = sm + (size_t)s * C::STAGE;
#pragma unroll
			for (int i = 0; i < TTV / 16; i++) {
				const int rr = r8 + 16 * i;
				if (rr < xrows) {
					const int32_t xr = sxrow[rr];
					const bool ok = xr >= 0;
					const uint16_t *src = p.a + (ok ? (size_t)xr * p.K + kb * KB + ch * 8 : 0);
					k3_cp_async16_zfill(st + rr * 128 + ((ch ^ (rr & 7)) << 4), src, ok);
				}
			}
			k3_cp_async_arrive(&full[s]);
			issue_raw(); /* k block it + RSTAGES - 1 */
			wait_or_trap(&rfull[r], (uint32_t)((it / C::RSTAGES) & 1));
			const unsigned char *raw = sm + C::OFF_RAW + (size_t)r * C::R_STAGE;
			const unsigned char *sc = raw + C::R_W + (2 * (kb & 1) + (ch >> 2)); /* byte sb of each row's 4 */
			unsigned char *w = st + C::OFF_W + woff;
#pragma unroll 8
			for (int i = 0; i < TW / 16; i++) {
				const int j = r8 + 16 * i;
				const uint32_t q = *reinterpret_cast<const uint32_t *>(raw + j * 32 + roff);
				const uint32_t s2 = k3_e8m0_to_bf16x2(sc[j * 4]);
				uint32_t o[4];
				k3_e2m1x8_to_bf16x8(q, o);
				*reinterpret_cast<uint4 *>(w + i * 16 * 128) =
					make_uint4(k3_bf16x2_mul(o[0], s2), k3_bf16x2_mul(o[1], s2), k3_bf16x2_mul(o[2], s2),
						   k3_bf16x2_mul(o[3], s2));
			}
			k3_fence_proxy_async(); /* the generic writes, for the consumers' wgmma reads */
			k3_mbar_arrive(&full[s]);
			k3_named_sync(3, 128); /* every read of raw stage r done before it is rewritten */
		}
	}
	k3_cp_async_wait_all(); /* nothing in flight when the thread exits */
}

/* ---- consumers ---------------------------------------------------------------- */

/* MXFP4: A fragments of k steps 2 h and 2 h + 1 of the stage at st for this thread's two m64
 * blocks (k3_gemm_wg_layout.cuh), scaled (exact: E8M0 is a power of two). Both k steps share
 * their scale group: each of the lane's 4 scales is loaded and converted once. */
__device__ __forceinline__ void load_a_fp4(uint32_t (&a)[2][2][4], const unsigned char *st, int kb, int h, int wr0,
					   int lane)
{
	using C = wcfg<true>;
	const int sb = k3_wg_fp4_scale_byte(kb, 2 * h);
#pragma unroll
	for (int mb = 0; mb < 2; mb++) {
		uint32_t w0, w1;
		k3_wg_fp4_scale_words(st + C::OFF_S, wr0 + mb * 64, lane, &w0, &w1);
		const uint32_t s0 = k3_e8m0_to_bf16x2((w0 >> (8 * sb)) & 0xffu);
		const uint32_t s1 = k3_e8m0_to_bf16x2((w1 >> (8 * sb)) & 0xffu);
#pragma unroll
		for (int j = 0; j < 2; j++) {
			uint32_t o[4];
			k3_wg_fp4_fragment_raw(st + C::OFF_W, 2 * h + j, wr0 + mb * 64, lane, o);
			a[j][mb][0] = k3_bf16x2_mul(o[0], s0);
			a[j][mb][1] = k3_bf16x2_mul(o[1], s1);
			a[j][mb][2] = k3_bf16x2_mul(o[2], s0);
			a[j][mb][3] = k3_bf16x2_mul(o[3], s1);
		}
	}
}

/* MXFP4 (XV_RS1): the lane's 4 scales of k steps ks0, ks0 + 1 (ks0 even: one scale group) of
 * the stage at st (token tiles of TTV rows), as BF16 pairs: sc[m64 block][row g, row g + 8];
 * loaded and converted once for the two k steps (one group or two). */
template <int TTV, bool LEAN = false, bool RP = false>
__device__ __forceinline__ void scales_fp4k(uint32_t (&sc)[2][2], const unsigned char *st, int kb, int ks0, int wr0,
					    int lane)
{
	using C = wcfg<true, TTV>;
	const int sb = k3_wg_fp4_scale_byte(kb, ks0);
	/* XV_LEAN: byte sb of the word into bytes 0 and 2 (zeros in 1, 3), shifted into both BF16
	 * exponents: 2 instructions a scale instead of 8; exact for E8M0 1 .. 254, 0 gives 0 (not
	 * 2^-127) and 255 infinity (not NaN), as the decode gemv's scales (2026-12-01x). XV_RP (the
	 * tile layout's fragments are the values times 2^-126): 2^(s - 1), exponent field s + 126, in
	 * the multiply-add that replaces the shift (s 0 .. 128, exact; k3_gemm_repack_wg()). */
	const uint32_t sel = (uint32_t)sb * 0x101u + 0x4040u, bias = RP ? 0x3f003f00u : 0u;
#pragma unroll
	for (int mb = 0; mb < 2; mb++) {
		uint32_t w0, w1;
		k3_wg_fp4_scale_words(st + C::OFF_S, wr0 + mb * 64, lane, &w0, &w1);
		sc[mb][0] = LEAN ? k3_prmt(w0, 0u, sel) * 128u + bias : k3_e8m0_to_bf16x2((w0 >> (8 * sb)) & 0xffu);
		sc[mb][1] = LEAN ? k3_prmt(w1, 0u, sel) * 128u + bias : k3_e8m0_to_bf16x2((w1 >> (8 * sb)) & 0xffu);
	}
}

/* MXFP4 (XV_RS1): the unscaled A fragments of the KS k steps ks0 .. ks0 + KS - 1 (KS 1 or 2,
 * within one scale group) of the stage at st: the shared-memory loads and the E2M1 expansion.
 * RP (XV_RP, the tile layout of k3_gemm_wg_rp.cuh): one 4- or 8-byte load an m64 block, one
 * rotate or shift and one LOP3 a BF16 pair (the values times 2^-126). */
template <int TTV, int KS, bool RP = false>
__device__ __forceinline__ void raw_a_fp4k(uint32_t (&o)[KS][2][4], const unsigned char *st, int ks0, int wr0, int lane)
{
	using C = wcfg<true, TTV>;
#pragma unroll
	for (int mb = 0; mb < 2; mb++) {
		if constexpr (RP) {
			const unsigned char *src = st + C::OFF_W + (wr0 + mb * 64) * 32 + k3_wgrp_lane_offset(lane) + ks0 * 4;
			uint32_t q[KS];
			if constexpr (KS == 2) {
				const uint2 v = *reinterpret_cast<const uint2 *>(src); /* ks0 even: 8-byte aligned */
				q[0] = v.x, q[1] = v.y;
			} else {
				q[0] = *reinterpret_cast<const uint32_t *>(src);
			}
#pragma unroll
			for (int j = 0; j < KS; j++)
				k3_wgrp_to_bf16x8(q[j], o[j][mb]);
		} else {
#pragma unroll
			for (int j = 0; j < KS; j++)
				k3_wg_fp4_fragment_raw(st + C::OFF_W, ks0 + j, wr0 + mb * 64, lane, o[j][mb]);
		}
	}
}

/* MXFP4 (XV_RS1): the A register set a = the unscaled fragments o (raw_a_fp4k) times their scales
 * sc (scales_fp4k; exact: E8M0 is a power of two). */
template <int KS>
__device__ __forceinline__ void scale_a_fp4k(uint32_t (&a)[KS][2][4], const uint32_t (&o)[KS][2][4],
					     const uint32_t (&sc)[2][2])
{
#pragma unroll
	for (int mb = 0; mb < 2; mb++) {
#pragma unroll
		for (int j = 0; j < KS; j++) {
			a[j][mb][0] = k3_bf16x2_mul(o[j][mb][0], sc[mb][0]);
			a[j][mb][1] = k3_bf16x2_mul(o[j][mb][1], sc[mb][1]);
			a[j][mb][2] = k3_bf16x2_mul(o[j][mb][2], sc[mb][0]);
			a[j][mb][3] = k3_bf16x2_mul(o[j][mb][3], sc[mb][1]);
		}
	}
}

/* Every read of stage s by this thread's MMAs is done: one arrival of the thread on the stage's
 * `empty` barrier (256 a phase); in a cluster (CLU), one of each warp (lane 0, after the warp's
 * threads) on the barrier of every CTA of the cluster, whose producers all write the stage
 * (8 ncl a phase). */
template <bool CLU>
__device__ __forceinline__ void release(uint64_t *bar)
{
	if constexpr (CLU) {
		__syncwarp();
		if ((threadIdx.x & 31) == 0) {
			const uint32_t n = cluster_size();
			for (uint32_t c = 0; c < n; c++)
				mbar_arrive_cta(bar, c);
		}
	} else {
		k3_mbar_arrive(bar);
	}
}

/* Stage `it` ready (the copies landed): wait, then fence the proxies for wgmma's reads. */
template <bool FP4, int TTV, int XV = 0>
__device__ __forceinline__ const unsigned char *stage_ready(unsigned char *sm, uint64_t *full, int it)
{
	using C = wcfg<FP4, TTV, XV>;
	const int s = it % C::STAGES;
	wait_or_trap(&full[s], (uint32_t)((it / C::STAGES) & 1));
	k3_fence_proxy_async();
	return sm + (size_t)s * C::STAGE;
}

/* d[0 .. N / 2) of one m64 block's accumulators += A (shared, desc_a) * B (shared, desc_b): the
 * float[64] forms for N <= 128 (round q's instantiations), the wide ones past it. */
template <int N, int L>
__device__ __forceinline__ void mma_ss(float (&d)[L], uint64_t desc_a, uint64_t desc_b)
{
	if constexpr (L == 64)
		k3_wgmma_ss<N>(d, desc_a, desc_b);
	else
		k3_wgmma_ssw<N>(*reinterpret_cast<float(*)[N / 2]>(&d[0]), desc_a, desc_b);
}

/* d[0 .. N / 2) of one m64 block's accumulators += A (registers) * B (shared, desc_b): as mma_ss. */
template <int N, int L>
__device__ __forceinline__ void mma_rs(float (&d)[L], const uint32_t (&a)[4], uint64_t desc_b)
{
	if constexpr (L == 64)
		k3_wgmma_rs<N>(d, a, desc_b);
	else
		k3_wgmma_rsw<N>(*reinterpret_cast<float(*)[N / 2]>(&d[0]), a, desc_b);
}

/* One group of MXFP4 MMAs (XV_RS1): the KS k steps from ks0 of the stage at xaddr, both m64
 * blocks, A from the register set a; fenced (a was just written) and committed. */
template <int N, int L, int KS>
__device__ __forceinline__ void issue_rs(float (&acc)[2][L], const uint32_t (&a)[KS][2][4], uint32_t xaddr, int ks0)
{
	k3_wgmma_fence();
#pragma unroll
	for (int j = 0; j < KS; j++) {
		const uint64_t desc = k3_wgmma_desc_sw128(xaddr + (ks0 + j) * 32);
		mma_rs<N>(acc[0], a[j][0], desc);
		mma_rs<N>(acc[1], a[j][1], desc);
	}
	k3_wgmma_commit();
}

/* The first groups of an XV_RS1 tile (no MMA of the tile in flight reads set a): the fragments
 * of k steps ks0 .. of the stage at st into set a, scaled by sc, issued. */
template <int N, int TTV, int KS, bool RP, int L>
__device__ __forceinline__ void first_group(float (&acc)[2][L], uint32_t (&a)[KS][2][4], const unsigned char *st,
					    int ks0, const uint32_t (&sc)[2][2], int wr0, int lane)
{
	uint32_t o[KS][2][4];
	raw_a_fp4k<TTV, KS, RP>(o, st, ks0, wr0, lane);
	scale_a_fp4k<KS>(a, o, sc);
	issue_rs<N>(acc, a, k3_smem_u32(st), ks0);
}

/* A later group of an XV_RS1 tile into set a: wait_group 1 retires the group that last read a
 * (the one before the group just issued; k3_wgmma.cuh), then stage `rel` is released (if not
 * null), a = the fragments of k steps ks0 .. of the stage at st times sc, issued. XV_PF ("wide2rf"):
 * the fragments' shared-memory loads and E2M1 expansion before the wait, under the MMAs in
 * flight (8 registers more a thread), so that only the scale products follow it. */
template <int N, int TTV, int KS, bool CLU, bool PF, bool RP, int L>
__device__ __forceinline__ void next_group(float (&acc)[2][L], uint32_t (&a)[KS][2][4], const unsigned char *st,
					   int ks0, const uint32_t (&sc)[2][2], uint64_t *rel, int wr0, int lane)
{
	uint32_t o[KS][2][4];
	if constexpr (PF)
		raw_a_fp4k<TTV, KS, RP>(o, st, ks0, wr0, lane);
	k3_wgmma_wait<1>();
	if (rel)
		release<CLU>(rel);
	if constexpr (!PF)
		raw_a_fp4k<TTV, KS, RP>(o, st, ks0, wr0, lane);
	scale_a_fp4k<KS>(a, o, sc);
	issue_rs<N>(acc, a, k3_smem_u32(st), ks0);
}

/* ---- XV_RQ ("wide2rq", 2026-12-03q): wide2rp's k loop with less around its conversions ----
 * ncu's per-instruction profile of wide2rp at T = 4K (bench/results/k3-kernels-h200-2026-12-03p):
 * the consumer warps seldom wait for their MMAs (wait_group: ~0.1 % of the stall samples); they
 * issue ~230 instructions a k block at ~6.3 cycles each (3 warps a scheduler), of which the
 * conversions are ~100 and the rest stage and barrier indices (it % STAGES with signed division,
 * twice a k block), wgmma descriptors built from addresses (5 a k step), the scale bytes' selector
 * and 8 scale-word loads a k block; the producer ~140 (the 4-byte scale copies in a loop of 64-bit
 * pointer arithmetic, twice a k block). RQ keeps wide2rp's layout, groups, register sets, waits
 * and arithmetic (bit-identical outputs) and changes only that: a stage cursor (index and phase)
 * kept by increments, a descriptor a stage plus immediates, the k loop unrolled over k-block
 * pairs so that the E8M0 byte selectors are immediates, the 4 scale words loaded once a pair
 * (from the even stage, which the producer alone fills with them), each group's fragment words
 * loaded before its wait_group. */

/* The lane's scale words of the k block pair in stage st: sw[m64 block][row g, row g + 8] (MB
 * m64 blocks: 2, or XV_W4's 1). */
template <int TTV, int MB>
__device__ __forceinline__ void rq_scale_words(uint32_t (&sw)[MB][2], const unsigned char *st, int wr0, int lane)
{
	using C = wcfg<true, TTV>;
#pragma unroll
	for (int mb = 0; mb < MB; mb++)
		k3_wg_fp4_scale_words(st + C::OFF_S, wr0 + mb * 64, lane, &sw[mb][0], &sw[mb][1]);
}

/* The BF16 pairs 2^(s - 1) of scale byte sb (k3_wg_fp4_scale_byte()) of the words sw (as
 * scales_fp4k's XV_LEAN | XV_RP, the selector an immediate). */
template <int MB>
__device__ __forceinline__ void rq_scales(uint32_t (&sc)[MB][2], const uint32_t (&sw)[MB][2], int sb)
{
	const uint32_t sel = (uint32_t)sb * 0x101u + 0x4040u; /* a constant in the unrolled k block */
#pragma unroll
	for (int mb = 0; mb < MB; mb++)
#pragma unroll
		for (int h = 0; h < 2; h++)
			sc[mb][h] = k3_prmt(sw[mb][h], 0u, sel) * 128u + 0x3f003f00u;
}

/* The tile-layout words of k steps ks0 .. ks0 + KS - 1 of the lane, both m64 blocks (as
 * raw_a_fp4k's RP loads). */
template <int TTV, int KS, int MB>
__device__ __forceinline__ void rq_load(uint32_t (&q)[KS][MB], const unsigned char *st, int ks0, int wr0, int lane)
{
	using C = wcfg<true, TTV>;
#pragma unroll
	for (int mb = 0; mb < MB; mb++) {
		const unsigned char *src = st + C::OFF_W + (wr0 + mb * 64) * 32 + k3_wgrp_lane_offset(lane) + ks0 * 4;
		if constexpr (KS == 2) {
			const uint2 v = *reinterpret_cast<const uint2 *>(src);
			q[0][mb] = v.x, q[1][mb] = v.y;
		} else {
			q[0][mb] = *reinterpret_cast<const uint32_t *>(src);
		}
	}
}

/* The tile-layout words of the k block's 4 k steps of the lane, both m64 blocks, one 16-byte load
 * each (XV_V16): a quarter warp's 8 lanes read 128 contiguous bytes (k3_wgrp_lane_offset()), no
 * bank conflict, where rq_load's 8-byte loads of two k steps put rows r and r + 4 of a half warp on
 * the same banks (2 wavefronts a quarter warp: ncu of wide2rq4, 2026-12-03s, "L1 Wavefronts
 * Shared Excessive" = ideal on every such load). */
template <int TTV, int MB>
__device__ __forceinline__ void rq_load16(uint32_t (&q)[4][MB], const unsigned char *st, int wr0, int lane)
{
	using C = wcfg<true, TTV>;
#pragma unroll
	for (int mb = 0; mb < MB; mb++) {
		const uint4 v = *reinterpret_cast<const uint4 *>(st + C::OFF_W + (wr0 + mb * 64) * 32 +
								  k3_wgrp_lane_offset(lane));
		q[0][mb] = v.x, q[1][mb] = v.y, q[2][mb] = v.z, q[3][mb] = v.w;
	}
}

/* One k block of an RQ tile: its G groups of KS k steps in the register sets q % 2 (G even), the
 * stage at st (descriptor d0), scale bytes 2 ODD + scale group. FIRST: the tile's first k block
 * (no group of the tile in flight before it: no waits for its first two groups, no stage to
 * release); else the wait before group 1 retires the previous k block's last group, and `rel`
 * (that k block's stage) is released. */
/* XV_F8D ("diag-rqp-fp8", measurements only: outputs wrong): a group's work as an FP8 kernel on
 * the FP8 word form (k3_gemm_wg_rp.cuh) would do it, on wide2rqp's stages as they are: the group's
 * two tile-layout words of an m64 block taken as the FP8 words of rows g and g + 8, each row's
 * table from its scale byte (a per-row floor of 118 as a constant), the decode, and one FP8 MMA of
 * k 32 (the first 32 bytes of the group's 64 in the token tile): the conversions and MMAs a k of
 * an FP8 kernel takes, so that its k loop's time is measured before the layout, the token tile in
 * E4M3 and the epilogue's row and token scales are built. */
template <int N, bool B7, int L, int MB>
__device__ __forceinline__ void f8d_group(float (&acc)[MB][L], uint32_t (&s)[MB][4], const uint32_t (&w)[2][MB],
					  const uint32_t (&sw)[MB][2], int sb, uint64_t desc, bool nomma)
{
	constexpr uint32_t FLOOR = 118u;
#pragma unroll
	for (int mb = 0; mb < MB; mb++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			uint32_t tlo, thi;
			if constexpr (B7) { /* XV_F8B: the floor in the constants, the 7-instruction decode */
				k3_wgf8_table_s(k3_prmt(sw[mb][h], 0u, 0x4440u + (uint32_t)sb), k3_wgf8_klo(FLOOR),
						k3_wgf8_khi(FLOOR), &tlo, &thi);
				k3_wgf8_decode7(w[h][mb], tlo, thi, &s[mb][h], &s[mb][2 + h]);
			} else {
				const uint32_t d = k3_prmt(sw[mb][h], 0u, 0x4440u + (uint32_t)sb) - FLOOR;
				k3_wgf8_table(d, &tlo, &thi);
				k3_wgf8_decode(w[h][mb], tlo, thi, &s[mb][h], &s[mb][2 + h]);
			}
		}
	}
	k3_wgmma_fence();
#pragma unroll
	for (int mb = 0; mb < MB; mb++) {
		if (nomma)
			asm volatile("" ::"r"(s[mb][0]), "r"(s[mb][1]), "r"(s[mb][2]), "r"(s[mb][3]), "l"(desc));
		else
			k3_wgmma_rs8<N>(acc[mb], s[mb], desc);
	}
	k3_wgmma_commit();
}

template <int N, int TTV, bool ODD, bool FIRST, bool CLU, bool V16, bool NOMMA, bool F8D, bool F8B, int L, int KS, int MB>
__device__ __forceinline__ void rq_kblock(float (&acc)[MB][L], uint32_t (&a)[2][KS][MB][4], uint32_t (&sw)[MB][2],
					  const unsigned char *st, uint64_t d0, uint64_t *rel, int wr0, int lane)
{
	constexpr int G = 4 / KS;
	static_assert(G % 2 == 0, "register sets alternate within a k block");
	if constexpr (!ODD)
		rq_scale_words<TTV, MB>(sw, st, wr0, lane);
	uint32_t sc[MB][2];
	uint32_t w16[4][MB]; /* V16: the lane's words of the k block's 4 k steps, one 16-byte load an m64 block */
	if constexpr (V16)
		rq_load16<TTV, MB>(w16, st, wr0, lane);
#pragma unroll
	for (int q = 0; q < G; q++) {
		uint32_t w[KS][MB];
		if constexpr (V16) {
#pragma unroll
			for (int j = 0; j < KS; j++)
#pragma unroll
				for (int mb = 0; mb < MB; mb++)
					w[j][mb] = w16[q * KS + j][mb];
		} else {
			rq_load<TTV, KS, MB>(w, st, q * KS, wr0, lane);
		}
		if (!(FIRST && q < 2))
			k3_wgmma_wait<1>(); /* the group two back, which read set q % 2, has completed */
		if (!FIRST && q == 1)
			release<CLU>(rel); /* that was the previous k block's last group: its stage is read */
		if constexpr (F8D) {
			static_assert(KS == 2 && L == 64, "XV_F8D: 128-token tiles");
			f8d_group<N, F8B>(acc, a[q % 2][0], w, sw, (ODD ? 2 : 0) + q, d0 + (uint64_t)(2 * q), NOMMA);
			continue;
		}
		if ((q * KS) % 2 == 0)
			rq_scales(sc, sw, (ODD ? 2 : 0) + (q * KS) / 2);
		uint32_t(&s)[KS][MB][4] = a[q % 2];
#pragma unroll
		for (int j = 0; j < KS; j++) {
#pragma unroll
			for (int mb = 0; mb < MB; mb++) {
				uint32_t o[4];
				k3_wgrp_to_bf16x8(w[j][mb], o);
				s[j][mb][0] = k3_bf16x2_mul(o[0], sc[mb][0]);
				s[j][mb][1] = k3_bf16x2_mul(o[1], sc[mb][1]);
				s[j][mb][2] = k3_bf16x2_mul(o[2], sc[mb][0]);
				s[j][mb][3] = k3_bf16x2_mul(o[3], sc[mb][1]);
			}
		}
		k3_wgmma_fence();
#pragma unroll
		for (int j = 0; j < KS; j++) {
			const uint64_t desc = d0 + (uint64_t)(2 * (q * KS + j)); /* + 32 bytes a k step, in 16-byte units */
#pragma unroll
			for (int mb = 0; mb < MB; mb++) {
				if constexpr (NOMMA) /* measurements ("diag-rqp-nomma"): no MMA, its A kept live */
					asm volatile("" ::"r"(s[j][mb][0]), "r"(s[j][mb][1]), "r"(s[j][mb][2]), "r"(s[j][mb][3]),
						     "l"(desc));
				else
					mma_rs<N>(acc[mb], s[j][mb], desc);
			}
		}
		k3_wgmma_commit();
	}
}

/* Stage s of the cursor ready: wait for its copies (phase ph), fence the proxies. */
__device__ __forceinline__ void rq_ready(uint64_t *full, int s, uint32_t ph)
{
	wait_or_trap(&full[s], ph);
	k3_fence_proxy_async();
}

/* XV_F8T: byte offset of group j's entry of rows g, g + 8 of block mb in a warp's tables. */
__host__ __device__ __forceinline__ constexpr int f8t_entry(int j, int mb, int g)
{
	return ((j * 2 + mb) * 8 + g) * 16;
}

/* XV_F8: group j's decode: the lane's words w[h][mb] (k step j of rows g + 8 h) through their
 * scale group's tables (scale byte sb = j of sw, the rows' floor constants kc) into the E4M3 A
 * fragments r[mb] (a0 .. a3 as k3_wgmma_rs8 reads them). */
template <int MB>
__device__ __forceinline__ void f8_decode(uint32_t (&r)[MB][4], const uint32_t (&w)[2][MB], const uint32_t (&sw)[MB][2],
					  const uint32_t (&kc)[MB][2][2], uint32_t sb)
{
#pragma unroll
	for (int mb = 0; mb < MB; mb++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			uint32_t tlo, thi;
			k3_wgf8_table_s(k3_prmt(sw[mb][h], 0u, 0x4440u + sb), kc[mb][h][0], kc[mb][h][1], &tlo, &thi);
			k3_wgf8_decode7(w[h][mb], tlo, thi, &r[mb][h], &r[mb][2 + h]);
		}
	}
}

/* XV_F8T (opt-in; 2026-12-05): the scale groups' tables of a k-block pair made once a row and
 * group by the warp together, where f8_decode() makes each in all four lanes of a quad that reads
 * it (the quad's lanes share their rows): lane l makes the 4 groups' tables of row (mb, h, g) =
 * (l / 16, l / 8 % 2, l % 8) of the warp's 32 (wr0 + 64 mb + 8 h + g; kt: that row's floor
 * constants) from its scale word and stores them into the warp's F8T_WARP bytes at tw, group j of
 * rows g, g + 8 of block mb as one 16-byte entry (j, mb, g): {tlo, thi of row g, tlo, thi of row
 * g + 8}, so that a lane reads the two rows of a block by one 16-byte load (8 lanes of distinct g,
 * 128 contiguous bytes: no bank conflict) and the stores of a group are 256 contiguous bytes. The
 * first barrier: every lane's reads of the previous pair's tables are done. */
__device__ __forceinline__ void f8t_tables(unsigned char *tw, const unsigned char *st, const uint32_t (&kt)[2], int wr0,
					   int lane)
{
	using C = wcfg<true, TT>;
	const int mb = lane >> 4, h = (lane >> 3) & 1, g = lane & 7;
	const uint32_t sw = *reinterpret_cast<const uint32_t *>(st + C::OFF_S + (wr0 + 64 * mb + 8 * h + g) * 4);
	__syncwarp();
#pragma unroll
	for (int j = 0; j < 4; j++) {
		uint32_t tlo, thi;
		k3_wgf8_table_s(k3_prmt(sw, 0u, 0x4440u + (uint32_t)j), kt[0], kt[1], &tlo, &thi);
		*reinterpret_cast<uint2 *>(tw + f8t_entry(j, mb, g) + 8 * h) = make_uint2(tlo, thi);
	}
	__syncwarp();
}

/* XV_F8T: f8_decode() with group j's tables read from the warp's entries (f8t_tables()). */
template <int MB>
__device__ __forceinline__ void f8t_decode(uint32_t (&r)[MB][4], const uint32_t (&w)[2][MB], const uint4 (&tb)[MB])
{
#pragma unroll
	for (int mb = 0; mb < MB; mb++) {
		k3_wgf8_decode7(w[0][mb], tb[mb].x, tb[mb].y, &r[mb][0], &r[mb][2]);
		k3_wgf8_decode7(w[1][mb], tb[mb].z, tb[mb].w, &r[mb][1], &r[mb][3]);
	}
}

/* XV_F8 (the FP8 kernel, "wide2f8"; 2026-12-04q): one k block of a tile, wide2rqp's k loop with
 * E4M3 MMAs. The weights are in the FP8-word tile layout (k3_gemm_repack_wgf8(): the tile-layout
 * words' places, each word the 8 weights of one row that an E4M3 A fragment of a k step of 32
 * needs; word 2 q + h of a lane's k block is k step q of row g + 8 h), the scale words as
 * wide2rq's (those of a k block pair loaded in its even block), the token tile E4M3: the pair's
 * 128 k in the even stage (produce_pp()). Group q of the block (two a k block, four a pair: local
 * index j = 2 ODD + q) decodes the four words of the lane's rows through their scale group's tables
 * (k3_wgf8_table_s() with the rows' floor constants kc, k3_wgf8_decode7()) into register set j % S
 * and issues one E4M3 MMA of k 32 an m64 block, reading k step j of the even stage's token tile
 * (descriptor dx). A set is rewritten after wait_group S - 1 has retired the group that read it
 * (none in the tile's first pair, FP, for j < S): S = 2 (the default) keeps one group in flight
 * while the next is decoded; S = 4 (16 registers a set, as many as wide2rq's two BF16 sets) would
 * keep three, but ptxas serializes its MMAs (C7513) and it ran slower (launch_f8()).
 * The even stage is read until the pair's last group retires: the previous pair's two stages
 * (rel: its odd one, rel2: its even one) are released by this pair's group j = S - 1, after the
 * wait that retires the previous pair's last group; the tile's last pair after its wait_group 0
 * (mainloop()). R (XV_F8R, opt-in; 2026-12-05): the odd stage, which no MMA reads (its weight
 * words go through registers), is released by its own pair's last group once that group's words
 * are decoded (`own`), about a pair earlier; rel is then not released again. L (XV_F8L, opt-in;
 * 2026-12-05): the k block's four words a block by one 16-byte load at its start (rq_load16(): a
 * quarter warp's 128 contiguous bytes, no bank conflict; rq_load()'s 8-byte loads of one group
 * take 2 wavefronts a quarter warp), so the second group's words are in registers when its decode
 * starts instead of one shared-load latency after its group begins (round 05d's ncu: the loads
 * right before the decode hold most of the loop's short_sb stalls). The same words: bit for bit. */
template <int N, bool ODD, bool FP, int S, bool R, bool T, int MB, bool L = false>
__device__ __forceinline__ void f8_kblock(float (&acc)[MB][TT / 2], uint32_t (&a)[S][MB][4], uint32_t (&sw)[MB][2],
					  const uint32_t (&kc)[MB][2][2], const unsigned char *st, uint64_t dx,
					  uint64_t *rel, uint64_t *rel2, uint64_t *own, unsigned char *tw,
					  const uint32_t (&kt)[2], int wr0, int lane)
{
	static_assert(S == 2 || S == 4, "register sets: a k block pair's groups in whole rounds");
	if constexpr (!ODD) {
		if constexpr (T) /* XV_F8T: the pair's tables, the warp together */
			f8t_tables(tw, st, kt, wr0, lane);
		else
			rq_scale_words<TT, MB>(sw, st, wr0, lane);
	}
	[[maybe_unused]] uint32_t wl[4][MB]; /* XV_F8L: word 2 q + h of the block (k step q, row g + 8 h) */
	if constexpr (L)
		rq_load16<TT, MB>(wl, st, wr0, lane);
#pragma unroll
	for (int q = 0; q < 2; q++) {
		const int j = (ODD ? 2 : 0) + q; /* the group in the pair */
		uint32_t w[2][MB];
		if constexpr (L) {
#pragma unroll
			for (int mb = 0; mb < MB; mb++)
				w[0][mb] = wl[2 * q][mb], w[1][mb] = wl[2 * q + 1][mb];
		} else {
			rq_load<TT, 2, MB>(w, st, 2 * q, wr0, lane);
		}
		[[maybe_unused]] uint4 tb[MB]; /* XV_F8T: group j's tables of the lane's rows */
		if constexpr (T)
#pragma unroll
			for (int mb = 0; mb < MB; mb++)
				tb[mb] = *reinterpret_cast<const uint4 *>(tw + f8t_entry(j, mb, lane >> 2));
		if (!(FP && j < S))
			k3_wgmma_wait<S - 1>(); /* the group S back, which read set j % S, has completed */
		if (!FP && j == S - 1) { /* the previous pair's groups all retired: both its stages are read */
			if constexpr (!R)
				release<false>(rel);
			release<false>(rel2);
		}
		uint32_t(&r)[MB][4] = a[j % S];
		if constexpr (T)
			f8t_decode<MB>(r, w, tb);
		else
			f8_decode<MB>(r, w, sw, kc, (uint32_t)j);
		if constexpr (R && ODD)
			if (q == 1) /* the pair's last words decoded: the odd stage is read */
				release<false>(own);
		k3_wgmma_fence();
		const uint64_t desc = dx + (uint64_t)(2 * j); /* + 32 bytes a k step */
#pragma unroll
		for (int mb = 0; mb < MB; mb++)
			k3_wgmma_rs8<N>(acc[mb], r[mb], desc);
		k3_wgmma_commit();
	}
}

/* XV_F8M (the FP8 kernel with A in shared memory, "wide2f8m"; 2026-12-04s, opt-in): f8_kblock()'s
 * group with the decoded E4M3 fragments stored into a slot of the warpgroup's own ring of D in
 * shared memory (f8m_slots()) and the MMAs reading A from there (k3_wgmma_ss8), so that D - 1
 * groups stay in flight while the next is decoded without any register an MMA in flight reads
 * being written (ptxas serialized f8_kblock()'s four register sets, C7513). A slot is the group's
 * two m64 blocks of 64 rows x 32 bytes, each in the interleaved K-major layout (core matrix of 8
 * rows x 16 bytes at 256 (r / 8) + 128 (k / 16)): lane (g, t) of warp w stores its fragment words
 * a0 .. a3 (rows 16 w + g, + 8; k 4t .. and 16 + 4t ..) as four 4-byte stores, a warp's 32 lanes
 * one 128-byte core matrix each (no bank conflict). Group j = 2 ODD + q of the pair uses slot
 * j % D; it is rewritten after wait_group D - 1 retired the group D back that read it; the stores
 * reach the MMAs' async proxy by each thread's proxy fence and the warpgroup's named barrier. The
 * stages as f8_kblock()'s, released by the pair's group D - 1 (D = 4: one pair in flight, so the
 * previous pair's stages are held until the current pair's last group is issued). */
template <int D>
__device__ __forceinline__ uint32_t f8m_slots(unsigned char *sm, int stage_bytes)
{
	/* The X regions (16 KB, offset 0) of odd stages 1 and 3: the F8 producer never writes an odd
	 * stage's token bytes (produce_pp()), so they are the consumers' own; warpgroup c takes stage
	 * 2 c + 1's. */
	static_assert(D * K3_WGF8_SLOT_BYTES <= TT * KB * 2, "the slots in an odd stage's token region");
	const int c = (int)threadIdx.x / 128 - 1;
	return k3_smem_u32(sm + (size_t)(2 * c + 1) * (size_t)stage_bytes);
}

template <int N, bool ODD, bool FP, int D, int MB>
__device__ __forceinline__ void f8m_kblock(float (&acc)[MB][TT / 2], uint32_t (&sw)[MB][2], const uint32_t (&kc)[MB][2][2],
					   const unsigned char *st, uint64_t dx, uint32_t slots, uint32_t soff, uint64_t *rel,
					   uint64_t *rel2, int wr0, int lane)
{
	static_assert(D == 2 || D == 4, "slots: a k block pair's groups in whole rounds");
	static_assert(MB == 2, "a slot holds two m64 blocks");
	if constexpr (!ODD)
		rq_scale_words<TT, MB>(sw, st, wr0, lane);
	const int bar = 1 + ((int)threadIdx.x / 128 - 1);
#pragma unroll
	for (int q = 0; q < 2; q++) {
		const int j = (ODD ? 2 : 0) + q; /* the group in the pair */
		uint32_t w[2][MB];
		rq_load<TT, 2, MB>(w, st, 2 * q, wr0, lane);
		uint32_t r[MB][4];
		f8_decode<MB>(r, w, sw, kc, (uint32_t)j);
		if (!(FP && j < D))
			k3_wgmma_wait<D - 1>(); /* the group D back, which read slot j % D, has completed */
		if (!FP && j == D - 1) { /* the previous pair's groups all retired: both its stages are read */
			release<false>(rel);
			release<false>(rel2);
		}
		const uint32_t sl = slots + (uint32_t)(j % D) * K3_WGF8_SLOT_BYTES;
#pragma unroll
		for (int mb = 0; mb < MB; mb++)
#pragma unroll
			for (int i = 0; i < 4; i++) /* a0 .. a3 (k3_wgf8_slot_offset(): soff is its lane part) */
				asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(sl + soff + k3_wgf8_slot_offset(0, 0, mb, i)),
					     "r"(r[mb][i])
					     : "memory");
		k3_fence_proxy_async();
		k3_named_sync(bar, 128);
		k3_wgmma_fence();
		const uint64_t desc = dx + (uint64_t)(2 * j); /* + 32 bytes a k step */
#pragma unroll
		for (int mb = 0; mb < MB; mb++)
			k3_wgmma_ss8<N>(acc[mb],
					k3_wgmma_desc_plain(sl + (uint32_t)(mb * 2048), K3_WGF8_SLOT_LBO, K3_WGF8_SLOT_SBO),
					desc);
		k3_wgmma_commit();
	}
}

/* XV_F8M | XV_F8K ("wide2f8m4k", K3_GEMM_F8_SETS=m4k; 2026-12-04s, opt-in): f8m_kblock() with 4
 * slots a k block at a time: both groups' words by one 16-byte load an m64 block (rq_load16()),
 * both decoded (twice the independent instructions between waits), then one wait_group 2 (the
 * groups 4 back, which read the block's two slots, retired), one proxy fence and one named barrier
 * for the two groups' stores, and the two groups' MMAs. The previous pair's stages are released in
 * the odd block (whose wait retires that pair's last group). */
template <int N, bool ODD, bool FP, int MB>
__device__ __forceinline__ void f8mk_kblock(float (&acc)[MB][TT / 2], uint32_t (&sw)[MB][2], const uint32_t (&kc)[MB][2][2],
					    const unsigned char *st, uint64_t dx, uint32_t slots, uint32_t soff, uint64_t *rel,
					    uint64_t *rel2, int wr0, int lane)
{
	static_assert(MB == 2, "a slot holds two m64 blocks");
	if constexpr (!ODD)
		rq_scale_words<TT, MB>(sw, st, wr0, lane);
	const int bar = 1 + ((int)threadIdx.x / 128 - 1);
	uint32_t w[4][MB]; /* word 2 q + h: k step q of row g + 8 h */
	rq_load16<TT, MB>(w, st, wr0, lane);
	uint32_t r[2][MB][4];
#pragma unroll
	for (int q = 0; q < 2; q++)
		f8_decode<MB>(r[q], *reinterpret_cast<const uint32_t(*)[2][MB]>(&w[2 * q]), sw, kc,
			      (uint32_t)((ODD ? 2 : 0) + q));
	if constexpr (!FP) {
		k3_wgmma_wait<2>(); /* the groups 4 back (slots 2 ODD, + 1) retired */
		if constexpr (ODD) { /* the previous pair's last group among them: both its stages are read */
			release<false>(rel);
			release<false>(rel2);
		}
	}
#pragma unroll
	for (int q = 0; q < 2; q++)
#pragma unroll
		for (int mb = 0; mb < MB; mb++)
#pragma unroll
			for (int i = 0; i < 4; i++)
				asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(slots + soff +
										(uint32_t)((ODD ? 2 : 0) + q) * K3_WGF8_SLOT_BYTES +
										k3_wgf8_slot_offset(0, 0, mb, i)),
					     "r"(r[q][mb][i])
					     : "memory");
	k3_fence_proxy_async();
	k3_named_sync(bar, 128);
	k3_wgmma_fence();
#pragma unroll
	for (int q = 0; q < 2; q++) {
		const int j = (ODD ? 2 : 0) + q;
		const uint64_t desc = dx + (uint64_t)(2 * j);
#pragma unroll
		for (int mb = 0; mb < MB; mb++)
			k3_wgmma_ss8<N>(acc[mb],
					k3_wgmma_desc_plain(slots + (uint32_t)j * K3_WGF8_SLOT_BYTES + (uint32_t)(mb * 2048),
							    K3_WGF8_SLOT_LBO, K3_WGF8_SLOT_SBO),
					desc);
		k3_wgmma_commit();
	}
}

/* d[0 .. N / 2) pinned (the wide kernel: only the accumulators an MMA of N tokens writes stay
 * live in its tiles). */
template <int N, int L>
__device__ __forceinline__ void pin_acc(float (&d)[L])
{
	if constexpr (L == 64)
		k3_wgmma_pin(d);
	else
		k3_wgmma_pinw<N>(*reinterpret_cast<float(*)[N / 2]>(&d[0]));
}

/* The k loop of one tile with N tokens (a multiple of 16, or of 8 past 128); `it` counts stages
 * over the CTA's tiles. BF16 weights: both operands from shared memory, the MMAs of one stage in
 * flight while the next stage's are issued (wait_group 1). MXFP4: A from registers in two sets
 * of two k steps each; a set is built while the MMAs of the other run, and each half stage ends
 * with wait_group 0 (so no register an MMA in flight reads is written: see k3_wgmma.cuh). */
template <bool FP4, bool CLU, int N, int TTV, bool NB, int XV = 0>
__device__ __forceinline__ void mainloop(const params &p, unsigned char *sm, uint64_t *full, uint64_t *empty,
					 float (&acc)[mbs<XV>()][TTV / 2], int &it, int wr0, int lane, const tile &tl)
{
	using C = wcfg<FP4, TTV, XV>;
	constexpr int MB = mbs<XV>();
	static_assert(MB == 2 || (C::RS && (XV & XV_RQ)), "XV_W4: on wide2rq's k loop");
	const int nkb = p.K / KB;
	(void)tl; /* XV_F8's floors */
#pragma unroll
	for (int i = 0; i < (TTV == TT || (XV & XV_ONE) ? TTV / 2 : N / 2); i++) /* round q's: all 64 */
#pragma unroll
		for (int mb = 0; mb < MB; mb++)
			acc[mb][i] = 0.0f;
#pragma unroll
	for (int mb = 0; mb < MB; mb++)
		pin_acc<N>(acc[mb]);
	if constexpr (C::RS && (XV & XV_F8)) {
		/* XV_F8: the FP8 kernel's k loop (f8_kblock(); S register sets: XV_F8S2 2, else 4); nkb
		 * even (K % 128 == 0). The floor constants of the lane's rows (n0 + wr0 + 64 mb + g + 8 h;
		 * a warp's 16 rows are all below N or all past it, whose tiles are zeros). The odd
		 * stage's wait has no proxy fence: its only reads are the weight words (generic loads of
		 * the tensor copy's bytes, which the barrier's completion makes visible); the even
		 * stage's fence covers the token rows the pair's MMAs read. */
		static_assert((XV & XV_RQ) && (XV & XV_PP) && TTV == TT && MB == 2, "XV_F8: on wide2rqp's 128-token tiles");
		constexpr int S = (XV & XV_F8S2) ? 2 : 4; /* register sets, or XV_F8M's slots */
		constexpr bool M = (XV & XV_F8M) != 0, K2 = (XV & XV_F8K) != 0, R = (XV & XV_F8R) != 0,
			       T = (XV & XV_F8T) != 0, L = (XV & XV_F8L) != 0;
		static_assert(!K2 || (M && S == 4), "XV_F8K: XV_F8M's 4 slots");
		static_assert(!L || !M, "XV_F8L: f8_kblock()'s");
		static_assert(!(R || T) || !M, "XV_F8R, XV_F8T: f8_kblock()'s");
		static_assert(!C::F8P || (C::stage_off(1) + C::OFF_W == C::STAGE &&
					  C::stage_off(1) + C::OFF_W + C::W_BYTES == C::PAIR && C::stage_off(2) == C::PAIR &&
					  C::stage_off(C::STAGES - 1) + C::OFF_W + C::W_BYTES == C::OFF_RAW),
			      "XV_F8P: an odd stage's weight tile right after its even stage, a pair's end the next's start");
		uint32_t kc[MB][2][2];
		uint32_t kt[2]; /* XV_F8T: the floor constants of the row whose tables this lane makes */
		if constexpr (T) {
			const int row = tl.n0 + wr0 + (lane >> 4) * 64 + (lane & 15); /* f8t_tables()'s row */
			const uint32_t f = row < p.N ? p.wfl[(size_t)tl.g * p.N + row] : 0u;
			kt[0] = k3_wgf8_klo(f), kt[1] = k3_wgf8_khi(f);
		} else {
#pragma unroll
			for (int mb = 0; mb < MB; mb++) {
				const int row = tl.n0 + wr0 + mb * 64 + (lane >> 2);
				const bool in = row < p.N;
#pragma unroll
				for (int h = 0; h < 2; h++) {
					const uint32_t f = in ? p.wfl[(size_t)tl.g * p.N + row + 8 * h] : 0u;
					kc[mb][h][0] = k3_wgf8_klo(f), kc[mb][h][1] = k3_wgf8_khi(f);
				}
			}
		}
		/* XV_F8T: this warp's tables (consumer warps 0 .. 4 nwg - 1 after the producer's 4) */
		unsigned char *tw = T ? sm + C::OFF_F8T + (size_t)(((int)threadIdx.x >> 5) - 4) * C::F8T_WARP : nullptr;
		uint32_t a[S][MB][4]; /* (XV_F8M: unused) */
		uint32_t sw[MB][2];
		int s = (int)((unsigned)it % (unsigned)C::STAGES);
		uint32_t ph = ((unsigned)it / (unsigned)C::STAGES) & 1u;
		const uint64_t dsm = k3_wgmma_desc_sw128(k3_smem_u32(sm));
		/* XV_F8M: this warpgroup's slots and this thread's place in a slot's m64 block */
		const uint32_t slots = M ? f8m_slots<S>(sm, C::STAGE) : 0u;
		const uint32_t soff = k3_wgf8_slot_offset(((int)threadIdx.x >> 5) & 3, lane, 0, 0);
		/* stage st's bytes; the descriptor of stage sx's token tile (C::stage_off(): XV_F8P's places) */
		auto kblk = [&](auto odd, auto fp, int st, int sx, uint64_t *rel, uint64_t *rel2) {
			constexpr bool O = decltype(odd)::value, F = decltype(fp)::value;
			const uint64_t dx = dsm + (uint64_t)(C::stage_off(sx) / 16);
			if constexpr (K2)
				f8mk_kblock<N, O, F>(acc, sw, kc, sm + C::stage_off(st), dx, slots, soff, rel, rel2, wr0, lane);
			else if constexpr (M)
				f8m_kblock<N, O, F, S>(acc, sw, kc, sm + C::stage_off(st), dx, slots, soff, rel, rel2, wr0,
						       lane);
			else
				f8_kblock<N, O, F, S, R, T, MB, L>(acc, a, sw, kc, sm + C::stage_off(st), dx, rel, rel2, &empty[st],
							    tw, kt, wr0, lane);
		};
		using T_ = std::true_type;
		using F_ = std::false_type;
		rq_ready(full, s, ph);
		int se = s; /* the pair's even stage */
		kblk(F_{}, T_{}, s, s, nullptr, nullptr);
		rq_advance<C::STAGES>(s, ph);
		wait_or_trap(&full[s], ph);
		int so = s; /* its odd stage */
		kblk(T_{}, T_{}, s, se, nullptr, nullptr);
		rq_advance<C::STAGES>(s, ph);
#pragma unroll 1
		for (int kb = 2; kb < nkb; kb += 2) {
			const int pse = se, pso = so; /* the previous pair's stages */
			rq_ready(full, s, ph);
			se = s;
			kblk(F_{}, F_{}, s, s, &empty[pso], &empty[pse]);
			rq_advance<C::STAGES>(s, ph);
			wait_or_trap(&full[s], ph);
			so = s;
			kblk(T_{}, F_{}, s, se, &empty[pso], &empty[pse]);
			rq_advance<C::STAGES>(s, ph);
		}
		k3_wgmma_wait<0>();
		if constexpr (!R) /* (XV_F8R: released by the pair's last group) */
			release<false>(&empty[so]);
		release<false>(&empty[se]);
		it += nkb;
	} else if constexpr (C::RS && (XV & XV_RQ)) {
		/* XV_RQ: wide2rp's k loop, leaner (above rq_advance()); nkb even (K % 128 == 0). */
		static_assert((XV & XV_RS1) && (XV & XV_RP) && (XV & XV_LEAN), "XV_RQ: on wide2rp");
		constexpr int KS = TTV > TT ? 1 : 2;
		constexpr uint64_t DSTAGE = C::STAGE / 16; /* a stage in the descriptor's address units */
		constexpr bool V16 = (XV & XV_V16) != 0, NOMMA = (XV & XV_NOMMA) != 0, F8D = (XV & XV_F8D) != 0,
			       F8B = (XV & XV_F8B) != 0;
		uint32_t a[2][KS][MB][4]; /* [set][k step of the group][m64 block][4] */
		uint32_t sw[MB][2];	  /* the k block pair's scale words */
		int s = (int)((unsigned)it % (unsigned)C::STAGES);
		uint32_t ph = ((unsigned)it / (unsigned)C::STAGES) & 1u;
		const uint64_t dsm = k3_wgmma_desc_sw128(k3_smem_u32(sm));
		rq_ready(full, s, ph);
		rq_kblock<N, TTV, false, true, CLU, V16, NOMMA, F8D, F8B>(acc, a, sw, sm + (size_t)s * C::STAGE, dsm + (uint64_t)s * DSTAGE,
						    nullptr, wr0, lane);
		int sp = s;
		rq_advance<C::STAGES>(s, ph);
		rq_ready(full, s, ph);
		rq_kblock<N, TTV, true, false, CLU, V16, NOMMA, F8D, F8B>(acc, a, sw, sm + (size_t)s * C::STAGE, dsm + (uint64_t)s * DSTAGE,
						    &empty[sp], wr0, lane);
		sp = s;
		rq_advance<C::STAGES>(s, ph);
#pragma unroll 1
		for (int kb = 2; kb < nkb; kb += 2) {
			rq_ready(full, s, ph);
			rq_kblock<N, TTV, false, false, CLU, V16, NOMMA, F8D, F8B>(acc, a, sw, sm + (size_t)s * C::STAGE,
							     dsm + (uint64_t)s * DSTAGE, &empty[sp], wr0, lane);
			sp = s;
			rq_advance<C::STAGES>(s, ph);
			rq_ready(full, s, ph);
			rq_kblock<N, TTV, true, false, CLU, V16, NOMMA, F8D, F8B>(acc, a, sw, sm + (size_t)s * C::STAGE,
							    dsm + (uint64_t)s * DSTAGE, &empty[sp], wr0, lane);
			sp = s;
			rq_advance<C::STAGES>(s, ph);
		}
		k3_wgmma_wait<0>();
		release<CLU>(&empty[sp]);
		it += nkb;
	} else if constexpr (C::RS && (XV & XV_RS1)) {
		/* MXFP4, register double buffering (XV_RS1): groups of KS k steps (4 / KS a k block),
		 * group q's A in register set q % 2. Group q + 1 is converted and issued while group q
		 * still runs: before set s is rewritten, wait_group 1 retires the group that read it
		 * (the one before the group just issued), so no register an MMA in flight reads is
		 * written (k3_wgmma.cuh) and the tensor pipe always holds this warpgroup's next group.
		 * 176-token tiles (accumulators 2 x 88) convert one k step a group, 128-token ones two. */
		constexpr int KS = TTV > TT ? 1 : 2, G = 4 / KS;
		constexpr bool PF = (XV & XV_PF) != 0, LEAN = (XV & XV_LEAN) != 0, RP = (XV & XV_RP) != 0;
		static_assert(!RP || LEAN, "XV_RP: the lean scales");
		uint32_t a[2][KS][2][4]; /* [set][k step of the group][m64 block][4] */
		uint32_t sc[2][2];	 /* the scales of the current scale group (two k steps) */
		const unsigned char *st = stage_ready<true, TTV, XV>(sm, full, it);
		scales_fp4k<TTV, LEAN, RP>(sc, st, 0, 0, wr0, lane);
		first_group<N, TTV, KS, RP>(acc, a[0], st, 0, sc, wr0, lane);
		if constexpr (KS == 2)
			scales_fp4k<TTV, LEAN, RP>(sc, st, 0, 2, wr0, lane);
		first_group<N, TTV, KS, RP>(acc, a[1], st, KS, sc, wr0, lane);
#pragma unroll 1
		for (int kb = 0; kb < nkb; kb++, it++) {
#pragma unroll
			for (int q = 2; q < G; q++) { /* KS 1: the k block's groups 2, 3 */
				if (q == 2)
					scales_fp4k<TTV, LEAN, RP>(sc, st, kb, 2, wr0, lane);
				next_group<N, TTV, KS, CLU, PF, RP>(acc, a[q % 2], st, q * KS, sc, nullptr, wr0, lane);
			}
			if (kb + 1 < nkb) {
				const unsigned char *sn = stage_ready<true, TTV, XV>(sm, full, it + 1);
				scales_fp4k<TTV, LEAN, RP>(sc, sn, kb + 1, 0, wr0, lane);
				next_group<N, TTV, KS, CLU, PF, RP>(acc, a[0], sn, 0, sc, nullptr, wr0, lane);
				if constexpr (KS == 2)
					scales_fp4k<TTV, LEAN, RP>(sc, sn, kb + 1, 2, wr0, lane);
				/* the wait retires this k block's last group: stage `it` read */
				next_group<N, TTV, KS, CLU, PF, RP>(acc, a[1], sn, KS, sc, &empty[it % C::STAGES], wr0, lane);
				st = sn;
			}
		}
		k3_wgmma_wait<0>();
		release<CLU>(&empty[(it - 1) % C::STAGES]);
	} else if constexpr (C::RS) {
		static_assert(TTV == 64 * 2, "MXFP4: the round-q tile");
		uint32_t ax[2][2][4], ay[2][2][4]; /* [k step of the half][m64 block][4] */
		const unsigned char *st = stage_ready<true, TTV, XV>(sm, full, it);
		load_a_fp4(ax, st, 0, 0, wr0, lane);
#pragma unroll 1
		for (int kb = 0; kb < nkb; kb++, it++) {
			const uint32_t xaddr = k3_smem_u32(st);
			k3_wgmma_fence();
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const uint64_t desc = k3_wgmma_desc_sw128(xaddr + h * 32);
				k3_wgmma_rs<N>(acc[0], ax[h][0], desc);
				k3_wgmma_rs<N>(acc[1], ax[h][1], desc);
			}
			k3_wgmma_commit();
			load_a_fp4(ay, st, kb, 1, wr0, lane);
			k3_wgmma_wait<0>();
			k3_wgmma_fence();
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const uint64_t desc = k3_wgmma_desc_sw128(xaddr + (2 + h) * 32);
				k3_wgmma_rs<N>(acc[0], ay[h][0], desc);
				k3_wgmma_rs<N>(acc[1], ay[h][1], desc);
			}
			k3_wgmma_commit();
			if (kb + 1 < nkb) {
				st = stage_ready<true, TTV, XV>(sm, full, it + 1);
				load_a_fp4(ax, st, kb + 1, 0, wr0, lane);
			}
			k3_wgmma_wait<0>();
			release<CLU>(&empty[it % C::STAGES]); /* every read of stage `it` is done */
		}
	} else {
		/* This warpgroup's 128 weight rows (wr0 without the warp's 16-row offset). */
		const uint32_t wdesc0 = (uint32_t)(C::OFF_W + (wr0 & ~127) * 128);
#pragma unroll 1
		for (int kb = 0; kb < nkb; kb++, it++) {
			const unsigned char *st = stage_ready<FP4, TTV, XV>(sm, full, it);
			const uint32_t xaddr = k3_smem_u32(st);
			k3_wgmma_fence();
			if constexpr (NB) {
				/* One descriptor a stage, the others by adding offsets / 16 to its start field:
				 * equal to k3_wgmma_desc_sw128 of each address (all under 0x40000, multiples of
				 * 16: no carry out of the 14-bit field). */
				const uint64_t d0 = k3_wgmma_desc_sw128(xaddr), da = d0 + (wdesc0 >> 4);
#pragma unroll
				for (int ks = 0; ks < KB / 16; ks++)
#pragma unroll
					for (int mb = 0; mb < 2; mb++)
						if constexpr (!(XV & XV_NOMMA))
						mma_ss<N>(acc[mb], da + (uint64_t)(mb * 64 * 128 + ks * 32) / 16,
							  d0 + (uint64_t)(ks * 32) / 16);
			} else {
#pragma unroll
				for (int ks = 0; ks < KB / 16; ks++) {
					const uint64_t desc = k3_wgmma_desc_sw128(xaddr + ks * 32);
#pragma unroll
					for (int mb = 0; mb < 2; mb++)
						mma_ss<N>(acc[mb],
							  k3_wgmma_desc_sw128(xaddr + wdesc0 + mb * 64 * 128 + ks * 32), desc);
				}
			}
			k3_wgmma_commit();
			k3_wgmma_wait<1>(); /* the previous stage's MMAs are done */
			if (kb > 0)
				release<CLU>(&empty[(it - 1) % C::STAGES]);
		}
		k3_wgmma_wait<0>();
		release<CLU>(&empty[(it - 1) % C::STAGES]);
	}
#pragma unroll
	for (int mb = 0; mb < MB; mb++)
		pin_acc<N>(acc[mb]);
}

/* A CTA of a cluster with no rows in this unit: the stages pass through (the cluster's
 * producers write each one into every CTA, and wait for every CTA to release it). */
template <bool FP4, int TTV>
__device__ __forceinline__ void passthrough(const params &p, unsigned char *sm, uint64_t *full, uint64_t *empty,
					    int &it)
{
	const int nkb = p.K / KB;
#pragma unroll 1
	for (int kb = 0; kb < nkb; kb++, it++) {
		stage_ready<FP4, TTV>(sm, full, it);
		release<true>(&empty[it % wcfg<FP4, TTV>::STAGES]);
	}
}

/* Round q's epilogue (kernel_variant() 0): per output, the row's scalars from global memory and
 * the exact SiTU-GLU, in branches past the tile's tokens. */
template <int EPI>
__device__ __forceinline__ void epilogue(const params &p, const tile &tl, const float (&acc)[2][64], int wr0,
					 int lane)
{
	const int g = lane >> 2, tq = lane & 3, ntok = (int)(tl.re - tl.rb);
#pragma unroll
	for (int mb = 0; mb < 2; mb++) {
		const int nb = tl.n0 + wr0 + mb * 64; /* this warp's 16 weight rows: nb .. nb + 15 */
		if (nb >= p.N)
			continue;
#pragma unroll
		for (int j = 0; j < TT / 8; j++) {
			if (8 * j >= ntok)
				break;
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const int tok = 8 * j + 2 * tq + e;
				if (tok >= ntok)
					continue;
				const int64_t r = tl.rb + tok, ro = out_row(p, r);
				const float v0 = acc[mb][4 * j + e], v1 = acc[mb][4 * j + 2 + e];
				if (EPI == K3_EPI_GLU) {
					p.out[ro * (p.N / 2) + nb / 2 + g] =
						k3_f2bf(situ_glu(v0, v1, p.beta_gate, p.beta_up));
				} else {
					epi_store1<EPI>(p, ro, r, nb + g, v0);
					epi_store1<EPI>(p, ro, r, nb + g + 8, v1);
				}
			}
		}
	}
}

/* tanh without branches: 1 - 2 / (1 + e^2|x|) with the sign of x (ex2.approx and rcp.approx:
 * absolute error ~1e-7, far under the BF16 output's rounding; e^2|x| = inf gives 1). */
__device__ __forceinline__ float tanh_nb(float x)
{
	return copysignf(1.0f - __fdividef(2.0f, 1.0f + __expf(2.0f * fabsf(x))), x);
}

/* tanh.approx.f32 (one MUFU op; maximum relative error about 2^-11 by the PTX ISA: a quarter of
 * the BF16 output's half ulp). */
__device__ __forceinline__ float tanh_approx(float x)
{
	float y;
	asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

/* The tile's per-token scalars (kernel_variant() >= 1): loaded from global memory before the
 * k loop (tokens ct and ct + 128 of the tile, ct = this thread's index in its warpgroup), kept
 * in registers through it, and written after it into the warpgroup's shared buffer. */
template <int EPI, int NI = 2, bool F8 = false>
struct tok_scalars {
	float rs[NI];
	int32_t oi[NI];
	/* rs: SCALE's row_scale, times (F8, XV_F8) the token's activation scale p.aqs (of its A row:
	 * through a_index where given); GLU with F8: that scale alone. */
	__device__ __forceinline__ void load(const params &p, const tile &tl, int ct)
	{
		const int ntok = (int)(tl.re - tl.rb);
#pragma unroll
		for (int i = 0; i < NI; i++) {
			const int tok = ct + 128 * i;
			const bool ok = tok < ntok;
			rs[i] = EPI == K3_EPI_SCALE && ok ? p.row_scale[tl.rb + tok] : 0.0f;
			if constexpr (F8) {
				const int64_t ar = p.a_index && ok ? (int64_t)p.a_index[tl.rb + tok] : tl.rb + tok;
				const float as = ok ? p.aqs[ar] : 0.0f;
				rs[i] = EPI == K3_EPI_SCALE ? rs[i] * as : as;
			}
			oi[i] = p.out_index && ok ? p.out_index[tl.rb + tok] : 0;
		}
	}
	template <int TTV>
	__device__ __forceinline__ void store(float *srs, int32_t *soi, int ct) const
	{
#pragma unroll
		for (int i = 0; i < NI; i++)
			if (ct + 128 * i < TTV) {
				srs[ct + 128 * i] = rs[i];
				soi[ct + 128 * i] = oi[i];
			}
	}
};

/* The epilogue of kernel_variant() >= 1, for an MMA of N tokens: no global loads (the token
 * scalars come from the warpgroup's shared buffer), no branches but the stores' predicates, so
 * that the outputs' arithmetic interleaves; SiTU-GLU through tanh_nb and reciprocals of the caps
 * (within ~1e-6 of situ_glu). */
template <int EPI, int N, int TTV, int XV = 0>
__device__ __forceinline__ void epilogue_nb(const params &p, const tile &tl, const float (&acc)[mbs<XV>()][TTV / 2],
					    int wr0, int lane, const float *srs, const int32_t *soi)
{
	const int g = lane >> 2, tq = lane & 3, ntok = (int)(tl.re - tl.rb);
	const bool scatter = p.out_index != nullptr;
	const float bg = p.beta_gate, bu = p.beta_up, ibg = 1.0f / bg, ibu = 1.0f / bu;
#pragma unroll
	for (int mb = 0; mb < mbs<XV>(); mb++) {
		const int nb = tl.n0 + wr0 + mb * 64; /* this warp's 16 weight rows: nb .. nb + 15 */
		if (nb >= p.N)
			continue;
		float rf0 = 1.0f, rf1 = 1.0f; /* XV_F8: rows g, g + 8's factors 2^(f - 122) (k3_gemm_wg_rp.cuh) */
		if constexpr ((XV & XV_F8) != 0) {
			const uint8_t *fl = p.wfl + (size_t)tl.g * p.N + nb + g;
			rf0 = __uint_as_float(((uint32_t)fl[0] + 5u) << 23);
			rf1 = __uint_as_float(((uint32_t)fl[8] + 5u) << 23);
		}
#pragma unroll
		for (int j = 0; j < N / 8; j++) {
			if constexpr ((XV & XV_ONE) != 0)
				if (8 * j >= ntok) /* the widest tile's copy: past this tile's tokens (warp-uniform) */
					break;
			/* XV_F8W (opt-in; 2026-12-05): GLU's BF16 outputs two columns a 4-byte store. Lane (g, tq)
			 * holds column nb / 2 + g of tokens t0 = 8 j + 2 tq and t0 + 1; lanes g and g ^ 1 (lane ^ 4)
			 * swap one output, so that an even-g lane stores columns (c, c + 1) of t0 and an odd-g
			 * lane (c - 1, c) of t0 + 1: half the stores, each 4 bytes where two were 2, the same
			 * values (bit for bit). A GLU row of N / 2 outputs must be even for the alignment, so
			 * the pairing is taken only then (warp-uniform, as is every branch around the shuffle). */
			[[maybe_unused]] float ow[2];
			constexpr bool W = (XV & XV_F8W) != 0 && (XV & XV_F8) != 0 && EPI == K3_EPI_GLU;
			[[maybe_unused]] const bool wpair = W && !p.out8 && (p.N / 2) % 2 == 0;
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const int tok = 8 * j + 2 * tq + e;
				const bool ok = tok < ntok;
				const int64_t r = tl.rb + tok, ro = scatter ? (int64_t)soi[tok] : r;
				float v0 = acc[mb][4 * j + e], v1 = acc[mb][4 * j + 2 + e];
				if constexpr ((XV & XV_F8) != 0) {
					v0 *= rf0, v1 *= rf1;
					if (EPI == K3_EPI_GLU) /* SCALE: the token's scale is in srs */
						v0 *= srs[tok], v1 *= srs[tok];
				}
				if (EPI == K3_EPI_GLU) {
					const float o = XV & XV_FGLU
								? bg * tanh_approx(v0 * ibg) * k3_sigmoid(v0) *
									  (bu * tanh_approx(v1 * ibu))
								: bg * tanh_nb(v0 * ibg) * k3_sigmoid(v0) * (bu * tanh_nb(v1 * ibu));
					if constexpr (W)
						ow[e] = o;
					if ((XV & XV_F8) != 0 && p.out8) { /* E4M3 of glu8_mul x o (k3_gemm_args.out_e4m3) */
						if (ok)
							p.out8[ro * (p.N / 2) + nb / 2 + g] =
								(uint8_t)k3_f32x2_to_e4m3x2(o * p.glu8_mul, 0.0f);
					} else if (ok && !(W && wpair)) {
						p.out[ro * (p.N / 2) + nb / 2 + g] = k3_f2bf(o);
					}
				} else if (EPI == K3_EPI_SCALE) {
					const float sc = srs[tok];
					if (ok) {
						p.out[ro * p.N + nb + g] = k3_f2bf(v0 * sc);
						p.out[ro * p.N + nb + g + 8] = k3_f2bf(v1 * sc);
					}
				} else if (ok) {
					epi_store1<EPI>(p, ro, r, nb + g, v0);
					epi_store1<EPI>(p, ro, r, nb + g + 8, v1);
				}
			}
			if constexpr (W) {
				if (wpair) {
					const bool odd = (g & 1) != 0;
					const float recv = __shfl_xor_sync(0xffffffffu, odd ? ow[0] : ow[1], 4);
					const int tok = 8 * j + 2 * tq + (odd ? 1 : 0);
					if (tok < ntok) {
						const int64_t ro = scatter ? (int64_t)soi[tok] : tl.rb + tok;
						const uint32_t lo = k3_f2bf(odd ? recv : ow[0]), hi = k3_f2bf(odd ? ow[1] : recv);
						*reinterpret_cast<uint32_t *>(p.out + ro * (p.N / 2) + nb / 2 + (g & ~1)) =
							lo | hi << 16;
					}
				}
			}
		}
	}
}

/* XV_F8E (opt-in; 2026-12-05, round 05m): epilogue_nb()'s XV_F8 GLU and SCALE outputs, the same
 * arithmetic on the same values (bit for bit), laid out for the instruction-level parallelism
 * epilogue_nb() lacks. Its profile (bench/results/k3-kernels-h200-2026-12-04q/call1/sass-f8.csv.xz,
 * lines 6500-10250 of the SASS: ~23 % of the consumer warps' stall samples) shows one output at a
 * time: each (j, e) is its own basic block (the 8-token break, the `ok` store branch, the scatter
 * and E4M3-output branches), so the ~45 instructions of an output (two tanh, EX2 + RCP, the
 * factors) run as one dependent chain, and the rows' floors are global loads issued there (two
 * LEAs waiting on them hold 1.8 % of all samples). Here:
 *  - the floors come from flm, one byte a lane loaded before the k loop (consume(): lane l holds
 *    row wr0 + (l & 15) + 64 (l >> 4) of the tile, so rows g + 8 h of block mb are lane
 *    g + 8 h + 16 mb's), by 4 shuffles;
 *  - JB j steps (8 JB tokens) a block: every output of the block computed first, in place in
 *    acc (GLU's in acc[mb][4 j + e], SCALE's in both), with no branch (padding tokens past ntok
 *    compute harmless values that are not stored), then stored under their predicates; the
 *    blocks break at 8 JB tokens. JB = 2 (XV_F8E): 8 independent outputs a block, tokens rounded
 *    to 16 as before; JB = 4 (XV_F8E4): 16 a block, rounded to 32.
 * XV_F8O (with XV_F8E; GLU's BF16 outputs, opt-in): round 05m's profile of XV_F8E (bench/results/
 * k3-kernels-h100-2026-12-05/call05m) left the epilogue's time on its 2-byte global stores (the
 * registers of a store waited on before their reuse, the scatter index's shared load before each
 * address: L2 at 83 % by requests). Here the outputs go to shared memory instead, a warpgroup's
 * 64 columns x 128 tokens (16 KB, 128 bytes a token, the 16-byte chunk c of token t at
 * (c ^ (t & 7)) x 16: the 4 token rows a warp's store touches fall in different banks), in the
 * token region of an odd stage, which the FP8 kernel's producer never writes (produce_pp(): a
 * k-block pair's tokens all go into its even stage): stage 5 for warpgroup 0, 7 for 1. After the
 * warpgroup's barrier each thread copies 16-byte chunks to the output rows (8 a token row, 16
 * token rows a pass), an eighth of the store requests. The buffer is written again only after
 * the next tile's first warpgroup barrier (tile_n(), consume()), which every thread reaches after
 * its copies. SCALE (w2) likewise with the warpgroup's 128 columns: 256-byte token rows (16
 * chunks), tokens 0 .. 63 in odd stage 5 + 2 wg's token region and 64 .. 127 in 1 + 2 wg's, 8
 * token rows a pass. Taken where the output is 16-byte aligned (N % 16 == 0, out aligned) and
 * BF16 (not out_e4m3); else XV_F8E's stores. Round 05o (held out): 2eo faster than the pre-05o
 * default in 6 of 6 pairs at w13 and w2, T = 4K and 16K (w13 4K median 5.16 against 5.64 ms). The
 * FP8 kernel's default since then (launch_f8()). */
template <int EPI, int N, int TTV, int XV>
__device__ __forceinline__ void epilogue_f8e(const params &p, const tile &tl, float (&acc)[mbs<XV>()][TTV / 2], int wr0,
					     int lane, const float *srs, const int32_t *soi, uint32_t flm,
					     unsigned char *obuf = nullptr, unsigned char *obuf2 = nullptr)
{
	constexpr int MB = mbs<XV>(), JB = (XV & XV_F8E4) ? 4 : 2;
	static_assert((XV & XV_F8) && (EPI == K3_EPI_SCALE || (EPI == K3_EPI_GLU && (XV & XV_FGLU))),
		      "XV_F8E: the FP8 kernel's GLU (tanh.approx) and SCALE epilogues");
	static_assert((N / 8) % JB == 0, "XV_F8E: whole blocks");
	const int g = lane >> 2, tq = lane & 3, ntok = (int)(tl.re - tl.rb);
	const bool scatter = p.out_index != nullptr;
	const float bg = p.beta_gate, bu = p.beta_up, ibg = 1.0f / bg, ibu = 1.0f / bu;
	float rf[MB][2];
	bool in[MB];
#pragma unroll
	for (int mb = 0; mb < MB; mb++) {
		in[mb] = tl.n0 + wr0 + mb * 64 < p.N; /* this warp's 16 rows of block mb (all or none below N) */
#pragma unroll
		for (int h = 0; h < 2; h++)
			rf[mb][h] = __uint_as_float(((__shfl_sync(0xffffffffu, flm, g + 8 * h + 16 * mb) & 0xffu) + 5u) << 23);
	}
	constexpr bool O = (XV & XV_F8O) != 0;
	/* GLU: 64 columns a warpgroup, 128-byte token rows in one odd stage's token region; SCALE: 128
	 * columns, 256-byte rows, tokens 0 .. 63 in one odd stage's region and 64 .. 127 in another's
	 * (obuf, obuf2). CH: 16-byte chunks a token row. */
	constexpr int CH = EPI == K3_EPI_GLU ? 8 : 16, RB = CH * 16;
	static_assert(!O || (!(XV & (XV_F8M | XV_F8P)) && wcfg<true, TT, XV & (XV_F8 | XV_F8P)>::STAGES >= 8 &&
			     TTV * 128 <= TT * KB * 2),
		      "XV_F8O: odd stages 5 and 7's token regions free (not XV_F8M's slots, not XV_F8P's pairs)");
	[[maybe_unused]] const int wg = (int)threadIdx.x / 128 - 1, wq = ((int)threadIdx.x >> 5) & 3;
	[[maybe_unused]] const bool staged = O && !p.out8 && p.N % 16 == 0 && ((uintptr_t)p.out & 15u) == 0;
#pragma unroll
	for (int j0 = 0; j0 < N / 8; j0 += JB) {
		if (8 * j0 >= ntok) /* warp-uniform */
			break;
#pragma unroll
		for (int j = j0; j < j0 + JB; j++)
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const float s = srs[8 * j + 2 * tq + e];
#pragma unroll
				for (int mb = 0; mb < MB; mb++) {
					float v0 = acc[mb][4 * j + e], v1 = acc[mb][4 * j + 2 + e];
					v0 *= rf[mb][0], v1 *= rf[mb][1];
					if constexpr (EPI == K3_EPI_GLU) {
						v0 *= s, v1 *= s;
						acc[mb][4 * j + e] = bg * tanh_approx(v0 * ibg) * k3_sigmoid(v0) * (bu * tanh_approx(v1 * ibu));
					} else {
						acc[mb][4 * j + e] = v0 * s, acc[mb][4 * j + 2 + e] = v1 * s;
					}
				}
			}
		if constexpr (O) {
			if (staged) { /* into the warpgroup's buffer; copied out below */
#pragma unroll
				for (int j = j0; j < j0 + JB; j++)
#pragma unroll
					for (int e = 0; e < 2; e++) {
						const int t = 8 * j + 2 * tq + e;
#pragma unroll
						for (int mb = 0; mb < MB; mb++)
						if constexpr (EPI == K3_EPI_GLU) {
							*reinterpret_cast<uint16_t *>(obuf + t * 128 + (((wq + 4 * mb) ^ (t & 7)) << 4) + 2 * g) =
								k3_f2bf(acc[mb][4 * j + e]);
						} else { /* rows g, g + 8 of block mb: chunks 2 wq + 8 mb + h */
							unsigned char *rowp = (t < 64 ? obuf : obuf2) + (t & 63) * RB + 2 * g;
#pragma unroll
							for (int h = 0; h < 2; h++)
								*reinterpret_cast<uint16_t *>(rowp + (((2 * wq + 8 * mb + h) ^ (t & 7)) << 4)) =
									k3_f2bf(acc[mb][4 * j + 2 * h + e]);
						}
					}
				continue;
			}
		}
#pragma unroll
		for (int j = j0; j < j0 + JB; j++)
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const int tok = 8 * j + 2 * tq + e;
				if (tok >= ntok)
					continue;
				const int64_t ro = scatter ? (int64_t)soi[tok] : tl.rb + tok;
#pragma unroll
				for (int mb = 0; mb < MB; mb++) {
					if (!in[mb])
						continue;
					const int nb = tl.n0 + wr0 + mb * 64;
					if constexpr (EPI == K3_EPI_GLU) {
						if (p.out8) /* E4M3 of glu8_mul x o (k3_gemm_args.out_e4m3) */
							p.out8[ro * (p.N / 2) + nb / 2 + g] =
								(uint8_t)k3_f32x2_to_e4m3x2(acc[mb][4 * j + e] * p.glu8_mul, 0.0f);
						else
							p.out[ro * (p.N / 2) + nb / 2 + g] = k3_f2bf(acc[mb][4 * j + e]);
					} else {
						p.out[ro * p.N + nb + g] = k3_f2bf(acc[mb][4 * j + e]);
						p.out[ro * p.N + nb + g + 8] = k3_f2bf(acc[mb][4 * j + 2 + e]);
					}
				}
			}
	}
	if constexpr (O) {
		if (staged) { /* 16-byte chunk c of each token row of the warpgroup's columns, 128 / CH rows a pass */
			k3_named_sync(1 + wg, 128);
			const int i = (int)threadIdx.x & 127, c = i % CH;
			constexpr int GL = EPI == K3_EPI_GLU ? 2 : 1; /* weight rows an output column */
			const int64_t ld = p.N / GL;                 /* the output's row length */
			/* chunk c: weight rows n0 + 128 wg + 8 GL c .. (GLU: 16 a chunk, SCALE: 8) */
			if (tl.n0 + wg * 128 + 8 * GL * c < p.N) {
				const int64_t c0 = (int64_t)(tl.n0 + wg * 128) / GL + 8 * c;
				for (int t = i / CH; t < ntok; t += 128 / CH) {
					const int64_t ro = scatter ? (int64_t)soi[t] : tl.rb + t;
					const unsigned char *rowp = EPI == K3_EPI_GLU ? obuf + t * RB : (t < 64 ? obuf : obuf2) + (t & 63) * RB;
					const uint4 v = *reinterpret_cast<const uint4 *>(rowp + ((c ^ (t & 7)) << 4));
					*reinterpret_cast<uint4 *>(p.out + ro * ld + c0) = v;
				}
			}
		}
	}
}

/* One tile of N tokens: the k loop, then (NB: kernel_variant() >= 1) epilogue_nb for this N. Round
 * q's kernel runs the k loop here and its epilogue after the switch, as before round za (with
 * epilogue() inside each width's case, 2026-12-01z call 2 measured it 25 % slower: 36.5-37.5 against
 * 29.1-29.4 ms at BF16 w13). */
template <bool FP4, bool CLU, int EPI, int N, int TTV, bool NB, int XV>
__device__ __forceinline__ void tile_n(const params &p, const tile &tl, unsigned char *sm, uint64_t *full,
				       uint64_t *empty, float (&acc)[mbs<XV>()][TTV / 2], int &it, int wr0, int lane)
{
	if constexpr (NB && (XV & XV_ONE)) { /* the epilogue after the width switch (consume) */
		mainloop<FP4, CLU, N, TTV, true, XV>(p, sm, full, empty, acc, it, wr0, lane, tl);
	} else if constexpr (NB) {
		using C = wcfg<FP4, TTV, XV>;
		const int ct = (int)threadIdx.x & 127, wg = (int)threadIdx.x / 128 - 1;
		tok_scalars<EPI, 2, (XV & XV_F8) != 0> ts;
		ts.load(p, tl, ct); /* in flight through the k loop */
		mainloop<FP4, CLU, N, TTV, true, XV>(p, sm, full, empty, acc, it, wr0, lane, tl);
		/* The warpgroup's buffer: rewritten once each of its warps finished the last tile's
		 * epilogue (first barrier), read once all of them wrote it (second). */
		float *srs = reinterpret_cast<float *>(sm + C::OFF_TOK) + (size_t)wg * C::TOK_INTS;
		int32_t *soi = reinterpret_cast<int32_t *>(srs + TTV);
		k3_named_sync(1 + wg, 128);
		ts.template store<TTV>(srs, soi, ct);
		k3_named_sync(1 + wg, 128);
		if constexpr (!(XV & XV_NOEPI))
			epilogue_nb<EPI, N, TTV, XV>(p, tl, acc, wr0, lane, srs, soi);
	} else { /* round q's: its epilogue once a kernel, after the width switch (consume) */
		mainloop<FP4, CLU, N, TTV, false>(p, sm, full, empty, acc, it, wr0, lane, tl);
	}
}

template <bool FP4, bool CLU, int EPI, int TTV, bool NB, int XV>
__device__ __forceinline__ void consume(const params &p, unsigned char *sm, uint64_t *full, uint64_t *empty,
					const int32_t *tab, int total)
{
	const int ncl = CLU ? (int)cluster_size() : 1, rank = CLU ? (int)cluster_rank() : 0;
	const int lane = (int)threadIdx.x & 31;
	/* First weight row (in the tile) of this warp: consumer warpgroup c owns rows 64 MB c .. */
	const int wr0 = ((int)threadIdx.x / 128 - 1) * 64 * mbs<XV>() + (((int)threadIdx.x >> 5) & 3) * 16;
	float acc[mbs<XV>()][TTV / 2];
	int it = 0;
	if constexpr ((XV & XV_OFS) != 0) {
		/* XV_OFS ("wide2rqo"): the second consumer warpgroup starts ~OFS_CYCLES late, so that the
		 * two warpgroups' epilogues (and tile edges) fall at different times and the other's MMAs
		 * run beside each (they are coupled only through the stage ring: the leader can be up to
		 * STAGES k blocks ahead, and nothing pulls them back in step). */
		if (threadIdx.x >= 256) {
			const long long c0 = clock64();
			while (clock64() - c0 < OFS_CYCLES) {
			}
		}
	}
	for (int t = (int)blockIdx.x / ncl; t < total; t += (int)gridDim.x / ncl) {
		const tile tl = decode<TTV>(p, tab, t, rank, ncl);
		const int ntok = (int)(tl.re - tl.rb);
		/* N: the tokens rounded up to 16 (to 8 past 128: the wide kernel's chunks of 129 .. 176).
		 * (Rounded to 8 at every width, 2026-12-04m's "wide2rqt8" / "wide2rqp8": at T = 4K an
		 * expert's ~73 tokens leave 9.3 % of the MMAs' columns padding at 16, 4.6 % at 8, but w13 /
		 * w2 ran no faster, 6 pairs, bench/results/k3-kernels-h200-2026-12-04m: the k loop's
		 * conversions, not its MMAs, set the pace there. Removed.) */
		const int n = ntok <= 128 ? (ntok + 15) & ~15 : (ntok + 7) & ~7;
		tok_scalars<EPI, 2, (XV & XV_F8) != 0> ts;
		if constexpr (NB && (XV & XV_ONE))
			ts.load(p, tl, (int)threadIdx.x & 127); /* in flight through the k loop */
		[[maybe_unused]] uint32_t flm = 0; /* XV_F8E: a row's floor a lane (epilogue_f8e()), in flight too */
		if constexpr ((XV & XV_F8E) != 0) {
			const int row = tl.n0 + wr0 + (lane & 15) + 64 * (lane >> 4);
			flm = n > 0 && row < p.N ? (uint32_t)p.wfl[(size_t)tl.g * p.N + row] : 0u;
		}
#define K3_WG_TILE(NN) tile_n<FP4, CLU, EPI, (NN <= TTV ? NN : TTV), TTV, NB, XV>(p, tl, sm, full, empty, acc, it, wr0, lane)
		switch (n) {
		case 0: /* a cluster's CTA past its group's chunks */
			if constexpr (CLU)
				passthrough<FP4, TTV>(p, sm, full, empty, it);
			break;
		case 16: K3_WG_TILE(16); break;
		case 32: K3_WG_TILE(32); break;
		case 48: K3_WG_TILE(48); break;
		case 64: K3_WG_TILE(64); break;
		case 80: K3_WG_TILE(80); break;
		case 96: K3_WG_TILE(96); break;
		case 112: K3_WG_TILE(112); break;
		default:
			if constexpr (TTV > 128) {
				switch (n) {
				case 128: K3_WG_TILE(128); break;
				case 136: K3_WG_TILE(136); break;
				case 144: K3_WG_TILE(144); break;
				case 152: K3_WG_TILE(152); break;
				case 160: K3_WG_TILE(160); break;
				case 168: K3_WG_TILE(168); break;
				default: K3_WG_TILE(TTV); break;
				}
			} else {
				K3_WG_TILE(128);
			}
			break;
		}
#undef K3_WG_TILE
		if constexpr (!NB)
			epilogue<EPI>(p, tl, acc, wr0, lane);
		if constexpr (NB && (XV & XV_ONE)) {
			if (n > 0) { /* as tile_n's, once for every width */
				using C = wcfg<FP4, TTV, XV>;
				const int ct = (int)threadIdx.x & 127, wg = (int)threadIdx.x / 128 - 1;
				float *srs = reinterpret_cast<float *>(sm + C::OFF_TOK) + (size_t)wg * C::TOK_INTS;
				int32_t *soi = reinterpret_cast<int32_t *>(srs + TTV);
				k3_named_sync(1 + wg, 128);
				ts.template store<TTV>(srs, soi, ct);
				k3_named_sync(1 + wg, 128);
				if constexpr ((XV & XV_NOEPI) != 0) {
				} else if constexpr ((XV & XV_F8E) != 0) {
					/* XV_F8O: the warpgroup's output buffer, odd stage 5 + 2 wg's token region */
					epilogue_f8e<EPI, TTV, TTV, XV>(p, tl, acc, wr0, lane, srs, soi, flm,
									(XV & XV_F8O) ? sm + C::stage_off(5 + 2 * wg) : nullptr,
									(XV & XV_F8O) ? sm + C::stage_off(1 + 2 * wg) : nullptr);
				} else {
					epilogue_nb<EPI, TTV, TTV, XV>(p, tl, acc, wr0, lane, srs, soi);
				}
			}
		}
	}
}

template <bool FP4, bool TMA, bool CLU, int EPI, int TTV, bool NB, int XV>
__global__ void __launch_bounds__(nthreads<XV>(), 1) wg_kernel(const __grid_constant__ params p,
							const __grid_constant__ tmaps tm)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	using C = wcfg<FP4, TTV, XV>;
	extern __shared__ __align__(16) unsigned char smem_raw[];
	unsigned char *sm = smem_raw + ((1024u - (k3_smem_u32(smem_raw) & 1023u)) & 1023u);
	uint64_t *full = reinterpret_cast<uint64_t *>(sm + C::OFF_BAR), *empty = full + C::STAGES;
	int32_t *tab = reinterpret_cast<int32_t *>(sm + C::OFF_TAB);
	const int ncl = CLU ? (int)cluster_size() : 1;
	if (threadIdx.x == 0) {
#pragma unroll
		for (int s = 0; s < C::STAGES; s++) {
			/* + the arrival with the tile's bytes; XP: the token rows' 128 and the expanders' 128 */
			k3_mbar_init(&full[s], C::XP ? 256 : TMA ? 129 : 128);
			k3_mbar_init(&empty[s], CLU ? 8 * ncl : 128 * nwg<XV>());
		}
#pragma unroll
		for (int r = 0; r < C::RSTAGES; r++) /* XP: the scales' 128 + the raw tile's bytes */
			k3_mbar_init(&empty[C::STAGES + r], 129);
		k3_mbar_fence_init();
		if (TMA)
			asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tm.w)) : "memory");
		if ((XV & XV_TX) != 0) /* (launched only with the map) */
			asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tm.a)) : "memory");
	}
	int total;
	if (p.n_groups > 0) {
		build_tab<TTV>(p, tab, ncl); /* synchronizes the CTA */
		total = tab[p.n_groups] * p.num_n;
	} else {
		__syncthreads();
		total = p.num_m * p.num_n;
	}
	if (CLU) /* the barriers of every CTA initialized before any is written from another */
		cluster_sync();
	if (threadIdx.x < 128) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(regs<TTV, regs_key<XV>()>::PRODUCER));
		if constexpr (C::XP)
			produce_xp<TTV, XV>(p, &tm.w, sm, full, empty, empty + C::STAGES, tab, total);
		else
			produce<FP4, TMA, CLU, TTV, XV>(p, &tm.w, &tm.a, sm, full, empty, tab, total);
	} else {
		asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(regs<TTV, regs_key<XV>()>::CONSUMER));
		consume<FP4, CLU, EPI, TTV, NB, XV>(p, sm, full, empty, tab, total);
	}
	if (CLU) /* no CTA exits while another may still arrive on its barriers */
		cluster_sync();
#else
	__trap(); /* not launched: wg_supported() is false without an sm_90a build */
#endif
}

/* Launches the kernel: CLU, in clusters of ncl CTAs (as many as fit at once: sms caps the grid
 * of the plain kernel). */
template <bool FP4, bool TMA, bool CLU, int EPI, int TTV, bool NB, int XV = 0>
int launch(const params &p, const tmaps &tmw, int grid, int ncl, cudaStream_t stream)
{
	using C = wcfg<FP4, TTV, XV>;
	auto kern = wg_kernel<FP4, TMA, CLU, EPI, TTV, NB, XV>;
	static bool configured = false;
	static int clusters[5] = { 0, 0, 0, 0, 0 }; /* resident clusters of each size */
	if (!configured) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM) !=
		    cudaSuccess)
			return k3_launch_status();
		configured = true;
	}
	if (!CLU) {
		kern<<<grid, nthreads<XV>(), C::SMEM, stream>>>(p, tmw);
		return k3_launch_status();
	}
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = (unsigned)ncl, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
	cfg.blockDim = dim3(nthreads<XV>()), cfg.dynamicSmemBytes = C::SMEM, cfg.stream = stream;
	cfg.attrs = attr, cfg.numAttrs = 1;
	if (clusters[ncl] == 0) {
		cfg.gridDim = dim3((unsigned)(grid / ncl * ncl));
		int n = 0;
		if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess)
			return k3_launch_status();
		if (n <= 0)
			return -EIO; /* no cluster of this size fits on the device */
		clusters[ncl] = n;
	}
	cfg.gridDim = dim3((unsigned)(clusters[ncl] * ncl));
	(void)cudaLaunchKernelEx(&cfg, kern, p, tmw);
	return k3_launch_status();
}

template <bool FP4, bool TMA, bool CLU, int TTV = TT, bool NB = false>
int launch_epi(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, int ncl, cudaStream_t s)
{
	switch (epi) {
	case K3_EPI_BF16:
		return launch<FP4, TMA, CLU, K3_EPI_BF16, TTV, NB>(p, tmw, grid, ncl, s);
	case K3_EPI_SPLIT:
		return launch<FP4, TMA, CLU, K3_EPI_SPLIT, TTV, NB>(p, tmw, grid, ncl, s);
	case K3_EPI_GLU:
		return launch<FP4, TMA, CLU, K3_EPI_GLU, TTV, NB>(p, tmw, grid, ncl, s);
	case K3_EPI_SCALE:
		return launch<FP4, TMA, CLU, K3_EPI_SCALE, TTV, NB>(p, tmw, grid, ncl, s);
	case K3_EPI_ADD:
		return launch<FP4, TMA, CLU, K3_EPI_ADD, TTV, NB>(p, tmw, grid, ncl, s);
	case K3_EPI_GATE:
		return launch<FP4, TMA, CLU, K3_EPI_GATE, TTV, NB>(p, tmw, grid, ncl, s);
	}
	return -EINVAL;
}

/* The GLU and SCALE launches (the expert GEMMs) with the extras XV; the other epilogues as
 * launch_epi's (no extras). */
template <bool CLU, int TTV, int XV, bool FP4 = false>
int launch_x(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, int ncl, cudaStream_t s)
{
	if (epi == K3_EPI_GLU)
		return launch<FP4, true, CLU, K3_EPI_GLU, TTV, true, XV>(p, tmw, grid, ncl, s);
	if (epi == K3_EPI_SCALE)
		return launch<FP4, true, CLU, K3_EPI_SCALE, TTV, true, XV & ~XV_FGLU>(p, tmw, grid, ncl, s);
	return launch_epi<FP4, true, CLU, TTV, true>(p, tmw, epi, grid, ncl, s);
}

/* MXFP4 weights through the expander kernel (XV_XP, "wide2x"): the GLU and SCALE launches (the
 * expert GEMMs) in wide2's form (176-token chunks, no clusters, one epilogue a kernel, GLU
 * through tanh.approx), their consumers the BF16 kernel's; the other epilogues run wide2's
 * MXFP4 kernel. */
int launch_xp(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, cudaStream_t s)
{
	if (epi == K3_EPI_GLU)
		return launch<true, true, false, K3_EPI_GLU, TT_WIDE, true, XV_ONE | XV_FGLU | XV_XP>(p, tmw, grid, 1, s);
	if (epi == K3_EPI_SCALE)
		return launch<true, true, false, K3_EPI_SCALE, TT_WIDE, true, XV_ONE | XV_XP>(p, tmw, grid, 1, s);
	return launch_x<false, TT, XV_ONE | XV_FGLU, true>(p, tmw, epi, grid, 1, s);
}

/* MXFP4 weights through the register double-buffered kernel (XV_RS1, "wide2r": 128-token tiles,
 * "wide2rw": 176-token chunks as wide2's BF16 ones): the GLU and SCALE launches (the expert
 * GEMMs), one epilogue a kernel, GLU through tanh.approx; the other epilogues run wide2's MXFP4
 * kernel. */
template <int TTV, int XE = 0>
int launch_rs1(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, cudaStream_t s)
{
	if (epi == K3_EPI_GLU)
		return launch<true, true, false, K3_EPI_GLU, TTV, true, XV_ONE | XV_FGLU | XV_RS1 | XE>(p, tmw, grid, 1, s);
	if (epi == K3_EPI_SCALE)
		return launch<true, true, false, K3_EPI_SCALE, TTV, true, XV_ONE | XV_RS1 | XE>(p, tmw, grid, 1, s);
	return launch_x<false, TT, XV_ONE | XV_FGLU, true>(p, tmw, epi, grid, 1, s);
}

/* The measurement rows of wide2rqp's k loop (2026-12-04n; their outputs wrong): "diag-rqp-nofeed"
 * (XV_NOFEED: no token or weight copies, the stages stale, only the scale words copied) and
 * "diag-rqp-nomma" (XV_NOMMA: the conversions kept live, no MMA). 128-token tiles, one epilogue
 * each, the one its launch runs (gathered rows, XV_PP: GLU, w13; the token map, XV_TX: SCALE,
 * w2); -ENOTSUP otherwise. bench/results/k3-kernels-h200-2026-12-04n. */
template <int XE>
int launch_diag(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, cudaStream_t s)
{
	if constexpr ((XE & XV_PP) != 0) {
		if (epi == K3_EPI_GLU)
			return launch<true, true, false, K3_EPI_GLU, TT, true, XV_ONE | XV_FGLU | XV_RS1 | XE>(p, tmw, grid, 1, s);
	} else {
		if (epi == K3_EPI_SCALE)
			return launch<true, true, false, K3_EPI_SCALE, TT, true, XV_ONE | XV_RS1 | XE>(p, tmw, grid, 1, s);
	}
	return -ENOTSUP;
}

/* The FP8 kernel (XV_F8, "wide2f8"; f8_kblock()): E4M3 activations with a scale a row, the weights
 * in the FP8-word tile layout; wide2rqp's 128-token tiles and token copies (produce_pp(), gathered
 * or not), one epilogue a kernel; GLU (through tanh.approx) and SCALE only. */
template <int XE>
int launch_f8x(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, cudaStream_t s)
{
	constexpr int X = XV_ONE | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_PP | XV_F8 | XE;
	if (epi == K3_EPI_GLU)
		return launch<true, true, false, K3_EPI_GLU, TT, true, X | XV_FGLU>(p, tmw, grid, 1, s);
	if (epi == K3_EPI_SCALE)
		return launch<true, true, false, K3_EPI_SCALE, TT, true, X>(p, tmw, grid, 1, s);
	return -EINVAL;
}

/* K3_GEMM_F8_SETS (read per call): the FP8 kernel's form. Unset or empty: the default, 2eo below
 * (since round 05o, 2026-12-05: faster than 2 in 6 of 6 pairs at each of w13 / w2 x T = 4K / 16K
 * on a held-out call, bench/results/k3-kernels-h100-2026-12-05m). The others (opt-in), named by
 * the A register sets (f8_kblock()) first: "2": 2 sets (XV_F8S2; the default before 05o); "4": 4 (opt-in: ptxas serializes its MMAs, C7513, and at T = 4K
 * it ran w13 8-11 % slower than 2 sets in the same process, bench/results/k3-kernels-h200-
 * 2026-12-04q, call 2); "m4" / "m2": A through 4 / 2 slots in shared memory (XV_F8M,
 * f8m_kblock(); opt-in); "m4k": 4 slots filled a k block at a time (XV_F8K, f8mk_kblock();
 * opt-in); "2p": 2 sets on compact pairs, 12 stages (XV_F8P, wcfg; opt-in), "2r": 2 sets with
 * the odd stage released by its own pair (XV_F8R, f8_kblock(); opt-in), "2pr": both, "2t": 2 sets
 * with the scale tables made by the warp together (XV_F8T, f8t_tables(); opt-in), "2prt": all
 * three, "2l": 2 sets with a k block's words by one 16-byte load at its start (XV_F8L,
 * f8_kblock(); opt-in), "2lr": 2l and 2r, "2w": GLU's BF16 outputs two columns a 4-byte store
 * (XV_F8W, epilogue_nb(); opt-in), "2lw": 2l and 2w, "2e" / "2e4": the epilogue in blocks of 16 /
 * 32 tokens with the rows' floors loaded before the k loop (XV_F8E, epilogue_f8e(); opt-in), "2eo":
 * 2e with GLU's outputs through shared memory, 16-byte stores (XV_F8O; opt-in) (all twelve the
 * default's arithmetic: its outputs bit for bit); another value: -EINVAL, the choices on stderr. */
int launch_f8(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, cudaStream_t s)
{
	using launcher = int (*)(const params &, const tmaps &, enum k3_epilogue, int, cudaStream_t);
	static const struct {
		const char *name;
		launcher run;
	} forms[] = {
		{ "2", launch_f8x<XV_F8S2> },
		{ "4", launch_f8x<0> },
		{ "m4", launch_f8x<XV_F8M> },
		{ "m2", launch_f8x<XV_F8M | XV_F8S2> },
		{ "m4k", launch_f8x<XV_F8M | XV_F8K> },
		{ "2p", launch_f8x<XV_F8S2 | XV_F8P> },
		{ "2r", launch_f8x<XV_F8S2 | XV_F8R> },
		{ "2pr", launch_f8x<XV_F8S2 | XV_F8P | XV_F8R> },
		{ "2t", launch_f8x<XV_F8S2 | XV_F8T> },
		{ "2prt", launch_f8x<XV_F8S2 | XV_F8P | XV_F8R | XV_F8T> },
		{ "2l", launch_f8x<XV_F8S2 | XV_F8L> },
		{ "2lr", launch_f8x<XV_F8S2 | XV_F8L | XV_F8R> },
		{ "2w", launch_f8x<XV_F8S2 | XV_F8W> },
		{ "2lw", launch_f8x<XV_F8S2 | XV_F8L | XV_F8W> },
		{ "2e", launch_f8x<XV_F8S2 | XV_F8E> },
		{ "2e4", launch_f8x<XV_F8S2 | XV_F8E | XV_F8E4> },
		{ "2eo", launch_f8x<XV_F8S2 | XV_F8E | XV_F8O> },
	};
	const char *e = getenv("K3_GEMM_F8_SETS");
	if (!e || !*e)
		return launch_f8x<XV_F8S2 | XV_F8E | XV_F8O>(p, tmw, epi, grid, s); /* "2eo" */
	for (const auto &f : forms)
		if (!strcmp(e, f.name))
			return f.run(p, tmw, epi, grid, s);
	fprintf(stderr, "k3_gemm: K3_GEMM_F8_SETS=%s is not one of", e);
	for (const auto &f : forms)
		fprintf(stderr, " %s", f.name);
	fprintf(stderr, "\n");
	return -EINVAL;
}

/* wide2ra's kernels (wide2rv above 128 rows a group on average, else wide2r) with the extras xe
 * (XV_PF "wide2rf", XV_LEAN "wide2rl", both "wide2rlf", XV_LEAN | XV_RP "wide2rp", and XV_RQ
 * "wide2rq"). */
int rs1_extras(const params &p, const tmaps &tmw, enum k3_epilogue epi, int grid, cudaStream_t s, int xe)
{
	const bool wide = p.rows > (int64_t)128 * p.n_groups;
	constexpr int RQ = XV_LEAN | XV_RP | XV_RQ;
	switch (xe) { /* the measurement rows (launch_diag()) */
	case RQ | XV_PP | XV_NOFEED:
		return launch_diag<RQ | XV_PP | XV_NOFEED>(p, tmw, epi, grid, s);
	case RQ | XV_PP | XV_NOMMA:
		return launch_diag<RQ | XV_PP | XV_NOMMA>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_NOFEED:
		return launch_diag<RQ | XV_TX | XV_NOFEED>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_NOMMA:
		return launch_diag<RQ | XV_TX | XV_NOMMA>(p, tmw, epi, grid, s);
	case RQ | XV_PP | XV_F8D:
		return launch_diag<RQ | XV_PP | XV_F8D>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_F8D:
		return launch_diag<RQ | XV_TX | XV_F8D>(p, tmw, epi, grid, s);
	case RQ | XV_PP | XV_F8D | XV_NOMMA:
		return launch_diag<RQ | XV_PP | XV_F8D | XV_NOMMA>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_F8D | XV_NOMMA:
		return launch_diag<RQ | XV_TX | XV_F8D | XV_NOMMA>(p, tmw, epi, grid, s);
	case RQ | XV_PP | XV_F8D | XV_F8B:
		return launch_diag<RQ | XV_PP | XV_F8D | XV_F8B>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_F8D | XV_F8B:
		return launch_diag<RQ | XV_TX | XV_F8D | XV_F8B>(p, tmw, epi, grid, s);
	case RQ | XV_PP | XV_F8D | XV_F8B | XV_NOMMA:
		return launch_diag<RQ | XV_PP | XV_F8D | XV_F8B | XV_NOMMA>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_F8D | XV_F8B | XV_NOMMA:
		return launch_diag<RQ | XV_TX | XV_F8D | XV_F8B | XV_NOMMA>(p, tmw, epi, grid, s);
	case RQ | XV_PP | XV_F8D | XV_F8B | XV_NOFEED:
		return launch_diag<RQ | XV_PP | XV_F8D | XV_F8B | XV_NOFEED>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_F8D | XV_F8B | XV_NOFEED:
		return launch_diag<RQ | XV_TX | XV_F8D | XV_F8B | XV_NOFEED>(p, tmw, epi, grid, s);
	case RQ | XV_PP | XV_F8D | XV_F8B | XV_NOMMA | XV_NOFEED:
		return launch_diag<RQ | XV_PP | XV_F8D | XV_F8B | XV_NOMMA | XV_NOFEED>(p, tmw, epi, grid, s);
	case RQ | XV_TX | XV_F8D | XV_F8B | XV_NOMMA | XV_NOFEED:
		return launch_diag<RQ | XV_TX | XV_F8D | XV_F8B | XV_NOMMA | XV_NOFEED>(p, tmw, epi, grid, s);
	default:
		if (xe & (XV_NOFEED | XV_NOMMA | XV_F8D | XV_F8B))
			return -ENOTSUP;
		break;
	}
	if (xe == (XV_LEAN | XV_RP))
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP>(p, tmw, epi, grid, s)
			    : launch_rs1<TT, XV_LEAN | XV_RP>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ))
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ>(p, tmw, epi, grid, s)
			    : launch_rs1<TT, XV_LEAN | XV_RP | XV_RQ>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ | XV_V16)) /* wide2rqv */
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ | XV_V16>(p, tmw, epi, grid, s)
			    : launch_rs1<TT, XV_LEAN | XV_RP | XV_RQ | XV_V16>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ | XV_W4 | XV_V16)) /* wide2rq4v: wide2rqv's chunks above 128 */
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ | XV_V16>(p, tmw, epi, grid, s)
			    : launch_rs1<TT_W4, XV_LEAN | XV_RP | XV_RQ | XV_W4 | XV_V16>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ | XV_W4)) /* wide2rq4: wide2rq's chunks above 128 */
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ>(p, tmw, epi, grid, s)
			    : launch_rs1<TT_W4, XV_LEAN | XV_RP | XV_RQ | XV_W4>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ | XV_TX)) /* wide2rqt */
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ | XV_TX>(p, tmw, epi, grid, s)
			    : launch_rs1<TT, XV_LEAN | XV_RP | XV_RQ | XV_TX>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ | XV_PP)) /* wide2rqp on gathered rows (elsewhere wide2rqt's kernels) */
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ | XV_PP>(p, tmw, epi, grid, s)
			    : launch_rs1<TT, XV_LEAN | XV_RP | XV_RQ | XV_PP>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ | XV_W4 | XV_TX)) /* wide2rq4t: wide2rqt's chunks above 128 */
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ | XV_TX>(p, tmw, epi, grid, s)
			    : launch_rs1<TT_W4, XV_LEAN | XV_RP | XV_RQ | XV_W4 | XV_TX>(p, tmw, epi, grid, s);
	if (xe == (XV_LEAN | XV_RP | XV_RQ | XV_OFS))
		return wide ? launch_rs1<TT_RSV, XV_LEAN | XV_RP | XV_RQ | XV_OFS>(p, tmw, epi, grid, s)
			    : launch_rs1<TT, XV_LEAN | XV_RP | XV_RQ | XV_OFS>(p, tmw, epi, grid, s);
	if (xe == XV_PF)
		return wide ? launch_rs1<TT_RSV, XV_PF>(p, tmw, epi, grid, s) : launch_rs1<TT, XV_PF>(p, tmw, epi, grid, s);
	if (xe == XV_LEAN)
		return wide ? launch_rs1<TT_RSV, XV_LEAN>(p, tmw, epi, grid, s)
			    : launch_rs1<TT, XV_LEAN>(p, tmw, epi, grid, s);
	return wide ? launch_rs1<TT_RSV, XV_PF | XV_LEAN>(p, tmw, epi, grid, s)
		    : launch_rs1<TT, XV_PF | XV_LEAN>(p, tmw, epi, grid, s);
}

/* Which kernel (K3_GEMM_WG_KERNEL, read per call; bench/results/k3-kernels-h200-2026-12-01za and
 * -2026-12-02e):
 *  - "q": round q's kernel: token tiles of up to 128 rows (clusters of 3 at K3's T = 16K, 117 of
 *    132 SMs), the epilogue reading each row's scalars from global memory in branches;
 *  - "epi": the same tiles, the branch-free epilogue (epilogue_nb: the token scalars loaded
 *    through the k loop into shared memory, stores predicated, SiTU-GLU without divisions);
 *  - "wide": that epilogue, and for grouped BF16 launches in clusters token chunks of up to 176
 *    rows (wgmma N up to 176: 292-token groups in 2 chunks, clusters of 2, all 132 SMs);
 *  - round 22's variants of wide (grouped BF16 launches by TMA; GLU and SCALE epilogues, the
 *    others run wide's): "fglu", SiTU-GLU through tanh.approx (XV_FGLU); "wide1", wide's chunks
 *    without clusters (each CTA its own weight tiles); "wide2", wide1 with fglu's SiTU-GLU and one
 *    epilogue a kernel (XV_ONE; groups too small for clusters: 128-row chunks, one epilogue;
 *    MXFP4: its kernel with one epilogue); "wide2c", wide2 in clusters; "one1", wide2 with the
 *    exact SiTU-GLU; for measurements only, their outputs wrong: "diag-noepi", "diag-nofeed",
 *    "diag-nomma" (the XV_NO* bits).
 *  - "wide2x" (2026-12-02g, opt-in: measured slower): wide2, and MXFP4 weights through the
 *    expander kernel (XV_XP, produce_xp(): the raw tiles by TMA, expanded to BF16 by the
 *    producer warpgroup, the consumers wide2's BF16 code with 176-token chunks); BF16 weights
 *    as wide2. bench/results/k3-kernels-h200-2026-12-02g, call 2 (one process, beside wide2):
 *    MXFP4 w13 at T = 16K 38.6-38.8 ms against wide2's 33.7-34.5, T = 4K 17.0-17.1 against
 *    10.1-10.6; w2 19.5-19.7 / 8.4-8.6 against 16.9-17.1 / 4.8-6.0; tests and sanitizers clean.
 *    The producer sets the pace (~3,800 cycles a k block at both T, the MMAs ~1,400 at N = 176).
 *  - "wide2r", "wide2rw", "wide2rv" (2026-12-02m; bench/results/k3-kernels-h200-2026-12-02m):
 *    wide2, and MXFP4 weights through the register-A kernel double-buffered (XV_RS1: groups of
 *    k steps in two register sets, wait_group 1, the scales converted once per scale group) with
 *    token chunks of up to 128 / 176 / 160 rows. wide2r: 3-4 % faster than wide2 at T = 16K,
 *    2-10 % at 4K; wide2rw: ptxas serializes its MMAs (C7512: 2 x 88 accumulators and the A sets
 *    over the consumers' 216 registers), tested, not benched; wide2rv (the grouped default):
 *    K3's ~292-token experts in 2 chunks instead of 3, so each weight tile's conversion serves 146
 *    tokens instead of ~97: MXFP4 w13 / w2 at T = 16K 26.1-26.4 / 13.3-13.4 ms against wide2's
 *    34.0-34.4 / 16.8-17.0 (62-66 % of the cuBLASLt beside each row).
 *  - "wide2ra" (2026-12-02o; bench/results/k3-kernels-h200-2026-12-02o): wide2rv above 128 rows
 *    a group on average, else wide2r (the default). The pair kernel of that round ("wide2p",
 *    "wide2pa": tiles of 128 weight rows by two halves of 160 token rows, each A fragment feeding
 *    both halves' MMAs; 13-22 % slower than wide2rv at T = 16K, its token gather the limit) was
 *    removed in 2026-12-02s (docs/KERNELS.md, LatentMoE, round 02s).
 *  - "wide2rf", "wide2rl", "wide2rlf" (2026-12-02s; bench/results/k3-kernels-h200-2026-12-02s):
 *    wide2ra's kernels with XV_PF (next_group(): each group's fragments loaded and expanded
 *    before the wait that frees their register set), XV_LEAN (scales_fp4k() by a byte permute
 *    and a shift; produce()'s token copies one multiply-add a row; "wide2rl", the default's
 *    kernel without the tile layout), or
 *    both.
 *  - "wide2rp" (2026-12-02za; bench/results/k3-kernels-h200-2026-12-02za): wide2rl's kernels on
 *    the weights' wgmma tile layout (XV_RP; k3_gemm_args.w_wg, k3_gemm_repack_wg(), once at load;
 *    k3_gemm_wg_rp.cuh): a lane's A fragments one 4- or 8-byte load an m64 block, 8 integer
 *    instructions and 4 multiplies a fragment (was 2 loads, 3 + 15 integer, 4 multiplies); the
 *    scales 2^(s - 1) (exact for E8M0 0 .. 128, which the repack checks). Without w_wg: wide2rl.
 *  - "wide2rq" (2026-12-03q): wide2rp with a leaner k loop around the same arithmetic (XV_RQ,
 *    above rq_kblock(): stage cursor, descriptors, scale selectors and words, the producer's scale
 *    copies); outputs bit for bit wide2rp's. Without w_wg: wide2rl.
 *  - "wide2rqo" (2026-12-03r, opt-in): wide2rq with the second consumer warpgroup started
 *    OFS_CYCLES late (XV_OFS, consume()), so that the warpgroups' epilogues do not coincide.
 *  - "wide2rq4" (2026-12-03s, opt-in): wide2rq over four consumer warpgroups of one m64 block
 *    each (XV_W4, 640 threads, token tiles of TT_W4 = 96; wide2rq's chunks above 128 rows a
 *    group); "wide2rqv" / "wide2rq4v" (2026-12-03t, opt-in): those with the A words of a k block
 *    one conflict-free 16-byte load (XV_V16, rq_load16()). All bit for bit wide2rp's; none faster
 *    at T = 4K (bench/results/k3-kernels-h200-2026-12-03s, -03t: w13 within the calls' spread,
 *    tensor pipe 56-59 % as wide2rq's; the consumers find the next stage not landed in 64-93 %
 *    of the k blocks).
 *  - "wide2rqt" / "wide2rq4t" (2026-12-03u; wide2rqt the default until 04m): wide2rq / wide2rq4 with the token tile of a
 *    k block by tensor copies of 16 rows (XV_TX, a_map(); produce()) where the rows are not
 *    gathered (w2; gathered launches run wide2rq / wide2rq4): the producer's ~115 instructions a
 *    k block were the k block's critical path at T = 4K (03t). (03u's first form, one tensor
 *    copy a row, gathered too: bit for bit, 2x slower.)
 *  - "wide2rqp" (2026-12-04m, the grouped default since: GROUPED_DEFAULT): wide2rqt, and where the token rows are
 *    gathered (w13, which wide2rqt runs as wide2rq) their cp.async copies from pointers made once
 *    a tile (XV_PP, produce_pp(): a 64-bit pointer a row, on by 256 bytes a k block pair; a k
 *    block one jump, one copy a row at an immediate offset, the zero-fill decided once a tile)
 *    instead of the address and predicate work of every row in every k block: the producer's
 *    ~115 instructions a k block (10 copies, ~60 integer, 7 branches) were the k block's critical
 *    path for w13 at T = 4K (bench/results/k3-kernels-h200-2026-12-03t, its last paragraph). The
 *    same bytes to the same places: bit for bit wide2rp's (test-moe-gpu). Rows not gathered (w2):
 *    wide2rqt's kernels.
 *  - "diag-rqp-nofeed", "diag-rqp-nomma" (2026-12-04n, measurements only, MXFP4, outputs wrong):
 *    wide2rqp's k loop on 128-token tiles without the token and weight copies (XV_NOFEED) or
 *    without the MMAs, their A kept live (XV_NOMMA); launch_diag(). At T = 4K w13 without MMAs
 *    4.33-4.38 of 6.9 ms (bench/results/k3-kernels-h200-2026-12-04n). With BF16 weights they run
 *    wide2's kernel, as the wide2r family's names do.
 *  - "diag-rqp-fp8", "diag-rqp-fp8-nomma" (2026-12-04p, measurements only, MXFP4, outputs wrong):
 *    wide2rqp's k loop with each group's conversions and MMAs those of an FP8 kernel on the FP8
 *    word form (XV_F8D, f8d_group()): the table decode of k3_gemm_wg_rp.cuh and one E4M3 MMA of
 *    k 32 an m64 block a group, half the MMAs' k-steps; -nomma without those MMAs. At T = 4K w13
 *    5.29-5.60 ms beside wide2rqp's 6.34-6.51 (73.7-73.8 % of cuBLASLt), -nomma 4.31-4.64 (the
 *    BF16 expansion's 4.23-4.28: ptxas made the decode 12 instructions for 8 weights, as many as
 *    BF16's, and as many on the integer ALU: 130 a k-block pair). "diag-rqp-fp8b",
 *    "-fp8b-nomma" (XV_F8B): the floor folded into the table's constants and the 7-instruction
 *    decode (k3_wgf8_decode7(), byte permutes by k3_prmt_raw()): 10 for 8 weights. (Call 2's
 *    fp8b, 9b08f51, kept __byte_perm(), which masks each selector again, and m >> 16 as IMAD.HI:
 *    293 instructions a k-block pair as fp8's, slower with MMAs: 6.02-6.05 ms at 4K w13.) Call 3:
 *    261 instructions a pair, w13 at 4K 5.04-5.38 ms (wide2rqp 6.23-6.51, fp8 5.17-5.67), -nomma
 *    4.27-4.29: the kernel this measures is not built (bench/results/k3-kernels-h200-2026-12-04p).
 *    "diag-rqp-fp8b-nofeed", "-fp8b-nomma-nofeed" (call 4): the same without the token and weight
 *    copies (XV_NOFEED, stale stages): what the FP8 kernel's k loop takes with no feed at all.
 * Unset or empty: GROUPED_DEFAULT for grouped launches, "q" for dense ones (epi and the wide
 * family were measured on the grouped expert GEMMs only; the wide family's names run epi there).
 * Another name: kv -1 (k3_gemm returns -EINVAL, the names on stderr). */
struct variant {
	int kv;	   /* 0 q, 1 epi, 2 the wide family; -1 an unknown name */
	int xv;	   /* XV_* bits (kv 2 only) */
	bool nocl; /* wide chunks without clusters */
	int rw;	   /* XV_RS1: token chunks of up to 128 (0, "wide2r"), 176 (1, "wide2rw"), 160 (2, "wide2rv");
		    * 5 "wide2ra": wide2rv above 128 rows a group on average, else wide2r */
};

/* "wide2rqp" since 2026-12-04m (the lead; helper-74's XV_PP; kernels/calls/k3-2026-12-04m.sh,
 * -04m2.sh; bench/results/k3-kernels-h200-2026-12-04m): wide2rqt, and where the token rows are
 * gathered (w13) their cp.async copies from pointers made once a tile (produce_pp()). Outputs bit
 * for bit wide2rp's (test-moe-gpu *wide_small*, *k3_expert_shapes*; the layer's tests through it
 * against float64; memcheck and racecheck of its small test clean). Two calls, one process each,
 * alternating with wide2rq: w13 at T = 4K faster in 3 of 3 and 5 of 6 pairs (medians 6.69 against
 * 6.94 ms, 6.93 against 7.05; 57-60 % of the cuBLASLt row beside each against 53-57 %); w2 is
 * wide2rqt's kernel; T = 16K within the calls' spread.
 * "wide2rqt" from 2026-12-03u (the lead; kernels/calls/k3-2026-12-03u2.sh, -u3.sh; bench/results/
 * k3-kernels-h200-2026-12-03u): wide2rq, and where the token rows are not gathered (w2) the token
 * tile by 16-row tensor copies (XV_TX); gathered launches (w13) are wide2rq's. Outputs bit for bit
 * wide2rp's (test-moe-gpu *wide_small*; the layer's tests through it, float64). Two calls, each one
 * process alternating with wide2rq: w2 at T = 4K 2.96 / 3.26 / 3.54 ms against 3.65 / 3.44 / 3.41
 * (call 2), median 3.40 against 3.55 ms, faster in 5 of 8 pairs (call 3, 58-64 % of the cuBLASLt
 * row beside each against 54-60 %); w2 at T = 16K faster in 8 of 8 pairs (1-2.5 %); w13 the same
 * code, within the calls' spread. Without the token map (a gathered, unaligned or too large A):
 * wide2rq.
 * "wide2rq" from 2026-12-03q (the lead; kernels/calls/k3-2026-12-03q.sh, bench/results/
 * k3-kernels-h200-2026-12-03q): wide2rp's arithmetic with a leaner k loop (XV_RQ), outputs bit
 * for bit wide2rp's (test-moe-gpu); one process, alternating with wide2rp, % of the cuBLASLt row
 * beside each: T = 16K w13 18.8 / 20.3 ms (88.2 / 87.0 %) against 21.6 / 22.1 (72.0 / 73.8 %), w2
 * 9.50 / 9.47 (88.9 / 89.0 %) against 10.45 / 10.91; T = 4K w13 6.75 / 6.49 (58.0 / 62.4 %)
 * against 7.80 / 7.90 (46.7 / 46.3 %), w2 3.11 / 3.55 (60.5 / 57.2 %) against 4.05 / 3.86;
 * memcheck and racecheck of its small test clean. Without w_wg: wide2rl, as wide2rp's.
 * "wide2rp" from 2026-12-02 round 21 (the lead; 02za call 1 and round 21's call 1, each one process
 * alternating wide2rl and wide2rp: bench/results/k3-kernels-h200-2026-12-02za/README.md and
 * -02x/README.md): on the tile layout (k3_gemm_args.w_wg) MXFP4 at T = 16K w13 20.7-24.2 ms
 * (medians 21.2, 21.7) against wide2rl's 23.6-24.1 (71.9-79.9 % against 61.8-70.0 % of the
 * cuBLASLt row beside each), w2 10.3-10.6 against 11.8-12.2 (75.0-81.0 against 64.4-69.6 %),
 * T = 4K 16-25 % faster; faster in 11 of 12 and 7 of 8 pairs (the other a tie); test-moe-gpu's
 * wgmma and K3-shape tests (float64) passed and memcheck / racecheck of its small test are clean
 * in round 21. Without w_wg (every caller that did
 * not make the layout: the layer and the slice today) it is wide2rl, bit for bit.
 * "wide2rl" from 2026-12-02 round 20 (the lead, on 2026-12-02s call 2: one process, two bench
 * processes, kernels/calls/k3-2026-12-02s-2.sh; bench/results/k3-kernels-h200-2026-12-02s): wide2ra's
 * chunks with lean E8M0 scales and token copies (XV_LEAN), MXFP4 at T = 16K w13 23.8-24.0 ms against
 * wide2ra's 25.8-26.0 (70.2-72.3 against 64.8-65.7 % of the cuBLASLt row beside each), w2
 * 12.2-12.4 against 13.3-13.9, T = 4K faster in 5 of 6 rows; test-moe-gpu's wgmma tests (float64,
 * the chunk edges) and memcheck / racecheck of the small wide test clean; round 20's call repeats
 * the A/B (K3_BENCH_WG_KERNELS). E8M0 0 decodes to 0 and 255 to infinity there, as the gemv's do.
 * "wide2ra" from 2026-12-02o (kernels/calls/k3-2026-12-02o.sh, -2.sh; bench/results/
 * k3-kernels-h200-2026-12-02o): wide2rv where the groups hold more than 128 rows on average (K3's
 * T = 16K: the same kernel as before), wide2r at or below (T = 4K, ~73 rows: one 128-token chunk
 * either way, wide2r's groups of two k steps). Call 2, one process, two rows each: MXFP4 at T = 4K
 * w13 9.42-9.57 ms against wide2rv's 10.08-11.31 (37.8-38.0 against 31.5-35.3 % of the cuBLASLt
 * beside each row), w2 4.57-4.86 against 5.15-5.95; T = 16K equal (w13 25.4 against 25.4-25.9);
 * test-moe-gpu's wgmma and layer tests passed, memcheck and racecheck of the small wide test clean.
 * "wide2rv" since 2026-12-02m call 2 (kernels/calls/k3-2026-12-02m-2.sh; BF16 weights run wide2
 * under it, unchanged): MXFP4 at T = 16K, two rows each in one process, w13 26.1-26.4 ms against
 * wide2's 34.0-34.4 (62.3-66.4 % of the cuBLASLt row beside it), w2 13.3-13.4 against 16.8-17.0;
 * at T = 4K w13 10.2-10.5 against 10.5-11.0, w2 5.5 against 5.0-5.6 (wide2r 4.4-4.6 there);
 * test-moe-gpu's wgmma and layer tests passed, memcheck and racecheck of the small wide test clean.
 * "wide2" from 2026-12-02e call 2 (kernels/calls/k3-2026-12-02e-2.sh, run by the lead): at
 * T = 16K, three rows each in two orders in one process, BF16 w13 21.3-21.6 ms against wide's
 * 26.8-27.4 (66.7-78.0 % of the cuBLASLt row beside it), w2 10.3-11.2 against 11.3-11.6, MXFP4
 * w13 33.6-35.0 against 36.6-37.6, MXFP4 w2 16.9-17.8 against 16.8-17.3 (equal within the call's
 * spread); test-moe-gpu's wgmma tests passed, memcheck and racecheck of the small wide test clean.
 * Before: "wide" (2026-12-01z call 2). */
constexpr const char *GROUPED_DEFAULT = "wide2rqp";

variant kernel_variant(const params &p)
{
	static const struct {
		const char *name;
		variant v;
	} names[] = { { "q", { 0, 0, false, 0 } },
		      { "epi", { 1, 0, false, 0 } },
		      { "wide", { 2, 0, false, 0 } },
		      { "fglu", { 2, XV_FGLU, false, 0 } },
		      { "wide1", { 2, 0, true, 0 } },
		      { "wide2", { 2, XV_ONE | XV_FGLU, true, 0 } },
		      { "wide2x", { 2, XV_ONE | XV_FGLU | XV_XP, true, 0 } },
		      { "wide2r", { 2, XV_ONE | XV_FGLU | XV_RS1, true, 0 } },
		      { "wide2rw", { 2, XV_ONE | XV_FGLU | XV_RS1, true, 1 } },
		      { "wide2rv", { 2, XV_ONE | XV_FGLU | XV_RS1, true, 2 } },
		      { "wide2ra", { 2, XV_ONE | XV_FGLU | XV_RS1, true, 5 } },
		      { "wide2rf", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_PF, true, 5 } },
		      { "wide2rl", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN, true, 5 } },
		      { "wide2rlf", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_PF, true, 5 } },
		      { "wide2rp", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP, true, 5 } },
		      { "wide2rq", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ, true, 5 } },
		      { "wide2rqo", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_OFS, true, 5 } },
		      { "wide2rq4", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_W4, true, 5 } },
		      { "wide2rqv", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_V16, true, 5 } },
		      { "wide2rq4v", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_W4 | XV_V16, true, 5 } },
		      { "wide2rqt", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX, true, 5 } },
		      { "wide2rq4t", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_W4 | XV_TX, true, 5 } },
		      { "wide2rqp", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP, true, 5 } },
		      { "diag-rqp-nofeed", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_NOFEED, true, 5 } },
		      { "diag-rqp-nomma", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_NOMMA, true, 5 } },
		      { "diag-rqp-fp8", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_F8D, true, 5 } },
		      { "diag-rqp-fp8-nomma", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_F8D | XV_NOMMA, true, 5 } },
		      { "diag-rqp-fp8b", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_F8D | XV_F8B, true, 5 } },
		      { "diag-rqp-fp8b-nomma", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_F8D | XV_F8B | XV_NOMMA, true, 5 } },
		      { "diag-rqp-fp8b-nofeed", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_F8D | XV_F8B | XV_NOFEED, true, 5 } },
		      { "diag-rqp-fp8b-nomma-nofeed", { 2, XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_TX | XV_PP | XV_F8D | XV_F8B | XV_NOMMA | XV_NOFEED, true, 5 } },
		      { "wide2c", { 2, XV_ONE | XV_FGLU, false, 0 } },
		      { "one1", { 2, XV_ONE, true, 0 } },
		      { "diag-noepi", { 2, XV_NOEPI, false, 0 } },
		      { "diag-nofeed", { 2, XV_NOFEED, false, 0 } },
		      { "diag-nomma", { 2, XV_NOMMA, false, 0 } } };
	const char *e = getenv("K3_GEMM_WG_KERNEL");
	if (e && *e) {
		bool known = false;
		for (const auto &n : names)
			known = known || !strcmp(e, n.name);
		if (!known) { /* a typo in an A/B must not run the default unnoticed */
			fprintf(stderr, "k3_gemm: K3_GEMM_WG_KERNEL=%s is not one of", e);
			for (const auto &n : names)
				fprintf(stderr, " %s", n.name);
			fprintf(stderr, "\n");
			return variant{ -1, 0, false, 0 };
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		for (const auto &n : names)
			if (e && !strcmp(e, n.name)) /* dense: the wide family runs epi */
				return p.n_groups > 0 ? n.v : variant{ n.v.kv < 1 ? n.v.kv : 1, 0, false, 0 };
		if (p.n_groups <= 0)
			return variant{ 0, 0, false, 0 };
		e = GROUPED_DEFAULT;
	}
	return variant{ 2, 0, false, 0 }; /* not reached: GROUPED_DEFAULT is one of the names */
}

/* Cluster size of a grouped launch with BF16 weight tiles by TMA. K3_GEMM_WG_CLUSTER (read per
 * call): unset or "auto": ceil(rows per group / tt) clamped to 1 .. 4 (tt: the kernel's token
 * chunk, 128, or 176 for the wide kernel: 2 at T = 16K), so that a cluster's CTAs
 * take the token chunks of a typical group and its weight tiles come from L2 once for them all
 * (3 at K3's T = 16K: 10-20 % faster than without, bench/results/k3-kernels-h200-2026-12-01q);
 * 0 or 1: the kernel without clusters; 2 .. 4: that size. MXFP4 weights never cluster (measured
 * 4-24 % slower there: its k loop, not the L2, is the limit). */
constexpr bool CLUSTER_DEFAULT_AUTO = true;

int cluster_ctas(const params &p, int tt)
{
	const char *e = getenv("K3_GEMM_WG_CLUSTER");
	if (!(e && *e) && !CLUSTER_DEFAULT_AUTO)
		return 1;
	if (e && *e && strcmp(e, "auto") != 0) {
		char *end = nullptr;
		const long v = strtol(e, &end, 10);
		if (*end == '\0' && v >= 0 && v <= 4)
			return v < 1 ? 1 : (int)v;
	}
	if (p.n_groups <= 0)
		return 1;
	const int64_t per_group = p.rows / p.n_groups, c = (per_group + tt - 1) / tt;
	return c < 1 ? 1 : c > 4 ? 4 : (int)c;
}

/* K3_GEMM_WG_WEIGHTS=cp in the environment: the weight tiles by cp.async from the producer's
 * threads (the kernel before TMA; for measurements beside it). Read per call. */
bool weights_by_cp_async()
{
	const char *e = getenv("K3_GEMM_WG_WEIGHTS");
	return e && !strcmp(e, "cp");
}

/* cuTensorMapEncodeTiled through the runtime's driver entry point (no libcuda link), once. */
using encode_fn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
			       const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
			       CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

encode_fn tensor_map_encoder()
{
	static encode_fn fn = nullptr;
	static bool looked = false;
	if (!looked) {
		void *f = nullptr;
		cudaDriverEntryPointQueryResult q;
		if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) ==
			    cudaSuccess &&
		    q == cudaDriverEntryPointSuccess)
			fn = reinterpret_cast<encode_fn>(f);
		looked = true;
	}
	return fn;
}

/* The weights' tensor map: {K (BF16) or K / 2 bytes (MXFP4), N, groups}, boxes of one stage's
 * tile ({64 BF16, 256} in the 128-byte swizzle; {32 bytes, 256} in the 32-byte swizzle, which
 * is k3_wg_fp4_half_offset's layout: bit 4 ^= bit 7), rows past N read as zeros. false where it
 * cannot be built (no encoder, unaligned weights). */
bool weight_map(const params &p, bool fp4, int box_rows, CUtensorMap *m)
{
	const void *base = fp4 ? (const void *)p.wp : (const void *)p.w;
	encode_fn enc = tensor_map_encoder();
	if (!enc || ((uintptr_t)base & 15u) != 0)
		return false;
	const uint64_t row_bytes = fp4 ? (uint64_t)p.K / 2 : (uint64_t)p.K * 2; /* a multiple of 32 */
	const cuuint64_t dim[3] = { fp4 ? (cuuint64_t)p.K / 2 : (cuuint64_t)p.K, (cuuint64_t)p.N,
				    (cuuint64_t)(p.n_groups > 0 ? p.n_groups : 1) };
	const cuuint64_t stride[2] = { row_bytes, row_bytes * (uint64_t)p.N };
	const cuuint32_t box[3] = { (cuuint32_t)(fp4 ? wcfg<true>::W_BOX : wcfg<false>::W_BOX), (cuuint32_t)box_rows,
				    1 };
	const cuuint32_t estride[3] = { 1, 1, 1 };
	memset(m, 0, sizeof(*m));
	return enc(m, fp4 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void *>(base),
		   dim, stride, box, estride, CU_TENSOR_MAP_INTERLEAVE_NONE,
		   fp4 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
		   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* The token rows' tensor map (XV_TX): A as {K, p.rows} BF16 (the grouped rows, no a_index), boxes
 * of 16 rows' k block ({64, 16}) in the 128-byte swizzle. false where it cannot be built (or the
 * rows are gathered). */
bool a_map(const params &p, CUtensorMap *m)
{
	encode_fn enc = tensor_map_encoder();
	if (!enc || p.a_index || ((uintptr_t)p.a & 15u) != 0 || p.rows < 1 || p.rows > (int64_t)INT_MAX - 256)
		return false; /* row coordinates (+ a box past the last row) are int */
	const cuuint64_t dim[2] = { (cuuint64_t)p.K, (cuuint64_t)p.rows };
	const cuuint64_t stride[1] = { (cuuint64_t)p.K * 2 };
	const cuuint32_t box[2] = { (cuuint32_t)KB, 16 };
	const cuuint32_t estride[2] = { 1, 1 };
	memset(m, 0, sizeof(*m));
	return enc(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<uint16_t *>(p.a), dim, stride, box, estride,
		   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
		   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* The tile layout (k3_gemm_wg_rp.cuh): thread i writes word i of `out` and checks scale byte i
 * (bit 0 of *bad: a byte above K3_WGRP_MAX_SCALE). */
__global__ void repack_wg_kernel(const uint8_t *__restrict__ packed, const uint8_t *__restrict__ scales, int K,
				 int64_t words, uint32_t *__restrict__ out, unsigned int *bad)
{
	const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= words)
		return;
	out[i] = k3_wgrp_word(packed, K, i);
	if (i < words / 4 && scales[i] > K3_WGRP_MAX_SCALE)
		atomicOr(bad, 1u);
}

} // namespace

extern "C" int k3_gemm_repack_wg(const uint8_t *packed, const uint8_t *scales, int64_t rows, int K, uint8_t *out,
				 cudaStream_t stream)
{
	if (!packed || !scales || !out || ((uintptr_t)out & 15u) != 0 || rows < 0 || rows % 16 != 0 || K < 128 ||
	    K % 128 != 0 || rows > ((int64_t)1 << 40) / K)
		return -EINVAL;
	const int64_t bytes = rows * (K / 2), words = bytes / 4;
	if (bytes == 0)
		return 0;
	if ((packed < out + bytes) && (out < packed + bytes))
		return -EINVAL; /* overlapping */
	return k3gemm::launch_flagged(stream, [&](unsigned int *bad) {
		repack_wg_kernel<<<(unsigned)((words + 255) / 256), 256, 0, stream>>>(packed, scales, K, words,
										 reinterpret_cast<uint32_t *>(out), bad);
		return k3_launch_status();
	});
}

bool k3gemm::wg_supported(const struct k3_gemm_args *a)
{
#if defined(K3_HAVE_WGMMA)
	static int cc = -1;
	if (cc < 0) {
		int dev = 0, major = 0, minor = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
			return false;
		cc = major * 10 + minor;
	}
	if (cc != 90 || a->K % KB != 0 || a->n_groups > MOE_MAX_EXPERTS)
		return false;
	/* (MXFP4: each k block pair's 4 scale bytes a row are one aligned 4-byte copy inside the
	 * row, which needs K % 128 == 0: every path's shape check, k3_gemm.cu shapes_ok(), has it.) */
	/* MXFP4 scales are copied 4 bytes at a time. */
	return a->w_dtype != K3_W_MXFP4 || ((uintptr_t)a->w_scales & 3u) == 0;
#else
	(void)a;
	return false;
#endif
}

int k3gemm::wg_launch(params &p, bool fp4, enum k3_epilogue epi, int sms, cudaStream_t stream)
{
	p.num_n = (p.N + TW - 1) / TW;
	const int64_t num_m = (p.rows + TT - 1) / TT;
	if (num_m > INT_MAX)
		return -EINVAL;
	p.num_m = (int)num_m;
	int64_t grid = sms;
	if (p.n_groups > 0 && (p.rows / TT_W4 + p.n_groups) * p.num_n > INT_MAX)
		return -EINVAL; /* tile indices are int */
	if (p.n_groups == 0) {
		const int64_t tiles = num_m * p.num_n;
		if (tiles > INT_MAX)
			return -EINVAL;
		grid = tiles < grid ? tiles : grid;
	}
	tmaps tmw;
	memset(&tmw, 0, sizeof(tmw));
	if (p.out8 && !p.aqs)
		return -EINVAL; /* out_e4m3: the FP8 kernel's GLU only */
	if (p.aqs) { /* E4M3 activations (k3_gemm.cu checked the operands): the FP8 kernel or nothing */
		if (!fp4 || !p.wwg || !p.wfl || (epi != K3_EPI_GLU && epi != K3_EPI_SCALE) || p.n_groups <= 0)
			return -EINVAL;
		p.wp = p.wwg; /* the FP8-word layout: the weight map's bytes */
		if (!weight_map(p, true, TW, &tmw.w))
			return -EINVAL;
		return launch_f8(p, tmw, epi, (int)grid, stream);
	}
	variant v = kernel_variant(p);
	if (v.kv < 0)
		return -EINVAL; /* K3_GEMM_WG_KERNEL names no kernel (the message on stderr) */
	if (!fp4)
		v.xv &= ~(XV_XP | XV_RS1 | XV_PF | XV_LEAN | XV_RP | XV_RQ | XV_OFS | XV_W4 | XV_V16 | XV_TX | XV_PP | XV_F8D | XV_F8B); /* BF16 weights: wide2x and the wide2r family are wide2 */
	if ((v.xv & XV_RP) && (!p.wwg || weights_by_cp_async() || (epi != K3_EPI_GLU && epi != K3_EPI_SCALE)))
		v.xv &= ~(XV_RP | XV_RQ | XV_OFS | XV_W4 | XV_V16 | XV_TX | XV_PP | XV_F8D | XV_F8B); /* wide2rp, wide2rq without the tile layout (k3_gemm_args.w_wg), or where wide2rl runs wide2's kernel: wide2rl */
	const uint8_t *const wp_std = p.wp;
	if (v.xv & XV_RP)
		p.wp = p.wwg; /* the weight map's and the tiles' bytes */
	const int kv = v.kv;
	int ncl = p.n_groups > 0 && !fp4 && !weights_by_cp_async() ? cluster_ctas(p, kv == 2 ? TT_WIDE : TT) : 1;
	const bool nocl = kv == 2 && v.nocl && ncl > 1; /* "wide1": the wide chunks, no clusters */
	if (nocl)
		ncl = 1;
	bool tma = !weights_by_cp_async() && weight_map(p, fp4, ncl > 1 ? MC_ROWS : TW, &tmw.w);
	if ((v.xv & XV_TX) && !(tma && a_map(p, &tmw.a)))
		v.xv &= ~XV_TX; /* no token map (gathered rows: w13): the cp.async token copies (wide2rq) */
	if ((v.xv & XV_PP) && ((v.xv & XV_TX) || !p.a_index))
		v.xv &= ~XV_PP; /* wide2rqp: rows not gathered, wide2rqt's kernel (with the token map) or wide2rq's */
	if (!tma) {
		memset(&tmw, 0, sizeof(tmw));
		p.wp = wp_std; /* round q's kernel below: the standard layout */
		ncl = 1;
	}
	if (tma && nocl)
		return v.xv == (XV_ONE | XV_FGLU) ? launch_x<false, TT_WIDE, XV_ONE | XV_FGLU>(p, tmw, epi, (int)grid, 1, stream)
		       : v.xv == XV_ONE		  ? launch_x<false, TT_WIDE, XV_ONE>(p, tmw, epi, (int)grid, 1, stream)
						  : launch_x<false, TT_WIDE, 0>(p, tmw, epi, (int)grid, 1, stream);
	if (tma && !fp4 && ncl == 1 && kv == 2 && (v.xv & XV_ONE)) /* groups too small for clusters */
		return v.xv & XV_FGLU ? launch_x<false, TT, XV_ONE | XV_FGLU>(p, tmw, epi, (int)grid, 1, stream)
				      : launch_x<false, TT, XV_ONE>(p, tmw, epi, (int)grid, 1, stream);
	if (tma && fp4 && kv == 2 && (v.xv & (XV_PF | XV_LEAN))) /* wide2rf, wide2rl, wide2rlf, wide2rp: wide2ra's chunks */
		return rs1_extras(p, tmw, epi, (int)grid, stream,
				  v.xv & (XV_PF | XV_LEAN | XV_RP | XV_RQ | XV_OFS | XV_W4 | XV_V16 | XV_TX | XV_PP | XV_NOFEED |
					 XV_NOMMA | XV_F8D | XV_F8B));
	if (tma && fp4 && kv == 2 && (v.xv & XV_RS1)) /* MXFP4, A from registers double-buffered */
		return v.rw == 1 ? launch_rs1<TT_WIDE>(p, tmw, epi, (int)grid, stream)
		       : v.rw == 2 || (v.rw == 5 && p.rows > (int64_t)128 * p.n_groups) /* wide2ra: wide2rv above 128 */
			       ? launch_rs1<TT_RSV>(p, tmw, epi, (int)grid, stream)
			       : launch_rs1<TT>(p, tmw, epi, (int)grid, stream);
	if (tma && fp4 && kv == 2 && (v.xv & XV_XP)) /* MXFP4 by the expander: the BF16 consumers */
		return launch_xp(p, tmw, epi, (int)grid, stream);
	if (tma && fp4 && kv == 2 && (v.xv & XV_ONE)) /* MXFP4 (never in clusters): the one-copy epilogue */
		return v.xv & XV_FGLU ? launch_x<false, TT, XV_ONE | XV_FGLU, true>(p, tmw, epi, (int)grid, 1, stream)
				      : launch_x<false, TT, XV_ONE, true>(p, tmw, epi, (int)grid, 1, stream);
	if (ncl > 1 && kv == 2 && v.xv == (XV_ONE | XV_FGLU))
		return launch_x<true, TT_WIDE, XV_ONE | XV_FGLU>(p, tmw, epi, (int)grid, ncl, stream);
	if (ncl > 1 && kv == 2 && v.xv != 0 && !(v.xv & XV_ONE))
		return v.xv == XV_FGLU	   ? launch_x<true, TT_WIDE, XV_FGLU>(p, tmw, epi, (int)grid, ncl, stream)
		       : v.xv == XV_NOEPI  ? launch_x<true, TT_WIDE, XV_NOEPI>(p, tmw, epi, (int)grid, ncl, stream)
		       : v.xv == XV_NOFEED ? launch_x<true, TT_WIDE, XV_NOFEED>(p, tmw, epi, (int)grid, ncl, stream)
					   : launch_x<true, TT_WIDE, XV_NOMMA>(p, tmw, epi, (int)grid, ncl, stream);
	if (ncl > 1)
		return kv == 2	 ? launch_epi<false, true, true, TT_WIDE, true>(p, tmw, epi, (int)grid, ncl, stream)
		       : kv == 1 ? launch_epi<false, true, true, TT, true>(p, tmw, epi, (int)grid, ncl, stream)
				 : launch_epi<false, true, true>(p, tmw, epi, (int)grid, ncl, stream);
	if (!tma) /* the cp.async weights (measurements only): round q's kernel */
		return fp4 ? launch_epi<true, false, false>(p, tmw, epi, (int)grid, 1, stream)
			   : launch_epi<false, false, false>(p, tmw, epi, (int)grid, 1, stream);
	if (fp4)
		return kv ? launch_epi<true, true, false, TT, true>(p, tmw, epi, (int)grid, 1, stream)
			  : launch_epi<true, true, false>(p, tmw, epi, (int)grid, 1, stream);
	return kv ? launch_epi<false, true, false, TT, true>(p, tmw, epi, (int)grid, 1, stream)
		  : launch_epi<false, true, false>(p, tmw, epi, (int)grid, 1, stream);
}
