/* SPDX-License-Identifier: MIT */
/*
 * The small layer ops on the GPU (kernels/layer/) against float64
 * (suite 'gpu'; exit 77 without a GPU): the prefill ShortConv + SiLU with
 * its state against kda_ref_short_conv(), the gated output norm against
 * kda_ref_gated_rmsnorm(), the MLA cache append (RMSNorm + BF16 or FP8
 * layout) against the reference encoders; outputs and caches poisoned.
 * LAYER_TEST_FILTER selects tests.
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
#include "kernels/kda/kda_ref.h"
#include "kernels/layer/gated_norm.h"
#include "kernels/layer/mla_append.h"
#include "kernels/layer/short_conv.h"
#include "kernels/mla/mla_ref.h"
#include "kernels/moe/moe_ref.h"

static struct test_rng rng = { 20261209 };

static void test_short_conv(void **unused)
{
	(void)unused;
	enum { N = 3, H = 4, C = 3 * H * 128, THIRD = C / 3 };
	const int lens[N] = { 1, 2, 50 };
	int32_t cu[N + 1] = { 0 }, slot[N] = { 2, 0, 1 };
	for (int i = 0; i < N; i++)
		cu[i + 1] = cu[i] + lens[i];
	const int T = cu[N];
	struct gt_bf16 x = gt_bf16_rand(&rng, (size_t)T * C, -1.5, 1.5), w = gt_bf16_rand(&rng, (size_t)C * 4, -0.6, 0.6);
	struct gt_bf16 st = gt_bf16_rand(&rng, (size_t)N * 3 * C, -1.5, 1.5);
	struct gt_bf16 out[3] = { gt_bf16_out((size_t)T * THIRD), gt_bf16_out((size_t)T * THIRD), gt_bf16_out((size_t)T * THIRD) };
	struct k3_short_conv_args a = { .n_seqs = N, .total_tokens = T, .channels = C, .cu_seqlens = gt_dev_copy(cu, sizeof cu),
					.x = x.d, .w = w.d, .conv_state = st.d, .slot = gt_dev_copy(slot, sizeof slot),
					.out = { out[0].d, out[1].d, out[2].d } };
	KERNEL_OK(k3_short_conv(&a, 0));
	double *y = gt_dnew((size_t)T * C), *rs = gt_dnew((size_t)N * 3 * C);
	memcpy(rs, st.h, (size_t)N * 3 * C * sizeof(double));
	for (int i = 0; i < N; i++)
		assert_int_equal(kda_ref_short_conv(lens[i], C, x.h + (size_t)cu[i] * C, w.h, rs + (size_t)slot[i] * 3 * C,
						    y + (size_t)cu[i] * C), 0);
	double *ry = gt_dnew((size_t)T * THIRD);
	for (int o = 0; o < 3; o++) {
		gt_bf16_read(&out[o]);
		for (int t = 0; t < T; t++)
			memcpy(ry + (size_t)t * THIRD, y + (size_t)t * C + o * THIRD, THIRD * sizeof(double));
		gt_check(o == 0 ? "conv q" : o == 1 ? "conv k" : "conv v", out[o].h, ry, (size_t)T * THIRD, 8e-3);
	}
	gt_bf16_read(&st);
	gt_check("conv state after (exact copies of inputs)", st.h, rs, (size_t)N * 3 * C, 1e-12);
	/* No state: zeros before each sequence. */
	for (int o = 0; o < 3; o++)
		gt_poison(out[o].d, (size_t)T * THIRD * 2);
	a.conv_state = NULL;
	KERNEL_OK(k3_short_conv(&a, 0));
	for (int i = 0; i < N; i++)
		assert_int_equal(kda_ref_short_conv(lens[i], C, x.h + (size_t)cu[i] * C, w.h, NULL, y + (size_t)cu[i] * C), 0);
	gt_bf16_read(&out[1]);
	for (int t = 0; t < T; t++)
		memcpy(ry + (size_t)t * THIRD, y + (size_t)t * C + THIRD, THIRD * sizeof(double));
	gt_check("conv k, no state", out[1].h, ry, (size_t)T * THIRD, 8e-3);
	free(y), free(rs), free(ry);
	gt_bf16_release(&x), gt_bf16_release(&w), gt_bf16_release(&st);
	for (int o = 0; o < 3; o++)
		gt_bf16_release(&out[o]);
	gt_free(a.cu_seqlens), gt_free(a.slot);
}

