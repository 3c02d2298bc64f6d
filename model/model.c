#include "model/model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/doc.h"
#include "util/embed.h"

extern const struct embedded_file model_presets[];

const char *attn_kind_name(enum attn_kind k)
{
	return k == ATTN_KDA ? "kda" : "mla";
}

const char *const *model_preset_names(void)
{
	static const char *names[32];
	return embedded_names(model_presets, names, 32);
}

/* ---- reading helpers shared by both loaders ---- */

struct reader {
	const struct doc *d;
	struct err *e;
	bool strict; /* k3sim presets: every field known, required ones present */
};

static int need(struct reader *r, const struct doc_node *map, const char *key,
		const struct doc_node **out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return doc_error(r->d, map, r->e, "missing key '%s'", key);
	*out = v;
	return 0;
}

static int get_i64(struct reader *r, const struct doc_node *map, const char *key, bool required,
		   int64_t min, int64_t max, int64_t *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v || doc_is_null(v)) {
		if (required)
			return doc_error(r->d, map, r->e, "missing key '%s'", key);
		return 0;
	}
	struct doc_reader dr = {.d = r->d, .e = r->e};
	return doc_field_i64(&dr, map, key, min, max, out);
}

static int get_double(struct reader *r, const struct doc_node *map, const char *key, double *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v || doc_is_null(v))
		return 0;
	return doc_double(r->d, v, key, out, r->e);
}

static int get_bool(struct reader *r, const struct doc_node *map, const char *key, bool *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v || doc_is_null(v))
		return 0;
	return doc_bool(r->d, v, key, out, r->e);
}

static int get_dtype(struct reader *r, const struct doc_node *map, const char *key, enum dtype *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return 0;
	const char *s;
	int rc = doc_str(r->d, v, key, &s, r->e);
	if (rc < 0)
		return rc;
	if (dtype_parse(s, out) < 0)
		return doc_error(r->d, v, r->e, "%s: unknown dtype '%s' (expected one of %s)", key, s,
				 dtype_spellings());
	return 0;
}

/* A 1-based layer list: a list of integers, or "all" / "none". Sets mark[i] for listed layers. */
static int get_layer_set(struct reader *r, const struct doc_node *map, const char *key,
			 int n_layers, bool mark[MODEL_MAX_LAYERS], bool *present)
{
	const struct doc_node *v = doc_get(map, key);
	*present = v != NULL;
	if (!v)
		return 0;
	if (v->kind == DOC_SCALAR && (strcmp(v->str, "all") == 0 || strcmp(v->str, "none") == 0)) {
		bool all = strcmp(v->str, "all") == 0;
		for (int i = 0; i < n_layers; i++)
			mark[i] = all;
		return 0;
	}
	int rc = doc_expect(r->d, v, DOC_SEQ, key, r->e);
	if (rc < 0)
		return rc;
	for (int i = 0; i < n_layers; i++)
		mark[i] = false;
	for (size_t i = 0; i < v->n; i++) {
		int64_t layer;
		rc = doc_i64(r->d, v->items[i], key, &layer, r->e);
		if (rc < 0)
			return rc;
		if (layer < 1 || layer > n_layers)
			return doc_error(r->d, v->items[i], r->e,
					 "%s: layer %lld is outside 1..%d (layer lists are 1-based)", key,
					 (long long)layer, n_layers);
		if (mark[layer - 1])
			return doc_error(r->d, v->items[i], r->e, "%s: layer %lld listed twice", key,
					 (long long)layer);
		mark[layer - 1] = true;
	}
	return 0;
}

static int check_map(struct reader *r, const struct doc_node *n, const char *what,
		     const char *const *keys)
{
	int rc = doc_expect(r->d, n, DOC_MAP, what, r->e);
	if (rc < 0)
		return rc;
	return r->strict ? doc_check_keys(r->d, n, keys, r->e) : 0;
}

