/* SPDX-License-Identifier: MIT */
/*
 * Fused KDA decode: see kda_decode.h.
 *
 * One CTA per (request, head), the head's state staged in shared memory:
 * one thread issues bulk copies (the copy engine, cp.async.bulk on an
 * mbarrier) of the whole 128 x 128 state in DEC_CHUNKS row blocks as soon as
 * the slot is known, the threads compute ShortConv, norms and gates while
 * the bytes arrive, then each row block is updated from shared memory and
 * written straight to its slot with 16-byte stores (one pass: read once,
 * write once). The registers hold only a few rows at a time, so the number
 * of CTAs per SM is set by shared memory (FP32: 3, BF16: 6), not by the
 * 64 state registers per thread of kda_step.cuh's kernel (2 CTAs per SM),
 * and the state reads of several CTAs are in flight at once.
 *
 * KDA_DECODE_KERNEL (environment, read at each call; see dec_variant()) selects
 * another variant for side-by-side measurements, `step` kda_step.cuh's
 * register-resident kernel, `ring` a persistent kernel that streams the
 * states of many (request, head) items through a ring of shared-memory
 * stages (kda_decode_ring).
 */
#include "kda_decode.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "kda_step.cuh"

namespace {

constexpr int DEC_D = KDA_HEAD_DIM;
constexpr int DEC_LANES = 16; /* lanes per state row, 8 k values each */
constexpr int DEC_CHUNKS = 4; /* row blocks of the state, one mbarrier each */
constexpr int DEC_CHUNK_ROWS = DEC_D / DEC_CHUNKS;

struct __align__(16) dec_smem {
	float q[DEC_D], k[DEC_D], alpha[DEC_D], v[DEC_D], o[DEC_D];
	float red[DEC_D / 32][3]; /* warps of the channel threads: sum q^2, k^2, q.k */
	float ored[8];            /* per warp: sum o^2 (at most 8 warps) */
	uint64_t mbar[DEC_CHUNKS];
	float beta;
	float part; /* this CTA's sum o^2 (read by the cluster peer) */
};

struct dec_params {
	int heads;
	float scale, norm_eps;
	const uint16_t *x, *g_raw, *beta_raw, *gate_raw, *conv_w, *norm_w;
	const int32_t *slot;
	void *state;
	uint16_t *conv_state, *out;
};

/* ShortConv of one channel: taps w[0..3], history h[0..2] (oldest first), input x. */
__device__ __forceinline__ float dec_conv(const float w[4], const float hv[3], float x)
{
	const float acc = w[0] * hv[0] + w[1] * hv[1] + w[2] * hv[2] + w[3] * x;
	return acc * sigmoidf_(acc);
}

/* CTAs per SM that shared memory allows (FP32 68 KiB, BF16 36 KiB each); the
 * register budget must not allow fewer. */
template <typename StateT, int NT, int SPLIT, int HPC>
constexpr int dec_min_ctas()
{
	/* Shared memory allows 3 (FP32) / 6 (BF16) whole-head CTAs per SM, twice
	 * as many half-head ones; at most 8 CTAs of 128 threads (64 registers). */
	return ((sizeof(StateT) == 4 ? 384 : 768) * SPLIT < 1024 ? (sizeof(StateT) == 4 ? 384 : 768) * SPLIT
								   : 1024) / (NT / HPC) / HPC;
}

/* Threads of one head-group (NT / HPC of them) sync among themselves. */
template <int HPC>
__device__ __forceinline__ void dec_sync(int hh, int n)
{
	if (HPC == 1) {
		__syncthreads();
	} else {
		if (hh == 0)
			asm volatile("bar.sync 1, %0;\n" ::"r"(n) : "memory");
		else
			asm volatile("bar.sync 2, %0;\n" ::"r"(n) : "memory");
	}
}

/* SPLIT = 2: a cluster of 2 CTAs per (request, head), each owning 64 rows
 * (both run the cheap ShortConv and norms; the RMSNorm's sum of o^2 is
 * exchanged through distributed shared memory).
 * HPC = 2: two heads of one request per CTA (heads 2y and 2y + 1, adjacent in
 * the slot: one slot load, one CTA launch for 2 x 128 rows), each half of
 * the threads running the one-head algorithm with its own named barrier. */
template <typename StateT, int NT, int SPLIT, int HPC>
__global__ void __launch_bounds__(NT, dec_min_ctas<StateT, NT, SPLIT, HPC>()) kda_decode_kernel(const dec_params p)
{
	static_assert(HPC == 1 || SPLIT == 1, "two heads per CTA or two CTAs per head, not both");
	constexpr int NTH = NT / HPC; /* threads per head */
	constexpr int NRG = NTH / DEC_LANES;           /* row groups */
	constexpr int RPC = DEC_CHUNK_ROWS / NRG;     /* rows per thread per chunk */
	constexpr int ROWS = DEC_D / SPLIT;           /* rows of this CTA */
	constexpr int NCH = ROWS / DEC_CHUNK_ROWS;    /* chunks of this CTA */
	constexpr uint32_t CHUNK_BYTES = DEC_CHUNK_ROWS * DEC_D * sizeof(StateT);
	static_assert(NTH >= DEC_D && NTH % DEC_LANES == 0 && DEC_CHUNK_ROWS % NRG == 0, "shape");
	extern __shared__ __align__(128) unsigned char dyn[];
	const int hh = HPC == 1 ? 0 : (int)threadIdx.x / NTH;
	const int tid = HPC == 1 ? (int)threadIdx.x : (int)threadIdx.x % NTH;
	StateT *S = reinterpret_cast<StateT *>(dyn) + (size_t)hh * ROWS * DEC_D; /* this head's rows */
	dec_smem &sm = reinterpret_cast<dec_smem *>(dyn + sizeof(StateT) * HPC * ROWS * DEC_D)[hh];

	const int b = blockIdx.x / SPLIT, rank = blockIdx.x % SPLIT, h = blockIdx.y * HPC + hh;
	const int H = p.heads;
	const size_t C = (size_t)H * 3 * DEC_D;
	const int lane = tid & 31, warp = tid >> 5;
	const size_t slot = (size_t)p.slot[b];
	StateT *st = static_cast<StateT *>(p.state) + (slot * H + h) * DEC_D * DEC_D + (size_t)rank * ROWS * DEC_D;

	if (tid == 0) {
#pragma unroll
		for (int i = 0; i < NCH; i++)
			mbar_init(&sm.mbar[i], 1);
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#pragma unroll
		for (int i = 0; i < NCH; i++) {
			mbar_expect_tx(&sm.mbar[i], CHUNK_BYTES);
			bulk_g2s(S + (size_t)i * DEC_CHUNK_ROWS * DEC_D, st + (size_t)i * DEC_CHUNK_ROWS * DEC_D,
				 CHUNK_BYTES, &sm.mbar[i]);
		}
	}

	/* Channel c of q, k, v: ShortConv, SiLU, gates; conv state shifted in place
	 * (with SPLIT = 2 by rank 0, after both CTAs have read it). */
	float og = 0.0f;
	uint16_t *cs = p.conv_state + slot * KDA_CONV_STATE_TAPS * C;
	const size_t chan[3] = { (size_t)h * DEC_D + (tid & (DEC_D - 1)), (size_t)(H + h) * DEC_D + (tid & (DEC_D - 1)),
				 (size_t)(2 * H + h) * DEC_D + (tid & (DEC_D - 1)) };
	uint16_t xr[3], hr[3][KDA_CONV_STATE_TAPS];
	if (tid < DEC_D) {
		const int c = tid;
		const uint16_t *x = p.x + (size_t)b * C;
		const size_t gi = ((size_t)b * H + h) * DEC_D + c;
		/* Every load first (no store in between), then the arithmetic. */
		float w[3][KDA_CONV_TAPS];
#pragma unroll
		for (int j = 0; j < 3; j++) {
			xr[j] = x[chan[j]];
#pragma unroll
			for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
				hr[j][i] = cs[(size_t)i * C + chan[j]];
#pragma unroll
			for (int i = 0; i < KDA_CONV_TAPS; i++)
				w[j][i] = bf2f(p.conv_w[chan[j] * KDA_CONV_TAPS + i]);
		}
		const float graw = bf2f(p.g_raw[gi]), gate = bf2f(p.gate_raw[gi]);
		const float braw = bf2f(p.beta_raw[(size_t)b * H + h]);
		float y[3];
#pragma unroll
		for (int j = 0; j < 3; j++) {
			const float hv[3] = { bf2f(hr[j][0]), bf2f(hr[j][1]), bf2f(hr[j][2]) };
			y[j] = dec_conv(w[j], hv, bf2f(xr[j]));
			/* Shift the history in place, oldest tap first. */
			if (SPLIT == 1)
				cs[chan[j]] = hr[j][1], cs[C + chan[j]] = hr[j][2], cs[2 * C + chan[j]] = xr[j];
		}
		const float yq = y[0], yk = y[1], yv = y[2];
		sm.q[c] = yq, sm.k[c] = yk, sm.v[c] = yv;
		sm.alpha[c] = __expf((float)KDA_GATE_LOWER_BOUND * sigmoidf_(graw));
		og = sigmoidf_(gate);
		const float r0 = group_sum<32>(yq * yq), r1 = group_sum<32>(yk * yk), r2 = group_sum<32>(yq * yk);
		if (lane == 0)
			sm.red[warp][0] = r0, sm.red[warp][1] = r1, sm.red[warp][2] = r2;
		if (c == 0)
			sm.beta = sigmoidf_(braw);
	}
	dec_sync<HPC>(hh, NTH);
	float sq = 0.0f, sk = 0.0f, sqk = 0.0f;
#pragma unroll
	for (int i = 0; i < DEC_D / 32; i++)
		sq += sm.red[i][0], sk += sm.red[i][1], sqk += sm.red[i][2];
	const float beta = sm.beta;
	const float rq = rsqrtf(sq + (float)KDA_L2_EPS) * p.scale;
	const float rk = rsqrtf(sk + (float)KDA_L2_EPS);
	const float kq = sqk * rq * rk;
	const int sub = tid & (DEC_LANES - 1), rg = tid / DEC_LANES;
	float qh[STEP_KS], kh[STEP_KS], al[STEP_KS];
#pragma unroll
	for (int e = 0; e < STEP_KS; e += 4) {
		const int kp = step_layout<StateT>::k(sub, e);
		float4 a = *reinterpret_cast<const float4 *>(&sm.q[kp]);
		float4 bb = *reinterpret_cast<const float4 *>(&sm.k[kp]);
		float4 cc = *reinterpret_cast<const float4 *>(&sm.alpha[kp]);
		qh[e] = a.x * rq, qh[e + 1] = a.y * rq, qh[e + 2] = a.z * rq, qh[e + 3] = a.w * rq;
		kh[e] = bb.x * rk, kh[e + 1] = bb.y * rk, kh[e + 2] = bb.z * rk, kh[e + 3] = bb.w * rk;
		al[e] = cc.x, al[e + 1] = cc.y, al[e + 2] = cc.z, al[e + 3] = cc.w;
	}

	float osq = 0.0f;
#pragma unroll 1
	for (int ch = 0; ch < NCH; ch++) {
		mbar_wait(&sm.mbar[ch], 0);
		float m[RPC][STEP_KS];
#pragma unroll
		for (int i = 0; i < RPC; i++)
			step_layout<StateT>::load(S + (size_t)(ch * DEC_CHUNK_ROWS + rg + NRG * i) * DEC_D, sub, m[i]);
		/* This row step stands again in kda_decode_ring and kda_step.cuh: one shared helper made
		 * the BF16 decode 7-10 % slower on the H200 (same PTX instruction count, another order;
		 * bench/results/gpu-session-h200-2026-11-29-d/), so the copies stay. */
#pragma unroll
		for (int i = 0; i < RPC; i++) {
			const int lrow = ch * DEC_CHUNK_ROWS + rg + NRG * i, row = rank * ROWS + lrow;
			float a = 0.0f, cq = 0.0f;
#pragma unroll
			for (int e = 0; e < STEP_KS; e++) {
				m[i][e] *= al[e];
				a += m[i][e] * kh[e];
				cq += m[i][e] * qh[e];
			}
			a = group_sum<DEC_LANES>(a);
			cq = group_sum<DEC_LANES>(cq);
			const float coef = beta * (sm.v[row] - a);
#pragma unroll
			for (int e = 0; e < STEP_KS; e++)
				m[i][e] += coef * kh[e];
			step_layout<StateT>::store(st + (size_t)lrow * DEC_D, sub, m[i]);
			const float o = cq + coef * kq;
			if (sub == 0)
				sm.o[row] = o;
			osq += o * o;
		}
	}
	/* osq is equal on the 16 lanes of a row group; add the warp's two groups. */
	osq += __shfl_xor_sync(0xffffffffu, osq, 16);
	if (lane == 0)
		sm.ored[warp] = osq;
	dec_sync<HPC>(hh, NTH);
	float ss = 0.0f;
#pragma unroll
	for (int i = 0; i < NTH / 32; i++)
		ss += sm.ored[i];
	if (SPLIT == 2) {
		if (tid == 0)
			sm.part = ss;
		asm volatile("barrier.cluster.arrive.release.aligned;\n"
			     "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
		uint32_t peer;
		asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer) : "r"(smem_u32(&sm.part)), "r"(rank ^ 1));
		float pv;
		asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(pv) : "r"(peer) : "memory");
		ss += pv;
		if (rank == 0 && tid < DEC_D)
#pragma unroll
			for (int j = 0; j < 3; j++)
				cs[chan[j]] = hr[j][1], cs[C + chan[j]] = hr[j][2], cs[2 * C + chan[j]] = xr[j];
		/* The peer may leave once both have read. */
		asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
	}
	if (tid >= rank * ROWS && tid < rank * ROWS + ROWS) {
		const int c = tid;
		const float r = rsqrtf(ss * (1.0f / DEC_D) + p.norm_eps);
		const float y = sm.o[c] * r * bf2f(p.norm_w[c]) * og;
		p.out[((size_t)b * H + h) * DEC_D + c] = f2bf(y);
	}
	if (SPLIT == 2)
		asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/* ---- ring: persistent CTAs, state streamed through a ring of stages ------
 *
 * RING_CPS CTAs per SM, each looping over the (request, head) items
 * blockIdx.x, blockIdx.x + gridDim.x, ... One producer warp (lane 0) runs
 * ahead of the consumers: for each item it copies the small inputs (q, k, v
 * projections, conv history, conv taps, g_raw, gate_raw) into an input stage
 * and the 128 x 128 state, in 32-row chunks, into a ring of shared-memory
 * stages, each guarded by a full and an empty mbarrier. A stage is refilled
 * as soon as the 8 consumer warps have read its rows into registers, so the
 * copies of the next items stay in flight while the consumers run the fixed
 * phases (ShortConv, norms, the RMSNorm reduction) of this one, and no wave
 * tail: every CTA lives for the whole launch. Slots and beta_raw of 32
 * items are loaded at once by the producer's 32 lanes. Same arithmetic as
 * kda_decode_kernel (256 consumer threads, 16 lanes per row). How many of the stages are in
 * use (BF16 below 128 items a CTA: a quarter) and the other options: RF_*, ring_opt_default(). */
