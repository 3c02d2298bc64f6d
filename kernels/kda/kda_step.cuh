/* SPDX-License-Identifier: MIT */
/*
 * The token-step kernel shared by kda_decode.cu and kda_verify.cu (internal).
 *
 * One CTA per (request, head). The head's state S^T ([128 rows v][128 k])
 * lives in registers for the whole launch: 16 lanes per row, each lane 8
 * consecutive-in-memory k values (16-byte loads), 8 rows per thread. It is
 * loaded once, then the CTA runs
 *   - `commit` tokens (decode's token, or the replayed accepted prefix),
 *     after which state and conv state are written back once, and
 *   - `spec` tokens (drafts being verified) whose state is discarded.
 * A row's update needs only that row plus the head's q, k, alpha, beta, so
 * the recurrence has no cross-row traffic except the two 16-lane dot products.
 */
#ifndef K3_KERNELS_KDA_STEP_CUH
#define K3_KERNELS_KDA_STEP_CUH

#include "kda_device.cuh"

namespace {

constexpr int STEP_THREADS = 256;
constexpr int STEP_LANES_PER_ROW = 16;
constexpr int STEP_ROW_GROUPS = STEP_THREADS / STEP_LANES_PER_ROW;     /* 16 */
constexpr int STEP_ROWS = KDA_HEAD_DIM / STEP_ROW_GROUPS;              /* 8 rows per thread */
constexpr int STEP_KS = KDA_HEAD_DIM / STEP_LANES_PER_ROW;             /* 8 k per thread */
constexpr int STEP_MIN_CTAS = 2;  /* CTAs per SM the register budget must allow */
constexpr int STEP_CH = 3 * KDA_HEAD_DIM;                              /* q|k|v channels per head */

static_assert(STEP_THREADS == 2 * KDA_HEAD_DIM, "lower half: q,k channels; upper: v channel");

struct step_window {
	const uint16_t *x;        /* [B][W][C] */
	const uint16_t *g_raw;    /* [B][W][H][128] */
	const uint16_t *beta_raw; /* [B][W][H] */
	const uint16_t *gate_raw; /* [B][W][H][128] */
	const int32_t *n_tokens;  /* [B], or NULL: n_fixed */
	int n_fixed;
	uint16_t *out;            /* [B][W][H][128], or NULL: no outputs */
};

struct step_params {
	int heads, window;
	float scale, norm_eps;
	const uint16_t *conv_w;
	const uint16_t *norm_w;
	const int32_t *slot;
	void *state;
	uint16_t *conv_state;
	step_window commit, spec;
};

/* Where a thread's 8 k values of a row sit: FP32 rows are read as two
 * 16-byte pieces at sub*4 and 64 + sub*4, BF16 rows as one at sub*8. */
template <typename T>
struct step_layout;

template <>
struct step_layout<float> {
	static __device__ __forceinline__ int k(int sub, int e) { return (e >> 2) * 64 + sub * 4 + (e & 3); }
	static __device__ __forceinline__ void load(const float *row, int sub, float m[STEP_KS])
	{
		float4 a = *reinterpret_cast<const float4 *>(row + sub * 4);
		float4 b = *reinterpret_cast<const float4 *>(row + 64 + sub * 4);
		m[0] = a.x, m[1] = a.y, m[2] = a.z, m[3] = a.w;
		m[4] = b.x, m[5] = b.y, m[6] = b.z, m[7] = b.w;
	}
	static __device__ __forceinline__ void store(float *row, int sub, const float m[STEP_KS])
	{
		*reinterpret_cast<float4 *>(row + sub * 4) = make_float4(m[0], m[1], m[2], m[3]);
		*reinterpret_cast<float4 *>(row + 64 + sub * 4) = make_float4(m[4], m[5], m[6], m[7]);
	}
	static __device__ __forceinline__ void round(float *) {}
};

template <>
struct step_layout<uint16_t> {
	static __device__ __forceinline__ int k(int sub, int e) { return sub * 8 + e; }
	static __device__ __forceinline__ void load(const uint16_t *row, int sub, float m[STEP_KS])
	{
		uint4 a = *reinterpret_cast<const uint4 *>(row + sub * 8);
		m[0] = lo_bf16(a.x), m[1] = hi_bf16(a.x), m[2] = lo_bf16(a.y), m[3] = hi_bf16(a.y);
		m[4] = lo_bf16(a.z), m[5] = hi_bf16(a.z), m[6] = lo_bf16(a.w), m[7] = hi_bf16(a.w);
	}
	static __device__ __forceinline__ void store(uint16_t *row, int sub, const float m[STEP_KS])
	{
		uint4 a;
		a.x = pack_bf16(m[0], m[1]), a.y = pack_bf16(m[2], m[3]);
		a.z = pack_bf16(m[4], m[5]), a.w = pack_bf16(m[6], m[7]);
		*reinterpret_cast<uint4 *>(row + sub * 8) = a;
	}
	/* What a store and reload would give: keeps every token's state exactly
	 * what sequential decoding (one store per token) computes. */
	static __device__ __forceinline__ void round(float m[STEP_KS])
	{
#pragma unroll
		for (int e = 0; e < STEP_KS; e++)
			m[e] = bf2f(f2bf(m[e]));
	}
};

/* Shared memory of one token, double-buffered by token parity so that one
 * barrier per token (two with outputs) orders writers and readers. */
struct step_smem {
	float q[2][KDA_HEAD_DIM], k[2][KDA_HEAD_DIM], alpha[2][KDA_HEAD_DIM], v[2][KDA_HEAD_DIM];
	float o[2][KDA_HEAD_DIM];
	float red[2][4][3];              /* warps 0..3: sum q^2, k^2, q.k */
	float ored[2][STEP_THREADS / 32]; /* per warp: sum o^2 */
	float beta[2];
};

__device__ __forceinline__ float conv_step(const float *w, float *hist, float x)
{
	float acc = w[0] * hist[0] + w[1] * hist[1] + w[2] * hist[2] + w[3] * x;
	hist[0] = hist[1], hist[1] = hist[2], hist[2] = x;
	return acc * sigmoidf_(acc);
}

/*
 * One CTA per (request b, head h). Threads < 128 own the ShortConv of q and
 * k channel c, threads >= 128 that of v channel c and the gates of channel c;
 * every thread owns 8 rows x 8 k of the state. Tokens [0, n_commit) come from
 * the commit window, the rest from the spec window; the state is written
 * after the last commit token.
 */
template <typename StateT>
__global__ void __launch_bounds__(STEP_THREADS, STEP_MIN_CTAS) kda_step_kernel(const step_params p)
{
	__shared__ __align__(16) step_smem sm;
	/* ShortConv weights and history of the thread's channels: [thread][q|k or v]. */
	__shared__ float conv_w[2][STEP_THREADS][KDA_CONV_TAPS];
	__shared__ float conv_h[2][STEP_THREADS][KDA_CONV_STATE_TAPS];
	const int b = blockIdx.x, h = blockIdx.y, tid = threadIdx.x;
	const int H = p.heads, C = H * STEP_CH, c = tid & (KDA_HEAD_DIM - 1);
	const int lane = tid & 31, warp = tid >> 5;
	const int sub = tid & (STEP_LANES_PER_ROW - 1), rg = tid / STEP_LANES_PER_ROW;
	const bool lower = tid < KDA_HEAD_DIM;
	const size_t slot = (size_t)p.slot[b];
	StateT *st = static_cast<StateT *>(p.state) + (slot * H + h) * KDA_HEAD_DIM * KDA_HEAD_DIM;

	/* Issue the whole state read first; the conv set-up overlaps with it. */
	float m[STEP_ROWS][STEP_KS];
#pragma unroll
	for (int i = 0; i < STEP_ROWS; i++)
		step_layout<StateT>::load(st + (size_t)(rg + STEP_ROW_GROUPS * i) * KDA_HEAD_DIM, sub, m[i]);

	uint16_t *cs = p.conv_state + slot * KDA_CONV_STATE_TAPS * C;
	const int nch = lower ? 2 : 1;
	const int ch[2] = { lower ? h * KDA_HEAD_DIM + c : (2 * H + h) * KDA_HEAD_DIM + c,
			    (H + h) * KDA_HEAD_DIM + c };
	for (int j = 0; j < nch; j++) {
#pragma unroll
		for (int i = 0; i < KDA_CONV_TAPS; i++)
			conv_w[j][tid][i] = bf2f(p.conv_w[(size_t)ch[j] * KDA_CONV_TAPS + i]);
#pragma unroll
		for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
			conv_h[j][tid][i] = bf2f(cs[(size_t)i * C + ch[j]]);
	}

	const int n_commit = p.commit.x ? (p.commit.n_tokens ? p.commit.n_tokens[b] : p.commit.n_fixed) : 0;
	const int n_spec = p.spec.x ? (p.spec.n_tokens ? p.spec.n_tokens[b] : p.spec.n_fixed) : 0;
	for (int tok = 0; tok < n_commit + n_spec; tok++) {
		const bool committing = tok < n_commit;
		const step_window &w = committing ? p.commit : p.spec;
		const int t = committing ? tok : tok - n_commit;
		const bool out = w.out != nullptr;
		const int buf = tok & 1;
		const size_t bt = (size_t)b * p.window + t;
		const uint16_t *x = w.x + bt * C;
		float og = 0.0f;
		if (lower) {
			float yq = conv_step(conv_w[0][tid], conv_h[0][tid], bf2f(x[ch[0]]));
			float yk = conv_step(conv_w[1][tid], conv_h[1][tid], bf2f(x[ch[1]]));
			sm.q[buf][c] = yq, sm.k[buf][c] = yk;
			float r0 = group_sum<32>(yq * yq), r1 = group_sum<32>(yk * yk);
			float r2 = group_sum<32>(yq * yk);
			if (lane == 0)
				sm.red[buf][warp][0] = r0, sm.red[buf][warp][1] = r1, sm.red[buf][warp][2] = r2;
		} else {
			sm.v[buf][c] = conv_step(conv_w[0][tid], conv_h[0][tid], bf2f(x[ch[0]]));
			size_t gi = (bt * H + h) * KDA_HEAD_DIM + c;
			sm.alpha[buf][c] = __expf((float)KDA_GATE_LOWER_BOUND * sigmoidf_(bf2f(w.g_raw[gi])));
			if (out)
				og = sigmoidf_(bf2f(w.gate_raw[gi]));
			if (c == 0)
				sm.beta[buf] = sigmoidf_(bf2f(w.beta_raw[bt * H + h]));
		}
		__syncthreads();
		float sq = 0.0f, sk = 0.0f, sqk = 0.0f;
#pragma unroll
		for (int i = 0; i < 4; i++)
			sq += sm.red[buf][i][0], sk += sm.red[buf][i][1], sqk += sm.red[buf][i][2];
		const float rq = rsqrtf(sq + (float)KDA_L2_EPS) * p.scale;
		const float rk = rsqrtf(sk + (float)KDA_L2_EPS);
		const float kq = sqk * rq * rk, beta = sm.beta[buf];
		float qh[STEP_KS], kh[STEP_KS], al[STEP_KS];
#pragma unroll
		for (int e = 0; e < STEP_KS; e += 4) {
			const int kp = step_layout<StateT>::k(sub, e);
			float4 a = *reinterpret_cast<const float4 *>(&sm.q[buf][kp]);
			float4 bb = *reinterpret_cast<const float4 *>(&sm.k[buf][kp]);
			float4 cc = *reinterpret_cast<const float4 *>(&sm.alpha[buf][kp]);
			qh[e] = a.x * rq, qh[e + 1] = a.y * rq, qh[e + 2] = a.z * rq, qh[e + 3] = a.w * rq;
			kh[e] = bb.x * rk, kh[e + 1] = bb.y * rk, kh[e + 2] = bb.z * rk, kh[e + 3] = bb.w * rk;
			al[e] = cc.x, al[e + 1] = cc.y, al[e + 2] = cc.z, al[e + 3] = cc.w;
		}
		float osq = 0.0f;
#pragma unroll
		for (int i = 0; i < STEP_ROWS; i++) {
			const int row = rg + STEP_ROW_GROUPS * i;
			float a = 0.0f, cq = 0.0f;
#pragma unroll
			for (int e = 0; e < STEP_KS; e++) {
				m[i][e] *= al[e];
				a += m[i][e] * kh[e];
				cq += m[i][e] * qh[e];
			}
			a = group_sum<STEP_LANES_PER_ROW>(a);
			cq = group_sum<STEP_LANES_PER_ROW>(cq);
			const float coef = beta * (sm.v[buf][row] - a);
#pragma unroll
			for (int e = 0; e < STEP_KS; e++)
				m[i][e] += coef * kh[e];
			step_layout<StateT>::round(m[i]);
			const float o = cq + coef * kq;
			if (sub == 0)
				sm.o[buf][row] = o;
			osq += o * o;
		}
		if (out) {
			/* osq is equal on the 16 lanes of a row group; add the warp's two groups. */
			osq += __shfl_xor_sync(0xffffffffu, osq, 16);
			if (lane == 0)
				sm.ored[buf][warp] = osq;
			__syncthreads();
			if (!lower) {
				float ss = 0.0f;
#pragma unroll
				for (int i = 0; i < STEP_THREADS / 32; i++)
					ss += sm.ored[buf][i];
				const float r = rsqrtf(ss * (1.0f / KDA_HEAD_DIM) + p.norm_eps);
				const float y = sm.o[buf][c] * r * bf2f(p.norm_w[c]) * og;
				w.out[(bt * H + h) * KDA_HEAD_DIM + c] = f2bf(y);
			}
		}
		if (tok == n_commit - 1) {
#pragma unroll
			for (int i = 0; i < STEP_ROWS; i++)
				step_layout<StateT>::store(st + (size_t)(rg + STEP_ROW_GROUPS * i) * KDA_HEAD_DIM,
							   sub, m[i]);
			for (int j = 0; j < nch; j++)
#pragma unroll
				for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
					cs[(size_t)i * C + ch[j]] = f2bf(conv_h[j][tid][i]);
		}
	}
}

/* Launches the step kernel for B requests x H heads. */
inline int step_launch(const step_params &p, int batch, enum kda_dtype dtype, cudaStream_t stream)
{
	dim3 grid((unsigned)batch, (unsigned)p.heads);
	if (dtype == KDA_F32)
		kda_step_kernel<float><<<grid, STEP_THREADS, 0, stream>>>(p);
	else
		kda_step_kernel<uint16_t><<<grid, STEP_THREADS, 0, stream>>>(p);
	return kda_launch_status();
}

} // namespace

#endif
