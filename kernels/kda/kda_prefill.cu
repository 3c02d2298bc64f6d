/* SPDX-License-Identifier: MIT */
/*
 * KDA chunked prefill: see kda_prefill.h for the interface and
 * kda_ref_prefill_chunked() for the same math in float64.
 *
 * Per head and chunk of L <= 16 tokens, state M = S^T ([V][K]) at the chunk
 * start, G_t the cumulative log decay inside the chunk, Gamma_t = exp(G_t):
 *   Qt_t = Gamma_t q_t,  Kt_t = Gamma_t k_t,  Kb_t = k_t / Gamma_t,
 *   Kh_t = Gamma_last / Gamma_t k_t,
 *   A[t][s] = beta_t Kt_t . Kb_s (s < t),  T = (I + A)^-1,
 *   P[t][s] = Qt_t . Kb_s (s <= t),
 *   U = T diag(beta) V,  Wk = T diag(beta) Kt,
 * and the recurrence over chunks (rows of M independent):
 *   W^T = U^T - M Wk^T,  O^T = M Qt^T + W^T P^T,  M <- M Diag(Gamma_last) + W^T Kh.
 * The gate bound keeps Gamma_t >= exp(-80) inside a chunk, so Kb (up to
 * e^80) stays in FP32 range; every operand written for the recurrence is
 * bounded by |k|, |q| or |v|.
 */
#include "kda_prefill.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/k3_watchdog.cuh"
#include "kda_device.cuh"
#include "kda_record.cuh"

namespace {

constexpr int OFFSETS_THREADS = 1024;
constexpr int INTRA_THREADS = D;               /* one thread per channel */
constexpr int INTRA_MIN_CTAS = 5;              /* CTAs per SM at least (64 registers and 31 KiB of shared memory give 7) */
constexpr int RECUR_MAX_WARPS = 8;             /* 8 warps x 16 rows = all 128 rows of a head */

/* Chunk offsets: off[i] = sum over j < i of ceil(len_j / 16), and the chunk table; one CTA. */
__global__ void __launch_bounds__(OFFSETS_THREADS) chunk_offsets_kernel(const int32_t *cu, int n,
									int32_t *off, int2 *chunk, int nmax)
{
	__shared__ int32_t part[OFFSETS_THREADS];
	const int tid = threadIdx.x, per = (n + OFFSETS_THREADS - 1) / OFFSETS_THREADS;
	const int lo = min(n, tid * per), hi = min(n, lo + per);
	int32_t sum = 0;
	for (int i = lo; i < hi; i++)
		sum += (cu[i + 1] - cu[i] + CH - 1) / CH;
	part[tid] = sum;
	__syncthreads();
	for (int o = 1; o < OFFSETS_THREADS; o <<= 1) {
		int32_t x = tid >= o ? part[tid - o] : 0;
		__syncthreads();
		part[tid] += x;
		__syncthreads();
	}
	int32_t run = part[tid] - sum; /* exclusive prefix */
	for (int i = lo; i < hi; i++) {
		off[i] = run;
		run += (cu[i + 1] - cu[i] + CH - 1) / CH;
	}
	if (tid == OFFSETS_THREADS - 1)
		off[n] = part[tid];
	/* Chunk table: (first token, tokens) of chunk j, (0, 0) past the last chunk (the grid's
	 * spare chunks). The barrier makes this CTA's writes of off[] visible to all of it. */
	__syncthreads();
	const int total = off[n];
	for (int j = tid; j < nmax; j += OFFSETS_THREADS) {
		int2 c = make_int2(0, 0);
		if (j < total) {
			int l = 0, h = n; /* off[l] <= j < off[h] */
			while (h - l > 1) {
				const int mid = (l + h) >> 1;
				if (off[mid] <= j)
					l = mid;
				else
					h = mid;
			}
			c.x = cu[l] + (j - off[l]) * CH;
			c.y = min(CH, cu[l + 1] - c.x);
		}
		chunk[j] = c;
	}
}

struct intra_params {
	int n_seqs, heads;
	float scale;
	const int32_t *cu, *off;
	const int2 *chunk; /* [chunks] (first token, tokens): v2 */
	int total;         /* tokens (v2, one sequence: no table read) */
	const uint16_t *q, *k, *v, *g_raw, *beta_raw;
	uint8_t *rec;
	int32_t *ready; /* overlapped path: [chunk][head] set to 1 once the record is written; NULL: serial */
	int pf;         /* v2 / v3 with K3_KDA_INTRA_PF: the CTA this many places later in launch order
			   has its inputs prefetched into L2 (intra_prefetch()); 0: none */
};

/* Row stride (elements) of the BF16 MMA operand tiles: 136 = 68 words, so
 * the 8 rows g of a fragment load fall in distinct banks. */
constexpr int TILE_LD = D + 8;

__device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"((uint32_t)__cvta_generic_to_shared(p)));
}

/* hi + lo BF16 pair of two floats: hi = bf16(x), lo = bf16(x - hi). */
__device__ __forceinline__ void split_pair(float x, float y, uint32_t &hi, uint32_t &lo)
{
	hi = pack_bf16(x, y);
	lo = pack_bf16(x - lo_bf16(hi), y - hi_bf16(hi));
}

/* Version 1 (2026-11-29 .. 12-01l; `K3_KDA_INTRA=v1` for A/B): one thread per channel over all
 * 16 tokens, q, k, v and g_raw staged through shared memory, 16-bit shared loads and stores. */
__global__ void __launch_bounds__(INTRA_THREADS, INTRA_MIN_CTAS) kda_chunk_intra_v1_kernel(const intra_params p)
{
	__shared__ __align__(16) uint16_t raw[4][CH][D];        /* q, k, v, g_raw of the chunk */
	__shared__ __align__(16) uint16_t t_qt[CH][TILE_LD];     /* Qt, Kt, Kb as MMA operands */
	__shared__ __align__(16) uint16_t t_kt[CH][TILE_LD];
	__shared__ __align__(16) uint16_t t_kb[CH][TILE_LD];
	__shared__ float s_a[CH][CH + 1], s_t[CH][CH + 1];
	__shared__ float s_rq[CH], s_rk[CH], s_beta[CH];

	/* Overlapped path: chunk-major grid (heads in x), so that chunks are produced in the order the
	 * recurrent kernel, running beside, consumes them. */
	const int j = p.ready ? blockIdx.y : blockIdx.x, h = p.ready ? blockIdx.x : blockIdx.y;
	const int tid = threadIdx.x, H = p.heads;
	const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
	if (j >= p.off[p.n_seqs])
		return;
	int lo = 0, hi = p.n_seqs; /* off[lo] <= j < off[hi] */
	while (hi - lo > 1) {
		int mid = (lo + hi) >> 1;
		if (p.off[mid] <= j)
			lo = mid;
		else
			hi = mid;
	}
	const int seq = lo;
	const int t0 = p.cu[seq] + (j - p.off[seq]) * CH;
	const int L = min(CH, p.cu[seq + 1] - t0);
	uint8_t *rec = p.rec + ((size_t)j * H + h) * REC_BYTES;

	/* Stage the chunk's q, k, v, g_raw (16-byte pieces; rows past L are zero). */
	const uint16_t *src[4] = { p.q, p.k, p.v, p.g_raw };
#pragma unroll
	for (int a = 0; a < 4; a++) {
#pragma unroll
		for (int r = 0; r < CH * D / 8 / INTRA_THREADS; r++) {
			const int idx = tid + r * INTRA_THREADS, row = idx / (D / 8), col = (idx % (D / 8)) * 8;
			uint4 x = make_uint4(0, 0, 0, 0);
			if (row < L)
				x = *reinterpret_cast<const uint4 *>(src[a] + ((size_t)(t0 + row) * H + h) * D + col);
			*reinterpret_cast<uint4 *>(&raw[a][row][col]) = x;
		}
	}
	if (tid < CH)
		s_beta[tid] = tid < L ? sigmoidf_(bf2f(p.beta_raw[(size_t)(t0 + tid) * H + h])) : 0.0f;
	__syncthreads();

	/* L2 norms: warp w takes tokens 4w..4w+3. */
#pragma unroll
	for (int i = 0; i < CH / 4; i++) {
		const int t = warp * (CH / 4) + i;
		float sq = 0.0f, sk = 0.0f;
#pragma unroll
		for (int e = 0; e < D / 32; e++) {
			float x = bf2f(raw[0][t][lane + 32 * e]), y = bf2f(raw[1][t][lane + 32 * e]);
			sq += x * x, sk += y * y;
		}
		sq = group_sum<32>(sq), sk = group_sum<32>(sk);
		if (lane == 0) {
			s_rq[t] = rsqrtf(sq + (float)KDA_L2_EPS) * p.scale;
			s_rk[t] = rsqrtf(sk + (float)KDA_L2_EPS);
		}
	}
	__syncthreads();

	/* Channel c = tid: decays and the scaled operands. */
	const int c = tid;
	float igm[CH], kn[CH]; /* 1 / Gamma_t, k_t */
	float G = 0.0f;
#pragma unroll
	for (int t = 0; t < CH; t++) {
		const float q = bf2f(raw[0][t][c]) * s_rq[t];
		const float k = bf2f(raw[1][t][c]) * s_rk[t];
		if (t < L)
			G += (float)KDA_GATE_LOWER_BOUND * sigmoidf_(bf2f(raw[3][t][c]));
		const float gam = __expf(G), igam = __expf(-G);
		igm[t] = igam, kn[t] = k;
		const uint16_t qt = f2bf(q * gam);
		t_qt[t][c] = qt;
		t_kt[t][c] = f2bf(k * gam);
		t_kb[t][c] = f2bf(k * igam);
	}
	const float gam_last = __expf(G);
	reinterpret_cast<float *>(rec + REC_G)[((c >> 1) & 3) * G_LD + (c >> 3) * 2 + (c & 1)] = gam_last;
	{
		/* Kh = Gamma_last / Gamma_t k_t: a product, not 16 more exponentials (>= e^-80 and
		 * <= e^80 factors, both in FP32 range) */
		uint32_t w[CH / 2];
#pragma unroll
		for (int t = 0; t < CH; t += 2)
			w[t / 2] = pack_bf16(kn[t] * (gam_last * igm[t]), kn[t + 1] * (gam_last * igm[t + 1]));
		uint8_t *row = rec + REC_KH + c * CH * 2;
		*reinterpret_cast<uint4 *>(row + swz_narrow(c, 0) * 16) = make_uint4(w[0], w[1], w[2], w[3]);
		*reinterpret_cast<uint4 *>(row + swz_narrow(c, 1) * 16) = make_uint4(w[4], w[5], w[6], w[7]);
	}
	__syncthreads();

	/* A = Kt Kb^T (warps 0, 1) and P = Qt Kb^T (warps 2, 3), one 16x8 tile each. */
	{
		const uint16_t(*am)[TILE_LD] = warp < 2 ? t_kt : t_qt;
		const int nn = warp & 1;
		float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
#pragma unroll
		for (int kk = 0; kk < D / 16; kk++) {
			const int k0 = kk * 16 + 2 * t4;
			uint32_t a[4];
			a[0] = *reinterpret_cast<const uint32_t *>(&am[g][k0]);
			a[1] = *reinterpret_cast<const uint32_t *>(&am[g + 8][k0]);
			a[2] = *reinterpret_cast<const uint32_t *>(&am[g][k0 + 8]);
			a[3] = *reinterpret_cast<const uint32_t *>(&am[g + 8][k0 + 8]);
			const uint32_t b0 = *reinterpret_cast<const uint32_t *>(&t_kb[8 * nn + g][k0]);
			const uint32_t b1 = *reinterpret_cast<const uint32_t *>(&t_kb[8 * nn + g][k0 + 8]);
			mma_bf16_16816(d, a, b0, b1);
		}
		const int col = 8 * nn + 2 * t4;
#pragma unroll
		for (int hf = 0; hf < 2; hf++) {
			const int row = g + 8 * hf;
			const float d0 = d[2 * hf], d1 = d[2 * hf + 1];
			if (warp < 2) {
				s_a[row][col] = col < row ? s_beta[row] * d0 : 0.0f;
				s_a[row][col + 1] = col + 1 < row ? s_beta[row] * d1 : 0.0f;
			} else {
				*reinterpret_cast<uint32_t *>(rec + REC_P + row * CH * 2 + swz_narrow(row, col >> 3) * 16 +
							      (col & 7) * 2) =
					pack_bf16(col <= row ? d0 : 0.0f, col + 1 <= row ? d1 : 0.0f);
			}
		}
	}
	__syncthreads();

	/* T = (I + A)^-1 by forward substitution; lane j < 16 owns column j. */
	if (warp == 0 && lane < CH) {
		float col[CH];
#pragma unroll
		for (int t = 0; t < CH; t++) {
			float x = t == lane ? 1.0f : 0.0f;
#pragma unroll
			for (int s = 0; s < t; s++)
				x -= s_a[t][s] * col[s];
			col[t] = x;
			s_t[t][lane] = x;
		}
	}
	__syncthreads();

	/* U = T diag(beta) V and Wk = T diag(beta) Kt on tensor cores (T diag(beta) split hi + lo
	 * in BF16, V exact, Kt the BF16 tile; 2 x 136 FMAs per thread before, 8 % slower). */
	{
		/* B of U^T = V^T (T diag beta)^T and A of Wk = (T diag beta) Kt: (T diag beta)[t][s]
		 * for t = g (+8), s = 2 t4 (+1, +8, +9), hi and lo. */
		/* U^T and Wk are staged in the record's layout where q and k were (dead since the
		 * decays), then written with the record's Qt in 16-byte pieces. */
		uint8_t *su = reinterpret_cast<uint8_t *>(&raw[0][0][0]), *sw = reinterpret_cast<uint8_t *>(&raw[1][0][0]);
		uint32_t th[4], tl[4];
#pragma unroll
		for (int q = 0; q < 4; q++) {
			const int t = g + 8 * (q & 1), s0 = 2 * t4 + 8 * (q >> 1);
			split_pair(s_t[t][s0] * s_beta[s0], s_t[t][s0 + 1] * s_beta[s0 + 1], th[q], tl[q]);
		}
		/* U^T rows v = 32 warp .. + 31 (two m tiles), t in two n tiles: A = V^T by ldmatrix.trans
		 * of raw v [s][v]; B fragment (k = s, n = t) = (T beta)[t][s]: th[0], th[2] for t = g,
		 * th[1], th[3] for t = g + 8. */
#pragma unroll
		for (int mi = 0; mi < 2; mi++) {
			const int v0 = 32 * warp + 16 * mi;
			uint32_t a[4];
			const int lr = (lane & 7) + 8 * (lane >> 4), lc = v0 + 8 * ((lane >> 3) & 1);
			ldsm_x4_t(a, &raw[2][lr][lc]);
#pragma unroll
			for (int nt = 0; nt < 2; nt++) {
				float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
				mma_bf16_16816(d, a, th[nt], th[nt + 2]);
				mma_bf16_16816(d, a, tl[nt], tl[nt + 2]);
				const int t = 8 * nt + 2 * t4;
#pragma unroll
				for (int hf = 0; hf < 2; hf++) {
					const int v = v0 + g + 8 * hf;
					*reinterpret_cast<uint32_t *>(su + v * CH * 2 + swz_narrow(v, t >> 3) * 16 + (t & 7) * 2) =
						pack_bf16(d[2 * hf], d[2 * hf + 1]);
				}
			}
		}
		/* Wk [t][k], k = 32 warp .. + 31 (four n tiles): A = T beta (rows t), B = Kt [s][k] by
		 * ldmatrix.trans of the tile (two n tiles per load). */
#pragma unroll
		for (int np = 0; np < 2; np++) {
			const int k0 = 32 * warp + 16 * np;
			uint32_t b[4];
			const int lr = (lane & 7) + 8 * ((lane >> 3) & 1), lc = k0 + 8 * (lane >> 4);
			ldsm_x4_t(b, &t_kt[lr][lc]);
#pragma unroll
			for (int nt = 0; nt < 2; nt++) {
				float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
				mma_bf16_16816(d, th, b[2 * nt], b[2 * nt + 1]);
				mma_bf16_16816(d, tl, b[2 * nt], b[2 * nt + 1]);
				const int k = k0 + 8 * nt + 2 * t4;
#pragma unroll
				for (int hf = 0; hf < 2; hf++) {
					const int t = g + 8 * hf;
					*reinterpret_cast<uint32_t *>(sw + t * D * 2 + swz_wide(t, k >> 3) * 16 + (k & 7) * 2) =
						pack_bf16(d[2 * hf], d[2 * hf + 1]);
				}
			}
		}
		__syncthreads();
		static_assert(CH * D * 2 / 16 == 2 * INTRA_THREADS, "two 16-byte pieces per thread per block");
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int i = tid + r * INTRA_THREADS, t = i >> 4, ch = i & 15;
			*reinterpret_cast<uint4 *>(rec + REC_U + i * 16) = *reinterpret_cast<const uint4 *>(su + i * 16);
			*reinterpret_cast<uint4 *>(rec + REC_WK + i * 16) = *reinterpret_cast<const uint4 *>(sw + i * 16);
			*reinterpret_cast<uint4 *>(rec + REC_QT + t * D * 2 + swz_wide(t, ch) * 16) =
				*reinterpret_cast<const uint4 *>(&t_qt[t][ch * 8]);
		}
	}
	if (p.ready) {
		/* Publish the record: the barrier orders every thread's stores before thread 0's
		 * gpu-scope release (cumulative), which the recurrent kernel acquires. */
		__syncthreads();
		if (tid == 0) {
			__threadfence();
			asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p.ready + (size_t)j * H + h), "r"(1)
				     : "memory");
		}
	}
}


