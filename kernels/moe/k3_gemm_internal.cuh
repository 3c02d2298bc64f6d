/* SPDX-License-Identifier: MIT */
/*
 * Internal to the GEMM op (k3_gemm.cu, k3_gemm_wg.cu): the kernel parameters
 * both paths read, the epilogues, and the entry of the wgmma path. Not part
 * of the kernels' C interface.
 */
#ifndef K3_KERNELS_MOE_K3_GEMM_INTERNAL_CUH
#define K3_KERNELS_MOE_K3_GEMM_INTERNAL_CUH

#include <cerrno>

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "common/k3_device.cuh"
#include "k3_gemm.h"

namespace k3gemm {

/* Kernel parameters (pointers: k3_gemm_args). */
struct params {
	int64_t rows;
	int N, K, n_groups, n_split, ksplit, kb_per_split;
	const int32_t *off, *tile_off, *touched, *n_touched, *a_index, *out_index;
	const uint16_t *a, *w;
	const uint8_t *wp, *ws;
	const uint8_t *wwg; /* MXFP4 in the wgmma tile layout (k3_gemm_args.w_wg), or null */
	const uint8_t *aq, *as; /* MXFP8 activations (gemv); E4M3 ones (aq, with aqs: the FP8 wgmma kernel) */
	const float *aqs;       /* K3_A_E4M3_ROW: one FP32 scale an A row, or null */
	const uint8_t *wfl;     /* K3_A_E4M3_ROW: the FP8-word layout's floors (k3_gemm_args.w_floors) */
	uint8_t *out8;          /* K3_A_E4M3_ROW, GLU: k3_gemm_args.out_e4m3, or null */
	float glu8_mul;         /* its factor (k3_gemm_glu_e4m3_mul()) */
	float beta_gate, beta_up;
	const float *row_scale;
	const uint16_t *addend;
	uint16_t *out;
	float *out_f32;
	float *part; /* dense split-k partials (gemv, tiled) [ksplit][rows][N] */
	int num_n, num_m; /* wgmma path: weight-row tiles; token tiles (dense) */
};

/* Does this build's code on the current device have the FP8 MMA and the E4M3 convert (sm_89+)?
 * Read once (k3_gemm.cu). */
bool fp8_available();

/* The wgmma path (sm_90a builds on compute capability 9.0): available for these args? */
bool wg_supported(const struct k3_gemm_args *a);

/* Enqueues the wgmma path for p (the tiled part of k3_gemm()); 0 or -EIO. */
int wg_launch(params &p, bool fp4, enum k3_epilogue epi, int sms, cudaStream_t stream);

/* The fused MXFP4 gemv's per-CTA trace (opt-in, measurements): the next fused gemv_f16 launch
 * whose grid has at most `ctas` CTAs writes gemv_trace_words() 64-bit words a CTA into buf
 * (device memory) at the CTA's linear index: %globaltimer (ns) at its start, after its first
 * activation conversion and at its end, then its SM << 48 | its clock64 cycles start to end; one
 * launch, then disarmed. buf nullptr and ctas 0: disarm. 0 or -EINVAL. */
int gemv_trace_arm(unsigned long long *buf, int64_t ctas);
int gemv_trace_words();

/* Runs launch(bad) (it enqueues kernels on `stream` that may set the device word `bad`, zeroed
 * first, and returns their launch status), then waits for the stream: 0; -ERANGE where a kernel
 * set the word; -EIO where the CUDA runtime failed; or launch()'s nonzero status. The repacks of
 * k3_gemm_repack_wg() and k3_gemm_repack_wgf8() report an input they cannot encode so. */
template <class F>
int launch_flagged(cudaStream_t stream, F launch)
{
	unsigned int *bad = nullptr, host_bad = 0;
	if (cudaMalloc(&bad, sizeof *bad) != cudaSuccess)
		return -EIO;
	int rc = cudaMemsetAsync(bad, 0, sizeof *bad, stream) == cudaSuccess ? 0 : -EIO;
	if (rc == 0)
		rc = launch(bad);
	if (rc == 0 && (cudaMemcpyAsync(&host_bad, bad, sizeof host_bad, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
			cudaStreamSynchronize(stream) != cudaSuccess))
		rc = -EIO;
	cudaFree(bad);
	return rc == 0 && host_bad ? -ERANGE : rc;
}

} // namespace k3gemm

namespace {

__device__ __forceinline__ float situ_glu(float g, float u, float bg, float bu)
{
	return bg * tanhf(g / bg) * k3_sigmoid(g) * (bu * tanhf(u / bu));
}

/* Streaming 16-byte load that skips L1 (weights are read once). */
__device__ __forceinline__ uint4 ld_stream16(const void *p)
{
	uint4 v;
	asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
		     : "l"(p));
	return v;
}

__device__ __forceinline__ uint4 ld_nc16(const void *p)
{
	return __ldg(reinterpret_cast<const uint4 *>(p));
}

/* Non-GLU epilogues: columns n, n + 1 (n even) of output row r (row_scale: of row rs). */
__device__ __forceinline__ int64_t out_row(const k3gemm::params &p, int64_t r)
{
	return p.out_index ? (int64_t)p.out_index[r] : r;
}

template <int EPI>
__device__ __forceinline__ void epi_store2(const k3gemm::params &p, int64_t r, int64_t rs, int n, float v0, float v1)
{
	if (EPI == K3_EPI_SPLIT) {
		if (n < p.n_split)
			*reinterpret_cast<float2 *>(p.out_f32 + r * p.n_split + n) = make_float2(v0, v1);
		else
			*reinterpret_cast<uint32_t *>(p.out + r * (p.N - p.n_split) + (n - p.n_split)) =
				k3_pack_bf16(v0, v1);
		return;
	}
	if (EPI == K3_EPI_SCALE) {
		const float s = p.row_scale[rs];
		v0 *= s, v1 *= s;
	}
	if (EPI == K3_EPI_ADD) {
		const uint32_t ad = *reinterpret_cast<const uint32_t *>(p.addend + r * p.N + n);
		v0 += k3_lo_bf16(ad), v1 += k3_hi_bf16(ad);
	}
	if (EPI == K3_EPI_GATE) {
		const uint32_t ad = *reinterpret_cast<const uint32_t *>(p.addend + r * p.N + n);
		v0 *= k3_sigmoid(k3_lo_bf16(ad)), v1 *= k3_sigmoid(k3_hi_bf16(ad));
	}
	*reinterpret_cast<uint32_t *>(p.out + r * p.N + n) = k3_pack_bf16(v0, v1);
}

template <int EPI>
__device__ __forceinline__ void epi_store1(const k3gemm::params &p, int64_t r, int64_t rs, int n, float v)
{
	if (EPI == K3_EPI_SPLIT) {
		if (n < p.n_split)
			p.out_f32[r * p.n_split + n] = v;
		else
			p.out[r * (p.N - p.n_split) + (n - p.n_split)] = k3_f2bf(v);
		return;
	}
	if (EPI == K3_EPI_SCALE)
		v *= p.row_scale[rs];
	if (EPI == K3_EPI_ADD)
		v += k3_bf2f(p.addend[r * p.N + n]);
	if (EPI == K3_EPI_GATE)
		v *= k3_sigmoid(k3_bf2f(p.addend[r * p.N + n]));
	p.out[r * p.N + n] = k3_f2bf(v);
}

} // namespace

#endif
