/* SPDX-License-Identifier: MIT */
/*
 * Device helpers of the K3 kernels outside KDA (internal, internal linkage):
 * number formats (decoders matching kernels/common/k3_quant.h bit for bit),
 * warp reductions, the BF16 tensor-core MMA m16n8k16 with its ldmatrix
 * loads, cp.async, mbarriers and the bulk copy engine.
 *
 * MMA fragments of mma.m16n8k16.row.col (g = lane / 4, t = lane % 4):
 *   A (16 x 16): a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
 *   B (16 x 8):  b0 (k 2t..2t+1, n g)  b1 (k 2t+8.., n g)
 *   C (16 x 8):  c0,c1 (g, 2t..2t+1)  c2,c3 (g+8, 2t..2t+1)
 * ldsm_x4(p): lane l gives the address of row l % 8 of 8x8 matrix l / 8;
 * matrix i lands in register i, each lane holding (row l / 4, cols 2 (l % 4) ..).
 * ldsm_x4_t: the same, transposed (each lane holds (rows 2 (l % 4) .., col l / 4)).
 */
#ifndef K3_KERNELS_COMMON_K3_DEVICE_CUH
#define K3_KERNELS_COMMON_K3_DEVICE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

/* ---- number formats ---------------------------------------------------- */

__device__ __forceinline__ float k3_bf2f(uint16_t x)
{
	return __uint_as_float((uint32_t)x << 16);
}

__device__ __forceinline__ uint16_t k3_f2bf(float x)
{
	return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

/* Two floats as a packed BF16 pair: lo in the low half (lower index). */
__device__ __forceinline__ uint32_t k3_pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&v);
}

__device__ __forceinline__ float k3_lo_bf16(uint32_t x)
{
	return __uint_as_float(x << 16);
}

__device__ __forceinline__ float k3_hi_bf16(uint32_t x)
{
	return __uint_as_float(x & 0xffff0000u);
}

/* Two E4M3 bytes (lo in the low byte) as floats; exact (E4M3 is a subset of FP16). */
__device__ __forceinline__ float2 k3_e4m3x2_to_float2(uint16_t v)
{
	uint32_t h;
	asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(h) : "h"(v));
	__half2 hh = *reinterpret_cast<__half2 *>(&h);
	return __half22float2(hh);
}

/* E8M0 scale byte: 2^(e - 127); 0 is 2^-127 (an FP32 subnormal), 0xff NaN. */
__device__ __forceinline__ float k3_e8m0_to_float(uint32_t e)
{
	return e == 0 ? __uint_as_float(0x00400000u) : e == 0xff ? __uint_as_float(0x7fc00000u)
								 : __uint_as_float(e << 23);
}

/* E2M1 nibble as the BF16 bit pattern of its value (exact): magnitudes
 * {0, 0.5, 1, 1.5, 2, 3, 4, 6} are 0x0000, 0x3f00, 0x3f80, 0x3fc0, 0x4000,
 * 0x4040, 0x4080, 0x40c0: exponent 126 + (m >> 1), mantissa bit 6 = m & 1,
 * except 0. */
__device__ __forceinline__ uint32_t k3_e2m1_to_bf16_bits(uint32_t nib)
{
	const uint32_t m = nib & 7u;
	const uint32_t mag = m == 0 ? 0u : m == 1 ? 0x3f00u : ((126u + (m >> 1)) << 7) | ((m & 1u) << 6);
	return mag | ((nib & 8u) << 12);
}

/* Byte permute (PTX prmt, default mode): byte i of the result is byte
 * (sel >> 4 i) & 7 of b:a. A host version lets tests run the converters below. */
__host__ __device__ __forceinline__ uint32_t k3_prmt(uint32_t a, uint32_t b, uint32_t sel)
{
#ifdef __CUDA_ARCH__
	return __byte_perm(a, b, sel);
#else
	const uint64_t v = ((uint64_t)b << 32) | a;
	uint32_t r = 0;
	for (int i = 0; i < 4; i++)
		r |= (uint32_t)((v >> (8 * ((sel >> (4 * i)) & 7))) & 0xffu) << (8 * i);
	return r;
#endif
}

/* Eight E2M1 nibbles (nibble i = bits 4i..4i+3, element i) as four BF16
 * pairs o[i] = (element 2i, element 2i+1), exact, unscaled: the magnitude's
 * high and low bytes are looked up with byte permutes in two 8-entry tables,
 * the signs are gathered with two more permutes (byte j of w << 4 has the
 * sign of nibble 2j as its msb, byte j of w that of nibble 2j + 1) and OR-ed
 * into the high bytes, then low and high bytes are interleaved: 15 integer
 * instructions for 8 weights (the gemv path is bound by this count). */