/* The bf16 pair at `p` (4-byte aligned) of global memory, read once: no L1 allocation. */
__device__ __forceinline__ uint32_t ld_once_b32(const uint16_t *p)
{
	uint32_t x;
	asm volatile("ld.global.nc.L1::no_allocate.b32 %0, [%1];\n" : "=r"(x) : "l"(p));
	return x;
}

/*
 * Version 2 (default): the same record from fewer instructions and shared-memory
 * wavefronts. Thread (warp w, lane l) owns the channel pair c0 = 2 (32 (w & 1) + l),
 * c0 + 1 over the 8 tokens 8 (w >> 1) .. + 7: q, k, g_raw come straight from global
 * memory as BF16 pairs (one 128-byte line a warp a token), the L2 norms by a warp
 * reduce-scatter (16 sums in 16 shuffles) and a 2-way exchange in shared memory, the
 * decays' prefix over the two token halves by one exchange of the half sums; Qt, Kt,
 * Kb are stored as pairs (32-bit) and Kh^T as 16-byte pieces. v alone is staged (padded
 * rows: its ldmatrix.trans loads are free of bank conflicts). 25 KB of shared memory
 * and <= 64 registers: 8 CTAs an SM (v1: 7). From the A, P products on, v1's code.
 */
constexpr int INTRA_V2_MIN_CTAS = 8; /* 64 registers; shared memory also allows 8 (at <= 48
				       * registers, 56 bytes of spills, it ran slower: 01r) */

struct intra_smem {
	__align__(16) uint16_t s_v[CH][TILE_LD];     /* v of the chunk */
	__align__(16) uint16_t t_qt[CH][TILE_LD];    /* Qt, Kt, Kb as MMA operands */
	__align__(16) uint16_t t_kt[CH][TILE_LD];
	__align__(16) uint16_t t_kb[CH][TILE_LD];    /* then U^T in the record's layout */
	__align__(16) uint8_t s_wk[CH * D * 2];      /* Wk in the record's layout */
	float s_a[CH][CH + 1], s_t[CH][CH + 1];
	float2 s_gsum[2][D / 2];                      /* log-decay sums per channel pair, tokens 0-7 | 8-15 */
	float s_part[4][CH];                          /* per warp: squared norms, q then k of its tokens */
	float s_rq[CH], s_rk[CH], s_beta[CH];
};
static_assert(sizeof(((intra_smem *)nullptr)->t_kb) >= CH * D * 2, "U^T is staged in t_kb");

/* What a thread loads for one (chunk, head) item: its q, k, g_raw pairs (8 tokens), its two
 * 16-byte pieces of v, beta_raw (threads < 16); t0, L: the chunk's tokens (L <= 0: none). */
struct intra_in {
	uint32_t rq[8], rk[8], rg[8];
	uint4 rv[2];
	uint32_t beta;
	int t0, L;
};

/* Chunk j's first token and length: one sequence from the token count (cu[0] = 0), no memory
 * read; else one read of the chunk table (v1: three dependent reads). */
__device__ __forceinline__ void intra_locate(const intra_params &p, int j, int &t0, int &L)
{
	if (p.n_seqs == 1) {
		t0 = j * CH, L = min(CH, p.total - t0);
	} else {
		const int2 c = p.chunk[j];
		t0 = c.x, L = c.y;
	}
}

/* Issues every load of item (j, h); nothing waits on them here. Past the chunk's end q, k, v,
 * beta_raw read as 0 and g_raw as 0 (LEAN: -inf, whose decay is 0 without a select). */
template <bool LEAN, bool SPLIT = false>
__device__ __forceinline__ void intra_load(const intra_params &p, int j, int h, intra_in &in)
{
	const int tid = threadIdx.x, H = p.heads, warp = tid >> 5, lane = tid & 31;
	const int half = warp >> 1, c0 = 2 * (32 * (warp & 1) + lane);
	intra_locate(p, j, in.t0, in.L);
	const int t0 = in.t0, L = in.L;
	if (L <= 0)
		return;
	const size_t base = ((size_t)(t0 + 8 * half) * H + h) * D + c0, ts = (size_t)H * D;
#pragma unroll
	for (int i = 0; i < 8; i++) {
		const bool ok = 8 * half + i < L;
		in.rq[i] = ok ? ld_once_b32(p.q + base + i * ts) : 0u;
		in.rk[i] = ok ? ld_once_b32(p.k + base + i * ts) : 0u;
		in.rg[i] = ok ? ld_once_b32(p.g_raw + base + i * ts) : LEAN ? 0xff80ff80u : 0u;
	}
#pragma unroll
	for (int r = 0; r < CH * D / 8 / INTRA_THREADS; r++) {
		const int idx = tid + r * INTRA_THREADS, row = idx / (D / 8), col = (idx % (D / 8)) * 8;
		in.rv[r] = make_uint4(0, 0, 0, 0);
		if (!SPLIT && row < L)
			in.rv[r] =
				*reinterpret_cast<const uint4 *>(p.v + ((size_t)(t0 + row) * H + h) * D + col);
	}
	in.beta = tid < L ? p.beta_raw[(size_t)(t0 + tid) * H + h] : 0u;
}

/* 2^x and 1/x, flush-to-zero forms: one MUFU instruction each (the forms __expf and __fdividef
 * take without -ftz add a range test and two scalings around it for subnormal results, which
 * the gates never need: Gamma_t >= e^-80, see the top). */
