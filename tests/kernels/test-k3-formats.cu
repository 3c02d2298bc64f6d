/* SPDX-License-Identifier: MIT */
/*
 * Host run of the device number-format converters of kernels/common/k3_device.cuh
 * (no GPU needed; built with nvcc, suite 'unit'): the MXFP4 nibble expansion by
 * byte permutes and the E8M0 scale as a BF16 pair, bit for bit against the
 * host decoders of k3_quant.h; and the wgmma GEMM's MXFP4 tile layout: the
 * producer's placement of a k block in shared memory and each lane's A
 * fragment read back from it (moe/k3_gemm_wg_layout.cuh) give every element
 * at its mma.m16n8k16 / wgmma fragment position with its group's scale; and the
 * MLA split kernel's FP8 scale staging (mla/mla_fp8_stage.cuh) writes every
 * token's scales of a stage for each block size (the kernel runs 64 and 256
 * threads; 64 once left tokens 16..31 stale). The FP8 layout of MXFP4 weights
 * (the MXFP8-activation gemv): device and host repacks agree and the
 * expansion gives every E2M1 value as E4M3 of v 2^-6. The FP16-pair encoding of 8 nibbles
 * (k3_mxfp4_f16enc_word(), k3_f16enc_to_f16x8()): every element as FP16 of v 2^-14; the
 * FP16-pair layout of whole rows (k3_mxfp4_repack_f16enc(), what gemv_f16_kernel reads): lane t's
 * 16 bytes of a 128-block decode to elements 32 j + 8 t + i and + 4 (pair i of word j) of the row.
 * The FP8 word of the tile layout's FP8 form (k3_wgf8_encode(), k3_wgf8_decode() through
 * k3_wgf8_table()): every E2M1 code at every position and every scale offset d = 0 .. 11 decodes to
 * the E4M3 of v 2^(d - 5), sign included. The FP8 kernel's A slots in shared memory
 * (k3_wgf8_slot_offset() with k3_wgmma_desc_plain()): each fragment byte where the interleaved
 * K-major layout reads it (check_wgf8_slots()). The one-pass E4M3 row quantizer's steps
 * (moe/k3_quant_rows.cuh, K3_QUANT_E4M3=reg) for every thread of each row, a warp and a CTA a row,
 * K = 8 .. 4096: every byte and scale as k3_e4m3_row_quantize(), nothing past the rows written
 * (check_qrows(); a store guard off by a piece or the pieces laid out by thread fail it).
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/k3_device.cuh"
#include "common/k3_wgmma.cuh"
#include "mla/mla_fp8_stage.cuh"
#include "moe/k3_gemm_wg_layout.cuh"
#include "moe/k3_gemm_wg_rp.cuh"
#include "moe/k3_quant_rows.cuh"
#include "kernels/common/k3_quant.h"
#include "host_expect.h"

static double bf16_half(uint32_t pair, int hi)
{
	return k3_double_from_bf16((uint16_t)(hi ? pair >> 16 : pair & 0xffffu));
}

static void check_word(uint32_t w)
{
	uint32_t o[4];
	k3_e2m1x8_to_bf16x8(w, o);
	for (int i = 0; i < 8; i++) {
		const uint8_t nib = (uint8_t)((w >> (4 * i)) & 0xfu);
		const double want = k3_double_from_e2m1(nib), got = bf16_half(o[i / 2], i & 1);
		/* Same value and same sign (the zero nibble 8 is -0). */
		EXPECT(want == got && signbit(want) == signbit(got), "word %08x element %d: %g, want %g\n", w, i, got,
		       want);
	}
}

/* A 256-row MXFP4 k block (random nibbles; scales of rows and groups distinct) laid out as
 * the wgmma producer does, then every lane's fragments of every k step and 16-row block. */
