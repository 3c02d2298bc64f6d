#include "sim/power.h"

#include <math.h>

#include "sim/cost.h"

enum hw_power_class sim_power_class(const struct hw *hw, const struct op *op)
{
	switch (op->kind) {
	case OP_GEMM:
		return HW_POWER_GEMM;
	case OP_GROUPED_GEMM:
		if (op->w_dtype == DT_MXFP4 && op->groups_touched >= 1 &&
		    (double)op->m <= (double)hw->grouped_fp4_gemv_rows * (double)op->groups_touched)
			return HW_POWER_GROUPED_GEMV;
		return HW_POWER_GROUPED_GEMM;
	case OP_MLA_DECODE:
	case OP_DSA_DECODE:
		return HW_POWER_MLA_DECODE;
	case OP_MLA_PREFILL:
	case OP_DSA_PREFILL:
		return HW_POWER_MLA_PREFILL;
	case OP_KDA_CHUNK:
	case OP_KDA_DECODE:
		return HW_POWER_KDA;
	default:
		return HW_POWER_VECTOR;
	}
}

double sim_power_flop_j(const struct hw *hw, enum hw_power_class c)
{
	double e = (unsigned)c < HW_POWER_CLASS_COUNT ? hw->power_flop_j_class[c] : 0;
	return e > 0 ? e : hw->power_flop_j;
}

bool sim_power_known(const struct hw *hw)
{
	return hw->power_limit_w > 0;
}

void sim_power_idle(const struct hw *hw, struct sim_power_state *st)
{
	st->filtered_w = hw->power_idle_w;
}

void sim_power_rest(const struct hw *hw, struct sim_power_state *st, double gap_s)
{
	if (gap_s > 0)
		st->filtered_w = hw->power_idle_w + (st->filtered_w - hw->power_idle_w) * exp(-gap_s / hw->power_tau_s);
}

static double floor_hz(const struct hw *hw)
{
	return fmin(hw->power_min_sm_clock_hz, hw->sm_clock_hz);
}

void sim_power_op_cost(const struct hw *hw, const struct op *op, struct sim_power_op *out)
{
	struct op_cost cb, cf;
	struct cost_opts at = {.clock = {.regime = HW_CLOCK_BOOST}};
	sim_op_cost(hw, op, &at, &cb);
	if (op_is_comm(op->kind)) {
		*out = (struct sim_power_op){.boost_s = cb.time_s, .floor_s = cb.time_s};
		return;
	}
	at.clock = (struct hw_clock_sel){.given_hz = floor_hz(hw)};
	sim_op_cost(hw, op, &at, &cf);
	*out = (struct sim_power_op){.boost_s = cb.time_s, .floor_s = fmax(cf.time_s, cb.time_s), .flops = op->flops,
				     .hbm_bytes = (double)op_bytes(op), .klass = sim_power_class(hw, op)};
}

double sim_power_time_s(const struct hw *hw, const struct sim_power_op *op, double clock_hz)
{
	const double fb = hw->sm_clock_hz, ff = floor_hz(hw);
	if (!(ff < fb) || clock_hz >= fb)
		return op->boost_s;
	double x = (1 / fmax(clock_hz, ff) - 1 / fb) / (1 / ff - 1 / fb);
	return op->boost_s + (op->floor_s - op->boost_s) * x;
}

double sim_power_draw_w(const struct hw *hw, const struct sim_power_op *op, double clock_hz)
{
	double t = sim_power_time_s(hw, op, clock_hz);
	if (!(t > 0))
		return hw->power_idle_w;
	double v = clock_hz / hw->sm_clock_hz;
	double dyn_j = sim_power_flop_j(hw, op->klass) * op->flops * v * v + hw->power_byte_j * op->hbm_bytes;
	return hw->power_idle_w + dyn_j / t;
}

