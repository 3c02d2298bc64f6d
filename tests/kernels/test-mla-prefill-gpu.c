/* SPDX-License-Identifier: MIT */
/*
 * Materialized MLA prefill on the GPU (kernels/mla/mla_prefill.h) against
 * the float64 reference mla_ref_prefill() (suite 'gpu'; exit 77 without a
 * GPU). Fresh random inputs per case, outputs poisoned with 0xff (NaN)
 * before each of two runs. Covers T below, at and above the 128-row block
 * and not a multiple of it, P = 0 and P > 0, one token, several sequences,
 * K3's 96 heads, K and V as views of one kv_b output [N][H][256] (the
 * slice's layout) or as separate tensors, with and without the output gate
 * and the LSE; each case on every kernel variant (64- and 128-row blocks,
 * QK^T on mma.sync and, where built and present, on wgmma: the environment
 * variables K3_MLA_PREFILL_BM and K3_MLA_PREFILL_KERNEL, set per run); and
 * the gather of the latent rows out of BF16 and FP8 paged caches.
 * MLA_PREFILL_TEST_FILTER='*gather*' runs a subset (e.g. under
 * compute-sanitizer), MLA_PREFILL_TEST_VARIANTS=mma128,wgmma64 some variants.
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
#include "kernels/mla/mla_prefill.h"
#include "kernels/mla/mla_ref.h"

/* BF16 output of a softmax-weighted mean with P rounded to BF16 on the way (relative
 * 2^-9 per weight, 2^-9 on the output): a few 1e-3. */
#define TOL_OUT 1e-2
/* The LSE: FP32 scores of 192 exact BF16 products (the MMA's accumulation), FP32 exp2 and
 * sums: lambda u (sqrt(192) A + sqrt(n) + 2 |LSE| + 16) per row as in mla_test_util.h, A
 * the row's largest scale * sum |q k|, n its visible keys; lambda 16. */
#define LSE_LAMBDA 16.0

static struct test_rng rng = { 20261218 };

struct pf_case {
	int B, H, T, P;
	bool separate; /* K and V in their own tensors (else views of one [N][H][256]) */
	bool gate, lse;
	double qscale;
	const char *name;
};

/* Whether `name` is an entry of the comma-separated `list` (whole entries: "wgmma128" does not
 * list "mma128"). */
