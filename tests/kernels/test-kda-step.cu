/* SPDX-License-Identifier: MIT */
/*
 * The KDA recurrent kernels' warp steps (kernels/kda/kda_recur_step.cuh: recur_chunk(),
 * cross_terms(), recur_pair()) run unmodified on the host, against float64 (no GPU needed; built
 * with nvcc, suite 'unit'). The header's warp primitives are given here in host forms: 32 threads
 * run one warp's lanes in lock step, and ldmatrix (.x4, plain and .trans) and mma.m16n8k16 (BF16,
 * FP32 accumulate) are collective as on the GPU, with the fragments the PTX ISA defines. Random
 * chunk records a and b (any values: the recurrence's algebra holds for any record) are staged as
 * the pair kernel stages them, for a warp whose 16 state rows start at v = 16 (the U slice's
 * swizzle offset), and
 *   1. recur_chunk() on a, then on b (the chunk kernel's step, measured on GPUs since 2026-11-29:
 *      this checks the emulation itself),
 *   2. cross_terms() and recur_pair() on the pair (the pair kernel, K3_KDA_RECUR=pair),
 * must each give the outputs of both chunks and the state after them within 1 % of the largest
 * value (BF16 operands: ~0.4 %) of the float64 recurrence W = U - M Wk^T, O = M Qt^T + W P^T,
 * M <- M D + W Kh; b's outputs past its length are not written. (Leaving D_b out of the pair's
 * state decay fails: 1.9-2.4 %; Y read where X is: outputs off by 100 %.)
 *   3. pair_cta() (the pair kernel's whole CTA: the bulk copies of a pair's records, mbarriers,
 *      __syncthreads(), the cross warp a pair ahead, odd last chunks, the state in and out) on
 *      every CTA of a grid over packed sequences of 0-7 chunks, FP32 and BF16 state, 1-, 2- and
 *      4-warp CTAs, each CTA's threads at once (mbarriers and bulk copies emulated: a copy lands
 *      when issued), against the float64 recurrence over the same records: every output written,
 *      outputs and states within 1 % (the cross warp on the other stage fails: 95-100 %; on the
 *      pair after next it hangs, as it would on the GPU).
 *   4. split_cta() (K3_KDA_RECUR=split: the chunk kernel's CTA on split records, which carry Kt
 *      and TB = T diag(beta) instead of Wk and U^T; the CTA stages its v rows beside each record,
 *      makes -Wk = -TB Kt a step ahead and U^T = V^T TB^T in each step) over packed sequences
 *      with partial last chunks, shared memory poisoned with NaN before each CTA, 1-8 warps, 2-4
 *      stages, FP32 and BF16 state, against the float64 recurrence with Wk = TB Kt, U = TB V:
 *      within 1 %, every output written and finite. Must fail: TB's hi half zeroed in the
 *      records, v given a token late (both ~100 %); the v rows' zeroing left out gives NaN
 *      outputs (tried by hand, 2026-12-05).
 */
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>


/* ---- the host forms of the step's primitives ---------------------------------------------- */

#define KDA_STEP_FN static inline

static uint8_t *emu_smem; /* the stage image / the CTA's shared memory: "shared memory" addresses are offsets into it */
static thread_local int emu_lane, emu_warp;

/* A barrier of n threads (a warp's lanes, or a CTA). */
struct emu_barrier {
	std::mutex mu;
	std::condition_variable cv;
	int n = 32, arrived = 0, generation = 0;

	void wait()
	{
		std::unique_lock<std::mutex> lk(mu);
		const int gen = generation;
		if (++arrived == n) {
			arrived = 0;
			generation++;
			cv.notify_all();
		} else {
			cv.wait(lk, [&] { return gen != generation; });
		}
	}
};

constexpr int EMU_WARPS = 9; /* at most 8 state warps and the cross warp */
static emu_barrier emu_warp_bar[EMU_WARPS], emu_cta_bar;

/* All 32 lanes of this lane's warp meet. */
static void emu_bar()
{
	emu_warp_bar[emu_warp].wait();
}

