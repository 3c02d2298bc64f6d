/* SPDX-License-Identifier: MIT */
/*
 * The K3 kernels' host number formats (kernels/common/k3_quant.h): every
 * E4M3 and E2M1 code decodes to the OCP value and encodes back to itself,
 * rounding is to nearest even with saturation, MXFP4 groups get the OCP MX
 * scale and stay within half a step of E2M1 at that scale.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "kda_test_util.h"
#include "kernels/common/k3_quant.h"

static void test_bf16(void **unused)
{
	(void)unused;
	assert_int_equal(k3_bf16_from_double(1.0), 0x3f80);
	assert_int_equal(k3_bf16_from_double(-2.0), 0xc000);
	/* 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1). */
	assert_int_equal(k3_bf16_from_double(1.0 + 0x1p-8), 0x3f80);
	/* 1 + 3 * 2^-8 ties between 1 + 2^-7 (odd) and 1 + 2^-6: to 1 + 2^-6. */
	assert_int_equal(k3_bf16_from_double(1.0 + 3 * 0x1p-8), 0x3f82);
	assert_true(isnan(k3_double_from_bf16(k3_bf16_from_double(NAN))));
	assert_true(k3_round_bf16(3.14159) == 3.140625);
}

static void test_e4m3_codes(void **unused)
{
	(void)unused;
	for (int c = 0; c < 256; c++) {
		const double v = k3_double_from_e4m3((uint8_t)c);
		if ((c & 0x7f) == 0x7f) {
			assert_true(isnan(v));
			continue;
		}
		/* Every finite code round-trips (-0 too). */
		assert_int_equal(k3_e4m3_from_double(v), c);
	}
	assert_true(k3_double_from_e4m3(0x7e) == 448.0);
	assert_true(k3_double_from_e4m3(0x01) == 0x1p-9);
	assert_true(k3_double_from_e4m3(0x08) == 0x1p-6);
	assert_true(k3_double_from_e4m3(0x38) == 1.0);
	/* Saturation, ties to even, subnormal rounding. */
	assert_int_equal(k3_e4m3_from_double(1e6), 0x7e);
	assert_int_equal(k3_e4m3_from_double(-500.0), 0xfe);
	assert_int_equal(k3_e4m3_from_double(1.0 + 1.0 / 16), 0x38);  /* tie 1 | 1.125: even */
	assert_int_equal(k3_e4m3_from_double(1.0 + 3.0 / 16), 0x3a);  /* tie 1.125 | 1.25: even */
	assert_int_equal(k3_e4m3_from_double(0x1p-10), 0x00);         /* tie 0 | 2^-9 */
	assert_int_equal(k3_e4m3_from_double(3 * 0x1p-10), 0x02);     /* tie 2^-9 | 2^-8 */
	assert_int_equal(k3_e4m3_from_double(15.5 * 0x1p-10), 0x08);  /* rounds up into the normals */
}

static void test_e4m3_error(void **unused)
{
	(void)unused;
	struct test_rng r = { 17 };
	for (int i = 0; i < 10000; i++) {
		const double x = test_rng_uniform(&r, -440.0, 440.0) * pow(2.0, -(double)(i % 12));
		const double y = k3_double_from_e4m3(k3_e4m3_from_double(x));
		/* Half a unit in the last place: 2^-4 relative for normals, 2^-10 absolute below. */
		assert_true(fabs(y - x) <= fmax(fabs(x) * 0x1p-4, 0x1p-10) * (1 + 1e-12));
	}
}

/* Every finite BF16 x with |x / s| <= 2^16 over one scale s: k3_e4m3_div() against IEEE
 * division; returns how many quotients of 2^-24 or more differed (the E4M3 bytes must agree
 * everywhere). */
static int div_case(float s)
{
	const float r = 1.0f / s;
	int off = 0;
	for (uint32_t b = 0; b < 0x10000u; b++) {
		if ((b & 0x7f80u) == 0x7f80u) /* inf, NaN */
			continue;
		union { uint32_t u; float f; } xv = { b << 16 }, qi, qf;
		qi.f = xv.f / s;
		if (!(fabsf(qi.f) <= 0x1p16f)) /* the quantizer's |x| <= amax = 448 s at most */
			continue;
		qf.f = k3_e4m3_div(xv.f, s, r);
		if (qi.u == qf.u)
			continue;
		if (fabsf(qi.f) >= 0x1p-24f) /* below, x - q0 s may underflow: E4M3 zero either way */
			off++;
		assert_int_equal(k3_e4m3_from_double(qf.f), k3_e4m3_from_double(qi.f));
	}
	return off;
}

