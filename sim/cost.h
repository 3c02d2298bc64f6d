#ifndef K3_SIM_COST_H
#define K3_SIM_COST_H

/* Cycle-aware cost of one op on one GPU: roofline terms with size-dependent efficiency, tile and
 * wave quantization for GEMMs, KDA's serial chunk recurrence (and, where the preset has the kernels'
 * rule, the overlapped kernel pair: the one place a larger op can cost less, as the kernels' switch
 * to the overlapped path at the rule's bounds does; hw.h kda_overlap_*), launch latency and L2 residency of
 * small activations; collectives by an alpha-beta model over NVLink or the NIC, per collective kind
 * and rank count where the preset calibrated them (hw_coll_model, hw_comm_table_eff). */

#include <stdbool.h>

#include "hw/hw.h"
#include "model/ops.h"

enum bound { BOUND_COMPUTE, BOUND_MEMORY, BOUND_LATENCY, BOUND_COMM };

struct op_cost {
	double time_s;     /* the op once (one layer's instance) */
	double cycles;     /* time_s at the SM clock */
	double compute_s;  /* tensor/vector work at the achieved rate, after quantization */
	double memory_s;   /* HBM (and L2) traffic at the achieved bandwidth */
	double latency_s;  /* launch, and serial dependency chains (KDA recurrence) */
	double comm_s;     /* collectives */
	double waves;      /* GEMM / KDA recurrence waves over the SMs (0 when not applicable) */
	enum bound bound;
	double floor_s;    /* physical floor: launch gaps + max(FLOPs / peak rate at the clock,
			    * bytes / peak bandwidth); time_s is never below it */
	double clock_hz;   /* the SM clock the op was costed at */
	bool calibrated;   /* a calibrated table or measured GEMM shapes shaped the time */
	bool extrapolated; /* calibrated preset, but the op lies outside what was measured: its
			    * time is the physical model's (tables taper to it, see hw_table_eff_at;
			    * a GEMM not bracketed by measured shapes) */
};

struct cost_opts {
	bool cuda_graph;     /* launch latency of a captured graph instead of eager launches */
	struct hw_clock_sel clock; /* SM clock: a regime or a given MHz (boost by default: zeroed
	                           * opts), resolved by hw_clock_sel_hz */
	bool full_clock_scaling;   /* below boost, the physical model's clock ratio whole, without the
	                            * preset's clock_bound roofline (the power model applies it itself:
	                            * sim/power.h) */
};

const char *bound_name(enum bound b);

/* The collective model of a collective op kind (all-to-all for anything else). */
enum hw_coll sim_op_coll(enum op_kind k);

/* The calibration class of an op of its own kind (OP_ATTNRES, OP_ROUTE, OP_COMBINE,
 * OP_SHORT_CONV, OP_QUANT: their table, the memory class's where a preset has none; OP_QUANT's
 * keyed by its output dtype, its bytes all HBM's); HW_CLASS_MEMORY for
 * any other kind. Calibration files measured points under the same class. */
enum hw_class sim_op_class(enum op_kind k);

/* Cost of `op` on one GPU of `hw`; `op` already has per-GPU dims and derived bytes (op_fill);
 * opts may be NULL (eager launches, boost clock).
 *
 * The physical model is evaluated at the selected clock (opts->clock: a regime's or a given
 * one). A calibrated preset corrects the device time (launch gaps excluded) at the boost clock,
 * where it was measured: the class table over
 * the modeled time (hw_table_eff_at: interpolated inside the measured range, tapering to the
 * plain model outside it), and for dense GEMMs the bounds of measured shapes (hw_gemm_bounds);
 * another clock scales that by the physical model's ratio of the two clocks (HBM does not
 * scale), as a roofline in the clock where the preset measured the op's power class bound by
 * its SM-clocked work for a share of its boost time (hw clock_bound, sim_clock_bound): the time
 * below boost is max(the boost time, share x the scaled time). The result is never below the floor. Each part never falls as a size grows, so neither does the sum (checked
 * by `k3sim check`, sim/props.h). A collective whose kind was calibrated at several rank counts
 * lies between the measured ones: at least the time of the rank counts at or below it (the
 * largest of them: more GPUs are never faster than fewer were measured), at most that of the
 * next one above. */
/* Whether an attention op runs in the prefill regime (compute-bound: the `attention_prefill`
 * class): MLA / DSA prefill, and an MLA / DSA decode of SIM_ATTN_PREFILL_T or more new tokens per
 * request (an absorbed prefill through the decode kernel; speculative verify of a few tokens
 * stays decode). Calibration classifies measured points by the same rule. */
enum { SIM_ATTN_PREFILL_T = 64 };
bool sim_attn_prefill_regime(const struct op *op);

/* The expected chunks of one touched expert whose rows run in chunks of at most chunk_rows: the
 * mean of ceil(r / chunk_rows) over rows r ~ normal(mean_rows, cv x mean_rows) given r >= 1 (a
 * touched expert has a row); cv 0: a uniform router's spread (Poisson: 1 / sqrt(mean_rows)).
 * Never below mean_rows / chunk_rows or 1; never falls as mean_rows grows at a given cv (a wider
 * spread may give fewer: experts of 211 rows on average in chunks of 160, some then fit in one). */
double sim_expected_chunks(double mean_rows, double cv, double chunk_rows);
/* The dtype a GEMM's class table is keyed by (hw.h tables; calib/fit.c fits them so): the math
 * dtype (the wider operand, as the preset runs it), except a grouped GEMM of MXFP4 weights with
 * 16-bit activations, keyed mxfp4 (`grouped_gemm.mxfp4`): the in-kernel weight expansion is a
 * regime of its own, which a table of BF16-weight grouped GEMMs (MLA's per-head products, BF16
 * experts) must not correct. A preset without an mxfp4 table costs those ops with its 16-bit one
 * (sim/cost.c op_table), as presets before 2026-12-06 did. */
enum dtype sim_gemm_table_dtype(const struct hw *hw, const struct op *op);

/* Whether an op runs as the MXFP4 experts' gemv (hw.h grouped_fp4_gemv_rows): MXFP4 weights, 16-bit
 * activations, at most that many rows a touched expert on average. */
bool sim_fp4_gemv(const struct hw *hw, const struct op *op);

/* The expected chunks of the MXFP4 grouped kernel an op runs (hw.h grouped_fp4_*, its rows' spread
 * expert_cv); 0 where the preset does not model them or the op is not one (dense, BF16 weights,
 * the gemv regime). */
double sim_fp4_chunks(const struct hw *hw, const struct op *op);

void sim_op_cost(const struct hw *hw, const struct op *op, const struct cost_opts *opts,
		 struct op_cost *out);

/* A calibrated device time below boost before the roofline: boost_s (measured at boost) taken to
 * the clock at scale = clock / boost, where the physical model takes model_boost_s to model_s:
 * with hw clock_scaled_excess, model_s + (boost_s - model_boost_s) / scale (the time beyond the
 * model's on the SM clock), else boost_s x model_s / model_boost_s. */
double sim_clock_scaled_s(const struct hw *hw, double boost_s, double model_boost_s, double model_s, double scale);

/* The inverse of the clock laws (sim_clock_scaled_s, then the class's clock_bound roofline): the
 * boost time whose time at scale = clock / boost is measured_s, for an op of power class klass
 * whose physical model takes model_boost_s at boost and model_s at the clock. measured_s itself
 * at or above boost. Calibrate takes points measured below boost to boost with it. */
double sim_boost_time_s(const struct hw *hw, enum hw_power_class klass, double measured_s, double model_boost_s,
			double model_s, double scale);

#endif
