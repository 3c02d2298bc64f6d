/* SPDX-License-Identifier: MIT */
/*
 * LatentMoE on the GPU against the float64 references (suite 'gpu'; exit
 * 77 without a GPU): the GEMM op (tiled paths, mma.sync and wgmma, and the gemv path, dense and grouped,
 * gathered rows, BF16 and MXFP4 weights, every epilogue), routing and
 * grouping, the combine + RMSNorm, and whole layers at decode and prefill
 * sizes. Inputs are fresh random values rounded to their device format
 * (the host copy holds exactly the device's values); outputs and workspaces
 * are poisoned with 0xff (NaN) before every run.
 * MOE_TEST_FILTER='*gemv*' runs a subset (e.g. under compute-sanitizer).
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

#include "k3_gpu_test_util.h"
#include "kernels/common/k3_upload.h"
#include "kernels/moe/k3_gemm.h"
#include "kernels/moe/moe_combine.h"
#include "kernels/moe/moe_layer.h"
#include "kernels/moe/moe_ref.h"
#include "kernels/moe/moe_route.h"

/* BF16 outputs of FP32 sums. */
#define TOL_BF16 8e-3
/* FP32 outputs (router logits). */
#define TOL_F32 1e-4
/* A whole layer: several BF16 intermediates, each rounded where the reference rounds it. */
#define TOL_LAYER 1.5e-2
/* A whole layer with E4M3 expert activations (expert_act K3_A_E4M3_ROW) against the float64
 * reference that quantizes as the GPU does (moe_ref_layer's e4m3_act: the same latent bytes and
 * scales, h as E4M3 of 4 h). What remains is the FP8 accumulation of w13 and w2 (Hopper's FP8
 * MMAs sum with ~14 bits: FP8_ACC_ULP below; round 04q measured the FP8 GEMM at 1.7e-3 relative
 * rms against float64 of the quantized operands, ~1.3e-3 of it beyond the BF16 output's rounding)
 * and what it does to h's E4M3 rounding: a pre-activation off by a relative r rounds h to the
 * other E4M3 neighbour with probability ~r / u, costing one spacing u (2^-4 .. 2^-3 of |h|), a
 * relative rms of sqrt(r u) ~ sqrt(1.3e-3 x 0.09) ~ 1.1e-2 on h, carried through w2, the combine
 * and the up projection at about that size. 3e-2 is that estimate with a margin of ~3; a wrong
 * row scale, 1 / m or gathered row costs O(1). Not quantizing (or quantizing elsewhere) moves
 * the output by the E4M3 roundings themselves (~3-4e-2 rms: 2^-4 .. 2^-3 spacings on the latent
 * and on h), which the tolerance might pass, so run_layer_act() also asserts that the output is
 * closer to the E4M3 reference than to the BF16 one. */
#define TOL_LAYER_E4M3 3e-2

static struct test_rng rng = { 20261204 };

/* Weights [G][N][K] in BF16 or MXFP4: exact host values and device copies (MXFP4: also the
 * FP8 layout of the nibbles, k3_gemm_repack_fp8(), for the MXFP8-activation gemv, and the
 * FP16-pair layout, k3_gemm_repack_f16enc(), given to every call as w_f16: the grouped gemv
 * runs gemv_f16_kernel where K is a multiple of 512, unless K3_GEMV_FP4 says otherwise; and
 * the wgmma tile layout, k3_gemm_repack_wg(), given as w_wg: read by the "wide2rp" kernel only,
 * null where a scale byte is above 128). */
struct wmat {
	int G, N, K;
	enum k3_wdtype dt;
	double *h;
	uint16_t *bf16;
	uint8_t *packed, *scales, *packed8, *packed16, *packedwg;
	uint8_t *packedf8, *floors; /* the FP8-word tile layout and its floors (k3_gemm_repack_wgf8()), or null */
};