static void check_wg_fp4_tile(uint64_t seed, int kb)
{
	enum { ROWS = 256, KB = 64, K = 4 * KB };
	static uint8_t packed[ROWS][K / 2], scales[ROWS][K / 32];
	static unsigned char raw[ROWS * 32], sc[ROWS * 4];
	uint64_t s = seed;
	for (int r = 0; r < ROWS; r++) {
		for (int i = 0; i < K / 2; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			packed[r][i] = (uint8_t)(s >> 56);
		}
		for (int i = 0; i < K / 32; i++)
			scales[r][i] = (uint8_t)(100 + (r * 7 + i * 3) % 50);
	}
	memset(raw, 0xee, sizeof raw);
	for (int j = 0; j < ROWS; j++) {
		for (int h = 0; h < 2; h++)
			memcpy(raw + k3_wg_fp4_half_offset(j, h), &packed[j][kb * (KB / 2) + h * 16], 16);
		memcpy(sc + j * 4, &scales[j][(kb & ~1) * 2], 4); /* the producer's 4-byte copy */
	}
	for (int row16 = 0; row16 < ROWS; row16 += 16)
		for (int ks = 0; ks < KB / 16; ks++)
			for (int lane = 0; lane < 32; lane++) {
				uint32_t a[4], s0, s1;
				k3_wg_fp4_fragment(raw, sc, kb, ks, row16, lane, a, &s0, &s1);
				const int g = lane >> 2, t = lane & 3;
				for (int i = 0; i < 8; i++) { /* register i / 2, half i % 2 */
					const int reg = i / 2, row = row16 + g + (reg & 1) * 8;
					const int k = kb * KB + ks * 16 + 2 * t + (reg >> 1) * 8 + (i & 1);
					const uint8_t nib = (uint8_t)((packed[row][k / 2] >> (4 * (k & 1))) & 0xfu);
					const double want = k3_double_from_e2m1(nib), got = bf16_half(a[reg], i & 1);
					EXPECT(want == got && signbit(want) == signbit(got),
					       "wg fp4 kb %d rows %d ks %d lane %d reg %d: %g, want %g\n", kb, row16, ks, lane,
					       reg, got, want);
					const uint32_t se = (reg & 1) ? s1 : s0;
					EXPECT(se == scales[row][k / 32], "wg fp4 kb %d row %d k %d: scale %u, want %u\n", kb,
					       row, k, se, scales[row][k / 32]);
				}
			}
	/* Rows g = 0..7 of an 8-byte read land in distinct 8-byte bank pairs (no conflicts). */
	for (int ks = 0; ks < KB / 16; ks++) {
		unsigned banks = 0;
		for (int g = 0; g < 8; g++) {
			const int off = (((ks >> 1) ^ ((g >> 2) & 1)) << 4) + ((ks & 1) << 3);
			banks |= 1u << (((g * 32 + off) / 8) % 16);
		}
		EXPECT(__builtin_popcount(banks) == 8, "wg fp4 ks %d: bank conflict\n", ks);
	}
}

/* The wgmma producer's tensor copies: the 32-byte swizzle of a [256][32]-byte MXFP4 box is
 * k3_wg_fp4_half_offset()'s layout, and the 128-byte swizzle of a [256][128]-byte BF16 box puts
 * chunk c of row r at c ^ (r % 8) (the layout of the cp.async producer and of the descriptors);
 * both are permutations of the tile. */
static void check_tma_swizzles(void)
{
	static unsigned char seen[256 * 128];
	memset(seen, 0, sizeof seen);
	for (int j = 0; j < 256; j++)
		for (int h = 0; h < 2; h++) {
			const int o = k3_tma_swizzle32(j * 32 + h * 16);
			EXPECT(o == k3_wg_fp4_half_offset(j, h), "swizzle32 row %d half %d: %d, want %d\n", j, h, o,
			       k3_wg_fp4_half_offset(j, h));
			EXPECT(o >= 0 && o < 256 * 32 && !seen[o], "swizzle32 row %d half %d: %d twice\n", j, h, o);
			if (o >= 0 && o < 256 * 32)
				seen[o] = 1;
		}
	memset(seen, 0, sizeof seen);
	for (int r = 0; r < 256; r++)
		for (int c = 0; c < 8; c++) {
			const int o = k3_tma_swizzle128(r * 128 + c * 16);
			EXPECT(o == r * 128 + ((c ^ (r & 7)) << 4), "swizzle128 row %d chunk %d: %d\n", r, c, o);
			EXPECT(o >= 0 && o < 256 * 128 && !seen[o], "swizzle128 row %d chunk %d: %d twice\n", r, c, o);
			if (o >= 0 && o < 256 * 128)
				seen[o] = 1;
		}
}

