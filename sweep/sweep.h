#ifndef K3_SWEEP_SWEEP_H
#define K3_SWEEP_SWEEP_H

/* Sweeps: a scenario and axes of values (context, batch, layout, dtypes, model, hardware); the
 * points are the cartesian product, evaluated in parallel, one row per point.
 *
 * Point order: axes in the order they are declared, the first the slowest (nested loops, the
 * last declared innermost). Point i's value index on axis a is (i / stride_a) % n_a with
 * stride_a the product of the sizes of the axes after a. Every output is in point order.
 *
 * Semantics of the axes (scenarios/README.md has the schema):
 *   context          sets workload.prompt_tokens; output_tokens stays the scenario's, so TTFT is
 *                    the prefill of `context` tokens, TPOT the decode step at context + (output-1)/2
 *                    and HBM is measured at context + output.
 *   batch, prompt_tokens, output_tokens, prefill_chunk   workload keys (prefill_chunk is capped
 *                    at the prompt, per point, from the scenario's uncapped value).
 *   gpus, tp, dp, cp, ep, moe_imbalance, tp_comm         parallel keys. When gpus, tp or cp is
 *                    swept and dp is not, dp = gpus / (tp x cp); when gpus is swept and ep is not,
 *                    ep follows gpus if the scenario's ep was its gpus. A point whose layout does
 *                    not work (tp x dp x cp != gpus, tp not dividing the heads, ...) is a row with
 *                    ok = 0 and the reason in `error`, not a failure of the sweep.
 *   model, hw        presets or paths (relative to the scenario file), loaded once.
 *   kda_state, mla_cache, expert_activations, dispatch   dtypes, as in the scenario's dtypes.
 * Integer axes take a list, one value, or a range {from, to, times} (geometric) or
 * {from, to, step} (arithmetic); `to` is included when the progression reaches it. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hw/hw.h"
#include "model/model.h"
#include "sweep/opclass.h"
#include "sim/scenario.h"
#include "sim/sim.h"
#include "util/err.h"

enum sweep_axis_kind {
	AXIS_CONTEXT,
	AXIS_BATCH,
	AXIS_PROMPT,
	AXIS_OUTPUT,
	AXIS_PREFILL_CHUNK,
	AXIS_GPUS,
	AXIS_TP,
	AXIS_DP,
	AXIS_CP,
	AXIS_EP,
	AXIS_MOE_IMBALANCE,
	AXIS_TP_COMM,
	AXIS_MODEL,
	AXIS_HW,
	AXIS_KDA_STATE,
	AXIS_MLA_CACHE,
	AXIS_EXPERT_ACT,
	AXIS_DISPATCH,
	AXIS_KIND_COUNT
};

enum {
	SWEEP_MAX_AXES = AXIS_KIND_COUNT, /* each kind at most once */
	SWEEP_MAX_VALUES = 65536,         /* per axis */
	SWEEP_MAX_MODELS = 32,
	SWEEP_MAX_HWS = 32,
};
#define SWEEP_MAX_POINTS INT64_C(1000000000)

/* The YAML key of an axis ("context", "kda_state", ...), and the reverse (-EINVAL if unknown). */
const char *sweep_axis_name(enum sweep_axis_kind k);
int sweep_axis_parse(const char *s, enum sweep_axis_kind *out);
/* NULL-terminated list of axis names, for suggestions and help. */
const char *const *sweep_axis_names(void);

struct sweep_axis {
	enum sweep_axis_kind kind;
	int n;          /* values */
	int64_t *iv;    /* integers; dtypes as enum dtype; model/hw: index into the spec's tables;
	                   tp_comm: 0 all-reduce, 1 reduce-scatter + all-gather */
	double *fv;     /* moe_imbalance */
	int64_t stride; /* points between consecutive values (set by sweep_spec_finish) */
	int line, col;  /* where the axis is declared in the scenario file (0: added by hand) */
};