constexpr int RING_NC = 256;                 /* consumer threads */
constexpr int RING_THREADS = RING_NC + 32;   /* + producer warp */
constexpr int RING_ROWS = 32;                /* rows per chunk */
constexpr int RING_CHUNKS = DEC_D / RING_ROWS;
/* Input stage: x q, k, v [3][128], history [3][3][128], g_raw [128],
 * gate_raw [128] (BF16), then beta_raw as float and the slot. The conv taps
 * (the same for every request) are loaded by the consumers one item ahead. */
constexpr uint32_t RIN_X = 0, RIN_H = 768, RIN_G = 3072, RIN_GATE = 3328, RIN_TX = 3584;
constexpr uint32_t RIN_BYTES = 3600;

template <int CPS>
constexpr size_t ring_bytes()
{
	return CPS == 1 ? 192 * 1024 : 80 * 1024;
}
template <int CPS>
constexpr int ring_nin()
{
	return CPS == 1 ? 8 : 6;
}

struct ring_bars {
	uint64_t full[32], empty[32], in_full[8], in_empty[8];
};

template <typename StateT, int CPS>
constexpr size_t ring_smem()
{
	return ring_bytes<CPS>() + ring_nin<CPS>() * RIN_BYTES + sizeof(dec_smem) + sizeof(ring_bars);
}

