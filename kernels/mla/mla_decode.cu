/* SPDX-License-Identifier: MIT */
/*
 * Absorbed MLA decode: see mla_decode.h.
 *
 * Split kernel, one CTA per (block of ROWS query rows, split, request):
 *  - warp 0 streams the split's tokens, TILE at a time, into NST shared-memory
 *    stages: one bulk copy per token (lane j copies token j of the tile), so a
 *    tile may cross pages or follow a sparse index list at no extra cost, and
 *    rows land at a 1168-byte stride (an odd number of 16-byte chunks: the
 *    ldmatrix loads below are free of bank conflicts). Entries past the end
 *    copy token 0 (finite bytes) and are masked out of the softmax;
 *  - the FP8 cache arrives raw (656 bytes a token, an odd number of chunks
 *    too) and all threads expand it into one BF16 tile first: the E4M3
 *    elements exactly (E4M3 is a subset of BF16) and unscaled, the four FP32
 *    tile scales of each token beside it. QK^T runs per 128-column tile and
 *    multiplies each tile's partial dot product by the token's scale in FP32;
 *    PV takes the scale into P (one BF16 copy of P per tile). So no cache
 *    value is rounded: the scores are FP32 sums of exact products, as for
 *    the BF16 cache. (Rounding e4m3 * scale to BF16 first, as a first
 *    version did, put errors of ~2^-9 relative on every key element: LSE
 *    errors of 4-6e-3 on the H200, 2026-12-01.)
 *  - warp (r, c), r = 0..RG-1 a group of 16 rows, c = 0..1 a half: QK^T over
 *    576 columns for its rows and half of the tile's tokens, the row maxima
 *    exchanged with its partner through shared memory (online softmax with
 *    the same running max in both), P (BF16) through shared memory, then PV
 *    for its rows and half of the 512 output columns (128 FP32 accumulators
 *    a thread; FP8: half the columns are two scale tiles, each with its P).
 * Combine kernel, one warp per query row: the log-sum-exp-weighted sum of
 * the split partials (FP32 in the workspace).
 * FP8 cache up to 32 query rows: mla_fp8s_kernel below (E4M3 converted to FP16 in registers,
 * FP16 MMAs, a warp per scale tile in both products, one softmax a tile split over the warps'
 * token groups, one bulk copy a whole tile, a producer warp for the copies: 71-84 % of copy at
 * t = 1, B = 64-128, H200 2026-12-02h), or
 * (K3_MLA_FP8_KERNEL=pipe) mla_fp8p_kernel, its predecessor with the softmax repeated in every
 * warp and one copy a token (43-47 %), or (=reg) mla_fp8r_kernel, the same without the
 * pipelining (40-44 %; the expansion: 22-24 %, 2026-12-01p); above 32 rows the expansion
 * kernel's 64-row CTAs measured faster. */
#include "mla_decode.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/k3_device.cuh"
#include "mla/mla_fp8_stage.cuh"

