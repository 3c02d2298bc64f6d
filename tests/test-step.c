/* sim/step: a step laid out on its timeline: every op has a role, no overlap is the sum of the
 * ops, two-batch and single-batch overlap hide communication, the periodic extrapolation equals
 * laying out every layer, the mean rank does not change the step, and the engine section of a
 * scenario. */
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

static struct model k3;
static struct sim_result *res;
static struct hw h200;
static struct timeline tl;
static void *tl_mem;
static struct sim_phase *ph;

static int setup(void **state)
{
	struct err e;
	tl_mem = malloc((size_t)tl_storage_bytes(SIM_TL_EVENTS, SIM_TL_DEPS));
	ph = malloc(sizeof *ph);
	res = malloc(sizeof *res);
	if (!tl_mem || !ph || !res)
		return 1;
	tl_init(&tl, tl_mem, SIM_TL_EVENTS, SIM_TL_DEPS);
	return model_load(&k3, "kimi-k3", &e) < 0 || hw_load(&h200, "h200", &e) < 0;
}

static int teardown(void **state)
{
	free(tl_mem);
	free(ph);
	free(res);
	return 0;
}

static void load(struct scenario *s, const char *yaml)
{
	struct err e;
	char buf[600];
	if (scenario_load_yaml(s, "t.yaml", yaml, strlen(yaml), &e) < 0)
		fail_msg("%s", err_format(&e, buf, sizeof buf));
}

static const char base[] = "model: kimi-k3\nhw: h200\ngpus: 16\nparallel: {tp: 8, dp: 2, ep: 16}\n"
			   "workload: {batch: 256, prompt_tokens: 8192, output_tokens: 1024}\n";

static struct sim_step_timing run(const struct scenario *s, const struct model *m, enum phase_kind kind,
				  int64_t batch, int64_t tokens, int64_t ctx, bool every_layer)
{
	struct phase p;
	sim_phase_init(s, kind, batch, tokens, ctx, &p);
	struct sim_step_opts o = {.every_layer = every_layer};
	struct sim_step_timing t;
	int rc = sim_step_timeline(s, m, &h200, &p, &o, &tl, NULL, 1, &t);
	if (rc != 0)
		fail_msg("sim_step_timeline: %d", rc);
	return t;
}

/* Every op any preset maps, in prefill and decode, with TP, CP and EP, has a role. */
static void test_roles(void **state)
{
	struct err e;
	for (const char *const *n = model_preset_names(); *n; n++) {
		struct model m;
		assert_int_equal(model_load(&m, *n, &e), 0);
		struct scenario s;
		char yaml[400];
		snprintf(yaml, sizeof yaml, "model: %s\nhw: h200\ngpus: 16\nparallel: {tp: 4, cp: 2, dp: 2, ep: 16, tp_comm: %s}\n",
			 *n, strcmp(*n, "kimi-k3") == 0 ? "rs_ag" : "allreduce");
		load(&s, yaml);
		for (int k = 0; k < 2; k++) {
			struct phase p;
			sim_phase_init(&s, k ? PHASE_DECODE : PHASE_PREFILL, k ? 64 : 1, k ? 1 : 4096, 4096, &p);
			sim_phase_reset(ph);
			assert_true(ok_step(&s, &m, &h200, &p, ph, 1) > 0);
			for (int i = 0; i < ph->n_rows; i++) {
				const struct op *o = &ph->rows[i].op;
				if (o->role <= OP_ROLE_NONE || o->role >= OP_ROLE_COUNT)
					fail_msg("%s: op '%s' has no role", *n, o->name);
				/* the name is the role's, for display; the split is the role's */
				assert_string_equal(o->name, op_role_name(o->role));
				assert_int_equal(o->split, op_role_split(o->role));
			}
		}
	}
	assert_int_equal(op_role_part(OP_ROLE_MOE_DISPATCH), OP_PART_DISPATCH);
	assert_string_equal(op_role_name(OP_ROLE_NONE), "?");
	assert_string_equal(op_role_name((enum op_role)999), "?");
	assert_string_equal(op_part_name(OP_PART_SHARED), "shared");
}

/* The ops KDA context parallelism adds carry their roles. */
static void test_kcp_ops_have_roles(void **state)
{
	struct op kda;
	memset(&kda, 0, sizeof kda);
	kda.kind = OP_KDA_CHUNK;
	kda.role = OP_ROLE_KDA_CHUNK;
	kda.layers = 1;
	kda.b = 1, kda.t = 64, kda.h = 4, kda.dk = kda.dv = 16, kda.chunk = 16;
	kda.w_dtype = kda.a_dtype = kda.o_dtype = kda.s_dtype = DT_BF16;
	op_fill(&kda);
	struct op kcp[SIM_KCP_OPS];
	assert_int_equal(sim_kcp_ops(&kda, 2, DT_BF16, kcp), SIM_KCP_OPS);
	for (int i = 0; i < SIM_KCP_OPS; i++) {
		assert_true(kcp[i].role > OP_ROLE_NONE);
		assert_int_equal(op_role_block(kcp[i].role), OP_BLOCK_KCP);
	}
}

