#ifndef K3_SERVE_SERVE_H
#define K3_SERVE_SERVE_H

/* Serving over time: requests arrive (Poisson, gamma-bursty, all at once, or from a trace file),
 * a router spreads them over model replicas and their attention DP groups, and each replica runs
 * steps of the timeline's kind (sim/step.h) back to back: continuous batching under a token
 * budget, chunked prefill mixed with decode (or prefill steps first, SGLang's default), admission
 * and preemption by HBM through the hybrid paged pool (serve/pool.h: MLA pages per token, KDA
 * state pages per request, KDA checkpoints at chosen endpoints, prefix reuse, a CPU DRAM tier),
 * speculative decoding with per-position acceptance, disaggregated prefill and decode pools with
 * state transfer, and MoonViT-V2 vision encoding in prefill. docs/SERVING.md has every rule.
 *
 * A step's cost comes from sim_step through serve/costs.h (tables of step times over decode batch,
 * prefill tokens, sequences and context, never falling as a size grows); the engine itself knows
 * nothing of ops.
 *
 * Units: times in seconds (double), tokens and bytes in int64. Bytes of HBM and of the CPU tier
 * are per GPU of an attention DP group (each GPU of a group holds its share of the same requests).
 *
 * Library code: nothing here prints. Functions return 0 or a negative errno and fill a struct err
 * (file:line:col for the scenario's serve: section and for trace files). */

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "model/model.h"
#include "sim/scenario.h"
#include "util/err.h"

enum {
	SERVE_MAX_ACCEPT = 16,      /* draft positions with their own acceptance */
	SERVE_MAX_KDA_GROUPS = 8,   /* KDA cache groups (checkpoint siblings) */
	SERVE_MAX_PAGE_ENDPOINTS = 64, /* hash endpoints in one physical page */
	SERVE_MAX_GPUS_POOL = 4096,
	SERVE_ID_TOKENS = 512,      /* tokens per explicit block id (Mooncake's block size) */
};

enum serve_arrival {
	SERVE_ARRIVAL_POISSON, /* exponential gaps at rate_per_s */
	SERVE_ARRIVAL_GAMMA,   /* gamma gaps at rate_per_s with coefficient of variation cv (> 1: bursts) */
	SERVE_ARRIVAL_BURST,   /* every request at t = 0 (benchmarks' request rate inf) */
	SERVE_ARRIVAL_TRACE,   /* times from the trace file */
	SERVE_ARRIVAL_COUNT
};
const char *serve_arrival_name(enum serve_arrival a);

enum serve_dist {
	SERVE_DIST_FIXED,       /* mean */
	SERVE_DIST_UNIFORM,     /* [min, max] */
	SERVE_DIST_EXPONENTIAL, /* mean, clamped to [min, max] */
	SERVE_DIST_LOGNORMAL,   /* mean and cv, clamped to [min, max] */
	SERVE_DIST_COUNT
};

/* A token-count distribution. */
struct serve_length {
	enum serve_dist dist;
	double mean, cv;
	int64_t min, max;
};

/* Where a request keeps KDA checkpoints (snapshots of every KDA group's state at a hash
 * endpoint), the only places a prefix can be reused from (docs/SERVING.md, section 3). */
enum serve_ckpt {
	SERVE_CKPT_NONE,    /* no checkpoint: no prefix reuse for a model with KDA layers */
	SERVE_CKPT_TURNS,   /* the last endpoint at or before each message boundary: the end of a
			     * shared prefix (a system prompt), of the prompt, and of the output (the
			     * next turn's prefix) */
	SERVE_CKPT_EVERY,   /* every hash endpoint */
	SERVE_CKPT_EVERY_N, /* every ckpt_every_tokens tokens */
	SERVE_CKPT_COUNT
};
const char *serve_ckpt_name(enum serve_ckpt c);