namespace {

constexpr int D = MLA_DIM;        /* 576 key columns */
constexpr int DV = MLA_LATENT;    /* 512 value columns */
constexpr int TILE = 32;          /* tokens per pipeline stage */
constexpr int SROW = D + 8;       /* elements per shared-memory token row: 1168 bytes */
constexpr int PROW = TILE + 8;    /* elements per P row: 80 bytes */
constexpr int FP8B = MLA_FP8_TOKEN_BYTES;
constexpr int COMBINE_WARPS = 4;
constexpr int MIN_TILES_PER_SPLIT = 4; /* 128 tokens: below, partials cost more than they spread */
constexpr float LN2 = 0.6931471805599453f;
constexpr float LOG2E = 1.4426950408889634f;
static_assert(D % 16 == 0 && DV == 512 && TILE == 32 && TILE == MLA_STAGE_TOKENS,
	      "the tiling below assumes 576 / 512 / 32");
static_assert((SROW * 2 / 16) % 2 == 1 && (FP8B / 16) % 2 == 1, "odd 16-byte chunks per row");

template <int RG, bool FP8>
struct cfg {
	static constexpr int ROWS = 16 * RG;
	static constexpr int WARPS = 2 * RG;
	static constexpr int THREADS = 32 * WARPS;
	/* stages: 2 tiles in flight while one is consumed (FP8: 3, they are smaller) */
	static constexpr int NST = FP8 ? (RG == 1 ? 2 : 4) : (RG == 1 ? 2 : 3);
	static constexpr int TOKB = FP8 ? FP8B : 2 * D; /* bytes copied per token */
	static constexpr int ROWB = FP8 ? FP8B : 2 * SROW; /* bytes per token in a stage */
	static constexpr int STAGE_BYTES = TILE * ROWB;
	static constexpr int OFF_Q = 0;
	static constexpr int OFF_ST = OFF_Q + ROWS * SROW * 2;
	static constexpr int OFF_KC = OFF_ST + NST * STAGE_BYTES;
	static constexpr int OFF_P = OFF_KC + (FP8 ? TILE * SROW * 2 : 0);
	/* P: one copy; FP8: one per scale tile (P times that tile's scale of each token). */
	static constexpr int P_COPIES = FP8 ? MLA_FP8_SCALES : 1;
	static constexpr int OFF_SC = OFF_P + P_COPIES * ROWS * PROW * 2;
	static constexpr int OFF_RED = OFF_SC + (FP8 ? TILE * MLA_FP8_SCALES * 4 : 0);
	static constexpr int OFF_BAR = OFF_RED + RG * 2 * 16 * 4;
	static constexpr int SMEM = OFF_BAR + NST * 8;
	/* RG 1: 95 / 101 KiB, two CTAs per SM; RG 4: 193 / 213 KiB, one. */
	static constexpr int CTAS_PER_SM = RG == 1 ? 2 : 1;
	static_assert(OFF_ST % 16 == 0 && OFF_KC % 16 == 0 && OFF_P % 16 == 0 && OFF_SC % 16 == 0 && OFF_BAR % 8 == 0,
		      "alignment");
	static_assert(SMEM <= 227 * 1024, "shared memory");
};

struct params {
	int H, t, rows, n_splits, tiles_per_split, max_pages, topk, max_seqlen;
	float scale_log2; /* softmax scale * log2(e) */
	/* mla_fp8s_kernel's options (K3_MLA_FP8S): one bulk copy a whole dense tile; the lazy
	 * rescale's tau (binades the running max may lag) and band (binades the unit may drift). */
	int fp8s_whole, fp8s_band;
	float fp8s_tau;
	/* mla_fp8s_kernel (early order): stages copied before tile 0 has landed (1..NST). */
	int fp8s_prime;
	/* mla_fp8s_kernel: 1 when the n_splits CTAs of a row block run as one thread-block cluster and
	 * combine their partials through distributed shared memory (no workspace, no combine kernel). */
	int cluster;
	/* mla_fp8s_kernel: 1 when each split writes its partials and the last split of a row block to
	 * finish merges them (fp8s_last_merge(): a counter per row block, no combine kernel). */
	int last;
	/* mla_fp8s_kernel with the combine kernel after it (K3_MLA_FP8S_PDL, fp8s_pdl_option()): 0 a
	 * plain launch of the combine kernel; else a programmatic dependent launch, its CTAs let in
	 * once every CTA here has passed its entry (1) or its tile loop (2, the default), each
	 * waiting for this grid's completion. */
	int fp8s_pdl;
	/* mla_fp8s_kernel, early order (mla_decode_args::overlap_prev): 1 when launched as a
	 * programmatic dependent launch after the previous kernel on the stream. Before its
	 * griddepcontrol.wait a CTA reads only seqlens, the block table and the cache rows of the
	 * cached prefix (positions below L - t: the producer's first stages), and writes nothing. */
	int pdl_in;
	/* mla_fp8s_kernel without a cluster (K3_MLA_FP8S_SKEW): 0, or the grid is (row blocks,
	 * requests, splits) (split-major: a request's splits in both of an SM's two places) and a
	 * split whose linear CTA index is below skew_fast (the SMs: the CTAs placed first, which run
	 * ~6-7 % faster beside the second) takes (1000 + skew) / 1000 times the tiles of the others. */
	int skew, skew_fast;
	int *counter;                 /* last: [B][row blocks], zero at entry, left zero */
	unsigned long long *trace;    /* measurement hook (mla_decode_set_trace()): 8 words a CTA */
	const uint16_t *q;
	const unsigned char *cache;
	const int32_t *block_table, *seqlens, *indices;
	uint16_t *out;
	float *lse;
	float *o_part; /* [B][splits][rows][512], normalized per split */
	float *l_part; /* [B][splits][rows], natural log-sum-exp per split */
};

/* s = Q K^T over k steps K0 .. K0 + NK - 1 (16 columns each; NK even) of the rows at qa and
 * the tokens at kb (ldmatrix addresses of this lane): two n-tiles; with CHAINS 2, two
 * accumulator chains (even and odd k steps) for latency, summed at the end (the FP8 path,
 * short of registers, runs one). */
template <int K0, int NK, int CHAINS>
__device__ __forceinline__ void qk_cols(float (&s)[2][4], const uint16_t *qa, const uint16_t *kb)
{
	static_assert(NK % 2 == 0 && (CHAINS == 1 || CHAINS == 2), "pairs of k steps");
	float sd[CHAINS][2][4];
#pragma unroll
	for (int j = 0; j < 2; j++)
#pragma unroll
		for (int e = 0; e < 4; e++) {
			s[j][e] = 0.0f;
			sd[CHAINS - 1][j][e] = 0.0f;
		}
	float(&s2)[2][4] = sd[CHAINS - 1];
#pragma unroll 6
	for (int kk = K0; kk < K0 + NK; kk += 2) {
		uint32_t a[4], bb[4], a2[4], bb2[4];
		k3_ldsm_x4(a, qa + kk * 16);
		k3_ldsm_x4(bb, kb + kk * 16);
		k3_ldsm_x4(a2, qa + kk * 16 + 16);
		k3_ldsm_x4(bb2, kb + kk * 16 + 16);
		k3_mma_bf16(s[0], a, bb[0], bb[1]);
		k3_mma_bf16(s[1], a, bb[2], bb[3]);
		if (CHAINS == 2) {
			k3_mma_bf16(s2[0], a2, bb2[0], bb2[1]);
			k3_mma_bf16(s2[1], a2, bb2[2], bb2[3]);
		} else {
			k3_mma_bf16(s[0], a2, bb2[0], bb2[1]);
			k3_mma_bf16(s[1], a2, bb2[2], bb2[3]);
		}
	}
	if (CHAINS == 2)
#pragma unroll
		for (int j = 0; j < 2; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				s[j][e] += s2[j][e];
}

template <int RG, bool FP8>
__global__ void __launch_bounds__(cfg<RG, FP8>::THREADS, cfg<RG, FP8>::CTAS_PER_SM)
	mla_split_kernel(const params p)
{
	using C = cfg<RG, FP8>;
	extern __shared__ __align__(128) unsigned char smem[];
	uint16_t *qs = reinterpret_cast<uint16_t *>(smem + C::OFF_Q);
	unsigned char *st = smem + C::OFF_ST;
	uint16_t *kc = reinterpret_cast<uint16_t *>(smem + C::OFF_KC);
	uint16_t *ps = reinterpret_cast<uint16_t *>(smem + C::OFF_P);
	float *ksc = reinterpret_cast<float *>(smem + C::OFF_SC); /* FP8: [TILE][4] scales of the tile's tokens */
	float *red = reinterpret_cast<float *>(smem + C::OFF_RED);
	uint64_t *bar = reinterpret_cast<uint64_t *>(smem + C::OFF_BAR);

	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int rb = (int)blockIdx.x, split = (int)blockIdx.y, b = (int)blockIdx.z;
	const int L = min(p.seqlens[b], p.max_seqlen); /* the host's bound sized the block table */
	const int row0 = rb * C::ROWS;
	const int row_hi = min(p.rows, row0 + C::ROWS) - 1;
	const bool sparse = p.indices != nullptr;
	const int32_t *ix = sparse ? p.indices + (size_t)b * p.topk : nullptr;
	/* Entries this row block can see: dense, up to its last row's causal end. */
	const int n_entries = sparse ? p.topk : L - p.t + row_hi / p.H + 1;
	const int n_tiles = (n_entries + TILE - 1) / TILE;
	const int tile0 = split * p.tiles_per_split;
	const int n_it = min(n_tiles - tile0, p.tiles_per_split);
	const size_t part0 = ((size_t)b * p.n_splits + split) * p.rows; /* partial row 0 of this split */
	if (n_it <= 0) {
		/* An empty split (or, against the contract, L < t): nothing seen. */
		for (int r = tid; r < C::ROWS; r += C::THREADS) {
			if (row0 + r >= p.rows)
				continue;
			if (p.n_splits > 1) {
				p.l_part[part0 + row0 + r] = -INFINITY;
			} else {
				for (int k = 0; k < DV; k++)
					p.out[((size_t)b * p.rows + row0 + r) * DV + k] = 0;
				if (p.lse)
					p.lse[(size_t)b * p.rows + row0 + r] = -INFINITY;
			}
		}
		return;
	}

	/* Position of entry e, -1 when there is none (checked against L by callers). */
	auto entry_pos = [&](int e) -> int {
		if (sparse)
			return e < p.topk ? ix[e] : -1;
		return e < L ? e : -1;
	};
	/* Warp 0: copy tile `it` of this split into its stage. */
	auto issue = [&](int it) {
		const int s = it % C::NST;
		int pos = entry_pos((tile0 + it) * TILE + lane);
		if (pos < 0 || pos >= L)
			pos = 0;
		const int32_t page = p.block_table[(size_t)b * p.max_pages + pos / MLA_PAGE_TOKENS];
		const unsigned char *src =
			p.cache + ((size_t)page * MLA_PAGE_TOKENS + (size_t)(pos % MLA_PAGE_TOKENS)) * C::TOKB;
		if (lane == 0)
			k3_mbar_expect_tx(&bar[s], TILE * C::TOKB);
		__syncwarp();
		k3_bulk_g2s(st + (size_t)s * C::STAGE_BYTES + (size_t)lane * C::ROWB, src, C::TOKB, &bar[s]);
	};

	if (tid == 0) {
#pragma unroll
		for (int i = 0; i < C::NST; i++)
			k3_mbar_init(&bar[i], 1);
		k3_mbar_fence_init();
	}
	__syncthreads();
	if (warp == 0)
		for (int it = 0; it < C::NST && it < n_it; it++)
			issue(it);

	/* Query rows of this block; rows past the last are zeros. */
	const uint16_t *qb = p.q + (size_t)b * p.rows * D;
	for (int ch = tid; ch < C::ROWS * (D / 8); ch += C::THREADS) {
		const int r = ch / (D / 8), k = ch % (D / 8);
		uint16_t *dst = qs + r * SROW + k * 8;
		if (row0 + r < p.rows)
			k3_cp_async16(dst, qb + (size_t)(row0 + r) * D + k * 8);
		else
			*reinterpret_cast<uint4 *>(dst) = make_uint4(0u, 0u, 0u, 0u);
	}
	k3_cp_async_commit();
	k3_cp_async_wait<0>();
	__syncthreads();

	const int r = warp >> 1, c = warp & 1, g = lane >> 2, tq = lane & 3;
	const int R0 = row0 + r * 16 + g, R1 = R0 + 8;
	/* Causal end of each of this thread's two rows (padded rows: the last row's). */
	const int end0 = L - p.t + min(R0, p.rows - 1) / p.H + 1;
	const int end1 = L - p.t + min(R1, p.rows - 1) / p.H + 1;
	float *rr = red + r * 32; /* [2 halves][16 rows] of this row group */

	float o[32][4];
#pragma unroll
	for (int n = 0; n < 32; n++)
		o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
	float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;

#pragma unroll 1
	for (int it = 0; it < n_it; it++) {
		const int s = it % C::NST;
		k3_mbar_wait(&bar[s], (uint32_t)((it / C::NST) & 1));
		const uint16_t *K;
		if constexpr (FP8) {
			/* Expand the raw tile: 8 elements (16 bytes of BF16) per step, E4M3 exactly and
			 * unscaled; the scales go to ksc. */
			const unsigned char *raw = st + (size_t)s * C::STAGE_BYTES;
			mla_fp8_stage_scales(ksc, raw, tid, C::THREADS); /* 128 slots, 64 or 256 threads */
			for (int ch = tid; ch < TILE * (D / 8); ch += C::THREADS) {
				const int tok = ch / (D / 8), k = ch % (D / 8);
				const unsigned char *tr = raw + tok * FP8B;
				uint4 v;
				if (k < DV / 8) {
					const uint2 f8 = *reinterpret_cast<const uint2 *>(tr + k * 8);
					const float2 e0 = k3_e4m3x2_to_float2((uint16_t)(f8.x & 0xffffu));
					const float2 e1 = k3_e4m3x2_to_float2((uint16_t)(f8.x >> 16));
					const float2 e2 = k3_e4m3x2_to_float2((uint16_t)(f8.y & 0xffffu));
					const float2 e3 = k3_e4m3x2_to_float2((uint16_t)(f8.y >> 16));
					v.x = k3_pack_bf16(e0.x, e0.y); /* exact */
					v.y = k3_pack_bf16(e1.x, e1.y);
					v.z = k3_pack_bf16(e2.x, e2.y);
					v.w = k3_pack_bf16(e3.x, e3.y);
				} else {
					v = *reinterpret_cast<const uint4 *>(tr + MLA_FP8_ROPE_OFFSET + (k - DV / 8) * 16);
				}
				*reinterpret_cast<uint4 *>(kc + tok * SROW + k * 8) = v;
			}
			__syncthreads();
			if (warp == 0 && it + C::NST < n_it)
				issue(it + C::NST); /* the raw stage is free again */
			K = kc;
		} else {
			K = reinterpret_cast<const uint16_t *>(st + (size_t)s * C::STAGE_BYTES);
		}

		/* S = Q K^T: 16 rows x 16 tokens (two n-tiles); sc[j][e] is row g (e < 2) or
		 * g + 8 (e >= 2), token c * 16 + 8 j + 2 tq + (e & 1). */
		const uint16_t *qa = qs + (r * 16 + (lane & 15)) * SROW + (lane >> 4) * 8;
		const uint16_t *kb = K + (c * 16 + (lane >> 4) * 8 + (lane & 7)) * SROW + ((lane >> 3) & 1) * 8;
		float sc[2][4];
		if constexpr (FP8) {
			/* Per 128-column scale tile, then the 64 BF16 rope columns. */
			float sf[2][4];
			qk_cols<0, MLA_LATENT / 16 / MLA_FP8_SCALES, 1>(sc, qa, kb);
#pragma unroll
			for (int j = 0; j < 2; j++)
#pragma unroll
				for (int e = 0; e < 4; e++)
					sc[j][e] *= ksc[(c * 16 + j * 8 + 2 * tq + (e & 1)) * MLA_FP8_SCALES];
#pragma unroll
			for (int tile = 1; tile < MLA_FP8_SCALES; tile++) {
				qk_cols<0, MLA_LATENT / 16 / MLA_FP8_SCALES, 1>(sf, qa + tile * MLA_FP8_TILE,
									     kb + tile * MLA_FP8_TILE);
#pragma unroll
				for (int j = 0; j < 2; j++)
#pragma unroll
					for (int e = 0; e < 4; e++)
						sc[j][e] = fmaf(sf[j][e],
								ksc[(c * 16 + j * 8 + 2 * tq + (e & 1)) * MLA_FP8_SCALES + tile],
								sc[j][e]);
			}
			qk_cols<0, MLA_ROPE / 16, 1>(sf, qa + MLA_LATENT, kb + MLA_LATENT);
#pragma unroll
			for (int j = 0; j < 2; j++)
#pragma unroll
				for (int e = 0; e < 4; e++)
					sc[j][e] += sf[j][e];
		} else {
			qk_cols<0, D / 16, 2>(sc, qa, kb);
		}

		/* Scale, mask, row maxima over the tile (both halves). */
		const int ebase = (tile0 + it) * TILE + c * 16;
		float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
		for (int j = 0; j < 2; j++)
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const int pos = entry_pos(ebase + j * 8 + 2 * tq + e);
				const float x0 = sc[j][e] * p.scale_log2;
				const float x1 = sc[j][2 + e] * p.scale_log2;
				sc[j][e] = pos >= 0 && pos < end0 ? x0 : -INFINITY;
				sc[j][2 + e] = pos >= 0 && pos < end1 ? x1 : -INFINITY;
				mx0 = fmaxf(mx0, sc[j][e]);
				mx1 = fmaxf(mx1, sc[j][2 + e]);
			}
		mx0 = k3_group_max<4>(mx0);
		mx1 = k3_group_max<4>(mx1);
		if (tq == 0)
			rr[c * 16 + g] = mx0, rr[c * 16 + g + 8] = mx1;
		k3_named_sync(1 + r, 64);
		mx0 = fmaxf(mx0, rr[(c ^ 1) * 16 + g]);
		mx1 = fmaxf(mx1, rr[(c ^ 1) * 16 + g + 8]);
		const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
		const float mu0 = mn0 == -INFINITY ? 0.0f : mn0, mu1 = mn1 == -INFINITY ? 0.0f : mn1;
		const float al0 = exp2f(m0 - mu0), al1 = exp2f(m1 - mu1); /* 0 while nothing was seen */
		m0 = mn0, m1 = mn1;
		float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
		for (int j = 0; j < 2; j++)
#pragma unroll
			for (int e = 0; e < 2; e++) {
				sc[j][e] = exp2f(sc[j][e] - mu0);
				sc[j][2 + e] = exp2f(sc[j][2 + e] - mu1);
				s0 += sc[j][e];
				s1 += sc[j][2 + e];
			}
		l0 = l0 * al0 + s0;
		l1 = l1 * al1 + s1;
#pragma unroll
		for (int n = 0; n < 32; n++)
			o[n][0] *= al0, o[n][1] *= al0, o[n][2] *= al1, o[n][3] *= al1;
		uint16_t *pw = ps + (r * 16 + g) * PROW + c * 16 + 2 * tq;
#pragma unroll
		for (int cp = 0; cp < C::P_COPIES; cp++)
#pragma unroll
			for (int j = 0; j < 2; j++) {
				float f0 = 1.0f, f1 = 1.0f; /* FP8: the scales of tile cp of the two tokens */
				if constexpr (FP8) {
					const int tok = c * 16 + j * 8 + 2 * tq;
					f0 = ksc[tok * MLA_FP8_SCALES + cp];
					f1 = ksc[(tok + 1) * MLA_FP8_SCALES + cp];
				}
				uint16_t *pc = pw + cp * (C::ROWS * PROW);
				*reinterpret_cast<uint32_t *>(pc + j * 8) = k3_pack_bf16(sc[j][0] * f0, sc[j][1] * f1);
				*reinterpret_cast<uint32_t *>(pc + 8 * PROW + j * 8) =
					k3_pack_bf16(sc[j][2] * f0, sc[j][3] * f1);
			}
		k3_named_sync(1 + r, 64);

		/* O += P V: 16 rows x 256 columns (this half), k = the tile's 32 tokens. FP8: columns
		 * c * 256 .. + 127 are scale tile 2 c (P copy 2 c), the next 128 tile 2 c + 1. */
#pragma unroll
		for (int ks = 0; ks < TILE / 16; ks++) {
			const uint16_t *pa = ps + (r * 16 + (lane & 15)) * PROW + ks * 16 + (lane >> 4) * 8;
			const uint16_t *vb = K + (ks * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * SROW + c * 256 +
					     (lane >> 4) * 8;
			uint32_t a[4];
#pragma unroll
			for (int np = 0; np < 16; np++) {
				if (np == 0 || (FP8 && np == 8))
					k3_ldsm_x4(a, pa + (FP8 ? (2 * c + np / 8) * (C::ROWS * PROW) : 0));
				uint32_t bb[4];
				k3_ldsm_x4_t(bb, vb + np * 16);
				k3_mma_bf16(o[2 * np], a, bb[0], bb[1]);
				k3_mma_bf16(o[2 * np + 1], a, bb[2], bb[3]);
			}
		}
		__syncthreads(); /* the stage, P and the maxima are free */
		if (!FP8 && warp == 0 && it + C::NST < n_it)
			issue(it + C::NST);
	}

	/* Row sums: 4 lanes, then the partner warp. */
	l0 = k3_group_sum<4>(l0);
	l1 = k3_group_sum<4>(l1);
	if (tq == 0)
		rr[c * 16 + g] = l0, rr[c * 16 + g + 8] = l1;
	k3_named_sync(1 + r, 64);
	l0 += rr[(c ^ 1) * 16 + g];
	l1 += rr[(c ^ 1) * 16 + g + 8];
	const float inv0 = l0 > 0.0f ? 1.0f / l0 : 0.0f, inv1 = l1 > 0.0f ? 1.0f / l1 : 0.0f;
	const float lse0 = l0 > 0.0f ? (m0 + log2f(l0)) * LN2 : -INFINITY;
	const float lse1 = l1 > 0.0f ? (m1 + log2f(l1)) * LN2 : -INFINITY;
	const int col = c * 256 + 2 * tq;
	if (p.n_splits == 1) {
		const size_t ob = (size_t)b * p.rows;
		if (R0 < p.rows) {
			uint16_t *out = p.out + (ob + R0) * DV + col;
#pragma unroll
			for (int n = 0; n < 32; n++)
				*reinterpret_cast<uint32_t *>(out + n * 8) = k3_pack_bf16(o[n][0] * inv0, o[n][1] * inv0);
			if (c == 0 && tq == 0 && p.lse)
				p.lse[ob + R0] = lse0;
		}
		if (R1 < p.rows) {
			uint16_t *out = p.out + (ob + R1) * DV + col;
#pragma unroll
			for (int n = 0; n < 32; n++)
				*reinterpret_cast<uint32_t *>(out + n * 8) = k3_pack_bf16(o[n][2] * inv1, o[n][3] * inv1);
			if (c == 0 && tq == 0 && p.lse)
				p.lse[ob + R1] = lse1;
		}
	} else {
		if (R0 < p.rows) {
			float *op = p.o_part + (part0 + R0) * DV + col;
#pragma unroll
			for (int n = 0; n < 32; n++)
				*reinterpret_cast<float2 *>(op + n * 8) = make_float2(o[n][0] * inv0, o[n][1] * inv0);
			if (c == 0 && tq == 0)
				p.l_part[part0 + R0] = lse0;
		}
		if (R1 < p.rows) {
			float *op = p.o_part + (part0 + R1) * DV + col;
#pragma unroll
			for (int n = 0; n < 32; n++)
				*reinterpret_cast<float2 *>(op + n * 8) = make_float2(o[n][2] * inv1, o[n][3] * inv1);
			if (c == 0 && tq == 0)
				p.l_part[part0 + R1] = lse1;
		}
	}
}

/* ---- FP8 cache, conversion in registers ------------------------------------------------
 *
 * One CTA of 4 warps per (16 query rows, split, request); warp w owns FP8 scale tile w
 * (cache columns 128 w .. 128 w + 127) in both products, so its tile's FP32 scale is
 * applied to FP32 partials it owns:
 *  - QK^T split over k: warp w computes S'_w = Q[:, tile w] K[:, tile w]^T for all 32 tokens
 *    of the stage (FP16 MMAs: Q pre-scaled by 2^e_row into FP16, exact but for elements
 *    below 2^-32 of the row's largest; the E4M3 bytes converted in registers, exact) and
 *    16 of the 64 BF16 rope columns, then part_w = S'_w * scale(token, w) * 2^-e_row + rope_w
 *    in FP32 goes through shared memory; after one barrier every warp sums the 4 parts in
 *    the same order (bitwise the same S in all warps) and runs the online softmax itself;
 *  - PV split over columns: warp w accumulates O[:, tile w] (64 FP32 a thread) from
 *    A = P * scale(token, w) * 2^f_row in FP16 (registers, no shared memory) and the same
 *    bytes of tile w converted again in the transposed order. 2^f_row keeps the largest
 *    P * scale seen so far (in the running max's frame) in [1, 2): no FP16 overflow, and
 *    what underflows is below 2^-24 of it; O is kept in units of 2^f_row (the change of f
 *    folded into the softmax rescale, powers of two: exact).
 * Fragment loads are 16-byte shared loads from the raw 656-byte rows (41 chunks: odd), the
 * token and column orders permuted (the dot products do not care, Q and P follow) so that
 * every 8-lane phase hits 8 distinct chunk columns: conflict free. The E4M3 -> FP16
 * conversion runs as cvt.f16x2.e4m3x2 (conversion pipe, 16 lanes a clock on Hopper) or as 6
 * integer instructions per 4 elements (k3_e4m3x4_to_f16x4_scaled: value 2^-8, folded into
 * the scales), chosen per product (KINT, VINT). One __syncthreads a tile. */
namespace fp8r {
constexpr int WARPS = 4;
constexpr int THREADS = 32 * WARPS;
constexpr int ROWS = 16;
constexpr int NST = 4;
constexpr int STAGE_BYTES = TILE * FP8B;
constexpr int RED_F4 = WARPS * 4 * 32; /* float4 per buffer: [warp][n-tile][lane] */
constexpr int OFF_ST = 0;
constexpr int OFF_RED = OFF_ST + NST * STAGE_BYTES;
constexpr int OFF_QMX = OFF_RED + 2 * RED_F4 * 16;
constexpr int OFF_BAR = OFF_QMX + WARPS * ROWS * 4;
constexpr int SMEM = OFF_BAR + NST * 8;
constexpr int CTAS_PER_SM = 2;
static_assert(OFF_RED % 16 == 0 && OFF_QMX % 16 == 0 && OFF_BAR % 8 == 0, "alignment");
static_assert(CTAS_PER_SM * (SMEM + 1024) <= 228 * 1024, "two CTAs an SM");
static_assert(MLA_FP8_SCALES == WARPS && MLA_FP8_TILE == 128 && MLA_ROPE == 16 * WARPS, "a warp per scale tile");
/* mla_fp8p_kernel: the same, plus mbarriers for the parts (2) and the stages' release (NST). */
constexpr int OFF_BAR_P = SMEM;
constexpr int SMEM_P = OFF_BAR_P + (2 + NST) * 8;
static_assert(CTAS_PER_SM * (SMEM_P + 1024) <= 228 * 1024, "two CTAs an SM");
/* mla_fp8s_kernel: plus the P hand-off's mbarrier, P x scale of a tile ([4 scale tiles][4 n-tiles]
 * [32 lanes] float4) and the softmax warps' frames ([16 rows] float4). */
constexpr int OFF_PS = (SMEM_P + 16 + 15) / 16 * 16; /* after the P hand-off's two mbarriers */
constexpr int OFF_MW = OFF_PS + WARPS * 4 * 32 * 16;
constexpr int SMEM_S = OFF_MW + ROWS * 16;
constexpr int THREADS_S = THREADS + 32; /* early order: the 4 warps and a producer warp */
/* The cluster combine (fp8s_cluster_combine()), in the stage area once the tile loop is done: this
 * split's normalized O ([ROWS][XS] FP32, rows padded by 16 bytes against bank conflicts), its LSE
 * per row, and the rows' weights of every split ([ROWS][MAX_CLUSTER]). */
constexpr int MAX_CLUSTER = 8; /* portable cluster size */
constexpr int XS = DV + 4;
constexpr int X_L = ROWS * XS;         /* floats */
constexpr int X_W = X_L + ROWS;        /* floats */
static_assert((X_W + ROWS * MAX_CLUSTER) * 4 <= NST * STAGE_BYTES && OFF_ST == 0 && XS % 4 == 0,
	      "the stage area holds it");
static_assert(CTAS_PER_SM * (SMEM_S + 1024) <= 228 * 1024, "two CTAs an SM");
} // namespace fp8r

/* Token (0..31) of column n of n-tile j of S: C columns 2 tq, 2 tq + 1 are tokens tq, tq + 4
 * (+ 8 (j & 1) + 16 (j >> 1)), so that PV's lane tq takes tokens tq + 4 r of each 16. */
__device__ __forceinline__ int fp8r_token(int j, int n)
{
	return 16 * (j >> 1) + 8 * (j & 1) + (n >> 1) + 4 * (n & 1);
}

/* 2^e as a float, e in [-126, 127]. */
__device__ __forceinline__ float fp8r_pow2(int e)
{
	return __int_as_float((127 + e) << 23);
}

/* x 2^e for e in [-252, 252], exact while the result is normal (two power-of-two products). */
__device__ __forceinline__ float fp8r_scale2(float x, int e)
{
	return x * fp8r_pow2(e / 2) * fp8r_pow2(e - e / 2);
}

/* Q of the register kernels (mla_fp8r_kernel, mla_fp8p_kernel, mla_fp8s_kernel): this lane's
 * fragment elements of rows R0 = row0 + g and R1 = R0 + 8 in scale tile w (k step q: 4 consecutive
 * columns, word q of the K row), in FP16 scaled by 2^e_row (the row's largest |q| to [2^15, 2^16),
 * the maxima exchanged through qmx[WARPS][16]: one __syncthreads, so every thread calls it), and
 * of rope step w as stored (BF16); padded rows are zeros. qf0, qf1 undo the row scale (and the
 * integer conversion's 2^-8 when KINT) on the scores. */
struct fp8r_qraw {
	uint2 q0[8], q1[8]; /* rows R0, R1: the words of tile w this lane's fragments take */
	uint2 r0, r1;       /* rope step w, BF16 as stored: elements 16 w + 4 tq .. + 3 */
};

/* fp8r_load_q()'s global loads alone (mla_fp8s_kernel issues them before its first bulk copies,
 * which would otherwise queue ahead of them: ~2 % of its samples at B 128, 8K waited there). */
__device__ __forceinline__ void fp8r_q_fetch(const params &p, int b, int R0, int R1, int w, int tq,
					     fp8r_qraw &r)
{
	const uint16_t *q0 = p.q + ((size_t)b * p.rows + R0) * D, *q1 = p.q + ((size_t)b * p.rows + R1) * D;
#pragma unroll
	for (int q = 0; q < 8; q++) {
		const int col = 128 * w + (tq + 4 * (q >> 2)) * 16 + (q & 3) * 4;
		r.q0[q] = R0 < p.rows ? *reinterpret_cast<const uint2 *>(q0 + col) : make_uint2(0u, 0u);
		r.q1[q] = R1 < p.rows ? *reinterpret_cast<const uint2 *>(q1 + col) : make_uint2(0u, 0u);
	}
	const int col = MLA_LATENT + 16 * w + 4 * tq;
	r.r0 = R0 < p.rows ? *reinterpret_cast<const uint2 *>(q0 + col) : make_uint2(0u, 0u);
	r.r1 = R1 < p.rows ? *reinterpret_cast<const uint2 *>(q1 + col) : make_uint2(0u, 0u);
}

/* The rest of fp8r_load_q(): row maxima, scales, FP16 fragments (one __syncthreads). ROPE_QF: the
 * rope fragment times 1 / qf, so that qf can multiply the whole score once (mla_fp8s_kernel). */
template <bool KINT, bool ROPE_QF = false>
__device__ __forceinline__ void fp8r_q_finish(const fp8r_qraw &qr, uint32_t *qmx, int w, int g,
					      uint32_t (&qa)[8][4], uint32_t (&qa_r)[4], float &qf0,
					      float &qf1)
{
	constexpr int ROWS = fp8r::ROWS;
	const int tq = (int)threadIdx.x & 3;
	const uint2 *qr0 = qr.q0, *qr1 = qr.q1;
	uint32_t mb0 = 0, mb1 = 0; /* largest |q| (BF16 bits, monotonic as integers) */
#pragma unroll
	for (int q = 0; q < 8; q++) {
		mb0 = max(mb0, max(max(qr0[q].x & 0x7fffu, (qr0[q].x >> 16) & 0x7fffu),
				   max(qr0[q].y & 0x7fffu, (qr0[q].y >> 16) & 0x7fffu)));
		mb1 = max(mb1, max(max(qr1[q].x & 0x7fffu, (qr1[q].x >> 16) & 0x7fffu),
				   max(qr1[q].y & 0x7fffu, (qr1[q].y >> 16) & 0x7fffu)));
	}
	qa_r[0] = qr.r0.x, qa_r[1] = qr.r1.x, qa_r[2] = qr.r0.y, qa_r[3] = qr.r1.y;
#pragma unroll
	for (int o = 1; o < 4; o <<= 1) {
		mb0 = max(mb0, __shfl_xor_sync(0xffffffffu, mb0, o));
		mb1 = max(mb1, __shfl_xor_sync(0xffffffffu, mb1, o));
	}
	if (tq == 0)
		qmx[w * ROWS + g] = mb0, qmx[w * ROWS + g + 8] = mb1;
	__syncthreads();
	mb0 = max(max(qmx[g], qmx[ROWS + g]), max(qmx[2 * ROWS + g], qmx[3 * ROWS + g]));
	mb1 = max(max(qmx[g + 8], qmx[ROWS + g + 8]), max(qmx[2 * ROWS + g + 8], qmx[3 * ROWS + g + 8]));
	/* The row's largest |q| to [2^15, 2^16) (BF16's largest mantissa: below 65504); an all-zero
	 * row is left as is. e clamped so that the FP32 factors below stay normal. */
	const int e0 = mb0 ? min(110, max(-110, 142 - (int)(mb0 >> 7))) : 0;
	const int e1 = mb1 ? min(110, max(-110, 142 - (int)(mb1 >> 7))) : 0;
	const float qs0 = fp8r_pow2(e0 / 2) * fp8r_pow2(e0 - e0 / 2), qs1 = fp8r_pow2(e1 / 2) * fp8r_pow2(e1 - e1 / 2);
	/* S = part * scale * qf (K converted with the 2^-8 of the integer path: 2^8 back). */
	qf0 = fp8r_pow2((KINT ? 8 : 0) - e0), qf1 = fp8r_pow2((KINT ? 8 : 0) - e1);
	if (ROPE_QF) { /* rope q times 1 / qf (powers of two: exact), so that qf applies to the sum */
		const int k0 = e0 - (KINT ? 8 : 0), k1 = e1 - (KINT ? 8 : 0);
		const float u0 = fp8r_pow2(k0 / 2) * fp8r_pow2(k0 - k0 / 2);
		const float u1 = fp8r_pow2(k1 / 2) * fp8r_pow2(k1 - k1 / 2);
		qa_r[0] = k3_pack_bf16(k3_lo_bf16(qa_r[0]) * u0, k3_hi_bf16(qa_r[0]) * u0);
		qa_r[2] = k3_pack_bf16(k3_lo_bf16(qa_r[2]) * u0, k3_hi_bf16(qa_r[2]) * u0);
		qa_r[1] = k3_pack_bf16(k3_lo_bf16(qa_r[1]) * u1, k3_hi_bf16(qa_r[1]) * u1);
		qa_r[3] = k3_pack_bf16(k3_lo_bf16(qa_r[3]) * u1, k3_hi_bf16(qa_r[3]) * u1);
	}
#pragma unroll
	for (int q = 0; q < 8; q++) {
		const float a0 = k3_lo_bf16(qr0[q].x) * qs0, a1 = k3_hi_bf16(qr0[q].x) * qs0;
		const float a2 = k3_lo_bf16(qr0[q].y) * qs0, a3 = k3_hi_bf16(qr0[q].y) * qs0;
		const float c0 = k3_lo_bf16(qr1[q].x) * qs1, c1 = k3_hi_bf16(qr1[q].x) * qs1;
		const float c2 = k3_lo_bf16(qr1[q].y) * qs1, c3 = k3_hi_bf16(qr1[q].y) * qs1;
		if (KINT) { /* K pairs (x0, x2), (x1, x3) */
			qa[q][0] = k3_pack_f16(a0, a2), qa[q][1] = k3_pack_f16(c0, c2);
			qa[q][2] = k3_pack_f16(a1, a3), qa[q][3] = k3_pack_f16(c1, c3);
		} else { /* cvt: (x0, x1), (x2, x3) */
			qa[q][0] = k3_pack_f16(a0, a1), qa[q][1] = k3_pack_f16(c0, c1);
			qa[q][2] = k3_pack_f16(a2, a3), qa[q][3] = k3_pack_f16(c2, c3);
		}
	}
}

template <bool KINT>
__device__ __forceinline__ void fp8r_load_q(const params &p, uint32_t *qmx, int b, int R0, int R1, int w,
					    int g, int tq, uint32_t (&qa)[8][4], uint32_t (&qa_r)[4],
					    float &qf0, float &qf1)
{
	fp8r_qraw qr;
	fp8r_q_fetch(p, b, R0, R1, w, tq, qr);
	fp8r_q_finish<KINT>(qr, qmx, w, g, qa, qa_r, qf0, qf1);
}

/* The register kernels' epilogue: O (columns of scale tile w in units of 2^f, the integer
 * conversion's 2^-8 when VINT) normalized by l, to the output (one split) or the split's
 * partials, and the natural-log LSE from the base-2 running max m; l0, l1 are the rows' sums
 * over every token of the split (already reduced over the lanes, and over the warps where each
 * warp summed its own tokens). Column 16 sg(2 tq + e) + i of tile w holds o[i][e] (row g) and
 * o[i][2 + e] (row g + 8). */
template <bool VINT>
__device__ __forceinline__ void fp8r_epilogue(const params &p, const float (&o)[16][4], float l0, float l1, float m0,
					      float m1, int f0, int f1, int w, int tq, int R0, int R1, int b, size_t part0)
{
	const float inv0 = l0 > 0.0f ? ldexpf(1.0f / l0, (VINT ? 8 : 0) - f0) : 0.0f;
	const float inv1 = l1 > 0.0f ? ldexpf(1.0f / l1, (VINT ? 8 : 0) - f1) : 0.0f;
	const float lse0 = l0 > 0.0f ? (m0 + log2f(l0)) * LN2 : -INFINITY;
	const float lse1 = l1 > 0.0f ? (m1 + log2f(l1)) * LN2 : -INFINITY;
#pragma unroll
	for (int e = 0; e < 2; e++) {
		const int cn = 2 * tq + e;
		const int col = 128 * w + 16 * ((cn >> 1) + 4 * (cn & 1));
#pragma unroll
		for (int hr = 0; hr < 2; hr++) {
			const int R = hr ? R1 : R0;
			const float inv = hr ? inv1 : inv0;
			if (R >= p.rows)
				continue;
			if (p.n_splits == 1) {
				uint16_t *out = p.out + ((size_t)b * p.rows + R) * DV + col;
				uint4 v[2];
				uint32_t *vv = reinterpret_cast<uint32_t *>(v);
#pragma unroll
				for (int i = 0; i < 8; i++)
					vv[i] = k3_pack_bf16(o[2 * i][2 * hr + e] * inv, o[2 * i + 1][2 * hr + e] * inv);
				reinterpret_cast<uint4 *>(out)[0] = v[0];
				reinterpret_cast<uint4 *>(out)[1] = v[1];
			} else {
				float4 *op = reinterpret_cast<float4 *>(p.o_part + (part0 + R) * DV + col);
#pragma unroll
				for (int i = 0; i < 4; i++)
					op[i] = make_float4(o[4 * i][2 * hr + e] * inv, o[4 * i + 1][2 * hr + e] * inv,
							    o[4 * i + 2][2 * hr + e] * inv, o[4 * i + 3][2 * hr + e] * inv);
			}
		}
	}
	if (w == 0 && tq == 0) {
		if (p.n_splits == 1) {
			if (p.lse && R0 < p.rows)
				p.lse[(size_t)b * p.rows + R0] = lse0;
			if (p.lse && R1 < p.rows)
				p.lse[(size_t)b * p.rows + R1] = lse1;
		} else {
			if (R0 < p.rows)
				p.l_part[part0 + R0] = lse0;
			if (R1 < p.rows)
				p.l_part[part0 + R1] = lse1;
		}
	}
}

/* QK^T of one stage of the register, pipelined and split kernels (mla_fp8r_kernel, mla_fp8p_kernel,
 * mla_fp8s_kernel): raw
 * holds the 32 tokens' 656-byte rows; warp w takes scale tile w and rope step w of all 32 tokens
 * (n-tile j: tokens fp8r_token(j, .)) and writes part_w = S'_w scale(token, w) qf + rope_w to
 * rw[(w * 4 + j) * 32 + lane], the tile-w scales of this lane's two tokens of each n-tile to sc.
 * Each kernel keeps its own instruction mix: CVT2 converts a K word as two halves
 * (k3_e4m3x2_to_f16x2 twice: mla_fp8r_kernel, mla_fp8p_kernel), else in one asm that reads the high half in
 * place (k3_e4m3x4_to_f16x2x2: mla_fp8s_kernel); QF multiplies the scales by qf here, else the
 * caller applies qf to the whole score (mla_fp8s_kernel's early order: the rope fragment holds
 * rope q / qf, fp8r_q_finish<KINT, true>). */
template <bool KINT, bool CVT2, bool QF>
__device__ __forceinline__ void fp8r_qk_tile(const unsigned char *raw, float4 *rw, const uint32_t (&qa)[8][4],
					     const uint32_t (&qa_r)[4], float qf0, float qf1, int w, int g,
					     int tq, int lane, float (&sc)[4][2])
{
	float sp[4][4], sr[4][4];
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const unsigned char *tr = raw + fp8r_token(j, g) * FP8B;
		const uint2 kr = *reinterpret_cast<const uint2 *>(tr + MLA_FP8_ROPE_OFFSET + 32 * w + 8 * tq);
#pragma unroll
		for (int e = 0; e < 4; e++)
			sp[j][e] = 0.0f, sr[j][e] = 0.0f;
		k3_mma_bf16_sched(sr[j], qa_r, kr.x, kr.y);
#pragma unroll
		for (int e = 0; e < 2; e++)
			sc[j][e] = *reinterpret_cast<const float *>(raw + fp8r_token(j, 2 * tq + e) * FP8B +
								   MLA_FP8_SCALE_OFFSET + 4 * w);
	}
#pragma unroll
	for (int h = 0; h < 2; h++) {
		uint4 kw[4];
#pragma unroll
		for (int j = 0; j < 4; j++)
			kw[j] = *reinterpret_cast<const uint4 *>(raw + fp8r_token(j, g) * FP8B + 128 * w +
								 (tq + 4 * h) * 16);
#pragma unroll
		for (int qq = 0; qq < 4; qq++)
#pragma unroll
			for (int j = 0; j < 4; j++) {
				const uint32_t x = qq == 0   ? kw[j].x
						   : qq == 1 ? kw[j].y
						   : qq == 2 ? kw[j].z
							     : kw[j].w;
				uint32_t b0, b1;
				if (KINT) {
					k3_e4m3x4_to_f16x4_scaled(x, b0, b1);
				} else if (CVT2) {
					b0 = k3_e4m3x2_to_f16x2((uint16_t)(x & 0xffffu));
					b1 = k3_e4m3x2_to_f16x2((uint16_t)(x >> 16));
				} else {
					k3_e4m3x4_to_f16x2x2(x, b0, b1);
				}
				k3_mma_f16(sp[j], qa[4 * h + qq], b0, b1);
			}
	}
#pragma unroll
	for (int j = 0; j < 4; j++) {
		if (QF) {
			const float x0 = sc[j][0] * qf0, x1 = sc[j][1] * qf0;
			const float y0 = sc[j][0] * qf1, y1 = sc[j][1] * qf1;
			rw[(w * 4 + j) * 32 + lane] =
				make_float4(fmaf(sp[j][0], x0, sr[j][0]), fmaf(sp[j][1], x1, sr[j][1]),
					    fmaf(sp[j][2], y0, sr[j][2]), fmaf(sp[j][3], y1, sr[j][3]));
		} else {
			const float x0 = sc[j][0], x1 = sc[j][1];
			rw[(w * 4 + j) * 32 + lane] =
				make_float4(fmaf(sp[j][0], x0, sr[j][0]), fmaf(sp[j][1], x1, sr[j][1]),
					    fmaf(sp[j][2], x0, sr[j][2]), fmaf(sp[j][3], x1, sr[j][3]));
		}
	}
}

template <bool KINT, bool VINT>
__global__ void __launch_bounds__(fp8r::THREADS, fp8r::CTAS_PER_SM) mla_fp8r_kernel(const params p)
{
	using namespace fp8r;
	extern __shared__ __align__(128) unsigned char smem[];
	unsigned char *st = smem + OFF_ST;
	float4 *red = reinterpret_cast<float4 *>(smem + OFF_RED);
	uint32_t *qmx = reinterpret_cast<uint32_t *>(smem + OFF_QMX);
	uint64_t *bar = reinterpret_cast<uint64_t *>(smem + OFF_BAR);

	const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tq = lane & 3;
	const int rb = (int)blockIdx.x, split = (int)blockIdx.y, b = (int)blockIdx.z;
	const int L = min(p.seqlens[b], p.max_seqlen);
	const int row0 = rb * ROWS;
	const int row_hi = min(p.rows, row0 + ROWS) - 1;
	const bool sparse = p.indices != nullptr;
	const int32_t *ix = sparse ? p.indices + (size_t)b * p.topk : nullptr;
	const int n_entries = sparse ? p.topk : L - p.t + row_hi / p.H + 1;
	const int n_tiles = (n_entries + TILE - 1) / TILE;
	const int tile0 = split * p.tiles_per_split;
	const int n_it = min(n_tiles - tile0, p.tiles_per_split);
	const size_t part0 = ((size_t)b * p.n_splits + split) * p.rows;
	if (n_it <= 0) {
		for (int r = tid; r < ROWS; r += THREADS) {
			if (row0 + r >= p.rows)
				continue;
			if (p.n_splits > 1) {
				p.l_part[part0 + row0 + r] = -INFINITY;
			} else {
				for (int k = 0; k < DV; k++)
					p.out[((size_t)b * p.rows + row0 + r) * DV + k] = 0;
				if (p.lse)
					p.lse[(size_t)b * p.rows + row0 + r] = -INFINITY;
			}
		}
		return;
	}
	auto entry_pos = [&](int e) -> int {
		if (sparse)
			return e < p.topk ? ix[e] : -1;
		return e < L ? e : -1;
	};
	/* Warp 0: lane j's source for token j of tile it (global loads: the index list, the block
	 * table), computed a tile before the copy is issued so that their latency is hidden. */
	auto source = [&](int it) -> const unsigned char * {
		int pos = entry_pos((tile0 + it) * TILE + lane);
		if (pos < 0 || pos >= L)
			pos = 0;
		const int32_t page = p.block_table[(size_t)b * p.max_pages + pos / MLA_PAGE_TOKENS];
		return p.cache + ((size_t)page * MLA_PAGE_TOKENS + (size_t)(pos % MLA_PAGE_TOKENS)) * FP8B;
	};
	auto issue = [&](int it, const unsigned char *src) {
		const int s = it % NST;
		if (lane == 0)
			k3_mbar_expect_tx(&bar[s], TILE * FP8B);
		__syncwarp();
		k3_bulk_g2s(st + (size_t)s * STAGE_BYTES + (size_t)lane * FP8B, src, FP8B, &bar[s]);
	};
	if (tid == 0) {
#pragma unroll
		for (int i = 0; i < NST; i++)
			k3_mbar_init(&bar[i], 1);
		k3_mbar_fence_init();
	}
	__syncthreads();
	const unsigned char *next_src = nullptr; /* warp 0: the source of tile it - 1 + NST */
	if (w == 0) {
		for (int it = 0; it < NST && it < n_it; it++)
			issue(it, source(it));
		if (NST < n_it)
			next_src = source(NST);
	}

	/* Q (fp8r_load_q()): rows g, g + 8 of tile w in FP16 scaled by 2^e_row, rope step w. */
	const int R0 = row0 + g, R1 = R0 + 8;
	uint32_t qa[8][4], qa_r[4];
	float qf0, qf1;
	fp8r_load_q<KINT>(p, qmx, b, R0, R1, w, g, tq, qa, qa_r, qf0, qf1);

	const int end0 = L - p.t + min(R0, p.rows - 1) / p.H + 1;
	const int end1 = L - p.t + min(R1, p.rows - 1) / p.H + 1;
	const int sg = (g >> 1) + 4 * (g & 1); /* PV: this lane's 16-column chunk of tile w */

	float o[16][4];
#pragma unroll
	for (int n = 0; n < 16; n++)
		o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
	float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
	float d0 = 0.0f, d1 = 0.0f; /* largest P * scale so far (running max's frame) */
	int f0 = 0, f1 = 0;	    /* O in units of 2^f */

#pragma unroll 1
	for (int it = 0; it < n_it; it++) {
		const int s = it % NST;
		k3_mbar_wait(&bar[s], (uint32_t)((it / NST) & 1));
		const unsigned char *raw = st + (size_t)s * STAGE_BYTES;

		/* QK^T over tile w and rope step w for the 4 n-tiles (32 tokens): fp8r_qk_tile(). */
		float sc[4][2];
		float4 *rw = red + (it & 1) * RED_F4;
		fp8r_qk_tile<KINT, true, true>(raw, rw, qa, qa_r, qf0, qf1, w, g, tq, lane, sc);
		__syncthreads(); /* the parts are in; every warp is done with tile it - 1 */
		if (w == 0 && it >= 1 && it - 1 + NST < n_it) {
			issue(it - 1 + NST, next_src);
			if (it + NST < n_it)
				next_src = source(it + NST);
		}

		/* S (the same sum in every warp), mask, online softmax. A dense tile below the block's
		 * first causal end needs no mask. */
		const int ebase = (tile0 + it) * TILE;
		const bool all_vis = !sparse && ebase + TILE <= L - p.t + row0 / p.H + 1;
		float x[4][4];
		float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			float4 a = rw[j * 32 + lane];
#pragma unroll
			for (int ww = 1; ww < WARPS; ww++) {
				const float4 v = rw[(ww * 4 + j) * 32 + lane];
				a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w;
			}
			const float av[4] = { a.x, a.y, a.z, a.w };
#pragma unroll
			for (int e = 0; e < 4; e++) {
				x[j][e] = av[e] * p.scale_log2;
				if (!all_vis) {
					const int pos = entry_pos(ebase + fp8r_token(j, 2 * tq + (e & 1)));
					if (!(pos >= 0 && pos < (e < 2 ? end0 : end1)))
						x[j][e] = -INFINITY;
				}
			}
			mx0 = fmaxf(mx0, fmaxf(x[j][0], x[j][1]));
			mx1 = fmaxf(mx1, fmaxf(x[j][2], x[j][3]));
		}
		mx0 = k3_group_max<4>(mx0);
		mx1 = k3_group_max<4>(mx1);
		const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
		const float mu0 = mn0 == -INFINITY ? 0.0f : mn0, mu1 = mn1 == -INFINITY ? 0.0f : mn1;
		const float al0 = exp2f(m0 - mu0), al1 = exp2f(m1 - mu1);
		m0 = mn0, m1 = mn1;
		float s0 = 0.0f, s1 = 0.0f, t0 = 0.0f, t1 = 0.0f;
#pragma unroll
		for (int j = 0; j < 4; j++) {
#pragma unroll
			for (int e = 0; e < 4; e++)
				x[j][e] = exp2f(x[j][e] - (e < 2 ? mu0 : mu1));
			s0 += x[j][0] + x[j][1];
			s1 += x[j][2] + x[j][3];
			/* P * scale of tile w (FP32) */
			x[j][0] *= sc[j][0], x[j][1] *= sc[j][1], x[j][2] *= sc[j][0], x[j][3] *= sc[j][1];
			t0 = fmaxf(t0, fmaxf(x[j][0], x[j][1]));
			t1 = fmaxf(t1, fmaxf(x[j][2], x[j][3]));
		}
		l0 = l0 * al0 + s0;
		l1 = l1 * al1 + s1;
		t0 = k3_group_max<4>(t0);
		t1 = k3_group_max<4>(t1);
		/* The largest P * scale to [1, 2): O's unit changes by 2^(f_new - f). */
		d0 = fmaxf(d0 * al0, t0);
		d1 = fmaxf(d1 * al1, t1);
		const int g0 = d0 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d0) >> 23) & 0xff))) : f0;
		const int g1 = d1 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d1) >> 23) & 0xff))) : f1;
		const float r0 = fp8r_scale2(al0, g0 - f0), r1 = fp8r_scale2(al1, g1 - f1);
		f0 = g0, f1 = g1;
		const float pf0 = fp8r_pow2(f0), pf1 = fp8r_pow2(f1);
		if (__any_sync(0xffffffffu, r0 != 1.0f || r1 != 1.0f)) /* mostly not, once the max settles */