/* No overlap: the step is its ops one after another, on the fast path and on the engine. */
static void test_none_is_sum(void **state)
{
	struct scenario s;
	load(&s, base);
	s.overlap = OVERLAP_NONE;
	for (int k = 0; k < 2; k++) {
		enum phase_kind kind = k ? PHASE_DECODE : PHASE_PREFILL;
		struct sim_step_timing fast = run(&s, &k3, kind, k ? 256 : 1, k ? 1 : 8192, 8192, false);
		struct sim_step_timing eng = run(&s, &k3, kind, k ? 256 : 1, k ? 1 : 8192, 8192, true);
		assert_true(fast.time_s > 0);
		assert_true(fabs(fast.time_s / fast.ops_s - 1) < 1e-12);
		assert_true(fabs(eng.time_s / fast.time_s - 1) < 1e-9);
		assert_true(fabs(eng.exposed_comm_s / fast.exposed_comm_s - 1) < 1e-9);
		assert_true(fabs(eng.critical_comm_s / fast.critical_comm_s - 1) < 1e-9);
		assert_int_equal(eng.microbatches, 1);
		/* the step time is what sim_step returns, and sums into the phase */
		struct phase p;
		sim_phase_init(&s, kind, k ? 256 : 1, k ? 1 : 8192, 8192, &p);
		sim_phase_reset(ph);
		double t = ok_step(&s, &k3, &h200, &p, ph, 2.0);
		assert_true(fabs(t / fast.time_s - 1) < 1e-12);
		assert_true(fabs(ph->step_s / (2 * t) - 1) < 1e-12);
		assert_true(fabs(ph->time_s / ph->step_s - 1) < 1e-9);
	}
}

/* Two-batch overlap hides communication: the step is shorter than its ops in sequence, never
 * shorter than its busiest stream, and exposes less communication than no overlap. */
static void test_tbo_hides_comm(void **state)
{
	struct scenario s;
	load(&s, base);
	s.overlap = OVERLAP_NONE;
	struct sim_step_timing none = run(&s, &k3, PHASE_PREFILL, 1, 16384, 0, false);
	s.overlap = OVERLAP_TBO;
	struct sim_step_timing tbo = run(&s, &k3, PHASE_PREFILL, 1, 16384, 0, false);
	assert_int_equal(tbo.microbatches, 2);
	assert_int_equal(tbo.overlap, OVERLAP_TBO);
	assert_true(tbo.time_s < 0.9 * tbo.ops_s);
	assert_true(tbo.time_s < none.time_s);
	assert_true(tbo.time_s >= tbo.compute_stream_s - 1e-12 && tbo.time_s >= tbo.comm_stream_s - 1e-12);
	assert_true(tbo.exposed_comm_s < 0.7 * none.exposed_comm_s);
	assert_true(fabs(tbo.critical_comm_s + tbo.critical_compute_s - tbo.time_s) < 1e-9 * tbo.time_s);

	/* decode: two halves of 128 requests per DP group */
	struct sim_step_timing d = run(&s, &k3, PHASE_DECODE, 256, 1, 8192, false);
	assert_int_equal(d.microbatches, 2);
	assert_true(d.time_s < d.ops_s);
	/* one request cannot be split */
	struct sim_step_timing one = run(&s, &k3, PHASE_DECODE, 2, 1, 8192, false);
	assert_int_equal(one.microbatches, 1);

	/* single-batch overlap: one microbatch, comm on its own stream, less than the sum */
	s.overlap = OVERLAP_SBO;
	struct sim_step_timing sbo = run(&s, &k3, PHASE_DECODE, 256, 1, 8192, false);
	assert_int_equal(sbo.microbatches, 1);
	assert_true(sbo.time_s < sbo.ops_s);
	assert_true(sbo.exposed_comm_s < run(&s, &k3, PHASE_DECODE, 256, 1, 8192, true).ops_s);

	/* side streams take work off the compute stream */
	s.overlap = OVERLAP_NONE;
	s.shared_expert_stream = true;
	struct sim_step_timing side = run(&s, &k3, PHASE_DECODE, 256, 1, 8192, false);
	assert_true(side.side_stream_s > 0);
	assert_true(side.time_s <= side.ops_s * (1 + 1e-12));
}