enum serve_trace_format {
	SERVE_TRACE_AUTO,     /* by content: a '{' first: JSONL (Mooncake's keys or k3sim's); else CSV
			       * (Azure's header or k3sim's) */
	SERVE_TRACE_JSONL,    /* k3sim's or Mooncake's keys, one object per line */
	SERVE_TRACE_CSV,      /* k3sim's or Azure's columns */
	SERVE_TRACE_FORMAT_COUNT
};

enum serve_link { SERVE_LINK_NIC, SERVE_LINK_NVLINK };

enum serve_draft { SERVE_DRAFT_MTP, SERVE_DRAFT_MODEL };

/* The layout of a pool of replicas (P/D: the prefill side or the decode side). */
struct serve_layout {
	int64_t replicas;         /* model replicas in the pool */
	int64_t gpus, tp, dp, ep; /* per replica, as the scenario's parallel section */
};

/* The scenario's `serve:` section (scenarios/README.md). */
struct serve_config {
	uint64_t seed;
	double duration_s;       /* arrivals in [0, duration_s) (synthetic) */
	int64_t max_requests;    /* at most this many requests (0: no cap besides the duration) */

	/* arrivals */
	enum serve_arrival arrival;
	double rate_per_s;
	double cv;               /* gamma: coefficient of variation of the gaps */
	char trace[512];         /* trace file (relative to the scenario file) */
	enum serve_trace_format trace_format;
	double time_scale;       /* trace times are multiplied by it (0.5: twice as fast) */

	/* synthetic requests */
	struct serve_length prompt, output;
	int64_t system_tokens;   /* a shared system prompt before each prompt (0: none) */
	int64_t system_prompts;  /* distinct system prompts, picked uniformly */
	int64_t turns;           /* turns per conversation (1: single requests); turn k+1 arrives
				  * think_s after turn k finishes, its prompt the whole context of turn
				  * k plus turn_tokens new tokens */
	struct serve_length turn_tokens;
	double think_s;          /* mean think (or tool) time between turns, exponential */
	double image_fraction;   /* requests with images */
	int64_t images;          /* images per such request */
	int64_t image_px;        /* square images of image_px x image_px pixels */
	double video_fraction;   /* requests with a video */
	int64_t video_frames;
	int64_t video_px;

	/* scheduler (per attention DP group) */
	int64_t max_running;     /* requests in prefill or decode */
	int64_t token_budget;    /* tokens per step: decode tokens (with drafts) + prefill chunks */
	int64_t chunk_tokens;    /* a request's prefill tokens per step at most */
	bool mixed;              /* chunked prefill beside decode in one step (vLLM, SGLang
				  * --enable-mixed-chunk); false: a prefill step whenever a group has
				  * prefill work, decode steps otherwise (SGLang's default) */
	double kv_watermark;     /* admission stops above this share of the pool in use */
	bool admit_sglang;       /* SGLang's PrefillAdder rule instead of the watermark: a request
				  * is admitted when its whole prompt and min(output, 4096) tokens fit
				  * in the pool beside every running request's min(remaining output,
				  * 4096) x new_token_ratio (0.7 at start, less 0.602 / 600 per decode
				  * step of its group, down to 0.098); once one does not fit, its group
				  * admits nothing until a running request leaves (batch_is_full) */
	double mem_fraction_static; /* SGLang's --mem-fraction-static: weights and the KV pool take
				  * this share of HBM (the pool is what the weights leave of it); 0:
				  * the pool is all HBM leaves after weights, activations, workspace */
	int64_t replicas;        /* co-located replicas of the scenario's layout */

	/* the hybrid pool (serve/pool.h) */
	bool prefix_cache;
	int64_t hash_tokens;     /* hash endpoint granularity (512) */
	int64_t page_tokens;     /* physical MLA page; 0: the page of a KDA group's state */
	int64_t kda_groups;      /* KDA cache groups; 0: ceil(KDA layers / MLA layers) */
	enum serve_ckpt ckpt;
	int64_t ckpt_every_tokens;
	int64_t cpu_bytes;       /* CPU DRAM tier per GPU (0: none) */
	double host_link_bytes_per_s; /* per GPU, each direction (PCIe 5 x16 ~ 55 GB/s; C2C 450) */

