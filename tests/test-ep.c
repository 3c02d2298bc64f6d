/* sim/ep: EP dispatch and combine in DeepEP's normal mode (per-node dedup, NVLink forwarding,
 * node-limited routing), low-latency mode (one row per selected expert) and as an NCCL
 * all-to-all; the modes a step picks; the ep section of a scenario. Counts worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/ep.h"
#include "sim/opspec.h"
#include "sim/step.h"

/* sim_step's time, asserting it returned 0 (and set the time). */
static double ok_step(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		      struct sim_phase *acc, double weight)
{
	double t = -1;
	assert_int_equal(sim_step(s, m, hw, p, acc, weight, &t), 0);
	assert_true(t >= 0);
	return t;
}

static struct hw h100;

static int setup(void **state)
{
	struct err e;
	return hw_load(&h100, "h100", &e) < 0;
}

static struct op ep_op(const char *line)
{
	struct op op;
	struct err e;
	if (opspec_parse_line(line, &op, &e) < 0)
		fail_msg("%s: %s", line, e.msg);
	return op;
}

/* 1 - C(E - h, k) / C(E, k) */
static double reach(double E, double k, double h)
{
	double miss = 1;
	for (int i = 0; i < (int)k; i++)
		miss *= (E - h - i) / (E - i);
	return 1 - miss;
}

/* DeepSeek-V3's prefill layout: 4096 tokens per GPU, EP32 over 4 nodes of 8, 256 experts, top-8,
 * FP8 rows of 7168 + 224 B of scales. A token reaches each node with 1 - C(192, 8)/C(256, 8);
 * it crosses the NIC once per remote node reached: ~82 MB per GPU, not the 160 MB of one row per
 * rank (the all-to-all equivalent). */
static void test_normal_dedup(void **state)
{
	struct op op = ep_op("ep_dispatch tokens=4096 ranks=32 experts=256 top_k=8 width=7168 dtype=fp8 mode=normal");
	struct sim_ep_traffic t;
	sim_ep_traffic(&h100, &op, &t);
	double nodes = 4 * reach(256, 8, 64), ranks = 32 * reach(256, 8, 8);
	assert_true(fabs(t.nodes - nodes) < 1e-9 && fabs(t.ranks - ranks) < 1e-9);
	double row = 7168 + 4 * 56; /* a 4-byte scale per 128 values */
	assert_true(fabs(t.nic_bytes - 4096 * nodes * 3 / 4 * row) < 1);
	assert_true(t.nic_bytes > 78e6 && t.nic_bytes < 86e6);
	assert_true(fabs(t.nvlink_bytes - 4096 * ranks * 7 / 8 * row) < 1);
	/* the all-to-all equivalent sends one row per rank reached, most across the NIC */
	assert_true((double)op.comm_bytes > 1.9 * t.nic_bytes);
	struct op_cost c;
	sim_op_cost_ep(&h100, &op, NULL, &c);
	assert_int_equal(c.bound, BOUND_COMM);
	assert_true(c.time_s >= t.nic_bytes / h100.nic_bw_bytes_per_s && c.floor_s <= c.time_s);
	struct op a2a = ep_op("ep_dispatch tokens=4096 ranks=32 experts=256 top_k=8 width=7168 dtype=fp8");
	struct op_cost ca;
	sim_op_cost_ep(&h100, &a2a, NULL, &ca);
	assert_true(ca.time_s > 1.5 * c.time_s);

	/* node-limited routing: EP128 over 16 nodes, at most 4 nodes per token */
	struct op wide = ep_op("ep_dispatch tokens=4096 ranks=128 experts=256 top_k=8 width=7168 mode=normal");
	struct op lim = ep_op("ep_dispatch tokens=4096 ranks=128 experts=256 top_k=8 width=7168 mode=normal node_limit=4");
	struct sim_ep_traffic tw, tl;
	sim_ep_traffic(&h100, &wide, &tw);
	sim_ep_traffic(&h100, &lim, &tl);
	assert_true(tw.nodes > 6 && tl.nodes == 4);
	assert_true(fabs(tl.nic_bytes - 4096 * 4.0 * 15 / 16 * row) < 1);
	assert_true(tl.ranks <= tw.ranks);
	/* inside one node: NVLink only */
	struct op one = ep_op("ep_dispatch tokens=4096 ranks=8 experts=256 top_k=8 width=7168 mode=normal");
	struct sim_ep_traffic to;
	sim_ep_traffic(&h100, &one, &to);
	assert_true(to.nic_bytes == 0 && to.nvlink_bytes > 0);
}

/* Low latency: one row per selected expert, no dedup. DeepEP's README (H800, 128 tokens, 7168,
 * top-8, EP128): dispatch 192 us, combine 369 us; the datasheet H100 here is within 1.3x. */
