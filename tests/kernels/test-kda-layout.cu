/* SPDX-License-Identifier: MIT */
/*
 * Host check of the KDA pair kernel's shared-memory addressing (kernels/kda/kda_record.cuh; no
 * GPU needed, built with nvcc, suite 'unit'). The pair kernel (K3_KDA_RECUR=pair) adds one warp
 * that makes a pair's cross terms X = Wk_b Kh_a^T and Y = Qt_b Kh_a^T by ldmatrix + mma.m16n8k16
 * from the staged records, stores them in P's layout for the state warps, and rescales b's Wk, Qt
 * and a's Kh^T in place. Here ldmatrix (.x4, plain and .trans) and mma.m16n8k16 (bf16, row.col)
 * are emulated as the PTX ISA defines their fragments, over a stage image written from the
 * record layout's definition, with the lane offsets the kernel uses (kda_cross_a_off(),
 * kda_cross_kh_off(), kda_cross_xy_off(), kda_p_off(), kda_wide_word_*(), kda_kh_word_chan(),
 * g_index()): X and Y as the state warps' B fragments must equal the float64 products, every
 * byte of X and Y is stored once, and the rescaled matrices must hold the products with the
 * right decays.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kda/kda_record.cuh"
#include "kernels/common/k3_quant.h"
#include "host_expect.h"

constexpr int WARPS = 4;
constexpr int RB = stage_bytes(WARPS);

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double uniform(double lo, double hi)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (hi - lo) * (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static uint16_t ld16(const std::vector<uint8_t> &m, int off)
{
	uint16_t v;
	memcpy(&v, &m[off], 2);
	return v;
}

static void st16(std::vector<uint8_t> &m, int off, uint16_t v)
{
	memcpy(&m[off], &v, 2);
}

static double bf(uint16_t v)
{
	return k3_double_from_bf16(v);
}

/* The record layout's definition (kda_record.cuh's comments): element offsets in bytes. */
static int wide_at(int t, int j) /* Wk, Qt [16 t][128 j], swizzle t & 7 */
{
	return t * D * 2 + swz_wide(t, j >> 3) * 16 + (j & 7) * 2;
}

static int narrow_at(int r, int c) /* Kh^T [128 j][16 s], P / X / Y [16 t][16 s], swizzle (r >> 2) & 1 */
{
	return r * CH * 2 + swz_narrow(r, c >> 3) * 16 + (c & 7) * 2;
}

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lanes 8 i .. 8 i + 7 give matrix i's row
 * addresses; lane T gets of matrix i the pair (row T / 4, columns 2 (T % 4), + 1), or with .trans
 * (rows 2 (T % 4), + 1 of column T / 4); the first element in the low half. */
static void ldsm(const std::vector<uint8_t> &m, const int addr[32], bool trans, uint32_t out[32][4])
{
	for (int i = 0; i < 4; i++)
		for (int T = 0; T < 32; T++) {
			uint16_t lo, hi;
			if (!trans) {
				const int row = addr[8 * i + T / 4];
				lo = ld16(m, row + 4 * (T % 4));
				hi = ld16(m, row + 4 * (T % 4) + 2);
			} else {
				lo = ld16(m, addr[8 * i + 2 * (T % 4)] + 2 * (T / 4));
				hi = ld16(m, addr[8 * i + 2 * (T % 4) + 1] + 2 * (T / 4));
			}
			out[T][i] = (uint32_t)lo | (uint32_t)hi << 16;
		}
}

static double half(uint32_t w, int e)
{
	return bf((uint16_t)(e ? w >> 16 : w & 0xffffu));
}

/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (accumulated in double): lane T (g = T / 4,
 * t = T % 4) holds A (g, 2t + e), (g + 8, 2t + e), (g, 2t + 8 + e), (g + 8, 2t + 8 + e) in a[0..3],
 * B (2t + e, g), (2t + 8 + e, g) in b0, b1, and C / D (g, 2t + e), (g + 8, 2t + e). */
static void mma(double d[32][4], const uint32_t a[32][4], const uint32_t b[32][4], int b0)
{
	double A[16][16], B[16][8];
	for (int T = 0; T < 32; T++) {
		const int g = T / 4, t = T % 4;
		for (int e = 0; e < 2; e++) {
			A[g][2 * t + e] = half(a[T][0], e);
			A[g + 8][2 * t + e] = half(a[T][1], e);
			A[g][2 * t + 8 + e] = half(a[T][2], e);
			A[g + 8][2 * t + 8 + e] = half(a[T][3], e);
			B[2 * t + e][g] = half(b[T][b0], e);
			B[2 * t + 8 + e][g] = half(b[T][b0 + 1], e);
		}
	}
	for (int T = 0; T < 32; T++) {
		const int g = T / 4, t = T % 4;
		for (int e = 0; e < 2; e++)
			for (int k = 0; k < 16; k++) {
				d[T][e] += A[g][k] * B[k][2 * t + e];
				d[T][2 + e] += A[g + 8][k] * B[k][2 * t + e];
			}
	}
}

