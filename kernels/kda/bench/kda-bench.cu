/* SPDX-License-Identifier: MIT */
/*
 * kda-bench: KDA kernel timings on the GPU at hand, written as CSV.
 *
 *   kda-bench -o results.csv [--quick] [--reps N] [--only copy|decode|verify|prefill] [--batch B,B,...]
 *             [--prefill-t T,T,...] [--prefill-h H,H,...]
 *   (--prefill-t / --prefill-h: the one-sequence FP32 prefill grid's tokens / heads, instead of
 *   the default grid; the BF16, 4 x 4K and varlen rows stay.
 *   --batch: the decode points at H = 96 and these batches only; each decode row at H = 96 and
 *   B = 1 or >= 64 is followed by a `copy_same` row: cudaMemcpy of the same bytes, timed alike)
 *   [--ring-opt O,O,...] [--trace] [--state fp32|bf16]
 *   (--ring-opt: each decode point timed once per O, in this order, on the same buffers, with
 *   KDA_DECODE_RING_OPT=O (kda_decode.cu: none, early, hint, bulkst joined by '+'; `default`:
 *   the variable unset), the CSV op `decode@O`; an A/B in one process. --trace: after each
 *   decode row, 4 back-to-back launches with KDA_DECODE_RING_TRACE=0..3 and a summary of their
 *   per-CTA stamps: first-byte latency, ramp, per-item time, tail, gaps; ring kernel only.
 *   --state: the decode points of that state dtype only)
 *   [--prefill-state fp32,bf16] [--prefill-ab 'LABEL:VAR=X,VAR=Y;LABEL:...'] [--prefill-rounds N]
 *   [--prefill-seqs N,N,...] [--prefill-burst N] [--prefill-gap-ms MS]
 *   (--prefill-state: the one-sequence grid and 4 x 4K in each state dtype, no varlen rows;
 *   --prefill-seqs with it: each (T, H) point also as N sequences of T / N tokens, for each N.
 *   --prefill-ab: each prefill point timed once per set, back to back on the same buffers, the
 *   set's variables set after the prefill knobs (K3_KDA_PREFILL, K3_KDA_RECUR_STAGES,
 *   K3_KDA_RECUR_WARPS, K3_KDA_INTRA, K3_KDA_FLAG_WAIT, K3_KDA_RECUR, K3_KDA_INTRA_PF(_MODE),
 *   K3_KDA_SPLIT_OPT) and every variable any set names are unset; the
 *   CSV op `prefill@LABEL`; the sets cycled --prefill-rounds times. Each printed row names the
 *   path kda_prefill() took: took=serial | overlap)
 *   (--prefill-burst N: each prefill point as bursts instead of single launches: --prefill-gap-ms
 *   idle (default 1000), 3 launches, N back to back between two events, their mean; the row is
 *   the median over the bursts, its op `prefill_burst[@LABEL]`, and the SM clock, power and
 *   temperature read right after each burst are printed: a rested card's time, the regime of a
 *   short graph-replay benchmark such as AIConfigurator's collector (3 warm-ups, 6 runs))
 *   (K3_BENCH_SUSTAIN_MS=N in the environment: each timed row then back to back for ~N ms, one NVTX
 *   range "k3-bench sustained op=..." (the steady draw under the power limiter), as k3-bench's)
 *   (K3_BENCH_HOG_MS=X / K3_BENCH_COOL_MS=X: before each timed single launch, X ms of cuBLASLt
 *   GEMMs at the power limit / of idle, as k3-bench's (common/bench_pace.cuh): each op's time at a
 *   capped and at the boost clock, KDA's clock share by bench/power/clock-bound.py)
 *
 * Every figure is the median (and p10/p90) of CUDA-event timings of single
 * launches after warm-up, on random (never zero) data. Decode and verify
 * rotate over enough state slots that consecutive launches never find their
 * state in L2. The device copy bandwidth (a large device-to-device copy,
 * bytes read + written) is measured first; GB/s columns are divided by it.
 *
 * Capture hook: bench_range() names the op being timed in `k3sim op` syntax; every
 * timed launch then sits in an NVTX range with that text, so a capture of this program
 * (k3sim trace capture -- kda-bench ...) maps each kernel to its model op.
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "common/bench_pace.cuh"
#include "common/bench_sustain.cuh"
#include "trace/capture/gpumon.h"
#include <time.h>

#include "kda/kda_decode.h"
#include "kda/kda_prefill.h"
#include "kda/kda_verify.h"

namespace {

constexpr int FILL_THREADS = 256;
constexpr int D = KDA_HEAD_DIM;
constexpr size_t ROTATE_BYTES = (size_t)512 << 20; /* > 10x L2: rotation defeats the cache */

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
				cudaGetErrorString(e_));                                  \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

#define KOK(call)                                                                         \
	do {                                                                              \
		int r_ = (call);                                                          \
		if (r_) {                                                                 \
			fprintf(stderr, "%s:%d: %s returned %d (%s)\n", __FILE__, __LINE__,  \
				#call, r_, cudaGetErrorString(cudaGetLastError()));       \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

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
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float u = (hash32(seed * 0x9e3779b97f4a7c15ull + i) >> 8) * (1.0f / 16777216.0f);
		float f = lo + (hi - lo) * u;
		uint32_t b = __float_as_uint(f);
		p[i] = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
	}
}

__global__ void fill_f32_kernel(float *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float u = (hash32(seed * 0x9e3779b97f4a7c15ull + i) >> 8) * (1.0f / 16777216.0f);
		p[i] = lo + (hi - lo) * u;
	}
}

__global__ void copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

uint64_t g_seed = 1;

void fill(void *p, size_t n, enum kda_dtype t, float lo, float hi)
{
	if (t == KDA_BF16)
		fill_bf16_kernel<<<2048, FILL_THREADS>>>((uint16_t *)p, n, g_seed++, lo, hi);
	else
		fill_f32_kernel<<<2048, FILL_THREADS>>>((float *)p, n, g_seed++, lo, hi);
	CK(cudaGetLastError());
}

void *dalloc(size_t bytes)
{
	void *p = nullptr;
	CK(cudaMalloc(&p, bytes ? bytes : 16));
	return p;
}

static char g_spec[256]; /* the NVTX text of the op being timed; empty: none */

void bench_range(const char *op, const char *shape)
{
	if (op)
		snprintf(g_spec, sizeof g_spec, "k3sim op=%s %s", op, shape);
	else
		g_spec[0] = '\0';
}