__host__ __device__ __forceinline__ void k3_e2m1x8_to_bf16x8(uint32_t w, uint32_t o[4])
{
	const uint32_t HI0 = 0x3f3f3f00u, HI1 = 0x40404040u; /* high bytes of 0, .5, 1, 1.5 | 2, 3, 4, 6 */
	const uint32_t LO0 = 0xc0800000u, LO1 = 0xc0804000u; /* low bytes */
	const uint32_t mag = w & 0x77777777u, w4 = w << 4;
	const uint32_t sa = k3_prmt(w4, w, 0x5140u), sb = k3_prmt(w4, w, 0x7362u); /* msb of byte i: sign of nibble i, i + 4 */
	const uint32_t ha = k3_prmt(HI0, HI1, mag) | (sa & 0x80808080u), la = k3_prmt(LO0, LO1, mag);
	const uint32_t hb = k3_prmt(HI0, HI1, mag >> 16) | (sb & 0x80808080u), lb = k3_prmt(LO0, LO1, mag >> 16);
	o[0] = k3_prmt(la, ha, 0x5140u);
	o[1] = k3_prmt(la, ha, 0x7362u);
	o[2] = k3_prmt(lb, hb, 0x5140u);
	o[3] = k3_prmt(lb, hb, 0x7362u);
}

/* x rotated left by s (1..31): one funnel shift on the device. */
__host__ __device__ __forceinline__ uint32_t k3_rotl(uint32_t x, int s)
{
#ifdef __CUDA_ARCH__
	return __funnelshift_l(x, x, (unsigned)s);
#else
	return (x << s) | (x >> (32 - s));
#endif
}

/* The FP16-pair encoding of 8 MXFP4 nibbles (k3_mxfp4_f16enc_word() on the host writes it; no
 * kernel reads it yet: docs/KERNELS.md, *gemv*, seventh round): a GF(2)-linear re-encoding of
 * the word's 32 bits from which one funnel-shift rotate and one LOP3 give each FP16 pair, o[j] =
 * (element j, element j + 4), each the E2M1 value times 2^-14 exactly (sign at bit 15, e1 e0 m at
 * bits 11..9: the FP16 subnormal 2^-15 for 0.5, normals above), all other bits zero: 8 integer
 * instructions for 8 weights where k3_e2m1x8_to_bf16x8() takes 15 (the sign and the magnitude
 * of a standard-order nibble move by different distances, which costs a mask and a merge a pair
 * more). */
__host__ __device__ __forceinline__ void k3_f16enc_to_f16x8(uint32_t q, uint32_t o[4])
{
	const uint32_t M = 0x8e008e00u;
	o[0] = k3_rotl(q, 2) & M;
	o[1] = (q ^ k3_rotl(q, 6)) & M;
	o[2] = (q ^ k3_rotl(q, 9)) & M;
	o[3] = (q ^ k3_rotl(q, 13)) & M;
}

/* An E8M0 scale byte as a BF16 pair (2^(e - 127) twice; 0: the BF16
 * subnormal 2^-127; 0xff: NaN). */
__host__ __device__ __forceinline__ uint32_t k3_e8m0_to_bf16x2(uint32_t e)
{
	const uint32_t b = e == 0 ? 0x0040u : e == 0xff ? 0x7fc0u : (e << 7);
	return b | (b << 16);
}

/* The FP8 layout of 8 MXFP4 nibbles (k3_quant.h; k3_mxfp4_fp8_word() on the host): w holds
 * elements 0..7 in standard order (element i at bits 4i..4i+3); byte b of the result holds
 * elements b and 4 + b where k3_e2m1r_to_e4m3x8() reads them. */
__host__ __device__ __forceinline__ uint32_t k3_fp8r_word(uint32_t w)
{
	const uint32_t lo = w & 0x0f0f0f0fu, hi = (w >> 4) & 0x0f0f0f0fu; /* byte q: elements 2q, 2q + 1 */
	/* Elements b (byte b) and 4 + b (byte b) as separate nibble bytes. */
	const uint32_t e_lo = k3_prmt(lo, hi, 0x5140u), e_hi = k3_prmt(lo, hi, 0x7362u);
	return ((e_lo & 0x08080808u) << 4) | ((e_hi & 0x04040404u) << 4) | ((e_hi & 0x08080808u) << 2) |
	       ((e_lo & 0x07070707u) << 2) | (e_hi & 0x03030303u);
}

/* 8 MXFP4 weights of the FP8 layout as E4M3 bytes of v 2^-6 (exact, the 0.5 subnormal
 * included): lo holds elements 0..3, hi elements 4..7 (byte i: element i, 4 + i). Five integer
 * instructions. */