double sim_power_clock_for(const struct hw *hw, const struct sim_power_op *op, double time_s)
{
	const double fb = hw->sm_clock_hz, ff = floor_hz(hw);
	if (time_s <= op->boost_s || !(op->floor_s > op->boost_s) || !(ff < fb))
		return fb;
	if (time_s >= op->floor_s)
		return ff;
	double x = (time_s - op->boost_s) / (op->floor_s - op->boost_s);
	return 1 / (1 / fb + x * (1 / ff - 1 / fb));
}

/* The clock in [floor, boost] where the op draws the limit (the draw grows with the clock): the
 * floor when it draws more even there. */
static double limit_clock(const struct hw *hw, const struct sim_power_op *op)
{
	double lo = floor_hz(hw), hi = hw->sm_clock_hz;
	if (sim_power_draw_w(hw, op, lo) >= hw->power_limit_w)
		return lo;
	for (int i = 0; i < 48 && hi - lo > 1e-3; i++) {
		double mid = 0.5 * (lo + hi);
		if (sim_power_draw_w(hw, op, mid) > hw->power_limit_w)
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

double sim_power_steady_hz(const struct hw *hw, const struct sim_power_op *op)
{
	if (sim_power_draw_w(hw, op, hw->sm_clock_hz) <= hw->power_limit_w)
		return hw->sm_clock_hz;
	return limit_clock(hw, op);
}

double sim_power_mix_draw_w(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n,
			    double clock_hz)
{
	double e = 0, t = 0;
	for (int i = 0; i < n; i++) {
		if (count[i] <= 0)
			continue;
		double ti = sim_power_time_s(hw, &ops[i], clock_hz);
		if (!(ti > 0))
			continue;
		e += count[i] * (sim_power_draw_w(hw, &ops[i], clock_hz) - hw->power_idle_w) * ti;
		t += count[i] * ti;
	}
	return t > 0 ? hw->power_idle_w + e / t : hw->power_idle_w;
}

double sim_power_mix_hz(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n)
{
	const double cap = hw->power_limit_w;
	double lo = floor_hz(hw), hi = hw->sm_clock_hz;
	if (sim_power_mix_draw_w(hw, ops, count, n, hi) <= cap)
		return hi;
	if (sim_power_mix_draw_w(hw, ops, count, n, lo) >= cap)
		return lo;
	for (int i = 0; i < 48 && hi - lo > 1e-3; i++) {
		double mid = 0.5 * (lo + hi);
		if (sim_power_mix_draw_w(hw, ops, count, n, mid) > cap)
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

/* The filtered power after t_s seconds at draw p_w. */
static double settle(const struct hw *hw, double from_w, double p_w, double t_s)
{
	return p_w + (from_w - p_w) * exp(-t_s / hw->power_tau_s);
}

double sim_power_run(const struct hw *hw, struct sim_power_state *st, const struct sim_power_op *op,
		     double *clock_hz)
{
	const double cap = hw->power_limit_w, fb = hw->sm_clock_hz;
	const double pb = sim_power_draw_w(hw, op, fb);
	double t = op->boost_s;
	if (pb <= cap || !(t > 0)) {
		st->filtered_w = settle(hw, st->filtered_w, pb, t);
		if (clock_hz)
			*clock_hz = fb;
		return t;
	}
	/* at boost until the filtered power reaches the limit */
	double t1 = st->filtered_w >= cap ? 0 : hw->power_tau_s * log((pb - st->filtered_w) / (pb - cap));
	if (t1 >= t) {
		st->filtered_w = settle(hw, st->filtered_w, pb, t);
		if (clock_hz)
			*clock_hz = fb;
		return t;
	}
	/* the rest at the clock where the draw meets the limit (or the floor, above it) */
	double f = limit_clock(hw, op);
	double t2 = (1 - t1 / t) * sim_power_time_s(hw, op, f);
	double from = t1 > 0 ? cap : st->filtered_w;
	st->filtered_w = settle(hw, from, sim_power_draw_w(hw, op, f), t2);
	if (clock_hz)
		*clock_hz = sim_power_clock_for(hw, op, t1 + t2);
	return t1 + t2;
}
