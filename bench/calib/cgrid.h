#ifndef K3_BENCH_CALIB_CGRID_H
#define K3_BENCH_CALIB_CGRID_H

/* The measurement grid of bench/calib/calib-grid (issue 11): every GEMM K3 runs on one GPU, at
 * every tensor-parallel degree, and the grouped expert GEMMs an expert-parallel rank runs, each
 * at the token counts it sees; plus device copies. CPU code (so `calib-grid --list` and the tests
 * need no GPU); calib-grid.cu only executes the points.
 *
 * Shapes are derived, not listed by hand: the model's step is built and mapped onto one GPU by
 * the simulator itself (sim_step on the embedded scenario with tp, ep changed), for a decode and
 * a prefill step, and every GEMM's per-GPU (n, k) is kept, with where it came from. So a change
 * of the model or of how sim/ splits an op changes what is measured.
 *
 * Every point carries the NVTX text calib-grid puts around each measured instance: a valid
 * `k3sim op` line ("k3sim op=gemm m=64 n=12 k=7168 dtype=bf16",
 * "k3sim op=grouped_gemm m=224 n=6144 k=3584 groups=112 dtype=fp8"), so a capture maps each
 * kernel to the op the model predicts for it.
 *
 * Ownership: a cgrid owns its arrays (cgrid_release frees them). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "util/err.h"

enum cgrid_kind { CGRID_GEMM, CGRID_GROUPED, CGRID_COPY };
enum cgrid_dtype { CGRID_BF16, CGRID_FP8 };

enum {
	CGRID_MAX_SHAPES = 256,
	CGRID_MAX_POINTS = 16384,
	CGRID_SPEC_BYTES = 160,
	CGRID_ORIGIN_BYTES = 512,
};

/* One per-GPU weight shape W[k, n] of a dense GEMM, and the model ops and TP degrees that run
 * it ("kda.beta_proj tp8; mla.kv_a tp1 tp2 tp4 tp8 tp16"). */
struct cgrid_shape {
	int64_t n, k;
	char origin[CGRID_ORIGIN_BYTES];
};

/* One grouped expert GEMM on one EP rank: `groups` experts of W[k, n] each. */
struct cgrid_gshape {
	int64_t n, k;
	int64_t ep, groups;            /* EP degree, experts held by a rank */
	char origin[64];               /* "moe.experts_gate_up ep16" */
};

struct cgrid_point {
	enum cgrid_kind kind;
	enum cgrid_dtype dtype;
	int64_t m, n, k;               /* GEMM: rows (tokens); grouped: rows over all experts */
	int64_t groups, touched;       /* grouped: experts held, experts that get rows */
	int64_t rows_per_group;        /* grouped: rows each touched expert gets (balanced) */
	int64_t bytes;                 /* copy */
	int shape;                     /* index into shapes (GEMM) or gshapes (grouped); -1 copy */
	bool compute_bound;            /* by the estimate: FLOP time above byte time */
	double flops;
	double est_op_s;               /* one instance, by the estimate (cgrid_op_estimate_s) */
	char spec[CGRID_SPEC_BYTES];   /* the NVTX text */
};

struct cgrid_opts {
	bool quick;                    /* about a third of the token counts */
	bool gemm, grouped, copy;      /* which classes */
	bool compute_only;             /* only points the estimate calls compute-bound and
					* longer than min_compute_s (the sustained subset) */
	double min_compute_s;          /* 0: 20 us */
	double max_flops;              /* larger points are left out; 0: 6e12 */
	const char *model;             /* NULL: "kimi-k3" */
	const char *scenario;          /* base layout; NULL: "default" */
};

struct cgrid {
	struct cgrid_shape shapes[CGRID_MAX_SHAPES];
	int n_shapes;
	struct cgrid_gshape gshapes[CGRID_MAX_SHAPES];
	int n_gshapes;
	struct cgrid_point *points;    /* n_points of them */
	int n_points;
	int64_t tp[8], ep[8];          /* the degrees the shapes come from */
	int n_tp, n_ep;
	int64_t experts, top_k;        /* of the model's MoE */
};

/* Build the grid. -EINVAL (no class chosen), -ENOENT (unknown model or scenario, from their
 * loaders), -ENOMEM, -E2BIG (more than CGRID_MAX_* shapes or points). e says why. */
int cgrid_build(struct cgrid *g, const struct cgrid_opts *o, struct err *e);
/* Heap-allocated grid (struct cgrid is large): *out freed with cgrid_free. */
int cgrid_new(struct cgrid **out, const struct cgrid_opts *o, struct err *e);
void cgrid_release(struct cgrid *g);
void cgrid_free(struct cgrid *g);

/* The token counts of the dense GEMMs: powers of two 1 .. 16384 (training) and 3 x 2^k
 * 3 .. 12288 (held out); with quick every third of them. Returns the count written to out
 * (at most max). */
int cgrid_m_values(bool quick, int64_t *out, int max);

/* ---- the time budget ---- */

/* How calib-grid times a point, for the estimate. */
struct cgrid_timing {
	int warmup;                    /* untimed instances first */
	int min_reps, max_reps;        /* timed instances */
	double budget_s;               /* timed instances stop past this (after min_reps) */
	double rep_overhead_s;         /* host round trip per timed instance (burst: synced) */
	double point_overhead_s;       /* heuristic query, descriptors, CSV row, readings */
	bool sustained;                /* a heater GEMM before every instance, no syncs */
	double heat_per_rep_s;         /* sustained: the heater GEMM */
	double preheat_s;              /* sustained: load before the first point */
};

/* calib-grid's defaults for a regime. */
void cgrid_timing_default(struct cgrid_timing *t, bool sustained);
/* Roofline of one instance on an H200 as measured (power-limited BF16 ~660 TFLOP/s, FP8 ~1.2
 * PFLOP/s, ~3.3 TB/s HBM streaming, ~4 us floor): a budget guide, not a model. compute_bound
 * (may be NULL) says whether the FLOP time is the larger term. */
double cgrid_op_estimate_s(const struct cgrid_point *p, bool *compute_bound);
/* Timed instances calib-grid takes of p. */
int cgrid_point_reps(const struct cgrid_point *p, const struct cgrid_timing *t);
double cgrid_point_estimate_s(const struct cgrid_point *p, const struct cgrid_timing *t);
/* The whole grid, preheat included. */
double cgrid_estimate_s(const struct cgrid *g, const struct cgrid_timing *t);

const char *cgrid_kind_name(enum cgrid_kind k);
const char *cgrid_dtype_name(enum cgrid_dtype d);

#ifdef __cplusplus
}
#endif

#endif
