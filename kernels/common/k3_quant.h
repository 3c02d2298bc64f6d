/* SPDX-License-Identifier: MIT */
/*
 * Number formats of the K3 kernels, on the host (the CPU references, the
 * tests, the bench and slice drivers): one place for each encoding, matched
 * bit for bit by the device decoders in k3_device.cuh.
 *
 *   BF16      the upper half of an IEEE float32; encoded round-to-nearest-even
 *             (through float32: a double is first rounded to float).
 *   E4M3      OCP FP8 (FN variant, as Hopper's cvt): bias 7, no infinities,
 *             S.1111.111 is NaN, largest finite 448, subnormals 2^-9 steps.
 *             Encoded round-to-nearest-even, saturating to +-448.
 *   E2M1      OCP FP4: values +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}, a nibble
 *             S.EE.M; encoded round-to-nearest-even, saturating to +-6.
 *   E8M0      OCP MX shared scale: the byte e means 2^(e - 127); 0xff is NaN.
 *   MXFP4     32 consecutive elements share one E8M0 scale (OCP MX v1.0):
 *             scale exponent floor(log2(amax)) - 2 (2 is E2M1's largest
 *             exponent), elements encoded as E2M1 of x / 2^scale. Two
 *             elements per byte, the lower index in the low nibble.
 *
 * Library code: nothing is printed; functions have no side effects.
 */
#ifndef K3_KERNELS_COMMON_K3_QUANT_H
#define K3_KERNELS_COMMON_K3_QUANT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Elements per MX scale group. */
#define K3_MX_GROUP 32
/* Largest finite E4M3 and E2M1 magnitudes. */
#define K3_E4M3_MAX 448.0
#define K3_E2M1_MAX 6.0

uint16_t k3_bf16_from_double(double x);
double k3_double_from_bf16(uint16_t b);
/* x rounded to the nearest BF16 value (NaN stays NaN). */
double k3_round_bf16(double x);

uint8_t k3_e4m3_from_double(double x);
double k3_double_from_e4m3(uint8_t b);

/* Nibble (low 4 bits) of x; NaN encodes as +0 (E2M1 has no NaN). */
uint8_t k3_e2m1_from_double(double x);
double k3_double_from_e2m1(uint8_t nibble);

/* 2^(e - 127), NaN for 0xff. */
double k3_double_from_e8m0(uint8_t e);

/* Quantizes n elements (n a multiple of K3_MX_GROUP) to MXFP4: packed[n / 2]
 * nibbles and scales[n / 32] E8M0 bytes. A group of zeros gets scale 2^-127. */
void k3_mxfp4_quantize(const double *x, size_t n, uint8_t *packed, uint8_t *scales);
/* Element i of an MXFP4 row (packed nibbles and their scales). */
double k3_mxfp4_element(const uint8_t *packed, const uint8_t *scales, size_t i);

/* Quantizes n elements (n a multiple of K3_MX_GROUP) to MXFP8: q[n] E4M3 bytes and
 * scales[n / 32] E8M0 bytes. Finite inputs only (a NaN or infinity makes its group's bytes
 * meaningless). */
void k3_mxfp8_quantize(const double *x, size_t n, uint8_t *q, uint8_t *scales);
/* Element i of an MXFP8 row. */
double k3_mxfp8_element(const uint8_t *q, const uint8_t *scales, size_t i);

/* One row of n BF16 values x (each a BF16 value as a double) as E4M3 with one FP32 scale: *scale =
 * amax / 448 in FP32 (1 for a row of zeros), q[i] = E4M3 of (float)x[i] / *scale in FP32, round to
 * nearest even, saturating (k3_gemm_quantize_e4m3_rows() on the device, bit for bit). */
void k3_e4m3_row_quantize(const double *x, size_t n, uint8_t *q, float *scale);

/* Scales at or above this take k3_e4m3_div()'s steps on the device; below, IEEE division. */
#define K3_E4M3_DIV_MIN_SCALE 0x1p-60f

