#ifndef K3_PLAN_PLAN_H
#define K3_PLAN_PLAN_H

/* The best deployment under SLOs (`k3sim plan`, docs/PLAN.md): enumerate the layouts a model can
 * run on some GPUs, prune them by divisibility and memory before costing, score the rest with the
 * step model (sim_prefill, sim_decode) and a rate model, combine prefill and decode pools into
 * disaggregated deployments, take the Pareto fronts of tokens/s per GPU against TPOT and TTFT,
 * run the serving simulator (serve_run) on a short list, and recommend one deployment per GPU
 * budget with the reason each runner-up lost.
 *
 * Units. A *unit* is one layout of one replica: hardware, GPUs, attention TP x DP x CP, MoE EP,
 * KDA-state and MLA-cache dtypes. Each unit is costed once per prefill token budget (one
 * sim_prefill each) and once per decode batch (one sim_decode each), and yields its candidates:
 *   colocated  budget x batch: a replica that prefills and decodes (engine.prefill_tokens = the
 *              budget, workload.batch = batch x DP: `k3sim run` on its scenario gives the same
 *              TTFT, TPOT and HBM, bit for bit);
 *   prefill    budget: a prefill pool replica of a disaggregated deployment (CP 1);
 *   decode     batch: a decode pool replica (CP 1; HBM without the prefill's activations).
 * A unit pruned before costing (layout or weights) is one candidate row of kind colocated with
 * batch and budget 0. Candidate ids are unit x PLAN_UNIT_ROWS + the row within the unit, so they
 * do not depend on threads or shards.
 *
 * The rate model (first pass). With prefix hit h, a prompt costs (1 - h) of its prefill. A
 * prefill replica completes R_p = prompts per step / (ttft x (1 - h)) prompts per second; a
 * decode replica R_d = batch x DP / (osl x tpot) requests per second. A queue of prefills served
 * in S seconds each at utilization u waits u S / (2 (1 - u)) on average (M/D/1); its p90 TTFT is
 * taken as S + twice that (plan_queue_p90_s), so the TTFT SLO allows u <= 1 - S / SLO
 * (plan_queue_share). A colocated replica alternates prefill and decode steps, and a prefill step
 * stalls every DP group (they meet at the MoE): with arrivals spread over the groups a step carries
 * one group's prompts, so its R_p counts one group's prompts per step. Saturated at
 * R = 1 / (1/R_p + 1/R_d); its
 * decode steps stretched by the prefills between them (TPOT tpot / (1 - r / R_p) at r requests/s);
 * a prompt served in S = ttft (1 - h) + one decode step. Its rate r is the largest meeting both:
 * min(R, R_p (1 - tpot / SLO_tpot), R (1 - S / SLO_ttft)). A disaggregated deployment of a prefill
 * and b decode replicas sustains min(a R_p (1 - S / (SLO_ttft - x)), b R_d), x the KDA state and
 * MLA cache transfer over the NIC; TPOT the decode pool's. Where the unloaded latencies (S, tpot)
 * already miss an SLO the candidate is scored saturated and its goodput is 0. Throughput per GPU
 * is output tokens per second over the GPUs; goodput the same where the SLOs are met, else 0.
 *
 * Serving (second pass). The short list (per budget the best `short_list` colocated and
 * disaggregated deployments by first-pass goodput) is served with Poisson arrivals of fixed-length
 * requests (or the workload trace, time-scaled) by serve_run; the serving goodput is the highest
 * arrival rate at which at least `attainment` of the requests meet both SLOs (DistServe's
 * definition), found by bisection, times the mean output over the GPUs. The step-cost tables are
 * built once per deployment and reused by every probe (serve_opts.tables).
 *
 * Determinism: the same spec gives the same rows, fronts, serving results and recommendations
 * bit for bit, for any thread count and any sharding (shards evaluate units i with i % N == K-1).
 *
 * Library code: nothing here prints. Functions return 0 or a negative errno and fill a struct err. */

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "model/model.h"
#include "serve/serve.h"
#include "sim/scenario.h"
#include "util/err.h"

enum {
	PLAN_MAX_HW = 8,
	PLAN_MAX_VALUES = 32,         /* per axis */
	PLAN_MAX_UNITS = 1000000,     /* units of one spec (all shards) */
	PLAN_MAX_ROWS = 1000000,      /* candidate rows held in memory by one process */
	PLAN_MAX_SHORT = 16,          /* short list per budget and kind */
	PLAN_MAX_SERVE_REQUESTS = 100000,
};

