/* SPDX-License-Identifier: MIT */
/*
 * Block AttnRes + pre-norm on the GPU (kernels/attnres/attnres.h) against the
 * float64 reference (suite 'gpu'; exit 77 without a GPU): K3's width and
 * 9 sources with the partial-sum update, in place and not, one source, the
 * most sources; fresh random inputs, outputs poisoned.
 * ATTNRES_TEST_FILTER selects tests.
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
#include "kernels/attnres/attnres.h"
#include "kernels/attnres/attnres_ref.h"

#define TOL 8e-3

static struct test_rng rng = { 20261206 };

static void run(int T, int D, int n, bool delta, bool in_place, bool key_w)
{
	print_message("attnres T=%d D=%d sources=%d delta=%d in_place=%d key_w=%d\n", T, D, n, delta, in_place, key_w);
	struct gt_bf16 src[ATTNRES_MAX_SOURCES];
	for (int i = 0; i < n; i++) /* sources of different scales, as blocks of a residual stream */
		src[i] = gt_bf16_rand(&rng, (size_t)T * D, -0.5 * (1 + i), 0.5 * (1 + i));
	struct gt_bf16 dl = { 0 }, q = gt_bf16_rand(&rng, D, -0.05, 0.05), g = gt_bf16_rand(&rng, D, 0.5, 1.5);
	struct gt_bf16 kw = { 0 };
	if (delta)
		dl = gt_bf16_rand(&rng, (size_t)T * D, -1, 1);
	if (key_w)
		kw = gt_bf16_rand(&rng, D, 0.5, 1.5);
	double *rout = gt_dnew((size_t)T * D), *rh = gt_dnew((size_t)T * D), *rp = gt_dnew((size_t)T * D);
	struct attnres_ref ref = { .tokens = T, .dim = D, .n_sources = n, .delta = delta ? dl.h : NULL,
				   .partial_out = rp, .query = q.h, .key_norm_w = key_w ? kw.h : NULL, .norm_w = g.h,
				   .eps = 1e-6, .h = rh, .out = rout };
	for (int i = 0; i < n; i++)
		ref.src[i] = src[i].h;
	assert_int_equal(attnres_ref(&ref), 0);

	struct gt_bf16 out = gt_bf16_out((size_t)T * D), h = gt_bf16_out((size_t)T * D);
	struct gt_bf16 po = gt_bf16_out((size_t)T * D);
	struct attnres_args a = { .tokens = T, .dim = D, .n_sources = n, .delta = delta ? dl.d : NULL,
				  .partial_out = in_place ? src[n - 1].d : po.d, .query = q.d,
				  .key_norm_w = key_w ? kw.d : NULL, .norm_w = g.d, .eps = 1e-6f, .out = out.d,
				  .h_out = h.d };
	for (int i = 0; i < n; i++)
		a.src[i] = src[i].d;
	KERNEL_OK(attnres(&a, 0));
	gt_bf16_read(&out), gt_bf16_read(&h);
	gt_check("out = rmsnorm(h) * gamma", out.h, rout, (size_t)T * D, TOL);
	gt_check("h", h.h, rh, (size_t)T * D, TOL);
	if (delta) {
		struct gt_bf16 *pp = in_place ? &src[n - 1] : &po;
		gt_bf16_read(pp);
		gt_check("updated partial sum", pp->h, rp, (size_t)T * D, 1e-6);
	}
	for (int i = 0; i < n; i++)
		gt_bf16_release(&src[i]);
	if (delta)
		gt_bf16_release(&dl);
	if (key_w)
		gt_bf16_release(&kw);
	gt_bf16_release(&q), gt_bf16_release(&g), gt_bf16_release(&out), gt_bf16_release(&h), gt_bf16_release(&po);
	free(rout), free(rh), free(rp);
}

static void test_k3_width(void **unused)
{
	(void)unused;
	run(37, 7168, 9, true, false, false);
	run(5, 7168, 9, true, true, true);
}

static void test_edges(void **unused)
{
	(void)unused;
	run(3, 7168, 1, false, false, false);
	run(2, 8192, ATTNRES_MAX_SOURCES, true, false, true);
	run(64, 1000, 4, false, false, true); /* width not a multiple of 256 */
}

/* Each cluster shape of the kernel: 8 CTAs a token (one token, K3's width), 4 (width 4000), 2
 * (width 2048 at small T), one CTA (narrow rows at small and large T), 4 (large T at K3's width,
 * the partial-sum update in place; 16 sources of width 8192 too). K3_ATTNRES_CLUSTER=1|2|4|8 forces a width (at least the one that fits): run the suite
 * under each. */
static void test_cluster_shapes(void **unused)
{
	(void)unused;
	run(1, 7168, 9, true, true, false);
	run(7, 4000, 10, true, false, true);
	run(5, 2048, 9, true, false, true);
	run(3, 1536, 1, false, false, false);
	run(1030, 576, 1, false, false, false);
	run(1100, 7168, 9, true, true, false);
	run(1024, 8192, ATTNRES_MAX_SOURCES, true, false, false);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct attnres_args a = { .tokens = 1, .dim = 12, .n_sources = 1 };
	assert_int_equal(attnres(&a, 0), -EINVAL);
	a.dim = 16, a.n_sources = ATTNRES_MAX_SOURCES + 1;
	assert_int_equal(attnres(&a, 0), -EINVAL);
}

int main(void)
{
	int rc = gt_device_or_skip("ATTNRES_TEST_FILTER");
	if (rc)
		return rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_k3_width),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_cluster_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
