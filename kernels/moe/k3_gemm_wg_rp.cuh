/* SPDX-License-Identifier: MIT */
/*
 * Internal to the GEMM op's wgmma path (k3_gemm_wg.cu): the MXFP4 weights' wgmma tile layout
 * (k3_gemm_repack_wg(); "wide2rp"), host and device, so that the tests check the device repack
 * against the host's and the decoder against the standard expansion.
 *
 * The matrix keeps its shape ([rows][K / 2] bytes, 4 bits a weight; the E8M0 scales are not
 * touched) and each 16-row x 64-k block its 512 bytes, reordered so that lane L (g = L / 4,
 * t = L % 4) of a consumer warp finds the A fragments of the block's 4 k steps in 16 contiguous
 * bytes: word ks (k step) of "pseudo-row" L / 2, half L % 2 (so the tensor copy's [256][32-byte]
 * boxes and their 32-byte swizzle are unchanged, and a quarter warp reads 128 contiguous bytes).
 * Word (g, t, ks) holds the 8 E2M1 nibbles of the fragment (a0 = row g, k 2t, 2t + 1; a1 = row
 * g + 8, same k; a2, a3 = the same rows at k 2t + 8, 2t + 9: k within k step ks), byte i being
 * the standard byte of a_i (low nibble the even k), run through a GF(2)-linear re-encoding from
 * which one rotate (a shift for two of the four) and one LOP3 give each BF16 pair (k3_wgrp_to_bf16x8()): sign at
 * bits 15 / 31, e1 e0 m at bits 8..6 / 24..22, all other bits zero, which is the E2M1 value
 * times 2^-126 exactly (e = 0, the subnormal 0.5, lands on the BF16 subnormal 2^-127). The
 * consumer then multiplies by 2^(s - 1) for E8M0 s (BF16 exponent field s + 126: s 0 .. 128,
 * which k3_gemm_repack_wg() checks): 8 integer instructions and 4 multiplies a fragment where the
 * standard layout takes 2 loads, 3 byte permutes, 15 for the expansion and 4 multiplies.
 */
#ifndef K3_KERNELS_MOE_K3_GEMM_WG_RP_CUH
#define K3_KERNELS_MOE_K3_GEMM_WG_RP_CUH

#include <stdint.h>

#include "common/k3_device.cuh"

