/* SPDX-License-Identifier: MIT */
/*
 * The operands of FP8 MMAs on MXFP4 expert weights (issue 17, round 04p; see k3_gemm.h and
 * bench/results/k3-kernels-h200-2026-12-04p/README.md). The grouped wgmma kernel that reads them
 * (round 04q, bench/results/k3-kernels-h200-2026-12-04q/README.md): k3_gemm_wg.cu's XV_F8,
 * f8_kblock(), selected by k3_gemm_args.a_dtype = K3_A_E4M3_ROW.
 *
 *  - Weights: the FP8-word tile layout (k3_gemm_wg_rp.cuh, k3_wgf8_*): the byte positions of the
 *    BF16 tile layout (k3_wgrp_word(): a lane's 16 bytes of a 16-row x 64-k block, word ks of
 *    pseudo-row lane / 2, half lane % 2), each word holding the 8 weights of one row that the E4M3
 *    A fragment of a k step of 32 needs: word ks = 2 j + h is k step j (k 32 j .. 32 j + 31 of the
 *    block, one E8M0 scale group) of row g + 8 h, weights k 4t + i and 16 + 4t + i. With it, one
 *    floor a row (E8M0 byte f): every scale group with a nonzero code has 0 <= s - f <= 11, so
 *    that its 8-byte table holds exact E4M3 values of v 2^(s - f - 5) and the weight is that times
 *    2^(f - 122) (k3_wgf8_element()).
 *  - Activations: E4M3 with one FP32 scale a row (amax / 448): in float64 over K3's shapes its
 *    outputs move ~2.6 % (rel. rms) where MXFP8's move 3.0-4.3 % (OCP's E8M0 scale choice clips
 *    the top of each group at 448) and BF16's 0.17 % (bench/moe/fp8-act-error.txt).
 */
#include "k3_gemm.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/k3_device.cuh"
#include "common/k3_quant.h"
#include "k3_gemm_internal.cuh"
#include "k3_gemm_wg_rp.cuh"
#include "k3_quant_rows.cuh"

namespace {

/* Largest spread s - f of a row's scale bytes the tables hold (k3_wgf8_table()). */
constexpr int WGF8_SPREAD = 11;
/* Largest floor: 2^(f - 122) a normal FP32 (the epilogue's row factor), 384 x that finite. */
constexpr int WGF8_MAX_FLOOR = 240;

/* The code (E2M1 nibble) of element k of a row of standard nibbles. */
__host__ __device__ __forceinline__ uint8_t code_at(const uint8_t *row, int k)
{
	return (uint8_t)((row[k >> 1] >> (4 * (k & 1))) & 0xfu);
}

/* Word w (w = pseudo-row x K / 8 + word of the row) of the FP8-word tile layout of `packed`
 * ([rows][K / 2], rows a multiple of 16, K of 64): k3_wgrp_word()'s position, the FP8 word. */
__host__ __device__ uint32_t wgf8_word(const uint8_t *packed, int K, int64_t w)
{
	const int64_t wpr = K / 8, pr = w / wpr;
	const int wc = (int)(w % wpr), kb = wc / 8, bo = (wc % 8) * 4;
	const int lane = (int)(pr % 16) * 2 + bo / 16, ks = (bo % 16) / 4, g = lane / 4, t = lane % 4;
	const int j = ks / 2, h = ks % 2;
	const uint8_t *row = packed + (pr - pr % 16 + g + 8 * h) * (int64_t)(K / 2);
	uint8_t c[8];
	for (int i = 0; i < 4; i++) {
		c[i] = code_at(row, kb * 64 + 32 * j + 4 * t + i);
		c[4 + i] = code_at(row, kb * 64 + 32 * j + 16 + 4 * t + i);
	}
	return k3_wgf8_encode(c);
}

__global__ void repack_wgf8_kernel(const uint8_t *__restrict__ packed, int K, int64_t words,
				   uint32_t *__restrict__ out)
{
	const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < words)
		out[i] = wgf8_word(packed, K, i);
}