static bool listed(const char *list, const char *name)
{
	const size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		const size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

static void run_case(const struct pf_case *c)
{
	print_message("%s: B=%d H=%d T=%d P=%d %s%s%s\n", c->name, c->B, c->H, c->T, c->P,
		      c->separate ? "separate K/V" : "kv_b view", c->gate ? ", gate" : "", c->lse ? ", lse" : "");
	const size_t N = (size_t)c->P + c->T, rows = (size_t)c->B * c->T * c->H, keys = (size_t)c->B * N;
	struct gt_bf16 q = gt_bf16_rand(&rng, rows * MLA_QK_HEAD, -c->qscale, c->qscale);
	struct gt_bf16 kr = gt_bf16_rand(&rng, keys * MLA_ROPE, -1, 1);
	struct gt_bf16 gate = gt_bf16_rand(&rng, rows * MLA_V_HEAD, -3, 3);
	/* K_nope and V: one random tensor [keys][H][256] (k then v), or two [keys][H][128]. */
	const int64_t ld = c->separate ? (int64_t)c->H * 128 : (int64_t)c->H * 256, hs = c->separate ? 128 : 256;
	struct gt_bf16 kv = gt_bf16_rand(&rng, keys * c->H * 256, -1, 1);
	double *kn = gt_dnew(keys * c->H * MLA_QK_NOPE), *v = gt_dnew(keys * c->H * MLA_V_HEAD);
	for (size_t j = 0; j < keys; j++)
		for (int h = 0; h < c->H; h++)
			for (int e = 0; e < 128; e++) {
				const size_t dst = (j * c->H + h) * 128 + e;
				kn[dst] = kv.h[c->separate ? dst : (j * c->H + h) * 256 + e];
				v[dst] = kv.h[c->separate ? keys * c->H * 128 + dst : (j * c->H + h) * 256 + 128 + e];
			}
	struct mla_ref_prefill ref = {
		.batch = c->B, .heads = c->H, .tokens = c->T, .prefix = c->P, .scale = 1.0 / sqrt(192.0),
		.q = q.h, .k_nope = kn, .k_rope = kr.h, .v = v, .gate = c->gate ? gate.h : NULL,
		.out = gt_dnew(rows * MLA_V_HEAD), .lse = gt_dnew(rows), .score_abs = gt_dnew(rows),
	};
	assert_int_equal(mla_ref_prefill(&ref), 0);

	struct gt_bf16 out = gt_bf16_out(rows * MLA_V_HEAD);
	float *d_lse = c->lse ? gt_dev_poisoned(rows * sizeof(float)) : NULL;
	double *lse = gt_dnew(rows);
	struct mla_prefill_args a = {
		.batch = c->B, .heads = c->H, .tokens = c->T, .prefix = c->P, .scale = (float)ref.scale,
		.q = q.d, .k_nope = kv.d, .v = c->separate ? kv.d + keys * c->H * 128 : kv.d + 128,
		.ld_kv = ld, .head_stride = hs, .k_rope = kr.d, .gate = c->gate ? gate.d : NULL,
		.out = out.d, .lse = d_lse,
	};
	static const char *const variants[][3] = {
		{ "mma128", "mma", "128" }, { "mma64", "mma", "64" }, { "wgmma128", "wgmma", "128" }, { "wgmma64", "wgmma", "64" },
	};
	const char *only = getenv("MLA_PREFILL_TEST_VARIANTS");
	for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
		if (only && !listed(only, variants[vi][0]))
			continue;
		setenv("K3_MLA_PREFILL_KERNEL", variants[vi][1], 1);
		setenv("K3_MLA_PREFILL_BM", variants[vi][2], 1);
		const bool wg = mla_prefill_kernel_wgmma();
		if (!strcmp(variants[vi][1], "wgmma") && !wg) {
			print_message("  %s: no wgmma kernel here (skipped)\n", variants[vi][0]);
			continue;
		}
		print_message("  %s (%s, %d-row blocks)\n", variants[vi][0], wg ? "wgmma" : "mma.sync", mla_prefill_block_rows());
		for (int run = 0; run < 2; run++) {
			gt_poison(out.d, rows * MLA_V_HEAD * 2);
			if (d_lse)
				gt_poison(d_lse, rows * sizeof(float));
			KERNEL_OK(mla_prefill(&a, 0));
		}
		gt_bf16_read(&out);
		gt_check("out", out.h, ref.out, rows * MLA_V_HEAD, TOL_OUT);
		if (!d_lse)
			continue;
		gt_f32_read(d_lse, lse, rows);
		const double u = ldexp(1.0, -24);
		double worst = 0.0, worst_abs = 0.0;
		for (size_t r = 0; r < rows; r++) {
			const size_t i = r / c->H % c->T;
			const double n = (double)c->P + (double)i + 1.0;
			const double tol = LSE_LAMBDA * u * (sqrt(192.0) * ref.score_abs[r] + sqrt(n) + 2.0 * fabs(ref.lse[r]) + 16.0);
			const double d = fabs(lse[r] - ref.lse[r]);
			if (!(d == d))
				fail_msg("lse row %zu is NaN", r);
			worst = fmax(worst, d / tol), worst_abs = fmax(worst_abs, d);
		}
		print_message("  %-52s max abs err %.3e, worst err/tol %.3f\n", "lse", worst_abs, worst);
		if (!(worst < 1.0))
			fail_msg("lse: error over its rounding bound (worst err/tol %g)", worst);
	}
	unsetenv("K3_MLA_PREFILL_KERNEL");
	unsetenv("K3_MLA_PREFILL_BM");
	free(lse);
	cudaFree(d_lse);
	free(kn), free(v), free(ref.out), free(ref.lse), free(ref.score_abs);
	gt_bf16_release(&q), gt_bf16_release(&kr), gt_bf16_release(&gate), gt_bf16_release(&kv);
	gt_bf16_release(&out);
}

static void test_one_block_no_prefix(void **unused)
{
	(void)unused;
	const struct pf_case c = { .B = 1, .H = 4, .T = 100, .P = 0, .lse = true, .qscale = 2,
				   .name = "T below one block, no prefix" };
	run_case(&c);
}

