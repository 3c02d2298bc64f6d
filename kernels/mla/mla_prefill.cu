/* SPDX-License-Identifier: MIT */
/*
 * Materialized MLA prefill: see mla_prefill.h.
 *
 * Attention kernel, one CTA per (block of BM query rows, head, sequence),
 * row blocks in reverse order (the last ones see the most keys and start
 * first, so the short ones fill the tail of the grid):
 *  - the block's Q rows (192 columns: 128 NoPE, 64 rope) go to shared
 *    memory once, then into registers as MMA A fragments (48 a thread);
 *  - key tiles of BN = 64 keys up to the block's last row's causal end,
 *    two stages in flight through cp.async: a K row is the head's 128 NoPE
 *    columns (kv_b output) beside the token's 64 shared rope columns, a V
 *    row the head's 128 value columns; keys past the end are zero-filled;
 *  - warp w owns rows 16 w .. 16 w + 15: S = Q K^T (12 k-steps x 8 n-tiles
 *    of m16n8k16), masked where the tile crosses its rows' diagonal, the
 *    online softmax in the log2 domain (FP32; each thread holds two rows,
 *    maxima shared by the four lanes of a quad), P as BF16 A fragments
 *    straight from the S accumulators, O += P V (V through ldmatrix.trans).
 *    A warp whose rows precede the whole tile skips it;
 *  - epilogue: O / l (times sigmoid(gate)), BF16, and the LSE.
 * Shared memory rows are padded to an odd number of 16-byte chunks (400 and
 * 272 bytes), so the ldmatrix loads are free of bank conflicts.
 *
 * Gather kernel: one thread per 16 bytes of output (8 elements).
 */
#include "mla_prefill.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/k3_device.cuh"
#include "common/k3_wgmma.cuh"

/* Where the target has no wgmma (plain sm_90) qk_wgmma() compiles to a trap and its helpers
 * go unused (warning 177, an error under -Werror all-warnings). */
#pragma nv_diag_suppress 177

namespace {

constexpr int DQK = MLA_QK_HEAD; /* 192 */
constexpr int DN = MLA_QK_NOPE;  /* 128 */
constexpr int DR = MLA_ROPE;     /* 64 */
constexpr int DV = MLA_V_HEAD;   /* 128 */
constexpr int BN = 64; /* keys a tile */
constexpr int SQ = DQK + 8; /* elements a Q / K row in shared memory: 400 bytes */
constexpr int SV = DV + 8;  /* a V row: 272 bytes */
constexpr int GATHER_THREADS = 256;

/* BM query rows a CTA, 16 a warp. 128: 8 warps, one CTA an SM; 64: 4 warps, two CTAs an SM
 * (232 registers a thread either way). WG: QK^T on wgmma (sm_90a), a warpgroup's 64 rows
 * against the K tile, which then lies in three 128-byte-swizzled [64 keys][64 dims] tiles
 * (the layout of k3_wgmma_desc_sw128(); 1024-byte aligned, hence the slack); PV stays on
 * mma.sync. */
template <int BM, bool WG>
struct cfg {
	static constexpr int WARPS = BM / 16;
	static constexpr int THREADS = 32 * WARPS;
	static constexpr int CTAS_PER_SM = BM == 64 ? 2 : 1;
	static constexpr int K_STAGE = WG ? BN * DQK * 2 : BN * SQ * 2; /* bytes */
	static constexpr int OFF_K = 0;                                 /* first: the alignment */
	static constexpr int OFF_Q = OFF_K + 2 * K_STAGE;
	static constexpr int OFF_V = OFF_Q + BM * SQ * 2;
	static constexpr int SMEM = OFF_V + 2 * BN * SV * 2 + (WG ? 1024 : 0);
	static_assert(!WG || BM % 64 == 0, "whole warpgroups");
	static_assert(SMEM <= 227 * 1024 && CTAS_PER_SM * (SMEM + 1024) <= 228 * 1024, "shared memory");
};
constexpr int CHUNKS = MLA_DIM / 8; /* 16-byte output chunks a gathered token */
constexpr float LOG2E = 1.4426950408889634f;
constexpr float LN2 = 0.6931471805599453f;
static_assert(DQK % 16 == 0 && DV % 16 == 0 && BN % 16 == 0, "MMA tiling");
static_assert((SQ * 2 / 16) % 2 == 1 && (SV * 2 / 16) % 2 == 1, "odd 16-byte chunks per row");

struct params {
	int H, T, P, N;
	float scale_log2;
	const uint16_t *q, *kn, *v, *kr, *gate;
	int64_t ld, hs;
	uint16_t *out;
	float *lse;
};

/* Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs. */
template <int N>
__device__ __forceinline__ void pin(float (&d)[64])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		asm volatile("" : "+f"(d[i])::"memory");
}