/* The periodic extrapolation gives what laying out every layer gives. */
static void test_extrapolation(void **state)
{
	struct scenario s;
	load(&s, base);
	enum scenario_overlap ovs[] = {OVERLAP_TBO, OVERLAP_SBO};
	for (size_t i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			s.overlap = ovs[i];
			s.attnres_side_stream = k;
			enum phase_kind kind = k ? PHASE_DECODE : PHASE_PREFILL;
			struct sim_step_timing a = run(&s, &k3, kind, k ? 256 : 1, k ? 1 : 8192, 4096, false);
			struct sim_step_timing b = run(&s, &k3, kind, k ? 256 : 1, k ? 1 : 8192, 4096, true);
			/* the AttnRes side stream repeats every block (12 layers); it may need every layer */
			assert_true(a.extrapolated || k);
			assert_false(b.extrapolated);
			if (fabs(a.time_s / b.time_s - 1) > 1e-9 || fabs(a.exposed_comm_s - b.exposed_comm_s) > 1e-9 * b.time_s ||
			    fabs(a.critical_comm_s - b.critical_comm_s) > 1e-9 * b.time_s ||
			    fabs(a.compute_stream_s - b.compute_stream_s) > 1e-9 * b.time_s ||
			    fabs(a.comm_stream_s - b.comm_stream_s) > 1e-9 * b.time_s ||
			    fabs(a.side_stream_s - b.side_stream_s) > 1e-9 * b.time_s)
				fail_msg("%s %s: extrapolated %.9g s (exposed %.9g, critical comm %.9g, busy %.9g/%.9g/%.9g) "
					 "vs every layer %.9g s (%.9g, %.9g, %.9g/%.9g/%.9g)",
					 scenario_overlap_name(ovs[i]), k ? "decode" : "prefill", a.time_s, a.exposed_comm_s,
					 a.critical_comm_s, a.compute_stream_s, a.comm_stream_s, a.side_stream_s, b.time_s,
					 b.exposed_comm_s, b.critical_comm_s, b.compute_stream_s, b.comm_stream_s,
					 b.side_stream_s);
		}
}

/* The mean EP rank waits at every combine for the busiest: the step does not change, with every
 * strategy (the chunks of SBO's pipelined combine are collectives of their own: they once formed
 * one group across ranks, which deadlocked). */
static void test_mean_rank(void **state)
{
	struct scenario s;
	load(&s, base);
	s.moe_imbalance = 1.4;
	struct phase p;
	sim_phase_init(&s, PHASE_DECODE, 256, 1, 8192, &p);
	struct sim_step_opts one = {.every_layer = true}, two = {.every_layer = true, .mean_rank = true};
	struct sim_step_timing a, b;
	enum scenario_overlap ovs[] = {OVERLAP_SBO, OVERLAP_NONE, OVERLAP_TBO};
	for (int i = 0; i < 3; i++) {
		s.overlap = ovs[i];
		assert_int_equal(sim_step_timeline(&s, &k3, &h200, &p, &one, &tl, NULL, 1, &a), 0);
		assert_int_equal(sim_step_timeline(&s, &k3, &h200, &p, &two, &tl, NULL, 1, &b), 0);
		assert_int_equal(tl.n_gpus, 2);
		assert_true(fabs(a.time_s / b.time_s - 1) < 1e-9);
	}
	/* the mean rank's expert GEMMs are shorter */
	double busy0 = 0, busy1 = 0;
	for (int i = 0; i < tl.n_streams; i++)
		if (tl.streams[i].kind == TL_COMPUTE)
			*(tl.streams[i].gpu ? &busy1 : &busy0) += tl.streams[i].busy_s;
	assert_true(busy1 < busy0);
}

/* auto: no overlap inside one NVLink domain; across nodes the faster of none and TBO. */
static void test_auto(void **state)
{
	struct scenario s;
	load(&s, base);
	assert_int_equal(s.overlap, OVERLAP_AUTO);
	struct sim_step_timing a = run(&s, &k3, PHASE_PREFILL, 1, 16384, 0, false);
	assert_int_equal(a.overlap, OVERLAP_TBO);
	s.overlap = OVERLAP_TBO;
	struct sim_step_timing t = run(&s, &k3, PHASE_PREFILL, 1, 16384, 0, false);
	assert_true(a.time_s == t.time_s);
	/* 8 requests over 16 GPUs: splitting reads the experts' weights twice and hides little */
	s.overlap = OVERLAP_AUTO;
	struct sim_step_timing small = run(&s, &k3, PHASE_DECODE, 8, 1, 8192, false);
	s.overlap = OVERLAP_TBO;
	struct sim_step_timing small_tbo = run(&s, &k3, PHASE_DECODE, 8, 1, 8192, false);
	s.overlap = OVERLAP_NONE;
	struct sim_step_timing small_none = run(&s, &k3, PHASE_DECODE, 8, 1, 8192, false);
	assert_true(small.time_s == fmin(small_tbo.time_s, small_none.time_s));
	/* one node: none */
	struct scenario one;
	load(&one, "model: kimi-k3\nhw: h200\ngpus: 8\nparallel: {tp: 8, ep: 8}\n");
	assert_int_equal(run(&one, &k3, PHASE_PREFILL, 1, 8192, 0, false).overlap, OVERLAP_NONE);
}