static void range_push(void)
{
	if (g_spec[0])
		nvtxRangePushA(g_spec);
}

static void range_pop(void)
{
	if (g_spec[0])
		nvtxRangePop();
}

struct stats {
	double med_us, p10_us, p90_us;
};

stats summarize(std::vector<float> ms)
{
	std::sort(ms.begin(), ms.end());
	auto at = [&](double f) { return 1e3 * ms[(size_t)std::min<double>(ms.size() - 1, f * (ms.size() - 1) + 0.5)]; };
	return { at(0.5), at(0.1), at(0.9) };
}

/* Times `launch(i)` for i = 0.. with events around each call (then k3_bench_sustain()). */
template <typename F>
stats time_launches(int warm, int reps, F launch)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < warm; i++)
		launch(i);
	CK(cudaDeviceSynchronize());
	std::vector<float> ms;
	for (int i = 0; i < reps; i++) {
		k3_bench_pace("kda-bench", 0); /* K3_BENCH_HOG_MS / K3_BENCH_COOL_MS */
		range_push();
		CK(cudaEventRecord(a));
		launch(warm + i);
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		range_pop();
		float t;
		CK(cudaEventElapsedTime(&t, a, b));
		ms.push_back(t);
	}
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	stats st = summarize(ms);
	k3_bench_sustain(g_spec, warm + reps, st.med_us, 0, launch); /* K3_BENCH_SUSTAIN_MS */
	return st;
}

/* Average time of `n` back-to-back launches (launch gaps included, no event per launch). */
template <typename F>
double time_loop_us(int n, F launch)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	launch(0);
	CK(cudaEventRecord(a));
	for (int i = 0; i < n; i++)
		launch(1 + i);
	CK(cudaEventRecord(b));
	CK(cudaEventSynchronize(b));
	float t;
	CK(cudaEventElapsedTime(&t, a, b));
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	return 1e3 * t / n;
}

struct options {
	const char *out = "kda-bench.csv";
	bool quick = false;
	int reps = 30;
	const char *only = nullptr;
	std::vector<int> batches; /* --batch: decode batches (H = 96 only); empty: the grid */
	std::vector<int> prefill_t, prefill_h; /* --prefill-t, --prefill-h: empty: the grid */
	std::vector<int> prefill_seqs;         /* --prefill-seqs N,...: each point also as N sequences */
	std::vector<const char *> ring_opts;   /* --ring-opt: empty: the environment as it is */
	bool trace = false;                    /* --trace */
	const char *state = nullptr;           /* --state fp32|bf16: decode with that state only */
	std::vector<const char *> prefill_ab;  /* --prefill-ab: LABEL:VAR=X,VAR=Y;... (empty: as it is) */
	int prefill_rounds = 1;                /* --prefill-rounds: the A/B sets cycled this often */
	std::vector<int> prefill_states;       /* --prefill-state fp32,bf16 (0, 1): empty: the grid's */
	int burst_runs = 0;                    /* --prefill-burst N: bursts of N back-to-back launches */
	int burst_gap_ms = 1000;               /* --prefill-gap-ms: the idle time before each burst */
};

/* "a,b,c" of integers in [lo, hi] appended to `v`; false (and a message) on anything else. */
bool parse_list(const char *opt, char *arg, int lo, int hi, std::vector<int> &v)
{
	for (char *t = strtok(arg, ","); t; t = strtok(nullptr, ",")) {
		char *end;
		errno = 0;
		const long x = strtol(t, &end, 10);
		if (end == t || *end || errno || x < lo || x > hi) {
			fprintf(stderr, "kda-bench: %s wants integers %d..%d separated by commas, not '%s'\n", opt, lo,
				hi, t);
			return false;
		}
		v.push_back((int)x);
	}
	return !v.empty();
}

/* One integer in [lo, hi] into `out`; false (and a message) on anything else, a list included. */
bool parse_one(const char *opt, char *arg, int lo, int hi, int &out)
{
	std::vector<int> v;
	if (!parse_list(opt, arg, lo, hi, v))
		return false;
	if (v.size() != 1) {
		fprintf(stderr, "kda-bench: %s wants one integer %d..%d, not a list\n", opt, lo, hi);
		return false;
	}
	out = v[0];
	return true;
}

FILE *g_csv;
double g_copy_gbps = 0.0;

/* NVML readings for the burst rows (clock, power, temperature right after each burst); none
 * where NVML is missing (the rows then say so). */
struct gpumon *g_mon = nullptr;
int g_mon_slot = -1;

