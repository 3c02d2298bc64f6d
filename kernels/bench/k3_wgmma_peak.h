/* SPDX-License-Identifier: MIT */
/*
 * The tensor pipe's rate at the grouped expert GEMM's shapes (issue 17, k3-bench --only wgmma_peak):
 * wgmma m64nNk16 BF16 issued from operands resident in shared memory (no copies), in the rhythm of
 * k3_gemm_wg.cu's BF16 k loop (per 64-deep k block, 4 k steps x `mb` m64 blocks, one commit group,
 * wait_group 1), by `wgs` warpgroups of one CTA per SM; A from shared memory (SS) or from
 * registers loaded once (RS: no A reads from shared memory).
 */
#ifndef K3_KERNELS_BENCH_K3_WGMMA_PEAK_H
#define K3_KERNELS_BENCH_K3_WGMMA_PEAK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rhythm of a row: the k loop alone (WGP_PLAIN); with wait_group 0 per k block (WGP_WAIT0); with
 * a producer warpgroup and a 4-stage full/empty mbarrier handshake per k block and the consumers'
 * proxy fence, as k3_gemm_wg.cu without clusters but without copies (WGP_HANDSHAKE). */
enum k3_wgp_mode { WGP_PLAIN = 0, WGP_WAIT0 = 1, WGP_HANDSHAKE = 2 };

struct k3_wgmma_peak_cfg {
	int n;    /* MMA N: 64 .. 256 */
	int wgs;  /* consumer warpgroups per CTA: 1 .. 3 */
	int mb;   /* m64 blocks per warpgroup and k step: 1, 2 */
	int rs;   /* A from registers */
	int mode; /* enum k3_wgp_mode */
};

struct k3_wgmma_peak_result {
	double ms;               /* one launch, CUDA events */
	double flops;            /* of the launch */
	double cycles;           /* k loop of one CTA (clock64), the median over CTAs of each CTA's slowest warpgroup */
	double clock_mhz;        /* that CTA's cycles over its %globaltimer interval */
	double flop_per_clk_sm;  /* flops per CTA over cycles: of the 4096 peak */
	int ctas;                /* one per SM */
};

/* The configurations of the table (k3-bench prints them in this order); n_out gets their count. */
const struct k3_wgmma_peak_cfg *k3_wgmma_peak_table(int *n_out);

/* Runs one configuration (median of `reps` launches after a warm-up). 0, or -EINVAL (not built
 * for this configuration or no sm_90a build), -EIO (a CUDA error). */
int k3_wgmma_peak_run(const struct k3_wgmma_peak_cfg *c, int reps, struct k3_wgmma_peak_result *r);

#ifdef __cplusplus
}
#endif

#endif