static void test_engine_section(void **state)
{
	struct scenario s;
	load(&s, "gpus: 16\nengine:\n  overlap: sbo\n  shared_expert_stream: true\n  attnres_side_stream: true\n");
	assert_int_equal(s.overlap, OVERLAP_SBO);
	assert_true(s.shared_expert_stream && s.attnres_side_stream);
	assert_string_equal(scenario_overlap_name(OVERLAP_TBO), "tbo");
	struct err e;
	char buf[600];
	const char *bad = "gpus: 16\nengine:\n  overlap: dbo\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", bad, strlen(bad), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "s.yaml:3:12: error: overlap: expected auto, none, tbo or sbo, got 'dbo'");
	const char *typo = "gpus: 16\nengine:\n  overlapp: tbo\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", typo, strlen(typo), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "s.yaml:3:3: error: unknown key 'overlapp' (did you mean 'overlap'?)");
	const char *type = "gpus: 16\nengine: {shared_expert_stream: maybe}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", type, strlen(type), &e) < 0);
	assert_int_equal(e.line, 2);
}

/* Batched prefill: prompts that fit the token budget share a step on every DP group; longer ones
 * are chunked at it. Throughput per GPU rises over one prompt at a time (every GPU sends). */
static void test_batched_prefill(void **state)
{
	struct err e;
	struct scenario s;
	load(&s, "model: kimi-k3\nhw: h200\ngpus: 16\nparallel: {tp: 1, dp: 16, ep: 16}\n"
		 "workload: {batch: 64, prompt_tokens: 4096, output_tokens: 64}\n");
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	double alone_ttft = res->ttft_s, alone_tput = res->prefill_tokens_per_s_per_gpu;
	assert_int_equal(res->prefill_prompts_per_step, 1);
	assert_true(fabs(alone_tput - 4096 / (alone_ttft * 16)) < 1e-9 * alone_tput);
	s.prefill_tokens = 16384;
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	assert_int_equal(res->prefill_prompts_per_step, 4 * 16);
	assert_int_equal(res->prefill_chunks, 1);
	assert_true(res->ttft_s > alone_ttft);
	assert_true(res->prefill_tokens_per_s_per_gpu > 2 * alone_tput);
	assert_true(fabs(res->prefill_tokens_per_s_per_gpu - 64.0 * 4096 / (res->ttft_s * 16)) <
		    1e-9 * res->prefill_tokens_per_s_per_gpu);
	/* a prompt longer than the budget: one per group, chunked */
	s.prompt_tokens = 65536;
	s.prefill_chunk = 65536;
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	assert_int_equal(res->prefill_chunks, 4);
	assert_int_equal(res->prefill_prompts_per_step, 16);
}

/* MTP: a step verifies 1 + draft tokens after the draft module ran; it yields `acceptance` tokens
 * per request. Mixed steps: a prefill chunk rides along, the step takes longer. */
static void test_mtp_and_mixed(void **state)
{
	struct err e;
	struct scenario s;
	load(&s, base);
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	double step = res->decode_step_s;
	int rows = res->decode.n_rows;
	assert_true(fabs(res->tpot_s - step) < 1e-15);
	s.mtp_draft_tokens = 2;
	s.mtp_acceptance = 2.4;
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	assert_true(res->decode_step_s > step);
	assert_true(fabs(res->tpot_s * 2.4 / res->decode_step_s - 1) < 1e-12);
	assert_true(fabs(res->tokens_per_s - 256 * 2.4 / res->decode_step_s) < 1e-9 * res->tokens_per_s);
	assert_true(res->decode.n_rows > rows); /* the draft module's ops */
	assert_true(fabs(res->decode.step_s / res->decode_step_s - 1) < 1e-9);
	/* the verify reads the KDA state once for 3 tokens (kda_verify) */
	bool verify = false;
	for (int i = 0; i < res->decode.n_rows; i++)
		if (res->decode.rows[i].op.kind == OP_KDA_DECODE && res->decode.rows[i].op.t == 3)
			verify = true;
	assert_true(verify);

	load(&s, base);
	s.mixed_prefill_tokens = 2048;
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	assert_true(res->decode_step_s > step);
	assert_true(fabs(res->mixed_prefill_tokens_per_s_per_gpu - 2048.0 * 2 / (res->decode_step_s * 16)) <
		    1e-9 * res->mixed_prefill_tokens_per_s_per_gpu);
	bool chunk = false, dec = false;
	for (int i = 0; i < res->decode.n_rows; i++) {
		chunk |= res->decode.rows[i].op.kind == OP_KDA_CHUNK;
		dec |= res->decode.rows[i].op.kind == OP_KDA_DECODE;
	}
	assert_true(chunk && dec);
	const char *bad = "gpus: 16\nengine: {mtp: {draft_tokens: 1, acceptance: 2.5}}\n";
	char buf[600];
	assert_true(scenario_load_yaml(&s, "s.yaml", bad, strlen(bad), &e) < 0);
	assert_non_null(strstr(err_format(&e, buf, sizeof buf), "s.yaml:2:45: error: acceptance: 2.5 is outside"));
}