/* Floor of each row (one warp a row): the largest scale byte s_max of the groups with a nonzero
 * code, f = max(smallest such byte, s_max - 11) (0 for a row of zeros); groups with a nonzero
 * code below f, a byte 255 (NaN) or f past WGF8_MAX_FLOOR count in *bad. */
__global__ void floors_wgf8_kernel(const uint8_t *__restrict__ packed, const uint8_t *__restrict__ scales,
				   int64_t rows, int K, uint8_t *__restrict__ floors, unsigned int *bad)
{
	const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	const int lane = threadIdx.x & 31, G = K / 32;
	if (r >= rows)
		return;
	const uint8_t *pr = packed + r * (K / 2), *sr = scales + r * G;
	int lo = 256, hi = -1, nan = 0;
	for (int g = lane; g < G; g += 32) {
		const uint4 v = *reinterpret_cast<const uint4 *>(pr + 16 * g); /* the group's 32 nibbles */
		const bool nz = ((v.x | v.y | v.z | v.w) & 0x77777777u) != 0;
		if (nz) {
			lo = min(lo, (int)sr[g]);
			hi = max(hi, (int)sr[g]);
			nan += sr[g] == 255;
		}
	}
	for (int o = 16; o; o >>= 1) {
		lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
		hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
		nan += __shfl_xor_sync(0xffffffffu, nan, o);
	}
	const int f = hi < 0 ? 0 : max(lo, hi - WGF8_SPREAD);
	int below = 0;
	for (int g = lane; g < G; g += 32) {
		const uint4 v = *reinterpret_cast<const uint4 *>(pr + 16 * g);
		below += ((v.x | v.y | v.z | v.w) & 0x77777777u) != 0 && sr[g] < f;
	}
	for (int o = 16; o; o >>= 1)
		below += __shfl_xor_sync(0xffffffffu, below, o);
	if (lane == 0) {
		floors[r] = (uint8_t)f;
		if (below || nan || f > WGF8_MAX_FLOOR)
			atomicAdd(bad, (unsigned)(below + nan + (f > WGF8_MAX_FLOOR)));
	}
}

/* One warp a row, two passes (K above 32768): scale = amax / 448 (1 for a row of zeros), q = E4M3
 * of x / scale by IEEE division, 8 elements a lane a step (16-byte loads, 8-byte stores). */
__global__ void quant_e4m3_rows_kernel(const uint16_t *__restrict__ x, int64_t rows, int K, uint8_t *__restrict__ q,
				       float *__restrict__ scale)
{
	const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	const int lane = threadIdx.x & 31;
	if (r >= rows)
		return;
	const uint16_t *xr = x + r * K;
	float amax = 0.0f;
	for (int c = lane * 8; c < K; c += 256) {
		const uint4 v = *reinterpret_cast<const uint4 *>(xr + c);
		const uint32_t u[4] = { v.x, v.y, v.z, v.w };
		for (int i = 0; i < 4; i++)
			amax = fmaxf(amax, fmaxf(fabsf(__uint_as_float(u[i] << 16)), fabsf(__uint_as_float(u[i] & 0xffff0000u))));
	}
	for (int o = 16; o; o >>= 1)
		amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
	const float s = amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 1.0f;
	for (int c = lane * 8; c < K; c += 256) {
		const uint4 v = *reinterpret_cast<const uint4 *>(xr + c);
		const uint32_t u[4] = { v.x, v.y, v.z, v.w };
		uint32_t o[2] = { 0, 0 };
		for (int i = 0; i < 4; i++) {
			const float a = __fdiv_rn(__uint_as_float(u[i] << 16), s), b = __fdiv_rn(__uint_as_float(u[i] & 0xffff0000u), s);
			o[i / 2] |= k3_f32x2_to_e4m3x2(a, b) << (16 * (i % 2));
		}
		*reinterpret_cast<uint2 *>(q + r * K + c) = make_uint2(o[0], o[1]);
	}
	if (lane == 0)
		scale[r] = s;
}

