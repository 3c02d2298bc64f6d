/* SPDX-License-Identifier: MIT */
/*
 * KDA speculative verify with replay: see kda_verify.h.
 *
 * One CTA of 256 threads per (request, head); the head's state is staged in
 * shared memory by the bulk copy engine (4 row blocks, one mbarrier each) as
 * soon as the slot is known, and read from HBM once.
 *
 * Replay (the accepted prefix, n_commit tokens): token by token on CUDA cores
 * in shared memory, exactly as the fused decode computes it (BF16 state
 * rounded after every token); the last token's rows also go to the slot.
 *
 * Drafts (n <= 8 tokens, outputs only, state not written): in closed form
 * instead of n sequential steps. For one state row m (a row v of S^T) with
 * Gamma_t = alpha_1 ... alpha_t (per k channel) and u_t the row's delta-rule
 * coefficient at token t,
 *
 *   m_t = m_0 * Gamma_t + sum_{s<=t} u_s k_s * Gamma_t / Gamma_s,
 *   u_t = beta_t (v_t - w_t - sum_{s<t} A_ts u_s),   w_t = m_0 . (Gamma_t k_t),
 *   o_t = z_t + sum_{s<=t} P_ts u_s,                 z_t = m_0 . (Gamma_t q_t),
 *   A_ts = (Gamma_t k_t) . (k_s / Gamma_s),  P_ts = (Gamma_t q_t) . (k_s / Gamma_s),
 *
 * so the state is touched by one product S [128 x 128] x [Gamma k | Gamma q]
 * [128 x 16] (tensor cores, BF16 in with hi/lo splits, FP32 accumulate) and
 * everything sequential is 8 x 8 per row. The gate's lower bound keeps
 * Gamma_t >= exp(-40) over a window of 8, so 1 / Gamma_s fits in FP32.
 *
 * KDA_VERIFY_KERNEL (environment, read once; see verify_variant()) selects
 * other variants for side-by-side timing.
 */
#include "kda_verify.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "kda_step.cuh"