__host__ __device__ __forceinline__ void k3_e2m1r_to_e4m3x8(uint32_t u, uint32_t &lo, uint32_t &hi)
{
	lo = u & 0x9c9c9c9cu;
	hi = ((u & 0x23232323u) << 2) | ((u >> 2) & 0x10101010u);
}

/* E4M3 pair (bits 0..7 the low element) as an FP16 pair, exact (E4M3 is a subset of FP16):
 * one cvt.f16x2.e4m3x2 (sm_89+; a conversion-pipe instruction). */
__device__ __forceinline__ uint32_t k3_e4m3x2_to_f16x2(uint16_t v)
{
	uint32_t h;
	asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(h) : "h"(v));
	return h;
}

/* Four E4M3 bytes as two FP16 pairs, exact: lo from bytes 0, 1, hi from bytes 2, 3. The word
 * is split into its halves inside the asm (mov.b32 {lo, hi}) so that ptxas may read the high
 * half in place instead of shifting it down first. */
__device__ __forceinline__ void k3_e4m3x4_to_f16x2x2(uint32_t x, uint32_t &lo, uint32_t &hi)
{
	asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e4m3x2 %0, l;\n cvt.rn.f16x2.e4m3x2 %1, h;\n}\n"
	    : "=r"(lo), "=r"(hi)
	    : "r"(x));
}

/* 2^x by the SFU's ex2.approx with denormal results flushed to zero (exp2f adds the range
 * handling for those: 2-4 instructions more); -inf gives 0. */
__device__ __forceinline__ float k3_exp2_ftz(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

/* Four E4M3 bytes (x0..x3, x0 at bits 0..7) as two FP16 pairs of value x 2^-8, exact (the
 * subnormals too; the E4M3 NaN 0x7f / 0xff becomes the finite 480 2^-8): the E4M3 fields
 * land in the FP16 fields unchanged, so only the exponent bias (7 against 15) differs, a
 * power of two the caller folds into its scale. lo = (x0, x2), hi = (x1, x3), the first in
 * the low half. Integer instructions only (6: the signs masked once, each pair one shift of the
 * word and a bit select against 0x3f803f80, lo one more shift of the signs), for code bound by
 * the conversion pipe. */
__host__ __device__ __forceinline__ void k3_e4m3x4_to_f16x4_scaled(uint32_t x, uint32_t &lo, uint32_t &hi)
{
	const uint32_t M = 0x3f803f80u, s = x & 0x80808080u;
	hi = ((x >> 1) & M) | (s & ~M);
	lo = ((x << 7) & M) | ((s << 8) & ~M);
}

/* Two FP32 values as an FP16 pair (round to nearest; lo in the low half). */
__device__ __forceinline__ uint32_t k3_pack_f16(float lo, float hi)
{
	__half2 h = __floats2half2_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&h);
}

/* BF16 pair product (exact for a power-of-two scale that keeps the result normal). */
__device__ __forceinline__ uint32_t k3_bf16x2_mul(uint32_t a, uint32_t b)
{
	__nv_bfloat162 x = *reinterpret_cast<__nv_bfloat162 *>(&a), y = *reinterpret_cast<__nv_bfloat162 *>(&b);
	__nv_bfloat162 r = __hmul2(x, y);
	return *reinterpret_cast<uint32_t *>(&r);
}

__device__ __forceinline__ float k3_sigmoid(float x)
{
	return __fdividef(1.0f, 1.0f + __expf(-x));
}

/* ---- reductions -------------------------------------------------------- */

/* Over lanes that differ in the bits of WIDTH - 1 (WIDTH a power of 2). */
template <int WIDTH>
__device__ __forceinline__ float k3_group_sum(float x)
{
#pragma unroll
	for (int o = WIDTH / 2; o > 0; o >>= 1)
		x += __shfl_xor_sync(0xffffffffu, x, o);
	return x;
}

template <int WIDTH>
__device__ __forceinline__ float k3_group_max(float x)
{
#pragma unroll
	for (int o = WIDTH / 2; o > 0; o >>= 1)
		x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
	return x;
}

/* ---- tensor cores ------------------------------------------------------ */

