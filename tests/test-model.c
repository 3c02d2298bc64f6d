/* model/: K3's published figures from its dims, loaders, op list invariants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/ops.h"

#ifndef K3_TEST_DATA
#define K3_TEST_DATA "tests/data"
#endif

static struct model k3;

static int setup(void **state)
{
	struct err e;
	return model_load(&k3, "kimi-k3", &e);
}

static void assert_within(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("%.6g is not within %.2f%% of %.6g", got, rel * 100, want);
}

/* Kimi K3 technical report, Table 1: 2.78 T parameters in total, 104.2 B activated per token
 * (input embedding excluded, LM head included). Tolerances as the foundation issue states. */
static void test_k3_params(void **state)
{
	struct model_inventory inv;
	model_inventory(&k3, &inv);
	assert_int_equal(inv.kda_layers, 69);
	assert_int_equal(inv.mla_layers, 24);
	assert_int_equal(inv.dense_layers, 1);
	assert_int_equal(inv.moe_layers, 92);
	assert_within((double)inv.params_total, 2.78e12, 0.005);
	assert_within((double)inv.params_active, 104.2e9, 0.01);
	/* Weights ~1.42 TiB with MXFP4 routed experts (DESIGN.md, facts). */
	assert_within((double)inv.weights_bytes, 1.42 * 1099511627776.0, 0.01);
}

/* Seed, section 3.4: 96 x 128 x 128 = 1,572,864 state elements per KDA layer; 3 MiB BF16 per
 * layer, 207 MiB per request over 69 layers (414 MiB in FP32). */
static void test_k3_state(void **state)
{
	struct model_inventory inv;
	model_inventory(&k3, &inv);
	assert_int_equal(inv.kda_state_elements_per_layer, 1572864);
	assert_int_equal(model_kda_state_bytes_per_request(&k3, DT_BF16), INT64_C(207) * 1048576);
	assert_int_equal(model_kda_state_bytes_per_request(&k3, DT_FP32), INT64_C(414) * 1048576);
	/* ShortConv: 3 convolutions x 12288 channels x 3 taps per layer (DESIGN.md). */
	assert_int_equal(inv.conv_state_elements_per_layer, 3 * 12288 * 3);
	assert_int_equal(model_conv_state_bytes_per_request(&k3, DT_BF16), INT64_C(69) * 3 * 12288 * 3 * 2);
	/* MLA latent: 512 + 64 = 576 elements = 1152 B (BF16) per token per layer; x24 = 27,648 B;
	 * FlashMLA's FP8 layout is 656 B per token per layer. */
	assert_int_equal(inv.mla_latent_elements_per_token_layer, 576);
	assert_int_equal(model_mla_kv_bytes_per_token(&k3, DT_BF16), 27648);
	assert_int_equal(model_mla_kv_bytes_per_token(&k3, DT_FP8), 24 * 656);
	/* Block AttnRes: 8 layer blocks + the embedding = 9 sources (seed, section 5.2). */
	assert_int_equal(inv.attn_res_sources, 9);
}

static void test_k3_layers(void **state)
{
	/* Published (1-based): MLA at 4, 8, ..., 92 and 93; layer 1 dense. 0-based here. */
	for (int i = 0; i < 93; i++) {
		bool mla = ((i + 1) % 4 == 0) || i == 92;
		assert_int_equal(k3.attn[i], mla ? ATTN_MLA : ATTN_KDA);
		assert_int_equal(k3.ffn[i], i == 0 ? FFN_DENSE : FFN_MOE);
	}
}

static void test_hf_config_matches_preset(void **state)
{
	struct model hf;
	struct err e;
	char path[512];
	/* tests/data holds a copy of shared/data/kimi-k3-config.json, the published config. */
	snprintf(path, sizeof path, "%s/kimi-k3-config.json", K3_TEST_DATA);
	int rc = model_load(&hf, path, &e);
	if (rc < 0)
		fail_msg("%s: %s", path, e.msg);
	struct model_inventory a, b;
	model_inventory(&k3, &a);
	model_inventory(&hf, &b);
	assert_int_equal(a.params_total, b.params_total);
	assert_int_equal(a.params_active, b.params_active);
	assert_int_equal(a.weights_bytes, b.weights_bytes);
	assert_memory_equal(k3.attn, hf.attn, sizeof k3.attn);
	assert_memory_equal(k3.ffn, hf.ffn, sizeof k3.ffn);
	assert_int_equal(hf.expert_dtype, DT_MXFP4);
}