struct sweep_spec {
	struct scenario base;  /* the scenario, as loaded */
	int64_t prefill_chunk; /* the scenario's prefill chunk before capping at the prompt */
	struct sweep_axis axes[SWEEP_MAX_AXES];
	int n_axes;
	struct model *models[SWEEP_MAX_MODELS]; /* owned; models[0] is the scenario's without a model axis */
	char model_src[SWEEP_MAX_MODELS][256];  /* each as given (preset name or path) */
	int n_models;
	struct hw *hws[SWEEP_MAX_HWS]; /* owned */
	int n_hws;
	int64_t points;         /* product of the axis sizes (1 with no axes) */
	char description[4096]; /* canonical text of scenario and axes (stored with results) */
	uint64_t hash;          /* FNV-1a of description: shards of one sweep share it */
};

/* Loads a scenario (embedded name or path) and its `sweep:` axes. Errors in the axes carry the
 * scenario file's line and column. On failure sp is released. */
int sweep_spec_load(struct sweep_spec *sp, const char *name_or_path, struct err *e);
/* The same from text; `name` is the file name errors carry. */
int sweep_spec_load_yaml(struct sweep_spec *sp, const char *name, const char *text, size_t len_bytes,
                         struct err *e);

/* Building a spec by hand (the compare command): init from a loaded scenario, add axes, finish. */
void sweep_spec_init(struct sweep_spec *sp, const struct scenario *base, int64_t prefill_chunk);
/* Integer axes (context, batch, ..., ep). Values must be >= 1 and distinct. */
int sweep_spec_add_ints(struct sweep_spec *sp, enum sweep_axis_kind k, const int64_t *v, int n,
                        struct err *e);
/* Named axes (model, hw, tp_comm and the dtypes): presets, paths or spellings. */
int sweep_spec_add_names(struct sweep_spec *sp, enum sweep_axis_kind k, const char *const *names, int n,
                         struct err *e);
/* Loads the scenario's model and hardware when they are not axes, checks the point count and
 * computes strides, description and hash. */
int sweep_spec_finish(struct sweep_spec *sp, struct err *e);
void sweep_spec_release(struct sweep_spec *sp);

/* The axis of kind k, or NULL. */
const struct sweep_axis *sweep_spec_axis(const struct sweep_spec *sp, enum sweep_axis_kind k);

/* One point: its scenario, model and hardware. */
struct sweep_point {
	int64_t index;
	struct scenario s;
	const struct model *m;
	const struct hw *hw;
};

/* The scenario of point `index`. -EINVAL when its layout does not work (e says why; pt->s, m and
 * hw are still set so the row can show its inputs). */
int sweep_spec_point(const struct sweep_spec *sp, int64_t index, struct sweep_point *pt, struct err *e);

/* One row per point: every input and every output. Text fields are NUL-terminated. */
struct sweep_row {
	int64_t point;
	/* inputs */
	char model[64], hw[64];
	int64_t gpus, tp, dp, cp, ep;
	int64_t batch, prompt_tokens, output_tokens, prefill_chunk;
	char kda_state[8], mla_cache[8], expert_activations[8], dispatch[8], tp_comm[12];
	double moe_imbalance;
	int64_t cuda_graph;
	/* status: ok = 0 when the point could not be evaluated; error says why */
	int64_t ok;
	char error[256];
	/* the model at the point's dtypes */
	int64_t weights_bytes;           /* whole model */
	int64_t kv_bytes_per_token;      /* MLA latent + DSA index, all layers */
	int64_t state_bytes_per_request; /* KDA + ShortConv state, all layers */
	/* outputs (sim_result) */
	double ttft_s, tpot_s, tpot_first_s, tpot_last_s, e2e_s;
	double tokens_per_s, tokens_per_s_per_gpu;
	int64_t prefill_chunks, decode_context, requests_per_gpu;
	int64_t fits, missing_bytes, max_batch;
	int64_t hbm_weights, hbm_kda_state, hbm_conv_state, hbm_mla_kv, hbm_dsa_index;
	int64_t hbm_activations, hbm_workspace, hbm_total, hbm_capacity;
	double decode_compute_s, decode_memory_s, decode_latency_s, decode_comm_s; /* by bound */
	/* the steps on their timelines (sim/step.h) */
	double prefill_tokens_per_s_per_gpu, decode_step_s;
	double prefill_exposed_comm_s, decode_exposed_comm_s;   /* TTFT's (all chunks), TPOT's step */
	double prefill_critical_comm_s, decode_critical_comm_s; /* communication on the critical path */
	double prefill_s[OPC_COUNT];                                               /* TTFT by op class */
	double decode_s[OPC_COUNT];                                                /* TPOT by op class */
};