/* Consistency of the loaded dimensions, reported at the document root. */
static int validate(struct reader *r, const struct doc_node *root, const struct model *m)
{
	int kda = 0, mla = 0, moe = 0, dense = 0;
	for (int i = 0; i < m->n_layers; i++) {
		kda += m->attn[i] == ATTN_KDA;
		mla += m->attn[i] == ATTN_MLA;
		moe += m->ffn[i] == FFN_MOE;
		dense += m->ffn[i] == FFN_DENSE;
	}
	if (kda && (m->kda.heads <= 0 || m->kda.head_dim <= 0))
		return doc_error(r->d, root, r->e, "the model has KDA layers but no KDA heads/head_dim");
	if (mla && (m->mla.heads <= 0 || m->mla.kv_lora_rank <= 0 || m->mla.v_head_dim <= 0))
		return doc_error(r->d, root, r->e,
				 "the model has MLA layers but no MLA heads/kv_lora_rank/v_head_dim");
	if (moe && (m->moe.experts <= 0 || m->moe.top_k <= 0 || m->moe.intermediate <= 0))
		return doc_error(r->d, root, r->e, "the model has MoE layers but no experts/top_k/intermediate");
	if (moe && m->moe.top_k > m->moe.experts)
		return doc_error(r->d, root, r->e, "moe top_k (%lld) exceeds the number of experts (%lld)",
				 (long long)m->moe.top_k, (long long)m->moe.experts);
	if (dense && m->dense_intermediate <= 0)
		return doc_error(r->d, root, r->e, "the model has dense FFN layers but no intermediate size");
	if (m->dsa.index_heads && !mla)
		return doc_error(r->d, root, r->e, "a DSA indexer needs MLA layers");
	return 0;
}

/* The optional slice map (YAML preset key `slice`, config.json key `k3sim_slice`):
 * {layers_before: N, layers_only: true|false}. */
static int get_slice(struct reader *r, const struct doc_node *root, const char *key, struct model *m)
{
	static const char *const slice_keys[] = {"layers_before", "layers_only", NULL};
	const struct doc_node *n = doc_get(root, key);
	if (!n)
		return 0;
	int rc;
	struct reader strict = {.d = r->d, .e = r->e, .strict = true}; /* k3sim keys: every one known */
	if ((rc = check_map(&strict, n, key, slice_keys)) < 0 ||
	    (rc = get_i64(r, n, "layers_before", false, 0, 1 << 20, &m->slice_layers_before)) < 0 ||
	    (rc = get_bool(r, n, "layers_only", &m->slice_layers_only)) < 0)
		return rc;
	return 0;
}

/* ---- k3sim YAML preset ---- */

