/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the KDA tests: a deterministic generator and the
 * relative error ||a - b|| / ||b||. */
#ifndef K3_TESTS_KDA_TEST_UTIL_H
#define K3_TESTS_KDA_TEST_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

struct test_rng {
	uint64_t s;
};

static inline uint64_t test_rng_next(struct test_rng *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline double test_rng_uniform(struct test_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * (double)(test_rng_next(r) >> 11) * 0x1.0p-53;
}

static inline void test_fill(struct test_rng *r, double *x, size_t n, double lo, double hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = test_rng_uniform(r, lo, hi);
}

/* ||a - b|| / ||b||; NaN anywhere in a gives NaN (which fails any bound). */
static inline double test_rel_err(const double *a, const double *b, size_t n)
{
	double num = 0.0, den = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = a[i] - b[i];
		num += d * d;
		den += b[i] * b[i];
	}
	return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

#endif