static void test_blocks_with_prefix(void **unused)
{
	(void)unused;
	const struct pf_case c = { .B = 2, .H = 3, .T = 257, .P = 130, .lse = true, .qscale = 2,
				   .name = "three blocks (one row in the last), prefix" };
	run_case(&c);
}

static void test_one_token(void **unused)
{
	(void)unused;
	const struct pf_case c1 = { .B = 1, .H = 2, .T = 1, .P = 0, .lse = true, .qscale = 2, .name = "one token" };
	run_case(&c1);
	const struct pf_case c2 = { .B = 3, .H = 2, .T = 1, .P = 300, .lse = true, .qscale = 4,
				    .name = "one token over a prefix" };
	run_case(&c2);
}

static void test_exact_blocks_gate_separate(void **unused)
{
	(void)unused;
	const struct pf_case c = { .B = 1, .H = 8, .T = 256, .P = 64, .separate = true, .gate = true, .lse = true,
				   .qscale = 2, .name = "two whole blocks, gate, separate K/V" };
	run_case(&c);
}

static void test_k3_heads(void **unused)
{
	(void)unused;
	const struct pf_case c = { .B = 1, .H = 96, .T = 190, .P = 0, .gate = true, .lse = false, .qscale = 3,
				   .name = "96 heads (the slice's), gate, no LSE" };
	run_case(&c);
}

static void test_long_prefix_sharp(void **unused)
{
	(void)unused;
	const struct pf_case c = { .B = 1, .H = 2, .T = 70, .P = 2000, .lse = true, .qscale = 6,
				   .name = "long prefix, sharp softmax" };
	run_case(&c);
}

/* The latent rows of B sequences out of a paged cache, pages scattered, unused rows NaN. */
static void gather_case(enum mla_kv kv, int B, int n)
{
	print_message("gather %s: B=%d N=%d\n", kv == MLA_KV_FP8 ? "fp8" : "bf16", B, n);
	const size_t tb = kv == MLA_KV_FP8 ? MLA_FP8_TOKEN_BYTES : MLA_BF16_TOKEN_BYTES;
	const int max_pages = (n + MLA_PAGE_TOKENS - 1) / MLA_PAGE_TOKENS + 1; /* a spare column */
	int64_t n_pages = (int64_t)B * max_pages + 3;
	while (n_pages % 5 == 0)
		n_pages++;
	int32_t *table = gt_xmalloc((size_t)B * max_pages * sizeof(int32_t));
	for (int b = 0; b < B; b++)
		for (int i = 0; i < max_pages; i++)
			table[b * max_pages + i] = (int32_t)((((int64_t)i * B + b) * 5 + 1) % n_pages);
	unsigned char *pool = gt_xmalloc((size_t)n_pages * MLA_PAGE_TOKENS * tb);
	memset(pool, 0xff, (size_t)n_pages * MLA_PAGE_TOKENS * tb);
	double x[MLA_DIM];
	for (int b = 0; b < B; b++)
		for (int j = 0; j < n; j++) {
			test_fill(&rng, x, MLA_DIM, -2, 2);
			unsigned char *dst =
				pool + ((size_t)table[b * max_pages + j / MLA_PAGE_TOKENS] * MLA_PAGE_TOKENS + j % MLA_PAGE_TOKENS) * tb;
			if (kv == MLA_KV_FP8)
				mla_fp8_encode_token(x, dst);
			else
				mla_bf16_encode_token(x, (uint16_t *)dst);
		}
	const size_t toks = (size_t)B * n;
	double *want_lat = gt_dnew(toks * MLA_LATENT), *want_rope = gt_dnew(toks * MLA_ROPE);
	for (int b = 0; b < B; b++)
		for (int j = 0; j < n; j++) {
			const unsigned char *pg = pool + (size_t)table[b * max_pages + j / MLA_PAGE_TOKENS] * MLA_PAGE_TOKENS * tb;
			const size_t t = (size_t)b * n + j;
			for (int e = 0; e < MLA_DIM; e++) {
				const double val = k3_round_bf16(mla_ref_cache_element(kv, pg, j % MLA_PAGE_TOKENS, e));
				if (e < MLA_LATENT)
					want_lat[t * MLA_LATENT + e] = val;
				else
					want_rope[t * MLA_ROPE + e - MLA_LATENT] = val;
			}
		}
	void *d_pool = gt_dev_copy(pool, (size_t)n_pages * MLA_PAGE_TOKENS * tb);
	void *d_table = gt_dev_copy(table, (size_t)B * max_pages * sizeof(int32_t));
	struct gt_bf16 lat = gt_bf16_out(toks * MLA_LATENT), rope = gt_bf16_out(toks * MLA_ROPE);
	struct mla_gather_args a = { .batch = B, .tokens = n, .kv = kv, .cache = d_pool, .block_table = d_table,
				     .max_pages = max_pages, .latent = lat.d, .k_rope = rope.d };
	KERNEL_OK(mla_prefill_gather(&a, 0));
	gt_bf16_read(&lat);
	gt_bf16_read(&rope);
	/* BF16: bit copies; FP8: e4m3 * scale in FP32, then BF16 (a tie may round the other way). */
	gt_check("latent", lat.h, want_lat, toks * MLA_LATENT, kv == MLA_KV_FP8 ? 1e-3 : 1e-15);
	gt_check("k_rope", rope.h, want_rope, toks * MLA_ROPE, 1e-15);
	free(table), free(pool), free(want_lat), free(want_rope);
	cudaFree(d_pool), cudaFree(d_table);
	gt_bf16_release(&lat), gt_bf16_release(&rope);
}

