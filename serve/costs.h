#ifndef K3_SERVE_COSTS_H
#define K3_SERVE_COSTS_H

/* Step costs for the serving engine, from the timeline (sim_step) as a black box: tables over a
 * grid, evaluated once, then interpolated (a step is one lookup, not one simulation; the hour at
 * 100 req/s runs ~10^5 steps).
 *
 * A step of one replica is described per attention DP group (the busiest one: DP groups step
 * together, joined by the EP all-to-alls) by
 *   B  decode requests (each verifying 1 + k tokens, after k draft steps),
 *   P  prefill tokens, in n sequences with a mean prefix of X cached tokens,
 *   C  the decode requests' mean context.
 * Its time is
 *   P = 0:  M(B, 0) + dD(B, C)
 *   B = 0:  F(n, P) + n dF(P/n, X)
 *   else:   max(M(B, P) + dD(B, C) + n dF(P/n, X),  F(n, P) + n dF(P/n, X))
 * with M(B, P) the mixed step at context 0 (the prefill riding as one chunk, sim's mixed phase;
 * B >= 1), dD(B, C) = D(B, C) - D(B, 0) the decode context's increment (attention grows with the
 * context, the rest does not: the step is affine in it), F(n, P) a prefill step of n sequences of
 * P/n tokens at prefix 0, dF(t, X) = F(1, t) at prefix X - at prefix 0 (attention over the prefix
 * and its expansion, per sequence). With drafts, M and D include the k draft steps.
 *
 * DP groups: the tables hold the step with every attention DP group as loaded as the busiest
 * one and, with dp > 1, the same step with the other groups idle (the MoE and its all-to-alls see
 * one group's tokens instead of dp groups'). A step between the two, `fill` = the groups' tokens
 * over the busiest group's (1..dp), interpolates linearly in fill: a lone request costs what
 * `k3sim run` says it costs, a full replica what every group loaded costs.
 *
 * Monotone: after evaluation every table is made non-decreasing along B, P, C and X (the running
 * maximum; k3sim check bounds the model's own falls at 5 %), and interpolation is piecewise
 * linear between grid points (bilinear in two axes), linear beyond the last point with the last
 * slope, so a step never costs less when B, P, C or X grows. n is not a size: more sequences of
 * the same tokens run shorter KDA chains. */

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "model/model.h"
#include "sim/scenario.h"
#include "util/err.h"

enum { SERVE_GRID_MAX = 48 };

struct serve_costs {
	int nb, np, nn, nc;
	int64_t b[SERVE_GRID_MAX], p[SERVE_GRID_MAX], n[SERVE_GRID_MAX], c[SERVE_GRID_MAX];
	/* [0]: every DP group loaded as the busiest; [1]: the busiest alone (dp > 1 only) */
	double *m[2];   /* nb x np (row b = 0 unused) */
	double *dd[2];  /* nb x nc */
	double *f[2];   /* nn x np */
	double *df[2];  /* np x nc (the prefix axis uses the context grid) */
	int64_t dp;     /* the scenario's attention DP groups */
	bool decode, prefill; /* which tables exist */
	int64_t points;       /* sim_step evaluations */
	int64_t peak_act_bytes; /* largest live activations of a step on one GPU (the largest steps) */
	double build_s;       /* wall time */
	/* what it was built for (serve_costs_opts), so that a run can reuse it (serve_opts.tables) */
	int64_t built_max_b, built_max_p, built_max_ctx, built_draft_tokens;
};

struct serve_costs_opts {
	const struct model *draft; /* the draft model (NULL: no drafts) */
	int64_t draft_tokens;      /* k */
	int64_t max_b, max_p, max_ctx; /* the grid's reach: decode requests and prefill tokens per DP
					* group, context tokens */
	bool decode, prefill;      /* tables to build (P/D pools need one side each) */
	int threads;
};

/* Evaluates the tables for the scenario's layout (pp must be 1). Returns 0, -EINVAL with the
 * reason, -ENOMEM. */
int serve_costs_build(struct serve_costs *c, const struct scenario *s, const struct model *m, const struct hw *hw,
		      const struct serve_costs_opts *o, struct err *e);
void serve_costs_release(struct serve_costs *c);

/* Whether c was built (for the same scenario, model and hardware: the caller's to know) with
 * these options, so that it holds exactly what serve_costs_build would make of them. */
bool serve_costs_match(const struct serve_costs *c, const struct serve_costs_opts *o);

/* Seconds of one step (see above); ctx and prefix may be fractional means; fill is the step's
 * tokens over all DP groups divided by the busiest group's (clamped to 1..dp; dp passes as
 * "every group loaded"). */
double serve_costs_step(const struct serve_costs *c, int64_t b, int64_t p, int64_t n, double ctx, double prefix,
			double fill);

#endif