#pragma unroll
			for (int n = 0; n < 16; n++)
				o[n][0] *= r0, o[n][1] *= r0, o[n][2] *= r1, o[n][3] *= r1;
		uint32_t pa[2][4];
#pragma unroll
		for (int k = 0; k < 2; k++) {
			pa[k][0] = k3_pack_f16(x[2 * k][0] * pf0, x[2 * k][1] * pf0);
			pa[k][1] = k3_pack_f16(x[2 * k][2] * pf1, x[2 * k][3] * pf1);
			pa[k][2] = k3_pack_f16(x[2 * k + 1][0] * pf0, x[2 * k + 1][1] * pf0);
			pa[k][3] = k3_pack_f16(x[2 * k + 1][2] * pf1, x[2 * k + 1][3] * pf1);
		}

		/* O[:, tile w] += P V: k step k covers tokens 16 k + tq + 4 r (r = 0..3: b0 pairs r 0, 1,
		 * b1 pairs r 2, 3); n-tile 4 qq + c is column 16 sg + 4 qq + c of the tile. */
#pragma unroll
		for (int k = 0; k < 2; k++) {
			uint4 vw[4];
#pragma unroll
			for (int r = 0; r < 4; r++)
				vw[r] = *reinterpret_cast<const uint4 *>(raw + (16 * k + tq + 4 * r) * FP8B + 128 * w + 16 * sg);
#pragma unroll
			for (int qq = 0; qq < 4; qq++) {
				const uint32_t x0 = qq == 0 ? vw[0].x : qq == 1 ? vw[0].y : qq == 2 ? vw[0].z : vw[0].w;
				const uint32_t x1 = qq == 0 ? vw[1].x : qq == 1 ? vw[1].y : qq == 2 ? vw[1].z : vw[1].w;
				const uint32_t x2 = qq == 0 ? vw[2].x : qq == 1 ? vw[2].y : qq == 2 ? vw[2].z : vw[2].w;
				const uint32_t x3 = qq == 0 ? vw[3].x : qq == 1 ? vw[3].y : qq == 2 ? vw[3].z : vw[3].w;
				uint32_t bA[4], bB[4]; /* column c of the word: (r0, r1) and (r2, r3) */
				if (VINT) {
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x0, x1, 0x5410u), bA[0], bA[1]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x0, x1, 0x7632u), bA[2], bA[3]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x2, x3, 0x5410u), bB[0], bB[1]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x2, x3, 0x7632u), bB[2], bB[3]);
				} else {
					const uint32_t u01 = k3_prmt(x0, x1, 0x5140u), u23 = k3_prmt(x0, x1, 0x7362u);
					const uint32_t v01 = k3_prmt(x2, x3, 0x5140u), v23 = k3_prmt(x2, x3, 0x7362u);
					bA[0] = k3_e4m3x2_to_f16x2((uint16_t)(u01 & 0xffffu));
					bA[1] = k3_e4m3x2_to_f16x2((uint16_t)(u01 >> 16));
					bA[2] = k3_e4m3x2_to_f16x2((uint16_t)(u23 & 0xffffu));
					bA[3] = k3_e4m3x2_to_f16x2((uint16_t)(u23 >> 16));
					bB[0] = k3_e4m3x2_to_f16x2((uint16_t)(v01 & 0xffffu));
					bB[1] = k3_e4m3x2_to_f16x2((uint16_t)(v01 >> 16));
					bB[2] = k3_e4m3x2_to_f16x2((uint16_t)(v23 & 0xffffu));
					bB[3] = k3_e4m3x2_to_f16x2((uint16_t)(v23 >> 16));
				}
