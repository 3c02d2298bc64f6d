#ifndef K3_SIM_SIM_H
#define K3_SIM_SIM_H

/* Maps a model's ops onto the GPUs of a scenario (TP, attention DP, EP, CP), costs every op, lays
 * each step out on a timeline (sim/step.h), and derives TTFT, TPOT, throughput and HBM per GPU. */

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "model/model.h"
#include "model/ops.h"
#include "sim/cost.h"
#include "sim/scenario.h"

enum { SIM_MAX_OPS = 320 };

/* One op of a step on one GPU, with its cost summed over the layers (and chunks) it stands for. */
struct sim_op_row {
	struct op op;          /* per-GPU dims of the last instance */
	struct op_cost cost;   /* one instance */
	double total_s;        /* all instances in the phase */
	double total_cycles;
	double total_flops;
	double total_bytes;
};

struct sim_phase {
	double time_s;          /* its ops one after another (sum of the rows) */
	int64_t peak_act_bytes; /* largest live activations of one step on one GPU */
	double compute_s, memory_s, latency_s, comm_s; /* time of ops by their bound */
	/* on the timeline (sim/step.h), summed like the rows */
	double step_s;          /* the phase's steps: TTFT (prefill), TPOT (decode) */
	double critical_compute_s, critical_comm_s; /* the critical path, split; together step_s */
	double exposed_comm_s;  /* communication with no compute beside it */
	int microbatches;       /* of the last step */
	enum scenario_overlap overlap; /* of the last step, resolved */
	int comm_sms_reserved;  /* of the last step: SMs kept for communication */
	/* the power regime (--clock power; 0 elsewhere): the steps' ops' time (busiest EP rank) and
	 * their energy above nothing, at the clocks the regime gave them and at boost, summed like
	 * the rows: energy over time is the phase's mean board draw (sim_power_mix_draw_at_w) */
	double power_busy_s, power_energy_j, power_boost_busy_s, power_boost_energy_j;
	struct sim_op_row rows[SIM_MAX_OPS];
	int n_rows;
};

/* HBM per GPU, bytes. */
struct sim_hbm {
	int64_t weights, kda_state, conv_state, mla_kv, dsa_index, activations, workspace;
	int64_t total, capacity;
};

struct sim_result {
	double ttft_s;            /* prefill of one prompt, chunk by chunk (batched with others when
				   * the engine has a token budget per step) */
	double tpot_s;            /* time per output token of a request: the decode step at the mean
				   * context of the generation over the tokens it accepts (1 without MTP) */
	double tpot_first_s, tpot_last_s; /* at the first and last decode step */
	double decode_step_s;     /* the mean decode step (drafts and verify with MTP) */
	double e2e_s;             /* ttft + (output - 1) * tpot */
	double tokens_per_s;      /* decode tokens per second over all GPUs */
	double tokens_per_s_per_gpu; /* decode */
	double prefill_tokens_per_s_per_gpu; /* prompt tokens the prefill steps process per second */
	double mixed_prefill_tokens_per_s_per_gpu; /* prefill riding in decode steps (0: none) */
	int64_t prefill_prompts_per_step; /* over all DP groups */
	double pp_bubble_s;       /* pipeline parallel: TTFT's bubble (0 without PP) */
	int64_t prefill_chunks;
	int64_t decode_context;   /* context of the mean decode step */
	int64_t requests_per_gpu; /* decode requests held by one attention DP group */
	struct sim_hbm hbm;       /* at the last decode step (largest context) */
	bool fits;
	int64_t missing_bytes;    /* > 0 when it does not fit */
	int64_t max_batch;        /* the largest batch that fits at the final context */
	struct sim_phase prefill; /* summed over chunks */
	struct sim_phase decode;  /* the mean decode step */
};

/* sim_run in two halves, for callers that share one prefill among points differing only in
 * batch or output length (sweeps). sim_run is exactly sim_check + sim_prefill + sim_decode. */
struct sim_prefill_result {
	double ttft_s;
	int64_t chunks;
	int64_t prompts_per_step;      /* over all DP groups */
	double pp_bubble_s;            /* pipeline parallel: the pp - 1 stages the last chunk crosses
					* after the others are done (0 without PP) */
	double tokens_per_s_per_gpu;   /* prompt tokens per second per GPU */
	int64_t peak_bytes; /* live activations of a chunk, Block AttnRes' block store included */
};

struct sim_decode_result {
	double tpot_s, tpot_first_s, tpot_last_s;
	double step_s;                 /* the mean step (tpot_s x tokens accepted per step) */
	double mixed_prefill_tokens_per_s_per_gpu;
	int64_t decode_context, requests_per_gpu;
	struct sim_hbm hbm;
	bool fits;
	int64_t missing_bytes, max_batch;
};

/* The shape of a prefill step: `chunk` tokens of each of `batch` prompts (over all DP groups).
 * With a token budget per step (engine.prefill_tokens) every attention DP group fills its step:
 * prompts that fit are batched, longer ones chunked at the budget; otherwise one prompt in
 * prefill_chunk pieces. The one statement sim_prefill and `k3sim run --timeline-step prefill`
 * both follow. */
