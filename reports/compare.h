#ifndef K3_REPORTS_COMPARE_H
#define K3_REPORTS_COMPARE_H

/* Design comparison: the same scenario (hardware, layout, workload, dtypes) for several models
 * over a list of contexts and batch sizes — a sweep model x context x batch — plus, per model and
 * context, the decode throughput at the largest batch that fits, and the crossovers between the
 * designs (the context at which one overtakes another on a metric), found by bisection on the
 * integer context between the swept points. */

#include <stdbool.h>
#include <stdint.h>

#include "sweep/sweep.h"

enum {
	COMPARE_MAX_MODELS = 8,
	COMPARE_MAX_CONTEXTS = 32,
	COMPARE_MAX_BATCHES = 8,
	COMPARE_MAX_CROSSOVERS = 64,
	COMPARE_MAX_CLAIMS = 8
};

struct compare_opts {
	const char *const *models; /* presets or paths; NULL: the scenario's sweep.model, else the defaults */
	int n_models;
	const int64_t *contexts; /* tokens; NULL: sweep.context, else 4K, 8K, ..., 1M */
	int n_contexts;
	const int64_t *batches; /* NULL: sweep.batch, else the scenario's batch */
	int n_batches;
	int threads;
};

enum compare_metric {
	CMP_STATE_KV_PER_REQUEST, /* KDA + ShortConv state + KV cache of one request, all layers */
	CMP_HBM_PER_REQUEST_GPU,  /* the same on one GPU at the layout (state / tp, KV / cp) */
	CMP_TTFT,
	CMP_TPOT, /* at the reference batch */
	CMP_METRIC_COUNT
};

/* The context at which model a becomes better (lower) than model b on a metric, or stops being. */
struct compare_crossover {
	enum compare_metric metric;
	int a, b;                /* model indices */
	int64_t context;         /* the first context (tokens) where the order differs from below it;
	                            0 when the order is the same over the whole range */
	bool a_lower_above;      /* a is the lower one from `context` on (or everywhere, when 0) */
	double a_value, b_value; /* the metric at `context` (or at the smallest context), in its unit */
	char text[512];          /* one sentence for the report */
};

/* DSA: where the indexer's scan overtakes the sparse attention, and half the decode step. */
struct compare_dsa {
	int model;
	int64_t over_sparse; /* smallest context where indexer time > sparse attention time; 0: never */
	int64_t over_half;   /* ... where the indexer is more than half of the decode step; 0: never */
	int64_t over_moe;    /* ... where it is more than the MoE experts' time; 0: never */
	char text[512];
};

/* A published figure set beside the tool's numbers. */
struct compare_claim {
	char what[128];      /* "KV cache at 1M context, Kimi Linear vs full MLA" */
	char published[128]; /* "up to 75% less" */
	char tool[256];      /* "74.1% less (7 of 27 layers keep KV) ..." */
	char source[160];
	double tool_value; /* the number in `tool` (a fraction or a ratio) */
};

struct compare {
	struct sweep_spec spec; /* model x context x batch */
	int n_models, n_contexts, n_batches;
	int ref_batch;          /* index of the scenario's batch among the batches */
	struct sweep_row *rows; /* spec.points rows in point order: row(m, c, b) */
	struct sweep_row *best; /* n_models x n_contexts: at the largest batch that fits
	                           (ok = 0 when not even one request fits); point = spec.points + i */
	struct compare_crossover cross[COMPARE_MAX_CROSSOVERS];
	int n_cross;
	struct compare_dsa dsa[COMPARE_MAX_MODELS];
	int n_dsa;
	struct compare_claim claims[COMPARE_MAX_CLAIMS];
	int n_claims;
	double eval_s; /* wall time of compare_run */
};

/* Evaluates the comparison for a scenario (embedded name or path) whose `sweep:` may give the
 * model, context and batch axes (any other axis is an error at its line). */
int compare_run(struct compare *c, const char *scenario, const struct compare_opts *o, struct err *e);
void compare_release(struct compare *c);

static inline const struct sweep_row *compare_row(const struct compare *c, int m, int ctx, int b)
{
	return &c->rows[((int64_t)m * c->n_contexts + ctx) * c->n_batches + b];
}
static inline const struct sweep_row *compare_best(const struct compare *c, int m, int ctx)
{
	return &c->best[(int64_t)m * c->n_contexts + ctx];
}
const struct model *compare_model(const struct compare *c, int m);
int64_t compare_context(const struct compare *c, int ctx);
int64_t compare_batch(const struct compare *c, int b);
const char *compare_metric_name(enum compare_metric m);

/* State + KV bytes of one request at `context` tokens of KV (all layers, the row's dtypes). */
int64_t compare_request_bytes(const struct sweep_row *r, int64_t context);

#endif
