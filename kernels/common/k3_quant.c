/* SPDX-License-Identifier: MIT */
/* Host encoders and decoders of the K3 kernels' number formats: see k3_quant.h. */
#include "kernels/common/k3_quant.h"

#include <math.h>
#include <string.h>

uint16_t k3_bf16_from_double(double x)
{
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN, sign kept */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

double k3_double_from_bf16(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

double k3_round_bf16(double x)
{
	return k3_double_from_bf16(k3_bf16_from_double(x));
}

uint8_t k3_e4m3_from_double(double x)
{
	if (isnan(x))
		return 0x7f;
	const uint8_t sign = signbit(x) ? 0x80 : 0x00;
	const double a = fabs(x);
	if (a >= K3_E4M3_MAX)
		return sign | 0x7e;
	if (a < 0x1p-6) {
		/* Subnormal steps of 2^-9; 8 steps is the smallest normal, code 0x08. */
		return sign | (uint8_t)nearbyint(a * 0x1p9);
	}
	int ex;
	frexp(a, &ex); /* a = f 2^ex, f in [0.5, 1): floor(log2 a) = ex - 1 */
	int e = ex - 1;
	double q = nearbyint(ldexp(a, 3 - e)); /* in [8, 16] */
	if (q >= 16.0)
		q = 8.0, e++;
	int code = ((e + 7) << 3) | ((int)q - 8);
	if (code > 0x7e)
		code = 0x7e;
	return sign | (uint8_t)code;
}

double k3_double_from_e4m3(uint8_t b)
{
	const int e = (b >> 3) & 0xf, m = b & 7;
	double v;
	if (e == 0xf && m == 7)
		return NAN;
	if (e == 0)
		v = ldexp((double)m, -9);
	else
		v = ldexp(1.0 + m / 8.0, e - 7);
	return (b & 0x80) ? -v : v;
}

static const double e2m1_mag[8] = { 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0 };

uint8_t k3_e2m1_from_double(double x)
{
	if (isnan(x))
		return 0;
	const uint8_t sign = signbit(x) ? 0x8 : 0x0;
	const double a = fabs(x);
	int best = 7;
	for (int i = 0; i < 7; i++) {
		const double mid = 0.5 * (e2m1_mag[i] + e2m1_mag[i + 1]);
		if (a < mid || (a == mid && (i & 1) == 0)) {
			best = i;
			break;
		}
	}
	return sign | (uint8_t)best;
}

double k3_double_from_e2m1(uint8_t nibble)
{
	const double v = e2m1_mag[nibble & 7];
	return (nibble & 8) ? -v : v;
}

double k3_double_from_e8m0(uint8_t e)
{
	return e == 0xff ? NAN : ldexp(1.0, (int)e - 127);
}

/* A group's E8M0 scale exponent (OCP MX): the exponent of its largest magnitude less the element
 * format's largest exponent (2 for E2M1, 8 for E4M3), within the scale's range. */
static int mx_group_scale_exp(const double *xg, int elem_emax)
{
	double amax = 0.0;
	for (int i = 0; i < K3_MX_GROUP; i++)
		if (fabs(xg[i]) > amax)
			amax = fabs(xg[i]);
	if (!(amax > 0.0))
		return -127;
	int ex;
	frexp(amax, &ex);
	int se = ex - 1 - elem_emax;
	return se < -127 ? -127 : se > 127 ? 127 : se;
}

void k3_mxfp4_quantize(const double *x, size_t n, uint8_t *packed, uint8_t *scales)
{
	for (size_t g = 0; g < n / K3_MX_GROUP; g++) {
		const double *xg = x + g * K3_MX_GROUP;
		int se = mx_group_scale_exp(xg, 2);
		scales[g] = (uint8_t)(se + 127);
		for (int i = 0; i < K3_MX_GROUP; i += 2) {
			const uint8_t lo = k3_e2m1_from_double(ldexp(xg[i], -se));
			const uint8_t hi = k3_e2m1_from_double(ldexp(xg[i + 1], -se));
			packed[(g * K3_MX_GROUP + (size_t)i) / 2] = (uint8_t)(lo | (hi << 4));
		}
	}
}

double k3_mxfp4_element(const uint8_t *packed, const uint8_t *scales, size_t i)
{
	const uint8_t byte = packed[i / 2];
	const uint8_t nib = (i & 1) ? (uint8_t)(byte >> 4) : (uint8_t)(byte & 0xf);
	return k3_double_from_e2m1(nib) * k3_double_from_e8m0(scales[i / K3_MX_GROUP]);
}

void k3_mxfp8_quantize(const double *x, size_t n, uint8_t *q, uint8_t *scales)
{
	for (size_t g = 0; g < n / K3_MX_GROUP; g++) {
		const double *xg = x + g * K3_MX_GROUP;
		int se = mx_group_scale_exp(xg, 8);
		scales[g] = (uint8_t)(se + 127);
		for (int i = 0; i < K3_MX_GROUP; i++)
			q[g * K3_MX_GROUP + (size_t)i] = k3_e4m3_from_double(ldexp(xg[i], -se));
	}
}

double k3_mxfp8_element(const uint8_t *q, const uint8_t *scales, size_t i)
{
	return k3_double_from_e4m3(q[i]) * k3_double_from_e8m0(scales[i / K3_MX_GROUP]);
}

void k3_e4m3_row_quantize(const double *x, size_t n, uint8_t *q, float *scale)
{
	float amax = 0.0f;
	for (size_t i = 0; i < n; i++)
		amax = fmaxf(amax, fabsf((float)x[i]));
	const float s = amax > 0.0f ? amax / 448.0f : 1.0f;
	for (size_t i = 0; i < n; i++)
		q[i] = k3_e4m3_from_double((double)((float)x[i] / s));
	*scale = s;
}

float k3_e4m3_div(float x, float s, float r)
{
	const float q0 = x * r;
	const float e = fmaf(-q0, s, x);
	return copysignf(fmaf(e, r, q0), x);
}

uint32_t k3_mxfp4_fp8_word(uint32_t w)
{
	uint32_t out = 0;
	for (int b = 0; b < 4; b++) {
		const uint32_t lo = (w >> (4 * b)) & 0xfu, hi = (w >> (4 * (b + 4))) & 0xfu; /* elements b, 4 + b */
		const uint32_t byte = ((lo & 8u) << 4) | ((hi & 4u) << 4) | ((hi & 8u) << 2) | ((lo & 7u) << 2) | (hi & 3u);
		out |= byte << (8 * b);
	}
	return out;
}

void k3_mxfp4_repack_fp8(const uint8_t *packed, size_t rows, size_t K, uint8_t *out)
{
	for (size_t r = 0; r < rows; r++) {
		const uint8_t *src = packed + r * (K / 2);
		uint8_t *dst = out + r * (K / 2);
		for (size_t kb = 0; kb < K / 128; kb++)
			for (int t = 0; t < 4; t++)
				for (int j = 0; j < 4; j++) {
					const uint8_t *s = src + kb * 64 + 16 * j + 4 * t; /* elements 32 j + 8 t .. + 7 */
					const uint32_t w = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
							   (uint32_t)s[3] << 24;
					const uint32_t o = k3_mxfp4_fp8_word(w);
					uint8_t *d = dst + kb * 64 + 16 * t + 4 * j;
					d[0] = (uint8_t)o, d[1] = (uint8_t)(o >> 8), d[2] = (uint8_t)(o >> 16);
					d[3] = (uint8_t)(o >> 24);
				}
	}
}

uint32_t k3_mxfp4_f16enc_word(uint32_t w)
{
	/* col[8 j + 4 h + b]: the stored word whose decoding is bit b (0: m, 1: e0, 2: e1, 3: sign)
	 * of element j + 4 h alone, i.e. the columns of the inverse of the 32 x 32 GF(2) map from
	 * the stored word to the 32 field bits of k3_f16enc_to_f16x8()'s four pairs. */
	static const uint32_t col[32] = K3_MXFP4_F16ENC_COLS;
	uint32_t q = 0;
	for (int e = 0; e < 8; e++) {
		const uint32_t nib = (w >> (4 * e)) & 0xfu;
		for (int b = 0; b < 4; b++)
			if ((nib >> b) & 1u)
				q ^= col[8 * (e % 4) + 4 * (e / 4) + b];
	}
	return q;
}

void k3_mxfp4_repack_f16enc(const uint8_t *packed, size_t rows, size_t K, uint8_t *out)
{
	for (size_t r = 0; r < rows; r++) {
		const uint8_t *src = packed + r * (K / 2);
		uint8_t *dst = out + r * (K / 2);
		for (size_t kb = 0; kb < K / 128; kb++)
			for (int t = 0; t < 4; t++)
				for (int j = 0; j < 4; j++) {
					const uint8_t *s = src + kb * 64 + 16 * j + 4 * t; /* elements 32 j + 8 t .. + 7 */
					const uint32_t w = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
							   (uint32_t)s[3] << 24;
					const uint32_t o = k3_mxfp4_f16enc_word(w);
					uint8_t *d = dst + kb * 64 + 16 * t + 4 * j;
					d[0] = (uint8_t)o, d[1] = (uint8_t)(o >> 8), d[2] = (uint8_t)(o >> 16);
					d[3] = (uint8_t)(o >> 24);
				}
	}
}