static double close_to(double got, double want, double scale)
{
	return fabs(got - want) <= 1e-2 * scale;
}

int main(void)
{
	/* A pair stage: chunk a at 0, b at RB, X and Y at 2 RB. */
	std::vector<uint8_t> st(pair_stage_bytes(WARPS), 0);
	const int A0 = 0, B0 = RB, XY = 2 * RB;
	double wk[CH][D], qt[CH][D], kh[D][CH], ga[D], gb[D];
	for (int t = 0; t < CH; t++)
		for (int j = 0; j < D; j++) {
			const uint16_t w = k3_bf16_from_double(uniform(-1, 1)), q = k3_bf16_from_double(uniform(-1, 1));
			wk[t][j] = bf(w), qt[t][j] = bf(q);
			st16(st, B0 + REC_WK + wide_at(t, j), w);
			st16(st, B0 + REC_QT + wide_at(t, j), q);
		}
	for (int j = 0; j < D; j++)
		for (int s = 0; s < CH; s++) {
			const uint16_t k = k3_bf16_from_double(uniform(-1, 1));
			kh[j][s] = bf(k);
			st16(st, A0 + REC_KH + narrow_at(j, s), k);
		}
	for (int j = 0; j < D; j++) {
		ga[j] = (float)uniform(0.01, 1), gb[j] = (float)uniform(0.01, 1);
		const float fa = (float)ga[j], fb = (float)gb[j];
		memcpy(&st[A0 + REC_G + 4 * g_index(j)], &fa, 4);
		memcpy(&st[B0 + REC_G + 4 * g_index(j)], &fb, 4);
	}

	/* g_index(): channels 0 .. 127 onto the 4 rows' first 32 floats, one to one. */
	{
		int seen[4 * G_LD] = {};
		for (int j = 0; j < D; j++) {
			const int i = g_index(j);
			EXPECT(i >= 0 && i < 4 * G_LD && i % G_LD < 32, "g_index(%d) = %d outside the rows\n", j, i);
			if (i >= 0 && i < 4 * G_LD)
				seen[i]++;
		}
		for (int r = 0; r < 4; r++)
			for (int c = 0; c < 32; c++)
				EXPECT(seen[r * G_LD + c] == 1, "G float %d taken %d times\n", r * G_LD + c, seen[r * G_LD + c]);
	}

	/* The cross warp's MMAs (cross_terms()). */
	double x[32][4][2] = {}, y[32][4][2] = {};
	double xa[32][4] = {}, xb[32][4] = {}, ya[32][4] = {}, yb[32][4] = {};
	for (int kk = 0; kk < D / 16; kk++) {
		int aw[32], aq[32], ak[32];
		for (int l = 0; l < 32; l++) {
			aw[l] = B0 + REC_WK + kda_cross_a_off(l, kk);
			aq[l] = B0 + REC_QT + kda_cross_a_off(l, kk);
			ak[l] = A0 + REC_KH + kda_cross_kh_off(l, kk);
		}
		uint32_t fw[32][4], fq[32][4], fk[32][4];
		ldsm(st, aw, false, fw);
		ldsm(st, aq, false, fq);
		ldsm(st, ak, true, fk);
		mma(xa, fw, fk, 0);
		mma(xb, fw, fk, 2);
		mma(ya, fq, fk, 0);
		mma(yb, fq, fk, 2);
	}
	for (int l = 0; l < 32; l++)
		for (int i = 0; i < 4; i++)
			x[l][i][0] = xa[l][i], x[l][i][1] = xb[l][i], y[l][i][0] = ya[l][i], y[l][i][1] = yb[l][i];
	/* Stores (pairs c[2h], c[2h + 1] of n-tile nn), each byte once. */
	std::vector<int> written(CROSS_BYTES, 0);
	for (int l = 0; l < 32; l++)
		for (int nn = 0; nn < 2; nn++)
			for (int h = 0; h < 2; h++) {
				const int off = kda_cross_xy_off(l, nn, h);
				EXPECT(off >= 0 && off + 4 <= CROSS_Y, "lane %d: X store at %d\n", l, off);
				if (off < 0 || off + 4 > CROSS_Y)
					continue;
				st16(st, XY + CROSS_X + off, k3_bf16_from_double(x[l][2 * h][nn]));
				st16(st, XY + CROSS_X + off + 2, k3_bf16_from_double(x[l][2 * h + 1][nn]));
				st16(st, XY + CROSS_Y + off, k3_bf16_from_double(y[l][2 * h][nn]));
				st16(st, XY + CROSS_Y + off + 2, k3_bf16_from_double(y[l][2 * h + 1][nn]));
				for (int b = 0; b < 4; b++)
					written[CROSS_X + off + b]++, written[CROSS_Y + off + b]++;
			}
	for (int b = 0; b < CROSS_BYTES; b++)
		EXPECT(written[b] == 1, "X / Y byte %d stored %d times\n", b, written[b]);

	/* The state warps read X and Y as P: B(k = s, n = t) = X[t][s]; n-tile 0 from words 0, 1,
	 * n-tile 1 (t + 8) from words 2, 3. */
	for (int which = 0; which < 2; which++) {
		const double(*a)[D] = which ? qt : wk;
		int addr[32];
		for (int l = 0; l < 32; l++)
			addr[l] = XY + (which ? CROSS_Y : CROSS_X) + kda_p_off(l >> 3, l & 7);
		uint32_t f[32][4];
		ldsm(st, addr, false, f);
		double big = 0;
		double want[CH][CH];
		for (int t = 0; t < CH; t++)
			for (int s = 0; s < CH; s++) {
				double z = 0;
				for (int j = 0; j < D; j++)
					z += a[t][j] * kh[j][s];
				want[t][s] = z;
				big = fmax(big, fabs(z));
			}
		for (int T = 0; T < 32; T++)
			for (int nt = 0; nt < 2; nt++)
				for (int e = 0; e < 2; e++) {
					const int t = T / 4 + 8 * nt, s0 = 2 * (T % 4) + e;
					const double lo = half(f[T][2 * nt], e), hi = half(f[T][2 * nt + 1], e);
					EXPECT(close_to(lo, want[t][s0], big), "%s[%d][%d] read %g, want %g\n", which ? "Y" : "X", t,
					       s0, lo, want[t][s0]);
					EXPECT(close_to(hi, want[t][s0 + 8], big), "%s[%d][%d] read %g, want %g\n", which ? "Y" : "X",
					       t, s0 + 8, hi, want[t][s0 + 8]);
				}
	}

	/* The rescaling: b's Wk and Qt by a's decays, a's Kh^T by b's (cross_terms()). */
	auto g_of = [&](int base, int j) {
		float v;
		memcpy(&v, &st[base + REC_G + 4 * g_index(j)], 4);
		return (double)v;
	};
	for (int u = 0; u < 256; u++) {
		const int c0 = kda_wide_word_chan(u);
		for (int m = 0; m < 8; m++)
			for (int base : { B0 + REC_WK, B0 + REC_QT }) {
				const int off = base + kda_wide_word_off(u) + 2 * m;
				st16(st, off, k3_bf16_from_double(bf(ld16(st, off)) * g_of(A0, c0 + m)));
			}
		const int j = kda_kh_word_chan(u);
		for (int m = 0; m < 8; m++) {
			const int off = A0 + REC_KH + 16 * u + 2 * m;
			st16(st, off, k3_bf16_from_double(bf(ld16(st, off)) * g_of(B0, j)));
		}
	}
	for (int t = 0; t < CH; t++)
		for (int j = 0; j < D; j++) {
			const double w = bf(ld16(st, B0 + REC_WK + wide_at(t, j))), q = bf(ld16(st, B0 + REC_QT + wide_at(t, j)));
			EXPECT(w == k3_round_bf16(wk[t][j] * (float)ga[j]), "Wk_b D_a [%d][%d] = %g, want %g\n", t, j, w,
			       wk[t][j] * ga[j]);
			EXPECT(q == k3_round_bf16(qt[t][j] * (float)ga[j]), "Qt_b D_a [%d][%d] = %g, want %g\n", t, j, q,
			       qt[t][j] * ga[j]);
		}
	for (int j = 0; j < D; j++)
		for (int s = 0; s < CH; s++) {
			const double k = bf(ld16(st, A0 + REC_KH + narrow_at(j, s)));
			EXPECT(k == k3_round_bf16(kh[j][s] * (float)gb[j]), "Kh_a^T D_b [%d][%d] = %g, want %g\n", j, s, k,
			       kh[j][s] * gb[j]);
		}

	printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
