#ifndef K3_SIM_STEP_H
#define K3_SIM_STEP_H

/* A step as a timeline (sim/timeline.h): the ops a scenario maps onto one GPU, laid out layer by
 * layer on compute, communication and side streams by an overlap strategy, and simulated.
 *
 * Roles. Every op of a layer has a role: attention prologue (norms, projections), attention core
 * (the attention kernel, the output projection and their collectives), MLP prologue (router),
 * dense FFN, EP dispatch, shared experts, routed experts, EP combine, MLP epilogue (combine
 * weighting, up projection, residual). Data flow between roles is fixed: the routed chain
 * (dispatch -> experts -> combine) and the shared experts both start from the MLP prologue and
 * join at the epilogue; everything else is a chain.
 *
 * Strategies are data (step.c's table, one row per strategy and phase): how many microbatches,
 * the order of roles in a layer and where a stage ends (a "yield", as SGLang's two-batch-overlap
 * operation lists spell it), how many stages the first microbatch runs ahead, whether
 * collectives have their own stream, and whether the expert down GEMM and the combine are
 * pipelined in chunks. Ops are issued stage by stage, alternating microbatches (SGLang's
 * _execute_two_batch_raw); each stream runs what it was given in order. A conditional yield ends
 * a stage only when the role before it ended with a collective on the communication stream (a TP
 * all-reduce with attention TP > 1, which SGLang's DP-attention lists do not have), so that the
 * other microbatch computes while it flies.
 *
 * Ranks. The ops are costed on the busiest EP rank (its expert rows scaled by moe_imbalance);
 * collectives synchronize every rank each layer, so the busiest rank's timeline is the step.
 * With `mean_rank`, a second GPU runs the same step at the mean expert load, its collectives
 * grouped with the busiest rank's (for display: it waits at every combine).
 *
 * Speed. Layers repeat (K3: KDA, KDA, KDA, MLA); unless `every_layer`, the timeline holds the
 * layers before the repeating part, three of its periods and the layers after it, and the
 * remaining periods are added at the last simulated period's duration, once two consecutive
 * periods take equally long (else every layer is simulated). */

#include <stdbool.h>

#include "sim/sim.h"
#include "sim/timeline.h"

enum sim_role {
	SIM_ROLE_PRE,       /* before the layers: embedding */
	SIM_ROLE_ATTN_PREP, /* AttnRes, norm, q/k/v and gate projections */
	SIM_ROLE_ATTN_CORE, /* attention / KDA kernels, output projection, TP and CP collectives */
	SIM_ROLE_MLP_PREP,  /* AttnRes, norm, router (and the latent down projection) */
	SIM_ROLE_DENSE,     /* dense FFN */
	SIM_ROLE_DISPATCH,  /* EP dispatch */
	SIM_ROLE_SHARED,    /* shared experts */
	SIM_ROLE_EXPERTS,   /* routed experts */
	SIM_ROLE_COMBINE,   /* EP combine */
	SIM_ROLE_OUTPUT,    /* combine weighting, up projection, TP all-reduce */
	SIM_ROLE_RESIDUAL,  /* the residual (or AttnRes partial-sum) update closing the layer */
	SIM_ROLE_POST,      /* after the layers: final norm, LM head, sampling */
	SIM_ROLE_COUNT
};

const char *sim_role_name(enum sim_role r);
/* The role of a mapped op by its name (model/ops.c and the collectives sim adds); -1 unknown. */
int sim_op_role(const char *name);

/* Timeline storage for one step of one rank, every layer laid out (tl_init capacities; K3 with
 * two-batch overlap takes about 5,000 events); with the mean rank, twice as many. */
enum { SIM_TL_EVENTS = 16384, SIM_TL_DEPS = 49152 };

struct sim_step_opts {
	bool every_layer; /* no periodic extrapolation: every event of the step is in the timeline */
	bool mean_rank;   /* also a GPU at the mean expert load (implies every_layer) */
	int row_base;     /* the first row of acc the ops go to */
};

struct sim_step_timing {
	double time_s;             /* the step */
	double ops_s;              /* its ops one after another (what the step took before overlap) */
	double critical_compute_s; /* the critical path: compute (and copies) */
	double critical_comm_s;    /*   and communication; together time_s */
	double exposed_comm_s;     /* communication running with no compute beside it (busiest rank) */
	double compute_stream_s;   /* busy time of the streams of the busiest rank */
	double comm_stream_s;
	double side_stream_s;
	int microbatches;
	enum scenario_overlap overlap; /* resolved (never OVERLAP_AUTO) */
	bool extrapolated;         /* periods were added, not simulated */
};

/* One step of phase p (global batch, as sim_step) laid out and simulated in tl (tl_init'ed with at
 * least SIM_TL_EVENTS / SIM_TL_DEPS; reset here). The scenario's overlap `auto` is two-batch
 * overlap where EP crosses NVLink domains and it takes less time than none (both are simulated),
 * else none. With acc, the mapped ops' costs times `weight`
 * are added to its rows and timing (as sim_step). Returns 0, -E2BIG when an op list or the
 * timeline overflowed, or -EDEADLK (a bug in a strategy). */
int sim_step_timeline(const struct scenario *s, const struct model *m, const struct hw *hw,
		      const struct phase *p, const struct sim_step_opts *o, struct timeline *tl,
		      struct sim_phase *acc, double weight, struct sim_step_timing *out);

/* What the scenario's overlap means for a step of phase p: itself, or for `auto` the faster of
 * none and two-batch overlap where EP crosses NVLink domains (none elsewhere). */
int sim_step_overlap(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		     enum scenario_overlap *out);

/* sim_step with the mapped ops' rows in acc from row_base on (a second model's ops beside the
 * first's: MTP's draft module). */
double sim_step_rows(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		     struct sim_phase *acc, double weight, int row_base);

#endif
