/* SPDX-License-Identifier: MIT */
/*
 * Fused KDA decode: see kda_decode.h.
 *
 * One CTA per (request, head), the head's state staged in shared memory:
 * one thread issues bulk copies (the copy engine, cp.async.bulk on an
 * mbarrier) of the whole 128 x 128 state in DEC_CHUNKS row blocks as soon as
 * the slot is known, the threads compute ShortConv, norms and gates while
 * the bytes arrive, then each row block is updated from shared memory and
 * written straight to its slot with 16-byte stores (one pass: read once,
 * write once). The registers hold only a few rows at a time, so the number
 * of CTAs per SM is set by shared memory (FP32: 3, BF16: 6), not by the
 * 64 state registers per thread of kda_step.cuh's kernel (2 CTAs per SM),
 * and the state reads of several CTAs are in flight at once.
 *
 * KDA_DECODE_KERNEL (environment, read once; see dec_variant()) selects
 * another variant for side-by-side measurements, `step` kda_step.cuh's
 * register-resident kernel.
 */
#include "kda_decode.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "kda_step.cuh"

namespace {

constexpr int DEC_D = KDA_HEAD_DIM;
constexpr int DEC_LANES = 16; /* lanes per state row, 8 k values each */
constexpr int DEC_CHUNKS = 4; /* row blocks of the state, one mbarrier each */
constexpr int DEC_CHUNK_ROWS = DEC_D / DEC_CHUNKS;

struct __align__(16) dec_smem {
	float q[DEC_D], k[DEC_D], alpha[DEC_D], v[DEC_D], o[DEC_D];
	float red[DEC_D / 32][3]; /* warps of the channel threads: sum q^2, k^2, q.k */
	float ored[8];            /* per warp: sum o^2 (at most 8 warps) */
	uint64_t mbar[DEC_CHUNKS];
	float beta;
	float part; /* this CTA's sum o^2 (read by the cluster peer) */
};

struct dec_params {
	int heads;
	float scale, norm_eps;
	const uint16_t *x, *g_raw, *beta_raw, *gate_raw, *conv_w, *norm_w;
	const int32_t *slot;
	void *state;
	uint16_t *conv_state, *out;
};

/* ShortConv of one channel: taps w[0..3], history h[0..2] (oldest first), input x. */
__device__ __forceinline__ float dec_conv(const float w[4], const float hv[3], float x)
{
	const float acc = w[0] * hv[0] + w[1] * hv[1] + w[2] * hv[2] + w[3] * x;
	return acc * sigmoidf_(acc);
}

/* CTAs per SM that shared memory allows (FP32 68 KiB, BF16 36 KiB each); the
 * register budget must not allow fewer. */
template <typename StateT, int NT, int SPLIT, int HPC>
constexpr int dec_min_ctas()
{
	/* Shared memory allows 3 (FP32) / 6 (BF16) whole-head CTAs per SM, twice
	 * as many half-head ones; at most 8 CTAs of 128 threads (64 registers). */
	return ((sizeof(StateT) == 4 ? 384 : 768) * SPLIT < 1024 ? (sizeof(StateT) == 4 ? 384 : 768) * SPLIT
								   : 1024) / (NT / HPC) / HPC;
}

/* Threads of one head-group (NT / HPC of them) sync among themselves. */
template <int HPC>
__device__ __forceinline__ void dec_sync(int hh, int n)
{
	if (HPC == 1) {
		__syncthreads();
	} else {
		if (hh == 0)
			asm volatile("bar.sync 1, %0;\n" ::"r"(n) : "memory");
		else
			asm volatile("bar.sync 2, %0;\n" ::"r"(n) : "memory");
	}
}

/* SPLIT = 2: a cluster of 2 CTAs per (request, head), each owning 64 rows
 * (both run the cheap ShortConv and norms; the RMSNorm's sum of o^2 is
 * exchanged through distributed shared memory).
 * HPC = 2: two heads of one request per CTA (heads 2y and 2y + 1, adjacent in
 * the slot: one slot load, one CTA launch for 2 x 128 rows), each half of
 * the threads running the one-head algorithm with its own named barrier. */
template <typename StateT, int NT, int SPLIT, int HPC>
__global__ void __launch_bounds__(NT, dec_min_ctas<StateT, NT, SPLIT, HPC>()) kda_decode_kernel(const dec_params p)
{
	static_assert(HPC == 1 || SPLIT == 1, "two heads per CTA or two CTAs per head, not both");
	constexpr int NTH = NT / HPC; /* threads per head */
	constexpr int NRG = NTH / DEC_LANES;           /* row groups */
	constexpr int RPC = DEC_CHUNK_ROWS / NRG;     /* rows per thread per chunk */
	constexpr int ROWS = DEC_D / SPLIT;           /* rows of this CTA */
	constexpr int NCH = ROWS / DEC_CHUNK_ROWS;    /* chunks of this CTA */
	constexpr uint32_t CHUNK_BYTES = DEC_CHUNK_ROWS * DEC_D * sizeof(StateT);
	static_assert(NTH >= DEC_D && NTH % DEC_LANES == 0 && DEC_CHUNK_ROWS % NRG == 0, "shape");
	extern __shared__ __align__(128) unsigned char dyn[];
	const int hh = HPC == 1 ? 0 : (int)threadIdx.x / NTH;
	const int tid = HPC == 1 ? (int)threadIdx.x : (int)threadIdx.x % NTH;
	StateT *S = reinterpret_cast<StateT *>(dyn) + (size_t)hh * ROWS * DEC_D; /* this head's rows */
	dec_smem &sm = reinterpret_cast<dec_smem *>(dyn + sizeof(StateT) * HPC * ROWS * DEC_D)[hh];

	const int b = blockIdx.x / SPLIT, rank = blockIdx.x % SPLIT, h = blockIdx.y * HPC + hh;
	const int H = p.heads;
	const size_t C = (size_t)H * 3 * DEC_D;
	const int lane = tid & 31, warp = tid >> 5;
	const size_t slot = (size_t)p.slot[b];
	StateT *st = static_cast<StateT *>(p.state) + (slot * H + h) * DEC_D * DEC_D + (size_t)rank * ROWS * DEC_D;

	if (tid == 0) {
#pragma unroll
		for (int i = 0; i < NCH; i++)
			mbar_init(&sm.mbar[i], 1);
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#pragma unroll
		for (int i = 0; i < NCH; i++) {
			mbar_expect_tx(&sm.mbar[i], CHUNK_BYTES);
			bulk_g2s(S + (size_t)i * DEC_CHUNK_ROWS * DEC_D, st + (size_t)i * DEC_CHUNK_ROWS * DEC_D,
				 CHUNK_BYTES, &sm.mbar[i]);
		}
	}

	/* Channel c of q, k, v: ShortConv, SiLU, gates; conv state shifted in place
	 * (with SPLIT = 2 by rank 0, after both CTAs have read it). */
	float og = 0.0f;
	uint16_t *cs = p.conv_state + slot * KDA_CONV_STATE_TAPS * C;
	const size_t chan[3] = { (size_t)h * DEC_D + (tid & (DEC_D - 1)), (size_t)(H + h) * DEC_D + (tid & (DEC_D - 1)),
				 (size_t)(2 * H + h) * DEC_D + (tid & (DEC_D - 1)) };
	uint16_t xr[3], hr[3][KDA_CONV_STATE_TAPS];
	if (tid < DEC_D) {
		const int c = tid;
		const uint16_t *x = p.x + (size_t)b * C;
		const size_t gi = ((size_t)b * H + h) * DEC_D + c;
		/* Every load first (no store in between), then the arithmetic. */
		float w[3][KDA_CONV_TAPS];
#pragma unroll
		for (int j = 0; j < 3; j++) {
			xr[j] = x[chan[j]];
#pragma unroll
			for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
				hr[j][i] = cs[(size_t)i * C + chan[j]];
#pragma unroll
			for (int i = 0; i < KDA_CONV_TAPS; i++)
				w[j][i] = bf2f(p.conv_w[chan[j] * KDA_CONV_TAPS + i]);
		}
		const float graw = bf2f(p.g_raw[gi]), gate = bf2f(p.gate_raw[gi]);
		const float braw = bf2f(p.beta_raw[(size_t)b * H + h]);
		float y[3];
#pragma unroll
		for (int j = 0; j < 3; j++) {
			const float hv[3] = { bf2f(hr[j][0]), bf2f(hr[j][1]), bf2f(hr[j][2]) };
			y[j] = dec_conv(w[j], hv, bf2f(xr[j]));
			/* Shift the history in place, oldest tap first. */
			if (SPLIT == 1)
				cs[chan[j]] = hr[j][1], cs[C + chan[j]] = hr[j][2], cs[2 * C + chan[j]] = xr[j];
		}
		const float yq = y[0], yk = y[1], yv = y[2];
		sm.q[c] = yq, sm.k[c] = yk, sm.v[c] = yv;
		sm.alpha[c] = __expf((float)KDA_GATE_LOWER_BOUND * sigmoidf_(graw));
		og = sigmoidf_(gate);
		const float r0 = group_sum<32>(yq * yq), r1 = group_sum<32>(yk * yk), r2 = group_sum<32>(yq * yk);
		if (lane == 0)
			sm.red[warp][0] = r0, sm.red[warp][1] = r1, sm.red[warp][2] = r2;
		if (c == 0)
			sm.beta = sigmoidf_(braw);
	}
	dec_sync<HPC>(hh, NTH);
	float sq = 0.0f, sk = 0.0f, sqk = 0.0f;
#pragma unroll
	for (int i = 0; i < DEC_D / 32; i++)
		sq += sm.red[i][0], sk += sm.red[i][1], sqk += sm.red[i][2];
	const float beta = sm.beta;
	const float rq = rsqrtf(sq + (float)KDA_L2_EPS) * p.scale;
	const float rk = rsqrtf(sk + (float)KDA_L2_EPS);
	const float kq = sqk * rq * rk;
	const int sub = tid & (DEC_LANES - 1), rg = tid / DEC_LANES;
	float qh[STEP_KS], kh[STEP_KS], al[STEP_KS];
#pragma unroll
	for (int e = 0; e < STEP_KS; e += 4) {
		const int kp = step_layout<StateT>::k(sub, e);
		float4 a = *reinterpret_cast<const float4 *>(&sm.q[kp]);
		float4 bb = *reinterpret_cast<const float4 *>(&sm.k[kp]);
		float4 cc = *reinterpret_cast<const float4 *>(&sm.alpha[kp]);
		qh[e] = a.x * rq, qh[e + 1] = a.y * rq, qh[e + 2] = a.z * rq, qh[e + 3] = a.w * rq;
		kh[e] = bb.x * rk, kh[e + 1] = bb.y * rk, kh[e + 2] = bb.z * rk, kh[e + 3] = bb.w * rk;
		al[e] = cc.x, al[e + 1] = cc.y, al[e + 2] = cc.z, al[e + 3] = cc.w;
	}

	float osq = 0.0f;
#pragma unroll 1
	for (int ch = 0; ch < NCH; ch++) {
		mbar_wait(&sm.mbar[ch], 0);
		float m[RPC][STEP_KS];
#pragma unroll
		for (int i = 0; i < RPC; i++)
			step_layout<StateT>::load(S + (size_t)(ch * DEC_CHUNK_ROWS + rg + NRG * i) * DEC_D, sub, m[i]);
#pragma unroll
		for (int i = 0; i < RPC; i++) {
			const int lrow = ch * DEC_CHUNK_ROWS + rg + NRG * i, row = rank * ROWS + lrow;
			float a = 0.0f, cq = 0.0f;
#pragma unroll
			for (int e = 0; e < STEP_KS; e++) {
				m[i][e] *= al[e];
				a += m[i][e] * kh[e];
				cq += m[i][e] * qh[e];
			}
			a = group_sum<DEC_LANES>(a);
			cq = group_sum<DEC_LANES>(cq);
			const float coef = beta * (sm.v[row] - a);
#pragma unroll
			for (int e = 0; e < STEP_KS; e++)
				m[i][e] += coef * kh[e];
			step_layout<StateT>::store(st + (size_t)lrow * DEC_D, sub, m[i]);
			const float o = cq + coef * kq;
			if (sub == 0)
				sm.o[row] = o;
			osq += o * o;
		}
	}
	/* osq is equal on the 16 lanes of a row group; add the warp's two groups. */
	osq += __shfl_xor_sync(0xffffffffu, osq, 16);
	if (lane == 0)
		sm.ored[warp] = osq;
	dec_sync<HPC>(hh, NTH);
	float ss = 0.0f;
#pragma unroll
	for (int i = 0; i < NTH / 32; i++)
		ss += sm.ored[i];
	if (SPLIT == 2) {
		if (tid == 0)
			sm.part = ss;
		asm volatile("barrier.cluster.arrive.release.aligned;\n"
			     "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
		uint32_t peer;
		asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer) : "r"(smem_u32(&sm.part)), "r"(rank ^ 1));
		float pv;
		asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(pv) : "r"(peer) : "memory");
		ss += pv;
		if (rank == 0 && tid < DEC_D)
#pragma unroll
			for (int j = 0; j < 3; j++)
				cs[chan[j]] = hr[j][1], cs[C + chan[j]] = hr[j][2], cs[2 * C + chan[j]] = xr[j];
		/* The peer may leave once both have read. */
		asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
	}
	if (tid >= rank * ROWS && tid < rank * ROWS + ROWS) {
		const int c = tid;
		const float r = rsqrtf(ss * (1.0f / DEC_D) + p.norm_eps);
		const float y = sm.o[c] * r * bf2f(p.norm_w[c]) * og;
		p.out[((size_t)b * H + h) * DEC_D + c] = f2bf(y);
	}
	if (SPLIT == 2)
		asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

