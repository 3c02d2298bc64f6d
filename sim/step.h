#ifndef K3_SIM_STEP_H
#define K3_SIM_STEP_H

/* A step as a timeline (sim/timeline.h): the ops a scenario maps onto one GPU, laid out layer by
 * layer on compute, communication and side streams by an overlap strategy, and simulated.
 *
 * Parts. Every op has a role (model/ops.h: set where the op is created, never read from its name),
 * and its role a part of the layer: attention prologue (norms, projections), attention core (the
 * attention kernel, the output projection and their collectives), MLP prologue (router), dense
 * FFN, EP dispatch, shared experts, routed experts, EP combine, MLP epilogue (combine weighting,
 * up projection), residual. Data flow between parts is fixed: the routed chain (dispatch ->
 * experts -> combine) and the shared experts both start from the MLP prologue and join at the
 * epilogue; everything else is a chain. The step maps each op onto one GPU by its role's split
 * (op_role_split: which dims tensor and expert parallelism divide).
 *
 * Strategies are data (step.c's table, one row per strategy and phase): how many microbatches,
 * the order of parts in a layer and where a stage ends (a "yield", as SGLang's two-batch-overlap
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
	int comm_sms_reserved;     /* SMs the strategy kept for communication (compute ran on the rest) */
	bool extrapolated;         /* periods were added, not simulated */
};

/* One step of phase p (global batch, as sim_step) laid out and simulated in tl (tl_init'ed with at
 * least SIM_TL_EVENTS / SIM_TL_DEPS; reset here). The scenario's overlap `auto` is two-batch
 * overlap where EP crosses NVLink domains and it takes less time than none (both are simulated),
 * else none. With acc, the mapped ops' costs times `weight`
 * are added to its rows and timing (as sim_step). Returns 0, -E2BIG when an op list or the
 * timeline overflowed, -EINVAL when an op has no role, or -EDEADLK (a bug in a strategy); the
 * last two are bugs. */
int sim_step_timeline(const struct scenario *s, const struct model *m, const struct hw *hw,
		      const struct phase *p, const struct sim_step_opts *o, struct timeline *tl,
		      struct sim_phase *acc, double weight, struct sim_step_timing *out);

/* What the scenario's overlap means for a step of phase p: itself, or for `auto` the faster of
 * none and two-batch overlap where EP crosses NVLink domains (none elsewhere). */
int sim_step_overlap(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		     enum scenario_overlap *out);

/* SMs a strategy (not auto) keeps for communication in a step of phase p: under two-batch overlap
 * in prefill and single-batch overlap, DeepEP normal kernels' `ep.sms` (compute launched on the
 * rest, as SGLang's deep_gemm_num_sms); none otherwise (NCCL, low-latency kernels, decode TBO). */
int sim_step_reserved_sms(const struct scenario *s, const struct hw *hw, const struct phase *p,
			  enum scenario_overlap ov);

/* Thread-block cluster of the compute kernels, in SMs (the timeline's SM partition): Hopper and
 * Blackwell GEMMs run 2-SM clusters for TMA multicast (CUTLASS's ClusterShape <2,1,1> in the
 * torch._grouped_mm kernels captured on the H200; DeepGEMM multicasts over 2 SMs), so a
 * communication kernel's CTA outside the reserved SMs takes its SM's cluster partner from them too
 * (measured: NCCL's 20- and 32-CTA all-to-all slowed a grouped GEMM beside it to 0.65-0.73 and
 * 0.49-0.59 of its speed; docs/perf/x2-overlap-kcp-2026-12-01.md). */
enum { SIM_GEMM_CLUSTER_SMS = 2 };

/* What an op demands of the GPU alone, for the timeline (sim/timeline.h), from its cost. */
struct sim_demands {
	float sm;   /* share of the SMs: a collective's kernels' (sim_ep_sms); a GEMM with a wave of
		     * tiles or more every SM, progressing with the SMs it gets, memory-bound or not
		     * (persistent kernels, one CTA per SM with its share of the tiles: NCCL beside
		     * torch._grouped_mm slowed it in proportion to the SMs it took, measured on two
		     * H200s), with fewer tiles their share; any other kernel the SMs its compute needs,
		     * or half of them while it streams memory (half the SMs of a Hopper reach most of
		     * the HBM bandwidth) */
	float hbm;  /* share of the HBM bandwidth: memory time over time; a collective moves its
		     * bytes through HBM twice (read to send, write received) */
	float tail; /* share of its time in its last wave of tiles (a GEMM: 1 / waves rounded up),
		     * where its CTAs retire and communication can take SMs; 0 for other ops */
};
void sim_op_demands(const struct hw *hw, const struct op *o, const struct op_cost *c, struct sim_demands *out);

/* KDA context parallelism as the project's kernels run it (kernels/kda/bench/kcp-x2.cu, measured
 * on two H200s: docs/perf/x2-overlap-kcp-2026-12-01.md): the ops a rank other than the first adds
 * after its zero-start pass `kda` (an OP_KDA_CHUNK with per-GPU dims, filled) over cp ranks, in
 * order: [0] kcp.transition, the same pass with v = 0 from the identity (v = K wide: its final
 * state is the segment's transition, its outputs the effective queries); [1]
 * kcp.state_allgather, each rank's transition (K x K) and zero-start state (V x K) per head in
 * FP32 (bytes independent of the context); [2] kcp.scan, the ordered scan; [3] kcp.fixup, the
 * outputs corrected with the true incoming state, an FP32 GEMM on the SIMT units (the measured
 * kernel's form). `act`: the storage dtype of the activations. Fills out (filled ops: costable)
 * and returns SIM_KCP_OPS, or 0 when cp <= 1 or kda is not a KDA chunk pass. */
enum { SIM_KCP_OPS = 4 };
int sim_kcp_ops(const struct op *kda, int64_t cp, enum dtype act, struct op out[SIM_KCP_OPS]);

/* sim_step with the mapped ops' rows in acc from row_base on (a second model's ops beside the
 * first's: MTP's draft module). Returns 0 and the time in *time_s, or a negative errno. */
int sim_step_rows(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		  struct sim_phase *acc, double weight, int row_base, double *time_s);

#endif
