/* SPDX-License-Identifier: MIT */
/*
 * k3_wgmma_peak.h: the tensor pipe's rate at the grouped expert GEMM's MMA shapes, no copies.
 *
 * One CTA per SM (the shared memory forces it). Shared memory holds STAGES data stages, each an A
 * region (wgs x mb m64 blocks of 64 rows x 64 k, BF16, 128-byte rows in the 128-byte swizzle:
 * k3_gemm_wg.cu's weight tile) and a B region (N rows x 64 k: its token tile), filled once with
 * pseudo-random BF16 in [-1, 1) (never zeros). Each consumer warpgroup runs `kblocks` k blocks
 * over the stages in turn: fence, 4 k steps x mb MMAs, commit, wait_group 1 (as the BF16 k loop
 * of k3_gemm_wg.cu), and reads clock64 / %globaltimer around its loop. RS: the A fragments are
 * loaded from shared memory once and reused (not rewritten, so no C7513 serialization).
 * WGP_HANDSHAKE adds warpgroup 0 as a producer that, per k block, waits on the stage's `empty`
 * barrier and arrives on its `full` barrier (128 arrivals), the consumers waiting on `full`,
 * fencing the proxies and arriving on the previous stage's `empty` (128 x wgs): the kernel's
 * non-cluster handshake without copies.
 */
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "common/k3_device.cuh"
#include "common/k3_wgmma.cuh"
#include "k3_wgmma_peak.h"

#pragma nv_diag_suppress 177

namespace {

constexpr int USE_STAGES = 3;      /* data stages, used in turn */
constexpr int BSTAGES = 4;         /* barrier stages (the kernel's 4) */
constexpr int A_MAX = 32768;       /* wgs x mb x 8 KB at most */
constexpr int B_MAX = 256 * 128;
constexpr int PSTAGE = A_MAX + B_MAX; /* 64 KB */
constexpr int SMEM = PSTAGE * USE_STAGES + 1024 + 1024; /* + barriers, alignment: one CTA per SM */
static_assert(SMEM <= 227 * 1024, "shared memory");

__device__ __forceinline__ uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

template <int N, int MB, bool RS, int MODE>
__device__ __forceinline__ void consumer(unsigned char *sm, uint64_t *full, uint64_t *empty, int wg, int kblocks,
					 unsigned long long *cycles, unsigned long long *ns, float *sink)
{
	const uint32_t *w = reinterpret_cast<const uint32_t *>(sm);
	const int lane = (int)threadIdx.x & 31, warp = ((int)threadIdx.x >> 5) & 3;
	float acc[MB][N / 2];
#pragma unroll
	for (int m = 0; m < MB; m++)
#pragma unroll
		for (int i = 0; i < N / 2; i++)
			acc[m][i] = 0.0f;
	uint32_t af[MB][4][4];
	if (RS) { /* any shared words: the values only need to be finite */
#pragma unroll
		for (int m = 0; m < MB; m++)
#pragma unroll
			for (int ks = 0; ks < 4; ks++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					af[m][ks][j] = w[((wg * MB + m) * 2048 + ks * 512 + warp * 128 + lane * 4 + j) & 8191];
	}
	const uint32_t base = k3_smem_u32(sm);
	unsigned long long c0, t0, c1, t1;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	c0 = clock64();
#pragma unroll 1
	for (int it = 0; it < kblocks; it++) {
		const int ds = it % USE_STAGES;
		if (MODE == WGP_HANDSHAKE) {
			k3_mbar_wait(&full[it % BSTAGES], (uint32_t)((it / BSTAGES) & 1));
			k3_fence_proxy_async();
		}
		const uint32_t st = base + (uint32_t)(ds * PSTAGE);
		k3_wgmma_fence();
#pragma unroll
		for (int ks = 0; ks < 4; ks++) {
			const uint64_t db = k3_wgmma_desc_sw128(st + A_MAX + ks * 32);
#pragma unroll
			for (int m = 0; m < MB; m++) {
				if (RS)
					k3_wgmma_rsw<N>(acc[m], af[m][ks], db);
				else
					k3_wgmma_ssw<N>(acc[m], k3_wgmma_desc_sw128(st + (wg * MB + m) * 8192 + ks * 32), db);
			}
		}
		k3_wgmma_commit();
		if (MODE == WGP_WAIT0)
			k3_wgmma_wait<0>();
		else
			k3_wgmma_wait<1>();
		if (MODE == WGP_HANDSHAKE && it > 0)
			k3_mbar_arrive(&empty[(it - 1) % BSTAGES]);
	}
	k3_wgmma_wait<0>();
	c1 = clock64();
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
#pragma unroll
	for (int m = 0; m < MB; m++)
		k3_wgmma_pinw<N>(acc[m]);
	float s = 0.0f;
#pragma unroll
	for (int m = 0; m < MB; m++)
#pragma unroll
		for (int i = 0; i < N / 2; i++)
			s += acc[m][i];
	if (s == 1234.5f) /* keeps the accumulators live; never true in practice */
		sink[0] = s;
	if ((threadIdx.x & 127) == 0) {
		cycles[blockIdx.x * 4 + wg] = c1 - c0;
		ns[blockIdx.x * 4 + wg] = t1 - t0;
	}
}

template <int N, int WGS, int MB, bool RS, int MODE>
__global__ void __launch_bounds__(128 * (WGS + (MODE == WGP_HANDSHAKE ? 1 : 0)), 1)
	peak_kernel(int kblocks, unsigned long long *cycles, unsigned long long *ns, float *sink)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	constexpr int PROD = MODE == WGP_HANDSHAKE ? 1 : 0;
	extern __shared__ __align__(16) unsigned char smem_raw[];
	unsigned char *sm = smem_raw + ((1024u - (k3_smem_u32(smem_raw) & 1023u)) & 1023u);
	uint64_t *full = reinterpret_cast<uint64_t *>(sm + USE_STAGES * PSTAGE), *empty = full + BSTAGES;
	const int nthr = (int)blockDim.x;
	/* Pseudo-random BF16 in [-1, 1): sign, exponent 126 or 125, random mantissa. */
	uint32_t *w = reinterpret_cast<uint32_t *>(sm);
	for (int i = (int)threadIdx.x; i < USE_STAGES * PSTAGE / 4; i += nthr) {
		const uint32_t h = hash32((uint32_t)i * 2654435761u + blockIdx.x);
		const uint32_t lo = (h & 0x807fu) | ((h & 0x100u) ? 0x3f00u : 0x3e80u);
		const uint32_t hi = ((h >> 16) & 0x807fu) | ((h & 0x200u) ? 0x3f00u : 0x3e80u);
		w[i] = lo | (hi << 16);
	}
	if (threadIdx.x == 0) {
		for (int s = 0; s < BSTAGES; s++) {
			k3_mbar_init(&full[s], 128);
			k3_mbar_init(&empty[s], 128 * WGS);
		}
		k3_mbar_fence_init();
	}
	k3_fence_proxy_async();
	__syncthreads();
	const int wg = (int)threadIdx.x / 128 - PROD;
	if constexpr (PROD) {
		if (wg < 0) {
			asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(40));
			for (int it = 0; it < kblocks; it++) {
				const int s = it % BSTAGES;
				k3_mbar_wait(&empty[s], (uint32_t)(((it / BSTAGES) & 1) ^ 1));
				k3_mbar_arrive(&full[s]);
			}
		} else {
			asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(232));
			consumer<N, MB, RS, MODE>(sm, full, empty, wg, kblocks, cycles, ns, sink);
		}
	} else {
		consumer<N, MB, RS, MODE>(sm, full, empty, wg, kblocks, cycles, ns, sink);
	}