template <typename StateT, int NT, int SPLIT, int HPC = 1>
int dec_launch(const dec_params &p, int batch, cudaStream_t stream)
{
	constexpr size_t smem = HPC * (sizeof(StateT) * DEC_D * DEC_D / SPLIT + sizeof(dec_smem));
	auto kern = kda_decode_kernel<StateT, NT, SPLIT, HPC>;
	static bool configured = false;
	if (!configured) {
		if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
		    cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100) != cudaSuccess)
			return kda_launch_status();
		configured = true;
	}
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3((unsigned)(batch * SPLIT), (unsigned)(p.heads / HPC));
	cfg.blockDim = dim3(NT);
	cfg.dynamicSmemBytes = smem;
	cfg.stream = stream;
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = SPLIT;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.attrs = attr;
	cfg.numAttrs = SPLIT > 1 ? 1 : 0;
	if (cudaLaunchKernelEx(&cfg, kern, p) != cudaSuccess)
		return kda_launch_status();
	return kda_launch_status();
}

/* KDA_DECODE_KERNEL: smem128 (0): staged, 128 threads; step (1): kda_step.cuh's;
 * smem256 (2, the default): staged, 256 threads; split (3): staged, 2-CTA
 * cluster per head; heads2 (4): staged, 2 heads per CTA of 256 threads for
 * BF16 state with H even (otherwise as smem256). */