/* Ring options (template flags; KDA_DECODE_RING_OPT, read at each call, see ring_opt()).
 *   RF_TRACE: %globaltimer / clock64 stamps of every CTA into a device record (diagnostics for
 *     kda-bench --trace; KDA_DECODE_RING_TRACE=n picks record n, kda_decode_trace_read()).
 *   RF_HINT: the streamed state is read (bulk copies) and written (16-byte stores, L1 no-allocate)
 *     with an L2 evict-first policy: read once, written once, never reused by this launch.
 *   RF_EARLY: the producer warp initializes the barriers itself, its slot and beta loads issued
 *     before that, and starts copying at once (the consumers wait on a named barrier the producer
 *     only arrives at); each item's state chunks are issued before its small inputs.
 *   RF_BULKST: the new state rows are written back into their ring stage and stored to the slot
 *     by bulk copies (cp.async.bulk shared -> global, one per warp and 2-row run), a stage handed
 *     back once its stores have read it (one chunk later, cp.async.bulk.wait_group.read 1).
 *   RF_HALF, RF_QUARTER: a half / a quarter of the ring's stages in use (BF16 state: 3 / 1.5
 *     items ahead of the consumers instead of 6; FP32: 1.5 / 0.75 instead of 3).
 *   RF_RAMP: in the first pass over the ring the producer runs at most half the stages ahead of
 *     the consumers (it waits for chunk c - NS / 2 to be handed back before copying chunk c), then
 *     the whole ring: a smaller burst of copies at the start, the full depth afterwards. */
enum { RF_TRACE = 1, RF_HINT = 2, RF_EARLY = 4, RF_BULKST = 8, RF_HALF = 16, RF_QUARTER = 32, RF_RAMP = 64 };

/* Trace record of one CTA (KDA_DECODE_TRACE_FIELDS u64; kda_decode.h). */
enum {
	TR_ENTRY = 0,    /* consumer thread 0 at entry, %globaltimer ns */
	TR_PROD = 1,     /* producer: its first bulk copy issued */
	TR_FIRST_IN = 2, /* consumers: the first input stage arrived */
	TR_FIRST_ST = 3, /* consumers: the first state chunk arrived */
	TR_END = 4,      /* consumers: the last item done */
	TR_ITEMS = 5,    /* items done | SM id << 32 */
	TR_WAIT_FULL = 6, TR_WAIT_IN = 7, TR_CYCLES = 8, /* consumer thread 0: clock64 cycles */
	TR_PWAIT = 9, TR_PCYCLES = 10,                   /* producer lane 0: waiting on empty stages, all */
	TR_ITEM0 = 12                                    /* end of item k at TR_ITEM0 + k */
};

__device__ __forceinline__ uint64_t gtimer()
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
	return t;
}

__device__ __forceinline__ uint64_t l2_evict_first()
{
	uint64_t pol;
	asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
	return pol;
}

__device__ __forceinline__ void bulk_g2s_hint(void *dst, const void *src, uint32_t bytes, uint64_t *bar, uint64_t pol)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
		     " [%0], [%1], %2, [%3], %4;\n" ::"r"(smem_u32(dst)),
		     "l"(src), "r"(bytes), "r"(smem_u32(bar)), "l"(pol)
		     : "memory");
}

__device__ __forceinline__ void st_v4_hint(void *p, uint4 a, uint64_t pol)
{
	asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.b32 [%0], {%1, %2, %3, %4}, %5;\n" ::"l"(p),
		     "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(pol)
		     : "memory");
}

/* Bulk copy shared -> global in the thread's bulk async-group. */
__device__ __forceinline__ void bulk_s2g(void *dst, const void *src, uint32_t bytes)
{
	asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(smem_u32(src)),
		     "r"(bytes)
		     : "memory");
}

/* The 16-byte pieces of a lane's KS values of a row (the layout of ring_layout<T, KS> and
 * step_layout): piece j holds values m[j * PV ..] at element j * (128 / NP) + sub * PV. */
template <typename T, int KS>
struct ring_pieces {
	static constexpr int PV = 16 / (int)sizeof(T);
	static constexpr int NP = KS / PV;
	static __device__ __forceinline__ int at(int sub, int j) { return j * (DEC_D / NP) + sub * PV; }
	static __device__ __forceinline__ uint4 pack(const float *m, int j)
	{
		if (sizeof(T) == 4)
			return make_uint4(__float_as_uint(m[4 * j]), __float_as_uint(m[4 * j + 1]),
					  __float_as_uint(m[4 * j + 2]), __float_as_uint(m[4 * j + 3]));
		return make_uint4(pack_bf16(m[8 * j], m[8 * j + 1]), pack_bf16(m[8 * j + 2], m[8 * j + 3]),
				  pack_bf16(m[8 * j + 4], m[8 * j + 5]), pack_bf16(m[8 * j + 6], m[8 * j + 7]));
	}
};

/* Where a lane's KS k values of a row sit when LANES = 128 / KS lanes share it: 16-byte pieces
 * (4 FP32 or 8 BF16 values) at sub * 16 bytes + j * (128 / pieces) values, so that each quarter
 * warp reads or writes 128 contiguous bytes. KS = 8 is step_layout. */
template <typename T, int KS>
struct ring_layout : step_layout<T> {
};