namespace {

constexpr int VD = KDA_HEAD_DIM;
constexpr int VW = KDA_MAX_WINDOW;
constexpr int VNT = 256;
constexpr int VLANES = 16;            /* lanes per row in the replay, 8 k each */
constexpr int VRG = VNT / VLANES;     /* row groups */
constexpr int VRPT = VD / VRG;        /* rows per thread in the replay */
constexpr int VCHUNKS = 4;            /* row blocks of the state copy */
constexpr int VCHUNK_ROWS = VD / VCHUNKS;
constexpr int VPAD = VD + 4;          /* row pitch of the draft vectors (floats) */
constexpr int VSP = VD;               /* row pitch of the staged state (elements) */
constexpr int VWZ = 2 * VW + 1;       /* row pitch of the product's result */
static_assert(VW == 8 && VNT == 2 * VD && VRPT * VRG == VD, "shape");

/*
 * The product's B operands, [Gamma k | Gamma q] (k, q before their L2
 * norms), packed once per CTA as the m16n8k16 fragments every warp loads:
 * word (mat, kt, half, hl, lane) holds, for token g = lane / 4 and
 * k = 16 kt + 8 half + 2 (lane % 4) + {0, 1}, the BF16 pair of the value
 * (hl = 0) or of its remainder (hl = 1). A k tile's 128 words are padded to
 * 132 so that the pair pass (lanes over k tiles) is free of bank conflicts.
 */
constexpr int BP_KS = 4 * 32 + 4;     /* words per k tile */
constexpr int BP_MS = (VD / 16) * BP_KS; /* words per matrix */

__device__ __forceinline__ int bp_word(int mat, int kt, int half, int hl, int lane)
{
	return mat * BP_MS + kt * BP_KS + (half * 2 + hl) * 32 + lane;
}

/* Draft vectors before the product; the product's result after it. */
union ver_vec {
	struct {
		uint32_t bp[2 * BP_MS];
		float ki[VW][VPAD]; /* k_t / Gamma_t */
		float qi[VW][VPAD]; /* q_t / Gamma_t (for |q_t|^2 = Gamma q . q / Gamma) */
	} in;
	float wz[VD][VWZ]; /* per row: w_0..7, z_0..7 (before the norms' scales) */
};

struct __align__(16) ver_smem {
	ver_vec vec;
	float k[VD], alpha[VD], v[VD]; /* the replay token */
	float A[VW][VW], P[VW][VW];    /* before the norms' scales */
	float rred[VD / 32];           /* the replay token: sum k^2 per warp */
	float ored[VW][VD / 32];       /* per draft token, per v warp: sum o^2 */
	float rq[VW], rk[VW], beta[VW];
	float rbeta;
	uint64_t mbar[VCHUNKS];
};

struct ver_params {
	int heads, window;
	float scale, norm_eps;
	const uint16_t *conv_w, *norm_w;
	const int32_t *slot;
	void *state;
	uint16_t *conv_state;
	kda_window replay, draft;
	uint16_t *out;
};

/* hi + lo BF16 pair of two floats: hi = bf16(x), lo = bf16(x - hi). */
__device__ __forceinline__ void split2(float x, float y, uint32_t &hi, uint32_t &lo)
{
	hi = pack_bf16(x, y);
	lo = pack_bf16(x - lo_bf16(hi), y - hi_bf16(hi));
}

/*
 * The staged state in shared memory, row-major [v][k]. The bulk copies land
 * rows as they are in HBM; the replay writes them back with their 16-byte
 * chunks permuted, chunk ^ swz(row), so that the tensor-core fragment loads
 * of 8 rows (same k, 8 rows 256 / 512 bytes apart) hit 8 bank groups
 * instead of one. x = 0 addresses the unpermuted layout.
 */
template <typename StateT>
struct ver_rows;

template <>
struct ver_rows<float> {
	static constexpr bool SPLIT = true;
	static __device__ __forceinline__ int swz(int row) { return (row & 7) << 1; }
	/* The replay's 8 k of a row: chunks sub and 16 + sub (kda_step.cuh's layout). */
	static __device__ __forceinline__ void load(const float *row, int sub, int x, float m[STEP_KS])
	{
		const float4 a = *reinterpret_cast<const float4 *>(row + (sub ^ x) * 4);
		const float4 b = *reinterpret_cast<const float4 *>(row + 64 + (sub ^ x) * 4);
		m[0] = a.x, m[1] = a.y, m[2] = a.z, m[3] = a.w;
		m[4] = b.x, m[5] = b.y, m[6] = b.z, m[7] = b.w;
	}
	static __device__ __forceinline__ void store(float *row, int sub, int x, const float m[STEP_KS])
	{
		*reinterpret_cast<float4 *>(row + (sub ^ x) * 4) = make_float4(m[0], m[1], m[2], m[3]);
		*reinterpret_cast<float4 *>(row + 64 + (sub ^ x) * 4) = make_float4(m[4], m[5], m[6], m[7]);
	}
	/* A fragment of rows r, r + 8 (r % 8 = g) at k tile kt: k = 16 kt + 2 tq + {0, 1} and + 8. */
	static __device__ __forceinline__ void afrag(const float *S, int r, int kt, int tq, int x, uint32_t hi[4],
						     uint32_t lo[4])
	{
		const int c0 = 4 * kt + (tq >> 1), off = (2 * tq) & 3;
		const float *p0 = S + r * VD + off, *p1 = S + (r + 8) * VD + off;
		const float2 a0 = *reinterpret_cast<const float2 *>(p0 + ((c0 ^ x) << 2));
		const float2 a1 = *reinterpret_cast<const float2 *>(p1 + ((c0 ^ x) << 2));
		const float2 a2 = *reinterpret_cast<const float2 *>(p0 + (((c0 + 2) ^ x) << 2));
		const float2 a3 = *reinterpret_cast<const float2 *>(p1 + (((c0 + 2) ^ x) << 2));
		split2(a0.x, a0.y, hi[0], lo[0]);
		split2(a1.x, a1.y, hi[1], lo[1]);
		split2(a2.x, a2.y, hi[2], lo[2]);
		split2(a3.x, a3.y, hi[3], lo[3]);
	}
};

template <>
struct ver_rows<uint16_t> {
	static constexpr bool SPLIT = false; /* BF16 state is exact in BF16 */
	static __device__ __forceinline__ int swz(int row) { return row & 7; }
	/* The replay's 8 k of a row: chunk sub. */
	static __device__ __forceinline__ void load(const uint16_t *row, int sub, int x, float m[STEP_KS])
	{
		step_layout<uint16_t>::load(row + ((sub ^ x) - sub) * 8, sub, m);
	}
	static __device__ __forceinline__ void store(uint16_t *row, int sub, int x, const float m[STEP_KS])
	{
		step_layout<uint16_t>::store(row + ((sub ^ x) - sub) * 8, sub, m);
	}
	static __device__ __forceinline__ void afrag(const uint16_t *S, int r, int kt, int tq, int x, uint32_t hi[4],
						     uint32_t *)
	{
		const uint16_t *p0 = S + r * VD + 2 * tq, *p1 = S + (r + 8) * VD + 2 * tq;
		hi[0] = *reinterpret_cast<const uint32_t *>(p0 + (((2 * kt) ^ x) << 3));
		hi[1] = *reinterpret_cast<const uint32_t *>(p1 + (((2 * kt) ^ x) << 3));
		hi[2] = *reinterpret_cast<const uint32_t *>(p0 + (((2 * kt + 1) ^ x) << 3));
		hi[3] = *reinterpret_cast<const uint32_t *>(p1 + (((2 * kt + 1) ^ x) << 3));
	}
};

/* One token's raw inputs of a thread's channels: q|v, k|gate, g|beta. */
struct ver_raw {
	uint16_t x0, x1, g;
};

/* Lower threads: x of q and k channel c and g_raw of channel c; upper
 * threads: x of v channel c, gate_raw of channel c (drafts) and beta. */
__device__ __forceinline__ ver_raw ver_load(const kda_window &w, bool lower, bool gate, size_t bt, int H, int h,
					    int c, size_t C, size_t ch0, size_t ch1)
{
	ver_raw r;
	const uint16_t *x = w.x + bt * C;
	const size_t gi = (bt * H + h) * KDA_HEAD_DIM + c;
	r.x0 = x[ch0];
	if (lower) {
		r.x1 = x[ch1];
		r.g = w.g_raw[gi];
	} else {
		r.x1 = gate ? w.gate_raw[gi] : 0;
		r.g = c == 0 ? w.beta_raw[bt * H + h] : 0;
	}
	return r;
}

/* Threads < 128 own q and k channel c (and its decay), threads >= 128 v
 * channel c, its output gate, and state row c in the draft solve. */
template <typename StateT, int MIN_CTAS, bool EARLY>
__global__ void __launch_bounds__(VNT, MIN_CTAS) kda_verify_kernel(const ver_params p)
{
	extern __shared__ __align__(128) unsigned char dyn[];
	StateT *S = reinterpret_cast<StateT *>(dyn);
	ver_smem &sm = *reinterpret_cast<ver_smem *>(dyn + sizeof(StateT) * VD * VSP);
	const int b = blockIdx.x, h = blockIdx.y, tid = threadIdx.x;
	const int H = p.heads, W = p.window;
	const size_t C = (size_t)H * 3 * VD;
	const int lane = tid & 31, warp = tid >> 5;
	const bool lower = tid < VD;
	const int c = tid & (VD - 1);
	const int n_commit = p.replay.x ? p.replay.n_tokens[b] : 0;
	const int n = p.draft.x ? p.draft.n_tokens[b] : 0;
	if (n_commit + n == 0)
		return;
	const size_t slot = (size_t)p.slot[b];
	StateT *st = static_cast<StateT *>(p.state) + (slot * H + h) * VD * VD;
	constexpr uint32_t CHUNK_BYTES = VCHUNK_ROWS * VD * sizeof(StateT);
	static_assert(VSP == VD, "the bulk copies land whole row blocks");

	/* One thread stages the state, a row block per bulk copy and mbarrier
	 * (per-row copies into padded rows, free of the fragment loads' bank
	 * conflicts, measured slower: 128 small copies per CTA). */
	if (tid == 0) {
#pragma unroll
		for (int i = 0; i < VCHUNKS; i++)
			mbar_init(&sm.mbar[i], 1);
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#pragma unroll
		for (int i = 0; i < VCHUNKS; i++) {
			mbar_expect_tx(&sm.mbar[i], CHUNK_BYTES);
			bulk_g2s(S + (size_t)i * VCHUNK_ROWS * VD, st + (size_t)i * VCHUNK_ROWS * VD, CHUNK_BYTES,
				 &sm.mbar[i]);
		}
	}

	/* Inputs do not depend on the slot: the first replay token's (and, with
	 * registers to spare, every draft's) loads go out with the state's. */
	const size_t ch0 = lower ? (size_t)h * VD + c : (size_t)(2 * H + h) * VD + c;
	const size_t ch1 = (size_t)(H + h) * VD + c;
	ver_raw nxt = {}, dr[VW];
	if (n_commit > 0)
		nxt = ver_load(p.replay, lower, false, (size_t)b * W, H, h, c, C, ch0, ch1);
	auto load_drafts = [&]() {
#pragma unroll
		for (int t = 0; t < VW; t++)
			if (t < n)
				dr[t] = ver_load(p.draft, lower, true, (size_t)b * W + t, H, h, c, C, ch0, ch1);
	};
	if (EARLY)
		load_drafts();

	/* ShortConv taps and history of the thread's channels: lower q, k; upper v. */
	uint16_t *cs = p.conv_state + slot * KDA_CONV_STATE_TAPS * C;
	float cw[2][KDA_CONV_TAPS], hist[2][KDA_CONV_STATE_TAPS];
#pragma unroll
	for (int j = 0; j < 2; j++) {
		if (j == 1 && !lower)
			break;
		const size_t ch = j ? ch1 : ch0;
#pragma unroll
		for (int i = 0; i < KDA_CONV_TAPS; i++)
			cw[j][i] = bf2f(p.conv_w[ch * KDA_CONV_TAPS + i]);
#pragma unroll
		for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
			hist[j][i] = bf2f(cs[(size_t)i * C + ch]);
	}

	/* ---- replay: sequential, in shared memory ---- */
	const int sub = tid & (VLANES - 1), rg = tid / VLANES;
	for (int t = 0; t < n_commit; t++) {
		const ver_raw cur = nxt;
		if (t + 1 < n_commit) /* the next token's loads overlap this one */
			nxt = ver_load(p.replay, lower, false, (size_t)b * W + t + 1, H, h, c, C, ch0, ch1);
		if (lower) {
			(void)conv_step(cw[0], hist[0], bf2f(cur.x0)); /* q: history only, no output */
			const float yk = conv_step(cw[1], hist[1], bf2f(cur.x1));
			sm.k[c] = yk;
			sm.alpha[c] = __expf((float)KDA_GATE_LOWER_BOUND * sigmoidf_(bf2f(cur.g)));
			const float r = group_sum<32>(yk * yk);
			if (lane == 0)
				sm.rred[warp] = r;
		} else {
			sm.v[c] = conv_step(cw[0], hist[0], bf2f(cur.x0));
			if (c == 0)
				sm.rbeta = sigmoidf_(bf2f(cur.g));
		}
		__syncthreads();
		if (t == 0)
#pragma unroll
			for (int i = 0; i < VCHUNKS; i++)
				mbar_wait(&sm.mbar[i], 0);
		const float rk = rsqrtf(sm.rred[0] + sm.rred[1] + sm.rred[2] + sm.rred[3] + (float)KDA_L2_EPS);
		const float beta = sm.rbeta;
		float kh[STEP_KS], al[STEP_KS];
#pragma unroll
		for (int e = 0; e < STEP_KS; e += 4) {
			const int kp = step_layout<StateT>::k(sub, e);
			const float4 bb = *reinterpret_cast<const float4 *>(&sm.k[kp]);
			const float4 cc = *reinterpret_cast<const float4 *>(&sm.alpha[kp]);
			kh[e] = bb.x * rk, kh[e + 1] = bb.y * rk, kh[e + 2] = bb.z * rk, kh[e + 3] = bb.w * rk;
			al[e] = cc.x, al[e + 1] = cc.y, al[e + 2] = cc.z, al[e + 3] = cc.w;
		}
		const bool last = t == n_commit - 1;
#pragma unroll 2
		for (int i = 0; i < VRPT; i++) {
			const int row = rg + VRG * i;
			float m[STEP_KS];
			/* the bulk copy's layout for the first token, permuted after */
			ver_rows<StateT>::load(S + (size_t)row * VSP, sub, t == 0 ? 0 : ver_rows<StateT>::swz(row), m);
			float a = 0.0f;
#pragma unroll
			for (int e = 0; e < STEP_KS; e++) {
				m[e] *= al[e];
				a += m[e] * kh[e];
			}
			a = group_sum<VLANES>(a);
			const float coef = beta * (sm.v[row] - a);
#pragma unroll
			for (int e = 0; e < STEP_KS; e++)
				m[e] += coef * kh[e];
			/* The first token moves chunks between the row's 16 lanes: every
			 * lane has read (the shuffles above consumed the loads) before
			 * any writes; __syncwarp makes that ordering explicit. */
			if (t == 0)
				__syncwarp();
			ver_rows<StateT>::store(S + (size_t)row * VSP, sub, ver_rows<StateT>::swz(row), m);
			if (last)
				step_layout<StateT>::store(st + (size_t)row * VD, sub, m);
		}
		__syncthreads();
	}
	if (!EARLY)
		load_drafts(); /* all n tokens in one round trip */
	if (n_commit > 0) {
#pragma unroll
		for (int j = 0; j < 2; j++) {
			if (j == 1 && !lower)
				break;
			const size_t ch = j ? ch1 : ch0;
#pragma unroll
			for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
				cs[(size_t)i * C + ch] = f2bf(hist[j][i]);
		}
	}
	if (n == 0)
		return;

	/* ---- drafts: inputs of all n tokens ---- */
	float vv[VW], og[VW];
	float G = 0.0f; /* cumulative log decay of k channel c */
	/* Where channel c's values go in the packed fragments (token t: lane + 4 t). */
	const int w16 = c & 15;
	uint16_t *bp16 = reinterpret_cast<uint16_t *>(sm.vec.in.bp);
	const int bpk = 2 * bp_word(0, c >> 4, w16 >> 3, 0, (w16 & 7) >> 1) + (w16 & 1);
#pragma unroll
	for (int t = 0; t < VW; t++) {
		vv[t] = og[t] = 0.0f;
		if (t >= n)
			continue;
		if (lower) {
			const float yq = conv_step(cw[0], hist[0], bf2f(dr[t].x0));
			const float yk = conv_step(cw[1], hist[1], bf2f(dr[t].x1));
			G += (float)KDA_GATE_LOWER_BOUND * sigmoidf_(bf2f(dr[t].g));
			const float eg = __expf(G), ieg = __expf(-G);
			const float kd = yk * eg, qd = yq * eg;
			const uint16_t kh = f2bf(kd), qh = f2bf(qd);
			const int o = bpk + 8 * t; /* lane + 4 t, in halves */
			bp16[o] = kh;
			bp16[o + 64] = f2bf(kd - bf2f(kh));
			bp16[o + 2 * BP_MS] = qh;
			bp16[o + 2 * BP_MS + 64] = f2bf(qd - bf2f(qh));
			sm.vec.in.ki[t][c] = yk * ieg;
			sm.vec.in.qi[t][c] = yq * ieg;
		} else {
			vv[t] = conv_step(cw[0], hist[0], bf2f(dr[t].x0));
			og[t] = sigmoidf_(bf2f(dr[t].x1));
			if (c == 0)
				sm.beta[t] = sigmoidf_(bf2f(dr[t].g));
		}
	}
	__syncthreads();

	/* A, P and the norms: one warp per (t, s), s <= t, lane = 4 k tile + j
	 * over k = 16 kt + 8 half + 2 j + {0, 1}; |k_t|^2 = (Gamma k_t) . (k_t /
	 * Gamma_t), |q_t|^2 likewise. Unscaled: the solve applies the norms. */
	for (int pi = warp; pi < n * (n + 1) / 2; pi += VNT / 32) {
		int t = 0;
		while ((t + 1) * (t + 2) / 2 <= pi)
			t++;
		const int s = pi - t * (t + 1) / 2;
		const int kt = lane >> 2, j = lane & 3;
		float a = 0.0f, q = 0.0f, qq = 0.0f;
#pragma unroll
		for (int half = 0; half < 2; half++) {
			const int k = 16 * kt + 8 * half + 2 * j;
			const uint32_t khi = sm.vec.in.bp[bp_word(0, kt, half, 0, 4 * t + j)];
			const uint32_t klo = sm.vec.in.bp[bp_word(0, kt, half, 1, 4 * t + j)];
			const uint32_t qhi = sm.vec.in.bp[bp_word(1, kt, half, 0, 4 * t + j)];
			const uint32_t qlo = sm.vec.in.bp[bp_word(1, kt, half, 1, 4 * t + j)];
			const float2 ki = *reinterpret_cast<const float2 *>(&sm.vec.in.ki[s][k]);
			const float kd0 = lo_bf16(khi) + lo_bf16(klo), kd1 = hi_bf16(khi) + hi_bf16(klo);
			const float qd0 = lo_bf16(qhi) + lo_bf16(qlo), qd1 = hi_bf16(qhi) + hi_bf16(qlo);
			a += kd0 * ki.x + kd1 * ki.y;
			q += qd0 * ki.x + qd1 * ki.y;
			if (s == t) {
				const float2 qi = *reinterpret_cast<const float2 *>(&sm.vec.in.qi[t][k]);
				qq += qd0 * qi.x + qd1 * qi.y;
			}
		}
		a = group_sum<32>(a);
		q = group_sum<32>(q);
		if (s == t)
			qq = group_sum<32>(qq);
		if (lane == 0) {
			sm.A[t][s] = a;
			sm.P[t][s] = q;
			if (s == t) {
				sm.rk[t] = rsqrtf(a + (float)KDA_L2_EPS);
				sm.rq[t] = rsqrtf(qq + (float)KDA_L2_EPS) * p.scale;
			}
		}
	}

	/* w, z for the warp's 16 rows: S x [Gamma k | Gamma q] on tensor cores. */
	const int r0 = 16 * warp, g = lane >> 2, tq = lane & 3;
	if (n_commit == 0)
		mbar_wait(&sm.mbar[r0 / VCHUNK_ROWS], 0);
	float dw[4] = { 0.0f, 0.0f, 0.0f, 0.0f }, dz[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
	const uint32_t live = g < n ? 0xffffffffu : 0u; /* token g of the fragments is a draft */
	const int ax = n_commit > 0 ? ver_rows<StateT>::swz(r0 + g) : 0; /* the replay permuted the rows */
#pragma unroll 2
	for (int kt = 0; kt < VD / 16; kt++) {
		uint32_t ah[4], alo[4];
		ver_rows<StateT>::afrag(S, r0 + g, kt, tq, ax, ah, alo);
		const uint32_t *bp = sm.vec.in.bp;
		const uint32_t kh0 = bp[bp_word(0, kt, 0, 0, lane)] & live, kh1 = bp[bp_word(0, kt, 1, 0, lane)] & live;
		const uint32_t kl0 = bp[bp_word(0, kt, 0, 1, lane)] & live, kl1 = bp[bp_word(0, kt, 1, 1, lane)] & live;
		const uint32_t qh0 = bp[bp_word(1, kt, 0, 0, lane)] & live, qh1 = bp[bp_word(1, kt, 1, 0, lane)] & live;
		const uint32_t ql0 = bp[bp_word(1, kt, 0, 1, lane)] & live, ql1 = bp[bp_word(1, kt, 1, 1, lane)] & live;
		mma_bf16_16816(dw, ah, kh0, kh1);
		mma_bf16_16816(dw, ah, kl0, kl1);
		mma_bf16_16816(dz, ah, qh0, qh1);
		mma_bf16_16816(dz, ah, ql0, ql1);
		if constexpr (ver_rows<StateT>::SPLIT) {
			mma_bf16_16816(dw, alo, kh0, kh1);
			mma_bf16_16816(dz, alo, qh0, qh1);
		}
	}
	__syncthreads(); /* every warp has read the vectors: wz may overwrite them */
	sm.vec.wz[r0 + g][2 * tq] = dw[0], sm.vec.wz[r0 + g][2 * tq + 1] = dw[1];
	sm.vec.wz[r0 + g + 8][2 * tq] = dw[2], sm.vec.wz[r0 + g + 8][2 * tq + 1] = dw[3];
	sm.vec.wz[r0 + g][VW + 2 * tq] = dz[0], sm.vec.wz[r0 + g][VW + 2 * tq + 1] = dz[1];
	sm.vec.wz[r0 + g + 8][VW + 2 * tq] = dz[2], sm.vec.wz[r0 + g + 8][VW + 2 * tq + 1] = dz[3];
	__syncthreads();
	if (lower)
		return;

	/* ---- drafts: row c's coefficients and outputs, then the gated RMSNorm ---- */
	float u[VW], o[VW];
#pragma unroll
	for (int t = 0; t < VW; t++) {
		u[t] = o[t] = 0.0f;
		if (t >= n)
			continue;
		/* u[] holds |k_s|^-1 u_s: A and P are in unnormalized k, q. */
		float acc = sm.vec.wz[c][t];
#pragma unroll
		for (int s = 0; s < t; s++)
			acc += sm.A[t][s] * u[s];
		const float rk = sm.rk[t];
		u[t] = rk * sm.beta[t] * (vv[t] - rk * acc);
		float ot = sm.vec.wz[c][VW + t];
#pragma unroll
		for (int s = 0; s <= t; s++)
			ot += sm.P[t][s] * u[s];
		ot *= sm.rq[t];
		o[t] = ot;
		const float r = group_sum<32>(ot * ot);
		if (lane == 0)
			sm.ored[t][warp - VD / 32] = r;
	}
	asm volatile("bar.sync 1, %0;\n" ::"r"(VD) : "memory"); /* the 4 warps of rows */
	const float nw = bf2f(p.norm_w[c]);
#pragma unroll
	for (int t = 0; t < VW; t++) {
		if (t >= n)
			continue;
		const float ss = sm.ored[t][0] + sm.ored[t][1] + sm.ored[t][2] + sm.ored[t][3];
		const float r = rsqrtf(ss * (1.0f / VD) + p.norm_eps);
		const size_t bt = (size_t)b * W + t;
		p.out[(bt * H + h) * VD + c] = f2bf(o[t] * r * nw * og[t]);
	}
}

template <typename StateT, int MIN_CTAS, bool EARLY>
int ver_launch(const ver_params &p, int batch, cudaStream_t stream)
{
	constexpr size_t smem = sizeof(StateT) * VD * VSP + sizeof(ver_smem);
	auto kern = kda_verify_kernel<StateT, MIN_CTAS, EARLY>;
	static bool configured = false;
	if (!configured) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
		    cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100) != cudaSuccess)
			return kda_launch_status();
		configured = true;
	}
	kern<<<dim3((unsigned)batch, (unsigned)p.heads), VNT, smem, stream>>>(p);
	return kda_launch_status();
}