/* The busiest EP rank at small batch: more rows than the mean (random routing spreads), and more
 * experts touched, so more weights read; at large batch every expert is touched. */
static void test_busiest_rank(void **state)
{
	struct scenario s;
	load(&s, base);
	s.overlap = OVERLAP_NONE;
	s.moe_imbalance = 1.0;
	struct phase p;
	sim_phase_init(&s, PHASE_DECODE, 64, 1, 8192, &p);
	struct sim_step_opts o = {.every_layer = true, .mean_rank = true};
	s.moe_imbalance = 1.0001; /* a second rank is drawn only with some imbalance */
	struct sim_step_timing t;
	sim_phase_reset(ph);
	assert_int_equal(sim_step_timeline(&s, &k3, &h200, &p, &o, &tl, ph, 1, &t), 0);
	double busiest = 0, mean = 0;
	for (int32_t i = 0; i < tl.n_events; i++)
		if (strcmp(tl.ev[i].name, "moe.experts_gate_up") == 0)
			*(tl.streams[tl.ev[i].stream].gpu ? &mean : &busiest) += tl.ev[i].work_s;
	assert_true(busiest > 1.1 * mean);
	/* the rows: 64 tokens x 16 / 16 ranks = 64 mean, the largest of 16 about 64 + 2.35 x 8 */
	for (int i = 0; i < ph->n_rows; i++)
		if (strcmp(ph->rows[i].op.name, "moe.experts_gate_up") == 0) {
			assert_true(ph->rows[i].op.m >= 80 && ph->rows[i].op.m <= 86);
			assert_true(ph->rows[i].op.groups_touched > 40 && ph->rows[i].op.groups_touched < 56);
		}
	sim_phase_init(&s, PHASE_DECODE, 8192, 1, 8192, &p);
	sim_phase_reset(ph);
	assert_true(ok_step(&s, &k3, &h200, &p, ph, 1) > 0);
	for (int i = 0; i < ph->n_rows; i++)
		if (strcmp(ph->rows[i].op.name, "moe.experts_gate_up") == 0)
			assert_true(fabs(ph->rows[i].op.groups_touched - 56) < 1e-6);
}

/* The Hugging Face reference path: per-head BF16 K/V cache split with the heads, unabsorbed
 * attention, router and down projection as two GEMMs, fla's chunk_kda; slower, more HBM. */