/* All threads of a block of `threads` stage a tile's scales over a poisoned array: every
 * slot must hold its token's scale, bit for bit. */
static void check_mla_fp8_scales(int threads)
{
	static unsigned char raw[MLA_STAGE_TOKENS * MLA_FP8_TOKEN_BYTES];
	float ksc[MLA_STAGE_TOKENS * MLA_FP8_SCALES];
	for (size_t i = 0; i < sizeof raw; i++)
		raw[i] = (unsigned char)(i * 37u + 11u);
	for (int tok = 0; tok < MLA_STAGE_TOKENS; tok++)
		for (int j = 0; j < MLA_FP8_SCALES; j++) {
			const float v = 0x1p-10f * (float)(1 + tok * MLA_FP8_SCALES + j);
			memcpy(raw + tok * MLA_FP8_TOKEN_BYTES + MLA_FP8_SCALE_OFFSET + 4 * j, &v, sizeof v);
		}
	for (int i = 0; i < MLA_STAGE_TOKENS * MLA_FP8_SCALES; i++)
		ksc[i] = nanf("");
	for (int tid = 0; tid < threads; tid++)
		mla_fp8_stage_scales(ksc, raw, tid, threads);
	for (int tok = 0; tok < MLA_STAGE_TOKENS; tok++)
		for (int j = 0; j < MLA_FP8_SCALES; j++) {
			const float want = 0x1p-10f * (float)(1 + tok * MLA_FP8_SCALES + j);
			const float got = ksc[tok * MLA_FP8_SCALES + j];
			EXPECT(got == want, "mla fp8 scales, %d threads: token %d scale %d is %g, want %g\n", threads,
			       tok, j, (double)got, (double)want);
		}
}

/* The FP8 layout word of 8 standard-order nibbles w (device k3_fp8r_word() = host
 * k3_mxfp4_fp8_word()) expanded to E4M3 (k3_e2m1r_to_e4m3x8): byte i of lo / hi is element i /
 * 4 + i as E4M3 of v 2^-6, exactly. */
static void check_fp8_word(uint32_t w)
{
	const uint32_t u = k3_fp8r_word(w);
	EXPECT(u == k3_mxfp4_fp8_word(w), "fp8 layout %08x: device %08x, host %08x\n", w, u, k3_mxfp4_fp8_word(w));
	uint32_t lo, hi;
	k3_e2m1r_to_e4m3x8(u, lo, hi);
	for (int i = 0; i < 8; i++) {
		const uint8_t e4 = (uint8_t)((i < 4 ? lo : hi) >> (8 * (i % 4)));
		const double got = std::ldexp(k3_double_from_e4m3(e4), 6);
		const double want = k3_double_from_e2m1((uint8_t)((w >> (4 * i)) & 0xfu));
		EXPECT(got == want && std::signbit(got) == std::signbit(want),
		       "e2m1 -> e4m3 %08x element %d: %g (0x%02x), want %g\n", w, i, got, e4, want);
	}
	EXPECT(((lo | hi) & 0x63636363u) == 0, "e2m1 -> e4m3 %08x: stray bits %08x %08x\n", w, lo, hi);
}

