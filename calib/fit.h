#ifndef K3_CALIB_FIT_H
#define K3_CALIB_FIT_H

/* Fitting the hardware model to measured points (training points only; held-out points are for
 * reporting). Stages, each run only when its points exist (at least CALIB_FIT_MIN_POINTS):
 * Kernel durations are device time, so every stage predicts with the launch latencies zeroed and
 * the fitted preset keeps the base's launch latencies (gaps between kernels, not measured here):
 *   1. memory: eff_memory (max, half) from copies and elementwise ops;
 *   2. GEMM: with at least CALIB_FIT_GEMM_KERNEL_POINTS dense GEMMs the kernel costs (hw.h:
 *      gemm_fixed_cycles, gemm_wave_cycles, gemm_kstep_cycles, gemm_store_bytes_per_sm_cycle) and
 *      eff_gemm.max, at wave smoothing 0, 1/2 and 1; with fewer eff_gemm (max, half) at
 *      smoothing 0, 1/4, ..., 1; then, where the base preset has the MXFP4 grouped kernel's chunk
 *      rule (hw.h: grouped_fp4_*) and 3 or more tiled MXFP4 grouped GEMMs of two or more ratios of
 *      rows to chunks, grouped_fp4_welems_per_sm_cycle (the spread of log(model / measured)
 *      around its mean, minimized: the class table takes the common factor);
 *   3. KDA prefill: kda_chunk_step_cycles, kda_step_row_cycles, kda_intra_cycles_per_token_head,
 *      kda_fixed_cycles (the pair's fixed cost; with at least twice as many points as parameters),
 *      and where the base preset has the overlapped pair's rule (hw.h: kda_overlap_*) and points
 *      inside it, kda_overlap_rec_share with them, and where it has the pair kernel's rule
 *      (hw.h: kda_pair_*) and points inside it, kda_pair_chain_ratio; collectives: per collective kind and rank count with
 *      points enough a model of its own (hw_coll_model): its step latency and efficiency max,
 *      with half 0 (in the alpha-beta form half only adds a constant, which the latency carries:
 *      the model is latency + bytes / bandwidth, its table the rest); then eff_comm (max, half)
 *      and NVLink latency, what kinds and rank counts without a model get, from the points of
 *      those only (none: the base's stay; 2-GPU measurements say little about 8 GPUs);
 *   4. tables (optional): the modeled-over-measured efficiency that remains per class and dtype
 *      (collectives: per kind and rank count) over the modeled time, with measured times that
 *      never fall as it grows (isotonic); and the measured device times of dense GEMM shapes
 *      (gemm_points), non-decreasing in m;
 *   5. the sustained SM clock, from the points measured in the sustained regime (which take
 *      part in none of 1-4), everything else held;
 *   6. where the base has the power model (hw.h power_*, sim/power.h): its energies
 *      power_flop_pj and power_byte_pj, from the SM clocks the captures recorded around their
 *      instances (calib_points.inst): the controller run over each capture's instances in time
 *      order, idle between them, against the recorded clock, weighted by span (all instances:
 *      the history a clock depends on holds the held-out ops too); the limit, idle draw, time
 *      constant and floor the base's, everything else held; then each power class's FLOP
 *      energy (power_flop_pj_<class>, hw_power_class) from the board power the captures
 *      recorded around its instances (calib_instance.power_w): for each op of a capture with at
 *      least 2 readings inside its instances, the energy that makes the model's draw at its
 *      recorded clock the recorded mean; the class's, their median weighted by span; one
 *      parameter per class with at least 2 such ops and a positive fit; the other classes take
 *      the global energy (0). With at least twice as many ops as parameters, the byte energy is
 *      refitted there too: the one whose class energies draw closest to the readings. A base
 *      whose byte energy was measured (hw power_byte_held) keeps it in both fits. The clock
 *      fit runs the base's limiter: the window limiter where it has power_window_ms.
 * Each stage minimizes the mean |log(predicted / measured)| with Nelder-Mead. The result is the
 * base preset with the fitted values, marked calibrated; the base's own tables and collective
 * models are not kept (a fit starts from its curves). */

#include <stdbool.h>

#include "calib/points.h"
#include "hw/hw.h"
#include "util/err.h"

enum { CALIB_FIT_MIN_POINTS = 3, CALIB_FIT_GEMM_KERNEL_POINTS = 24 };

struct calib_fit_opts {
	bool no_tables;       /* fit the curves only */
	bool no_shape_tables; /* class tables only (what an unseen GEMM shape gets) */
};

struct calib_fit_stage {
	bool fitted;
	int points;           /* training points used */
	double before, after; /* mean |log(predicted / measured)| with the base and the fitted values */
};

/* The model of one collective kind at one rank count. */
struct calib_fit_coll {
	enum hw_coll coll;
	int64_t ranks;
	struct calib_fit_stage stage;
};

struct calib_fit_report {
	struct calib_fit_stage memory, gemm, kda_chunk, kda_verify, comm;
	/* the MXFP4 grouped kernel's expansion rate (hw.h grouped_fp4_*), where the base has its
	 * chunks: before / after are the spread of log(predicted / measured) around its mean */
	struct calib_fit_stage grouped_fp4;
	struct calib_fit_stage sustained; /* the sustained SM clock (hw.h), from points measured so */
	struct calib_fit_stage power;     /* the power model's energies; points: instances, before /
					   * after: span-weighted mean |log| of their clocks */
	/* each power class's FLOP energy (hw power_flop_j_class); points: its runs of one op with
	 * power readings, before / after: their span-weighted mean |log(predicted / recorded draw)|
	 * with the global energy and with the class's */
	struct calib_fit_stage power_class[HW_POWER_CLASS_COUNT];
	/* the HBM byte's energy from the same power readings; points: every run with readings,
	 * before / after: their mean |log| at the clock fit's byte energy and at the draw fit's */
	struct calib_fit_stage power_byte;
	struct calib_fit_coll coll[HW_COLL_MODELS_MAX];
	int n_coll;
	int train_points, held_out_points;
	int tables, gemm_shapes;
};

/* Fit `base` to the training points of pts into *out (base untouched). */
int calib_fit(const struct calib_points *pts, const struct hw *base, const struct calib_fit_opts *o,
              struct hw *out, struct calib_fit_report *rep, struct err *e);

/* The predicted time of point p on hw (sim_op_cost, eager launches). Kernel durations hold no
 * launch gaps: compare them with a preset whose launch latencies are zeroed (calib_device_hw). */
double calib_predict_s(const struct hw *hw, const struct calib_point *p);
/* hw with launch latencies zeroed: what it predicts is device time. */
void calib_device_hw(struct hw *dev, const struct hw *hw);

/* Nelder-Mead: minimize f over x[0..n) (n <= 8) from x with initial steps; returns f(x). */
double calib_nelder_mead(double (*f)(const double *x, void *ctx), void *ctx, double *x, const double *step,
                         int n, int max_iters);

#endif