/* S (16 rows of this warp x 64 keys, mma accumulator layout) = Q K^T on wgmma: this warp's
 * part of its warpgroup's 64 x 64 product; kt: the shared-memory address of the K stage. */
__device__ __forceinline__ void qk_wgmma(float (&s)[BN / 8][4], const uint32_t (&qf)[DQK / 16][4], uint32_t kt)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	float d[64];
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		d[i] = 0.0f;
	pin<BN / 2>(d);
	k3_wgmma_fence();
#pragma unroll
	for (int kk = 0; kk < DQK / 16; kk++)
		k3_wgmma_rs<BN>(d, qf[kk], k3_wgmma_desc_sw128(kt + (kk >> 2) * (BN * 128) + (kk & 3) * 32));
	k3_wgmma_commit();
	k3_wgmma_wait<0>();
	pin<BN / 2>(d);
#pragma unroll
	for (int n = 0; n < BN / 8; n++)
#pragma unroll
		for (int e = 0; e < 4; e++)
			s[n][e] = d[4 * n + e];
#else
	(void)s, (void)qf, (void)kt;
	__trap(); /* not launched: wgmma_available() is false without an sm_90a build */
#endif
}

template <int BM, bool WG>
__global__ void __launch_bounds__(cfg<BM, WG>::THREADS, cfg<BM, WG>::CTAS_PER_SM) prefill_kernel(const params p)
{
	using C = cfg<BM, WG>;
	constexpr int THREADS = C::THREADS;
	extern __shared__ __align__(128) unsigned char smem_raw[];
	unsigned char *smem = WG ? smem_raw + ((1024u - (k3_smem_u32(smem_raw) & 1023u)) & 1023u) : smem_raw;
	uint16_t *qs = reinterpret_cast<uint16_t *>(smem + C::OFF_Q);
	uint16_t *ks = reinterpret_cast<uint16_t *>(smem + C::OFF_K);
	uint16_t *vs = reinterpret_cast<uint16_t *>(smem + C::OFF_V);
	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int g = lane >> 2, t4 = lane & 3;
	const int mb = (int)gridDim.x - 1 - (int)blockIdx.x, h = (int)blockIdx.y, b = (int)blockIdx.z;
	const int m0 = mb * BM;
	const int rows = min(BM, p.T - m0);
	const int n_keys = p.P + m0 + rows; /* keys the block's last row sees */
	const int n_tiles = (n_keys + BN - 1) / BN;
	const size_t key0 = (size_t)b * p.N;

	for (int c = tid; c < BM * (DQK / 8); c += THREADS) {
		const int r = c / (DQK / 8), e = (c % (DQK / 8)) * 8;
		const bool ok = r < rows;
		const uint16_t *src = p.q + (((size_t)b * p.T + m0 + (ok ? r : 0)) * p.H + h) * DQK + e;
		k3_cp_async16_zfill(qs + r * SQ + e, src, ok);
	}
	auto load_kv = [&](int it) {
		const int j0 = it * BN;
		uint16_t *kd = ks + (it & 1) * (C::K_STAGE / 2), *vd = vs + (it & 1) * BN * SV;
		for (int c = tid; c < BN * (DQK / 8); c += THREADS) {
			const int r = c / (DQK / 8), e = (c % (DQK / 8)) * 8;
			const bool ok = j0 + r < n_keys;
			const size_t j = key0 + (ok ? j0 + r : 0);
			const uint16_t *src = e < DN ? p.kn + j * p.ld + h * p.hs + e : p.kr + j * DR + (e - DN);
			/* WG: chunk c8 of row r of the 64-column tile e / 64 at chunk c8 ^ (r % 8) */
			const int dst = WG ? (e >> 6) * (BN * 64) + r * 64 + ((((e & 63) >> 3) ^ (r & 7)) << 3) : r * SQ + e;
			k3_cp_async16_zfill(kd + dst, src, ok);
		}
		for (int c = tid; c < BN * (DV / 8); c += THREADS) {
			const int r = c / (DV / 8), e = (c % (DV / 8)) * 8;
			const bool ok = j0 + r < n_keys;
			const size_t j = key0 + (ok ? j0 + r : 0);
			k3_cp_async16_zfill(vd + r * SV + e, p.v + j * p.ld + h * p.hs + e, ok);
		}
	};
	load_kv(0);
	k3_cp_async_commit();
	k3_cp_async_wait<0>();
	__syncthreads();

	/* Q fragments: matrix l / 8 of the x4 is (rows +8 if odd, columns +8 if >= 2). */
	uint32_t qf[DQK / 16][4];
	{
		const uint16_t *qa = qs + (warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * SQ + (lane >> 4) * 8;
#pragma unroll
		for (int kk = 0; kk < DQK / 16; kk++)
			k3_ldsm_x4(qf[kk], qa + kk * 16);
	}
	float o[DV / 8][4];
#pragma unroll
	for (int n = 0; n < DV / 8; n++)
		o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
	float mrow[2] = { -INFINITY, -INFINITY }, lrow[2] = { 0.0f, 0.0f };
	const int wr0 = m0 + warp * 16; /* the warp's first query row */
	/* WG: the warpgroup computes together: live while its first row is, and a tile is
	 * skipped only when all its 64 rows precede it. */
	const int gr0 = WG ? m0 + (warp >> 2) * 64 : wr0, grows = WG ? 64 : 16;
	const bool live = gr0 < p.T;
	/* K as the B operand: matrix l / 8 is (keys +8 if >= 2, columns +8 if odd). */
	const int k_off = ((lane & 7) + (lane >> 4) * 8) * SQ + ((lane >> 3) & 1) * 8;
	/* V through ldmatrix.trans: matrix l / 8 is (keys +8 if odd, value columns +8 if >= 2). */
	const int v_off = ((lane & 7) + ((lane >> 3) & 1) * 8) * SV + (lane >> 4) * 8;

	for (int it = 0; it < n_tiles; it++) {
		if (it + 1 < n_tiles)
			load_kv(it + 1);
		k3_cp_async_commit();
		k3_cp_async_wait<1>();
		__syncthreads();
		const int j0 = it * BN;
		if (live && j0 <= p.P + gr0 + grows - 1) {
			const uint16_t *vt = vs + (it & 1) * BN * SV + v_off;
			float s[BN / 8][4];
			if (WG) {
				k3_fence_proxy_async(); /* the cp.async writes, before wgmma reads them */
				qk_wgmma(s, qf, k3_smem_u32(ks + (it & 1) * (C::K_STAGE / 2)));
			} else {
				const uint16_t *kt = ks + (it & 1) * (C::K_STAGE / 2) + k_off;
#pragma unroll
				for (int n = 0; n < BN / 8; n++)
					s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
				for (int kk = 0; kk < DQK / 16; kk++)
#pragma unroll
					for (int np = 0; np < BN / 16; np++) {
						uint32_t bb[4];
						k3_ldsm_x4(bb, kt + np * 16 * SQ + kk * 16);
						k3_mma_bf16(s[2 * np], qf[kk], bb[0], bb[1]);
						k3_mma_bf16(s[2 * np + 1], qf[kk], bb[2], bb[3]);
					}
			}
			const bool mask = j0 + BN - 1 > p.P + wr0;
#pragma unroll
			for (int n = 0; n < BN / 8; n++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					const int key = j0 + n * 8 + 2 * t4 + (e & 1), row = wr0 + g + (e >> 1) * 8;
					if (mask && key > p.P + row)
						s[n][e] = -INFINITY;
				}
#pragma unroll
			for (int r = 0; r < 2; r++) {
				float mx = -INFINITY;
#pragma unroll
				for (int n = 0; n < BN / 8; n++)
					mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
				mx = k3_group_max<4>(mx) * p.scale_log2; /* scale > 0 */
				/* Finite: key 0 is visible to every row, and tiles come in order. */
				const float m_new = fmaxf(mrow[r], mx);
				const float alpha = exp2f(mrow[r] - m_new);
				mrow[r] = m_new;
				float sum = 0.0f;
#pragma unroll
				for (int n = 0; n < BN / 8; n++) {
					s[n][2 * r] = exp2f(fmaf(s[n][2 * r], p.scale_log2, -m_new));
					s[n][2 * r + 1] = exp2f(fmaf(s[n][2 * r + 1], p.scale_log2, -m_new));
					sum += s[n][2 * r] + s[n][2 * r + 1];
				}
				lrow[r] = lrow[r] * alpha + sum;
#pragma unroll
				for (int n = 0; n < DV / 8; n++) {
					o[n][2 * r] *= alpha;
					o[n][2 * r + 1] *= alpha;
				}
			}
#pragma unroll
			for (int kk = 0; kk < BN / 16; kk++) {
				uint32_t pa[4];
				pa[0] = k3_pack_bf16(s[2 * kk][0], s[2 * kk][1]);
				pa[1] = k3_pack_bf16(s[2 * kk][2], s[2 * kk][3]);
				pa[2] = k3_pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
				pa[3] = k3_pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
				for (int np = 0; np < DV / 16; np++) {
					uint32_t bb[4];
					k3_ldsm_x4_t(bb, vt + kk * 16 * SV + np * 16);
					k3_mma_bf16(o[2 * np], pa, bb[0], bb[1]);
					k3_mma_bf16(o[2 * np + 1], pa, bb[2], bb[3]);
				}
			}
		}
		__syncthreads(); /* the next iteration's copy overwrites this stage */
	}
	if (!live)
		return;
#pragma unroll
	for (int r = 0; r < 2; r++) {
		const float l = k3_group_sum<4>(lrow[r]);
		const int row = wr0 + g + 8 * r;
		if (row >= p.T)
			continue;
		const float inv = 1.0f / l;
		const size_t orow = (((size_t)b * p.T + row) * p.H + h) * DV;
#pragma unroll
		for (int n = 0; n < DV / 8; n++) {
			const int col = n * 8 + 2 * t4;
			float v0 = o[n][2 * r] * inv, v1 = o[n][2 * r + 1] * inv;
			if (p.gate) {
				const uint32_t gg = *reinterpret_cast<const uint32_t *>(p.gate + orow + col);
				v0 *= k3_sigmoid(k3_lo_bf16(gg));
				v1 *= k3_sigmoid(k3_hi_bf16(gg));
			}
			*reinterpret_cast<uint32_t *>(p.out + orow + col) = k3_pack_bf16(v0, v1);
		}
		if (p.lse && t4 == 0)
			p.lse[((size_t)b * p.T + row) * p.H + h] = (mrow[r] + log2f(l)) * LN2;
	}
}

struct gparams {
	int N, max_pages;
	int64_t total; /* B N CHUNKS */
	bool fp8;
	const unsigned char *cache;
	const int32_t *table;
	uint16_t *latent, *k_rope;
};

__global__ void __launch_bounds__(GATHER_THREADS) gather_kernel(const gparams p)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < p.total;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t tok = i / CHUNKS;
		const int c = (int)(i % CHUNKS);
		const int b = (int)(tok / p.N), j = (int)(tok % p.N);
		const int32_t page = p.table[(size_t)b * p.max_pages + j / MLA_PAGE_TOKENS];
		const size_t row = (size_t)page * MLA_PAGE_TOKENS + j % MLA_PAGE_TOKENS;
		uint4 v;
		if (!p.fp8) {
			v = *reinterpret_cast<const uint4 *>(p.cache + row * MLA_BF16_TOKEN_BYTES + c * 16);
		} else if (c >= MLA_LATENT / 8) {
			v = *reinterpret_cast<const uint4 *>(p.cache + row * MLA_FP8_TOKEN_BYTES + MLA_FP8_ROPE_OFFSET +
							     (c - MLA_LATENT / 8) * 16);
		} else {
			const unsigned char *t = p.cache + row * MLA_FP8_TOKEN_BYTES;
			const uint2 e = *reinterpret_cast<const uint2 *>(t + c * 8);
			const float sc = *reinterpret_cast<const float *>(t + MLA_FP8_SCALE_OFFSET + 4 * (c * 8 / MLA_FP8_TILE));
			uint32_t w[4];
			const uint32_t x[2] = { e.x, e.y };
#pragma unroll
			for (int k = 0; k < 4; k++) {
				const float2 f = k3_e4m3x2_to_float2((uint16_t)(x[k / 2] >> (16 * (k % 2))));
				w[k] = k3_pack_bf16(f.x * sc, f.y * sc);
			}
			v = make_uint4(w[0], w[1], w[2], w[3]);
		}
		if (c < MLA_LATENT / 8)
			*reinterpret_cast<uint4 *>(p.latent + tok * MLA_LATENT + c * 8) = v;
		else
			*reinterpret_cast<uint4 *>(p.k_rope + tok * MLA_ROPE + (c - MLA_LATENT / 8) * 8) = v;
	}
}