__device__ __forceinline__ float ex2_ftz(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

__device__ __forceinline__ float rcp_ftz(float x)
{
	float y;
	asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

constexpr float LOG2E = 1.4426950408889634f;

/* Item (j, h) from its loaded inputs (L > 0, the same for the whole CTA): the record. Shared
 * memory is reused item after item: every write below that a previous item's reads could
 * see comes after a barrier those reads precede. */
template <bool LEAN, bool SPLIT = false>
__device__ __forceinline__ void intra_compute(const intra_params &p, int j, int h, const intra_in &in,
					      intra_smem &sm)
{
	const int tid = threadIdx.x, H = p.heads;
	const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
	const int L = in.L;
	uint8_t *rec = p.rec + ((size_t)j * H + h) * REC_BYTES;
	const int half = warp >> 1, cp = 32 * (warp & 1) + lane, c0 = 2 * cp;
#pragma unroll
	for (int r = 0; !SPLIT && r < CH * D / 8 / INTRA_THREADS; r++) {
		const int idx = tid + r * INTRA_THREADS, row = idx / (D / 8), col = (idx % (D / 8)) * 8;
		*reinterpret_cast<uint4 *>(&sm.s_v[row][col]) = in.rv[r];
	}
	if (tid < CH)
		sm.s_beta[tid] = tid < L ? sigmoidf_(bf2f((uint16_t)in.beta)) : 0.0f;

	/* Squared norms: 16 values a lane (q then k of the 8 tokens), reduce-scattered over the
	 * warp: afterwards lane l holds the warp's sum of value l >> 1. */
	{
		float a[16];
#pragma unroll
		for (int i = 0; i < 8; i++) {
			const float q0 = lo_bf16(in.rq[i]), q1 = hi_bf16(in.rq[i]);
			const float k0 = lo_bf16(in.rk[i]), k1 = hi_bf16(in.rk[i]);
			a[i] = q0 * q0 + q1 * q1;
			a[8 + i] = k0 * k0 + k1 * k1;
		}
#pragma unroll
		for (int m = 16, n = 8; m >= 2; m >>= 1, n >>= 1) {
			const bool up = (lane & m) != 0;
#pragma unroll
			for (int i = 0; i < n; i++) {
				const float send = up ? a[i] : a[i + n], keep = up ? a[i + n] : a[i];
				a[i] = keep + __shfl_xor_sync(0xffffffffu, send, m);
			}
		}
		a[0] += __shfl_xor_sync(0xffffffffu, a[0], 1);
		if ((lane & 1) == 0)
			sm.s_part[warp][lane >> 1] = a[0];
	}

	/* Log decays of the thread's channels and tokens (0 past L) and their half sums. */
	float gl0[8], gl1[8];
	{
		float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
		for (int i = 0; i < 8; i++) {
			if constexpr (LEAN) { /* log2 units: G2 = G log2(e); 0 past L (g_raw -inf) */
				constexpr float c = (float)KDA_GATE_LOWER_BOUND * LOG2E;
				gl0[i] = c * rcp_ftz(1.0f + ex2_ftz(-LOG2E * lo_bf16(in.rg[i])));
				gl1[i] = c * rcp_ftz(1.0f + ex2_ftz(-LOG2E * hi_bf16(in.rg[i])));
			} else {
				const bool ok = 8 * half + i < L;
				gl0[i] = ok ? (float)KDA_GATE_LOWER_BOUND * sigmoidf_(lo_bf16(in.rg[i])) : 0.0f;
				gl1[i] = ok ? (float)KDA_GATE_LOWER_BOUND * sigmoidf_(hi_bf16(in.rg[i])) : 0.0f;
			}
			s0 += gl0[i], s1 += gl1[i];
		}
		sm.s_gsum[half][cp] = make_float2(s0, s1);
	}
	__syncthreads();
	if (tid < 2 * CH) {
		const int t = tid & (CH - 1), hf = t >> 3, idx = (tid >> 4) * 8 + (t & 7);
		const float ss = sm.s_part[2 * hf][idx] + sm.s_part[2 * hf + 1][idx];
		if (tid < CH)
			sm.s_rq[t] = rsqrtf(ss + (float)KDA_L2_EPS) * p.scale;
		else
			sm.s_rk[t] = rsqrtf(ss + (float)KDA_L2_EPS);
	}
	__syncthreads();

	/* Decays and the scaled operands of the thread's 2 channels x 8 tokens. */
	{
		const float2 h0 = sm.s_gsum[0][cp], h1 = sm.s_gsum[1][cp];
		const float gml0 = LEAN ? ex2_ftz(h0.x + h1.x) : __expf(h0.x + h1.x); /* Gamma_last */
		const float gml1 = LEAN ? ex2_ftz(h0.y + h1.y) : __expf(h0.y + h1.y);
		if (half == 0)
			*reinterpret_cast<float2 *>(rec + REC_G + ((cp & 3) * G_LD + (cp >> 2) * 2) * 4) =
				make_float2(gml0, gml1);
		float G0 = half ? h0.x : 0.0f, G1 = half ? h0.y : 0.0f;
		uint32_t kh0[4], kh1[4]; /* Kh^T rows c0, c0 + 1, tokens 8 half .. + 7 */
		float pk0 = 0.0f, pk1 = 0.0f;
#pragma unroll
		for (int i = 0; i < 8; i++) {
			const int t = 8 * half + i;
			G0 += gl0[i], G1 += gl1[i];
			const float gam0 = LEAN ? ex2_ftz(G0) : __expf(G0), igam0 = LEAN ? ex2_ftz(-G0) : __expf(-G0);
			const float gam1 = LEAN ? ex2_ftz(G1) : __expf(G1), igam1 = LEAN ? ex2_ftz(-G1) : __expf(-G1);
			const float rqv = sm.s_rq[t], rkv = sm.s_rk[t];
			const float q0 = lo_bf16(in.rq[i]) * rqv, q1 = hi_bf16(in.rq[i]) * rqv;
			const float k0 = lo_bf16(in.rk[i]) * rkv, k1 = hi_bf16(in.rk[i]) * rkv;
			*reinterpret_cast<uint32_t *>(&sm.t_qt[t][c0]) = pack_bf16(q0 * gam0, q1 * gam1);
			*reinterpret_cast<uint32_t *>(&sm.t_kt[t][c0]) = pack_bf16(k0 * gam0, k1 * gam1);
			const float kb0 = k0 * igam0, kb1 = k1 * igam1;
			*reinterpret_cast<uint32_t *>(&sm.t_kb[t][c0]) = pack_bf16(kb0, kb1);
			/* Kh = Gamma_last / Gamma_t k_t as a product (factors in FP32 range, see the top) */
			const float kh_0 = LEAN ? kb0 * gml0 : k0 * (gml0 * igam0);
			const float kh_1 = LEAN ? kb1 * gml1 : k1 * (gml1 * igam1);
			if (i & 1) {
				kh0[i >> 1] = pack_bf16(pk0, kh_0);
				kh1[i >> 1] = pack_bf16(pk1, kh_1);
			} else {
				pk0 = kh_0, pk1 = kh_1;
			}
		}
		uint8_t *row0 = rec + REC_KH + c0 * CH * 2, *row1 = row0 + CH * 2;
		*reinterpret_cast<uint4 *>(row0 + swz_narrow(c0, half) * 16) =
			make_uint4(kh0[0], kh0[1], kh0[2], kh0[3]);
		*reinterpret_cast<uint4 *>(row1 + swz_narrow(c0 + 1, half) * 16) =
			make_uint4(kh1[0], kh1[1], kh1[2], kh1[3]);
	}
	__syncthreads();

	/* A = Kt Kb^T (warps 0, 1) and P = Qt Kb^T (warps 2, 3), one 16x8 tile each. */
	{
		const uint16_t(*am)[TILE_LD] = warp < 2 ? sm.t_kt : sm.t_qt;
		const int nn = warp & 1;
		float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
#pragma unroll
		for (int kk = 0; kk < D / 16; kk++) {
			const int k0 = kk * 16 + 2 * t4;
			uint32_t a[4];
			a[0] = *reinterpret_cast<const uint32_t *>(&am[g][k0]);
			a[1] = *reinterpret_cast<const uint32_t *>(&am[g + 8][k0]);
			a[2] = *reinterpret_cast<const uint32_t *>(&am[g][k0 + 8]);
			a[3] = *reinterpret_cast<const uint32_t *>(&am[g + 8][k0 + 8]);
			const uint32_t b0 = *reinterpret_cast<const uint32_t *>(&sm.t_kb[8 * nn + g][k0]);
			const uint32_t b1 = *reinterpret_cast<const uint32_t *>(&sm.t_kb[8 * nn + g][k0 + 8]);
			mma_bf16_16816(d, a, b0, b1);
		}
		const int col = 8 * nn + 2 * t4;
#pragma unroll
		for (int hf = 0; hf < 2; hf++) {
			const int row = g + 8 * hf;
			const float d0 = d[2 * hf], d1 = d[2 * hf + 1];
			if (warp < 2) {
				sm.s_a[row][col] = col < row ? sm.s_beta[row] * d0 : 0.0f;
				sm.s_a[row][col + 1] = col + 1 < row ? sm.s_beta[row] * d1 : 0.0f;
			} else {
				*reinterpret_cast<uint32_t *>(rec + REC_P + row * CH * 2 + swz_narrow(row, col >> 3) * 16 +
							      (col & 7) * 2) =
					pack_bf16(col <= row ? d0 : 0.0f, col + 1 <= row ? d1 : 0.0f);
			}
		}
	}
	__syncthreads();

	/* T = (I + A)^-1 by forward substitution; lane j < 16 owns column j. */
	if (warp == 0 && lane < CH) {
		float col[CH];
#pragma unroll
		for (int t = 0; t < CH; t++) {
			float x = t == lane ? 1.0f : 0.0f;
#pragma unroll
			for (int s = 0; s < t; s++)
				x -= sm.s_a[t][s] * col[s];
			col[t] = x;
			sm.s_t[t][lane] = x;
		}
	}
	__syncthreads();

	/* SPLIT (K3_KDA_RECUR=split): the split record (kda_record.cuh, REC_TB): Kt in Wk's place, Qt,
	 * and TB = T diag(beta) as hi and lo BF16 in P's layout (threads 0-31: row t = tid / 2, tokens
	 * s = 8 (tid % 2) .. + 7, one 16-byte word of each); no v was read. */
	if constexpr (SPLIT) {
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int i = tid + r * INTRA_THREADS, t = i >> 4, ch = i & 15;
			*reinterpret_cast<uint4 *>(rec + REC_WK + t * D * 2 + swz_wide(t, ch) * 16) =
				*reinterpret_cast<const uint4 *>(&sm.t_kt[t][ch * 8]);
			*reinterpret_cast<uint4 *>(rec + REC_QT + t * D * 2 + swz_wide(t, ch) * 16) =
				*reinterpret_cast<const uint4 *>(&sm.t_qt[t][ch * 8]);
		}
		if (tid < 2 * CH) {
			const int t = tid >> 1, c = tid & 1;
			uint32_t hi[4], lo[4];
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int s0 = 8 * c + 2 * e;
				split_pair(sm.s_t[t][s0] * sm.s_beta[s0], sm.s_t[t][s0 + 1] * sm.s_beta[s0 + 1], hi[e], lo[e]);
			}
			const int at = REC_TB + t * CH * 2 + swz_narrow(t, c) * 16;
			*reinterpret_cast<uint4 *>(rec + at) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
			*reinterpret_cast<uint4 *>(rec + at + TB_LO) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
		}
	} else
	/* U = T diag(beta) V and Wk = T diag(beta) Kt on tensor cores, as in v1. */
	{
		uint8_t *su = reinterpret_cast<uint8_t *>(&sm.t_kb[0][0]), *sw = sm.s_wk;
		uint32_t th[4], tl[4];
#pragma unroll
		for (int q = 0; q < 4; q++) {
			const int t = g + 8 * (q & 1), s0 = 2 * t4 + 8 * (q >> 1);
			split_pair(sm.s_t[t][s0] * sm.s_beta[s0], sm.s_t[t][s0 + 1] * sm.s_beta[s0 + 1],
				   th[q], tl[q]);
		}
#pragma unroll
		for (int mi = 0; mi < 2; mi++) {
			const int v0 = 32 * warp + 16 * mi;
			uint32_t a[4];
			const int lr = (lane & 7) + 8 * (lane >> 4), lc = v0 + 8 * ((lane >> 3) & 1);
			ldsm_x4_t(a, &sm.s_v[lr][lc]);
#pragma unroll
			for (int nt = 0; nt < 2; nt++) {
				float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
				mma_bf16_16816(d, a, th[nt], th[nt + 2]);
				mma_bf16_16816(d, a, tl[nt], tl[nt + 2]);
				const int t = 8 * nt + 2 * t4;
#pragma unroll
				for (int hf = 0; hf < 2; hf++) {
					const int v = v0 + g + 8 * hf;
					*reinterpret_cast<uint32_t *>(su + v * CH * 2 + swz_narrow(v, t >> 3) * 16 + (t & 7) * 2) =
						pack_bf16(d[2 * hf], d[2 * hf + 1]);
				}
			}
		}
#pragma unroll
		for (int np = 0; np < 2; np++) {
			const int k0 = 32 * warp + 16 * np;
			uint32_t b[4];
			const int lr = (lane & 7) + 8 * ((lane >> 3) & 1), lc = k0 + 8 * (lane >> 4);
			ldsm_x4_t(b, &sm.t_kt[lr][lc]);
#pragma unroll
			for (int nt = 0; nt < 2; nt++) {
				float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
				mma_bf16_16816(d, th, b[2 * nt], b[2 * nt + 1]);
				mma_bf16_16816(d, tl, b[2 * nt], b[2 * nt + 1]);
				const int k = k0 + 8 * nt + 2 * t4;
#pragma unroll
				for (int hf = 0; hf < 2; hf++) {
					const int t = g + 8 * hf;
					*reinterpret_cast<uint32_t *>(sw + t * D * 2 + swz_wide(t, k >> 3) * 16 + (k & 7) * 2) =
						pack_bf16(d[2 * hf], d[2 * hf + 1]);
				}
			}
		}
		__syncthreads();
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int i = tid + r * INTRA_THREADS, t = i >> 4, ch = i & 15;
			*reinterpret_cast<uint4 *>(rec + REC_U + i * 16) = *reinterpret_cast<const uint4 *>(su + i * 16);
			*reinterpret_cast<uint4 *>(rec + REC_WK + i * 16) = *reinterpret_cast<const uint4 *>(sw + i * 16);
			*reinterpret_cast<uint4 *>(rec + REC_QT + t * D * 2 + swz_wide(t, ch) * 16) =
				*reinterpret_cast<const uint4 *>(&sm.t_qt[t][ch * 8]);
		}
	}
	if (p.ready) {
		__syncthreads();
		if (tid == 0) {
			__threadfence();
			asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p.ready + (size_t)j * H + h), "r"(1)
				     : "memory");
		}
	}
}

