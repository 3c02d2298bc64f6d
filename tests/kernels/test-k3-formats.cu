/* SPDX-License-Identifier: MIT */
/*
 * Host run of the device number-format converters of kernels/common/k3_device.cuh
 * (no GPU needed; built with nvcc, suite 'unit'): the MXFP4 nibble expansion by
 * byte permutes and the E8M0 scale as a BF16 pair, bit for bit against the
 * host decoders of k3_quant.h.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/k3_device.cuh"
#include "kernels/common/k3_quant.h"

static int failures = 0;

#define EXPECT(cond, ...)                                    \
	do {                                                 \
		if (!(cond)) {                               \
			if (failures++ < 10)                 \
				fprintf(stderr, __VA_ARGS__); \
		}                                            \
	} while (0)

static double bf16_half(uint32_t pair, int hi)
{
	return k3_double_from_bf16((uint16_t)(hi ? pair >> 16 : pair & 0xffffu));
}

static void check_word(uint32_t w)
{
	uint32_t o[4];
	k3_e2m1x8_to_bf16x8(w, o);
	for (int i = 0; i < 8; i++) {
		const uint8_t nib = (uint8_t)((w >> (4 * i)) & 0xfu);
		const double want = k3_double_from_e2m1(nib), got = bf16_half(o[i / 2], i & 1);
		/* Same value and same sign (the zero nibble 8 is -0). */
		EXPECT(want == got && signbit(want) == signbit(got), "word %08x element %d: %g, want %g\n", w, i, got,
		       want);
	}
}

int main()
{
	for (uint32_t n = 0; n < 16; n++)
		for (int pos = 0; pos < 8; pos++)
			check_word((n << (4 * pos)) | (0x21436587u & ~(0xfu << (4 * pos))));
	uint64_t s = 1;
	for (int i = 0; i < 1000000; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		check_word((uint32_t)(s >> 32));
	}
	for (uint32_t e = 0; e < 256; e++) {
		const uint32_t pair = k3_e8m0_to_bf16x2(e);
		const double want = k3_double_from_e8m0((uint8_t)e);
		EXPECT((pair & 0xffffu) == (pair >> 16), "e8m0 %u: halves differ\n", e);
		const double got = bf16_half(pair, 0);
		EXPECT(want == got || (want != want && got != got), "e8m0 %u: %g, want %g\n", e, got, want);
	}
	/* k3_prmt against its definition on a few selectors. */
	EXPECT(k3_prmt(0x33221100u, 0x77665544u, 0x7654u) == 0x77665544u, "prmt high\n");
	EXPECT(k3_prmt(0x33221100u, 0x77665544u, 0x5140u) == 0x55114400u, "prmt interleave\n");
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("k3 formats: ok\n");
	return 0;
}