bool aligned16(const void *ptr)
{
	return ((uintptr_t)ptr & 15u) == 0;
}

template <int BM, bool WG>
int launch(const params &p, const struct mla_prefill_args *a, cudaStream_t stream)
{
	using C = cfg<BM, WG>;
	if (cudaFuncSetAttribute(prefill_kernel<BM, WG>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM) !=
	    cudaSuccess)
		return -EIO;
	const dim3 grid((unsigned)((a->tokens + BM - 1) / BM), (unsigned)a->heads, (unsigned)a->batch);
	prefill_kernel<BM, WG><<<grid, C::THREADS, C::SMEM, stream>>>(p);
	return cudaGetLastError() == cudaSuccess ? 0 : -EIO;
}

/* The wgmma kernel runs on compute capability 9.0 in sm_90a builds only. */
bool wgmma_available()
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
	return cc == 90;
#else
	return false;
#endif
}

} // namespace

extern "C" int mla_prefill_block_rows(void)
{
	const char *e = getenv("K3_MLA_PREFILL_BM");
	return e && !strcmp(e, "64") ? 64 : e && !strcmp(e, "128") ? 128 : MLA_PREFILL_DEFAULT_BM;
}

extern "C" bool mla_prefill_kernel_wgmma(void)
{
	const char *e = getenv("K3_MLA_PREFILL_KERNEL");
	const bool want = e && !strcmp(e, "wgmma") ? true : e && !strcmp(e, "mma") ? false : MLA_PREFILL_DEFAULT_WGMMA;
	return want && wgmma_available();
}