enum plan_mode {
	PLAN_MODE_ALL,      /* colocated and disaggregated deployments */
	PLAN_MODE_COLOC,    /* colocated only */
	PLAN_MODE_DISAGG,   /* disaggregated only */
	PLAN_MODE_PREFILL,  /* a prefill pool alone: prompt tokens/s per GPU under the TTFT SLO */
	PLAN_MODE_DECODE,   /* a decode pool alone: output tokens/s per GPU under the TPOT SLO */
	PLAN_MODE_COUNT
};
const char *plan_mode_name(enum plan_mode m);
int plan_mode_parse(const char *s, enum plan_mode *out);

enum plan_kind { PLAN_KIND_COLOC, PLAN_KIND_PREFILL, PLAN_KIND_DECODE, PLAN_KIND_COUNT };
const char *plan_kind_name(enum plan_kind k);

/* Why a candidate stands where it does. */
enum plan_status {
	PLAN_ST_OK,     /* evaluated; its estimated latencies meet the SLOs */
	PLAN_ST_SLO,    /* evaluated; an estimated latency misses its SLO (reason says which) */
	PLAN_ST_MEMORY, /* pruned: does not fit in HBM (reason: what it needs) */
	PLAN_ST_LAYOUT, /* pruned: the layout does not divide (reason: what) */
	PLAN_ST_COUNT
};
const char *plan_status_name(enum plan_status s);

/* The axes of the search. Empty lists take the defaults (plan_spec_finish): */
struct plan_axes {
	int64_t gpus[PLAN_MAX_VALUES];   /* GPUs per replica and the budgets (required) */
	int n_gpus;
	int64_t tp[PLAN_MAX_VALUES];     /* default 1, 2, 4, 8, 16 */
	int n_tp;
	int64_t cp[PLAN_MAX_VALUES];     /* default 1..16 with at least 16,384 prompt tokens per rank */
	int n_cp;
	int64_t ep_div[PLAN_MAX_VALUES]; /* EP = GPUs / ep_div; default 1, 2, 4 */
	int n_ep_div;
	int64_t batch[PLAN_MAX_VALUES];  /* decode requests per attention DP group; default 1, 2, 4,
					  * ..., 1024 (the first that does not fit ends the list) */
	int n_batch;
	int64_t budget[PLAN_MAX_VALUES]; /* prefill tokens per step per DP group; default 4096, 8192,
					  * 16384, 32768 */
	int n_budget;
	enum dtype kda[4];               /* default fp32, bf16 (the base's alone without KDA layers) */
	int n_kda;
	enum dtype mla[4];               /* default bf16, fp8 (the base's alone without MLA layers) */
	int n_mla;
};

/* Rows a unit can yield: colocated budget x batch, prefill per budget, decode per batch, plus the
 * pruned-unit row. */
#define PLAN_UNIT_ROWS (PLAN_MAX_VALUES * PLAN_MAX_VALUES + 2 * PLAN_MAX_VALUES + 1)

struct plan_spec {
	/* inputs (set by the caller before plan_spec_finish) */
	char base_src[512];            /* the base scenario: an embedded name or a path ("default") */
	char model_name[256];          /* "" : the base's */
	char hw_names[PLAN_MAX_HW][256];
	int n_hw;                      /* 0: the base's */
	struct plan_axes ax;
	int64_t isl, osl;              /* prompt and output tokens; 0: the base's workload (or the
					* trace's means) */
	double prefix_hit;             /* share of each prompt found in the prefix cache, [0, 1) */
	double slo_ttft_s, slo_tpot_s; /* > 0 */
	enum plan_mode mode;
	int short_list;                /* per budget and kind (0: no serving pass) */
	double attainment;             /* share of requests meeting both SLOs, (0, 1] (0.9) */
	int64_t serve_requests;        /* per serving probe; 0: 2 x the deployment's decode slots,
					* clamped to [300, 1000] */
	uint64_t seed;
	char workload[512];            /* a trace (serve/serve.h formats) or "" */

	/* derived by plan_spec_finish */
	struct scenario base;          /* model, engine, ep, other dtypes, clock: kept for every unit */
	struct model *model;           /* owned */
	struct hw *hw[PLAN_MAX_HW];    /* owned */
	struct serve_workload trace;   /* the workload trace (n = 0 without one) */
	double trace_rate_per_s;       /* its requests over its span */
	int64_t units;
	char description[8192];        /* canonical text of every input (stored with results) */
	uint64_t hash;                 /* FNV-1a of description */
};

/* Defaults: every list empty, prefix 0, attainment 0.9, short list 2, seed 1, mode all; base is
 * the embedded default scenario's. */