#pragma unroll
				for (int c = 0; c < 4; c++)
					k3_mma_f16(o[4 * qq + c], pa[k], bA[c], bB[c]);
			}
		}
	}

	/* Row sums over the 4 lanes (the same in every warp); column 16 sg(2 tq + e) + i of tile
	 * w holds o[i][e] (row g) and o[i][2 + e] (row g + 8). */
	l0 = k3_group_sum<4>(l0);
	l1 = k3_group_sum<4>(l1);
	fp8r_epilogue<VINT>(p, o, l0, l1, m0, m1, f0, f1, w, tq, R0, R1, b, part0);
}


/* ---- FP8 cache, register conversion, software-pipelined (K3_MLA_FP8_KERNEL=pipe) --------
 *
 * mla_fp8r_kernel's fragment maps, shared-memory layout and arithmetic (bit for bit the same
 * S, P, scales and units), with the tile loop reordered and its barrier replaced:
 *  - iteration it reads the S parts of tile it (written in iteration it - 1), runs the online
 *    softmax of tile it, computes and stores the S parts of tile it + 1 (QK^T), then
 *    accumulates P V of tile it, so that the softmax's dependent chain (shuffles, exp2) has the
 *    independent conversions and MMAs of QK^T beside it;
 *  - no __syncthreads in the loop: every thread arrives on an mbarrier of the parts buffer
 *    after writing tile it + 1's parts and waits for it only at the top of the next iteration
 *    (the PV in between absorbs the warps' skew; the other buffer is free once that wait has
 *    passed, since every thread read it before arriving), and arrives on the stage's "empty"
 *    mbarrier after its PV; warp 0 refills a stage a tile late (tile it - 1 + NST into the
 *    stage of tile it - 1, after waiting for that barrier), so no warp waits for the slowest;
 *  - the O rescale only when a row's max or unit moved (warp vote), the causal mask only on
 *    the tiles at a dense block's causal end (sparse: always, the positions loaded a tile
 *    ahead); the causal ends are made opaque so that their divisions stay out of the loop;
 *  - both conversions by cvt by default ("cc": measured faster than "ic" here).
 * The last iteration recomputes the parts of its own tile into the unused buffer (no branch).
 * H200, 2026-12-01v: 43-46 % of copy at t = 1 (reg: 40-44 %), 23-24 % at t = 2; the default
 * up to 32 rows from 01v to 01zc, now mla_fp8s_kernel below. */
template <bool KINT, bool VINT, bool SPARSE>
__global__ void __launch_bounds__(fp8r::THREADS, fp8r::CTAS_PER_SM) mla_fp8p_kernel(const params p)
{
	using namespace fp8r;
	extern __shared__ __align__(128) unsigned char smem[];
	unsigned char *st = smem + OFF_ST;
	float4 *red = reinterpret_cast<float4 *>(smem + OFF_RED);
	uint32_t *qmx = reinterpret_cast<uint32_t *>(smem + OFF_QMX);
	uint64_t *bar = reinterpret_cast<uint64_t *>(smem + OFF_BAR);     /* [NST] stage full (bulk copies) */
	uint64_t *pfull = reinterpret_cast<uint64_t *>(smem + OFF_BAR_P); /* [2] parts of a tile written */
	uint64_t *sempty = pfull + 2;                                     /* [NST] stage read by every thread */

	const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tq = lane & 3;
	const int rb = (int)blockIdx.x, split = (int)blockIdx.y, b = (int)blockIdx.z;
	const int L = min(p.seqlens[b], p.max_seqlen);
	const int row0 = rb * ROWS;
	const int row_hi = min(p.rows, row0 + ROWS) - 1;
	const int32_t *ix = SPARSE ? p.indices + (size_t)b * p.topk : nullptr;
	const int n_entries = SPARSE ? p.topk : L - p.t + row_hi / p.H + 1;
	const int n_tiles = (n_entries + TILE - 1) / TILE;
	const int tile0 = split * p.tiles_per_split;
	const int n_it = min(n_tiles - tile0, p.tiles_per_split);
	const size_t part0 = ((size_t)b * p.n_splits + split) * p.rows;
	if (n_it <= 0) {
		for (int r = tid; r < ROWS; r += THREADS) {
			if (row0 + r >= p.rows)
				continue;
			if (p.n_splits > 1) {
				p.l_part[part0 + row0 + r] = -INFINITY;
			} else {
				for (int k = 0; k < DV; k++)
					p.out[((size_t)b * p.rows + row0 + r) * DV + k] = 0;
				if (p.lse)
					p.lse[(size_t)b * p.rows + row0 + r] = -INFINITY;
			}
		}
		return;
	}
	auto entry_pos = [&](int e) -> int {
		if (SPARSE)
			return e < p.topk ? ix[e] : -1;
		return e < L ? e : -1;
	};
	auto source = [&](int it) -> const unsigned char * {
		int pos = entry_pos((tile0 + it) * TILE + lane);
		if (pos < 0 || pos >= L)
			pos = 0;
		const int32_t page = p.block_table[(size_t)b * p.max_pages + pos / MLA_PAGE_TOKENS];
		return p.cache + ((size_t)page * MLA_PAGE_TOKENS + (size_t)(pos % MLA_PAGE_TOKENS)) * FP8B;
	};
	auto issue = [&](int it, const unsigned char *src) {
		const int s = it % NST;
		if (lane == 0)
			k3_mbar_expect_tx(&bar[s], TILE * FP8B);
		__syncwarp();
		k3_bulk_g2s(st + (size_t)s * STAGE_BYTES + (size_t)lane * FP8B, src, FP8B, &bar[s]);
	};
	if (tid == 0) {
#pragma unroll
		for (int i = 0; i < NST; i++) {
			k3_mbar_init(&bar[i], 1);
			k3_mbar_init(&sempty[i], THREADS);
		}
		k3_mbar_init(&pfull[0], THREADS);
		k3_mbar_init(&pfull[1], THREADS);
		k3_mbar_fence_init();
	}
	__syncthreads();
	const unsigned char *next_src = nullptr; /* warp 0: the source of the next tile to copy */
	if (w == 0) {
		for (int it = 0; it < NST && it < n_it; it++)
			issue(it, source(it));
		if (NST < n_it)
			next_src = source(NST);
	}

	/* Q (fp8r_load_q()): rows g, g + 8 of tile w in FP16 scaled by 2^e_row, rope step w. */
	const int R0 = row0 + g, R1 = R0 + 8;
	uint32_t qa[8][4], qa_r[4];
	float qf0, qf1;
	fp8r_load_q<KINT>(p, qmx, b, R0, R1, w, g, tq, qa, qa_r, qf0, qf1);

	int end0 = L - p.t + min(R0, p.rows - 1) / p.H + 1;
	int end1 = L - p.t + min(R1, p.rows - 1) / p.H + 1;
	int end_all = L - p.t + row0 / p.H + 1; /* dense: entries below are visible to every row */
	/* Opaque, so that the divisions are not recomputed in the loop (register pressure). */
	asm volatile("" : "+r"(end0), "+r"(end1), "+r"(end_all));
	const int sg = (g >> 1) + 4 * (g & 1);

	/* QK^T of the stage at raw (fp8r_qk_tile(): both halves of a K word converted apart). */
	auto qk_tile = [&](const unsigned char *raw, float4 *rw, float (&sc)[4][2]) {
		fp8r_qk_tile<KINT, true, true>(raw, rw, qa, qa_r, qf0, qf1, w, g, tq, lane, sc);
	};
	/* Sparse: positions of this lane's 8 tokens of tile it (-1: none), loaded a tile ahead. */
	auto tile_pos = [&](int it, int (&ps)[4][2]) {
		if (SPARSE)
#pragma unroll
			for (int j = 0; j < 4; j++)
#pragma unroll
				for (int e = 0; e < 2; e++)
					ps[j][e] = entry_pos((tile0 + it) * TILE + fp8r_token(j, 2 * tq + e));
	};

	float o[16][4];
#pragma unroll
	for (int n = 0; n < 16; n++)
		o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
	float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
	float d0 = 0.0f, d1 = 0.0f;
	int f0 = 0, f1 = 0;

	/* Prologue: the parts of tile 0. */
	float sc[4][2];
	int pc[4][2] = {};
	k3_mbar_wait(&bar[0], 0u);
	tile_pos(0, pc);
	qk_tile(st, red, sc);
	k3_mbar_arrive(&pfull[0]);

#pragma unroll 1
	for (int it = 0; it < n_it; it++) {
		const int nx = it + 1 < n_it ? it + 1 : it;
		if (it + 1 < n_it)
			k3_mbar_wait(&bar[nx % NST], (uint32_t)((nx / NST) & 1));
		k3_mbar_wait(&pfull[it & 1], (uint32_t)((it >> 1) & 1)); /* every warp's parts of tile it */
		const unsigned char *raw = st + (size_t)(it % NST) * STAGE_BYTES;
		const float4 *rr = red + (it & 1) * RED_F4;

		/* S of tile it (the same sum in every warp), mask, online softmax. */
		float x[4][4];
		float mx0 = -INFINITY, mx1 = -INFINITY;
		const int ebase = (tile0 + it) * TILE;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			float4 a = rr[j * 32 + lane];
#pragma unroll
			for (int ww = 1; ww < WARPS; ww++) {
				const float4 v = rr[(ww * 4 + j) * 32 + lane];
				a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w;
			}
			x[j][0] = a.x * p.scale_log2, x[j][1] = a.y * p.scale_log2;
			x[j][2] = a.z * p.scale_log2, x[j][3] = a.w * p.scale_log2;
		}
		if (SPARSE || ebase + TILE > end_all) { /* dense: only the tiles at the causal end */
#pragma unroll
			for (int j = 0; j < 4; j++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					const int pos = SPARSE ? pc[j][e & 1] : ebase + fp8r_token(j, 2 * tq + (e & 1));
					if (!(pos >= 0 && pos < (e < 2 ? end0 : end1)))
						x[j][e] = -INFINITY;
				}
		}
#pragma unroll
		for (int j = 0; j < 4; j++) {
			mx0 = fmaxf(mx0, fmaxf(x[j][0], x[j][1]));
			mx1 = fmaxf(mx1, fmaxf(x[j][2], x[j][3]));
		}
		mx0 = k3_group_max<4>(mx0);
		mx1 = k3_group_max<4>(mx1);
		const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
		const float mu0 = mn0 == -INFINITY ? 0.0f : mn0, mu1 = mn1 == -INFINITY ? 0.0f : mn1;
		const float al0 = exp2f(m0 - mu0), al1 = exp2f(m1 - mu1);
		m0 = mn0, m1 = mn1;
		float s0 = 0.0f, s1 = 0.0f, t0 = 0.0f, t1 = 0.0f;
#pragma unroll
		for (int j = 0; j < 4; j++) {
#pragma unroll
			for (int e = 0; e < 4; e++)
				x[j][e] = exp2f(x[j][e] - (e < 2 ? mu0 : mu1));
			s0 += x[j][0] + x[j][1];
			s1 += x[j][2] + x[j][3];
			x[j][0] *= sc[j][0], x[j][1] *= sc[j][1], x[j][2] *= sc[j][0], x[j][3] *= sc[j][1];
			t0 = fmaxf(t0, fmaxf(x[j][0], x[j][1]));
			t1 = fmaxf(t1, fmaxf(x[j][2], x[j][3]));
		}
		l0 = l0 * al0 + s0;
		l1 = l1 * al1 + s1;
		t0 = k3_group_max<4>(t0);
		t1 = k3_group_max<4>(t1);
		d0 = fmaxf(d0 * al0, t0);
		d1 = fmaxf(d1 * al1, t1);
		const int g0 = d0 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d0) >> 23) & 0xff))) : f0;
		const int g1 = d1 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d1) >> 23) & 0xff))) : f1;
		const float r0 = fp8r_scale2(al0, g0 - f0), r1 = fp8r_scale2(al1, g1 - f1);
		f0 = g0, f1 = g1;
		const float pf0 = fp8r_pow2(f0), pf1 = fp8r_pow2(f1);
		uint32_t pa[2][4];
#pragma unroll
		for (int k = 0; k < 2; k++) {
			pa[k][0] = k3_pack_f16(x[2 * k][0] * pf0, x[2 * k][1] * pf0);
			pa[k][1] = k3_pack_f16(x[2 * k][2] * pf1, x[2 * k][3] * pf1);
			pa[k][2] = k3_pack_f16(x[2 * k + 1][0] * pf0, x[2 * k + 1][1] * pf0);
			pa[k][3] = k3_pack_f16(x[2 * k + 1][2] * pf1, x[2 * k + 1][3] * pf1);
		}

		/* The parts of tile nx into the other buffer (every thread has passed the wait above,
		 * so all are done reading it: they read it before arriving for tile it), then signalled
		 * without waiting: the PV below absorbs the warps' skew. */
		qk_tile(st + (size_t)(nx % NST) * STAGE_BYTES, red + ((it + 1) & 1) * RED_F4, sc);
		k3_mbar_arrive(&pfull[(it + 1) & 1]);
		tile_pos(nx, pc);

		if (__any_sync(0xffffffffu, r0 != 1.0f || r1 != 1.0f)) /* mostly not, once the max settles */
#pragma unroll
			for (int n = 0; n < 16; n++)
				o[n][0] *= r0, o[n][1] *= r0, o[n][2] *= r1, o[n][3] *= r1;
		/* O[:, tile w] += P V (fragment maps as in mla_fp8r_kernel). */
#pragma unroll
		for (int k = 0; k < 2; k++) {
			uint4 vw[4];
#pragma unroll
			for (int r = 0; r < 4; r++)
				vw[r] = *reinterpret_cast<const uint4 *>(raw + (16 * k + tq + 4 * r) * FP8B + 128 * w + 16 * sg);
#pragma unroll
			for (int qq = 0; qq < 4; qq++) {
				const uint32_t x0 = qq == 0 ? vw[0].x : qq == 1 ? vw[0].y : qq == 2 ? vw[0].z : vw[0].w;
				const uint32_t x1 = qq == 0 ? vw[1].x : qq == 1 ? vw[1].y : qq == 2 ? vw[1].z : vw[1].w;
				const uint32_t x2 = qq == 0 ? vw[2].x : qq == 1 ? vw[2].y : qq == 2 ? vw[2].z : vw[2].w;
				const uint32_t x3 = qq == 0 ? vw[3].x : qq == 1 ? vw[3].y : qq == 2 ? vw[3].z : vw[3].w;
				uint32_t bA[4], bB[4];
				if (VINT) {
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x0, x1, 0x5410u), bA[0], bA[1]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x0, x1, 0x7632u), bA[2], bA[3]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x2, x3, 0x5410u), bB[0], bB[1]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x2, x3, 0x7632u), bB[2], bB[3]);
				} else {
					const uint32_t u01 = k3_prmt(x0, x1, 0x5140u), u23 = k3_prmt(x0, x1, 0x7362u);
					const uint32_t v01 = k3_prmt(x2, x3, 0x5140u), v23 = k3_prmt(x2, x3, 0x7362u);
					bA[0] = k3_e4m3x2_to_f16x2((uint16_t)(u01 & 0xffffu));
					bA[1] = k3_e4m3x2_to_f16x2((uint16_t)(u01 >> 16));
					bA[2] = k3_e4m3x2_to_f16x2((uint16_t)(u23 & 0xffffu));
					bA[3] = k3_e4m3x2_to_f16x2((uint16_t)(u23 >> 16));
					bB[0] = k3_e4m3x2_to_f16x2((uint16_t)(v01 & 0xffffu));
					bB[1] = k3_e4m3x2_to_f16x2((uint16_t)(v01 >> 16));
					bB[2] = k3_e4m3x2_to_f16x2((uint16_t)(v23 & 0xffffu));
					bB[3] = k3_e4m3x2_to_f16x2((uint16_t)(v23 >> 16));
				}
#pragma unroll
				for (int c = 0; c < 4; c++)
					k3_mma_f16(o[4 * qq + c], pa[k], bA[c], bB[c]);
			}
		}
		k3_mbar_arrive(&sempty[it % NST]); /* this thread is done with tile it's stage */
		/* Warp 0: tile it - 1 + NST into the stage of tile it - 1, once every thread is done
		 * with it (a tile of slack: no warp waits for the slowest at a barrier). */
		const int nt = it - 1 + NST;
		if (w == 0 && it >= 1 && nt < n_it) {
			k3_mbar_wait(&sempty[(it - 1) % NST], (uint32_t)(((it - 1) / NST) & 1));
			issue(nt, next_src);
			if (nt + 1 < n_it)
				next_src = source(nt + 1);
		}
	}

	l0 = k3_group_sum<4>(l0);
	l1 = k3_group_sum<4>(l1);
	fp8r_epilogue<VINT>(p, o, l0, l1, m0, m1, f0, f1, w, tq, R0, R1, b, part0);
}

/* ---- the cluster combine of mla_fp8s_kernel --------------------------------------------------
 *
 * With more than one split, each split's CTA used to write its normalized O (FP32) and LSE to the
 * workspace and mla_combine_kernel merged them: a second launch, serial over the splits in one
 * warp per row, and the partials' round trip through L2. It cost ~20 us a call at H 16 whatever
 * the batch (2026-12-02a: fp8 H 16 8K, B 64 119.5 us and B 128 218.9 us = 20 + 1.55 us a tile of
 * a CTA; BF16 likewise; without splits ~2 us). Here the n_splits CTAs of a row block are one
 * cluster: each stages its O and LSE in its own stage area (free once the tile loop is done), one
 * cluster barrier, then CTA s merges the output columns of items s, s + S, ... of the block's 16
 * rows x 128 float4 from every split's shared memory (ld.shared::cluster), with the weights
 * e^(lse_s - m) / sum as mla_combine_kernel (computed once a row), writes BF16 and (CTA 0) the LSE;
 * a second barrier keeps every CTA's shared memory alive until all have read it. */