static int load_preset_tree(struct reader *r, const struct doc_node *root, struct model *m)
{
	static const char *const top_keys[] = {
		"name", "source", "description", "hidden_size", "vocab_size", "num_layers",
		"mla_layers", "dense_ffn_layers", "tie_embeddings", "kda", "mla", "dsa", "dense_ffn",
		"moe", "attn_res", "dtypes", "slice", NULL};
	static const char *const kda_keys[] = {"heads", "head_dim", "conv_kernel", "decay_rank",
		"gate_lower_bound", "output_gate", "output_gate_rank", NULL};
	static const char *const mla_keys[] = {"heads", "q_lora_rank", "kv_lora_rank",
		"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "output_gate", "rope", NULL};
	static const char *const dsa_keys[] = {"index_heads", "index_head_dim", "top_k",
		"index_key_bytes_per_token", NULL};
	static const char *const dense_keys[] = {"intermediate_size", NULL};
	static const char *const moe_keys[] = {"experts", "top_k", "latent_size", "intermediate_size",
		"shared_intermediate_size", "latent_norm", NULL};
	static const char *const res_keys[] = {"block_size", NULL};
	static const char *const dt_keys[] = {"weights", "routed_experts", NULL};
	const int64_t big = INT64_C(1) << 32;
	int rc;
	const struct doc_node *n = NULL;

	if ((rc = check_map(r, root, "model", top_keys)) < 0)
		return rc;
	if ((rc = need(r, root, "name", &n)) < 0)
		return rc;
	const char *s;
	if ((rc = doc_str(r->d, n, "name", &s, r->e)) < 0)
		return rc;
	snprintf(m->name, sizeof m->name, "%s", s);
	if ((n = doc_get(root, "source")) && (rc = doc_str(r->d, n, "source", &s, r->e)) == 0)
		snprintf(m->source, sizeof m->source, "%s", s);
	if (rc < 0)
		return rc;

	int64_t layers = 0;
	if ((rc = get_i64(r, root, "hidden_size", true, 1, big, &m->hidden)) < 0 ||
	    (rc = get_i64(r, root, "vocab_size", true, 1, big, &m->vocab)) < 0 ||
	    (rc = get_i64(r, root, "num_layers", true, 1, MODEL_MAX_LAYERS, &layers)) < 0 ||
	    (rc = get_bool(r, root, "tie_embeddings", &m->tie_embeddings)) < 0)
		return rc;
	m->n_layers = (int)layers;

	bool mark[MODEL_MAX_LAYERS], present;
	if ((rc = get_layer_set(r, root, "mla_layers", m->n_layers, mark, &present)) < 0)
		return rc;
	for (int i = 0; i < m->n_layers; i++)
		m->attn[i] = present && mark[i] ? ATTN_MLA : ATTN_KDA;
	if ((rc = get_layer_set(r, root, "dense_ffn_layers", m->n_layers, mark, &present)) < 0)
		return rc;
	for (int i = 0; i < m->n_layers; i++)
		m->ffn[i] = present && mark[i] ? FFN_DENSE : FFN_MOE;

	if ((n = doc_get(root, "kda"))) {
		if ((rc = check_map(r, n, "kda", kda_keys)) < 0 ||
		    (rc = get_i64(r, n, "heads", true, 1, big, &m->kda.heads)) < 0 ||
		    (rc = get_i64(r, n, "head_dim", true, 1, 4096, &m->kda.head_dim)) < 0 ||
		    (rc = get_i64(r, n, "conv_kernel", false, 1, 64, &m->kda.conv_kernel)) < 0 ||
		    (rc = get_i64(r, n, "decay_rank", false, 0, big, &m->kda.decay_rank)) < 0 ||
		    (rc = get_double(r, n, "gate_lower_bound", &m->kda.gate_lower_bound)) < 0 ||
		    (rc = get_i64(r, n, "output_gate_rank", false, 0, big, &m->kda.output_gate_rank)) < 0)
			return rc;
		const struct doc_node *g = doc_get(n, "output_gate");
		if (g) {
			if ((rc = doc_str(r->d, g, "output_gate", &s, r->e)) < 0)
				return rc;
			if (strcmp(s, "full") == 0)
				m->kda.output_gate = GATE_FULL;
			else if (strcmp(s, "low_rank") == 0)
				m->kda.output_gate = GATE_LOW_RANK;
			else if (strcmp(s, "none") == 0)
				m->kda.output_gate = GATE_NONE;
			else
				return doc_error(r->d, g, r->e,
						 "output_gate: expected full, low_rank or none, got '%s'", s);
		}
	}
	if ((n = doc_get(root, "mla"))) {
		if ((rc = check_map(r, n, "mla", mla_keys)) < 0 ||
		    (rc = get_i64(r, n, "heads", true, 1, big, &m->mla.heads)) < 0 ||
		    (rc = get_i64(r, n, "q_lora_rank", false, 0, big, &m->mla.q_lora_rank)) < 0 ||
		    (rc = get_i64(r, n, "kv_lora_rank", true, 1, big, &m->mla.kv_lora_rank)) < 0 ||
		    (rc = get_i64(r, n, "qk_nope_head_dim", true, 1, 4096, &m->mla.qk_nope_head_dim)) < 0 ||
		    (rc = get_i64(r, n, "qk_rope_head_dim", false, 0, 4096, &m->mla.qk_rope_head_dim)) < 0 ||
		    (rc = get_i64(r, n, "v_head_dim", true, 1, 4096, &m->mla.v_head_dim)) < 0 ||
		    (rc = get_bool(r, n, "output_gate", &m->mla.output_gate)) < 0 ||
		    (rc = get_bool(r, n, "rope", &m->mla.rope)) < 0)
			return rc;
	}
	if ((n = doc_get(root, "dsa"))) {
		if ((rc = check_map(r, n, "dsa", dsa_keys)) < 0 ||
		    (rc = get_i64(r, n, "index_heads", true, 1, big, &m->dsa.index_heads)) < 0 ||
		    (rc = get_i64(r, n, "index_head_dim", true, 1, 4096, &m->dsa.index_head_dim)) < 0 ||
		    (rc = get_i64(r, n, "top_k", true, 1, big, &m->dsa.top_k)) < 0 ||
		    (rc = get_i64(r, n, "index_key_bytes_per_token", false, 1, big,
				  &m->dsa.index_key_bytes_per_token)) < 0)
			return rc;
	}
	if ((n = doc_get(root, "dense_ffn"))) {
		if ((rc = check_map(r, n, "dense_ffn", dense_keys)) < 0 ||
		    (rc = get_i64(r, n, "intermediate_size", true, 1, big, &m->dense_intermediate)) < 0)
			return rc;
	}
	if ((n = doc_get(root, "moe"))) {
		if ((rc = check_map(r, n, "moe", moe_keys)) < 0 ||
		    (rc = get_i64(r, n, "experts", true, 1, 1 << 20, &m->moe.experts)) < 0 ||
		    (rc = get_i64(r, n, "top_k", true, 1, 1 << 20, &m->moe.top_k)) < 0 ||
		    (rc = get_i64(r, n, "latent_size", false, 1, big, &m->moe.latent)) < 0 ||
		    (rc = get_i64(r, n, "intermediate_size", true, 1, big, &m->moe.intermediate)) < 0 ||
		    (rc = get_i64(r, n, "shared_intermediate_size", false, 0, big,
				  &m->moe.shared_intermediate)) < 0 ||
		    (rc = get_bool(r, n, "latent_norm", &m->moe.latent_norm)) < 0)
			return rc;
	}
	if ((n = doc_get(root, "attn_res"))) {
		if ((rc = check_map(r, n, "attn_res", res_keys)) < 0 ||
		    (rc = get_i64(r, n, "block_size", true, 0, MODEL_MAX_LAYERS, &m->attn_res_block)) < 0)
			return rc;
	}
	if ((n = doc_get(root, "dtypes"))) {
		if ((rc = check_map(r, n, "dtypes", dt_keys)) < 0 ||
		    (rc = get_dtype(r, n, "weights", &m->weight_dtype)) < 0 ||
		    (rc = get_dtype(r, n, "routed_experts", &m->expert_dtype)) < 0)
			return rc;
	}
	return get_slice(r, root, "slice", m);
}

static void set_defaults(struct model *m)
{
	memset(m, 0, sizeof *m);
	m->kda.conv_kernel = 4;
	m->kda.gate_lower_bound = -5.0;
	m->kda.output_gate = GATE_FULL;
	m->weight_dtype = DT_BF16;
	m->expert_dtype = DT_BF16;
}

static void fill_derived_defaults(struct model *m)
{
	if (m->kda.decay_rank == 0)
		m->kda.decay_rank = m->kda.head_dim;
	if (m->kda.output_gate == GATE_LOW_RANK && m->kda.output_gate_rank == 0)
		m->kda.output_gate_rank = m->kda.head_dim;
	if (m->moe.latent == 0)
		m->moe.latent = m->hidden;
	if (m->dsa.index_heads && m->dsa.index_key_bytes_per_token == 0)
		m->dsa.index_key_bytes_per_token = m->dsa.index_head_dim + 4;
}

int model_load_yaml(struct model *m, const char *name, const char *text, size_t len_bytes,
		    struct err *e)
{
	struct doc d;
	int rc = doc_load_string(&d, name, text, len_bytes, e);
	if (rc < 0)
		return rc;
	struct model tmp;
	set_defaults(&tmp);
	struct reader r = {.d = &d, .e = e, .strict = true};
	if (!d.root) {
		rc = doc_error(&d, NULL, e, "empty model file");
		goto out;
	}
	if ((rc = load_preset_tree(&r, d.root, &tmp)) < 0)
		goto out;
	fill_derived_defaults(&tmp);
	if ((rc = validate(&r, d.root, &tmp)) < 0)
		goto out;
	*m = tmp;
out:
	doc_release(&d);
	return rc;
}

/* ---- Hugging Face config.json ---- */

/* Marks 1-based layers from a JSON list; entries outside 1..n are errors. */
static int hf_layer_list(struct reader *r, const struct doc_node *map, const char *key, int n_layers,
			 bool mark[MODEL_MAX_LAYERS], bool *present)
{
	return get_layer_set(r, map, key, n_layers, mark, present);
}

static int load_hf_tree(struct reader *r, const struct doc_node *top, struct model *m)
{
	int rc = doc_expect(r->d, top, DOC_MAP, "config", r->e);
	if (rc < 0)
		return rc;
	const struct doc_node *root = top, *tc = doc_get(top, "text_config");
	if (tc && tc->kind == DOC_MAP)
		root = tc;
	const int64_t big = INT64_C(1) << 32;
	int64_t layers = 0, first_dense = 0, kv_heads = 0, shared_experts = 0;
	const struct doc_node *n;

	if ((rc = get_i64(r, root, "hidden_size", true, 1, big, &m->hidden)) < 0 ||
	    (rc = get_i64(r, root, "vocab_size", true, 1, big, &m->vocab)) < 0 ||
	    (rc = get_i64(r, root, "num_hidden_layers", true, 1, MODEL_MAX_LAYERS, &layers)) < 0 ||
	    (rc = get_bool(r, root, "tie_word_embeddings", &m->tie_embeddings)) < 0 ||
	    (rc = get_i64(r, root, "first_k_dense_replace", false, 0, MODEL_MAX_LAYERS, &first_dense)) < 0 ||
	    (rc = get_i64(r, root, "intermediate_size", false, 0, big, &m->dense_intermediate)) < 0 ||
	    (rc = get_i64(r, root, "num_key_value_heads", false, 0, big, &kv_heads)) < 0)
		return rc;
	m->n_layers = (int)layers;

	/* MLA dimensions (DeepSeek/Kimi naming). */
	if ((rc = get_i64(r, root, "num_attention_heads", false, 1, big, &m->mla.heads)) < 0 ||
	    (rc = get_i64(r, root, "q_lora_rank", false, 0, big, &m->mla.q_lora_rank)) < 0 ||
	    (rc = get_i64(r, root, "kv_lora_rank", false, 0, big, &m->mla.kv_lora_rank)) < 0 ||
	    (rc = get_i64(r, root, "qk_nope_head_dim", false, 0, 4096, &m->mla.qk_nope_head_dim)) < 0 ||
	    (rc = get_i64(r, root, "qk_rope_head_dim", false, 0, 4096, &m->mla.qk_rope_head_dim)) < 0 ||
	    (rc = get_i64(r, root, "v_head_dim", false, 0, 4096, &m->mla.v_head_dim)) < 0 ||
	    (rc = get_bool(r, root, "mla_use_output_gate", &m->mla.output_gate)) < 0)
		return rc;
	bool nope = false;
	if ((rc = get_bool(r, root, "mla_use_nope", &nope)) < 0)
		return rc;
	m->mla.rope = !nope;

	/* DeepSeek-V3.2 indexer keys. */
	if ((rc = get_i64(r, root, "index_n_heads", false, 0, big, &m->dsa.index_heads)) < 0 ||
	    (rc = get_i64(r, root, "index_head_dim", false, 0, 4096, &m->dsa.index_head_dim)) < 0 ||
	    (rc = get_i64(r, root, "index_topk", false, 0, big, &m->dsa.top_k)) < 0)
		return rc;

	/* MoE: Kimi names first, DeepSeek names as fallbacks. */
	if ((rc = get_i64(r, root, "num_experts", false, 0, 1 << 20, &m->moe.experts)) < 0 ||
	    (rc = get_i64(r, root, "n_routed_experts", false, 0, 1 << 20, &m->moe.experts)) < 0 ||
	    (rc = get_i64(r, root, "num_experts_per_token", false, 0, 1 << 20, &m->moe.top_k)) < 0 ||
	    (rc = get_i64(r, root, "num_experts_per_tok", false, 0, 1 << 20, &m->moe.top_k)) < 0 ||
	    (rc = get_i64(r, root, "routed_expert_hidden_size", false, 0, big, &m->moe.latent)) < 0 ||
	    (rc = get_i64(r, root, "moe_intermediate_size", false, 0, big, &m->moe.intermediate)) < 0 ||
	    (rc = get_i64(r, root, "num_shared_experts", false, 0, 1024, &shared_experts)) < 0 ||
	    (rc = get_i64(r, root, "n_shared_experts", false, 0, 1024, &shared_experts)) < 0 ||
	    (rc = get_bool(r, root, "latent_moe_use_norm", &m->moe.latent_norm)) < 0 ||
	    (rc = get_i64(r, root, "attn_res_block_size", false, 0, MODEL_MAX_LAYERS, &m->attn_res_block)) < 0)
		return rc;
	m->moe.shared_intermediate = shared_experts * m->moe.intermediate;

	/* Layer order: linear_attn_config lists KDA and full-attention layers (1-based). */
	for (int i = 0; i < m->n_layers; i++) {
		m->attn[i] = ATTN_MLA;
		m->ffn[i] = (i < first_dense || m->moe.experts == 0) ? FFN_DENSE : FFN_MOE;
	}
	const struct doc_node *lac = doc_get(root, "linear_attn_config");
	if (lac && !doc_is_null(lac)) {
		if ((rc = doc_expect(r->d, lac, DOC_MAP, "linear_attn_config", r->e)) < 0)
			return rc;
		bool mark[MODEL_MAX_LAYERS], present, full_present;
		bool full[MODEL_MAX_LAYERS];
		if ((rc = hf_layer_list(r, lac, "kda_layers", m->n_layers, mark, &present)) < 0 ||
		    (rc = hf_layer_list(r, lac, "full_attn_layers", m->n_layers, full, &full_present)) < 0)
			return rc;
		if (!present)
			return doc_error(r->d, lac, r->e, "missing key 'kda_layers'");
		for (int i = 0; i < m->n_layers; i++) {
			if (full_present && mark[i] == full[i])
				return doc_error(r->d, lac, r->e,
						 "layer %d is %s in kda_layers and full_attn_layers", i + 1,
						 mark[i] ? "in both" : "in neither");
			m->attn[i] = mark[i] ? ATTN_KDA : ATTN_MLA;
		}
		int64_t head_dim = 0, heads = 0;
		if ((rc = get_i64(r, lac, "num_heads", true, 1, big, &heads)) < 0 ||
		    (rc = get_i64(r, lac, "head_dim", true, 1, 4096, &head_dim)) < 0 ||
		    (rc = get_i64(r, lac, "short_conv_kernel_size", false, 1, 64, &m->kda.conv_kernel)) < 0 ||
		    (rc = get_double(r, lac, "gate_lower_bound", &m->kda.gate_lower_bound)) < 0)
			return rc;
		m->kda.heads = heads;
		m->kda.head_dim = head_dim;
		bool full_rank = false;
		if ((rc = get_bool(r, lac, "use_full_rank_gate", &full_rank)) < 0)
			return rc;
		m->kda.output_gate = full_rank ? GATE_FULL : GATE_LOW_RANK;
	}

	/* Quantization: routed experts in MXFP4 when the format says so. */
	const struct doc_node *q = doc_get(root, "quantization_config");
	if (!q)
		q = doc_get(top, "quantization_config");
	if (q && q->kind == DOC_MAP && (n = doc_get(q, "format")) && n->kind == DOC_SCALAR) {
		if (strstr(n->str, "mxfp4"))
			m->expert_dtype = DT_MXFP4;
		else if (strstr(n->str, "fp8") || strstr(n->str, "float-quantized"))
			m->expert_dtype = DT_FP8;
	}
	if (q && q->kind == DOC_MAP && (n = doc_get(q, "quant_method")) && n->kind == DOC_SCALAR &&
	    strcmp(n->str, "fp8") == 0)
		m->expert_dtype = DT_FP8;
	(void)kv_heads;
	/* k3sim's own key: the config describes a slice of a deeper model. */
	return get_slice(r, root, "k3sim_slice", m);
}

int model_load_hf_config(struct model *m, const char *name, const char *text, size_t len_bytes,
			 struct err *e)
{
	struct doc d;
	int rc = doc_load_string(&d, name, text, len_bytes, e);
	if (rc < 0)
		return rc;
	struct model tmp;
	set_defaults(&tmp);
	struct reader r = {.d = &d, .e = e, .strict = false};
	if (!d.root) {
		rc = doc_error(&d, NULL, e, "empty config file");
		goto out;
	}
	if ((rc = load_hf_tree(&r, d.root, &tmp)) < 0)
		goto out;
	/* Name after the file: ".../kimi-k3-config.json" -> "kimi-k3-config". */
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	size_t len = strcspn(base, ".");
	snprintf(tmp.name, sizeof tmp.name, "%.*s", (int)(len < 63 ? len : 63), base);
	snprintf(tmp.source, sizeof tmp.source, "Hugging Face config %s", name);
	fill_derived_defaults(&tmp);
	if ((rc = validate(&r, d.root, &tmp)) < 0)
		goto out;
	*m = tmp;
out:
	doc_release(&d);
	return rc;
}

/* A path ending in .json is a Hugging Face config.json; anything else a k3sim YAML preset. */
static int parse_model(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	size_t n = strlen(label);
	if (n > 5 && strcmp(label + n - 5, ".json") == 0)
		return model_load_hf_config(obj, label, text, len_bytes, e);
	return model_load_yaml(obj, label, text, len_bytes, e);
}

int model_load(struct model *m, const char *name_or_path, struct err *e)
{
	return embedded_load(model_presets, "model", "preset", name_or_path, parse_model, m, e);
}

/* ---- inventory ---- */

static int64_t kda_layer_params(const struct model *m)
{
	const struct model_kda *k = &m->kda;
	int64_t h = m->hidden, p = k->heads * k->head_dim;
	int64_t gate = k->output_gate == GATE_FULL       ? h * p
		       : k->output_gate == GATE_LOW_RANK ? h * k->output_gate_rank + k->output_gate_rank * p
							 : 0;
	return 3 * h * p                              /* q, k, v projections */
	       + 3 * p * k->conv_kernel               /* ShortConv on q, k, v */
	       + h * k->decay_rank + k->decay_rank * p /* low-rank decay projection */
	       + p + k->heads                          /* dt_bias, A_log */
	       + h * k->heads                          /* beta projection */
	       + gate                                  /* sigmoid output gate */
	       + k->head_dim                           /* head-wise RMSNorm */
	       + p * h;                                /* o_proj */
}

static int64_t mla_layer_params(const struct model *m)
{
	const struct model_mla *a = &m->mla;
	int64_t h = m->hidden, qk = a->qk_nope_head_dim + a->qk_rope_head_dim;
	int64_t q = a->q_lora_rank ? h * a->q_lora_rank + a->q_lora_rank + a->q_lora_rank * a->heads * qk
				   : h * a->heads * qk;
	int64_t kv = h * (a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank +
		     a->kv_lora_rank * a->heads * (a->qk_nope_head_dim + a->v_head_dim);
	int64_t gate = a->output_gate ? h * a->heads * a->v_head_dim : 0;
	int64_t o = a->heads * a->v_head_dim * h;
	int64_t idx = 0;
	if (m->dsa.index_heads) {
		const struct model_dsa *x = &m->dsa;
		int64_t qin = a->q_lora_rank ? a->q_lora_rank : h;
		idx = qin * x->index_heads * x->index_head_dim /* index queries */
		      + h * x->index_head_dim + 2 * x->index_head_dim /* index key + its LayerNorm */
		      + h * x->index_heads;                     /* per-head weights */
	}
	return q + kv + gate + o + idx;
}

void model_inventory(const struct model *m, struct model_inventory *inv)
{
	memset(inv, 0, sizeof *inv);
	const int64_t h = m->hidden;
	const struct model_moe *x = &m->moe;
	for (int i = 0; i < m->n_layers; i++) {
		inv->kda_layers += m->attn[i] == ATTN_KDA;
		inv->mla_layers += m->attn[i] == ATTN_MLA;
		inv->dense_layers += m->ffn[i] == FFN_DENSE;
		inv->moe_layers += m->ffn[i] == FFN_MOE;
	}
	inv->params_embedding = m->slice_layers_only ? 0 : m->vocab * h;
	inv->params_lm_head = m->tie_embeddings || m->slice_layers_only ? 0 : m->vocab * h;
	inv->params_kda_layer = inv->kda_layers ? kda_layer_params(m) : 0;
	inv->params_mla_layer = inv->mla_layers ? mla_layer_params(m) : 0;
	inv->params_dense_ffn = inv->dense_layers ? 3 * h * m->dense_intermediate : 0;
	inv->params_per_expert = 3 * x->latent * x->intermediate;
	int64_t latent_proj = x->latent != h ? 2 * h * x->latent : 0;
	int64_t moe_fixed = h * x->experts + x->experts /* router + score bias */
			    + latent_proj + (x->latent_norm ? x->latent : 0) + 3 * h * x->shared_intermediate;
	inv->params_moe_layer = inv->moe_layers ? moe_fixed + x->experts * inv->params_per_expert : 0;
	inv->params_routed_experts = (int64_t)inv->moe_layers * x->experts * inv->params_per_expert;

	/* Per layer: two RMSNorms, and with Block AttnRes one pseudo-query per sublayer. */
	int64_t per_layer_small = 2 * h + (m->attn_res_block ? 2 * h : 0);
	int64_t final_small = m->slice_layers_only ? 0 : h + (m->attn_res_block ? h : 0);

	int64_t layers = (int64_t)inv->kda_layers * inv->params_kda_layer +
			 (int64_t)inv->mla_layers * inv->params_mla_layer +
			 (int64_t)inv->dense_layers * inv->params_dense_ffn +
			 (int64_t)inv->moe_layers * inv->params_moe_layer +
			 (int64_t)m->n_layers * per_layer_small + final_small;
	inv->params_total = inv->params_embedding + inv->params_lm_head + layers;
	int64_t inactive = (int64_t)inv->moe_layers * (x->experts - x->top_k) * inv->params_per_expert;
	inv->params_active = inv->params_total - inactive - inv->params_embedding +
			     (m->tie_embeddings ? inv->params_embedding : 0);
	inv->weights_bytes = dtype_bytes(m->expert_dtype, inv->params_routed_experts) +
			     dtype_bytes(m->weight_dtype, inv->params_total - inv->params_routed_experts);
	inv->kda_state_elements_per_layer = m->kda.heads * m->kda.head_dim * m->kda.head_dim;
	inv->conv_state_elements_per_layer =
		3 * m->kda.heads * m->kda.head_dim * (m->kda.conv_kernel > 0 ? m->kda.conv_kernel - 1 : 0);
	inv->mla_latent_elements_per_token_layer = m->mla.kv_lora_rank + m->mla.qk_rope_head_dim;
	inv->attn_res_sources = m->attn_res_block ? (m->slice_layers_before + m->n_layers + m->attn_res_block - 1) /
								    m->attn_res_block +
							    1
						  : 0;
}

static int count_layers(const struct model *m, enum attn_kind k)
{
	int n = 0;
	for (int i = 0; i < m->n_layers; i++)
		n += m->attn[i] == k;
	return n;
}

int64_t model_kda_state_bytes_per_request(const struct model *m, enum dtype state)
{
	int64_t per_layer = m->kda.heads * m->kda.head_dim * m->kda.head_dim;
	return count_layers(m, ATTN_KDA) * dtype_bytes(state, per_layer);
}

int64_t model_conv_state_bytes_per_request(const struct model *m, enum dtype state)
{
	int64_t taps = m->kda.conv_kernel > 0 ? m->kda.conv_kernel - 1 : 0;
	return count_layers(m, ATTN_KDA) * dtype_bytes(state, 3 * m->kda.heads * m->kda.head_dim * taps);
}

int64_t model_mla_kv_bytes_per_token(const struct model *m, enum dtype cache)
{
	int64_t per_layer;
	if (cache == DT_FP8)
		/* FlashMLA FP8: latent in FP8 with one FP32 scale per 128, rope part kept in BF16. */
		per_layer = m->mla.kv_lora_rank + 4 * ((m->mla.kv_lora_rank + 127) / 128) +
			    2 * m->mla.qk_rope_head_dim;
	else
		per_layer = dtype_bytes(cache, m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);
	return count_layers(m, ATTN_MLA) * per_layer;
}

int64_t model_mla_expanded_kv_bytes_per_token(const struct model *m)
{
	const struct model_mla *a = &m->mla;
	return count_layers(m, ATTN_MLA) * 2 * a->heads * (a->qk_nope_head_dim + a->qk_rope_head_dim + a->v_head_dim);
}

int64_t model_dsa_index_bytes_per_token(const struct model *m)
{
	return m->dsa.index_heads ? count_layers(m, ATTN_MLA) * m->dsa.index_key_bytes_per_token : 0;
}

double model_ep_ranks_per_token(const struct model_moe *x, int64_t ranks, double imbalance)
{
	if (ranks <= 1 || x->experts <= 0 || x->top_k <= 0)
		return 0;
	double e = (double)x->experts, r = (double)ranks;
	double hot = e / r * (imbalance > r ? r : imbalance < 1 ? 1 : imbalance);
	/* P(no expert of the rank among the k): C(E - hot, k) / C(E, k), as a product */
	double miss = 1;
	for (int64_t i = 0; i < x->top_k && miss > 0; i++) {
		if ((double)i >= e)
			return r; /* more picks than experts: every rank */
		double f = (e - hot - (double)i) / (e - (double)i);
		miss *= f > 0 ? f : 0;
	}
	return r * (1 - miss);
}