/* k3_e4m3_div() (the device quantizer's division) rounds as IEEE division: edge scales (powers
 * of two, all-ones significands, the smallest scale it takes, the largest a BF16 amax gives) and
 * 3000 more (amax / 448 of random BF16 amax, random FP32 bit patterns), every finite BF16 x. */
static void test_e4m3_div(void **unused)
{
	(void)unused;
	const float edge[] = { 1.0f, 0x1p-60f, 0x1.000002p-60f, 0x1.fffffep-60f, 0x1.fffffep-1f, 0x1.fffffep0f,
			       0x1.fffffep-20f, 0x1.fffffep40f, 448.0f, 1.0f / 448.0f, 0x1.fep127f / 448.0f,
			       0x1.000002p0f, 0x1.800000p-3f, 0x1.555556p-2f, 0x1.24924ap-9f };
	int off = 0;
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		off += div_case(edge[i]);
	struct test_rng rng = { 4242 };
	for (int i = 0; i < 3000; i++) {
		float s;
		if (i % 2 == 0) { /* amax / 448 of a BF16 amax at or above 448 x 2^-60 */
			const double a = ldexp(test_rng_uniform(&rng, 1.0, 2.0), (int)test_rng_uniform(&rng, -51.0, 127.0));
			s = (float)k3_double_from_bf16(k3_bf16_from_double(a)) / 448.0f;
		} else { /* random bits: exponent field 67 .. 254 (2^-60 .. 2^127) */
			const uint32_t e = 67u + (uint32_t)test_rng_uniform(&rng, 0.0, 188.0);
			const uint32_t m = (uint32_t)test_rng_uniform(&rng, 0.0, 8388608.0) & 0x7fffffu;
			union { uint32_t u; float f; } v = { (e << 23) | m };
			s = v.f;
		}
		if (!(s >= K3_E4M3_DIV_MIN_SCALE) || isinf(s))
			continue;
		off += div_case(s);
	}
	assert_int_equal(off, 0);
}

