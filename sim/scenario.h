#ifndef K3_SIM_SCENARIO_H
#define K3_SIM_SCENARIO_H

/* A what-if scenario: model, hardware, GPU count, parallel layout, workload and precisions.
 * The YAML schema is documented in scenarios/README.md; every key is checked (unknown keys get a
 * suggestion), every error carries file:line:col. */

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "util/dtype.h"
#include "util/err.h"

struct scenario {
	char name[64];
	char description[256];
	char file[256];         /* where it was loaded from ("<preset default>" for embedded ones) */
	char model[256];        /* preset name or path (relative paths resolved against the file) */
	char hw[256];

	int64_t gpus;
	int64_t tp;             /* attention tensor parallel (heads split) */
	int64_t dp;             /* attention data parallel (requests split) */
	int64_t cp;             /* context parallel for prefill (sequence split) */
	int64_t ep;             /* expert parallel */
	bool tp_rs_ag;          /* reduce-scatter + all-gather instead of all-reduce */
	double moe_imbalance;   /* busiest EP rank's rows over the mean (>= 1) */

	int64_t batch;          /* concurrent decode requests */
	int64_t prompt_tokens;
	int64_t output_tokens;
	int64_t prefill_chunk;  /* tokens per prefill step */
	int64_t kda_chunk;      /* KDA kernel chunk (16) */

	enum dtype kda_state, mla_cache, act, expert_act, dispatch; /* act fp8: GEMM inputs in FP8
				 * (DeepSeek-V3's per-block scaled recipe), stored activations BF16 */
	bool cuda_graph;        /* decode steps run as CUDA graphs */
	enum hw_clock clock;    /* SM clock regime (options.clock); serving runs all day: sustained */
	int64_t reserved_bytes; /* per-GPU workspace; -1 = the hardware preset's */
};

/* Name of an embedded scenario ("default", "h200x8", ...) or a path. */
int scenario_load(struct scenario *s, const char *name_or_path, struct err *e);
int scenario_load_yaml(struct scenario *s, const char *name, const char *text, size_t len_bytes,
		       struct err *e);
const char *const *scenario_preset_names(void);
/* The embedded scenario's YAML text, or NULL. */
const char *scenario_preset_text(const char *name);

#endif
