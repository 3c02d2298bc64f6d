/* SPDX-License-Identifier: MIT */
/*
 * The log-sum-exp check of the MLA decode tests (dense and sparse; suites
 * 'gpu' and 'unit'). Include after <cmocka.h>.
 *
 * Where the tolerance comes from. The tests give the kernel inputs that are
 * exact in its formats: q in BF16, the cache in BF16, or E4M3 elements with
 * FP32 tile scales, which the kernel applies to each 128-column partial dot
 * product in FP32 (it never rounds a dequantized element). So no input is
 * rounded, and only FP32 arithmetic (unit roundoff u = 2^-24) separates the
 * kernel's LSE from float64's:
 *  - a score is a sum of D = 576 exact products, accumulated in FP32 by the
 *    tensor cores; its error is below lambda sqrt(D) u A, A = scale *
 *    sum_e |q_e k_e| (the probabilistic bound of Higham and Mary, SIAM J.
 *    Sci. Comput. 41(5), 2019: it holds but with probability about
 *    exp(-lambda^2 / 2) for round-to-nearest, and still with a margin of
 *    several for truncating accumulation of random-sign terms); the FP32
 *    softmax scale adds u A. LSE is 1-Lipschitz in the largest score error;
 *  - the sum of n exponentials (ex2.approx, relative error ~2^-22 = 4 u) in
 *    FP32: relative error lambda sqrt(n) u + 4 u, the same absolute on LSE;
 *  - m + log2(l), times ln 2, and the split combine (expf, logf of FP32
 *    LSEs): a few u |LSE| plus the approximations' ~4 u.
 * Hence tol = lambda u (sqrt(D) A + sqrt(n) + 2 |LSE| + 16), lambda = 8,
 * per row, with A and n from the reference (score_abs, n_visible). For the
 * test inputs (|q| <= 4, |k| <= 1) this is 1e-4 .. 7e-4, while an FP8 path
 * that rounds e4m3 * scale to BF16 before the dot product is off by up to
 * 2^-9 relative per element: 3.6e-3 .. 6.0e-3 on the H200 (2026-12-01), and
 * test-mla-ref's emulation shows the same against this bound.
 */
#ifndef K3_TESTS_MLA_TEST_UTIL_H
#define K3_TESTS_MLA_TEST_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/mla/mla_common.h"

#define MLA_LSE_LAMBDA 8.0

/* The LSE tolerance of one row (see above). */
static inline double mla_lse_tolerance(double score_abs, int32_t n_visible, double lse)
{
	const double u = ldexp(1.0, -24);
	const double l = isfinite(lse) ? fabs(lse) : 0.0;
	return MLA_LSE_LAMBDA * u * (sqrt((double)MLA_DIM) * score_abs + sqrt((double)n_visible) + 2.0 * l + 16.0);
}

/* The worst |got - ref| / tolerance over rows (INFINITY when a row is NaN, or one side is
 * -inf and the other not); *worst_abs gets the largest |got - ref| over finite rows. */
static inline double mla_lse_worst(const double *got, const double *ref, const double *score_abs,
				   const int32_t *n_visible, size_t rows, double *worst_abs, double *worst_tol)
{
	double worst = 0.0;
	*worst_abs = 0.0, *worst_tol = 0.0;
	for (size_t i = 0; i < rows; i++) {
		if (isinf(ref[i]) && got[i] == ref[i])
			continue;
		const double d = fabs(got[i] - ref[i]);
		const double tol = mla_lse_tolerance(score_abs[i], n_visible[i], ref[i]);
		if (!(d == d) || isinf(d))
			return INFINITY;
		if (d / tol > worst)
			worst = d / tol, *worst_tol = tol;
		if (d > *worst_abs)
			*worst_abs = d;
	}
	return worst;
}

/* Fails unless every row's LSE is within its tolerance; prints the worst. */
static inline void mla_check_lse(const char *what, const double *got, const double *ref,
				 const double *score_abs, const int32_t *n_visible, size_t rows)
{
	double worst_abs, worst_tol;
	const double worst = mla_lse_worst(got, ref, score_abs, n_visible, rows, &worst_abs, &worst_tol);
	print_message("  %-52s max abs err %.3e, worst err/tol %.3f (tol there %.2e)\n", what, worst_abs, worst,
		      worst_tol);
	if (!(worst < 1.0))
		fail_msg("%s: LSE error over its rounding bound (worst err/tol %g)", what, worst);
}

#endif