static void test_counterfactuals(void **state)
{
	struct model full, dsa;
	struct err e;
	assert_int_equal(model_load(&full, "k3-full-mla", &e), 0);
	assert_int_equal(model_load(&dsa, "k3-dsa", &e), 0);
	/* The full-MLA design caches 93/24 of K3's bytes per token. */
	assert_int_equal(model_mla_kv_bytes_per_token(&full, DT_BF16) * 24,
			 model_mla_kv_bytes_per_token(&k3, DT_BF16) * 93);
	assert_int_equal(model_kda_state_bytes_per_request(&full, DT_FP32), 0);
	/* DSA: 128 FP8 + a 4-byte scale per token per layer, 93 layers. */
	assert_int_equal(model_dsa_index_bytes_per_token(&dsa), 93 * 132);
	assert_int_equal(model_dsa_index_bytes_per_token(&k3), 0);
}

static void test_ops_cover_k3(void **state)
{
	struct phase p = {.kind = PHASE_DECODE, .batch = 8, .tokens = 1, .context = 4096,
			  .kda_state = DT_FP32, .mla_cache = DT_BF16, .act = DT_BF16,
			  .expert_act = DT_MXFP8, .dispatch = DT_FP8, .kda_chunk = 16};
	static struct op_list l;
	assert_int_equal(model_build_ops(&k3, &p, &l), 0);
	static const char *const must[] = {"embed", "attnres.pre_attn", "norm.attn", "kda.qkv_proj",
		"kda.decay_a", "kda.beta_proj", "kda.gate_proj", "kda.decode", "kda.o_proj", "mla.q_a",
		"mla.q_b", "mla.kv_a", "mla.q_absorb", "mla.attn", "mla.v_absorb", "mla.gate_proj",
		"mla.o_proj", "attnres.pre_ffn", "ffn.gate_up", "ffn.down", "moe.router_down", "moe.topk",
		"moe.dispatch", "moe.experts_gate_up", "moe.situ_glu", "moe.experts_down", "moe.combine",
		"moe.combine_norm", "moe.shared_gate_up", "moe.up", "attnres.final", "norm.final",
		"lm_head", NULL};
	for (int i = 0; must[i]; i++) {
		bool found = false;
		for (int j = 0; j < l.n; j++)
			found |= strcmp(l.ops[j].name, must[i]) == 0;
		if (!found)
			fail_msg("decode op list lacks %s", must[i]);
	}
	/* Layers add up: every layer's attention is one KDA or MLA group. */
	int64_t kda = 0, mla = 0;
	for (int j = 0; j < l.n; j++) {
		if (strcmp(l.ops[j].name, "kda.decode") == 0)
			kda += l.ops[j].layers;
		if (strcmp(l.ops[j].name, "mla.attn") == 0)
			mla += l.ops[j].layers;
	}
	assert_int_equal(kda, 69);
	assert_int_equal(mla, 24);

	/* The weights the ops read in a decode step (all experts touched) equal the model's weights
	 * minus the embedding table and the small vectors the ops do not list. */
	double w = 0;
	for (int j = 0; j < l.n; j++)
		w += (double)l.ops[j].bytes_weight * (double)l.ops[j].layers;
	struct model_inventory inv;
	model_inventory(&k3, &inv);
	double expect = (double)inv.weights_bytes - 2.0 * (double)inv.params_embedding;
	assert_within(w, expect, 0.002);

	/* A KDA decode step moves the whole state twice: 2 x 414 MiB per request in FP32. */
	int64_t state_bytes = 0;
	for (int j = 0; j < l.n; j++)
		if (l.ops[j].kind == OP_KDA_DECODE)
			state_bytes += (l.ops[j].bytes_state_read + l.ops[j].bytes_state_write -
				  l.ops[j].extra_state_bytes) * l.ops[j].layers;
	assert_int_equal(state_bytes, 8 * 2 * model_kda_state_bytes_per_request(&k3, DT_FP32));
}

/* Every op model_build_ops lists carries a role, whose name and split it takes, for every preset
 * and every phase variant (prefill, decode, mixed chunk, the reference path, FP8 activations with
 * their casts, the MoE permute, a slice without the vocab ops). An op pushed without a role fails
 * here. */
