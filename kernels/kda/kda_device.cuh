/* SPDX-License-Identifier: MIT */
/*
 * Device helpers shared by the KDA .cu files (internal; not installed):
 * BF16 <-> FP32 on raw uint16_t bit patterns, warp reductions, the BF16
 * tensor-core MMA m16n8k16, cp.async, mbarriers and bulk copies. Everything has internal linkage.
 */
#ifndef K3_KERNELS_KDA_DEVICE_CUH
#define K3_KERNELS_KDA_DEVICE_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kda_common.h"

namespace {

__device__ __forceinline__ float bf2f(uint16_t x)
{
	return __uint_as_float((uint32_t)x << 16);
}

__device__ __forceinline__ uint16_t f2bf(float x)
{
	return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

/* Two floats as a packed BF16 pair: lo in the low half (lower index). */
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&v);
}

__device__ __forceinline__ float lo_bf16(uint32_t x)
{
	return __uint_as_float(x << 16);
}

__device__ __forceinline__ float hi_bf16(uint32_t x)
{
	return __uint_as_float(x & 0xffff0000u);
}

__device__ __forceinline__ float sigmoidf_(float x)
{
	return __fdividef(1.0f, 1.0f + __expf(-x));
}

/* Sum over lanes that differ in the bits of `width - 1` (width a power of 2). */
template <int WIDTH>
__device__ __forceinline__ float group_sum(float x)
{
#pragma unroll
	for (int o = WIDTH / 2; o > 0; o >>= 1)
		x += __shfl_xor_sync(0xffffffffu, x, o);
	return x;
}

/* D = A B + D with A 16x16 (row), B 16x8 (col), BF16 in, FP32 accumulate.
 * Fragments (g = lane / 4, t = lane % 4):
 *   a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
 *   b0 (k 2t..2t+1, n g)  b1 (k 2t+8.., n g)
 *   d0,d1 (g, 2t..2t+1)  d2,d3 (g+8, 2t..2t+1) */
__device__ __forceinline__ void mma_bf16_16816(float d[4], const uint32_t a[4], uint32_t b0,
					       uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem)
{
	uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Shared-memory address of a generic pointer to shared memory. */
__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/* mbarrier with `count` arrivals (one thread initializes; fence before use). */
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

/* Arrive on `bar` expecting `bytes` of bulk-copy transactions. */
__device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
		     : "memory");
}

/* One arrival on `bar` (no transaction bytes). */
__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

/* Spin until the phase of `bar` with this parity completes. */
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity)
{
	uint32_t done = 0;
	do {
		asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			     " selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(smem_u32(bar)), "r"(parity)
			     : "memory");
	} while (!done);
}

/* Bulk copy engine, global -> shared (bytes a multiple of 16, both ends
 * 16-byte aligned), completion counted on `bar`. */
__device__ __forceinline__ void bulk_g2s(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
			     smem_u32(dst)),
		     "l"(src), "r"(bytes), "r"(smem_u32(bar))
		     : "memory");
}

/* State element type traits: FP32 or BF16 storage, FP32 arithmetic. */
template <typename T>
struct state_io;

template <>
struct state_io<float> {
	static __device__ __forceinline__ float load(const float *p) { return *p; }
	static __device__ __forceinline__ void store(float *p, float x) { *p = x; }
};

template <>
struct state_io<uint16_t> {
	static __device__ __forceinline__ float load(const uint16_t *p) { return bf2f(*p); }
	static __device__ __forceinline__ void store(uint16_t *p, float x) { *p = f2bf(x); }
};

/* Maps a CUDA error to the entry points' -EIO, keeping the error readable
 * through cudaGetLastError()/cudaPeekAtLastError() for the caller. */
inline int kda_launch_status()
{
	return cudaPeekAtLastError() == cudaSuccess ? 0 : -5 /* -EIO */;
}

} // namespace

#endif