/* One 256-byte row (a token's 128 BF16 channels of one head) into L2, not into the SM: BULK (one
 * cp.async.bulk.prefetch.L2, the TMA unit; K3_KDA_INTRA_PF_MODE=bulk) or two line prefetches (the
 * LSU path; the default mode). */
template <bool BULK>
__device__ __forceinline__ void prefetch_row_l2(const uint16_t *row)
{
	if constexpr (BULK) {
		asm volatile("cp.async.bulk.prefetch.L2.global [%0], 256;\n" ::"l"(row) : "memory");
	} else {
		asm volatile("prefetch.global.L2::evict_last [%0];\n" ::"l"(row) : "memory");
		asm volatile("prefetch.global.L2::evict_last [%0];\n" ::"l"(row + 64) : "memory");
	}
}

/* K3_KDA_INTRA_PF (round 05q, opt-in): the intra kernel's CTAs each spend a DRAM round trip on
 * their own q, k, g_raw and v before any arithmetic (one (chunk, head) item a CTA), and ncu has
 * them issue- and latency-bound rather than bandwidth-bound (IPC 2.5 of 4, DRAM 53 %, 01e). Each
 * CTA here asks L2 for the inputs of the CTA p.pf places later in launch order (x fastest: the
 * same head's chunks on the serial path, the same chunk's heads on the overlapped one), so that
 * by the time that CTA starts its loads hit L2. Threads 0-63 one row each (tensor tid / 16, token
 * tid % 16), rows past the chunk's end skipped; beta_raw (32 bytes a chunk) is not prefetched.
 * Nothing read here feeds the results: the outputs are v2's (v3's) bit for bit. */
template <bool BULK>
__device__ __forceinline__ void intra_prefetch(const intra_params &p)
{
	const int tid = threadIdx.x;
	if (tid >= 64)
		return;
	/* 32-bit unsigned arithmetic (a 64-bit division is a call with a stack frame): x + pf < 2^32 */
	const unsigned x = blockIdx.x + (unsigned)p.pf, by = blockIdx.y + x / gridDim.x, bx = x % gridDim.x;
	if (by >= gridDim.y)
		return;
	const int j = (int)(p.ready ? by : bx), h = (int)(p.ready ? bx : by);
	int t0 = 0, L = 0;
	intra_locate(p, j, t0, L);
	const int row = tid & (CH - 1), which = tid >> 4;
	if (row >= L)
		return;
	const size_t at = ((size_t)(t0 + row) * p.heads + h) * D;
	if (which == 0) /* branches, not a select of the pointers: that one takes a stack frame */
		prefetch_row_l2<BULK>(p.q + at);
	else if (which == 1)
		prefetch_row_l2<BULK>(p.k + at);
	else if (which == 2)
		prefetch_row_l2<BULK>(p.g_raw + at);
	else
		prefetch_row_l2<BULK>(p.v + at);
}

/*
 * Version 2 (default): the same record from fewer instructions and shared-memory
 * wavefronts. Thread (warp w, lane l) owns the channel pair c0 = 2 (32 (w & 1) + l),
 * c0 + 1 over the 8 tokens 8 (w >> 1) .. + 7: q, k, g_raw come straight from global
 * memory as BF16 pairs (one 128-byte line a warp a token), the L2 norms by a warp
 * reduce-scatter (16 sums in 16 shuffles) and a 2-way exchange in shared memory, the
 * decays' prefix over the two token halves by one exchange of the half sums; Qt, Kt,
 * Kb are stored as pairs (32-bit) and Kh^T as 16-byte pieces. v alone is staged (padded
 * rows: its ldmatrix.trans loads are free of bank conflicts). 25 KB of shared memory
 * and <= 64 registers: 8 CTAs an SM (v1: 7). From the A, P products on, v1's code.
 * LEAN (K3_KDA_INTRA=v3, opt-in): gates in log2 units, ex2 / rcp in their flush-to-zero
 * forms, Kh = Kb Gamma_last, g_raw = -inf past the chunk's end: SASS 1936 -> 1656
 * instructions, 1.12 -> 1.09 ms alone at T = 16K, H = 96, -0.5 to -3.5 % on the serial path;
 * on the overlapped path not faster: the recurrent kernel beside it then sets the pair
 * (H200, 2026-12-02zb; docs/KERNELS.md "KDA prefill, round 02zb").
 */
template <bool LEAN, int PF = 0, bool SPLIT = false>
__global__ void __launch_bounds__(INTRA_THREADS, INTRA_V2_MIN_CTAS) kda_chunk_intra_kernel(const intra_params p)
{
	__shared__ intra_smem sm;
	const int j = p.ready ? blockIdx.y : blockIdx.x, h = p.ready ? blockIdx.x : blockIdx.y;
	if constexpr (PF != 0) /* PF 1: line prefetches, 2: bulk (K3_KDA_INTRA_PF_MODE) */
		intra_prefetch<PF == 2>(p);
	intra_in in;
	intra_load<LEAN, SPLIT>(p, j, h, in);
	if (in.L <= 0)
		return;
	intra_compute<LEAN, SPLIT>(p, j, h, in, sm);
}

__device__ __forceinline__ void ldsm_x4(uint32_t r[4], uint32_t addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

/* Overlapped path: spin until the intra kernel has published the record behind
 * `flag`, then order the async proxy's (bulk copy) reads after the acquire. A flag
 * not set within 10 s (the path once hung, 2026-12-01) traps: an error the caller
 * sees instead of a GPU that never finishes. */
__device__ __forceinline__ void wait_ready(const int32_t *flag)
{
	if (!flag)
		return;
	uint64_t t0 = 0;
	for (uint32_t spins = 0;; spins++) {
		int32_t x;
		asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(x) : "l"(flag) : "memory");
		if (x)
			break;
		__nanosleep(100);
		k3_trap_if_stuck(spins, 1023u, t0);
	}
	asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

/* The recurrent kernel's flag waits other than wait_ready()'s (FW, K3_KDA_FLAG_WAIT; opt-in):
 * FW = 1 ("spin"): one acquire load as wait_ready(); while the flag is not set, relaxed loads a
 * SPIN_NS apart (no L1 invalidation, ~5x fewer loads a wait than wait_ready()'s 100 ns), then one
 * acquire load of the set flag. FW = 2 ("batch"): FW 1's spin on chunk i's flag, then the flags of
 * chunks i + 1 .. i + 7 (below n) read relaxed once, and the leading run of set flags acquired at
 * once: by the acquire load when the run is chunk i alone, else by one fence.acq_rel.gpu (a
 * relaxed read that observes a release store, followed by the fence, synchronizes with it: PTX's
 * acquire pattern); the caller stages the run's chunks with no flag wait. Why (2026-12-04k call
 * 1, bench/results/k3-kernels-h200-2026-12-04k): runs of 8 acquired with a fence, spinning on 8
 * relaxed loads 100 ns apart, made the recurrent kernel faster where it sets the pair (T = 16K,
 * H = 48: 1364 against 1432 us) and the intra kernel slower where the recurrent CTAs mostly wait
 * beside it (H = 96: 1.89 against 1.77 ms): the waits' loads cost the intra kernel, the acquire
 * each step costs the recurrence. */
constexpr unsigned SPIN_NS = 512;

__device__ __forceinline__ int32_t ld_acquire_gpu(const int32_t *f)
{
	int32_t x;
	asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(x) : "l"(f) : "memory");
	return x;
}

__device__ __forceinline__ int32_t ld_relaxed_gpu(const int32_t *f)
{
	int32_t x;
	asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(x) : "l"(f) : "memory");
	return x;
}

/* Relaxed loads SPIN_NS apart until *f is set; traps after 10 s as wait_ready(). */
__device__ __forceinline__ void spin_relaxed(const int32_t *f)
{
	uint64_t t0 = 0;
	for (uint32_t spins = 0; !ld_relaxed_gpu(f); spins++) {
		__nanosleep(SPIN_NS);
		k3_trap_if_stuck(spins, 255u, t0);
	}
}

/* FW 1: chunk record behind `f` written and acquired. */
__device__ __forceinline__ void wait_ready_spin(const int32_t *f)
{
	if (!ld_acquire_gpu(f)) {
		spin_relaxed(f);
		(void)ld_acquire_gpu(f);
	}
	asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

/* FW 2: chunks i .. (return value) - 1 written and acquired (at least chunk i). */
__device__ __forceinline__ int acquire_run(const int32_t *flag0, int i, int n, int H)
{
	const int32_t *f = flag0 + (size_t)i * H;
	if (!ld_relaxed_gpu(f))
		spin_relaxed(f);
	constexpr int RUN = 8;
	int32_t x[RUN - 1];
#pragma unroll
	for (int j = 1; j < RUN; j++)
		x[j - 1] = i + j < n ? ld_relaxed_gpu(f + (size_t)j * H) : 0;
	int run = 1;
#pragma unroll
	for (int j = 1; j < RUN; j++)
		run += (x[j - 1] != 0 && run == j) ? 1 : 0;
	if (run == 1)
		(void)ld_acquire_gpu(f);
	else
		asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
	asm volatile("fence.proxy.async.global;\n" ::: "memory");
	return i + run;
}

/* One thread stages chunk record `rec` (its U rows from vbase) into `st`, once
 * `flag` (overlapped path, else NULL) says the record is written. */
template <int WARPS>
__device__ __forceinline__ void issue_stage(uint8_t *st, const uint8_t *rec, int vbase, uint64_t *bar,
					    const int32_t *flag)
{
	constexpr uint32_t U_BYTES = 16 * WARPS * CH * 2;
	wait_ready(flag);
	mbar_expect_tx(bar, REC_U + U_BYTES);
	bulk_g2s(st, rec, REC_U, bar);
	bulk_g2s(st + REC_U, rec + REC_U + vbase * CH * 2, U_BYTES, bar);
}

/* Thread 0 stages chunk i (flag0: the head's flags, NULL on the serial path) with the flag wait
 * FW; ready_to: FW 2's acquired chunks (below it). FW 0 is issue_stage() with wait_ready(). */
template <int WARPS, int FW>
__device__ __forceinline__ void stage_fw(uint8_t *st, const uint8_t *rec, int vbase, uint64_t *bar,
					 const int32_t *flag0, int i, int n, int H, int &ready_to)
{
	if constexpr (FW == 0) {
		issue_stage<WARPS>(st, rec, vbase, bar, flag0 ? flag0 + (size_t)i * H : nullptr);
	} else if constexpr (FW == 1) {
		if (flag0)
			wait_ready_spin(flag0 + (size_t)i * H);
		issue_stage<WARPS>(st, rec, vbase, bar, nullptr);
	} else {
		if (flag0 && i >= ready_to)
			ready_to = acquire_run(flag0, i, n, H);
		issue_stage<WARPS>(st, rec, vbase, bar, nullptr);
	}
}

/* The primitives kda_recur_step.cuh's steps are written on (its header comment). */
#define KDA_STEP_FN __device__ __forceinline__

__device__ __forceinline__ void ldsm_x4_tr(uint32_t r[4], uint32_t addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

__device__ __forceinline__ void kda_warp_sync()
{
	__syncwarp();
}

__device__ __forceinline__ void kda_proxy_fence_cta()
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void kda_fence_mbar_init()
{
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void kda_cta_sync()
{
	__syncthreads();
}

/* 16 bytes from global `src` to shared `dst` (cp.async, cached in L2 only), the first `bytes`
 * (16 or 0) read, the rest zero-filled (cp_async_commit(), cp_async_wait<N>(): kda_device.cuh). */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(bytes)
		     : "memory");
}

} // namespace

#include "kda_recur_step.cuh"