static void test_e2m1_codes(void **unused)
{
	(void)unused;
	static const double mag[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
	for (int c = 0; c < 16; c++) {
		const double v = k3_double_from_e2m1((uint8_t)c);
		assert_true(fabs(v) == mag[c & 7]);
		assert_int_equal(k3_e2m1_from_double(v), c);
	}
	assert_int_equal(k3_e2m1_from_double(0.25), 0x0);  /* tie 0 | 0.5 */
	assert_int_equal(k3_e2m1_from_double(0.75), 0x2);  /* tie 0.5 | 1: even mantissa */
	assert_int_equal(k3_e2m1_from_double(2.5), 0x4);   /* tie 2 | 3 */
	assert_int_equal(k3_e2m1_from_double(5.0), 0x6);   /* tie 4 | 6 */
	assert_int_equal(k3_e2m1_from_double(-100.0), 0xf); /* saturates to -6 */
}

static void test_mxfp4(void **unused)
{
	(void)unused;
	struct test_rng r = { 5 };
	enum { N = 32 * 64 };
	double x[N];
	uint8_t packed[N / 2], scales[N / 32];
	for (int i = 0; i < N; i++)
		x[i] = test_rng_uniform(&r, -1, 1) * pow(2.0, (double)((i / 32) % 9) - 4);
	for (int i = 0; i < 32; i++)
		x[32 * 5 + i] = 0.0; /* a group of zeros */
	k3_mxfp4_quantize(x, N, packed, scales);
	assert_int_equal(scales[5], 0);
	for (int g = 0; g < N / 32; g++) {
		double amax = 0;
		for (int i = 0; i < 32; i++)
			amax = fmax(amax, fabs(x[g * 32 + i]));
		if (amax == 0)
			continue;
		const double s = k3_double_from_e8m0(scales[g]);
		/* OCP MX: the scale is 2^(floor(log2 amax) - 2), so amax / s is in [4, 8). */
		assert_true(amax / s >= 4.0 && amax / s < 8.0);
		for (int i = 0; i < 32; i++) {
			const double y = k3_mxfp4_element(packed, scales, (size_t)(g * 32 + i));
			const double xs = x[g * 32 + i] / s;
			/* Half a step (steps 0.5, 1, 2 by binade) or saturation at 6. */
			const double step = fabs(xs) < 2 ? 0.5 : fabs(xs) < 4 ? 1.0 : 2.0;
			if (fabs(xs) <= 6.0)
				assert_true(fabs(y / s - xs) <= step / 2 + 1e-12);
			else
				assert_true(fabs(y / s) == 6.0);
		}
	}
	assert_true(isnan(k3_double_from_e8m0(0xff)));
	assert_true(k3_double_from_e8m0(127) == 1.0);
}

/* MXFP8: the OCP scale (amax / 2^scale in [256, 512)), elements within half an E4M3 step or
 * saturated at 448, zeros and the clamped extremes of the scale. */
static void test_mxfp8(void **unused)
{
	(void)unused;
	struct test_rng r = { 7 };
	enum { N = 32 * 64 };
	double x[N];
	uint8_t q[N], scales[N / 32];
	for (int i = 0; i < N; i++)
		x[i] = test_rng_uniform(&r, -1, 1) * pow(2.0, (double)((i / 32) % 11) * 25 - 130);
	for (int i = 0; i < 32; i++)
		x[32 * 5 + i] = 0.0;              /* a group of zeros: 2^-127 */
	for (int i = 1; i < 32; i++)
		x[32 * 7 + i] = ldexp(x[32 * 7 + i], -50);
	x[32 * 7] = 0x1.ffp-3;                    /* amax / 2^scale = 511: the element saturates */
	x[32 * 8] = 0x1p-140;                     /* below 2^-135: the scale clamps at 2^-127 */
	for (int i = 1; i < 32; i++)
		x[32 * 8 + i] = 0.0;
	k3_mxfp8_quantize(x, N, q, scales);
	assert_int_equal(scales[5], 0);
	assert_int_equal(scales[8], 0);
	assert_int_equal(q[32 * 7], 0x7e); /* 448 */
	for (int g = 0; g < N / 32; g++) {
		double amax = 0;
		for (int i = 0; i < 32; i++)
			amax = fmax(amax, fabs(x[g * 32 + i]));
		const double s = k3_double_from_e8m0(scales[g]);
		if (amax == 0)
			continue;
		if (scales[g] > 0)
			assert_true(amax / s >= 256.0 && amax / s < 512.0);
		for (int i = 0; i < 32; i++) {
			const double y = k3_mxfp8_element(q, scales, (size_t)(g * 32 + i)) / s;
			const double xs = x[g * 32 + i] / s;
			if (fabs(xs) >= 448.0) {
				assert_true(fabs(y) == 448.0);
				continue;
			}
			int e;
			frexp(fabs(xs), &e);
			const double step = ldexp(1.0, (e - 1 < -6 ? -6 : e - 1) - 3); /* subnormals: 2^-9 */
			assert_true(fabs(y - xs) <= step / 2);
		}
	}
}

/* The FP8 layout of MXFP4 weights: every element lands where the E4M3 expansion reads it (the
 * element of k slot i of chunk t, word j is element 32 j + 8 t + i of its 128-block). */
static void test_mxfp4_fp8_layout(void **unused)
{
	(void)unused;
	struct test_rng r = { 9 };
	enum { ROWS = 3, K = 384 };
	uint8_t packed[ROWS * K / 2], out[ROWS * K / 2];
	for (size_t i = 0; i < sizeof packed; i++)
		packed[i] = (uint8_t)test_rng_next(&r);
	k3_mxfp4_repack_fp8(packed, ROWS, K, out);
	for (int row = 0; row < ROWS; row++)
		for (int k = 0; k < K; k++) {
			const int kb = k / 128, j = (k % 128) / 32, t = (k % 32) / 8, i = k % 8;
			const uint8_t nib = (uint8_t)(packed[row * K / 2 + k / 2] >> (4 * (k & 1))) & 0xf;
			const uint8_t byte = out[row * K / 2 + kb * 64 + 16 * t + 4 * j + i % 4];
			/* The byte's bits of element i (i < 4: 7 | 4 3 2; else 5 | 6 | 1 0) as S.EE.M. */
			const uint8_t got = i < 4 ? (uint8_t)(((byte >> 4) & 8) | ((byte >> 2) & 7))
						  : (uint8_t)(((byte >> 2) & 8) | ((byte >> 4) & 4) | (byte & 3));
			assert_int_equal(got, nib);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16),
		cmocka_unit_test(test_e4m3_codes),
		cmocka_unit_test(test_e4m3_error),
		cmocka_unit_test(test_e4m3_div),
		cmocka_unit_test(test_e2m1_codes),
		cmocka_unit_test(test_mxfp4),
		cmocka_unit_test(test_mxfp8),
		cmocka_unit_test(test_mxfp4_fp8_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
