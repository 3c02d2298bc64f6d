/* SPDX-License-Identifier: MIT */
/*
 * The KDA recurrent kernels' warp-level steps (kda_prefill.cu): a chunk's step on a warp's 16
 * state rows (recur_chunk(), the chunk kernel's and the pair kernel's odd last chunk), the pair
 * kernel's step (recur_pair()), its cross-term warp (cross_terms()) and its whole CTA
 * (pair_cta()).
 *
 * The includer defines, before including: KDA_STEP_FN (the functions' qualifiers), the warp
 * primitives ldsm_x4(r, addr) / ldsm_x4_tr(r, addr) (ldmatrix .x4, plain / .trans, from a
 * shared-memory address), mma_bf16_16816(d, a, b0, b1), pack_bf16(lo, hi), lo_bf16(w),
 * hi_bf16(w), f2bf(x), smem_u32(p), kda_warp_sync() (__syncwarp()), kda_proxy_fence_cta()
 * (fence.proxy.async.shared::cta); for the CTA level (pair_cta()) also state_io<T>::load /
 * store, kda_cta_sync() (__syncthreads()), kda_fence_mbar_init(), mbar_init(bar, n),
 * mbar_expect_tx(bar, bytes), mbar_wait(bar, parity), bulk_g2s(dst, src, bytes, bar) and
 * wait_ready(flag). kda_prefill.cu gives the device forms; test-kda-step.cu gives host forms
 * that run a warp's 32 lanes (a CTA's warps) as threads in lock step (so that the unmodified
 * steps and the CTAs run on a CPU against float64). Nothing here reads threadIdx or blockIdx:
 * they come as arguments.
 */
#ifndef K3_KERNELS_KDA_RECUR_STEP_CUH
#define K3_KERNELS_KDA_RECUR_STEP_CUH

#include "kda_record.cuh"

