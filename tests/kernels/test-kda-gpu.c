/* SPDX-License-Identifier: MIT */
/*
 * KDA CUDA kernels against the float64 references (suite 'gpu'; exit 77
 * without a GPU). Fresh random inputs per case (rounded to BF16 first, so
 * kernel and reference see the same values), outputs poisoned with NaN
 * before every run, errors as ||out - ref|| / ||ref||.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "kernels/kda/kda_decode.h"
#include "kernels/kda/kda_prefill.h"
#include "kernels/kda/kda_ref.h"
#include "kernels/kda/kda_verify.h"
#include "kda_test_util.h"

/* BF16 outputs and products: rounding near 2^-9 per element, averaged. */
#define TOL_BF16 1.5e-2
/* FP32 recurrence (decode, verify): only FP32 rounding and fast intrinsics. */
#define TOL_F32 1e-4

enum { D = KDA_HEAD_DIM };

#define CUDA_OK(call)                                                                    \
	do {                                                                             \
		cudaError_t e_ = (call);                                                 \
		if (e_ != cudaSuccess)                                                   \
			fail_msg("%s: %s", #call, cudaGetErrorString(e_));               \
	} while (0)

static struct test_rng rng = { 20261129 };

static void *xmalloc(size_t n)
{
	void *p = calloc(n ? n : 1, 1);
	assert_non_null(p);
	return p;
}

static double *dnew(size_t n)
{
	return xmalloc(n * sizeof(double));
}

static uint16_t bf16_of(double x)
{
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static double double_of_bf16(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static double double_of_f32(float f)
{
	return f;
}

/* A host tensor with its BF16 (or FP32) device copy. */
struct tensor {
	size_t n;
	enum kda_dtype dtype;
	double *h;  /* exact values of what is on the device */
	void *d;
};

static size_t dtype_bytes(enum kda_dtype t)
{
	return t == KDA_F32 ? 4 : 2;
}

static void tensor_upload(struct tensor *t)
{
	size_t es = dtype_bytes(t->dtype);
	void *tmp = xmalloc(t->n * es);
	for (size_t i = 0; i < t->n; i++) {
		if (t->dtype == KDA_F32) {
			float f = (float)t->h[i];
			t->h[i] = f;
			((float *)tmp)[i] = f;
		} else {
			uint16_t b = bf16_of(t->h[i]);
			t->h[i] = double_of_bf16(b);
			((uint16_t *)tmp)[i] = b;
		}
	}
	CUDA_OK(cudaMemcpy(t->d, tmp, t->n * es, cudaMemcpyHostToDevice));
	free(tmp);
}

/* Random tensor in [lo, hi), rounded to its dtype, on host and device. */
static struct tensor tensor_rand(size_t n, enum kda_dtype dt, double lo, double hi)
{
	struct tensor t = { .n = n, .dtype = dt, .h = dnew(n) };
	CUDA_OK(cudaMalloc(&t.d, (n ? n : 1) * dtype_bytes(dt)));
	test_fill(&rng, t.h, n, lo, hi);
	tensor_upload(&t);
	return t;
}

/* Device output tensor, poisoned with NaN. */
static struct tensor tensor_out(size_t n, enum kda_dtype dt)
{
	struct tensor t = { .n = n, .dtype = dt, .h = dnew(n) };
	CUDA_OK(cudaMalloc(&t.d, (n ? n : 1) * dtype_bytes(dt)));
	CUDA_OK(cudaMemset(t.d, 0xff, (n ? n : 1) * dtype_bytes(dt)));
	return t;
}

static void tensor_poison(struct tensor *t)
{
	CUDA_OK(cudaMemset(t->d, 0xff, (t->n ? t->n : 1) * dtype_bytes(t->dtype)));
}

/* Reads the device copy into t->h. */
static void tensor_download(struct tensor *t)
{
	size_t es = dtype_bytes(t->dtype);
	void *tmp = xmalloc(t->n * es);
	CUDA_OK(cudaMemcpy(tmp, t->d, t->n * es, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < t->n; i++)
		t->h[i] = t->dtype == KDA_F32 ? double_of_f32(((float *)tmp)[i])
					      : double_of_bf16(((uint16_t *)tmp)[i]);
	free(tmp);
}

static void tensor_release(struct tensor *t)
{
	free(t->h);
	cudaFree(t->d);
	t->h = NULL, t->d = NULL;
}

static void *dev_i32(const int32_t *h, size_t n)
{
	void *d;
	CUDA_OK(cudaMalloc(&d, (n ? n : 1) * sizeof(int32_t)));
	CUDA_OK(cudaMemcpy(d, h, n * sizeof(int32_t), cudaMemcpyHostToDevice));
	return d;
}

static double check(const char *what, const double *got, const double *ref, size_t n, double tol)
{
	double e = test_rel_err(got, ref, n);
	print_message("  %-44s rel err %.3e (tol %.1e)\n", what, e, tol);
	if (!(e < tol))
		fail_msg("%s: relative error %g over %g", what, e, tol);
	return e;
}

/* ---- fused decode ---------------------------------------------------- */

struct step_weights {
	int heads;
	size_t C;
	struct tensor conv_w, norm_w;
};

static struct step_weights weights_new(int heads)
{
	struct step_weights w = { .heads = heads, .C = (size_t)heads * 3 * D };
	w.conv_w = tensor_rand(w.C * KDA_CONV_TAPS, KDA_BF16, -0.6, 0.6);
	w.norm_w = tensor_rand(D, KDA_BF16, 0.5, 1.5);
	return w;
}

static void weights_release(struct step_weights *w)
{
	tensor_release(&w->conv_w);
	tensor_release(&w->norm_w);
}

/* Per-token inputs of B requests x W tokens. */
struct step_inputs {
	struct tensor x, g, b, gate;
};

static struct step_inputs inputs_new(int B, int W, int H)
{
	struct step_inputs in;
	in.x = tensor_rand((size_t)B * W * H * 3 * D, KDA_BF16, -1.5, 1.5);
	in.g = tensor_rand((size_t)B * W * H * D, KDA_BF16, -6, 3);
	in.b = tensor_rand((size_t)B * W * H, KDA_BF16, -3, 3);
	in.gate = tensor_rand((size_t)B * W * H * D, KDA_BF16, -2, 2);
	return in;
}

static void inputs_release(struct step_inputs *in)
{
	tensor_release(&in->x), tensor_release(&in->g), tensor_release(&in->b);
	tensor_release(&in->gate);
}

static struct kda_ref_step ref_step(const struct step_weights *w, const struct step_inputs *in,
				    int B, int W, const int32_t *slot, double *state, double *conv,
				    double *out)
{
	return (struct kda_ref_step){
		.batch = B, .heads = w->heads, .dk = D, .dv = D, .window = W,
		.scale = 1.0 / sqrt((double)D), .norm_eps = 1e-6, .x = in->x.h, .g_raw = in->g.h,
		.beta_raw = in->b.h, .gate_raw = in->gate.h, .conv_w = w->conv_w.h,
		.norm_w = w->norm_w.h, .slot = slot, .state = state, .conv_state = conv, .out = out,
	};
}

static void decode_case(enum kda_dtype sdt, int B, int H, int steps)
{
	print_message(" decode: %s state, B=%d H=%d, %d steps\n", sdt == KDA_F32 ? "fp32" : "bf16", B,
		      H, steps);
	const int slots = B + 3;
	int32_t *slot = xmalloc(B * sizeof(int32_t));
	for (int i = 0; i < B; i++)
		slot[i] = (int32_t)(slots - 1 - i); /* permuted, distinct, slot 0..2 spare */
	void *d_slot = dev_i32(slot, B);
	struct step_weights w = weights_new(H);
	const size_t SN = (size_t)H * D * D;
	struct tensor state = tensor_rand(slots * SN, sdt, -1, 1);
	struct tensor conv = tensor_rand(slots * 3 * w.C, KDA_BF16, -1.5, 1.5);
	double *ref_state = dnew(slots * SN), *ref_conv = dnew(slots * 3 * w.C);
	memcpy(ref_state, state.h, slots * SN * sizeof(double));
	memcpy(ref_conv, conv.h, slots * 3 * w.C * sizeof(double));
	struct tensor out = tensor_out((size_t)B * H * D, KDA_BF16);
	double *ref_out = dnew((size_t)B * H * D);
	for (int s = 0; s < steps; s++) {
		struct step_inputs in = inputs_new(B, 1, H);
		struct kda_ref_step r = ref_step(&w, &in, B, 1, slot, ref_state, ref_conv, ref_out);
		assert_int_equal(kda_ref_decode(&r), 0);
		tensor_poison(&out);
		struct kda_decode_args a = {
			.batch = B, .heads = H, .state_dtype = sdt, .scale = (float)r.scale,
			.norm_eps = 1e-6f, .x = in.x.d, .g_raw = in.g.d, .beta_raw = in.b.d,
			.gate_raw = in.gate.d, .conv_w = w.conv_w.d, .norm_w = w.norm_w.d,
			.slot = d_slot, .state = state.d, .conv_state = conv.d, .out = out.d,
		};
		assert_int_equal(kda_decode(&a, 0), 0);
		CUDA_OK(cudaDeviceSynchronize());
		tensor_download(&out);
		char what[64];
		snprintf(what, sizeof(what), "step %d output", s);
		check(what, out.h, ref_out, out.n, TOL_BF16);
		inputs_release(&in);
	}
	tensor_download(&state);
	tensor_download(&conv);
	check("state after the steps", state.h, ref_state, state.n, sdt == KDA_F32 ? TOL_F32 : TOL_BF16);
	/* Conv state holds raw BF16 inputs: exact. */
	assert_memory_equal(conv.h, ref_conv, conv.n * sizeof(double));
	free(ref_state), free(ref_conv), free(ref_out), free(slot);
	tensor_release(&state), tensor_release(&conv), tensor_release(&out);
	weights_release(&w);
	cudaFree(d_slot);
}

static void test_decode_fp32(void **unused)
{
	(void)unused;
	decode_case(KDA_F32, 5, 4, 3);
	decode_case(KDA_F32, 64, 12, 2);
}

/* B x H >= 6144 (request, head) items: the persistent ring kernel by default. */
static void test_decode_many_items(void **unused)
{
	(void)unused;
	decode_case(KDA_F32, 64, 128, 2);
	decode_case(KDA_BF16, 64, 128, 2);
}

/* The persistent ring kernel at shapes where every CTA reuses its ring stages (FP32: 3 items
 * of stages, ~8 items a CTA; BF16: 6 items, ~16 a CTA), both ways of handing a stage back
 * (KDA_DECODE_RING_ARRIVE, kda_decode.cu RING_ARRIVE_THREAD), or only the one the environment
 * names (compute-sanitizer racecheck of one way: 0 hazards with `thread`, the default). */
static void test_decode_ring_arrivals(void **unused)
{
	(void)unused;
	static const char *const modes[] = { "thread", "warp" };
	const char *fixed = getenv("KDA_DECODE_RING_ARRIVE");
	setenv("KDA_DECODE_KERNEL", "ring", 1);
	for (int m = 0; m < 2; m++) {
		if (fixed && strcmp(fixed, modes[m]))
			continue;
		if (!fixed)
			setenv("KDA_DECODE_RING_ARRIVE", modes[m], 1);
		print_message(" KDA_DECODE_KERNEL=ring KDA_DECODE_RING_ARRIVE=%s\n", modes[m]);
		decode_case(KDA_F32, 8, 128, 2);
		decode_case(KDA_BF16, 16, 128, 2);
	}
	if (!fixed)
		unsetenv("KDA_DECODE_RING_ARRIVE");
	unsetenv("KDA_DECODE_KERNEL");
}

/* The ring kernel's options (KDA_DECODE_RING_OPT, kda_decode.cu RF_*: the first state loads
 * before the prologue, L2 evict-first hints, bulk stores of the new state), each against float64
 * at shapes where every CTA reuses its stages, or only the one the environment names
 * (compute-sanitizer of one option). */
static void test_decode_ring_opts(void **unused)
{
	(void)unused;
	static const char *const opts[] = { "none", "half", "quarter", "ramp", "half+ramp", "early", "hint",
					    "bulkst", "early+hint", "early+bulkst", "hint+bulkst", "early+hint+bulkst" };
	const char *fixed = getenv("KDA_DECODE_RING_OPT");
	char keep[64] = "";
	if (fixed)
		snprintf(keep, sizeof(keep), "%s", fixed);
	setenv("KDA_DECODE_KERNEL", "ring", 1);
	for (size_t m = 0; m < sizeof(opts) / sizeof(opts[0]); m++) {
		if (fixed && strcmp(keep, opts[m]))
			continue;
		setenv("KDA_DECODE_RING_OPT", opts[m], 1);
		print_message(" KDA_DECODE_KERNEL=ring KDA_DECODE_RING_OPT=%s\n", opts[m]);
		decode_case(KDA_F32, 8, 128, 2);
		decode_case(KDA_BF16, 16, 128, 2);
		decode_case(KDA_BF16, 5, 7, 2); /* 35 items: fewer than the SMs, one item a CTA */
	}
	/* A name or a set that was not built: -EINVAL, nothing launched. */
	static const char *const bad[] = { "halfx", "half+quarter", "early+", "" };
	const size_t SN = (size_t)D * D, C = 3 * D;
	void *st, *cv, *x, *g, *bt, *gt, *cw, *nw, *sl, *out;
	CUDA_OK(cudaMalloc(&st, SN * 4));
	CUDA_OK(cudaMalloc(&cv, 3 * C * 2));
	CUDA_OK(cudaMalloc(&x, C * 2));
	CUDA_OK(cudaMalloc(&g, D * 2));
	CUDA_OK(cudaMalloc(&bt, 16));
	CUDA_OK(cudaMalloc(&gt, D * 2));
	CUDA_OK(cudaMalloc(&cw, C * 4 * 2));
	CUDA_OK(cudaMalloc(&nw, D * 2));
	CUDA_OK(cudaMalloc(&sl, 16));
	CUDA_OK(cudaMalloc(&out, D * 2));
	CUDA_OK(cudaMemset(sl, 0, 16));
	for (size_t m = 0; m < sizeof(bad) / sizeof(bad[0]); m++) {
		setenv("KDA_DECODE_RING_OPT", bad[m], 1);
		for (int d = 0; d < 2; d++) {
			struct kda_decode_args a = {
				.batch = 1, .heads = 1, .state_dtype = d ? KDA_BF16 : KDA_F32, .scale = 0.08838835f,
				.norm_eps = 1e-6f, .x = x, .g_raw = g, .beta_raw = bt, .gate_raw = gt, .conv_w = cw,
				.norm_w = nw, .slot = sl, .state = st, .conv_state = cv, .out = out,
			};
			assert_int_equal(kda_decode(&a, 0), -EINVAL);
		}
	}
	CUDA_OK(cudaDeviceSynchronize());
	cudaFree(st), cudaFree(cv), cudaFree(x), cudaFree(g), cudaFree(bt), cudaFree(gt), cudaFree(cw);
	cudaFree(nw), cudaFree(sl), cudaFree(out);
	if (fixed)
		setenv("KDA_DECODE_RING_OPT", keep, 1);
	else
		unsetenv("KDA_DECODE_RING_OPT");
	unsetenv("KDA_DECODE_KERNEL");
}

/* KDA_DECODE_RING_TRACE: the traced kernel computes what the float64 reference does, and its
 * record is consistent: every CTA of the grid stamped, the items summed over the CTAs equal
 * B x H, stamps in order (entry <= first input <= first state chunk <= first item <= end). */
static void test_decode_ring_trace(void **unused)
{
	(void)unused;
	enum { B = 16, H = 128 };
	setenv("KDA_DECODE_KERNEL", "ring", 1);
	setenv("KDA_DECODE_RING_TRACE", "3", 1);
	decode_case(KDA_BF16, B, H, 1);
	unsetenv("KDA_DECODE_RING_TRACE");
	unsetenv("KDA_DECODE_KERNEL");
	const size_t per = (size_t)KDA_DECODE_TRACE_CTAS * KDA_DECODE_TRACE_FIELDS;
	const size_t n = (size_t)KDA_DECODE_TRACE_LAUNCHES * per;
	unsigned long long *t = xmalloc(n * sizeof(*t));
	assert_int_equal(kda_decode_trace_read(t, n), 0);
	const unsigned long long *r = t + 3 * per;
	long items = 0;
	int ctas = 0;
	for (int c = 0; c < KDA_DECODE_TRACE_CTAS; c++) {
		const unsigned long long *x = r + (size_t)c * KDA_DECODE_TRACE_FIELDS;
		if (!x[0])
			continue;
		ctas++;
		const long k = (long)(x[5] & 0xffffffffu);
		items += k;
		assert_true(k >= 1);
		assert_true(x[0] <= x[2] && x[2] <= x[3] && x[3] <= x[12] && x[12] <= x[4]);
		assert_true(x[1] >= x[0] - 1000000 && x[1] <= x[4]); /* another warp's clock read: within 1 ms */
		assert_true(x[6] + x[7] <= x[8]);                       /* waits within the CTA's cycles */
	}
	int dev = 0, sms = 0;
	CUDA_OK(cudaGetDevice(&dev));
	CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	assert_int_equal(ctas, B * H < sms ? B * H : sms);
	assert_int_equal(items, (long)B * H);
	for (size_t i = 0; i < n; i++) /* the other records stay empty */
		if (i / per != 3)
			assert_true(t[i] == 0);
	free(t);
}

static void test_decode_bf16(void **unused)
{
	(void)unused;
	decode_case(KDA_BF16, 5, 4, 3);
	decode_case(KDA_BF16, 33, 12, 2);
}

/* ---- verify + replay ------------------------------------------------- */

static void verify_case(enum kda_dtype sdt)
{
	enum { B = KDA_MAX_WINDOW + 1, H = 6, W = KDA_MAX_WINDOW };
	print_message(" verify/replay: %s state, B=%d H=%d W=%d, accept 0..%d\n",
		      sdt == KDA_F32 ? "fp32" : "bf16", B, H, W, W);
	const int slots = B + 2;
	int32_t slot[B], n_draft[B], n_acc[B], n_draft2[B];
	for (int i = 0; i < B; i++) {
		slot[i] = (int32_t)(slots - 1 - i);
		n_draft[i] = W - (i % 3);
		n_acc[i] = i < n_draft[i] ? i : n_draft[i]; /* every position 0..W */
		n_draft2[i] = 1 + (i * 5) % W;
	}
	n_draft[W] = W, n_acc[W] = W; /* the last request accepts the whole window */
	void *d_slot = dev_i32(slot, B), *d_draft = dev_i32(n_draft, B);
	void *d_acc = dev_i32(n_acc, B), *d_draft2 = dev_i32(n_draft2, B);
	struct step_weights w = weights_new(H);
	const size_t SN = (size_t)H * D * D, CN = 3 * w.C;
	struct tensor state = tensor_rand(slots * SN, sdt, -1, 1);
	struct tensor conv = tensor_rand(slots * CN, KDA_BF16, -1.5, 1.5);
	double *state0 = dnew(slots * SN), *conv0 = dnew(slots * CN);
	memcpy(state0, state.h, slots * SN * sizeof(double));
	memcpy(conv0, conv.h, slots * CN * sizeof(double));
	struct step_inputs win1 = inputs_new(B, W, H), win2 = inputs_new(B, W, H);
	struct tensor out = tensor_out((size_t)B * W * H * D, KDA_BF16);
	double *ref_out = dnew(out.n);

	/* 1. Verify only: outputs of the drafts, state untouched (bit for bit). */
	struct kda_ref_step r = ref_step(&w, &win1, B, W, slot, state0, conv0, ref_out);
	for (size_t i = 0; i < out.n; i++)
		ref_out[i] = 0.0; /* unused draft positions are not compared */
	assert_int_equal(kda_ref_verify(&r, n_draft), 0);
	struct kda_verify_args a = {
		.batch = B, .heads = H, .window = W, .state_dtype = sdt, .scale = (float)r.scale,
		.norm_eps = 1e-6f, .conv_w = w.conv_w.d, .norm_w = w.norm_w.d, .slot = d_slot,
		.state = state.d, .conv_state = conv.d,
		.draft = { win1.x.d, win1.g.d, win1.b.d, win1.gate.d, d_draft }, .out = out.d,
	};
	assert_int_equal(kda_verify_replay(&a, 0), 0);
	CUDA_OK(cudaDeviceSynchronize());
	tensor_download(&out);
	for (int i = 0; i < B; i++) /* positions past n_draft stay poisoned: not written */
		for (int t = n_draft[i]; t < W; t++) {
			size_t o = ((size_t)i * W + t) * H * D;
			assert_true(isnan(out.h[o]));
			for (size_t e = 0; e < (size_t)H * D; e++)
				out.h[o + e] = 0.0;
		}
	check("verify outputs (all drafts)", out.h, ref_out, out.n, TOL_BF16);
	tensor_download(&state);
	tensor_download(&conv);
	assert_memory_equal(state.h, state0, state.n * sizeof(double));
	assert_memory_equal(conv.h, conv0, conv.n * sizeof(double));

	/* 2. Replay the accepted prefix of window 1 (every rejection position),
	 *    then verify window 2 from there, in one launch. */
	double *ref_state = dnew(slots * SN), *ref_conv = dnew(slots * CN);
	memcpy(ref_state, state0, slots * SN * sizeof(double));
	memcpy(ref_conv, conv0, slots * CN * sizeof(double));
	r = ref_step(&w, &win1, B, W, slot, ref_state, ref_conv, NULL);
	assert_int_equal(kda_ref_replay(&r, n_acc), 0);
	struct kda_ref_step r2 = ref_step(&w, &win2, B, W, slot, ref_state, ref_conv, ref_out);
	for (size_t i = 0; i < out.n; i++)
		ref_out[i] = 0.0;
	assert_int_equal(kda_ref_verify(&r2, n_draft2), 0);
	tensor_poison(&out);
	a.replay = (struct kda_window){ win1.x.d, win1.g.d, win1.b.d, NULL, d_acc };
	a.draft = (struct kda_window){ win2.x.d, win2.g.d, win2.b.d, win2.gate.d, d_draft2 };
	assert_int_equal(kda_verify_replay(&a, 0), 0);
	CUDA_OK(cudaDeviceSynchronize());
	tensor_download(&out);
	for (int i = 0; i < B; i++)
		for (int t = n_draft2[i]; t < W; t++)
			for (size_t e = 0; e < (size_t)H * D; e++)
				out.h[((size_t)i * W + t) * H * D + e] = 0.0;
	check("verify outputs after replay", out.h, ref_out, out.n, TOL_BF16);
	tensor_download(&state);
	tensor_download(&conv);
	check("state after replay of 0..W tokens", state.h, ref_state, state.n,
	      sdt == KDA_F32 ? TOL_F32 : TOL_BF16);
	assert_memory_equal(conv.h, ref_conv, conv.n * sizeof(double));

	/* 3. The replayed state equals the GPU's own sequential decode (up to
	 *    rounding: decode stores the state after every token, replay once). */
	struct tensor state_seq = tensor_rand(slots * SN, sdt, -1, 1);
	struct tensor conv_seq = tensor_rand(slots * CN, KDA_BF16, -1, 1);
	memcpy(state_seq.h, state0, slots * SN * sizeof(double));
	memcpy(conv_seq.h, conv0, slots * CN * sizeof(double));
	tensor_upload(&state_seq);
	tensor_upload(&conv_seq);
	struct tensor out1 = tensor_out((size_t)H * D, KDA_BF16);
	const size_t xs = (size_t)H * 3 * D, gs = (size_t)H * D;
	for (int i = 0; i < B; i++) {
		for (int t = 0; t < n_acc[i]; t++) {
			size_t bt = (size_t)i * W + t;
			struct kda_decode_args d = {
				.batch = 1, .heads = H, .state_dtype = sdt, .scale = (float)r.scale,
				.norm_eps = 1e-6f, .x = (const uint16_t *)win1.x.d + bt * xs,
				.g_raw = (const uint16_t *)win1.g.d + bt * gs,
				.beta_raw = (const uint16_t *)win1.b.d + bt * H,
				.gate_raw = (const uint16_t *)win1.gate.d + bt * gs, .conv_w = w.conv_w.d,
				.norm_w = w.norm_w.d, .slot = (const int32_t *)d_slot + i,
				.state = state_seq.d, .conv_state = conv_seq.d, .out = out1.d,
			};
			assert_int_equal(kda_decode(&d, 0), 0);
		}
	}
	CUDA_OK(cudaDeviceSynchronize());
	tensor_download(&state_seq);
	check("replay vs GPU sequential decode", state.h, state_seq.h, state.n,
	      sdt == KDA_F32 ? TOL_F32 : TOL_BF16);

	free(state0), free(conv0), free(ref_out), free(ref_state), free(ref_conv);
	tensor_release(&state), tensor_release(&conv), tensor_release(&out);
	tensor_release(&state_seq), tensor_release(&conv_seq), tensor_release(&out1);
	inputs_release(&win1), inputs_release(&win2);
	weights_release(&w);
	cudaFree(d_slot), cudaFree(d_draft), cudaFree(d_acc), cudaFree(d_draft2);
}

static void test_verify_replay_fp32(void **unused)
{
	(void)unused;
	verify_case(KDA_F32);
}

static void test_verify_replay_bf16(void **unused)
{
	(void)unused;
	verify_case(KDA_BF16);
}

/* ---- chunked prefill ------------------------------------------------- */

/* g_raw's range in prefill_case(): [-6, 3) unless a test widens it. */
static double gate_lo = -6, gate_hi = 3;

/* Runs one packed prefill on the GPU and the float64 definition; checks
 * outputs and final states. lens: sequence lengths; slots permuted in a
 * pool with one spare slot; in place (initial == final) when `in_place`. */
static void prefill_case(enum kda_dtype sdt, int n, const int *lens, int H, bool with_init,
			 bool in_place)
{
	int32_t cu[65];
	int64_t cu64[65];
	cu[0] = 0, cu64[0] = 0;
	for (int i = 0; i < n; i++)
		cu[i + 1] = cu[i] + lens[i], cu64[i + 1] = cu[i + 1];
	const int64_t T = cu[n];
	print_message(" prefill: %s state, N=%d H=%d T=%lld%s%s\n", sdt == KDA_F32 ? "fp32" : "bf16", n,
		      H, (long long)T, with_init ? ", initial state" : "", in_place ? ", in place" : "");
	const int slots = n + 1;
	int32_t slot[64];
	for (int i = 0; i < n; i++)
		slot[i] = (int32_t)((i + 1) % slots);
	const size_t SN = (size_t)H * D * D;
	struct tensor q = tensor_rand((size_t)T * H * D, KDA_BF16, -1, 1);
	struct tensor k = tensor_rand((size_t)T * H * D, KDA_BF16, -1, 1);
	struct tensor v = tensor_rand((size_t)T * H * D, KDA_BF16, -1, 1);
	struct tensor g = tensor_rand((size_t)T * H * D, KDA_BF16, gate_lo, gate_hi);
	struct tensor b = tensor_rand((size_t)T * H, KDA_BF16, -3, 3);
	struct tensor s0 = tensor_rand(slots * SN, sdt, -1, 1);
	struct tensor s1 = in_place ? s0 : tensor_out(slots * SN, sdt);
	struct tensor out = tensor_out((size_t)T * H * D, KDA_BF16);
	/* Reference on per-sequence (not per-slot) states. */
	double *r0 = dnew(n * SN), *r1 = dnew(n * SN), *ro = dnew((size_t)T * H * D);
	for (int i = 0; i < n; i++)
		memcpy(r0 + i * SN, s0.h + slot[i] * SN, SN * sizeof(double));
	struct kda_ref_prefill rp = {
		.n_seqs = n, .cu_seqlens = cu64, .heads = H, .dk = D, .dv = D,
		.scale = 1.0 / sqrt((double)D), .q = q.h, .k = k.h, .v = v.h, .g_raw = g.h,
		.beta_raw = b.h, .initial_state = with_init ? r0 : NULL, .final_state = r1, .out = ro,
	};
	assert_int_equal(kda_ref_prefill_sequential(&rp), 0);

	void *d_cu = dev_i32(cu, n + 1), *d_slot = dev_i32(slot, n), *ws;
	size_t wsb = kda_prefill_workspace_bytes(n, H, T);
	assert_true(wsb > 0);
	CUDA_OK(cudaMalloc(&ws, wsb));
	CUDA_OK(cudaMemset(ws, 0xff, wsb));
	struct kda_prefill_args a = {
		.n_seqs = n, .heads = H, .total_tokens = T, .cu_seqlens = d_cu, .state_dtype = sdt,
		.scale = (float)rp.scale, .q = q.d, .k = k.d, .v = v.d, .g_raw = g.d, .beta_raw = b.d,
		.state_slot = d_slot, .initial_state = with_init ? s0.d : NULL, .final_state = s1.d,
		.out = out.d, .workspace = ws,
	};
	assert_int_equal(kda_prefill(&a, 0), 0);
	CUDA_OK(cudaDeviceSynchronize());
	tensor_download(&out);
	tensor_download(&s1);
	/* Diagnostics: the first chunk of sequence 0 involves only the intra
	 * kernel's products and the initial state; later chunks the recurrence. */
	int64_t first = lens[0] < KDA_CHUNK ? lens[0] : KDA_CHUNK;
	if (first > 0 && T > first) {
		print_message("  first chunk %.3e, rest %.3e\n",
			      test_rel_err(out.h, ro, (size_t)first * H * D),
			      test_rel_err(out.h + first * H * D, ro + first * H * D,
					   (size_t)(T - first) * H * D));
	}
	check("prefill outputs", out.h, ro, out.n, TOL_BF16);
	double *got = dnew(n * SN);
	for (int i = 0; i < n; i++)
		memcpy(got + i * SN, s1.h + slot[i] * SN, SN * sizeof(double));
	check("final states", got, r1, n * SN, TOL_BF16);
	free(got), free(r0), free(r1), free(ro);
	tensor_release(&q), tensor_release(&k), tensor_release(&v), tensor_release(&g);
	tensor_release(&b), tensor_release(&out);
	if (!in_place)
		tensor_release(&s1);
	tensor_release(&s0);
	cudaFree(ws), cudaFree(d_cu), cudaFree(d_slot);
}

static void test_prefill_fixed(void **unused)
{
	(void)unused;
	static const int two100[] = { 100, 100 };
	prefill_case(KDA_F32, 2, two100, 4, true, false);  /* 8 CTAs: 1 warp each */
	prefill_case(KDA_F32, 2, two100, 4, false, false); /* zero initial state */
	static const int one2k[] = { 2048 };
	prefill_case(KDA_F32, 1, one2k, 2, true, false);   /* long chain */
	static const int three64[] = { 64, 64, 64 };
	prefill_case(KDA_BF16, 3, three64, 48, true, false); /* 144 pairs: 288 CTAs of 4 warps */
}

static void test_prefill_varlen(void **unused)
{
	(void)unused;
	static const int lens[] = { 1, 16, 17, 0, 200, 33 };
	prefill_case(KDA_BF16, 6, lens, 8, true, true);   /* 48 pairs: 1 warp, in place */
	prefill_case(KDA_F32, 6, lens, 14, true, false);  /* 84 pairs: 2 warps */
}

/* The configurations kda_prefill() can take (K3_KDA_* variables, see kda_prefill.cu's
 * prefill_cfg) against the float64 definition: the recurrent kernel at every CTA width, with 3
 * stages, both width rules; the intra kernel v1 and v2; the overlapped path with its
 * defaults. */
static void test_prefill_variants(void **unused)
{
	(void)unused;
	static const int lens[] = { 300, 17, 0, 100 };
	static const char *const warps[] = { "8", "4", "2", "1" };
	for (int i = 0; i < 4; i++) {
		setenv("K3_KDA_RECUR_WARPS", warps[i], 1);
		print_message(" K3_KDA_RECUR_WARPS=%s\n", warps[i]);
		prefill_case(i & 1 ? KDA_BF16 : KDA_F32, 4, lens, 6, true, false);
	}
	setenv("K3_KDA_INTRA", "v2", 1);
	setenv("K3_KDA_RECUR_WARPS", "v2", 1);
	print_message(" K3_KDA_INTRA=v2 K3_KDA_RECUR_WARPS=v2\n");
	static const int three64[] = { 64, 64, 64 };
	prefill_case(KDA_BF16, 3, three64, 48, true, false); /* 144 pairs: 288 CTAs of 4 warps */
	setenv("K3_KDA_RECUR_WARPS", "v1", 1);
	setenv("K3_KDA_RECUR_STAGES", "3", 1);
	print_message(" K3_KDA_RECUR_WARPS=v1 K3_KDA_RECUR_STAGES=3\n");
	prefill_case(KDA_F32, 4, lens, 6, true, false);
	unsetenv("K3_KDA_RECUR_WARPS");
	unsetenv("K3_KDA_RECUR_STAGES");
	static const int varlen[] = { 1, 16, 17, 0, 200, 33 };
	setenv("K3_KDA_INTRA", "v1", 1);
	print_message(" K3_KDA_INTRA=v1\n");
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	unsetenv("K3_KDA_INTRA");
	setenv("K3_KDA_PREFILL", "overlap", 1);
	print_message(" K3_KDA_PREFILL=overlap (its defaults)\n");
	static const int one2k[] = { 2048 };
	prefill_case(KDA_F32, 1, one2k, 32, true, false);
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	unsetenv("K3_KDA_PREFILL");
}

/* The intra kernel's lean instance (K3_KDA_INTRA=v3: gates in log2 units, 2^x and 1/x in their
 * flush-to-zero forms) against float64 on the serial and the overlapped path, also with g_raw in
 * [-30, 30) (decays at the gate's bound, Gamma down to e^-80 within a chunk, where the flushed
 * forms would first differ). */
static void test_prefill_lean(void **unused)
{
	(void)unused;
	static const int varlen[] = { 1, 16, 17, 0, 200, 33 };
	static const int one2k[] = { 2048 };
	setenv("K3_KDA_INTRA", "v3", 1);
	if (getenv("KDA_TEST_LEAN_SMALL")) { /* sanitizers: one small serial shape */
		prefill_case(KDA_F32, 6, varlen, 8, true, false);
		unsetenv("K3_KDA_INTRA");
		return;
	}
	for (int wide = 0; wide < 2; wide++) {
		gate_lo = wide ? -30 : -6, gate_hi = wide ? 30 : 3;
		print_message(" K3_KDA_INTRA=v3, g_raw in [%g, %g)\n", gate_lo, gate_hi);
		prefill_case(KDA_F32, 6, varlen, 8, true, false);
		prefill_case(KDA_BF16, 6, varlen, 14, true, true);
		setenv("K3_KDA_PREFILL", "overlap", 1);
		prefill_case(wide ? KDA_BF16 : KDA_F32, 1, one2k, 32, true, false);
		unsetenv("K3_KDA_PREFILL");
	}
	gate_lo = -6, gate_hi = 3;
	unsetenv("K3_KDA_INTRA");
}

/* The recurrence two chunks a step (K3_KDA_RECUR=pair, pair136, pair3, pairr: the pair kernel with its cross-term warp)
 * against float64: every CTA width, sequences of odd and even chunk counts (300 tokens: 19
 * chunks, 17: 2 with a 1-token second, 100: 7), empty, 1- and 16-token ones, in place, both state
 * dtypes, the overlapped path, and g_raw in [-30, 30) (decays down to e^-80 a chunk: the cross
 * terms' products of two chunks' decays). KDA_TEST_PAIR_SMALL: one small shape (sanitizers). */
static void test_prefill_pair(void **unused)
{
	(void)unused;
	static const int lens[] = { 300, 17, 0, 100 };
	static const int varlen[] = { 1, 16, 17, 0, 200, 33 };
	static const int one2k[] = { 2048 };
	setenv("K3_KDA_RECUR", "pair", 1);
	if (getenv("KDA_TEST_PAIR_SMALL")) {
		prefill_case(KDA_F32, 6, varlen, 8, true, false);
		unsetenv("K3_KDA_RECUR");
		return;
	}
	static const char *const warps[] = { "8", "4", "2", "1" };
	for (int i = 0; i < 4; i++) {
		setenv("K3_KDA_RECUR_WARPS", warps[i], 1);
		print_message(" K3_KDA_RECUR=pair K3_KDA_RECUR_WARPS=%s\n", warps[i]);
		prefill_case(i & 1 ? KDA_BF16 : KDA_F32, 4, lens, 6, true, false);
	}
	unsetenv("K3_KDA_RECUR_WARPS");
	print_message(" K3_KDA_RECUR=pair, its width rules\n");
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	prefill_case(KDA_F32, 6, varlen, 14, false, false);
	prefill_case(KDA_F32, 1, one2k, 2, true, false);
	setenv("K3_KDA_PREFILL", "overlap", 1);
	print_message(" K3_KDA_RECUR=pair K3_KDA_PREFILL=overlap\n");
	prefill_case(KDA_F32, 1, one2k, 32, true, false);
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	unsetenv("K3_KDA_PREFILL");
	gate_lo = -30, gate_hi = 30;
	print_message(" K3_KDA_RECUR=pair, g_raw in [-30, 30)\n");
	prefill_case(KDA_F32, 6, varlen, 8, true, false);
	prefill_case(KDA_BF16, 1, one2k, 4, true, false);
	gate_lo = -6, gate_hi = 3;
	/* The instance compiled for <= 136 registers (spills in its BF16 form). */
	setenv("K3_KDA_RECUR", "pair136", 1);
	for (int i = 1; i < 4; i += 2) {
		setenv("K3_KDA_RECUR_WARPS", warps[i], 1);
		print_message(" K3_KDA_RECUR=pair136 K3_KDA_RECUR_WARPS=%s\n", warps[i]);
		prefill_case(KDA_BF16, 4, lens, 6, true, false);
		prefill_case(KDA_F32, 6, varlen, 8, true, true);
	}
	unsetenv("K3_KDA_RECUR_WARPS");
	setenv("K3_KDA_PREFILL", "overlap", 1);
	print_message(" K3_KDA_RECUR=pair136 K3_KDA_PREFILL=overlap\n");
	prefill_case(KDA_BF16, 1, one2k, 32, true, false);
	unsetenv("K3_KDA_PREFILL");
	/* Three pairs in flight. */
	setenv("K3_KDA_RECUR", "pair3", 1);
	print_message(" K3_KDA_RECUR=pair3\n");
	prefill_case(KDA_F32, 4, lens, 6, true, false);
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	setenv("K3_KDA_PREFILL", "overlap", 1);
	prefill_case(KDA_F32, 1, one2k, 32, true, false);
	unsetenv("K3_KDA_PREFILL");
	/* The decays in the state warps' registers (the cross warp makes X and Y only). */
	setenv("K3_KDA_RECUR", "pairr", 1);
	for (int i = 0; i < 4; i++) {
		setenv("K3_KDA_RECUR_WARPS", warps[i], 1);
		print_message(" K3_KDA_RECUR=pairr K3_KDA_RECUR_WARPS=%s\n", warps[i]);
		prefill_case(i & 1 ? KDA_BF16 : KDA_F32, 4, lens, 6, true, false);
	}
	unsetenv("K3_KDA_RECUR_WARPS");
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	gate_lo = -30, gate_hi = 30;
	print_message(" K3_KDA_RECUR=pairr, g_raw in [-30, 30)\n");
	prefill_case(KDA_F32, 6, varlen, 8, true, false);
	gate_lo = -6, gate_hi = 3;
	setenv("K3_KDA_PREFILL", "overlap", 1);
	print_message(" K3_KDA_RECUR=pairr K3_KDA_PREFILL=overlap\n");
	prefill_case(KDA_F32, 1, one2k, 32, true, false);
	unsetenv("K3_KDA_PREFILL");
	setenv("K3_KDA_RECUR", "pairr3", 1);
	print_message(" K3_KDA_RECUR=pairr3\n");
	prefill_case(KDA_F32, 4, lens, 6, true, false);
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	unsetenv("K3_KDA_RECUR");
}

/* The split records (K3_KDA_RECUR=split: the intra kernel writes Kt and TB = T diag(beta), the
 * recurrent CTAs read v and make U and Wk; kernels/kda/kda_recur_step.cuh split_cta()) against
 * float64: every CTA width, 3 and 4 stages, both intra versions (v2, v3), sequences of odd and
 * even chunk counts with partial last chunks, empty and 1-token ones, in place, both state
 * dtypes, the overlapped path, and g_raw in [-30, 30). K3_KDA_INTRA=v1 with split must answer
 * -EINVAL. KDA_TEST_SPLIT_SMALL: one small shape (sanitizers). */
static void test_prefill_split(void **unused)
{
	(void)unused;
	static const int lens[] = { 300, 17, 0, 100 };
	static const int varlen[] = { 1, 16, 17, 0, 200, 33 };
	static const int one2k[] = { 2048 }, one4k[] = { 4096 };
	setenv("K3_KDA_RECUR", "split", 1);
	if (getenv("KDA_TEST_SPLIT_SMALL")) { /* K3_KDA_SPLIT_OPT as the caller set it */
		prefill_case(KDA_F32, 6, varlen, 8, true, false);
		setenv("K3_KDA_PREFILL", "overlap", 1);
		prefill_case(KDA_BF16, 1, one2k, 8, true, false);
		unsetenv("K3_KDA_PREFILL");
		unsetenv("K3_KDA_RECUR");
		return;
	}
	static const char *const warps[] = { "8", "4", "2", "1" };
	for (int i = 0; i < 4; i++) {
		setenv("K3_KDA_RECUR_WARPS", warps[i], 1);
		setenv("K3_KDA_RECUR_STAGES", i & 2 ? "4" : "3", 1);
		print_message(" K3_KDA_RECUR=split K3_KDA_RECUR_WARPS=%s K3_KDA_RECUR_STAGES=%s\n", warps[i],
			      i & 2 ? "4" : "3");
		prefill_case(i & 1 ? KDA_BF16 : KDA_F32, 4, lens, 6, true, false);
	}
	unsetenv("K3_KDA_RECUR_WARPS");
	unsetenv("K3_KDA_RECUR_STAGES");
	print_message(" K3_KDA_RECUR=split, its width rules, v2 and v3\n");
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	prefill_case(KDA_F32, 6, varlen, 14, false, false);
	setenv("K3_KDA_INTRA", "v3", 1);
	prefill_case(KDA_F32, 1, one2k, 2, true, false);
	prefill_case(KDA_BF16, 6, varlen, 8, true, false);
	unsetenv("K3_KDA_INTRA");
	setenv("K3_KDA_PREFILL", "overlap", 1);
	print_message(" K3_KDA_RECUR=split K3_KDA_PREFILL=overlap\n");
	prefill_case(KDA_F32, 1, one2k, 32, true, false);
	prefill_case(KDA_BF16, 6, varlen, 8, true, true);
	unsetenv("K3_KDA_PREFILL");
	print_message(" K3_KDA_RECUR=split, the default path at T = 4K, H = 96 (overlapped)\n");
	prefill_case(KDA_F32, 1, one4k, 96, true, false);
	gate_lo = -30, gate_hi = 30;
	print_message(" K3_KDA_RECUR=split, g_raw in [-30, 30)\n");
	prefill_case(KDA_F32, 6, varlen, 8, true, false);
	prefill_case(KDA_BF16, 1, one2k, 4, true, false);
	gate_lo = -6, gate_hi = 3;
	/* K3_KDA_SPLIT_OPT's forms that keep the results (kda_recur_step.cuh SPLIT_*). */
	static const char *const opts[] = { "3", "16", "32", "48", "50" };
	for (int i = 0; i < 5; i++) {
		setenv("K3_KDA_SPLIT_OPT", opts[i], 1);
		print_message(" K3_KDA_RECUR=split K3_KDA_SPLIT_OPT=%s\n", opts[i]);
		prefill_case(i & 1 ? KDA_BF16 : KDA_F32, 6, varlen, 8, true, false);
		setenv("K3_KDA_PREFILL", "overlap", 1);
		prefill_case(KDA_F32, 1, one2k, 32, true, false);
		unsetenv("K3_KDA_PREFILL");
	}
	unsetenv("K3_KDA_SPLIT_OPT");
	/* v1 has no SPLIT instance: the call refuses, nothing runs. */
	setenv("K3_KDA_INTRA", "v1", 1);
	{
		struct kda_prefill_args a = { .n_seqs = 1, .heads = 1, .total_tokens = 16, .cu_seqlens = (void *)16,
					      .state_dtype = KDA_F32, .q = (void *)16, .k = (void *)16, .v = (void *)16,
					      .g_raw = (void *)16, .beta_raw = (void *)16, .out = (void *)16,
					      .workspace = (void *)16 };
		assert_int_equal(kda_prefill(&a, 0), -EINVAL);
	}
	unsetenv("K3_KDA_INTRA");
	unsetenv("K3_KDA_RECUR");
}

/* Random BF16 bits, uniform in [lo, hi), straight to the device (the bitwise
 * comparisons below need no float64 copies). */
static void *dev_bf16_rand(size_t n, double lo, double hi)
{
	uint16_t *h = xmalloc(n * 2);
	for (size_t i = 0; i < n; i++)
		h[i] = bf16_of(test_rng_uniform(&rng, lo, hi));
	void *d;
	CUDA_OK(cudaMalloc(&d, n * 2));
	CUDA_OK(cudaMemcpy(d, h, n * 2, cudaMemcpyHostToDevice));
	free(h);
	return d;
}

/* The overlapped prefill (K3_KDA_PREFILL=overlap: the recurrent kernel beside
 * the intra one, waiting on per-record flags) against the serial one (default):
 * same kernels, same arithmetic, so outputs and final states must match bit
 * for bit, at shapes where the recurrent CTAs share the SMs with thousands of
 * intra CTAs (a missed flag or a stale record would show as a difference). */
static void overlap_case(enum kda_dtype sdt, int n, const int *lens, int H)
{
	int32_t cu[65];
	cu[0] = 0;
	for (int i = 0; i < n; i++)
		cu[i + 1] = cu[i] + lens[i];
	const int64_t T = cu[n];
	print_message(" prefill overlapped vs serial: %s state, N=%d H=%d T=%lld\n",
		      sdt == KDA_F32 ? "fp32" : "bf16", n, H, (long long)T);
	const size_t E = (size_t)T * H * D, SB = (size_t)n * H * D * D * (sdt == KDA_F32 ? 4 : 2);
	void *q = dev_bf16_rand(E, -1, 1), *k = dev_bf16_rand(E, -1, 1), *v = dev_bf16_rand(E, -1, 1);
	void *g = dev_bf16_rand(E, -6, 3), *b = dev_bf16_rand((size_t)T * H, -3, 3);
	void *s0 = dev_bf16_rand(SB / 2, -1, 1); /* any bits: FP32 state from BF16 pairs */
	void *s1, *out, *ws, *d_cu = dev_i32(cu, n + 1);
	CUDA_OK(cudaMalloc(&s1, SB));
	CUDA_OK(cudaMalloc(&out, E * 2));
	const size_t wsb = kda_prefill_workspace_bytes(n, H, T);
	CUDA_OK(cudaMalloc(&ws, wsb));
	uint8_t *ho[2], *hs[2];
	const char *mode[2] = { "overlap", "serial" };
	/* The same kernels both ways (by default the serial path takes another intra build,
	 * stage count and width rule): only the flags and the side stream differ. The caller's
	 * K3_KDA_INTRA / K3_KDA_RECUR_STAGES stand; else v2 and 3 stages (the overlapped defaults). */
	const bool pin_intra = !getenv("K3_KDA_INTRA"), pin_stages = !getenv("K3_KDA_RECUR_STAGES");
	if (pin_intra)
		setenv("K3_KDA_INTRA", "v2", 1);
	if (pin_stages)
		setenv("K3_KDA_RECUR_STAGES", "3", 1);
	setenv("K3_KDA_RECUR_WARPS", "v1", 1);
	for (int m = 0; m < 2; m++) {
		CUDA_OK(cudaMemset(out, 0xff, E * 2));
		CUDA_OK(cudaMemset(s1, 0xff, SB));
		CUDA_OK(cudaMemset(ws, 0xff, wsb));
		setenv("K3_KDA_PREFILL", mode[m], 1);
		struct kda_prefill_args a = {
			.n_seqs = n, .heads = H, .total_tokens = T, .cu_seqlens = d_cu, .state_dtype = sdt,
			.scale = 0.08838835f, .q = q, .k = k, .v = v, .g_raw = g, .beta_raw = b,
			.initial_state = s0, .final_state = s1, .out = out, .workspace = ws,
		};
		assert_int_equal(kda_prefill(&a, 0), 0);
		CUDA_OK(cudaDeviceSynchronize());
		ho[m] = xmalloc(E * 2), hs[m] = xmalloc(SB);
		CUDA_OK(cudaMemcpy(ho[m], out, E * 2, cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(hs[m], s1, SB, cudaMemcpyDeviceToHost));
	}
	unsetenv("K3_KDA_PREFILL");
	unsetenv("K3_KDA_RECUR_WARPS");
	if (pin_intra)
		unsetenv("K3_KDA_INTRA");
	if (pin_stages)
		unsetenv("K3_KDA_RECUR_STAGES");
	size_t diff_o = 0, diff_s = 0;
	for (size_t i = 0; i < E * 2; i++)
		diff_o += ho[0][i] != ho[1][i];
	for (size_t i = 0; i < SB; i++)
		diff_s += hs[0][i] != hs[1][i];
	if (diff_o || diff_s)
		print_error("overlapped vs serial: %zu output bytes, %zu state bytes differ\n", diff_o, diff_s);
	assert_true(diff_o == 0 && diff_s == 0);
	for (int m = 0; m < 2; m++)
		free(ho[m]), free(hs[m]);
	cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(g), cudaFree(b), cudaFree(s0), cudaFree(s1);
	cudaFree(out), cudaFree(ws), cudaFree(d_cu);
}

/* The default decode (the ring kernel at 8192 (request, head) items, as test_decode_many_items)
 * run again and again from the same state, conv state and inputs: every run must give the
 * first run's outputs bit for bit, and the last run its final state (a stage refilled before
 * all its readers were done would show as a difference). KDA_TEST_RING_REPEAT runs (default 4;
 * the device calls of 2026-12-01zd: 100 and 300). The first run is checked against float64 by
 * test_decode_many_items; this one needs no float64 pass, so it can repeat many times. */
static void test_decode_ring_repeat(void **unused)
{
	(void)unused;
	enum { B = 64, H = 128 };
	const char *e = getenv("KDA_TEST_RING_REPEAT");
	const int reps = e && atoi(e) > 0 ? atoi(e) : 4;
	const size_t C = (size_t)H * 3 * D, O = (size_t)B * H * D;
	const enum kda_dtype dts[2] = { KDA_F32, KDA_BF16 };
	int32_t slot[B];
	for (int i = 0; i < B; i++)
		slot[i] = (int32_t)(B - 1 - i);
	void *d_slot = dev_i32(slot, B);
	void *x = dev_bf16_rand((size_t)B * C, -1.5, 1.5), *g = dev_bf16_rand(O, -6, 3);
	void *bt = dev_bf16_rand((size_t)B * H, -3, 3), *gate = dev_bf16_rand(O, -2, 2);
	void *cw = dev_bf16_rand(C * KDA_CONV_TAPS, -0.6, 0.6), *nw = dev_bf16_rand(D, 0.5, 1.5);
	const size_t CB = (size_t)B * 3 * C * 2;
	void *conv0 = dev_bf16_rand(CB / 2, -1.5, 1.5), *conv, *out;
	CUDA_OK(cudaMalloc(&conv, CB));
	CUDA_OK(cudaMalloc(&out, O * 2));
	for (int d = 0; d < 2; d++) {
		const size_t SB = (size_t)B * H * D * D * (dts[d] == KDA_F32 ? 4 : 2);
		print_message(" ring repeat: %s state, B=%d H=%d, %d runs\n", dts[d] == KDA_F32 ? "fp32" : "bf16", B,
			      H, reps);
		void *s0 = dev_bf16_rand(SB / 2, -1, 1), *st; /* FP32 state from BF16 pairs: finite */
		CUDA_OK(cudaMalloc(&st, SB));
		uint8_t *first = xmalloc(O * 2), *now = xmalloc(O * 2), *sfirst = xmalloc(SB), *snow = xmalloc(SB);
		size_t bad_runs = 0;
		for (int r = 0; r < reps; r++) {
			CUDA_OK(cudaMemcpy(st, s0, SB, cudaMemcpyDeviceToDevice));
			CUDA_OK(cudaMemcpy(conv, conv0, CB, cudaMemcpyDeviceToDevice));
			CUDA_OK(cudaMemset(out, 0xff, O * 2));
			struct kda_decode_args a = {
				.batch = B, .heads = H, .state_dtype = dts[d], .scale = 0.08838835f,
				.norm_eps = 1e-6f, .x = x, .g_raw = g, .beta_raw = bt, .gate_raw = gate,
				.conv_w = cw, .norm_w = nw, .slot = d_slot, .state = st, .conv_state = conv,
				.out = out,
			};
			assert_int_equal(kda_decode(&a, 0), 0);
			CUDA_OK(cudaDeviceSynchronize());
			CUDA_OK(cudaMemcpy(r ? now : first, out, O * 2, cudaMemcpyDeviceToHost));
			if (r == 0 || r == reps - 1)
				CUDA_OK(cudaMemcpy(r ? snow : sfirst, st, SB, cudaMemcpyDeviceToHost));
			if (r && memcmp(now, first, O * 2)) {
				size_t n = 0;
				for (size_t i = 0; i < O * 2; i++)
					n += now[i] != first[i];
				print_error("run %d: %zu output bytes differ from run 0's\n", r, n);
				bad_runs++;
			}
			if (r && r == reps - 1 && memcmp(snow, sfirst, SB)) {
				print_error("run %d: the final state differs from run 0's\n", r);
				bad_runs++;
			}
		}
		free(first), free(now), free(sfirst), free(snow);
		cudaFree(s0), cudaFree(st);
		assert_true(bad_runs == 0);
	}
	cudaFree(d_slot), cudaFree(x), cudaFree(g), cudaFree(bt), cudaFree(gate), cudaFree(cw), cudaFree(nw);
	cudaFree(conv0), cudaFree(conv), cudaFree(out);
}

static void test_prefill_overlap(void **unused)
{
	(void)unused;
	static const int small[] = { 100, 17, 0, 40, 16 };
	if (getenv("KDA_TEST_OVERLAP_SMALL")) { /* racecheck: the smallest shape alone (with the
						  * environment's K3_KDA_FLAG_WAIT) */
		overlap_case(KDA_F32, 5, small, 2);
		return;
	}
	static const int one2k[] = { 2048 };
	overlap_case(KDA_F32, 1, one2k, 96); /* 192 recurrent CTAs of 4 warps, 12288 intra CTAs */
	static const int lens[] = { 1000, 17, 0, 1031, 16 };
	overlap_case(KDA_BF16, 5, lens, 24); /* 120 pairs: 240 CTAs of 4 warps */
	overlap_case(KDA_F32, 5, lens, 4);   /* 20 pairs: 1-warp CTAs, 160 of them */
	setenv("K3_KDA_INTRA", "v1", 1); /* the previous intra kernel, 4 stages */
	setenv("K3_KDA_RECUR_STAGES", "4", 1);
	overlap_case(KDA_F32, 1, one2k, 96);
	unsetenv("K3_KDA_INTRA");
	unsetenv("K3_KDA_RECUR_STAGES");
	/* The recurrent kernel's other flag waits (K3_KDA_FLAG_WAIT: relaxed spins, runs of up to
	 * 8 flags acquired at once): every sequence length, the empty and 1-token ones, 1- and
	 * 4-warp CTAs, both state dtypes. */
	const char *fw = getenv("K3_KDA_FLAG_WAIT");
	char *keep = fw ? strdup(fw) : NULL;
	static const char *const waits[] = { "spin", "batch" };
	for (int w = 0; w < 2; w++) {
		setenv("K3_KDA_FLAG_WAIT", waits[w], 1);
		print_message(" K3_KDA_FLAG_WAIT=%s:\n", waits[w]);
		overlap_case(KDA_F32, 1, one2k, 96);
		overlap_case(KDA_BF16, 5, lens, 24);
		overlap_case(KDA_F32, 5, lens, 4);
	}
	if (keep)
		setenv("K3_KDA_FLAG_WAIT", keep, 1), free(keep);
	else
		unsetenv("K3_KDA_FLAG_WAIT");
	/* The pair kernel on both paths (its flag wait is wait_ready()'s). */
	setenv("K3_KDA_RECUR", "pair", 1);
	print_message(" K3_KDA_RECUR=pair:\n");
	overlap_case(KDA_F32, 1, one2k, 96);
	overlap_case(KDA_BF16, 5, lens, 24);
	overlap_case(KDA_F32, 5, lens, 4);
	setenv("K3_KDA_RECUR", "pair136", 1);
	print_message(" K3_KDA_RECUR=pair136:\n");
	overlap_case(KDA_BF16, 1, one2k, 96);
	unsetenv("K3_KDA_RECUR");
}

/* The default (K3_KDA_PREFILL unset: auto's rule again since 2026-12-02r) at a shape where
 * kda_prefill.cu's overlap_by_default() takes the overlapped path with its own defaults (3
 * stages, rule-1 width), against K3_KDA_PREFILL=serial (4 stages, rule-2 width): the recurrence
 * of a state row does not depend on the CTA's width or stage count, so the two must agree bit
 * for bit; under stream capture the path is serial. Poisoned outputs and workspace before each
 * run, fresh random inputs. */
static void test_prefill_default_path(void **unused)
{
	(void)unused;
	enum { H = 96, T = 4096 };
	int32_t cu[2] = { 0, T };
	const size_t E = (size_t)T * H * D, SB = (size_t)H * D * D * 4;
	void *q = dev_bf16_rand(E, -1, 1), *k = dev_bf16_rand(E, -1, 1), *v = dev_bf16_rand(E, -1, 1);
	void *g = dev_bf16_rand(E, -6, 3), *b = dev_bf16_rand((size_t)T * H, -3, 3);
	void *s0 = dev_bf16_rand(SB / 2, -1, 1), *s1, *out, *ws, *d_cu = dev_i32(cu, 2);
	CUDA_OK(cudaMalloc(&s1, SB));
	CUDA_OK(cudaMalloc(&out, E * 2));
	const size_t wsb = kda_prefill_workspace_bytes(1, H, T);
	CUDA_OK(cudaMalloc(&ws, wsb));
	struct kda_prefill_args a = {
		.n_seqs = 1, .heads = H, .total_tokens = T, .cu_seqlens = d_cu, .state_dtype = KDA_F32,
		.scale = 0.08838835f, .q = q, .k = k, .v = v, .g_raw = g, .beta_raw = b,
		.initial_state = s0, .final_state = s1, .out = out, .workspace = ws,
	};
	static const char *const knobs[] = { "K3_KDA_PREFILL", "K3_KDA_RECUR_STAGES", "K3_KDA_RECUR_WARPS",
					     "K3_KDA_INTRA", "K3_KDA_FLAG_WAIT", "K3_KDA_RECUR", "K3_KDA_INTRA_PF",
					     "K3_KDA_INTRA_PF_MODE" };
	for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++)
		unsetenv(knobs[i]);
	/* A knob's value that is none of its choices fails the call (-EINVAL, nothing launched)
	 * instead of running the default unnoticed; an empty one is unset. */
	static const char *const bad[] = { "overlapped", "5", "16", "v4", "poll", "triple", "12x", "lines" };
	for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++) {
		setenv(knobs[i], bad[i], 1);
		assert_int_equal(kda_prefill_path(&a, 0), -EINVAL);
		assert_int_equal(kda_prefill(&a, 0), -EINVAL);
		setenv(knobs[i], "", 1);
		assert_true(kda_prefill_path(&a, 0) >= 0);
		unsetenv(knobs[i]);
	}
	int sms = 0;
	CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	setenv("K3_KDA_PREFILL", "auto", 1);
	const int path = kda_prefill_path(&a, 0);
	print_message(" K3_KDA_PREFILL=auto at N=1 H=%d T=%d on %d SMs: %s\n", H, T, sms, path == 1 ? "overlap" : "serial");
	assert_true(path == 0 || path == 1);
	if (sms >= 132) /* the H200's room: the host's check holds there */
		assert_int_equal(path, 1);
	unsetenv("K3_KDA_PREFILL");
	assert_int_equal(kda_prefill_path(&a, 0), path); /* unset: auto's rule */
	uint8_t *ho[2], *hs[2];
	for (int m = 0; m < 2; m++) { /* the default (unset), then serial */
		if (m == 1)
			setenv("K3_KDA_PREFILL", "serial", 1);
		CUDA_OK(cudaMemset(out, 0xff, E * 2));
		CUDA_OK(cudaMemset(s1, 0xff, SB));
		CUDA_OK(cudaMemset(ws, 0xff, wsb));
		assert_int_equal(kda_prefill_path(&a, 0), m == 1 ? 0 : path);
		assert_int_equal(kda_prefill(&a, 0), 0);
		CUDA_OK(cudaDeviceSynchronize());
		ho[m] = xmalloc(E * 2), hs[m] = xmalloc(SB);
		CUDA_OK(cudaMemcpy(ho[m], out, E * 2, cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(hs[m], s1, SB, cudaMemcpyDeviceToHost));
	}
	unsetenv("K3_KDA_PREFILL");
	size_t diff = 0;
	for (size_t i = 0; i < E * 2; i++)
		diff += ho[0][i] != ho[1][i];
	for (size_t i = 0; i < SB; i++)
		diff += hs[0][i] != hs[1][i];
	if (diff)
		print_error("default (auto) vs serial: %zu bytes differ\n", diff);
	assert_true(diff == 0);
	/* Every output and state element was written (no poison left): 0xffff is a NaN pattern. */
	size_t poison = 0;
	for (size_t i = 0; i < E; i++)
		poison += ((uint16_t *)ho[0])[i] == 0xffff;
	for (size_t i = 0; i < SB / 4; i++)
		poison += ((uint32_t *)hs[0])[i] == 0xffffffffu;
	assert_true(poison == 0);
	/* Under stream capture: the serial path, even with auto. */
	cudaStream_t st;
	CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	cudaGraph_t graph;
	setenv("K3_KDA_PREFILL", "auto", 1);
	CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
	const int captured = kda_prefill_path(&a, st);
	CUDA_OK(cudaStreamEndCapture(st, &graph));
	unsetenv("K3_KDA_PREFILL");
	CUDA_OK(cudaGraphDestroy(graph));
	CUDA_OK(cudaStreamDestroy(st));
	assert_int_equal(captured, 0);
	for (int m = 0; m < 2; m++)
		free(ho[m]), free(hs[m]);
	cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(g), cudaFree(b), cudaFree(s0), cudaFree(s1);
	cudaFree(out), cudaFree(ws), cudaFree(d_cu);
}

/* One prefill of `a` (outputs, final state and workspace poisoned first) with K3_KDA_INTRA_PF set to
 * `pf` (NULL: unset): the outputs [E] BF16 and final states [SB] bytes on the host (caller frees). */
/* Fresh random inputs for n sequences (lens) at H heads with an FP32 initial state, on the device,
 * and the prefill's arguments over them (scale 1 / sqrt(128)); E output elements, SB state bytes,
 * wsb workspace bytes. pf_inputs_free() releases them. */
struct pf_inputs {
	struct kda_prefill_args a;
	size_t E, SB, wsb;
	void *mem[10]; /* every buffer, for pf_inputs_free() */
};

static void pf_inputs_make(struct pf_inputs *in, int n, const int *lens, int H)
{
	int32_t cu[65] = { 0 };
	assert_true(n >= 1 && n <= 64);
	for (int i = 0; i < n; i++)
		cu[i + 1] = cu[i] + lens[i];
	const int64_t T = cu[n];
	in->E = (size_t)T * H * D, in->SB = (size_t)n * H * D * D * 4;
	in->wsb = kda_prefill_workspace_bytes(n, H, T);
	void **m = in->mem;
	m[0] = dev_bf16_rand(in->E, -1, 1), m[1] = dev_bf16_rand(in->E, -1, 1), m[2] = dev_bf16_rand(in->E, -1, 1);
	m[3] = dev_bf16_rand(in->E, -6, 3), m[4] = dev_bf16_rand((size_t)T * H, -3, 3);
	m[5] = dev_bf16_rand(in->SB / 2, -1, 1), m[6] = dev_i32(cu, n + 1);
	CUDA_OK(cudaMalloc(&m[7], in->SB));
	CUDA_OK(cudaMalloc(&m[8], in->E * 2));
	CUDA_OK(cudaMalloc(&m[9], in->wsb));
	const struct kda_prefill_args a = {
		.n_seqs = n, .heads = H, .total_tokens = T, .cu_seqlens = m[6], .state_dtype = KDA_F32,
		.scale = 0.08838835f, .q = m[0], .k = m[1], .v = m[2], .g_raw = m[3], .beta_raw = m[4],
		.initial_state = m[5], .final_state = m[7], .out = m[8], .workspace = m[9],
	};
	in->a = a;
}

static void pf_inputs_free(struct pf_inputs *in)
{
	for (int i = 0; i < 10; i++)
		cudaFree(in->mem[i]);
}

static void knob_run(const struct kda_prefill_args *a, const char *knob, const char *val, size_t E, size_t SB,
		     size_t wsb, uint8_t **ho, uint8_t **hs)
{
	if (val)
		setenv(knob, val, 1);
	else
		unsetenv(knob);
	CUDA_OK(cudaMemset(a->out, 0xff, E * 2));
	CUDA_OK(cudaMemset(a->final_state, 0xff, SB));
	CUDA_OK(cudaMemset(a->workspace, 0xff, wsb));
	assert_int_equal(kda_prefill(a, 0), 0);
	CUDA_OK(cudaDeviceSynchronize());
	*ho = xmalloc(E * 2), *hs = xmalloc(SB);
	CUDA_OK(cudaMemcpy(*ho, a->out, E * 2, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(*hs, a->final_state, SB, cudaMemcpyDeviceToHost));
	unsetenv(knob);
}

static void pf_run(const struct kda_prefill_args *a, const char *pf, size_t E, size_t SB, size_t wsb,
		   uint8_t **ho, uint8_t **hs)
{
	knob_run(a, "K3_KDA_INTRA_PF", pf, E, SB, wsb, ho, hs);
}

/* The intra kernel's L2 prefetch (K3_KDA_INTRA_PF=N, round 05q): it reads nothing the results
 * depend on, so with any distance (1, a head's chunks and more, past the grid's end) the outputs
 * and final states are the ones without it, bit for bit, for v2 and v3, on the serial and the
 * overlapped path, both prefetch modes (K3_KDA_INTRA_PF_MODE), one sequence and varlen (empty, 1-
 * and 16-token sequences: rows past a chunk's end skipped); fresh random inputs, poisoned outputs.
 * Values that are not whole numbers from 0 to 2^20 fail the call. Against float64: prefill_case()
 * with the prefetch on. */
static void test_prefill_intra_pf(void **unused)
{
	(void)unused;
	static const int one4k[] = { 4096 }, varlen[] = { 1, 16, 17, 0, 200, 33, 1000 };
	struct {
		int n, H;
		const int *lens;
		const char *path, *intra;
	} cases[] = {
		{ 1, 96, one4k, "serial", NULL }, { 1, 96, one4k, "overlap", NULL },
		{ 7, 8, varlen, "serial", NULL }, { 7, 24, varlen, "overlap", "v3" },
		{ 1, 12, one4k, "serial", "v3" },
	};
	/* distance, mode (K3_KDA_INTRA_PF_MODE; NULL: unset, the line prefetches) */
	static const char *const dists[][2] = { { "1", NULL }, { "96", NULL }, { "1056", NULL }, { "100000", NULL },
						 { "96", "bulk" }, { "1056", "line" } };
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		const int n = cases[c].n, H = cases[c].H;
		struct pf_inputs in;
		pf_inputs_make(&in, n, cases[c].lens, H);
		const struct kda_prefill_args a = in.a;
		const int64_t T = in.a.total_tokens;
		const size_t E = in.E, SB = in.SB, wsb = in.wsb;
		setenv("K3_KDA_PREFILL", cases[c].path, 1);
		if (cases[c].intra)
			setenv("K3_KDA_INTRA", cases[c].intra, 1);
		uint8_t *ho0, *hs0;
		pf_run(&a, NULL, E, SB, wsb, &ho0, &hs0);
		for (size_t d = 0; d < sizeof dists / sizeof *dists; d++) {
			uint8_t *ho, *hs;
			if (dists[d][1])
				setenv("K3_KDA_INTRA_PF_MODE", dists[d][1], 1);
			pf_run(&a, dists[d][0], E, SB, wsb, &ho, &hs);
			unsetenv("K3_KDA_INTRA_PF_MODE");
			size_t diff = 0;
			for (size_t i = 0; i < E * 2; i++)
				diff += ho[i] != ho0[i];
			for (size_t i = 0; i < SB; i++)
				diff += hs[i] != hs0[i];
			print_message(" N=%d H=%d T=%lld %s intra=%s K3_KDA_INTRA_PF=%s mode %s: %zu bytes differ\n", n,
				      H, (long long)T, cases[c].path, cases[c].intra ? cases[c].intra : "default",
				      dists[d][0], dists[d][1] ? dists[d][1] : "(unset)", diff);
			assert_true(diff == 0);
			free(ho), free(hs);
		}
		size_t poison = 0;
		for (size_t i = 0; i < E; i++)
			poison += ((uint16_t *)ho0)[i] == 0xffff;
		assert_true(poison == 0);
		free(ho0), free(hs0);
		static const char *const bad[] = { "-1", "x", "7x", "1048577", " 3" };
		for (size_t i = 0; c == 0 && i < sizeof bad / sizeof *bad; i++) {
			setenv("K3_KDA_INTRA_PF", bad[i], 1);
			assert_int_equal(kda_prefill(&a, 0), -EINVAL);
		}
		unsetenv("K3_KDA_INTRA_PF");
		unsetenv("K3_KDA_PREFILL");
		unsetenv("K3_KDA_INTRA");
		pf_inputs_free(&in);
	}
	/* Against float64 with the prefetch on (serial, then overlapped). */
	setenv("K3_KDA_INTRA_PF", "64", 1);
	prefill_case(KDA_F32, 6, varlen, 8, true, false);
	setenv("K3_KDA_PREFILL", "overlap", 1);
	static const int one2k[] = { 2048 };
	prefill_case(KDA_BF16, 1, one2k, 32, true, false);
	unsetenv("K3_KDA_PREFILL");
	unsetenv("K3_KDA_INTRA_PF");
}

/* The recurrent kernel the default takes (kda_prefill.cu's PAIRR_MAX_PAIRS and pair_warps()):
 * pairr on the serial path at <= 96 (sequence, head) pairs, the chunk kernel past that, on the
 * overlapped path and on every forced path; the widths of rule 3 on 132 SMs. Then both kernels at
 * those shapes against float64: the default (pairr) and K3_KDA_RECUR=chunk (the kernel the
 * default no longer takes there), varlen with empty and 1-token sequences, in place, no initial
 * state, both state dtypes. */
static void test_prefill_default_recur(void **unused)
{
	(void)unused;
	static const char *const knobs[] = { "K3_KDA_PREFILL", "K3_KDA_RECUR_STAGES", "K3_KDA_RECUR_WARPS",
					     "K3_KDA_INTRA", "K3_KDA_FLAG_WAIT", "K3_KDA_RECUR" };
	for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++)
		unsetenv(knobs[i]);
	int sms = 0;
	CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	void *dummy; /* the plan reads the shape, never the buffers */
	CUDA_OK(cudaMalloc(&dummy, 256));
	static const struct {
		int n, h;
		int64_t t;
		const char *want;     /* the default's recurrent kernel */
		int warps_132;        /* its width on 132 SMs (0: not checked) */
		int overlap_132;      /* the path on 132 SMs */
	} shapes[] = {
		{ 1, 12, 16384, "pairr", 1, 0 },  { 1, 24, 16384, "pairr", 2, 0 },
		{ 1, 48, 16384, "pairr", 4, 0 },  { 1, 96, 1024, "pairr", 2, 0 },
		{ 8, 12, 8 * 2048, "pairr", 2, 0 }, { 2, 48, 8192, "pairr", 2, 0 },
		{ 1, 96, 16384, "chunk", 4, 1 },  { 4, 96, 16384, "chunk", 8, 0 },
		{ 2, 64, 8192, "chunk", 0, 0 },   { 1, 128, 1024, "chunk", 0, 0 },
	};
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		struct kda_prefill_args a = {
			.n_seqs = shapes[i].n, .heads = shapes[i].h, .total_tokens = shapes[i].t,
			.cu_seqlens = dummy, .state_dtype = KDA_F32, .scale = 0.08838835f, .q = dummy, .k = dummy,
			.v = dummy, .g_raw = dummy, .beta_raw = dummy, .out = dummy, .workspace = dummy,
		};
		struct kda_prefill_plan pl = { -1, -1, NULL };
		assert_int_equal(kda_prefill_plan(&a, 0, &pl), 0);
		print_message(" default N=%d H=%d T=%lld on %d SMs: %s, %s, %d warps\n", shapes[i].n, shapes[i].h,
			      (long long)shapes[i].t, sms, pl.overlap ? "overlap" : "serial", pl.recur, pl.recur_warps);
		assert_int_equal(kda_prefill_path(&a, 0), pl.overlap);
		if (sms == 132) {
			assert_int_equal(pl.overlap, shapes[i].overlap_132);
			if (shapes[i].warps_132)
				assert_int_equal(pl.recur_warps, shapes[i].warps_132);
		}
		if (!pl.overlap)
			assert_string_equal(pl.recur, shapes[i].want);
		else
			assert_string_equal(pl.recur, "chunk");
		/* Forced paths and K3_KDA_RECUR keep or take what they name. */
		static const char *const forced[] = { "serial", "overlap" };
		for (int f = 0; f < 2; f++) {
			setenv("K3_KDA_PREFILL", forced[f], 1);
			assert_int_equal(kda_prefill_plan(&a, 0, &pl), 0);
			assert_string_equal(pl.recur, "chunk");
			unsetenv("K3_KDA_PREFILL");
		}
		setenv("K3_KDA_RECUR", "chunk", 1);
		assert_int_equal(kda_prefill_plan(&a, 0, &pl), 0);
		assert_string_equal(pl.recur, "chunk");
		setenv("K3_KDA_RECUR", "auto", 1);
		assert_int_equal(kda_prefill_plan(&a, 0, &pl), 0);
		assert_string_equal(pl.recur, pl.overlap ? "chunk" : shapes[i].want);
		setenv("K3_KDA_RECUR", "pairr", 1);
		setenv("K3_KDA_PREFILL", "serial", 1);
		assert_int_equal(kda_prefill_plan(&a, 0, &pl), 0);
		assert_string_equal(pl.recur, "pairr");
		unsetenv("K3_KDA_PREFILL");
		unsetenv("K3_KDA_RECUR");
	}
	assert_int_equal(kda_prefill_plan(NULL, 0, NULL), -EINVAL);
	cudaFree(dummy);
	static const int lens[] = { 300, 17, 0, 100 };
	static const int varlen[] = { 1, 16, 17, 0, 200, 33 };
	for (int m = 0; m < 2; m++) {
		if (m)
			setenv("K3_KDA_RECUR", "chunk", 1);
		print_message(" %s at the default's small shapes\n", m ? "K3_KDA_RECUR=chunk" : "the default (pairr)");
		prefill_case(KDA_F32, 4, lens, 6, true, false);    /* 24 pairs */
		prefill_case(KDA_BF16, 6, varlen, 8, true, true);  /* 48 pairs, in place */
		prefill_case(KDA_F32, 6, varlen, 16, false, false); /* 96 pairs, no initial state */
		unsetenv("K3_KDA_RECUR");
	}
}

/* Prefill of T tokens on the GPU, then n fused decode steps on the GPU,
 * against the float64 prefill of T + n (with ShortConv and gated norm). */
static void test_prefill_then_decode(void **unused)
{
	(void)unused;
	enum { H = 4, T = 300, N = 4 };
	const size_t TN = T + N, C = (size_t)H * 3 * D, SN = (size_t)H * D * D;
	print_message(" chain: prefill %d + decode %d vs prefill %d, H=%d\n", T, N, T + N, H);
	struct step_weights w = weights_new(H);
	struct tensor x = tensor_rand(TN * C, KDA_BF16, -1.5, 1.5);
	struct tensor g = tensor_rand(TN * H * D, KDA_BF16, -6, 3);
	struct tensor b = tensor_rand(TN * H, KDA_BF16, -3, 3);
	struct tensor gate = tensor_rand(TN * H * D, KDA_BF16, -2, 2);
	/* Reference: conv over all raw inputs, prefill, gated norm. */
	double *y = dnew(TN * C), *q = dnew(TN * H * D), *k = dnew(TN * H * D), *v = dnew(TN * H * D);
	assert_int_equal(kda_ref_short_conv((int)TN, (int)C, x.h, w.conv_w.h, NULL, y), 0);
	for (size_t t = 0; t < TN; t++) {
		memcpy(q + t * H * D, y + t * C, H * D * sizeof(double));
		memcpy(k + t * H * D, y + t * C + H * D, H * D * sizeof(double));
		memcpy(v + t * H * D, y + t * C + 2 * H * D, H * D * sizeof(double));
	}
	double *ro = dnew(TN * H * D), *ry = dnew(TN * H * D), *rs = dnew(SN);
	int64_t cu64[2] = { 0, (int64_t)TN };
	struct kda_ref_prefill rp = {
		.n_seqs = 1, .cu_seqlens = cu64, .heads = H, .dk = D, .dv = D,
		.scale = 1.0 / sqrt((double)D), .q = q, .k = k, .v = v, .g_raw = g.h, .beta_raw = b.h,
		.final_state = rs, .out = ro,
	};
	assert_int_equal(kda_ref_prefill_sequential(&rp), 0);
	assert_int_equal(kda_ref_gated_rmsnorm((int)TN, H, D, ro, gate.h, w.norm_w.h, 1e-6, ry), 0);
	/* GPU prefill input: the post-conv q, k, v of the first T tokens, as BF16
	 * (what a conv kernel would hand over). */
	struct tensor tq = { .n = (size_t)T * H * D, .dtype = KDA_BF16, .h = dnew((size_t)T * H * D) };
	struct tensor tk = tq, tv = tq;
	tk.h = dnew(tq.n), tv.h = dnew(tq.n);
	memcpy(tq.h, q, tq.n * sizeof(double));
	memcpy(tk.h, k, tq.n * sizeof(double));
	memcpy(tv.h, v, tq.n * sizeof(double));
	CUDA_OK(cudaMalloc(&tq.d, tq.n * 2));
	CUDA_OK(cudaMalloc(&tk.d, tq.n * 2));
	CUDA_OK(cudaMalloc(&tv.d, tq.n * 2));
	tensor_upload(&tq), tensor_upload(&tk), tensor_upload(&tv);
	struct tensor state = tensor_out(2 * SN, KDA_F32);
	struct tensor pout = tensor_out((size_t)T * H * D, KDA_BF16);
	int32_t cu[2] = { 0, T }, slot1 = 1;
	void *d_cu = dev_i32(cu, 2), *d_slot = dev_i32(&slot1, 1), *ws;
	CUDA_OK(cudaMalloc(&ws, kda_prefill_workspace_bytes(1, H, T)));
	struct kda_prefill_args pa = {
		.n_seqs = 1, .heads = H, .total_tokens = T, .cu_seqlens = d_cu, .state_dtype = KDA_F32,
		.scale = (float)rp.scale, .q = tq.d, .k = tk.d, .v = tv.d, .g_raw = g.d,
		.beta_raw = b.d, .state_slot = d_slot, .final_state = state.d, .out = pout.d,
		.workspace = ws,
	};
	assert_int_equal(kda_prefill(&pa, 0), 0);
	/* Conv state after T tokens: the last three raw inputs, into slot 1. */
	struct tensor conv = tensor_rand(2 * 3 * C, KDA_BF16, -1, 1);
	for (int i = 0; i < 3; i++)
		memcpy(conv.h + 3 * C + i * C, x.h + (T - 3 + i) * C, C * sizeof(double));
	tensor_upload(&conv);
	struct tensor out = tensor_out((size_t)H * D, KDA_BF16);
	for (int s = 0; s < N; s++) {
		tensor_poison(&out);
		struct kda_decode_args d = {
			.batch = 1, .heads = H, .state_dtype = KDA_F32, .scale = (float)rp.scale,
			.norm_eps = 1e-6f, .x = (const uint16_t *)x.d + (T + s) * C,
			.g_raw = (const uint16_t *)g.d + (T + s) * H * D,
			.beta_raw = (const uint16_t *)b.d + (T + s) * H,
			.gate_raw = (const uint16_t *)gate.d + (T + s) * H * D, .conv_w = w.conv_w.d,
			.norm_w = w.norm_w.d, .slot = d_slot, .state = state.d, .conv_state = conv.d,
			.out = out.d,
		};
		assert_int_equal(kda_decode(&d, 0), 0);
		CUDA_OK(cudaDeviceSynchronize());
		tensor_download(&out);
		char what[64];
		snprintf(what, sizeof(what), "decode step %d after prefill", s);
		check(what, out.h, ry + (T + s) * H * D, out.n, TOL_BF16);
	}
	tensor_download(&state);
	check("state vs prefill of T + n", state.h + SN, rs, SN, TOL_BF16);
	free(y), free(q), free(k), free(v), free(ro), free(ry), free(rs);
	tensor_release(&x), tensor_release(&g), tensor_release(&b), tensor_release(&gate);
	tensor_release(&tq), tensor_release(&tk), tensor_release(&tv), tensor_release(&state);
	tensor_release(&pout), tensor_release(&conv), tensor_release(&out);
	weights_release(&w);
	cudaFree(d_cu), cudaFree(d_slot), cudaFree(ws);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct kda_decode_args d = { 0 };
	assert_int_equal(kda_decode(&d, 0), -EINVAL);
	struct kda_verify_args v = { .batch = 1, .heads = 1, .window = KDA_MAX_WINDOW + 1 };
	assert_int_equal(kda_verify_replay(&v, 0), -EINVAL);
	struct kda_prefill_args p = { .n_seqs = 1, .heads = 1 };
	assert_int_equal(kda_prefill(&p, 0), -EINVAL);
	assert_int_equal(kda_prefill_workspace_bytes(0, 1, 1), 0);
}

int main(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		fprintf(stderr, "no CUDA device: skipping\n");
		return 77;
	}
	/* e.g. KDA_TEST_FILTER='*prefill*' to run a subset (under compute-sanitizer). */
	const char *filter = getenv("KDA_TEST_FILTER");
	if (filter)
		cmocka_set_test_filter(filter);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_decode_fp32),
		cmocka_unit_test(test_decode_bf16),
		cmocka_unit_test(test_decode_many_items),
		cmocka_unit_test(test_decode_ring_arrivals),
		cmocka_unit_test(test_decode_ring_opts),
		cmocka_unit_test(test_decode_ring_trace),
		cmocka_unit_test(test_verify_replay_fp32),
		cmocka_unit_test(test_verify_replay_bf16),
		cmocka_unit_test(test_prefill_fixed),
		cmocka_unit_test(test_prefill_varlen),
		cmocka_unit_test(test_prefill_variants),
		cmocka_unit_test(test_prefill_lean),
		cmocka_unit_test(test_prefill_pair),
		cmocka_unit_test(test_prefill_split),
		cmocka_unit_test(test_prefill_overlap),
		cmocka_unit_test(test_prefill_default_path),
		cmocka_unit_test(test_prefill_default_recur),
		cmocka_unit_test(test_prefill_intra_pf),
		cmocka_unit_test(test_decode_ring_repeat),
		cmocka_unit_test(test_prefill_then_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
