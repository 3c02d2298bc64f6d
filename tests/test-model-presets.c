/* model/presets/: the comparison presets (Kimi Linear, DeepSeek-V3, DeepSeek-V3.2 and the
 * counterfactual full-MLA Kimi Linear) against their published figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"

static void load(struct model *m, const char *name)
{
	struct err e;
	if (model_load(m, name, &e) < 0)
		fail_msg("model_load(%s): %s", name, e.msg);
}

static void assert_within(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("%.6g is not within %.2f%% of %.6g", got, rel * 100, want);
}

/* Kimi Linear tech report (arXiv:2510.26692) and model card: "48B total, 3B activated". The
 * config's dims give 49.1 B and 3.11 B (the name rounds down), hence 3 % and 5 %. Layer order from
 * config.json: full_attn_layers [4, 8, 12, 16, 20, 24, 27], first_k_dense_replace 1. */
static void test_kimi_linear(void **state)
{
	struct model m;
	struct model_inventory inv;
	load(&m, "kimi-linear");
	model_inventory(&m, &inv);
	assert_int_equal(m.n_layers, 27);
	assert_int_equal(inv.kda_layers, 20);
	assert_int_equal(inv.mla_layers, 7);
	assert_int_equal(inv.dense_layers, 1);
	assert_int_equal(inv.moe_layers, 26);
	assert_int_equal(m.attn[3], ATTN_MLA);
	assert_int_equal(m.attn[26], ATTN_MLA);
	assert_int_equal(m.attn[24], ATTN_KDA);
	assert_int_equal(m.kda.output_gate, GATE_LOW_RANK);
	assert_int_equal(m.moe.latent, m.hidden); /* no latent MoE */
	assert_int_equal(m.attn_res_block, 0);    /* no AttnRes */
	assert_within((double)inv.params_total, 48e9, 0.03);
	assert_within((double)inv.params_active, 3e9, 0.05);
	/* 32 x 128 x 128 state per KDA layer, 20 layers: 20 MiB BF16 per request. */
	assert_int_equal(model_kda_state_bytes_per_request(&m, DT_BF16), INT64_C(20) * 1048576);
	/* 7 MLA layers x 576 x 2 B. */
	assert_int_equal(model_mla_kv_bytes_per_token(&m, DT_BF16), 7 * 1152);
}

/* "Up to 75% less KV cache": the hybrid keeps 7 of 27 layers' latent cache. */
static void test_kimi_linear_kv_reduction(void **state)
{
	struct model a, b;
	load(&a, "kimi-linear");
	load(&b, "kimi-linear-full-mla");
	struct model_inventory ia, ib;
	model_inventory(&a, &ia);
	model_inventory(&b, &ib);
	assert_int_equal(ib.mla_layers, 27);
	assert_int_equal(ib.kda_layers, 0);
	double saved = 1.0 - (double)model_mla_kv_bytes_per_token(&a, DT_BF16) /
	                         (double)model_mla_kv_bytes_per_token(&b, DT_BF16);
	assert_within(saved, 0.75, 0.02); /* 20/27 = 74.1 % */
	/* Same MoE and width: only the attention layers differ. */
	assert_int_equal(ia.params_routed_experts, ib.params_routed_experts);
}

/* DeepSeek-V3 technical report (arXiv:2412.19437): 671 B total, 37 B activated per token
 * (MTP excluded). Layer 1-3 dense FFN, 58 MoE layers. */
static void test_deepseek_v3(void **state)
{
	struct model m;
	struct model_inventory inv;
	load(&m, "deepseek-v3");
	model_inventory(&m, &inv);
	assert_int_equal(inv.mla_layers, 61);
	assert_int_equal(inv.kda_layers, 0);
	assert_int_equal(inv.dense_layers, 3);
	assert_int_equal(inv.moe_layers, 58);
	assert_true(m.mla.rope);
	assert_false(m.mla.output_gate);
	assert_within((double)inv.params_total, 671e9, 0.005);
	assert_within((double)inv.params_active, 37e9, 0.015);
	/* FP8 weights: about a byte per parameter. */
	assert_within((double)inv.weights_bytes, 671e9, 0.005);
	assert_int_equal(model_mla_kv_bytes_per_token(&m, DT_BF16), 61 * 1152);
	assert_int_equal(model_dsa_index_bytes_per_token(&m), 0);
}

/* DeepSeek-V3.2: V3 plus the lightning indexer in every layer (64 heads x 128 on the query LoRA,
 * one 128-wide key with its LayerNorm, per-head weights), 132 B of index cache per token-layer. */
static void test_deepseek_v32(void **state)
{
	struct model v3, v32;
	struct model_inventory a, b;
	load(&v3, "deepseek-v3");
	load(&v32, "deepseek-v3.2");
	model_inventory(&v3, &a);
	model_inventory(&v32, &b);
	int64_t indexer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64;
	assert_int_equal(b.params_total - a.params_total, 61 * indexer);
	assert_int_equal(b.params_active - a.params_active, 61 * indexer);
	assert_within((double)b.params_total, 671e9, 0.005);
	assert_int_equal(v32.dsa.top_k, 2048);
	assert_int_equal(model_dsa_index_bytes_per_token(&v32), 61 * 132);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kimi_linear),
	    cmocka_unit_test(test_kimi_linear_kv_reduction),
	    cmocka_unit_test(test_deepseek_v3),
	    cmocka_unit_test(test_deepseek_v32),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