__device__ __forceinline__ void clu_sync_all()
{
	asm volatile("barrier.cluster.arrive.release.aligned;\n"
		     "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

__device__ __forceinline__ uint32_t clu_mapa(uint32_t addr, int rank)
{
	uint32_t r;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
	return r;
}

__device__ __forceinline__ float clu_ld_f32(uint32_t addr)
{
	float v;
	asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
	return v;
}

__device__ __forceinline__ float4 clu_ld_f32x4(uint32_t addr)
{
	float4 v;
	asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "r"(addr)
		     : "memory");
	return v;
}

/* This split's O (normalized by l, as fp8r_epilogue() writes a partial) and natural-log LSE into
 * the stage area xo ([ROWS][XS], LSE at X_L); the caller has made every warp leave the stages. */
template <bool VINT>
__device__ __forceinline__ void fp8s_stage_partial(float *xo, const float (&o)[16][4], float l0, float l1, float m0,
						   float m1, int f0, int f1, int w, int g, int tq)
{
	const float inv0 = l0 > 0.0f ? ldexpf(1.0f / l0, (VINT ? 8 : 0) - f0) : 0.0f;
	const float inv1 = l1 > 0.0f ? ldexpf(1.0f / l1, (VINT ? 8 : 0) - f1) : 0.0f;
#pragma unroll
	for (int e = 0; e < 2; e++) {
		const int cn = 2 * tq + e;
		const int col = 128 * w + 16 * ((cn >> 1) + 4 * (cn & 1));
#pragma unroll
		for (int hr = 0; hr < 2; hr++) {
			const float inv = hr ? inv1 : inv0;
			float4 *op = reinterpret_cast<float4 *>(xo + (g + 8 * hr) * fp8r::XS + col);
#pragma unroll
			for (int i = 0; i < 4; i++)
				op[i] = make_float4(o[4 * i][2 * hr + e] * inv, o[4 * i + 1][2 * hr + e] * inv,
						    o[4 * i + 2][2 * hr + e] * inv, o[4 * i + 3][2 * hr + e] * inv);
		}
	}
	if (w == 0 && tq == 0) {
		xo[fp8r::X_L + g] = l0 > 0.0f ? (m0 + log2f(l0)) * LN2 : -INFINITY;
		xo[fp8r::X_L + g + 8] = l1 > 0.0f ? (m1 + log2f(l1)) * LN2 : -INFINITY;
	}
}

/* The merge weights of one row over its splits (fp8s_cluster_combine(), fp8s_last_merge()): ls[s]
 * the natural-log LSE of split s (-inf: a split that saw nothing of the row, or s >= n_splits),
 * wt[s] = e^(ls[s] - m) / sum_s e^(ls[s] - m), m the largest, as mla_combine_kernel; returns the
 * merged LSE m + log(sum) (-inf where no split saw the row: every weight 0). */
__device__ __forceinline__ float fp8s_merge_weights(float (&ls)[fp8r::MAX_CLUSTER], float *wt)
{
	constexpr int S = fp8r::MAX_CLUSTER;
	float m = -INFINITY;
#pragma unroll
	for (int s = 0; s < S; s++)
		m = fmaxf(m, ls[s]);
	float sum = 0.0f;
#pragma unroll
	for (int s = 0; s < S; s++) {
		ls[s] = ls[s] == -INFINITY ? 0.0f : expf(ls[s] - m);
		sum += ls[s];
	}
	const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
#pragma unroll
	for (int s = 0; s < S; s++)
		wt[s] = ls[s] * inv;
	return sum > 0.0f ? m + logf(sum) : -INFINITY;
}

/* Every thread of every CTA of the cluster calls it once (after fp8s_stage_partial(), or with
 * only the LSE set to -inf where the split saw no token); the merge itself runs on the first
 * THREADS (the early order's producer warp only passes the barriers). */
__device__ __forceinline__ void fp8s_cluster_combine(const params &p, float *xo, int b, int row0, int split)
{
	using namespace fp8r;
	const int tid = (int)threadIdx.x, S = p.n_splits;
	float *wt = xo + X_W;
	const uint32_t base = k3_smem_u32(xo);
	clu_sync_all(); /* every split's O and LSE are in place */
	if (tid < ROWS) {
		float ls[MAX_CLUSTER];
#pragma unroll
		for (int s = 0; s < MAX_CLUSTER; s++) {
			const uint32_t at = base + (uint32_t)(X_L + tid) * 4u;
			ls[s] = s < S ? clu_ld_f32(clu_mapa(at, s)) : -INFINITY;
		}
		const float lse = fp8s_merge_weights(ls, wt + tid * MAX_CLUSTER);
		if (split == 0 && p.lse && row0 + tid < p.rows)
			p.lse[(size_t)b * p.rows + row0 + tid] = lse;
	}
	__syncthreads();
	for (int i = split * THREADS + tid; tid < THREADS && i < ROWS * (DV / 4); i += S * THREADS) {
		const int r = i / (DV / 4), c4 = i % (DV / 4);
		if (row0 + r >= p.rows)
			continue;
		const uint32_t at = base + (uint32_t)(r * XS + 4 * c4) * 4u;
		/* All loads first (independent: one round trip, not S), each only where the split's
		 * weight is positive: a split that saw nothing of the row staged no O. */
		float ws[MAX_CLUSTER];
		float4 v[MAX_CLUSTER];
#pragma unroll
		for (int s = 0; s < MAX_CLUSTER; s++) {
			ws[s] = s < S ? wt[r * MAX_CLUSTER + s] : 0.0f;
			v[s] = ws[s] > 0.0f ? clu_ld_f32x4(clu_mapa(at, s)) : make_float4(0.f, 0.f, 0.f, 0.f);
		}
		float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
		for (int s = 0; s < MAX_CLUSTER; s++) {
			acc.x += ws[s] * v[s].x, acc.y += ws[s] * v[s].y;
			acc.z += ws[s] * v[s].z, acc.w += ws[s] * v[s].w;
		}
		uint2 ov;
		ov.x = k3_pack_bf16(acc.x, acc.y);
		ov.y = k3_pack_bf16(acc.z, acc.w);
		*reinterpret_cast<uint2 *>(p.out + ((size_t)b * p.rows + row0 + r) * DV + 4 * c4) = ov;
	}
	clu_sync_all(); /* no CTA leaves while another may still read its shared memory */
}

/* ---- the last split's merge of mla_fp8s_kernel (K3_MLA_FP8S_COMBINE=last) --------------------
 *
 * No cluster (whose every row block must fit one wave at once: 64 clusters of 4 at B 64 do not,
 * 62 do) and no combine launch: each split writes its normalized O and LSE to the workspace as
 * for mla_combine_kernel (fp8r_epilogue()), every writing thread fences, and after a barrier one
 * thread counts the split in on the row block's counter; the split that counts last (old value
 * n_splits - 1) resets the counter to 0 for the next launch (or graph replay: kernel boundaries
 * order it before any CTA of that launch counts), fences, and merges every split's partials
 * from L2 (ld.global.cg) with the weights e^(lse_s - m) / sum, as mla_combine_kernel, into the
 * BF16 output and the LSE. `nthr` threads call it (tid < nthr), every one of them once. */
__device__ __forceinline__ int fp8s_count_in(const params &p, int b, int nthr, int *flag)
{
	const int tid = (int)threadIdx.x;
	__threadfence(); /* this thread's partial writes, before the count (release) */
	k3_named_sync(1, nthr);
	if (tid == 0) {
		int *cnt = p.counter + (size_t)b * gridDim.x + blockIdx.x;
		const int old = atomicAdd(cnt, 1);
		const int last = old == p.n_splits - 1;
		if (last) {
			*cnt = 0;
			__threadfence(); /* acquire: every split's partials before the reads below */
		}
		*flag = last;
	}
	k3_named_sync(1, nthr);
	return *flag;
}

/* G items (float4 of the row block's ROWS x 512 outputs) a thread at a time, every one of their
 * SN split loads issued before the sums (S <= SN splits; only where the split's weight is
 * positive: a split that saw nothing of the row wrote no O). */
template <int G, int SN>
__device__ __forceinline__ void fp8s_merge_items(const params &p, const float *wt, size_t base, int b, int row0,
						 int nthr)
{
	using namespace fp8r;
	const int tid = (int)threadIdx.x, S = p.n_splits;
	for (int i0 = tid; i0 < ROWS * (DV / 4); i0 += G * nthr) {
		float4 v[G][SN];
		float ws[G][SN];
#pragma unroll
		for (int gi = 0; gi < G; gi++) {
			const int i = i0 + gi * nthr, r = i / (DV / 4), c4 = i % (DV / 4);
			const bool in = i < ROWS * (DV / 4) && row0 + r < p.rows;
#pragma unroll
			for (int s = 0; s < SN; s++) {
				ws[gi][s] = in && s < S ? wt[r * MAX_CLUSTER + s] : 0.0f;
				v[gi][s] = ws[gi][s] > 0.0f
						   ? __ldcg(reinterpret_cast<const float4 *>(
							    p.o_part + (base + (size_t)s * p.rows + row0 + r) * DV) + c4)
						   : make_float4(0.f, 0.f, 0.f, 0.f);
			}
		}
#pragma unroll
		for (int gi = 0; gi < G; gi++) {
			const int i = i0 + gi * nthr, r = i / (DV / 4), c4 = i % (DV / 4);
			if (i >= ROWS * (DV / 4) || row0 + r >= p.rows)
				continue;
			float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
			for (int s = 0; s < SN; s++) {
				acc.x += ws[gi][s] * v[gi][s].x, acc.y += ws[gi][s] * v[gi][s].y;
				acc.z += ws[gi][s] * v[gi][s].z, acc.w += ws[gi][s] * v[gi][s].w;
			}
			uint2 ov;
			ov.x = k3_pack_bf16(acc.x, acc.y);
			ov.y = k3_pack_bf16(acc.z, acc.w);
			*reinterpret_cast<uint2 *>(p.out + ((size_t)b * p.rows + row0 + r) * DV + 4 * c4) = ov;
		}
	}
}

__device__ __forceinline__ void fp8s_last_merge(const params &p, float *xs, int b, int row0, int nthr)
{
	using namespace fp8r;
	const int tid = (int)threadIdx.x, S = p.n_splits;
	float *wt = xs; /* [ROWS][MAX_CLUSTER] weights */
	__threadfence();
	const size_t base = (size_t)b * S * p.rows;
	if (tid < ROWS) {
		float ls[MAX_CLUSTER];
#pragma unroll
		for (int s = 0; s < MAX_CLUSTER; s++)
			ls[s] = s < S && row0 + tid < p.rows ? __ldcg(p.l_part + base + (size_t)s * p.rows + row0 + tid)
							      : -INFINITY;
		const float lse = fp8s_merge_weights(ls, wt + tid * MAX_CLUSTER);
		if (p.lse && row0 + tid < p.rows)
			p.lse[(size_t)b * p.rows + row0 + tid] = lse;
	}
	k3_named_sync(1, nthr);
	/* Up to 16 float4 loads of a thread in flight at once (2026-12-02j call 1: one item's S loads
	 * at a time, 16 round trips through a loaded L2, took 5-8 us; 32 at once made ptxas spill in
	 * the kernel's 168 registers). */
	if (S <= 2)
		fp8s_merge_items<8, 2>(p, wt, base, b, row0, nthr);
	else if (S <= 4)
		fp8s_merge_items<4, 4>(p, wt, base, b, row0, nthr);
	else
		fp8s_merge_items<2, MAX_CLUSTER>(p, wt, base, b, row0, nthr);
}

/* The measurement hook: %globaltimer (ns) and the SM of this CTA at point k (0..6) into
 * p.trace[8 * cta + k] (word 7: SM id, and 1 << 16 when it merged as the last split). */
__device__ __forceinline__ void fp8s_trace(const params &p, int k, unsigned long long extra = 0)
{
	if (!p.trace)
		return;
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	const size_t cta = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
	p.trace[8 * cta + k] = t;
	if (k == 0 || extra) {
		unsigned sm;
		asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
		p.trace[8 * cta + 7] = sm | extra;
	}
}

/* K3_MLA_FP8S_SKEW: the tiles [tile0, tile0 + n_it) of split `split` of row block rb of request
 * b, the request's n_tiles cut in proportion to the splits' weights: 1000 + p.skew for a split
 * whose linear CTA index (grid (row blocks, requests, splits)) is below p.skew_fast, else 1000.
 * The CTAs placed first on an SM ran 6-7 % faster than the second beside them, in every one of
 * 124 SMs (2026-12-02p call 1 trace: B 64 8K loops 97.5 against 104.7 us, B 128 186.3 against
 * 199.0), and the SM waited for the slower. The ranges of a request's splits tile it exactly. */
__device__ __forceinline__ void fp8s_skew_range(const params &p, int n_tiles, int rb, int b, int split, int &tile0,
						int &n_it)
{
	const long long nrb = gridDim.x, nb = gridDim.y;
	long long before = 0, all = 0, self = 0;
	for (int s = 0; s < p.n_splits; s++) {
		const long long c = rb + nrb * (b + nb * s);
		const long long wgt = c < p.skew_fast ? 1000 + p.skew : 1000;
		before += s < split ? wgt : 0;
		self = s == split ? wgt : self;
		all += wgt;
	}
	tile0 = (int)(n_tiles * before / all);
	n_it = (int)(n_tiles * (before + self) / all) - tile0;
}

/* Waits for the grid before this one on the stream and its writes (a programmatic dependent
 * launch); a no-op after a plain launch or a second time. */
__device__ __forceinline__ void fp8s_dep_wait()
{
	asm volatile("griddepcontrol.wait;" ::: "memory");
}

/* ---- FP8 cache, register conversion, one softmax a tile (the default up to 32 rows) -------
 *
 * mla_fp8p_kernel's QK^T (split over k, parts through shared memory), PV (split over the 512
 * columns: warp w owns scale tile w) and conversions, with the softmax split over tokens instead
 * of repeated in every warp:
 *  - softmax warp w takes n-tile w of S (tokens fp8r_token(w, .): 8 of the 32): it sums the 4
 *    parts of its 16 x 8 scores in the same order as mla_fp8p_kernel (bitwise the same S), masks,
 *    and exponentiates in its own frame mw = max(m, its 8 tokens' max) (p <= 1). It writes
 *    P x scale(token, v) for all 4 scale tiles v in FP32 to the P buffer (in the C-fragment
 *    layout that PV warp v reads back as its own S fragment: conflict free) and mw per row;
 *  - one mbarrier hand-off (every thread arrives, every thread waits), then PV warp v reads
 *    its tile's P x scale of all 32 tokens and the 4 frames: M = max_w mw (the running max),
 *    each token group times 2^(mw_j - M) (<= 1), the unit 2^f and the O rescale as before, and
 *    its own row-sum partial l (its 8 tokens) kept in the global frame; the 4 warps' l are summed
 *    once at the end. Not bitwise the register kernels' P: p = 2^(x - mw) 2^(mw - M), two FP32
 *    roundings where they have one;
 *  - the stage of tile it - 1 is refilled (tile it - 1 + NST) by warp 0 right after the P
 *    hand-off of tile it, when every thread is past tile it - 1 (no wait), and the wait for
 *    the next tile's stage sits just before its QK^T: a copy is issued ~2.3 iterations before its
 *    first use (mla_fp8p_kernel: ~1); the block table is read a tile ahead and the copy source
 *    formed only at the issue.
 * Per-tile order (EARLY, the default since 2026-12-02h): wait parts(it); softmax slice; wait
 * P free(it - 1); P out; arrive hand-off(it); wait stage(it + 1); QK^T(it + 1) -> parts; wait
 * hand-off(it); P in, frames; arrive P free(it); pack; O rescale; PV(it); release stage(it). The
 * next tile's QK^T sits between the hand-off's arrive and its wait, where every warp used to wait
 * for the slowest (12 % of the samples at H 16, B 128, 8K, 2026-12-02c call 1), and a fifth
 * warp, the producer, issues every stage copy: with warp 0 refilling the stages (~14 % of its
 * time) the hand-off's wait stayed at 10 % and the reorder alone gained nothing (2026-12-02h call
 * 1: 8K B 128 74.9 % against 75.2); with the producer it fell to 3.3 %: 78.5-78.9 % at 8K, B 128,
 * 80.4-84.3 % at 32K-64K, B 64-128, against 67-77 % for the late order in the same process
 * (bench/results/k3-kernels-h200-2026-12-02h/). The single P
 * buffer: P(it + 1) is written only once every thread has read P(it) (P free); the parts buffer
 * of tile it + 1 was last read in the softmax of tile it - 1, before P free(it - 1). Without EARLY
 * (K3_MLA_FP8S_HANDOFF=late): wait hand-off(it) right after its arrive, QK^T(it + 1) after the
 * pack, and the single P buffer is safe since a warp writes P(it + 1) only after waiting for
 * parts(it + 1), which every thread arrives at after reading P(it).
 * H200, 2026-12-01zc (call 2; bench/results/k3-kernels-h200-2026-12-01zc/): 60-77 % of copy at
 * t = 1, 12-16 heads (B = 128: 71-77 %; mla_fp8p_kernel 43-47 % in the same call), 34-41 % at
 * t = 2 (23-24 %); 703 instructions a warp a tile at 4.07 cycles each (H 16, B 128, 8K), from
 * 916 at 5.21 with one copy a token (call 1). K3_MLA_FP8S_COPY=token: 50-52 %; =eager rescale:
 * the same as lazy within noise. */
template <bool KINT, bool VINT, bool SPARSE, bool EARLY = true, bool FRAME = false, int DIAG = 0>
__global__ void __launch_bounds__(EARLY ? fp8r::THREADS_S : fp8r::THREADS, fp8r::CTAS_PER_SM)
	mla_fp8s_kernel(const params p)
{
	using namespace fp8r;
	extern __shared__ __align__(128) unsigned char smem[];
	unsigned char *st = smem + OFF_ST;
	float4 *red = reinterpret_cast<float4 *>(smem + OFF_RED);
	uint32_t *qmx = reinterpret_cast<uint32_t *>(smem + OFF_QMX);
	uint64_t *bar = reinterpret_cast<uint64_t *>(smem + OFF_BAR);     /* [NST] stage full (bulk copies) */
	uint64_t *pfull = reinterpret_cast<uint64_t *>(smem + OFF_BAR_P); /* [2] parts of a tile written */
	uint64_t *sempty = pfull + 2;                                     /* [NST] stage read by every thread */
	uint64_t *pxb = sempty + NST;                                     /* P x scale and frames written */
	uint64_t *pfree = pxb + 1; /* EARLY: every thread has read P x scale and the frames of the tile */
	float4 *pbuf = reinterpret_cast<float4 *>(smem + OFF_PS);         /* [v][j][lane] */
	float4 *mwb = reinterpret_cast<float4 *>(smem + OFF_MW);          /* [row]: mw of warps 0..3 */

	const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tq = lane & 3;
	if (tid == 0)
		fp8s_trace(p, 0);
	if (p.fp8s_pdl == 1)
		asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	const int rb = (int)blockIdx.x;
	const int split = p.skew ? (int)blockIdx.z : (int)blockIdx.y, b = p.skew ? (int)blockIdx.y : (int)blockIdx.z;
	const int L = min(p.seqlens[b], p.max_seqlen);
	const int row0 = rb * ROWS;
	const int row_hi = min(p.rows, row0 + ROWS) - 1;
	const int32_t *ix = SPARSE ? p.indices + (size_t)b * p.topk : nullptr;
	const int n_entries = SPARSE ? p.topk : L - p.t + row_hi / p.H + 1;
	const int n_tiles = (n_entries + TILE - 1) / TILE;
	int tile0 = split * p.tiles_per_split;
	int n_it = min(n_tiles - tile0, p.tiles_per_split);
	if (p.skew)
		fp8s_skew_range(p, n_tiles, rb, b, split, tile0, n_it);
	const size_t part0 = ((size_t)b * p.n_splits + split) * p.rows;
	float *const xs = reinterpret_cast<float *>(smem + OFF_ST); /* the stage area, free after the loop */
	int *const last_flag = reinterpret_cast<int *>(xs + ROWS * MAX_CLUSTER);
	if (n_it <= 0) {
		fp8s_dep_wait(); /* p.pdl_in: the previous grid may still read what is written here */
		if (p.last) { /* the split's LSE -inf, counted in like any other (every thread here) */
			if (tid < ROWS && row0 + tid < p.rows)
				p.l_part[part0 + row0 + tid] = -INFINITY;
			if (fp8s_count_in(p, b, (int)blockDim.x, last_flag))
				fp8s_last_merge(p, xs, b, row0, (int)blockDim.x);
			return;
		}
		if (p.cluster) { /* nothing here: the split's LSE -inf, then its share of the merge */
			float *xo = reinterpret_cast<float *>(smem + OFF_ST);
			if (tid < ROWS)
				xo[X_L + tid] = -INFINITY;
			fp8s_cluster_combine(p, xo, b, row0, split);
			return;
		}
		for (int r = tid; r < ROWS; r += THREADS) {
			if (row0 + r >= p.rows)
				continue;
			if (p.n_splits > 1) {
				p.l_part[part0 + row0 + r] = -INFINITY;
			} else {
				for (int k = 0; k < DV; k++)
					p.out[((size_t)b * p.rows + row0 + r) * DV + k] = 0;
				if (p.lse)
					p.lse[(size_t)b * p.rows + row0 + r] = -INFINITY;
			}
		}
		return;
	}
	auto entry_pos = [&](int e) -> int {
		if (SPARSE)
			return e < p.topk ? ix[e] : -1;
		return e < L ? e : -1;
	};
	/* Warp 0: lane j's token of tile it as (position, page); the page is a global load whose
	 * latency the tile in between hides (the source address is formed at the issue). */
	auto source_pos = [&](int it, int &pos, int &page) {
		pos = entry_pos((tile0 + it) * TILE + lane);
		if (pos < 0 || pos >= L)
			pos = 0;
		page = p.block_table[(size_t)b * p.max_pages + pos / MLA_PAGE_TOKENS];
	};
	/* A dense tile whose 32 entries all exist lies in one page (TILE divides the page), so
	 * one bulk copy of 20992 bytes from its first token (lane 0's) fills the stage; otherwise
	 * one copy a token (lane j: token j; past the end: token 0, finite bytes). One copy a
	 * token cost warp 0 ~38 % of its issue time in 2026-12-01zc call 1 (the 32 copies of a
	 * warp are issued one lane at a time), and the other warps waited for it. */
	auto issue = [&](int it, int pos, int page) {
		const int s = it % NST;
		const unsigned char *src =
			p.cache + ((size_t)page * MLA_PAGE_TOKENS + (size_t)(pos % MLA_PAGE_TOKENS)) * FP8B;
		const bool whole = !SPARSE && p.fp8s_whole && (tile0 + it + 1) * TILE <= L;
		if (whole) {
			if (lane == 0) {
				k3_mbar_expect_tx(&bar[s], TILE * FP8B);
				k3_bulk_g2s(st + (size_t)s * STAGE_BYTES, src, TILE * FP8B, &bar[s]);
			}
			return;
		}
		if (lane == 0)
			k3_mbar_expect_tx(&bar[s], TILE * FP8B);
		__syncwarp();
		k3_bulk_g2s(st + (size_t)s * STAGE_BYTES + (size_t)lane * FP8B, src, FP8B, &bar[s]);
	};
	/* Q (fp8r_load_q()): rows g, g + 8 of tile w in FP16 scaled by 2^e_row, rope step w. EARLY:
	 * its loads first, ahead of the stages' bulk copies (behind which they queued: ~2 % of the
	 * samples at B 128, 8K, 2026-12-02c). */
	const int R0 = row0 + g, R1 = R0 + 8;
	fp8r_qraw qraw;
	if (EARLY && w < WARPS && !p.pdl_in)
		fp8r_q_fetch(p, b, R0, R1, w, tq, qraw);
	if (tid == 0) {
#pragma unroll
		for (int i = 0; i < NST; i++) {
			k3_mbar_init(&bar[i], 1);
			k3_mbar_init(&sempty[i], THREADS);
		}
		k3_mbar_init(&pfull[0], THREADS);
		k3_mbar_init(&pfull[1], THREADS);
		k3_mbar_init(pxb, THREADS);
		if (EARLY)
			k3_mbar_init(pfree, THREADS);
		k3_mbar_fence_init();
	}
	__syncthreads();
	if (EARLY && w == WARPS) {
		/* The producer warp: every stage copy of the split. The first stages' block-table loads
		 * in flight together; only the first p.fp8s_prime stages copied before tile 0 has landed
		 * (all CTAs' first stages at once share the bandwidth with every other stage); then
		 * tile nt into the stage of tile nt - NST once every consumer thread has released it.
		 * It passes the consumers' __syncthreads (fp8r_q_finish()'s, the epilogue's) and joins
		 * the cluster merge, where it only waits. */
		int ps[NST], pg[NST];
		if (SPARSE && p.pdl_in) /* the index list may be the previous grid's output */
			fp8s_dep_wait();
#pragma unroll
		for (int it = 0; it < NST; it++)
			if (it < n_it)
				source_pos(it, ps[it], pg[it]);
		/* p.pdl_in: the first stages of the cached prefix before the previous grid is done,
		 * the others after (the t new rows and sparse lists may be its output). */
		auto prefix = [&](int it) { return !SPARSE && (tile0 + it + 1) * TILE <= L - p.t; };
#pragma unroll
		for (int it = 0; it < NST; it++)
			if (it < n_it && it < p.fp8s_prime && (!p.pdl_in || prefix(it)))
				issue(it, ps[it], pg[it]);
		if (p.pdl_in) {
			fp8s_dep_wait();
#pragma unroll
			for (int it = 0; it < NST; it++)
				if (it < n_it && it < p.fp8s_prime && !prefix(it))
					issue(it, ps[it], pg[it]);
		}
		if (lane == 0)
			fp8s_trace(p, 5);
		__syncthreads(); /* fp8r_q_finish()'s */
		if (p.fp8s_prime < NST && p.fp8s_prime < n_it) {
			k3_mbar_wait(&bar[0], 0u);
#pragma unroll
			for (int it = 1; it < NST; it++)
				if (it < n_it && it >= p.fp8s_prime)
					issue(it, ps[it], pg[it]);
		}
#pragma unroll 1
		for (int nt = NST; nt < n_it && DIAG != 2; nt++) {
			int pos, page;
			source_pos(nt, pos, page);
			const int u = nt - NST; /* the tile whose stage it takes */
			k3_mbar_wait(&sempty[u % NST], (uint32_t)((u / NST) & 1));
			issue(nt, pos, page);
		}
		__syncthreads(); /* the epilogue's two */
		__syncthreads();
		if (p.cluster)
			fp8s_cluster_combine(p, reinterpret_cast<float *>(smem + OFF_ST), b, row0, split);
		return;
	}
	int next_pos = 0, next_page = 0; /* late order, warp 0: the next tile to copy */
	if (!EARLY && w == 0) {
		for (int it = 0; it < NST && it < n_it; it++) {
			int ps1, pg1;
			source_pos(it, ps1, pg1);
			issue(it, ps1, pg1);
		}
		if (NST < n_it)
			source_pos(NST, next_pos, next_page);
	}
	uint32_t qa[8][4], qa_r[4];
	float qf0, qf1;
	if (EARLY && p.pdl_in) { /* q may be the previous grid's output */
		fp8s_dep_wait();
		fp8r_q_fetch(p, b, R0, R1, w, tq, qraw);
	}
	if (EARLY)
		fp8r_q_finish<KINT, true>(qraw, qmx, w, g, qa, qa_r, qf0, qf1);
	else
		fp8r_load_q<KINT>(p, qmx, b, R0, R1, w, g, tq, qa, qa_r, qf0, qf1);
	/* S in the softmax slice: the parts' sum times the scale (EARLY: and qf, once a row). */
	const float sl0 = EARLY ? p.scale_log2 * qf0 : p.scale_log2;
	const float sl1 = EARLY ? p.scale_log2 * qf1 : p.scale_log2;

	int end0 = L - p.t + min(R0, p.rows - 1) / p.H + 1;
	int end1 = L - p.t + min(R1, p.rows - 1) / p.H + 1;
	int end_all = L - p.t + row0 / p.H + 1; /* dense: entries below are visible to every row */
	asm volatile("" : "+r"(end0), "+r"(end1), "+r"(end_all));
	const int sg = (g >> 1) + 4 * (g & 1);
	/* This lane's two softmax tokens: columns 2 tq, 2 tq + 1 of n-tile w. */
	const int tok0 = fp8r_token(w, 2 * tq), tok1 = fp8r_token(w, 2 * tq + 1);

	/* QK^T of the stage at raw (fp8r_qk_tile(): a K word converted in one asm). EARLY: the parts
	 * without qf (the rope fragment holds rope q / qf; the softmax slice applies qf once a row,
	 * sl0 / sl1); else times qf, as mla_fp8p_kernel. */
	auto qk_tile = [&](const unsigned char *raw, float4 *rw) {
		float sc[4][2];
		fp8r_qk_tile<KINT, false, !EARLY>(raw, rw, qa, qa_r, qf0, qf1, w, g, tq, lane, sc);
	};

	float o[16][4];
#pragma unroll
	for (int n = 0; n < 16; n++)
		o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
	float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
	float d0 = 0.0f, d1 = 0.0f;
	int f0 = 0, f1 = 0;

	/* Prologue: the parts of tile 0; sparse: the positions of this lane's two tokens of tile 0. */
	int pc0 = 0, pc1 = 0;
	if (SPARSE) {
		pc0 = entry_pos(tile0 * TILE + tok0);
		pc1 = entry_pos(tile0 * TILE + tok1);
	}
	k3_mbar_wait(&bar[0], 0u);
	if (tid == 0)
		fp8s_trace(p, 1);
	qk_tile(st, red);
	k3_mbar_arrive(&pfull[0]);

#pragma unroll 1
	for (int it = 0; it < n_it; it++) {
		if (DIAG == 1) { /* K3_MLA_FP8S_DIAG=mem: the stages pass through untouched */
			k3_mbar_wait(&bar[it % NST], (uint32_t)((it / NST) & 1));
			k3_mbar_arrive(&sempty[it % NST]);
			continue;
		}
		k3_mbar_wait(&pfull[it & 1], (uint32_t)((it >> 1) & 1)); /* every warp's parts of tile it */
		const unsigned char *raw = st + (size_t)(it % NST) * STAGE_BYTES;
		const float4 *rr = red + (it & 1) * RED_F4;

		/* Softmax slice: n-tile w of S (the 4 parts summed in mla_fp8p_kernel's order). */
		float4 a = rr[w * 32 + lane];
#pragma unroll
		for (int ww = 1; ww < WARPS; ww++) {
			const float4 v = rr[(ww * 4 + w) * 32 + lane];
			a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w;
		}
		float x[4] = { a.x * sl0, a.y * sl0, a.z * sl1, a.w * sl1 };
		const int ebase = (tile0 + it) * TILE;
		if (SPARSE || ebase + TILE > end_all) { /* dense: only the tiles at the causal end */
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int pos = SPARSE ? ((e & 1) ? pc1 : pc0) : ebase + ((e & 1) ? tok1 : tok0);
				if (!(pos >= 0 && pos < (e < 2 ? end0 : end1)))
					x[e] = -INFINITY;
			}
		}
		/* The frame moves only when the group's max passes the running max by more than tau
		 * (lazy rescale: P <= 2^tau; tau 0: every new max, as mla_fp8p_kernel). */
		const float lm0 = k3_group_max<4>(fmaxf(x[0], x[1])), lm1 = k3_group_max<4>(fmaxf(x[2], x[3]));
		const float mw0 = lm0 > m0 + p.fp8s_tau ? lm0 : m0, mw1 = lm1 > m1 + p.fp8s_tau ? lm1 : m1;
		const float mwu0 = mw0 == -INFINITY ? 0.0f : mw0, mwu1 = mw1 == -INFINITY ? 0.0f : mw1;
#pragma unroll
		for (int e = 0; e < 4; e++)
			x[e] = k3_exp2_ftz(x[e] - (e < 2 ? mwu0 : mwu1));
		const float s0 = x[0] + x[1], s1 = x[2] + x[3]; /* this lane's, in the frame mw */
		{
			const float4 c0 = *reinterpret_cast<const float4 *>(raw + tok0 * FP8B + MLA_FP8_SCALE_OFFSET);
			const float4 c1 = *reinterpret_cast<const float4 *>(raw + tok1 * FP8B + MLA_FP8_SCALE_OFFSET);
			if (EARLY && it >= 1) /* every thread has read P of tile it - 1 */
				k3_mbar_wait(pfree, (uint32_t)((it - 1) & 1));
			pbuf[(0 * 4 + w) * 32 + lane] = make_float4(x[0] * c0.x, x[1] * c1.x, x[2] * c0.x, x[3] * c1.x);
			pbuf[(1 * 4 + w) * 32 + lane] = make_float4(x[0] * c0.y, x[1] * c1.y, x[2] * c0.y, x[3] * c1.y);
			pbuf[(2 * 4 + w) * 32 + lane] = make_float4(x[0] * c0.z, x[1] * c1.z, x[2] * c0.z, x[3] * c1.z);
			pbuf[(3 * 4 + w) * 32 + lane] = make_float4(x[0] * c0.w, x[1] * c1.w, x[2] * c0.w, x[3] * c1.w);
		}
		if (tq == 0) {
			reinterpret_cast<float *>(mwb + g)[w] = mw0;
			reinterpret_cast<float *>(mwb + g + 8)[w] = mw1;
		}
		k3_mbar_arrive(pxb);
		/* The parts of tile it + 1 (the last iteration recomputes its own into the unused buffer).
		 * EARLY: before the hand-off's wait, which they cover (they need nothing of P). */
		const int nx = it + 1 < n_it ? it + 1 : it;
		auto next_parts = [&]() {
			if (it + 1 < n_it && (DIAG != 2 || nx < NST)) /* DIAG 2: the first stages only */
				k3_mbar_wait(&bar[nx % NST], (uint32_t)((nx / NST) & 1));
			qk_tile(st + (size_t)(nx % NST) * STAGE_BYTES, red + ((it + 1) & 1) * RED_F4);
			k3_mbar_arrive(&pfull[(it + 1) & 1]);
			if (SPARSE) {
				pc0 = entry_pos((tile0 + nx) * TILE + tok0);
				pc1 = entry_pos((tile0 + nx) * TILE + tok1);
			}
		};
		if (EARLY)
			next_parts();
		k3_mbar_wait(pxb, (uint32_t)(it & 1));
		/* Late order: every thread is past tile it - 1, warp 0 refills its stage with tile
		 * it - 1 + NST (early order: the producer warp). */
		const int nt = it - 1 + NST;
		if (!EARLY && w == 0 && it >= 1 && nt < n_it) {
			k3_mbar_wait(&sempty[(it - 1) % NST], (uint32_t)(((it - 1) / NST) & 1)); /* done already */
			issue(nt, next_pos, next_page);
			if (nt + 1 < n_it)
				source_pos(nt + 1, next_pos, next_page);
		}

		/* PV warp w: the frames, then P x scale(., w) of all 32 tokens in the frame M. */
		float r0, r1;
		uint32_t pa[2][4];
		const float4 wa = mwb[g], wb = mwb[g + 8];
		/* K3_MLA_FP8S_FRAME=steady (FRAME): where every softmax warp kept the running max of both
		 * rows of every lane (the lazy rescale's usual case once the max settles), M = m,
		 * 2^(mw_j - M) = 1 and alpha = 1 exactly, so the 12 exp2 and their products are skipped
		 * (bitwise the values of the general path below); where no row's largest P x scale
		 * passed d either, the unit stays (f is within its band of d's) and r = 1. */
		bool steady = false;
		if (FRAME) {
			const float n0 = fminf(fminf(wa.x, wa.y), fminf(wa.z, wa.w));
			const float n1 = fminf(fminf(wb.x, wb.y), fminf(wb.z, wb.w));
			const float x0 = fmaxf(fmaxf(wa.x, wa.y), fmaxf(wa.z, wa.w));
			const float x1 = fmaxf(fmaxf(wb.x, wb.y), fmaxf(wb.z, wb.w));
			steady = __all_sync(0xffffffffu, n0 == m0 && x0 == m0 && n1 == m1 && x1 == m1 &&
								 m0 > -INFINITY && m1 > -INFINITY);
		}
		if (steady) {
			float4 y[4];
#pragma unroll
			for (int j = 0; j < 4; j++)
				y[j] = pbuf[(w * 4 + j) * 32 + lane];
			if (EARLY)
				k3_mbar_arrive(pfree);
			l0 += s0, l1 += s1;
			float t0 = 0.0f, t1 = 0.0f;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				t0 = fmaxf(t0, fmaxf(y[j].x, y[j].y));
				t1 = fmaxf(t1, fmaxf(y[j].z, y[j].w));
			}
			t0 = k3_group_max<4>(t0);
			t1 = k3_group_max<4>(t1);
			r0 = 1.0f, r1 = 1.0f;
			if (__any_sync(0xffffffffu, t0 > d0 || t1 > d1)) { /* as below, with alpha = 1 */
				d0 = fmaxf(d0, t0), d1 = fmaxf(d1, t1);
				int g0 = d0 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d0) >> 23) & 0xff))) : f0;
				int g1 = d1 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d1) >> 23) & 0xff))) : f1;
				g0 = f0 >= g0 && f0 <= g0 + p.fp8s_band ? f0 : g0;
				g1 = f1 >= g1 && f1 <= g1 + p.fp8s_band ? f1 : g1;
				r0 = fp8r_scale2(1.0f, g0 - f0), r1 = fp8r_scale2(1.0f, g1 - f1);
				f0 = g0, f1 = g1;
			}
			const float pf0 = fp8r_pow2(f0), pf1 = fp8r_pow2(f1);