/* An FP16 bit pattern as a double (subnormals included; no infinities or NaNs here). */
static double f16_value(uint32_t h)
{
	const int e = (int)((h >> 10) & 0x1fu), m = (int)(h & 0x3ffu);
	const double v = e ? std::ldexp(1024.0 + m, e - 25) : std::ldexp((double)m, -24);
	return (h & 0x8000u) ? -v : v;
}

/* The FP16-pair encoding (host k3_mxfp4_f16enc_word(), device k3_f16enc_to_f16x8()): pair j holds
 * elements j and j + 4 as v 2^-14 exactly, signed zeros included, and nothing else. */
static void check_f16enc_word(uint32_t w)
{
	uint32_t o[4];
	k3_f16enc_to_f16x8(k3_mxfp4_f16enc_word(w), o);
	for (int j = 0; j < 4; j++) {
		EXPECT((o[j] & ~0x8e008e00u) == 0, "f16 encoding %08x pair %d: stray bits %08x\n", w, j, o[j]);
		for (int h = 0; h < 2; h++) {
			const int e = j + 4 * h;
			const double got = std::ldexp(f16_value(h ? o[j] >> 16 : o[j] & 0xffffu), 14);
			const double want = k3_double_from_e2m1((uint8_t)((w >> (4 * e)) & 0xfu));
			EXPECT(got == want && std::signbit(got) == std::signbit(want),
			       "f16 encoding %08x element %d: %g, want %g\n", w, e, got, want);
		}
	}
}

/* The FP16-pair layout of rows of random nibbles read back as gemv_f16_kernel's lanes read it:
 * lane t's 16 bytes of block kb, word j, pair i = elements kb 128 + 32 j + 8 t + i (low half) and
 * + 4 (high half) of the row, as FP16 of v 2^-14. */
