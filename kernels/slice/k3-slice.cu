/* SPDX-License-Identifier: MIT */
/*
 * k3-slice: four consecutive K3 layers at real dimensions on one GPU, with
 * random weights: layers 89..92 (1-based) of the published layer order,
 * KDA, KDA, KDA, Gated MLA, each with
 *   Block AttnRes (9 sources: the embedding, 7 completed 12-layer blocks, the
 *   current block's partial sum, which takes each sublayer's output) fused
 *   with the pre-norm, before the attention and before the MoE,
 *   the attention (KDA: projections, ShortConv, chunked recurrence or fused
 *   decode, gated norm, output projection; MLA decode: absorbed, latent
 *   cache, per-head value up-projection with the output gate, output
 *   projection; MLA prefill: materialized, the latent rows expanded per head
 *   through kv_b, causal attention with the output gate fused, output
 *   projection),
 *   and a LatentMoE with MXFP4 routed experts (moe_layer_forward()), their activations BF16 or,
 *   with --expert-act e4m3, E4M3 with a scale a row (moe_dims.expert_act K3_A_E4M3_ROW: the FP8
 *   wgmma kernel at every step, decode too; the expert weights' bytes then hold the FP8-word
 *   layout, made once at set-up).
 * It runs a prefill of T tokens (one sequence, no prefix) and decode steps
 * at batch B and context C (one new token per request), every op in an NVTX
 * range in `k3sim op` syntax; decode steps are also replayed as one CUDA
 * graph. Writes CSV: the step and each sublayer (CUDA events). After each
 * shape, a line names the kernel every GEMM launched (gemv, tiled-mma,
 * tiled-wgmma: the wgmma kernel only in sm_90a builds on compute
 * capability 9.0).
 *
 *   k3-slice [-o slice.csv] [--prefill T[,T..]] [--decode B:C[,B:C..]]
 *            [--kv bf16|fp8] [--state fp32|bf16] [--expert-act bf16|e4m3] [--reps N] [--quick]
 *            [--gap-ms N] [--sustain-ms N [--sustain-out FILE]]
 *
 * Defaults: prefill 4096,16384; decode 1:8192,16:8192,64:8192,256:8192,
 * 1:65536,16:65536,64:65536,256:65536 (--quick: prefill 4096, decode 1:8192,64:8192).
 * About 68 GB of weights (4 x 16 GB of MXFP4 experts) plus the caches.
 */
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "common/k3_upload.h"
#include "attnres/attnres.h"
#include "kda/kda_decode.h"
#include "kda/kda_prefill.h"
#include "layer/gated_norm.h"
#include "layer/mla_append.h"
#include "layer/short_conv.h"
#include "mla/mla_decode.h"
#include "mla/mla_prefill.h"
#include "moe/k3_gemm.h"
#include "moe/moe_layer.h"