#pragma unroll
			for (int k = 0; k < 2; k++) {
				pa[k][0] = k3_pack_f16(y[2 * k].x * pf0, y[2 * k].y * pf0);
				pa[k][1] = k3_pack_f16(y[2 * k].z * pf1, y[2 * k].w * pf1);
				pa[k][2] = k3_pack_f16(y[2 * k + 1].x * pf0, y[2 * k + 1].y * pf0);
				pa[k][3] = k3_pack_f16(y[2 * k + 1].z * pf1, y[2 * k + 1].w * pf1);
			}
		} else {
			const float M0 = fmaxf(fmaxf(wa.x, wa.y), fmaxf(wa.z, wa.w));
			const float M1 = fmaxf(fmaxf(wb.x, wb.y), fmaxf(wb.z, wb.w));
			const float mu0 = M0 == -INFINITY ? 0.0f : M0, mu1 = M1 == -INFINITY ? 0.0f : M1;
			const float al0 = k3_exp2_ftz(m0 - mu0), al1 = k3_exp2_ftz(m1 - mu1);
			m0 = M0, m1 = M1;
			/* 2^(mw_j - M) of each token group j (0 where the group saw nothing). */
			const float cj0[4] = { k3_exp2_ftz(wa.x - mu0), k3_exp2_ftz(wa.y - mu0), k3_exp2_ftz(wa.z - mu0),
					       k3_exp2_ftz(wa.w - mu0) };
			const float cj1[4] = { k3_exp2_ftz(wb.x - mu1), k3_exp2_ftz(wb.y - mu1), k3_exp2_ftz(wb.z - mu1),
					       k3_exp2_ftz(wb.w - mu1) };
			l0 = l0 * al0 + s0 * k3_exp2_ftz(mw0 - mu0); /* cj0[w], without indexing by w */
			l1 = l1 * al1 + s1 * k3_exp2_ftz(mw1 - mu1);
			float4 y[4];
#pragma unroll
			for (int j = 0; j < 4; j++)
				y[j] = pbuf[(w * 4 + j) * 32 + lane];
			if (EARLY)
				k3_mbar_arrive(pfree);
			float t0 = 0.0f, t1 = 0.0f;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				t0 = fmaxf(t0, fmaxf(y[j].x, y[j].y) * cj0[j]);
				t1 = fmaxf(t1, fmaxf(y[j].z, y[j].w) * cj1[j]);
			}
			t0 = k3_group_max<4>(t0);
			t1 = k3_group_max<4>(t1);
			d0 = fmaxf(d0 * al0, t0);
			d1 = fmaxf(d1 * al1, t1);
			/* The unit: the largest P x scale in [1, 2) when set; kept while it stays in
			 * [1, 2^(band + 1)) (band 0: set every tile, as mla_fp8p_kernel; FP16 holds 2^15). */
			int g0 = d0 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d0) >> 23) & 0xff))) : f0;
			int g1 = d1 > 0.0f ? min(126, max(-126, 127 - max(1, (__float_as_int(d1) >> 23) & 0xff))) : f1;
			g0 = f0 >= g0 && f0 <= g0 + p.fp8s_band ? f0 : g0;
			g1 = f1 >= g1 && f1 <= g1 + p.fp8s_band ? f1 : g1;
			r0 = fp8r_scale2(al0, g0 - f0), r1 = fp8r_scale2(al1, g1 - f1);
			f0 = g0, f1 = g1;
			const float pf0 = fp8r_pow2(f0), pf1 = fp8r_pow2(f1);