namespace {

struct recur_params {
	int n_seqs, heads, slices;
	const int32_t *cu, *off, *slot;
	const uint8_t *rec;
	const int32_t *ready; /* overlapped path: wait for each record's flag; NULL: serial */
	const void *s0;
	void *s1;
	uint16_t *out;
	const uint16_t *v; /* [tokens][heads][128] BF16: the split kernel's U (K3_KDA_RECUR=split) */
	int split_opt;     /* K3_KDA_SPLIT_OPT bits (split_cta(); 0: as designed) */
};

/* K3_KDA_SPLIT_OPT bits (round 05w's diagnosis; 0 the design): SPLIT_V_LANE0 lane 0 issues every v
 * row copy (a loop) instead of lanes 0 .. L - 1; SPLIT_NO_FENCE no proxy fence after -Wk is
 * written; SPLIT_NO_WK -Wk not made (results wrong: a measurement row); SPLIT_NO_V no v copied
 * (results wrong: a measurement row); SPLIT_WK_EARLY chunk c + 1's -Wk made at the start of step c,
 * beside its chain, not after it; SPLIT_V_CPASYNC each warp copies its own 16 channels of v (one
 * 16-byte cp.async a lane, zero-filled past the chunk's end) instead of the bulk row copies. */
enum { SPLIT_V_LANE0 = 1, SPLIT_NO_FENCE = 2, SPLIT_NO_WK = 4, SPLIT_NO_V = 8, SPLIT_WK_EARLY = 16, SPLIT_V_CPASYNC = 32 };

/* A warp's 16 state rows from r0 in registers (the MMA accumulator layout: s[nt][0, 1] = row r0 +
 * g, columns 8 nt + 2 t4 + 0, 1; s[nt][2, 3] = row r0 + g + 8): from s0 (slot base sbase), or
 * zeros where s0 is NULL; and back. */
template <typename StateT>
KDA_STEP_FN void load_state(float (&s)[D / 8][4], const void *s0, size_t sbase, int r0, int g, int t4)
{
#pragma unroll
	for (int nt = 0; nt < D / 8; nt++) {
		const int col = nt * 8 + 2 * t4;
		if (s0) {
			const StateT *a = static_cast<const StateT *>(s0) + sbase + (size_t)(r0 + g) * D + col;
			const StateT *b = a + 8 * D;
			s[nt][0] = state_io<StateT>::load(a), s[nt][1] = state_io<StateT>::load(a + 1);
			s[nt][2] = state_io<StateT>::load(b), s[nt][3] = state_io<StateT>::load(b + 1);
		} else {
			s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
		}
	}
}

template <typename StateT>
KDA_STEP_FN void store_state(const float (&s)[D / 8][4], void *s1, size_t sbase, int r0, int g, int t4)
{
#pragma unroll
	for (int nt = 0; nt < D / 8; nt++) {
		const int col = nt * 8 + 2 * t4;
		StateT *a = static_cast<StateT *>(s1) + sbase + (size_t)(r0 + g) * D + col;
		StateT *b = a + 8 * D;
		state_io<StateT>::store(a, s[nt][0]), state_io<StateT>::store(a + 1, s[nt][1]);
		state_io<StateT>::store(b, s[nt][2]), state_io<StateT>::store(b + 1, s[nt][3]);
	}
}

/* A recurrent lane's ldmatrix row offsets (bytes) inside a chunk record staged in shared memory,
 * for lane `lane` of warp `warp` of a CTA whose state rows start at `vbase`. */
struct recur_lane {
	int mi, mr, t4, wide_row, wide_off, p_off, u_off;
};

KDA_STEP_FN recur_lane recur_lane_of(int lane, int warp, int vbase)
{
	const int mi = lane >> 3, mr = lane & 7;
	recur_lane l;
	l.mi = mi;
	l.mr = mr;
	l.t4 = lane & 3;
	l.wide_row = 8 * (mi >> 1) + mr;                   /* Wk, Qt: token row */
	l.wide_off = l.wide_row * D * 2;
	l.p_off = REC_P + kda_p_off(mi, mr);               /* P: token row 8 (mi >> 1) + mr */
	const int u_row = 16 * warp + 8 * (mi & 1) + mr;   /* U^T: local row */
	l.u_off = REC_U + u_row * CH * 2 + swz_narrow(vbase + u_row, mi >> 1) * 16;
	return l;
}

/* A warp's two output tiles O^T (rows v = r0 + g (+8), tokens 8nn + 2t4 (+1)) to `o` (row r0 + g
 * of token 0; tokens H x D elements apart), the first `lc` tokens. */
KDA_STEP_FN void store_out(const float (&oa)[2][4], uint16_t *o, int H, int lc, int t4)
{
#pragma unroll
	for (int nn = 0; nn < 2; nn++) {
#pragma unroll
		for (int e = 0; e < 2; e++) {
			const int t = 8 * nn + 2 * t4 + e;
			if (t < lc) {
				o[(size_t)t * H * D] = f2bf(oa[nn][e]);
				o[(size_t)t * H * D + 8] = f2bf(oa[nn][2 + e]);
			}
		}
	}
}

/* W = U - wa (accumulators) as the next MMA's A fragment, U^T from the ldmatrix words u. */
KDA_STEP_FN void w_fragment(const uint32_t (&u)[4], const float (&wa)[2][4], uint32_t (&aw)[4])
{
	float w[2][4];
#pragma unroll
	for (int nn = 0; nn < 2; nn++) {
		w[nn][0] = lo_bf16(u[2 * nn]) - wa[nn][0];
		w[nn][1] = hi_bf16(u[2 * nn]) - wa[nn][1];
		w[nn][2] = lo_bf16(u[2 * nn + 1]) - wa[nn][2];
		w[nn][3] = hi_bf16(u[2 * nn + 1]) - wa[nn][3];
	}
	aw[0] = pack_bf16(w[0][0], w[0][1]);
	aw[1] = pack_bf16(w[0][2], w[0][3]);
	aw[2] = pack_bf16(w[1][0], w[1][1]);
	aw[3] = pack_bf16(w[1][2], w[1][3]);
}

/* The A fragment of state columns [16 kk, 16 kk + 16) (BF16). */
KDA_STEP_FN void state_fragment(const float (&s)[D / 8][4], int kk, uint32_t (&a)[4])
{
	a[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
	a[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
	a[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
	a[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

/* One chunk's step on a warp's 16 state rows s (M, rows r0.., all 128 k), the chunk's record
 * staged at `st`; outputs as store_out(). SPLIT (K3_KDA_RECUR=split): the stage is a split one
 * (split_stage_bytes(): -Wk in the record's Wk place, TB, this CTA's v rows), and `v_off` is the
 * lane's ldmatrix row address of the warp's V^T fragment there (split_v_off()). */
template <bool SPLIT = false>
KDA_STEP_FN void recur_chunk(float (&s)[D / 8][4], const uint8_t *st, const recur_lane &l, uint16_t *o,
					    int H, int lc, int v_off = 0)
{
	const uint32_t sa = smem_u32(st);
	/* W^T = U^T - M Wk^T and O^T = M Qt^T: A = M (rows r0.., k), B from Wk, Qt. */
	float wa[2][4] = {}, oa[2][4] = {};
	if constexpr (SPLIT) {
		/* U^T = V^T TB^T, in FP32, as W^T's start (the stage holds -Wk): A(m = v, k = s) = V[s][v]
		 * (the transposing load), B(k = s, n = t) = TB[t][s] (P's layout), hi then lo. */
		uint32_t av[4], bh[4], bl[4];
		ldsm_x4_tr(av, sa + v_off);
		ldsm_x4(bh, sa + REC_TB + (l.p_off - REC_P));
		ldsm_x4(bl, sa + REC_TB + TB_LO + (l.p_off - REC_P));
		mma_bf16_16816(wa[0], av, bh[0], bh[1]);
		mma_bf16_16816(wa[1], av, bh[2], bh[3]);
		mma_bf16_16816(wa[0], av, bl[0], bl[1]);
		mma_bf16_16816(wa[1], av, bl[2], bl[3]);
	}
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		uint32_t a[4];
		state_fragment(s, kk, a);
		const int off = l.wide_off + swz_wide(l.wide_row, 2 * kk + (l.mi & 1)) * 16;
		uint32_t bw[4], bq[4];
		ldsm_x4(bw, sa + REC_WK + off);
		ldsm_x4(bq, sa + REC_QT + off);
		mma_bf16_16816(wa[0], a, bw[0], bw[1]);
		mma_bf16_16816(wa[1], a, bw[2], bw[3]);
		mma_bf16_16816(oa[0], a, bq[0], bq[1]);
		mma_bf16_16816(oa[1], a, bq[2], bq[3]);
	}
	uint32_t aw[4];
	if constexpr (SPLIT) { /* W^T = U^T + M (-Wk)^T, already summed */
		aw[0] = pack_bf16(wa[0][0], wa[0][1]);
		aw[1] = pack_bf16(wa[0][2], wa[0][3]);
		aw[2] = pack_bf16(wa[1][0], wa[1][1]);
		aw[3] = pack_bf16(wa[1][2], wa[1][3]);
	} else {
		uint32_t u[4];
		ldsm_x4(u, sa + l.u_off);
		w_fragment(u, wa, aw);
	}

	/* O^T += W^T P^T: B(k = s, n = t) = P[t][s]. */
	{
		uint32_t bp[4];
		ldsm_x4(bp, sa + l.p_off);
		mma_bf16_16816(oa[0], aw, bp[0], bp[1]);
		mma_bf16_16816(oa[1], aw, bp[2], bp[3]);
	}

	/* M <- M Diag(Gamma_last) + W^T Kh: B(k = s, n = j) = Kh^T[j][s]. */
	const float *gp = reinterpret_cast<const float *>(st + REC_G) + l.t4 * G_LD;
#pragma unroll
	for (int np = 0; np < D / 16; np++) {
		const float4 gm = *reinterpret_cast<const float4 *>(gp + 4 * np);
		const int j = 8 * (2 * np + (l.mi >> 1)) + l.mr;
		uint32_t bk[4];
		ldsm_x4(bk, sa + REC_KH + j * CH * 2 + swz_narrow(j, l.mi & 1) * 16);
		float *s0 = s[2 * np], *s1 = s[2 * np + 1];
		s0[0] *= gm.x, s0[1] *= gm.y, s0[2] *= gm.x, s0[3] *= gm.y;
		s1[0] *= gm.z, s1[1] *= gm.w, s1[2] *= gm.z, s1[3] *= gm.w;
		mma_bf16_16816(s0, aw, bk[0], bk[1]);
		mma_bf16_16816(s1, aw, bk[2], bk[3]);
	}
	store_out(oa, o, H, lc, l.t4);
}

/*
 * The recurrence two chunks a step (K3_KDA_RECUR=pair; opt-in). For chunks a, b with the state M
 * at a's start, D_x = Diag(Gamma_last of x), and M_1 = M D_a + W_a^T Kh_a (the state after a):
 *   W_a^T = U_a^T - M Wk_a^T,
 *   W_b^T = U_b^T - M_1 Wk_b^T = U_b^T - M (Wk_b D_a)^T - W_a^T X^T,  X = Wk_b Kh_a^T [16 t][16 s],
 *   O_a^T = M Qt_a^T + W_a^T P_a^T,
 *   O_b^T = M (Qt_b D_a)^T + W_a^T Y^T + W_b^T P_b^T,                   Y = Qt_b Kh_a^T,
 *   M_2   = M D_a D_b + W_a^T (Kh_a D_b) + W_b^T Kh_b.
 * The terms without M (X, Y, Wk_b D_a, Qt_b D_a, Kh_a D_b, D_a D_b) are the pair's "cross terms":
 * an extra warp of the CTA makes them in shared memory, in place in the staged records, a step
 * ahead of the warps that own the state. So a state warp's chain a pair is M Wk^T (8 MMAs deep,
 * a and b side by side), one 16-deep MMA (W_a^T X^T) and the update (2 MMAs deep) where two
 * chunks one after the other take twice 8 + 1 (docs/KERNELS.md, "KDA prefill, round 05"). Every
 * factor is a product of values the chunk records already bound (no division: 16-token records,
 * the FP32 range of k / Gamma as before); the float64 form is kda_ref_prefill_paired().
 *
 * CROSS_REG (K3_KDA_RECUR=pairr; opt-in): the decays are applied in the state warps' registers
 * instead: M (Wk_b D_a)^T = (M D_a) Wk_b^T and M (Qt_b D_a)^T = (M D_a) Qt_b^T take a second A
 * fragment made from M D_a (8 multiplies and 4 packs a lane a column block, off the MMA chain),
 * and the update is M_2 = (M D_a + W_a^T Kh_a) D_b + W_b^T Kh_b (one multiply more in the chain,
 * 2 MMAs deep as before). The cross warp then makes X and Y only (32 MMAs, no rescaling of the
 * staged records).
 */
enum cross_mode { CROSS_SMEM, CROSS_NONE, CROSS_REG };

/* 8 BF16 values (one 16-byte word) times 8 FP32 factors, rounded back to BF16. */
KDA_STEP_FN uint4 scale8(uint4 x, const float (&f)[8])
{
	uint32_t w[4] = { x.x, x.y, x.z, x.w };
#pragma unroll
	for (int i = 0; i < 4; i++)
		w[i] = pack_bf16(lo_bf16(w[i]) * f[2 * i], hi_bf16(w[i]) * f[2 * i + 1]);
	return make_uint4(w[0], w[1], w[2], w[3]);
}

/* X = Wk_b Kh_a^T and Y = Qt_b Kh_a^T of a pair stage (chunk b's record at st + rb) into st + 2 rb,
 * in P's layout. All 32 lanes (`lane` this one). */
KDA_STEP_FN void cross_xy(uint8_t *st, int rb, int lane)
{
	const uint32_t sa = smem_u32(st), sb = sa + rb;
	uint8_t *xy = st + 2 * rb;
	/* X = Wk_b Kh_a^T, Y = Qt_b Kh_a^T: A(t, j) from b's Wk / Qt rows, B(k = j, n = s) = Kh_a^T[j][s]
	 * (rows j hold s: the transposing load). */
	float x[2][4] = {}, y[2][4] = {};
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		const int aoff = kda_cross_a_off(lane, kk);
		uint32_t aw[4], aq[4], bk[4];
		ldsm_x4(aw, sb + REC_WK + aoff);
		ldsm_x4(aq, sb + REC_QT + aoff);
		ldsm_x4_tr(bk, sa + REC_KH + kda_cross_kh_off(lane, kk));
		mma_bf16_16816(x[0], aw, bk[0], bk[1]);
		mma_bf16_16816(x[1], aw, bk[2], bk[3]);
		mma_bf16_16816(y[0], aq, bk[0], bk[1]);
		mma_bf16_16816(y[1], aq, bk[2], bk[3]);
	}
	/* Rows t = g (+8), columns s = 8 nn + 2 t4 (+1), into P's layout. */
#pragma unroll
	for (int nn = 0; nn < 2; nn++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int off = kda_cross_xy_off(lane, nn, h);
			*reinterpret_cast<uint32_t *>(xy + CROSS_X + off) = pack_bf16(x[nn][2 * h], x[nn][2 * h + 1]);
			*reinterpret_cast<uint32_t *>(xy + CROSS_Y + off) = pack_bf16(y[nn][2 * h], y[nn][2 * h + 1]);
		}
	}
}

/* The cross warp: a pair stage's cross terms in place (see above); `rb` = stage_bytes(WARPS),
 * chunk b's record at st + rb, X and Y at st + 2 rb. All 32 lanes (`lane` this one); ends with
 * the proxy fence that orders these writes before the bulk copies that later refill the stage. */
KDA_STEP_FN void cross_terms(uint8_t *st, int rb, int lane)
{
	cross_xy(st, rb, lane);
	kda_warp_sync(); /* every lane's X, Y loads done before b's Wk, Qt and a's Kh change */
	float *ga = reinterpret_cast<float *>(st + REC_G);
	const float *gb = reinterpret_cast<const float *>(st + rb + REC_G);
	/* Wk_b D_a, Qt_b D_a: word u holds channels kda_wide_word_chan(u) ... + 7. */
#pragma unroll 2
	for (int i = 0; i < 8; i++) {
		const int u = lane + 32 * i, c0 = kda_wide_word_chan(u);
		float f[8];
#pragma unroll
		for (int m = 0; m < 8; m++)
			f[m] = ga[g_index(c0 + m)];
		uint4 *pw = reinterpret_cast<uint4 *>(st + rb + REC_WK + kda_wide_word_off(u));
		uint4 *pq = reinterpret_cast<uint4 *>(st + rb + REC_QT + kda_wide_word_off(u));
		*pw = scale8(*pw, f);
		*pq = scale8(*pq, f);
	}
	/* Kh_a D_b: row j of Kh_a^T times Gamma_last of b at channel j. */
#pragma unroll 2
	for (int i = 0; i < 8; i++) {
		const int u = lane + 32 * i;
		const float gj = gb[g_index(kda_kh_word_chan(u))];
		float f[8];
#pragma unroll
		for (int m = 0; m < 8; m++)
			f[m] = gj;
		uint4 *pk = reinterpret_cast<uint4 *>(st + REC_KH + u * 16);
		*pk = scale8(*pk, f);
	}
	kda_warp_sync(); /* every lane's reads of Gamma_last of a done */
	/* D_a D_b in a's Gamma_last (same permuted layout; 4 rows of G_LD, 32 values used each). */
#pragma unroll
	for (int i = 0; i < 4; i++)
		ga[i * G_LD + lane] *= gb[i * G_LD + lane];
	kda_proxy_fence_cta();
}

/* One pair's step on a warp's 16 state rows (the formulas above), the pair's stage at `st` with
 * its cross terms made (REG: X and Y only, the decays applied here); outputs of a (16 tokens) and
 * b (the first lc_b) as store_out(). */
template <bool REG = false>
KDA_STEP_FN void recur_pair(float (&s)[D / 8][4], const uint8_t *st, int rb, const recur_lane &l,
					   uint16_t *o, int H, int lc_b)
{
	const uint32_t sa = smem_u32(st), sb = sa + rb, sx = sa + 2 * rb;
	/* M Wk_a^T, M (Wk_b D_a)^T, O_a^T = M Qt_a^T and O_b^T = M (Qt_b D_a)^T side by side (each state
	 * fragment used once: made again later, ptxas would keep all 8 live instead). */
	float wa[2][4] = {}, wb[2][4] = {}, oa[2][4] = {}, ob[2][4] = {};
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		uint32_t a[4], ad[4];
		state_fragment(s, kk, a);
		if constexpr (REG) { /* M D_a's fragment: columns as s[2 kk], s[2 kk + 1] */
			const float *ga = reinterpret_cast<const float *>(st + REC_G) + l.t4 * G_LD;
			const float4 gm = *reinterpret_cast<const float4 *>(ga + 4 * kk);
			const float *s0 = s[2 * kk], *s1 = s[2 * kk + 1];
			ad[0] = pack_bf16(s0[0] * gm.x, s0[1] * gm.y);
			ad[1] = pack_bf16(s0[2] * gm.x, s0[3] * gm.y);
			ad[2] = pack_bf16(s1[0] * gm.z, s1[1] * gm.w);
			ad[3] = pack_bf16(s1[2] * gm.z, s1[3] * gm.w);
		} else {
			ad[0] = a[0], ad[1] = a[1], ad[2] = a[2], ad[3] = a[3];
		}
		const int off = l.wide_off + swz_wide(l.wide_row, 2 * kk + (l.mi & 1)) * 16;
		uint32_t bwa[4], bwb[4], bqa[4], bqb[4];
		ldsm_x4(bwa, sa + REC_WK + off);
		ldsm_x4(bwb, sb + REC_WK + off);
		ldsm_x4(bqa, sa + REC_QT + off);
		ldsm_x4(bqb, sb + REC_QT + off);
		mma_bf16_16816(wa[0], a, bwa[0], bwa[1]);
		mma_bf16_16816(wa[1], a, bwa[2], bwa[3]);
		mma_bf16_16816(wb[0], ad, bwb[0], bwb[1]);
		mma_bf16_16816(wb[1], ad, bwb[2], bwb[3]);
		mma_bf16_16816(oa[0], a, bqa[0], bqa[1]);
		mma_bf16_16816(oa[1], a, bqa[2], bqa[3]);
		mma_bf16_16816(ob[0], ad, bqb[0], bqb[1]);
		mma_bf16_16816(ob[1], ad, bqb[2], bqb[3]);
	}
	/* W_a, then W_b = U_b - M (Wk_b D_a)^T - W_a^T X^T: B(k = s, n = t) = X[t][s]. */
	uint32_t u[4], awa[4], awb[4];
	ldsm_x4(u, sa + l.u_off);
	w_fragment(u, wa, awa);
	{
		uint32_t bx[4];
		ldsm_x4(bx, sx + CROSS_X + (l.p_off - REC_P));
		mma_bf16_16816(wb[0], awa, bx[0], bx[1]);
		mma_bf16_16816(wb[1], awa, bx[2], bx[3]);
	}
	ldsm_x4(u, sb + l.u_off);
	w_fragment(u, wb, awb);

	/* M <- M D_a D_b + W_a^T (Kh_a D_b) + W_b^T Kh_b (REG: (M D_a + W_a^T Kh_a) D_b + W_b^T Kh_b), a
	 * column block np at a time. */
	const float *gp = reinterpret_cast<const float *>(st + REC_G) + l.t4 * G_LD;
#pragma unroll
	for (int np = 0; np < D / 16; np++) {
		const float4 gm = *reinterpret_cast<const float4 *>(gp + 4 * np);
		const int j = 8 * (2 * np + (l.mi >> 1)) + l.mr;
		const int koff = REC_KH + j * CH * 2 + swz_narrow(j, l.mi & 1) * 16;
		uint32_t bka[4], bkb[4];
		ldsm_x4(bka, sa + koff);
		ldsm_x4(bkb, sb + koff);
		float *s0 = s[2 * np], *s1 = s[2 * np + 1];
		s0[0] *= gm.x, s0[1] *= gm.y, s0[2] *= gm.x, s0[3] *= gm.y;
		s1[0] *= gm.z, s1[1] *= gm.w, s1[2] *= gm.z, s1[3] *= gm.w;
		mma_bf16_16816(s0, awa, bka[0], bka[1]);
		mma_bf16_16816(s1, awa, bka[2], bka[3]);
		if constexpr (REG) {
			const float *gpb = reinterpret_cast<const float *>(st + rb + REC_G) + l.t4 * G_LD;
			const float4 gn = *reinterpret_cast<const float4 *>(gpb + 4 * np);
			s0[0] *= gn.x, s0[1] *= gn.y, s0[2] *= gn.x, s0[3] *= gn.y;
			s1[0] *= gn.z, s1[1] *= gn.w, s1[2] *= gn.z, s1[3] *= gn.w;
		}
		mma_bf16_16816(s0, awb, bkb[0], bkb[1]);
		mma_bf16_16816(s1, awb, bkb[2], bkb[3]);
	}

	/* O_a^T += W_a^T P_a^T; O_b^T += W_a^T Y^T + W_b^T P_b^T. */
	{
		uint32_t bp[4];
		ldsm_x4(bp, sa + l.p_off);
		mma_bf16_16816(oa[0], awa, bp[0], bp[1]);
		mma_bf16_16816(oa[1], awa, bp[2], bp[3]);
		ldsm_x4(bp, sx + CROSS_Y + (l.p_off - REC_P));
		mma_bf16_16816(ob[0], awa, bp[0], bp[1]);
		mma_bf16_16816(ob[1], awa, bp[2], bp[3]);
		ldsm_x4(bp, sb + l.p_off);
		mma_bf16_16816(ob[0], awb, bp[0], bp[1]);
		mma_bf16_16816(ob[1], awb, bp[2], bp[3]);
	}
	store_out(oa, o, H, CH, l.t4);
	store_out(ob, o + (size_t)CH * H * D, H, lc_b, l.t4);
}

/* Where a recurrent CTA works (pair_cta(), split_cta()): block (bx, by) of a grid of
 * (sequence, slice of 16 x WARPS state rows) by head; rows_warp the warp whose 16 state rows r0
 * starts (the pair kernel's cross warp: 0). A sequence's chunks c_begin .. + n_chunks, its tokens
 * tok0 .. + len, its state slot at sbase (elements), its first record rec0 (the next rec_stride
 * bytes on), its first ready flag flag0 (NULL on the serial path). */
struct recur_cta {
	int seq, vbase, r0, c_begin, n_chunks, tok0, len;
	size_t sbase, rec_stride;
	const uint8_t *rec0;
	const int32_t *flag0;
};

template <int WARPS>
KDA_STEP_FN recur_cta recur_cta_of(const recur_params &p, int bx, int by, int rows_warp)
{
	recur_cta c;
	const int h = by, H = p.heads;
	c.seq = bx / p.slices;
	c.vbase = (bx % p.slices) * 16 * WARPS;
	c.r0 = c.vbase + 16 * rows_warp;
	c.c_begin = p.off[c.seq], c.n_chunks = p.off[c.seq + 1] - c.c_begin;
	c.tok0 = p.cu[c.seq], c.len = p.cu[c.seq + 1] - c.tok0;
	const size_t slot = p.slot ? (size_t)p.slot[c.seq] : (size_t)c.seq;
	c.sbase = (slot * H + h) * (size_t)D * D;
	c.rec0 = p.rec + ((size_t)c.c_begin * H + h) * REC_BYTES;
	c.rec_stride = (size_t)H * REC_BYTES;
	c.flag0 = p.ready ? p.ready + (size_t)c.c_begin * H + h : nullptr;
	return c;
}

/* One thread stages chunk record `ra` and, where `rb` is not NULL, the next one `rb` into the pair
 * stage `st` (U rows from vbase), once their flags (overlapped path, else NULL) are set. */
template <int WARPS>
KDA_STEP_FN void issue_pair(uint8_t *st, const uint8_t *ra, const uint8_t *rb, int vbase, uint64_t *bar,
					   const int32_t *flag_a, const int32_t *flag_b)
{
	constexpr uint32_t U_BYTES = 16 * WARPS * CH * 2, ONE = REC_U + U_BYTES;
	wait_ready(flag_a);
	if (rb)
		wait_ready(flag_b);
	mbar_expect_tx(bar, rb ? 2 * ONE : ONE);
	bulk_g2s(st, ra, REC_U, bar);
	bulk_g2s(st + REC_U, ra + REC_U + vbase * CH * 2, U_BYTES, bar);
	if (rb) {
		bulk_g2s(st + stage_bytes(WARPS), rb, REC_U, bar);
		bulk_g2s(st + stage_bytes(WARPS) + REC_U, rb + REC_U + vbase * CH * 2, U_BYTES, bar);
	}
}

/*
 * The pair kernel's CTA (kda_chunk_recurrent_pair_kernel: block (bx, by), thread tid; dynamic
 * shared memory smem, PST mbarriers full): as the chunk kernel (one CTA per sequence, head and
 * slice of 16 x WARPS state rows; thread 0 streams the records with the bulk copy engine), two
 * chunks a step, PST pairs in flight (PAIR_STAGES by default), plus one warp (the last) that makes
 * the next pair's cross terms while the state warps step through this one. A sequence's odd last
 * chunk is stepped alone (recur_chunk()). The overlapped path's flag wait is wait_ready()
 * (K3_KDA_FLAG_WAIT is not read). XM: CROSS_SMEM (above), CROSS_REG (X and Y only; the decays
 * in the state warps' registers) or CROSS_NONE (a measurement row only, results wrong: the cross
 * warp waits for each pair's records and makes nothing).
 */
template <typename StateT, int WARPS, int PST = PAIR_STAGES, int XM = CROSS_SMEM>
KDA_STEP_FN void pair_cta(const recur_params &p, uint8_t *smem, uint64_t *full, int bx, int by, int tid)
{
	static_assert(PST >= 2, "the cross warp works on the pair after the state warps'");
	constexpr int RB = stage_bytes(WARPS), SB = pair_stage_bytes(WARPS);
	const int h = by, H = p.heads, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
	const bool cross = warp == WARPS;
	const recur_cta c = recur_cta_of<WARPS>(p, bx, by, cross ? 0 : warp);
	const int n_pairs = (c.n_chunks + 1) / 2;

	/* Thread 0: pair q (chunks 2q and 2q + 1 where the sequence has it) into its stage. */
	auto issue = [&](int q) {
		const int i = 2 * q;
		const bool two = i + 1 < c.n_chunks;
		issue_pair<WARPS>(smem + (q % PST) * SB, c.rec0 + i * c.rec_stride,
				  two ? c.rec0 + (i + 1) * c.rec_stride : nullptr, c.vbase, &full[q % PST],
				  c.flag0 ? c.flag0 + (size_t)i * H : nullptr, c.flag0 && two ? c.flag0 + (size_t)(i + 1) * H : nullptr);
	};
	/* The cross warp: pair q's cross terms, once its records landed (pairs of two chunks only). */
	auto make_cross = [&](int q) {
		if (q < n_pairs && 2 * q + 1 < c.n_chunks) {
			mbar_wait(&full[q % PST], (uint32_t)(q / PST) & 1u);
			if (XM == CROSS_SMEM)
				cross_terms(smem + (q % PST) * SB, RB, tid & 31);
			else if (XM == CROSS_REG)
				cross_xy(smem + (q % PST) * SB, RB, tid & 31);
		}
	};
	if (tid == 0) {
		for (int i = 0; i < PST; i++)
			mbar_init(&full[i], 1);
		kda_fence_mbar_init();
		for (int q = 0; q < PST - 1 && q < n_pairs; q++)
			issue(q);
	}

	float s[D / 8][4];
	load_state<StateT>(s, cross ? nullptr : p.s0, c.sbase, c.r0, g, t4);
	const recur_lane lo = recur_lane_of(lane, cross ? 0 : warp, c.vbase);

	kda_cta_sync(); /* the barriers initialized before the cross warp waits on one */
	if (cross)
		make_cross(0);
	for (int q = 0; q < n_pairs; q++) {
		kda_cta_sync(); /* every warp done with the stage refilled below; pair q's cross terms made */
		if (tid == 0) {
			const int nx = q + PST - 1;
			if (nx < n_pairs) {
				kda_proxy_fence_cta();
				issue(nx);
			}
		}
		if (cross) {
			make_cross(q + 1);
			continue;
		}
		mbar_wait(&full[q % PST], (uint32_t)(q / PST) & 1u);
		const uint8_t *st = smem + (q % PST) * SB;
		const int i = 2 * q;
		uint16_t *o = p.out + ((size_t)(c.tok0 + i * CH) * H + h) * D + c.r0 + g;
		if (i + 1 < c.n_chunks)
			recur_pair<XM == CROSS_REG>(s, st, RB, lo, o, H, c.len - (i + 1) * CH < CH ? c.len - (i + 1) * CH : CH);
		else
			recur_chunk(s, st, lo, o, H, c.len - i * CH < CH ? c.len - i * CH : CH);
	}

	if (p.s1 && !cross)
		store_state<StateT>(s, p.s1, c.sbase, c.r0, g, t4);
}

/*
 * The split recurrence (K3_KDA_RECUR=split; opt-in; docs/KERNELS.md "KDA prefill, round 05w"): the
 * intra kernel's record carries Kt and TB = T diag(beta) instead of Wk and U^T (kda_record.cuh,
 * REC_TB), so that the intra kernel neither reads v nor writes U (~0.8 GB less DRAM traffic at
 * T = 16K, H = 96). The recurrent CTA stages its 16 x WARPS channels of v beside the record,
 * makes -Wk = -TB Kt in Kt's place (split_make_wk(), every warp a share of the 16 channel tiles,
 * a step ahead: the loop's barrier orders it before the next step reads it) and U^T = V^T TB^T
 * as each step's W^T accumulator start (recur_chunk<true>()). TB's hi / lo halves keep T's
 * precision as the intra kernel's own products do; U stays in FP32.
 */

/* Lane `lane` of warp `warp`: its ldmatrix row address (bytes from a split stage) for the warp's
 * V^T fragment, A(m = v, k = s) = V[s][v] by the transposing load: matrices (s 0-7, v 0-7),
 * (s 0-7, v 8-15), (s 8-15, v 0-7), (s 8-15, v 8-15) of the warp's 16 channels. */
template <int WARPS>
KDA_STEP_FN int split_v_off(int lane, int warp)
{
	const int s = (lane & 7) + 8 * (lane >> 4), v = 16 * warp + 8 * ((lane >> 3) & 1);
	return REC_SPLIT_BYTES + s * split_v_pitch(WARPS) + 2 * v;
}

/* -Wk = -TB Kt of a split stage `st`, in place of Kt (Wk's layout): warp `warp` of WARPS makes the
 * 16-channel blocks warp, warp + WARPS, ... (m16n8k16: A = TB from P's layout, B(k = s, n = j) =
 * Kt[s][j] by the transposing load; hi and lo into one FP32 accumulator). Each block is read
 * whole into registers, the warp meets (__syncwarp: racecheck flagged the in-place write
 * without it, round 05w call 3), then the warp that read it writes it. All 32 lanes;
 * ends with the proxy fence that orders these writes before the bulk copies that later refill
 * the stage. */
template <int WARPS>
KDA_STEP_FN void split_make_wk(uint8_t *st, int warp, int lane, int opt = 0)
{
	if (opt & SPLIT_NO_WK)
		return;
	const uint32_t sa = smem_u32(st);
	const int mi = lane >> 3, mr = lane & 7, g = lane >> 2, t4 = lane & 3;
	/* P's B-fragment load gives matrices (t lo, s lo), (t lo, s hi), (t hi, s lo), (t hi, s hi);
	 * the A fragment wants (t lo, s lo), (t hi, s lo), (t lo, s hi), (t hi, s hi). */
	uint32_t th[4], tl[4], r[4];
	ldsm_x4(r, sa + REC_TB + kda_p_off(mi, mr));
	th[0] = r[0], th[1] = r[2], th[2] = r[1], th[3] = r[3];
	ldsm_x4(r, sa + REC_TB + TB_LO + kda_p_off(mi, mr));
	tl[0] = r[0], tl[1] = r[2], tl[2] = r[1], tl[3] = r[3];
	const int row = mr + 8 * (mi & 1); /* token s of this lane's row address */
#pragma unroll
	for (int i = 0; i < 8 / WARPS; i++) {
		const int blk = warp + WARPS * i;
		uint32_t b[4];
		ldsm_x4_tr(b, sa + REC_WK + row * D * 2 + swz_wide(row, 2 * blk + (mi >> 1)) * 16);
		kda_warp_sync(); /* every lane's read of the block before any lane writes over it */
#pragma unroll
		for (int nt = 0; nt < 2; nt++) {
			float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
			mma_bf16_16816(d, th, b[2 * nt], b[2 * nt + 1]);
			mma_bf16_16816(d, tl, b[2 * nt], b[2 * nt + 1]);
			const int j = 16 * blk + 8 * nt + 2 * t4;
#pragma unroll
			for (int hf = 0; hf < 2; hf++) {
				const int t = g + 8 * hf;
				*reinterpret_cast<uint32_t *>(st + REC_WK + t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2) =
					pack_bf16(-d[2 * hf], -d[2 * hf + 1]);
			}
		}
	}
	if (!(opt & SPLIT_NO_FENCE))
		kda_proxy_fence_cta();
}

/*
 * The split kernel's CTA (kda_chunk_recurrent_split_kernel: block (bx, by), thread tid; dynamic
 * shared memory smem of STAGES split stages, STAGES mbarriers full): the chunk kernel's CTA (one
 * per sequence, head and slice of 16 x WARPS state rows, chunk records STAGES - 1 ahead by bulk
 * copies) on split records. Warp 0 stages a chunk: lane 0 waits for its record (wait_ready(); the
 * overlapped path) and copies it, lanes 0 .. L - 1 copy token rows of v (32 x WARPS bytes each).
 * The v rows of every stage start zeroed, so that a last chunk's rows past its L are finite (they
 * meet TB's zero columns there). After step cc every warp makes its share of chunk cc + 1's -Wk.
 */
template <typename StateT, int WARPS, int STAGES>
KDA_STEP_FN void split_cta(const recur_params &p, uint8_t *smem, uint64_t *full, int bx, int by, int tid)
{
	static_assert(STAGES >= 2, "the next chunk's Wk is made while this one's stage is in use");
	constexpr int SB = split_stage_bytes(WARPS), VP = split_v_pitch(WARPS), VROW = 32 * WARPS;
	const int h = by, H = p.heads, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
	const recur_cta c = recur_cta_of<WARPS>(p, bx, by, warp);
	const uint16_t *v0 = p.v + ((size_t)c.tok0 * H + h) * D + c.vbase;

	/* Warp 0 (all lanes): chunk i into its stage. */
	auto issue = [&](int i) {
		uint8_t *st = smem + (i % STAGES) * SB;
		uint64_t *bar = &full[i % STAGES];
		const int lc = c.len - i * CH < CH ? c.len - i * CH : CH;
		const int nv = p.split_opt & (SPLIT_NO_V | SPLIT_V_CPASYNC) ? 0 : lc;
		if (lane == 0) {
			wait_ready(c.flag0 ? c.flag0 + (size_t)i * H : nullptr);
			mbar_expect_tx(bar, (uint32_t)(REC_SPLIT_BYTES + nv * VROW));
			bulk_g2s(st, c.rec0 + i * c.rec_stride, REC_SPLIT_BYTES, bar);
			if (p.split_opt & SPLIT_V_LANE0)
				for (int r = 0; r < nv; r++)
					bulk_g2s(st + REC_SPLIT_BYTES + r * VP, v0 + (size_t)(i * CH + r) * H * D, VROW, bar);
		}
		kda_warp_sync();
		if (lane < nv && !(p.split_opt & SPLIT_V_LANE0))
			bulk_g2s(st + REC_SPLIT_BYTES + lane * VP, v0 + (size_t)(i * CH + lane) * H * D, VROW, bar);
	};

	/* SPLIT_V_CPASYNC, every warp: its 16 channels of chunk i's v (lane l: token l / 2, 8 channels
	 * from 8 (l % 2)), zero-filled past the chunk's end, then one commit group (empty past the last
	 * chunk, so that the wait below counts groups the same way every step). */
	const bool cpa = (p.split_opt & SPLIT_V_CPASYNC) != 0;
	auto issue_v = [&](int i) {
		if (i < c.n_chunks) {
			const int lc = c.len - i * CH < CH ? c.len - i * CH : CH, r = lane >> 1, half = lane & 1;
			cp_async16(smem + (i % STAGES) * SB + REC_SPLIT_BYTES + r * VP + 32 * warp + 16 * half,
				   v0 + (size_t)(i * CH + (r < lc ? r : 0)) * H * D + 16 * warp + 8 * half, r < lc ? 16 : 0);
		}
		cp_async_commit();
	};

	if (tid == 0) {
		for (int i = 0; i < STAGES; i++)
			mbar_init(&full[i], 1);
		kda_fence_mbar_init();
	}
	/* Zero every stage's v rows (16-byte words; the padding too). */
	constexpr int VWORDS = CH * VP / 16;
	for (int i = tid; i < STAGES * VWORDS; i += WARPS * 32)
		*reinterpret_cast<uint4 *>(smem + (i / VWORDS) * SB + REC_SPLIT_BYTES + (i % VWORDS) * 16) =
			make_uint4(0, 0, 0, 0);
	kda_proxy_fence_cta();
	kda_cta_sync(); /* the barriers initialized and the zeros written before any copy */
	if (warp == 0)
		for (int i = 0; i < STAGES - 1 && i < c.n_chunks; i++)
			issue(i);
	if (cpa)
		for (int i = 0; i < STAGES - 1; i++)
			issue_v(i);

	float s[D / 8][4];
	load_state<StateT>(s, p.s0, c.sbase, c.r0, g, t4);
	const recur_lane lo = recur_lane_of(lane, warp, c.vbase);
	const int v_off = split_v_off<WARPS>(lane, warp);

	const bool early = (p.split_opt & SPLIT_WK_EARLY) != 0;
	if (c.n_chunks > 0) {
		mbar_wait(&full[0], 0u);
		split_make_wk<WARPS>(smem, warp, lane, p.split_opt);
	}
	for (int cc = 0; cc < c.n_chunks; cc++) {
		kda_cta_sync(); /* chunk cc's -Wk made; every warp done with the stage refilled below */
		const int nx = cc + 1;
		if (warp == 0) {
			const int ni = cc + STAGES - 1;
			if (ni < c.n_chunks) {
				kda_proxy_fence_cta();
				issue(ni);
			}
		}
		if (cpa) { /* chunk cc's v rows: this warp's own copies, then its lanes' */
			issue_v(cc + STAGES - 1);
			cp_async_wait<STAGES - 1>();
			kda_warp_sync();
		}
		if (early && nx < c.n_chunks)
			mbar_wait(&full[nx % STAGES], (uint32_t)(nx / STAGES) & 1u);
		if (early) /* past the last chunk: a stage no copy is filling, whose result nobody reads */
			split_make_wk<WARPS>(smem + (nx % STAGES) * SB, warp, lane, p.split_opt);
		const int lc = c.len - cc * CH < CH ? c.len - cc * CH : CH;
		recur_chunk<true>(s, smem + (cc % STAGES) * SB, lo, p.out + ((size_t)(c.tok0 + cc * CH) * H + h) * D + c.r0 + g,
				  H, lc, v_off);
		if (!early && nx < c.n_chunks) {
			mbar_wait(&full[nx % STAGES], (uint32_t)(nx / STAGES) & 1u);
			split_make_wk<WARPS>(smem + (nx % STAGES) * SB, warp, lane, p.split_opt);
		}
	}

	if (p.s1)
		store_state<StateT>(s, p.s1, c.sbase, c.r0, g, t4);
}

} // namespace

#endif