template <typename T>
struct ring_layout<T, 16> {
	static constexpr int PV = 16 / (int)sizeof(T); /* values per 16-byte piece */
	static constexpr int NP = 16 / PV;             /* pieces per lane */
	static constexpr int STRIDE = DEC_D / NP;      /* values between a lane's pieces */
	static __device__ __forceinline__ int k(int sub, int e) { return (e / PV) * STRIDE + sub * PV + e % PV; }
	static __device__ __forceinline__ void load(const T *row, int sub, float m[16])
	{
#pragma unroll
		for (int j = 0; j < NP; j++) {
			const uint4 a = *reinterpret_cast<const uint4 *>(row + j * STRIDE + sub * PV);
			if (sizeof(T) == 4) {
				m[4 * j] = __uint_as_float(a.x), m[4 * j + 1] = __uint_as_float(a.y);
				m[4 * j + 2] = __uint_as_float(a.z), m[4 * j + 3] = __uint_as_float(a.w);
			} else {
				m[8 * j] = lo_bf16(a.x), m[8 * j + 1] = hi_bf16(a.x), m[8 * j + 2] = lo_bf16(a.y);
				m[8 * j + 3] = hi_bf16(a.y), m[8 * j + 4] = lo_bf16(a.z), m[8 * j + 5] = hi_bf16(a.z);
				m[8 * j + 6] = lo_bf16(a.w), m[8 * j + 7] = hi_bf16(a.w);
			}
		}
	}
	static __device__ __forceinline__ void store(T *row, int sub, const float m[16])
	{
#pragma unroll
		for (int j = 0; j < NP; j++) {
			uint4 a;
			if (sizeof(T) == 4) {
				a = make_uint4(__float_as_uint(m[4 * j]), __float_as_uint(m[4 * j + 1]),
					       __float_as_uint(m[4 * j + 2]), __float_as_uint(m[4 * j + 3]));
			} else {
				a.x = pack_bf16(m[8 * j], m[8 * j + 1]), a.y = pack_bf16(m[8 * j + 2], m[8 * j + 3]);
				a.z = pack_bf16(m[8 * j + 4], m[8 * j + 5]), a.w = pack_bf16(m[8 * j + 6], m[8 * j + 7]);
			}
			*reinterpret_cast<uint4 *>(row + j * STRIDE + sub * PV) = a;
		}
	}
};

/* How a ring stage is handed back to the producer once the consumers have read it (the
 * producer then bulk-copies the next chunk into it: the async proxy writing what the generic
 * proxy read).
 *   RING_ARRIVE_THREAD (default since 2026-12-01zd): every consumer thread arrives on the
 *     stage's "empty" mbarrier (count 256) after its own reads, and the producer issues
 *     fence.proxy.async.shared::cta between its wait on that barrier and the bulk copy (as the
 *     prefill's recurrent kernel does after its __syncthreads). Each reading thread's release
 *     arrive, the producer's acquire wait and its proxy fence order every read before the copy
 *     in the PTX memory model, and compute-sanitizer racecheck sees each thread's own arrival.
 *   RING_ARRIVE_WARP (the kernel until 2026-12-01; KDA_DECODE_RING_ARRIVE=warp): __syncwarp()
 *     then lane 0 arrives (count 8), no proxy fence. Racecheck does not credit the other 31
 *     lanes' reads to lane 0's arrival and reported ~600,000 hazards a pair (2026-12-01y). */
enum { RING_ARRIVE_WARP = 0, RING_ARRIVE_THREAD = 1 };

/* LANES: lanes per state row (16: 8 k values a lane, as kda_decode_kernel; 8: 16 values a lane,
 * 3 shuffle rounds per dot product instead of 4 and twice the values per round: `ring8`). */