static void test_reference_path(void **state)
{
	struct err e;
	struct scenario s;
	load(&s, base);
	assert_int_equal(s.path, PATH_PRODUCTION);
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	struct sim_result prod = *res;
	load(&s, "model: kimi-k3\nhw: h200\ngpus: 16\nparallel: {tp: 8, dp: 2, ep: 16}\n"
		 "workload: {batch: 256, prompt_tokens: 8192, output_tokens: 1024}\nengine: {path: reference}\n");
	assert_int_equal(s.path, PATH_REFERENCE);
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	/* 24 MLA layers x 96 heads x (128 + 64 + 128) x 2 B per token, over TP8 */
	int64_t ctx = 8192 + 1024, req = 128;
	assert_int_equal(model_mla_expanded_kv_bytes_per_token(&k3), INT64_C(24) * 96 * 320 * 2);
	assert_int_equal(res->hbm.mla_kv, req * ctx * 24 * 96 * 320 * 2 / 8);
	assert_true(res->hbm.mla_kv > 6 * prod.hbm.mla_kv);
	assert_true(res->tpot_s > prod.tpot_s && res->ttft_s > prod.ttft_s);
	bool router = false, down = false, absorb = false;
	for (int i = 0; i < res->decode.n_rows; i++) {
		const char *n = res->decode.rows[i].op.name;
		router |= strcmp(n, "moe.router") == 0;
		down |= strcmp(n, "moe.down") == 0;
		absorb |= strcmp(n, "mla.q_absorb") == 0;
	}
	assert_true(router && down && !absorb);
	const char *bad = "gpus: 16\nengine: {path: hf}\n";
	char buf[600];
	assert_true(scenario_load_yaml(&s, "s.yaml", bad, strlen(bad), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "s.yaml:2:16: error: path: expected production or reference, got 'hf'");
}

static int64_t row_bytes(const struct sim_phase *p, const char *name)
{
	for (int i = 0; i < p->n_rows; i++)
		if (strcmp(p->rows[i].op.name, name) == 0)
			return p->rows[i].op.comm_bytes;
	return -1;
}

/* Context parallel prefill: KCP moves the same bytes at any context (one fixed-size all-gather of
 * per-head transitions and states), MLA CP gathers the prefix too (bytes grow with it); the ring
 * overlaps its transfers with the blocks' expansion and attention. */
static void test_context_parallel(void **state)
{
	struct scenario s;
	load(&s, "model: kimi-k3\nhw: h200\ngpus: 16\nparallel: {tp: 8, cp: 2, dp: 1, ep: 16}\n"
		 "workload: {batch: 1, prompt_tokens: 1048576, prefill_chunk: 16384}\nengine: {overlap: none}\n");
	int64_t kcp[2], mla[2];
	int64_t ctx[2] = {131072, 1048576 - 16384};
	for (int k = 0; k < 2; k++) {
		struct phase p;
		sim_phase_init(&s, PHASE_PREFILL, 1, 16384, ctx[k], &p);
		sim_phase_reset(ph);
		assert_true(ok_step(&s, &k3, &h200, &p, ph, 1) > 0);
		kcp[k] = row_bytes(ph, "kcp.state_allgather");
		mla[k] = row_bytes(ph, "cp.mla_kv_allgather");
	}
	/* per rank: 12 heads x (128 x 128 + 128 x 128) x 4 B, x 2 ranks */
	assert_int_equal(kcp[0], INT64_C(12) * 2 * 128 * 128 * 4 * 2);
	assert_int_equal(kcp[0], kcp[1]);
	/* the prefix and the chunk's latent, 1152 B per token per layer */
	assert_int_equal(mla[0], (131072 + 16384) * INT64_C(1152));
	assert_int_equal(mla[1], INT64_C(1048576) * 1152);
	/* ring: the same bytes in cp - 1 transfers overlapped with the blocks */
	struct phase p;
	sim_phase_init(&s, PHASE_PREFILL, 1, 16384, 524288, &p);
	struct sim_step_timing gather = run(&s, &k3, PHASE_PREFILL, 1, 16384, 524288, true);
	s.mla_cp_ring = true;
	struct sim_step_timing ring = run(&s, &k3, PHASE_PREFILL, 1, 16384, 524288, true);
	assert_true(ring.time_s < gather.time_s);
	assert_true(ring.comm_stream_s > 0);
	int blocks = 0, transfers = 0;
	for (int32_t i = 0; i < tl.n_events; i++) {
		blocks += strcmp(tl.ev[i].name, "mla.attn") == 0;
		transfers += strcmp(tl.ev[i].name, "cp.mla_kv_ring") == 0;
	}
	assert_int_equal(blocks, 24 * 2);    /* 24 MLA layers, cp blocks each */
	assert_int_equal(transfers, 24 * 1); /* cp - 1 transfers each */
	sim_phase_reset(ph);
	assert_true(ok_step(&s, &k3, &h200, &p, ph, 1) > 0);
	assert_int_equal(row_bytes(ph, "cp.mla_kv_ring"), (524288 + 16384) * INT64_C(1152));
	struct err e;
	char buf[600];
	const char *bad = "gpus: 16\nengine: {mla_cp: tree}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", bad, strlen(bad), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "s.yaml:2:18: error: mla_cp: expected allgather or ring, got 'tree'");
}

static const struct sim_op_row *row_named(const struct sim_phase *p, const char *name)
{
	for (int i = 0; i < p->n_rows; i++)
		if (strcmp(p->rows[i].op.name, name) == 0)
			return &p->rows[i];
	return NULL;
}

/* KCP as the project's kernels run it (issue 20): every rank but the first also runs the
 * identity-start pass that yields its transition (v = K wide: as long as the zero-start pass for
 * K3, K = V = 128), and the fix-up is an FP32 GEMM on the SIMT units (half the vector FMA peak);
 * the all-gather's bytes do not grow with the context. Before, the transition pass was not
 * costed and the fix-up ran at the tensor-core GEMM efficiency. */