static void test_ops_have_roles(void **state)
{
	static struct op_list l;
	int variants = 0;
	for (const char *const *n = model_preset_names(); *n; n++) {
		struct model m;
		struct err e;
		assert_int_equal(model_load(&m, *n, &e), 0);
		for (int v = 0; v < 16; v++) {
			struct phase p = {.kind = (v & 1) ? PHASE_DECODE : PHASE_PREFILL, .batch = 2,
					  .tokens = (v & 1) ? 1 : 256, .context = 1024, .kda_state = DT_FP32,
					  .mla_cache = DT_BF16, .act = (v & 4) ? DT_FP8 : DT_BF16,
					  .expert_act = DT_MXFP8, .dispatch = DT_FP8, .kda_chunk = 16,
					  .reference_path = (v & 2) != 0, .moe_permute = (v & 8) != 0};
			if ((v & 1) && (v & 8)) {
				p.mixed_tokens = 128;
				p.mixed_context = 512;
			}
			struct model sl = m;
			sl.slice_layers_only = (v & 6) == 6;
			assert_int_equal(model_build_ops(&sl, &p, &l), 0);
			for (int j = 0; j < l.n; j++) {
				const struct op *o = &l.ops[j];
				if (o->role <= OP_ROLE_NONE || o->role >= OP_ROLE_COUNT)
					fail_msg("%s variant %d: op %d ('%s') has no role", *n, v, j, o->name);
				assert_string_equal(o->name, op_role_name(o->role));
				assert_int_equal(o->split, op_role_split(o->role));
				assert_true(o->split != SPLIT_COMM || op_is_comm(o->kind));
			}
			variants++;
		}
	}
	assert_true(variants >= 5 * 16);
	/* every role has a distinct name */
	for (int a = OP_ROLE_NONE + 1; a < OP_ROLE_COUNT; a++)
		for (int b = a + 1; b < OP_ROLE_COUNT; b++)
			if (strcmp(op_role_name((enum op_role)a), op_role_name((enum op_role)b)) == 0)
				fail_msg("roles %d and %d share the name '%s'", a, b, op_role_name((enum op_role)a));
}

/* model_weight_split (the ops' weights by their roles' splits, and the vectors no GEMM reads) adds
 * up to the inventory's weights, stated separately from the configuration, for every preset. */
static void test_weight_split_matches_inventory(void **state)
{
	for (const char *const *n = model_preset_names(); *n; n++) {
		struct model m;
		struct err e;
		assert_int_equal(model_load(&m, *n, &e), 0);
		for (int tied = 0; tied < 2; tied++) {
			m.tie_embeddings = tied;
			struct model_weight_split ws;
			struct model_inventory inv;
			model_weight_split(&m, &ws);
			model_inventory(&m, &inv);
			assert_true(ws.tp_sharded > 0 && ws.replicated > 0 && ws.vocab > 0);
			if (ws.tp_sharded + ws.replicated + ws.vocab + ws.experts != inv.weights_bytes)
				fail_msg("%s (tied %d): split %lld + %lld + %lld + %lld != inventory %lld", *n, tied,
					 (long long)ws.tp_sharded, (long long)ws.replicated, (long long)ws.vocab,
					 (long long)ws.experts, (long long)inv.weights_bytes);
			assert_true(ws.held_tp <= ws.tp_sharded && ws.held_replicated <= ws.replicated &&
				    ws.held_vocab <= ws.vocab);
		}
	}
}

static const struct op *find_op(const struct op_list *l, const char *name)
{
	for (int j = 0; j < l->n; j++)
		if (strcmp(l->ops[j].name, name) == 0)
			return &l->ops[j];
	return NULL;
}

/* The kernels a DeepSeek-V3 FP8 prefill step runs besides its GEMMs, attention and all-to-alls
 * (LMSYS 2025-05-05, "Prefill Time Breakdown": 5.1 ms of "other kernels" per layer in DeepSeek's
 * profile, 6.1 in SGLang's, where k3sim had 1.7): the per-token-group FP8 casts before the FP8
 * GEMMs, RoPE, the MHA key built from k_nope and k_pe, and DeepEP normal's permute into DeepGEMM's
 * contiguous layout and back. Bytes from the shapes; none of them without FP8 activations or
 * without the permute (K3's default BF16 activations, low-latency decode). */