void plan_spec_init(struct plan_spec *sp);
/* Checks the inputs (errors name the flag's subject: "--gpus: ..."), loads model, hardware and
 * trace, fills the default axes, counts units, writes description and hash. On failure the spec
 * holds nothing to release beyond what plan_spec_release frees. */
int plan_spec_finish(struct plan_spec *sp, struct err *e);
void plan_spec_release(struct plan_spec *sp);

/* "A..B" (A, 2A, 4A, ... below B, then B), "A,B,C" or "A": GPU counts (ascending, distinct). */
int plan_parse_gpus(const char *s, int64_t *out, int *n, struct err *e);
/* "1,2,4": a list of positive integers (distinct). */
int plan_parse_ints(const char *what, const char *s, int64_t *out, int *n, struct err *e);
/* "2s", "50ms", "250us", "0.5": seconds (> 0). */
int plan_parse_seconds(const char *what, const char *s, double *out, struct err *e);

/* One candidate: every column of the candidates table (reports/plandb.h lists them). */
struct plan_cand {
	int64_t id, unit;
	char kind[12];            /* plan_kind_name */
	char hw[64];
	int64_t gpus, tp, dp, cp, ep;
	int64_t budget;           /* prefill tokens per step per DP group (0: decode rows) */
	int64_t batch;            /* decode requests per DP group (0: prefill rows) */
	char kda_state[8], mla_cache[8];
	char status[12];          /* plan_status_name */
	char reason[200];
	/* the step model (0 where the kind has no such phase; every output 0 when pruned) */
	double ttft_s;            /* the prefill of one step's prompts, chunk by chunk */
	int64_t prompts_per_step; /* over the DP groups */
	double prefill_tokens_per_s_per_gpu;
	double tpot_s, decode_step_s;
	double decode_tokens_per_s_per_gpu; /* batch x DP / tpot over the GPUs */
	double decode_compute_s, decode_memory_s, decode_latency_s, decode_comm_s; /* ops by bound */
	double decode_exposed_comm_s, prefill_critical_comm_s;
	int64_t hbm_weights, hbm_total, hbm_capacity; /* per GPU, bytes */
	/* the rate model */
	double rate_per_s;        /* requests (prefill: prompts) per second a replica sustains: within
				   * the SLOs where it can meet them, else saturated */
	double est_ttft_s, est_tpot_s; /* at that rate (TTFT: the p90 estimate) */
	double tokens_per_s_per_gpu;  /* sustained output tokens per s per GPU (prefill rows: prompt
				       * tokens) */
	double goodput_tokens_per_s_per_gpu; /* the same when the estimates meet the SLOs, else 0 */
};

/* A disaggregated deployment: a prefill replicas of cand `prefill` and b of cand `decode`. */
struct plan_pd {
	int64_t id;
	int64_t budget_gpus;      /* the budget it was formed for */
	int64_t prefill, decode;  /* candidate ids */
	int64_t a, b;             /* replicas */
	int64_t gpus;             /* a x prefill GPUs + b x decode GPUs */
	double rate_per_s, transfer_s, est_ttft_s, est_tpot_s;
	double tokens_per_s_per_gpu, goodput_tokens_per_s_per_gpu;
	bool meets;
};

/* A deployment of the short list and what serving it showed. */
struct plan_served {
	bool pd;
	int64_t cand;             /* colocated: its candidate id; P/D: the plan_pd id */
	int64_t replicas;         /* colocated replicas simulated (1) */
	int64_t gpus;             /* simulated */
	double est_rate_per_s;    /* the first pass's sustained rate (all simulated replicas) */
	double rate_per_s;        /* the highest rate found meeting the attainment (0: none) */
	double goodput_tokens_per_s_per_gpu;
	int probes;
	int64_t requests;         /* per probe */
	/* at rate_per_s (or at the lowest probe when none met it) */
	double attainment, ttft_p90_s, tpot_p90_s, ttft_p50_s, tpot_p50_s, throughput_tokens_per_s;
	bool capped;              /* met at the highest probe: the goodput is at least this */
	char reason[200];         /* why the goodput is 0 or where it stopped */
};

/* A point of a Pareto front. */
struct plan_point {
	bool pd;
	int64_t ref;              /* candidate id or plan_pd id */
	int hw;                   /* index in spec->hw */
	double x_s;               /* TPOT or TTFT (estimated) */
	double y;                 /* tokens/s per GPU */
};

/* What lost to the recommendation, and why. */
struct plan_loser {
	bool pd;
	int64_t ref;
	char what[96];            /* the layout in words */
	double goodput_tokens_per_s_per_gpu;
	char why[240];
};