static void test_gather_bf16(void **unused)
{
	(void)unused;
	gather_case(MLA_KV_BF16, 2, 150);
}

static void test_gather_fp8(void **unused)
{
	(void)unused;
	gather_case(MLA_KV_FP8, 3, 65);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	assert_int_equal(mla_prefill(NULL, 0), -EINVAL);
	struct mla_prefill_args a = {
		.batch = 1, .heads = 2, .tokens = 4, .prefix = 0, .scale = 0.1f, .q = (const uint16_t *)16,
		.k_nope = (const uint16_t *)16, .v = (const uint16_t *)16, .ld_kv = 512, .head_stride = 256,
		.k_rope = (const uint16_t *)16, .out = (uint16_t *)16,
	};
	struct mla_prefill_args b = a;
	b.tokens = 0;
	assert_int_equal(mla_prefill(&b, 0), -EINVAL);
	b = a, b.heads = MLA_MAX_HEADS + 1;
	assert_int_equal(mla_prefill(&b, 0), -EINVAL);
	b = a, b.prefix = MLA_PREFILL_MAX_TOKENS;
	assert_int_equal(mla_prefill(&b, 0), -EINVAL);
	b = a, b.ld_kv = 100; /* not a multiple of 8 elements */
	assert_int_equal(mla_prefill(&b, 0), -EINVAL);
	b = a, b.v = (const uint16_t *)24; /* misaligned */
	assert_int_equal(mla_prefill(&b, 0), -EINVAL);
	b = a, b.scale = 0.0f;
	assert_int_equal(mla_prefill(&b, 0), -EINVAL);
	struct mla_gather_args g = { .batch = 1, .tokens = 100, .kv = MLA_KV_BF16, .cache = (const void *)16,
				     .block_table = (const int32_t *)16, .max_pages = 1, .latent = (uint16_t *)16,
				     .k_rope = (uint16_t *)16 };
	assert_int_equal(mla_prefill_gather(&g, 0), -EINVAL); /* 100 tokens need 2 pages */
	g.max_pages = 2, g.kv = (enum mla_kv)7;
	assert_int_equal(mla_prefill_gather(&g, 0), -EINVAL);
}

int main(void)
{
	int rc = gt_device_or_skip("MLA_PREFILL_TEST_FILTER");
	if (rc)
		return rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_one_block_no_prefix),
		cmocka_unit_test(test_blocks_with_prefix),
		cmocka_unit_test(test_one_token),
		cmocka_unit_test(test_exact_blocks_gate_separate),
		cmocka_unit_test(test_k3_heads),
		cmocka_unit_test(test_long_prefix_sharp),
		cmocka_unit_test(test_gather_bf16),
		cmocka_unit_test(test_gather_fp8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