static void test_prefill_kernels_dsv3(void **state)
{
	(void)state;
	struct model ds;
	struct err e;
	assert_int_equal(model_load(&ds, "deepseek-v3", &e), 0);
	struct phase p = {.kind = PHASE_PREFILL, .batch = 2, .tokens = 4096, .context = 0,
			  .kda_state = DT_FP32, .mla_cache = DT_BF16, .act = DT_FP8,
			  .expert_act = DT_FP8, .dispatch = DT_FP8, .kda_chunk = 16, .moe_permute = true};
	static struct op_list l;
	assert_int_equal(model_build_ops(&ds, &p, &l), 0);
	const int64_t M = 2 * 4096, h = 7168, heads = 128;
	const struct op *q = find_op(&l, "mla.quant_in");
	assert_non_null(q);
	assert_int_equal(q->kind, OP_QUANT); /* the quantizer, an op kind of its own */
	assert_int_equal(q->k, 128);
	assert_int_equal(q->o_dtype, DT_FP8);
	assert_int_equal(q->bytes_act_in, M * h * 2);          /* BF16 read */
	assert_int_equal(q->bytes_act_out, M * h + M * h / 32); /* FP8 + an FP32 scale per 128 */
	assert_non_null(find_op(&l, "mla.quant_q_b"));
	assert_non_null(find_op(&l, "mla.quant_kv_b"));
	q = find_op(&l, "mla.quant_o_proj");
	assert_non_null(q);
	assert_int_equal(q->n, heads * 128);
	assert_non_null(find_op(&l, "moe.quant_in"));
	assert_non_null(find_op(&l, "ffn.quant_in"));
	assert_int_equal(find_op(&l, "ffn.quant_in")->kind, OP_QUANT);
	const struct op *r = find_op(&l, "mla.rope");
	assert_non_null(r);
	assert_int_equal(r->n, (heads + 1) * 64);
	const struct op *k = find_op(&l, "mla.k_concat");
	assert_non_null(k);
	assert_int_equal(k->bytes_act_out, M * heads * 192 * 2); /* K whole, BF16 */
	assert_int_equal(k->bytes_act_in, M * heads * 128 * 2);  /* k_nope read */
	const struct op *pm = find_op(&l, "moe.permute"), *um = find_op(&l, "moe.unpermute");
	assert_non_null(pm);
	assert_non_null(um);
	assert_int_equal(pm->bytes_act_in, M * 8 * h); /* top-8 rows of FP8 */
	assert_int_equal(um->bytes_act_in, M * 8 * h * 2); /* BF16 expert outputs */

	/* BF16 activations: no casts; low-latency layout: no permute */
	p.act = DT_BF16;
	p.moe_permute = false;
	assert_int_equal(model_build_ops(&ds, &p, &l), 0);
	static const char *const absent[] = {"mla.quant_in", "mla.quant_q_b", "mla.quant_kv_b",
		"mla.quant_o_proj", "moe.quant_in", "ffn.quant_in", "moe.permute", "moe.unpermute", NULL};
	for (int i = 0; absent[i]; i++)
		if (find_op(&l, absent[i]))
			fail_msg("%s without FP8 activations or the permute", absent[i]);
	assert_non_null(find_op(&l, "mla.k_concat"));

	/* BF16 activations, FP8 expert inputs and no dispatch to quantize in: the experts' input
	 * quantizer of the slice (k3_gemm_quantize_e4m3_rows: E4M3, one FP32 scale a row); MXFP8
	 * inputs: an E8M0 byte per 32 */
	p.expert_quant_in = true;
	assert_int_equal(model_build_ops(&ds, &p, &l), 0);
	q = find_op(&l, "moe.quant_in");
	assert_non_null(q);
	assert_int_equal(q->kind, OP_QUANT);
	assert_int_equal(q->k, 0);
	assert_int_equal(q->o_dtype, DT_FP8);
	assert_int_equal(q->bytes_act_out, M * h + M * 4);
	p.expert_act = DT_MXFP8;
	assert_int_equal(model_build_ops(&ds, &p, &l), 0);
	q = find_op(&l, "moe.quant_in");
	assert_non_null(q);
	assert_int_equal(q->k, 32);
	assert_int_equal(q->o_dtype, DT_MXFP8);
	assert_int_equal(q->bytes_act_out, M * h + M * h / 32);
}

/* Expected distinct EP ranks a token reaches, R x (1 - C(E - E/R, k) / C(E, k)), for K3's 896
 * experts and top-16 (values from Python's math.comb). */