namespace {

/*
 * One CTA per (sequence, head, slice of 16 * WARPS state rows); warp w owns
 * rows v in [vbase + 16w, vbase + 16w + 16) across all 128 k, as 16 m16n8
 * FP32 accumulator tiles. Warps never exchange data: the CTA only shares
 * the staged chunk records, which thread 0 streams STAGES - 1 chunks
 * ahead with the bulk copy engine.
 */
template <typename StateT, int WARPS, int STAGES, int FW = 0>
__global__ void __launch_bounds__(WARPS * 32) kda_chunk_recurrent_kernel(const recur_params p)
{
	extern __shared__ __align__(128) uint8_t smem[];
	__shared__ __align__(8) uint64_t full[STAGES];
	constexpr int SB = stage_bytes(WARPS);
	const int seq = blockIdx.x / p.slices, slice = blockIdx.x % p.slices, h = blockIdx.y;
	const int H = p.heads, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int g = lane >> 2, t4 = lane & 3;
	const int vbase = slice * 16 * WARPS, r0 = vbase + 16 * warp;
	const int c_begin = p.off[seq], n_chunks = p.off[seq + 1] - c_begin;
	const int tok0 = p.cu[seq], len = p.cu[seq + 1] - tok0;
	const size_t slot = p.slot ? (size_t)p.slot[seq] : (size_t)seq;
	const size_t sbase = (slot * H + h) * (size_t)D * D;
	const uint8_t *rec0 = p.rec + ((size_t)c_begin * H + h) * REC_BYTES;
	const size_t rec_stride = (size_t)H * REC_BYTES;
	const int32_t *flag0 = p.ready ? p.ready + (size_t)c_begin * H + h : nullptr;

	/* FW 2, thread 0: chunks below ready_to are acquired (acquire_run()). */
	int ready_to = 0;
	if (threadIdx.x == 0) {
		for (int i = 0; i < STAGES; i++)
			mbar_init(&full[i], 1);
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
		for (int i = 0; i < STAGES - 1 && i < n_chunks; i++)
			stage_fw<WARPS, FW>(smem + i * SB, rec0 + i * rec_stride, vbase, &full[i], flag0, i, n_chunks, H,
					    ready_to);
	}

	float s[D / 8][4];
	load_state<StateT>(s, p.s0, sbase, r0, g, t4);

	const recur_lane lo = recur_lane_of(lane, warp, vbase);

	for (int cc = 0; cc < n_chunks; cc++) {
		__syncthreads(); /* every warp is done with the stage refilled below */
		if (threadIdx.x == 0) {
			const int nx = cc + STAGES - 1;
			if (nx < n_chunks) {
				asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
				stage_fw<WARPS, FW>(smem + (nx % STAGES) * SB, rec0 + nx * rec_stride, vbase, &full[nx % STAGES],
						    flag0, nx, n_chunks, H, ready_to);
			}
		}
		mbar_wait(&full[cc % STAGES], (uint32_t)(cc / STAGES) & 1u);
		const uint8_t *st = smem + (cc % STAGES) * SB;
		const int lc = min(CH, len - cc * CH);
		recur_chunk(s, st, lo, p.out + ((size_t)(tok0 + cc * CH) * H + h) * D + r0 + g, H, lc);
	}

	if (p.s1)
		store_state<StateT>(s, p.s1, sbase, r0, g, t4);
}

/* CTAs an SM the pair kernel is compiled for (__launch_bounds__' second argument; 0: none asked,
 * as for the chunk kernel), or with BOUND (K3_KDA_RECUR=pair136) as many as fit at 136 registers
 * a thread, so that two CTAs leave an intra CTA more room on the overlapped path. ptxas
 * (2026-12-05, CUDA 13.0): 133 / 149 registers a thread for FP32 / BF16 state at 1-4 warps
 * unbounded, 134 / 162 at 8; bounded 128 with 20 / 276 bytes of spills (an explicit 1 instead of
 * 0 gave 168 / 190: ptxas then schedules for one CTA an SM). */
__host__ __device__ constexpr int pair_min_ctas(int warps, bool bound)
{
	return bound && 65536 / (136 * (warps + 1) * 32) > 1 ? 65536 / (136 * (warps + 1) * 32) : 0;
}

/* The pair kernel: pair_cta() (kda_recur_step.cuh). */
template <typename StateT, int WARPS, bool BOUND, int PST = PAIR_STAGES, int XM = CROSS_SMEM>
__global__ void __launch_bounds__((WARPS + 1) * 32, pair_min_ctas(WARPS, BOUND))
	kda_chunk_recurrent_pair_kernel(const recur_params p)
{
	extern __shared__ __align__(128) uint8_t smem[];
	__shared__ __align__(8) uint64_t full[PST];
	pair_cta<StateT, WARPS, PST, XM>(p, smem, full, (int)blockIdx.x, (int)blockIdx.y, (int)threadIdx.x);
}

/* The split kernel (K3_KDA_RECUR=split): split_cta() (kda_recur_step.cuh). */
template <typename StateT, int WARPS, int STAGES>
__global__ void __launch_bounds__(WARPS * 32) kda_chunk_recurrent_split_kernel(const recur_params p)
{
	extern __shared__ __align__(128) uint8_t smem[];
	__shared__ __align__(8) uint64_t full[STAGES];
	split_cta<StateT, WARPS, STAGES>(p, smem, full, (int)blockIdx.x, (int)blockIdx.y, (int)threadIdx.x);
}

/* How one prefill call runs; defaults by path, each overridable per call (read from the
 * environment in kda_prefill(); the bench and tests use these for A/B):
 *   K3_KDA_PREFILL=serial | overlap | auto   force the two kernels one after the other, or side
 *                                      by side, or overlap_by_default(); unset: auto
 *   K3_KDA_INTRA=v1 | v2 | v3          intra kernel version (v3: v2's lean instance, see
 *                                      kda_chunk_intra_kernel; with K3_KDA_RECUR=split, v2 / v3's
 *                                      SPLIT instance)
 *   K3_KDA_INTRA_PF=N                  v2 / v3: each intra CTA prefetches into L2 the inputs of
 *                                      the CTA N places later in launch order (intra_prefetch();
 *                                      unset or 0: none; v1 ignores it)
 *   K3_KDA_INTRA_PF_MODE=line | bulk   its prefetches: two line prefetches a row (unset: line) or
 *                                      one bulk prefetch a row (prefetch_row_l2())
 *   K3_KDA_RECUR_STAGES=3 | 4          chunk records in flight in the recurrent kernel
 *   K3_KDA_RECUR_WARPS=v1 | v2 | v3 | 1 | 2 | 4 | 8   width rule (recurrent_warps(); v3 the pair
 *                                      kernel's, pair_warps()) or a forced width
 *   K3_KDA_FLAG_WAIT=acquire | spin | batch   overlapped path: the recurrent kernel's flag waits
 *                                      (wait_ready(), wait_ready_spin(), acquire_run())
 *   K3_KDA_RECUR=auto | chunk | pair | pair136   auto (unset): pairr where the serial path is the
 *                                      default's choice at <= PAIRR_MAX_PAIRS (sequence, head)
 *                                      pairs, else chunk; or the recurrent kernel a chunk a step or two
 *                                      (kda_chunk_recurrent_pair_kernel: PAIR_STAGES pairs in
 *                                      flight, so K3_KDA_RECUR_STAGES and K3_KDA_FLAG_WAIT are
 *                                      not read; not bit for bit the chunk kernel's results);
 *                                      pair136 compiled for <= 136 registers (pair_min_ctas()),
 *                                      pair3 with 3 pairs in flight, pairr with the decays in
 *                                      the state warps' registers (CROSS_REG), pairr3 that with
 *                                      3 pairs in flight, pairnx without
 *                                      cross terms (FP32 state; a measurement row: results wrong);
 *                                      split: the chunk kernel on split records (the intra
 *                                      kernel's SPLIT instance, kda_chunk_recurrent_split_kernel;
 *                                      K3_KDA_RECUR_STAGES as for chunk, K3_KDA_FLAG_WAIT and
 *                                      K3_KDA_INTRA_PF not read; not bit for bit the chunk kernel)
 *   K3_KDA_SPLIT_OPT=N                 split only: recur_params.split_opt's bits (kda_recur_step.cuh
 *                                      SPLIT_*; round 05w's diagnosis; 4 and 8 give wrong results)
 * (K3_KDA_FLAG_WAIT=poll | early, two cheaper flag waits, measured slower on 2026-12-02l and
 * removed: see overlap_by_default(). Removed in 2026-12-02t (docs/KERNELS.md "KDA prefill, round
 * 02t"): K3_KDA_RECUR=wgmma | wgmma2, the recurrent kernel on wgmma (64-row warpgroup CTAs,
 * 140 registers a thread; 2026-12-02q, serial path), which made the overlapped pair slower (T =
 * 16K, H = 96: 1.91-2.00 ms against 1.74-1.83 in one process, twice: the intra kernel gets fewer
 * CTAs an SM beside it), though main's build of it (c4997c5) ran the serial recurrence 14-16 %
 * faster; K3_KDA_INTRA=v2r56 (v2 at <= 56 registers) and K3_KDA_RECUR_REGS=96 (4-warp recurrent
 * CTAs at <= 96 registers, 48 bytes of spills), both slower on the overlapped path: +5-8 % and
 * +40 %.) */
struct prefill_cfg {
	bool overlap;
	int intra;  /* 1, 2, 3 */
	int stages; /* 3, 4 */
	int rule;   /* 1, 2, 3 (the pair kernel's); forced width: 10 + warps */
	int fw;     /* overlapped path: the recurrent kernel's flag wait (0 wait_ready(), 1 spin, 2 batch) */
	int pair;   /* 0 the chunk kernel; the pair kernel 1 (K3_KDA_RECUR=pair), 2 (=pair136), 3 (=pair3), 4 (=pairnx), 5 (=pairr), 6 (=pairr3); 8 the split kernel (=split) */
	int pf;     /* K3_KDA_INTRA_PF: intra_params.pf (v2 / v3; 0 none) */
	int pf_mode; /* K3_KDA_INTRA_PF_MODE: 1 line (default), 2 bulk */
	int split_opt; /* K3_KDA_SPLIT_OPT: recur_params.split_opt (split only) */
};

/* H200, 2026-12-01r (T = 16K, H = 96, FP32 state): serial v1 (as before) 2.28-2.30 ms, serial
 * v2 with rule 2 2.07-2.10 ms; overlapped v2, 4-warp CTAs (rule 1), 4 stages 1.78-1.82 ms, 3
 * stages 1.748 ms (BF16 1.751), where rule 2's 384 CTAs gave 2.91 ms and v2 at <= 48 registers
 * 2.04-2.19 ms. 2026-12-02: see overlap_by_default(). */
constexpr prefill_cfg CFG_SERIAL = { false, 2, 4, 2, 0, 0, 0, 1, 0 };
constexpr prefill_cfg CFG_OVERLAP = { true, 2, 3, 1, 0, 0, 0, 1, 0 };
/* The serial path at few (sequence, head) pairs: pairr at rule 3's width (PAIRR_MAX_PAIRS). */
constexpr prefill_cfg CFG_SERIAL_PAIRR = { false, 2, 4, 3, 0, 5, 0, 1, 0 };

/* Where the overlapped path is taken by default (K3_KDA_PREFILL unset or auto; see
 * prefill_config() for the default's history): the shapes where it won
 * against the serial path on the H200 (2026-12-02l call 2, one process, each point twice, FP32 /
 * BF16 state; bench/results/k3-kernels-h200-2026-12-02l/): one sequence at H = 96, T = 4K 467-485
 * / 474-495 us against 558-563 / 560-575 serial, T = 16K 1.82-1.92 / 1.85-1.92 ms against
 * 2.17-2.29 / 2.26-2.32 (T = 1K: 148-150 / 159 against 160-161 / 160-162 us, too close for a
 * default). It lost at every T of H = 12, 24, 48 (e.g. 16K, H = 12: 1.12-1.13 against 0.95-0.96
 * ms: the recurrent kernel's flag acquire each step), and with 4 x 4K at H = 96 the host check
 * takes the serial path. T > 16K and H other than 12-96 were not measured; the per-chunk
 * pipeline at T > 16K is the same as at 16K. Two cheaper flag waits for the recurrent kernel
 * (a relaxed poll a step ahead with fence.acq_rel.gpu once seen set: MEMBAR.ALL.GPU in SASS;
 * the acquire load issued a step ahead) both ran slower than this one and were removed.
 *
 * Safety. The recurrent CTAs spin on flags only intra CTAs set, and intra CTAs never wait on
 * anything, so the pair finishes whenever at least one intra CTA can run while the recurrent
 * CTAs are resident. What guarantees that within this process: the intra kernel is enqueued
 * first; the host's check (launch_recurrent() with `query`) takes the path only when the
 * recurrent grid, at one CTA an SM of margin, cannot fill any SM past the point where an intra
 * CTA of the chosen version still fits beside it (registers, shared memory, threads, CTA slots,
 * from the compiled kernels' attributes), and both kernels ask for the largest shared-memory
 * carveout so that the driver's carveout cannot undo that arithmetic (the deadlock of
 * 2026-12-01t); under stream capture (no side stream) and past 65535 chunks the path is not
 * taken. What does not guarantee it: other work on the GPU, in this process (a kernel on
 * another stream launched between the two) or in another process (MPS clients, green contexts,
 * another context time-slicing the SMs), can hold the room the arithmetic counted on; the
 * intra kernel then still runs on the SMs it gets (every intra CTA is independent), so a wait
 * ends once that work leaves room, and a wait that lasts 10 s traps (a launch error the caller
 * sees, not a hung GPU). K3_KDA_PREFILL=serial turns the path off. */
bool overlap_by_default(int n_seqs, int heads, int64_t total_tokens)
{
	return n_seqs == 1 && heads == 96 && total_tokens >= 4096;
}

/* Where the serial path takes the pair kernel with its decays in registers (pairr, round 05c)
 * by default (K3_KDA_PREFILL and K3_KDA_RECUR unset or auto, the serial path the default's own
 * choice): at most this many (sequence, head) pairs, at the width rule 3 of recurrent_warps()
 * picks. Measured on an H100 in two calls (2026-12-05, 13:04 and 13:09 UTC; bench/results/
 * k3-kernels-h100-2026-12-05/ call05g, call05h), one sequence, T = 1K / 4K / 16K, FP32 and BF16
 * state, against the chunk kernel at its rule-2 width: H = 12 -13 to -17 %, H = 24 -9 to -13 %,
 * H = 48 at 4 state warps (rule 3's choice) -2 to -5 %, H = 96 (T = 1K; longer prompts take the
 * overlapped path) -4 %; with 4 x 4K at H = 96 (384 pairs) pairr at any width was 3-8 % slower,
 * so past this bound the chunk kernel stays. Held out on this build (call05i, 13:28 UTC: 1, 2, 4
 * and 8 sequences a point, 12-768 pairs): 0.83-0.998x the chunk kernel at 54 of the 56 points
 * inside the bound (the two others, 8 x 128 and 4 x 256 tokens at H = 12, 1.016 and 1.005), and
 * pairr forced past it 1.008-1.27x at 37 of 40 points (0.98 at 3); again at 14:10 (call05j):
 * 55 of 56 inside (1.004 at one), 39 of 40 past it.
 * pairr's results are not the chunk kernel's bit for bit (two chunks a step, the same float64
 * reference and tolerances: test_prefill_pair, test_prefill_default_path). A forced path
 * (K3_KDA_PREFILL=serial | overlap) and the serial fallback of an overlapped default (stream
 * capture) keep the chunk kernel, so each agrees with the other bit for bit as before. */
constexpr int64_t PAIRR_MAX_PAIRS = 96;

/* K3_KDA_RECUR's values: prefill_cfg.pair's index, "auto" (7: the default's choice), "split" (8). */
constexpr const char *RECUR_NAMES[] = { "chunk", "pair", "pair136", "pair3", "pairnx", "pairr", "pairr3", "auto", "split" };
constexpr int RECUR_AUTO = 7, RECUR_SPLIT = 8;

/* The index of K3_KDA_* knob `name`'s value among `choices` (n of them), `dflt` where it is unset
 * or empty, or -1 with a message on stderr naming the knob, its value and the choices (a typo in
 * an A/B must not run the default unnoticed). */
int knob(const char *name, const char *const *choices, int n, int dflt)
{
	const char *e = getenv(name);
	if (!e || !*e)
		return dflt;
	for (int i = 0; i < n; i++)
		if (!strcmp(e, choices[i]))
			return i;
	fprintf(stderr, "kda_prefill: %s=%s is not one of", name, e);
	for (int i = 0; i < n; i++)
		fprintf(stderr, " %s", choices[i]);
	fprintf(stderr, "\n");
	return -1;
}

/* Integer knob `name` in [0, most]: `dflt` where it is unset or empty, or -1 with a message on
 * stderr naming the knob and its value (anything but a plain decimal in range). */
int int_knob(const char *name, int most, int dflt)
{
	const char *e = getenv(name);
	if (!e || !*e)
		return dflt;
	char *end = nullptr;
	errno = 0;
	const long v = *e >= '0' && *e <= '9' ? strtol(e, &end, 10) : -1;
	if (errno || v < 0 || *end || v > most) {
		fprintf(stderr, "kda_prefill: %s=%s is not a whole number from 0 to %d\n", name, e, most);
		return -1;
	}
	return (int)v;
}

/* The configuration asked for, for N sequences of T tokens in all at H heads: K3_KDA_PREFILL=
 * overlap | serial forces one; =auto or unset takes overlap_by_default(). History: the rule was
 * the default in 2026-12-02l, serial again in 2026-12-02n (the K3 slice's kda_chunk class then ran
 * 24-31 % under the simulator, whose KDA prefill cost added the two kernels), the rule again in
 * 2026-12-02r, now that the model costs the overlapped pair (sim/cost.c, hw.h kda_overlap_*:
 * round 18's slices re-validated at -5 / -9 %). `allow_overlap` false: the serial one whatever
 * K3_KDA_PREFILL says. 0, or -EINVAL where a knob has a value not listed in kda_prefill()'s
 * comment (the message on stderr). */
int prefill_config(int n_seqs, int heads, int64_t total_tokens, prefill_cfg *out, bool allow_overlap = true)
{
	static const char *const PATHS[] = { "auto", "overlap", "serial" };
	static const char *const INTRA[] = { "v1", "v2", "v3" };
	static const char *const STAGES[] = { "3", "4" };
	static const char *const WARPS[] = { "v1", "v2", "v3", "1", "2", "4", "8" };
	static const char *const WAITS[] = { "acquire", "spin", "batch" };
	static const char *const PF_MODES[] = { "line", "bulk" };
	const int path = knob("K3_KDA_PREFILL", PATHS, 3, 0), intra = knob("K3_KDA_INTRA", INTRA, 3, -2),
		  stages = knob("K3_KDA_RECUR_STAGES", STAGES, 2, -2), warps = knob("K3_KDA_RECUR_WARPS", WARPS, 7, -2),
		  wait = knob("K3_KDA_FLAG_WAIT", WAITS, 3, -2), recur = knob("K3_KDA_RECUR", RECUR_NAMES, 9, RECUR_AUTO),
		  pf = int_knob("K3_KDA_INTRA_PF", 1 << 20, 0), pf_mode = knob("K3_KDA_INTRA_PF_MODE", PF_MODES, 2, 0),
		  split_opt = int_knob("K3_KDA_SPLIT_OPT", 63, 0);
	if (path < 0 || intra == -1 || stages == -1 || warps == -1 || wait == -1 || recur < 0 || pf < 0 ||
	    pf_mode < 0 || split_opt < 0)
		return -EINVAL;
	const bool by_default = overlap_by_default(n_seqs, heads, total_tokens);
	const bool want = path == 1 ? true : path == 2 ? false : by_default;
	prefill_cfg c = allow_overlap && want ? CFG_OVERLAP : CFG_SERIAL;
	if (recur == RECUR_AUTO && path == 0 && !want && (int64_t)n_seqs * heads <= PAIRR_MAX_PAIRS)
		c = CFG_SERIAL_PAIRR; /* PAIRR_MAX_PAIRS */
	if (intra >= 0)
		c.intra = 1 + intra;
	if (stages >= 0)
		c.stages = 3 + stages;
	if (warps >= 0)
		c.rule = warps < 3 ? 1 + warps : 10 + atoi(WARPS[warps]);
	if (wait >= 0)
		c.fw = wait;
	if (recur != RECUR_AUTO)
		c.pair = recur;
	c.pf = c.intra >= 2 ? pf : 0;
	if (c.pair == RECUR_SPLIT) { /* the intra kernel's SPLIT instance: 4 (v2's), 5 (v3's) */
		if (c.intra == 1) {
			fprintf(stderr, "kda_prefill: K3_KDA_RECUR=split needs K3_KDA_INTRA=v2 or v3\n");
			return -EINVAL;
		}
		c.intra += 2;
		c.pf = 0;
		c.split_opt = split_opt;
	}
	c.pf_mode = 1 + pf_mode;
	*out = c;
	return 0;
}

/* Version v's kernel; pf: its prefetching instance (intra_params.pf), 1 line or 2 bulk. */
const void *intra_kernel(int v, int pf = 0)
{
	if (v == 1)
		return (const void *)kda_chunk_intra_v1_kernel;
	if (v == 4 || v == 5) /* the SPLIT instances (K3_KDA_RECUR=split) */
		return v == 5 ? (const void *)kda_chunk_intra_kernel<true, 0, true>
			      : (const void *)kda_chunk_intra_kernel<false, 0, true>;
	if (pf == 1)
		return v == 3 ? (const void *)kda_chunk_intra_kernel<true, 1> : (const void *)kda_chunk_intra_kernel<false, 1>;
	if (pf == 2)
		return v == 3 ? (const void *)kda_chunk_intra_kernel<true, 2> : (const void *)kda_chunk_intra_kernel<false, 2>;
	return v == 3 ? (const void *)kda_chunk_intra_kernel<true> : (const void *)kda_chunk_intra_kernel<false>;
}

/* `grid`: chunks x heads in either order; pf_mode: with ip.pf > 0, 1 line, 2 bulk prefetches. */
int launch_intra(const intra_params &ip, int v, int pf_mode, dim3 grid, cudaStream_t stream)
{
	/* Overlapped: see launch_recurrent() (both kernels ask for the same carveout). */
	const int pf = v >= 2 && ip.pf > 0 ? pf_mode : 0;
	if (ip.ready && cudaFuncSetAttribute(intra_kernel(v, pf), cudaFuncAttributePreferredSharedMemoryCarveout,
					     cudaSharedmemCarveoutMaxShared) != cudaSuccess)
		return -EIO;
	if (v == 1)
		kda_chunk_intra_v1_kernel<<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else if (v == 4) /* SPLIT (K3_KDA_RECUR=split) */
		kda_chunk_intra_kernel<false, 0, true><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else if (v == 5)
		kda_chunk_intra_kernel<true, 0, true><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else if (v == 3 && pf == 1)
		kda_chunk_intra_kernel<true, 1><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else if (v == 3 && pf == 2)
		kda_chunk_intra_kernel<true, 2><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else if (v == 3)
		kda_chunk_intra_kernel<true><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else if (pf == 1)
		kda_chunk_intra_kernel<false, 1><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else if (pf == 2)
		kda_chunk_intra_kernel<false, 2><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	else
		kda_chunk_intra_kernel<false><<<grid, INTRA_THREADS, 0, stream>>>(ip);
	return kda_launch_status();
}

/* What one CTA of a kernel holds on an SM. */
struct cta_footprint {
	int regs, smem, threads;
};

/* Registers are allocated per warp in units of 256 (8 per thread); shared
 * memory per CTA carries the driver's reserved 1 KiB (on sm_90). */
int footprint_of(const void *kern, int threads, int dyn_smem, int reserved, cta_footprint *f)
{
	cudaFuncAttributes at;
	if (cudaFuncGetAttributes(&at, kern) != cudaSuccess)
		return -EIO;
	f->regs = (threads / 32) * ((at.numRegs + 7) / 8 * 8) * 32;
	f->smem = (int)at.sharedSizeBytes + dyn_smem + reserved;
	f->threads = threads;
	return 0;
}

/* The recurrent kernel's instance, threads and dynamic shared memory a CTA: the chunk kernel
 * <StateT, WARPS, STAGES, FW> (PAIR 0) or the pair kernel: 1 pair, 2 pair136 (bounded), 3 pair3
 * (3 pairs in flight), 4 pairnx (no cross terms: a measurement row, results wrong), 5 pairr (the
 * decays in the state warps' registers: CROSS_REG), 6 pairr3 (pairr, 3 pairs in flight); or
 * (RECUR_SPLIT) the split kernel <StateT, WARPS, STAGES> (no flag wait of its own: FW unused). */
template <typename StateT, int WARPS, int STAGES, int FW, int PAIR>
struct recur_kernel {
	static constexpr bool split = PAIR == RECUR_SPLIT, pair = PAIR != 0 && !split;
	static constexpr int pst = PAIR == 3 || PAIR == 6 ? 3 : PAIR_STAGES;
	static constexpr int threads = (WARPS + (pair ? 1 : 0)) * 32;
	static constexpr int smem = pair    ? pst * pair_stage_bytes(WARPS)
				    : split ? STAGES * split_stage_bytes(WARPS)
					    : STAGES * stage_bytes(WARPS);
	static void (*get())(recur_params)
	{
		if constexpr (split)
			return kda_chunk_recurrent_split_kernel<StateT, WARPS, STAGES>;
		else if constexpr (PAIR != 0)
			return kda_chunk_recurrent_pair_kernel<StateT, WARPS, PAIR == 2, pst,
							       PAIR == 4 ? CROSS_NONE : PAIR >= 5 ? CROSS_REG : CROSS_SMEM>;
		else
			return kda_chunk_recurrent_kernel<StateT, WARPS, STAGES, FW>;
	}
};

/* With `query` (overlapped path), nothing is launched and *ok says whether the recurrent grid
 * cannot take every SM's room for an intra CTA of version `intra` (its CTAs spin on records
 * the intra kernel has still to write). */
template <typename StateT, int WARPS, int STAGES, int FW, int PAIR = 0>
int launch_recurrent(const recur_params &rp, int intra, cudaStream_t stream, bool query, bool *ok)
{
	using K = recur_kernel<StateT, WARPS, STAGES, FW, PAIR>;
	const int smem = K::smem;
	auto kern = K::get();
	if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
		return -EIO;
	recur_params p = rp;
	p.slices = RECUR_MAX_WARPS / WARPS;
	dim3 grid((unsigned)(p.n_seqs * p.slices), (unsigned)p.heads);
	if (query) {
		int dev = 0, sms = 0, reg_sm = 0, smem_sm = 0, thr_sm = 0, blk_sm = 0, reserved = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&reg_sm, cudaDevAttrMaxRegistersPerMultiprocessor, dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&thr_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&blk_sm, cudaDevAttrMaxBlocksPerMultiprocessor, dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) != cudaSuccess)
			return -EIO;
		/* The intra kernel's PF instance (K3_KDA_INTRA_PF) has v2's (v3's) bounds and shared
		 * memory, so the plain instance stands for both. */
		cta_footprint r, in;
		if (footprint_of((const void *)kern, K::threads, smem, reserved, &r) ||
		    footprint_of(intra_kernel(intra), INTRA_THREADS, 0, reserved, &in))
			return -EIO;
		/* b: recurrent CTAs on one SM that leave no room for one intra CTA. */
		int b = 0;
		while (b < blk_sm && (b + 1) * r.regs + in.regs <= reg_sm && (b + 1) * r.smem + in.smem <= smem_sm &&
		       (b + 1) * r.threads + in.threads <= thr_sm && b + 2 <= blk_sm)
			b++;
		b++;
		/* Some SM keeps room for an intra CTA while fewer than b recurrent CTAs sit on it:
		 * guaranteed below b x SMs CTAs; one CTA an SM of margin (shared-memory carveouts). */
		*ok = (int64_t)grid.x * grid.y <= (int64_t)(b - 1) * sms;
		return 0;
	}
	/* Overlapped: the SMs that take a recurrent CTA keep the largest shared-memory carveout, so
	 * that an intra CTA still fits beside it whatever carveout the driver would pick. */
	if (p.ready && cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
					    cudaSharedmemCarveoutMaxShared) != cudaSuccess)
		return -EIO;
	kern<<<grid, K::threads, smem, stream>>>(p);
	return kda_launch_status();
}