template <typename StateT, int CPS, int LANES = DEC_LANES, int ARRIVE = RING_ARRIVE_THREAD, int FLAGS = 0>
__global__ void __launch_bounds__(RING_THREADS, CPS)
	kda_decode_ring(const dec_params p, int n_items, unsigned long long *trace)
{
	constexpr bool TRACE = (FLAGS & RF_TRACE) != 0, HINT = (FLAGS & RF_HINT) != 0;
	constexpr bool EARLY = (FLAGS & RF_EARLY) != 0, BULKST = (FLAGS & RF_BULKST) != 0;
	/* Bulk stores: every consumer thread arrives (after its warp's stores have read the stage). */
	constexpr uint32_t EMPTY_COUNT = ARRIVE == RING_ARRIVE_THREAD || BULKST ? RING_NC : RING_NC / 32;
	constexpr uint32_t CHUNK_BYTES = RING_ROWS * DEC_D * sizeof(StateT);
	constexpr int NS = (int)(ring_bytes<CPS>() / CHUNK_BYTES) / ((FLAGS & RF_HALF) ? 2 : 1) / ((FLAGS & RF_QUARTER) ? 4 : 1);
	static_assert(NS >= 3, "ring depth");
	constexpr int NIN = ring_nin<CPS>();
	constexpr int KS = DEC_D / LANES;        /* k values per lane */
	constexpr int NRG = RING_NC / LANES;     /* 16 or 32 row groups */
	constexpr int RPC = RING_ROWS / NRG;     /* 2 or 1 rows per thread per chunk */
	using L = ring_layout<StateT, KS>;
	using P = ring_pieces<StateT, KS>;
	static_assert(LANES == 16 || LANES == 8, "lanes per row");
	static_assert(NS <= 32 && NIN <= 8 && RPC * NRG == RING_ROWS, "ring shape");
	static_assert(!BULKST || (LANES == 16 && RPC == 2), "bulk stores: a warp's rows are 2 runs of 2");
	extern __shared__ __align__(128) unsigned char dyn[];
	StateT *ring = reinterpret_cast<StateT *>(dyn);
	unsigned char *inb = dyn + ring_bytes<CPS>();
	dec_smem &sm = *reinterpret_cast<dec_smem *>(inb + NIN * RIN_BYTES);
	ring_bars &bar = *reinterpret_cast<ring_bars *>(inb + NIN * RIN_BYTES + sizeof(dec_smem));

	const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int H = p.heads;
	const size_t C = (size_t)H * 3 * DEC_D;
	const int G = (int)gridDim.x;
	unsigned long long *tr = TRACE ? trace + (size_t)blockIdx.x * KDA_DECODE_TRACE_FIELDS : nullptr;
	uint64_t c_entry = 0;
	if (TRACE && tid == 0) {
		c_entry = clock64();
		tr[TR_ENTRY] = gtimer();
	}
	uint64_t pol = 0;
	if (HINT)
		pol = l2_evict_first();

	if (!EARLY) {
		if (tid == 0) {
			for (int i = 0; i < NS; i++)
				mbar_init(&bar.full[i], 1), mbar_init(&bar.empty[i], EMPTY_COUNT);
			for (int i = 0; i < NIN; i++)
				mbar_init(&bar.in_full[i], 1), mbar_init(&bar.in_empty[i], 1);
			asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
		}
		__syncthreads();
	}

	if (warp == RING_NC / 32) {
		/* Producer. */
		const uint64_t p_entry = TRACE ? clock64() : 0;
		uint64_t p_wait = 0;
		bool first_issue = true;
		int s = 0, ph = 0, si = 0, phi = 0, n_issued = 0;
		/* EARLY: the slots and beta_raw of the first 32 items loaded before the barriers exist,
		 * those of the next 32 while these are copied. */
		int slot_n = 0;
		float beta_n = 0.0f;
		if (EARLY) {
			const int mine = (int)blockIdx.x + lane * G;
			if (mine < n_items) {
				slot_n = p.slot[mine / H];
				beta_n = bf2f(p.beta_raw[mine]);
			}
			if (lane == 0) {
				for (int i = 0; i < NS; i++)
					mbar_init(&bar.full[i], 1), mbar_init(&bar.empty[i], EMPTY_COUNT);
				for (int i = 0; i < NIN; i++)
					mbar_init(&bar.in_full[i], 1), mbar_init(&bar.in_empty[i], 1);
				asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
			}
			__syncwarp();
			/* The consumers wait at barrier 2 for the producer warp's arrival. */
			asm volatile("bar.arrive 2, %0;\n" ::"r"(RING_THREADS) : "memory");
		}
		for (int base = 0;; base += 32) {
			const int first = (int)blockIdx.x + base * G;
			if (first >= n_items)
				break;
			int slot_l = slot_n;
			float beta_l = beta_n;
			if (EARLY) {
				const int mine = first + (32 + lane) * G;
				if (mine < n_items) {
					slot_n = p.slot[mine / H];
					beta_n = bf2f(p.beta_raw[mine]);
				}
			} else {
				const int mine = first + lane * G;
				if (mine < n_items) {
					slot_l = p.slot[mine / H];
					beta_l = bf2f(p.beta_raw[mine]);
				}
			}
			for (int j = 0; j < 32; j++) {
				const int item = first + j * G;
				if (item >= n_items)
					break;
				const int slot = __shfl_sync(0xffffffffu, slot_l, j);
				const float braw = __shfl_sync(0xffffffffu, beta_l, j);
				if (lane == 0) {
					const int b = item / H, h = item - b * H;
					const StateT *st = static_cast<const StateT *>(p.state) + ((size_t)slot * H + h) * DEC_D * DEC_D;
					auto chunks = [&]() {
						for (int ch = 0; ch < RING_CHUNKS; ch++) {
							const uint64_t w0 = TRACE ? clock64() : 0;
							if ((FLAGS & RF_RAMP) && n_issued >= NS / 2 && n_issued < NS)
								mbar_wait(&bar.empty[n_issued - NS / 2], 0);
							n_issued++;
							mbar_wait(&bar.empty[s], ph ^ 1);
							if (TRACE)
								p_wait += clock64() - w0;
							if (ARRIVE == RING_ARRIVE_THREAD || BULKST)
								asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
							mbar_expect_tx(&bar.full[s], CHUNK_BYTES);
							if (TRACE && first_issue)
								tr[TR_PROD] = gtimer(), first_issue = false;
							if (HINT)
								bulk_g2s_hint(ring + (size_t)s * RING_ROWS * DEC_D,
									      st + (size_t)ch * RING_ROWS * DEC_D, CHUNK_BYTES,
									      &bar.full[s], pol);
							else
								bulk_g2s(ring + (size_t)s * RING_ROWS * DEC_D,
									 st + (size_t)ch * RING_ROWS * DEC_D, CHUNK_BYTES, &bar.full[s]);
							if (++s == NS)
								s = 0, ph ^= 1;
						}
					};
					if (EARLY)
						chunks();
					unsigned char *in = inb + si * RIN_BYTES;
					mbar_wait(&bar.in_empty[si], phi ^ 1);
					if (ARRIVE == RING_ARRIVE_THREAD || BULKST)
						asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
					*reinterpret_cast<float *>(in + RIN_TX) = braw;
					*reinterpret_cast<int *>(in + RIN_TX + 4) = slot;
					mbar_expect_tx(&bar.in_full[si], RIN_TX);
					if (TRACE && first_issue)
						tr[TR_PROD] = gtimer(), first_issue = false;
					const uint16_t *cs = p.conv_state + (size_t)slot * KDA_CONV_STATE_TAPS * C;
#pragma unroll
					for (int q = 0; q < 3; q++) {
						const size_t ch0 = (size_t)(q * H + h) * DEC_D;
						bulk_g2s(in + RIN_X + q * 256, p.x + (size_t)b * C + ch0, 256, &bar.in_full[si]);
#pragma unroll
						for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
							bulk_g2s(in + RIN_H + (q * 3 + i) * 256, cs + (size_t)i * C + ch0, 256,
								 &bar.in_full[si]);
					}
					bulk_g2s(in + RIN_G, p.g_raw + (size_t)item * DEC_D, 256, &bar.in_full[si]);
					bulk_g2s(in + RIN_GATE, p.gate_raw + (size_t)item * DEC_D, 256, &bar.in_full[si]);
					if (++si == NIN)
						si = 0, phi ^= 1;
					if (!EARLY)
						chunks();
				}
				__syncwarp();
			}
		}
		if (TRACE && lane == 0)
			tr[TR_PWAIT] = p_wait, tr[TR_PCYCLES] = clock64() - p_entry;
		return;
	}
	if (EARLY)
		asm volatile("bar.sync 2, %0;\n" ::"r"(RING_THREADS) : "memory");

	/* Consumers. */
	uint64_t w_full = 0, w_in = 0;
	int n_done = 0;
	const float nw = bf2f(p.norm_w[tid & (DEC_D - 1)]);
	const int sub = tid & (LANES - 1), rg = tid / LANES;
	int s = 0, ph = 0, si = 0, phi = 0;
	int s_prev = -1; /* BULKST: the stage whose stores were committed last, not yet handed back */
	uint2 wn[3]; /* conv taps of this item's channel tid (tid < 128) */
	if (tid < DEC_D && (int)blockIdx.x < n_items)
#pragma unroll
		for (int j = 0; j < 3; j++)
			wn[j] = *reinterpret_cast<const uint2 *>(
				p.conv_w + ((size_t)(j * H + (int)blockIdx.x % H) * DEC_D + tid) * KDA_CONV_TAPS);
	for (int item = (int)blockIdx.x; item < n_items; item += G) {
		const int b = item / H, h = item - b * H;
		uint2 wc[3];
#pragma unroll
		for (int j = 0; j < 3; j++)
			wc[j] = wn[j];
		if (tid < DEC_D && item + G < n_items)
#pragma unroll
			for (int j = 0; j < 3; j++)
				wn[j] = *reinterpret_cast<const uint2 *>(
					p.conv_w + ((size_t)(j * H + (item + G) % H) * DEC_D + tid) * KDA_CONV_TAPS);
		const unsigned char *in = inb + si * RIN_BYTES;
		{
			const uint64_t w0 = TRACE ? clock64() : 0;
			mbar_wait(&bar.in_full[si], phi);
			if (TRACE && tid == 0) {
				w_in += clock64() - w0;
				if (n_done == 0)
					tr[TR_FIRST_IN] = gtimer();
			}
		}
		const size_t slot = (size_t)*reinterpret_cast<const int *>(in + RIN_TX + 4);
		StateT *st = static_cast<StateT *>(p.state) + (slot * H + h) * DEC_D * DEC_D;
		float og = 0.0f;
		if (tid < DEC_D) {
			const int c = tid;
			const uint16_t *xi = reinterpret_cast<const uint16_t *>(in + RIN_X);
			const uint16_t *hi = reinterpret_cast<const uint16_t *>(in + RIN_H);
			uint16_t *cs = p.conv_state + slot * KDA_CONV_STATE_TAPS * C;
			float y[3];
#pragma unroll
			for (int j = 0; j < 3; j++) {
				const uint16_t xr = xi[j * DEC_D + c];
				const uint16_t h0 = hi[(j * 3 + 0) * DEC_D + c], h1 = hi[(j * 3 + 1) * DEC_D + c],
					       h2 = hi[(j * 3 + 2) * DEC_D + c];
				const uint2 wv = wc[j];
				const float w[4] = { lo_bf16(wv.x), hi_bf16(wv.x), lo_bf16(wv.y), hi_bf16(wv.y) };
				const float hv[3] = { bf2f(h0), bf2f(h1), bf2f(h2) };
				y[j] = dec_conv(w, hv, bf2f(xr));
				const size_t chan = (size_t)(j * H + h) * DEC_D + c;
				cs[chan] = h1, cs[C + chan] = h2, cs[2 * C + chan] = xr;
			}
			const float graw = bf2f(reinterpret_cast<const uint16_t *>(in + RIN_G)[c]);
			const float gate = bf2f(reinterpret_cast<const uint16_t *>(in + RIN_GATE)[c]);
			const float yq = y[0], yk = y[1], yv = y[2];
			sm.q[c] = yq, sm.k[c] = yk, sm.v[c] = yv;
			sm.alpha[c] = __expf((float)KDA_GATE_LOWER_BOUND * sigmoidf_(graw));
			og = sigmoidf_(gate);
			const float r0 = group_sum<32>(yq * yq), r1 = group_sum<32>(yk * yk), r2 = group_sum<32>(yq * yk);
			if (lane == 0)
				sm.red[warp][0] = r0, sm.red[warp][1] = r1, sm.red[warp][2] = r2;
			if (c == 0)
				sm.beta = sigmoidf_(*reinterpret_cast<const float *>(in + RIN_TX));
		}
		asm volatile("bar.sync 1, %0;\n" ::"r"(RING_NC) : "memory");
		if (tid == 0)
			mbar_arrive(&bar.in_empty[si]);
		if (++si == NIN)
			si = 0, phi ^= 1;
		float sq = 0.0f, sk = 0.0f, sqk = 0.0f;
#pragma unroll
		for (int i = 0; i < DEC_D / 32; i++)
			sq += sm.red[i][0], sk += sm.red[i][1], sqk += sm.red[i][2];
		const float beta = sm.beta;
		const float rq = rsqrtf(sq + (float)KDA_L2_EPS) * p.scale;
		const float rk = rsqrtf(sk + (float)KDA_L2_EPS);
		const float kq = sqk * rq * rk;
		float qh[KS], kh[KS], al[KS];
#pragma unroll
		for (int e = 0; e < KS; e += 4) {
			const int kp = L::k(sub, e);
			float4 a = *reinterpret_cast<const float4 *>(&sm.q[kp]);
			float4 bb = *reinterpret_cast<const float4 *>(&sm.k[kp]);
			float4 cc = *reinterpret_cast<const float4 *>(&sm.alpha[kp]);
			qh[e] = a.x * rq, qh[e + 1] = a.y * rq, qh[e + 2] = a.z * rq, qh[e + 3] = a.w * rq;
			kh[e] = bb.x * rk, kh[e + 1] = bb.y * rk, kh[e + 2] = bb.z * rk, kh[e + 3] = bb.w * rk;
			al[e] = cc.x, al[e + 1] = cc.y, al[e + 2] = cc.z, al[e + 3] = cc.w;
		}
		float osq = 0.0f;
#pragma unroll 1
		for (int ch = 0; ch < RING_CHUNKS; ch++) {
			{
				const uint64_t w0 = TRACE ? clock64() : 0;
				mbar_wait(&bar.full[s], ph);
				if (TRACE && tid == 0) {
					w_full += clock64() - w0;
					if (n_done == 0 && ch == 0)
						tr[TR_FIRST_ST] = gtimer();
				}
			}
			float m[RPC][KS];
			StateT *S = ring + (size_t)s * RING_ROWS * DEC_D;
#pragma unroll
			for (int i = 0; i < RPC; i++)
				L::load(S + (size_t)(rg + NRG * i) * DEC_D, sub, m[i]);
			if (!BULKST) {
				if (ARRIVE == RING_ARRIVE_THREAD) {
					mbar_arrive(&bar.empty[s]);
				} else {
					__syncwarp();
					if (lane == 0)
						mbar_arrive(&bar.empty[s]);
				}
			}
#pragma unroll
			for (int i = 0; i < RPC; i++) {
				const int row = ch * RING_ROWS + rg + NRG * i;
				float a = 0.0f, cq = 0.0f;
#pragma unroll
				for (int e = 0; e < KS; e++) {
					m[i][e] *= al[e];
					a += m[i][e] * kh[e];
					cq += m[i][e] * qh[e];
				}
				a = group_sum<LANES>(a);
				cq = group_sum<LANES>(cq);
				const float coef = beta * (sm.v[row] - a);
#pragma unroll
				for (int e = 0; e < KS; e++)
					m[i][e] += coef * kh[e];
				if (BULKST) {
					StateT *r = S + (size_t)(rg + NRG * i) * DEC_D;
#pragma unroll
					for (int j = 0; j < P::NP; j++)
						*reinterpret_cast<uint4 *>(r + P::at(sub, j)) = P::pack(m[i], j);
				} else if (HINT) {
					StateT *r = st + (size_t)row * DEC_D;
#pragma unroll
					for (int j = 0; j < P::NP; j++)
						st_v4_hint(r + P::at(sub, j), P::pack(m[i], j), pol);
				} else {
					L::store(st + (size_t)row * DEC_D, sub, m[i]);
				}
				const float o = cq + coef * kq;
				if (sub == 0)
					sm.o[row] = o;
				osq += o * o;
			}
			if (BULKST) {
				/* This warp's rows 2w, 2w + 1 and 2w + 16, 2w + 17 of the chunk: written by the
				 * generic proxy, read by the bulk copy; the stage of the previous chunk goes back
				 * once its copies have read it (the group before this one). */
				asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
				__syncwarp();
				if (lane == 0) {
					constexpr uint32_t RUN = 2 * DEC_D * sizeof(StateT);
					const size_t r0 = (size_t)ch * RING_ROWS + 2 * warp;
					bulk_s2g(st + r0 * DEC_D, S + (size_t)(2 * warp) * DEC_D, RUN);
					bulk_s2g(st + (r0 + 16) * DEC_D, S + (size_t)(2 * warp + 16) * DEC_D, RUN);
					asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
					asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
				}
				__syncwarp();
				if (s_prev >= 0)
					mbar_arrive(&bar.empty[s_prev]);
				s_prev = s;
			}
			if (++s == NS)
				s = 0, ph ^= 1;
		}
		/* osq is equal on the LANES lanes of a row group; add the warp's 32 / LANES groups. */
#pragma unroll
		for (int w = LANES; w < 32; w *= 2)
			osq += __shfl_xor_sync(0xffffffffu, osq, w);
		if (lane == 0)
			sm.ored[warp] = osq;
		asm volatile("bar.sync 1, %0;\n" ::"r"(RING_NC) : "memory");
		float ss = 0.0f;
#pragma unroll
		for (int i = 0; i < RING_NC / 32; i++)
			ss += sm.ored[i];
		if (tid < DEC_D) {
			const float r = rsqrtf(ss * (1.0f / DEC_D) + p.norm_eps);
			p.out[(size_t)item * DEC_D + tid] = f2bf(sm.o[tid] * r * nw * og);
		}
		if (TRACE && tid == 0 && n_done < KDA_DECODE_TRACE_ITEMS)
			tr[TR_ITEM0 + n_done] = gtimer();
		n_done++;
	}
	if (BULKST && lane == 0)
		asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
	if (TRACE && tid == 0) {
		unsigned smid;
		asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
		tr[TR_END] = gtimer();
		tr[TR_ITEMS] = (unsigned long long)n_done | (unsigned long long)smid << 32;
		tr[TR_WAIT_FULL] = w_full, tr[TR_WAIT_IN] = w_in, tr[TR_CYCLES] = clock64() - c_entry;
	}
}

