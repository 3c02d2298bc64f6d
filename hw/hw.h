#ifndef K3_HW_HW_H
#define K3_HW_HW_H

/* A GPU and its interconnect: rates, capacities, latencies and efficiency curves, from a YAML
 * preset (datasheet values until calibrated from traces). Rates are per second, sizes in bytes,
 * times in seconds. */

#include <stdbool.h>
#include <stdint.h>

#include "util/dtype.h"
#include "util/err.h"

/* Achieved fraction of a peak rate as a function of size x (FLOPs or bytes):
 * eff(x) = max * x / (x + half). Small ops reach less of the peak than large ones. */
struct hw_curve {
	double max;
	double half; /* size at which eff = max / 2 */
};

double hw_curve_eval(const struct hw_curve *c, double x);

struct hw {
	char name[64];
	char description[128];
	char source[512];
	bool calibrated;

	/* device */
	int64_t sms;
	double sm_clock_hz;
	int64_t l2_bytes;
	int64_t smem_per_sm_bytes;
	int64_t hbm_bytes;
	double hbm_bw_bytes_per_s;
	double l2_bw_bytes_per_s;
	double tensor_flops_per_s[DT_COUNT]; /* dense; 0 = no native tensor path for that type */
	double vector_flops_per_s;           /* FP32 CUDA cores */
	double launch_latency_s;             /* eager launch: gap between dependent kernels */
	double graph_launch_latency_s;       /* the same inside a CUDA graph */

	/* interconnect */
	int64_t domain_gpus;                 /* GPUs sharing one NVLink domain */
	double nvlink_bw_bytes_per_s;        /* per GPU, per direction */
	double nvlink_latency_s;             /* per collective step */
	double nic_bw_bytes_per_s;           /* scale-out, per GPU, per direction */
	double nic_latency_s;

	/* efficiency */
	struct hw_curve eff_gemm;   /* x = FLOPs */
	struct hw_curve eff_memory; /* x = bytes */
	struct hw_curve eff_comm;   /* x = bytes per rank */

	/* kernel shapes */
	int64_t gemm_tile_m, gemm_tile_n;
	double kda_chunk_step_cycles; /* one dependent 16-token chunk step of the KDA recurrence */
	int64_t reserved_bytes;       /* CUDA context, NCCL and library workspaces per GPU */
};

/* Preset name ("h200") or a path to a YAML file. */
int hw_load(struct hw *hw, const char *name_or_path, struct err *e);
int hw_load_yaml(struct hw *hw, const char *name, const char *text, size_t len_bytes, struct err *e);
const char *const *hw_preset_names(void);

/* Dense tensor rate for math in `t`, falling back when there is no native path
 * (MXFP4 -> MXFP8 -> FP8 -> BF16; FP32 -> vector units). */
double hw_tensor_rate(const struct hw *hw, enum dtype t);
/* The dtype whose rate hw_tensor_rate(t) actually uses. */
enum dtype hw_math_dtype(const struct hw *hw, enum dtype t);

#endif