template <typename StateT, int STAGES, int FW, int PAIR = 0>
int launch_recurrent_for(const recur_params &rp, int warps, int intra, cudaStream_t stream, bool query,
			 bool *ok)
{
	switch (warps) {
	case 8:
		return launch_recurrent<StateT, 8, STAGES, FW, PAIR>(rp, intra, stream, query, ok);
	case 4:
		return launch_recurrent<StateT, 4, STAGES, FW, PAIR>(rp, intra, stream, query, ok);
	case 2:
		return launch_recurrent<StateT, 2, STAGES, FW, PAIR>(rp, intra, stream, query, ok);
	default:
		return launch_recurrent<StateT, 1, STAGES, FW, PAIR>(rp, intra, stream, query, ok);
	}
}

/* The flag wait applies to the overlapped path only (serial launches have no flags): FW 0
 * there, so that the serial path's kernels stay what they were. */
template <typename StateT, int STAGES>
int launch_recurrent_fb(const recur_params &rp, int warps, const prefill_cfg &c, cudaStream_t stream, bool query,
			bool *ok)
{
	if (c.fw == 1 && (rp.ready || query))
		return launch_recurrent_for<StateT, STAGES, 1>(rp, warps, c.intra, stream, query, ok);
	if (c.fw == 2 && (rp.ready || query))
		return launch_recurrent_for<StateT, STAGES, 2>(rp, warps, c.intra, stream, query, ok);
	return launch_recurrent_for<StateT, STAGES, 0>(rp, warps, c.intra, stream, query, ok);
}