namespace {

constexpr int FILL_THREADS = 256;
constexpr int D = K3_HIDDEN;            /* 7168 */
constexpr int H = 96;                   /* attention heads (KDA and MLA) */
constexpr int HD = 128;                 /* KDA head dim, MLA value head dim */
constexpr int KDA_C = 3 * H * HD;       /* q | k | v channels: 36864 */
constexpr int Q_LORA = 1536;            /* MLA q_lora_rank */
constexpr int SOURCES = 9;              /* AttnRes sources at layers 89..92 */
constexpr int N_LAYERS = 4;
constexpr int MLA_LAYER = 3;            /* 0-based position of the Gated MLA layer in the slice */

#define CK(call)                                                                                  \
	do {                                                                                      \
		cudaError_t e_ = (call);                                                          \
		if (e_ != cudaSuccess) {                                                          \
			fprintf(stderr, "k3-slice: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,  \
				cudaGetErrorString(e_));                                          \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

#define KOK(call)                                                                                 \
	do {                                                                                      \
		int r_ = (call);                                                                  \
		if (r_) {                                                                         \
			fprintf(stderr, "k3-slice: %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, \
				#call, r_, cudaGetErrorString(cudaGetLastError()));               \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

/* ---- device memory and random fills ------------------------------------------ */

__device__ uint32_t hash32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (uint32_t)x;
}

__global__ void fill_bf16_kernel(uint16_t *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		const float u = (hash32(seed * 0x9e3779b97f4a7c15ull + i) >> 8) * (1.0f / 16777216.0f);
		const uint32_t b = __float_as_uint(lo + (hi - lo) * u);
		p[i] = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
	}
}

__global__ void fill_f32_kernel(float *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = lo + (hi - lo) * ((hash32(seed * 0x9e3779b97f4a7c15ull + i) >> 8) * (1.0f / 16777216.0f));
}

__global__ void fill_bytes_kernel(uint8_t *p, size_t n, uint64_t seed, uint32_t mask, uint32_t base, uint32_t mod)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		const uint32_t h = hash32(seed * 0x9e3779b97f4a7c15ull + i);
		p[i] = (uint8_t)(mod ? base + h % mod : h & mask);
	}
}

/* FlashMLA FP8 tokens: E4M3 without NaN, scales in [1e-3, 1e-2], small BF16 rope. */
__global__ void fill_mla_fp8_kernel(uint8_t *p, size_t tokens, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < tokens * MLA_FP8_TOKEN_BYTES;
	     i += (size_t)gridDim.x * blockDim.x) {
		const size_t off = i % MLA_FP8_TOKEN_BYTES;
		const uint32_t h = hash32(seed * 0x9e3779b97f4a7c15ull + i);
		if (off < MLA_LATENT) {
			p[i] = (uint8_t)(h & 0xf7u);
		} else if (off < MLA_FP8_ROPE_OFFSET) {
			if ((off - MLA_LATENT) % 4 == 0) {
				const float s = 1e-3f + 9e-3f * ((h >> 8) * (1.0f / 16777216.0f));
				memcpy(p + i, &s, 4);
			}
		} else if ((off - MLA_FP8_ROPE_OFFSET) % 2 == 0) {
			const uint16_t b = (uint16_t)(0x3c00u | (h & 0x80ffu));
			memcpy(p + i, &b, 2);
		}
	}
}

uint64_t g_seed = 7;
cudaStream_t g_s;
size_t g_weight_bytes = 0;

void *dalloc(size_t bytes)
{
	void *p = nullptr;
	const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 16);
	if (e != cudaSuccess) {
		size_t fr = 0, tot = 0;
		cudaMemGetInfo(&fr, &tot);
		fprintf(stderr, "k3-slice: cudaMalloc(%zu bytes): %s (%.1f of %.1f GiB free)\n", bytes,
			cudaGetErrorString(e), fr / 1073741824.0, tot / 1073741824.0);
		exit(1);
	}
	return p;
}

/* Uniform in [-s, s] with s = sqrt(3 / fan_in): unit-variance outputs for unit-variance inputs. */
uint16_t *weight(size_t rows, size_t fan_in)
{
	const size_t n = rows * fan_in;
	uint16_t *p = (uint16_t *)dalloc(n * 2);
	const float s = sqrtf(3.0f / (float)fan_in);
	fill_bf16_kernel<<<4096, FILL_THREADS, 0, g_s>>>(p, n, g_seed++, -s, s);
	CK(cudaGetLastError());
	g_weight_bytes += n * 2;
	return p;
}

uint16_t *bf16_buf(size_t n, float lo, float hi)
{
	uint16_t *p = (uint16_t *)dalloc(n * 2);
	fill_bf16_kernel<<<4096, FILL_THREADS, 0, g_s>>>(p, n, g_seed++, lo, hi);
	CK(cudaGetLastError());
	return p;
}

/* on g_s, waited for: a pageable cudaMemcpy may still be landing when a kernel on the non-blocking
 * g_s reads it (kernels/common/k3_upload.h; k3-bench's mla_uv fault of 2026-12-06) */
template <typename T>
T *upload(const std::vector<T> &v)
{
	T *d = (T *)dalloc(v.size() * sizeof(T));
	CK(k3_upload(d, v.data(), v.size() * sizeof(T), g_s));
	return d;
}

/* ---- NVTX: one range per op, in `k3sim op` syntax ------------------------------- */

bool g_ranges = true;

struct range {
	explicit range(const char *spec)
	{
		if (g_ranges)
			nvtxRangePushA(spec);
	}
	~range()
	{
		if (g_ranges)
			nvtxRangePop();
	}
};

/* --gap-ms: before each routed expert GEMM of a timed eager step (not in the warm-up, not in a
 * graph), the stream drained and the host asleep this long, so the GEMM starts on an idle GPU as
 * in the bench (a diagnostic of the power history: the step times then include the gaps). */
int g_gap_ms = 0;

void moe_hook_fn(void *, const char *spec)
{
	if (!g_ranges)
		return;
	if (spec && g_gap_ms > 0 && strncmp(spec, "k3sim op=grouped_gemm ", 22) == 0 && strstr(spec, " w_dtype=")) {
		CK(cudaStreamSynchronize(g_s));
		usleep((useconds_t)g_gap_ms * 1000);
	}
	if (spec)
		nvtxRangePushA(spec);
	else
		nvtxRangePop();
}

/* Rows per routed expert, layer by layer, from the routing's top-k ids of one step: the experts
 * touched, the mean and the coefficient of variation of their rows, the largest, and the chunks
 * a grouped kernel that splits an expert's rows into pieces of at most 128, 160 or 176 would run
 * (sum over experts of ceil(rows / c)). */
struct route_stats {
	int touched[N_LAYERS] = {};
	double mean[N_LAYERS] = {}, cv[N_LAYERS] = {};
	int max[N_LAYERS] = {};
	long chunks[N_LAYERS][3] = {};
	bool valid = false;
};
constexpr int STAT_CHUNKS[3] = { 128, 160, 176 };

void route_stats_layer(route_stats &s, int l, const std::vector<int32_t> &ids, int experts)
{
	std::vector<long> rows(experts, 0);
	for (int32_t e : ids)
		if (e >= 0 && e < experts)
			rows[e]++;
	long n = 0, mx = 0;
	double sum = 0, sq = 0;
	for (long r : rows)
		if (r > 0) {
			n++, sum += (double)r, sq += (double)r * (double)r, mx = std::max(mx, r);
			for (int c = 0; c < 3; c++)
				s.chunks[l][c] += (r + STAT_CHUNKS[c] - 1) / STAT_CHUNKS[c];
		}
	s.touched[l] = (int)n;
	s.max[l] = (int)mx;
	s.mean[l] = n ? sum / (double)n : 0;
	s.cv[l] = n && sum > 0 ? sqrt(std::max(0.0, sq / (double)n - s.mean[l] * s.mean[l])) / s.mean[l] : 0;
}

/* ---- weights ---------------------------------------------------------------------- */

struct kda_weights {
	uint16_t *qkv, *g, *gate, *beta, *conv_w, *norm_w, *o;
};

struct mla_weights {
	uint16_t *qa, *qa_norm, *qabs, *kva, *kv_norm, *og, *uv, *o;
	uint16_t *qb, *kvb; /* prefill (materialized): q_b [96 x 192][1536], kv_b [96 x (128 + 128)][512] */
};

struct layer_weights {
	bool mla;
	kda_weights k;
	mla_weights m;
	uint16_t *attn_query, *attn_norm, *moe_query, *moe_norm;
	moe_weights moe;
	void *moe_bufs[12];
};

struct moe_dims g_dims;

/* Rows of the FP8-word layout repacked a chunk at a time (a multiple of 16: the layout is local
 * to 16-row blocks): 262144 rows of K3's w13 are 470 MB of scratch. */
constexpr int64_t WGF8_CHUNK_ROWS = 262144;

/* --expert-act e4m3: MXFP4 nibbles `packed` [rows][K / 2] replaced by their FP8-word layout
 * (k3_gemm_repack_wgf8(), through a scratch buffer a chunk of rows at a time), their floors into
 * `floors` [rows]. In place because a second copy of the experts (59 GB) would not fit beside
 * the caches; with E4M3 activations the layer reads only this layout (and the scales). Exits
 * with a message where the repack refuses the scales (-ERANGE). */
void wgf8_in_place(uint8_t *packed, const uint8_t *scales, int64_t rows, int K, uint8_t *floors, const char *what)
{
	const int64_t chunk = std::min<int64_t>(rows, WGF8_CHUNK_ROWS);
	uint8_t *tmp = (uint8_t *)dalloc((size_t)chunk * (K / 2));
	for (int64_t r = 0; r < rows; r += chunk) {
		const int64_t n = std::min<int64_t>(chunk, rows - r);
		const int rc = k3_gemm_repack_wgf8(packed + r * (K / 2), scales + r * (K / 32), n, K, tmp, floors + r, g_s);
		if (rc == -ERANGE) {
			fprintf(stderr,
				"k3-slice: --expert-act e4m3: the %s experts' MXFP4 scales do not fit the FP8-word layout "
				"(a row's scale groups spread over more than 11 binades, a scale byte 255 or a floor above "
				"240: k3_gemm_repack_wgf8() returned -ERANGE)\n",
				what);
			exit(1);
		}
		KOK(rc);
		CK(cudaMemcpyAsync(packed + r * (K / 2), tmp, (size_t)n * (K / 2), cudaMemcpyDeviceToDevice, g_s));
	}
	CK(cudaStreamSynchronize(g_s));
	CK(cudaFree(tmp));
}

void make_layer(layer_weights &L, bool mla)
{
	L.mla = mla;
	L.attn_query = bf16_buf(D, -0.05f, 0.05f);
	L.attn_norm = bf16_buf(D, 0.8f, 1.2f);
	L.moe_query = bf16_buf(D, -0.05f, 0.05f);
	L.moe_norm = bf16_buf(D, 0.8f, 1.2f);
	if (mla) {
		L.m.qa = weight(Q_LORA, D);
		L.m.qa_norm = bf16_buf(Q_LORA, 0.8f, 1.2f);
		L.m.qabs = weight((size_t)H * MLA_DIM, Q_LORA); /* q_b with W_UK absorbed: [96 x 576][1536] */
		L.m.kva = weight(MLA_DIM, D);
		L.m.kv_norm = bf16_buf(MLA_LATENT, 0.8f, 1.2f);
		L.m.og = weight((size_t)H * HD, D);             /* Gated MLA's full-rank output gate */
		L.m.uv = weight((size_t)H * HD, MLA_LATENT);    /* W_UV per head: [96][128][512] */
		L.m.o = weight(D, (size_t)H * HD);
		L.m.qb = weight((size_t)H * MLA_QK_HEAD, Q_LORA);
		L.m.kvb = weight((size_t)H * (MLA_QK_NOPE + MLA_V_HEAD), MLA_LATENT); /* head h: k_nope rows, then v */
	} else {
		L.k.qkv = weight(KDA_C, D);
		L.k.g = weight((size_t)H * HD, D);               /* full-rank gate */
		L.k.gate = weight((size_t)H * HD, D);
		L.k.beta = weight(H, D);
		L.k.conv_w = bf16_buf((size_t)KDA_C * 4, -0.6f, 0.6f);
		L.k.norm_w = bf16_buf(HD, 0.8f, 1.2f);
		L.k.o = weight(D, (size_t)H * HD);
	}
	/* LatentMoE: router + down, MXFP4 experts, norm, up, shared MLP. */
	const moe_dims &d = g_dims;
	const size_t E = d.experts, n13 = E * 2 * d.inter * (size_t)d.latent, n2 = E * (size_t)d.latent * d.inter;
	uint16_t *rd = weight((size_t)E + d.latent, D);
	float *bias = (float *)dalloc(E * 4);
	fill_f32_kernel<<<64, FILL_THREADS, 0, g_s>>>(bias, E, g_seed++, -0.01f, 0.01f);
	uint8_t *p13 = (uint8_t *)dalloc(n13 / 2), *s13 = (uint8_t *)dalloc(n13 / 32);
	uint8_t *p2 = (uint8_t *)dalloc(n2 / 2), *s2 = (uint8_t *)dalloc(n2 / 32);
	/* Random nibbles (|x| <= 6, rms 2.9) at scales 2^-8 / 2^-7: weights of rms about 1/sqrt(fan_in). */
	fill_bytes_kernel<<<4096, FILL_THREADS, 0, g_s>>>(p13, n13 / 2, g_seed++, 0xffu, 0, 0);
	fill_bytes_kernel<<<4096, FILL_THREADS, 0, g_s>>>(s13, n13 / 32, g_seed++, 0, 119, 2);
	fill_bytes_kernel<<<4096, FILL_THREADS, 0, g_s>>>(p2, n2 / 2, g_seed++, 0xffu, 0, 0);
	fill_bytes_kernel<<<4096, FILL_THREADS, 0, g_s>>>(s2, n2 / 32, g_seed++, 0, 119, 2);
	CK(cudaGetLastError());
	g_weight_bytes += n13 / 2 + n13 / 32 + n2 / 2 + n2 / 32;
	uint16_t *nw = bf16_buf(d.latent, 0.8f, 1.2f);
	uint16_t *up = weight(D, d.latent);
	uint16_t *ws13 = weight((size_t)2 * d.shared_inter, D), *ws2 = weight(D, d.shared_inter);
	L.moe = {};
	L.moe.w_router_down = rd, L.moe.bias = bias, L.moe.w13_packed = p13, L.moe.w13_scales = s13;
	L.moe.w2_packed = p2, L.moe.w2_scales = s2, L.moe.norm_w = nw, L.moe.w_up = up, L.moe.ws13 = ws13;
	/* The decode gemv reads the same random bytes as the FP16-pair layout (k3_gemm_args.w_f16)
	 * and the prefill's grouped GEMMs as the wgmma tile layout (k3_gemm_args.w_wg, the default
	 * kernel "wide2rqp"): each layout re-encodes the nibbles by a bijection (a permutation of the
	 * 32-bit words' bits, a GF(2)-linear map of the tile words'), so the bytes are uniformly
	 * random MXFP4 weights in every layout, with the same scales (E8M0 119-120: within the tile
	 * layout's 0 .. 128); prefill and decode thus run different but identically distributed
	 * weights (a second copy, 64 GB, would not fit beside the caches; the slice checks timings,
	 * not values). */
	L.moe.w13_f16 = p13, L.moe.w2_f16 = p2;
	L.moe.w13_wg = p13, L.moe.w2_wg = p2;
	L.moe.ws2 = ws2;
	if (d.expert_act == K3_A_E4M3_ROW) {
		uint8_t *f13 = (uint8_t *)dalloc(E * 2 * d.inter), *f2 = (uint8_t *)dalloc(E * d.latent);
		wgf8_in_place(p13, s13, (int64_t)E * 2 * d.inter, d.latent, f13, "w13");
		wgf8_in_place(p2, s2, (int64_t)E * d.latent, d.inter, f2, "w2");
		L.moe.w13_wgf8 = p13, L.moe.w13_floors = f13, L.moe.w2_wgf8 = p2, L.moe.w2_floors = f2;
	}
}

/* ---- one phase (prefill of T tokens, or a decode step of B requests) ------------- */

struct phase {
	bool decode;
	int T;   /* tokens in the step: prefill T, decode B */
	int ctx; /* decode: context before the step */
	enum mla_kv kv;
	enum kda_dtype sdt;
	/* activations */
	uint16_t *src[SOURCES];
	uint16_t *xa, *attn_out, *xm, *moe_out;
	uint16_t *xqkv, *g, *gate, *beta, *q, *k, *v, *o, *y;
	uint16_t *qa, *qn, *qm, *kv_row, *attn, *ogate, *vo;
	/* materialized prefill: q [T][96][192], latent [N][512], k_rope [N][64], kv_b output [N][96][256] */
	uint16_t *qp, *lat, *krope, *kvx;
	void *kda_ws = nullptr, *moe_ws = nullptr, *mla_ws = nullptr, *gemm_ws = nullptr;
	size_t kda_ws_bytes = 0, moe_ws_bytes = 0, mla_ws_bytes = 0, gemm_ws_bytes = 0;
	int32_t *cu, *slot;
	void *state[3];
	uint16_t *conv_state[3];
	/* MLA cache */
	void *cache;
	int32_t *table, *seqlens, *req, *pos;
	int max_pages;
	/* per-head value up-projection: groups = heads */
	int32_t *uv_off, *uv_tile_off, *uv_touched, *uv_n_touched, *uv_index;
	std::vector<void *> owned;
};

template <typename T>
T *own(phase &p, T *ptr)
{
	p.owned.push_back((void *)ptr);
	return ptr;
}

void phase_init(phase &p)
{
	const int T = p.T;
	for (int i = 0; i < SOURCES; i++)
		p.src[i] = own(p, bf16_buf((size_t)T * D, -1, 1));
	p.xa = own(p, (uint16_t *)dalloc((size_t)T * D * 2));
	p.attn_out = own(p, (uint16_t *)dalloc((size_t)T * D * 2));
	p.xm = own(p, (uint16_t *)dalloc((size_t)T * D * 2));
	p.moe_out = own(p, (uint16_t *)dalloc((size_t)T * D * 2));
	/* KDA */
	p.xqkv = own(p, (uint16_t *)dalloc((size_t)T * KDA_C * 2));
	p.g = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
	p.gate = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
	p.beta = own(p, (uint16_t *)dalloc((size_t)T * H * 2));
	p.y = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
	const size_t sbytes = (size_t)H * HD * HD * (p.sdt == KDA_F32 ? 4 : 2);
	const int slots = p.decode ? T : 1;
	for (int l = 0; l < 3; l++) {
		p.state[l] = own(p, dalloc((size_t)slots * sbytes));
		p.conv_state[l] = own(p, bf16_buf((size_t)slots * 3 * KDA_C, -1, 1));
		if (p.sdt == KDA_F32)
			fill_f32_kernel<<<4096, FILL_THREADS, 0, g_s>>>((float *)p.state[l], (size_t)slots * sbytes / 4, g_seed++, -0.1f, 0.1f);
		else
			fill_bf16_kernel<<<4096, FILL_THREADS, 0, g_s>>>((uint16_t *)p.state[l], (size_t)slots * sbytes / 2, g_seed++, -0.1f, 0.1f);
	}
	std::vector<int32_t> slot_ids(slots);
	for (int i = 0; i < slots; i++)
		slot_ids[i] = i;
	p.slot = own(p, upload(slot_ids));
	if (!p.decode) {
		p.q = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
		p.k = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
		p.v = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
		p.o = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
		p.cu = own(p, upload(std::vector<int32_t>{ 0, T }));
		p.kda_ws_bytes = kda_prefill_workspace_bytes(1, H, T);
		p.kda_ws = own(p, dalloc(p.kda_ws_bytes));
	}
	/* MLA */
	p.qa = own(p, (uint16_t *)dalloc((size_t)T * Q_LORA * 2));
	p.qn = own(p, (uint16_t *)dalloc((size_t)T * Q_LORA * 2));
	p.kv_row = own(p, (uint16_t *)dalloc((size_t)T * MLA_DIM * 2));
	if (p.decode) {
		p.qm = own(p, (uint16_t *)dalloc((size_t)T * H * MLA_DIM * 2));
		p.attn = own(p, (uint16_t *)dalloc((size_t)T * H * MLA_LATENT * 2));
	} else {
		/* One sequence without prefix: the N = T latent rows are the prompt's. */
		p.qp = own(p, (uint16_t *)dalloc((size_t)T * H * MLA_QK_HEAD * 2));
		p.lat = own(p, (uint16_t *)dalloc((size_t)T * MLA_LATENT * 2));
		p.krope = own(p, (uint16_t *)dalloc((size_t)T * MLA_ROPE * 2));
		p.kvx = own(p, (uint16_t *)dalloc((size_t)T * H * (MLA_QK_NOPE + MLA_V_HEAD) * 2));
	}
	p.ogate = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
	p.vo = own(p, (uint16_t *)dalloc((size_t)T * H * HD * 2));
	const int reqs = p.decode ? T : 1;
	const int len = p.decode ? p.ctx + 1 : T;
	p.max_pages = (len + MLA_PAGE_TOKENS - 1) / MLA_PAGE_TOKENS;
	const size_t tb = p.kv == MLA_KV_FP8 ? MLA_FP8_TOKEN_BYTES : MLA_BF16_TOKEN_BYTES;
	const size_t pages = (size_t)reqs * p.max_pages;
	p.cache = own(p, dalloc(pages * MLA_PAGE_TOKENS * tb));
	if (p.kv == MLA_KV_FP8)
		fill_mla_fp8_kernel<<<4096, FILL_THREADS, 0, g_s>>>((uint8_t *)p.cache, pages * MLA_PAGE_TOKENS, g_seed++);
	else
		fill_bf16_kernel<<<4096, FILL_THREADS, 0, g_s>>>((uint16_t *)p.cache, pages * MLA_PAGE_TOKENS * MLA_DIM, g_seed++, -1, 1);
	CK(cudaGetLastError());
	std::vector<int32_t> table(pages), lens(reqs, len), req(T), pos(T);
	for (size_t i = 0; i < pages; i++)
		table[i] = (int32_t)((i * 7919) % pages); /* scattered */
	std::vector<char> seen(pages, 0);
	for (size_t i = 0; i < pages; i++) {
		while (seen[table[i]])
			table[i] = (int32_t)((table[i] + 1) % pages);
		seen[table[i]] = 1;
	}
	for (int t = 0; t < T; t++)
		req[t] = p.decode ? t : 0, pos[t] = p.decode ? p.ctx : t;
	p.table = own(p, upload(table));
	p.seqlens = own(p, upload(lens));
	p.req = own(p, upload(req));
	p.pos = own(p, upload(pos));
	if (p.decode) {
		mla_decode_args m = {};
		m.batch = reqs, m.heads = H, m.qtokens = 1, m.kv = p.kv, m.scale = 1.0f / sqrtf(192.0f);
		m.max_seqlen = len, m.max_pages = p.max_pages;
		KOK(mla_decode_workspace_bytes(&m, &p.mla_ws_bytes));
		p.mla_ws = p.mla_ws_bytes ? own(p, dalloc(p.mla_ws_bytes)) : nullptr;
	}
	/* Value up-projection grouped by head: grouped row h T + t reads attention row t H + h and writes it back there. */
	std::vector<int32_t> off(H + 1), toff(H + 1), touched(H), idx((size_t)T * H);
	for (int h = 0; h <= H; h++)
		off[h] = h * T, toff[h] = h * ((T + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS);
	for (int h = 0; h < H; h++) {
		touched[h] = h;
		for (int t = 0; t < T; t++)
			idx[(size_t)h * T + t] = t * H + h;
	}
	p.uv_off = own(p, upload(off));
	p.uv_tile_off = own(p, upload(toff));
	p.uv_touched = own(p, upload(touched));
	p.uv_n_touched = own(p, upload(std::vector<int32_t>{ H }));
	p.uv_index = own(p, upload(idx));
	/* The dense GEMMs' workspace (decode sizes split over k): the largest any of them needs. */
	const int shapes[][2] = { { KDA_C, D }, { H * HD, D }, { H, D }, { D, H * HD }, { Q_LORA, D },
				  { H * MLA_DIM, Q_LORA }, { MLA_DIM, D }, { H * MLA_QK_HEAD, Q_LORA },
				  { H * (MLA_QK_NOPE + MLA_V_HEAD), MLA_LATENT } };
	for (const auto &nk : shapes) {
		k3_gemm_args g = {};
		g.rows = T, g.N = nk[0], g.K = nk[1], g.w_dtype = K3_W_BF16, g.epi = K3_EPI_BF16;
		size_t b = 0;
		KOK(k3_gemm_workspace_bytes(&g, &b));
		p.gemm_ws_bytes = std::max(p.gemm_ws_bytes, b);
	}
	p.gemm_ws = p.gemm_ws_bytes ? own(p, dalloc(p.gemm_ws_bytes)) : nullptr;
	KOK(moe_layer_workspace_bytes(&g_dims, T, K3_GEMM_AUTO, &p.moe_ws_bytes));
	p.moe_ws = own(p, dalloc(p.moe_ws_bytes));
	CK(cudaStreamSynchronize(g_s));
}

void phase_free(phase &p)
{
	for (void *ptr : p.owned)
		CK(cudaFree(ptr));
	p.owned.clear();
}

/* The GEMMs of the phase: "m n k kernel" (dense and the MLA's per-head grouped one), noted
 * in the warm-up step only (no host work in the timed ones). */
std::set<std::string> g_gemm_kernels;
bool g_noting = false;

const char *path_name(int path)
{
	return path == K3_GEMM_GEMV ? "gemv"
	       : path == K3_GEMM_TILED_MMA ? "tiled-mma"
	       : path == K3_GEMM_TILED_WGMMA ? "tiled-wgmma"
					     : "?";
}

void note_gemm(const k3_gemm_args &g)
{
	if (!g_noting)
		return;
	char what[96];
	snprintf(what, sizeof what, "%s%lld x %d x %d %s", g.n_groups ? "grouped " : "", (long long)g.rows, g.N, g.K,
		 path_name(k3_gemm_path_for(&g)));
	g_gemm_kernels.insert(what);
}

/* A dense BF16 GEMM of the step: out = a W^T (the phase's workspace for the split-k decode path). */
void gemm(phase &p, int M, int N, int K, const uint16_t *a, const uint16_t *w, uint16_t *out)
{
	const enum k3_epilogue epi = K3_EPI_BF16;
	const uint16_t *addend = nullptr;
	void *ws = p.gemm_ws;
	const size_t ws_bytes = p.gemm_ws_bytes;
	k3_gemm_args g = {};
	g.rows = M, g.N = N, g.K = K, g.a = a, g.w = w, g.w_dtype = K3_W_BF16, g.epi = epi, g.out = out;
	g.addend = addend, g.beta_gate = 4.0f, g.beta_up = 25.0f;
	size_t need = 0;
	KOK(k3_gemm_workspace_bytes(&g, &need));
	if (need > ws_bytes) {
		fprintf(stderr, "k3-slice: gemm m=%d n=%d k=%d needs %zu bytes of workspace, %zu given\n", M, N, K, need,
			ws_bytes);
		exit(1);
	}
	g.workspace = ws, g.workspace_bytes = ws_bytes;
	char spec[128];
	snprintf(spec, sizeof spec, "k3sim op=gemm m=%d n=%d k=%d dtype=bf16", M, N, K);
	range r(spec);
	note_gemm(g);
	KOK(k3_gemm(&g, g_s));
}

/* AttnRes before a sublayer: the partial (last source) takes `delta` first. */
void attn_res(phase &p, const uint16_t *delta, const uint16_t *query, const uint16_t *norm, uint16_t *out)
{
	attnres_args a = {};
	a.tokens = p.T, a.dim = D, a.n_sources = SOURCES;
	for (int i = 0; i < SOURCES; i++)
		a.src[i] = p.src[i];
	a.delta = delta, a.partial_out = p.src[SOURCES - 1], a.query = query, a.norm_w = norm, a.eps = 1e-6f, a.out = out;
	char spec[128];
	snprintf(spec, sizeof spec, "k3sim op=attnres tokens=%d dim=%d sources=%d delta=%d dtype=bf16", p.T, D, SOURCES,
		 delta ? 1 : 0);
	range r(spec);
	KOK(attnres(&a, g_s));
}

/* RMSNorm as AttnRes over one source (the softmax of one score is 1). */
void rmsnorm(int T, int dim, const uint16_t *x, const uint16_t *w, uint16_t *out)
{
	attnres_args a = {};
	a.tokens = T, a.dim = dim, a.n_sources = 1, a.src[0] = x, a.query = w, a.norm_w = w, a.eps = 1e-6f, a.out = out;
	char spec[128];
	snprintf(spec, sizeof spec, "k3sim op=attnres tokens=%d dim=%d sources=1 dtype=bf16", T, dim);
	range r(spec);
	KOK(attnres(&a, g_s));
}

void kda_attention(phase &p, const kda_weights &w, int l)
{
	const int T = p.T;
	gemm(p, T, KDA_C, D, p.xa, w.qkv, p.xqkv);
	gemm(p, T, H * HD, D, p.xa, w.g, p.g);
	gemm(p, T, H * HD, D, p.xa, w.gate, p.gate);
	gemm(p, T, H, D, p.xa, w.beta, p.beta);
	const char *st = p.sdt == KDA_F32 ? "fp32" : "bf16";
	char spec[160];
	if (p.decode) {
		kda_decode_args a = {};
		a.batch = T, a.heads = H, a.state_dtype = p.sdt, a.scale = 1.0f / sqrtf((float)HD), a.norm_eps = 1e-6f;
		a.x = p.xqkv, a.g_raw = p.g, a.beta_raw = p.beta, a.gate_raw = p.gate, a.conv_w = w.conv_w;
		a.norm_w = w.norm_w, a.slot = p.slot, a.state = p.state[l], a.conv_state = p.conv_state[l], a.out = p.y;
		snprintf(spec, sizeof spec, "k3sim op=kda_decode b=%d h=%d k=%d v=%d state=%s conv=4", T, H, HD, HD, st);
		range r(spec);
		KOK(kda_decode(&a, g_s));
	} else {
		k3_short_conv_args c = {};
		c.n_seqs = 1, c.total_tokens = T, c.channels = KDA_C, c.cu_seqlens = p.cu, c.x = p.xqkv, c.w = w.conv_w;
		c.conv_state = p.conv_state[l], c.slot = p.slot, c.out[0] = p.q, c.out[1] = p.k, c.out[2] = p.v;
		{
			snprintf(spec, sizeof spec, "k3sim op=short_conv tokens=%d channels=%d taps=%d dtype=bf16", T, KDA_C,
				 K3_CONV_TAPS);
			range r(spec);
			KOK(k3_short_conv(&c, g_s));
		}
		kda_prefill_args a = {};
		a.n_seqs = 1, a.heads = H, a.total_tokens = T, a.cu_seqlens = p.cu, a.state_dtype = p.sdt;
		a.scale = 1.0f / sqrtf((float)HD), a.q = p.q, a.k = p.k, a.v = p.v, a.g_raw = p.g, a.beta_raw = p.beta;
		a.state_slot = p.slot, a.initial_state = nullptr, a.final_state = p.state[l], a.out = p.o;
		a.workspace = p.kda_ws;
		{
			snprintf(spec, sizeof spec, "k3sim op=kda_chunk b=1 t=%d h=%d k=%d v=%d state=%s chunk=16 ctx=0", T, H,
				 HD, HD, st);
			range r(spec);
			KOK(kda_prefill(&a, g_s));
		}
		k3_gated_norm_args n = {};
		n.tokens = T, n.heads = H, n.eps = 1e-6f, n.o = p.o, n.gate = p.gate, n.norm_w = w.norm_w, n.out = p.y;
		{
			snprintf(spec, sizeof spec, "k3sim op=elementwise m=%d n=%d in=2 out=1 dtype=bf16", T, H * HD);
			range r(spec);
			KOK(k3_gated_norm(&n, g_s));
		}
	}
	gemm(p, T, D, H * HD, p.y, w.o, p.attn_out);
}

/* The queries (q_a, its RMSNorm, then q_cols columns of q_b: the materialized or the absorbed
 * form) and the new latent rows normed into the cache: the start of both MLA forms. */
static void mla_q_and_append(phase &p, const mla_weights &w, int q_cols, const uint16_t *qb, uint16_t *q)
{
	const int T = p.T;
	char spec[192];
	gemm(p, T, Q_LORA, D, p.xa, w.qa, p.qa);
	rmsnorm(T, Q_LORA, p.qa, w.qa_norm, p.qn);
	gemm(p, T, q_cols, Q_LORA, p.qn, qb, q);
	gemm(p, T, MLA_DIM, D, p.xa, w.kva, p.kv_row);
	mla_append_args ap = {};
	ap.tokens = T, ap.kv = p.kv, ap.eps = 1e-6f, ap.kv_in = p.kv_row, ap.ld = MLA_DIM, ap.norm_w = w.kv_norm;
	ap.req = p.req, ap.pos = p.pos, ap.block_table = p.table, ap.max_pages = p.max_pages, ap.cache = p.cache;
	snprintf(spec, sizeof spec, "k3sim op=elementwise m=%d n=%d in=1 out=1 dtype=bf16", T, MLA_DIM);
	range r(spec);
	KOK(mla_append(&ap, g_s));
}

/* Prefill, materialized (DeepSeek-V3's prefill form; the ops k3sim's model emits for it): q
 * through q_b (192 columns a head), the new latent rows into the cache, the sequence's latent
 * rows out of it, expanded per head through kv_b (k_nope | v, 256 columns a head), the output
 * gate, then causal attention with the gate fused (out = attention * sigmoid(gate)) and the
 * output projection. One sequence without prefix: the cache holds the T new rows. */
void mla_prefill_attention(phase &p, const mla_weights &w)
{
	const int T = p.T, N = T;
	const int KV_HEAD = MLA_QK_NOPE + MLA_V_HEAD;
	char spec[192];
	mla_q_and_append(p, w, H * MLA_QK_HEAD, w.qb, p.qp);
	mla_gather_args ga = {};
	ga.batch = 1, ga.tokens = N, ga.kv = p.kv, ga.cache = p.cache, ga.block_table = p.table;
	ga.max_pages = p.max_pages, ga.latent = p.lat, ga.k_rope = p.krope;
	{
		snprintf(spec, sizeof spec, "k3sim op=elementwise m=%d n=%d in=1 out=1 dtype=bf16", N, MLA_DIM);
		range r(spec);
		KOK(mla_prefill_gather(&ga, g_s));
	}
	gemm(p, N, H * KV_HEAD, MLA_LATENT, p.lat, w.kvb, p.kvx);
	gemm(p, T, H * HD, D, p.xa, w.og, p.ogate);
	mla_prefill_args a = {};
	a.batch = 1, a.heads = H, a.tokens = T, a.prefix = N - T, a.scale = 1.0f / sqrtf((float)MLA_QK_HEAD);
	a.q = p.qp, a.k_nope = p.kvx, a.v = p.kvx + MLA_QK_NOPE, a.ld_kv = (int64_t)H * KV_HEAD, a.head_stride = KV_HEAD;
	a.k_rope = p.krope, a.gate = p.ogate, a.out = p.vo, a.lse = nullptr;
	{
		snprintf(spec, sizeof spec, "k3sim op=mla_prefill b=1 t=%d ctx=%d heads=%d dqk=%d dv=%d kv=%s", T, N - T, H,
			 MLA_QK_HEAD, MLA_V_HEAD, p.kv == MLA_KV_FP8 ? "fp8" : "bf16");
		range r(spec);
		KOK(mla_prefill(&a, g_s));
	}
	gemm(p, T, D, H * HD, p.vo, w.o, p.attn_out);
}

/* Decode, absorbed (the latent cache, q_b with W_UK folded in, W_UV per head after). */
void mla_attention(phase &p, const mla_weights &w)
{
	if (!p.decode) {
		mla_prefill_attention(p, w);
		return;
	}
	const int T = p.T;
	char spec[192];
	mla_q_and_append(p, w, H * MLA_DIM, w.qabs, p.qm);
	mla_decode_args m = {};
	const int reqs = T, len = p.ctx + 1;
	m.batch = reqs, m.heads = H, m.qtokens = 1, m.kv = p.kv, m.scale = 1.0f / sqrtf(192.0f);
	m.max_seqlen = len, m.q = p.qm, m.cache = p.cache, m.block_table = p.table, m.max_pages = p.max_pages;
	m.seqlens = p.seqlens, m.out = p.attn, m.workspace = p.mla_ws, m.workspace_bytes = p.mla_ws_bytes;
	{
		/* The op's ctx is the cached tokens before the new one. */
		const int qt = 1;
		snprintf(spec, sizeof spec, "k3sim op=mla_decode b=%d heads=%d ctx=%d kv=%s t=%d", reqs, H, len - qt,
			 p.kv == MLA_KV_FP8 ? "fp8" : "bf16", qt);
		range r(spec);
		KOK(mla_decode(&m, g_s));
	}
	gemm(p, T, H * HD, D, p.xa, w.og, p.ogate);
	/* Per-head value up-projection with the output gate, grouped by head. */
	k3_gemm_args g = {};
	g.rows = (int64_t)T * H, g.N = HD, g.K = MLA_LATENT, g.n_groups = H, g.off = p.uv_off, g.tile_off = p.uv_tile_off;
	g.touched = p.uv_touched, g.n_touched = p.uv_n_touched, g.a_index = p.uv_index, g.out_index = p.uv_index;
	g.a = p.attn, g.w = w.uv, g.w_dtype = K3_W_BF16, g.epi = K3_EPI_GATE, g.addend = p.ogate, g.out = p.vo;
	{
		snprintf(spec, sizeof spec, "k3sim op=grouped_gemm m=%d n=%d k=%d groups=%d touched=%d dtype=bf16", T * H, HD,
			 MLA_LATENT, H, H);
		range r(spec);
		note_gemm(g);
		KOK(k3_gemm(&g, g_s));
	}
	gemm(p, T, D, H * HD, p.vo, w.o, p.attn_out);
}

/* The whole step; sub[2 l] and sub[2 l + 1] (if given) record the ends of layer l's sublayers;
 * stats (if given) gets each layer's routed rows per expert (an untimed step: the copies wait
 * for the stream). */
void step(phase &p, std::vector<layer_weights> &layers, cudaEvent_t *sub, route_stats *stats = nullptr)
{
	const moe_hook hook = { moe_hook_fn, nullptr };
	for (int l = 0; l < N_LAYERS; l++) {
		layer_weights &L = layers[l];
		attn_res(p, l == 0 ? nullptr : p.moe_out, L.attn_query, L.attn_norm, p.xa);
		if (L.mla)
			mla_attention(p, L.m);
		else
			kda_attention(p, L.k, l);
		if (sub)
			CK(cudaEventRecord(sub[2 * l], g_s));
		attn_res(p, p.attn_out, L.moe_query, L.moe_norm, p.xm);
		KOK(moe_layer_forward(&g_dims, &L.moe, p.T, p.xm, p.moe_out, p.moe_ws, p.moe_ws_bytes, K3_GEMM_AUTO, &hook, g_s));
		if (stats) {
			struct moe_layer_views v;
			moe_layer_views(&g_dims, p.T, p.moe_ws, &v);
			std::vector<int32_t> ids((size_t)p.T * g_dims.topk);
			CK(cudaMemcpyAsync(ids.data(), v.topk_ids, ids.size() * sizeof(int32_t), cudaMemcpyDeviceToHost, g_s));
			CK(cudaStreamSynchronize(g_s));
			route_stats_layer(*stats, l, ids, g_dims.experts);
			stats->valid = true;
		}
		if (sub)
			CK(cudaEventRecord(sub[2 * l + 1], g_s));
	}
}

struct options {
	const char *out = "k3-slice.csv";
	std::vector<int> prefill{ 4096, 16384 };
	std::vector<std::pair<int, int>> decode{ { 1, 8192 }, { 16, 8192 }, { 64, 8192 }, { 256, 8192 },
						 { 1, 65536 }, { 16, 65536 }, { 64, 65536 }, { 256, 65536 } };
	enum mla_kv kv = MLA_KV_BF16;
	enum kda_dtype sdt = KDA_F32;
	enum k3_adtype expert_act = K3_A_BF16; /* --expert-act: the routed experts' activations */
	int reps = 5;
	int sustain_ms = 0;             /* --sustain-ms: each step also back to back this long */
	const char *sustain_out = nullptr; /* its CSV (default: the output's name with -sustained) */
};

FILE *g_csv, *g_sustain_csv;

double median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0.0 : v[v.size() / 2];
}

/* --sustain-ms: the step run back to back for about ms milliseconds (launch(): one step, enqueued
 * without a host sync; ranges off, so that no op range of trace validate counts these instances),
 * an event after each, inside one NVTX range "k3-slice sustained ..." (so that a capture's clock and
 * power readings can be read over it); each step's time into the sustained CSV with its start in ms
 * from the run's start, and the median of the second half (the steady state) printed. */
template <typename F>
void sustain(const options &o, const char *ph, const char *kind, int b, int t, int c, double step_ms, F launch)
{
	if (o.sustain_ms <= 0 || !(step_ms > 0))
		return;
	const int n = (int)std::min(20000.0, std::max(4.0, std::ceil(o.sustain_ms / step_ms)));
	std::vector<cudaEvent_t> ev(n + 1);
	for (auto &e : ev)
		CK(cudaEventCreate(&e));
	const char *kv = o.kv == MLA_KV_FP8 ? "fp8" : "bf16", *st = o.sdt == KDA_F32 ? "fp32" : "bf16";
	char label[128];
	snprintf(label, sizeof label, "k3-slice sustained %s %s b=%d t=%d ctx=%d kv=%s state=%s", ph, kind, b, t, c, kv, st);
	const bool ranges = g_ranges;
	const int gap = g_gap_ms;
	g_ranges = false, g_gap_ms = 0;
	nvtxRangePushA(label);
	CK(cudaEventRecord(ev[0], g_s));
	for (int i = 0; i < n; i++) {
		launch();
		CK(cudaEventRecord(ev[i + 1], g_s));
	}
	CK(cudaEventSynchronize(ev[n]));
	nvtxRangePop();
	g_ranges = ranges, g_gap_ms = gap;
	std::vector<float> tail;
	float at = 0;
	for (int i = 0; i < n; i++) {
		float ms;
		CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
		fprintf(g_sustain_csv, "%s,%s,%d,%d,%d,%s,%s,%d,%.3f,%.3f\n", ph, kind, b, t, c, kv, st, i, at, 1e3 * ms);
		at += ms;
		if (i >= n / 2)
			tail.push_back(ms);
	}
	fflush(g_sustain_csv);
	printf("  sustained %s %d steps in %.0f ms: %.1f us (median of the second half)", kind, n, at, 1e3 * median(tail));
	for (auto &e : ev)
		CK(cudaEventDestroy(e));
}

void run_phase(const options &o, std::vector<layer_weights> &layers, bool decode, int T, int ctx)
{
	phase p = {};
	p.decode = decode, p.T = T, p.ctx = ctx, p.kv = o.kv, p.sdt = o.sdt;
	phase_init(p);
	cudaEvent_t e0, sub[2 * N_LAYERS];
	CK(cudaEventCreate(&e0));
	for (auto &e : sub)
		CK(cudaEventCreate(&e));
	/* Warm-up (configures the kernels outside any graph), without ranges; it also reads each
	 * layer's routing (the timed steps run the same inputs, so the same routing). */
	g_ranges = false;
	g_noting = true;
	route_stats rs;
	step(p, layers, nullptr, &rs);
	g_noting = false;
	CK(cudaStreamSynchronize(g_s));
	if (decode) {
		/* More untimed steps, 50 ms at least: a decode phase that follows a larger one (the
		 * grid's B = 1 at C = 64K after B = 256 at C = 8K, whose GBs were just freed) ran its
		 * first ~15 ms slower on an H100 (the m = 1 gemv 212 us a launch instead of 177; round
		 * 06h, runs o1-o3: B = 1 at 8K 3.31 ms eager right after B = 256, 2.91-2.94 otherwise). */
		const auto t0 = std::chrono::steady_clock::now();
		for (int w = 0; w < 3 || std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50); w++) {
			step(p, layers, nullptr);
			CK(cudaStreamSynchronize(g_s));
		}
	}
	g_ranges = true;
	std::vector<float> total;
	std::vector<std::vector<float>> part(2 * N_LAYERS);
	const int reps = decode ? o.reps : std::max(2, o.reps / 2);
	for (int r = 0; r < reps; r++) {
		CK(cudaEventRecord(e0, g_s));
		step(p, layers, sub);
		CK(cudaEventSynchronize(sub[2 * N_LAYERS - 1]));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, sub[2 * N_LAYERS - 1]));
		total.push_back(ms);
		for (int i = 0; i < 2 * N_LAYERS; i++) {
			CK(cudaEventElapsedTime(&ms, i ? sub[i - 1] : e0, sub[i]));
			part[i].push_back(ms);
		}
	}
	const char *kv = o.kv == MLA_KV_FP8 ? "fp8" : "bf16", *st = o.sdt == KDA_F32 ? "fp32" : "bf16";
	const char *ph = decode ? "decode" : "prefill";
	const int b = decode ? T : 1, t = decode ? 1 : T, c = decode ? ctx : 0;
	fprintf(g_csv, "%s,eager,step,%d,%d,%d,%s,%s,%.3f,%d\n", ph, b, t, c, kv, st, 1e3 * median(total), reps);
	for (int i = 0; i < 2 * N_LAYERS; i++) {
		char what[48];
		snprintf(what, sizeof what, "layer%d_%s_%s", 89 + i / 2, i / 2 == MLA_LAYER ? "mla" : "kda",
			 i % 2 ? "moe" : "attn");
		fprintf(g_csv, "%s,eager,%s,%d,%d,%d,%s,%s,%.3f,%d\n", ph, what, b, t, c, kv, st, 1e3 * median(part[i]), reps);
	}
	printf("%-7s B=%-4d T=%-6d ctx=%-6d kv=%s state=%s  step %10.1f us (eager)", ph, b, t, c, kv, st,
	       1e3 * median(total));
	if (!decode) /* decode: the graph, below */
		sustain(o, ph, "eager", b, t, c, median(total), [&] { step(p, layers, nullptr); });
	/* Decode: the step as one CUDA graph, replayed. */
	if (decode) {
		cudaGraph_t gr;
		cudaGraphExec_t ex;
		g_ranges = false;
		CK(cudaStreamBeginCapture(g_s, cudaStreamCaptureModeThreadLocal));
		step(p, layers, nullptr);
		CK(cudaStreamEndCapture(g_s, &gr));
		g_ranges = true;
		CK(cudaGraphInstantiate(&ex, gr, 0));
		CK(cudaGraphLaunch(ex, g_s));
		CK(cudaStreamSynchronize(g_s));
		char label[96];
		snprintf(label, sizeof label, "k3-slice decode graph b=%d ctx=%d kv=%s state=%s", T, ctx, kv, st);
		std::vector<float> g;
		for (int r = 0; r < std::max(o.reps, 5); r++) {
			nvtxRangePushA(label);
			CK(cudaEventRecord(e0, g_s));
			CK(cudaGraphLaunch(ex, g_s));
			CK(cudaEventRecord(sub[0], g_s));
			CK(cudaEventSynchronize(sub[0]));
			nvtxRangePop();
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, sub[0]));
			g.push_back(ms);
		}
		fprintf(g_csv, "%s,graph,step,%d,%d,%d,%s,%s,%.3f,%zu\n", ph, b, t, c, kv, st, 1e3 * median(g), g.size());
		printf("  %10.1f us (graph)", 1e3 * median(g));
		sustain(o, ph, "graph", b, t, c, median(g), [&] { CK(cudaGraphLaunch(ex, g_s)); });
		CK(cudaGraphExecDestroy(ex));
		CK(cudaGraphDestroy(gr));
	}
	printf("\n");
	/* The experts the step's routing touched and the rows each got, layer by layer (read in the
	 * warm-up step), beside what uniform routing gives: T tokens picking top-k of E. */
	if (rs.valid) {
		const double E = g_dims.experts, K = g_dims.topk, tok = T;
		const double uniform = E * (1.0 - pow(1.0 - K / E, tok));
		const double umean = tok * K / uniform; /* rows per touched expert */
		const double ucv = sqrt(tok * (K / E) * (1.0 - K / E)) / (tok * K / E);
		if (decode) {
			printf("  touched experts:");
			for (int l = 0; l < N_LAYERS; l++)
				printf(" %d", rs.touched[l]);
			printf(" (layers %d-%d; uniform routing: %.0f)\n", 89, 89 + N_LAYERS - 1, uniform);
		}
		printf("  expert rows (layers %d-%d; touched, mean, cv, max, chunks of 128 / 160 / 176):", 89,
		       89 + N_LAYERS - 1);
		for (int l = 0; l < N_LAYERS; l++)
			printf(" [%d %.1f %.3f %d %ld/%ld/%ld]", rs.touched[l], rs.mean[l], rs.cv[l], rs.max[l],
			       rs.chunks[l][0], rs.chunks[l][1], rs.chunks[l][2]);
		printf(" (uniform routing: touched %.0f, mean %.1f, cv %.3f)\n", uniform, umean, ucv);
	}
	/* The kernels the GEMMs launched: the MoE layer's, then the attention's. */
	int mp[MOE_LAYER_GEMMS];
	KOK(moe_layer_gemm_paths(&g_dims, T, K3_GEMM_AUTO, mp));
	printf("  gemm kernels: moe");
	for (int i = 0; i < MOE_LAYER_GEMMS; i++)
		if (mp[i])
			printf(" %s=%s", moe_layer_gemm_names[i], path_name(mp[i]));
	printf("; attention");
	for (const std::string &k : g_gemm_kernels)
		printf(" [%s]", k.c_str());
	printf("\n");
	g_gemm_kernels.clear();
	fflush(stdout);
	fflush(g_csv);
	CK(cudaEventDestroy(e0));
	for (auto &e : sub)
		CK(cudaEventDestroy(e));
	phase_free(p);
}