/* KDA_VERIFY_KERNEL: step (1): kda_step.cuh's sequential kernel; default (0).
 * (BF16 state at 3 CTAs per SM with every draft's loads issued up front, the
 * FP32 kernel's way, measured 28 % slower than 4 CTAs per SM at B = 64:
 * bench/results/kda-verify-h200-2026-11-29/run3.) */
int verify_variant()
{
	static int v = -1;
	if (v < 0) {
		const char *e = getenv("KDA_VERIFY_KERNEL");
		v = e && !strcmp(e, "step") ? 1 : 0;
	}
	return v;
}

bool window_ok(const struct kda_window *w, bool need_gate)
{
	return !w->x || (w->g_raw && w->beta_raw && w->n_tokens && (!need_gate || w->gate_raw));
}

step_window to_step(const struct kda_window *w, uint16_t *out)
{
	step_window s = {};
	s.x = w->x;
	s.g_raw = w->g_raw;
	s.beta_raw = w->beta_raw;
	s.gate_raw = w->gate_raw;
	s.n_tokens = w->n_tokens;
	s.out = out;
	return s;
}

} // namespace

extern "C" int kda_verify_replay(const struct kda_verify_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->heads < 1 || a->heads > 65535)
		return -EINVAL;
	if (a->window < 1 || a->window > KDA_MAX_WINDOW)
		return -EINVAL;
	if (a->state_dtype != KDA_F32 && a->state_dtype != KDA_BF16)
		return -EINVAL;
	if (!a->conv_w || !a->norm_w || !a->slot || !a->state || !a->conv_state)
		return -EINVAL;
	if (!window_ok(&a->replay, false) || !window_ok(&a->draft, true) || (a->draft.x && !a->out))
		return -EINVAL;
	const int variant = verify_variant();
	if (variant == 1) {
		step_params p = {};
		p.heads = a->heads;
		p.window = a->window;
		p.scale = a->scale;
		p.norm_eps = a->norm_eps;
		p.conv_w = a->conv_w;
		p.norm_w = a->norm_w;
		p.slot = a->slot;
		p.state = a->state;
		p.conv_state = a->conv_state;
		p.commit = to_step(&a->replay, nullptr);
		p.spec = to_step(&a->draft, a->out);
		return step_launch(p, a->batch, a->state_dtype, stream);
	}
	ver_params p = {};
	p.heads = a->heads;
	p.window = a->window;
	p.scale = a->scale;
	p.norm_eps = a->norm_eps;
	p.conv_w = a->conv_w;
	p.norm_w = a->norm_w;
	p.slot = a->slot;
	p.state = a->state;
	p.conv_state = a->conv_state;
	p.replay = a->replay;
	p.draft = a->draft;
	p.out = a->out;
	/* Shared memory sets the CTAs per SM (FP32 ~83 KiB: 2, BF16 ~50 KiB: 4);
	 * with 2 CTAs per SM the registers hold every draft's inputs early. */
	if (a->state_dtype == KDA_F32)
		return ver_launch<float, 2, true>(p, a->batch, stream);
	return ver_launch<uint16_t, 4, false>(p, a->batch, stream);
}