/* The pair kernel PAIR (prefill_cfg.pair) for the state dtype: no stage count or flag wait of its
 * own (the template's 3 / 0 are not used); pairnx (4) has an FP32 instance only. */
template <int PAIR>
int launch_pair(const recur_params &rp, enum kda_dtype dt, int warps, int intra, cudaStream_t stream, bool query,
		bool *ok)
{
	if (dt == KDA_F32)
		return launch_recurrent_for<float, 3, 0, PAIR>(rp, warps, intra, stream, query, ok);
	if constexpr (PAIR == 4)
		return -EINVAL;
	else
		return launch_recurrent_for<uint16_t, 3, 0, PAIR>(rp, warps, intra, stream, query, ok);
}

int launch_recurrent_any(const recur_params &rp, enum kda_dtype dt, int warps, const prefill_cfg &c,
			 cudaStream_t stream, bool query = false, bool *ok = nullptr)
{
	switch (c.pair) {
	case 1: return launch_pair<1>(rp, dt, warps, c.intra, stream, query, ok);
	case 2: return launch_pair<2>(rp, dt, warps, c.intra, stream, query, ok);
	case 3: return launch_pair<3>(rp, dt, warps, c.intra, stream, query, ok);
	case 4: return launch_pair<4>(rp, dt, warps, c.intra, stream, query, ok);
	case 5: return launch_pair<5>(rp, dt, warps, c.intra, stream, query, ok);
	case 6: return launch_pair<6>(rp, dt, warps, c.intra, stream, query, ok);
	case RECUR_SPLIT:
		if (dt == KDA_F32)
			return c.stages == 3 ? launch_recurrent_for<float, 3, 0, RECUR_SPLIT>(rp, warps, c.intra, stream, query, ok)
					     : launch_recurrent_for<float, 4, 0, RECUR_SPLIT>(rp, warps, c.intra, stream, query, ok);
		return c.stages == 3 ? launch_recurrent_for<uint16_t, 3, 0, RECUR_SPLIT>(rp, warps, c.intra, stream, query, ok)
				     : launch_recurrent_for<uint16_t, 4, 0, RECUR_SPLIT>(rp, warps, c.intra, stream, query, ok);
	default: break; /* 0: the chunk kernel */
	}
	if (dt == KDA_F32)
		return c.stages == 3 ? launch_recurrent_fb<float, 3>(rp, warps, c, stream, query, ok)
				     : launch_recurrent_fb<float, 4>(rp, warps, c, stream, query, ok);
	return c.stages == 3 ? launch_recurrent_fb<uint16_t, 3>(rp, warps, c, stream, query, ok)
			     : launch_recurrent_fb<uint16_t, 4>(rp, warps, c, stream, query, ok);
}

/* The FP32-state instance of the recurrent kernel at `warps`, `stages` (or the pair kernel) with
 * its threads and dynamic shared memory. */
template <int STAGES, int PAIR>
const void *recurrent_kernel_of(int warps, int *threads, int *smem)
{
	switch (warps) {
	case 8:
		return *threads = recur_kernel<float, 8, STAGES, 0, PAIR>::threads,
		       *smem = recur_kernel<float, 8, STAGES, 0, PAIR>::smem,
		       (const void *)recur_kernel<float, 8, STAGES, 0, PAIR>::get();
	case 4:
		return *threads = recur_kernel<float, 4, STAGES, 0, PAIR>::threads,
		       *smem = recur_kernel<float, 4, STAGES, 0, PAIR>::smem,
		       (const void *)recur_kernel<float, 4, STAGES, 0, PAIR>::get();
	case 2:
		return *threads = recur_kernel<float, 2, STAGES, 0, PAIR>::threads,
		       *smem = recur_kernel<float, 2, STAGES, 0, PAIR>::smem,
		       (const void *)recur_kernel<float, 2, STAGES, 0, PAIR>::get();
	default:
		return *threads = recur_kernel<float, 1, STAGES, 0, PAIR>::threads,
		       *smem = recur_kernel<float, 1, STAGES, 0, PAIR>::smem,
		       (const void *)recur_kernel<float, 1, STAGES, 0, PAIR>::get();
	}
}

/* Recurrent CTAs of `warps` warps and `stages` stages (or of the pair kernel) one SM holds at
 * once (0 on error); queried once per shape (on the first device asked: one kind of GPU per
 * process assumed). */
int recurrent_ctas_per_sm_query(int warps, int stages, int pair)
{
	int threads = 0, dyn = 0;
	const void *kern = pair == 1   ? recurrent_kernel_of<3, 1>(warps, &threads, &dyn)
			   : pair == 2 ? recurrent_kernel_of<3, 2>(warps, &threads, &dyn)
			   : pair == 3 ? recurrent_kernel_of<3, 3>(warps, &threads, &dyn)
			   : pair == 4 ? recurrent_kernel_of<3, 4>(warps, &threads, &dyn)
			   : pair == 5 ? recurrent_kernel_of<3, 5>(warps, &threads, &dyn)
			   : pair == 6 ? recurrent_kernel_of<3, 6>(warps, &threads, &dyn)
			   : pair == RECUR_SPLIT ? (stages == 3 ? recurrent_kernel_of<3, RECUR_SPLIT>(warps, &threads, &dyn)
							      : recurrent_kernel_of<4, RECUR_SPLIT>(warps, &threads, &dyn))
			   : stages == 3 ? recurrent_kernel_of<3, 0>(warps, &threads, &dyn)
					 : recurrent_kernel_of<4, 0>(warps, &threads, &dyn);
	int dev = 0, reg_sm = 0, smem_sm = 0, thr_sm = 0, blk_sm = 0, reserved = 0;
	cta_footprint f;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&reg_sm, cudaDevAttrMaxRegistersPerMultiprocessor, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&thr_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&blk_sm, cudaDevAttrMaxBlocksPerMultiprocessor, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) != cudaSuccess ||
	    footprint_of(kern, threads, dyn, reserved, &f) || f.regs <= 0 || f.smem <= 0)
		return 0;
	return std::min(std::min(reg_sm / f.regs, smem_sm / f.smem), std::min(thr_sm / f.threads, blk_sm));
}

int recurrent_ctas_per_sm(int warps, int stages, int pair)
{
	static std::atomic<int> cache[11][RECUR_MAX_WARPS + 1]; /* the chunk kernel's 2 stage counts, pair 1-6, split's 2 */
	std::atomic<int> &slot = cache[pair == RECUR_SPLIT ? (stages == 3 ? 9 : 10) : pair ? 1 + pair : stages == 3 ? 0 : 1][warps];
	int n = slot.load(std::memory_order_relaxed);
	if (n <= 0) {
		n = recurrent_ctas_per_sm_query(warps, stages, pair);
		slot.store(n, std::memory_order_relaxed);
	}
	return n;
}

/* Rule 3, the pair kernel's width (PAIRR_MAX_PAIRS): each CTA is `w` state warps and one cross
 * warp, and every CTA of a head makes the same cross terms, so the busiest SM carries
 * ceil(CTAs / SMs) x (w + 1) warps' steps; the w of 1, 2, 4, 8 with the fewest, ties to the
 * fewer warps (more CTAs). On 132 SMs: H = 12 -> 1, 24 -> 2, 48 -> 4, 96 -> 2 (tied with 8),
 * each the fastest width measured there (H100, 2026-12-05 call05h: serpr / serpr2 / serpr4). */