static void test_kcp_transition(void **state)
{
	struct scenario s;
	load(&s, "model: kimi-k3\nhw: h200\ngpus: 16\nparallel: {tp: 8, cp: 2, dp: 1, ep: 16}\n"
		 "workload: {batch: 1, prompt_tokens: 1048576, prefill_chunk: 16384}\nengine: {overlap: none}\n");
	struct phase p;
	sim_phase_init(&s, PHASE_PREFILL, 1, 16384, 131072, &p);
	sim_phase_reset(ph);
	assert_true(ok_step(&s, &k3, &h200, &p, ph, 1) > 0);
	const struct sim_op_row *pass = row_named(ph, "kda.chunk"), *tr = row_named(ph, "kcp.transition"),
				*fix = row_named(ph, "kcp.fixup");
	assert_non_null(pass);
	assert_non_null(tr);
	assert_non_null(fix);
	assert_int_equal(tr->op.dv, tr->op.dk);
	assert_int_equal(tr->op.t, 8192); /* the rank's half of the chunk */
	assert_true(fabs(tr->cost.time_s - pass->cost.time_s) <= 1e-9 * pass->cost.time_s);
	assert_true(fabs(tr->total_s - pass->total_s) <= 1e-9 * pass->total_s); /* every KDA layer */
	/* the fix-up: 2 t H V K FLOPs (12 heads per GPU at TP8) at half the FP32 FMA rate (at the
	 * step's clock), whole waves of tiles */
	assert_true(fix->op.flops == 2.0 * 8192 * 12 * 128 * 128);
	double simt = 0.5 * h200.vector_flops_per_s * fix->cost.clock_hz / h200.sm_clock_hz;
	assert_true(fix->cost.compute_s >= fix->op.flops / simt * (1 - 1e-9));
	assert_true(fix->cost.compute_s <= 1.1 * fix->op.flops / simt);

	/* the ops themselves: none without CP or without a KDA pass; bytes per rank fixed; the scan
	 * covers half the ranks before */
	struct op kcp[SIM_KCP_OPS];
	assert_int_equal(sim_kcp_ops(&pass->op, 1, DT_BF16, kcp), 0);
	assert_int_equal(sim_kcp_ops(&fix->op, 2, DT_BF16, kcp), 0);
	assert_int_equal(sim_kcp_ops(&pass->op, 4, DT_BF16, kcp), SIM_KCP_OPS);
	assert_string_equal(kcp[0].name, "kcp.transition");
	assert_int_equal(kcp[1].comm_bytes, INT64_C(12) * 2 * 128 * 128 * 4 * 4);
	assert_int_equal(kcp[1].ranks, 4);
	assert_int_equal(kcp[2].m, 2 * 12 * 128);
	assert_int_equal(kcp[3].m, 8192);
	assert_int_equal(kcp[3].a_dtype, DT_BF16);
}

/* SMs a strategy keeps for communication (issue 20): SGLang's TBO prefill and SBO launch compute
 * on the SMs DeepEP's normal kernels leave; decode TBO (low-latency kernels) and NCCL reserve none. */
static void test_sm_reservation(void **state)
{
	struct scenario s;
	load(&s, base);
	struct phase pp, pd;
	sim_phase_init(&s, PHASE_PREFILL, 1, 16384, 0, &pp);
	sim_phase_init(&s, PHASE_DECODE, 256, 1, 8192, &pd);
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pp, OVERLAP_TBO), 20); /* Buffer.num_sms */
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pd, OVERLAP_TBO), 0);
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pp, OVERLAP_SBO), 20);
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pd, OVERLAP_SBO), 0);  /* low latency */
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pp, OVERLAP_NONE), 0);
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pp, OVERLAP_AUTO), 0);
	s.ep_sms = 24;
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pp, OVERLAP_TBO), 24);
	s.overlap = OVERLAP_TBO;
	struct sim_step_timing t = run(&s, &k3, PHASE_PREFILL, 1, 16384, 0, false);
	assert_int_equal(t.comm_sms_reserved, 24);
	s.ep_mode = EP_MODE_ALLTOALL; /* NCCL + cuBLAS: nothing reserved */
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pp, OVERLAP_TBO), 0);
	t = run(&s, &k3, PHASE_PREFILL, 1, 16384, 0, false);
	assert_int_equal(t.comm_sms_reserved, 0);
	s.ep = 1;
	s.ep_mode = EP_MODE_NONE;
	assert_int_equal(sim_step_reserved_sms(&s, &h200, &pp, OVERLAP_TBO), 0);
}

/* What ops demand of the GPU (issue 20): a GEMM of a wave of tiles or more holds every SM,
 * memory-bound or not, and frees them in its last wave; NCCL's all-to-all keeps the CTAs
 * captured on two H200s (20 at 0.47 MB, 32 from 30 MB), other NCCL collectives 16, DeepEP's
 * low-latency kernels none. */
