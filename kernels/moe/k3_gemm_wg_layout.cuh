/* SPDX-License-Identifier: MIT */
/*
 * Internal to the GEMM op's wgmma path (k3_gemm_wg.cu): where the producer puts
 * a 64-deep k block of MXFP4 weights in shared memory, and how a consumer lane
 * picks its A fragment out of it. Host and device, so that test-k3-formats
 * checks the pair without a GPU.
 *
 * Raw tile of one stage: weight row j (0 .. 255) holds its 32 bytes (64 E2M1
 * nibbles, low nibble first) as two 16-byte halves, half h at
 * j * 32 + 16 (h ^ ((j >> 2) & 1)): the 8-byte reads below of rows g = 0..7
 * then fall in distinct banks; this is the tensor copy engine's 32-byte swizzle
 * of a [256][32] byte box, so the producer loads the tile with one TMA copy.
 * Scales: 4 bytes a row at j * 4, the E8M0
 * scales of the groups of 32 of this k block and its pair (k blocks kb & ~1
 * and kb | 1: groups 2 (kb & ~1) .. + 3).
 *
 * A fragment of k step ks (k 16 ks .. 16 ks + 15 of the block) for lane
 * (g = lane / 4, t = lane % 4) and the 16 rows from row16: as mma.m16n8k16 and
 * wgmma (k3_wgmma.cuh), a0 = (row16 + g, k 2t, 2t + 1), a1 = (row16 + g + 8,
 * k 2t, 2t + 1), a2 = (row16 + g, k 2t + 8, 2t + 9), a3 = (row16 + g + 8, k
 * 2t + 8, 2t + 9): one byte of each row for each pair, byte t of the words
 * 2 ks and 2 ks + 1 of the row, gathered with byte permutes.
 */
#ifndef K3_KERNELS_MOE_K3_GEMM_WG_LAYOUT_CUH
#define K3_KERNELS_MOE_K3_GEMM_WG_LAYOUT_CUH

#include <stdint.h>
#include <string.h>

#include "common/k3_device.cuh"

namespace {

/* Byte offset of half h (0, 1) of weight row j in the raw tile. */
__host__ __device__ __forceinline__ int k3_wg_fp4_half_offset(int j, int h)
{
	return j * 32 + ((h ^ ((j >> 2) & 1)) << 4);
}

/* The unscaled A fragment (four BF16 pairs, exact) of k step ks of the stage's raw tile for the
 * 16 rows from row16 (a multiple of 16). */
__host__ __device__ __forceinline__ void k3_wg_fp4_fragment_raw(const unsigned char *raw, int ks, int row16, int lane,
								 uint32_t a[4])
{
	const int g = lane >> 2, t = lane & 3;
	const int r0 = row16 + g, r1 = r0 + 8; /* same swizzle bit as r0 */
	const int off = (((ks >> 1) ^ ((g >> 2) & 1)) << 4) + ((ks & 1) << 3);
	uint32_t v0[2], v1[2];
#ifdef __CUDA_ARCH__
	const uint2 w0 = *reinterpret_cast<const uint2 *>(raw + r0 * 32 + off); /* 8-byte aligned */
	const uint2 w1 = *reinterpret_cast<const uint2 *>(raw + r1 * 32 + off);
	v0[0] = w0.x, v0[1] = w0.y, v1[0] = w1.x, v1[1] = w1.y;
#else
	memcpy(v0, raw + r0 * 32 + off, 8);
	memcpy(v1, raw + r1 * 32 + off, 8);
#endif
	const uint32_t sel = (uint32_t)t | ((uint32_t)(t + 4) << 4);
	/* bytes: row r0 k 2t.., row r0 k 2t+8.., row r1 k 2t.., row r1 k 2t+8.. */
	const uint32_t x = k3_prmt(k3_prmt(v0[0], v0[1], sel), k3_prmt(v1[0], v1[1], sel), 0x5410u);
	uint32_t o[4];
	k3_e2m1x8_to_bf16x8(x, o);
	a[0] = o[0], a[1] = o[2], a[2] = o[1], a[3] = o[3];
}

/* The 4 scale bytes of the lane's two rows (row16 + g, + 8): byte sb of each is the scale of
 * the k steps ks of k block kb with sb = 2 (kb & 1) + ks / 2 (one word a row serves a k block
 * pair: the consumer converts each scale once per two k steps, not per fragment). */
__host__ __device__ __forceinline__ void k3_wg_fp4_scale_words(const unsigned char *scales, int row16, int lane,
								uint32_t *w0, uint32_t *w1)
{
	const int r0 = row16 + (lane >> 2), r1 = r0 + 8;
#ifdef __CUDA_ARCH__
	*w0 = *reinterpret_cast<const uint32_t *>(scales + r0 * 4);
	*w1 = *reinterpret_cast<const uint32_t *>(scales + r1 * 4);
#else
	memcpy(w0, scales + r0 * 4, 4);
	memcpy(w1, scales + r1 * 4, 4);
#endif
}

/* Byte sb of the scale words of k step ks of k block kb. */
__host__ __device__ __forceinline__ int k3_wg_fp4_scale_byte(int kb, int ks)
{
	return ((kb & 1) << 1) + (ks >> 1);
}

/* The unscaled A fragment and the scale bytes of its two rows, from the two above. */
__host__ __device__ __forceinline__ void k3_wg_fp4_fragment(const unsigned char *raw, const unsigned char *scales,
							     int kb, int ks, int row16, int lane, uint32_t a[4],
							     uint32_t *scale0, uint32_t *scale1)
{
	k3_wg_fp4_fragment_raw(raw, ks, row16, lane, a);
	uint32_t w0, w1;
	k3_wg_fp4_scale_words(scales, row16, lane, &w0, &w1);
	const int sb = k3_wg_fp4_scale_byte(kb, ks);
	*scale0 = (w0 >> (8 * sb)) & 0xffu;
	*scale1 = (w1 >> (8 * sb)) & 0xffu;
}

/* The tensor copy engine's swizzles as byte-offset maps within a 1024-byte-aligned tile: the
 * 32-byte one (16-byte chunk bit 4 ^= bit 7) must place MXFP4 half h of row j where
 * k3_wg_fp4_half_offset() says, the 128-byte one (bits 4..6 ^= bits 7..9) chunk c of BF16 row r
 * at c ^ (r % 8), as the wgmma descriptors read them (test-k3-formats checks both). */
__host__ __device__ __forceinline__ int k3_tma_swizzle32(int off)
{
	return off ^ (((off >> 7) & 1) << 4);
}

__host__ __device__ __forceinline__ int k3_tma_swizzle128(int off)
{
	return off ^ (((off >> 7) & 7) << 4);
}

} // namespace

#endif