bool parse_list(const char *s, std::vector<int> &out)
{
	out.clear();
	for (const char *q = s; *q;) {
		char *end;
		const long v = strtol(q, &end, 10);
		if (end == q || v < 1 || v > (1 << 20))
			return false;
		out.push_back((int)v);
		q = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return false;
	}
	return !out.empty();
}

/* A whole decimal integer in [lo, hi] into *out (nothing else in s), or false. */
bool parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	errno = 0;
	const long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

bool parse_pairs(const char *s, std::vector<std::pair<int, int>> &out)
{
	out.clear();
	for (const char *q = s; *q;) {
		char *end;
		const long b = strtol(q, &end, 10);
		if (end == q || *end != ':' || b < 1 || b > 4096)
			return false;
		const char *c0 = end + 1;
		const long c = strtol(c0, &end, 10);
		if (end == c0 || c < 1 || c > (1 << 20))
			return false;
		out.push_back({ (int)b, (int)c });
		if (*end && *end != ',')
			return false;
		q = *end == ',' ? end + 1 : end;
	}
	return !out.empty();
}

int usage(const char *argv0, int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: %s [-o FILE.csv] [--prefill T[,T..]] [--decode B:C[,B:C..]] [--kv bf16|fp8]\n"
		"          [--state fp32|bf16] [--expert-act bf16|e4m3] [--reps N] [--quick] [--gap-ms N]\n"
		"          [--sustain-ms N [--sustain-out F]]\n"
		"Four K3 layers (89-92: 3 KDA + 1 Gated MLA, AttnRes, LatentMoE with MXFP4 experts) at real\n"
		"dimensions with random weights: prefill steps of T tokens and decode steps of B requests at\n"
		"context C, every op in an NVTX range in `k3sim op` syntax, decode also as a CUDA graph.\n"
		"--expert-act e4m3: the routed experts' activations E4M3 with a scale a row (the latent rows\n"
		"quantized, w13 writing E4M3; the FP8 wgmma kernel at every step, decode too; needs an sm_90a\n"
		"build on compute capability 9.0); default bf16. The first line printed names it.\n"
		"--gap-ms N: a diagnostic: before each routed expert GEMM of the timed eager steps, drain the\n"
		"stream and sleep N ms (the GEMM starts on an idle GPU, as in the bench; steps include the gaps).\n"
		"--sustain-ms N: after each shape's timed steps, the step back to back for ~N ms (prefill eager,\n"
		"decode as its graph; no op ranges, one NVTX range 'k3-slice sustained ...'): each step's time\n"
		"into --sustain-out (default: the output's name with -sustained.csv), the power limiter's steady\n"
		"state, which `k3sim run --clock power` predicts.\n",
		argv0);
	return rc;
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(argv[0], 0);
		if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v)
			o.out = v, i++;
		else if (!strcmp(a, "--prefill") && v && parse_list(v, o.prefill))
			i++;
		else if (!strcmp(a, "--decode") && v && parse_pairs(v, o.decode))
			i++;
		else if (!strcmp(a, "--kv") && v && (!strcmp(v, "bf16") || !strcmp(v, "fp8")))
			o.kv = !strcmp(v, "fp8") ? MLA_KV_FP8 : MLA_KV_BF16, i++;
		else if (!strcmp(a, "--state") && v && (!strcmp(v, "fp32") || !strcmp(v, "bf16")))
			o.sdt = !strcmp(v, "bf16") ? KDA_BF16 : KDA_F32, i++;
		else if (!strcmp(a, "--expert-act") && v && (!strcmp(v, "bf16") || !strcmp(v, "e4m3")))
			o.expert_act = !strcmp(v, "e4m3") ? K3_A_E4M3_ROW : K3_A_BF16, i++;
		else if (!strcmp(a, "--reps") && v && parse_int(v, 1, 1000, &o.reps))
			i++;
		else if (!strcmp(a, "--gap-ms") && v && parse_int(v, 0, 10000, &g_gap_ms))
			i++;
		else if (!strcmp(a, "--sustain-ms") && v && parse_int(v, 0, 600000, &o.sustain_ms))
			i++;
		else if (!strcmp(a, "--sustain-out") && v)
			o.sustain_out = v, i++;
		else if (!strcmp(a, "--quick"))
			o.prefill = { 4096 }, o.decode = { { 1, 8192 }, { 64, 8192 } }, o.reps = 3;
		else {
			fprintf(stderr, "k3-slice: bad argument '%s'%s\n", a, v ? "" : " (or a missing value)");
			return usage(argv[0], 2);
		}
	}
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		fprintf(stderr, "k3-slice: no CUDA device\n");
		return 1;
	}
	g_csv = fopen(o.out, "w");
	if (!g_csv) {
		fprintf(stderr, "k3-slice: cannot write '%s': %s\n", o.out, strerror(errno));
		return 1;
	}
	fprintf(g_csv, "phase,kind,part,batch,tokens,ctx,kv,state,time_us,reps\n");
	std::string sustain_name;
	if (o.sustain_ms > 0) {
		if (o.sustain_out)
			sustain_name = o.sustain_out;
		else {
			sustain_name = o.out;
			const size_t dot = sustain_name.rfind(".csv");
			sustain_name = dot != std::string::npos && dot + 4 == sustain_name.size()
					       ? sustain_name.substr(0, dot) + "-sustained.csv"
					       : sustain_name + "-sustained.csv";
		}
		if (sustain_name == o.out) {
			fprintf(stderr, "k3-slice: --sustain-out is the output '%s'\n", o.out);
			return 2;
		}
		g_sustain_csv = fopen(sustain_name.c_str(), "w");
		if (!g_sustain_csv) {
			fprintf(stderr, "k3-slice: cannot write '%s': %s\n", sustain_name.c_str(), strerror(errno));
			return 1;
		}
		fprintf(g_sustain_csv, "phase,kind,batch,tokens,ctx,kv,state,rep,start_ms,time_us\n");
	}
	CK(cudaStreamCreateWithFlags(&g_s, cudaStreamNonBlocking));
	g_dims = moe_dims_k3();
	g_dims.expert_act = o.expert_act;
	int probe_paths[MOE_LAYER_GEMMS];
	if (o.expert_act == K3_A_E4M3_ROW && moe_layer_gemm_paths(&g_dims, 4096, K3_GEMM_AUTO, probe_paths)) { /* before the set-up */
		fprintf(stderr, "k3-slice: --expert-act e4m3: no FP8 wgmma kernel in this build for this device "
				"(an sm_90a build on compute capability 9.0)\n");
		return 1;
	}
	std::vector<layer_weights> layers(N_LAYERS);
	for (int l = 0; l < N_LAYERS; l++)
		make_layer(layers[l], l == MLA_LAYER);
	CK(cudaStreamSynchronize(g_s));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	printf("k3-slice: %s, layers 89-92 (KDA KDA KDA MLA), %.1f GB of weights, expert activations %s\n", prop.name,
	       g_weight_bytes / 1e9, g_dims.expert_act == K3_A_E4M3_ROW ? "e4m3" : "bf16");
	{
		k3_gemm_args probe = {};
		probe.rows = 4096, probe.N = 4096, probe.K = 4096, probe.n_groups = 8;
		probe.w_dtype = K3_W_BF16, probe.path = K3_GEMM_TILED_WGMMA;
		printf("k3-slice: tiled GEMM kernels: %s\n", k3_gemm_path_for(&probe) == K3_GEMM_TILED_WGMMA
								     ? "wgmma and mma.sync"
								     : "mma.sync only (no wgmma kernel in this build for this device)");
	}
	for (int T : o.prefill)
		run_phase(o, layers, false, T, 0);
	for (auto &bc : o.decode)
		run_phase(o, layers, true, bc.first, bc.second);
	fclose(g_csv);
	if (g_sustain_csv)
		fclose(g_sustain_csv);
	printf("k3-slice: done, %s%s%s\n", o.out, g_sustain_csv ? ", " : "", sustain_name.c_str());
	return 0;
}