__device__ __forceinline__ uint32_t k3_smem_u32(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void k3_mma_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* d += A B, mma.m16n8k16 BF16, as k3_mma_bf16() but not volatile: the compiler may interleave
 * it with other work and other MMAs (it only reads and writes registers). */
__device__ __forceinline__ void k3_mma_bf16_sched(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
	    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* d += A B, mma.m16n8k16 FP16 x FP16 -> FP32 (fragments as for BF16; exact products); not
 * volatile, as k3_mma_bf16_sched(). */
__device__ __forceinline__ void k3_mma_f16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* d = A B with a zero accumulator, mma.m16n8k16 FP16 x FP16 -> FP32 (fragments as for BF16); not
 * volatile. */
__device__ __forceinline__ void k3_mma_f16_zero(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};\n"
	    : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
}

/* d = A B with a zero accumulator, mma.m16n8k32 E4M3 x E4M3 -> FP32 (sm_89+). Fragments
 * (g = lane / 4, t = lane % 4; 4 bytes each, byte i: k + i):
 *   A (16 x 32): a0 (g, 4t..)  a1 (g+8, 4t..)  a2 (g, 16+4t..)  a3 (g+8, 16+4t..)
 *   B (32 x 8):  b0 (k 4t.., n g)  b1 (k 16+4t.., n g);   C as for m16n8k16. */
__device__ __forceinline__ void k3_mma_e4m3_zero(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
	asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};\n"
		     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
#else
	d[0] = d[1] = d[2] = d[3] = __int_as_float(0x7fc00000); /* no FP8 MMA before sm_89: NaN */
	(void)a, (void)b0, (void)b1;
#endif
}

/* Two floats as E4M3 bytes (nearest even, saturating to +-448; NaN stays NaN): lo in the low byte. */
__device__ __forceinline__ uint32_t k3_f32x2_to_e4m3x2(float lo, float hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
	uint16_t v;
	asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(v) : "f"(hi), "f"(lo));
	return v;
#else
	(void)lo, (void)hi;
	return 0x7f7fu;
#endif
}

__device__ __forceinline__ void k3_ldsm_x4(uint32_t r[4], const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(k3_smem_u32(p)));
}

__device__ __forceinline__ void k3_ldsm_x4_t(uint32_t r[4], const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(k3_smem_u32(p)));
}

/* ---- asynchronous copies ----------------------------------------------- */

__device__ __forceinline__ void k3_cp_async16(void *smem, const void *gmem)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(k3_smem_u32(smem)), "l"(gmem));
}

__device__ __forceinline__ void k3_cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}

/* 16 bytes, or zeros when !valid (nothing is read then). */
__device__ __forceinline__ void k3_cp_async16_zfill(void *smem, const void *gmem, bool valid)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(k3_smem_u32(smem)), "l"(gmem),
		     "r"(valid ? 16 : 0));
}

template <int N>
__device__ __forceinline__ void k3_cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void k3_mbar_init(uint64_t *bar, uint32_t count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(k3_smem_u32(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void k3_mbar_fence_init()
{
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* Arrive on `bar`, expecting `bytes` of bulk-copy transactions in this phase. */
__device__ __forceinline__ void k3_mbar_expect_tx(uint64_t *bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(k3_smem_u32(bar)), "r"(bytes)
		     : "memory");
}

/* Spins until the phase of `bar` with this parity has completed. */
__device__ __forceinline__ void k3_mbar_wait(uint64_t *bar, uint32_t parity)
{
	uint32_t done = 0;
	do {
		asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			     " selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(k3_smem_u32(bar)), "r"(parity)
			     : "memory");
	} while (!done);
}

/* Bulk copy engine, global -> shared: bytes a multiple of 16, both addresses
 * 16-byte aligned; completion counted on `bar`. */
__device__ __forceinline__ void k3_bulk_g2s(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
			     k3_smem_u32(dst)),
		     "l"(src), "r"(bytes), "r"(k3_smem_u32(bar))
		     : "memory");
}

/* 4 bytes (both addresses 4-byte aligned), or zeros when !valid; through L1. */
__device__ __forceinline__ void k3_cp_async4_zfill(void *smem, const void *gmem, bool valid)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(k3_smem_u32(smem)), "l"(gmem),
		     "r"(valid ? 4 : 0));
}

/* Arrive on `bar` once this thread's earlier cp.async copies have landed (the arrival is
 * one of the barrier's expected count: .noinc). */
__device__ __forceinline__ void k3_cp_async_arrive(uint64_t *bar)
{
	asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(k3_smem_u32(bar)) : "memory");
}

__device__ __forceinline__ void k3_cp_async_wait_all()
{
	asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/* A plain arrival (release) on `bar`. */
__device__ __forceinline__ void k3_mbar_arrive(uint64_t *bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(k3_smem_u32(bar)) : "memory");
}

/* Orders this thread's view of shared memory written through the generic proxy (stores,
 * cp.async) before its later accesses through the async proxy (wgmma, bulk copies). */
__device__ __forceinline__ void k3_fence_proxy_async()
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Named barrier over `threads` threads (a multiple of 32), id 1..15. */
__device__ __forceinline__ void k3_named_sync(int id, int threads)
{
	asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* ---- launches ---------------------------------------------------------- */

/* 0, or -EIO after a failed launch (the CUDA error stays readable through
 * cudaGetLastError() for the caller). */
inline int k3_launch_status()
{
	return cudaPeekAtLastError() == cudaSuccess ? 0 : -5 /* -EIO */;
}

} // namespace

#endif