static void test_ep_ranks_per_token(void **state)
{
	const struct model_moe *x = &k3.moe;
	assert_int_equal(x->experts, 896);
	assert_int_equal(x->top_k, 16);
	assert_true(model_ep_ranks_per_token(x, 1, 1.0) == 0);
	assert_true(model_ep_ranks_per_token(x, 0, 1.0) == 0);
	assert_within(model_ep_ranks_per_token(x, 2, 1.0), 1.999973370765329, 1e-9);
	assert_within(model_ep_ranks_per_token(x, 8, 1.0), 7.073585150953506, 1e-9);
	assert_within(model_ep_ranks_per_token(x, 16, 1.0), 10.354064175894074, 1e-9);
	assert_within(model_ep_ranks_per_token(x, 64, 1.0), 14.361909993975331, 1e-9);
	/* Never more ranks than top_k copies or than ranks; the busiest rank gets more. */
	double last = 0;
	for (int64_t r = 2; r <= 896; r *= 2) {
		double d = model_ep_ranks_per_token(x, r, 1.0);
		assert_true(d > last && d <= (double)x->top_k && d <= (double)r);
		assert_true(model_ep_ranks_per_token(x, r, 1.5) >= d);
		last = d;
	}
	/* imbalance R: the busiest rank holds all the routing, every token reaches it */
	assert_within(model_ep_ranks_per_token(x, 16, 16.0), 16.0, 1e-12);
	assert_within(model_ep_ranks_per_token(x, 16, 100.0), 16.0, 1e-12);
	struct model_moe tiny = {.experts = 4, .top_k = 8};
	assert_within(model_ep_ranks_per_token(&tiny, 8, 1.0), 8.0, 1e-12);
}