extern "C" double mla_prefill_flops(int batch, int heads, int tokens, int prefix)
{
	const double pairs = (double)tokens * ((double)prefix + ((double)tokens + 1.0) / 2.0);
	return 2.0 * batch * heads * pairs * (DQK + DV);
}

extern "C" int mla_prefill(const struct mla_prefill_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->heads < 1 || a->heads > MLA_MAX_HEADS || a->tokens < 1 || a->prefix < 0 ||
	    (int64_t)a->tokens + a->prefix > MLA_PREFILL_MAX_TOKENS || !(a->scale > 0.0f) ||
	    a->batch > 65535 || a->ld_kv < 8 || a->ld_kv % 8 || a->head_stride < 0 || a->head_stride % 8)
		return -EINVAL;
	if (!a->q || !a->k_nope || !a->v || !a->k_rope || !a->out || !aligned16(a->q) || !aligned16(a->k_nope) ||
	    !aligned16(a->v) || !aligned16(a->k_rope) || !aligned16(a->out) || (a->gate && !aligned16(a->gate)) ||
	    ((uintptr_t)a->lse & 3u))
		return -EINVAL;
	params p;
	p.H = a->heads, p.T = a->tokens, p.P = a->prefix, p.N = a->tokens + a->prefix;
	p.scale_log2 = a->scale * LOG2E;
	p.q = a->q, p.kn = a->k_nope, p.v = a->v, p.kr = a->k_rope, p.gate = a->gate;
	p.ld = a->ld_kv, p.hs = a->head_stride, p.out = a->out, p.lse = a->lse;
	const bool wg = mla_prefill_kernel_wgmma();
	if (mla_prefill_block_rows() == 64)
		return wg ? launch<64, true>(p, a, stream) : launch<64, false>(p, a, stream);
	return wg ? launch<128, true>(p, a, stream) : launch<128, false>(p, a, stream);
}

extern "C" int mla_prefill_gather(const struct mla_gather_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->tokens < 1 || a->tokens > MLA_PREFILL_MAX_TOKENS ||
	    (a->kv != MLA_KV_BF16 && a->kv != MLA_KV_FP8) || a->max_pages < (a->tokens + MLA_PAGE_TOKENS - 1) / MLA_PAGE_TOKENS ||
	    !a->cache || !a->block_table || !a->latent || !a->k_rope || !aligned16(a->cache) || !aligned16(a->latent) ||
	    !aligned16(a->k_rope) || ((uintptr_t)a->block_table & 3u))
		return -EINVAL;
	gparams p;
	p.N = a->tokens, p.max_pages = a->max_pages, p.total = (int64_t)a->batch * a->tokens * CHUNKS;
	p.fp8 = a->kv == MLA_KV_FP8, p.cache = (const unsigned char *)a->cache, p.table = a->block_table;
	p.latent = a->latent, p.k_rope = a->k_rope;
	const int64_t blocks = (p.total + GATHER_THREADS - 1) / GATHER_THREADS;
	gather_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), GATHER_THREADS, 0, stream>>>(p);
	return cudaGetLastError() == cudaSuccess ? 0 : -EIO;
}