#else
	(void)kblocks, (void)cycles, (void)ns, (void)sink;
	__trap();
#endif
}

using kern_t = void (*)(int, unsigned long long *, unsigned long long *, float *);

struct entry {
	k3_wgmma_peak_cfg c;
	kern_t k;
};

#define E(N, W, M, R, MODE) { { N, W, M, R, MODE }, peak_kernel<N, W, M, R, MODE> }
#define NS_ALL(W, M, R) E(64, W, M, R, 0), E(96, W, M, R, 0), E(112, W, M, R, 0), E(128, W, M, R, 0), \
	E(160, W, M, R, 0), E(192, W, M, R, 0), E(256, W, M, R, 0)
#define NS_MB2(W, R) E(64, W, 2, R, 0), E(96, W, 2, R, 0), E(112, W, 2, R, 0), E(128, W, 2, R, 0), E(160, W, 2, R, 0)

const entry TABLE[] = {
	/* the kernel's shape: 2 consumer warpgroups x 2 m64 blocks, SS, N 96 / 112 */
	NS_MB2(2, false),
	NS_ALL(2, 1, false),
	NS_ALL(1, 1, false),
	NS_MB2(1, false),
	E(64, 3, 1, false, 0), E(96, 3, 1, false, 0), E(112, 3, 1, false, 0), E(128, 3, 1, false, 0),
	/* A from registers */
	NS_MB2(2, true),
	NS_ALL(2, 1, true),
	NS_ALL(1, 1, true),
	/* the rhythm: wait_group 0 per k block; the mbarrier handshake with a producer */
	E(96, 2, 2, false, WGP_WAIT0), E(112, 2, 2, false, WGP_WAIT0),
	E(96, 2, 2, false, WGP_HANDSHAKE), E(112, 2, 2, false, WGP_HANDSHAKE),
	E(256, 2, 1, false, WGP_HANDSHAKE), E(112, 2, 2, true, WGP_HANDSHAKE),
};
#undef E
#undef NS_ALL
#undef NS_MB2

