/* k3sim model NAME|PATH [--json]: the inventory of a model preset or an HF config.json. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "model/model.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim model NAME|PATH [--json]\n\n"
		"Inventory of a model: layer order, parameters (total and active per token), weight bytes,\n"
		"per-request KDA and ShortConv state, per-token MLA cache.\n\n"
		"  NAME      an embedded preset:");
	for (const char *const *p = model_preset_names(); *p; p++)
		fprintf(out, " %s", *p);
	fprintf(out, "\n"
		"  PATH      a k3sim model YAML, or a Hugging Face config.json (*.json)\n"
		"  --json    machine-readable output (layer lists are 0-based)\n");
}

static void print_list(struct jw *w, const char *key, const struct model *m, int which)
{
	jw_begin_array(w, key);
	for (int i = 0; i < m->n_layers; i++) {
		bool in = which == 0   ? m->attn[i] == ATTN_KDA
			  : which == 1 ? m->attn[i] == ATTN_MLA
			  : which == 2 ? m->ffn[i] == FFN_DENSE
				       : m->ffn[i] == FFN_MOE;
		if (in)
			jw_i64(w, NULL, i);
	}
	jw_end_array(w);
}

static void print_json(const struct model *m, const struct model_inventory *inv)
{
	struct jw w;
	jw_init(&w, stdout);
	jw_begin_object(&w, NULL);
	jw_str(&w, "name", m->name);
	jw_str(&w, "source", m->source);
	jw_i64(&w, "num_layers", m->n_layers);
	jw_begin_array(&w, "layers");
	for (int i = 0; i < m->n_layers; i++) {
		jw_begin_object(&w, NULL);
		jw_i64(&w, "index", i);
		jw_str(&w, "attention", attn_kind_name(m->attn[i]));
		jw_str(&w, "ffn", m->ffn[i] == FFN_MOE ? "moe" : "dense");
		jw_end_object(&w);
	}
	jw_end_array(&w);
	print_list(&w, "kda_layers", m, 0);
	print_list(&w, "mla_layers", m, 1);
	print_list(&w, "dense_ffn_layers", m, 2);
	print_list(&w, "moe_layers", m, 3);
	jw_i64(&w, "hidden_size", m->hidden);
	jw_i64(&w, "vocab_size", m->vocab);
	jw_i64(&w, "params_total", inv->params_total);
	jw_i64(&w, "params_active", inv->params_active);
	jw_begin_object(&w, "params_breakdown");
	jw_i64(&w, "embedding", inv->params_embedding);
	jw_i64(&w, "lm_head", inv->params_lm_head);
	jw_i64(&w, "kda_layer", inv->params_kda_layer);
	jw_i64(&w, "mla_layer", inv->params_mla_layer);
	jw_i64(&w, "dense_ffn_layer", inv->params_dense_ffn);
	jw_i64(&w, "moe_layer", inv->params_moe_layer);
	jw_i64(&w, "routed_expert", inv->params_per_expert);
	jw_i64(&w, "routed_experts_all_layers", inv->params_routed_experts);
	jw_end_object(&w);
	jw_i64(&w, "weights_bytes", inv->weights_bytes);
	jw_str(&w, "weight_dtype", dtype_name(m->weight_dtype));
	jw_str(&w, "routed_expert_dtype", dtype_name(m->expert_dtype));
	jw_i64(&w, "kda_state_elements_per_layer", inv->kda_state_elements_per_layer);
	jw_i64(&w, "kda_state_bytes_per_request", model_kda_state_bytes_per_request(m, DT_BF16));
	jw_begin_object(&w, "kda_state_bytes_per_request_by_dtype");
	jw_i64(&w, "bf16", model_kda_state_bytes_per_request(m, DT_BF16));
	jw_i64(&w, "fp32", model_kda_state_bytes_per_request(m, DT_FP32));
	jw_end_object(&w);
	jw_i64(&w, "conv_state_elements_per_layer", inv->conv_state_elements_per_layer);
	jw_i64(&w, "conv_state_bytes_per_request", model_conv_state_bytes_per_request(m, DT_BF16));
	jw_begin_object(&w, "conv_state_bytes_per_request_by_dtype");
	jw_i64(&w, "bf16", model_conv_state_bytes_per_request(m, DT_BF16));
	jw_i64(&w, "fp32", model_conv_state_bytes_per_request(m, DT_FP32));
	jw_end_object(&w);
	jw_i64(&w, "mla_latent_elements_per_token_per_layer", inv->mla_latent_elements_per_token_layer);
	jw_i64(&w, "mla_kv_bytes_per_token", model_mla_kv_bytes_per_token(m, DT_BF16));
	jw_begin_object(&w, "mla_kv_bytes_per_token_by_dtype");
	jw_i64(&w, "bf16", model_mla_kv_bytes_per_token(m, DT_BF16));
	jw_i64(&w, "fp8", model_mla_kv_bytes_per_token(m, DT_FP8));
	jw_end_object(&w);
	jw_i64(&w, "dsa_index_bytes_per_token", model_dsa_index_bytes_per_token(m));
	jw_i64(&w, "attn_res_block_size", m->attn_res_block);
	jw_i64(&w, "attn_res_sources", inv->attn_res_sources);
	jw_begin_object(&w, "moe");
	jw_i64(&w, "experts", m->moe.experts);
	jw_i64(&w, "top_k", m->moe.top_k);
	jw_i64(&w, "latent_size", m->moe.latent);
	jw_i64(&w, "intermediate_size", m->moe.intermediate);
	jw_i64(&w, "shared_intermediate_size", m->moe.shared_intermediate);
	jw_end_object(&w);
	jw_end_object(&w);
	jw_finish(&w);
}

static void print_layers(const struct model *m, enum attn_kind k)
{
	int col = 0;
	for (int i = 0; i < m->n_layers; i++)
		if (m->attn[i] == k) {
			if (col && col % 24 == 0)
				printf("\n%22s", "");
			printf(" %d", i + 1);
			col++;
		}
	printf("\n");
}

static void print_human(const struct model *m, const struct model_inventory *inv)
{
	char a[32], b[32], c[32];
	printf("model %s", m->name);
	if (m->source[0])
		printf("  (%s)", m->source);
	printf("\n\n");
	printf("%-22s%d: %d KDA + %d MLA%s; %d dense FFN + %d MoE\n", "layers", m->n_layers,
	       inv->kda_layers, inv->mla_layers, m->dsa.index_heads ? " (with DSA indexer)" : "",
	       inv->dense_layers, inv->moe_layers);
	if (inv->mla_layers && inv->kda_layers) {
		printf("%-22s", "MLA layers (1-based)");
		print_layers(m, ATTN_MLA);
	}
	printf("%-22s%s total, %s active per token (input embedding excluded, LM head included)\n",
	       "parameters", cli_count((double)inv->params_total, a, sizeof a),
	       cli_count((double)inv->params_active, b, sizeof b));
	if (inv->kda_layers)
		printf("%-22s%s per KDA layer\n", "", cli_count((double)inv->params_kda_layer, a, sizeof a));
	if (inv->mla_layers)
		printf("%-22s%s per MLA layer\n", "", cli_count((double)inv->params_mla_layer, a, sizeof a));
	if (inv->dense_layers)
		printf("%-22s%s per dense FFN\n", "", cli_count((double)inv->params_dense_ffn, a, sizeof a));
	if (inv->moe_layers)
		printf("%-22s%s per MoE layer (%lld experts x %s, top-%lld, latent %lld)\n", "",
		       cli_count((double)inv->params_moe_layer, a, sizeof a), (long long)m->moe.experts,
		       cli_count((double)inv->params_per_expert, b, sizeof b), (long long)m->moe.top_k,
		       (long long)m->moe.latent);
	printf("%-22s%s (routed experts %s, the rest %s)\n", "weights",
	       cli_bytes((double)inv->weights_bytes, a, sizeof a), dtype_name(m->expert_dtype),
	       dtype_name(m->weight_dtype));
	if (inv->kda_layers) {
		printf("%-22s%lld elements per layer; per request %s (bf16) / %s (fp32)\n", "KDA state",
		       (long long)inv->kda_state_elements_per_layer,
		       cli_bytes((double)model_kda_state_bytes_per_request(m, DT_BF16), a, sizeof a),
		       cli_bytes((double)model_kda_state_bytes_per_request(m, DT_FP32), b, sizeof b));
		printf("%-22s%lld elements per layer; per request %s (bf16) / %s (fp32)\n", "ShortConv state",
		       (long long)inv->conv_state_elements_per_layer,
		       cli_bytes((double)model_conv_state_bytes_per_request(m, DT_BF16), a, sizeof a),
		       cli_bytes((double)model_conv_state_bytes_per_request(m, DT_FP32), b, sizeof b));
	}
	if (inv->mla_layers) {
		int64_t bf16 = model_mla_kv_bytes_per_token(m, DT_BF16);
		printf("%-22s%lld elements per token per layer; per token %lld B (bf16) / %lld B (fp8)\n",
		       "MLA latent cache", (long long)inv->mla_latent_elements_per_token_layer, (long long)bf16,
		       (long long)model_mla_kv_bytes_per_token(m, DT_FP8));
		printf("%-22s%s per request at 128K tokens, %s at 1M (bf16)\n", "",
		       cli_bytes((double)bf16 * 131072.0, a, sizeof a), cli_bytes((double)bf16 * 1048576.0, c, sizeof c));
	}
	if (m->dsa.index_heads)
		printf("%-22s%lld B per token (%lld heads x %lld, top-%lld)\n", "DSA index cache",
		       (long long)model_dsa_index_bytes_per_token(m), (long long)m->dsa.index_heads,
		       (long long)m->dsa.index_head_dim, (long long)m->dsa.top_k);
	if (m->attn_res_block)
		printf("%-22sblocks of %lld layers, %lld sources (the embedding + %lld blocks)\n", "Block AttnRes",
		       (long long)m->attn_res_block, (long long)inv->attn_res_sources,
		       (long long)inv->attn_res_sources - 1);
}

int cmd_model(int argc, char **argv)
{
	const char *target = NULL;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "k3sim model: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!target) {
			target = argv[i];
		} else {
			fprintf(stderr, "k3sim model: one model at a time ('%s' and '%s')\n", target, argv[i]);
			return 2;
		}
	}
	if (!target) {
		usage(stderr);
		return 2;
	}
	struct model m;
	struct err e;
	if (model_load(&m, target, &e) < 0) {
		cli_error("model", &e);
		return 1;
	}
	struct model_inventory inv;
	model_inventory(&m, &inv);
	if (json)
		print_json(&m, &inv);
	else
		print_human(&m, &inv);
	return 0;
}