/* The quantizer in one pass over registers: G threads a row (a warp, or the CTA of 256), each
 * holding NV 16-byte pieces of it (k3_quant_rows.cuh: qrow_load(), qrow_scale(), qrow_store()); the
 * row's amax by shuffles (and, across the CTA's warps, shared memory). The same bytes and scales
 * as quant_e4m3_rows_kernel. */
template <int G, int NV>
__global__ void __launch_bounds__(256) quant_e4m3_rows_reg_kernel(const uint16_t *__restrict__ x, int64_t rows, int K,
								  uint8_t *__restrict__ q, float *__restrict__ scale)
{
	static_assert(G == 32 || G == 256, "a warp or the CTA a row");
	const int t = (int)threadIdx.x % G;
	const int64_t r = (int64_t)blockIdx.x * (256 / G) + (int)threadIdx.x / G;
	if (G == 32 && r >= rows) /* the CTA's last rows (a warp's whole row: the warp leaves together) */
		return;
	uint4 v[NV];
	float amax = qrow_load<G, NV>(x + r * K, K, t, v);
#pragma unroll
	for (int o = 16; o; o >>= 1)
		amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
	if constexpr (G == 256) {
		__shared__ float part[8];
		if ((threadIdx.x & 31) == 0)
			part[threadIdx.x >> 5] = amax;
		__syncthreads();
#pragma unroll
		for (int w = 0; w < 8; w++)
			amax = fmaxf(amax, part[w]);
	}
	const float s = qrow_scale(amax);
	qrow_store<G, NV>(v, K, t, s, q + r * K);
	if (t == 0)
		scale[r] = s;
}

/* The one-pass kernel is the default since round 06c (2026-12-06, H100): test-moe-gpu's
 * wgf8_operands bit for bit at 5 shapes, memcheck clean, 4.3 .. 74 us against the two-pass
 * kernel's 9.3 .. 96 us at 1 .. 16K rows of K = 3584 (docs/KERNELS.md, LatentMoE round 06c). */
constexpr bool QUANT_REG_DEFAULT = true;

/* Rows below this take a CTA each (latency: decode's few rows), at or above it a warp each. */
constexpr int64_t QUANT_WARP_ROWS = 2048;

template <int G>
int launch_quant_reg(const uint16_t *x, int64_t rows, int K, uint8_t *q, float *scale, cudaStream_t stream)
{
	const int nv = qrow_pieces(K, G);
	const unsigned blocks = (unsigned)((rows * G + 255) / 256);
	if (nv <= 1)
		quant_e4m3_rows_reg_kernel<G, 1><<<blocks, 256, 0, stream>>>(x, rows, K, q, scale);
	else if (nv <= 2)
		quant_e4m3_rows_reg_kernel<G, 2><<<blocks, 256, 0, stream>>>(x, rows, K, q, scale);
	else if (nv <= 4)
		quant_e4m3_rows_reg_kernel<G, 4><<<blocks, 256, 0, stream>>>(x, rows, K, q, scale);
	else if (nv <= 8)
		quant_e4m3_rows_reg_kernel<G, 8><<<blocks, 256, 0, stream>>>(x, rows, K, q, scale);
	else if (nv <= 16)
		quant_e4m3_rows_reg_kernel<G, 16><<<blocks, 256, 0, stream>>>(x, rows, K, q, scale);
	else
		return -EINVAL;
	return 0;
}

} // namespace

