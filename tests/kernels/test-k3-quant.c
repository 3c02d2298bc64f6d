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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16),
		cmocka_unit_test(test_e4m3_codes),
		cmocka_unit_test(test_e4m3_error),
		cmocka_unit_test(test_e2m1_codes),
		cmocka_unit_test(test_mxfp4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
