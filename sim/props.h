#ifndef K3_SIM_PROPS_H
#define K3_SIM_PROPS_H

/* Physical sanity of a hardware preset, checked on random ops and scenarios (`k3sim check`).
 *
 * Properties:
 *   - every op's time is finite, positive and at least its floor (op_cost.floor_s: launch gaps +
 *     max(FLOPs / peak rate, bytes / peak bandwidth));
 *   - an op never gets faster when one of its sizes grows (m, n, k, tokens, heads, context,
 *     bytes, ranks, ...; not the KDA chunk length, a kernel choice), within a tolerance;
 *   - a scenario's TPOT never falls when the batch, the prompt or the output grows, and its TTFT
 *     never falls when the prompt grows, within the same tolerance.
 * Ops are drawn as `k3sim op` lines (opspec), so every violation comes with the command that
 * reproduces it. Draws are seeded: the same seed gives the same draws. Library code: nothing is
 * printed; the report holds the first violations of each kind and the counts. */

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "util/err.h"

enum sim_props_kind {
	SIM_PROPS_INVALID,    /* time not finite or not positive */
	SIM_PROPS_FLOOR,      /* below the physical floor */
	SIM_PROPS_OP_GROWTH,  /* faster with a larger size */
	SIM_PROPS_STEP_BATCH, /* TPOT fell with a larger batch */
	SIM_PROPS_STEP_CONTEXT, /* TPOT fell with a longer prompt or output, or TTFT with a longer prompt */
	SIM_PROPS_KIND_COUNT
};

const char *sim_props_kind_name(enum sim_props_kind k);

enum { SIM_PROPS_KEEP = 64, SIM_PROPS_CMD_MAX = 384 };

struct sim_props_opts {
	uint64_t seed;
	int64_t ops;         /* random ops, each checked against its floor and one grown copy */
	int64_t scenarios;   /* random scenario pairs (one grown axis each) */
	double tolerance;    /* allowed fall, as a fraction (0.05: 5 %) */
	struct hw_clock_sel clock; /* boost when zeroed */
	const char *hw_name; /* what --hw the reproducing commands name */
};

struct sim_props_violation {
	enum sim_props_kind kind;
	char before[SIM_PROPS_CMD_MAX]; /* the command (and for growth, the smaller one) */
	char after[SIM_PROPS_CMD_MAX];  /* the grown one ("" for floor/invalid) */
	double before_s, after_s;       /* times; floor: the time and the floor */
	char what[64];                  /* "tpot_s", "ttft_s", "time_s" */
};

struct sim_props_report {
	int64_t ops_checked, scenarios_checked;
	int64_t count[SIM_PROPS_KIND_COUNT];
	int64_t violations;
	double worst_fall; /* largest relative fall seen among growth checks (0 when none fell) */
	int n;             /* kept violations, at most SIM_PROPS_KEEP, each kind its share first */
	struct sim_props_violation v[SIM_PROPS_KEEP];
};

/* Checks hw; r is overwritten. Returns 0 (violations are in r, not an error) or a negative
 * error (an op list that does not parse, an embedded scenario that does not load). */
int sim_props_check(const struct hw *hw, const struct sim_props_opts *o, struct sim_props_report *r,
		    struct err *e);

#endif