#pragma unroll
			for (int k = 0; k < 2; k++) {
				const float u0 = cj0[2 * k] * pf0, u1 = cj1[2 * k] * pf1;
				const float v0 = cj0[2 * k + 1] * pf0, v1 = cj1[2 * k + 1] * pf1;
				pa[k][0] = k3_pack_f16(y[2 * k].x * u0, y[2 * k].y * u0);
				pa[k][1] = k3_pack_f16(y[2 * k].z * u1, y[2 * k].w * u1);
				pa[k][2] = k3_pack_f16(y[2 * k + 1].x * v0, y[2 * k + 1].y * v0);
				pa[k][3] = k3_pack_f16(y[2 * k + 1].z * v1, y[2 * k + 1].w * v1);
			}
		}

		if (!EARLY)
			next_parts();

		if (__any_sync(0xffffffffu, r0 != 1.0f || r1 != 1.0f)) /* mostly not, once the max settles */
#pragma unroll
			for (int n = 0; n < 16; n++)
				o[n][0] *= r0, o[n][1] *= r0, o[n][2] *= r1, o[n][3] *= r1;
		/* O[:, tile w] += P V (fragment maps as in mla_fp8r_kernel). */
#pragma unroll
		for (int k = 0; k < 2; k++) {
			uint4 vw[4];
#pragma unroll
			for (int r = 0; r < 4; r++)
				vw[r] = *reinterpret_cast<const uint4 *>(raw + (16 * k + tq + 4 * r) * FP8B + 128 * w + 16 * sg);
#pragma unroll
			for (int qq = 0; qq < 4; qq++) {
				const uint32_t x0 = qq == 0 ? vw[0].x : qq == 1 ? vw[0].y : qq == 2 ? vw[0].z : vw[0].w;
				const uint32_t x1 = qq == 0 ? vw[1].x : qq == 1 ? vw[1].y : qq == 2 ? vw[1].z : vw[1].w;
				const uint32_t x2 = qq == 0 ? vw[2].x : qq == 1 ? vw[2].y : qq == 2 ? vw[2].z : vw[2].w;
				const uint32_t x3 = qq == 0 ? vw[3].x : qq == 1 ? vw[3].y : qq == 2 ? vw[3].z : vw[3].w;
				uint32_t bA[4], bB[4];
				if (VINT) {
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x0, x1, 0x5410u), bA[0], bA[1]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x0, x1, 0x7632u), bA[2], bA[3]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x2, x3, 0x5410u), bB[0], bB[1]);
					k3_e4m3x4_to_f16x4_scaled(k3_prmt(x2, x3, 0x7632u), bB[2], bB[3]);
				} else {
					const uint32_t u01 = k3_prmt(x0, x1, 0x5140u), u23 = k3_prmt(x0, x1, 0x7362u);
					const uint32_t v01 = k3_prmt(x2, x3, 0x5140u), v23 = k3_prmt(x2, x3, 0x7362u);
					k3_e4m3x4_to_f16x2x2(u01, bA[0], bA[1]);
					k3_e4m3x4_to_f16x2x2(u23, bA[2], bA[3]);
					k3_e4m3x4_to_f16x2x2(v01, bB[0], bB[1]);
					k3_e4m3x4_to_f16x2x2(v23, bB[2], bB[3]);
				}
#pragma unroll
				for (int c = 0; c < 4; c++)
					k3_mma_f16(o[4 * qq + c], pa[k], bA[c], bB[c]);
			}
		}
		k3_mbar_arrive(&sempty[it % NST]); /* this thread is done with tile it's stage */
	}

	if (tid == 0)
		fp8s_trace(p, 2);
	if (p.fp8s_pdl == 2 || p.pdl_in) /* the producer warp has returned: every thread of the CTA is here */
		asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	/* l: this warp's tokens, summed over the lanes here and over the warps through shared
	 * memory (qmx, free since the prologue's barrier), in warp order. */
	l0 = k3_group_sum<4>(l0);
	l1 = k3_group_sum<4>(l1);
	float *lw = reinterpret_cast<float *>(qmx);
	__syncthreads(); /* every warp is past its reads of qmx (the prologue) */
	if (tq == 0)
		lw[w * ROWS + g] = l0, lw[w * ROWS + g + 8] = l1;
	__syncthreads();
	l0 = ((lw[g] + lw[ROWS + g]) + lw[2 * ROWS + g]) + lw[3 * ROWS + g];
	l1 = ((lw[g + 8] + lw[ROWS + g + 8]) + lw[2 * ROWS + g + 8]) + lw[3 * ROWS + g + 8];
	if (p.cluster) { /* every warp has left the stages (the barrier above), no copy is in flight */
		float *xo = reinterpret_cast<float *>(smem + OFF_ST);
		fp8s_stage_partial<VINT>(xo, o, l0, l1, m0, m1, f0, f1, w, g, tq);
		if (tid == 0)
			fp8s_trace(p, 3);
		fp8s_cluster_combine(p, xo, b, row0, split);
		if (tid == 0)
			fp8s_trace(p, 4);
		return;
	}
	fp8r_epilogue<VINT>(p, o, l0, l1, m0, m1, f0, f1, w, tq, R0, R1, b, part0);
	if (tid == 0)
		fp8s_trace(p, 3);
	/* The producer warp has returned: the THREADS compute threads count in (named barrier 1; the
	 * stage area is free: every warp has left the stages, no copy is in flight). */
	if (p.last && fp8s_count_in(p, b, THREADS, last_flag)) {
		fp8s_last_merge(p, xs, b, row0, THREADS);
		if (tid == 0)
			fp8s_trace(p, 4, 1ull << 16);
	}
}

/* One warp per query row: out = sum_s e^(lse_s - lse) o_s, lse = log sum_s e^lse_s.
 * Splits that saw nothing (lse_s = -inf) are skipped without reading o_s. */
__global__ void __launch_bounds__(COMBINE_WARPS * 32) mla_combine_kernel(const params p, int total_rows)
{
	/* A programmatic dependent launch (K3_MLA_FP8S_PDL) waits here for the split kernel's grid
	 * and its writes; after a plain launch a no-op. */
	fp8s_dep_wait();
	/* The next grid (a split kernel launched with overlap_prev) may start its prefix copies. */
	if (p.pdl_in)
		asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
	const int gr = (int)blockIdx.x * COMBINE_WARPS + warp;
	if (gr >= total_rows)
		return;
	const int b = gr / p.rows, R = gr % p.rows;
	const size_t base = (size_t)b * p.n_splits * p.rows + R;
	float m = -INFINITY;
	for (int s = lane; s < p.n_splits; s += 32)
		m = fmaxf(m, p.l_part[base + (size_t)s * p.rows]);
	m = k3_group_max<32>(m);
	float4 acc[DV / 128];
#pragma unroll
	for (int k = 0; k < DV / 128; k++)
		acc[k] = make_float4(0.f, 0.f, 0.f, 0.f);
	float sum = 0.0f;
	if (m != -INFINITY) {
		/* 4 splits at a time, their loads issued together (2 round trips, not 8); the sums in
		 * split order as before. */
		for (int s0 = 0; s0 < p.n_splits; s0 += 4) {
			float ls[4];
			float4 v[4][DV / 128];
#pragma unroll
			for (int u = 0; u < 4; u++)
				ls[u] = s0 + u < p.n_splits ? p.l_part[base + (size_t)(s0 + u) * p.rows]
							    : -INFINITY;
#pragma unroll
			for (int u = 0; u < 4; u++) {
				const size_t at = (base + (size_t)(s0 + u) * p.rows) * DV;
				const float4 *op = reinterpret_cast<const float4 *>(p.o_part + at);
#pragma unroll
				for (int k = 0; k < DV / 128; k++)
					v[u][k] = ls[u] != -INFINITY ? op[lane + 32 * k]
								     : make_float4(0.f, 0.f, 0.f, 0.f);
			}
#pragma unroll
			for (int u = 0; u < 4; u++) {
				if (ls[u] == -INFINITY)
					continue;
				const float w = expf(ls[u] - m);
				sum += w;
#pragma unroll
				for (int k = 0; k < DV / 128; k++) {
					acc[k].x += w * v[u][k].x, acc[k].y += w * v[u][k].y;
					acc[k].z += w * v[u][k].z, acc[k].w += w * v[u][k].w;
				}
			}
		}
	}
	const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
	uint16_t *out = p.out + (size_t)gr * DV;
#pragma unroll
	for (int k = 0; k < DV / 128; k++) {
		uint2 v;
		v.x = k3_pack_bf16(acc[k].x * inv, acc[k].y * inv);
		v.y = k3_pack_bf16(acc[k].z * inv, acc[k].w * inv);
		*reinterpret_cast<uint2 *>(out + (lane + 32 * k) * 4) = v;
	}
	if (lane == 0 && p.lse)
		p.lse[gr] = sum > 0.0f ? m + logf(sum) : -INFINITY;
}

struct plan {
	int rg, n_rb, splits, tiles_per_split;
	int fp8r;    /* fp8r_variant(): 0, or a register kernel's kernel * 4 + conversion variant */
	int cluster; /* mla_fp8s_kernel's splits of a row block as one cluster (fp8s_cluster_combine()) */
	int last;    /* mla_fp8s_kernel's splits merged by the last of a row block (fp8s_last_merge()) */
	int skew;    /* mla_fp8s_kernel without a cluster: params::skew (K3_MLA_FP8S_SKEW), 0 off */
	int sms;
};

/* The FP8 kernel, read once from the environment: K3_MLA_FP8_KERNEL=stage runs the kernel that
 * expands each tile into BF16 in shared memory for every shape, =reg the register kernel
 * (mla_fp8r_kernel) for every shape, =pipe its software-pipelined form (mla_fp8p_kernel) for
 * every shape, =split the form with one softmax a tile (mla_fp8s_kernel) for every shape; unset,
 * mla_fp8s_kernel up to 32 query rows (t H) and the staged one (64 rows a CTA) above, where it
 * measured faster (2026-12-01p). The register kernels' E4M3 -> FP16 conversion per product from
 * K3_MLA_FP8_CVT: "ic" (QK^T by integer instructions, PV by cvt: the register kernel's default),
 * "cc" (both by cvt: the pipelined and split kernels' default), "ii" or "ci". Returns kernel * 8 +
 * (K by integers) + 2 (V by integers), or kernel * 8 + 4 where the conversion is not set; kernel
 * 0 (auto), 1 (reg), 2 (stage), 3 (pipe) or 4 (split). */
int fp8_kernel_choice()
{
	int choice = -1;
	{
		const char *k = getenv("K3_MLA_FP8_KERNEL"), *c = getenv("K3_MLA_FP8_CVT");
		int v = 4; /* unset: the kernel's default (fp8r_variant()) */
		if (c && strlen(c) == 2 && (c[0] == 'i' || c[0] == 'c') && (c[1] == 'i' || c[1] == 'c'))
			v = (c[0] == 'i' ? 1 : 0) + (c[1] == 'i' ? 2 : 0);
		int kind = 0;
		if (k && !strcmp(k, "stage"))
			kind = 2;
		else if (k && !strcmp(k, "reg"))
			kind = 1;
		else if (k && !strcmp(k, "pipe"))
			kind = 3;
		else if (k && !strcmp(k, "split"))
			kind = 4;
		choice = kind * 8 + v;
	}
	return choice;
}

/* A register kernel for these rows? 0: no (BF16 cache, or the staged kernel), else kernel * 4 +
 * the conversion variant, kernel 1 (mla_fp8r_kernel), 3 (mla_fp8p_kernel) or 4 (mla_fp8s_kernel). */
int fp8r_variant(enum mla_kv kv, int rows)
{
	if (kv != MLA_KV_FP8)
		return 0;
	const int c = fp8_kernel_choice(), k = c / 8, v = c % 8;
	if (k == 2 || (k == 0 && rows > 32))
		return 0;
	if (k == 1)
		return 4 + (v == 4 ? 1 : v); /* mla_fp8r_kernel: "ic" unless set */
	if (k == 3)
		return 12 + (v == 4 ? 0 : v); /* mla_fp8p_kernel: "cc" unless set */
	return 16 + (v == 4 ? 0 : v);         /* mla_fp8s_kernel: "cc" unless set */
}

/* mla_fp8s_kernel's options, read at every call: K3_MLA_FP8S_COPY=token copies every token on
 * its own (default "whole": one bulk copy a whole dense tile); K3_MLA_FP8S_RESCALE=eager moves the
 * running max at every new maximum and resets the unit every tile (default "lazy": tau = band =
 * 8); K3_MLA_FP8S_PRIME=1..4: stages copied before tile 0 has landed (early order only; default
 * FP8S_PRIME_DEFAULT). */
constexpr int FP8S_PRIME_DEFAULT = fp8r::NST;
void fp8s_options(int *whole, float *tau, int *band, int *prime)
{
	const char *c = getenv("K3_MLA_FP8S_COPY"), *r = getenv("K3_MLA_FP8S_RESCALE");
	const char *pr = getenv("K3_MLA_FP8S_PRIME");
	const int w = !(c && !strcmp(c, "token"));
	const int lazy = !(r && !strcmp(r, "eager"));
	*whole = w;
	*tau = lazy ? 8.0f : 0.0f;
	*band = lazy ? 8 : 0;
	*prime = FP8S_PRIME_DEFAULT;
	if (pr && pr[0] >= '1' && pr[0] <= '0' + fp8r::NST && !pr[1])
		*prime = pr[0] - '0';
}

/* mla_fp8s_kernel's split plan: 1 (default) a wave at most (splits rounded down) and the splits
 * of a row block combined in a cluster where 2..8 of them fit one wave (make_plan(): two waves
 * and the last-split merge where whole splits fill less than 80 % of one, unless any
 * K3_MLA_FP8S_COMBINE is set: e.g. =onewave, the 2026-12-02h plan); 3 (=last) the last-split
 * merge (fp8s_last_merge()) instead of clusters and the combine kernel; 2
 * (K3_MLA_FP8S_COMBINE=cluster) the same with clusters of 2..8 splits even where
 * cudaOccupancyMaxActiveClusters says fewer fit at once than there are row blocks (B 64 at 8K:
 * 64 clusters of 4); 0 (K3_MLA_FP8S_COMBINE=kernel, the default up to 2026-12-02) splits
 * rounded to the nearest count of a wave and always mla_combine_kernel. */
int fp8s_cluster_option()
{
	const char *c = getenv("K3_MLA_FP8S_COMBINE");
	if (c && !strcmp(c, "kernel"))
		return 0;
	if (c && !strcmp(c, "last"))
		return 3;
	return c && !strcmp(c, "cluster") ? 2 : 1;
}

/* The last-split merge's counters: 1 (default) zeroed by a cudaMemsetAsync before every launch
 * (nothing asked of the caller), 0 (K3_MLA_FP8S_LAST_RESET=self) left zero by every launch
 * (the last split of a row block resets its counter), so the caller zeroes the workspace once
 * after allocating it and writes nothing into it between calls. Read at every call. */
bool fp8s_last_memset()
{
	const char *c = getenv("K3_MLA_FP8S_LAST_RESET");
	return !(c && !strcmp(c, "self"));
}

/* mla_fp8s_kernel's waves (K3_MLA_FP8S_WAVES=1..8, default 1, read at every call): splits for
 * about that many waves of CTAs (rounded down; the last-split merge: at most MAX_CLUSTER), so
 * that the hardware's CTA scheduler evens out CTAs that run at different speeds. */
int fp8s_waves_option()
{
	const char *c = getenv("K3_MLA_FP8S_WAVES");
	return c && c[0] >= '1' && c[0] <= '8' && !c[1] ? c[0] - '0' : 1;
}

/* The measurement hook's buffer (mla_decode_set_trace()). */
unsigned long long *g_trace = nullptr;

/* mla_fp8s_kernel's order: 1 (default) early: the next tile's QK^T between the P hand-off's
 * arrive and its wait (a second mbarrier guards the single P buffer), Q loaded ahead of the
 * first copies, qf applied once a row in the softmax, the first stages primed
 * (K3_MLA_FP8S_PRIME); 0 (K3_MLA_FP8S_HANDOFF=late) the kernel as GPU-tested on 2026-12-02c
 * (the hand-off's wait first, QK^T after the pack). */
bool fp8s_early_option()
{
	const char *c = getenv("K3_MLA_FP8S_HANDOFF");
	return !(c && !strcmp(c, "late"));
}

/* mla_fp8s_kernel's frame merge (read at every call): K3_MLA_FP8S_FRAME=steady the FRAME form
 * (the exp2 of the frames skipped while every softmax warp keeps the running max), =full the
 * general form of every tile (2026-12-02h); unset: FP8S_FRAME_DEFAULT. Early order and the cvt
 * conversions only (the default kernel). */
constexpr bool FP8S_FRAME_DEFAULT = false;
bool fp8s_frame_option()
{
	const char *c = getenv("K3_MLA_FP8S_FRAME");
	if (c && !strcmp(c, "steady"))
		return true;
	if (c && !strcmp(c, "full"))
		return false;
	return FP8S_FRAME_DEFAULT;
}