int dec_variant()
{
	static int v = -1;
	if (v < 0) {
		const char *e = getenv("KDA_DECODE_KERNEL");
		v = !e ? 2 : !strcmp(e, "smem128") ? 0 : !strcmp(e, "step") ? 1 : !strcmp(e, "split") ? 3
		    : !strcmp(e, "heads2") ? 4 : 2;
	}
	return v;
}

} // namespace

extern "C" int kda_decode(const struct kda_decode_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->heads < 1 || a->batch > 65535 * 1024 || a->heads > 65535)
		return -EINVAL;
	if (a->state_dtype != KDA_F32 && a->state_dtype != KDA_BF16)
		return -EINVAL;
	if (!a->x || !a->g_raw || !a->beta_raw || !a->gate_raw || !a->conv_w || !a->norm_w ||
	    !a->slot || !a->state || !a->conv_state || !a->out)
		return -EINVAL;
	const int variant = dec_variant();
	if (variant == 1) {
		step_params p = {};
		p.heads = a->heads;
		p.window = 1;
		p.scale = a->scale;
		p.norm_eps = a->norm_eps;
		p.conv_w = a->conv_w;
		p.norm_w = a->norm_w;
		p.slot = a->slot;
		p.state = a->state;
		p.conv_state = a->conv_state;
		p.commit.x = a->x;
		p.commit.g_raw = a->g_raw;
		p.commit.beta_raw = a->beta_raw;
		p.commit.gate_raw = a->gate_raw;
		p.commit.n_tokens = nullptr;
		p.commit.n_fixed = 1;
		p.commit.out = a->out;
		return step_launch(p, a->batch, a->state_dtype, stream);
	}
	dec_params p = {};
	p.heads = a->heads;
	p.scale = a->scale;
	p.norm_eps = a->norm_eps;
	p.x = a->x;
	p.g_raw = a->g_raw;
	p.beta_raw = a->beta_raw;
	p.gate_raw = a->gate_raw;
	p.conv_w = a->conv_w;
	p.norm_w = a->norm_w;
	p.slot = a->slot;
	p.state = a->state;
	p.conv_state = a->conv_state;
	p.out = a->out;
	if (a->state_dtype == KDA_F32)
		return variant == 2 || variant == 4 ? dec_launch<float, 256, 1>(p, a->batch, stream)
		       : variant == 3 ? dec_launch<float, 128, 2>(p, a->batch, stream)
				      : dec_launch<float, 128, 1>(p, a->batch, stream);
	if (variant == 4 && a->heads % 2 == 0)
		return dec_launch<uint16_t, 256, 1, 2>(p, a->batch, stream);
	return variant == 2 || variant == 4 ? dec_launch<uint16_t, 256, 1>(p, a->batch, stream)
	       : variant == 3 ? dec_launch<uint16_t, 128, 2>(p, a->batch, stream)
			      : dec_launch<uint16_t, 128, 1>(p, a->batch, stream);
}