static void test_bad_model_input(void **state)
{
	struct model m;
	struct err e;
	char buf[600];
	const char *unknown = "name: x\nhidden_size: 64\nvocab_size: 10\nnum_layers: 2\nhiden: 3\n";
	assert_true(model_load_yaml(&m, "m.yaml", unknown, strlen(unknown), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "m.yaml:5:1: error: unknown key 'hiden' (did you mean 'hidden_size'?)");
	const char *missing = "name: x\nvocab_size: 10\nnum_layers: 2\n";
	assert_true(model_load_yaml(&m, "m.yaml", missing, strlen(missing), &e) < 0);
	assert_non_null(strstr(e.msg, "missing key 'hidden_size'"));
	const char *type = "name: x\nhidden_size: wide\nvocab_size: 10\nnum_layers: 2\n";
	assert_true(model_load_yaml(&m, "m.yaml", type, strlen(type), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "m.yaml:2:14: error: hidden_size: expected an integer, got 'wide'");
	const char *layer = "name: x\nhidden_size: 8\nvocab_size: 10\nnum_layers: 2\nmla_layers: [3]\n";
	assert_true(model_load_yaml(&m, "m.yaml", layer, strlen(layer), &e) < 0);
	assert_non_null(strstr(e.msg, "outside 1..2"));
	const char *json = "{\"hidden_size\": 7168, \"num_hidden_layers\": ";
	assert_true(model_load_hf_config(&m, "c.json", json, strlen(json), &e) < 0);
	assert_non_null(strstr(e.msg, "malformed JSON"));
	assert_true(model_load(&m, "kimi-k4", &e) < 0);
	assert_non_null(strstr(e.msg, "did you mean 'kimi-k3'"));
	assert_true(model_load(&m, "/nonexistent/model.yaml", &e) < 0);
	assert_non_null(strstr(e.msg, "cannot open"));
}

/* A slice of a deeper model (model.h: slice_*): the layers alone, AttnRes counting the blocks
 * before them; the shape of scenarios/k3-slice-config.json (K3's layers 89-92). */
static void test_slice(void **state)
{
	(void)state;
	const char *yaml = "name: s\nhidden_size: 64\nvocab_size: 1000\nnum_layers: 4\nmla_layers: [4]\n"
			   "kda: {heads: 2, head_dim: 16}\nmla: {heads: 2, kv_lora_rank: 32, qk_nope_head_dim: 16,"
			   " qk_rope_head_dim: 8, v_head_dim: 16}\nmoe: {experts: 8, top_k: 2, intermediate_size: 32}\n"
			   "attn_res: {block_size: 12}\nslice: {layers_before: 88, layers_only: true}\n";
	struct model m, whole;
	struct err e;
	if (model_load_yaml(&m, "s.yaml", yaml, strlen(yaml), &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(m.slice_layers_before, 88);
	assert_true(m.slice_layers_only);
	struct model_inventory inv, winv;
	model_inventory(&m, &inv);
	assert_int_equal(inv.params_embedding, 0);
	assert_int_equal(inv.params_lm_head, 0);
	assert_int_equal(inv.attn_res_sources, 9); /* 92 layers: 8 blocks + the embedding */
	whole = m;
	whole.slice_layers_before = 0, whole.slice_layers_only = false;
	model_inventory(&whole, &winv);
	assert_int_equal(winv.params_total - inv.params_total, 2 * 1000 * 64 + 2 * 64); /* + final norm, query */

	struct phase p = {.kind = PHASE_PREFILL, .batch = 1, .tokens = 32, .kda_state = DT_FP32,
			  .mla_cache = DT_BF16, .act = DT_BF16, .expert_act = DT_BF16, .dispatch = DT_FP8,
			  .kda_chunk = 16};
	static struct op_list l;
	assert_int_equal(model_build_ops(&m, &p, &l), 0);
	int attnres = 0;
	for (int i = 0; i < l.n; i++) {
		static const char *const absent[] = {"embed", "attnres.final", "norm.final", "lm_head", "sample", NULL};
		for (int j = 0; absent[j]; j++)
			if (strcmp(l.ops[i].name, absent[j]) == 0)
				fail_msg("a layers-only slice has op %s", absent[j]);
		/* Layers 89-92 of blocks of 12: the embedding, 7 blocks and the partial sum mixed
		 * (9 sources), plus the sublayer's input: 10 reads per element, one output; an
		 * AttnRes op of its own kind (issue 17), not an elementwise one. */
		if (strncmp(l.ops[i].name, "attnres.pre_", 12) == 0) {
			attnres++;
			assert_int_equal(l.ops[i].kind, OP_ATTNRES);
			assert_true(fabs(l.ops[i].sources - 9.0) < 1e-9);
			assert_int_equal(l.ops[i].bytes_act_in, 10 * 32 * 64 * 2);
			assert_int_equal(l.ops[i].bytes_act_out, 32 * 64 * 2);
		}
		/* the router's top-k and the combine are ops of their own kinds too */
		if (strcmp(l.ops[i].name, "moe.topk") == 0) {
			assert_int_equal(l.ops[i].kind, OP_ROUTE);
			assert_int_equal(l.ops[i].n, 8);
			assert_int_equal(l.ops[i].top_k, 2);
		}
		if (strcmp(l.ops[i].name, "moe.combine_norm") == 0)
			assert_int_equal(l.ops[i].kind, OP_COMBINE);
		if (strcmp(l.ops[i].name, "kda.conv_norm") == 0) {
			assert_int_equal(l.ops[i].kind, OP_SHORT_CONV);
			assert_int_equal(l.ops[i].m, 32);
		}
	}
	assert_int_equal(attnres, 4); /* pre_attn and pre_ffn of the KDA group and the MLA group */
	assert_int_equal(model_build_ops(&whole, &p, &l), 0);
	assert_string_equal(l.ops[0].name, "embed");

	/* config.json: k3sim's key; its fields checked. */
	const char *bad = "{\"hidden_size\": 64, \"vocab_size\": 10, \"num_hidden_layers\": 2,\n"
			  " \"k3sim_slice\": {\"layers_befor\": 3}}";
	char buf[600];
	assert_true(model_load_hf_config(&m, "c.json", bad, strlen(bad), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "c.json:2:18: error: unknown key 'layers_befor' (did you mean 'layers_before'?)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_k3_params),       cmocka_unit_test(test_k3_state),
		cmocka_unit_test(test_k3_layers),       cmocka_unit_test(test_hf_config_matches_preset),
		cmocka_unit_test(test_counterfactuals), cmocka_unit_test(test_ops_cover_k3),
		cmocka_unit_test(test_bad_model_input), cmocka_unit_test(test_ep_ranks_per_token),
		cmocka_unit_test(test_slice),          cmocka_unit_test(test_ops_have_roles),
		cmocka_unit_test(test_weight_split_matches_inventory),
		cmocka_unit_test(test_prefill_kernels_dsv3),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
