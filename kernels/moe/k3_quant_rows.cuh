/* SPDX-License-Identifier: MIT */
/*
 * The one-pass E4M3 row quantizer's steps (k3_gemm_wgf8.cu quant_e4m3_rows_reg_kernel, K3_QUANT_E4M3=reg),
 * host-callable: test-k3-formats runs them on the host for every thread of a row (its amax
 * reduced there as the kernel's shuffles and shared memory reduce it) against
 * k3_e4m3_row_quantize(). Thread t of the G that hold a row owns its 16-byte pieces i = 0 .. NV - 1
 * at elements 8 (t + i G) below K: qrow_load() reads them and returns their amax, qrow_scale()
 * gives the row's scale from the row's amax, qrow_store() writes the pieces' E4M3 bytes.
 */
#ifndef K3_KERNELS_MOE_K3_QUANT_ROWS_CUH
#define K3_KERNELS_MOE_K3_QUANT_ROWS_CUH

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/k3_device.cuh"
#include "common/k3_quant.h"

/* Loops unrolled on the device (the host pass of nvcc warns on the pragma). */
#ifdef __CUDA_ARCH__
#define K3_QROW_UNROLL _Pragma("unroll")
#else
#define K3_QROW_UNROLL
#endif

namespace k3qrow {

__host__ __device__ inline uint4 load16(const uint16_t *p)
{
#ifdef __CUDA_ARCH__
	return __ldg(reinterpret_cast<const uint4 *>(p));
#else
	return *reinterpret_cast<const uint4 *>(p);
#endif
}

/* x / s by IEEE division; x / s from r = 1 / s (k3_e4m3_div()); 1 / s rounded to nearest. */
__host__ __device__ inline float div_ieee(float x, float s)
{
#ifdef __CUDA_ARCH__
	return __fdiv_rn(x, s);
#else
	return x / s;
#endif
}

__host__ __device__ inline float div_by_scale(float x, float s, float r)
{
#ifdef __CUDA_ARCH__
	const float q0 = __fmul_rn(x, r);
	const float e = __fmaf_rn(-q0, s, x);
	return copysignf(__fmaf_rn(e, r, q0), x);
#else
	return k3_e4m3_div(x, s, r);
#endif
}

__host__ __device__ inline float rcp_rn(float s)
{
#ifdef __CUDA_ARCH__
	return __frcp_rn(s);
#else
	return 1.0f / s;
#endif
}

/* Two FP32 values as E4M3 (round to nearest even, saturating), lo in the low byte. */
__host__ __device__ inline uint32_t e4m3x2(float lo, float hi)
{
#ifdef __CUDA_ARCH__
	return k3_f32x2_to_e4m3x2(lo, hi);
#else
	return (uint32_t)k3_e4m3_from_double(lo) | (uint32_t)k3_e4m3_from_double(hi) << 8;
#endif
}

__host__ __device__ inline float bits_to_float(uint32_t u)
{
#ifdef __CUDA_ARCH__
	return __uint_as_float(u);
#else
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
#endif
}

/* The BF16 value in a word's low / high half as FP32. */
__host__ __device__ inline float bf16_lo(uint32_t u)
{
	return bits_to_float(u << 16);
}

__host__ __device__ inline float bf16_hi(uint32_t u)
{
	return bits_to_float(u & 0xffff0000u);
}

} // namespace k3qrow

/* Pieces a thread where G threads hold a row of K elements (K a multiple of 8). */
__host__ __device__ inline int qrow_pieces(int K, int G)
{
	return (K / 8 + G - 1) / G;
}

/* Thread t's pieces of row xr into v (zeros past K); their amax. */
template <int G, int NV>
__host__ __device__ inline float qrow_load(const uint16_t *xr, int K, int t, uint4 (&v)[NV])
{
	K3_QROW_UNROLL
	for (int i = 0; i < NV; i++) {
		const int c = 8 * (t + i * G);
		v[i] = c < K ? k3qrow::load16(xr + c) : make_uint4(0, 0, 0, 0);
	}
	float amax = 0.0f;
	K3_QROW_UNROLL
	for (int i = 0; i < NV; i++) {
		const uint32_t u[4] = { v[i].x, v[i].y, v[i].z, v[i].w };
		K3_QROW_UNROLL
		for (int e = 0; e < 4; e++)
			amax = fmaxf(amax, fmaxf(fabsf(k3qrow::bf16_lo(u[e])), fabsf(k3qrow::bf16_hi(u[e]))));
	}
	return amax;
}

/* The row's scale from its amax: amax / 448 in FP32, 1 for a row of zeros. */
__host__ __device__ inline float qrow_scale(float amax)
{
	return amax > 0.0f ? k3qrow::div_ieee(amax, 448.0f) : 1.0f;
}

/* Thread t's pieces as E4M3 of x / s into the row's bytes qr: x / s from the reciprocal
 * (div_by_scale()) where s >= K3_E4M3_DIV_MIN_SCALE and finite, else by IEEE division. */
template <int G, int NV>
__host__ __device__ inline void qrow_store(const uint4 (&v)[NV], int K, int t, float s, uint8_t *qr)
{
	const bool fast = s >= K3_E4M3_DIV_MIN_SCALE && s < INFINITY; /* a row with an infinity: IEEE division */
	const float rs = k3qrow::rcp_rn(s);
	K3_QROW_UNROLL
	for (int i = 0; i < NV; i++) {
		const int c = 8 * (t + i * G);
		if (c >= K)
			break;
		const uint32_t u[4] = { v[i].x, v[i].y, v[i].z, v[i].w };
		uint32_t o[2] = { 0, 0 };
		K3_QROW_UNROLL
		for (int e = 0; e < 4; e++) {
			const float a = k3qrow::bf16_lo(u[e]), b = k3qrow::bf16_hi(u[e]);
			const float qa = fast ? k3qrow::div_by_scale(a, s, rs) : k3qrow::div_ieee(a, s);
			const float qb = fast ? k3qrow::div_by_scale(b, s, rs) : k3qrow::div_ieee(b, s);
			o[e / 2] |= k3qrow::e4m3x2(qa, qb) << (16 * (e % 2));
		}
		*reinterpret_cast<uint2 *>(qr + c) = make_uint2(o[0], o[1]);
	}
}

#endif