/* The trace records (KDA_DECODE_RING_TRACE; kda_decode_trace_read()), allocated at first use. */
unsigned long long *g_trace;

/* KDA_DECODE_RING_TRACE=n (0 <= n < KDA_DECODE_TRACE_LAUNCHES, read at each call): the record
 * this launch writes, allocated (and zeroed) at first use; null without the variable. */
unsigned long long *ring_trace()
{
	const char *e = getenv("KDA_DECODE_RING_TRACE");
	if (!e || *e < '0' || *e >= '0' + KDA_DECODE_TRACE_LAUNCHES || e[1])
		return nullptr;
	constexpr size_t n = (size_t)KDA_DECODE_TRACE_LAUNCHES * KDA_DECODE_TRACE_CTAS * KDA_DECODE_TRACE_FIELDS;
	if (!g_trace && (cudaMalloc(&g_trace, n * sizeof(*g_trace)) != cudaSuccess ||
			 cudaMemset(g_trace, 0, n * sizeof(*g_trace)) != cudaSuccess)) {
		g_trace = nullptr;
		return nullptr;
	}
	return g_trace + (size_t)(*e - '0') * KDA_DECODE_TRACE_CTAS * KDA_DECODE_TRACE_FIELDS;
}

template <typename StateT, int CPS, int LANES = DEC_LANES, int ARRIVE = RING_ARRIVE_THREAD, int FLAGS = 0>
int ring_launch_as(const dec_params &p, int batch, unsigned long long *trace, cudaStream_t stream)
{
	constexpr size_t smem = ring_smem<StateT, CPS>();
	auto kern = kda_decode_ring<StateT, CPS, LANES, ARRIVE, FLAGS>;
	static int nsm = 0;
	if (!nsm) {
		int dev = 0, n = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
		    cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
		    cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100) != cudaSuccess)
			return kda_launch_status();
		nsm = n;
	}
	const long items = (long)batch * p.heads;
	const int grid = (int)(items < (long)nsm * CPS ? items : (long)nsm * CPS);
	if ((FLAGS & RF_TRACE) && grid > KDA_DECODE_TRACE_CTAS)
		return -EINVAL;
	kern<<<grid, RING_THREADS, smem, stream>>>(p, (int)items, trace);
	return kda_launch_status();
}

