#ifndef K3_SIM_SCENARIO_H
#define K3_SIM_SCENARIO_H

/* A what-if scenario: model, hardware, GPU count, parallel layout, workload and precisions.
 * The YAML schema is documented in scenarios/README.md; every key is checked (unknown keys get a
 * suggestion), every error carries file:line:col. */

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "util/dtype.h"
#include "util/embed.h"
#include "util/err.h"

/* How communication and compute of a step overlap (sim/step.c's strategy table). */
enum scenario_overlap {
	OVERLAP_AUTO, /* tbo when EP leaves the NVLink domain and the step splits in two, else none */
	OVERLAP_NONE, /* one stream: every op after the other */
	OVERLAP_TBO,  /* two-batch overlap (DeepSeek, SGLang): two microbatches, one computes while
		       * the other communicates */
	OVERLAP_SBO,  /* single-batch overlap (SGLang): shared experts beside the dispatch, the
		       * combine pipelined with the expert down GEMM */
	OVERLAP_COUNT
};
const char *scenario_overlap_name(enum scenario_overlap o);

/* Which implementation serves the model (docs/MODEL.md, section 7). */
enum scenario_path {
	PATH_PRODUCTION, /* latent MLA cache, fused KDA decode, router fused with the latent down
			  * projection, AttnRes intra-block merge fused into the TP all-reduce */
	PATH_REFERENCE,  /* Hugging Face modeling_kimi_linear.py: MLA K/V expanded per head into a
			  * generic cache, fla's chunk_kda and fused_recurrent_kda, unfused router */
	PATH_COUNT
};
const char *scenario_path_name(enum scenario_path p);

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
	int64_t ep;             /* expert parallel (inside one pipeline stage) */
	int64_t moe_tp;         /* tensor-parallel MoE: every expert's intermediate size split over
				 * this many GPUs, each holding a 1/moe_tp slice of every expert (vLLM's
				 * and SGLang's default without EP); a multiple of tp whose quotient
				 * divides dp (DP attention: the tokens of moe_tp / tp DP groups are
				 * gathered before the MoE); 1: whole experts, split by ep */
	int64_t pp;             /* pipeline stages: the layers split in pp groups of GPUs, each
				 * tp x dp x cp (gpus = tp x dp x cp x pp); 1 = none */
	bool tp_rs_ag;          /* reduce-scatter + all-gather instead of all-reduce */
	double moe_imbalance;   /* busiest EP rank's rows over the mean (>= 1) */
	double moe_expert_cv;   /* rows per touched expert: std over mean; 0: a uniform router's */

	int64_t batch;          /* concurrent decode requests */
	int64_t prompt_tokens;
	int64_t output_tokens;
	int64_t prefill_chunk;  /* tokens per prefill step (capped at the prompt) */
	int64_t prefill_chunk_set; /* as the file says it, before the cap: an override of the prompt caps this again */
	int64_t kda_chunk;      /* KDA kernel chunk (16) */

	enum dtype kda_state, mla_cache, act, expert_act, dispatch; /* act fp8: GEMM inputs in FP8
				 * (DeepSeek-V3's per-block scaled recipe), stored activations BF16 */
	bool cuda_graph;        /* decode steps run as CUDA graphs */
	struct hw_clock_sel clock; /* SM clock (options.clock: a regime or MHz); serving runs all
				    * day: sustained. A given clock is checked against the
				    * preset's boost by sim_check, at clock_line:clock_col */
	int clock_line, clock_col; /* where options.clock was (0: not from the file) */
	int64_t reserved_bytes; /* per-GPU workspace; -1 = the hardware preset's */

	/* engine: how the serving engine runs a step (scenarios/README.md, section engine) */
	enum scenario_overlap overlap;
	bool shared_expert_stream; /* shared experts on a second compute stream */
	bool attnres_side_stream;  /* Block AttnRes' inter-block pass on a second compute stream */
	enum scenario_path path;
	int64_t prefill_tokens;    /* tokens an attention DP group prefills in one step, prompts
				    * batched or chunked to fill it; 0: one prompt alone */
	int64_t mixed_prefill_tokens; /* prefill tokens riding in each decode step per DP group
				       * (chunked prefill beside decode); 0: pure decode steps */
	int64_t mtp_draft_tokens;  /* speculative tokens per request per decode step; 0: none */
	double mtp_acceptance;     /* tokens accepted per request per step, the bonus one included,
				    * in [1, 1 + draft tokens] */
	int64_t mtp_draft_layers;  /* layers of the draft module (DeepSeek-V3's MTP: 1) */
	double step_overhead_s;    /* host time per engine step the GPUs wait for (scheduling, input
				    * preparation, sampling and output processing not overlapped with
				    * the forward pass); 0: GPU time only */
	bool mla_cp_ring;          /* MLA context parallel: a ring of latent blocks overlapped with
				    * their expansion and attention, instead of one all-gather first */

	/* ep: how EP dispatch and combine travel (sim/ep.h) */
	int ep_mode;               /* enum op_ep_mode; EP_MODE_NONE (0) = auto: normal kernels for
				    * prefill, low-latency for decode (DeepSeek, SGLang) */
	int64_t ep_node_limit;     /* nodes a token may reach; 0: none (DeepSeek-V3 routes to <= 4) */
	int64_t ep_sms;            /* SMs DeepEP's normal kernels keep (Buffer.num_sms = 20) */
	int64_t redundant_experts; /* EPLB replicas over the EP group: more expert slots per GPU */
};

/* The one check of a scenario's layout, for files and for every point of a sweep: tp x dp x cp
 * (x pp) = gpus, ep dividing the GPUs of a pipeline stage, moe_tp's group (not with ep, whole
 * attention groups, not with cp); and prefill_chunk capped at the prompt. 0, or -EINVAL with the reason in e (no position: the caller knows where). */
int scenario_check(struct scenario *s, struct err *e);

/* Name of an embedded scenario ("default", "h200x8", ...) or a path. */
int scenario_load(struct scenario *s, const char *name_or_path, struct err *e);
int scenario_load_yaml(struct scenario *s, const char *name, const char *text, size_t len_bytes,
		       struct err *e);
const char *const *scenario_preset_names(void);
/* The embedded scenario's YAML text, or NULL. */
const char *scenario_preset_text(const char *name);
/* The embedded scenarios, for loaders of files that extend a scenario (sweeps: embedded_load). */
const struct embedded_file *scenario_preset_table(void);

#endif