	/* speculative decoding (the scenario's engine.mtp gives draft_tokens and draft_layers) */
	enum serve_draft draft;
	char draft_model[256];   /* SERVE_DRAFT_MODEL: a model preset or path */
	double accept[SERVE_MAX_ACCEPT]; /* P(draft i accepted | drafts before it accepted) */
	int n_accept;            /* positions given; later ones repeat the last */

	/* disaggregated prefill and decode */
	bool pd;
	struct serve_layout prefill, decode;
	enum serve_link pd_link;

	/* SLOs (goodput) and outputs */
	double slo_ttft_s, slo_tpot_s;
	double sample_s;         /* queue-length sampling interval */
};

/* One request of the workload. */
struct serve_request {
	double arrival_s;        /* for a later turn: set when the turn before it finishes */
	int64_t prompt_tokens;   /* text tokens (vision tokens are added to them) */
	int64_t output_tokens;
	int32_t images;          /* images, each image_px^2 */
	int32_t image_px;
	int32_t video_frames;
	int32_t video_px;
	int64_t vision_tokens;   /* tokens the images and video add after the pixel shuffle */
	int64_t conversation;    /* -1: none */
	int32_t turn;
	int32_t after;           /* the previous turn's request index, -1: arrives on its own */
	double think_s;          /* after `after` finishes */
	/* Content identity of the tokens. A hash block's id is that of its last token: ids[j] for
	 * tokens [SERVE_ID_TOKENS j, SERVE_ID_TOKENS (j + 1)) with j < n_ids (a trace's hash_ids,
	 * Mooncake's 512-token blocks), else seg_id[0] below seg_tokens (a shared system prompt or
	 * prefix), else seg_id[1] (the conversation, or the request alone). Blocks are chained:
	 * a block matches only after the same blocks before it. */
	uint64_t seg_id[2];
	int64_t seg_tokens;
	const uint64_t *ids;
	int32_t n_ids;
	int32_t line;            /* trace line (0: synthetic) */
};

struct serve_workload {
	struct serve_request *req;
	int64_t n;
	uint64_t *ids;           /* storage of the requests' explicit block ids */
	int64_t n_ids;
	char source[600];        /* what made it (trace path and format, or the generator) */
};

/* Limits on input: bounded memory (STYLE.md 7). */
enum {
	SERVE_MAX_REQUESTS = 20 * 1000 * 1000,
	SERVE_MAX_IDS = 64 * 1024 * 1024,
	SERVE_TRACE_MAX_LINE = 16 * 1024 * 1024,
	SERVE_MAX_SAMPLES = 100000, /* queue samples kept (thinned by halves beyond) */
};

void serve_config_defaults(struct serve_config *c);

/* The scenario's serve: section, from the same YAML text the scenario was loaded from (name is
 * for errors; relative trace paths are resolved against it). Every key is checked; errors say
 * file:line:col. A scenario without a serve: section gives the defaults. */
int serve_config_load_yaml(struct serve_config *c, const struct scenario *s, const char *name, const char *text,
			   size_t len_bytes, struct err *e);

/* The workload the config describes: generated with the seed, or read from the trace. */
int serve_workload_make(struct serve_workload *w, const struct serve_config *c, const struct model *m,
			struct err *e);
/* A trace file's requests (k3sim JSONL/CSV, Mooncake JSONL, Azure CSV); time_scale applied,
 * times relative to the first request. Errors: file:line:col. */
int serve_trace_load(struct serve_workload *w, const char *path, enum serve_trace_format f, double time_scale,
		     struct err *e);
int serve_trace_parse(struct serve_workload *w, const char *name, const char *text, size_t len_bytes,
		      enum serve_trace_format f, double time_scale, struct err *e);
void serve_workload_release(struct serve_workload *w);

/* Vision tokens of a request's images and video after MoonViT-V2's 2 x 2 pixel shuffle. */
int64_t serve_vision_tokens(int64_t images, int64_t image_px, int64_t video_frames, int64_t video_px);