void sim_prefill_shape(const struct scenario *s, int64_t *batch, int64_t *chunk);

/* The prompt in chunks into ph (reset first). -E2BIG if an op list overflowed, -ENOMEM when the
 * thread's timeline could not be allocated. */
int sim_prefill(const struct scenario *s, const struct model *m, const struct hw *hw,
		struct sim_phase *ph, struct sim_prefill_result *out, struct err *e);
/* The decode steps into ph (reset first), HBM at the final context, the largest batch. */
int sim_decode(const struct scenario *s, const struct model *m, const struct hw *hw,
	       const struct sim_prefill_result *pre, struct sim_phase *ph, struct sim_decode_result *out,
	       struct err *e);

/* Checks the layout against model and hardware; -EINVAL with a reason (no location). */
int sim_check(const struct scenario *s, const struct model *m, const struct hw *hw, struct err *e);

/* Evaluates the scenario. r is fully overwritten. */
int sim_run(const struct scenario *s, const struct model *m, const struct hw *hw,
	    struct sim_result *r, struct err *e);

/* One step of phase p (global batch; sim_phase_init) on one GPU, on its timeline (sim/step.h,
 * the scenario's overlap). Returns 0 with the step's time in *time_s, or a negative errno
 * (-ENOMEM: the timeline's storage; -E2BIG: an op list overflowed) with *time_s 0. With `acc`
 * non-NULL the mapped ops and their costs, times `weight`, are added to acc's rows and the
 * timeline's figures to its step fields (call sim_phase_reset first). The timeline's storage is
 * per thread, allocated at a thread's first step and freed when the thread ends. */
int sim_step(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
	     struct sim_phase *acc, double weight, double *time_s);
void sim_phase_reset(struct sim_phase *ph);

/* How a scenario splits the MoE over its GPUs: the one statement that the weights per GPU
 * (sim_hbm) and the op shapes of a step (sim/step.c) both follow. Expert parallel (moe_tp 1):
 * whole experts, `experts` over `ep` GPUs, tokens dispatched to them. Tensor-parallel MoE (moe_tp
 * > 1, ep 1): every GPU holds a 1/moe_tp slice of every expert along the intermediate size and
 * runs the grouped GEMMs of width intermediate / moe_tp over every token of its group; the
 * partial sums are reduced after the MoE. When moe_tp exceeds the attention tp (DP attention, as
 * SGLang's --enable-dp-attention without EP), the tokens of moe_tp / tp attention DP groups are
 * gathered before the MoE and the output reduce-scattered back after it, and the MoE block's
 * other tensor-parallel ops (router, shared experts, latent projections) split moe_tp ways. */
struct sim_moe_split {
	int64_t expert_groups; /* GPUs the experts are divided over (ep) */
	int64_t expert_slices; /* GPUs each expert's intermediate size is divided over (moe_tp) */
	int64_t block_tp;      /* the split of the MoE block's tensor-parallel ops: max(tp, moe_tp) */
	int64_t gather;        /* attention DP groups whose tokens one MoE GPU processes (>= 1) */
};
void sim_moe_split(const struct scenario *s, struct sim_moe_split *out);

/* HBM per GPU for `batch` requests at `context` tokens, with `activations` bytes of live
 * activations (from a step's peak). */
void sim_hbm(const struct scenario *s, const struct model *m, const struct hw *hw, int64_t batch,
	     int64_t context, int64_t activations, struct sim_hbm *out);

/* Bytes per rank of an EP dispatch or combine as the send buffer of the equivalent even
 * all-to-all (nccl-tests' bytes; the all-to-all moves (R-1)/R of them off the GPU): each of
 * tokens_per_gpu tokens goes once to each of `ranks` EP ranks that holds one of its experts, a
 * row of row_bytes (K3: 3584 FP8 + 112 B of scales out, 7168 B BF16 back), and the busiest rank
 * receives imbalance x the mean rows (model_ep_ranks_per_token). 0 when ranks <= 1. */
int64_t sim_ep_comm_bytes(const struct model_moe *x, int64_t tokens_per_gpu, int64_t row_bytes, int64_t ranks,
			  double imbalance);

/* The draft module of multi-token prediction: `layers` layers like the model's last one
 * (DeepSeek-V3's MTP module is one MLA + MoE layer) and the LM head. */
void sim_draft_model(const struct model *m, int64_t layers, struct model *out);

/* Bytes per GPU of Block AttnRes' store of completed blocks for `tokens` tokens in flight (0
 * without AttnRes). */
int64_t sim_attn_res_store_bytes(const struct scenario *s, const struct model *m, int64_t tokens);

/* The phase description a scenario implies for a step. */
void sim_phase_init(const struct scenario *s, enum phase_kind kind, int64_t batch, int64_t tokens,
		    int64_t context, struct phase *p);

#endif
