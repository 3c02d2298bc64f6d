/* SPDX-License-Identifier: MIT */
/*
 * How much the expert GEMMs' outputs move when their activations are E4M3 with one scale a token
 * (what an FP8-MMA kernel on Hopper can apply in its epilogue) instead of MXFP8 (one E8M0 scale
 * per 32 elements, the "MXFP8 inputs", which FP8 MMAs cannot apply without a rescale of
 * the accumulators every k step of 32) or BF16 (the wgmma kernels' input today). The weights are
 * MXFP4 in every case and exact in the reference, so each figure is the activations' share alone:
 * rel = ||y_q - y|| / ||y|| over all outputs y = W x (float64), for
 *   gauss     x ~ N(0, 1)
 *   outliers  x ~ N(0, 1), 1 % of the channels (the same for every token) times 30
 *   situ      x = SiTU-GLU(g, u), g, u ~ N(0, 2) (w2's input: |x| < 4 x 25 = 100)
 * and the schemes
 *   bf16      round to nearest BF16
 *   mxfp8     k3_mxfp8_quantize() (E8M0 scale a group of 32)
 *   tok       E4M3 of x / s, s = amax(token) / 448 in FP32
 *   tok2      as tok with s the power of two 2^ceil(log2(amax / 448))
 *   fixed4    E4M3 of 4 x (situ only: a fixed scale from the SiTU caps, no amax pass)
 * Build and run (no GPU):
 *   cc -O2 -I. bench/moe/fp8-act-error.c kernels/common/k3_quant.c -lm -o /tmp/fp8-act-error
 *   /tmp/fp8-act-error > bench/moe/fp8-act-error.txt
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/k3_quant.h"

static uint64_t rng = 88172645463325252ull;

static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand());
}

static double situ(double g, double u)
{
	return 4.0 * tanh(g / 4.0) / (1.0 + exp(-g)) * 25.0 * tanh(u / 25.0);
}

enum { NW = 64, T = 64 };

/* x quantized by scheme s into xq (K elements of one token). */
static void quant(int s, const double *x, int K, double *xq)
{
	double amax = 0;
	for (int i = 0; i < K; i++)
		amax = fmax(amax, fabs(x[i]));
	if (s == 0) {
		for (int i = 0; i < K; i++)
			xq[i] = k3_round_bf16(x[i]);
	} else if (s == 1) {
		uint8_t *q = malloc((size_t)K), *sc = malloc((size_t)K / 32);
		k3_mxfp8_quantize(x, (size_t)K, q, sc);
		for (int i = 0; i < K; i++)
			xq[i] = k3_mxfp8_element(q, sc, (size_t)i);
		free(q), free(sc);
	} else {
		double sc = s == 2 ? (double)(float)(amax / K3_E4M3_MAX)
			    : s == 3 ? ldexp(1.0, (int)ceil(log2(amax / K3_E4M3_MAX)))
				     : 0.25;
		if (amax == 0)
			sc = 1;
		for (int i = 0; i < K; i++)
			xq[i] = k3_double_from_e4m3(k3_e4m3_from_double(x[i] / sc)) * sc;
	}
}

int main(void)
{
	static const char *const dist[3] = { "gauss", "outliers", "situ" };
	static const char *const scheme[5] = { "bf16", "mxfp8", "tok", "tok2", "fixed4" };
	static const int Ks[2] = { 3584, 3072 };
	printf("# rel = ||y_q - y|| / ||y||, y = W x over %d weight rows x %d tokens (MXFP4 W exact)\n", NW, T);
	printf("%-8s %5s %8s %8s %8s %8s %8s\n", "dist", "K", scheme[0], scheme[1], scheme[2], scheme[3], scheme[4]);
	for (int k = 0; k < 2; k++) {
		const int K = Ks[k];
		double *w = malloc(sizeof(double) * (size_t)NW * K), *x = malloc(sizeof(double) * (size_t)T * K);
		double *xq = malloc(sizeof(double) * (size_t)K), *row = malloc(sizeof(double) * (size_t)K);
		uint8_t *pk = malloc((size_t)K / 2), *sc = malloc((size_t)K / 32);
		for (int r = 0; r < NW; r++) {
			for (int i = 0; i < K; i++)
				row[i] = gauss();
			k3_mxfp4_quantize(row, (size_t)K, pk, sc);
			for (int i = 0; i < K; i++)
				w[(size_t)r * K + i] = k3_mxfp4_element(pk, sc, (size_t)i);
		}
		for (int d = 0; d < 3; d++) {
			for (int t = 0; t < T; t++)
				for (int i = 0; i < K; i++) {
					double v = d == 2 ? situ(2 * gauss(), 2 * gauss()) : gauss();
					if (d == 1 && i % 100 == 7)
						v *= 30;
					x[(size_t)t * K + i] = v;
				}
			printf("%-8s %5d", dist[d], K);
			for (int s = 0; s < 5; s++) {
				if (s == 4 && d != 2) {
					printf(" %8s", "-");
					continue;
				}
				double e2 = 0, y2 = 0;
				for (int t = 0; t < T; t++) {
					quant(s, x + (size_t)t * K, K, xq);
					for (int r = 0; r < NW; r++) {
						double y = 0, yq = 0;
						for (int i = 0; i < K; i++) {
							y += w[(size_t)r * K + i] * x[(size_t)t * K + i];
							yq += w[(size_t)r * K + i] * xq[i];
						}
						e2 += (yq - y) * (yq - y), y2 += y * y;
					}
				}
				printf(" %8.2e", sqrt(e2 / y2));
			}
			printf("\n");
		}
		free(w), free(x), free(xq), free(row), free(pk), free(sc);
	}
	return 0;
}