/* x / s in FP32 as IEEE division rounds it, from r = 1 / s in FP32 (rounded to nearest), without
 * a division: q0 = x r, e = x - q0 s (one FMA: exact, q0 being within an ulp of x / s), then
 * q0 + e r (one FMA), with x's sign (a zero quotient's). That one correction step of a correctly
 * rounded reciprocal gives the correctly rounded quotient is Markstein's theorem (P. Markstein,
 * IBM J. Res. Dev. 34(1), 1990); test-k3-quant checks it against `x / s` for every finite BF16 x
 * at thousands of scales s >= K3_E4M3_DIV_MIN_SCALE where |x / s| <= 2^16 (the quantizer's
 * |x| <= amax ~ 448 s; a quotient that overflows would come out NaN). Quotients below 2^-24 may
 * differ from IEEE division's in their last bits (x - q0 s can underflow), but they lie far below
 * E4M3's smallest step (2^-9) and quantize to the same zero (checked too). The device
 * quantizer's steps (k3_gemm_quantize_e4m3_rows()). */
float k3_e4m3_div(float x, float s, float r);

/* Byte b of the FP8-layout word of 8 standard-order nibbles w (nibble i at bits 4i..4i+3):
 * the same word as k3_fp8r_word() in k3_device.cuh. */
uint32_t k3_mxfp4_fp8_word(uint32_t w);
/* The FP8 layout of MXFP4 nibbles: rows of K elements (K a multiple of 128), packed [rows][K / 2]
 * -> out [rows][K / 2] (not in place). */
void k3_mxfp4_repack_fp8(const uint8_t *packed, size_t rows, size_t K, uint8_t *out);

/* The FP16-pair encoding of 8 standard-order nibbles w (nibble i at bits 4i..4i+3): the word q
 * from which k3_f16enc_to_f16x8() (k3_device.cuh) gives element j and j + 4 as the FP16 pair j
 * of value v 2^-14. Linear over GF(2) (the encoding of w ^ v is the XOR of theirs). */
uint32_t k3_mxfp4_f16enc_word(uint32_t w);
/* Its columns (col[8 j + 4 h + b]: the stored word whose decoding is bit b (0: m, 1: e0, 2: e1,
 * 3: sign) of element j + 4 h alone; the encoding of w is the XOR of the columns of w's set
 * bits), as an initializer for the device repack (k3_gemm_repack_f16enc()). */
#define K3_MXFP4_F16ENC_COLS                                                                             \
	{                                                                                                \
		0x00000080u, 0x00000100u, 0x50008a6du, 0x04122000u, 0x00800000u, 0x01000000u, 0x8a6d5000u, \
		0x20000412u, 0x00000008u, 0x00000010u, 0x00000020u, 0x40008864u, 0x00080000u, 0x00100000u, \
		0x00200000u, 0x88644000u, 0x00000001u, 0x00000002u, 0x40000820u, 0x00000040u, 0x00010000u, \
		0x00020000u, 0x08204000u, 0x00400000u, 0x10000000u, 0x00000412u, 0x40000000u, 0x40000824u, \
		0x00001000u, 0x04120000u, 0x00004000u, 0x08244000u,                                        \
	}
/* The FP16-pair layout of MXFP4 nibbles (the gemv's gemv_f16_kernel reads it): rows of K elements
 * (K a multiple of 128), packed [rows][K / 2] -> out [rows][K / 2] (not in place). Per 128-deep
 * block of a row (64 bytes in both layouts), bytes 16 t + 4 j .. + 3 hold the
 * k3_mxfp4_f16enc_word() of elements 32 j + 8 t .. 32 j + 8 t + 7 (scale group j): one 16-byte
 * load gives lane t of an MMA quad 8 weights of each of the block's 4 scale groups. The scales
 * stay as they are ([rows][K / 32]). */
void k3_mxfp4_repack_f16enc(const uint8_t *packed, size_t rows, size_t K, uint8_t *out);

#ifdef __cplusplus
}
#endif

#endif