/* KDA_DECODE_RING_ARRIVE=warp | thread (read at each call): see RING_ARRIVE_THREAD. */
int ring_arrive()
{
	const char *e = getenv("KDA_DECODE_RING_ARRIVE");
	return e && !strcmp(e, "warp") ? RING_ARRIVE_WARP : RING_ARRIVE_THREAD;
}

/* SMs of the current device (cached at the first call; 0 when unknown). */
int dec_sms()
{
	static int n = 0;
	if (!n) {
		int dev = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
			n = 0;
	}
	return n;
}

/* The main ring's depth without KDA_DECODE_RING_OPT (2026-12-02d, H200, H = 96, back to back,
 * all bytes over the copy ceiling; bench/results/k3-kernels-h200-2026-12-02d/):
 *   BF16, fewer than RING_QUARTER_BELOW items a CTA: a quarter of the ring (6 stages, 1.5 items
 *     ahead; B = 64: 87.0-87.5 % where the whole ring gave 80.4-84.5 %, B = 128: 89.6-89.9 %
 *     against 88.5-89.2 %): the whole ring's burst of copies at the start (132 x 192 KiB) made
 *     the completion rate take ~25 us to reach its steady ~87 % (a quarter: ~10 us) and widened
 *     the tail (4.6 against 2.5 us after the median CTA's end);
 *   BF16 from RING_QUARTER_BELOW items a CTA on, and FP32: the whole ring (BF16 B = 256: 90.1-90.8
 *     % against 89.4-89.5 % for a quarter; FP32 B = 64-256: a half 0.3-0.7 points and a quarter
 *     1-1.5 points under the whole ring). */
constexpr long RING_QUARTER_BELOW = 128;

template <typename StateT>
int ring_opt_default(long items)
{
	const int sms = dec_sms();
	return sizeof(StateT) == 2 && sms > 0 && items < RING_QUARTER_BELOW * sms ? RF_QUARTER : 0;
}

/* KDA_DECODE_RING_OPT (read at each call): `none` (the kernel of 2026-12-01zd, the whole
 * ring), or options joined by '+' from `early`, `hint`, `bulkst`, `half`, `quarter`, `ramp`
 * (RF_*; the sets ring_launch() lists); without the variable: ring_opt_default(). -1: a set not
 * built. */
template <typename StateT>
int ring_opt(long items)
{
	const char *e = getenv("KDA_DECODE_RING_OPT");
	if (!e)
		return ring_opt_default<StateT>(items);
	static const struct {
		const char *name;
		int flag;
	} names[] = { { "early", RF_EARLY }, { "hint", RF_HINT }, { "bulkst", RF_BULKST }, { "half", RF_HALF },
		      { "quarter", RF_QUARTER }, { "ramp", RF_RAMP }, { "none", 0 } };
	int f = 0;
	for (const char *t = e;; t++) { /* name (+ name)*, nothing else */
		const size_t n = strcspn(t, "+");
		int k = 0, nk = (int)(sizeof(names) / sizeof(names[0]));
		while (k < nk && (strlen(names[k].name) != n || strncmp(t, names[k].name, n)))
			k++;
		if (k == nk)
			return -1;
		f |= names[k].flag;
		t += n;
		if (!*t)
			return f;
	}
}

/* The options of the main ring (one CTA an SM, 16 lanes a row, every thread hands back). */
template <typename StateT, int FLAGS>
int ring_launch_opt(const dec_params &p, int batch, cudaStream_t stream)
{
	unsigned long long *tr = ring_trace();
	if (tr)
		return ring_launch_as<StateT, 1, DEC_LANES, RING_ARRIVE_THREAD, FLAGS | RF_TRACE>(p, batch, tr, stream);
	return ring_launch_as<StateT, 1, DEC_LANES, RING_ARRIVE_THREAD, FLAGS>(p, batch, nullptr, stream);
}

template <typename StateT, int CPS, int LANES = DEC_LANES>
int ring_launch(const dec_params &p, int batch, cudaStream_t stream)
{
	if (ring_arrive() == RING_ARRIVE_WARP)
		return ring_launch_as<StateT, CPS, LANES, RING_ARRIVE_WARP>(p, batch, nullptr, stream);
	if (CPS == 1 && LANES == DEC_LANES) {
		switch (ring_opt<StateT>((long)batch * p.heads)) {
		case RF_EARLY: return ring_launch_opt<StateT, RF_EARLY>(p, batch, stream);
		case RF_HINT: return ring_launch_opt<StateT, RF_HINT>(p, batch, stream);
		case RF_BULKST: return ring_launch_opt<StateT, RF_BULKST>(p, batch, stream);
		case RF_EARLY | RF_HINT: return ring_launch_opt<StateT, RF_EARLY | RF_HINT>(p, batch, stream);
		case RF_EARLY | RF_BULKST: return ring_launch_opt<StateT, RF_EARLY | RF_BULKST>(p, batch, stream);
		case RF_HINT | RF_BULKST: return ring_launch_opt<StateT, RF_HINT | RF_BULKST>(p, batch, stream);
		case RF_EARLY | RF_HINT | RF_BULKST:
			return ring_launch_opt<StateT, RF_EARLY | RF_HINT | RF_BULKST>(p, batch, stream);
		case RF_HALF: return ring_launch_opt<StateT, RF_HALF>(p, batch, stream);
		case RF_QUARTER: return ring_launch_opt<StateT, RF_QUARTER>(p, batch, stream);
		case RF_RAMP: return ring_launch_opt<StateT, RF_RAMP>(p, batch, stream);
		case RF_HALF | RF_RAMP: return ring_launch_opt<StateT, RF_HALF | RF_RAMP>(p, batch, stream);
		case 0: return ring_launch_opt<StateT, 0>(p, batch, stream);
		default: return -EINVAL;
		}
	}
	return ring_launch_as<StateT, CPS, LANES, RING_ARRIVE_THREAD>(p, batch, nullptr, stream);
}