int pair_warps(int64_t pairs, int sms)
{
	int best = 1;
	int64_t best_load = INT64_MAX;
	for (int w = 1; w <= RECUR_MAX_WARPS; w *= 2) {
		const int64_t ctas = pairs * (RECUR_MAX_WARPS / w), load = (ctas + sms - 1) / sms * (w + 1);
		if (load < best_load)
			best = w, best_load = load;
	}
	return best;
}

/* Warps per recurrent CTA (16 state rows each; 8 / warps CTAs per (sequence, head)).
 * First the most warps that still give every SM a CTA (as before 2026-12-01r); then (rule 2),
 * while some SM holds two or more CTAs, halve the warps a CTA (twice the CTAs) while that
 * lowers the warps the busiest SM holds, ceil(CTAs / SMs) x warps (each warp's 50 MMAs a chunk
 * share its SM's tensor cores; a step waits for the slowest SM), and the grid stays one wave.
 * T = 16K, H = 96: 4 warps (192 CTAs, 8 warps on 60 SMs) -> 2 warps (384 CTAs, 6 warps at
 * most): 1.01 -> 0.96-0.97 ms on the H200; 4 x 4K: 8 warps (unchanged). More CTAs a head
 * stream the chunk's shared record more times through L2.
 * Rule 1 is the first step alone (the overlapped path's: rule 2's 384 CTAs at H = 96 leave the
 * intra kernel too little room, 2.91 ms against 1.82 on the H200). */
int recurrent_warps(int n_seqs, int heads, int sms, const prefill_cfg &c)
{
	if (c.rule > 10)
		return c.rule - 10;
	const int64_t pairs = (int64_t)n_seqs * heads;
	if (c.rule == 3) /* the pair kernel: see pair_warps() */
		return pair_warps(pairs, sms);
	int w = RECUR_MAX_WARPS;
	while (w > 1 && pairs * (RECUR_MAX_WARPS / w) < sms)
		w /= 2;
	while (c.rule == 2 && w > 1 && pairs * (RECUR_MAX_WARPS / w) > sms) {
		const int64_t ctas = pairs * (RECUR_MAX_WARPS / w), load = (ctas + sms - 1) / sms * w;
		const int64_t ctas2 = 2 * ctas, load2 = (ctas2 + sms - 1) / sms * (w / 2);
		if (load2 >= load || ctas2 > (int64_t)recurrent_ctas_per_sm(w / 2, c.stages, c.pair) * sms)
			break;
		w /= 2;
	}
	return w;
}

/* Forks `side` off `stream`, launches the intra kernel on `stream` first (it
 * never waits, so any scheduling order finishes) and the recurrent kernel on
 * `side`, and joins `side` back into `stream`. */
int launch_overlapped(const intra_params &ip, unsigned nmax, const recur_params &rp, enum kda_dtype dt,
		      int warps, const prefill_cfg &c, cudaEvent_t split_event, cudaStream_t stream,
		      cudaStream_t side, cudaEvent_t fork, cudaEvent_t join)
{
	if (cudaEventRecord(fork, stream) != cudaSuccess || cudaStreamWaitEvent(side, fork, 0) != cudaSuccess)
		return -EIO;
	dim3 grid((unsigned)ip.heads, nmax);
	if (launch_intra(ip, c.intra, c.pf_mode, grid, stream))
		return -EIO;
	if (split_event && cudaEventRecord(split_event, stream) != cudaSuccess)
		return -EIO;
	int rc = launch_recurrent_any(rp, dt, warps, c, side);
	if (rc)
		return rc;
	if (cudaEventRecord(join, side) != cudaSuccess || cudaStreamWaitEvent(stream, join, 0) != cudaSuccess)
		return -EIO;
	return 0;
}

size_t align256(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

size_t max_chunks(int n_seqs, int64_t total_tokens)
{
	return (size_t)(total_tokens / CH) + (size_t)n_seqs;
}

/* Workspace: chunk offsets [N + 1], the chunk table [max chunks], ready flags
 * [max chunks][H] (overlapped path), records [max chunks][H]; each part 256-byte aligned. */
size_t flags_bytes(int n_seqs, int heads, int64_t total_tokens)
{
	return align256(max_chunks(n_seqs, total_tokens) * (size_t)heads * sizeof(int32_t));
}

size_t head_bytes(int n_seqs, int64_t total_tokens) /* offsets and chunk table */
{
	return align256((size_t)(n_seqs + 1) * sizeof(int32_t)) +
	       align256(max_chunks(n_seqs, total_tokens) * sizeof(int2));
}

} // namespace

extern "C" size_t kda_prefill_workspace_bytes(int n_seqs, int heads, int64_t total_tokens)
{
	if (n_seqs < 1 || heads < 1 || total_tokens < 0)
		return 0;
	return head_bytes(n_seqs, total_tokens) + flags_bytes(n_seqs, heads, total_tokens) +
	       max_chunks(n_seqs, total_tokens) * (size_t)heads * REC_BYTES;
}

namespace {

/* The arguments' checks; 0 or -EINVAL. */
int check_args(const struct kda_prefill_args *a)
{
	if (!a || a->n_seqs < 1 || a->heads < 1 || a->heads > 65535 || a->total_tokens < 0 ||
	    a->total_tokens >= ((int64_t)1 << 31))
		return -EINVAL;
	if (a->state_dtype != KDA_F32 && a->state_dtype != KDA_BF16)
		return -EINVAL;
	if (!a->cu_seqlens || !a->q || !a->k || !a->v || !a->g_raw || !a->beta_raw || !a->out ||
	    !a->workspace || ((uintptr_t)a->workspace & 15))
		return -EINVAL;
	const size_t nmax = max_chunks(a->n_seqs, a->total_tokens);
	if (nmax * (size_t)a->heads > (size_t)1 << 40 || nmax >= (size_t)1 << 31)
		return -EINVAL;
	return 0;
}

/* How kda_prefill() runs `a` on `stream` now: the configuration, the recurrent CTAs' width and
 * whether the overlapped path is taken (asked for, by K3_KDA_PREFILL or overlap_by_default(),
 * and not ruled out: past 65535 chunks, under stream capture, or where the recurrent CTAs could
 * take every SM's room for an intra CTA; then the serial configuration). 0, -EINVAL (a K3_KDA_*
 * knob's value not known: prefill_config()) or -EIO. */
int plan_prefill(const struct kda_prefill_args *a, cudaStream_t stream, prefill_cfg *cfg, int *warps,
		 bool *overlap)
{
	const size_t nmax = max_chunks(a->n_seqs, a->total_tokens);
	int dev = 0, sms = 132;
	if (cudaGetDevice(&dev) == cudaSuccess)
		cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	if (prefill_config(a->n_seqs, a->heads, a->total_tokens, cfg))
		return -EINVAL;
	*warps = recurrent_warps(a->n_seqs, a->heads, sms, *cfg);
	bool ov = cfg->overlap && nmax > 0 && nmax <= 65535;
	if (ov) {
		cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
		if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess)
			return -EIO;
		ov = cs == cudaStreamCaptureStatusNone;
	}
	if (ov) {
		recur_params rp = {};
		rp.n_seqs = a->n_seqs;
		rp.heads = a->heads;
		if (launch_recurrent_any(rp, a->state_dtype, *warps, *cfg, stream, true, &ov))
			return -EIO;
	}
	if (cfg->overlap && !ov) { /* fell back: the serial path's configuration */
		if (prefill_config(a->n_seqs, a->heads, a->total_tokens, cfg, false))
			return -EINVAL;
		*warps = recurrent_warps(a->n_seqs, a->heads, sms, *cfg);
	}
	*overlap = ov;
	return 0;
}

} // namespace

extern "C" int kda_prefill_plan(const struct kda_prefill_args *a, cudaStream_t stream, struct kda_prefill_plan *plan)
{
	if (check_args(a) || !plan)
		return -EINVAL;
	prefill_cfg cfg;
	int warps = 0;
	bool overlap = false;
	const int prc = plan_prefill(a, stream, &cfg, &warps, &overlap);
	if (prc)
		return prc;
	plan->overlap = overlap ? 1 : 0;
	plan->recur_warps = warps;
	plan->recur = cfg.pair >= 0 && cfg.pair < 9 && cfg.pair != RECUR_AUTO ? RECUR_NAMES[cfg.pair] : "?";
	return 0;
}

extern "C" int kda_prefill_path(const struct kda_prefill_args *a, cudaStream_t stream)
{
	struct kda_prefill_plan plan;
	const int rc = kda_prefill_plan(a, stream, &plan);
	return rc ? rc : plan.overlap;
}

extern "C" int kda_prefill(const struct kda_prefill_args *a, cudaStream_t stream)
{
	if (check_args(a))
		return -EINVAL;
	const size_t nmax = max_chunks(a->n_seqs, a->total_tokens);

	int32_t *off = static_cast<int32_t *>(a->workspace);
	int2 *chunk = reinterpret_cast<int2 *>(static_cast<uint8_t *>(a->workspace) +
					       align256((size_t)(a->n_seqs + 1) * sizeof(int32_t)));
	int32_t *ready = reinterpret_cast<int32_t *>(static_cast<uint8_t *>(a->workspace) +
						     head_bytes(a->n_seqs, a->total_tokens));
	uint8_t *rec = reinterpret_cast<uint8_t *>(ready) + flags_bytes(a->n_seqs, a->heads, a->total_tokens);

	/* Rows per recurrent CTA: see recurrent_warps(); the path: plan_prefill(). */
	prefill_cfg cfg;
	int warps = 0;
	bool overlap = false;
	const int prc = plan_prefill(a, stream, &cfg, &warps, &overlap);
	if (prc)
		return prc;

	chunk_offsets_kernel<<<1, OFFSETS_THREADS, 0, stream>>>(a->cu_seqlens, a->n_seqs, off, chunk,
								 (int)nmax);
	if (kda_launch_status())
		return -EIO;

	intra_params ip = {};
	ip.n_seqs = a->n_seqs;
	ip.heads = a->heads;
	ip.scale = a->scale;
	ip.cu = a->cu_seqlens;
	ip.off = off;
	ip.chunk = chunk;
	ip.total = (int)a->total_tokens;
	ip.q = a->q, ip.k = a->k, ip.v = a->v, ip.g_raw = a->g_raw, ip.beta_raw = a->beta_raw;
	ip.rec = rec;
	ip.pf = cfg.pf;

	recur_params rp = {};
	rp.n_seqs = a->n_seqs;
	rp.heads = a->heads;
	rp.cu = a->cu_seqlens;
	rp.off = off;
	rp.slot = a->state_slot;
	rp.rec = rec;
	rp.s0 = a->initial_state;
	rp.s1 = a->final_state;
	rp.out = a->out;
	rp.v = a->v;
	rp.split_opt = cfg.split_opt;

	if (overlap) {
		ip.ready = ready;
		rp.ready = ready;
		if (cudaMemsetAsync(ready, 0, nmax * (size_t)a->heads * sizeof(int32_t), stream) != cudaSuccess)
			return -EIO;
		int least = 0, greatest = 0, rc = -EIO;
		cudaStream_t side = nullptr;
		cudaEvent_t fork = nullptr, join = nullptr;
		if (cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess &&
		    cudaStreamCreateWithPriority(&side, cudaStreamNonBlocking, greatest) == cudaSuccess &&
		    cudaEventCreateWithFlags(&fork, cudaEventDisableTiming) == cudaSuccess &&
		    cudaEventCreateWithFlags(&join, cudaEventDisableTiming) == cudaSuccess)
			rc = launch_overlapped(ip, (unsigned)nmax, rp, a->state_dtype, warps, cfg, a->split_event,
					       stream, side, fork, join);
		/* Released by the runtime once their work is done. */
		if (join)
			cudaEventDestroy(join);
		if (fork)
			cudaEventDestroy(fork);
		if (side)
			cudaStreamDestroy(side);
		return rc;
	}

	if (nmax > 0) {
		dim3 grid((unsigned)nmax, (unsigned)a->heads);
		if (launch_intra(ip, cfg.intra, cfg.pf_mode, grid, stream))
			return -EIO;
	}
	if (a->split_event && cudaEventRecord(a->split_event, stream) != cudaSuccess)
		return -EIO;
	return launch_recurrent_any(rp, a->state_dtype, warps, cfg, stream);
}