extern "C" int k3_gemm_repack_wgf8(const uint8_t *packed, const uint8_t *scales, int64_t rows, int K, uint8_t *out,
				   uint8_t *floors, cudaStream_t stream)
{
	if (!packed || !scales || !out || !floors || ((uintptr_t)out & 15u) != 0 || ((uintptr_t)packed & 15u) != 0 ||
	    rows < 0 || rows % 16 != 0 || K < 128 || K % 128 != 0 || rows > ((int64_t)1 << 40) / K)
		return -EINVAL;
	const int64_t bytes = rows * (K / 2), words = bytes / 4;
	if (bytes == 0)
		return 0;
	if ((packed < out + bytes) && (out < packed + bytes))
		return -EINVAL; /* overlapping */
	return k3gemm::launch_flagged(stream, [&](unsigned int *bad) {
		repack_wgf8_kernel<<<(unsigned)((words + 255) / 256), 256, 0, stream>>>(packed, K, words,
											reinterpret_cast<uint32_t *>(out));
		floors_wgf8_kernel<<<(unsigned)((rows * 32 + 255) / 256), 256, 0, stream>>>(packed, scales, rows, K, floors,
											     bad);
		return k3_launch_status();
	});
}

extern "C" double k3_wgf8_element(const uint8_t *wf8, const uint8_t *scales, const uint8_t *floors, int K, int64_t row,
				  int k)
{
	const int g = (int)(row % 8), h = (int)(row % 16) / 8, kb = k / 64, kk = k % 64, j = kk / 32, r32 = kk % 32;
	const int t = (r32 % 16) / 4, slot = (r32 / 16) * 4 + r32 % 4, lane = 4 * g + t, ks = 2 * j + h;
	const int64_t pr = row - row % 16 + lane / 2;
	const int bo = (lane % 2) * 16 + ks * 4;
	const uint8_t *p = wf8 + pr * (K / 2) + kb * 32 + bo;
	const uint32_t q = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	const int f = floors[row], s = scales[row * (K / 32) + k / 32];
	uint32_t tlo, thi, lo, hi;
	k3_wgf8_table((uint32_t)(s - f), &tlo, &thi);
	k3_wgf8_decode(q, tlo, thi, &lo, &hi);
	const uint8_t b = (uint8_t)(((slot < 4 ? lo : hi) >> (8 * (slot % 4))) & 0xffu);
	/* E4M3 (no NaN here: the table's largest byte is 0x7c): e = 0 subnormal m 2^-9, else (8 + m) 2^(e - 10). */
	const int e = (b >> 3) & 15, m = b & 7;
	const double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
	return ldexp((b & 0x80u) ? -v : v, f - 122);
}

extern "C" int k3_gemm_quantize_e4m3_rows(const uint16_t *x, int64_t rows, int K, uint8_t *q, float *scale,
					  cudaStream_t stream)
{
	if (!x || !q || !scale || ((uintptr_t)x & 15u) || ((uintptr_t)q & 7u) || ((uintptr_t)scale & 3u) || rows < 0 ||
	    K < 8 || K % 8 || rows > ((int64_t)1 << 40) / K || !k3gemm::fp8_available())
		return -EINVAL;
	if (rows == 0)
		return 0;
	/* K3_QUANT_E4M3=reg | twopass (unset or auto: QUANT_REG_DEFAULT's choice): the one-pass kernel
	 * where its pieces fit (else the two-pass one), or the two-pass kernel at every K. */
	const char *kind = getenv("K3_QUANT_E4M3");
	if (kind && *kind && strcmp(kind, "twopass") && strcmp(kind, "reg") && strcmp(kind, "auto"))
		return -EINVAL;
	const bool twopass = kind && *kind && strcmp(kind, "auto") ? !strcmp(kind, "twopass") : !QUANT_REG_DEFAULT;
	const int per_warp = qrow_pieces(K, 32), per_cta = qrow_pieces(K, 256);
	if (!twopass && rows >= QUANT_WARP_ROWS && per_warp <= 16)
		return launch_quant_reg<32>(x, rows, K, q, scale, stream) ? -EINVAL : k3_launch_status();
	if (!twopass && per_cta <= 16)
		return launch_quant_reg<256>(x, rows, K, q, scale, stream) ? -EINVAL : k3_launch_status();
	quant_e4m3_rows_kernel<<<(unsigned)((rows * 32 + 255) / 256), 256, 0, stream>>>(x, rows, K, q, scale);
	return k3_launch_status();
}