/* The columns of a row, for SQLite and CSV: name, type and where in struct sweep_row. */
enum sweep_col_type { SWEEP_COL_INT, SWEEP_COL_REAL, SWEEP_COL_TEXT };
struct sweep_column {
	const char *name;
	enum sweep_col_type type;
	size_t offset;
	size_t cap_bytes; /* TEXT: size of the char array */
	bool output;      /* NULL (empty in CSV) when the point is not ok */
};
/* The table (sweep_n_columns() entries), built once; thread-safe after the first call. */
const struct sweep_column *sweep_columns(void);
int sweep_n_columns(void);

/* ---- evaluation ---- */

/* The prefill of a point: shared by points that differ only in batch and output_tokens. */
struct sweep_prefill {
	double ttft_s;
	int64_t chunks;
	double tokens_per_s_per_gpu, exposed_comm_s, critical_comm_s;
	int64_t peak_bytes; /* prefill activations incl. Block AttnRes' block store */
	double class_s[OPC_COUNT];
};

/* Scratch space of one evaluating thread (two phases of SIM_MAX_OPS rows). */
struct sweep_scratch {
	struct sim_phase prefill, decode;
};

/* Exactly sim_run(), in two halves, so a sweep computes each prefill once: the prefill of the
 * point's prompt, then the decode steps, HBM and the largest batch. Both return 0 or a negative
 * errno with e set (the layout check of sim_check). */
int sweep_eval_prefill(const struct sweep_point *pt, struct sweep_scratch *sc, struct sweep_prefill *out,
                       struct err *e);
int sweep_eval_decode(const struct sweep_point *pt, const struct sweep_prefill *pre, struct sweep_scratch *sc,
                      struct sweep_row *row, struct err *e);
/* Fills the inputs of row from a point (ok = 0, outputs zero). */
void sweep_row_inputs(const struct sweep_point *pt, struct sweep_row *row);
/* Both halves; on a layout error the row has ok = 0 and the reason, and 0 is returned. */
int sweep_eval_point(const struct sweep_point *pt, struct sweep_scratch *sc, struct sweep_row *row);

/* ---- running ---- */

struct sweep_opts {
	int threads;         /* evaluating threads, >= 1 (the calling thread is one of them) */
	int64_t shard_index; /* 0-based: points i with i % shard_count == shard_index */
	int64_t shard_count; /* >= 1 */
	/* Called on the calling thread about every 100 ms and once at the end; may be NULL. */
	void (*progress)(void *ctx, int64_t done, int64_t total);
	void *progress_ctx;
};

struct sweep_stats {
	int64_t points;  /* in this shard */
	int64_t invalid; /* rows with ok = 0 */
	int64_t fits;
	int64_t prefills; /* distinct prefills evaluated */
	double wall_s;
	int threads;
};

/* Receives rows in point order, in blocks; a negative return stops the sweep. Called from one
 * thread at a time (a writer thread, so that writing overlaps evaluating the next block). */
typedef int (*sweep_sink_fn)(void *ctx, const struct sweep_row *rows, int64_t n, struct err *e);

/* Points of shard `shard_index` out of `shard_count`. */
int64_t sweep_shard_points(int64_t points, int64_t shard_index, int64_t shard_count);

/* Evaluates the shard's points on o->threads threads. Memory: one block of rows (at most
 * SWEEP_BLOCK_POINTS) and one scratch per thread, whatever the sweep's size. */
enum { SWEEP_BLOCK_POINTS = 16384 };
int sweep_run(const struct sweep_spec *sp, const struct sweep_opts *o, sweep_sink_fn sink, void *sink_ctx,
              struct sweep_stats *st, struct err *e);

/* ---- CSV ---- */

/* Header line and rows, in sweep_columns() order; doubles as %.17g (round-trip exact), NULL
 * outputs of failed points empty, text quoted when it holds a comma, quote or newline. */
void sweep_csv_header(FILE *out);
void sweep_csv_rows(FILE *out, const struct sweep_row *rows, int64_t n);
/* One CSV field for a double / int64 (what sweep_csv_rows writes). */
void sweep_csv_double(FILE *out, double v);

#endif