void open_gpumon(void)
{
	struct err e = {};
	char pci[64] = "";
	if (gpumon_open(&g_mon, &e) < 0) {
		printf("clocks: not read (%s)\n", e.msg);
		g_mon = nullptr;
		return;
	}
	if (cudaDeviceGetPCIBusId(pci, sizeof pci, 0) == cudaSuccess)
		g_mon_slot = gpumon_add_device(g_mon, 0, pci, 0, &e);
	if (g_mon_slot < 0) {
		printf("clocks: NVML does not know the GPU at '%s' (%s)\n", pci, e.msg);
		gpumon_free(g_mon);
		g_mon = nullptr;
	}
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void csv_header()
{
	fprintf(g_csv, "op,state,batch,seq_len,heads,window,accepted,time_us,p10_us,p90_us,loop_us,reps,"
		       "state_bytes,total_bytes,state_gbps,total_gbps,pct_copy_bw,kernel1_us,kernel2_us,"
		       "us_per_token,copy_gbps\n");
}

struct row {
	const char *op, *state = "";
	long long batch = 0, seq_len = 0, heads = 0, window = 0, accepted = 0;
	stats t = {};
	double loop_us = 0;
	int reps = 0;
	double state_bytes = 0, total_bytes = 0, k1_us = 0, k2_us = 0, us_per_token = 0;
};

void csv_row(const row &r)
{
	double sg = r.state_bytes / (r.t.med_us * 1e3), tg = r.total_bytes / (r.t.med_us * 1e3);
	fprintf(g_csv, "%s,%s,%lld,%lld,%lld,%lld,%lld,%.3f,%.3f,%.3f,%.3f,%d,%.0f,%.0f,%.1f,%.1f,%.1f,%.3f,%.3f,%.4f,%.1f\n",
		r.op, r.state, r.batch, r.seq_len, r.heads, r.window, r.accepted, r.t.med_us, r.t.p10_us,
		r.t.p90_us, r.loop_us, r.reps, r.state_bytes, r.total_bytes, sg, tg,
		g_copy_gbps > 0 ? 100.0 * sg / g_copy_gbps : 0.0, r.k1_us, r.k2_us, r.us_per_token,
		g_copy_gbps);
	fflush(g_csv);
}

const char *dname(enum kda_dtype t)
{
	return t == KDA_F32 ? "fp32" : "bf16";
}

size_t dsize(enum kda_dtype t)
{
	return t == KDA_F32 ? 4 : 2;
}

/* ---- copy ceiling ---- */
void bench_copy(const options &o)
{
	const size_t bytes = (size_t)2 << 30;
	void *a = dalloc(bytes), *b = dalloc(bytes);
	fill(a, bytes / 4, KDA_F32, -1, 1);
	CK(cudaDeviceSynchronize());
	stats m = time_launches(3, o.reps, [&](int) { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	stats k = time_launches(3, o.reps, [&](int) {
		copy_kernel<<<sms * 8, 512>>>((const uint4 *)a, (uint4 *)b, bytes / 16);
	});
	double g_memcpy = 2.0 * bytes / (m.med_us * 1e3), g_kernel = 2.0 * bytes / (k.med_us * 1e3);
	g_copy_gbps = std::max(g_memcpy, g_kernel);
	row r;
	r.op = "copy_memcpy", r.t = m, r.reps = o.reps, r.total_bytes = r.state_bytes = 2.0 * bytes;
	csv_row(r);
	r.op = "copy_kernel", r.t = k;
	csv_row(r);
	printf("copy: cudaMemcpy D2D %.0f GB/s, copy kernel %.0f GB/s (read + write, 2 GiB); ceiling %.0f GB/s\n",
	       g_memcpy, g_kernel, g_copy_gbps);
	CK(cudaFree(a));
	CK(cudaFree(b));
}

/* ---- decode and verify share a rotating pool ---- */
struct step_bench {
	int B, H, W, R; /* R rotation sets of B slots and B windows */
	enum kda_dtype sdt;
	size_t C;
	void *state;
	uint16_t *conv, *x, *g, *beta, *gate, *out, *conv_w, *norm_w;
	int32_t *slot, *n_acc, *n_draft;

	step_bench(int B_, int H_, int W_, enum kda_dtype s) : B(B_), H(H_), W(W_), sdt(s)
	{
		C = (size_t)3 * H * D;
		const size_t sb = (size_t)B * H * D * D * dsize(sdt);
		R = (int)std::max<size_t>(2, std::min<size_t>(64, (ROTATE_BYTES + sb - 1) / sb));
		const size_t slots = (size_t)R * B, tok = (size_t)R * B * W;
		state = dalloc(slots * H * D * D * dsize(sdt));
		conv = (uint16_t *)dalloc(slots * 3 * C * 2);
		x = (uint16_t *)dalloc(tok * C * 2);
		g = (uint16_t *)dalloc(tok * H * D * 2);
		gate = (uint16_t *)dalloc(tok * H * D * 2);
		beta = (uint16_t *)dalloc(tok * H * 2);
		out = (uint16_t *)dalloc((size_t)B * W * H * D * 2);
		conv_w = (uint16_t *)dalloc(C * 4 * 2);
		norm_w = (uint16_t *)dalloc(D * 2);
		fill(state, slots * H * D * D, sdt, -1, 1);
		fill(conv, slots * 3 * C, KDA_BF16, -1.5, 1.5);
		fill(x, tok * C, KDA_BF16, -1.5, 1.5);
		fill(g, tok * H * D, KDA_BF16, -6, 3);
		fill(gate, tok * H * D, KDA_BF16, -2, 2);
		fill(beta, tok * H, KDA_BF16, -3, 3);
		fill(conv_w, C * 4, KDA_BF16, -0.6f, 0.6f);
		fill(norm_w, D, KDA_BF16, 0.5f, 1.5f);
		std::vector<int32_t> perm(slots);
		for (size_t i = 0; i < slots; i++)
			perm[i] = (int32_t)((i * 7919) % slots); /* scattered slots */
		std::vector<char> seen(slots, 0);
		for (size_t i = 0; i < slots; i++) {
			while (seen[perm[i]])
				perm[i] = (perm[i] + 1) % (int32_t)slots;
			seen[perm[i]] = 1;
		}
		slot = (int32_t *)dalloc(slots * 4);
		CK(cudaMemcpy(slot, perm.data(), slots * 4, cudaMemcpyHostToDevice));
		n_acc = (int32_t *)dalloc(B * 4);
		n_draft = (int32_t *)dalloc(B * 4);
		CK(cudaDeviceSynchronize());
	}
	~step_bench()
	{
		for (void *p : { state, (void *)conv, (void *)x, (void *)g, (void *)beta, (void *)gate,
				 (void *)out, (void *)conv_w, (void *)norm_w, (void *)slot, (void *)n_acc,
				 (void *)n_draft })
			cudaFree(p);
	}
	size_t state_bytes() const { return (size_t)B * H * D * D * dsize(sdt); }

	void decode(int i)
	{
		const int r = i % R;
		const size_t t0 = (size_t)r * B * W;
		kda_decode_args a = {};
		a.batch = B, a.heads = H, a.state_dtype = sdt, a.scale = 1.0f / sqrtf((float)D);
		a.norm_eps = 1e-6f;
		a.x = x + t0 * C, a.g_raw = g + t0 * H * D, a.beta_raw = beta + t0 * H;
		a.gate_raw = gate + t0 * H * D, a.conv_w = conv_w, a.norm_w = norm_w;
		a.slot = slot + (size_t)r * B, a.state = state, a.conv_state = conv, a.out = out;
		KOK(kda_decode(&a, 0));
	}
	void verify(int i)
	{
		const int r = i % R;
		const size_t t0 = (size_t)r * B * W;
		kda_verify_args a = {};
		a.batch = B, a.heads = H, a.window = W, a.state_dtype = sdt;
		a.scale = 1.0f / sqrtf((float)D), a.norm_eps = 1e-6f, a.conv_w = conv_w;
		a.norm_w = norm_w, a.slot = slot + (size_t)r * B, a.state = state, a.conv_state = conv;
		a.replay = { x + t0 * C, g + t0 * H * D, beta + t0 * H, nullptr, n_acc };
		a.draft = { x + t0 * C, g + t0 * H * D, beta + t0 * H, gate + t0 * H * D, n_draft };
		a.out = out;
		KOK(kda_verify_replay(&a, 0));
	}
};

/* Decode time per (B, H, dtype), for the summary and the verify ratio, beside a cudaMemcpy of
 * the same bytes (total_bytes / 2 read, as many written) timed the same two ways. */
struct decode_time {
	int B, H;
	enum kda_dtype sdt;
	double us, loop_us, total_bytes, copy_us, copy_loop_us;
	const char *opt; /* --ring-opt label, or "" */
};
std::vector<decode_time> g_decode;

double decode_us(int B, int H, enum kda_dtype sdt)
{
	for (const auto &d : g_decode)
		if (d.B == B && d.H == H && d.sdt == sdt)
			return d.us;
	return 0.0;
}

struct verify_time {
	int B, m;
	enum kda_dtype sdt;
	double us;
};
std::vector<verify_time> g_verify;

/* Source and destination of the same-bytes copies (grown on demand, freed at exit). */
struct same_copy {
	void *a = nullptr, *b = nullptr;
	size_t cap = 0;
	/* Times a D2D copy of `bytes` as `r` (op copy_same) and returns it: per-launch events as
	 * time_launches, back-to-back as time_loop_us. One source, one destination: from B = 64 on
	 * (>= 200 MB) far beyond L2; at B = 1 (a few MB) the copy runs from L2 while the decode
	 * rotates over R sets of states, so only the B >= 64 comparison is like for like. */
	row time(const options &o, size_t bytes)
	{
		bytes = (bytes + 255) & ~(size_t)255;
		if (bytes > cap) {
			if (a) {
				CK(cudaFree(a));
				CK(cudaFree(b));
			}
			a = dalloc(bytes), b = dalloc(bytes);
			cap = bytes;
			fill(a, bytes / 4, KDA_F32, -1, 1);
			CK(cudaDeviceSynchronize());
		}
		bench_range(nullptr, nullptr);
		row r;
		r.op = "copy_same";
		r.t = time_launches(5, o.reps, [&](int) { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
		r.loop_us = time_loop_us(20, [&](int) { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
		r.reps = o.reps;
		r.state_bytes = r.total_bytes = 2.0 * bytes;
		return r;
	}
	~same_copy()
	{
		if (a)
			cudaFree(a), cudaFree(b);
	}
};

/* KDA_DECODE_RING_OPT=opt for the launches that follow (`default`: unset). */
void set_ring_opt(const char *opt)
{
	if (!opt)
		return;
	if (!strcmp(opt, "default"))
		unsetenv("KDA_DECODE_RING_OPT");
	else
		setenv("KDA_DECODE_RING_OPT", opt, 1);
}

/* --trace: 4 back-to-back launches (after a sync), each writing its own trace record, then a
 * summary of the per-CTA stamps (us from the launch's first CTA entry). bytes: all bytes a
 * launch moves (for the in-kernel bandwidth). */
void trace_decode(step_bench &sb, double bytes)
{
	const int NL = KDA_DECODE_TRACE_LAUNCHES, NC = KDA_DECODE_TRACE_CTAS, NF = KDA_DECODE_TRACE_FIELDS;
	CK(cudaDeviceSynchronize());
	for (int l = 0; l < NL; l++) {
		char v[2] = { (char)('0' + l), 0 };
		setenv("KDA_DECODE_RING_TRACE", v, 1);
		sb.decode(1000 + l);
	}
	unsetenv("KDA_DECODE_RING_TRACE");
	CK(cudaDeviceSynchronize());
	std::vector<unsigned long long> t((size_t)NL * NC * NF);
	if (kda_decode_trace_read(t.data(), t.size()) != 0) {
		printf("trace: none (not the ring kernel)\n");
		return;
	}
	auto med = [](std::vector<double> v, double f) {
		if (v.empty())
			return 0.0;
		std::sort(v.begin(), v.end());
		return v[(size_t)(f * (v.size() - 1) + 0.5)];
	};
	double prev_end = 0;
	for (int l = 0; l < NL; l++) {
		const unsigned long long *r = &t[(size_t)l * NC * NF];
		int n = 0;
		unsigned long long t0 = ~0ull, tend = 0;
		for (int c = 0; c < NC; c++)
			if (r[(size_t)c * NF + 0]) {
				n++;
				t0 = std::min(t0, r[(size_t)c * NF + 0]);
				tend = std::max(tend, r[(size_t)c * NF + 4]);
			}
		if (!n) {
			printf("trace: launch %d recorded nothing (not the ring kernel)\n", l);
			return;
		}
		std::vector<double> entry, prod, fin, fst, end, item1, per, wf, wi, pw, items, done_at;
		for (int c = 0; c < NC; c++) {
			const unsigned long long *x = &r[(size_t)c * NF];
			if (!x[0])
				continue;
			auto rel = [&](unsigned long long v) { return v ? (v - t0) * 1e-3 : 0.0; };
			entry.push_back(rel(x[0])), prod.push_back(rel(x[1])), fin.push_back(rel(x[2]));
			fst.push_back(rel(x[3])), end.push_back(rel(x[4]));
			const int k = (int)(x[5] & 0xffffffffu);
			items.push_back(k);
			if (k > 0)
				item1.push_back(rel(x[12]));
			if (k > 1)
				per.push_back((rel(x[4]) - rel(x[12])) / (k - 1));
			for (int i = 0; i < std::min(k, (int)KDA_DECODE_TRACE_ITEMS); i++)
				done_at.push_back(rel(x[12 + i]));
			if (x[8])
				wf.push_back(100.0 * x[6] / x[8]), wi.push_back(100.0 * x[7] / x[8]);
			if (x[10])
				pw.push_back(100.0 * x[9] / x[10]);
		}
		const double span = (tend - t0) * 1e-3;
		printf("trace %d: %d CTAs, items %.0f-%.0f; entry spread %.2f; producer first copy %.2f / %.2f; first "
		       "input %.2f / %.2f; first state chunk %.2f / %.2f; first item done %.2f / %.2f (us, median / "
		       "max)\n",
		       l, n, med(items, 0), med(items, 1), med(entry, 1), med(prod, 0.5), med(prod, 1), med(fin, 0.5),
		       med(fin, 1), med(fst, 0.5), med(fst, 1), med(item1, 0.5), med(item1, 1));
		printf("trace %d: end min / p10 / median / max %.2f / %.2f / %.2f / %.2f us (tail %.2f after the "
		       "median); per item %.3f us (median, p10-p90 %.3f-%.3f); consumers wait on state %.1f %%, on "
		       "inputs %.1f %%; producer waits on stages %.1f %% (medians); span %.2f us = %.1f %% of copy%s\n",
		       l, med(end, 0), med(end, 0.1), med(end, 0.5), med(end, 1), med(end, 1) - med(end, 0.5),
		       med(per, 0.5), med(per, 0.1), med(per, 0.9), med(wf, 0.5), med(wi, 0.5), med(pw, 0.5), span,
		       g_copy_gbps > 0 ? 100.0 * bytes / (span * 1e3) / g_copy_gbps : 0.0, "");
		if (l > 0)
			printf("trace %d: gap from launch %d's last CTA end to this one's first entry: %.2f us\n", l, l - 1,
			       (t0 - prev_end) * 1e-3);
		prev_end = (double)tend;
		if (l == 2) {
			/* Items done per 5 us bin (the first 64 of each CTA), as % of a launch's items a us. */
			const double bin = 5.0;
			const int nb = (int)(span / bin) + 1;
			std::vector<int> h(nb, 0);
			for (double d : done_at)
				h[std::min(nb - 1, (int)(d / bin))]++;
			double all = 0;
			for (double k : items)
				all += k;
			printf("trace %d: items done per 5 us (%% of the launch's bytes a us over the copy ceiling):", l);
			for (int i = 0; i < nb; i++)
				printf(" %d", h[i]);
			printf(" |");
			for (int i = 0; i < nb; i++)
				printf(" %.0f", g_copy_gbps > 0 ? 100.0 * (h[i] / all * bytes / (bin * 1e3)) / g_copy_gbps : 0.0);
			printf("\n");
		}
	}
}

void bench_decode(const options &o)
{
	same_copy cp;
	std::vector<int> Bs = { 1, 2, 4, 8, 16, 32, 64, 128, 256 }, Hs = { 12, 24, 48, 96 };
	if (o.quick)
		Bs = { 1, 64 }, Hs = { 96 };
	if (!o.batches.empty())
		Bs = o.batches, Hs = { 96 };
	for (enum kda_dtype sdt : { KDA_F32, KDA_BF16 })
		for (int H : Hs)
			for (int B : Bs) {
				if (o.state && strcmp(o.state, dname(sdt)))
					continue;
				step_bench sb(B, H, 1, sdt);
				char shape[64];
				snprintf(shape, sizeof(shape), "b=%d h=%d k=%d v=%d state=%s conv=4", B, H, D, D,
					 dname(sdt));
				const size_t nopt = std::max<size_t>(1, o.ring_opts.size());
				for (size_t oi = 0; oi < nopt; oi++) {
				const char *opt = o.ring_opts.empty() ? nullptr : o.ring_opts[oi];
				set_ring_opt(opt);
				bench_range("kda_decode", shape);
				row r;
				char opname[64];
				snprintf(opname, sizeof(opname), "decode@%s", opt ? opt : "");
				r.op = opt ? opname : "decode", r.state = dname(sdt), r.batch = B, r.heads = H, r.window = 1;
				r.accepted = 1;
				r.t = time_launches(5, o.reps, [&](int i) { sb.decode(i); });
				r.loop_us = time_loop_us(20, [&](int i) { sb.decode(i); });
				r.reps = o.reps;
				r.state_bytes = 2.0 * sb.state_bytes();
				/* + conv state r/w, inputs, outputs */
				r.total_bytes = r.state_bytes + (double)B * (2.0 * 3 * sb.C * 2 + sb.C * 2 +
									   H * D * 2 * 3.0 + H * 2);
				r.us_per_token = r.t.med_us / B;
				csv_row(r);
				decode_time d = { B, H, sdt, r.t.med_us, r.loop_us, r.total_bytes, 0.0, 0.0, opt ? opt : "" };
				if (H == 96 && (B == 1 || B >= 64)) {
					row c = cp.time(o, (size_t)(r.total_bytes / 2));
					c.state = r.state, c.batch = B, c.heads = H;
					csv_row(c);
					d.copy_us = c.t.med_us, d.copy_loop_us = c.loop_us;
				}
				g_decode.push_back(d);
				if (o.trace && H == 96) {
					printf("trace: %s state, B = %d, H = %d, KDA_DECODE_RING_OPT=%s\n", dname(sdt), B, H,
					       opt ? opt : (getenv("KDA_DECODE_RING_OPT") ? getenv("KDA_DECODE_RING_OPT") : "(unset)"));
					trace_decode(sb, r.total_bytes);
				}
				}
				if (!o.ring_opts.empty())
					unsetenv("KDA_DECODE_RING_OPT");
			}
}

void bench_verify(const options &o)
{
	std::vector<int> Bs = { 1, 16, 64 }, Ms = { 1, 2, 4, 8 };
	if (o.quick)
		Bs = { 64 };
	const int H = 96, W = KDA_MAX_WINDOW;
	for (enum kda_dtype sdt : { KDA_F32, KDA_BF16 })
		for (int B : Bs) {
			step_bench sb(B, H, W, sdt);
			std::vector<int32_t> draft(B, W);
			CK(cudaMemcpy(sb.n_draft, draft.data(), B * 4, cudaMemcpyHostToDevice));
			for (int m : Ms) {
				std::vector<int32_t> acc(B, m);
				CK(cudaMemcpy(sb.n_acc, acc.data(), B * 4, cudaMemcpyHostToDevice));
				row r;
				r.op = "verify_replay", r.state = dname(sdt), r.batch = B, r.heads = H;
				r.window = W, r.accepted = m;
				/* one launch: m accepted tokens replayed, then W drafts */
				char shape[96];
				snprintf(shape, sizeof(shape), "b=%d h=%d k=%d v=%d state=%s conv=4 t=%d", B, H, D, D,
					 dname(sdt), m + W);
				bench_range("kda_decode", shape);
				r.t = time_launches(3, o.reps, [&](int i) { sb.verify(i); });
				r.reps = o.reps;
				r.state_bytes = 2.0 * sb.state_bytes(); /* one read, one write */
				r.total_bytes = r.state_bytes + (double)B * W * (2.0 * sb.C * 2 + H * D * 2 * 3.0);
				r.us_per_token = r.t.med_us / (m * (double)B);
				csv_row(r);
				g_verify.push_back({ B, m, sdt, r.t.med_us });
			}
		}
}

/* ---- prefill ---- */
void prefill_run(const options &o, const std::vector<int> &lens, int H, enum kda_dtype sdt, const char *op)
{
	const int n = (int)lens.size();
	std::vector<int32_t> cu(n + 1, 0);
	for (int i = 0; i < n; i++)
		cu[i + 1] = cu[i] + lens[i];
	const size_t T = (size_t)cu[n], E = T * H * D;
	uint16_t *q = (uint16_t *)dalloc(E * 2), *k = (uint16_t *)dalloc(E * 2);
	uint16_t *v = (uint16_t *)dalloc(E * 2), *g = (uint16_t *)dalloc(E * 2);
	uint16_t *beta = (uint16_t *)dalloc(T * H * 2), *out = (uint16_t *)dalloc(E * 2);
	const size_t sn = (size_t)n * H * D * D;
	void *s0 = dalloc(sn * dsize(sdt)), *s1 = dalloc(sn * dsize(sdt));
	int32_t *dcu = (int32_t *)dalloc((n + 1) * 4);
	CK(cudaMemcpy(dcu, cu.data(), (n + 1) * 4, cudaMemcpyHostToDevice));
	const size_t wsb = kda_prefill_workspace_bytes(n, H, (int64_t)T);
	void *ws = dalloc(wsb);
	fill(q, E, KDA_BF16, -1, 1), fill(k, E, KDA_BF16, -1, 1), fill(v, E, KDA_BF16, -1, 1);
	fill(g, E, KDA_BF16, -6, 3), fill(beta, T * H, KDA_BF16, -3, 3);
	fill(s0, sn, sdt, -1, 1);
	CK(cudaDeviceSynchronize());
	cudaEvent_t e0, e1, e2;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaEventCreate(&e2));
	kda_prefill_args a = {};
	a.n_seqs = n, a.heads = H, a.total_tokens = (int64_t)T, a.cu_seqlens = dcu, a.state_dtype = sdt;
	a.scale = 1.0f / sqrtf((float)D), a.q = q, a.k = k, a.v = v, a.g_raw = g, a.beta_raw = beta;
	a.initial_state = s0, a.final_state = s1, a.out = out, a.workspace = ws, a.split_event = e1;
	const int warm = 2, reps = o.quick ? 5 : std::max(5, std::min(o.reps, T >= 32768 ? 7 : 15));
	/* --prefill-ab: each set's variables (the prefill knobs unset first, and every variable any set
	 * names, so that none leaks from one set into the next: round 06a's K3_KDA_RECUR_OPT did),
	 * timed back to back on these buffers, the sets cycled --prefill-rounds times; none: the
	 * environment as it is. */
	std::vector<std::string> knobs = { "K3_KDA_PREFILL", "K3_KDA_RECUR_STAGES", "K3_KDA_RECUR_WARPS",
					   "K3_KDA_INTRA", "K3_KDA_FLAG_WAIT", "K3_KDA_RECUR", "K3_KDA_INTRA_PF", "K3_KDA_INTRA_PF_MODE",
					   "K3_KDA_SPLIT_OPT" };
	for (const char *set : o.prefill_ab) {
		const char *body = strchr(set, ':');
		std::string b = body ? body + 1 : set;
		for (size_t at = 0; at < b.size();) {
			const size_t end = std::min(b.find(',', at), b.size()), eq = b.find('=', at);
			if (eq < end && std::find(knobs.begin(), knobs.end(), b.substr(at, eq - at)) == knobs.end())
				knobs.push_back(b.substr(at, eq - at));
			at = end + 1;
		}
	}
	const size_t nsets = o.prefill_ab.empty() ? 1 : o.prefill_ab.size();
	for (size_t it = 0; it < nsets * (o.prefill_ab.empty() ? 1 : (size_t)o.prefill_rounds); it++) {
	const char *set = o.prefill_ab.empty() ? nullptr : o.prefill_ab[it % nsets];
	char label[64] = "", opname[96];
	if (set) {
		for (const std::string &kn : knobs)
			unsetenv(kn.c_str());
		char buf[512];
		snprintf(buf, sizeof buf, "%s", set);
		char *body = strchr(buf, ':');
		if (body) {
			*body++ = 0;
			snprintf(label, sizeof label, "%.63s", buf);
		} else {
			body = buf;
			snprintf(label, sizeof label, "set%zu", it % nsets);
		}
		for (char *save = nullptr, *t = strtok_r(body, ",", &save); t; t = strtok_r(nullptr, ",", &save)) {
			char *eq = strchr(t, '=');
			if (eq) {
				*eq = 0;
				setenv(t, eq + 1, 1);
			}
		}
	}
	snprintf(opname, sizeof opname, "%.31s%s%s%.50s", op, o.burst_runs > 0 ? "_burst" : "", set ? "@" : "",
		 label);
	struct kda_prefill_plan plan = {};
	const int taken = kda_prefill_plan(&a, 0, &plan) ? -1 : plan.overlap;
	std::vector<float> tot, k1, k2;
	/* Uniform batches are named for the model (varlen with unequal lengths has no single t). */
	bool uniform = true;
	for (int i = 1; i < n; i++)
		uniform = uniform && lens[i] == lens[0];
	if (uniform) {
		char shape[160];
		snprintf(shape, sizeof shape, "b=%d t=%d h=%d k=%d v=%d state=%s chunk=16 ctx=1", n, lens[0], H, D, D,
			 dname(sdt));
		bench_range("kda_chunk", shape);
	} else {
		bench_range(NULL, NULL);
	}
	std::vector<float> mhz, watts, temps;
	if (o.burst_runs > 0) {
		/* --prefill-burst N: after --prefill-gap-ms idle, 3 launches, then N launches back to
		 * back between two events: their mean (the protocol of a short graph-replay benchmark,
		 * AIConfigurator's: 3 warm-ups, 6 runs, the mean); `reps` bursts, their median. The
		 * clock, power and temperature are read right after each burst. */
		a.split_event = nullptr;
		for (int b = 0; b < reps; b++) {
			sleep_ms(o.burst_gap_ms);
			for (int i = 0; i < 3; i++)
				KOK(kda_prefill(&a, 0));
			range_push();
			CK(cudaEventRecord(e0));
			for (int i = 0; i < o.burst_runs; i++)
				KOK(kda_prefill(&a, 0));
			CK(cudaEventRecord(e2));
			CK(cudaEventSynchronize(e2));
			range_pop();
			struct gpumon_sample smp = {};
			if (g_mon && gpumon_read(g_mon, g_mon_slot, &smp) == 0) {
				if (smp.fields & GPUMON_HAS_SM)
					mhz.push_back((float)smp.sm_mhz);
				if (smp.fields & GPUMON_HAS_POWER)
					watts.push_back((float)smp.power_w);
				if (smp.fields & GPUMON_HAS_TEMP)
					temps.push_back((float)smp.temp_c);
			}
			float t;
			CK(cudaEventElapsedTime(&t, e0, e2));
			tot.push_back(t / o.burst_runs), k1.push_back(0), k2.push_back(0);
		}
		a.split_event = e1;
	} else
	for (int i = 0; i < warm + reps; i++) {
		if (i >= warm) {
			k3_bench_pace("kda-bench", 0); /* K3_BENCH_HOG_MS / K3_BENCH_COOL_MS */
			range_push();
		}
		CK(cudaEventRecord(e0));
		KOK(kda_prefill(&a, 0));
		CK(cudaEventRecord(e2));
		CK(cudaEventSynchronize(e2));
		if (i >= warm)
			range_pop();
		float t, t1, t2;
		CK(cudaEventElapsedTime(&t, e0, e2));
		CK(cudaEventElapsedTime(&t1, e0, e1));
		CK(cudaEventElapsedTime(&t2, e1, e2));
		if (i >= warm)
			tot.push_back(t), k1.push_back(t1), k2.push_back(t2);
	}
	/* K3_BENCH_SUSTAIN_MS: the prefill back to back after its timed runs, as time_launches()'s
	 * rows (uniform batches only: the others have no op spec); in place, as the timed runs. */
	k3_bench_sustain(g_spec, 1, summarize(tot).med_us, 0, [&](int) { KOK(kda_prefill(&a, 0)); });
	row r;
	r.op = opname, r.state = dname(sdt), r.batch = n, r.seq_len = (long long)(T / n), r.heads = H;
	r.t = summarize(tot), r.reps = reps;
	r.k1_us = summarize(k1).med_us, r.k2_us = summarize(k2).med_us;
	r.state_bytes = 2.0 * sn * dsize(sdt);
	r.total_bytes = r.state_bytes + 5.0 * E * 2 + T * H * 2; /* q k v g in, out; beta */
	r.us_per_token = r.t.med_us / T;
	csv_row(r);
	/* Default (serial): intra, then recurrent; K3_KDA_PREFILL=overlap (where kda_prefill() takes it):
	 * "intra" ends when the intra kernel does, "recurrent" is the recurrent kernel's tail after it. */
	const char *path = getenv("K3_KDA_PREFILL"), *intra = getenv("K3_KDA_INTRA");
	printf("%-14s %s N=%-2d T=%-6zu H=%-2d  %9.1f us  (intra %8.1f, recurrent %8.1f)  p10 %9.1f p90 %9.1f"
	       "  took=%s path=%s intra=%s warps=%d recur=%s\n",
	       opname, dname(sdt), n, T, H, r.t.med_us, r.k1_us, r.k2_us, r.t.p10_us, r.t.p90_us,
	       taken == 1 ? "overlap" : taken == 0 ? "serial" : "error", path ? path : "default",
	       intra ? intra : "default", taken < 0 ? 0 : plan.recur_warps, taken < 0 ? "error" : plan.recur);
	if (o.burst_runs > 0) {
		auto med = [](std::vector<float> x) { std::sort(x.begin(), x.end()); return x.empty() ? 0.0 : (double)x[x.size() / 2]; };
		auto lo = [](const std::vector<float> &x) { return x.empty() ? 0.0 : (double)*std::min_element(x.begin(), x.end()); };
		auto hi = [](const std::vector<float> &x) { return x.empty() ? 0.0 : (double)*std::max_element(x.begin(), x.end()); };
		printf("  burst: %d bursts of %d after %d ms idle; per-burst means",
		       reps, o.burst_runs, o.burst_gap_ms);
		for (float t : tot)
			printf(" %.1f", 1e3 * t);
		printf(" us\n  after each burst: SM %.0f MHz median (%.0f-%.0f), %.0f W median (%.0f-%.0f), %.0f C max%s\n",
		       med(mhz), lo(mhz), hi(mhz), med(watts), lo(watts), hi(watts), hi(temps),
		       g_mon ? "" : " (no NVML: not read)");
	}
	fflush(stdout);
	}
	if (!o.prefill_ab.empty())
		for (const std::string &kn : knobs)
			unsetenv(kn.c_str());
	for (void *p : { (void *)q, (void *)k, (void *)v, (void *)g, (void *)beta, (void *)out, s0, s1,
			 (void *)dcu, ws })
		cudaFree(p);
	cudaEventDestroy(e0), cudaEventDestroy(e1), cudaEventDestroy(e2);
}

void bench_prefill(const options &o)
{
	std::vector<int> Ts = { 1024, 4096, 16384, 65536 }, Hs = { 12, 24, 48, 96 };
	if (o.quick)
		Ts = { 4096, 16384 }, Hs = { 96 };
	if (!o.prefill_t.empty())
		Ts = o.prefill_t;
	if (!o.prefill_h.empty())
		Hs = o.prefill_h;
	if (!o.prefill_states.empty()) { /* --prefill-state: the whole grid and 4 x 4K per state */
		for (int st : o.prefill_states) {
			const enum kda_dtype sdt = st ? KDA_BF16 : KDA_F32;
			for (int H : Hs)
				for (int T : Ts) {
					prefill_run(o, { T }, H, sdt, "prefill");
					for (int n : o.prefill_seqs)
						if (n > 1 && T / n >= 1)
							prefill_run(o, std::vector<int>(n, T / n), H, sdt, "prefill");
				}
			prefill_run(o, { 4096, 4096, 4096, 4096 }, 96, sdt, "prefill");
		}
		return;
	}
	for (int H : Hs)
		for (int T : Ts)
			prefill_run(o, { T }, H, KDA_F32, "prefill");
	for (int T : Ts)
		prefill_run(o, { T }, 96, KDA_BF16, "prefill");
	prefill_run(o, { 4096, 4096, 4096, 4096 }, 96, KDA_F32, "prefill");
	prefill_run(o, { 4096, 1024, 3000, 512, 2048, 3583, 1100, 1021 }, 96, KDA_F32, "prefill_varlen");
	prefill_run(o, { 4096, 1024, 3000, 512, 2048, 3583, 1100, 1021 }, 12, KDA_F32, "prefill_varlen");
}

void summary()
{
	/* % copy: state bytes over the 2 GiB ceiling (the historical column); all: every byte moved
	 * (total_bytes) over that ceiling, per launch and back to back; same: the time of a cudaMemcpy
	 * of the same bytes over the decode's, each timed the same way (per launch / back to back). */
	printf("\n%-8s %-5s %5s %4s %10s %10s %10s %8s %8s %8s %9s %9s %s\n", "decode", "state", "B", "H", "us",
	       "loop us", "GB/s", "% copy", "all %", "all lp%", "same %", "same lp%", "ring opt");
	for (const auto &d : g_decode) {
		if (d.H != 96 || (d.B != 1 && d.B != 64 && d.B != 128 && d.B != 256))
			continue;
		double gb = 2.0 * d.B * d.H * D * D * dsize(d.sdt) / (d.us * 1e3);
		double all = d.total_bytes / (d.us * 1e3), all_lp = d.total_bytes / (d.loop_us * 1e3);
		printf("%-8s %-5s %5d %4d %10.2f %10.2f %10.0f %7.1f%% %7.1f%% %7.1f%% %8.1f%% %8.1f%% %s\n", "",
		       dname(d.sdt), d.B, d.H, d.us, d.loop_us, gb, 100.0 * gb / g_copy_gbps, 100.0 * all / g_copy_gbps,
		       100.0 * all_lp / g_copy_gbps, d.copy_us > 0 ? 100.0 * d.copy_us / d.us : 0.0,
		       d.copy_loop_us > 0 ? 100.0 * d.copy_loop_us / d.loop_us : 0.0, d.opt);
	}
	printf("\n%-8s %-5s %5s %4s %10s %14s\n", "verify", "state", "B", "acc", "us", "per tok / dec");
	for (const auto &v : g_verify) {
		const double dec = decode_us(v.B, 96, v.sdt);
		printf("%-8s %-5s %5d %4d %10.2f %13.2fx\n", "", dname(v.sdt), v.B, v.m, v.us,
		       dec > 0 ? v.us / v.m / dec : 0.0);
	}
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			o.out = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			o.quick = true;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			o.reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			o.only = argv[++i];
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
			if (!parse_list("--batch", argv[++i], 1, 4096, o.batches))
				return 2;
		} else if (!strcmp(argv[i], "--prefill-t") && i + 1 < argc) {
			if (!parse_list("--prefill-t", argv[++i], 1, 1 << 20, o.prefill_t))
				return 2;
		} else if (!strcmp(argv[i], "--ring-opt") && i + 1 < argc) {
			for (char *t = strtok(argv[++i], ","); t; t = strtok(nullptr, ","))
				o.ring_opts.push_back(t);
		} else if (!strcmp(argv[i], "--trace")) {
			o.trace = true;
		} else if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			o.state = argv[++i];
			if (strcmp(o.state, "fp32") && strcmp(o.state, "bf16")) {
				fprintf(stderr, "kda-bench: --state wants fp32 or bf16, not '%s'\n", o.state);
				return 2;
			}
		} else if (!strcmp(argv[i], "--prefill-ab") && i + 1 < argc) {
			for (char *t = strtok(argv[++i], ";"); t; t = strtok(nullptr, ";"))
				o.prefill_ab.push_back(t);
		} else if (!strcmp(argv[i], "--prefill-rounds") && i + 1 < argc) {
			o.prefill_rounds = std::max(1, std::min(20, atoi(argv[++i])));
		} else if (!strcmp(argv[i], "--prefill-state") && i + 1 < argc) {
			for (char *t = strtok(argv[++i], ","); t; t = strtok(nullptr, ",")) {
				if (strcmp(t, "fp32") && strcmp(t, "bf16")) {
					fprintf(stderr, "kda-bench: --prefill-state wants fp32,bf16, not '%s'\n", t);
					return 2;
				}
				o.prefill_states.push_back(!strcmp(t, "bf16"));
			}
		} else if (!strcmp(argv[i], "--prefill-h") && i + 1 < argc) {
			if (!parse_list("--prefill-h", argv[++i], 1, 256, o.prefill_h))
				return 2;
		} else if (!strcmp(argv[i], "--prefill-burst") && i + 1 < argc) {
			if (!parse_one("--prefill-burst", argv[++i], 1, 100, o.burst_runs))
				return 2;
		} else if (!strcmp(argv[i], "--prefill-gap-ms") && i + 1 < argc) {
			if (!parse_one("--prefill-gap-ms", argv[++i], 0, 60000, o.burst_gap_ms))
				return 2;
		} else if (!strcmp(argv[i], "--prefill-seqs") && i + 1 < argc) {
			if (!parse_list("--prefill-seqs", argv[++i], 1, 64, o.prefill_seqs))
				return 2;
		} else {
			fprintf(stderr, "usage: %s [-o FILE.csv] [--quick] [--reps N] [--only copy|decode|verify|prefill]"
					 " [--batch B,B,...] [--prefill-t T,T,...] [--prefill-h H,H,...] [--prefill-state fp32,bf16]"
					" [--prefill-seqs N,N,...] [--prefill-burst N] [--prefill-gap-ms MS]"
					" [--prefill-ab 'LABEL:VAR=X,VAR=Y;...'] [--prefill-rounds N] [--ring-opt O,O,...] [--trace]"
					" [--state fp32|bf16]\n",
				argv[0]);
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	if (o.reps < 3)
		o.reps = 3;
	g_csv = fopen(o.out, "w");
	if (!g_csv) {
		fprintf(stderr, "kda-bench: cannot write '%s': %s\n", o.out, strerror(errno));
		return 1;
	}
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
	csv_header();
	if (o.burst_runs > 0)
		open_gpumon();
	auto want = [&](const char *w) { return !o.only || !strcmp(o.only, w); };
	bench_copy(o); /* always: the ceiling */
	if (want("decode") || want("verify"))
		bench_decode(o);
	if (want("verify"))
		bench_verify(o);
	if (want("prefill"))
		bench_prefill(o);
	summary();
	fclose(g_csv);
	return 0;
}