static uint16_t bf16_rn(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN */
		return (uint16_t)((u >> 16) | 0x40u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static float bf16_f(uint16_t b)
{
	const uint32_t u = (uint32_t)b << 16;
	float x;
	memcpy(&x, &u, 4);
	return x;
}

static inline uint32_t pack_bf16(float lo, float hi)
{
	return (uint32_t)bf16_rn(lo) | (uint32_t)bf16_rn(hi) << 16;
}

static inline float lo_bf16(uint32_t x)
{
	return bf16_f((uint16_t)(x & 0xffffu));
}

static inline float hi_bf16(uint32_t x)
{
	return bf16_f((uint16_t)(x >> 16));
}

static inline uint16_t f2bf(float x)
{
	return bf16_rn(x);
}

static inline uint32_t smem_u32(const void *p)
{
	return (uint32_t)(static_cast<const uint8_t *>(p) - emu_smem);
}

static uint32_t emu_addr[EMU_WARPS][32];

static uint16_t emu_ld16(uint32_t a)
{
	uint16_t v;
	memcpy(&v, emu_smem + a, 2);
	return v;
}

/* ldmatrix.m8n8.x4: lanes 8 i .. 8 i + 7 give matrix i's row addresses; lane T gets (row T / 4,
 * columns 2 (T % 4), + 1), or with .trans (rows 2 (T % 4), + 1 of column T / 4). */
static void emu_ldsm(uint32_t r[4], uint32_t addr, bool trans)
{
	const int T = emu_lane;
	uint32_t *ad = emu_addr[emu_warp];
	ad[T] = addr;
	emu_bar();
	for (int i = 0; i < 4; i++) {
		uint16_t lo, hi;
		if (!trans) {
			const uint32_t row = ad[8 * i + T / 4];
			lo = emu_ld16(row + 4 * (T % 4));
			hi = emu_ld16(row + 4 * (T % 4) + 2);
		} else {
			lo = emu_ld16(ad[8 * i + 2 * (T % 4)] + 2 * (T / 4));
			hi = emu_ld16(ad[8 * i + 2 * (T % 4) + 1] + 2 * (T / 4));
		}
		r[i] = (uint32_t)lo | (uint32_t)hi << 16;
	}
	emu_bar();
}

static inline void ldsm_x4(uint32_t r[4], uint32_t addr)
{
	emu_ldsm(r, addr, false);
}

static inline void ldsm_x4_tr(uint32_t r[4], uint32_t addr)
{
	emu_ldsm(r, addr, true);
}

static uint32_t emu_a[EMU_WARPS][32][4], emu_b[EMU_WARPS][32][2];

/* mma.m16n8k16.row.col.f32.bf16.bf16.f32: lane T (g = T / 4, t = T % 4) holds A (g, 2t + e),
 * (g + 8, 2t + e), (g, 2t + 8 + e), (g + 8, 2t + 8 + e), B (2t + e, g), (2t + 8 + e, g), and
 * C / D (g, 2t + e), (g + 8, 2t + e). Each output summed in double, rounded to FP32 once. */
static inline void mma_bf16_16816(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	const int T = emu_lane, g = T / 4, t = T % 4;
	uint32_t(*ea)[4] = emu_a[emu_warp], (*eb)[2] = emu_b[emu_warp];
	memcpy(ea[T], a, sizeof ea[T]);
	eb[T][0] = b0, eb[T][1] = b1;
	emu_bar();
	auto A = [&](int row, int k) {
		const int gg = row & 7, hi = row >> 3, kh = k >> 3, tt = (k & 7) >> 1, e = k & 1;
		const uint32_t w = ea[4 * gg + tt][hi + 2 * kh];
		return (double)(e ? hi_bf16(w) : lo_bf16(w));
	};
	auto B = [&](int k, int n) {
		const int kh = k >> 3, tt = (k & 7) >> 1, e = k & 1;
		const uint32_t w = eb[4 * n + tt][kh];
		return (double)(e ? hi_bf16(w) : lo_bf16(w));
	};
	for (int i = 0; i < 4; i++) {
		const int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
		double z = d[i];
		for (int k = 0; k < 16; k++)
			z += A(row, k) * B(k, col);
		d[i] = (float)z;
	}
	emu_bar();
}

static inline void kda_warp_sync()
{
	emu_bar();
}

static inline void kda_proxy_fence_cta()
{
}

/* The CTA level (pair_cta()): __syncthreads() over the CTA's threads; mbarriers (phase, arrivals
 * still expected, transaction bytes still expected) in a table beside the kernel's uint64_t words;
 * bulk copies done at once by the issuing thread; state in FP32 or BF16. */
static inline void kda_cta_sync()
{
	emu_cta_bar.wait();
}

static inline void kda_fence_mbar_init()
{
}

struct emu_mbar {
	int count, pending, phase;
	long long tx;
};
static uint64_t *emu_mbar_base;
static emu_mbar emu_mbars[8];
static std::mutex emu_mbar_mu;
static std::condition_variable emu_mbar_cv;

static emu_mbar &emu_mbar_of(uint64_t *bar)
{
	return emu_mbars[bar - emu_mbar_base];
}

/* A phase completes once its arrivals and its transaction bytes are all in. */
static void emu_mbar_settle(emu_mbar &m)
{
	if (m.pending == 0 && m.tx == 0) {
		m.phase ^= 1;
		m.pending = m.count;
		emu_mbar_cv.notify_all();
	}
}

static inline void mbar_init(uint64_t *bar, uint32_t count)
{
	std::lock_guard<std::mutex> lk(emu_mbar_mu);
	emu_mbar_of(bar) = { (int)count, (int)count, 0, 0 };
}

static inline void mbar_expect_tx(uint64_t *bar, uint32_t bytes)
{
	std::lock_guard<std::mutex> lk(emu_mbar_mu);
	emu_mbar &m = emu_mbar_of(bar);
	m.tx += bytes;
	m.pending--;
	emu_mbar_settle(m);
}

/* try_wait.parity: the phase of this parity has completed once the current phase's differs. */
static inline void mbar_wait(uint64_t *bar, uint32_t parity)
{
	std::unique_lock<std::mutex> lk(emu_mbar_mu);
	emu_mbar &m = emu_mbar_of(bar);
	emu_mbar_cv.wait(lk, [&] { return (uint32_t)m.phase != parity; });
}

static inline void bulk_g2s(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
	memcpy(dst, src, bytes);
	std::lock_guard<std::mutex> lk(emu_mbar_mu);
	emu_mbar &m = emu_mbar_of(bar);
	m.tx -= bytes;
	emu_mbar_settle(m);
}

/* cp.async (16 bytes, zero-filled past `bytes`): done at once; groups need no tracking then. */
static inline void cp_async16(void *dst, const void *src, int bytes)
{
	memset(dst, 0, 16);
	memcpy(dst, src, (size_t)bytes);
}

static inline void cp_async_commit()
{
}

template <int N>
static inline void cp_async_wait()
{
}

static inline void wait_ready(const int32_t *flag)
{
	(void)flag; /* the serial path only: records are all written before the recurrence */
}

template <typename T>
struct state_io;
template <>
struct state_io<float> {
	static float load(const float *p) { return *p; }
	static void store(float *p, float x) { *p = x; }
};
template <>
struct state_io<uint16_t> {
	static float load(const uint16_t *p) { return lo_bf16(*p); }
	static void store(uint16_t *p, float x) { *p = f2bf(x); }
};

#include "kda/kda_recur_step.cuh"
#include "host_expect.h"

/* ---- the check -------------------------------------------------------------------------- */


static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double uniform(double lo, double hi)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (hi - lo) * (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

constexpr int WARPS = 1, VBASE = 16, RB = stage_bytes(WARPS);

/* One chunk record, logical (BF16 values as doubles), and where it is staged. */
struct record {
	double wk[CH][D], qt[CH][D], kh[CH][D], p[CH][CH], g[D], ut[16][CH]; /* ut: U^T rows VBASE.. */
};

static void st16(std::vector<uint8_t> &m, int off, double x)
{
	const uint16_t b = bf16_rn((float)x);
	memcpy(&m[off], &b, 2);
}

/* Random record values (BF16), written into `m` at `base` in the staged layout. */
static void make_record(record &r, std::vector<uint8_t> &m, int base, bool causal_p)
{
	for (int t = 0; t < CH; t++)
		for (int j = 0; j < D; j++) {
			r.wk[t][j] = bf16_f(bf16_rn((float)uniform(-0.3, 0.3)));
			r.qt[t][j] = bf16_f(bf16_rn((float)uniform(-1, 1)));
			r.kh[t][j] = bf16_f(bf16_rn((float)uniform(-1, 1)));
			st16(m, base + REC_WK + t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2, r.wk[t][j]);
			st16(m, base + REC_QT + t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2, r.qt[t][j]);
			st16(m, base + REC_KH + j * CH * 2 + swz_narrow(j, t >> 3) * 16 + (t & 7) * 2, r.kh[t][j]);
		}
	for (int t = 0; t < CH; t++)
		for (int s = 0; s < CH; s++) {
			r.p[t][s] = causal_p && s > t ? 0.0 : bf16_f(bf16_rn((float)uniform(-1, 1)));
			st16(m, base + REC_P + t * CH * 2 + swz_narrow(t, s >> 3) * 16 + (s & 7) * 2, r.p[t][s]);
		}
	for (int j = 0; j < D; j++) {
		const float g = (float)uniform(0.05, 1);
		r.g[j] = g;
		memcpy(&m[base + REC_G + 4 * g_index(j)], &g, 4);
	}
	for (int v = 0; v < 16; v++)
		for (int t = 0; t < CH; t++) {
			r.ut[v][t] = bf16_f(bf16_rn((float)uniform(-1, 1)));
			st16(m, base + REC_U + v * CH * 2 + swz_narrow(VBASE + v, t >> 3) * 16 + (t & 7) * 2, r.ut[v][t]);
		}
}

/* The float64 recurrence over one chunk for the warp's rows: outputs o[t][v] (t < len). */
static void ref_chunk(const record &r, double m[16][D], double o[CH][16], int len)
{
	double w[16][CH];
	for (int v = 0; v < 16; v++)
		for (int t = 0; t < CH; t++) {
			double z = r.ut[v][t];
			for (int k = 0; k < D; k++)
				z -= m[v][k] * r.wk[t][k];
			w[v][t] = z;
		}
	for (int v = 0; v < 16; v++)
		for (int t = 0; t < len; t++) {
			double z = 0;
			for (int k = 0; k < D; k++)
				z += m[v][k] * r.qt[t][k];
			for (int s = 0; s < CH; s++)
				z += w[v][s] * r.p[t][s];
			o[t][v] = z;
		}
	for (int v = 0; v < 16; v++)
		for (int k = 0; k < D; k++) {
			double z = m[v][k] * r.g[k];
			for (int s = 0; s < CH; s++)
				z += w[v][s] * r.kh[s][k];
			m[v][k] = z;
		}
}

/* Runs fn(lane) on 32 threads (one warp). */
template <typename F>
static void warp_run(F fn)
{
	std::vector<std::thread> th;
	for (int l = 0; l < 32; l++)
		th.emplace_back([&, l] {
			emu_lane = l;
			fn(l);
		});
	for (auto &t : th)
		t.join();
}

/* Compares a run's outputs (out[t][v] for v in the warp's rows, 0xffff where not written) and
 * state with float64; returns the largest error over the largest reference value. */
static double compare(const char *what, const std::vector<uint16_t> &out, const float (*s)[D / 8][4],
		      const double o_ref[2 * CH][16], const double m_ref[16][D], int len_b)
{
	double big_o = 0, err_o = 0, big_m = 0, err_m = 0;
	int unwritten = 0, stray = 0;
	for (int t = 0; t < 2 * CH; t++)
		for (int v = 0; v < 16; v++) {
			const uint16_t b = out[(size_t)t * D + VBASE + v];
			if (t >= CH + len_b) {
				stray += b != 0xffff;
				continue;
			}
			if (b == 0xffff) {
				unwritten++;
				continue;
			}
			big_o = fmax(big_o, fabs(o_ref[t][v]));
			err_o = fmax(err_o, fabs(bf16_f(b) - o_ref[t][v]));
		}
	for (int l = 0; l < 32; l++)
		for (int nt = 0; nt < D / 8; nt++)
			for (int i = 0; i < 4; i++) {
				const int v = l / 4 + 8 * (i >> 1), k = nt * 8 + 2 * (l % 4) + (i & 1);
				big_m = fmax(big_m, fabs(m_ref[v][k]));
				err_m = fmax(err_m, fabs(s[l][nt][i] - m_ref[v][k]));
			}
	for (int t = 0; t < 2 * CH; t++)
		for (int v = 0; v < D; v++)
			if (v < VBASE || v >= VBASE + 16)
				stray += out[(size_t)t * D + v] != 0xffff;
	printf("%-32s outputs max err %.3g of %.3g, state %.3g of %.3g; unwritten %d, stray %d\n", what, err_o,
	       big_o, err_m, big_m, unwritten, stray);
	EXPECT(unwritten == 0 && stray == 0, "%s: %d outputs not written, %d written where they should not be\n", what,
	       unwritten, stray);
	EXPECT(err_o <= 1e-2 * big_o, "%s: outputs off by %g (largest %g)\n", what, err_o, big_o);
	EXPECT(err_m <= 1e-2 * big_m, "%s: state off by %g (largest %g)\n", what, err_m, big_m);
	return fmax(err_o / big_o, err_m / big_m);
}

static void run_case(int len_b)
{
	std::vector<uint8_t> stage(pair_stage_bytes(WARPS), 0);
	static record ra, rb;
	make_record(ra, stage, 0, true);
	make_record(rb, stage, RB, len_b == CH);
	/* b's tokens past len_b: zero rows and columns, as the intra kernel writes them. */
	for (int t = len_b; t < CH; t++) {
		for (int j = 0; j < D; j++) {
			rb.wk[t][j] = rb.qt[t][j] = rb.kh[t][j] = 0;
			st16(stage, RB + REC_WK + t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2, 0);
			st16(stage, RB + REC_QT + t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2, 0);
			st16(stage, RB + REC_KH + j * CH * 2 + swz_narrow(j, t >> 3) * 16 + (t & 7) * 2, 0);
		}
		for (int s = 0; s < CH; s++) {
			rb.p[t][s] = rb.p[s][t] = 0;
			st16(stage, RB + REC_P + t * CH * 2 + swz_narrow(t, s >> 3) * 16 + (s & 7) * 2, 0);
			st16(stage, RB + REC_P + s * CH * 2 + swz_narrow(s, t >> 3) * 16 + (t & 7) * 2, 0);
		}
		for (int v = 0; v < 16; v++) {
			rb.ut[v][t] = 0;
			st16(stage, RB + REC_U + v * CH * 2 + swz_narrow(VBASE + v, t >> 3) * 16 + (t & 7) * 2, 0);
		}
	}
	static double m0[16][D], m_ref[16][D], o_ref[2 * CH][16];
	for (int v = 0; v < 16; v++)
		for (int k = 0; k < D; k++)
			m0[v][k] = uniform(-1, 1);
	memcpy(m_ref, m0, sizeof m_ref);
	ref_chunk(ra, m_ref, o_ref, CH);
	ref_chunk(rb, m_ref, o_ref + CH, len_b);

	/* Each lane's state fragments: s[nt][0, 1] = M[g][8 nt + 2t + e], s[nt][2, 3] = M[g + 8][..]. */
	static float s0[32][D / 8][4];
	for (int l = 0; l < 32; l++)
		for (int nt = 0; nt < D / 8; nt++)
			for (int i = 0; i < 4; i++)
				s0[l][nt][i] = (float)m0[l / 4 + 8 * (i >> 1)][nt * 8 + 2 * (l % 4) + (i & 1)];

	char label[64];
	for (int mode = 0; mode < 3; mode++) {
		std::vector<uint8_t> st = stage;
		std::vector<uint16_t> out((size_t)2 * CH * D, 0xffff);
		static float s[32][D / 8][4];
		memcpy(s, s0, sizeof s);
		emu_smem = st.data();
		if (mode == 1)
			warp_run([&](int l) { cross_terms(st.data(), RB, l); });
		if (mode == 2) /* CROSS_REG: X and Y only, the decays in the state warp's registers */
			warp_run([&](int l) { cross_xy(st.data(), RB, l); });
		warp_run([&](int l) {
			const recur_lane lo = recur_lane_of(l, 0, VBASE);
			uint16_t *o = out.data() + VBASE + l / 4;
			if (mode == 0) {
				recur_chunk(s[l], st.data(), lo, o, 1, CH);
				recur_chunk(s[l], st.data() + RB, lo, o + (size_t)CH * D, 1, len_b);
			} else if (mode == 1) {
				recur_pair(s[l], st.data(), RB, lo, o, 1, len_b);
			} else {
				recur_pair<true>(s[l], st.data(), RB, lo, o, 1, len_b);
			}
		});
		snprintf(label, sizeof label, "%s, b of %d tokens:",
			 mode == 2 ? "recur_pair<REG>" : mode ? "recur_pair" : "recur_chunk x 2", len_b);
		compare(label, out, s, o_ref, m_ref, len_b);
	}
}

/* ---- the pair kernel's CTA, over packed sequences --------------------------------------- */

/* One (chunk, head) record with all 128 U^T rows, logical (tokens past len zero, P causal). */
struct full_record {
	double wk[CH][D], qt[CH][D], kh[CH][D], p[CH][CH], g[D], ut[D][CH];
};

static void make_full_record(full_record &r, std::vector<uint8_t> &m, size_t base, int len, double wk_max = 0.3)
{
	auto bf = [](double lo, double hi) { return (double)bf16_f(bf16_rn((float)uniform(lo, hi))); };
	for (int t = 0; t < CH; t++)
		for (int j = 0; j < D; j++) {
			r.wk[t][j] = t < len ? bf(-wk_max, wk_max) : 0;
			r.qt[t][j] = t < len ? bf(-1, 1) : 0;
			r.kh[t][j] = t < len ? bf(-0.3, 0.3) : 0;
			st16(m, base + REC_WK + t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2, r.wk[t][j]);
			st16(m, base + REC_QT + t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2, r.qt[t][j]);
			st16(m, base + REC_KH + j * CH * 2 + swz_narrow(j, t >> 3) * 16 + (t & 7) * 2, r.kh[t][j]);
		}
	for (int t = 0; t < CH; t++)
		for (int s2 = 0; s2 < CH; s2++) {
			r.p[t][s2] = t < len && s2 <= t ? bf(-1, 1) : 0;
			st16(m, base + REC_P + t * CH * 2 + swz_narrow(t, s2 >> 3) * 16 + (s2 & 7) * 2, r.p[t][s2]);
		}
	for (int j = 0; j < D; j++) {
		const float g = (float)uniform(0.6, 1);
		r.g[j] = g;
		memcpy(&m[base + REC_G + 4 * g_index(j)], &g, 4);
	}
	for (int v = 0; v < D; v++)
		for (int t = 0; t < CH; t++) {
			r.ut[v][t] = t < len ? bf(-1, 1) : 0;
			st16(m, base + REC_U + v * CH * 2 + swz_narrow(v, t >> 3) * 16 + (t & 7) * 2, r.ut[v][t]);
		}
}

/* The float64 recurrence over one chunk, all 128 rows: outputs o[t][v] (t < len). */
static void ref_full(const full_record &r, std::vector<double> &m, double *o, int len, int H)
{
	static double w[D][CH];
	for (int v = 0; v < D; v++)
		for (int t = 0; t < CH; t++) {
			double z = r.ut[v][t];
			for (int k = 0; k < D; k++)
				z -= m[v * D + k] * r.wk[t][k];
			w[v][t] = z;
		}
	for (int t = 0; t < len; t++)
		for (int v = 0; v < D; v++) {
			double z = 0;
			for (int k = 0; k < D; k++)
				z += m[v * D + k] * r.qt[t][k];
			for (int s2 = 0; s2 < CH; s2++)
				z += w[v][s2] * r.p[t][s2];
			o[(size_t)t * H * D + v] = z;
		}
	for (int v = 0; v < D; v++)
		for (int k = 0; k < D; k++) {
			double z = m[v * D + k] * r.g[k];
			for (int s2 = 0; s2 < CH; s2++)
				z += w[v][s2] * r.kh[s2][k];
			m[v * D + k] = z;
		}
}

/* A packed batch of sequences (lens), its chunk offsets and its grid of n x 8 / W CTAs by H. */
struct packed {
	int n, T, chunks;
	std::vector<int32_t> cu, off;

	explicit packed(const std::vector<int> &lens) : n((int)lens.size()), cu(lens.size() + 1, 0), off(lens.size() + 1, 0)
	{
		for (int i = 0; i < n; i++)
			cu[i + 1] = cu[i] + lens[i], off[i + 1] = off[i] + (lens[i] + CH - 1) / CH;
		T = cu[n], chunks = off[n];
	}
	int len_of(int c, int i) const /* tokens of chunk c of sequence i */
	{
		return std::min(CH, cu[i + 1] - (cu[i] + (c - off[i]) * CH));
	}
};

/* Runs cta(bx, by, tid) for every CTA of a bx_n x by_n grid, each CTA's `threads` threads at once
 * (emulated warps: emu_lane, emu_warp), `smem` poisoned with `poison` before each CTA. */
template <typename F>
static void run_grid(int bx_n, int by_n, int threads, std::vector<uint8_t> &smem, int poison, F cta)
{
	emu_smem = smem.data();
	emu_cta_bar.n = threads;
	for (int bx = 0; bx < bx_n; bx++)
		for (int by = 0; by < by_n; by++) {
			if (poison >= 0)
				memset(smem.data(), poison, smem.size());
			std::vector<std::thread> th;
			for (int tid = 0; tid < threads; tid++)
				th.emplace_back([&, tid] {
					emu_lane = tid & 31, emu_warp = tid >> 5;
					cta(bx, by, tid);
				});
			for (auto &t : th)
				t.join();
		}
}

/* The run's outputs and final states against the float64 recurrence ref(c, h, m, o, lc) (chunk c
 * of head h from state m, outputs o of its first lc tokens, H x D apart), per sequence from s0:
 * every output written and finite, outputs and states within 1 % of the largest reference value.
 * `expect` false: the check must fail (a mutation). */
template <typename StateT, typename Ref>
static void check_grid(const char *what, const packed &b, int H, const std::vector<StateT> &s0,
		       const std::vector<StateT> &s1, const std::vector<uint16_t> &out, bool expect, Ref ref)
{
	std::vector<double> o_ref((size_t)b.T * H * D, 0), m(D * D);
	double big_o = 0, err_o = 0, big_m = 0, err_m = 0;
	int unwritten = 0, nonfinite = 0;
	for (int i = 0; i < b.n; i++)
		for (int h = 0; h < H; h++) {
			const size_t sb = ((size_t)i * H + h) * D * D;
			for (int e = 0; e < D * D; e++)
				m[e] = state_io<StateT>::load(&s0[sb + e]);
			for (int c = b.off[i]; c < b.off[i + 1]; c++) {
				const int t0 = b.cu[i] + (c - b.off[i]) * CH;
				ref(c, h, m, &o_ref[((size_t)t0 * H + h) * D], b.len_of(c, i));
			}
			for (int e = 0; e < D * D; e++) {
				const double got = state_io<StateT>::load(&s1[sb + e]);
				nonfinite += !std::isfinite(got);
				big_m = fmax(big_m, fabs(m[e]));
				err_m = fmax(err_m, fabs(got - m[e]));
			}
		}
	for (size_t e = 0; e < out.size(); e++) {
		if (out[e] == 0xffff) {
			unwritten++;
			continue;
		}
		nonfinite += !std::isfinite(bf16_f(out[e]));
		big_o = fmax(big_o, fabs(o_ref[e]));
		err_o = fmax(err_o, fabs(bf16_f(out[e]) - o_ref[e]));
	}
	printf("%-46s outputs max err %.3g of %.3g, states %.3g of %.3g; unwritten %d, non-finite %d\n", what, err_o,
	       big_o, err_m, big_m, unwritten, nonfinite);
	if (expect) {
		EXPECT(unwritten == 0 && nonfinite == 0, "%s: %d outputs not written, %d not finite\n", what, unwritten,
		       nonfinite);
		EXPECT(err_o <= 1e-2 * big_o, "%s: outputs off by %g (largest %g)\n", what, err_o, big_o);
		EXPECT(err_m <= 1e-2 * big_m, "%s: states off by %g (largest %g)\n", what, err_m, big_m);
	} else {
		const bool pass = unwritten == 0 && nonfinite == 0 && err_o <= 1e-2 * big_o && err_m <= 1e-2 * big_m;
		EXPECT(!pass, "%s: passed, but the check should see the mutation\n", what);
	}
}

/* Random initial states, one a (sequence, head). */
template <typename StateT>
static std::vector<StateT> random_states(size_t n)
{
	std::vector<StateT> s(n);
	for (auto &x : s)
		state_io<StateT>::store(&x, (float)uniform(-1, 1));
	return s;
}

/* A grid's worth of random full records (every (chunk, head) of b at H heads), random initial
 * states, poisoned outputs and the recurrence's parameters for CTAs of W warps; check() compares a
 * run with the float64 recurrence over the same records (check_grid()). */
template <typename StateT>
struct full_grid {
	const packed &b;
	int H;
	std::vector<full_record> R;
	std::vector<uint8_t> rec;
	std::vector<StateT> s0, s1;
	std::vector<uint16_t> out;
	recur_params p;

	full_grid(const packed &b_, int H_, int W)
		: b(b_), H(H_), R((size_t)b_.chunks * H_), rec((size_t)b_.chunks * H_ * REC_BYTES, 0),
		  s0(random_states<StateT>((size_t)b_.n * H_ * D * D)), s1(s0.size()), out((size_t)b_.T * H_ * D, 0xffff)
	{
		for (int i = 0; i < b.n; i++)
			for (int c = b.off[i]; c < b.off[i + 1]; c++)
				for (int h = 0; h < H; h++)
					make_full_record(R[(size_t)c * H + h], rec, ((size_t)c * H + h) * REC_BYTES, b.len_of(c, i));
		p = { b.n, H, 8 / W, b.cu.data(), b.off.data(), nullptr, rec.data(), nullptr, s0.data(), s1.data(),
		      out.data(), nullptr, 0 };
	}
	void check(const char *what) const
	{
		check_grid(what, b, H, s0, s1, out, true, [&](int c, int h, std::vector<double> &m, double *o, int lc) {
			ref_full(R[(size_t)c * H + h], m, o, lc, H);
		});
	}
};

/* pair_cta<StateT, W, PST, XM> over every CTA of the grid (n sequences x 8 / W slices, H heads),
 * each CTA's (W + 1) x 32 threads at once, against float64 (check_grid()). */
template <typename StateT, int W, int PST = PAIR_STAGES, int XM = CROSS_SMEM>
static void cta_case(const std::vector<int> &lens, int H)
{
	const packed b(lens);
	full_grid<StateT> f(b, H, W);
	recur_params &p = f.p;
	std::vector<uint8_t> smem((size_t)PST * pair_stage_bytes(W));
	uint64_t full[PST];
	emu_mbar_base = full;
	run_grid(b.n * (8 / W), H, (W + 1) * 32, smem, -1,
		 [&](int bx, int by, int tid) { pair_cta<StateT, W, PST, XM>(p, smem.data(), full, bx, by, tid); });
	char what[96];
	snprintf(what, sizeof what, "pair_cta<%s, %d, %d%s> N=%d H=%d T=%d", sizeof(StateT) == 4 ? "fp32" : "bf16", W, PST,
		 XM == CROSS_REG ? ", REG" : "", b.n, H, b.T);
	f.check(what);
}

/* ---- the split kernel's CTA (K3_KDA_RECUR=split), over packed sequences ------------------ */

/* One split record (logical values; tokens past len zero, P and TB causal): the full record's Kt
 * (in wk, Wk's place), Qt, Kh, P and Gamma_last, and TB = hi + lo (each BF16) where U^T was, as
 * the intra kernel's SPLIT instance writes them. */
struct split_record {
	full_record f; /* f.wk holds Kt; f.ut is not used */
	double tb[CH][CH];
};

static void make_split_record(split_record &r, std::vector<uint8_t> &m, size_t base, int len)
{
	make_full_record(r.f, m, base, len, 0.2); /* Kt; its U^T bytes are overwritten by TB below */
	for (int t = 0; t < CH; t++)
		for (int s2 = 0; s2 < CH; s2++) {
			/* TB = T diag(beta): beta on the diagonal, T's entries below it; split hi / lo */
			const bool in = t < len && s2 <= t;
			const float x = !in ? 0.0f : s2 == t ? (float)uniform(0.2, 1) : (float)uniform(-0.3, 0.3);
			const uint16_t hi = bf16_rn(x), lo = bf16_rn(x - bf16_f(hi));
			r.tb[t][s2] = (double)bf16_f(hi) + (double)bf16_f(lo);
			const size_t at = base + REC_TB + t * CH * 2 + swz_narrow(t, s2 >> 3) * 16 + (s2 & 7) * 2;
			memcpy(&m[at], &hi, 2);
			memcpy(&m[at + TB_LO], &lo, 2);
		}
}

/* The float64 recurrence over one split chunk, all 128 rows: Wk = TB Kt and U = TB V (v: token 0
 * of the chunk, this head, tokens H x D apart) into a full record, then ref_full(). */
static void ref_split(const split_record &r, const uint16_t *v, std::vector<double> &m, double *o, int len, int H)
{
	static full_record f;
	f = r.f;
	for (int t = 0; t < CH; t++) {
		for (int k = 0; k < D; k++) {
			double z = 0;
			for (int s2 = 0; s2 < CH; s2++)
				z += r.tb[t][s2] * r.f.wk[s2][k];
			f.wk[t][k] = z;
		}
		for (int vv = 0; vv < D; vv++) {
			double z = 0;
			for (int s2 = 0; s2 < len; s2++)
				z += r.tb[t][s2] * bf16_f(v[(size_t)s2 * H * D + vv]);
			f.ut[vv][t] = z;
		}
	}
	ref_full(f, m, o, len, H);
}

/* split_cta<StateT, W, S> over every CTA of the grid (n sequences x 8 / W slices, H heads), each
 * CTA's W x 32 threads at once, shared memory poisoned (NaN) before each CTA, K3_KDA_SPLIT_OPT
 * bits `opt`, against float64 (check_grid()). `mutate` (the check must then fail): 1 the records'
 * TB hi halves zeroed (the reference keeps them), 2 the kernel given v one token late. */
template <typename StateT, int W, int S>
static void split_case(const std::vector<int> &lens, int H, int mutate = 0, int opt = 0)
{
	const packed b(lens);
	std::vector<split_record> R((size_t)b.chunks * H);
	std::vector<uint8_t> rec((size_t)b.chunks * H * REC_BYTES, 0);
	for (int i = 0; i < b.n; i++)
		for (int c = b.off[i]; c < b.off[i + 1]; c++)
			for (int h = 0; h < H; h++)
				make_split_record(R[(size_t)c * H + h], rec, ((size_t)c * H + h) * REC_BYTES, b.len_of(c, i));
	std::vector<uint16_t> vin((size_t)(b.T + 1) * H * D); /* one token more: mutation 2 reads it */
	for (auto &x : vin)
		x = bf16_rn((float)uniform(-1, 1));
	if (mutate == 1)
		for (size_t r = 0; r < (size_t)b.chunks * H; r++)
			memset(&rec[r * REC_BYTES + REC_TB], 0, TB_LO);
	const std::vector<StateT> s0 = random_states<StateT>((size_t)b.n * H * D * D);
	std::vector<StateT> s1(s0.size());
	std::vector<uint16_t> out((size_t)b.T * H * D, 0xffff);
	recur_params p = { b.n, H, 8 / W, b.cu.data(), b.off.data(), nullptr, rec.data(), nullptr, s0.data(), s1.data(),
			   out.data(), vin.data() + (mutate == 2 ? (size_t)H * D : 0), opt };
	std::vector<uint8_t> smem((size_t)S * split_stage_bytes(W));
	uint64_t full[S];
	emu_mbar_base = full;
	run_grid(b.n * (8 / W), H, W * 32, smem, 0xff, /* BF16 0xffff: NaN */
		 [&](int bx, int by, int tid) { split_cta<StateT, W, S>(p, smem.data(), full, bx, by, tid); });
	char what[96];
	snprintf(what, sizeof what, "split_cta<%s, %d, %d> opt %d%s N=%d H=%d T=%d", sizeof(StateT) == 4 ? "fp32" : "bf16",
		 W, S, opt, mutate == 1 ? " (TB hi zeroed)" : mutate == 2 ? " (v a token late)" : "", b.n, H, b.T);
	check_grid(what, b, H, s0, s1, out, mutate == 0, [&](int c, int h, std::vector<double> &m, double *o, int lc) {
		const int i = (int)(std::upper_bound(b.off.begin(), b.off.end(), c) - b.off.begin()) - 1;
		const int t0 = b.cu[i] + (c - b.off[i]) * CH;
		ref_split(R[(size_t)c * H + h], &vin[((size_t)t0 * H + h) * D], m, o, lc, H);
	});
}

int main(void)
{
	run_case(CH);
	run_case(5);
	run_case(1);
	/* Sequences of 7 chunks (3 pairs and one alone: the stages' phases flip), 1, 2 (16 + 1),
	 * none, 1 token, 4 and 3 chunks. */
	const std::vector<int> lens = { 100, 16, 17, 0, 1, 64, 33 };
	cta_case<float, 2>(lens, 2);
	cta_case<uint16_t, 1>({ 100, 17, 1 }, 1);
	cta_case<float, 4>({ 100, 33 }, 2);
	cta_case<float, 2, 3>({ 100, 17, 64 }, 1); /* three pairs in flight (K3_KDA_RECUR=pair3) */
	cta_case<float, 2, PAIR_STAGES, CROSS_REG>(lens, 2); /* the decays in registers (pairr) */
	cta_case<uint16_t, 4, PAIR_STAGES, CROSS_REG>({ 100, 33 }, 1);
	cta_case<float, 1, 3, CROSS_REG>({ 100, 17, 64 }, 1); /* pairr3 */
	/* The split kernel (K3_KDA_RECUR=split): every width, 2-4 stages (2: the next chunk's Wk made
	 * from a stage copied one step before), both state dtypes, partial last chunks over poisoned
	 * shared memory; then two mutations the check must see (TB's hi half zeroed, v a token late). */
	split_case<float, 2, 3>(lens, 1);
	split_case<uint16_t, 1, 3>({ 100, 17, 1 }, 1);
	split_case<float, 4, 4>({ 100, 33 }, 2);
	split_case<float, 8, 2>({ 100, 17, 64 }, 1);
	split_case<uint16_t, 4, 3>({ 5, 49 }, 1);
	split_case<float, 2, 3>({ 33, 17 }, 1, 1);
	split_case<float, 2, 3>({ 33, 17 }, 1, 2);
	/* K3_KDA_SPLIT_OPT's forms that keep the results: v by one lane, no fence, -Wk early, v by
	 * cp.async (2 and 3 stages), and those together. */
	split_case<float, 2, 3>({ 100, 17, 1 }, 1, 0, SPLIT_V_LANE0 | SPLIT_NO_FENCE);
	split_case<float, 2, 3>({ 100, 17, 1 }, 1, 0, SPLIT_WK_EARLY);
	split_case<uint16_t, 4, 2>({ 100, 17, 1 }, 1, 0, SPLIT_WK_EARLY | SPLIT_V_CPASYNC);
	split_case<float, 1, 3>({ 100, 17, 1 }, 1, 0, SPLIT_V_CPASYNC);
	split_case<float, 2, 4>({ 100, 49 }, 1, 0, SPLIT_WK_EARLY | SPLIT_V_CPASYNC | SPLIT_NO_FENCE);
	split_case<float, 2, 3>({ 33, 17 }, 1, 2, SPLIT_V_CPASYNC); /* v a token late must fail here too */
	printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