/* The FP8 layout of m's nibbles on the device, checked byte for byte against the host's. */
static void wmat_repack8(struct wmat *m)
{
	const size_t bytes = (size_t)m->G * m->N * m->K / 2;
	m->packed8 = gt_dev_poisoned(bytes);
	KERNEL_OK(k3_gemm_repack_fp8(m->packed, (int64_t)m->G * m->N, m->K, m->packed8, 0));
	uint8_t *src = gt_xmalloc(bytes), *want = gt_xmalloc(bytes), *got = gt_xmalloc(bytes);
	CUDA_OK(cudaMemcpy(src, m->packed, bytes, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(got, m->packed8, bytes, cudaMemcpyDeviceToHost));
	k3_mxfp4_repack_fp8(src, (size_t)m->G * m->N, (size_t)m->K, want);
	assert_memory_equal(got, want, bytes);
	free(src), free(want), free(got);
}

/* The FP16-pair layout of m's nibbles on the device, checked byte for byte against the host's. */
static void wmat_repack16(struct wmat *m)
{
	const size_t bytes = (size_t)m->G * m->N * m->K / 2;
	m->packed16 = gt_dev_poisoned(bytes);
	KERNEL_OK(k3_gemm_repack_f16enc(m->packed, (int64_t)m->G * m->N, m->K, m->packed16, 0));
	uint8_t *src = gt_xmalloc(bytes), *want = gt_xmalloc(bytes), *got = gt_xmalloc(bytes);
	CUDA_OK(cudaMemcpy(src, m->packed, bytes, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(got, m->packed16, bytes, cudaMemcpyDeviceToHost));
	k3_mxfp4_repack_f16enc(src, (size_t)m->G * m->N, (size_t)m->K, want);
	assert_memory_equal(got, want, bytes);
	free(src), free(want), free(got);
}

/* The wgmma tile layout of m's nibbles on the device (k3_gemm_wg_rp.cuh), checked through the
 * decoder on the host: word ks of lane L = 4 g + t in 16-row block b, k block kb (16 bytes at
 * pseudo-row 16 b + L / 2, byte 32 kb + 16 (L % 2)), rotated and masked, gives BF16 pair i of
 * the fragment (rows g, g + 8, g, g + 8; k 2t, 2t + 8 of k step ks) with the E2M1 nibble's sign
 * at bit 15 and its other bits at 8..6 of each half. -ERANGE (no layout) where a scale byte is
 * above 128. */
static void wmat_repackwg(struct wmat *m)
{
	const size_t rows = (size_t)m->G * m->N, bytes = rows * m->K / 2;
	uint8_t *src = gt_xmalloc(bytes), *got = gt_xmalloc(bytes), *sc = gt_xmalloc(bytes / 16);
	CUDA_OK(cudaMemcpy(src, m->packed, bytes, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(sc, m->scales, bytes / 16, cudaMemcpyDeviceToHost));
	bool high = false;
	for (size_t i = 0; i < bytes / 16; i++)
		high = high || sc[i] > 128;
	m->packedwg = gt_dev_poisoned(bytes);
	const int rc = k3_gemm_repack_wg(m->packed, m->scales, (int64_t)rows, m->K, m->packedwg, 0);
	assert_int_equal(rc, high ? -ERANGE : 0);
	if (high) {
		cudaFree(m->packedwg);
		m->packedwg = NULL;
		free(src), free(got), free(sc);
		return;
	}
	CUDA_OK(cudaMemcpy(got, m->packedwg, bytes, cudaMemcpyDeviceToHost));
	const size_t rb = (size_t)m->K / 2; /* bytes a row */
	static const int rot[4] = { 2, 6, 10, 12 };
	for (size_t b = 0; b < rows / 16; b++)
		for (int kb = 0; kb < m->K / 64; kb++)
			for (int lane = 0; lane < 32; lane++)
				for (int ks = 0; ks < 4; ks++) {
					const int g = lane / 4, t = lane % 4;
					uint32_t q;
					memcpy(&q, got + (16 * b + (size_t)lane / 2) * rb + 32 * kb + 16 * (lane % 2) + 4 * ks, 4);
					for (int i = 0; i < 4; i++) {
						const uint32_t r = i ? q ^ ((q << rot[i]) | (q >> (32 - rot[i])))
								     : (q << 2) | (q >> 30);
						const uint32_t o = r & 0x81c081c0u;
						const size_t row = 16 * b + (size_t)g + 8 * (size_t)(i & 1);
						const uint8_t want = src[row * rb + 32 * kb + 8 * ks + t + 4 * (i >> 1)];
						for (int h = 0; h < 2; h++) {
							const uint32_t v = o >> (16 * h), n = (want >> (4 * h)) & 15u;
							assert_int_equal((v >> 15 & 1u) << 3 | (v >> 6 & 7u), n);
						}
					}
				}
	free(src), free(got), free(sc);
}

/* The FP8-word tile layout of m (the FP8 kernel's weights), or none where a row's scale groups
 * spread over more than 11 binades (-ERANGE). Its decode is checked element by element in
 * test_wgf8_operands; here the kernel's outputs check it. */
static void wmat_repackf8(struct wmat *m)
{
	const size_t rows = (size_t)m->G * m->N, bytes = rows * m->K / 2;
	m->packedf8 = gt_dev_poisoned(bytes);
	m->floors = gt_dev_poisoned(rows);
	const int rc = k3_gemm_repack_wgf8(m->packed, m->scales, (int64_t)rows, m->K, m->packedf8, m->floors, 0);
	assert_true(rc == 0 || rc == -ERANGE);
	if (rc) {
		cudaFree(m->packedf8), cudaFree(m->floors);
		m->packedf8 = m->floors = NULL;
	}
}

static struct wmat wmat_rand(int G, int N, int K, enum k3_wdtype dt, double range)
{
	struct wmat m = { .G = G, .N = N, .K = K, .dt = dt };
	const size_t n = (size_t)G * N * K;
	m.h = gt_dnew(n);
	if (dt == K3_W_BF16) {
		struct gt_bf16 t = gt_bf16_rand(&rng, n, -range, range);
		memcpy(m.h, t.h, n * sizeof(double));
		m.bf16 = t.d;
		free(t.h);
		return m;
	}
	/* MXFP4: groups of 32 with magnitudes spread over 2^-3 .. 2^3 of `range`. */
	double *x = gt_dnew(n);
	for (size_t i = 0; i < n; i += K3_MX_GROUP) {
		const double gscale = range * ldexp(1.0, (int)(test_rng_next(&rng) % 7) - 3);
		test_fill(&rng, x + i, K3_MX_GROUP, -gscale, gscale);
	}
	uint8_t *packed = gt_xmalloc(n / 2), *scales = gt_xmalloc(n / K3_MX_GROUP);
	k3_mxfp4_quantize(x, n, packed, scales);
	for (size_t i = 0; i < n; i++)
		m.h[i] = k3_mxfp4_element(packed, scales, i);
	m.packed = gt_dev_copy(packed, n / 2);
	m.scales = gt_dev_copy(scales, n / K3_MX_GROUP);
	free(x), free(packed), free(scales);
	if (K % 128 == 0) {
		wmat_repack8(&m);
		wmat_repack16(&m);
		if ((size_t)G * N % 16 == 0) {
			wmat_repackwg(&m);
			wmat_repackf8(&m);
		}
	}
	return m;
}

/* MXFP4 weights of random nibbles whose scale bytes follow the k group: scale of (g, n, group c)
 * is exps[c % n_exps] (E8M0 extremes). */
static struct wmat wmat_mx_scales(int G, int N, int K, const uint8_t *exps, int n_exps)
{
	struct wmat m = { .G = G, .N = N, .K = K, .dt = K3_W_MXFP4 };
	const size_t n = (size_t)G * N * K;
	uint8_t *packed = gt_xmalloc(n / 2), *scales = gt_xmalloc(n / K3_MX_GROUP);
	for (size_t i = 0; i < n / 2; i++)
		packed[i] = (uint8_t)test_rng_next(&rng);
	for (size_t i = 0; i < n / K3_MX_GROUP; i++)
		scales[i] = exps[(i % (size_t)(K / K3_MX_GROUP)) % (size_t)n_exps];
	m.h = gt_dnew(n);
	for (size_t i = 0; i < n; i++)
		m.h[i] = k3_mxfp4_element(packed, scales, i);
	m.packed = gt_dev_copy(packed, n / 2);
	m.scales = gt_dev_copy(scales, n / K3_MX_GROUP);
	free(packed), free(scales);
	wmat_repack8(&m);
	wmat_repack16(&m);
	wmat_repackwg(&m);
	return m;
}

static void wmat_release(struct wmat *m)
{
	free(m->h);
	cudaFree(m->bf16), cudaFree(m->packed), cudaFree(m->scales), cudaFree(m->packed8), cudaFree(m->packed16);
	cudaFree(m->packedwg), cudaFree(m->packedf8), cudaFree(m->floors);
	memset(m, 0, sizeof *m);
}

static void wmat_into(const struct wmat *m, struct k3_gemm_args *a)
{
	a->w_dtype = m->dt;
	a->w = m->bf16;
	a->w_packed = m->packed;
	a->w_scales = m->scales;
	a->w_f16 = m->packed16;
	a->w_wg = m->packedwg;
}

static const char *epi_name(enum k3_epilogue e)
{
	static const char *n[] = { "bf16", "split", "glu", "scale", "add", "gate" };
	return n[e];
}

/* One GEMM case: dense (n_groups 0, rows) or grouped by counts. */
struct gemm_case {
	int64_t rows; /* dense rows (grouped: the sum of counts) */
	int N, K, n_groups;
	const int32_t *counts;
	int a_rows;   /* rows of A; gathered through an index when > 0 */
	enum k3_wdtype dt;
	enum k3_gemm_path path;
	bool scatter; /* outputs through an output row map (a permutation) */
	bool a8;      /* MXFP8 activations (k3_gemm_quantize_mxfp8() of the BF16 A), the FP8 gemv */
	bool e4m3;    /* E4M3 activations with a scale a row (K3_A_E4M3_ROW; k3_e4m3_row_quantize() of the
		       * BF16 A), the FP8 wgmma kernel on w's FP8-word layout; the reference takes the
		       * quantized A */
	const int *a_exp; /* NULL, or [K / 32]: A's k group c is U(-1, 1) 2^a_exp[c] (default U(-1, 1)) */
};

/* BF16 A [rows][K]: U(-1, 1), times 2^a_exp[k / 32] where given. */
static struct gt_bf16 a_rand(int64_t rows, int K, const int *a_exp)
{
	const size_t n = (size_t)rows * K;
	if (!a_exp)
		return gt_bf16_rand(&rng, n, -1, 1);
	struct gt_bf16 t = { .n = n, .h = gt_dnew(n) };
	uint16_t *tmp = gt_xmalloc(n * 2);
	for (size_t i = 0; i < n; i++) {
		tmp[i] = k3_bf16_from_double(ldexp(test_rng_uniform(&rng, -1, 1), a_exp[(i % (size_t)K) / K3_MX_GROUP]));
		t.h[i] = k3_double_from_bf16(tmp[i]);
	}
	t.d = gt_dev_copy(tmp, n * 2);
	free(tmp);
	return t;
}

/* The wgmma tiled path runs here (sm_90a build, compute capability 9.0)? */
static bool wgmma_expected(void)
{
#if defined(K3_HAVE_WGMMA)
	int dev = 0, major = 0, minor = 0;
	CUDA_OK(cudaGetDevice(&dev));
	CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
	return major == 9 && minor == 0;
#else
	return false;
#endif
}

/* Every element: |got - ref| <= 2^-8 |ref| + 2^-10 rms(ref): the output's BF16 rounding and
 * FP32 sums, element by element (a wrong tile, row or column fails it even where the
 * relative norm of the whole output would not notice). */
static void check_elements_allow(const char *what, const double *got, const double *ref, const double *allow,
				 size_t n, int rel_exp, int floor_exp)
{
	double ss = 0.0;
	for (size_t i = 0; i < n; i++)
		ss += ref[i] * ref[i];
	const double floor = ldexp(sqrt(ss / (double)(n ? n : 1)), floor_exp);
	double worst = 0.0;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const double r = fabs(got[i] - ref[i]) / (ldexp(fabs(ref[i]), rel_exp) + floor + (allow ? allow[i] : 0.0));
		if (!(r <= worst)) /* NaN too */
			worst = r == r ? r : INFINITY, at = i;
	}
	print_message("  %-52s worst element err/tol %.3f (at %zu)\n", what, worst, at);
	if (!(worst < 1.0))
		fail_msg("%s: element %zu is %g, reference %g", what, at, got[at], ref[at]);
}

static void check_elements(const char *what, const double *got, const double *ref, size_t n)
{
	check_elements_allow(what, got, ref, NULL, n, -8, -10);
}

/* The FP8 MMA's 32-product sums need not be FP32-exact (public accounts of Hopper's FP8 wgmma
 * put its accumulation at 13-14 bits). A per-element allowance of FP8_ACC_ULP sum |a w| over
 * each accumulator (the float64 sum of |a_k w_k| of the quantized values) covers that; a wrong
 * scale, slot or row costs a whole group's share (about 2^-7 of the sum at K = 4096) or more.
 * Measured on an H200 (2026-12-01k, the SPLIT cases' FP32 columns): at most 2^-25 of sum |a w|,
 * i.e. the m16n8k32 sums of these 6-bit products came out exact and only the FP32 accumulation
 * over groups remains; the BF16 outputs' worst element is at 0.69 of the tolerance, BF16
 * rounding. The allowance stays as the bound the tests ran with. */
#define FP8_ACC_ULP 0x1p-11
/* The FP8 wgmma kernel (K3_A_E4M3_ROW) sums all K / 32 of its MMAs' products in the tensor core's
 * accumulator (Hopper's FP8 accumulation keeps ~14 bits, DeepSeek-V3 report, arXiv:2412.19437,
 * section 3.3.2): one 2^-14 of sum |a w| a k step of 32, at least FP8_ACC_ULP. At K = 256 that is
 * FP8_ACC_ULP (a wrong scale group or slot fails it); at K3's K = 3584 2^-7.2, so there the
 * cases print the worst |err| / sum |a w| seen beside it. */
static double fp8_acc_ulp = FP8_ACC_ULP;

struct fp8_allow {
	double *bf16, *f32; /* [rows][width], [rows][n_split] (SPLIT) */
	double worst_rel;   /* largest |err| / sum |a w| seen, filled by fp8_report() */
};

/* The allowances of the reference `ref` (its epilogue, maps and outputs) for the FP8 path. */
static struct fp8_allow fp8_allowance(const struct moe_ref_gemm *ref, int64_t a_rows, int64_t w_elems, int width,
				      double **absacc_out)
{
	const int64_t rows = ref->rows, N = ref->N, K = ref->K;
	double *absa = gt_dnew((size_t)(a_rows * K)), *absw = gt_dnew((size_t)w_elems);
	for (int64_t i = 0; i < a_rows * K; i++)
		absa[i] = fabs(ref->a[i]);
	for (int64_t i = 0; i < w_elems; i++)
		absw[i] = fabs(ref->w[i]);
	double *absacc = gt_dnew((size_t)(rows * N)), *raw = gt_dnew((size_t)(rows * N));
	struct moe_ref_gemm r = *ref;
	r.a = absa, r.w = absw, r.epi = K3_EPI_BF16, r.out = absacc;
	assert_int_equal(moe_ref_gemm(&r), 0);
	r = *ref;
	r.epi = K3_EPI_BF16, r.out = raw;
	assert_int_equal(moe_ref_gemm(&r), 0);
	struct fp8_allow al = { .bf16 = gt_dnew((size_t)(rows * (width > 0 ? width : 1))),
				.f32 = gt_dnew((size_t)(rows * ref->n_split + 1)) };
	for (int64_t rr = 0; rr < rows; rr++) {
		const int64_t ro = ref->out_index ? ref->out_index[rr] : rr;
		const double *ab = absacc + ro * N, *rw = raw + ro * N;
		for (int64_t n = 0; n < N; n++) {
			const double e = fp8_acc_ulp * ab[n];
			switch (ref->epi) {
			case K3_EPI_SPLIT:
				if (n < ref->n_split)
					al.f32[ro * ref->n_split + n] = e;
				else
					al.bf16[ro * (N - ref->n_split) + n - ref->n_split] = e;
				break;
			case K3_EPI_SCALE:
				al.bf16[ro * N + n] = e * fabs(ref->row_scale[rr]);
				break;
			case K3_EPI_GLU:
				break;
			default:
				al.bf16[ro * N + n] = e;
			}
		}
		if (ref->epi == K3_EPI_GLU) /* |d out| <= 1.1 |u| |dg| + |g| |du| (both caps' slopes <= 1) */
			for (int64_t j = 0; j < N / 2; j++) {
				const int64_t gc = moe_glu_column(j, 0), uc = moe_glu_column(j, 1);
				const double eg = fp8_acc_ulp * ab[gc], eu = fp8_acc_ulp * ab[uc];
				al.bf16[ro * (N / 2) + j] = 1.1 * (fabs(rw[uc]) + eu) * eg + (fabs(rw[gc]) + eg) * eu;
			}
	}
	free(absa), free(absw), free(raw);
	*absacc_out = absacc;
	return al;
}

/* Where set: each wgmma case also runs under this kernel name (K3_GEMM_WG_KERNEL), whose outputs
 * must equal the case's bit for bit (wide2rq's leaner k loop against wide2rp's). */
static const char *same_as_kernel;
/* The FP8 kernel's outputs bit for bit those of its default (K3_GEMM_F8_SETS unset) where set. */
static bool same_as_f8_default;

/* Runs the launch `a` again with the environment variable `var` set to `value` (NULL: unset; its
 * old value restored after) into a fresh output and asserts the n outputs equal `out`'s bit for
 * bit (`what` names the other kernel in the message). */
static void assert_same_under(const struct k3_gemm_args *a, const struct gt_bf16 *out, size_t n, const char *var,
			      const char *value, const char *what)
{
	const char *cur = getenv(var);
	char *saved = cur ? strdup(cur) : NULL;
	struct gt_bf16 out2 = gt_bf16_out(n);
	struct k3_gemm_args b = *a;
	b.out = out2.d;
	if (value)
		setenv(var, value, 1);
	else
		unsetenv(var);
	KERNEL_OK(k3_gemm(&b, 0));
	gt_bf16_read(&out2);
	if (saved)
		setenv(var, saved, 1);
	else
		unsetenv(var);
	free(saved);
	size_t diff = 0;
	for (size_t i = 0; i < n; i++)
		diff += memcmp(&out->h[i], &out2.h[i], sizeof(double)) != 0;
	print_message("  bit for bit against %s: %zu of %zu outputs differ\n", what, diff, n);
	assert_int_equal(diff, 0);
	gt_bf16_release(&out2);
}

static void run_gemm_path(const struct gemm_case *c, enum k3_epilogue epi, const struct wmat *w,
			  enum k3_gemm_path path_arg)
{
	int64_t rows = c->rows;
	int32_t *off = NULL, *tile_off = NULL, *touched = NULL, n_touched = 0;
	if (c->n_groups) {
		off = gt_xmalloc((size_t)(c->n_groups + 1) * sizeof(int32_t));
		tile_off = gt_xmalloc((size_t)(c->n_groups + 1) * sizeof(int32_t));
		touched = gt_xmalloc((size_t)c->n_groups * sizeof(int32_t));
		for (int g = 0; g < c->n_groups; g++) {
			off[g + 1] = off[g] + c->counts[g];
			tile_off[g + 1] = tile_off[g] + (c->counts[g] + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS;
			if (c->counts[g])
				touched[n_touched++] = g;
		}
		rows = off[c->n_groups];
	}
	const int a_rows = c->a_rows > 0 ? c->a_rows : (int)rows;
	struct gt_bf16 A = a_rand(a_rows, c->K, c->a_exp);
	uint8_t *aq = NULL, *as = NULL;
	if (c->a8) { /* the quantizer's bytes are checked against the host's in test_mxfp8_quantize */
		aq = gt_dev_poisoned((size_t)a_rows * c->K);
		as = gt_dev_poisoned((size_t)a_rows * (c->K / K3_MX_GROUP));
		KERNEL_OK(k3_gemm_quantize_mxfp8(A.d, a_rows, c->K, aq, as, 0));
	}
	uint8_t *aq8 = NULL;
	float *aqs = NULL;
	if (c->e4m3) { /* the host's quantizer (the device's is byte for byte it: test_wgf8_operands) */
		assert_non_null(w->packedf8);
		uint8_t *q = gt_xmalloc((size_t)a_rows * c->K);
		float *qs = gt_xmalloc((size_t)a_rows * sizeof(float));
		for (int r = 0; r < a_rows; r++) {
			k3_e4m3_row_quantize(A.h + (size_t)r * c->K, (size_t)c->K, q + (size_t)r * c->K, &qs[r]);
			for (int k = 0; k < c->K; k++)
				A.h[(size_t)r * c->K + k] = k3_double_from_e4m3(q[(size_t)r * c->K + k]) * (double)qs[r];
		}
		aq8 = gt_dev_copy(q, (size_t)a_rows * c->K);
		aqs = gt_dev_copy(qs, (size_t)a_rows * sizeof(float));
		free(q), free(qs);
		fp8_acc_ulp = ldexp((double)(c->K / 32), -14) > FP8_ACC_ULP ? ldexp((double)(c->K / 32), -14) : FP8_ACC_ULP;
	}
	int32_t *a_index = NULL;
	if (c->a_rows > 0) {
		a_index = gt_xmalloc((size_t)rows * sizeof(int32_t));
		for (int64_t r = 0; r < rows; r++)
			a_index[r] = (int32_t)(test_rng_next(&rng) % (uint64_t)a_rows);
	}
	const int width = epi == K3_EPI_GLU ? c->N / 2 : epi == K3_EPI_SPLIT ? c->N - 128 : c->N;
	double *scale = NULL;
	float *scale_f = NULL;
	struct gt_bf16 add = { 0 };
	if (epi == K3_EPI_SCALE) {
		scale = gt_dnew((size_t)rows);
		scale_f = gt_xmalloc((size_t)rows * sizeof(float));
		for (int64_t r = 0; r < rows; r++)
			scale_f[r] = (float)test_rng_uniform(&rng, 0, 1), scale[r] = scale_f[r];
	}
	if (epi == K3_EPI_ADD || epi == K3_EPI_GATE)
		add = gt_bf16_rand(&rng, (size_t)rows * c->N, -1, 1);
	int32_t *out_index = NULL;
	if (c->scatter) { /* row r to (r * 7 + 3) mod rows, a permutation when 7 is prime to rows */
		assert_int_not_equal(rows % 7, 0);
		out_index = gt_xmalloc((size_t)rows * sizeof(int32_t));
		for (int64_t r = 0; r < rows; r++)
			out_index[r] = (int32_t)((r * 7 + 3) % rows);
	}

	struct moe_ref_gemm ref = {
		.rows = rows, .N = c->N, .K = c->K, .n_groups = c->n_groups, .off = off, .a_index = a_index,
		.out_index = out_index, .a = A.h, .a_mxfp8 = c->a8, .w = w->h, .epi = epi, .n_split = 128, .beta_gate = K3_SITU_BETA_GATE,
		.beta_up = K3_SITU_BETA_UP, .row_scale = scale, .addend = add.h,
		.out = gt_dnew((size_t)rows * width), .out_f32 = gt_dnew((size_t)rows * 128),
	};
	assert_int_equal(moe_ref_gemm(&ref), 0);
	struct fp8_allow al = { 0 };
	double *absacc = NULL;
	if (c->a8 || c->e4m3)
		al = fp8_allowance(&ref, a_rows, (int64_t)w->G * w->N * w->K, width, &absacc);

	struct gt_bf16 out = gt_bf16_out((size_t)rows * width);
	float *out_f32 = gt_dev_poisoned((size_t)rows * 128 * sizeof(float));
	struct k3_gemm_args a = {
		.rows = rows, .N = c->N, .K = c->K, .n_groups = c->n_groups, .a = A.d, .epi = epi, .n_split = 128,
		.beta_gate = (float)K3_SITU_BETA_GATE, .beta_up = (float)K3_SITU_BETA_UP, .out = out.d,
		.out_f32 = epi == K3_EPI_SPLIT ? out_f32 : NULL, .path = path_arg,
	};
	wmat_into(w, &a);
	if (c->a8) {
		a.a = NULL, a.a_dtype = K3_A_MXFP8, a.a_q = aq, a.a_scales = as;
		a.w_packed = w->packed8;
	}
	if (c->e4m3) {
		a.a = NULL, a.a_dtype = K3_A_E4M3_ROW, a.a_q = aq8, a.a_row_scales = aqs;
		a.w_wgf8 = w->packedf8, a.w_floors = w->floors;
	}
	if (c->n_groups) {
		a.off = gt_dev_copy(off, (size_t)(c->n_groups + 1) * sizeof(int32_t));
		a.tile_off = gt_dev_copy(tile_off, (size_t)(c->n_groups + 1) * sizeof(int32_t));
		a.touched = gt_dev_copy(touched, (size_t)c->n_groups * sizeof(int32_t));
		a.n_touched = gt_dev_copy(&n_touched, sizeof(int32_t));
	}
	if (a_index)
		a.a_index = gt_dev_copy(a_index, (size_t)rows * sizeof(int32_t));
	if (scale_f)
		a.row_scale = gt_dev_copy(scale_f, (size_t)rows * sizeof(float));
	if (epi == K3_EPI_ADD || epi == K3_EPI_GATE)
		a.addend = add.d;
	if (out_index)
		a.out_index = gt_dev_copy(out_index, (size_t)rows * sizeof(int32_t));
	size_t ws = 0;
	assert_int_equal(k3_gemm_workspace_bytes(&a, &ws), 0);
	a.workspace = ws ? gt_dev_poisoned(ws) : NULL;
	a.workspace_bytes = ws;
	const int path = k3_gemm_path_for(&a);
	assert_true(path == K3_GEMM_GEMV || path == K3_GEMM_TILED_MMA || path == K3_GEMM_TILED_WGMMA);
	/* gemv_f16_kernel runs (k3_gemm.h: grouped, MXFP4, BF16 activations, K % 512, w_f16, 16-byte
	 * aligned scales, K3_GEMV_FP4 unset or f16)? */
	const char *fp4k = getenv("K3_GEMV_FP4");
	const bool f16k = path == K3_GEMM_GEMV && c->n_groups && c->dt == K3_W_MXFP4 && !c->a8 && c->K % 512 == 0 &&
			  a.w_f16 && ((uintptr_t)a.w_scales & 15u) == 0 && (!fp4k || !strcmp(fp4k, "f16"));
	char what[160];
	snprintf(what, sizeof what, "%s %s %s rows=%lld N=%d K=%d groups=%d%s%s ws=%zu",
		 path == K3_GEMM_GEMV ? (c->a8 ? "gemv-mxfp8" : c->e4m3 ? "gemv-e4m3" : f16k ? "gemv-f16" : "gemv")
		 : path == K3_GEMM_TILED_MMA ? "tiled-mma"
		 : c->e4m3		      ? "tiled-wgmma-e4m3"
					      : "tiled-wgmma",
		 c->dt == K3_W_MXFP4 ? "mxfp4" : "bf16", epi_name(epi),
		 (long long)rows, c->N, c->K, c->n_groups, a_index ? " gathered" : "", out_index ? " scattered" : "", ws);
	KERNEL_OK(k3_gemm(&a, 0));
	gt_bf16_read(&out);
	if (same_as_kernel && path == K3_GEMM_TILED_WGMMA && epi != K3_EPI_SPLIT)
		assert_same_under(&a, &out, (size_t)rows * width, "K3_GEMM_WG_KERNEL", same_as_kernel, same_as_kernel);
	if (same_as_f8_default && c->e4m3 && path == K3_GEMM_TILED_WGMMA)
		assert_same_under(&a, &out, (size_t)rows * width, "K3_GEMM_F8_SETS", NULL, "the default FP8 kernel");
	if (epi != K3_EPI_SPLIT || width > 0) {
		gt_check(what, out.h, ref.out, (size_t)rows * width, TOL_BF16);
		if ((path == K3_GEMM_TILED_WGMMA && !c->e4m3) || f16k)
			check_elements("  elements", out.h, ref.out, (size_t)rows * width);
		if (c->a8 || c->e4m3) {
			char al_what[64];
			snprintf(al_what, sizeof al_what, "  elements (+ 2^%.1f sum |a w|)", log2(fp8_acc_ulp));
			check_elements_allow(al_what, out.h, ref.out, al.bf16, (size_t)rows * width, -8, -10);
		}
		if (c->e4m3 && epi == K3_EPI_GLU) { /* out_e4m3: E4M3 of m x the same outputs (rounding 2^-4) */
			const size_t n = (size_t)rows * width;
			uint8_t *o8 = gt_dev_poisoned(n), *h8 = gt_xmalloc(n);
			struct k3_gemm_args b = a;
			b.out = NULL, b.out_e4m3 = o8;
			const double m = k3_gemm_glu_e4m3_mul(b.beta_gate, b.beta_up);
			assert_true(m == 4.0); /* K3's caps 4 and 25: 4 x 100 <= 448 < 8 x 100 */
			KERNEL_OK(k3_gemm(&b, 0));
			CUDA_OK(cudaMemcpy(h8, o8, n, cudaMemcpyDeviceToHost));
			double *d8 = gt_dnew(n);
			for (size_t i = 0; i < n; i++)
				d8[i] = k3_double_from_e4m3(h8[i]) / m;
			check_elements_allow("  out_e4m3 against its BF16 outputs", d8, out.h, NULL, n, -4, -12);
			free(d8), free(h8);
			cudaFree(o8);
		}
		if (c->e4m3 && epi == K3_EPI_SCALE) { /* the accumulation's error, seen through the BF16 outputs */
			double worst = 0.0;
			for (int64_t r = 0; r < rows; r++) {
				const int64_t ro = out_index ? out_index[r] : r;
				for (int n = 0; n < c->N; n++) {
					const double b = absacc[ro * c->N + n] * fabs(scale[r]);
					const double d = fabs(out.h[ro * c->N + n] - ref.out[ro * c->N + n]) -
							 ldexp(fabs(ref.out[ro * c->N + n]), -8);
					if (b > 0 && d / b > worst)
						worst = d / b;
				}
			}
			print_message("  |err| - BF16 rounding, largest / sum |a w|: %.3g (2^%.1f)\n", worst,
				      worst > 0 ? log2(worst) : -INFINITY);
		}
	}
	if (epi == K3_EPI_SPLIT) {
		double *f = gt_dnew((size_t)rows * 128);
		gt_f32_read(out_f32, f, (size_t)rows * 128);
		if (c->a8) {
			/* The tensor core's sums, seen raw: the largest error as a fraction of sum |a w|. */
			double worst = 0.0;
			for (int64_t r = 0; r < rows; r++) {
				const int64_t ro = out_index ? out_index[r] : r;
				for (int n = 0; n < 128; n++) {
					const double d = fabs(f[ro * 128 + n] - ref.out_f32[ro * 128 + n]);
					const double b = absacc[ro * c->N + n];
					if (b > 0 && d / b > worst)
						worst = d / b;
				}
			}
			print_message("  fp32 columns: largest |err| / sum |a w| = %.3g (2^%.1f)\n", worst,
				      worst > 0 ? log2(worst) : -INFINITY);
			check_elements_allow("  fp32 columns (+ 2^-11 sum |a w|)", f, ref.out_f32, al.f32,
					     (size_t)rows * 128, -20, -22);
		} else {
			gt_check("  fp32 columns", f, ref.out_f32, (size_t)rows * 128, TOL_F32);
		}
		free(f);
	}
	free(al.bf16), free(al.f32), free(absacc);
	free(off), free(tile_off), free(touched), free(a_index), free(out_index), free(scale), free(scale_f);
	free(ref.out), free(ref.out_f32);
	gt_free(a.out_index);
	gt_bf16_release(&A), gt_bf16_release(&out);
	if (add.h)
		gt_bf16_release(&add);
	cudaFree(out_f32), gt_free(a.off), gt_free(a.tile_off), gt_free(a.touched);
	gt_free(a.n_touched), gt_free(a.a_index), gt_free(a.row_scale), cudaFree(a.workspace);
	cudaFree(aq), cudaFree(as), cudaFree(aq8), cudaFree(aqs);
	fp8_acc_ulp = FP8_ACC_ULP;
}

/* One case; K3_GEMM_TILED runs both tiled kernels (wgmma where it is available). */
static void run_gemm(const struct gemm_case *c, enum k3_epilogue epi, const struct wmat *w)
{
	if (c->path != K3_GEMM_TILED) {
		run_gemm_path(c, epi, w, c->path);
		return;
	}
	run_gemm_path(c, epi, w, K3_GEMM_TILED_MMA);
	if (wgmma_expected())
		run_gemm_path(c, epi, w, K3_GEMM_TILED_WGMMA);
}

static void run_all_epilogues(const struct gemm_case *c)
{
	struct wmat w = wmat_rand(c->n_groups ? c->n_groups : 1, c->N, c->K, c->dt, 0.1);
	for (int e = K3_EPI_BF16; e <= K3_EPI_GATE; e++)
		if (e != K3_EPI_SPLIT || c->N > 128)
			run_gemm(c, (enum k3_epilogue)e, &w);
	wmat_release(&w);
}

static const int32_t COUNTS[7] = { 0, 70, 1, 130, 64, 0, 3 };

static void test_gemm_dense_tiled(void **unused)
{
	(void)unused;
	for (int dt = 0; dt < 2; dt++) {
		const struct gemm_case c = { .rows = 300, .N = 256, .K = 384, .dt = (enum k3_wdtype)dt,
					     .path = K3_GEMM_TILED };
		run_all_epilogues(&c);
	}
}

static void test_gemm_dense_tiled_big_tiles(void **unused)
{
	(void)unused;
	/* Enough tiles for the 128-row variant (18 x 16 >= 2 per SM). */
	const struct gemm_case c = { .rows = 2304, .N = 2048, .K = 256, .dt = K3_W_BF16, .path = K3_GEMM_TILED };
	struct wmat w = wmat_rand(1, c.N, c.K, c.dt, 0.1);
	run_gemm(&c, K3_EPI_BF16, &w);
	wmat_release(&w);
	const struct gemm_case f = { .rows = 2304, .N = 2048, .K = 256, .dt = K3_W_MXFP4, .path = K3_GEMM_TILED };
	w = wmat_rand(1, f.N, f.K, f.dt, 0.1);
	run_gemm(&f, K3_EPI_GLU, &w);
	wmat_release(&w);
}

/* Dense decode-size GEMMs on the mma.sync kernel split over k (k3_gemm.cu tiled_split()): the
 * slices' FP32 partials through a poisoned workspace and the finishing kernel, every epilogue,
 * against float64; the split the heuristic picks, a forced uneven one (32 blocks in 11, 11, 10)
 * and none. */
static void test_gemm_dense_tiled_splitk(void **unused)
{
	(void)unused;
	const struct gemm_case one = { .rows = 64, .N = 96, .K = 2048, .dt = K3_W_BF16, .path = K3_GEMM_TILED_MMA };
	const struct gemm_case fp4 = { .rows = 200, .N = 272, .K = 1024, .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_MMA };
	const struct gemm_case uneven = { .rows = 37, .N = 256, .K = 2048, .dt = K3_W_BF16, .path = K3_GEMM_TILED_MMA };
	struct k3_gemm_args a = { .rows = one.rows, .N = one.N, .K = one.K, .w_dtype = K3_W_BF16,
				  .path = K3_GEMM_TILED_MMA };
	size_t ws = 0;
	unsetenv("K3_GEMM_TILED_SPLIT");
	assert_int_equal(k3_gemm_workspace_bytes(&a, &ws), 0);
	assert_true(ws >= (size_t)2 * 64 * 96 * sizeof(float)); /* one tile, 32 k blocks: split */
	run_all_epilogues(&one);
	run_all_epilogues(&fp4);
	setenv("K3_GEMM_TILED_SPLIT", "3", 1);
	a.rows = uneven.rows, a.N = uneven.N;
	assert_int_equal(k3_gemm_workspace_bytes(&a, &ws), 0);
	assert_int_equal(ws, (size_t)3 * 37 * 256 * sizeof(float));
	run_all_epilogues(&uneven);
	setenv("K3_GEMM_TILED_SPLIT", "off", 1);
	assert_int_equal(k3_gemm_workspace_bytes(&a, &ws), 0);
	assert_int_equal(ws, 0);
	run_all_epilogues(&uneven);
	unsetenv("K3_GEMM_TILED_SPLIT");
}

static void test_gemm_dense_gemv(void **unused)
{
	(void)unused;
	for (int dt = 0; dt < 2; dt++)
		for (int rows = 5; rows <= 13; rows += 8) { /* 8 and 16 tokens a pass; k split over CTAs */
			const struct gemm_case c = { .rows = rows, .N = 256, .K = 2048, .dt = (enum k3_wdtype)dt,
						     .path = K3_GEMM_AUTO };
			run_all_epilogues(&c);
		}
	/* 9-16 rows over an N whose 128-column tiles fill the GPU: the tiled kernel (k3_gemm.cu
	 * dense_gemv), every epilogue, the same results. */
	int sms = 0;
	assert_int_equal(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
	const struct gemm_case wide = { .rows = 12, .N = (sms * 7 / 10 + 2) * 128, .K = 256, .dt = K3_W_BF16,
					.path = K3_GEMM_AUTO };
	struct k3_gemm_args wa = { .rows = wide.rows, .N = wide.N, .K = wide.K, .w_dtype = K3_W_BF16 };
	assert_int_not_equal(k3_gemm_path_for(&wa), K3_GEMM_GEMV);
	wa.N = 256;
	assert_int_equal(k3_gemm_path_for(&wa), K3_GEMM_GEMV);
	run_all_epilogues(&wide);
	/* 1-8 rows follow the same rule with K3_GEMM_DENSE_GEMV=0 (else always the gemv). */
	wa.rows = 5;
	wa.N = wide.N;
	assert_int_equal(k3_gemm_path_for(&wa), K3_GEMM_GEMV);
	setenv("K3_GEMM_DENSE_GEMV", "0", 1);
	assert_int_not_equal(k3_gemm_path_for(&wa), K3_GEMM_GEMV);
	const struct gemm_case wide5 = { .rows = 5, .N = wide.N, .K = 256, .dt = K3_W_BF16, .path = K3_GEMM_AUTO };
	run_all_epilogues(&wide5);
	unsetenv("K3_GEMM_DENSE_GEMV");
	/* K3 decode shapes, BF16: the split over k chosen by waves (k3_gemm.cu gemv_split: 14
	 * slices of 4 blocks at N = 384, many at 4480 x 7168 and at 16 rows), then the rule it
	 * replaced (K3_GEMV_DENSE_SPLIT=old). */
	const struct gemm_case k3s[] = {
		{ .rows = 1, .N = 384, .K = 7168, .dt = K3_W_BF16, .path = K3_GEMM_AUTO },
		{ .rows = 1, .N = 4480, .K = 7168, .dt = K3_W_BF16, .path = K3_GEMM_AUTO },
		{ .rows = 16, .N = 7168, .K = 6144, .dt = K3_W_BF16, .path = K3_GEMM_AUTO },
	};
	for (int old = 0; old < 2; old++) {
		if (old)
			setenv("K3_GEMV_DENSE_SPLIT", "old", 1);
		for (size_t i = 0; i < sizeof k3s / sizeof k3s[0]; i++)
			run_all_epilogues(&k3s[i]);
	}
	unsetenv("K3_GEMV_DENSE_SPLIT");
	/* More rows than a pass holds: several passes. */
	const struct gemm_case c = { .rows = 37, .N = 384, .K = 512, .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	run_all_epilogues(&c);
}

static void test_gemm_grouped_tiled(void **unused)
{
	(void)unused;
	for (int dt = 0; dt < 2; dt++) {
		const struct gemm_case c = { .N = 256, .K = 256, .n_groups = 7, .counts = COUNTS, .a_rows = 50,
					     .dt = (enum k3_wdtype)dt, .path = K3_GEMM_TILED };
		run_all_epilogues(&c);
	}
}

static void test_gemm_grouped_gemv(void **unused)
{
	(void)unused;
	for (int dt = 0; dt < 2; dt++) {
		const struct gemm_case c = { .N = 256, .K = 256, .n_groups = 7, .counts = COUNTS, .a_rows = 50,
					     .dt = (enum k3_wdtype)dt, .path = K3_GEMM_GEMV };
		run_all_epilogues(&c);
	}
	/* Few rows per group: 8 tokens a pass. */
	static const int32_t few[9] = { 1, 0, 2, 1, 0, 0, 3, 1, 1 };
	const struct gemm_case c = { .N = 384, .K = 640, .n_groups = 9, .counts = few, .a_rows = 5, .dt = K3_W_MXFP4,
				     .path = K3_GEMM_AUTO };
	run_all_epilogues(&c);
	/* The rule (2026-12-06): without the tile layout the gemv up to 16 rows a group; with it (w_wg)
	 * the tiled wgmma path above a quarter of a row a group where wgmma runs; K3_GEMM_GROUPED_GEMV=0
	 * the tiled path at every size, =1 the gemv whatever the layout. */
	struct wmat w = wmat_rand(9, 384, 640, K3_W_MXFP4, 0.1);
	struct k3_gemm_args a = { .rows = 9, .N = 384, .K = 640, .n_groups = 9, .w_dtype = K3_W_MXFP4,
				  .epi = K3_EPI_BF16, .path = K3_GEMM_AUTO };
	assert_int_equal(k3_gemm_path_for(&a), K3_GEMM_GEMV);
	wmat_into(&w, &a); /* w_wg given where the layout was made */
	const int wg = wgmma_expected() && w.packedwg ? K3_GEMM_TILED_WGMMA : K3_GEMM_GEMV;
	assert_int_equal(k3_gemm_path_for(&a), wg);
	struct k3_gemm_args b = a;
	b.rows = 2; /* a quarter of a row a group or less: the gemv */
	assert_int_equal(k3_gemm_path_for(&b), K3_GEMM_GEMV);
	setenv("K3_GEMM_GROUPED_GEMV", "1", 1);
	assert_int_equal(k3_gemm_path_for(&a), K3_GEMM_GEMV);
	setenv("K3_GEMM_GROUPED_GEMV", "0", 1);
	b = a, b.w_wg = NULL;
	const int p = k3_gemm_path_for(&b);
	assert_true(p == K3_GEMM_TILED_WGMMA || p == K3_GEMM_TILED_MMA);
	run_gemm_path(&c, K3_EPI_GLU, &w, K3_GEMM_AUTO);
	unsetenv("K3_GEMM_GROUPED_GEMV");
	run_gemm_path(&c, K3_EPI_GLU, &w, K3_GEMM_AUTO); /* the default: 12 rows in 9 groups, tiled with w_wg */
	wmat_release(&w);
}

/* wide2rp (the tile layout, w_wg) at one of K3's expert shapes: the groups `few` (<= 128 rows a
 * group: wide2r's tiles) and 300, 0, 170 (wide2rv's chunks: 150 + 150, 85 + 85), gathered. */
static void run_k3_shape_rp(const struct wmat *w, enum k3_epilogue epi, const int32_t *few)
{
	static const int32_t many[3] = { 300, 0, 170 };
	/* wide2rq (2026-12-03q, the default): wide2rp's leaner k loop; wide2rq4 (03s): four consumer
	 * warpgroups of one m64 block, token tiles of 96; wide2rqv, wide2rq4v: their A words one
	 * 16-byte load a k block; wide2rqt, wide2rq4t (2026-12-03u): the token rows by tensor copies;
	 * wide2rqp (2026-12-04m, second: a call's test cap reaches it): the gathered token rows from
	 * pointers made once a tile (the default since 04m) */
	static const char *const rp[8] = { "wide2rp",  "wide2rqp",  "wide2rqt", "wide2rq4t",
					   "wide2rqv", "wide2rq4v", "wide2rq",  "wide2rq4" };
	if (!wgmma_expected())
		return;
	assert_non_null(w->packedwg);
	for (int k = 0; k < 8; k++) {
		setenv("K3_GEMM_WG_KERNEL", rp[k], 1);
		same_as_kernel = k ? "wide2rp" : NULL;
		for (int m = 0; m < 2; m++) {
			const struct gemm_case c = { .N = w->N, .K = w->K, .n_groups = 3, .counts = m ? many : few,
						     .a_rows = 500, .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA };
			run_gemm(&c, epi, w);
		}
	}
	same_as_kernel = NULL;
	unsetenv("K3_GEMM_WG_KERNEL");
}

/* K3's expert shapes: w13 (GLU) and w2 (SCALE), MXFP4, both paths; wide2rp. */
static void test_gemm_k3_expert_shapes(void **unused)
{
	(void)unused;
	static const int32_t counts[3] = { 3, 0, 70 };
	struct wmat w13 = wmat_rand(3, 2 * K3_EXPERT_INTER, K3_LATENT, K3_W_MXFP4, 0.05);
	for (int p = K3_GEMM_TILED; p <= K3_GEMM_GEMV; p++) {
		const struct gemm_case c = { .N = 2 * K3_EXPERT_INTER, .K = K3_LATENT, .n_groups = 3, .counts = counts,
					     .a_rows = 40, .dt = K3_W_MXFP4, .path = (enum k3_gemm_path)p };
		run_gemm(&c, K3_EPI_GLU, &w13);
	}
	run_k3_shape_rp(&w13, K3_EPI_GLU, counts);
	wmat_release(&w13);
	struct wmat w2 = wmat_rand(3, K3_LATENT, K3_EXPERT_INTER, K3_W_MXFP4, 0.05);
	for (int p = K3_GEMM_TILED; p <= K3_GEMM_GEMV; p++) {
		const struct gemm_case c = { .N = K3_LATENT, .K = K3_EXPERT_INTER, .n_groups = 3, .counts = counts,
					     .dt = K3_W_MXFP4, .path = (enum k3_gemm_path)p };
		run_gemm(&c, K3_EPI_SCALE, &w2);
	}
	run_k3_shape_rp(&w2, K3_EPI_SCALE, counts);
	wmat_release(&w2);
}

/* ---- routing and grouping ------------------------------------------------ */

/* ties: logits from 3 values and no bias, so that most scores tie (equal in FP32 and float64):
 * the order must be the reference's, ties to the lower expert. */
static void run_route_tied(int T, int E, int K, bool ties)
{
	print_message("route T=%d E=%d K=%d%s\n", T, E, K, ties ? " (ties)" : "");
	/* Logits on a grid (distinct, 8 / E apart, shuffled) so that FP32 and float64 rank alike. */
	float *lg = gt_xmalloc((size_t)T * E * sizeof(float) + 4);
	double *lgd = gt_dnew((size_t)T * E);
	for (int t = 0; t < T; t++) {
		for (int e = 0; e < E; e++)
			lg[(size_t)t * E + e] = (float)(-4.0 + 8.0 * e / E);
		for (int e = E - 1; e > 0; e--) {
			const int j = (int)(test_rng_next(&rng) % (uint64_t)(e + 1));
			const float x = lg[(size_t)t * E + e];
			lg[(size_t)t * E + e] = lg[(size_t)t * E + j], lg[(size_t)t * E + j] = x;
		}
		if (ties)
			for (int e = 0; e < E; e++)
				lg[(size_t)t * E + e] = (float)((int)(test_rng_next(&rng) % 3) - 1);
		for (int e = 0; e < E; e++)
			lgd[(size_t)t * E + e] = lg[(size_t)t * E + e];
	}
	float *bias = gt_xmalloc((size_t)E * sizeof(float));
	double *biasd = gt_dnew((size_t)E);
	/* Bias classes 2 apart (more than any score difference): the ranking is by class, then by
	 * score, with no near-ties between FP32 and float64. */
	for (int e = 0; e < E; e++)
		bias[e] = ties ? 0.0f : (float)(2.0 * (double)(test_rng_next(&rng) % 3)), biasd[e] = bias[e];
	const size_t TK = (size_t)T * K;
	int32_t *ids = gt_xmalloc(TK * sizeof(int32_t) + 4);
	double *w = gt_dnew(TK);
	assert_int_equal(moe_ref_route(T, E, K, lgd, biasd, 1.5, ids, w), 0);
	struct moe_ref_groups g = {
		.off = gt_xmalloc((size_t)(E + 1) * 4), .tile_off = gt_xmalloc((size_t)(E + 1) * 4),
		.touched = gt_xmalloc((size_t)E * 4), .row_token = gt_xmalloc(TK * 4 + 4), .row_of = gt_xmalloc(TK * 4 + 4),
	};
	assert_int_equal(moe_ref_group(T, E, K, ids, MOE_TILE_ROWS, &g), 0);

	struct moe_route_args a = {
		.tokens = T, .experts = E, .topk = K, .scaling = 1.5f, .logits = gt_dev_copy(lg, (size_t)T * E * 4),
		.logits_stride = E, .bias = gt_dev_copy(bias, (size_t)E * 4),
		.topk_ids = gt_dev_poisoned(TK * 4), .topk_weights = gt_dev_poisoned(TK * 4),
		.off = gt_dev_poisoned((size_t)(E + 1) * 4), .tile_off = gt_dev_poisoned((size_t)(E + 1) * 4),
		.touched = gt_dev_poisoned((size_t)E * 4), .n_touched = gt_dev_poisoned(4),
		.row_token = gt_dev_poisoned(TK * 4), .row_weight = gt_dev_poisoned(TK * 4),
		.row_of = gt_dev_poisoned(TK * 4), .workspace_bytes = moe_route_workspace_bytes(T, E),
	};
	a.workspace = gt_dev_poisoned(a.workspace_bytes);
	KERNEL_OK(moe_route(&a, 0));
	int32_t *gi = gt_xmalloc(TK * 4 + 4), *goff = gt_xmalloc((size_t)(E + 1) * 4);
	int32_t *gtile = gt_xmalloc((size_t)(E + 1) * 4), *gtouch = gt_xmalloc((size_t)E * 4), gn = -1;
	int32_t *grt = gt_xmalloc(TK * 4 + 4), *gro = gt_xmalloc(TK * 4 + 4);
	CUDA_OK(cudaMemcpy(gi, a.topk_ids, TK * 4, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(goff, a.off, (size_t)(E + 1) * 4, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(gtile, a.tile_off, (size_t)(E + 1) * 4, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(gtouch, a.touched, (size_t)E * 4, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(&gn, a.n_touched, 4, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(grt, a.row_token, TK * 4, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(gro, a.row_of, TK * 4, cudaMemcpyDeviceToHost));
	assert_memory_equal(gi, ids, TK * 4);
	assert_memory_equal(goff, g.off, (size_t)(E + 1) * 4);
	assert_memory_equal(gtile, g.tile_off, (size_t)(E + 1) * 4);
	assert_int_equal(gn, g.n_touched);
	assert_memory_equal(gtouch, g.touched, (size_t)g.n_touched * 4);
	assert_memory_equal(grt, g.row_token, TK * 4);
	assert_memory_equal(gro, g.row_of, TK * 4);
	double *gw = gt_dnew(TK), *grw = gt_dnew(TK), *rrw = gt_dnew(TK);
	gt_f32_read(a.topk_weights, gw, TK);
	gt_f32_read(a.row_weight, grw, TK);
	for (size_t i = 0; i < TK; i++)
		rrw[g.row_of[i]] = w[i];
	gt_check("topk weights", gw, w, TK, 1e-5);
	gt_check("grouped row weights", grw, rrw, TK, 1e-5);
	free(lg), free(lgd), free(bias), free(biasd), free(ids), free(w), free(g.off), free(g.tile_off), free(g.touched);
	free(g.row_token), free(g.row_of), free(gi), free(goff), free(gtile), free(gtouch), free(grt), free(gro);
	free(gw), free(grw), free(rrw);
	gt_free(a.logits), gt_free(a.bias), cudaFree(a.topk_ids), cudaFree(a.topk_weights);
	cudaFree(a.off), cudaFree(a.tile_off), cudaFree(a.touched), cudaFree(a.n_touched), cudaFree(a.row_token);
	cudaFree(a.row_weight), cudaFree(a.row_of), cudaFree(a.workspace);
}

static void run_route(int T, int E, int K)
{
	run_route_tied(T, E, K, false);
}

static void test_route(void **unused)
{
	(void)unused;
	run_route(1, 128, 8);
	run_route(300, 256, 16);
	run_route(1000, K3_EXPERTS, K3_TOPK); /* 4 counting blocks */
	run_route(2100, K3_EXPERTS, K3_TOPK); /* 9 counting blocks: two batches of the scan's loads */
	run_route(5, MOE_MAX_EXPERTS, MOE_MAX_TOPK);
	run_route(3, 100, 32);                /* experts not a multiple of 32 */
	run_route_tied(40, K3_EXPERTS, K3_TOPK, true);
	run_route_tied(9, 128, 8, true);
}

static void test_combine(void **unused)
{
	(void)unused;
	enum { T = 37, K = 16, W = K3_LATENT };
	struct gt_bf16 y = gt_bf16_rand(&rng, (size_t)T * K * W, -1, 1);
	struct gt_bf16 nw = gt_bf16_rand(&rng, W, 0.5, 1.5);
	int32_t row_of[T * K];
	for (int i = 0; i < T * K; i++)
		row_of[i] = (int32_t)((i * 97 + 5) % (T * K)); /* a permutation: 97 is prime to 592 */
	double *sum = gt_dnew((size_t)T * W), *ref = gt_dnew((size_t)T * W);
	for (int t = 0; t < T; t++)
		for (int k = 0; k < K; k++)
			for (int i = 0; i < W; i++)
				sum[(size_t)t * W + i] += y.h[(size_t)row_of[t * K + k] * W + i];
	struct gt_bf16 out = gt_bf16_out((size_t)T * W);
	struct moe_combine_args a = { .tokens = T, .topk = K, .width = W, .eps = 1e-6f, .y = y.d,
				      .row_of = gt_dev_copy(row_of, sizeof row_of), .norm_w = nw.d, .out = out.d };
	KERNEL_OK(moe_combine(&a, 0));
	gt_bf16_read(&out);
	moe_ref_rmsnorm(T, W, sum, nw.h, 1e-6, ref);
	gt_check("combine + rmsnorm", out.h, ref, (size_t)T * W, TOL_BF16);
	gt_poison(out.d, (size_t)T * W * 2);
	a.norm_w = NULL;
	KERNEL_OK(moe_combine(&a, 0));
	gt_bf16_read(&out);
	gt_check("combine, no norm", out.h, sum, (size_t)T * W, TOL_BF16);
	free(sum), free(ref);
	gt_bf16_release(&y), gt_bf16_release(&nw), gt_bf16_release(&out);
	gt_free(a.row_of);
}

/* ---- whole layers ------------------------------------------------------- */

/* The ops a forward announces (struct moe_hook): how many, how many say dtype=fp8, how many are
 * elementwise. */
struct spec_count {
	int ops, fp8, elementwise;
};

static void count_spec(void *ctx, const char *spec)
{
	struct spec_count *c = ctx;
	if (!spec)
		return;
	c->ops++;
	c->fp8 += strstr(spec, "op=grouped_gemm ") && strstr(spec, " dtype=fp8 ");
	c->elementwise += strstr(spec, "op=elementwise ") != NULL;
}

/* One layer against float64; wg: MXFP4 experts given in the wgmma tile layout too (w13_wg, w2_wg:
 * the prefill's default wgmma kernel "wide2rp" reads it), as the slice gives them. act: the
 * experts' activations (K3_A_E4M3_ROW: the FP8-word layout given too, the reference quantizing
 * as the GPU; then also the BF16 default on the same inputs, bit for bit with and without the
 * FP8-word fields set). */
static void run_layer_act(int T, enum k3_wdtype edt, enum k3_gemm_path path, bool wg, enum k3_adtype act)
{
	const bool f8 = act == K3_A_E4M3_ROW;
	const struct moe_dims d = { .hidden = 1024, .latent = 512, .experts = 128, .topk = 8, .inter = 256,
				    .shared_inter = 512, .scaling = 1.0f, .eps = 1e-6f, .beta_gate = 4.0f,
				    .beta_up = 25.0f, .expert_dtype = edt, .expert_act = act };
	print_message("layer T=%d experts %s path %d%s%s\n", T, edt == K3_W_MXFP4 ? "mxfp4" : "bf16", path,
		      wg ? " (tile layout)" : "", f8 ? " (e4m3 activations)" : "");
	struct gt_bf16 x = gt_bf16_rand(&rng, (size_t)T * d.hidden, -1, 1);
	struct wmat rd = wmat_rand(1, d.experts + d.latent, d.hidden, K3_W_BF16, 0.06);
	struct wmat w13 = wmat_rand(d.experts, 2 * d.inter, d.latent, edt, 0.08);
	struct wmat w2 = wmat_rand(d.experts, d.latent, d.inter, edt, 0.08);
	struct wmat up = wmat_rand(1, d.hidden, d.latent, K3_W_BF16, 0.06);
	struct wmat s13 = wmat_rand(1, 2 * d.shared_inter, d.hidden, K3_W_BF16, 0.04);
	struct wmat s2 = wmat_rand(1, d.hidden, d.shared_inter, K3_W_BF16, 0.04);
	struct gt_bf16 nw = gt_bf16_rand(&rng, d.latent, 0.5, 1.5);
	float *bias = gt_xmalloc((size_t)d.experts * sizeof(float));
	double *biasd = gt_dnew(d.experts);
	for (int e = 0; e < d.experts; e++)
		bias[e] = (float)test_rng_uniform(&rng, -0.02, 0.02), biasd[e] = bias[e];
	struct moe_weights w = {
		.w_router_down = rd.bf16, .bias = gt_dev_copy(bias, (size_t)d.experts * 4), .w13 = w13.bf16,
		.w2 = w2.bf16, .w13_packed = w13.packed, .w13_scales = w13.scales, .w2_packed = w2.packed,
		.w2_scales = w2.scales, .w13_f16 = w13.packed16, .w2_f16 = w2.packed16,
		.w13_wg = wg ? w13.packedwg : NULL, .w2_wg = wg ? w2.packedwg : NULL, .norm_w = nw.d, .w_up = up.bf16, .ws13 = s13.bf16, .ws2 = s2.bf16,
	};
	if (f8) { /* the FP8-word layout (wmat_rand: its weights spread over 7 binades, within 11) */
		assert_non_null(w13.packedf8);
		assert_non_null(w2.packedf8);
		w.w13_wgf8 = w13.packedf8, w.w13_floors = w13.floors, w.w2_wgf8 = w2.packedf8, w.w2_floors = w2.floors;
	}
	size_t ws = 0;
	assert_int_equal(moe_layer_workspace_bytes(&d, T, path, &ws), 0);
	void *dws = gt_dev_poisoned(ws);
	struct gt_bf16 out = gt_bf16_out((size_t)T * d.hidden);
	struct spec_count sc = { 0 };
	const struct moe_hook hook = { count_spec, &sc };
	KERNEL_OK(moe_layer_forward(&d, &w, T, x.d, out.d, dws, ws, path, f8 ? &hook : NULL, 0));
	gt_bf16_read(&out);
	if (f8) { /* the eight ops, the quantizer and the row-scale fill; w13 and w2 as fp8 */
		assert_int_equal(sc.ops, 10);
		assert_int_equal(sc.fp8, 2);
		assert_int_equal(sc.elementwise, 2);
	}

	/* The GPU's logits against float64; then route the reference by them. */
	struct moe_layer_views v;
	moe_layer_views(&d, T, dws, &v);
	double *glog = gt_dnew((size_t)T * d.experts);
	gt_f32_read(v.logits, glog, (size_t)T * d.experts);
	double *rlog = gt_dnew((size_t)T * d.experts), *rout = gt_dnew((size_t)T * d.hidden);
	int32_t *rids = gt_xmalloc((size_t)T * d.topk * 4), *gids = gt_xmalloc((size_t)T * d.topk * 4);
	/* The GPU's choices must be a top-k of the float64 biased scores (up to FP32
	 * rounding: near-ties may go either way); the reference then takes them. */
	CUDA_OK(cudaMemcpy(gids, v.topk_ids, (size_t)T * d.topk * 4, cudaMemcpyDeviceToHost));
	for (int t = 0; t < T; t++) {
		double lo = INFINITY, hi = -INFINITY;
		bool chosen[128] = { false };
		for (int k = 0; k < d.topk; k++) {
			const int e = gids[t * d.topk + k];
			assert_true(e >= 0 && e < d.experts && !chosen[e]);
			chosen[e] = true;
			lo = fmin(lo, 1 / (1 + exp(-glog[(size_t)t * d.experts + e])) + biasd[e]);
		}
		for (int e = 0; e < d.experts; e++)
			if (!chosen[e])
				hi = fmax(hi, 1 / (1 + exp(-glog[(size_t)t * d.experts + e])) + biasd[e]);
		assert_true(lo >= hi - 1e-6);
	}
	struct moe_ref_layer ref = {
		.tokens = T, .hidden = d.hidden, .latent = d.latent, .experts = d.experts, .topk = d.topk,
		.inter = d.inter, .shared_inter = d.shared_inter, .scaling = 1.0, .eps = 1e-6, .beta_gate = 4,
		.beta_up = 25, .round_bf16 = true, .x = x.h, .w_router_down = rd.h, .bias = biasd, .w13 = w13.h,
		.w2 = w2.h, .norm_w = nw.h, .w_up = up.h, .ws13 = s13.h, .ws2 = s2.h, .logits_in = glog,
		.ids_in = gids, .logits = rlog, .ids = rids, .out = rout,
		.e4m3_act = f8, .e4m3_glu_mul = f8 ? k3_gemm_glu_e4m3_mul(d.beta_gate, d.beta_up) : 0.0,
	};
	assert_int_equal(moe_ref_layer(&ref), 0);
	gt_check("router logits", glog, rlog, (size_t)T * d.experts, TOL_F32);
	const double err = gt_check("layer output", out.h, rout, (size_t)T * d.hidden, f8 ? TOL_LAYER_E4M3 : TOL_LAYER);
	if (f8) {
		/* The quantization is the GPU's: the output is nearer the E4M3 reference than the BF16 one. */
		double *bout = gt_dnew((size_t)T * d.hidden);
		struct moe_ref_layer rb = ref;
		rb.e4m3_act = false, rb.out = bout, rb.logits = NULL, rb.ids = NULL;
		assert_int_equal(moe_ref_layer(&rb), 0);
		const double err_bf16 = test_rel_err(out.h, bout, (size_t)T * d.hidden);
		print_message("  %-52s rel err %.3e (E4M3 reference: %.3e)\n", "layer output against the BF16 reference",
			      err_bf16, err);
		assert_true(err < err_bf16);
		free(bout);

		/* The BF16 default on the same inputs: bit for bit the same with the FP8-word fields set
		 * as without (they are ignored there; its values: test_layer_prefill, _wide). */
		struct moe_dims db = d;
		db.expert_act = K3_A_BF16;
		size_t wsb = 0;
		assert_int_equal(moe_layer_workspace_bytes(&db, T, path, &wsb), 0);
		print_message("  workspace: bf16 %zu bytes, e4m3 %zu bytes\n", wsb, ws);
		void *dwsb = gt_dev_poisoned(wsb);
		struct gt_bf16 o1 = gt_bf16_out((size_t)T * d.hidden), o2 = gt_bf16_out((size_t)T * d.hidden);
		KERNEL_OK(moe_layer_forward(&db, &w, T, x.d, o1.d, dwsb, wsb, path, NULL, 0));
		gt_bf16_read(&o1);
		struct moe_weights wn = w;
		wn.w13_wgf8 = wn.w13_floors = wn.w2_wgf8 = wn.w2_floors = NULL;
		gt_poison(dwsb, wsb);
		KERNEL_OK(moe_layer_forward(&db, &wn, T, x.d, o2.d, dwsb, wsb, path, NULL, 0));
		gt_bf16_read(&o2);
		size_t diff = 0;
		for (size_t i = 0; i < (size_t)T * d.hidden; i++)
			diff += memcmp(&o1.h[i], &o2.h[i], sizeof(double)) != 0;
		print_message("  bf16 default with / without the FP8-word fields: %zu of %zu outputs differ\n", diff,
			      (size_t)T * d.hidden);
		assert_int_equal(diff, 0);
		gt_bf16_release(&o1), gt_bf16_release(&o2);
		cudaFree(dwsb);

		/* What the E4M3 path refuses: a missing FP8-word field, BF16 experts, another act. */
		struct moe_weights wm = w;
		wm.w2_floors = NULL;
		assert_int_equal(moe_layer_forward(&d, &wm, T, x.d, out.d, dws, ws, path, NULL, 0), -EINVAL);
		struct moe_dims dx = d;
		dx.expert_dtype = K3_W_BF16;
		assert_int_equal(moe_layer_workspace_bytes(&dx, T, path, &wsb), -EINVAL);
		dx = d, dx.expert_act = K3_A_MXFP8;
		assert_int_equal(moe_layer_workspace_bytes(&dx, T, path, &wsb), -EINVAL);
		dx.expert_act = (enum k3_adtype)7;
		assert_int_equal(moe_layer_workspace_bytes(&dx, T, path, &wsb), -EINVAL);
		assert_int_equal(moe_layer_workspace_bytes(&d, T, K3_GEMM_GEMV, &wsb), -EINVAL); /* the FP8 kernel is wgmma */
	}

	free(bias), free(biasd), free(glog), free(rlog), free(rout), free(rids), free(gids);
	wmat_release(&rd), wmat_release(&w13), wmat_release(&w2), wmat_release(&up), wmat_release(&s13);
	wmat_release(&s2);
	gt_bf16_release(&x), gt_bf16_release(&nw), gt_bf16_release(&out);
	gt_free(w.bias), cudaFree(dws);
}

static void run_layer_wg(int T, enum k3_wdtype edt, enum k3_gemm_path path, bool wg)
{
	run_layer_act(T, edt, path, wg, K3_A_BF16);
}

static void run_layer(int T, enum k3_wdtype edt, enum k3_gemm_path path)
{
	run_layer_wg(T, edt, path, false);
}

static void test_layer_decode(void **unused)
{
	(void)unused;
	run_layer(4, K3_W_MXFP4, K3_GEMM_AUTO);
	run_layer(1, K3_W_BF16, K3_GEMM_AUTO);
	/* with the tile layout (as the slice gives it): at 1 row a group the tiled wgmma path where it
	 * runs (k3_gemm.cu grouped_gemv_mode(), 2026-12-06), at 0.25 the gemv */
	run_layer_wg(16, K3_W_MXFP4, K3_GEMM_AUTO, true);
	run_layer_wg(4, K3_W_MXFP4, K3_GEMM_AUTO, true);
}

static void test_layer_prefill(void **unused)
{
	(void)unused;
	run_layer(300, K3_W_MXFP4, K3_GEMM_AUTO);
	run_layer_wg(300, K3_W_MXFP4, K3_GEMM_AUTO, true); /* wide2rp where wgmma runs */
	run_layer(300, K3_W_MXFP4, K3_GEMM_GEMV); /* the small-batch path on many rows, same result */
}

/* The layer's prefill at ~131 rows a group (2100 tokens x 8 of 128 experts: wide2rv's chunks of
 * up to 160 rows for w13 and w2), through wide2rlf (2026-12-02s: the fragments before the wait,
 * the lean scales and token copies), then through the default with the wgmma tile layout given
 * (wide2rp, as the slice runs it). */
static void test_layer_prefill_wide(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	setenv("K3_GEMM_WG_KERNEL", "wide2rlf", 1);
	run_layer(2100, K3_W_MXFP4, K3_GEMM_AUTO);
	unsetenv("K3_GEMM_WG_KERNEL");
	run_layer_wg(2100, K3_W_MXFP4, K3_GEMM_AUTO, true); /* the default with the layout: wide2rp */
}

/* The layer with E4M3 expert activations (expert_act K3_A_E4M3_ROW: the FP8 wgmma kernel on the
 * quantized latent and on w13's E4M3 outputs; at T = 4, 0.25 rows a group, also through the opt-in
 * E4M3 gemv, K3_GEMM_E4M3_GEMV=1) at ~19 rows a group (T = 300) and ~131 (T = 2100,
 * two 128-token tiles a group), with the tile layout given too as the slice gives it, against
 * the float64 reference that quantizes as the GPU does (TOL_LAYER_E4M3); then the BF16 default
 * on the same inputs (run_layer_act()). Where the FP8 kernel is not built: skipped. */
static void test_layer_e4m3(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	run_layer_act(4, K3_W_MXFP4, K3_GEMM_AUTO, true, K3_A_E4M3_ROW); /* 0.25 rows a group: wgmma */
	setenv("K3_GEMM_E4M3_GEMV", "1", 1); /* the same through the E4M3 gemv (opt-in) */
	run_layer_act(4, K3_W_MXFP4, K3_GEMM_AUTO, true, K3_A_E4M3_ROW);
	unsetenv("K3_GEMM_E4M3_GEMV");
	run_layer_act(300, K3_W_MXFP4, K3_GEMM_AUTO, true, K3_A_E4M3_ROW);
	run_layer_act(2100, K3_W_MXFP4, K3_GEMM_AUTO, true, K3_A_E4M3_ROW);
}

/* N a multiple of 16 but not of 128: the last column tile (tiled) or CTA (gemv) is partial. */
static void test_gemm_n_not_128(void **unused)
{
	(void)unused;
	static const int32_t counts[3] = { 5, 66, 0 };
	for (int dt = 0; dt < 2; dt++) {
		const struct gemm_case a = { .rows = 70, .N = 96, .K = 256, .dt = (enum k3_wdtype)dt, .path = K3_GEMM_TILED };
		const struct gemm_case b = { .rows = 5, .N = 96, .K = 512, .dt = (enum k3_wdtype)dt, .path = K3_GEMM_GEMV };
		const struct gemm_case c = { .N = 272, .K = 256, .n_groups = 3, .counts = counts, .a_rows = 20,
					     .dt = (enum k3_wdtype)dt, .path = K3_GEMM_TILED };
		const struct gemm_case d = { .N = 272, .K = 256, .n_groups = 3, .counts = counts, .a_rows = 20,
					     .dt = (enum k3_wdtype)dt, .path = K3_GEMM_GEMV };
		run_all_epilogues(&a), run_all_epilogues(&b), run_all_epilogues(&c), run_all_epilogues(&d);
	}
}

/* Per-head products (groups = heads) gathered from and scattered back to token-major rows,
 * as Gated MLA's value up-projection with its output gate. */
static void test_gemm_heads_scatter_gate(void **unused)
{
	(void)unused;
	static const int32_t counts[4] = { 9, 9, 9, 9 }; /* 9 tokens x 4 heads */
	struct wmat w = wmat_rand(4, 128, 512, K3_W_BF16, 0.05);
	for (int p = K3_GEMM_TILED; p <= K3_GEMM_GEMV; p++) {
		const struct gemm_case c = { .N = 128, .K = 512, .n_groups = 4, .counts = counts, .a_rows = 36,
					     .dt = K3_W_BF16, .path = (enum k3_gemm_path)p, .scatter = true };
		run_gemm(&c, K3_EPI_GATE, &w);
		run_gemm(&c, K3_EPI_BF16, &w);
	}
	wmat_release(&w);
}

/* k3-bench's --only mla_uv at its largest row, as the bench runs it: MLA decode's value
 * up-projection with the output gate, m = 65536 rows over 96 heads (682-683 a head, head h's
 * first at h m / 96), n = 128, k = 512, head h's row j gathered from and scattered back to
 * token-major row j 96 + h, on a non-blocking stream. The index arrays go into memory that held
 * 0xff just before (the bench's held random BF16 after --only gemm's rows) through k3_upload() on
 * that stream, and k3_gemm() follows at once: a copy still landing when the kernel starts gives
 * it row -1 (the bench's upload() through cudaMemcpy did: an illegal address on the H100,
 * 2026-12-06, kernels/common/k3_upload.h). Both tiled kernels. */
static void test_gemm_mla_uv_stream(void **unused)
{
	(void)unused;
	enum { H = 96, N = 128, K = 512 };
	const int64_t m = 65536, T = (m + H - 1) / H, out_rows = T * H;
	int32_t off[H + 1], toff[H + 1], touched[H];
	int32_t *idx = gt_xmalloc((size_t)m * sizeof(int32_t));
	int32_t n_touched = 0;
	off[0] = toff[0] = 0;
	for (int h = 0; h < H; h++) {
		off[h + 1] = (int32_t)((int64_t)(h + 1) * m / H);
		toff[h + 1] = toff[h] + (off[h + 1] - off[h] + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS;
		touched[n_touched++] = h;
		for (int32_t r = off[h]; r < off[h + 1]; r++)
			idx[r] = (r - off[h]) * H + h;
	}
	struct wmat w = wmat_rand(H, N, K, K3_W_BF16, 0.05);
	struct gt_bf16 A = a_rand(out_rows, K, NULL);
	struct gt_bf16 gate = gt_bf16_rand(&rng, (size_t)out_rows * N, -1, 1);
	struct moe_ref_gemm ref = {
		.rows = m, .N = N, .K = K, .n_groups = H, .off = off, .a_index = idx, .out_index = idx, .a = A.h,
		.w = w.h, .epi = K3_EPI_GATE, .addend = gate.h, .out = gt_dnew((size_t)out_rows * N),
	};
	assert_int_equal(moe_ref_gemm(&ref), 0);
	/* the m written rows, in row order (the last token's unused heads are not written) */
	double *want = gt_dnew((size_t)m * N), *got = gt_dnew((size_t)m * N);
	for (int64_t r = 0; r < m; r++)
		memcpy(want + r * N, ref.out + (int64_t)idx[r] * N, N * sizeof(double));

	cudaStream_t s;
	CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	int32_t *d_off = gt_dev_poisoned(sizeof off), *d_toff = gt_dev_poisoned(sizeof toff);
	int32_t *d_touched = gt_dev_poisoned(sizeof touched), *d_nt = gt_dev_poisoned(sizeof n_touched);
	int32_t *d_idx = gt_dev_poisoned((size_t)m * sizeof(int32_t));
	struct gt_bf16 out = gt_bf16_out((size_t)out_rows * N);
	struct k3_gemm_args a = {
		.rows = m, .N = N, .K = K, .n_groups = H, .off = d_off, .tile_off = d_toff, .touched = d_touched,
		.n_touched = d_nt, .a_index = d_idx, .out_index = d_idx, .a = A.d, .addend = gate.d, .out = out.d,
		.epi = K3_EPI_GATE,
	};
	wmat_into(&w, &a);
	size_t ws = 1;
	assert_int_equal(k3_gemm_workspace_bytes(&a, &ws), 0);
	assert_int_equal(ws, 0);
	for (int p = 0; p < 2; p++) {
		if (p == 1 && !wgmma_expected())
			break;
		a.path = p == 0 ? K3_GEMM_TILED_MMA : K3_GEMM_TILED_WGMMA;
		assert_int_equal(k3_gemm_path_for(&a), a.path);
		/* 0xff where the indices go, and everything else on the device, before the uploads */
		gt_poison(d_off, sizeof off), gt_poison(d_toff, sizeof toff), gt_poison(d_touched, sizeof touched);
		gt_poison(d_nt, sizeof n_touched), gt_poison(d_idx, (size_t)m * sizeof(int32_t));
		gt_poison(out.d, (size_t)out_rows * N * 2);
		CUDA_OK(cudaDeviceSynchronize());
		CUDA_OK(k3_upload(d_off, off, sizeof off, s));
		CUDA_OK(k3_upload(d_toff, toff, sizeof toff, s));
		CUDA_OK(k3_upload(d_touched, touched, sizeof touched, s));
		CUDA_OK(k3_upload(d_nt, &n_touched, sizeof n_touched, s));
		CUDA_OK(k3_upload(d_idx, idx, (size_t)m * sizeof(int32_t), s));
		KERNEL_OK(k3_gemm(&a, s));
		CUDA_OK(cudaStreamSynchronize(s));
		gt_bf16_read(&out);
		for (int64_t r = 0; r < m; r++)
			memcpy(got + r * N, out.h + (int64_t)idx[r] * N, N * sizeof(double));
		char what[96];
		snprintf(what, sizeof what, "%s mla_uv m=%lld n=%d k=%d groups=%d, stream",
			 p == 0 ? "tiled-mma" : "tiled-wgmma", (long long)m, N, K, H);
		gt_check(what, got, want, (size_t)m * N, TOL_BF16);
		check_elements("  elements", got, want, (size_t)m * N);
	}
	CUDA_OK(cudaStreamDestroy(s));
	gt_bf16_release(&out), gt_bf16_release(&A), gt_bf16_release(&gate);
	cudaFree(d_off), cudaFree(d_toff), cudaFree(d_touched), cudaFree(d_nt), cudaFree(d_idx);
	free(want), free(got), free(ref.out), free(idx);
	wmat_release(&w);
}

/* The wgmma tiled kernel where it runs: the path is picked by default for tiled shapes; tile
 * edges (groups of 0, 1, 15, 16, 17, 127, 128, 129, 300 rows: MMA widths 16 .. 128 and
 * several token chunks; a partial 256-row weight tile; stages reused across tiles), every
 * epilogue, both weight formats, gathered rows and scattered outputs; then enough tiles that
 * each CTA of the persistent grid runs several. */
static void test_gemm_wgmma_tiles(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		/* Reported as SKIPPED, not OK: the default prefill kernel did not run (an sm_90
		 * build on an H200 ran so on 2026-12-01b, and "OK" hid it). */
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	/* The default for tiled shapes that fill the GPU with its tiles, and for grouped ones. */
	struct k3_gemm_args probe = { .rows = 4096, .N = 8192, .K = 256, .path = K3_GEMM_TILED };
	assert_int_equal(k3_gemm_path_for(&probe), K3_GEMM_TILED_WGMMA);
	probe.rows = 64; /* 32 tiles: the mma.sync kernel */
	assert_int_equal(k3_gemm_path_for(&probe), K3_GEMM_TILED_MMA);
	probe.n_groups = 4;
	assert_int_equal(k3_gemm_path_for(&probe), K3_GEMM_TILED_WGMMA);
	static const int32_t counts[11] = { 0, 1, 15, 16, 17, 127, 128, 129, 300, 0, 64 };
	for (int dt = 0; dt < 2; dt++) {
		const struct gemm_case g = { .N = 400, .K = 384, .n_groups = 11, .counts = counts, .a_rows = 333,
					     .dt = (enum k3_wdtype)dt, .path = K3_GEMM_TILED_WGMMA };
		run_all_epilogues(&g);
		const struct gemm_case d = { .rows = 1000, .N = 272, .K = 640, .dt = (enum k3_wdtype)dt,
					     .path = K3_GEMM_TILED_WGMMA, .scatter = true };
		run_all_epilogues(&d);
	}
	/* 40 experts of 0 .. 299 rows, N 512: ~ 2 x 2 x 40 = 160 tiles and more, over 132 CTAs. */
	int32_t many[40];
	for (int e = 0; e < 40; e++)
		many[e] = (int32_t)(test_rng_next(&rng) % 300);
	struct wmat w = wmat_rand(40, 512, 256, K3_W_MXFP4, 0.1);
	const struct gemm_case m = { .N = 512, .K = 256, .n_groups = 40, .counts = many, .a_rows = 700,
				     .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA };
	run_gemm(&m, K3_EPI_GLU, &w);
	run_gemm(&m, K3_EPI_SCALE, &w);
	wmat_release(&w);
	/* Dense, 16 x 14 tiles of 128 x 256: the raster groups and several tiles a CTA. */
	struct wmat wd = wmat_rand(1, 3584, 256, K3_W_BF16, 0.1);
	const struct gemm_case dd = { .rows = 2000, .N = 3584, .K = 256, .dt = K3_W_BF16,
				      .path = K3_GEMM_TILED_WGMMA };
	run_gemm(&dd, K3_EPI_BF16, &wd);
	wmat_release(&wd);
	/* The weight tiles by the producer's cp.async copies instead of the tensor copies (the
	 * round-3 producer, kept for measurements: K3_GEMM_WG_WEIGHTS=cp, read per call). */
	setenv("K3_GEMM_WG_WEIGHTS", "cp", 1);
	for (int dt = 0; dt < 2; dt++) {
		const struct gemm_case g = { .N = 400, .K = 384, .n_groups = 11, .counts = counts, .a_rows = 333,
					     .dt = (enum k3_wdtype)dt, .path = K3_GEMM_TILED_WGMMA };
		run_all_epilogues(&g);
	}
	struct wmat wv = wmat_rand(40, 512, 256, K3_W_MXFP4, 0.1);
	run_gemm(&m, K3_EPI_GLU, &wv);
	wmat_release(&wv);
	unsetenv("K3_GEMM_WG_WEIGHTS");
	/* Round q's kernel (K3_GEMM_WG_KERNEL=q: the epilogue with global loads and branches; the
	 * grouped default is wide2) and the branch-free epilogue alone (epi; dense launches default to
	 * q), both weight formats, every epilogue, grouped and dense. */
	static const char *const kernels[2] = { "q", "epi" };
	for (int k = 0; k < 2; k++) {
		setenv("K3_GEMM_WG_KERNEL", kernels[k], 1);
		print_message("K3_GEMM_WG_KERNEL=%s\n", kernels[k]);
		for (int dt = 0; dt < 2; dt++) {
			const struct gemm_case g = { .N = 400, .K = 384, .n_groups = 11, .counts = counts, .a_rows = 333,
						     .dt = (enum k3_wdtype)dt, .path = K3_GEMM_TILED_WGMMA };
			run_all_epilogues(&g);
			const struct gemm_case d = { .rows = 1000, .N = 272, .K = 640, .dt = (enum k3_wdtype)dt,
						     .path = K3_GEMM_TILED_WGMMA, .scatter = true };
			run_all_epilogues(&d);
		}
	}
	unsetenv("K3_GEMM_WG_KERNEL");
	/* A kernel name that is none of kernel_variant()'s fails the call (-EINVAL, nothing
	 * launched; the names on stderr) instead of running the default unnoticed; empty is unset. */
	{
		enum { R = 4096, NN = 8192, KK = 256 };
		void *da, *dw, *dout;
		CUDA_OK(cudaMalloc(&da, (size_t)R * KK * 2));
		CUDA_OK(cudaMalloc(&dw, (size_t)NN * KK * 2));
		CUDA_OK(cudaMalloc(&dout, (size_t)R * NN * 2));
		CUDA_OK(cudaMemset(da, 0, (size_t)R * KK * 2));
		CUDA_OK(cudaMemset(dw, 0, (size_t)NN * KK * 2));
		struct k3_gemm_args ga = { .rows = R, .N = NN, .K = KK, .a = da, .w_dtype = K3_W_BF16, .w = dw,
					   .epi = K3_EPI_BF16, .out = dout, .path = K3_GEMM_TILED_WGMMA };
		static const char *const names[3] = { "wide2rqpx", "WIDE2", "diag" };
		for (int i = 0; i < 3; i++) {
			setenv("K3_GEMM_WG_KERNEL", names[i], 1);
			assert_int_equal(k3_gemm(&ga, 0), -EINVAL);
		}
		setenv("K3_GEMM_WG_KERNEL", "", 1);
		assert_int_equal(k3_gemm(&ga, 0), 0);
		unsetenv("K3_GEMM_WG_KERNEL");
		CUDA_OK(cudaDeviceSynchronize());
		cudaFree(da), cudaFree(dw), cudaFree(dout);
	}
}

/* The wgmma kernel in clusters (BF16 weights; K3_GEMM_WG_CLUSTER, read per call; by default
 * ceil(rows per group / 128) CTAs, here 2): a cluster's CTAs take one group's token chunks (equal
 * chunks of <= 128 rows) and share its weight tiles, each CTA copying quarters of them into all.
 * Groups of 1 .. 4 chunks (CTAs with no chunk in a unit), a last weight band of 64 rows (quarters
 * past N), every epilogue, gathered rows; then clusters of 3 and 4, MXFP4 weights (never in
 * clusters: the same results as without), and enough units that each cluster runs several. */
static void test_gemm_wgmma_clusters(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	static const int32_t counts[12] = { 0, 1, 129, 300, 255, 256, 257, 383, 384, 385, 17, 500 };
	static const char *const sizes[3] = { "auto", "3", "4" };
	const struct gemm_case g = { .N = 320, .K = 256, .n_groups = 12, .counts = counts, .a_rows = 900,
				     .dt = K3_W_BF16, .path = K3_GEMM_TILED_WGMMA };
	struct wmat w = wmat_rand(g.n_groups, g.N, g.K, g.dt, 0.1);
	for (int i = 0; i < 3; i++) {
		setenv("K3_GEMM_WG_CLUSTER", sizes[i], 1);
		if (i == 0) {
			run_all_epilogues(&g);
		} else {
			run_gemm(&g, K3_EPI_GLU, &w);
			run_gemm(&g, K3_EPI_SCALE, &w);
		}
	}
	wmat_release(&w);
	const struct gemm_case f = { .N = 320, .K = 256, .n_groups = 12, .counts = counts, .a_rows = 900,
				     .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA };
	struct wmat wf = wmat_rand(f.n_groups, f.N, f.K, f.dt, 0.1);
	run_gemm(&f, K3_EPI_GLU, &wf);
	wmat_release(&wf);
	/* 40 experts of 0 .. 399 rows, N 768 (3 bands): ~ 40 x 3 units and more over the clusters. */
	int32_t many[40];
	for (int e = 0; e < 40; e++)
		many[e] = (int32_t)(test_rng_next(&rng) % 400);
	struct wmat wm = wmat_rand(40, 768, 256, K3_W_BF16, 0.1);
	const struct gemm_case m = { .N = 768, .K = 256, .n_groups = 40, .counts = many, .a_rows = 2000,
				     .dt = K3_W_BF16, .path = K3_GEMM_TILED_WGMMA };
	for (int i = 0; i < 2; i++) {
		setenv("K3_GEMM_WG_CLUSTER", i ? "3" : "auto", 1);
		run_gemm(&m, i ? K3_EPI_SCALE : K3_EPI_GLU, &wm);
	}
	wmat_release(&wm);
	unsetenv("K3_GEMM_WG_CLUSTER");
	/* The wide kernel's chunk edges (K3_GEMM_WG_KERNEL=wide, the default before 2026-12-02e call 2:
	 * chunks of up to 176
	 * rows, MMA widths 136 .. 176 in steps of 8; clusters of 2 here): one chunk of 176 / 170 / 160 /
	 * 145 / 137 / 130 rows (N 176, 176, 160, 152, 144, 136), two of 176 (352), 168 (336) and 89 + 88
	 * (177), three of 118 (353: a unit with a CTA passing through); then the same groups through
	 * round q's kernel and the epi kernel (chunks of <= 128; clusters of 2 too: 194 rows a group
	 * on average). Scattered outputs (out_index) on every epilogue through the wide kernel. */
	static const int32_t edges[11] = { 176, 177, 352, 353, 170, 160, 130, 137, 0, 336, 145 };
	const struct gemm_case eg = { .N = 320, .K = 256, .n_groups = 11, .counts = edges, .a_rows = 1200,
				      .dt = K3_W_BF16, .path = K3_GEMM_TILED_WGMMA };
	const struct gemm_case es = { .N = 320, .K = 256, .n_groups = 11, .counts = edges, .a_rows = 1200,
				      .dt = K3_W_BF16, .path = K3_GEMM_TILED_WGMMA, .scatter = true };
	struct wmat we = wmat_rand(eg.n_groups, eg.N, eg.K, eg.dt, 0.1);
	/* Round 22's variants too, GLU and SCALE gathered and scattered: SiTU-GLU through tanh.approx
	 * (fglu), the wide chunks without clusters (wide1), both with one epilogue a kernel (wide2; in
	 * clusters: wide2c; exact SiTU-GLU: one1), and wide2 where the groups are too small for
	 * clusters (K3_GEMM_WG_CLUSTER=1: chunks of 128, one epilogue a kernel). */
	static const char *const kernels[9] = { "wide", "q", "epi", "fglu", "wide1", "wide2", "wide2c", "one1", "wide2" };
	for (int k = 0; k < 9; k++) {
		if (k == 8)
			setenv("K3_GEMM_WG_CLUSTER", "1", 1);
		setenv("K3_GEMM_WG_KERNEL", kernels[k], 1);
		print_message("K3_GEMM_WG_KERNEL=%s\n", kernels[k]);
		run_gemm(&eg, K3_EPI_GLU, &we);
		run_gemm(&eg, K3_EPI_SCALE, &we);
		if (k == 0)
			run_all_epilogues(&es);
		if (k >= 3) {
			run_gemm(&es, K3_EPI_GLU, &we);
			run_gemm(&es, K3_EPI_SCALE, &we);
		}
	}
	unsetenv("K3_GEMM_WG_CLUSTER");
	/* MXFP4 weights through wide2 (chunks of 128, never in clusters, one epilogue a kernel). */
	struct wmat wef = wmat_rand(eg.n_groups, eg.N, eg.K, K3_W_MXFP4, 0.1);
	const struct gemm_case egf = { .N = 320, .K = 256, .n_groups = 11, .counts = edges, .a_rows = 1200,
				       .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA };
	const struct gemm_case esf = { .N = 320, .K = 256, .n_groups = 11, .counts = edges, .a_rows = 1200,
				       .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA, .scatter = true };
	/* ... and through the expander kernel (wide2x, opt-in since 2026-12-02g: the raw tiles
	 * expanded to BF16 in shared memory, chunks of up to 176 rows: every edge above; N = 320:
	 * a second weight tile of 64 rows, the rest zero-filled; K = 256: the raw tiles 4 k blocks
	 * ahead, across tiles), and K3_GEMM_WG_CLUSTER=1 changes nothing there; and through the
	 * register double-buffered kernels (2026-12-02m: wide2r, chunks of 128, two k steps a group;
	 * wide2rw, chunks of up to 176 as wide2x's, one k step a group; K = 256: 4 k blocks, groups
	 * across the stages); wide2ra, the default since 2026-12-02o: wide2rv
	 * here, wide2r at <= 128 rows a group; wide2rf (2026-12-02s): wide2ra's kernels with each
	 * group's fragments loaded and expanded before the wait_group that frees their registers;
	 * wide2rl: wide2ra's kernels with the scales by a byte permute and the producer's lean token
	 * copies; wide2rlf: both; wide2rp (2026-12-02za): wide2rl on the tile layout, w_wg; wide2rq
	 * (2026-12-03q): wide2rp's leaner k loop). */
	static const char *const fp4k[12] = { "wide2",	 "wide2x",  "wide2x",  "wide2r",   "wide2rw", "wide2rv",
					      "wide2ra", "wide2rf", "wide2rl", "wide2rlf", "wide2rp", "wide2rq" };
	assert_non_null(wef.packedwg);
	for (int k = 0; k < 12; k++) {
		if (k == 3)
			unsetenv("K3_GEMM_WG_CLUSTER");
		if (k == 2)
			setenv("K3_GEMM_WG_CLUSTER", "1", 1);
		setenv("K3_GEMM_WG_KERNEL", fp4k[k], 1);
		print_message("K3_GEMM_WG_KERNEL=%s (MXFP4)\n", fp4k[k]);
		run_gemm(&egf, K3_EPI_GLU, &wef);
		run_gemm(&esf, K3_EPI_SCALE, &wef);
		run_gemm(&esf, K3_EPI_BF16, &wef);
		run_gemm(&esf, K3_EPI_GLU, &wef);
		run_gemm(&egf, K3_EPI_SCALE, &wef);
	}
	unsetenv("K3_GEMM_WG_CLUSTER");
	wmat_release(&wef);
	/* wide2rf, wide2rl and wide2rlf at <= 128 rows a group on average (wide2r's tiles of 128, two
	 * k steps a group, K = 256: groups across the stages), GLU gathered, SCALE and GLU scattered. */
	static const int32_t few[8] = { 1, 17, 73, 128, 100, 0, 64, 90 };
	struct wmat wff = wmat_rand(8, 320, 256, K3_W_MXFP4, 0.1);
	const struct gemm_case fg = { .N = 320, .K = 256, .n_groups = 8, .counts = few, .a_rows = 600,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA };
	const struct gemm_case fs = { .N = 320, .K = 256, .n_groups = 8, .counts = few, .dt = K3_W_MXFP4,
				      .path = K3_GEMM_TILED_WGMMA, .scatter = true };
	static const char *const lean[11] = { "wide2rf",  "wide2rl",  "wide2rlf",  "wide2rp",   "wide2rq",  "wide2rq4",
					      "wide2rqv", "wide2rq4v", "wide2rqt", "wide2rq4t", "wide2rqp" };
	assert_non_null(wff.packedwg);
	for (int k = 0; k < 11; k++) {
		setenv("K3_GEMM_WG_KERNEL", lean[k], 1);
		print_message("K3_GEMM_WG_KERNEL=%s (MXFP4, <= 128 rows a group)\n", lean[k]);
		run_gemm(&fg, K3_EPI_GLU, &wff);
		run_gemm(&fs, K3_EPI_SCALE, &wff);
		run_gemm(&fs, K3_EPI_GLU, &wff);
	}
	wmat_release(&wff);
	unsetenv("K3_GEMM_WG_KERNEL");
	wmat_release(&we);
}

/* The wgmma kernels of round za at a small size (for compute-sanitizer runs): the wide kernel in
 * clusters of 2 (groups of 177 rows: chunks of 89 + 88, N 96; 40: one chunk, the other CTA passing
 * through; 300: 2 x 150, N 152), GLU gathered and SCALE scattered; round 22's fglu (GLU), wide1
 * (its chunks without clusters), wide2 and wide2c (one epilogue a kernel); the branch-free
 * epilogue without clusters. */
static void test_gemm_wgmma_wide_small(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	static const int32_t counts[4] = { 177, 0, 40, 300 };
	const struct gemm_case g = { .N = 256, .K = 128, .n_groups = 4, .counts = counts, .a_rows = 400,
				     .dt = K3_W_BF16, .path = K3_GEMM_TILED_WGMMA };
	const struct gemm_case s = { .N = 256, .K = 128, .n_groups = 4, .counts = counts, .dt = K3_W_BF16,
				     .path = K3_GEMM_TILED_WGMMA, .scatter = true };
	struct wmat w = wmat_rand(4, 256, 128, K3_W_BF16, 0.1);
	setenv("K3_GEMM_WG_KERNEL", "wide", 1);
	setenv("K3_GEMM_WG_CLUSTER", "2", 1);
	run_gemm(&g, K3_EPI_GLU, &w);
	run_gemm(&s, K3_EPI_SCALE, &w);
	setenv("K3_GEMM_WG_KERNEL", "fglu", 1); /* round 22's variants */
	run_gemm(&g, K3_EPI_GLU, &w);
	setenv("K3_GEMM_WG_KERNEL", "wide1", 1);
	run_gemm(&g, K3_EPI_GLU, &w);
	run_gemm(&s, K3_EPI_SCALE, &w);
	setenv("K3_GEMM_WG_KERNEL", "wide2", 1);
	run_gemm(&g, K3_EPI_GLU, &w);
	run_gemm(&s, K3_EPI_SCALE, &w);
	setenv("K3_GEMM_WG_KERNEL", "wide2c", 1);
	run_gemm(&g, K3_EPI_GLU, &w);
	setenv("K3_GEMM_WG_KERNEL", "epi", 1);
	setenv("K3_GEMM_WG_CLUSTER", "1", 1);
	run_gemm(&s, K3_EPI_SCALE, &w);
	unsetenv("K3_GEMM_WG_CLUSTER");
	/* MXFP4 through the expander kernel (wide2x): chunks 89 + 88, one of 40, 2 x 150. */
	const struct gemm_case gf = { .N = 256, .K = 128, .n_groups = 4, .counts = counts, .a_rows = 400,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA };
	const struct gemm_case sf = { .N = 256, .K = 128, .n_groups = 4, .counts = counts, .dt = K3_W_MXFP4,
				      .path = K3_GEMM_TILED_WGMMA, .scatter = true };
	struct wmat wf = wmat_rand(4, 256, 128, K3_W_MXFP4, 0.1);
	setenv("K3_GEMM_WG_KERNEL", "wide2x", 1);
	run_gemm(&gf, K3_EPI_GLU, &wf);
	run_gemm(&sf, K3_EPI_SCALE, &wf);
	/* ... and through the register double-buffered kernels (wide2r: chunks of 128; wide2rw: 89 +
	 * 88, 40, 2 x 150 as above; K = 128: two k blocks, the second's groups issued before the
	 * first's last one has retired). */
	setenv("K3_GEMM_WG_KERNEL", "wide2r", 1);
	run_gemm(&gf, K3_EPI_GLU, &wf);
	run_gemm(&sf, K3_EPI_SCALE, &wf);
	setenv("K3_GEMM_WG_KERNEL", "wide2rw", 1);
	run_gemm(&gf, K3_EPI_GLU, &wf);
	run_gemm(&sf, K3_EPI_SCALE, &wf);
	setenv("K3_GEMM_WG_KERNEL", "wide2rv", 1); /* chunks of up to 160: 89 + 88, 40, 2 x 150 */
	run_gemm(&gf, K3_EPI_GLU, &wf);
	run_gemm(&sf, K3_EPI_SCALE, &wf);
	static const char *const rvx[5] = { "wide2rf", "wide2rl", "wide2rlf", "wide2rp", "wide2rq" }; /* wide2rv's chunks, extras */
	assert_non_null(wf.packedwg);
	for (int k = 0; k < 5; k++) {
		setenv("K3_GEMM_WG_KERNEL", rvx[k], 1);
		run_gemm(&gf, K3_EPI_GLU, &wf);
		run_gemm(&sf, K3_EPI_SCALE, &wf);
	}
	wmat_release(&wf);
	unsetenv("K3_GEMM_WG_KERNEL");
	wmat_release(&w);
}

/* The tile layout (wide2rp, 2026-12-02za) at E8M0 scale bytes 0 .. 128, the range it is exact
 * for (0: 2^-127; 128: 2^1, weights up to 12), A's k groups scaled by 2^(127 - s) so that every
 * group weighs alike; groups of <= 128 rows on average (wide2r's tiles, two k steps a group) and
 * above (wide2rv's chunks, one); GLU gathered, SCALE scattered (wide2rp's launches; the other
 * epilogues run wide2rl, whose lean scales take byte 0 as 0). Small (compute-sanitizer
 * runs: *wide_small*). Scale bytes above 128: no layout (k3_gemm_repack_wg() says -ERANGE,
 * wmat_repackwg() checks it in every wmat_mx_scales() with such bytes). */
static void test_gemm_wgmma_wide_small_rp(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	static const uint8_t exps[8] = { 0, 1, 64, 127, 128, 126, 2, 100 };
	enum { K = 256 };
	int a_exp[K / 32];
	for (int c = 0; c < K / 32; c++)
		a_exp[c] = 127 - exps[c % 8];
	struct wmat w = wmat_mx_scales(4, 256, K, exps, 8);
	assert_non_null(w.packedwg);
	static const int32_t few[4] = { 1, 17, 73, 100 }, many[4] = { 177, 0, 40, 300 };
	/* wide2rp, then wide2rq (2026-12-03q), wide2rqo (03r), wide2rq4, wide2rqv, wide2rq4v (03s),
	 * wide2rqt, wide2rq4t (03u), wide2rqp (04m: XV_PP on the gathered GLU launches, wide2rqt's
	 * kernel on the scattered SCALE ones) */
	static const char *const ks[9] = { "wide2rp",  "wide2rq",   "wide2rqo", "wide2rq4", "wide2rqv",
					   "wide2rq4v", "wide2rqt", "wide2rq4t", "wide2rqp" };
	for (int m = 0; m < 18; m++) {
		setenv("K3_GEMM_WG_KERNEL", ks[m / 2], 1);
		same_as_kernel = m < 2 ? NULL : "wide2rp";
		const int32_t *counts = (m & 1) ? many : few;
		const struct gemm_case g = { .N = 256, .K = K, .n_groups = 4, .counts = counts, .a_rows = 400,
					     .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA, .a_exp = a_exp };
		const struct gemm_case sc = { .N = 256, .K = K, .n_groups = 4, .counts = counts, .dt = K3_W_MXFP4,
					      .path = K3_GEMM_TILED_WGMMA, .scatter = true, .a_exp = a_exp };
		run_gemm(&g, K3_EPI_GLU, &w);
		run_gemm(&sc, K3_EPI_SCALE, &w);
	}
	same_as_kernel = NULL;
	unsetenv("K3_GEMM_WG_KERNEL");
	wmat_release(&w);
}

/* The FP8 kernel (K3_A_E4M3_ROW, "wide2f8", 2026-12-04q): E4M3 activations with a scale a row,
 * the weights' FP8-word layout, against float64 of the quantized activations and the exact MXFP4
 * weights. Small (compute-sanitizer runs: *e4m3*): groups of 1 .. 100 rows and of 300 (three
 * 128-token tiles, the last of 44), one empty; GLU gathered, SCALE scattered and in place; K 256
 * (two k-block pairs: the even stage's tokens read by the odd k block, the releases of a pair) and
 * 640 (five pairs), N 256 and 384 (a weight tile half past N); with 2 register sets (the default),
 * 4 (K3_GEMM_F8_SETS=4), and A through 4 and 2 slots in shared memory (m4, m2; m4k: 4 slots a k
 * block at a time), compact pair stages (2p), the odd stage released by its own pair (2r), both
 * (2pr), the scale tables made by the warp together (2t), all three (2prt), a k block's words by
 * one 16-byte load (2l), that with 2r (2lr), GLU's outputs two columns a 4-byte store (2w) and
 * that with 2l (2lw), the epilogue in blocks of 16 / 32 tokens (2e / 2e4), and the default
 * before round 05o (2: 2 sets, the direct stores; the default since is 2eo, 2e with the outputs
 * through shared memory) (all fifteen also bit for bit the default's outputs). Where the operands cannot go: -EINVAL. MOE_TEST_F8_SETS (a
 * space-separated list of those values; for compute-sanitizer runs, whose racecheck takes minutes
 * over all of them): the default and the listed ones only. */
static bool f8_set_listed(const char *set)
{
	const char *l = getenv("MOE_TEST_F8_SETS");
	if (!l || !*l || !set)
		return true;
	const size_t n = strlen(set);
	for (const char *p = l; (p = strstr(p, set)) != NULL; p += n)
		if ((p == l || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

static void test_gemm_wgmma_e4m3(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	static const int32_t few[4] = { 1, 17, 73, 100 }, many[4] = { 177, 0, 40, 300 };
	static const int Ns[2] = { 256, 384 }, Ks[2] = { 256, 640 };
	static const char *const sets[17] = { NULL, "4", "m4", "m2", "m4k", "2p", "2r", "2pr", "2t", "2prt", "2l", "2lr", "2w", "2lw", "2e", "2e4", "2" };
	for (int v = 0; v < 34; v++) { /* sets[v / 2]: K3_GEMM_F8_SETS (NULL: unset) */
		if (!f8_set_listed(sets[v / 2]))
			continue;
		if (sets[v / 2])
			setenv("K3_GEMM_F8_SETS", sets[v / 2], 1);
		same_as_f8_default = v >= 4;
		struct wmat w = wmat_rand(4, Ns[v % 2], Ks[v % 2], K3_W_MXFP4, 0.1);
		assert_non_null(w.packedf8);
		for (int m = 0; m < 2; m++) {
			const int32_t *counts = m ? many : few;
			const struct gemm_case g = { .N = w.N, .K = w.K, .n_groups = 4, .counts = counts, .a_rows = 400,
						     .dt = K3_W_MXFP4, .path = K3_GEMM_TILED_WGMMA, .e4m3 = true };
			const struct gemm_case sc = { .N = w.N, .K = w.K, .n_groups = 4, .counts = counts,
						      .dt = K3_W_MXFP4, .path = K3_GEMM_AUTO, .scatter = true, .e4m3 = true };
			const struct gemm_case sp = { .N = w.N, .K = w.K, .n_groups = 4, .counts = counts,
						      .dt = K3_W_MXFP4, .path = K3_GEMM_TILED, .e4m3 = true };
			run_gemm_path(&g, K3_EPI_GLU, &w, g.path);
			run_gemm_path(&sc, K3_EPI_SCALE, &w, sc.path);
			run_gemm_path(&sp, K3_EPI_SCALE, &w, K3_GEMM_TILED);
		}
		/* Not the FP8 kernel's: another epilogue, the gemv or mma.sync path, no layout, dense. */
		struct k3_gemm_args a = { .rows = 8, .N = w.N, .K = w.K, .n_groups = 4, .epi = K3_EPI_GLU,
					  .beta_gate = 4.0f, .beta_up = 25.0f, .a_dtype = K3_A_E4M3_ROW,
					  .path = K3_GEMM_TILED_WGMMA };
		wmat_into(&w, &a);
		int32_t *off = gt_dev_poisoned(5 * sizeof(int32_t));
		uint8_t *q = gt_dev_poisoned((size_t)8 * w.K);
		float *qs = gt_dev_poisoned(8 * sizeof(float));
		uint16_t *out = gt_dev_poisoned((size_t)8 * w.N * 2);
		a.off = off, a.a_q = q, a.a_row_scales = qs, a.out = out, a.w_wgf8 = w.packedf8, a.w_floors = w.floors;
		assert_int_equal(k3_gemm_path_for(&a), K3_GEMM_TILED_WGMMA);
		struct k3_gemm_args b = a;
		b.epi = K3_EPI_BF16;
		assert_int_equal(k3_gemm(&b, 0), -EINVAL);
		b = a, b.path = K3_GEMM_GEMV;
		assert_int_equal(k3_gemm_path_for(&b), -EINVAL);
		b = a, b.path = K3_GEMM_TILED_MMA;
		assert_int_equal(k3_gemm(&b, 0), -EINVAL);
		b = a, b.w_wgf8 = NULL;
		assert_int_equal(k3_gemm(&b, 0), -EINVAL);
		b = a, b.w_floors = NULL;
		assert_int_equal(k3_gemm(&b, 0), -EINVAL);
		b = a, b.a_row_scales = NULL;
		assert_int_equal(k3_gemm(&b, 0), -EINVAL);
		b = a, b.n_groups = 0, b.off = NULL;
		assert_int_equal(k3_gemm(&b, 0), -EINVAL);
		b = a, b.out_e4m3 = q, b.a_dtype = K3_A_BF16, b.a = (const uint16_t *)out; /* out_e4m3: the FP8 kernel's */
		assert_int_equal(k3_gemm(&b, 0), -EINVAL);
		assert_true(k3_gemm_glu_e4m3_mul(0.0f, 25.0f) == 0.0f && k3_gemm_glu_e4m3_mul(1.0f, 1.0f) == 256.0f);
		setenv("K3_GEMM_F8_SETS", "3", 1); /* not a choice: -EINVAL, nothing launched */
		assert_int_equal(k3_gemm(&a, 0), -EINVAL);
		if (sets[v / 2])
			setenv("K3_GEMM_F8_SETS", sets[v / 2], 1);
		else
			unsetenv("K3_GEMM_F8_SETS");
		cudaFree(off), cudaFree(q), cudaFree(qs), cudaFree(out);
		wmat_release(&w);
	}
	same_as_f8_default = false;
	unsetenv("K3_GEMM_F8_SETS");
}

/* The FP8 kernel at K3's expert shapes: w13 (GLU, gathered; K 3584) and w2 (SCALE; K 3072), groups
 * of 3, none and 170 rows (two tiles); the default (2eo), then m4, m4k, 2pr, 2prt, 2l, 2lr, 2lw, 2e,
 * 2e4 and 2 bit for bit (MOE_TEST_F8_SETS: the default and those listed). */
static void test_gemm_e4m3_k3_shapes(void **unused)
{
	(void)unused;
	if (!wgmma_expected()) {
		print_message("wgmma: not built for this device (sm_90a build, compute capability 9.0)\n");
		skip();
	}
	static const int32_t k3c[3] = { 3, 0, 170 };
	struct wmat w13 = wmat_rand(3, 2 * K3_EXPERT_INTER, K3_LATENT, K3_W_MXFP4, 0.05);
	const struct gemm_case c13 = { .N = 2 * K3_EXPERT_INTER, .K = K3_LATENT, .n_groups = 3, .counts = k3c,
				       .a_rows = 120, .dt = K3_W_MXFP4, .path = K3_GEMM_AUTO, .e4m3 = true };
	struct wmat w2 = wmat_rand(3, K3_LATENT, K3_EXPERT_INTER, K3_W_MXFP4, 0.05);
	const struct gemm_case c2 = { .N = K3_LATENT, .K = K3_EXPERT_INTER, .n_groups = 3, .counts = k3c,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_AUTO, .e4m3 = true };
	static const char *const sets[11] = { NULL, "m4", "m4k", "2pr", "2prt", "2l", "2lr", "2lw", "2e", "2e4", "2" }; /* K3_GEMM_F8_SETS (NULL: unset) */
	for (int m = 0; m < 11; m++) { /* the default, then the others bit for bit (MOE_TEST_F8_SETS: those listed) */
		if (m && !f8_set_listed(sets[m]))
			continue;
		if (m)
			setenv("K3_GEMM_F8_SETS", sets[m], 1);
		same_as_f8_default = m >= 1;
		run_gemm_path(&c13, K3_EPI_GLU, &w13, c13.path);
		run_gemm_path(&c2, K3_EPI_SCALE, &w2, c2.path);
	}
	same_as_f8_default = false;
	unsetenv("K3_GEMM_F8_SETS");
	wmat_release(&w13);
	wmat_release(&w2);
}

/* The gemv for E4M3 activations (K3_A_E4M3_ROW at gemv sizes, 2026-12-06: f8act_kernel writes the
 * E4M3 rows as FP16 with the row scale as the factor, then gemv_f16_kernel on the FP16-pair
 * weights) against the float64 reference of the quantized activations, element by element at
 * the BF16 outputs' tolerance (exact products, FP32 sums): K = 512 (one loop step) and 1536, N 256
 * and 272 (a CTA with spare warps), groups of 0, 1, 8, 9 and 16 rows (one and two 8-token passes),
 * GLU gathered (also as out_e4m3, E4M3 of m x the outputs), SCALE scattered; K3's w13 (K 3584) and
 * w2 (K 3072) shapes; K3_GEMM_GEMV, and K3_GEMM_AUTO at 1.4 rows a group under K3_GEMM_E4M3_GEMV=1.
 * The path rule: AUTO takes the FP8 wgmma kernel (the default: faster inside a decode step), and
 * with K3_GEMM_E4M3_GEMV=1 the gemv at up to 1.5 rows a group on average; K not a multiple of 512:
 * GEMV -EINVAL, AUTO the wgmma kernel; w_f16 missing under K3_GEMM_E4M3_GEMV=1: AUTO runs the wgmma
 * kernel (bit for bit its outputs by default), GEMV -EINVAL. */
static void test_gemv_e4m3(void **unused)
{
	(void)unused;
	static const int32_t counts[5] = { 1, 0, 9, 16, 8 };
	static const int Ns[2] = { 256, 272 }, Ks[2] = { 512, 1536 };
	for (int v = 0; v < 2; v++) {
		struct wmat w = wmat_rand(5, Ns[v], Ks[v], K3_W_MXFP4, 0.1);
		if (!w.packedf8) { /* the FP8-word layout is required of E4M3 calls; rare -ERANGE draws */
			wmat_release(&w);
			continue;
		}
		const struct gemm_case g = { .N = w.N, .K = w.K, .n_groups = 5, .counts = counts, .a_rows = 40,
					     .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV, .e4m3 = true };
		const struct gemm_case sc = { .N = w.N, .K = w.K, .n_groups = 5, .counts = counts,
					      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV, .scatter = true, .e4m3 = true };
		run_gemm_path(&g, K3_EPI_GLU, &w, g.path);
		run_gemm_path(&sc, K3_EPI_SCALE, &w, sc.path);
		/* AUTO at <= 1.5 rows a group under K3_GEMM_E4M3_GEMV=1: 7 rows in 5 groups, one of 3 (two
		 * gathered) */
		static const int32_t few[5] = { 1, 0, 3, 2, 1 };
		const struct gemm_case ga = { .N = w.N, .K = w.K, .n_groups = 5, .counts = few, .a_rows = 2,
					      .dt = K3_W_MXFP4, .path = K3_GEMM_AUTO, .e4m3 = true };
		setenv("K3_GEMM_E4M3_GEMV", "1", 1);
		run_gemm_path(&ga, K3_EPI_GLU, &w, ga.path);
		unsetenv("K3_GEMM_E4M3_GEMV");
		/* The path rule on these shapes (pointers are not read by it). */
		struct k3_gemm_args a = { .rows = 7, .N = w.N, .K = w.K, .n_groups = 5, .epi = K3_EPI_GLU,
					  .beta_gate = 4.0f, .beta_up = 25.0f, .a_dtype = K3_A_E4M3_ROW,
					  .path = K3_GEMM_AUTO };
		wmat_into(&w, &a);
		a.w_wgf8 = w.packedf8, a.w_floors = w.floors;
		const int wg = wgmma_expected() ? K3_GEMM_TILED_WGMMA : -EINVAL;
		assert_int_equal(k3_gemm_path_for(&a), wg); /* the default */
		struct k3_gemm_args b = a;
		b.path = K3_GEMM_GEMV; /* asked for: the gemv whatever the rule */
		assert_int_equal(k3_gemm_path_for(&b), K3_GEMM_GEMV);
		setenv("K3_GEMM_E4M3_GEMV", "1", 1);
		assert_int_equal(k3_gemm_path_for(&a), K3_GEMM_GEMV);
		b = a, b.rows = 8; /* above 1.5 rows a group on average */
		assert_int_equal(k3_gemm_path_for(&b), wg);
		b.path = K3_GEMM_GEMV; /* asked for: the gemv at any rows */
		assert_int_equal(k3_gemm_path_for(&b), K3_GEMM_GEMV);
		b = a, b.path = K3_GEMM_TILED;
		assert_int_equal(k3_gemm_path_for(&b), wg);
		unsetenv("K3_GEMM_E4M3_GEMV");
		b = a, b.K = w.K - 128; /* not a multiple of 512 (shapes only) */
		setenv("K3_GEMM_E4M3_GEMV", "1", 1);
		assert_int_equal(k3_gemm_path_for(&b), wg);
		unsetenv("K3_GEMM_E4M3_GEMV");
		b.path = K3_GEMM_GEMV;
		assert_int_equal(k3_gemm_path_for(&b), -EINVAL);
		wmat_release(&w);
	}
	/* w_f16 missing under K3_GEMM_E4M3_GEMV=1: AUTO runs the FP8 wgmma kernel, bit for bit the
	 * default's outputs. */
	if (wgmma_expected()) {
		struct wmat w = wmat_rand(5, 256, 512, K3_W_MXFP4, 0.1);
		if (w.packedf8) {
			const int64_t rows = 7;
			uint8_t *q = gt_xmalloc((size_t)rows * w.K);
			float *qs = gt_xmalloc((size_t)rows * sizeof(float));
			for (size_t i = 0; i < (size_t)rows * w.K; i++)
				q[i] = (uint8_t)(test_rng_next(&rng) & 0x7eu) | (uint8_t)(test_rng_next(&rng) & 0x80u);
			for (int64_t r = 0; r < rows; r++)
				qs[r] = (float)ldexp(1.0, -6 - (int)(r % 3));
			static const int32_t few7[5] = { 1, 0, 3, 2, 1 };
			int32_t off[6] = { 0 };
			for (int gi = 0; gi < 5; gi++)
				off[gi + 1] = off[gi] + few7[gi];
			int32_t touched[5], n_touched = 0;
			for (int gi = 0; gi < 5; gi++)
				if (few7[gi])
					touched[n_touched++] = gi;
			float *sc = gt_xmalloc((size_t)rows * sizeof(float));
			for (int64_t r = 0; r < rows; r++)
				sc[r] = (float)test_rng_uniform(&rng, 0, 1);
			struct gt_bf16 out = gt_bf16_out((size_t)rows * w.N);
			struct k3_gemm_args a = { .rows = rows, .N = w.N, .K = w.K, .n_groups = 5, .epi = K3_EPI_SCALE,
						  .a_dtype = K3_A_E4M3_ROW, .path = K3_GEMM_AUTO, .out = out.d };
			wmat_into(&w, &a);
			a.w_f16 = NULL, a.w_wgf8 = w.packedf8, a.w_floors = w.floors;
			a.a_q = gt_dev_copy(q, (size_t)rows * w.K), a.a_row_scales = gt_dev_copy(qs, (size_t)rows * 4);
			a.row_scale = gt_dev_copy(sc, (size_t)rows * 4);
			a.off = gt_dev_copy(off, sizeof off), a.touched = gt_dev_copy(touched, sizeof touched);
			a.n_touched = gt_dev_copy(&n_touched, sizeof n_touched);
			int32_t tile_off[6] = { 0 };
			for (int gi = 0; gi < 5; gi++)
				tile_off[gi + 1] = tile_off[gi] + (few7[gi] + MOE_TILE_ROWS - 1) / MOE_TILE_ROWS;
			a.tile_off = gt_dev_copy(tile_off, sizeof tile_off);
			setenv("K3_GEMM_E4M3_GEMV", "1", 1);
			assert_int_equal(k3_gemm_path_for(&a), K3_GEMM_GEMV);
			KERNEL_OK(k3_gemm(&a, 0));
			gt_bf16_read(&out);
			assert_same_under(&a, &out, (size_t)rows * w.N, "K3_GEMM_E4M3_GEMV", NULL, "the FP8 wgmma kernel");
			struct k3_gemm_args b = a;
			b.path = K3_GEMM_GEMV;
			assert_int_equal(k3_gemm(&b, 0), -EINVAL);
			unsetenv("K3_GEMM_E4M3_GEMV");
			gt_bf16_release(&out);
			gt_free(a.a_q), gt_free(a.a_row_scales), gt_free(a.row_scale), gt_free(a.off), gt_free(a.touched);
			gt_free(a.n_touched), gt_free(a.tile_off);
			free(q), free(qs), free(sc);
		}
		wmat_release(&w);
	}
	/* K3's expert shapes: w13 (GLU, gathered; K 3584) and w2 (SCALE; K 3072), AUTO. */
	static const int32_t k3c[4] = { 3, 0, 16, 1 };
	struct wmat w13 = wmat_rand(4, 2 * K3_EXPERT_INTER, K3_LATENT, K3_W_MXFP4, 0.05);
	struct wmat w2 = wmat_rand(4, K3_LATENT, K3_EXPERT_INTER, K3_W_MXFP4, 0.05);
	if (w13.packedf8 && w2.packedf8) {
		const struct gemm_case c13 = { .N = 2 * K3_EXPERT_INTER, .K = K3_LATENT, .n_groups = 4, .counts = k3c,
					       .a_rows = 6, .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV, .e4m3 = true };
		const struct gemm_case c2 = { .N = K3_LATENT, .K = K3_EXPERT_INTER, .n_groups = 4, .counts = k3c,
					      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV, .e4m3 = true };
		run_gemm_path(&c13, K3_EPI_GLU, &w13, c13.path);
		run_gemm_path(&c2, K3_EPI_SCALE, &w2, c2.path);
	}
	wmat_release(&w13);
	wmat_release(&w2);
}

/* A few launches of every kernel at small sizes (for compute-sanitizer runs). */
static void test_small_all_kernels(void **unused)
{
	(void)unused;
	static const int32_t counts[4] = { 2, 0, 67, 1 };
	struct wmat wb = wmat_rand(4, 256, 256, K3_W_BF16, 0.1), wf = wmat_rand(4, 256, 256, K3_W_MXFP4, 0.1);
	const struct gemm_case tb = { .N = 256, .K = 256, .n_groups = 4, .counts = counts, .a_rows = 9,
				      .dt = K3_W_BF16, .path = K3_GEMM_TILED };
	const struct gemm_case tf = { .N = 256, .K = 256, .n_groups = 4, .counts = counts, .a_rows = 9,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_TILED };
	const struct gemm_case gf = { .N = 256, .K = 256, .n_groups = 4, .counts = counts, .a_rows = 9,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	run_gemm(&tb, K3_EPI_GLU, &wb);
	run_gemm(&tf, K3_EPI_SCALE, &wf);
	run_gemm(&gf, K3_EPI_GLU, &wf);
	wmat_release(&wb), wmat_release(&wf);
	/* The MXFP4 gemv at K = 1024 grouped, and dense split over k, with 128- and 512-deep blocks. */
	struct wmat w4 = wmat_rand(4, 256, 1024, K3_W_MXFP4, 0.1), w4d = wmat_rand(1, 256, 2048, K3_W_MXFP4, 0.1);
	const struct gemm_case g4 = { .N = 256, .K = 1024, .n_groups = 4, .counts = counts, .a_rows = 9,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	const struct gemm_case d4 = { .rows = 5, .N = 256, .K = 2048, .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	for (int deep = 0; deep < 2; deep++) {
		if (deep)
			setenv("K3_GEMV_FP4_BLOCK", "512", 1);
		run_gemm(&g4, K3_EPI_SCALE, &w4);
		run_gemm(&d4, K3_EPI_ADD, &w4d);
	}
	unsetenv("K3_GEMV_FP4_BLOCK");
	wmat_release(&w4), wmat_release(&w4d);
	struct wmat wd = wmat_rand(1, 256, 1024, K3_W_BF16, 0.1);
	const struct gemm_case dg = { .rows = 5, .N = 256, .K = 1024, .dt = K3_W_BF16, .path = K3_GEMM_GEMV };
	run_gemm(&dg, K3_EPI_ADD, &wd); /* split over k: partials + the finishing pass */
	const struct gemm_case dt = { .rows = 70, .N = 256, .K = 1024, .dt = K3_W_BF16, .path = K3_GEMM_TILED };
	run_gemm(&dt, K3_EPI_SPLIT, &wd);
	wmat_release(&wd);
	run_route(20, 128, 8);
}

/* An MXFP4 scale array that starts at an odd address gives the same result (the 512-deep gemv
 * blocks, K3_GEMV_FP4_BLOCK=512, load a lane's four scale bytes as one word where the array is
 * 4-byte aligned, byte by byte where it is not). */
static void test_gemv_scales_unaligned(void **unused)
{
	(void)unused;
	static const int32_t few[5] = { 1, 3, 0, 8, 2 };
	for (int dense = 0; dense < 2; dense++) {
		const int G = dense ? 1 : 5, N = 384, K = 1536;
		struct wmat w = wmat_rand(G, N, K, K3_W_MXFP4, 0.1);
		const size_t n_sc = (size_t)G * N * (K / K3_MX_GROUP);
		uint8_t *host = gt_xmalloc(n_sc), *odd = NULL;
		CUDA_OK(cudaMemcpy(host, w.scales, n_sc, cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMalloc((void **)&odd, n_sc + 1));
		CUDA_OK(cudaMemcpy(odd + 1, host, n_sc, cudaMemcpyHostToDevice));
		uint8_t *aligned = w.scales;
		w.scales = odd + 1;
		const struct gemm_case c = dense ? (struct gemm_case){ .rows = 11, .N = N, .K = K, .dt = K3_W_MXFP4,
								       .path = K3_GEMM_GEMV }
						 : (struct gemm_case){ .N = N, .K = K, .n_groups = G, .counts = few,
								       .a_rows = 6, .dt = K3_W_MXFP4,
								       .path = K3_GEMM_GEMV };
		for (int deep = 0; deep < 2; deep++) {
			if (deep)
				setenv("K3_GEMV_FP4_BLOCK", "512", 1);
			run_gemm(&c, K3_EPI_BF16, &w);
			run_gemm(&c, K3_EPI_GLU, &w);
		}
		unsetenv("K3_GEMV_FP4_BLOCK");
		w.scales = aligned;
		cudaFree(odd), free(host);
		wmat_release(&w);
	}
}

/* The grouped MXFP4 gemv through the bulk-copy ring (gemv_bulk_kernel: K3_GEMV_FP4=bulk and
 * K3_GEMV8_PIPE=bulk, K a multiple of 512, sm_90+), BF16 and MXFP8 activations, beside the default
 * kernels (gemv_kernel, gemv8_kernel), each against the float64 reference: every epilogue; 8
 * tokens a pass (about one row a group) and 16 (several passes of one unit: 70 and 130 rows);
 * N = 272 (17 strips: units that straddle CTAs); and the persistent grid capped at 1 and 3 CTAs
 * (K3_GEMV_FP4_CTAS), the second with 1 stage in flight of the 2 slots (K3_GEMV_FP4_DEPTH): 8
 * and 24 warps walk many units each, the ring running on across units, passes and experts. */
static void test_gemv_fp4_bulk(void **unused)
{
	(void)unused;
	static const int32_t few[9] = { 1, 0, 2, 1, 0, 0, 3, 1, 1 };
	struct wmat wa = wmat_rand(9, 384, 1024, K3_W_MXFP4, 0.1), wb = wmat_rand(7, 272, 1536, K3_W_MXFP4, 0.1);
	const struct gemm_case ca = { .N = 384, .K = 1024, .n_groups = 9, .counts = few, .a_rows = 5,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	const struct gemm_case cb = { .N = 272, .K = 1536, .n_groups = 7, .counts = COUNTS, .a_rows = 50,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	struct gemm_case ca8 = ca, cb8 = cb;
	ca8.a8 = cb8.a8 = true;
	static const char *const modes[4][3] = { { "bulk", NULL, NULL }, { NULL, NULL, NULL }, { "bulk", "3", NULL },
						 { "bulk", "1", "1" } };
	for (int m = 0; m < 4; m++) {
		print_message("  -- K3_GEMV_FP4=%s K3_GEMV_FP4_CTAS=%s K3_GEMV_FP4_DEPTH=%s\n",
			      modes[m][0] ? modes[m][0] : "(unset)", modes[m][1] ? modes[m][1] : "(unset)",
			      modes[m][2] ? modes[m][2] : "(unset)");
		if (modes[m][0]) {
			setenv("K3_GEMV_FP4", modes[m][0], 1);
			setenv("K3_GEMV8_PIPE", modes[m][0], 1);
		}
		if (modes[m][1])
			setenv("K3_GEMV_FP4_CTAS", modes[m][1], 1);
		if (modes[m][2])
			setenv("K3_GEMV_FP4_DEPTH", modes[m][2], 1);
		for (int e = K3_EPI_BF16; e <= K3_EPI_GATE; e++) {
			run_gemm(&ca, (enum k3_epilogue)e, &wa);
			if (m < 2 || e == K3_EPI_GLU || e == K3_EPI_SCALE)
				run_gemm(&cb, (enum k3_epilogue)e, &wb);
			if (e == K3_EPI_BF16 || e == K3_EPI_GLU || e == K3_EPI_SPLIT) {
				run_gemm(&ca8, (enum k3_epilogue)e, &wa);
				run_gemm(&cb8, (enum k3_epilogue)e, &wb);
			}
		}
		unsetenv("K3_GEMV_FP4");
		unsetenv("K3_GEMV8_PIPE");
		unsetenv("K3_GEMV_FP4_CTAS");
		unsetenv("K3_GEMV_FP4_DEPTH");
	}
	wmat_release(&wa), wmat_release(&wb);
}

/* The BF16-activation MXFP4 gemv (gemv_lean_kernel, the default since 2026-12-01x) beside the
 * kernel it replaced (K3_GEMV_FP4=regs: gemv_kernel), with one grid row a group
 * (K3_GEMV_GRID=full) and with 2 and 4 k slices a CTA (K3_GEMV_KSPLIT: at N = 272 and 4 slices a
 * CTA of 32 rows with a spare warp pair, at K = 640 a slice with no blocks), each against the
 * float64 reference, every epilogue: 8 tokens a pass
 * (about a row a group: the grid's rows are min(groups, rows) = 9 of 9 groups, 5 touched) and
 * 16 (70 and 130 rows: several passes); K = 640, 384 and 128 (5, 3 and 1 blocks: a loop step of
 * 4 blocks with its tail loads predicated off); N = 272 (a CTA with spare warps); dense rows 5
 * and 13 split over k (the PARTIAL stores and the finishing pass). */
static void test_gemv_lean(void **unused)
{
	(void)unused;
	static const int32_t few[9] = { 1, 0, 2, 1, 0, 0, 3, 1, 1 };
	static const char *const modes[6][3] = { { NULL, NULL, NULL }, { "regs", NULL, NULL }, { NULL, "full", NULL },
						 { NULL, NULL, "2" },     { NULL, NULL, "4" },      { NULL, "full", "4" } };
	struct wmat wa = wmat_rand(9, 272, 640, K3_W_MXFP4, 0.1), wb = wmat_rand(7, 384, 384, K3_W_MXFP4, 0.1);
	struct wmat wc = wmat_rand(9, 256, 128, K3_W_MXFP4, 0.1), wd = wmat_rand(1, 256, 2048, K3_W_MXFP4, 0.1);
	const struct gemm_case ca = { .N = 272, .K = 640, .n_groups = 9, .counts = few, .a_rows = 5,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	const struct gemm_case cb = { .N = 384, .K = 384, .n_groups = 7, .counts = COUNTS, .a_rows = 50,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	const struct gemm_case cc = { .N = 256, .K = 128, .n_groups = 9, .counts = few, .a_rows = 5,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	for (int m = 0; m < 6; m++) {
		print_message("  -- K3_GEMV_FP4=%s K3_GEMV_GRID=%s K3_GEMV_KSPLIT=%s\n",
			      modes[m][0] ? modes[m][0] : "(unset)", modes[m][1] ? modes[m][1] : "(unset)",
			      modes[m][2] ? modes[m][2] : "(unset)");
		if (modes[m][0])
			setenv("K3_GEMV_FP4", modes[m][0], 1);
		if (modes[m][1])
			setenv("K3_GEMV_GRID", modes[m][1], 1);
		if (modes[m][2])
			setenv("K3_GEMV_KSPLIT", modes[m][2], 1);
		for (int e = K3_EPI_BF16; e <= K3_EPI_GATE; e++) {
			run_gemm(&ca, (enum k3_epilogue)e, &wa);
			run_gemm(&cb, (enum k3_epilogue)e, &wb);
			if (e == K3_EPI_GLU || e == K3_EPI_SCALE)
				run_gemm(&cc, (enum k3_epilogue)e, &wc);
		}
		for (int rows = 5; rows <= 13; rows += 8) {
			const struct gemm_case cd = { .rows = rows, .N = 256, .K = 2048, .dt = K3_W_MXFP4,
						      .path = K3_GEMM_GEMV };
			run_gemm(&cd, K3_EPI_ADD, &wd);
			run_gemm(&cd, K3_EPI_GLU, &wd);
		}
		unsetenv("K3_GEMV_FP4");
		unsetenv("K3_GEMV_GRID");
		unsetenv("K3_GEMV_KSPLIT");
	}
	/* 16-token passes at fewer rows a group (K3_GEMV_WIDE=1: the few-rows case as 16 a pass). */
	setenv("K3_GEMV_WIDE", "1", 1);
	for (int e = K3_EPI_BF16; e <= K3_EPI_GATE; e++)
		run_gemm(&ca, (enum k3_epilogue)e, &wa);
	unsetenv("K3_GEMV_WIDE");
	wmat_release(&wa), wmat_release(&wb), wmat_release(&wc), wmat_release(&wd);
}

/* E8M0 weight scales far from 127 (bytes 3 .. 227; the kernels keep 3 .. 252 exact: the scaled
 * E2M1 values stay normal BF16; 0 multiplies by 0 in gemv_lean_kernel, see k3_gemm.cu), the
 * activations scaled the other way (normal BF16: 2^124 .. 2^-100) so that the products stay
 * near 1, both kernels, grouped and dense. gemv_f16_kernel (the grouped default at K = 512) is
 * left out (K3_GEMV_FP4=lean): its FP16 activations span 2^-39 .. 1 of a row's largest
 * magnitude, not 2^-224; test_gemv_f16_scales checks its scales. */
static void test_gemv_lean_scales(void **unused)
{
	(void)unused;
	static const uint8_t exps[8] = { 3, 4, 60, 127, 180, 200, 220, 227 };
	enum { K = 512 };
	int a_exp[K / 32];
	for (int c = 0; c < K / 32; c++)
		a_exp[c] = 127 - exps[c % 8];
	struct wmat w = wmat_mx_scales(3, 256, K, exps, 8);
	static const int32_t counts[3] = { 1, 5, 20 };
	for (int m = 0; m < 2; m++) {
		setenv("K3_GEMV_FP4", m ? "regs" : "lean", 1);
		for (int dense = 0; dense < 2; dense++) {
			const struct gemm_case c = dense ? (struct gemm_case){ .rows = 9, .N = 256, .K = K,
									       .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV,
									       .a_exp = a_exp }
							 : (struct gemm_case){ .N = 256, .K = K, .n_groups = 3,
									       .counts = counts, .a_rows = 7,
									       .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV,
									       .a_exp = a_exp };
			run_gemm(&c, K3_EPI_BF16, &w);
			run_gemm(&c, K3_EPI_SPLIT, &w);
		}
		unsetenv("K3_GEMV_FP4");
	}
	wmat_release(&w);
}

/* The grouped MXFP4 gemv on the FP16-pair layout (gemv_f16_kernel, the default where w_f16 is
 * given and K is a multiple of 512) beside gemv_lean_kernel (K3_GEMV_FP4=lean), each against the
 * float64 reference, every epilogue: 8-token passes (the default; groups of 8, 9, 12, 16, 17 and
 * 70 rows: one to nine passes) and 16-token passes whose second tile runs only where a group has
 * more than 8 rows left (K3_GEMV_F16_NT=2), 2 and 4 k slices a CTA (K3_GEMV_KSPLIT; at K = 2560,
 * 4 slices leave one with no blocks), one grid row a group (K3_GEMV_GRID=full), the gemv launched
 * without programmatic dependent launch (K3_GEMV_F16_PDL=0), the weight loads without the L2
 * 256-byte prefetch (K3_GEMV_F16_L2PF=0); the fused kernel (each CTA converts its pass's
 * activation rows into shared memory: the default up to 2 rows a group, case ca; K3_GEMV_F16_FUSE=1
 * everywhere: cb's groups of 8-70 rows in 1-9 passes) and the first pass with the gemv
 * (K3_GEMV_F16_FUSE=0; the default above 2 rows a group; so too the 2 / 4 k slices, 16-token
 * passes and pdl0 modes); the persistent gemv_f16p_kernel (K3_GEMV_F16_PERSIST=1, opt-in: one wave,
 * the work cut evenly over the CTAs; also on 3 and 7 CTAs, K3_GEMV_F16_PCTAS: longer ranges,
 * units split between two CTAs at other places, summed by the second to arrive; the workspace
 * poisoned, so the first pass must zero its counters) and K3_GEMV_F16_PERSIST=0; K = 512
 * (one loop step), 1536, 2560; N = 272 (a CTA with spare warps: they take part in the fused
 * conversion's barriers); gathered activations (a_index) and scattered outputs. The fused
 * kernel's launch knobs (2026-12-02k; each with K3_GEMV_F16_FUSE=1): 4 and 2 warps a CTA
 * (K3_GEMV_F16_WPC; 2 warps at K = 2560: 5 rows a pass, so cb / cc's groups take more passes),
 * 2 warps with 3 rows a pass (K3_GEMV_F16_PROW=3), programmatic dependent launch
 * (K3_GEMV_F16_FPDL=1), the head prefetch (K3_GEMV_F16_HPF=2), the activation copies before
 * the first weight loads (K3_GEMV_F16_AFIRST=1). */
static void test_gemv_f16(void **unused)
{
	(void)unused;
	static const int32_t few[9] = { 1, 0, 2, 1, 0, 0, 3, 1, 1 }, few7[7] = { 1, 0, 2, 1, 0, 3, 1 };
	static const int32_t tiles[6] = { 8, 9, 12, 16, 17, 70 };
	static const char *const modes[20][3] = { { NULL, NULL, NULL },   { "lean", NULL, NULL },   { NULL, "2", NULL },
						  { NULL, NULL, "2" },      { NULL, NULL, "4" },      { NULL, NULL, "full" },
						  { NULL, NULL, "pdl0" },   { NULL, NULL, "nopf" },   { NULL, NULL, "fuse0" },
						  { NULL, NULL, "fuse1" },  { NULL, NULL, "pers1" },  { NULL, NULL, "pers3" },
						  { NULL, NULL, "pers7" },  { NULL, NULL, "pers0" },  { NULL, NULL, "w4" },
						  { NULL, NULL, "w2" },     { NULL, NULL, "w8fpdl" }, { NULL, NULL, "w2r3" },
						  { NULL, NULL, "w8hpf" },  { NULL, NULL, "w8af" } };
	struct wmat wa = wmat_rand(9, 272, 1536, K3_W_MXFP4, 0.1), wb = wmat_rand(6, 384, 512, K3_W_MXFP4, 0.1);
	struct wmat wc = wmat_rand(7, 256, 2560, K3_W_MXFP4, 0.1);
	const struct gemm_case ca = { .N = 272, .K = 1536, .n_groups = 9, .counts = few, .a_rows = 5,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	const struct gemm_case cb = { .N = 384, .K = 512, .n_groups = 6, .counts = tiles, .a_rows = 40,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	const struct gemm_case cbs = { .N = 384, .K = 512, .n_groups = 6, .counts = tiles, .dt = K3_W_MXFP4,
				       .path = K3_GEMM_GEMV, .scatter = true };
	const struct gemm_case cc = { .N = 256, .K = 2560, .n_groups = 7, .counts = COUNTS, .a_rows = 50,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	const struct gemm_case cd = { .N = 256, .K = 2560, .n_groups = 7, .counts = few7, .a_rows = 5,
				      .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV };
	for (int m = 0; m < 20; m++) {
		print_message("  -- K3_GEMV_FP4=%s K3_GEMV_F16_NT=%s K3_GEMV_KSPLIT / GRID / F16_PDL / F16_L2PF / F16_FUSE=%s\n",
			      modes[m][0] ? modes[m][0] : "(unset)", modes[m][1] ? modes[m][1] : "(unset)",
			      modes[m][2] ? modes[m][2] : "(unset)");
		if (modes[m][0])
			setenv("K3_GEMV_FP4", modes[m][0], 1);
		if (modes[m][1])
			setenv("K3_GEMV_F16_NT", modes[m][1], 1);
		if (modes[m][2] && !strcmp(modes[m][2], "full"))
			setenv("K3_GEMV_GRID", "full", 1);
		else if (modes[m][2] && !strcmp(modes[m][2], "pdl0"))
			setenv("K3_GEMV_F16_PDL", "0", 1), setenv("K3_GEMV_F16_FUSE", "0", 1);
		else if (modes[m][2] && !strcmp(modes[m][2], "nopf"))
			setenv("K3_GEMV_F16_L2PF", "0", 1);
		else if (modes[m][2] && !strcmp(modes[m][2], "fuse0"))
			setenv("K3_GEMV_F16_FUSE", "0", 1);
		else if (modes[m][2] && !strcmp(modes[m][2], "fuse1"))
			setenv("K3_GEMV_F16_FUSE", "1", 1);
		else if (modes[m][2] && modes[m][2][0] == 'w') {
			/* the fused kernel everywhere with 4 or 2 warps a CTA (W = 2 at K = 2560: 5 rows a pass,
			 * what 8 CTAs an SM hold; w2r3: 3, K3_GEMV_F16_PROW) or launched by programmatic
			 * dependent launch (K3_GEMV_F16_FPDL=1) */
			setenv("K3_GEMV_F16_FUSE", "1", 1);
			setenv("K3_GEMV_F16_WPC", modes[m][2][1] == '8' ? "8" : modes[m][2][1] == '4' ? "4" : "2", 1);
			if (strstr(modes[m][2], "fpdl"))
				setenv("K3_GEMV_F16_FPDL", "1", 1);
			if (strstr(modes[m][2], "r3"))
				setenv("K3_GEMV_F16_PROW", "3", 1);
			if (strstr(modes[m][2], "hpf")) /* the head prefetch, 16 blocks a row (K = 512: past the end) */
				setenv("K3_GEMV_F16_HPF", "2", 1);
			if (strstr(modes[m][2], "af")) /* the activation copies before the first weight loads */
				setenv("K3_GEMV_F16_AFIRST", "1", 1);
		} else if (modes[m][2] && !strcmp(modes[m][2], "pers0"))
			setenv("K3_GEMV_F16_PERSIST", "0", 1);
		else if (modes[m][2] && !strncmp(modes[m][2], "pers", 4)) {
			/* the persistent kernel everywhere: one wave; 3 or 7 CTAs (longer ranges, other splits) */
			setenv("K3_GEMV_F16_PERSIST", "1", 1);
			if (strcmp(modes[m][2], "pers1"))
				setenv("K3_GEMV_F16_PCTAS", modes[m][2] + 4, 1);
		} else if (modes[m][2])
			setenv("K3_GEMV_KSPLIT", modes[m][2], 1);
		for (int e = K3_EPI_BF16; e <= K3_EPI_GATE; e++) {
			run_gemm(&ca, (enum k3_epilogue)e, &wa);
			run_gemm(&cb, (enum k3_epilogue)e, &wb);
			if (e == K3_EPI_GLU || e == K3_EPI_SCALE) {
				run_gemm(&cc, (enum k3_epilogue)e, &wc);
				run_gemm(&cd, (enum k3_epilogue)e, &wc);
			}
			if (e == K3_EPI_BF16 || e == K3_EPI_SCALE)
				run_gemm(&cbs, (enum k3_epilogue)e, &wb);
		}
		unsetenv("K3_GEMV_FP4");
		unsetenv("K3_GEMV_F16_NT");
		unsetenv("K3_GEMV_KSPLIT");
		unsetenv("K3_GEMV_GRID");
		unsetenv("K3_GEMV_F16_PDL");
		unsetenv("K3_GEMV_F16_L2PF");
		unsetenv("K3_GEMV_F16_FUSE");
		unsetenv("K3_GEMV_F16_PERSIST");
		unsetenv("K3_GEMV_F16_PCTAS");
		unsetenv("K3_GEMV_F16_WPC");
		unsetenv("K3_GEMV_F16_FPDL");
		unsetenv("K3_GEMV_F16_PROW");
		unsetenv("K3_GEMV_F16_HPF");
		unsetenv("K3_GEMV_F16_AFIRST");
	}
	wmat_release(&wa), wmat_release(&wb), wmat_release(&wc);
}

/* gemv_f16_kernel's scales: E8M0 weight scale bytes 3 .. 252 (each set cycling over a row's k
 * groups: every byte of a scale word, each block of a 4-block step), the activations scaled the
 * other way (2^124 .. 2^-125, BF16 subnormals included) so that each group's products stay near
 * 1; a set's exponents span at most 27 binades, which the FP16 activations of one row hold
 * exactly (the first pass's power of two a row). Element by element against float64; the fused
 * kernel, (K3_GEMV_F16_FUSE=0) the first pass and the gemv, and the persistent gemv
 * (K3_GEMV_F16_PERSIST=1) on its default grid and on 5 CTAs (split units); the fused kernel with
 * 4 warps a CTA by programmatic dependent launch, with 2 warps and 3 rows a pass (the activation
 * copies before the weight loads), and with 8 by
 * programmatic dependent launch with the head prefetch (the sanitizer runs of the device calls
 * take this case). */
static void test_gemv_f16_scales(void **unused)
{
	(void)unused;
	static const uint8_t sets[6][6] = { { 3, 4, 10, 20, 30, 3 },         { 60, 70, 80, 87, 61, 62 },
					    { 100, 110, 120, 126, 127, 128 }, { 140, 150, 160, 167, 141, 142 },
					    { 180, 190, 200, 207, 181, 182 }, { 226, 230, 240, 252, 250, 227 } };
	enum { K = 1024, N = 256, G = 3 };
	static const int32_t counts[G] = { 1, 5, 12 };
	for (int s = 0; s < 6; s++) {
		int a_exp[K / 32];
		for (int c = 0; c < K / 32; c++)
			a_exp[c] = 127 - sets[s][c % 6];
		struct wmat w = wmat_mx_scales(G, N, K, sets[s], 6);
		const struct gemm_case c = { .N = N, .K = K, .n_groups = G, .counts = counts, .a_rows = 7,
					     .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV, .a_exp = a_exp };
		for (int f = 0; f < 7; f++) { /* fused (8, 4, 2 warps a CTA), the first pass and the gemv,
					       * the persistent gemv (2 grids) */
			setenv("K3_GEMV_F16_FUSE", f >= 1 && f <= 3 ? "0" : "1", 1);
			setenv("K3_GEMV_F16_PERSIST", f == 2 || f == 3 ? "1" : "0", 1);
			if (f == 3)
				setenv("K3_GEMV_F16_PCTAS", "5", 1);
			if (f == 4) /* 4 warps a CTA by programmatic dependent launch */
				setenv("K3_GEMV_F16_WPC", "4", 1), setenv("K3_GEMV_F16_FPDL", "1", 1);
			if (f == 5) { /* 2 warps a CTA, 3 rows a pass (groups of 5 and 12 rows: 2 and 4 passes), the
				       * activation copies before the weight loads */
				setenv("K3_GEMV_F16_WPC", "2", 1), setenv("K3_GEMV_F16_PROW", "3", 1);
				setenv("K3_GEMV_F16_AFIRST", "1", 1);
			}
			if (f == 6) /* 8 warps a CTA by programmatic dependent launch, the head prefetch */
				setenv("K3_GEMV_F16_FPDL", "1", 1), setenv("K3_GEMV_F16_HPF", "2", 1);
			run_gemm(&c, K3_EPI_BF16, &w);
			run_gemm(&c, K3_EPI_SPLIT, &w);
			unsetenv("K3_GEMV_F16_FUSE");
			unsetenv("K3_GEMV_F16_PERSIST");
			unsetenv("K3_GEMV_F16_PCTAS");
			unsetenv("K3_GEMV_F16_WPC");
			unsetenv("K3_GEMV_F16_FPDL");
			unsetenv("K3_GEMV_F16_PROW");
			unsetenv("K3_GEMV_F16_HPF");
			unsetenv("K3_GEMV_F16_AFIRST");
		}
		wmat_release(&w);
	}
}

/* The device MXFP8 quantizer against the host's, byte for byte: groups of zeros, BF16
 * subnormals (the scale clamps at 2^-127), the largest BF16 magnitudes, groups whose largest
 * element rounds up past 448 (saturated), and ordinary spreads. */
static void test_mxfp8_quantize(void **unused)
{
	(void)unused;
	const int rows = 7, K = 640, ng = K / K3_MX_GROUP;
	int a_exp[640 / 32];
	for (int c = 0; c < ng; c++)
		a_exp[c] = (int)(test_rng_next(&rng) % 60) - 30;
	a_exp[0] = -133, a_exp[1] = -128, a_exp[2] = 127, a_exp[3] = -126, a_exp[4] = 120, a_exp[6] = -5;
	struct gt_bf16 A = a_rand(rows, K, a_exp);
	uint16_t *h = gt_xmalloc((size_t)rows * K * 2);
	for (int r = 0; r < rows; r++) {
		for (int i = 0; i < K3_MX_GROUP; i++)
			A.h[r * K + 5 * K3_MX_GROUP + i] = 0.0; /* zeros */
		A.h[r * K + 6 * K3_MX_GROUP] = 0x1.fep-1;   /* x / 2^scale = 510: saturates to 448 */
		A.h[r * K + 7 * K3_MX_GROUP + 3] = -0x1.fep127;
	}
	for (size_t i = 0; i < (size_t)rows * K; i++)
		h[i] = k3_bf16_from_double(A.h[i]);
	CUDA_OK(cudaMemcpy(A.d, h, (size_t)rows * K * 2, cudaMemcpyHostToDevice));
	uint8_t *q = gt_dev_poisoned((size_t)rows * K), *sc = gt_dev_poisoned((size_t)rows * ng);
	KERNEL_OK(k3_gemm_quantize_mxfp8(A.d, rows, K, q, sc, 0));
	uint8_t *gq = gt_xmalloc((size_t)rows * K), *gs = gt_xmalloc((size_t)rows * ng);
	uint8_t *wq = gt_xmalloc((size_t)rows * K), *ws = gt_xmalloc((size_t)rows * ng);
	CUDA_OK(cudaMemcpy(gq, q, (size_t)rows * K, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(gs, sc, (size_t)rows * ng, cudaMemcpyDeviceToHost));
	k3_mxfp8_quantize(A.h, (size_t)rows * K, wq, ws);
	assert_int_equal(ws[0], 0), assert_int_equal(ws[5], 0), assert_int_equal(wq[6 * K3_MX_GROUP], 0x7e);
	assert_memory_equal(gs, ws, (size_t)rows * ng);
	assert_memory_equal(gq, wq, (size_t)rows * K);
	print_message("  mxfp8 quantizer: %d x %d bytes as the host's\n", rows, K);
	assert_int_equal(k3_gemm_quantize_mxfp8(A.d, rows, 48, q, sc, 0), -EINVAL); /* K not a multiple of 32 */
	assert_int_equal(k3_gemm_quantize_mxfp8(A.d, rows, K, q, sc + 1, 0), -EINVAL);
	free(h), free(gq), free(gs), free(wq), free(ws);
	cudaFree(q), cudaFree(sc);
	gt_bf16_release(&A);
}

/* The operands of FP8 MMAs on MXFP4 weights (k3_gemm_wgf8.cu; round 04p, no kernel reads them
 * yet): the FP8-word tile layout decodes (k3_wgf8_element(), the kernel's table decode) to every
 * element of the MXFP4 matrix exactly, with each row's floor the host's; a group of zero codes
 * under the floor (scale byte 0) is allowed, a spread of 11 binades too, 12 is -ERANGE. The E4M3
 * row quantizer byte for byte against the host's (a row of zeros, BF16 subnormals, the largest
 * BF16 magnitudes, K not a multiple of 256). */
/* R x K BF16 rows through k3_gemm_quantize_e4m3_rows() (K3_QUANT_E4M3 = kind, or unset) against
 * k3_e4m3_row_quantize(), bit for bit: random rows spread over 2^-40 .. 2^8, and rows of zeros,
 * BF16 subnormals, values near the largest BF16, the largest itself, an amax small enough
 * (2^-70) that the scale takes IEEE division on the device, a NaN and an infinity. */
static void e4m3_rows_case(int R, int K, const char *kind)
{
	const size_t n = (size_t)R * K;
	double *h = gt_dnew(n);
	uint16_t *b = gt_xmalloc(n * 2);
	for (size_t i = 0; i < n; i++) {
		const int r = (int)(i / (size_t)K), k = (int)(i % (size_t)K);
		double v = test_rng_uniform(&rng, -1.0, 1.0);
		switch (r % 8) {
		case 0: v = r < 8 ? 0.0 : v; break;		    /* the first: a row of zeros (scale 1) */
		case 1: v = ldexp(v, -128); break;		    /* BF16 subnormals */
		case 2: v = ldexp(v, 126); break;		    /* near the largest */
		case 3: v = k == K / 3 ? -0x1.fep127 : v; break;   /* the largest BF16 */
		case 4: v = ldexp(v, -70); break;		    /* the scale below K3_E4M3_DIV_MIN_SCALE */
		case 6: v = k == 5 ? NAN : v; break;		    /* a NaN (NaN out, the amax of the rest) */
		case 7: v = k == 7 ? -INFINITY : v; break;	    /* an infinity (scale infinite) */
		default: v = ldexp(v, (int)test_rng_uniform(&rng, -40.0, 8.0)); break;
		}
		b[i] = k3_bf16_from_double(v);
		h[i] = k3_double_from_bf16(b[i]);
	}
	uint16_t *x = gt_dev_copy(b, n * 2);
	uint8_t *q = gt_dev_poisoned(n);
	float *qs = gt_dev_poisoned((size_t)R * sizeof(float));
	if (kind)
		setenv("K3_QUANT_E4M3", kind, 1);
	KERNEL_OK(k3_gemm_quantize_e4m3_rows(x, R, K, q, qs, 0));
	unsetenv("K3_QUANT_E4M3");
	uint8_t *gq = gt_xmalloc(n), *wq = gt_xmalloc(n);
	float *gs = gt_xmalloc((size_t)R * sizeof(float)), *ws = gt_xmalloc((size_t)R * sizeof(float));
	CUDA_OK(cudaMemcpy(gq, q, n, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(gs, qs, (size_t)R * sizeof(float), cudaMemcpyDeviceToHost));
	for (int r = 0; r < R; r++)
		k3_e4m3_row_quantize(h + (size_t)r * K, (size_t)K, wq + (size_t)r * K, &ws[r]);
	assert_true(ws[0] == 1.0f);
	assert_memory_equal(gs, ws, (size_t)R * sizeof(float));
	assert_memory_equal(gq, wq, n);
	free(h), free(b), free(gq), free(wq), free(gs), free(ws);
	cudaFree(x), cudaFree(q), cudaFree(qs);
}

static void test_wgf8_operands(void **unused)
{
	(void)unused;
	enum { R = 48, K = 384, G = K / 32 };
	uint8_t *packed = gt_xmalloc((size_t)R * K / 2), *sc = gt_xmalloc((size_t)R * G);
	for (size_t i = 0; i < (size_t)R * K / 2; i++)
		packed[i] = (uint8_t)test_rng_next(&rng);
	for (size_t i = 0; i < (size_t)R * G; i++)
		sc[i] = (uint8_t)(115 + test_rng_next(&rng) % 8);
	for (int i = 0; i < 16; i++) /* row 5, group 2: zero codes (+0 and -0), scale byte 0 */
		packed[5 * (K / 2) + 2 * 16 + i] = (i & 1) ? 0x80 : 0x08;
	sc[5 * G + 2] = 0;
	for (int g = 0; g < G; g++) /* row 9: a spread of 11 */
		sc[9 * G + g] = g == 0 ? 110 : g == 1 ? 121 : 116;
	for (int i = 0; i < K / 2; i++) /* row 17: one nonzero code (-2, group 3), the others zero */
		packed[17 * (K / 2) + i] = i == 3 * 16 + 5 ? 0x0c : 0x00;
	uint8_t *d_packed = gt_dev_copy(packed, (size_t)R * K / 2), *d_sc = gt_dev_copy(sc, (size_t)R * G);
	uint8_t *d_out = gt_dev_poisoned((size_t)R * K / 2), *d_fl = gt_dev_poisoned(R);
	assert_int_equal(k3_gemm_repack_wgf8(d_packed, d_sc, R, K, d_out, d_fl, 0), 0);
	uint8_t *out = gt_xmalloc((size_t)R * K / 2), *fl = gt_xmalloc(R);
	CUDA_OK(cudaMemcpy(out, d_out, (size_t)R * K / 2, cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(fl, d_fl, R, cudaMemcpyDeviceToHost));
	size_t bad = 0;
	for (int r = 0; r < R; r++) {
		int lo = 256, hi = -1;
		for (int g = 0; g < G; g++) {
			int nz = 0;
			for (int i = 0; i < 16; i++)
				nz |= packed[r * (K / 2) + 16 * g + i] & 0x77;
			if (nz)
				lo = sc[r * G + g] < lo ? sc[r * G + g] : lo, hi = sc[r * G + g] > hi ? sc[r * G + g] : hi;
		}
		const int f = hi < 0 ? 0 : (lo > hi - 11 ? lo : hi - 11);
		assert_int_equal(fl[r], f);
		for (int k = 0; k < K; k++) {
			const double want = k3_mxfp4_element(packed + (size_t)r * (K / 2), sc + (size_t)r * G, (size_t)k);
			const double got = k3_wgf8_element(out, sc, fl, K, r, k);
			if (got != want && bad++ < 5)
				print_error("wgf8 row %d k %d: %g, want %g\n", r, k, got, want);
		}
	}
	assert_true(bad == 0);
	assert_int_equal(fl[9], 110);
	print_message("  wgf8 layout: %d x %d elements exact, floors as the host's\n", R, K);
	uint8_t b = 122; /* row 9's spread 12 */
	CUDA_OK(cudaMemcpy(d_sc + 9 * G + 1, &b, 1, cudaMemcpyHostToDevice));
	assert_int_equal(k3_gemm_repack_wgf8(d_packed, d_sc, R, K, d_out, d_fl, 0), -ERANGE);
	assert_int_equal(k3_gemm_repack_wgf8(d_packed, d_sc, R - 8, K, d_out, d_fl, 0), -EINVAL); /* rows % 16 */
	free(packed), free(sc), free(out), free(fl);
	cudaFree(d_packed), cudaFree(d_sc), cudaFree(d_out), cudaFree(d_fl);

	static const char *const kinds[] = { NULL, "reg", "twopass" }; /* K3_QUANT_E4M3: the default, each kernel */
	for (int i = 0; i < 3; i++) {
		e4m3_rows_case(6, 520, kinds[i]);    /* reg: a CTA a row, one piece a thread */
		e4m3_rows_case(3, 3584, kinds[i]);   /* K3's latent rows at decode: a CTA a row, 2 pieces */
		e4m3_rows_case(2100, 3584, kinds[i]); /* a warp a row, 14 of 16 pieces */
		e4m3_rows_case(2051, 264, kinds[i]); /* a warp a row, 33 pieces (2 a lane); the last CTA 3 rows of 8 */
		e4m3_rows_case(5, 40000, kinds[i]);  /* past 16 pieces a thread: the two-pass kernel */
	}
	print_message("  e4m3 rows: bytes and scales as the host's (5 shapes; default, reg, twopass)\n");
	uint16_t *x = gt_dev_poisoned(64 * 2);
	uint8_t *q = gt_dev_poisoned(64);
	float *qs = gt_dev_poisoned(sizeof(float));
	assert_int_equal(k3_gemm_quantize_e4m3_rows(x, 1, 12, q, qs, 0), -EINVAL); /* K not a multiple of 8 */
	setenv("K3_QUANT_E4M3", "fast", 1);
	assert_int_equal(k3_gemm_quantize_e4m3_rows(x, 1, 16, q, qs, 0), -EINVAL); /* an unknown kernel */
	unsetenv("K3_QUANT_E4M3");
	cudaFree(x), cudaFree(q), cudaFree(qs);
}

/* The gemv with MXFP8 activations (FP8 MMAs) against the float64 reference of the quantized
 * activations: every epilogue, dense (k split over CTAs; several passes) and grouped (gathered,
 * scattered), 8 and 16 tokens a pass. */
static void test_gemv_mxfp8(void **unused)
{
	(void)unused;
	for (int rows = 5; rows <= 37; rows += 8) { /* 5: 8 a pass; 13, 21, 29, 37: 16 a pass, several passes */
		const struct gemm_case c = { .rows = rows, .N = 256, .K = 2048, .dt = K3_W_MXFP4, .path = K3_GEMM_AUTO,
					     .a8 = true };
		struct wmat w = wmat_rand(1, c.N, c.K, c.dt, 0.1);
		if (rows == 5 || rows == 37)
			for (int e = K3_EPI_BF16; e <= K3_EPI_GATE; e++)
				run_gemm(&c, (enum k3_epilogue)e, &w);
		else
			run_gemm(&c, K3_EPI_BF16, &w);
		wmat_release(&w);
	}
	static const int32_t few[9] = { 1, 0, 2, 1, 0, 0, 3, 1, 1 };
	const struct gemm_case f = { .N = 384, .K = 640, .n_groups = 9, .counts = few, .a_rows = 5, .dt = K3_W_MXFP4,
				     .path = K3_GEMM_GEMV, .a8 = true };
	run_all_epilogues(&f);
	const struct gemm_case g = { .N = 256, .K = 256, .n_groups = 7, .counts = COUNTS, .a_rows = 50,
				     .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV, .a8 = true };
	run_all_epilogues(&g);
	struct wmat w = wmat_rand(7, 272, 384, K3_W_MXFP4, 0.1); /* N not a multiple of 128 */
	static const int32_t sc[7] = { 3, 0, 9, 1, 4, 2, 1 };
	const struct gemm_case s = { .N = 272, .K = 384, .n_groups = 7, .counts = sc, .a_rows = 11,
				     .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV, .scatter = true, .a8 = true };
	run_gemm(&s, K3_EPI_BF16, &w);
	run_gemm(&s, K3_EPI_GATE, &w);
	wmat_release(&w);
}

/* K3's expert shapes with MXFP8 activations: w13 (GLU, rows gathered from the tokens) and w2
 * (SCALE), decode batches B = 1, 16, 64, 256 as per-expert row counts (top-16 of 896: about
 * 16 B / 896 rows an expert, so B = 1 and 16 give single rows, 64 one or two, 256 four or
 * five: the 16-token pass), and one expert of 256 rows (16 passes). */
static void test_gemv_mxfp8_k3_shapes(void **unused)
{
	(void)unused;
	static const int32_t b1[4] = { 1, 1, 0, 1 }, b64[4] = { 1, 2, 1, 2 }, b256[5] = { 4, 6, 3, 5, 0 };
	static const int32_t one256[1] = { 256 };
	const int32_t *counts[4] = { b1, b64, b256, one256 };
	const int ng[4] = { 4, 4, 5, 1 };
	struct wmat w13 = wmat_rand(5, 2 * K3_EXPERT_INTER, K3_LATENT, K3_W_MXFP4, 0.05);
	for (int i = 0; i < 3; i++) {
		const struct gemm_case c = { .N = 2 * K3_EXPERT_INTER, .K = K3_LATENT, .n_groups = ng[i],
					     .counts = counts[i], .a_rows = 3, .dt = K3_W_MXFP4,
					     .path = K3_GEMM_AUTO, .a8 = true };
		run_gemm(&c, K3_EPI_GLU, &w13);
	}
	wmat_release(&w13);
	struct wmat w2 = wmat_rand(5, K3_LATENT, K3_EXPERT_INTER, K3_W_MXFP4, 0.05);
	for (int i = 0; i < 4; i++) {
		const struct gemm_case c = { .N = K3_LATENT, .K = K3_EXPERT_INTER, .n_groups = ng[i], .counts = counts[i],
					     .dt = K3_W_MXFP4, .path = K3_GEMM_AUTO, .a8 = true };
		run_gemm(&c, K3_EPI_SCALE, &w2);
	}
	wmat_release(&w2);
}

/* E8M0 extremes: weight scale bytes 0 (2^-127), 1, 2, 127, 251, 252 (the largest an MX quantizer of
 * FP32 writes) and 253, against activations that bring each product back near 1 (A's k group
 * c at 2^(127 - e_c), BF16 from 2^127 down to 2^-126), and activations so small that their
 * scale clamps at 2^-127 (BF16 subnormals) against 2^126 weights. */
static void test_gemv_mxfp8_e8m0_extremes(void **unused)
{
	(void)unused;
	static const uint8_t exps[8] = { 0, 1, 2, 127, 251, 252, 253, 253 };
	enum { K = 512 };
	int a_exp[K / 32];
	for (int c = 0; c < K / 32; c++)
		a_exp[c] = 127 - exps[c % 8] - (c % 8 == 7 ? 7 : 0); /* the last: 2^-133 (subnormal) A vs 2^126 */
	struct wmat w = wmat_mx_scales(3, 256, K, exps, 8);
	static const int32_t counts[3] = { 1, 5, 20 };
	for (int dense = 0; dense < 2; dense++) {
		const struct gemm_case c = dense ? (struct gemm_case){ .rows = 9, .N = 256, .K = K, .dt = K3_W_MXFP4,
								       .path = K3_GEMM_GEMV, .a8 = true, .a_exp = a_exp }
						 : (struct gemm_case){ .N = 256, .K = K, .n_groups = 3, .counts = counts,
								       .a_rows = 7, .dt = K3_W_MXFP4, .path = K3_GEMM_GEMV,
								       .a8 = true, .a_exp = a_exp };
		run_gemm(&c, K3_EPI_BF16, &w);
		run_gemm(&c, K3_EPI_SPLIT, &w);
	}
	wmat_release(&w);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct k3_gemm_args a = { .rows = 4, .N = 100, .K = 128 };
	assert_int_equal(k3_gemm(&a, 0), -EINVAL); /* N not a multiple of 128 */
	a.N = 128;
	assert_int_equal(k3_gemm(&a, 0), -EINVAL); /* no pointers */
	a.epi = K3_EPI_SPLIT, a.n_split = 100;
	size_t ws;
	assert_int_equal(k3_gemm_workspace_bytes(&a, &ws), -EINVAL);
	struct moe_route_args r = { .tokens = 1, .experts = 8, .topk = 9 };
	assert_int_equal(moe_route(&r, 0), -EINVAL);
	struct moe_combine_args c = { .tokens = 1, .topk = 1, .width = 12 };
	assert_int_equal(moe_combine(&c, 0), -EINVAL);
	/* MXFP8 activations: the gemv path with MXFP4 weights only; aligned scale arrays. */
	static uint8_t buf[256] __attribute__((aligned(16)));
	struct k3_gemm_args m = { .rows = 4, .N = 128, .K = 128, .a_dtype = K3_A_MXFP8, .a_q = buf, .a_scales = buf,
				  .w_dtype = K3_W_MXFP4, .w_packed = buf, .w_scales = buf, .out = (uint16_t *)buf };
	assert_int_equal(k3_gemm_path_for(&m), K3_GEMM_GEMV);
	m.path = K3_GEMM_TILED;
	assert_int_equal(k3_gemm_path_for(&m), -EINVAL);
	assert_int_equal(k3_gemm(&m, 0), -EINVAL);
	m.path = K3_GEMM_GEMV, m.w_dtype = K3_W_BF16, m.w = (uint16_t *)buf;
	assert_int_equal(k3_gemm(&m, 0), -EINVAL);
	m.w_dtype = K3_W_MXFP4, m.a_scales = buf + 1;
	assert_int_equal(k3_gemm(&m, 0), -EINVAL);
	m.a_scales = buf, m.a_dtype = (enum k3_adtype)7;
	assert_int_equal(k3_gemm(&m, 0), -EINVAL);
	assert_int_equal(k3_gemm_repack_fp8(buf, 1, 96, buf + 128, 0), -EINVAL); /* K not a multiple of 128 */
	assert_int_equal(k3_gemm_repack_fp8(buf, 2, 128, buf + 64, 0), -EINVAL); /* overlapping */
}

int main(void)
{
	int rc = gt_device_or_skip("MOE_TEST_FILTER");
	if (rc)
		return rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_small_all_kernels),
		cmocka_unit_test(test_gemv_scales_unaligned),
		cmocka_unit_test(test_gemv_lean),
		cmocka_unit_test(test_gemv_lean_scales),
		cmocka_unit_test(test_gemv_f16),
		cmocka_unit_test(test_gemv_f16_scales),
		cmocka_unit_test(test_gemv_e4m3),
		cmocka_unit_test(test_gemv_fp4_bulk),
		cmocka_unit_test(test_mxfp8_quantize),
		cmocka_unit_test(test_wgf8_operands),
		cmocka_unit_test(test_gemm_wgmma_e4m3),
		cmocka_unit_test(test_gemm_e4m3_k3_shapes),
		cmocka_unit_test(test_gemv_mxfp8),
		cmocka_unit_test(test_gemv_mxfp8_e8m0_extremes),
		cmocka_unit_test(test_gemv_mxfp8_k3_shapes),
		cmocka_unit_test(test_gemm_n_not_128),
		cmocka_unit_test(test_gemm_heads_scatter_gate),
		cmocka_unit_test(test_gemm_mla_uv_stream),
		cmocka_unit_test(test_gemm_dense_tiled),
		cmocka_unit_test(test_gemm_dense_tiled_big_tiles),
		cmocka_unit_test(test_gemm_dense_tiled_splitk),
		cmocka_unit_test(test_gemm_dense_gemv),
		cmocka_unit_test(test_gemm_grouped_tiled),
		cmocka_unit_test(test_gemm_grouped_gemv),
		cmocka_unit_test(test_gemm_k3_expert_shapes),
		cmocka_unit_test(test_gemm_wgmma_tiles),
		cmocka_unit_test(test_gemm_wgmma_clusters),
		cmocka_unit_test(test_gemm_wgmma_wide_small),
		cmocka_unit_test(test_gemm_wgmma_wide_small_rp),
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_combine),
		cmocka_unit_test(test_layer_decode),
		cmocka_unit_test(test_layer_prefill_wide),
		cmocka_unit_test(test_layer_prefill),
		cmocka_unit_test(test_layer_e4m3),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
