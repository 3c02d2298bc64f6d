/* calib-gen-trace OUT.db N [BF16_KERNEL]: a synthetic trace of about N kernels in k3sim op ranges
 * (the GEMM shapes and copy sizes of bench/calib/calib-grid.cu, a few repetitions each, durations
 * from a smooth formula with +-2 % noise) and 1 % of kernels outside any range; BF16_KERNEL names
 * the BF16 GEMMs' kernel (another build's, for calibrate's mixed-kernels warning). For timing
 * `k3sim trace validate` and `k3sim calibrate` on large databases, and for the CLI tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "calib-fixture.h"

static uint64_t rng = 88172645463325252ull;

static double noise(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return 1 + 0.04 * ((double)(rng % 10000) / 10000.0 - 0.5);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: calib-gen-trace OUT.db N [BF16_KERNEL]\n");
		return 2;
	}
	const char *bf16_kernel = argc == 4 ? argv[3] : "nvjet_sm90_tst_128x128";
	long n = atol(argv[2]);
	static const long shapes[][2] = {
	    {36864, 7168}, {4608, 7168},  {12288, 7168}, {7168, 12288}, {7168, 1536}, {96, 7168},
	    {1536, 7168},  {18432, 1536}, {576, 7168},   {24576, 512},  {4480, 7168}, {7168, 3584},
	    {6144, 3584},  {3584, 3072},  {7168, 6144},  {20480, 7168}, {7168, 4224}};
	static const long ms[] = {1,   2,   4,    8,    16,   32,   64,   96,   128,   256,
	                          384, 512, 1024, 1536, 2048, 4096, 6144, 8192, 12288, 16384};
	enum { NS = sizeof shapes / sizeof shapes[0], NM = sizeof ms / sizeof ms[0] };
	struct cfx f;
	if (cfx_open(&f, argv[1]) < 0)
		return 1;
	long ops = 2 * NS * NM + 40, reps = n / ops > 1 ? n / ops : 1;
	int64_t t = 1000, g = 1000000000;
	long made = 0;
	char text[160];
	for (int d = 0; d < 2; d++)
		for (int s = 0; s < NS; s++)
			for (int i = 0; i < NM; i++) {
				double flops = 2.0 * ms[i] * shapes[s][0] * shapes[s][1];
				double bytes = (double)(shapes[s][0] * shapes[s][1] + ms[i] * shapes[s][1]) *
				                   (d ? 1 : 2) +
				               2.0 * ms[i] * shapes[s][0];
				double base = 4e-6 + fmax(flops / (d ? 1300e12 : 700e12), bytes / 3.6e12);
				snprintf(text, sizeof text, "k3sim op=gemm m=%ld n=%ld k=%ld dtype=%s", ms[i],
				         shapes[s][0], shapes[s][1], d ? "fp8" : "bf16");
				for (long r = 0; r < reps; r++) {
					int64_t dur = (int64_t)(base * 1e9 * noise());
					if (cfx_range(&f, 1, t, t + 3000, text) < 0 ||
					    cfx_kernel(&f, 1, t + 100,
					               d ? "nvjet_sm90_qqtst_128x128" : bf16_kernel,
					               g, dur, 132, 1) < 0)
						return 1;
					t += 4000;
					g += dur + 500;
					if (++made % 100 == 0 &&
					    cfx_kernel(&f, 1, t - 500, "stray_kernel", g, 1000, 1, 1) < 0)
						return 1;
				}
			}
	for (long b = 4096; b <= (4L << 30); b *= 2)
		for (int k = 0; k < 2; k++) {
			long bytes = k ? b / 4 * 3 : b;
			if (k && b < 16384)
				continue;
			snprintf(text, sizeof text, "k3sim op=copy bytes=%ld", bytes);
			double base = 0.8e-6 + 2.0 * (double)bytes / 3.9e12;
			for (long r = 0; r < reps; r++) {
				int64_t dur = (int64_t)(base * 1e9 * noise());
				if (cfx_range(&f, 1, t, t + 3000, text) < 0 ||
				    cfx_memcpy(&f, 1, t + 100, bytes, g, dur) < 0)
					return 1;
				t += 4000;
				g += dur + 500;
			}
		}
	return cfx_close(&f) < 0;
}
