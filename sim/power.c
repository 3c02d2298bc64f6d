#include "sim/power.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cost.h"

enum hw_power_class sim_power_class(const struct hw *hw, const struct op *op)
{
	switch (op->kind) {
	case OP_GEMM:
		return HW_POWER_GEMM;
	case OP_GROUPED_GEMM:
		if (sim_fp4_gemv(hw, op))
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

double sim_power_flop_scale(const struct hw *hw, double v)
{
	const double g = hw->power_flop_clock_exp > 0 ? hw->power_flop_clock_exp : 2;
	return g == 2 ? v * v : pow(v, g);
}

double sim_clock_bound(const struct hw *hw, enum hw_power_class c)
{
	double b = (unsigned)c < HW_POWER_CLASS_COUNT ? hw->clock_bound[c] : 0;
	return b > 0 && b < 1 ? b : 1;
}

double sim_clock_sm_share(const struct hw *hw, enum hw_power_class c)
{
	double s = (unsigned)c < HW_POWER_CLASS_COUNT ? hw->clock_sm_share[c] : 0;
	return s > 0 && s <= 1 ? s : 0;
}

double sim_power_active_w(const struct hw *hw, enum hw_power_class c, double v)
{
	double a = (unsigned)c < HW_POWER_CLASS_COUNT ? hw->power_active_w_class[c] : 0;
	if (!(a > 0))
		return 0;
	const double k = hw->power_active_clock_exp > 0 ? hw->power_active_clock_exp : 1;
	return k == 1 ? a * v : a * pow(v, k);
}

bool sim_power_class_held(const struct hw *hw, enum hw_power_class c)
{
	return (unsigned)c < HW_POWER_CLASS_COUNT && hw->power_active_w_class[c] > 0;
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

/* The FLOPs an op's energy is counted on: its FLOPs, those of FP8 tensor math (GEMMs with FP8
 * or MXFP8 activations) at the preset's power_flop_fp8_scale. */
static double energy_flops(const struct hw *hw, const struct op *op)
{
	const bool fp8 = (op->kind == OP_GEMM || op->kind == OP_GROUPED_GEMM) &&
			 (op->a_dtype == DT_FP8 || op->a_dtype == DT_MXFP8);
	return fp8 && hw->power_flop_fp8_scale > 0 ? op->flops * hw->power_flop_fp8_scale : op->flops;
}

void sim_power_op_from(const struct hw *hw, const struct op *op, double boost_s, double floor_s,
		       struct sim_power_op *out)
{
	if (op_is_comm(op->kind)) {
		*out = (struct sim_power_op){.boost_s = boost_s, .floor_s = boost_s, .klass = HW_POWER_CLASS_COUNT};
		return;
	}
	/* an FP8 op's weight expansions at the FP8 share as its FLOPs (energy_flops' ratio) */
	const double share = op->flops > 0 ? energy_flops(hw, op) / op->flops : 1;
	*out = (struct sim_power_op){.boost_s = boost_s, .floor_s = fmax(floor_s, boost_s), .flops = energy_flops(hw, op),
				     .hbm_bytes = (double)op_bytes(op),
				     .welems = share * sim_fp4_chunks(hw, op) * (double)op->n * (double)op->k,
				     .klass = sim_power_class(hw, op)};
}

/* The energy at boost of the op's SM-clocked work, J: its FLOPs' and its weight expansions'
 * (both scale with the clock by sim_power_flop_scale). */
static double sm_work_j(const struct hw *hw, const struct sim_power_op *op)
{
	return sim_power_flop_j(hw, op->klass) * op->flops + hw->power_welem_j * op->welems;
}

void sim_power_op_cost(const struct hw *hw, const struct op *op, struct sim_power_op *out)
{
	struct op_cost cb, cf;
	struct cost_opts at = {.clock = {.regime = HW_CLOCK_BOOST}};
	sim_op_cost(hw, op, &at, &cb);
	cf = cb;
	if (!op_is_comm(op->kind)) {
		at.clock = (struct hw_clock_sel){.given_hz = floor_hz(hw)};
		at.full_clock_scaling = true; /* the class's clock_bound: sim_power_time_s */
		sim_op_cost(hw, op, &at, &cf);
	}
	sim_power_op_from(hw, op, cb.time_s, cf.time_s, out);
}

double sim_power_time_s(const struct hw *hw, const struct sim_power_op *op, double clock_hz)
{
	const double fb = hw->sm_clock_hz, ff = floor_hz(hw);
	if (!(ff < fb) || clock_hz >= fb)
		return op->boost_s;
	double x = (1 / fmax(clock_hz, ff) - 1 / fb) / (1 / ff - 1 / fb);
	double t = op->boost_s + (op->floor_s - op->boost_s) * x, b = sim_clock_bound(hw, op->klass);
	return b < 1 ? fmax(op->boost_s, b * t) : t;
}

double sim_power_draw_w(const struct hw *hw, const struct sim_power_op *op, double clock_hz)
{
	double t = sim_power_time_s(hw, op, clock_hz);
	if (!(t > 0))
		return hw->power_idle_w;
	double v = clock_hz / hw->sm_clock_hz;
	double dyn_j = sm_work_j(hw, op) * sim_power_flop_scale(hw, v) +
		       hw->power_byte_j * op->hbm_bytes;
	return hw->power_idle_w + sim_power_active_w(hw, op->klass, v) + dyn_j / t;
}

double sim_power_clock_for(const struct hw *hw, const struct sim_power_op *op, double time_s)
{
	const double fb = hw->sm_clock_hz, ff = floor_hz(hw), b = sim_clock_bound(hw, op->klass);
	/* (a time a rounding above the boost time, e.g. a mean over instances at boost, is the boost
	 * time; an op whose roofline keeps it at its boost time down to the floor has no other) */
	if (time_s <= op->boost_s * (1 + 1e-9) || !(op->floor_s > op->boost_s) || !(ff < fb) ||
	    b * op->floor_s <= op->boost_s)
		return fb;
	time_s /= b; /* the interpolation's time */
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

/* The mean draw of the ops, op i count[i] times, at clock_hz[i] (clock_hz NULL: all at one_hz); the
 * ops' time summed into *busy_s (may be NULL). */
static double mix_draw(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n, double one_hz,
		       const double *clock_hz, double *busy_s)
{
	double e = 0, t = 0;
	for (int i = 0; i < n; i++) {
		if (count[i] <= 0)
			continue;
		double f = clock_hz ? clock_hz[i] : one_hz, ti = sim_power_time_s(hw, &ops[i], f);
		if (!(ti > 0))
			continue;
		e += count[i] * (sim_power_draw_w(hw, &ops[i], f) - hw->power_idle_w) * ti;
		t += count[i] * ti;
	}
	if (busy_s)
		*busy_s = t;
	return t > 0 ? hw->power_idle_w + e / t : hw->power_idle_w;
}

double sim_power_mix_draw_w(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n,
			    double clock_hz)
{
	return mix_draw(hw, ops, count, n, clock_hz, NULL, NULL);
}

double sim_power_mix_draw_at_w(const struct hw *hw, const struct sim_power_op *ops, const int *count, int n,
			       const double *clock_hz, double *busy_s)
{
	return mix_draw(hw, ops, count, n, 0, clock_hz, busy_s);
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

bool sim_power_windowed(const struct hw *hw)
{
	return sim_power_known(hw) && hw->power_window_s > 0;
}

/* A window's ops, summed (each weighted by the share of it inside the window): by power class their
 * times at boost and their extra time at the floor (the physical model's, before the class's
 * clock_bound), their FLOP energy at boost and their byte energy, J, and the idle time in it, s. */
struct window_sum {
	double boost_s[HW_POWER_CLASS_COUNT], extra_s[HW_POWER_CLASS_COUNT];
	double flop_j, byte_j, idle_s;
};

static void window_add(struct window_sum *w, const struct window_sum *x, double share)
{
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		w->boost_s[c] += share * x->boost_s[c];
		w->extra_s[c] += share * x->extra_s[c];
	}
	w->flop_j += share * x->flop_j;
	w->byte_j += share * x->byte_j;
	w->idle_s += share * x->idle_s;
}

/* Whether every class scales whole (clock_bound 1), draws nothing per second busy (no active draw)
 * and a FLOP's energy goes with the clock squared:
 * then a window's time is linear in boost / clock and window_clock takes Newton's steps. */
static bool plain_law(const struct hw *hw)
{
	if (hw->power_flop_clock_exp > 0 && hw->power_flop_clock_exp != 2)
		return false;
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		if (sim_clock_bound(hw, (enum hw_power_class)c) < 1 || hw->power_active_w_class[c] > 0)
			return false;
	return true;
}

/* Class c's time in the window at interpolation weight x (0 at boost, 1 at the floor), s: its ops
 * as one (their kinks at one clock: a class's ops share their law). */
static double class_time_s(const struct hw *hw, const struct window_sum *w, int c, double x)
{
	double b = sim_clock_bound(hw, (enum hw_power_class)c), tc = w->boost_s[c] + w->extra_s[c] * x;
	return b < 1 ? fmax(w->boost_s[c], b * tc) : tc;
}

/* The window's time at interpolation weight x: each class's (class_time_s), the idle time. */
static double window_time_s(const struct hw *hw, const struct window_sum *w, double x)
{
	double t = w->idle_s;
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		t += class_time_s(hw, w, c, x);
	return t;
}

/* A clock's interpolation weight between boost (0) and the floor (1), in 1 / clock. */
static double floor_share(const struct hw *hw, double clock_hz)
{
	const double fb = hw->sm_clock_hz, ff = floor_hz(hw);
	return ff < fb && clock_hz < fb ? (1 / fmax(clock_hz, ff) - 1 / fb) / (1 / ff - 1 / fb) : 0;
}

/* The mean draw of a window's ops at clock_hz, W. */
static double window_draw_w(const struct hw *hw, const struct window_sum *w, double clock_hz)
{
	const double x = floor_share(hw, clock_hz), v = clock_hz / hw->sm_clock_hz;
	double t = window_time_s(hw, w, x);
	if (!(t > 0))
		return hw->power_idle_w;
	double active_j = 0; /* each class's active draw over its time in the window */
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		if (hw->power_active_w_class[c] > 0)
			active_j += sim_power_active_w(hw, (enum hw_power_class)c, v) * class_time_s(hw, w, c, x);
	return hw->power_idle_w + (active_j + w->flop_j * sim_power_flop_scale(hw, v) + w->byte_j) / t;
}

/* The highest clock in [floor, boost] at which the window draws at most the limit. Under the plain
 * law (plain_law), with u = boost / clock the window's dynamic energy over its time, flop_j / u^2 +
 * byte_j against (limit - idle) (boost_s + idle_s + extra_s (u - 1) / (boost / floor - 1)), falls as
 * u grows and is convex in it: Newton's steps from u = 1 (the boost side of the root) rise to the
 * root without passing it. Otherwise (a roofline in the clock, another exponent) the draw still
 * grows with the clock: regula falsi. */
static double window_clock(const struct hw *hw, const struct window_sum *w)
{
	const double cap = hw->power_limit_w, fb = hw->sm_clock_hz, ff = floor_hz(hw);
	if (!(ff < fb) || window_draw_w(hw, w, fb) <= cap)
		return fb;
	if (window_draw_w(hw, w, ff) >= cap)
		return ff;
	if (!plain_law(hw)) {
		/* regula falsi, Illinois's variant (the end kept twice in a row has its value halved):
		 * superlinear on the smooth pieces, the bracket never lost at a kink; lo keeps the side
		 * that draws at most the limit */
		double lo = ff, hi = fb, glo = window_draw_w(hw, w, ff) - cap, ghi = window_draw_w(hw, w, fb) - cap;
		int side = 0;
		for (int i = 0; i < 60 && hi - lo > 1; i++) {
			double x = (lo * ghi - hi * glo) / (ghi - glo);
			if (!(x > lo && x < hi))
				x = 0.5 * (lo + hi);
			double gx = window_draw_w(hw, w, x) - cap;
			if (gx > 0) {
				hi = x;
				ghi = gx;
				if (side == 1)
					glo *= 0.5;
				side = 1;
			} else {
				lo = x;
				glo = gx;
				if (side == -1)
					ghi *= 0.5;
				side = -1;
			}
		}
		return lo;
	}
	double boost_s = 0, extra_s = 0;
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		boost_s += w->boost_s[c];
		extra_s += w->extra_s[c];
	}
	const double lim = cap - hw->power_idle_w, r = fb / ff, b = extra_s / (r - 1);
	const double t0 = boost_s + w->idle_s;
	double u = 1;
	for (int i = 0; i < 32; i++) {
		double h = w->flop_j / (u * u) + w->byte_j - lim * (t0 + b * (u - 1));
		double dh = -2 * w->flop_j / (u * u * u) - lim * b;
		if (!(dh < 0))
			break;
		double step = -h / dh;
		u = fmin(r, u + step);
		if (fabs(step) < 1e-9 * u)
			break;
	}
	return fb / u;
}

static void op_sum(const struct hw *hw, const struct sim_power_op *op, struct window_sum *x)
{
	*x = (struct window_sum){.flop_j = sm_work_j(hw, op),
				 .byte_j = hw->power_byte_j * op->hbm_bytes};
	if ((unsigned)op->klass >= HW_POWER_CLASS_COUNT) { /* a collective: the SMs' draw idle */
		x->idle_s = op->boost_s;
		return;
	}
	x->boost_s[op->klass] = op->boost_s;
	x->extra_s[op->klass] = op->floor_s - op->boost_s;
}

/* The delayed limiter (hw power_delay_s > 0): a piece of the run, [t0, t1) seconds, in which op
 * (-1: idle) did `share` of its work. */
struct piece {
	double t0, t1, share;
	int op;
};

struct delayed_run {
	const struct hw *hw;
	const struct sim_power_op *ops;
	const struct window_sum *op_sums; /* op_sum of each op, by index */
	struct piece *p;
	size_t n, cap;
	/* The window slides (it only moves forward): pieces [lo, hi) lie whole inside the last window
	 * asked for and `inside` is their sum, resummed from the pieces every RESUM windows so that the
	 * running sum's rounding cannot build up. A piece is added once it ends inside the window and
	 * taken off once it starts before it; one across an edge counts by its part (one longer than
	 * the window, under a window of 0.4 ms, lies across both and is never in the sum). */
	size_t lo, hi;
	unsigned windows;
	struct window_sum inside;
	double history_s;     /* the run's start: before it, `before` (idle or the sequence's mix) */
	struct window_sum before; /* what one second before the run holds */
};

enum { RESUM = 1024 };

static int add_piece(struct delayed_run *r, double t0, double t1, int op, double share)
{
	if (!(t1 > t0))
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct piece *p = realloc(r->p, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		r->p = p;
		r->cap = cap;
	}
	r->p[r->n++] = (struct piece){.t0 = t0, .t1 = t1, .share = share, .op = op};
	return 0;
}

/* Piece q's part of a window, weighted by `in`, the seconds of it inside (a share of its work). */
static void piece_add(const struct delayed_run *r, const struct piece *q, double in, struct window_sum *w)
{
	if (q->op < 0)
		w->idle_s += in;
	else
		window_add(w, &r->op_sums[q->op], in / (q->t1 - q->t0) * q->share);
}

/* What ran in [a, b) (b at most the run's present; a and b never move back from one call to the
 * next): each piece by the part of it inside, what came before the run by `before` per second. The
 * pieces whole inside come from the running sum, the one at each edge by its part. */
static void delayed_window(struct delayed_run *r, double a, double b, struct window_sum *w)
{
	*w = (struct window_sum){0};
	if (a < r->history_s)
		window_add(w, &r->before, fmin(b, r->history_s) - a);
	for (; r->hi < r->n && r->p[r->hi].t1 <= b; r->hi++)
		piece_add(r, &r->p[r->hi], r->p[r->hi].t1 - r->p[r->hi].t0, &r->inside);
	for (; r->lo < r->hi && r->p[r->lo].t0 < a; r->lo++)
		piece_add(r, &r->p[r->lo], -(r->p[r->lo].t1 - r->p[r->lo].t0), &r->inside);
	if (++r->windows % RESUM == 0) {
		r->inside = (struct window_sum){0};
		for (size_t i = r->lo; i < r->hi; i++)
			piece_add(r, &r->p[i], r->p[i].t1 - r->p[i].t0, &r->inside);
	}
	window_add(w, &r->inside, 1);
	/* the piece across a (it left the sum) and the one across b (not yet in it) */
	if (r->lo > 0 && r->p[r->lo - 1].t1 > a)
		piece_add(r, &r->p[r->lo - 1], fmin(r->p[r->lo - 1].t1, b) - a, w);
	if (r->hi < r->n && r->p[r->hi].t0 < b)
		piece_add(r, &r->p[r->hi], b - fmax(r->p[r->hi].t0, a), w);
}

/* The delayed limiter over one pass of the sequence from time t (s) and clock *f (both updated):
 * each instance's time into inst_s (NULL: not kept). The clock moves every dt towards the target,
 * the clock at which what ran in [now - delay - window, now - delay) draws the limit, with the
 * rise or fall time constant. */
static int delayed_pass(struct delayed_run *r, const int *seq, const double *gap_s, size_t n, double *t, double *f,
			double *inst_s)
{
	const struct hw *hw = r->hw;
	const double d = hw->power_delay_s, win = hw->power_window_s, fb = hw->sm_clock_hz, ff = floor_hz(hw);
	/* the clock's step: 0.5 ms, finer for a short delay or window, never under 0.1 ms (a 140 s
	 * prefill is then at most 1.4 million steps a pass) */
	const double dt = fmax(1e-4, fmin(5e-4, 0.25 * fmin(d, win)));
	double now = *t, clk = *f, step_end = now;
	for (size_t k = 0; k < n; k++) {
		int i = seq ? seq[k] : (int)k;
		const struct sim_power_op *op = &r->ops[i];
		double gap = gap_s ? gap_s[k] : 0, done = 0, spent = 0;
		for (;;) {
			if (now >= step_end) {
				struct window_sum w;
				delayed_window(r, now - d - win, now - d, &w);
				double target = window_clock(hw, &w);
				double tau = target > clk ? hw->power_rise_s : hw->power_fall_s;
				clk = tau > 0 ? clk + (target - clk) * (1 - exp(-dt / tau)) : target;
				clk = fmin(fb, fmax(ff, clk));
				step_end = now + dt;
			}
			if (gap > 0) {
				double g = fmin(gap, step_end - now);
				if (add_piece(r, now, now + g, -1, 0) < 0)
					return -ENOMEM;
				now += g;
				gap -= g;
				continue;
			}
			double full = sim_power_time_s(hw, op, clk);
			if (!(full > 0) || done >= 1) /* an op of no time */
				break;
			double left = (1 - done) * full, g = fmin(left, step_end - now);
			double share = g >= left ? 1 - done : g / full;
			if (add_piece(r, now, now + g, i, share) < 0)
				return -ENOMEM;
			now += g;
			spent += g;
			done += share;
			if (g >= left)
				break;
		}
		if (inst_s)
			inst_s[k] = spent;
	}
	*t = now;
	*f = clk;
	return 0;
}

/* sim_power_window_clocks under the delayed limiter. Periodic: the sequence's mix before the run
 * (one clock, the one of sim_power_mix_hz), then three repetitions, the clocks read off the last;
 * else an idle GPU at boost before it. */
static int delayed_clocks(const struct hw *hw, const struct sim_power_op *ops, const int *seq, const double *gap_s,
			  size_t n, bool periodic, double *clock_hz)
{
	int n_ops = 0; /* the ops the sequence names: ops[0, n_ops) */
	for (size_t k = 0; k < n; k++) {
		int i = seq ? seq[k] : (int)k;
		if (i + 1 > n_ops)
			n_ops = i + 1;
	}
	struct delayed_run r = {.hw = hw, .ops = ops};
	struct window_sum *sums = malloc((size_t)(n_ops ? n_ops : 1) * sizeof *sums);
	double *inst_s = malloc(n * sizeof *inst_s);
	int rc = -ENOMEM;
	if (!sums || !inst_s)
		goto out;
	for (int i = 0; i < n_ops; i++)
		op_sum(hw, &ops[i], &sums[i]);
	r.op_sums = sums;
	double t = 0, f = hw->sm_clock_hz;
	if (periodic) {
		/* the sequence's mix, per second of it, at the clock where it draws the limit */
		struct window_sum all = {0};
		for (size_t k = 0; k < n; k++) {
			window_add(&all, &sums[seq ? seq[k] : (int)k], 1);
			all.idle_s += gap_s ? gap_s[k] : 0;
		}
		f = window_clock(hw, &all);
		double len = window_time_s(hw, &all, floor_share(hw, f));
		if (len > 0)
			window_add(&r.before, &all, 1 / len);
		else
			r.before.idle_s = 1;
	} else {
		r.before.idle_s = 1;
	}
	for (int rep = 0; rep < (periodic ? 3 : 1); rep++)
		if ((rc = delayed_pass(&r, seq, gap_s, n, &t, &f, inst_s)) < 0)
			goto out;
	for (size_t k = 0; k < n; k++) {
		const struct sim_power_op *op = &ops[seq ? seq[k] : (int)k];
		clock_hz[k] = sim_power_clock_for(hw, op, inst_s[k]);
	}
	rc = 0;
out:
	free(r.p);
	free(inst_s);
	free(sums);
	return rc;
}

int sim_power_window_clocks(const struct hw *hw, const struct sim_power_op *ops, const int *seq, const double *gap_s,
			    size_t n, bool periodic, double *clock_hz)
{
	if (!sim_power_windowed(hw))
		return -EINVAL;
	if (n == 0)
		return 0;
	if (hw->power_delay_s > 0)
		return delayed_clocks(hw, ops, seq, gap_s, n, periodic, clock_hz);
	const double win = hw->power_window_s;
	/* periodic: two repetitions, the clocks read off the second (a window no longer than the
	 * sequence reaches at most one repetition back) */
	const size_t reps = periodic ? 2 : 1, m = reps * n;
	struct window_sum *sum = malloc((m + 1) * sizeof *sum); /* prefix sums of op and gap */
	double *end = malloc((m + 1) * sizeof *end);             /* instance k-1's end, s (at the pass's clocks) */
	double *hz = malloc(m * sizeof *hz);
	int rc = -ENOMEM;
	if (!sum || !end || !hz)
		goto out;
	for (size_t k = 0; k < m; k++)
		hz[k] = hw->sm_clock_hz;
	sum[0] = (struct window_sum){0};
	for (size_t k = 0; k < m; k++) {
		const struct sim_power_op *op = &ops[seq ? seq[k % n] : (int)(k % n)];
		struct window_sum x;
		op_sum(hw, op, &x);
		x.idle_s = gap_s ? gap_s[k % n] : 0;
		sum[k + 1] = sum[k];
		window_add(&sum[k + 1], &x, 1);
	}
	for (int pass = 0; pass < 3; pass++) {
		end[0] = 0;
		for (size_t k = 0; k < m; k++) {
			const struct sim_power_op *op = &ops[seq ? seq[k % n] : (int)(k % n)];
			end[k + 1] = end[k] + (gap_s ? gap_s[k % n] : 0) + sim_power_time_s(hw, op, hz[k]);
		}
		if (periodic && end[n] <= win) {
			/* the window holds the whole sequence and more: its mix */
			double f = window_clock(hw, &sum[n]);
			for (size_t k = 0; k < m; k++)
				hz[k] = f;
			continue;
		}
		size_t j = 0; /* the first instance whose end is after the window's start */
		for (size_t k = 0; k < m; k++) {
			const struct sim_power_op *op = &ops[seq ? seq[k % n] : (int)(k % n)];
			double t_k = sim_power_time_s(hw, op, hz[k]);
			double start = end[k + 1] - fmax(win, t_k);
			while (j < k && end[j + 1] <= start)
				j++;
			struct window_sum w = sum[k + 1];
			/* instances j+1..k whole; instance j (gap, then op) from the window's start */
			struct window_sum x = sum[j + 1], y;
			window_add(&x, &sum[j], -1); /* instance j alone */
			window_add(&w, &sum[j + 1], -1);
			if (j == k) {
				/* the op is the window's last: whole, and its gap from the start */
				y = x;
				double gap = y.idle_s;
				y.idle_s = fmin(gap, fmax(0, end[k] + gap - start));
				w = y;
			} else {
				double gap = x.idle_s, t_j = end[j + 1] - end[j] - gap;
				double op_from = end[j] + gap;
				double share = t_j > 0 ? fmin(1, fmax(0, end[j + 1] - fmax(start, op_from)) / t_j) : 0;
				y = x;
				y.idle_s = 0;
				window_add(&w, &y, share);
				w.idle_s += fmax(0, op_from - fmax(start, end[j]));
			}
			if (start < 0 && !periodic)
				w.idle_s += -start; /* an idle GPU before the sequence */
			hz[k] = window_clock(hw, &w);
		}
		if (periodic) /* the repetition before runs at the same clocks */
			memcpy(hz, hz + n, n * sizeof *hz);
	}
	for (size_t k = 0; k < n; k++)
		clock_hz[k] = hz[(reps - 1) * n + k];
	rc = 0;
out:
	free(hz);
	free(end);
	free(sum);
	return rc;
}
