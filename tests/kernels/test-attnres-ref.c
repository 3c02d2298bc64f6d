/* SPDX-License-Identifier: MIT */
/*
 * The float64 Block AttnRes reference (kernels/attnres/attnres_ref.h): one
 * source passes through (then only the pre-norm acts); the softmax weights
 * sum to one; a source scaled by c > 0 keeps its key (RMSNorm) but enters h
 * scaled; equal sources mix to themselves; the delta update is the rounded
 * sum and is what gets mixed; a query of zeros weighs the sources equally.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kda_test_util.h"
#include "kernels/attnres/attnres_ref.h"
#include "kernels/common/k3_quant.h"

static struct test_rng rng = { 20261205 };

static double *drand(size_t n, double lo, double hi)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	assert_non_null(p);
	test_fill(&rng, p, n, lo, hi);
	return p;
}

enum { T = 3, D = 64, N = 5 };

static void test_properties(void **unused)
{
	(void)unused;
	double *src[N], *q = drand(D, -1, 1), *g = drand(D, 0.5, 1.5);
	for (int i = 0; i < N; i++)
		src[i] = drand((size_t)T * D, -2, 2);
	double *out = drand((size_t)T * D, 0, 0), *h = drand((size_t)T * D, 0, 0), *al = drand((size_t)T * N, 0, 0);
	struct attnres_ref p = { .tokens = T, .dim = D, .n_sources = N, .query = q, .norm_w = g, .eps = 1e-6,
				 .alpha = al, .h = h, .out = out };
	for (int i = 0; i < N; i++)
		p.src[i] = src[i];
	assert_int_equal(attnres_ref(&p), 0);
	for (int t = 0; t < T; t++) {
		double s = 0;
		for (int i = 0; i < N; i++)
			s += al[t * N + i];
		assert_true(fabs(s - 1) < 1e-12);
		/* out = rmsnorm(h) * g */
		double ss = 0;
		for (int k = 0; k < D; k++)
			ss += h[t * D + k] * h[t * D + k];
		for (int k = 0; k < D; k++)
			assert_true(fabs(out[t * D + k] - h[t * D + k] / sqrt(ss / D + 1e-6) * g[k]) < 1e-12);
	}
	/* Scaling source 2 by 3: same weights (its key is normalized), h takes 3 v_2. */
	double *al2 = drand((size_t)T * N, 0, 0), *h2 = drand((size_t)T * D, 0, 0);
	double *s2 = drand((size_t)T * D, 0, 0);
	for (int k = 0; k < T * D; k++)
		s2[k] = 3 * src[2][k];
	struct attnres_ref p2 = p;
	p2.src[2] = s2, p2.alpha = al2, p2.h = h2, p2.eps = 0;
	p.eps = 0;
	assert_int_equal(attnres_ref(&p), 0);
	assert_int_equal(attnres_ref(&p2), 0);
	for (int t = 0; t < T * N; t++)
		assert_true(fabs(al2[t] - al[t]) < 1e-12);
	for (int t = 0; t < T; t++)
		for (int k = 0; k < D; k++)
			assert_true(fabs(h2[t * D + k] - h[t * D + k] - 2 * al[t * N + 2] * src[2][t * D + k]) < 1e-12);
	/* A zero query: equal weights. */
	double *zq = drand(D, 0, 0);
	p.query = zq;
	assert_int_equal(attnres_ref(&p), 0);
	for (int t = 0; t < T * N; t++)
		assert_true(fabs(al[t] - 1.0 / N) < 1e-15);
	/* One source: h is that source. */
	p.query = q, p.n_sources = 1;
	assert_int_equal(attnres_ref(&p), 0);
	assert_memory_equal(h, src[0], (size_t)T * D * sizeof(double));
	for (int i = 0; i < N; i++)
		free(src[i]);
	free(q), free(g), free(out), free(h), free(al), free(al2), free(h2), free(s2), free(zq);
}

static void test_delta_update(void **unused)
{
	(void)unused;
	double *a = drand((size_t)T * D, -1, 1), *b = drand((size_t)T * D, -1, 1), *dl = drand((size_t)T * D, -1, 1);
	double *q = drand(D, -1, 1), *g = drand(D, 0.5, 1.5), *kw = drand(D, 0.5, 1.5);
	double *po = drand((size_t)T * D, 0, 0), *out = drand((size_t)T * D, 0, 0), *out2 = drand((size_t)T * D, 0, 0);
	struct attnres_ref p = { .tokens = T, .dim = D, .n_sources = 2, .src = { a, b }, .delta = dl,
				 .partial_out = po, .query = q, .key_norm_w = kw, .norm_w = g, .eps = 1e-6, .out = out };
	assert_int_equal(attnres_ref(&p), 0);
	for (int k = 0; k < T * D; k++)
		assert_true(po[k] == k3_round_bf16(b[k] + dl[k]));
	/* Same as running on the updated partial without delta. */
	struct attnres_ref p2 = p;
	p2.src[1] = po, p2.delta = NULL, p2.partial_out = NULL, p2.out = out2;
	assert_int_equal(attnres_ref(&p2), 0);
	assert_memory_equal(out, out2, (size_t)T * D * sizeof(double));
	p.partial_out = NULL;
	assert_int_equal(attnres_ref(&p), -EINVAL);
	free(a), free(b), free(dl), free(q), free(g), free(kw), free(po), free(out), free(out2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_delta_update),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