static void test_demands(void **state)
{
	static const struct {
		const char *spec;
		double sms; /* expected SMs (communication), or -1: a full GEMM */
	} cases[] = {
		{"grouped_gemm m=1042 n=6144 k=3584 groups=448 touched=412 dtype=bf16", -1},
		{"gemm m=8192 n=8192 k=8192 dtype=bf16", -1},
		{"alltoall bytes=473088 ranks=2", 20},
		{"alltoall bytes=1000 ranks=2", 20},
		{"alltoall bytes=30277632 ranks=2", 32},
		{"alltoall bytes=121110528 ranks=2", 32},
		{"allreduce bytes=1048576 ranks=8", 16},
		{"ep_dispatch tokens=128 ranks=16 mode=low_latency", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct op o;
		struct err e;
		if (opspec_parse_line(cases[i].spec, &o, &e) < 0)
			fail_msg("%s: %s", cases[i].spec, e.msg);
		struct op_cost c;
		sim_op_cost_ep(&h200, &o, NULL, &c);
		struct sim_demands d;
		sim_op_demands(&h200, &o, &c, &d);
		if (cases[i].sms < 0) {
			assert_true(c.waves >= 1);
			assert_true(d.sm == 1.0f);
			assert_true(fabs(d.tail - 1 / ceil(c.waves)) < 1e-6);
		} else {
			assert_true(fabs(d.sm - cases[i].sms / 132.0) < 1e-6);
			assert_true(d.tail == 0.0f);
		}
	}
	/* fewer tiles than SMs: their share, no tail */
	struct op o;
	struct err e;
	assert_int_equal(opspec_parse_line("gemm m=64 n=256 k=1024 dtype=bf16", &o, &e), 0);
	struct op_cost c;
	sim_op_cost_ep(&h200, &o, NULL, &c);
	struct sim_demands d;
	sim_op_demands(&h200, &o, &c, &d);
	assert_true(c.waves < 1 && fabs(d.sm - c.waves) < 1e-6 && d.tail == 0.0f);
}

/* Pipeline parallel prefill: the layers split over stages, chunks follow each other through
 * them; TTFT is the stages' share of the steps, the hand-offs and the last chunk's bubble. */
static void test_pipeline(void **state)
{
	struct err e;
	char buf[600];
	struct scenario s;
	load(&s, "model: kimi-k3\nhw: h200\ngpus: 32\nparallel: {tp: 8, dp: 1, pp: 4, ep: 8}\n"
		 "workload: {batch: 1, prompt_tokens: 131072, output_tokens: 16, prefill_chunk: 16384}\n"
		 "engine: {overlap: none}\n");
	assert_int_equal(s.pp, 4);
	assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
	double pp_ttft = res->ttft_s, bubble = res->pp_bubble_s, steps = res->prefill.step_s;
	int64_t w4 = res->hbm.weights;
	/* 8 chunks: the steps over 4 stages, plus the last chunk through 3 more stages */
	assert_true(bubble > 0 && pp_ttft > steps / 4 + bubble && pp_ttft < steps / 4 + bubble * 1.1 + 0.05);
	assert_true(pp_ttft < 0.5 * steps);
	s.pp = 1;
	s.gpus = 8;
	sim_hbm(&s, &k3, &h200, 1, 131072, 0, &res->hbm);
	assert_true(w4 < res->hbm.weights / 3);
	/* layout errors name pp */
	const char *bad = "gpus: 32\nparallel: {tp: 8, dp: 2, pp: 4}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", bad, strlen(bad), &e) < 0);
	assert_non_null(strstr(err_format(&e, buf, sizeof buf), "tp x dp x cp x pp = 8 x 2 x 1 x 4 = 64, but gpus is 32"));
	load(&s, "gpus: 512\nparallel: {tp: 1, dp: 1, pp: 512, ep: 1}\n");
	assert_true(sim_run(&s, &k3, &h200, res, &e) < 0);
	assert_non_null(strstr(e.msg, "more pipeline stages than the 93 layers"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_kcp_ops_have_roles),
		cmocka_unit_test(test_none_is_sum),
		cmocka_unit_test(test_tbo_hides_comm),
		cmocka_unit_test(test_extrapolation),
		cmocka_unit_test(test_mean_rank),
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_engine_section),
		cmocka_unit_test(test_batched_prefill),
		cmocka_unit_test(test_mtp_and_mixed),
		cmocka_unit_test(test_busiest_rank),
		cmocka_unit_test(test_reference_path),
		cmocka_unit_test(test_context_parallel),
		cmocka_unit_test(test_kcp_transition),
		cmocka_unit_test(test_sm_reservation),
		cmocka_unit_test(test_demands),
		cmocka_unit_test(test_pipeline),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
