#ifndef K3_SERVE_RNG_H
#define K3_SERVE_RNG_H

/* A seeded generator (xoshiro256**, seeded by splitmix64) and the draws the workload needs. The
 * same seed gives the same sequence on every platform: integer arithmetic, and doubles from libm
 * functions whose results the draws only compare or scale. Internal to serve/. */

#include <math.h>
#include <stdint.h>

struct serve_rng {
	uint64_t s[4];
};

static inline uint64_t serve_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A 64-bit mix of two words (content ids, chained prefix hashes). */
static inline uint64_t serve_mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b + UINT64_C(0x9e3779b97f4a7c15) + (a << 6) + (a >> 2));
	return serve_splitmix64(&x);
}

static inline void serve_rng_seed(struct serve_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = serve_splitmix64(&x);
}

static inline uint64_t serve_rng_next(struct serve_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5, result = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform in [0, 1). */
static inline double serve_rng_u01(struct serve_rng *r)
{
	return (double)(serve_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in (0, 1]: for logarithms. */
static inline double serve_rng_u01_open(struct serve_rng *r)
{
	return 1.0 - serve_rng_u01(r);
}

static inline double serve_rng_exp(struct serve_rng *r, double mean)
{
	return -mean * log(serve_rng_u01_open(r));
}

static inline double serve_rng_normal(struct serve_rng *r)
{
	double u = serve_rng_u01_open(r), v = serve_rng_u01(r);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Gamma with shape k and scale 1 (Marsaglia and Tsang; k < 1 by boosting). */
static inline double serve_rng_gamma(struct serve_rng *r, double k)
{
	if (k < 1) {
		double g = serve_rng_gamma(r, k + 1);
		return g * pow(serve_rng_u01_open(r), 1.0 / k);
	}
	double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		double x, v;
		do {
			x = serve_rng_normal(r);
			v = 1 + c * x;
		} while (v <= 0);
		v = v * v * v;
		double u = serve_rng_u01_open(r);
		if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v)))
			return d * v;
	}
}

#endif
