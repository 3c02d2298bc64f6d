#ifndef K3_SIM_POWER_H
#define K3_SIM_POWER_H

/* The power limit as a clock controller (`--clock power`): the clock of an op depends on the
 * power drawn by what ran before it.
 *
 * Draw. An op at SM clock f draws
 *     P(f) = P_idle + A (f / f_boost)^k + (e_flop * flops * (f / f_boost)^g + e_byte * hbm_bytes) / t(f),
 * its dynamic energy over its time: a FLOP's energy (e_flop of the op's power class, enum
 * hw_power_class: the FLOPs of a tensor-core GEMM, of the mma.sync-bound MLA decode and of vector
 * work do not cost the same; the global one where the preset has no class's; the op's FLOPs as the model counts them,
 * tensor or vector, with the on-chip data movement that comes with them) scales with the clock to
 * the power g (hw power_flop_clock_exp; 2, the voltage following the clock, where the preset has
 * none; a cuBLAS GEMM held at the limit at five clocks measured 0.7: bench/results/
 * clock-probe-h200-2026-12-03/); an HBM byte's does not (the memory clock is fixed). A, the
 * class's active draw (hw power_active_w_<class>; 0 where the preset has none), is what a busy
 * chip draws whatever it computes, scaling as (f / f_boost)^k (hw power_active_clock_exp; 1): fitted
 * to 0 on the lagged readings inside the bench's ops (2026-12-02, bench/results/
 * k3-kernels-h200-2026-12-02w/README.md), measured on ops run back to back for 1.5 s at 100-440 W
 * (bench/results/op-sustained-h200-2026-12-04/: this project's MXFP4 expert gemv ~440 W at every
 * batch, its dense GEMMs ~340). t(f) is the cost model's time
 * (sim/cost.h), interpolated linearly in 1 / f between the boost clock and the floor (a
 * compute-bound op's time is linear in 1 / f, a memory-bound op's constant), as a roofline in the
 * clock: max(t(boost), b t(f)), b the share of the boost time its class's SM-clocked work takes
 * (hw clock_bound; 1 where the preset has none).
 *
 * Limiter. The board filters its power, first order with time constant tau, and holds the
 * filtered power at the limit by lowering the clock: an op whose draw at boost is within the
 * limit runs at boost; one above it runs at boost until the filtered power reaches the limit,
 * then at the clock where its draw equals the limit (never below the floor: there the filtered
 * power may pass the limit). An idle GPU's filtered power is P_idle, so a short burst after idle
 * runs at boost and a long compute-bound stretch settles where its draw meets the limit.
 *
 * The coefficients are the preset's (struct hw power_*; hw.h). All functions are pure and
 * thread-safe. */

#include <stdbool.h>

#include "hw/hw.h"
#include "model/ops.h"

/* An op as the controller needs it: its time at boost and at the floor clock (seconds, the
 * floor's at least the boost's; the floor's as the physical model scales it whole, cost_opts
 * full_clock_scaling: sim_power_time_s applies the class's clock_bound), its FLOPs and HBM bytes,
 * and its power class (the energy of its FLOPs: hw power_flop_j_class, the global power_flop_j
 * where the class has none; its clock_bound). */
struct sim_power_op {
	double boost_s, floor_s;
	double flops; /* the FLOPs its energy counts: FP8 tensor math at power_flop_fp8_scale (hw.h) */
	double hbm_bytes;
	double welems; /* MXFP4 weight elements the tiled grouped kernel expands (hw power_welem_j) */
	enum hw_power_class klass;
};

/* The active draw of class c at clock ratio v = clock / boost, W: hw power_active_w_<class> x
 * v^power_active_clock_exp (1 where the preset has none); 0 for a class without it and out of
 * range (a collective: HW_POWER_CLASS_COUNT, which draws nothing of its own). */
double sim_power_active_w(const struct hw *hw, enum hw_power_class c, double v);

/* Whether class c's draw was measured whole (its active draw set): calibrate keeps its FLOP
 * energy and active draw as the base preset has them. */
bool sim_power_class_held(const struct hw *hw, enum hw_power_class c);

/* An op's power view from its times at boost and at the floor clock (seconds; a collective draws
 * nothing of its own: class HW_POWER_CLASS_COUNT, no FLOPs or bytes): its FLOPs as their energy
 * counts them (FP8 tensor math at power_flop_fp8_scale), its HBM bytes and its class. The one
 * place that makes a sim_power_op, for `k3sim op` and the step's controller alike. */
void sim_power_op_from(const struct hw *hw, const struct op *op, double boost_s, double floor_s,
		       struct sim_power_op *out);

/* The power class of an op (by kind; the MXFP4 routed experts that hw runs as gemvs, at most
 * grouped_fp4_gemv_rows rows a touched expert: HW_POWER_GROUPED_GEMV, issue-bound on the weights'
 * expansion; collectives: HW_POWER_VECTOR, they draw nothing of their own). */
enum hw_power_class sim_power_class(const struct hw *hw, const struct op *op);

/* The energy of a FLOP of class c at boost, J: the class's where the preset has it, else the
 * global one. */
double sim_power_flop_j(const struct hw *hw, enum hw_power_class c);

/* A FLOP's energy at clock ratio v = clock / boost over its energy at boost: v^power_flop_clock_exp
 * (2 where the preset has none). */
double sim_power_flop_scale(const struct hw *hw, double v);

/* The share of a class's boost time bound by the SM clock (hw clock_bound; 1 where the preset has
 * none): below boost its time is max(boost time, share x the physical model's scaled time). */
double sim_clock_bound(const struct hw *hw, enum hw_power_class c);

/* The share of a class's boost time that runs on the SM clock whatever the physical model says
 * (hw clock_sm_share; 0 where the preset has none): below boost its time is at least boost time x
 * (1 - share + share x boost / clock). */