static void test_gated_norm(void **unused)
{
	(void)unused;
	enum { T = 37, H = 96 };
	struct gt_bf16 o = gt_bf16_rand(&rng, (size_t)T * H * 128, -2, 2), g = gt_bf16_rand(&rng, (size_t)T * H * 128, -3, 3);
	struct gt_bf16 w = gt_bf16_rand(&rng, 128, 0.5, 1.5), out = gt_bf16_out((size_t)T * H * 128);
	struct k3_gated_norm_args a = { .tokens = T, .heads = H, .eps = 1e-6f, .o = o.d, .gate = g.d, .norm_w = w.d, .out = out.d };
	KERNEL_OK(k3_gated_norm(&a, 0));
	gt_bf16_read(&out);
	double *ref = gt_dnew((size_t)T * H * 128);
	assert_int_equal(kda_ref_gated_rmsnorm(T, H, 128, o.h, g.h, w.h, 1e-6, ref), 0);
	gt_check("gated rmsnorm", out.h, ref, (size_t)T * H * 128, 8e-3);
	free(ref);
	gt_bf16_release(&o), gt_bf16_release(&g), gt_bf16_release(&w), gt_bf16_release(&out);
}

static void run_append(enum mla_kv kv)
{
	enum { T = 20, LD = 640, R = 2, MP = 3 };
	const size_t tb = kv == MLA_KV_FP8 ? MLA_FP8_TOKEN_BYTES : MLA_BF16_TOKEN_BYTES;
	struct gt_bf16 in = gt_bf16_rand(&rng, (size_t)T * LD, -2, 2), w = gt_bf16_rand(&rng, MLA_LATENT, 0.5, 1.5);
	int32_t req[T], pos[T], table[R * MP] = { 4, 1, 5, 0, 3, 2 };
	for (int t = 0; t < T; t++)
		req[t] = t % 2, pos[t] = (int32_t)((t * 37 + 5) % (MP * 64)); /* distinct per request */
	const size_t pool = (size_t)6 * 64 * tb;
	void *cache = gt_dev_poisoned(pool);
	struct mla_append_args a = { .tokens = T, .kv = kv, .eps = 1e-6f, .kv_in = in.d, .ld = LD, .norm_w = w.d,
				     .req = gt_dev_copy(req, sizeof req), .pos = gt_dev_copy(pos, sizeof pos),
				     .block_table = gt_dev_copy(table, sizeof table), .max_pages = MP, .cache = cache };
	KERNEL_OK(mla_append(&a, 0));
	unsigned char *h = gt_xmalloc(pool);
	CUDA_OK(cudaMemcpy(h, cache, pool, cudaMemcpyDeviceToHost));
	double *got = gt_dnew((size_t)T * MLA_DIM), *want = gt_dnew((size_t)T * MLA_DIM), *norm = gt_dnew(MLA_LATENT);
	for (int t = 0; t < T; t++) {
		const int32_t page = table[req[t] * MP + pos[t] / 64];
		for (int e = 0; e < MLA_DIM; e++)
			got[(size_t)t * MLA_DIM + e] = mla_ref_cache_element(kv, h + (size_t)page * 64 * tb, pos[t] % 64, e);
		double row[MLA_DIM];
		moe_ref_rmsnorm(1, MLA_LATENT, in.h + (size_t)t * LD, w.h, 1e-6, norm);
		memcpy(row, norm, MLA_LATENT * sizeof(double));
		memcpy(row + MLA_LATENT, in.h + (size_t)t * LD + MLA_LATENT, MLA_ROPE * sizeof(double));
		/* The reference encoder on the float64 row: equal bytes but for a rounding flip here and there. */
		unsigned char enc[MLA_BF16_TOKEN_BYTES];
		if (kv == MLA_KV_FP8)
			mla_fp8_encode_token(row, enc);
		else
			mla_bf16_encode_token(row, (uint16_t *)enc);
		for (int e = 0; e < MLA_DIM; e++)
			want[(size_t)t * MLA_DIM + e] = mla_ref_cache_element(kv, enc, 0, e);
	}
	gt_check(kv == MLA_KV_FP8 ? "appended rows, fp8" : "appended rows, bf16", got, want, (size_t)T * MLA_DIM, 1e-2);
	/* A row nobody wrote is still poison. */
	assert_int_equal(h[(size_t)(table[0] * 64 + 1) * tb], 0xff);
	free(h), free(got), free(want), free(norm);
	gt_bf16_release(&in), gt_bf16_release(&w);
	cudaFree(cache), gt_free(a.req), gt_free(a.pos), gt_free(a.block_table);
}

static void test_mla_append(void **unused)
{
	(void)unused;
	run_append(MLA_KV_BF16);
	run_append(MLA_KV_FP8);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct k3_short_conv_args c = { .n_seqs = 1, .channels = 100 };
	assert_int_equal(k3_short_conv(&c, 0), -EINVAL);
	struct k3_gated_norm_args g = { .tokens = 1, .heads = 0 };
	assert_int_equal(k3_gated_norm(&g, 0), -EINVAL);
	struct mla_append_args m = { .tokens = 1, .ld = 500 };
	assert_int_equal(mla_append(&m, 0), -EINVAL);
}

int main(void)
{
	int rc = gt_device_or_skip("LAYER_TEST_FILTER");
	if (rc)
		return rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_short_conv),
		cmocka_unit_test(test_gated_norm),
		cmocka_unit_test(test_mla_append),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
