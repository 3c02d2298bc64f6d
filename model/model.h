#ifndef K3_MODEL_MODEL_H
#define K3_MODEL_MODEL_H

/* A hybrid linear/latent-attention MoE model: dimensions, layer order and precisions, loaded from a
 * k3sim YAML preset or a Hugging Face config.json, and the inventory derived from them (parameters,
 * weight bytes, per-request state, per-token cache). All counts are elements or bytes in int64. */

#include <stdbool.h>
#include <stdint.h>

#include "util/dtype.h"
#include "util/err.h"

enum { MODEL_MAX_LAYERS = 512 };

enum attn_kind { ATTN_KDA, ATTN_MLA };
enum ffn_kind { FFN_DENSE, FFN_MOE };
enum gate_kind { GATE_NONE, GATE_LOW_RANK, GATE_FULL };

struct model_kda {
	int64_t heads, head_dim;  /* q/k/v heads and their width (K = V) */
	int64_t conv_kernel;      /* ShortConv taps; state keeps conv_kernel - 1 */
	int64_t decay_rank;       /* low-rank decay projection: hidden -> rank -> heads*head_dim */
	double gate_lower_bound;  /* g = lower_bound * sigmoid(.) */
	enum gate_kind output_gate;
	int64_t output_gate_rank; /* GATE_LOW_RANK only */
};

struct model_mla {
	int64_t heads;
	int64_t q_lora_rank;      /* 0 = no query compression */
	int64_t kv_lora_rank;     /* latent width c_kv */
	int64_t qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
	bool output_gate;         /* Gated MLA: sigmoid(W_g x) on the attention output */
	bool rope;                /* false for NoPE (K3) */
};

/* DeepSeek-V3.2-style sparse attention indexer over MLA (absent when index_heads == 0). */
struct model_dsa {
	int64_t index_heads, index_head_dim, top_k;
	int64_t index_key_bytes_per_token; /* per layer: FP8 key + 4-byte scale = 132 */
};

struct model_moe {
	int64_t experts, top_k;
	int64_t latent;           /* routed experts' width; == hidden when there is no latent projection */
	int64_t intermediate;     /* per routed expert GLU intermediate */
	int64_t shared_intermediate; /* all shared experts together; 0 for none */
	bool latent_norm;         /* RMSNorm on the combined latent before W_up */
};

struct model {
	char name[64];
	char source[256];         /* where the dimensions come from, for reports */
	int64_t hidden, vocab;
	int n_layers;
	enum attn_kind attn[MODEL_MAX_LAYERS]; /* 0-based */
	enum ffn_kind ffn[MODEL_MAX_LAYERS];
	struct model_kda kda;
	struct model_mla mla;
	struct model_dsa dsa;
	int64_t dense_intermediate;
	struct model_moe moe;
	int64_t attn_res_block;   /* Block AttnRes block size in layers; 0 = plain residual */
	/* A slice of a deeper model (what a kernel harness such as kernels/slice/k3-slice runs):
	 * the layers of the full model before these (Block AttnRes counts their completed blocks
	 * among the sources), and whether the step has the layers alone (no embedding, final
	 * AttnRes and norm, LM head or sampling, nor their weights). 0 / false: a whole model. */
	int64_t slice_layers_before;
	bool slice_layers_only;
	bool tie_embeddings;
	enum dtype weight_dtype;  /* everything but routed experts */
	enum dtype expert_dtype;  /* routed experts' w1/w2/w3 */
};

/* Derived inventory. Parameters are elements; bytes use the model's dtypes. */
struct model_inventory {
	int kda_layers, mla_layers, dense_layers, moe_layers;
	int64_t params_total;
	int64_t params_active;        /* per token: input embedding excluded, LM head included */
	int64_t params_embedding, params_lm_head;
	int64_t params_kda_layer, params_mla_layer, params_dense_ffn, params_moe_layer;
	int64_t params_routed_experts; /* all layers */
	int64_t params_per_expert;
	int64_t weights_bytes;
	int64_t kda_state_elements_per_layer;  /* heads * head_dim * head_dim */
	int64_t conv_state_elements_per_layer; /* 3 * heads*head_dim * (kernel - 1) */
	int64_t mla_latent_elements_per_token_layer; /* kv_lora_rank + rope dim */
	int64_t attn_res_sources;     /* blocks + the embedding */
};

/* Loading. A preset name ("kimi-k3") resolves to an embedded preset; anything with '/' or a
 * .yaml/.yml/.json suffix is a path. JSON files are read as Hugging Face config.json. */
int model_load(struct model *m, const char *name_or_path, struct err *e);
int model_load_yaml(struct model *m, const char *name, const char *text, size_t len_bytes,
		    struct err *e);
int model_load_hf_config(struct model *m, const char *name, const char *text, size_t len_bytes,
			 struct err *e);
/* NULL-terminated list of embedded preset names. */
const char *const *model_preset_names(void);

void model_inventory(const struct model *m, struct model_inventory *inv);

/* KDA recurrent state of one request over all KDA layers, in bytes, for a state dtype. */
int64_t model_kda_state_bytes_per_request(const struct model *m, enum dtype state);
/* ShortConv state of one request over all KDA layers (q, k and v convolutions). */
int64_t model_conv_state_bytes_per_request(const struct model *m, enum dtype state);
/* MLA cache of one token over all MLA layers. FP8 uses FlashMLA's layout: 512 FP8 + 4 FP32 scales +
 * 64 BF16 rope dims = 656 B per layer. */
int64_t model_mla_kv_bytes_per_token(const struct model *m, enum dtype cache);
/* DSA indexer cache of one token over all MLA layers that carry an indexer (0 without DSA). */
/* MLA K and V expanded per head in BF16, as a generic (Hugging Face) cache keeps them: every MLA
 * layer's heads x (qk_nope + qk_rope + v) x 2 bytes per token. */
int64_t model_mla_expanded_kv_bytes_per_token(const struct model *m);
int64_t model_dsa_index_bytes_per_token(const struct model *m);

/* Expert parallelism over `ranks` GPUs, experts/ranks routed experts each: a token is sent once
 * to every rank that holds at least one of its top_k experts (the dispatch of DeepEP's normal
 * kernels; its own rank among them, whose share stays on the GPU). Returns ranks x P(a token
 * reaches the busiest rank): the all-to-all send rows per token whose even all-to-all moves what
 * the busiest rank receives. With uniform routing (imbalance 1) that is the expected number of
 * distinct ranks a token reaches, R x (1 - C(E - E/R, k) / C(E, k)) (R = 2, E = 896, k = 16: 2.0;
 * R = 16: 10.3). `imbalance` (>= 1: the busiest rank's rows over the mean) gives the busiest
 * rank min(imbalance, R) x E/R experts' worth of the routing. 0 when ranks <= 1 or the model has
 * no routed experts. */
double model_ep_ranks_per_token(const struct model_moe *x, int64_t ranks, double imbalance);

const char *attn_kind_name(enum attn_kind k);

#endif