double sim_clock_sm_share(const struct hw *hw, enum hw_power_class c);

/* The op costed on its own (sim_op_cost, eager launches) at boost and at the floor; a
 * collective draws nothing of its own (class HW_POWER_CLASS_COUNT). */
void sim_power_op_cost(const struct hw *hw, const struct op *op, struct sim_power_op *out);

/* The limiter's state: the filtered power, W. */
struct sim_power_state {
	double filtered_w;
};

/* Whether the preset has the power model (its limit is set; the loader checks the rest). */
bool sim_power_known(const struct hw *hw);

/* An idle GPU: the filtered power at P_idle. */
void sim_power_idle(const struct hw *hw, struct sim_power_state *st);

/* The GPU idle for gap_s seconds: the filtered power decays towards P_idle. */
void sim_power_rest(const struct hw *hw, struct sim_power_state *st, double gap_s);

/* The op's time at clock_hz (seconds; clock_hz in [floor, boost]): max(boost_s, bound x the
 * interpolation above), bound the class's sim_clock_bound. */
double sim_power_time_s(const struct hw *hw, const struct sim_power_op *op, double clock_hz);

/* The op's draw at clock_hz, W. */
double sim_power_draw_w(const struct hw *hw, const struct sim_power_op *op, double clock_hz);

/* Runs the op from state st (updated): its time in seconds; *clock_hz (may be NULL) gets the one
 * clock that gives that time (the controller's clocks over the op, as one). */
double sim_power_run(const struct hw *hw, struct sim_power_state *st, const struct sim_power_op *op,
		     double *clock_hz);

/* The clock the op settles at when run back to back (the filtered power at its draw): boost
 * where its draw at boost is within the limit, else where its draw meets the limit (at least
 * the floor). */
double sim_power_steady_hz(const struct hw *hw, const struct sim_power_op *op);

/* The mean draw (W) of n ops run back to back at clock_hz, op i count[i] times (its energy over
 * its time, summed, over their times summed, plus P_idle): a collective adds time at P_idle. */
double sim_power_mix_draw_w(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n,
			    double clock_hz);

/* The same with op i at its own clock clock_hz[i] (a step under the power regime: its ops' clocks
 * differ): W, and *busy_s (may be NULL) the ops' time summed, s. */
double sim_power_mix_draw_at_w(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n,
			       const double *clock_hz, double *busy_s);

/* The one clock at which n ops replayed back to back for long (op i count[i] times per period)
 * hold the filtered power at the limit: a period short against the limiter's response sees its
 * mean draw (sim_power_mix_draw_w), so boost where that is within the limit, else where it meets
 * the limit (at least the floor). The mean draw falls with the clock (never faster at a lower
 * clock), so the clock is unique. */
double sim_power_mix_hz(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n);

/* The clock whose time (sim_power_time_s) is time_s: boost at or below the boost time, the floor
 * at or above the floor's. */
double sim_power_clock_for(const struct hw *hw, const struct sim_power_op *op, double time_s);

/* The window limiter (the preset's power_window_ms, hw power_window_s > 0), in the place of the
 * filtered-power controller above wherever a sequence of ops is run (a step, a capture's kernels):
 * the limiter sets one clock for what runs now from the mean draw of the last window_s seconds,
 * so an op that draws under the limit runs at the clock the ops before it set, not at boost
 * (the slices of rounds 22-24 ran MLA prefill and the ShortConv at the clock of the GEMMs around
 * them, ~1600 MHz, where the bench ran them alone at boost: bench/results/
 * k3-kernels-h200-2026-12-03y/README.md). An op's clock is the one at which the ops of the window
 * that ends with it (the op whole, and before it what ran in the window_s seconds before its end,
 * idle gaps at P_idle), all run at that clock, draw the limit on average; boost where they draw
 * less there (never below the floor). An op longer than the window sets its own clock
 * (sim_power_steady_hz); a burst after idle counts the idle in its window.
 *
 * With a delay (hw power_delay_s > 0, h200 since 2026-12-03: the delayed limiter) the clock is a
 * function of time instead: every 0.5 ms it moves towards the target, the clock at which what ran
 * in [now - delay - window, now - delay) draws the limit on average (each op by the share of its
 * work in that span, idle at P_idle), with time constant power_rise_s up and power_fall_s down (0:
 * at once); an op's clock is the one that gives it the time it took (sim_power_clock_for). So a
 * light op shorter than the delay after heavy ones runs at their clock, a heavy burst shorter than
 * the delay after idle at boost: the in-kernel probe's step response (the clock held 15-40 ms,
 * then most of the way within ~100 ms, falling faster than it rises; bench/results/
 * power-limiter-2026-12-03/step-fit.md). */
bool sim_power_windowed(const struct hw *hw);

/* Each of n op instances' clocks under the window limiter, into clock_hz[k] (Hz): instance k runs
 * ops[seq[k]] (seq NULL: ops[k]) after gap_s[k] seconds idle (gap_s NULL: none). periodic: the
 * sequence repeats back to back (a step in its steady state: the window of the first instances
 * reaches into the previous repetition; a sequence shorter than the window runs at its mix's
 * clock, sim_power_mix_hz); else the GPU was idle before it. The window's membership is taken at
 * the clocks of the previous of three passes (the first at boost). With a delay: periodic, the
 * sequence's mix at its clock before the run, then three repetitions, the clocks those of the
 * last; else idle at boost before it. 0, -EINVAL (the preset has no window) or -ENOMEM. */
int sim_power_window_clocks(const struct hw *hw, const struct sim_power_op *ops, const int *seq, const double *gap_s,
			    size_t n, bool periodic, double *clock_hz);

#endif