constexpr int N_TABLE = (int)(sizeof(TABLE) / sizeof(TABLE[0]));

} // namespace

extern "C" const struct k3_wgmma_peak_cfg *k3_wgmma_peak_table(int *n_out)
{
	static k3_wgmma_peak_cfg cfgs[N_TABLE];
	for (int i = 0; i < N_TABLE; i++)
		cfgs[i] = TABLE[i].c;
	*n_out = N_TABLE;
	return cfgs;
}

extern "C" int k3_wgmma_peak_run(const struct k3_wgmma_peak_cfg *c, int reps, struct k3_wgmma_peak_result *r)
{
#if !defined(K3_HAVE_WGMMA)
	(void)c, (void)reps, (void)r;
	return -EINVAL;
#else
	const entry *e = nullptr;
	for (int i = 0; i < N_TABLE; i++)
		if (TABLE[i].c.n == c->n && TABLE[i].c.wgs == c->wgs && TABLE[i].c.mb == c->mb && TABLE[i].c.rs == c->rs &&
		    TABLE[i].c.mode == c->mode)
			e = &TABLE[i];
	if (!e || reps < 1)
		return -EINVAL;
	int dev = 0, sms = 0;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    cudaFuncSetAttribute(e->k, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM) != cudaSuccess)
		return -EIO;
	/* ~2 M cycles of MMA work a CTA at the peak: 2 x N x mb x wgs cycles a k block. */
	const int per_kb = 2 * c->n * c->mb * c->wgs;
	const int kblocks = std::max(256, 2000000 / per_kb);
	const int threads = 128 * (c->wgs + (c->mode == WGP_HANDSHAKE ? 1 : 0));
	unsigned long long *cyc = nullptr, *ns = nullptr;
	float *sink = nullptr;
	cudaEvent_t ev0 = nullptr, ev1 = nullptr;
	int rc = -EIO;
	std::vector<unsigned long long> hc((size_t)sms * 4), hn((size_t)sms * 4);
	std::vector<double> ms, cy, mhz;
	if (cudaMalloc(&cyc, hc.size() * 8) != cudaSuccess || cudaMalloc(&ns, hn.size() * 8) != cudaSuccess ||
	    cudaMalloc(&sink, 4) != cudaSuccess || cudaEventCreate(&ev0) != cudaSuccess ||
	    cudaEventCreate(&ev1) != cudaSuccess)
		goto out;
	for (int rep = -1; rep < reps; rep++) {
		cudaEventRecord(ev0);
		e->k<<<sms, threads, SMEM>>>(kblocks, cyc, ns, sink);
		cudaEventRecord(ev1);
		if (cudaEventSynchronize(ev1) != cudaSuccess || cudaGetLastError() != cudaSuccess)
			goto out;
		if (rep < 0)
			continue; /* warm-up */
		float t = 0;
		cudaEventElapsedTime(&t, ev0, ev1);
		if (cudaMemcpy(hc.data(), cyc, hc.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess ||
		    cudaMemcpy(hn.data(), ns, hn.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
			goto out;
		std::vector<std::pair<double, double>> per; /* (cycles, MHz) of each CTA's slowest warpgroup */
		for (int b = 0; b < sms; b++) {
			unsigned long long mc = 0, mn = 1;
			for (int g = 0; g < c->wgs; g++)
				if (hc[(size_t)b * 4 + g] > mc)
					mc = hc[(size_t)b * 4 + g], mn = hn[(size_t)b * 4 + g];
			per.push_back({ (double)mc, mn ? (double)mc / (double)mn * 1000.0 : 0.0 });
		}
		std::sort(per.begin(), per.end());
		ms.push_back(t);
		cy.push_back(per[per.size() / 2].first);
		mhz.push_back(per[per.size() / 2].second);
	}
	{
		std::vector<size_t> idx(ms.size());
		for (size_t i = 0; i < idx.size(); i++)
			idx[i] = i;
		std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return ms[a] < ms[b]; });
		const size_t m = idx[idx.size() / 2];
		const double flop_cta = (double)kblocks * c->wgs * c->mb * 4 * 2.0 * 64 * c->n * 16;
		r->ms = ms[m];
		r->cycles = cy[m];
		r->clock_mhz = mhz[m];
		r->flops = flop_cta * sms;
		r->flop_per_clk_sm = flop_cta / cy[m];
		r->ctas = sms;
	}
	rc = 0;
out:
	if (cyc)
		cudaFree(cyc);
	if (ns)
		cudaFree(ns);
	if (sink)
		cudaFree(sink);
	if (ev0)
		cudaEventDestroy(ev0);
	if (ev1)
		cudaEventDestroy(ev1);
	return rc;
#endif
}