enum { PLAN_MAX_LOSERS = 24 };

struct plan_rec {
	int64_t budget_gpus;
	bool found;
	bool pd;                  /* the recommendation */
	int64_t ref;              /* candidate id (colocated, or the pool of prefill/decode modes)
				   * or plan_pd id */
	int64_t replicas, gpus_used; /* copies of the deployment (a smaller one served, repeated) */
	double goodput_tokens_per_s_per_gpu; /* serving goodput where served, else the first pass's */
	double goodput_tokens_per_s;         /* over the GPUs used */
	bool served;
	int64_t best_coloc, best_pd;         /* -1: none meets the SLOs */
	double coloc_goodput, pd_goodput;    /* per GPU, as goodput above */
	struct plan_loser losers[PLAN_MAX_LOSERS];
	int n_losers;
	char why[400];                       /* why the recommendation won */
};

struct plan_result {
	struct plan_cand *cands;   /* in id order; owned */
	int64_t n_cands;
	struct plan_pd *pd;        /* owned */
	int64_t n_pd;
	struct plan_served *served;
	int n_served;
	struct plan_point *front_tpot, *front_ttft; /* each ascending in x; owned */
	int64_t n_front_tpot, n_front_ttft;
	struct plan_rec recs[PLAN_MAX_VALUES]; /* one per budget (spec->ax.gpus) */
	int n_recs;
	/* counts */
	int64_t units, units_pruned, evaluated, pruned_layout, pruned_memory, slo_missed;
	int64_t sim_calls;         /* sim_prefill + sim_decode calls of the first pass */
	int64_t serve_runs;
};

struct plan_opts {
	int threads;               /* >= 1 */
	int64_t shard_index;       /* 0-based */
	int64_t shard_count;       /* >= 1 */
};

/* First pass of the spec's units in the shard: r->cands (in id order) and the counts. r is the
 * caller's (zeroed by this call). Memory: the candidates kept plus one block of 1024 units' rows.
 * -E2BIG beyond PLAN_MAX_ROWS candidates. */
int plan_first_pass(const struct plan_spec *sp, const struct plan_opts *o, struct plan_result *r, struct err *e);

/* Units in shard k of n. */
int64_t plan_shard_units(int64_t units, int64_t k, int64_t n);

/* From the candidates of every shard (r->cands in id order, counts recomputed here): the P/D
 * deployments, the fronts, the serving pass (o->threads) and the recommendations. */
int plan_finish(const struct plan_spec *sp, const struct plan_opts *o, struct plan_result *r, struct err *e);

void plan_result_release(struct plan_result *r);

/* The largest utilization of a queue of S-second services whose p90 wait, estimated as twice the
 * M/D/1 mean, keeps S + wait within slo_s (0 when S >= slo_s); and that p90 at a utilization. */
double plan_queue_share(double service_s, double slo_s);
double plan_queue_p90_s(double service_s, double utilization);

/* Bytes one request's prefill hands a decode pool: KDA and ShortConv state and the prompt's MLA
 * cache (DSA index included) at these dtypes. */
int64_t plan_transfer_bytes(const struct plan_spec *sp, enum dtype kda, enum dtype mla);

/* The candidate with this id (binary search), or NULL. */
const struct plan_cand *plan_find(const struct plan_result *r, int64_t id);
/* The P/D deployment with this id, or NULL. */
const struct plan_pd *plan_find_pd(const struct plan_result *r, int64_t id);

/* The Pareto front of points (minimize x, maximize y): the indices of the points no other point
 * beats in both (one of equal points: the first given), ascending in x. Writes at most n indices
 * to idx; returns their count. */
int64_t plan_pareto(const struct plan_point *pts, int64_t n, int64_t *idx);

/* A deployment's scenario and serving config, exactly what the serving pass ran at rate_per_s
 * (plan/render.h writes them as YAML). replicas copies: of a colocated candidate's layout, or of
 * both pools of a P/D deployment (the decode pool's layout at the top, the pools in c->prefill /
 * c->decode). */
int plan_deployment(const struct plan_spec *sp, const struct plan_result *r, bool pd, int64_t ref,
		    int64_t replicas, double rate_per_s, int64_t requests, struct scenario *s, struct serve_config *c,
		    struct err *e);

/* The layout in words: "16 x h200 TP8 DP2 EP16, batch 32/DP, 8192 tok/step, fp32/bf16". */
void plan_describe(const struct plan_spec *sp, const struct plan_result *r, bool pd, int64_t ref, char *buf,
		   size_t cap);

#endif