/* Measurement only (read at every call; mla_fp8s_kernel's DIAG, dense, cvt, early order):
 * K3_MLA_FP8S_DIAG=mem (1) the compute warps only wait for each stage and release it (the copy
 * pipeline alone), =compute (2) no copies past the first stages, whose data every tile reuses
 * (the tile loop alone). Outputs are not the decode's. */
int fp8s_diag_option()
{
	const char *c = getenv("K3_MLA_FP8S_DIAG");
	return c && !strcmp(c, "mem") ? 1 : c && !strcmp(c, "compute") ? 2 : 0;
}

/* mla_fp8s_kernel's split sizes without a cluster (read at every call): K3_MLA_FP8S_SKEW=N (1..500)
 * the splits placed first on the SMs take (1000 + N) / 1000 times the tiles of the others
 * (fp8s_skew_range()); unset or 0: equal splits. */
int fp8s_skew_option()
{
	const char *c = getenv("K3_MLA_FP8S_SKEW");
	const int n = c ? atoi(c) : 0;
	return n >= 1 && n <= 500 ? n : 0;
}

/* The combine kernel after mla_fp8s_kernel (read at every call): a programmatic dependent launch,
 * its CTAs let in once every split CTA has passed its tile loop (2, default since 2026-12-02p:
 * 2026-12-02p, B 1 / 16 / 32 / 64 at 8K-32K 0.3-3 us faster in the same process, e.g. B 1 8K
 * 24.5 against 26.1 us, B 64 H 16 8K 71.1 % against 70.5) or its entry (K3_MLA_FP8S_PDL=entry, 1:
 * slower at B 1, 32K-64K, where the waiting combine CTAs share the SMs), waiting for the split
 * grid's completion at their start; K3_MLA_FP8S_PDL=off: a plain launch (0). */
int fp8s_pdl_option()
{
	const char *c = getenv("K3_MLA_FP8S_PDL");
	if (c && !strcmp(c, "entry"))
		return 1;
	return c && !strcmp(c, "off") ? 0 : 2;
}

/* Clusters of `size` CTAs of mla_fp8s_kernel that fit the device at once (cached; 0: none). */
int fp8s_max_clusters(int size)
{
	static int cached[fp8r::MAX_CLUSTER + 1] = { 0 };
	if (size < 2 || size > fp8r::MAX_CLUSTER)
		return 0;
	if (cached[size] == 0) {
		auto kern = mla_fp8s_kernel<false, false, false>;
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute attr[1];
		attr[0].id = cudaLaunchAttributeClusterDimension;
		attr[0].val.clusterDim.x = 1, attr[0].val.clusterDim.y = (unsigned)size;
		attr[0].val.clusterDim.z = 1;
		cfg.gridDim = dim3(1, (unsigned)size, 1), cfg.blockDim = dim3(fp8r::THREADS_S);
		cfg.dynamicSmemBytes = fp8r::SMEM_S, cfg.attrs = attr, cfg.numAttrs = 1;
		int n = 0;
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, fp8r::SMEM_S) !=
			    cudaSuccess ||
		    cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n < 1) {
			(void)cudaGetLastError(); /* not sticky: clear it, run without clusters */
			n = -1;
		}
		cached[size] = n;
	}
	return cached[size] > 0 ? cached[size] : 0;
}

int device_sms(int *sms)
{
	static int cached = 0;
	if (!cached) {
		int dev = 0, n = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1)
			return -EIO;
		cached = n;
	}
	*sms = cached;
	return 0;
}

bool aligned16(const void *ptr)
{
	return ((uintptr_t)ptr & 15u) == 0;
}

/* Shapes (not pointers) valid? */
bool shapes_ok(const struct mla_decode_args *a)
{
	if (!a || a->batch < 1 || a->batch > 65535 || a->heads < 1 || a->heads > MLA_MAX_HEADS || a->qtokens < 1 ||
	    a->qtokens > MLA_MAX_QTOKENS || (int64_t)a->qtokens * a->heads > (1 << 23) ||
	    (a->kv != MLA_KV_BF16 && a->kv != MLA_KV_FP8) ||
	    a->max_seqlen < a->qtokens || a->max_pages < 1 ||
	    (int64_t)a->max_pages * MLA_PAGE_TOKENS < (int64_t)a->max_seqlen || !(a->scale > 0.0f))
		return false;
	if (a->indices && (a->qtokens != 1 || a->topk < 1))
		return false;
	return true;
}

int make_plan(const struct mla_decode_args *a, plan *pl)
{
	if (!shapes_ok(a))
		return -EINVAL;
	int sms;
	if (device_sms(&sms))
		return -EIO;
	const int rows = a->qtokens * a->heads;
	pl->fp8r = fp8r_variant(a->kv, rows);
	pl->rg = pl->fp8r || rows <= 16 ? 1 : 4;
	const int rows_per_cta = 16 * pl->rg;
	pl->n_rb = (rows + rows_per_cta - 1) / rows_per_cta;
	const int64_t entries = a->indices ? a->topk : a->max_seqlen;
	const int64_t max_tiles = (entries + TILE - 1) / TILE;
	const int64_t base = (int64_t)a->batch * pl->n_rb;
	const int per_sm = pl->fp8r ? fp8r::CTAS_PER_SM : pl->rg == 1 ? 2 : 1;
	const int64_t target = (int64_t)sms * per_sm;
	/* About one wave; mla_fp8s_kernel: at most one (17 splits of 16 requests, 272 CTAs on 264
	 * places, ran a second wave of 8 CTAs: 2026-12-02a fp8 H 16 B 16 32K 175 us, B 64 418). */
	const bool fp8s_new = pl->fp8r >= 16 && fp8s_cluster_option();
	int64_t splits = fp8s_new ? target * fp8s_waves_option() / base : (target + base / 2) / base;
	if (fp8s_new && fp8s_cluster_option() == 3 && !a->indices && splits > fp8r::MAX_CLUSTER &&
	    target / base <= fp8r::MAX_CLUSTER)
		splits = fp8r::MAX_CLUSTER; /* more waves than the last-split merge takes: as many as it takes */
	if (fp8s_new) { /* K3_MLA_FP8S_SPLITS=1..64: that many splits (measurements; read at every call) */
		const char *fs = getenv("K3_MLA_FP8S_SPLITS");
		const int n = fs ? atoi(fs) : 0;
		if (n >= 1 && n <= 64)
			splits = n;
	}
	const int64_t most = (max_tiles + MIN_TILES_PER_SPLIT - 1) / MIN_TILES_PER_SPLIT;
	auto fit = [&](int64_t n) { /* at least MIN_TILES_PER_SPLIT tiles a split, none empty by the plan */
		n = n > most ? most : n < 1 ? 1 : n;
		const int64_t t = (max_tiles + n - 1) / n;
		return (max_tiles + t - 1) / t;
	};
	splits = fit(splits);
	bool last = fp8s_cluster_option() == 3;
	/* The default plan where whole splits fill less than 80 % of one wave (B 89-105 and 67-70 at
	 * 16 rows on an H200: B 96, 2 splits, 192 CTAs on 264 places, 59 % of copy at 8K-64K): the
	 * last-split merge with the splits of two waves (B 96: 5), whose CTAs the hardware schedules
	 * as places free up (2026-12-02j call 2, H 12 / 16: 8K 64.6-66.5 % against 59.1-59.7, 32K
	 * 73.0-75.8 against 58.0-60.9, 64K 74.2-77.7 against 60.4). Not where the tiles limit the
	 * splits, nor with any of K3_MLA_FP8S_COMBINE / _WAVES / _SPLITS set. */
	if (fp8s_new && !a->indices && splits >= 2 && base * splits * 5 < target * 4 &&
	    !getenv("K3_MLA_FP8S_COMBINE") && !getenv("K3_MLA_FP8S_WAVES") && !getenv("K3_MLA_FP8S_SPLITS")) {
		const int64_t two = fit(2 * target / base < fp8r::MAX_CLUSTER ? 2 * target / base : fp8r::MAX_CLUSTER);
		if (two > splits)
			splits = two, last = true;
	}
	const int64_t tps = (max_tiles + splits - 1) / splits;
	pl->splits = (int)splits;
	pl->tiles_per_split = (int)tps;
	const bool merge_ok = fp8s_new && !a->indices && splits >= 2 && splits <= fp8r::MAX_CLUSTER;
	pl->last = merge_ok && last;
	pl->cluster = merge_ok && !pl->last &&
		      (base <= fp8s_max_clusters((int)splits) || fp8s_cluster_option() == 2);
	pl->skew = pl->fp8r >= 16 && !pl->cluster && splits >= 2 ? fp8s_skew_option() : 0;
	pl->sms = sms;
	return 0;
}

/* Workspace: the split partials ([B][splits][rows][512] O, then [B][splits][rows] LSE) and, for
 * the last-split merge, a counter per row block ([B][row blocks] int32). */
size_t workspace_for(const struct mla_decode_args *a, const plan &pl)
{
	if (pl.splits == 1 || pl.cluster)
		return 0;
	const size_t rows = (size_t)a->batch * pl.splits * a->qtokens * a->heads;
	const size_t counters = pl.last ? (size_t)a->batch * pl.n_rb * sizeof(int32_t) : 0;
	return rows * DV * sizeof(float) + rows * sizeof(float) + counters;
}

template <int RG, bool FP8>
int launch_split(const params &p, dim3 grid, cudaStream_t stream)
{
	using C = cfg<RG, FP8>;
	auto kern = mla_split_kernel<RG, FP8>;
	static bool configured = false;
	if (!configured) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM) != cudaSuccess)
			return k3_launch_status();
		configured = true;
	}
	kern<<<grid, C::THREADS, C::SMEM, stream>>>(p);
	return k3_launch_status();
}

template <bool KINT, bool VINT>
int launch_fp8r(const params &p, dim3 grid, cudaStream_t stream)
{
	auto kern = mla_fp8r_kernel<KINT, VINT>;
	static bool configured = false;
	if (!configured) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, fp8r::SMEM) != cudaSuccess)
			return k3_launch_status();
		configured = true;
	}
	kern<<<grid, fp8r::THREADS, fp8r::SMEM, stream>>>(p);
	return k3_launch_status();
}

template <bool KINT, bool VINT>
int launch_fp8s(const params &p, dim3 grid, cudaStream_t stream)
{
	const bool early = fp8s_early_option();
	/* The steady-frame form (FRAME) for the cvt conversions and the early order only. */
	const bool frame = !KINT && !VINT && early && fp8s_frame_option();
	auto kern = mla_fp8s_kernel<KINT, VINT, false, true>;
	const int diag = fp8s_diag_option();
	if (diag && !KINT && !VINT && early && !frame && !p.indices)
		kern = diag == 1 ? mla_fp8s_kernel<false, false, false, true, false, 1>
				 : mla_fp8s_kernel<false, false, false, true, false, 2>;
	else if (frame)
		kern = p.indices ? mla_fp8s_kernel<KINT, VINT, true, true, !KINT && !VINT>
				 : mla_fp8s_kernel<KINT, VINT, false, true, !KINT && !VINT>;
	else if (p.indices)
		kern = early ? mla_fp8s_kernel<KINT, VINT, true, true>
			     : mla_fp8s_kernel<KINT, VINT, true, false>;
	else if (!early)
		kern = mla_fp8s_kernel<KINT, VINT, false, false>;
	static bool configured[8] = { false, false, false, false, false, false, false, false };
	bool &cf = configured[diag && !KINT && !VINT && early && !frame && !p.indices
				      ? 5 + diag
				      : (p.indices ? 1 : 0) + (frame ? 4 : early ? 2 : 0)];
	if (!cf) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, fp8r::SMEM_S) != cudaSuccess)
			return k3_launch_status();
		cf = true;
	}
	const unsigned threads = early ? fp8r::THREADS_S : fp8r::THREADS;
	if (!p.cluster && !p.pdl_in) {
		kern<<<grid, threads, fp8r::SMEM_S, stream>>>(p);
		return k3_launch_status();
	}
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[2];
	unsigned n = 0;
	if (p.cluster) {
		attr[n].id = cudaLaunchAttributeClusterDimension;
		attr[n].val.clusterDim.x = 1, attr[n].val.clusterDim.y = (unsigned)p.n_splits;
		attr[n++].val.clusterDim.z = 1;
	}
	if (p.pdl_in) { /* mla_decode_args::overlap_prev */
		attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
		attr[n++].val.programmaticStreamSerializationAllowed = 1;
	}
	cfg.gridDim = grid, cfg.blockDim = dim3(threads), cfg.dynamicSmemBytes = fp8r::SMEM_S;
	cfg.stream = stream, cfg.attrs = attr, cfg.numAttrs = n;
	(void)cudaLaunchKernelEx(&cfg, kern, p);
	return k3_launch_status();
}

template <bool KINT, bool VINT>
int launch_fp8p(const params &p, dim3 grid, cudaStream_t stream)
{
	auto kern = p.indices ? mla_fp8p_kernel<KINT, VINT, true> : mla_fp8p_kernel<KINT, VINT, false>;
	static bool configured[2] = { false, false };
	bool &cf = configured[p.indices ? 1 : 0];
	if (!cf) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, fp8r::SMEM_P) != cudaSuccess)
			return k3_launch_status();
		cf = true;
	}
	kern<<<grid, fp8r::THREADS, fp8r::SMEM_P, stream>>>(p);
	return k3_launch_status();
}

} // namespace

extern "C" int mla_decode_workspace_bytes(const struct mla_decode_args *a, size_t *bytes)
{
	plan pl;
	const int rc = make_plan(a, &pl);
	if (rc)
		return rc;
	*bytes = workspace_for(a, pl);
	return 0;
}

extern "C" int mla_decode_splits(const struct mla_decode_args *a)
{
	plan pl;
	const int rc = make_plan(a, &pl);
	return rc ? rc : pl.splits;
}

extern "C" int mla_decode_cluster(const struct mla_decode_args *a)
{
	plan pl;
	const int rc = make_plan(a, &pl);
	return rc ? rc : pl.cluster ? pl.splits : 0;
}

extern "C" int mla_decode_last(const struct mla_decode_args *a)
{
	plan pl;
	const int rc = make_plan(a, &pl);
	return rc ? rc : pl.last ? pl.splits : 0;
}

extern "C" void mla_decode_set_trace(void *buf)
{
	g_trace = static_cast<unsigned long long *>(buf);
}

extern "C" int mla_decode_max_clusters(int size)
{
	return fp8s_max_clusters(size);
}

extern "C" int mla_decode(const struct mla_decode_args *a, cudaStream_t stream)
{
	plan pl;
	const int rc = make_plan(a, &pl);
	if (rc)
		return rc;
	if (!a->q || !a->cache || !a->block_table || !a->seqlens || !a->out || !aligned16(a->q) ||
	    !aligned16(a->cache) || !aligned16(a->out))
		return -EINVAL;
	const size_t ws = workspace_for(a, pl);
	if (ws > 0 && (!a->workspace || a->workspace_bytes < ws || !aligned16(a->workspace)))
		return -EINVAL;
	params p = {};
	p.H = a->heads;
	p.t = a->qtokens;
	p.rows = a->qtokens * a->heads;
	p.n_splits = pl.splits;
	p.tiles_per_split = pl.tiles_per_split;
	p.max_pages = a->max_pages;
	p.topk = a->indices ? a->topk : 0;
	p.max_seqlen = a->max_seqlen;
	p.scale_log2 = a->scale * LOG2E;
	fp8s_options(&p.fp8s_whole, &p.fp8s_tau, &p.fp8s_band, &p.fp8s_prime);
	p.cluster = pl.cluster;
	p.last = pl.last;
	p.trace = pl.fp8r >= 16 ? g_trace : nullptr;
	/* The split kernel before the combine kernel: K3_MLA_FP8S_PDL (fp8s_pdl_option()). */
	p.skew = pl.skew;
	p.skew_fast = pl.sms;
	p.fp8s_pdl = pl.fp8r >= 16 && pl.splits > 1 && !pl.cluster && !pl.last ? fp8s_pdl_option() : 0;
	/* Not after the last-split merge's counter memset (no kernel before the split kernel then). */
	p.pdl_in = a->overlap_prev && pl.fp8r >= 16 && fp8s_early_option() && !(pl.last && fp8s_last_memset());
	p.q = a->q;
	p.cache = static_cast<const unsigned char *>(a->cache);
	p.block_table = a->block_table;
	p.seqlens = a->seqlens;
	p.indices = a->indices;
	p.out = a->out;
	p.lse = a->lse;
	if (pl.splits > 1 && !pl.cluster) {
		const size_t rows = (size_t)a->batch * pl.splits * p.rows;
		p.o_part = static_cast<float *>(a->workspace);
		p.l_part = p.o_part + rows * DV;
		if (pl.last) {
			p.counter = reinterpret_cast<int *>(p.l_part + rows);
			if (fp8s_last_memset() &&
			    cudaMemsetAsync(p.counter, 0, (size_t)a->batch * pl.n_rb * sizeof(int32_t), stream) !=
				    cudaSuccess)
				return -EIO;
		}
	}
	const dim3 grid = pl.skew ? dim3((unsigned)pl.n_rb, (unsigned)a->batch, (unsigned)pl.splits)
				  : dim3((unsigned)pl.n_rb, (unsigned)pl.splits, (unsigned)a->batch);
	int r;
	if (pl.fp8r >= 16) {
		switch (pl.fp8r & 3) {
		case 0: r = launch_fp8s<false, false>(p, grid, stream); break;
		case 1: r = launch_fp8s<true, false>(p, grid, stream); break;
		case 2: r = launch_fp8s<false, true>(p, grid, stream); break;
		default: r = launch_fp8s<true, true>(p, grid, stream); break;
		}
	} else if (pl.fp8r >= 12) {
		switch (pl.fp8r & 3) {
		case 0: r = launch_fp8p<false, false>(p, grid, stream); break;
		case 1: r = launch_fp8p<true, false>(p, grid, stream); break;
		case 2: r = launch_fp8p<false, true>(p, grid, stream); break;
		default: r = launch_fp8p<true, true>(p, grid, stream); break;
		}
	} else if (pl.fp8r) {
		switch (pl.fp8r & 3) {
		case 0: r = launch_fp8r<false, false>(p, grid, stream); break;
		case 1: r = launch_fp8r<true, false>(p, grid, stream); break;
		case 2: r = launch_fp8r<false, true>(p, grid, stream); break;
		default: r = launch_fp8r<true, true>(p, grid, stream); break;
		}
	} else if (a->kv == MLA_KV_FP8)
		r = pl.rg == 1 ? launch_split<1, true>(p, grid, stream) : launch_split<4, true>(p, grid, stream);
	else
		r = pl.rg == 1 ? launch_split<1, false>(p, grid, stream) : launch_split<4, false>(p, grid, stream);
	if (r || pl.splits == 1 || pl.cluster || pl.last)
		return r;
	const int total = a->batch * p.rows;
	const unsigned cblocks = (unsigned)((total + COMBINE_WARPS - 1) / COMBINE_WARPS);
	if (p.fp8s_pdl) {
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute attr[1];
		attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
		attr[0].val.programmaticStreamSerializationAllowed = 1;
		cfg.gridDim = dim3(cblocks), cfg.blockDim = dim3(COMBINE_WARPS * 32), cfg.dynamicSmemBytes = 0;
		cfg.stream = stream, cfg.attrs = attr, cfg.numAttrs = 1;
		(void)cudaLaunchKernelEx(&cfg, mla_combine_kernel, p, total);
		return k3_launch_status();
	}
	mla_combine_kernel<<<cblocks, COMBINE_WARPS * 32, 0, stream>>>(p, total);
	return k3_launch_status();
}