static void test_low_latency(void **state)
{
	struct op d = ep_op("ep_dispatch tokens=128 ranks=128 experts=256 top_k=8 width=7168 mode=low_latency");
	struct op c = ep_op("ep_combine tokens=128 ranks=128 experts=256 top_k=8 width=7168 mode=low_latency");
	struct sim_ep_traffic t;
	sim_ep_traffic(&h100, &d, &t);
	double row = 7168 + 4 * 56; /* a 4-byte scale per 128 values */
	assert_true(fabs(t.nic_bytes - 128 * 8 * 15.0 / 16 * row) < 1);
	assert_true(fabs(t.nvlink_bytes - 128 * 8 / 16.0 * 7 / 8 * row) < 1);
	struct op_cost cd, cc;
	sim_op_cost_ep(&h100, &d, NULL, &cd);
	sim_op_cost_ep(&h100, &c, NULL, &cc);
	assert_true(cd.time_s / 192e-6 > 1 / 1.3 && cd.time_s / 192e-6 < 1.3);
	assert_true(cc.time_s / 369e-6 > 1 / 1.3 && cc.time_s / 369e-6 < 1.3);
	/* the imbalance scales what the busiest rank receives */
	struct op hot = ep_op("ep_dispatch tokens=128 ranks=128 experts=256 top_k=8 width=7168 mode=low_latency imbalance=1.5");
	struct sim_ep_traffic th;
	sim_ep_traffic(&h100, &hot, &th);
	assert_true(fabs(th.nic_bytes / t.nic_bytes - 1.5) < 1e-12);
	/* the SMs each mode keeps */
	struct op n = ep_op("ep_dispatch tokens=128 ranks=16 mode=normal sms=24");
	assert_true(sim_ep_sms(&n) == 24 && sim_ep_sms(&d) == 0);
	struct err e;
	struct op bad;
	assert_true(opspec_parse_line("ep_dispatch tokens=8 ranks=2 mode=fast", &bad, &e) < 0);
	assert_non_null(strstr(e.msg, "expected normal, low_latency or alltoall"));
}

/* In a step: auto is normal for prefill, low latency for decode; the ep section overrides. */
static void test_step_modes(void **state)
{
	struct err e;
	char buf[600];
	struct scenario s;
	struct model m;
	assert_int_equal(model_load(&m, "deepseek-v3", &e), 0);
	const char *y = "model: deepseek-v3\nhw: h100\ngpus: 32\nparallel: {tp: 1, ep: 32}\n"
			"workload: {batch: 256, prompt_tokens: 4096, output_tokens: 16}\n"
			"ep: {node_limit: 4, redundant_experts: 32}\n";
	if (scenario_load_yaml(&s, "t.yaml", y, strlen(y), &e) < 0)
		fail_msg("%s", err_format(&e, buf, sizeof buf));
	assert_int_equal(s.ep_node_limit, 4);
	assert_int_equal(s.redundant_experts, 32);
	assert_int_equal(s.ep_sms, 20);
	struct sim_phase *ph = malloc(sizeof *ph);
	assert_non_null(ph);
	for (int k = 0; k < 2; k++) {
		struct phase p;
		sim_phase_init(&s, k ? PHASE_DECODE : PHASE_PREFILL, k ? 256 : 32, k ? 1 : 4096, 0, &p);
		sim_phase_reset(ph);
		assert_true(ok_step(&s, &m, &h100, &p, ph, 1) > 0);
		int seen = 0;
		for (int i = 0; i < ph->n_rows; i++) {
			const struct op *o = &ph->rows[i].op;
			if (strcmp(o->name, "moe.dispatch") == 0 || strcmp(o->name, "moe.combine") == 0) {
				seen++;
				assert_int_equal(o->ep.mode, k ? EP_MODE_LOW_LATENCY : EP_MODE_NORMAL);
				assert_int_equal(o->ep.node_limit, 4);
			}
			if (strcmp(o->name, "moe.experts_gate_up") == 0)
				assert_int_equal(o->groups, (256 + 32) / 32);
		}
		assert_true(seen >= 2);
	}
	/* redundant experts take HBM */
	struct sim_hbm with, without;
	sim_hbm(&s, &m, &h100, 256, 4096, 0, &with);
	s.redundant_experts = 0;
	sim_hbm(&s, &m, &h100, 256, 4096, 0, &without);
	assert_true(with.weights > without.weights);
	free(ph);

	const char *bad = "gpus: 16\nep: {mode: fast}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", bad, strlen(bad), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "s.yaml:2:12: error: mode: expected auto, normal, low_latency or alltoall, got 'fast'");
	const char *typo = "gpus: 16\nep: {node_limt: 4}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", typo, strlen(typo), &e) < 0);
	assert_non_null(strstr(e.msg, "did you mean 'node_limit'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normal_dedup),
		cmocka_unit_test(test_low_latency),
		cmocka_unit_test(test_step_modes),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