namespace {

/* The largest E8M0 scale byte of a tensor in the tile layout (2^(s - 1) a normal BF16). */
constexpr int K3_WGRP_MAX_SCALE = 128;

/* Column i of the encoder (the inverse of the decoder's map): the word for input bit i alone
 * (bit 4 s + b: bit b of the nibble of slot s = 2 i + h, i.e. of a_i's half h). Found by
 * Gauss-Jordan elimination over GF(2) for the decoder's rotations 2 | 6, 10, 12 (the smallest
 * with an invertible map; none exists with o[0] unrotated); test-moe-gpu checks the round trip. */
__host__ __device__ __forceinline__ uint32_t k3_wgrp_col(int i)
{
	constexpr uint32_t COL[32] = { 0x10u,	    0x8228u,	 0x54000145u, 0x822800u,   0x100000u,  0x82280000u,
				       0x1455400u,  0x28000082u, 0x1u,	      0x2u,	   0x4u,       0x200u,
				       0x10000u,    0x20000u,	 0x40000u,    0x2000000u,  0x50000104u, 0x8000082u,
				       0x40000000u, 0x8208u,	 0x1045000u,  0x820800u,   0x4000u,    0x82080000u,
				       0x4000000u,  0x8000000u,	 0x40000104u, 0x8u,	   0x400u,     0x800u,
				       0x1044000u,  0x80000u };
	return COL[i];
}

/* The tile-layout word of 8 standard nibbles x (byte i: a_i's two). */
__host__ __device__ __forceinline__ uint32_t k3_wgrp_encode(uint32_t x)
{
	uint32_t q = 0;
	for (int i = 0; i < 32; i++)
		q ^= (x >> i & 1u) ? k3_wgrp_col(i) : 0u;
	return q;
}

/* The A fragment of a tile-layout word as BF16 pairs, each element the E2M1 value times 2^-126.
 * o[0] and o[1] take plain left shifts where the decoder's map has rotations by 2 and 6: the
 * mask's lowest bit is bit 6, so no bit a rotation wraps around lands under it (the same words).
 * ptxas issues a constant left shift as IMAD.SHL on the FMA pipe, a rotation as SHF on the
 * integer ALU, which the consumers' conversions kept ~39 % busy with "math pipe throttle" stalls
 * (2026-12-04n call 1): at T = 4K w13 ~3 % faster, in 8 of 11 pairs over three calls. */
__host__ __device__ __forceinline__ void k3_wgrp_to_bf16x8(uint32_t q, uint32_t o[4])
{
	const uint32_t M = 0x81c081c0u;
	o[0] = (q << 2) & M;
	o[1] = (q ^ (q << 6)) & M;
	o[2] = (q ^ k3_rotl(q, 10)) & M;
	o[3] = (q ^ k3_rotl(q, 12)) & M;
}

/* ---- FP8 MMAs on MXFP4 weights (2026-12-04p, the expansion only; no kernel runs it yet but
 * the measurement row "diag-rqp-fp8", k3_gemm_wg.cu) ----
 * wgmma's E4M3 A fragment (k3_wgmma_rs8) holds, a lane and a k step of 32 (one E8M0 scale group),
 * 8 weights of row g (k 4t + i in a0, 16 + 4t + i in a2) and 8 of row g + 8. The FP8 word of 8
 * weights w[0 .. 7] of one row (w[i]: k 4t + i, w[4 + i]: k 16 + 4t + i; E2M1 codes, bit 3 the
 * sign): nibble i (bits 4i .. 4i + 2) the magnitude code of w[i], nibble 4 + i that of w[4 + i];
 * the sign of w[i] at bit 8i + 7, of w[4 + i] at bit 8i + 3 (the nibbles' top bits). Decoding is
 * two byte permutes through an 8-byte table of the row's scale group and three logic ops (plus
 * one shift): 7 instructions for 8 weights, the E8M0 scale included, where the BF16 expansion
 * (k3_wgrp_to_bf16x8 and the scale products) takes 12. The table of scale group s: byte c = the
 * E4M3 of |E2M1 code c| x 2^(d - 5), d = s - base, base a per-row E8M0 floor with 0 <= d <= 11
 * (every entry normal or zero, the largest 384); the weight is then the E4M3 value times
 * 2^(base - 122), a per-row factor for the epilogue. */

/* The table (tlo: codes 0 .. 3, thi: 4 .. 7) of scale-group exponent offset d (0 .. 11): d = 0's
 * bytes plus d in every nonzero entry's exponent field (no carry: the largest byte is 0x7c). */
__host__ __device__ __forceinline__ void k3_wgf8_table(uint32_t d, uint32_t *tlo, uint32_t *thi)
{
	*tlo = 0x14100800u + d * 0x08080800u;
	*thi = 0x24201c18u + d * 0x08080808u;
}

/* The FP8 word of 8 E2M1 codes (w[0 .. 3]: k 4t + i, w[4 .. 7]: k 16 + 4t + i). */
__host__ __device__ __forceinline__ uint32_t k3_wgf8_encode(const uint8_t w[8])
{
	uint32_t q = 0;
	for (int i = 0; i < 4; i++) {
		q |= (uint32_t)(w[i] & 7u) << (4 * i) | (uint32_t)(w[4 + i] & 7u) << (4 * (4 + i));
		q |= (uint32_t)(w[i] >> 3 & 1u) << (8 * i + 7) | (uint32_t)(w[4 + i] >> 3 & 1u) << (8 * i + 3);
	}
	return q;
}

/* The table of scale byte s for a row of floor f: k3_wgf8_table(s - f) with the floor folded into
 * the constants (klo = k3_wgf8_klo(f), khi = k3_wgf8_khi(f), once a row): two multiply-adds on the
 * FMA pipe. */
__host__ __device__ __forceinline__ uint32_t k3_wgf8_klo(uint32_t f)
{
	return 0x14100800u - f * 0x08080800u;
}

__host__ __device__ __forceinline__ uint32_t k3_wgf8_khi(uint32_t f)
{
	return 0x24201c18u - f * 0x08080808u;
}

__host__ __device__ __forceinline__ void k3_wgf8_table_s(uint32_t s, uint32_t klo, uint32_t khi, uint32_t *tlo,
							 uint32_t *thi)
{
	*tlo = s * 0x08080800u + klo;
	*thi = s * 0x08080808u + khi;
}

/* The two E4M3 fragment words of an FP8 word q through the table (tlo, thi): lo = k 4t .. 4t + 3,
 * hi = k 16 + 4t .. (a0 / a2 of row g, a1 / a3 of row g + 8). */
__host__ __device__ __forceinline__ void k3_wgf8_decode(uint32_t q, uint32_t tlo, uint32_t thi, uint32_t *lo,
							uint32_t *hi)
{
	const uint32_t m = q & 0x77777777u;
	*lo = k3_prmt(tlo, thi, m) | (q & 0x80808080u);
	*hi = k3_prmt(tlo, thi, m >> 16) | ((q << 4) & 0x80808080u);
}

/* PRMT with its selector as given: __byte_perm() (k3_prmt()) masks a selector it cannot see with
 * 0x7777 first, since its nibbles' top bits would select PRMT's sign mode (2026-12-04p call 2's
 * SASS: one LOP3 more a byte permute of the decode). The caller keeps those bits zero. */
__device__ __forceinline__ uint32_t k3_prmt_raw(uint32_t a, uint32_t b, uint32_t sel)
{
	uint32_t r;
	asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
	return r;
}

/* k3_wgf8_decode() in 7 instructions on the device (call 1's SASS had 8 for it, call 2's form 9):
 * one mask for both halves' selectors, byte permutes that take them as they are (k3_prmt_raw()),
 * q << 4 as a multiply (IMAD on the FMA pipe). */
__device__ __forceinline__ void k3_wgf8_decode7(uint32_t q, uint32_t tlo, uint32_t thi, uint32_t *lo, uint32_t *hi)
{
	const uint32_t m = q & 0x77777777u;
	*lo = k3_prmt_raw(tlo, thi, m) | (q & 0x80808080u);
	*hi = k3_prmt_raw(tlo, thi, m >> 16) | ((q * 16u) & 0x80808080u);
}

/* Word w (w = pseudo-row x K / 8 + word of the row) of the tile layout of the standard nibbles
 * `packed` ([rows][K / 2], rows a multiple of 16, K of 64): the tile-layout matrix is these words
 * in order. */
__host__ __device__ __forceinline__ uint32_t k3_wgrp_word(const uint8_t *packed, int K, int64_t w)
{
	const int64_t wpr = K / 8, pr = w / wpr; /* words a row; pseudo-row */
	const int wc = (int)(w % wpr), kb = wc / 8, bo = (wc % 8) * 4; /* k block; byte in its 32 */
	const int lane = (int)(pr % 16) * 2 + bo / 16, ks = (bo % 16) / 4, g = lane / 4, t = lane % 4;
	const int64_t row0 = pr - pr % 16 + g;
	uint32_t x = 0;
	for (int i = 0; i < 4; i++) {
		const int64_t row = row0 + 8 * (i & 1);
		x |= (uint32_t)packed[row * (K / 2) + kb * 32 + ks * 8 + t + 4 * (i >> 1)] << (8 * i);
	}
	return k3_wgrp_encode(x);
}

/* Byte offset of lane's 16 bytes (k steps 0..3) in a 16-row block of the swizzled stage tile
 * (k3_wg_fp4_half_offset() of pseudo-row lane / 2, half lane % 2). */
__host__ __device__ __forceinline__ int k3_wgrp_lane_offset(int lane)
{
	return (lane >> 1) * 32 + (((lane & 1) ^ ((lane >> 3) & 1)) << 4);
}

/* The FP8 kernel's A slots in shared memory (XV_F8M, k3_gemm_wg.cu f8m_kblock()): a slot holds one
 * group (k 32) of two m64 blocks, block mb at 2048 mb, each 64 rows x 32 bytes in the interleaved
 * K-major layout: core matrices of 8 rows x 16 bytes, K3_WGF8_SLOT_LBO bytes between those next in
 * k, K3_WGF8_SLOT_SBO between those next in rows (the descriptor's fields, k3_wgmma_desc_plain()).
 * Lane (g = lane / 4, t = lane % 4) of warp w writes its fragment word i (a0 .. a3: row 16 w + g
 * + 8 (i & 1), k 4t + 16 (i >> 1) .. + 3) at k3_wgf8_slot_offset(w, lane, mb, i). */
constexpr uint32_t K3_WGF8_SLOT_LBO = 128, K3_WGF8_SLOT_SBO = 256, K3_WGF8_SLOT_BYTES = 4096;

__host__ __device__ __forceinline__ uint32_t k3_wgf8_slot_offset(int w, int lane, int mb, int i)
{
	return (uint32_t)(mb * 2048 + (2 * w + (i & 1)) * (int)K3_WGF8_SLOT_SBO + (i >> 1) * (int)K3_WGF8_SLOT_LBO +
			  (lane >> 2) * 16 + (lane & 3) * 4);
}

} // namespace

#endif