/* ---- results ---- */

enum serve_state {
	SERVE_ST_PENDING,   /* not arrived */
	SERVE_ST_QUEUED,    /* waiting for admission */
	SERVE_ST_PREFETCH,  /* admitted, its cached prefix coming back from CPU DRAM */
	SERVE_ST_PREFILL,
	SERVE_ST_TRANSFER,  /* P/D: state and KV in flight to the decode pool */
	SERVE_ST_DECODE_QUEUED, /* P/D: waiting for admission at the decode pool */
	SERVE_ST_DECODE,
	SERVE_ST_DONE,
	SERVE_ST_COUNT
};
const char *serve_state_name(enum serve_state s);

/* One request's outcome. */
struct serve_record {
	double arrival_s, admit_s, first_token_s, done_s;
	double ttft_s, tpot_s, e2e_s;   /* tpot: (done - first) / (output - 1); 0 for one token */
	double queue_s;                 /* arrival to first admission */
	int64_t prompt_tokens;          /* with vision tokens */
	int64_t output_tokens;
	int64_t cached_tokens;          /* prefix reused at the first admission */
	int64_t prefill_tokens;         /* tokens it prefilled, recomputation included */
	int64_t steps;                  /* decode steps that gave it tokens */
	int32_t preemptions;
	int32_t replica, dp_group;      /* where it decoded: replica and attention DP group */
	int32_t prefill_replica;        /* P/D: where it prefilled (else = replica) */
	int64_t conversation;
	int32_t turn;
	bool cpu_hit;                   /* part of its prefix came back from CPU DRAM */
	bool slo_met;
};

/* A sample of the system's state (every sample_s and at the end; past SERVE_MAX_SAMPLES every
 * other sample is dropped and the interval doubles). */
struct serve_sample {
	double t_s;
	int64_t queued, prefill, decode, transfer; /* requests in each state, all replicas */
	int64_t in_system;                         /* arrived, not done */
	double hbm_used_share;                     /* the fullest pool's share held by requests
						    * (cached, evictable blocks not counted) */
	int64_t cpu_bytes;                         /* the fullest CPU tier */
	double tokens_per_s;                       /* output tokens since the last sample */
};

/* Percentiles of a metric over requests (or over inter-token gaps). */
struct serve_pct {
	double mean, p50, p90, p95, p99, max;
	int64_t n;
};

/* A histogram with constant relative resolution, for inter-token latencies (too many to keep):
 * bucket i holds [lo x r^i, lo x r^(i+1)). */
enum { SERVE_HIST_BUCKETS = 4096 };
struct serve_hist {
	double lo, ratio;
	int64_t count[SERVE_HIST_BUCKETS];
	int64_t zero;    /* samples below lo (tokens of one step after the first: 0 s) */
	int64_t n;
	double sum, max;
};
void serve_hist_init(struct serve_hist *h);
void serve_hist_add(struct serve_hist *h, double x, int64_t times);
/* The q-quantile (0..1): the upper edge of the bucket holding it (within ratio - 1 = 0.5 %). */
double serve_hist_quantile(const struct serve_hist *h, double q);
/* Exact percentiles of x[0..n) (sorted in place). */
void serve_pct_of(double *x, int64_t n, struct serve_pct *out);