/* The ring reads the per-token inputs with bulk copies: 16-byte aligned bases. */
bool ring_ok(const dec_params &p, long items)
{
	const uintptr_t m = (uintptr_t)p.x | (uintptr_t)p.g_raw | (uintptr_t)p.gate_raw | (uintptr_t)p.conv_w |
			    (uintptr_t)p.conv_state | (uintptr_t)p.state;
	return (m & 15) == 0 && items <= (1L << 30);
}

template <typename StateT, int NT, int SPLIT, int HPC = 1>
int dec_launch(const dec_params &p, int batch, cudaStream_t stream)
{
	constexpr size_t smem = HPC * (sizeof(StateT) * DEC_D * DEC_D / SPLIT + sizeof(dec_smem));
	auto kern = kda_decode_kernel<StateT, NT, SPLIT, HPC>;
	static bool configured = false;
	if (!configured) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
		    cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100) != cudaSuccess)
			return kda_launch_status();
		configured = true;
	}
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3((unsigned)(batch * SPLIT), (unsigned)(p.heads / HPC));
	cfg.blockDim = dim3(NT);
	cfg.dynamicSmemBytes = smem;
	cfg.stream = stream;
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = SPLIT;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.attrs = attr;
	cfg.numAttrs = SPLIT > 1 ? 1 : 0;
	if (cudaLaunchKernelEx(&cfg, kern, p) != cudaSuccess)
		return kda_launch_status();
	return kda_launch_status();
}

/* KDA_DECODE_KERNEL: smem128 (0): staged, 128 threads; step (1): kda_step.cuh's;
 * smem256 (2): staged, 256 threads; split (3): staged, 2-CTA
 * cluster per head; heads2 (4): staged, 2 heads per CTA of 256 threads for
 * BF16 state with H even (otherwise as smem256); ring (5): persistent, one
 * CTA per SM with a 192 KiB ring of stages; ring2 (6): two CTAs per SM, 80 KiB
 * rings; ring8 (8), ring82 (9): ring, ring2 with 8 lanes per state row (16 values a lane).
 * The ring variants fall back to smem256 when an input is not 16-byte
 * aligned. Default (no variable, or `auto`, 7): ring from RING_MIN_ITEMS
 * (request, head) items on, smem256 below: on the H200 ring beat smem256 by
 * 1 % (FP32) / 3.6 % (BF16) from 12288 items on, by 0.2-0.6 % at 6144, and
 * lost 1-16 % below (bench/results/kda-decode-h200-2026-11-29-ring/). */
constexpr long RING_MIN_ITEMS = 6144;

int dec_variant()
{
	/* Read at each call (a getenv, ~0.1 us beside a >= 7 us decode), so that a test can switch
	 * variants within one process. */
	const char *e = getenv("KDA_DECODE_KERNEL");
	return !e ? 7 : !strcmp(e, "smem128") ? 0 : !strcmp(e, "step") ? 1 : !strcmp(e, "smem256") ? 2
	       : !strcmp(e, "split") ? 3 : !strcmp(e, "heads2") ? 4 : !strcmp(e, "ring") ? 5
	       : !strcmp(e, "ring2") ? 6 : !strcmp(e, "ring8") ? 8 : !strcmp(e, "ring82") ? 9 : 7;
}

} // namespace

extern "C" int kda_decode(const struct kda_decode_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->heads < 1 || a->batch > 65535 * 1024 || a->heads > 65535)
		return -EINVAL;
	if (a->state_dtype != KDA_F32 && a->state_dtype != KDA_BF16)
		return -EINVAL;
	if (!a->x || !a->g_raw || !a->beta_raw || !a->gate_raw || !a->conv_w || !a->norm_w ||
	    !a->slot || !a->state || !a->conv_state || !a->out)
		return -EINVAL;
	int variant = dec_variant();
	if (variant == 7)
		variant = (long)a->batch * a->heads >= RING_MIN_ITEMS ? 5 : 2;
	if (variant == 1) {
		step_params p = {};
		p.heads = a->heads;
		p.window = 1;
		p.scale = a->scale;
		p.norm_eps = a->norm_eps;
		p.conv_w = a->conv_w;
		p.norm_w = a->norm_w;
		p.slot = a->slot;
		p.state = a->state;
		p.conv_state = a->conv_state;
		p.commit.x = a->x;
		p.commit.g_raw = a->g_raw;
		p.commit.beta_raw = a->beta_raw;
		p.commit.gate_raw = a->gate_raw;
		p.commit.n_tokens = nullptr;
		p.commit.n_fixed = 1;
		p.commit.out = a->out;
		return step_launch(p, a->batch, a->state_dtype, stream);
	}
	dec_params p = {};
	p.heads = a->heads;
	p.scale = a->scale;
	p.norm_eps = a->norm_eps;
	p.x = a->x;
	p.g_raw = a->g_raw;
	p.beta_raw = a->beta_raw;
	p.gate_raw = a->gate_raw;
	p.conv_w = a->conv_w;
	p.norm_w = a->norm_w;
	p.slot = a->slot;
	p.state = a->state;
	p.conv_state = a->conv_state;
	p.out = a->out;
	if ((variant == 8 || variant == 9) && ring_ok(p, (long)a->batch * a->heads)) {
		if (a->state_dtype == KDA_F32)
			return variant == 8 ? ring_launch<float, 1, 8>(p, a->batch, stream)
					    : ring_launch<float, 2, 8>(p, a->batch, stream);
		return variant == 8 ? ring_launch<uint16_t, 1, 8>(p, a->batch, stream)
				    : ring_launch<uint16_t, 2, 8>(p, a->batch, stream);
	}
	if ((variant == 5 || variant == 6) && ring_ok(p, (long)a->batch * a->heads)) {
		if (a->state_dtype == KDA_F32)
			return variant == 5 ? ring_launch<float, 1>(p, a->batch, stream)
					    : ring_launch<float, 2>(p, a->batch, stream);
		return variant == 5 ? ring_launch<uint16_t, 1>(p, a->batch, stream)
				    : ring_launch<uint16_t, 2>(p, a->batch, stream);
	}
	if (a->state_dtype == KDA_F32)
		return variant == 2 || variant >= 4 ? dec_launch<float, 256, 1>(p, a->batch, stream)
		       : variant == 3 ? dec_launch<float, 128, 2>(p, a->batch, stream)
				      : dec_launch<float, 128, 1>(p, a->batch, stream);
	if (variant == 4 && a->heads % 2 == 0)
		return dec_launch<uint16_t, 256, 1, 2>(p, a->batch, stream);
	return variant == 2 || variant >= 4 ? dec_launch<uint16_t, 256, 1>(p, a->batch, stream)
	       : variant == 3 ? dec_launch<uint16_t, 128, 2>(p, a->batch, stream)
			      : dec_launch<uint16_t, 128, 1>(p, a->batch, stream);
}

extern "C" int kda_decode_trace_read(unsigned long long *dst, size_t n)
{
	if (!dst)
		return -EINVAL;
	if (!g_trace)
		return -ENODATA;
	const size_t all = (size_t)KDA_DECODE_TRACE_LAUNCHES * KDA_DECODE_TRACE_CTAS * KDA_DECODE_TRACE_FIELDS;
	if (cudaMemcpy(dst, g_trace, (n < all ? n : all) * sizeof(*dst), cudaMemcpyDeviceToHost) != cudaSuccess ||
	    cudaMemset(g_trace, 0, all * sizeof(*dst)) != cudaSuccess)
		return kda_launch_status();
	return 0;
}