static void check_f16enc_layout()
{
	enum { ROWS = 3, K = 384 };
	uint8_t packed[ROWS * K / 2], out[ROWS * K / 2];
	uint64_t r = 5;
	for (size_t i = 0; i < sizeof packed; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		packed[i] = (uint8_t)(r >> 56);
	}
	k3_mxfp4_repack_f16enc(packed, ROWS, K, out);
	for (int row = 0; row < ROWS; row++)
		for (int kb = 0; kb < K / 128; kb++)
			for (int t = 0; t < 4; t++)
				for (int j = 0; j < 4; j++) {
					const uint8_t *q = out + row * (K / 2) + kb * 64 + 16 * t + 4 * j;
					uint32_t o[4];
					k3_f16enc_to_f16x8((uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
								   (uint32_t)q[3] << 24,
							   o);
					for (int i = 0; i < 4; i++)
						for (int h = 0; h < 2; h++) {
							const int k = kb * 128 + 32 * j + 8 * t + i + 4 * h;
							const uint8_t b = packed[row * (K / 2) + k / 2];
							const double want = k3_double_from_e2m1((uint8_t)((k & 1) ? b >> 4 : b & 0xfu));
							const double got = std::ldexp(f16_value(h ? o[i] >> 16 : o[i] & 0xffffu), 14);
							EXPECT(got == want && std::signbit(got) == std::signbit(want),
							       "f16 layout row %d k %d: %g, want %g\n", row, k, got, want);
						}
				}
}

/* The FP8 word of codes w[0 .. 7] decoded through the table of offset d: byte i of lo is w[i],
 * of hi w[4 + i], each the E4M3 of its E2M1 value times 2^(d - 5) (same value, same sign). */
static void check_wgf8(const uint8_t w[8], uint32_t d)
{
	uint32_t tlo, thi, lo, hi;
	k3_wgf8_table(d, &tlo, &thi);
	k3_wgf8_decode(k3_wgf8_encode(w), tlo, thi, &lo, &hi);
	for (int i = 0; i < 8; i++) {
		const uint8_t b = (uint8_t)(((i < 4 ? lo : hi) >> (8 * (i & 3))) & 0xffu);
		const double want = ldexp(k3_double_from_e2m1(w[i]), (int)d - 5), got = k3_double_from_e4m3(b);
		EXPECT(want == got && signbit(want) == signbit(got), "wgf8 d %u element %d code %u: byte %02x = %g, want %g\n",
		       d, i, w[i], b, got, want);
	}
}

/* The FP8 kernel's A slots (k3_wgf8_slot_offset(), the descriptor of k3_wgmma_desc_plain()):
 * every byte of the fragments of a warpgroup's 4 warps x 32 lanes (rows 16 w + g + 8 (i & 1), k 4t +
 * 16 (i >> 1) + b of m64 block mb, as k3_wgmma_rs8's A) lands where the PTX ISA's interleaved
 * K-major layout, read with the descriptor's own fields, puts that element: start + (r / 8) SBO +
 * (k / 16) LBO + (r % 8) 16 + k % 16; every byte of the slot written once; a store instruction's 32
 * lanes on 32 distinct banks. */
static void check_wgf8_slots()
{
	const uint32_t base = 0x1400u; /* an odd stage's token region (any 16-byte aligned address) */
	static unsigned char seen[K3_WGF8_SLOT_BYTES];
	memset(seen, 0, sizeof seen);
	for (int mb = 0; mb < 2; mb++) {
		const uint64_t d = k3_wgmma_desc_plain(base + (uint32_t)(mb * 2048), K3_WGF8_SLOT_LBO, K3_WGF8_SLOT_SBO);
		const uint32_t start = (uint32_t)(d & 0x3fffu) << 4, lbo = (uint32_t)((d >> 16) & 0x3fffu) << 4,
			       sbo = (uint32_t)((d >> 32) & 0x3fffu) << 4;
		EXPECT((d >> 62) == 0 && ((d >> 49) & 7u) == 0 && start == base + (uint32_t)(mb * 2048),
		       "slot descriptor %016llx: layout %llu, base offset %llu, start %x\n", (unsigned long long)d,
		       (unsigned long long)(d >> 62), (unsigned long long)((d >> 49) & 7u), start);
		for (int w = 0; w < 4; w++)
			for (int i = 0; i < 4; i++) {
				unsigned banks = 0;
				for (int lane = 0; lane < 32; lane++) {
					const uint32_t o = k3_wgf8_slot_offset(w, lane, mb, i);
					EXPECT(o % 4 == 0, "slot offset %u not a word\n", o);
					banks |= 1u << ((o / 4) % 32);
					for (int b = 0; b < 4; b++) {
						const int r = 16 * w + lane / 4 + 8 * (i & 1), k = 4 * (lane % 4) + 16 * (i >> 1) + b;
						const uint32_t want = start + (uint32_t)(r / 8) * sbo + (uint32_t)(k / 16) * lbo +
								      (uint32_t)(r % 8) * 16 + (uint32_t)(k % 16);
						EXPECT(base + o + (uint32_t)b == want,
						       "slot: block %d warp %d lane %d word %d byte %d at %u, the layout's %u\n", mb,
						       w, lane, i, b, base + o + b, want);
						if (o + (uint32_t)b < sizeof seen)
							seen[o + b]++;
					}
				}
				EXPECT(banks == 0xffffffffu, "slot: block %d warp %d word %d: banks %08x\n", mb, w, i, banks);
			}
	}
	for (uint32_t o = 0; o < 4096; o++)
		EXPECT(seen[o] == 1, "slot byte %u written %d times\n", o, seen[o]);
}

/* The one-pass E4M3 quantizer's steps (moe/k3_quant_rows.cuh) for every thread of each row, the
 * amax reduced over the row's G threads as the kernel reduces it, with G and the pieces a thread
 * as k3_gemm_quantize_e4m3_rows() picks them: every byte and scale as k3_e4m3_row_quantize(), no
 * byte past the row written. */
template <int G, int NV>
static void check_qrows_nv(const uint16_t *x, const double *xd, int R, int K)
{
	const size_t pad = 64;
	uint8_t *q = (uint8_t *)malloc((size_t)R * K + pad), *want = (uint8_t *)malloc((size_t)K);
	uint4 *v = (uint4 *)malloc(sizeof(uint4) * NV * G);
	memset(q, 0xa5, (size_t)R * K + pad);
	for (int r = 0; r < R; r++) {
		float amax = 0.0f;
		for (int t = 0; t < G; t++)
			amax = fmaxf(amax, qrow_load<G, NV>(x + (size_t)r * K, K, t, *reinterpret_cast<uint4(*)[NV]>(v + t * NV)));
		const float s = qrow_scale(amax);
		for (int t = 0; t < G; t++)
			qrow_store<G, NV>(*reinterpret_cast<uint4(*)[NV]>(v + t * NV), K, t, s, q + (size_t)r * K);
		float ws;
		k3_e4m3_row_quantize(xd + (size_t)r * K, (size_t)K, want, &ws);
		EXPECT(memcmp(&s, &ws, sizeof s) == 0, "qrows G %d K %d row %d: scale %a, want %a\n", G, K, r, s, ws);
		for (int k = 0; k < K; k++)
			EXPECT(q[(size_t)r * K + k] == want[k], "qrows G %d K %d row %d k %d: %02x, want %02x\n", G, K, r, k,
			       q[(size_t)r * K + k], want[k]);
	}
	for (size_t i = 0; i < pad; i++)
		EXPECT(q[(size_t)R * K + i] == 0xa5, "qrows G %d K %d: byte %zu past the rows written\n", G, K, i);
	free(q), free(want), free(v);
}

template <int G>
static void check_qrows_g(const uint16_t *x, const double *xd, int R, int K)
{
	const int nv = qrow_pieces(K, G);
	if (nv <= 1)
		check_qrows_nv<G, 1>(x, xd, R, K);
	else if (nv <= 2)
		check_qrows_nv<G, 2>(x, xd, R, K);
	else if (nv <= 4)
		check_qrows_nv<G, 4>(x, xd, R, K);
	else if (nv <= 8)
		check_qrows_nv<G, 8>(x, xd, R, K);
	else if (nv <= 16)
		check_qrows_nv<G, 16>(x, xd, R, K);
	else
		EXPECT(false, "qrows G %d K %d: %d pieces a thread (the kernel takes the two-pass form)\n", G, K, nv);
}

/* R rows of K: random values over 2^-40 .. 2^8, a row of zeros, BF16 subnormals, the largest BF16,
 * an amax of 2^-70 (IEEE division), a NaN and an infinity. */
static void check_qrows(int R, int K, uint64_t seed)
{
	uint16_t *x = (uint16_t *)malloc((size_t)R * K * 2 + 16);
	double *xd = (double *)malloc(sizeof(double) * (size_t)R * K);
	uint64_t r = seed;
	for (size_t i = 0; i < (size_t)R * K; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		const int row = (int)(i / (size_t)K), k = (int)(i % (size_t)K);
		double v = ((double)(r >> 11) * 0x1p-53) * 2.0 - 1.0;
		switch (row % 7) {
		case 0: v = 0.0; break;
		case 1: v = ldexp(v, -128); break;
		case 2: v = k == K / 2 ? 0x1.fep127 : v; break;
		case 3: v = ldexp(v, -70); break;
		case 4: v = k == 3 ? NAN : v; break;
		case 5: v = k == 1 ? INFINITY : v; break;
		default: v = ldexp(v, (int)((r >> 40) % 49) - 40); break;
		}
		x[i] = k3_bf16_from_double(v);
		xd[i] = k3_double_from_bf16(x[i]);
	}
	check_qrows_g<32>(x, xd, R, K);
	check_qrows_g<256>(x, xd, R, K);
	free(x), free(xd);
}

int main()
{
	for (int K : { 8, 264, 520, 2048, 3584, 4096 })
		check_qrows(14, K, (uint64_t)K);
	check_wgf8_slots();
	/* The table with the row's floor folded into its constants: that of offset s - f. */
	for (uint32_t f = 0; f < 256; f++)
		for (uint32_t s8 = f; s8 <= f + 11 && s8 < 256; s8++) {
			uint32_t a0, a1, b0, b1;
			k3_wgf8_table(s8 - f, &a0, &a1);
			k3_wgf8_table_s(s8, k3_wgf8_klo(f), k3_wgf8_khi(f), &b0, &b1);
			EXPECT(a0 == b0 && a1 == b1, "wgf8 table: floor %u scale %u: %08x %08x, want %08x %08x\n", f, s8, b0,
			       b1, a0, a1);
		}
	/* The FP8 word: each code at each position beside fixed others, then random words, every d. */
	for (uint32_t d = 0; d <= 11; d++) {
		for (int pos = 0; pos < 8; pos++)
			for (uint8_t c = 0; c < 16; c++) {
				uint8_t w[8] = { 1, 15, 6, 9, 3, 12, 7, 10 };
				w[pos] = c;
				check_wgf8(w, d);
			}
		uint64_t r = 5 + d;
		for (int i = 0; i < 20000; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			uint8_t w[8];
			for (int j = 0; j < 8; j++)
				w[j] = (uint8_t)((r >> (32 + 4 * j)) & 0xfu);
			check_wgf8(w, d);
		}
	}
	check_f16enc_layout();
	/* The encoding is linear, so the 32 one-bit words decide it; then every nibble value at
	 * every position and random words. */
	for (int b = 0; b < 32; b++)
		check_f16enc_word(1u << b);
	for (uint32_t n = 0; n < 16; n++)
		for (int pos = 0; pos < 8; pos++)
			check_f16enc_word((n << (4 * pos)) | (0x9abcdef1u & ~(0xfu << (4 * pos))));
	{
		uint64_t r = 11;
		for (int i = 0; i < 200000; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			check_f16enc_word((uint32_t)(r >> 32));
		}
	}
	/* Each output byte depends on two nibbles (elements b, 4 + b): all 256 pairs at each b. */
	for (uint32_t pair = 0; pair < 256; pair++)
		for (int b = 0; b < 4; b++)
			check_fp8_word(((pair & 0xfu) << (4 * b)) | ((pair >> 4) << (4 * (b + 4))) | 0x00000000u);
	{
		uint64_t r = 7;
		for (int i = 0; i < 200000; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			check_fp8_word((uint32_t)(r >> 32));
		}
	}
	for (uint32_t n = 0; n < 16; n++)
		for (int pos = 0; pos < 8; pos++)
			check_word((n << (4 * pos)) | (0x21436587u & ~(0xfu << (4 * pos))));
	uint64_t s = 1;
	for (int i = 0; i < 1000000; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		check_word((uint32_t)(s >> 32));
	}
	for (uint32_t e = 0; e < 256; e++) {
		const uint32_t pair = k3_e8m0_to_bf16x2(e);
		const double want = k3_double_from_e8m0((uint8_t)e);
		EXPECT((pair & 0xffffu) == (pair >> 16), "e8m0 %u: halves differ\n", e);
		const double got = bf16_half(pair, 0);
		EXPECT(want == got || (want != want && got != got), "e8m0 %u: %g, want %g\n", e, got, want);
	}
	/* k3_prmt against its definition on a few selectors. */
	EXPECT(k3_prmt(0x33221100u, 0x77665544u, 0x7654u) == 0x77665544u, "prmt high\n");
	EXPECT(k3_prmt(0x33221100u, 0x77665544u, 0x5140u) == 0x55114400u, "prmt interleave\n");
	for (int kb = 0; kb < 4; kb++)
		check_wg_fp4_tile(0x1234567ull + (uint64_t)kb, kb);
	check_tma_swizzles();
	for (int threads = 32; threads <= 512; threads *= 2)
		check_mla_fp8_scales(threads);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("k3 formats: ok\n");
	return 0;
}