struct serve_summary {
	int64_t requests, completed, output_tokens, prompt_tokens;
	int64_t prefill_tokens;        /* computed, recomputation included */
	int64_t cached_tokens;         /* reused from the prefix cache */
	int64_t recomputed_tokens;     /* prefilled again after a preemption */
	int64_t preemptions;
	/* counted by the steps, apart from the requests (token conservation): prefill tokens the
	 * steps scheduled, tokens they emitted */
	int64_t step_prefill_tokens, step_output_tokens;
	double makespan_s;             /* first arrival to last completion */
	double duration_s;             /* the arrival window */
	struct serve_pct ttft, tpot, e2e, queue, itl;
	double throughput_tokens_per_s;  /* output tokens / makespan */
	double throughput_requests_per_s;
	double goodput_requests_per_s;   /* requests meeting both SLOs / makespan */
	double slo_attainment;           /* share of requests meeting both SLOs */
	double prefix_hit_rate;          /* cached tokens / prompt tokens */
	double saved_prefill_s;          /* step time the cached tokens would have taken, estimated
					  * from the cost tables at the mean step */
	int64_t cpu_hits;                /* requests whose prefix came partly from CPU DRAM */
	int64_t ckpt_bytes_written;      /* KDA checkpoints taken (per GPU) */
	int64_t ckpt_bytes_peak;         /* KDA checkpoints resident in HBM at most (per GPU) */
	int64_t ckpt_invalidated;        /* checkpoints lost with an evicted sibling */
	int64_t offload_bytes, prefetch_bytes; /* over the host link, per GPU */
	int64_t pd_transfer_bytes;       /* P/D: state + KV sent, all requests, whole */
	int64_t hbm_fixed_bytes;         /* per GPU: weights, workspace, activations */
	int64_t hbm_pool_bytes;          /* per GPU: what the pool may hold */
	int64_t hbm_peak_bytes;          /* per GPU: fixed + the fullest pool's peak */
	int64_t cpu_peak_bytes;          /* per GPU: the fullest CPU tier's peak */
	int64_t kda_state_bytes;         /* per request per GPU (all groups) */
	int64_t page_tokens, page_bytes; /* the pool's physical MLA page */
	int kda_groups;
	double mean_accepted;            /* tokens per request per decode step (1 without drafts) */
	int64_t steps;                   /* steps run, all replicas */
	double busy_s;                   /* step time summed over replicas */
	double little_l;                 /* time-average requests in the system */
	double little_lambda_w;          /* arrival rate x mean E2E over the same window */
	double vision_s;                 /* encoder time, all steps */
	double cost_build_s, sim_s;      /* wall time: cost tables, the event loop */
	int64_t cost_points;             /* sim_step calls for the tables */
};

/* A step for the request timeline (Perfetto). */
struct serve_step_rec {
	double start_s, time_s;
	int32_t replica;
	int32_t decode, prefill_tokens; /* the busiest group's */
	int32_t kind;                   /* 0 mixed or decode, 1 prefill */
};

struct serve_result {
	struct serve_summary sum;
	struct serve_record *rec;      /* n_rec == workload requests, in workload order */
	int64_t n_rec;
	struct serve_sample *samples;
	int64_t n_samples;
	struct serve_step_rec *steps;  /* the first max_steps steps */
	int64_t n_steps;
	struct serve_hist itl;
};

struct serve_costs;
struct serve_opts {
	int64_t max_steps;  /* step records kept for the timeline (0: none) */
	int threads;        /* for the cost tables (0: 2) */
	/* Step-cost tables kept across runs of one deployment (a rate search, k3sim plan): an array
	 * of two, [0] for the co-located or prefill side, [1] for the decode side, zeroed before the
	 * first run. A table built by an earlier run with the same grid (serve_costs_match) is used as
	 * it is, else it is built there; either way the results are those of a run that builds its
	 * own. The caller passes the same scenario, model, hardware and config each time and frees
	 * them (serve_costs_release). NULL: each run builds and frees its own. */
	struct serve_costs *tables;
};

/* Runs the workload on the scenario's deployment. m and hw are the scenario's model and
 * hardware. Returns 0, -EINVAL (a config that cannot run: with the reason), -ENOSPC (a request
 * that can never fit in HBM: which one), -ENOMEM. r is the caller's; serve_result_release frees
 * it. Deterministic: the same inputs give the same result bit for bit. */
int serve_run(const struct scenario *s, const struct model *m, const struct hw *hw, const struct serve_config *c,
	      const struct serve_workload *w, const struct serve_opts *o, struct serve_result *r, struct err *e);
void serve_result_release(struct serve_result *r);

#endif
