/* sim/: properties of op costs, the parallel mapping, TTFT/TPOT/HBM, scenarios and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/opspec.h"
#include "sim/power.h"
#include "sim/props.h"
#include "sim/sim.h"

/* A small preset's YAML whose kernels: section ends with `kernels` (keys of the test's own). */
#define MINI_PRESET_YAML(kernels) \
	"name: x\ncalibrated: false\n" \
	"device: {sms: 132, sm_clock_mhz: 1980, l2_mib: 60, hbm_mib: 1000, hbm_gb_per_s: 4800,\n" \
	"         vector_tflops: 60, launch_latency_us: 2, tensor_tflops: {bf16: 989}}\n" \
	"interconnect: {domain_gpus: 8, nvlink_gb_per_s: 450, nvlink_latency_us: 3, nic_gb_per_s: 50,\n" \
	"               nic_latency_us: 8}\n" \
	"efficiency:\n" \
	"  gemm: {max: 0.8, half_gflop: 0.02}\n" \
	"  memory: {max: 0.9, half_mib: 2}\n" \
	"  comm: {max: 0.8, half_mib: 1}\n" \
	"kernels: {gemm_tile_m: 128, gemm_tile_n: 128, kda_chunk_step_cycles: 3000, reserved_gib: 4,\n" \
	"          " kernels "}\n"

/* sim_step's time, asserting it returned 0 (and set the time). */
static double ok_step(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		      struct sim_phase *acc, double weight)
{
	double t = -1;
	assert_int_equal(sim_step(s, m, hw, p, acc, weight, &t), 0);
	assert_true(t >= 0);
	return t;
}

static struct model k3, full;
/* The model's mechanics are checked on the datasheet preset (no fitted tables); the properties
 * must hold on the calibrated default too (test_properties_calibrated). */
static struct hw h200, h200_cal;
static struct sim_result *res;

static int setup(void **state)
{
	struct err e;
	res = malloc(sizeof *res);
	return !res || model_load(&k3, "kimi-k3", &e) < 0 || model_load(&full, "k3-full-mla", &e) < 0 ||
	       hw_load(&h200, "h200-datasheet", &e) < 0 || hw_load(&h200_cal, "h200", &e) < 0;
}

static int teardown(void **state)
{
	free(res);
	return 0;
}

static void load_default(struct scenario *s)
{
	struct err e;
	assert_int_equal(scenario_load(s, "default", &e), 0);
}

static void test_embedded_scenarios(void **state)
{
	struct err e;
	for (const char *const *n = scenario_preset_names(); *n; n++) {
		struct scenario s;
		struct model m;
		struct hw hw;
		assert_int_equal(scenario_load(&s, *n, &e), 0);
		assert_int_equal(model_load(&m, s.model, &e), 0);
		assert_int_equal(hw_load(&hw, s.hw, &e), 0);
		if (sim_run(&s, &m, &hw, res, &e) < 0)
			fail_msg("%s: %s", *n, e.msg);
		assert_true(res->ttft_s > 0 && res->tpot_s > 0);
		assert_true(res->hbm.total > res->hbm.weights);
		/* The default fits; one node of 8 H200s cannot hold K3's weights. */
		if (strcmp(*n, "default") == 0)
			assert_true(res->fits);
		if (strcmp(*n, "h200x8") == 0) {
			assert_false(res->fits);
			assert_true(res->hbm.weights > res->hbm.capacity);
			assert_int_equal(res->missing_bytes, res->hbm.total - res->hbm.capacity);
		}
	}
}

/* More context never gives less time or memory. */
static void test_monotonic_in_context(void **state)
{
	struct scenario s;
	load_default(&s);
	double last_step = 0;
	int64_t last_hbm = 0;
	struct err e;
	for (int64_t ctx = 4096; ctx <= 1048576; ctx *= 2) {
		struct phase p;
		sim_phase_init(&s, PHASE_DECODE, s.batch, 1, ctx, &p);
		double t = ok_step(&s, &k3, &h200, &p, NULL, 1);
		struct sim_hbm h;
		sim_hbm(&s, &k3, &h200, s.batch, ctx, 0, &h);
		assert_true(t >= last_step);
		assert_true(h.total >= last_hbm);
		last_step = t;
		last_hbm = h.total;
	}
	double last_ttft = 0;
	for (int64_t prompt = 4096; prompt <= 262144; prompt *= 4) {
		s.prompt_tokens = prompt;
		s.prefill_chunk = 8192 < prompt ? 8192 : prompt;
		assert_int_equal(sim_run(&s, &k3, &h200, res, &e), 0);
		assert_true(res->ttft_s > last_ttft);
		last_ttft = res->ttft_s;
	}
}

static double attention_weights(const struct scenario *s, bool sharded_only)
{
	struct phase p;
	sim_phase_init(s, PHASE_DECODE, s->batch, 1, 4096, &p);
	static struct sim_phase ph;
	sim_phase_reset(&ph);
	ok_step(s, &k3, &h200, &p, &ph, 1);
	double w = 0;
	for (int i = 0; i < ph.n_rows; i++) {
		const struct op *o = &ph.rows[i].op;
		if (op_role_block(o->role) != OP_BLOCK_KDA && op_role_block(o->role) != OP_BLOCK_MLA)
			continue;
		if (sharded_only && o->split == SPLIT_NONE)
			continue;
		w += (double)o->bytes_weight * (double)o->layers;
	}
	return w;
}

/* Doubling TP halves the per-GPU share of the head-split attention weights. */
static void test_tp_halves_attention_weights(void **state)
{
	struct scenario s;
	load_default(&s);
	s.tp = 4;
	s.dp = 4;
	double w4 = attention_weights(&s, true), all4 = attention_weights(&s, false);
	s.tp = 8;
	s.dp = 2;
	double w8 = attention_weights(&s, true), all8 = attention_weights(&s, false);
	assert_true(fabs(w4 / w8 - 2.0) < 1e-9);
	assert_true(all8 < all4);
	struct sim_hbm h4, h8;
	s.tp = 4;
	s.dp = 4;
	sim_hbm(&s, &k3, &h200, 64, 4096, 0, &h4);
	s.tp = 8;
	s.dp = 2;
	sim_hbm(&s, &k3, &h200, 64, 4096, 0, &h8);
	assert_true(h8.weights < h4.weights);
}

/* KDA decode moves the same bytes at any context; MLA KV grows linearly with it. */
static void test_state_vs_cache(void **state)
{
	struct scenario s;
	load_default(&s);
	int64_t kda_bytes[2] = {0, 0};
	int64_t ctxs[2] = {4096, 1048576};
	for (int k = 0; k < 2; k++) {
		struct phase p;
		sim_phase_init(&s, PHASE_DECODE, s.batch, 1, ctxs[k], &p);
		static struct sim_phase ph;
		sim_phase_reset(&ph);
		ok_step(&s, &k3, &h200, &p, &ph, 1);
		for (int i = 0; i < ph.n_rows; i++)
			if (ph.rows[i].op.kind == OP_KDA_DECODE)
				kda_bytes[k] += op_bytes(&ph.rows[i].op);
	}
	assert_true(kda_bytes[0] > 0);
	assert_int_equal(kda_bytes[0], kda_bytes[1]);

	struct sim_hbm a, b;
	sim_hbm(&s, &k3, &h200, s.batch, 100000, 0, &a);
	sim_hbm(&s, &k3, &h200, s.batch, 200000, 0, &b);
	assert_int_equal(b.mla_kv, 2 * a.mla_kv);
	assert_int_equal(a.kda_state, b.kda_state);
	/* Per request per GPU: K3's state is split over TP, the latent cache is not (shared by heads). */
	assert_int_equal(a.kda_state, 32 * model_kda_state_bytes_per_request(&k3, DT_FP32) / 8);
	assert_int_equal(a.mla_kv, INT64_C(32) * 100000 * 27648);
	/* Full MLA holds 93/24 of K3's cache. */
	struct sim_hbm f;
	sim_hbm(&s, &full, &h200, s.batch, 100000, 0, &f);
	assert_int_equal(f.mla_kv * 24, a.mla_kv * 93);
}

static double kda_time(const struct hw *hw, int b, int t, int h, struct op_cost *c)
{
	struct op op = {.kind = OP_KDA_CHUNK, .b = b, .t = t, .h = h, .dk = 128, .dv = 128, .chunk = 16,
			.a_dtype = DT_BF16, .o_dtype = DT_BF16, .s_dtype = DT_FP32, .layers = 1};
	op_fill(&op);
	sim_op_cost(hw, &op, NULL, c);
	return c->time_s;
}

/* No shipped preset carries the KDA kernels' rules (hw.h: kda_overlap_*, kda_pair_*): their KDA
 * costs were fitted on the serial chunk kernel (test_kda_overlap, test_kda_pair test the rules). */
static void test_presets_without_kda_rules(void **state)
{
	(void)state;
	const char *const *names = hw_preset_names();
	for (int i = 0; names[i]; i++) {
		struct hw p;
		struct err e = {0};
		assert_int_equal(hw_load(&p, names[i], &e), 0);
		assert_int_equal(p.kda_overlap_max_seqs, 0);
		assert_int_equal(p.kda_pair_max_pairs, 0);
	}
}

/* KDA prefill's overlapped pair (hw.h: kda_overlap_*): inside the rule never below the longer
 * kernel alone nor above the two in series; never faster as T or B grows past the rule's
 * threshold; outside the rule the serial cost to the bit. */
static void test_kda_overlap(void **state)
{
	(void)state;
	struct hw ov = h200; /* datasheet: no tables, so the physical model's parts show */
	ov.kda_overlap_max_seqs = 1;
	ov.kda_overlap_min_heads = 96;
	ov.kda_overlap_min_tokens = 4096;
	double launch2 = 2 * h200.launch_latency_s;
	for (int sh = 0; sh <= 4; sh++) {
		ov.kda_overlap_rec_share = 0.25 * sh;
		double last = 0;
		for (int t = 4096; t <= 262144; t += t / 2) {
			struct op_cost cs, co;
			double serial = kda_time(&h200, 1, t, 96, &cs), pair = kda_time(&ov, 1, t, 96, &co);
			/* chain-bound at these shapes: the serial time is k1 + chain + launches, the
			 * latency part the chain + launches */
			assert_int_equal(cs.bound, BOUND_LATENCY);
			double chain = cs.latency_s - launch2, k1 = serial - cs.latency_s;
			if (!(pair - launch2 >= fmax(k1, chain) * (1 - 1e-12) && pair <= serial * (1 + 1e-12)))
				fail_msg("t=%d share %.2f: pair %.6g s, k1 %.6g, chain %.6g, serial %.6g", t,
					 ov.kda_overlap_rec_share, pair, k1, chain, serial);
			if (!(pair >= last))
				fail_msg("t=%d share %.2f: %.6g s after %.6g at fewer tokens", t, ov.kda_overlap_rec_share,
					 pair, last);
			last = pair;
		}
		/* B past the rule: serial, never faster */
		struct op_cost c1, c2, c4;
		double b1 = kda_time(&ov, 1, 16384, 96, &c1), b2 = kda_time(&ov, 2, 16384, 96, &c2),
		       b4 = kda_time(&ov, 4, 16384, 96, &c4);
		assert_true(b1 <= b2 && b2 <= b4);
	}
	/* the measured pair's order (2026-12-02l): share 0.5 takes 16K, H = 96 below the serial sum */
	ov.kda_overlap_rec_share = 0.5;
	struct op_cost c;
	assert_true(kda_time(&ov, 1, 16384, 96, &c) < 0.95 * kda_time(&h200, 1, 16384, 96, &c));
	/* outside the rule: the serial cost, to the bit */
	static const int shapes[][3] = {{1, 2048, 96}, {1, 16384, 48}, {2, 16384, 96}, {4, 4096, 96}, {1, 4095, 96}};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct op_cost a, b;
		assert_true(kda_time(&ov, shapes[i][0], shapes[i][1], shapes[i][2], &a) ==
			    kda_time(&h200, shapes[i][0], shapes[i][1], shapes[i][2], &b));
	}
	/* the pair's fixed cycles (hw.h kda_fixed_cycles): that many cycles more, serial or
	 * overlapped, at any clock */
	struct hw fx = ov;
	fx.kda_fixed_cycles = 40000;
	for (int t = 1024; t <= 16384; t *= 4) {
		struct op_cost a, b;
		double d = kda_time(&fx, 1, t, 96, &a) - kda_time(&ov, 1, t, 96, &b);
		if (fabs(d - 40000 / h200.sm_clock_hz) > 1e-12)
			fail_msg("t=%d: the fixed cycles added %.6g s", t, d);
	}
	/* a preset with a share above 1, or a rule without its bounds, does not load */
	struct hw bad;
	struct err e = {0};
#define KDA_OVERLAP_YAML(share) \
	MINI_PRESET_YAML("kda_overlap_max_seqs: 1, kda_overlap_min_heads: 96, kda_overlap_min_tokens: 4096,\n" \
			 "          kda_overlap_rec_share: " share)
	const char *yb = KDA_OVERLAP_YAML("0.4");
	assert_int_equal(hw_load_yaml(&bad, "x.yaml", yb, strlen(yb), &e), 0);
	assert_true(hw_kda_overlaps(&bad, 1, 96, 4096) && !hw_kda_overlaps(&bad, 2, 96, 4096) &&
		    !hw_kda_overlaps(&bad, 1, 48, 4096) && !hw_kda_overlaps(&bad, 1, 96, 4095));
	yb = KDA_OVERLAP_YAML("1.5");
	assert_true(hw_load_yaml(&bad, "x.yaml", yb, strlen(yb), &e) < 0);
	assert_non_null(strstr(e.msg, "kda_overlap_rec_share"));
#undef KDA_OVERLAP_YAML
}

/* KDA prefill's pair kernel (hw.h: kda_pair_*): inside the rule (serial, <= kda_pair_max_pairs
 * pairs) the chain costs the ratio times the chunk kernel's and nothing else changes; outside it
 * (more pairs, or the overlapped pair's shapes) the cost is the chunk kernel's to the bit; the
 * time still never falls as T grows; the loader's bounds. */
static void test_kda_pair(void **state)
{
	(void)state;
	struct hw pr = h200;
	pr.kda_overlap_max_seqs = 1, pr.kda_overlap_min_heads = 96, pr.kda_overlap_min_tokens = 4096;
	pr.kda_overlap_rec_share = 0.5;
	struct hw ch = pr; /* the same preset without the pair kernel */
	pr.kda_pair_max_pairs = 96;
	pr.kda_pair_chain_ratio = 0.8;
	double launch2 = 2 * h200.launch_latency_s;
	static const int inside[][3] = {{1, 16384, 12}, {1, 4096, 24}, {2, 8192, 48}, {8, 2048, 12}, {1, 1024, 96}};
	for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
		struct op_cost a, b;
		double tp = kda_time(&pr, inside[i][0], inside[i][1], inside[i][2], &a);
		double tc = kda_time(&ch, inside[i][0], inside[i][1], inside[i][2], &b);
		double chain_p = a.latency_s - launch2, chain_c = b.latency_s - launch2;
		if (!(fabs(chain_p / chain_c - 0.8) < 1e-9 && tp <= tc && tp >= 0.8 * tc - 1e-12))
			fail_msg("b=%d t=%d h=%d: pair %.6g s (chain %.6g), chunk %.6g s (chain %.6g)", inside[i][0],
				 inside[i][1], inside[i][2], tp, chain_p, tc, chain_c);
	}
	static const int outside[][3] = {{1, 16384, 96}, {1, 4096, 96}, {4, 4096, 96}, {2, 16384, 64}, {1, 1024, 128}};
	for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
		struct op_cost a, b;
		assert_true(kda_time(&pr, outside[i][0], outside[i][1], outside[i][2], &a) ==
			    kda_time(&ch, outside[i][0], outside[i][1], outside[i][2], &b));
	}
	assert_true(hw_kda_pair(&pr, 8, 12, 100) && !hw_kda_pair(&pr, 1, 96, 4096) && !hw_kda_pair(&pr, 97, 1, 10) &&
		    !hw_kda_pair(&ch, 1, 12, 100) && !hw_kda_pair(&pr, INT64_MAX, INT64_MAX, 1));
	/* never faster as the batch grows across the rule's bound (96 -> 97 pairs at 1 head) */
	for (int t = 256; t <= 16384; t *= 4) {
		struct op_cost a, b;
		assert_true(kda_time(&pr, 97, t, 1, &b) >= kda_time(&pr, 96, t, 1, &a));
	}
	for (int h = 12; h <= 96; h *= 2) {
		double last = 0;
		for (int t = 256; t <= 65536; t *= 2) {
			struct op_cost c;
			double x = kda_time(&pr, 1, t, h, &c);
			if (!(x >= last))
				fail_msg("h=%d t=%d: %.6g s after %.6g at fewer tokens", h, t, x, last);
			last = x;
		}
	}
	struct hw bad;
	struct err e = {0};
	const char *y = MINI_PRESET_YAML("kda_pair_max_pairs: 96");
	assert_int_equal(hw_load_yaml(&bad, "x.yaml", y, strlen(y), &e), 0);
	assert_true(bad.kda_pair_chain_ratio == 1);
	y = MINI_PRESET_YAML("kda_pair_max_pairs: 96, kda_pair_chain_ratio: 1.2");
	assert_true(hw_load_yaml(&bad, "x.yaml", y, strlen(y), &e) < 0);
	assert_non_null(strstr(e.msg, "kda_pair_chain_ratio"));
	y = MINI_PRESET_YAML("kda_pair_chain_ratio: 0.8");
	assert_true(hw_load_yaml(&bad, "x.yaml", y, strlen(y), &e) < 0);
	assert_non_null(strstr(e.msg, "needs kda_pair_max_pairs"));
}

/* The mean of ceil(r / c) over n draws of r ~ normal(mu, cv mu) given r >= 1 (Box-Muller on a
 * fixed 64-bit LCG): what sim_expected_chunks computes in closed form. */
static double sampled_chunks(double mu, double cv, double c, int n)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	double sum = 0;
	int kept = 0;
	while (kept < n) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		double u1 = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
		x = x * 6364136223846793005u + 1442695040888963407u;
		double u2 = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
		double r = mu + cv * mu * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		if (r < 1)
			continue;
		sum += ceil(r / c);
		kept++;
	}
	return sum / n;
}

static enum dtype fp4_act = DT_BF16; /* the activations of fp4_grouped_time's op */

static double fp4_grouped_time(const struct hw *hw, int64_t rows, double cv, enum dtype w)
{
	struct op op = {.kind = OP_GROUPED_GEMM, .m = rows, .n = 4096, .k = 3584, .groups = 896, .groups_touched = 896,
			.expert_cv = cv, .a_dtype = fp4_act, .w_dtype = w, .o_dtype = DT_BF16, .layers = 1};
	op_fill(&op);
	struct op_cost c;
	sim_op_cost(hw, &op, NULL, &c);
	return c.time_s;
}

/* The MXFP4 grouped kernel's chunks (hw.h grouped_fp4_*, the op's expert_cv): the expected chunk
 * count against sampling, the slice's measured counts (2026-12-02r: 2056-2067 chunks of 160 at
 * cv 0.172-0.180 against ~1840 for a uniform router, 896 experts of 292.6 rows), never fewer
 * as the mean rows grow; the cost never faster with more rows; no shipped preset models it. */
static void test_expert_chunks(void **state)
{
	(void)state;
	static const double pts[][3] = {{292.6, 0.058, 160}, {292.6, 0.175, 160}, {73.1, 0.2, 128},
					{1.7, 0.53, 128}, {5000, 0.3, 160}, {300, 2.0, 128}};
	for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
		double want = sampled_chunks(pts[i][0], pts[i][1], pts[i][2], 400000);
		double got = sim_expected_chunks(pts[i][0], pts[i][1], pts[i][2]);
		if (!(fabs(got - want) <= 0.01 * want))
			fail_msg("mean %g cv %g chunk %g: %.5f chunks, sampled %.5f", pts[i][0], pts[i][1], pts[i][2], got,
				 want);
	}
	assert_true(fabs(896 * sim_expected_chunks(292.6, 0.058, 160) - 1840) < 15);
	double slice = 896 * sim_expected_chunks(292.6, 0.176, 160);
	assert_true(slice > 2040 && slice < 2080);
	/* cv 0: a uniform router's, Poisson */
	assert_true(sim_expected_chunks(292.6, 0, 160) == sim_expected_chunks(292.6, 1 / sqrt(292.6), 160));
	/* the spread covering many chunks: half a chunk over the mean rows' chunks */
	double wide = sim_expected_chunks(1e9, 0.5, 16);
	assert_true(wide >= 1e9 / 16 && wide < 1.1e9 / 16);
	/* never below the floor; never fewer as the mean grows at a given spread (a wider spread
	 * may give fewer: at 211 rows of chunks of 160 some experts then fit in one) */
	for (double cv = 0; cv < 4; cv = cv * 1.5 + 0.01) {
		double last = 0;
		for (double mu = 1; mu < 2e5; mu *= 1.07) {
			double e = sim_expected_chunks(mu, cv, 160);
			if (!(e >= fmax(1.0, mu / 160) * (1 - 1e-9)))
				fail_msg("mean %g cv %g: %g chunks, below the floor", mu, cv, e);
			if (!(e >= last * (1 - 1e-9)))
				fail_msg("mean %g cv %g: %g chunks, fewer than %g at a smaller mean", mu, cv, e, last);
			last = e;
		}
	}
	/* the cost: on a preset with the kernel's chunks, a wider spread is never faster and more
	 * rows never faster; BF16 weights and the shipped presets do not see the spread */
	struct hw ch = h200;
	ch.grouped_fp4_chunk_rows = 160;
	ch.grouped_fp4_small_chunk_rows = 128;
	ch.grouped_fp4_welems_per_sm_cycle = 8;
	assert_true(fp4_grouped_time(&ch, 262144, 0.175, DT_MXFP4) > fp4_grouped_time(&ch, 262144, 0, DT_MXFP4));
	assert_true(fp4_grouped_time(&ch, 262144, 0, DT_MXFP4) > fp4_grouped_time(&h200, 262144, 0, DT_MXFP4));
	assert_true(fp4_grouped_time(&ch, 262144, 0.175, DT_BF16) == fp4_grouped_time(&h200, 262144, 0, DT_BF16));
	/* the gemv regime (at most grouped_fp4_gemv_rows a touched expert): no chunks */
	ch.grouped_fp4_gemv_rows = 16;
	assert_true(fp4_grouped_time(&ch, 4096, 0.5, DT_MXFP4) == fp4_grouped_time(&h200, 4096, 0.5, DT_MXFP4));
	assert_true(fp4_grouped_time(&ch, 65536, 0.2, DT_MXFP4) > fp4_grouped_time(&h200, 65536, 0.2, DT_MXFP4));
	{ /* E4M3 activations: the FP8 tiled kernel at every size (the E4M3 gemv is opt-in) */
		struct op f8 = {.kind = OP_GROUPED_GEMM, .m = 4096, .n = 6144, .k = 3584, .groups = 896,
				.groups_touched = 887, .w_dtype = DT_MXFP4, .a_dtype = DT_BF16};
		assert_true(sim_fp4_gemv(&ch, &f8) && sim_fp4_chunks(&ch, &f8) == 0);
		f8.a_dtype = DT_FP8;
		assert_true(!sim_fp4_gemv(&ch, &f8) && sim_fp4_chunks(&ch, &f8) >= 887);
	}
	/* more rows never faster: across the gemv's and the small chunks' thresholds too (896
	 * experts: 16 and 128 rows an expert at 14336 and 114688 rows) */
	ch.grouped_fp4_gemv_rows = 16;
	for (int act = 0; act < 2; act++) { /* BF16 activations (the gemv below 16 rows), E4M3 (none) */
		fp4_act = act ? DT_FP8 : DT_BF16;
		for (double cv = 0; cv <= 0.6; cv += 0.3) {
			double last = 0;
			for (int64_t rows = 16; rows <= 4194304; rows += rows / 64 + 1) {
				double t = fp4_grouped_time(&ch, rows, cv, DT_MXFP4);
				if (!(t >= last * (1 - 1e-12)))
					fail_msg("%s, %lld rows, cv %.1f: %.6g s after %.6g at fewer", act ? "fp8" : "bf16",
						 (long long)rows, cv, t, last);
				last = t;
			}
		}
	}
	fp4_act = DT_BF16;
	ch.grouped_fp4_gemv_rows = 0;
	const char *const *names = hw_preset_names();
	for (int i = 0; names[i]; i++) {
		struct hw p;
		struct err e = {0};
		assert_int_equal(hw_load(&p, names[i], &e), 0);
		assert_true(fp4_grouped_time(&p, 262144, 0.175, DT_MXFP4) == fp4_grouped_time(&p, 262144, 0, DT_MXFP4));
	}
	/* bad input: an op's cv, a preset's rule, a scenario's spread */
	struct op op;
	struct err e = {0};
	assert_int_equal(opspec_parse_line("grouped_gemm m=4096 n=4096 k=3584 groups=896 cv=0.2", &op, &e), 0);
	assert_true(op.expert_cv == 0.2);
	assert_true(opspec_parse_line("grouped_gemm m=4096 n=4096 k=3584 groups=896 cv=-1", &op, &e) < 0);
	assert_true(opspec_parse_line("grouped_gemm m=4096 n=4096 k=3584 groups=896 cv=17", &op, &e) < 0);
	assert_non_null(strstr(e.msg, "cv=17"));
#define CHUNK_YAML(rule) MINI_PRESET_YAML(rule)
	struct hw bad;
	const char *y = CHUNK_YAML("grouped_fp4_chunk_rows: 160, grouped_fp4_small_chunk_rows: 128, "
				   "grouped_fp4_welems_per_sm_cycle: 9.5");
	assert_int_equal(hw_load_yaml(&bad, "x.yaml", y, strlen(y), &e), 0);
	assert_true(bad.grouped_fp4_chunk_rows == 160 && bad.grouped_fp4_welems_per_sm_cycle == 9.5);
	y = CHUNK_YAML("grouped_fp4_chunk_rows: 128, grouped_fp4_small_chunk_rows: 160");
	assert_true(hw_load_yaml(&bad, "x.yaml", y, strlen(y), &e) < 0);
	assert_non_null(strstr(e.msg, "grouped_fp4_small_chunk_rows"));
	y = CHUNK_YAML("grouped_fp4_chunk_rows: 160, grouped_fp4_small_chunk_rows: 128, grouped_fp4_gemv_rows: 129");
	assert_true(hw_load_yaml(&bad, "x.yaml", y, strlen(y), &e) < 0);
	assert_non_null(strstr(e.msg, "grouped_fp4_gemv_rows"));
	y = CHUNK_YAML("grouped_fp4_welems_per_sm_cycle: 9.5");
	assert_true(hw_load_yaml(&bad, "x.yaml", y, strlen(y), &e) < 0);
	assert_non_null(strstr(e.msg, "needs grouped_fp4_chunk_rows"));
#undef CHUNK_YAML
	struct scenario s;
	const char *sc = "gpus: 8\nparallel: {tp: 8, ep: 8, moe_expert_cv: 20}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", sc, strlen(sc), &e) < 0);
	assert_non_null(strstr(e.msg, "moe_expert_cv"));
	sc = "gpus: 8\nparallel: {tp: 8, ep: 8, moe_expert_cv: 0.3}\n";
	assert_int_equal(scenario_load_yaml(&s, "s.yaml", sc, strlen(sc), &e), 0);
	assert_true(s.moe_expert_cv == 0.3);
}

/* The KDA recurrence is a chain: fewer heads per GPU (more TP) do not shorten it. */
static void test_kda_chain(void **state)
{
	struct op op = {.kind = OP_KDA_CHUNK, .b = 1, .t = 16384, .h = 96, .dk = 128, .dv = 128,
			.chunk = 16, .a_dtype = DT_BF16, .o_dtype = DT_BF16, .s_dtype = DT_FP32, .layers = 1};
	op_fill(&op);
	struct op_cost c96, c12;
	sim_op_cost(&h200, &op, NULL, &c96);
	op.h = 12;
	op_fill(&op);
	sim_op_cost(&h200, &op, NULL, &c12);
	assert_int_equal(c96.bound, BOUND_LATENCY);
	assert_true(c12.time_s > 0.8 * c96.time_s);
	assert_int_equal(op.serial_steps, 1024);
	/* Decode at B=64, H=96: two passes over the state, memory-bound. */
	struct op d = {.kind = OP_KDA_DECODE, .b = 64, .t = 1, .h = 96, .dk = 128, .dv = 128,
		       .a_dtype = DT_BF16, .o_dtype = DT_BF16, .s_dtype = DT_FP32, .layers = 1};
	op_fill(&d);
	struct op_cost cd;
	sim_op_cost(&h200, &d, NULL, &cd);
	assert_int_equal(cd.bound, BOUND_MEMORY);
	assert_int_equal(d.bytes_state_read, INT64_C(64) * 96 * 128 * 128 * 4);

	/* Several tokens per request (verify + replay) take the kda_verify table, one token the
	 * kda_decode table: a verify table of efficiency 0.5 doubles the verify's time only. */
	struct hw hv = h200;
	struct hw_table *t = &hv.tables[hv.n_tables++];
	*t = (struct hw_table){.cls = HW_CLASS_KDA_VERIFY, .dtype = DT_FP32, .key = HW_KEY_BYTES, .n = 2};
	t->x[0] = 1.0, t->eff[0] = 0.5; /* a range that holds both ops */
	t->x[1] = 1e30, t->eff[1] = 0.5;
	struct op v = d;
	v.t = 9;
	op_fill(&v);
	struct op_cost cv0, cv1, cd1;
	sim_op_cost(&h200, &v, NULL, &cv0);
	sim_op_cost(&hv, &v, NULL, &cv1);
	sim_op_cost(&hv, &d, NULL, &cd1);
	assert_true(fabs(cv1.time_s / cv0.time_s - 2.0) < 0.05);
	assert_true(fabs(cd1.time_s - cd.time_s) < 1e-12);
	assert_int_equal(v.bytes_state_read, d.bytes_state_read); /* the state is read once */
}

static void test_gemm_quantization(void **state)
{
	struct op g = {.kind = OP_GEMM, .m = 8192, .n = 8192, .k = 8192, .w_dtype = DT_BF16,
		       .a_dtype = DT_BF16, .o_dtype = DT_BF16, .layers = 1};
	op_fill(&g);
	struct op_cost c;
	sim_op_cost(&h200, &g, NULL, &c);
	assert_int_equal(c.bound, BOUND_COMPUTE);
	/* 4096 tiles of 128x128 over 132 SMs: 32 waves (the last one partial). */
	assert_true(c.waves == 32.0);
	double achieved = g.flops / c.time_s;
	assert_true(achieved < h200.tensor_flops_per_s[DT_BF16]);
	/* Wave quantization: m = 8448 still fits in 32 waves (66 x 64 = 4224 tiles = 32 x 132);
	 * one more row starts a 33rd wave, a 3 % jump for 0.01 % more work. */
	struct op g2 = g, g3 = g;
	g2.m = 8448;
	g3.m = 8449;
	op_fill(&g2);
	op_fill(&g3);
	struct op_cost c2, c3;
	sim_op_cost(&h200, &g2, NULL, &c2);
	sim_op_cost(&h200, &g3, NULL, &c3);
	assert_true(fabs(c2.time_s / c.time_s - 1) < 0.001);
	assert_true(c3.time_s / c2.time_s > 1.025);
	/* Collective sizes follow nccl-tests: all-reduce moves 2(n-1)/n of the buffer. */
	struct op ar = {.kind = OP_ALLREDUCE, .comm_bytes = 1 << 30, .ranks = 8, .layers = 1};
	struct op_cost ca;
	sim_op_cost(&h200, &ar, NULL, &ca);
	assert_int_equal(ca.bound, BOUND_COMM);
	double busbw = (double)(1 << 30) * 2 * 7 / 8 / ca.time_s;
	assert_true(busbw < h200.nvlink_bw_bytes_per_s && busbw > 0.5 * h200.nvlink_bw_bytes_per_s);
}

/* The GEMM epilogue's store rate (issue 11): the calibrated h200 has it; an output that fits in
 * L2 still costs its bytes at that rate (the calibration grid: k = 128 GEMMs writing 12-25 MB
 * ran at the store rate, not at L2's), it slows with the clock, and without the key (the other
 * presets) the output stays where memory_split puts it. */
static void test_gemm_store(void **state)
{
	(void)state;
	assert_true(h200_cal.gemm_store_bytes_per_sm_cycle > 0);
	struct hw hw = h200_cal;
	hw.n_tables = hw.n_gemm_points = 0; /* the physical model alone */
	hw.launch_latency_s = hw.graph_launch_latency_s = 0;
	hw.clock_bound[HW_POWER_GEMM] = 0; /* its own clock scaling, without the preset's roofline */
	struct op g = {.kind = OP_GEMM, .m = 128, .n = 49152, .k = 128, .w_dtype = DT_FP8,
		       .a_dtype = DT_FP8, .o_dtype = DT_BF16, .layers = 1};
	op_fill(&g);
	assert_true((double)g.bytes_act_out < 0.5 * (double)hw.l2_bytes);
	double store_bw = hw.gemm_store_bytes_per_sm_cycle * (double)hw.sms * hw.sm_clock_hz;
	struct op_cost c, cs, c0;
	sim_op_cost(&hw, &g, NULL, &c);
	assert_true(c.memory_s >= (double)g.bytes_act_out / store_bw);
	assert_true(c.time_s >= (double)g.bytes_act_out / store_bw);
	assert_int_equal(c.bound, BOUND_MEMORY);
	/* SM-side: slower at the sustained clock */
	struct cost_opts o = {.clock = {.regime = HW_CLOCK_SUSTAINED}};
	sim_op_cost(&hw, &g, &o, &cs);
	assert_true(cs.memory_s > c.memory_s * 1.1);
	/* without the key: the output in L2, at L2's rate */
	hw.gemm_store_bytes_per_sm_cycle = 0;
	sim_op_cost(&hw, &g, NULL, &c0);
	assert_true(c0.memory_s < 0.6 * c.memory_s);
}

/* A kernel smaller than the smallest one its class measured takes that kernel's time, not its
 * bytes over the bandwidth (an elementwise op on a few KB: nanoseconds before; 1.1-4.8 us
 * measured, docs/perf/profile-h200-2026-12-01.md); the floor holds at the sustained clock too. */
static void test_kernel_floor(void **state)
{
	(void)state;
	const struct hw_table *tb = hw_table_find(&h200_cal, HW_CLASS_MEMORY, DT_BF16);
	assert_non_null(tb);
	assert_int_equal(tb->key, HW_KEY_MODEL_S);
	double t0 = tb->x[0] / tb->eff[0];
	assert_true(t0 > 0.5e-6 && t0 < 5e-6);
	struct hw hw = h200_cal;
	hw.launch_latency_s = hw.graph_launch_latency_s = 0;
	struct op e = {.kind = OP_ELEMENTWISE, .m = 1, .n = 64, .a_dtype = DT_BF16, .o_dtype = DT_BF16, .layers = 1,
		       .in_tensors = 1, .out_tensors = 1, .flops_per_element = 2};
	op_fill(&e);
	struct op_cost c, cs;
	sim_op_cost(&hw, &e, NULL, &c);
	assert_true(c.time_s >= t0 * (1 - 1e-12));
	assert_true(c.extrapolated);
	struct cost_opts o = {.clock = {.regime = HW_CLOCK_SUSTAINED}};
	sim_op_cost(&hw, &e, &o, &cs);
	assert_true(cs.time_s >= t0 * (1 - 1e-12));
	/* a table whose smallest kernel is large (one 2 GiB copy) gives no floor to small ops */
	struct hw big = hw;
	for (int i = 0; i < big.n_tables; i++)
		if (big.tables[i].cls == HW_CLASS_MEMORY) {
			big.tables[i].n = 1;
			big.tables[i].x[0] = 1e-3;
			big.tables[i].eff[0] = 1;
		}
	sim_op_cost(&big, &e, NULL, &cs);
	assert_true(cs.time_s < 1e-6);
	/* inside the measured range the table decides */
	e.m = 4096;
	e.n = 4096;
	op_fill(&e);
	sim_op_cost(&hw, &e, NULL, &c);
	assert_false(c.extrapolated);
	assert_true(c.time_s > t0);
}

static void test_bad_scenarios(void **state)
{
	struct scenario s;
	struct err e;
	char buf[600];
	const char *typo = "model: kimi-k3\ngpus: 16\nworkload:\n  bacth: 4\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", typo, strlen(typo), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "s.yaml:4:3: error: unknown key 'bacth' (did you mean 'batch'?)");
	const char *type = "gpus: 16\nparallel: {tp: eight}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", type, strlen(type), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "s.yaml:2:16: error: tp: expected an integer, got 'eight'");
	const char *layout = "gpus: 16\nparallel: {tp: 8, dp: 4}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", layout, strlen(layout), &e) < 0);
	assert_non_null(strstr(e.msg, "tp x dp x cp"));
	const char *dt = "dtypes: {kda_state: fp8}\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", dt, strlen(dt), &e) < 0);
	assert_non_null(strstr(e.msg, "not one of fp32, bf16"));
	const char *malformed = "gpus: 16\nparallel: {tp: 8\n";
	assert_true(scenario_load_yaml(&s, "s.yaml", malformed, strlen(malformed), &e) < 0);
	assert_true(e.line > 0);
	assert_true(scenario_load(&s, "defualt", &e) < 0);
	assert_non_null(strstr(e.msg, "did you mean 'default'"));

	/* A layout that does not divide the heads is refused by the simulator. */
	const char *heads = "gpus: 7\nparallel: {tp: 7, dp: 1, ep: 7}\n";
	assert_int_equal(scenario_load_yaml(&s, "s.yaml", heads, strlen(heads), &e), 0);
	assert_true(sim_run(&s, &k3, &h200, res, &e) < 0);
	assert_non_null(strstr(e.msg, "does not divide the 96 KDA heads"));
}

static void test_hw_presets(void **state)
{
	struct err e;
	for (const char *const *n = hw_preset_names(); *n; n++) {
		struct hw hw;
		assert_int_equal(hw_load(&hw, *n, &e), 0);
		assert_true(!hw.calibrated || hw.n_tables + hw.n_gemm_points > 0); /* calibrated: fitted tables */
		assert_true(hw.hbm_bytes > 0 && hw.tensor_flops_per_s[DT_BF16] > 0);
	}
	/* Hopper has no FP4 path: MXFP4 math falls back to FP8. Blackwell runs it natively. */
	assert_int_equal(hw_math_dtype(&h200, DT_MXFP4), DT_FP8);
	struct hw b200;
	assert_int_equal(hw_load(&b200, "b200", &e), 0);
	assert_int_equal(hw_math_dtype(&b200, DT_MXFP4), DT_MXFP4);
	/* issue 13: h100, b200, b300, gb200 calibrated (on NVIDIA's public tables, with collectives
	 * at 4 GPUs and more); the datasheet ones under -datasheet; B300 native FP4 */
	static const char *const gpus[] = {"h100", "b200", "b300", "gb200"};
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		struct hw cal, ds;
		char name[32];
		snprintf(name, sizeof name, "%s-datasheet", gpus[i]);
		assert_int_equal(hw_load(&cal, gpus[i], &e), 0);
		assert_int_equal(hw_load(&ds, name, &e), 0);
		assert_true(cal.calibrated && !ds.calibrated);
		const struct hw_coll_model *m = hw_coll_model(&cal, HW_COLL_ALLREDUCE, 4);
		assert_true(m && m->ranks == 4);
		assert_non_null(strstr(cal.source, "aiconfigurator"));
		if (gpus[i][0] == 'b' || gpus[i][0] == 'g')
			assert_int_equal(hw_math_dtype(&cal, DT_MXFP4), DT_MXFP4);
	}
	const char *bad = "name: x\ncalibrated: false\ndevice: {sms: 1}\n";
	struct hw hw;
	assert_true(hw_load_yaml(&hw, "x.yaml", bad, strlen(bad), &e) < 0);
	assert_non_null(strstr(e.msg, "missing key"));
	assert_true(hw_load(&hw, "h201", &e) < 0);
	assert_non_null(strstr(e.msg, "did you mean 'h200'"));
}


/* A preset with per-collective models and tables (efficiency.collectives, comm[.KIND[.RANKS]]). */
static const char coll_yaml[] =
	"name: t\ncalibrated: true\n"
	"device: {sms: 132, sm_clock_mhz: 1980, l2_mib: 60, hbm_mib: 1000, hbm_gb_per_s: 4800,\n"
	"         vector_tflops: 60, launch_latency_us: 2, tensor_tflops: {bf16: 989}}\n"
	"interconnect: {domain_gpus: 8, nvlink_gb_per_s: 450, nvlink_latency_us: 3, nic_gb_per_s: 50,\n"
	"               nic_latency_us: 8}\n"
	"efficiency:\n"
	"  gemm: {max: 0.8, half_gflop: 0.02}\n"
	"  memory: {max: 0.9, half_mib: 2}\n"
	"  comm: {max: 0.8, half_mib: 1}\n"
	"  collectives:\n"
	"    allreduce.2: {step_latency_us: 1.5, max: 0.6, half_mib: 1}\n"
	"    allreduce: {step_latency_us: 2.5, max: 0.7, half_mib: 1}\n"
	"    alltoall.8: {step_latency_us: 4, max: 0.5, half_mib: 2}\n"
	"  tables:\n"
	"    comm.allreduce.2: {mib: [1, 16], eff: [0.5, 0.8]}\n"
	"    comm.allreduce: {mib: [1, 16], eff: [1.5, 1.25]}\n"
	"    comm: {mib: [1], eff: [2]}\n"
	"kernels: {gemm_tile_m: 128, gemm_tile_n: 128, kda_chunk_step_cycles: 3000, reserved_gib: 4}\n";

static double comm_time(const struct hw *hw, enum op_kind kind, int64_t bytes, int64_t ranks)
{
	struct op o = {.kind = kind, .comm_bytes = bytes, .ranks = ranks, .layers = 1};
	struct op_cost c;
	sim_op_cost(hw, &o, NULL, &c);
	return c.time_s;
}

/* Collectives calibrated at 2 and 4 ranks (the public NCCL tables measure 2, 4 and 8): a rank count
 * between them is bounded by both, one above by the envelope of those below. Before the bounds the
 * 2-rank model stretched to 3 ranks (log2 3 steps of its 6 us) took longer than 4 ranks measured. */
static const char ranks_yaml[] =
	"name: t\ncalibrated: true\n"
	"device: {sms: 132, sm_clock_mhz: 1980, l2_mib: 60, hbm_mib: 1000, hbm_gb_per_s: 4800,\n"
	"         vector_tflops: 60, launch_latency_us: 2, tensor_tflops: {bf16: 989}}\n"
	"interconnect: {domain_gpus: 8, nvlink_gb_per_s: 450, nvlink_latency_us: 3, nic_gb_per_s: 50,\n"
	"               nic_latency_us: 8}\n"
	"efficiency:\n"
	"  gemm: {max: 0.8, half_gflop: 0.02}\n"
	"  memory: {max: 0.9, half_mib: 2}\n"
	"  comm: {max: 0.8, half_mib: 1}\n"
	"  collectives:\n"
	"    allgather.2: {step_latency_us: 6, max: 0.5, half_mib: 0}\n"
	"    allgather.4: {step_latency_us: 2, max: 0.8, half_mib: 0}\n"
	"    allreduce.2: {step_latency_us: 3, max: 0.5, half_mib: 0}\n"
	"    allreduce.4: {step_latency_us: 1, max: 0.9, half_mib: 0}\n"
	"kernels: {gemm_tile_m: 128, gemm_tile_n: 128, kda_chunk_step_cycles: 3000, reserved_gib: 4}\n";

static void test_coll_rank_bounds(void **state)
{
	(void)state;
	struct hw hw;
	struct err e;
	char buf[600];
	if (hw_load_yaml(&hw, "t.yaml", ranks_yaml, strlen(ranks_yaml), &e) < 0)
		fail_msg("%s", err_format(&e, buf, sizeof buf));
	static const int64_t sizes[] = {512, 8192, 1 << 20, 64 << 20, (int64_t)1 << 30};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		double t2 = comm_time(&hw, OP_ALLGATHER, sizes[i], 2), t3 = comm_time(&hw, OP_ALLGATHER, sizes[i], 3),
		       t4 = comm_time(&hw, OP_ALLGATHER, sizes[i], 4), t8 = comm_time(&hw, OP_ALLGATHER, sizes[i], 8);
		assert_true(t2 <= t3 && t3 <= t4 && t4 <= t8);
		/* 4 ranks measured faster per byte than 2 (allreduce.4 above): never faster than 2 */
		double r2 = comm_time(&hw, OP_ALLREDUCE, sizes[i], 2), r4 = comm_time(&hw, OP_ALLREDUCE, sizes[i], 4);
		assert_true(r4 >= r2 && comm_time(&hw, OP_ALLREDUCE, sizes[i], 3) <= r4);
	}
	/* 8 KiB all-gather: 2 ranks 6 us, 4 ranks 4 us by the 4-rank model alone; 3 ranks would be
	 * log2(3) x 6 = 9.5 us by the 2-rank model: at most 4 ranks' (which is at least 2 ranks') */
	double t3 = comm_time(&hw, OP_ALLGATHER, 8192, 3), t2 = comm_time(&hw, OP_ALLGATHER, 8192, 2);
	assert_true(t3 < 7e-6 && t3 >= t2);
}

/* MLA prefill takes the attention_prefill table where there is one, else attention's (older
 * presets); decode takes attention's. */
static double attn_time(const char *tables, const char *spec)
{
	char y[2048];
	snprintf(y, sizeof y,
	         "name: t\ncalibrated: true\n"
	         "device: {sms: 132, sm_clock_mhz: 1980, l2_mib: 60, hbm_mib: 1000, hbm_gb_per_s: 4800,\n"
	         "         vector_tflops: 60, launch_latency_us: 0, graph_launch_latency_us: 0,\n"
	         "         tensor_tflops: {bf16: 989}}\n"
	         "interconnect: {domain_gpus: 8, nvlink_gb_per_s: 450, nvlink_latency_us: 3, nic_gb_per_s: 50,\n"
	         "               nic_latency_us: 8}\n"
	         "efficiency:\n"
	         "  gemm: {max: 0.8, half_gflop: 0.02}\n"
	         "  memory: {max: 0.9, half_mib: 2}\n"
	         "  comm: {max: 0.8, half_mib: 1}\n"
	         "  tables:\n%s"
	         "kernels: {gemm_tile_m: 128, gemm_tile_n: 128, kda_chunk_step_cycles: 3000, reserved_gib: 4}\n",
	         tables);
	struct hw hw;
	struct err e;
	char buf[600];
	if (hw_load_yaml(&hw, "t.yaml", y, strlen(y), &e) < 0)
		fail_msg("%s", err_format(&e, buf, sizeof buf));
	struct op op;
	assert_int_equal(opspec_parse_line(spec, &op, &e), 0);
	struct op_cost c;
	sim_op_cost(&hw, &op, NULL, &c);
	return c.time_s;
}

/* The op kinds of their own (issue 17): their class's table where the preset has one, else the
 * memory class's (a preset calibrated before them keeps charging them as it did). */
static void test_own_kind_tables(void **state)
{
	(void)state;
	const char *at = "attnres tokens=4096 dim=7168 sources=9 delta=1";
	const char *rt = "route tokens=4096 experts=896 top_k=16";
	const char *none = "    gemm.bf16: {model_us: [0.001, 1000000], eff: [1, 1]}\n";
	const char *mem = "    memory: {model_us: [0.001, 1000000], eff: [0.5, 0.5]}\n";
	const char *own = "    memory: {model_us: [0.001, 1000000], eff: [0.5, 0.5]}\n"
	                  "    attnres: {model_us: [0.001, 1000000], eff: [0.25, 0.25]}\n";
	double a0 = attn_time(none, at), r0 = attn_time(none, rt);
	assert_true(fabs(attn_time(mem, at) / a0 - 2) < 1e-9);
	assert_true(fabs(attn_time(own, at) / a0 - 4) < 1e-9);
	assert_true(fabs(attn_time(own, rt) / r0 - 2) < 1e-9); /* no route table: the memory one */

	/* the quantizer: its own table keyed by the output dtype (quant.fp8), else the memory one */
	const char *qt = "quant tokens=4096 width=3584 dtype=fp8";
	const char *qm = "quant tokens=4096 width=3584 dtype=mxfp8";
	const char *qown = "    memory: {model_us: [0.001, 1000000], eff: [0.5, 0.5]}\n"
			   "    quant.fp8: {model_us: [0.001, 1000000], eff: [0.2, 0.2]}\n";
	double q0 = attn_time(none, qt), m0 = attn_time(none, qm);
	assert_true(fabs(attn_time(mem, qt) / q0 - 2) < 1e-9);
	assert_true(fabs(attn_time(qown, qt) / q0 - 5) < 1e-9);
	assert_true(fabs(attn_time(qown, qm) / m0 - 2) < 1e-9); /* no quant.mxfp8 table: the memory one */
}

/* The quantizer's spec: bytes in BF16, FP8 out with its scales (FP32 a row, FP32 a group of 128,
 * an E8M0 byte a group of 32), and bad values refused. */
static void test_quant_spec(void **state)
{
	(void)state;
	struct err e;
	struct op op;
	assert_int_equal(opspec_parse_line("k3sim op=quant tokens=4096 width=3584 dtype=fp8 group=0", &op, &e), 0);
	assert_int_equal(op.kind, OP_QUANT);
	assert_int_equal(op.bytes_act_in, 4096LL * 3584 * 2);
	assert_int_equal(op.bytes_act_out, 4096LL * 3584 + 4096LL * 4);
	assert_int_equal(opspec_parse_line("quant tokens=4096 width=3584", &op, &e), 0); /* defaults */
	assert_int_equal(op.k, 0);
	assert_int_equal(op.o_dtype, DT_FP8);
	assert_int_equal(opspec_parse_line("quant tokens=2 width=7168 group=128", &op, &e), 0);
	assert_int_equal(op.bytes_act_out, 2LL * 7168 + 2LL * 56 * 4);
	assert_int_equal(opspec_parse_line("quant tokens=2 width=7168 dtype=mxfp8", &op, &e), 0);
	assert_int_equal(op.k, 32);
	assert_int_equal(op.bytes_act_out, 2LL * 7168 + 2LL * 224);
	static const char *const bad[] = {
	    "quant tokens=2 width=7168 dtype=bf16",          "quant tokens=2 width=7168 dtype=mxfp8 group=128",
	    "quant tokens=2 width=128 group=256",             "quant tokens=2 width=0",
	    "quant tokens=2 width=7168 group=-1",             "quant tokens=2",
	    "quant tokens=2 width=7168 grup=128",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (opspec_parse_line(bad[i], &op, &e) == 0)
			fail_msg("'%s' parsed", bad[i]);
	/* its bytes at HBM even where they would fit in L2: never below them at its bandwidth */
	assert_int_equal(opspec_parse_line("quant tokens=1024 width=3584", &op, &e), 0);
	assert_true((double)op_bytes(&op) < 0.5 * (double)h200.l2_bytes);
	struct op_cost c;
	sim_op_cost(&h200, &op, NULL, &c);
	assert_true(c.floor_s >= (double)op_bytes(&op) / h200.hbm_bw_bytes_per_s);
	assert_true(c.time_s >= (double)op_bytes(&op) / h200.hbm_bw_bytes_per_s);
}

/* AttnRes, routing, combine, ShortConv on the physical model: never faster when a size grows
 * (tokens one by one across the SMs' worth of CTAs, where a row reduction leaves its one-CTA
 * time), never below the floor, and a token's AttnRes costs more than the same bytes streamed
 * by every SM (an 8-CTA cluster reads them: measured 7.0 us on the H200 where a stream of its
 * 168 KiB takes 0.04 us, bench/results/k3-kernels-h200-2026-12-01g). */
static void test_own_kinds_physical(void **state)
{
	(void)state;
	static const char *const kind[] = {"attnres", "route", "combine", "short_conv", "quant", "quant", "quant"};
	static const char *const rest[] = {"dim=7168 sources=9 delta=1", "experts=896 top_k=16",
					   "width=3584 top_k=16", "channels=36864 taps=4", "width=3584",
					   "width=7168 group=128", "width=3584 dtype=mxfp8"};
	struct err e;
	for (int k = 0; k < 7; k++) {
		double prev = 0;
		for (int t = 1; t <= 70000; t = t < 2200 ? t + 1 : t * 2) {
			char spec[128];
			snprintf(spec, sizeof spec, "%s tokens=%d %s", kind[k], t, rest[k]);
			struct op op;
			assert_int_equal(opspec_parse_line(spec, &op, &e), 0);
			struct op_cost c;
			sim_op_cost(&h200, &op, NULL, &c);
			assert_true(c.time_s >= c.floor_s * (1 - 1e-12));
			if (c.time_s < prev * (1 - 1e-12))
				fail_msg("%s: %.4g s, %.4g s at one token less", spec, c.time_s, prev);
			prev = c.time_s;
		}
	}
	struct op a, m;
	assert_int_equal(opspec_parse_line("attnres tokens=1 dim=7168 sources=9 delta=1", &a, &e), 0);
	m = (struct op){.kind = OP_ELEMENTWISE, .m = 1, .n = 7168, .a_dtype = DT_BF16, .o_dtype = DT_BF16,
			.layers = 1, .in_tensors = 10, .out_tensors = 2, .flops_per_element = 2};
	op_fill(&m);
	assert_int_equal(op_bytes(&a), op_bytes(&m));
	struct op_cost ca, cm;
	struct hw hw = h200;
	hw.launch_latency_s = 0;
	sim_op_cost(&hw, &a, NULL, &ca);
	sim_op_cost(&hw, &m, NULL, &cm);
	assert_true(ca.time_s > 4 * cm.time_s);
	/* more sources, more experts per token: never faster */
	struct op b;
	assert_int_equal(opspec_parse_line("attnres tokens=1 dim=7168 sources=10 delta=1", &b, &e), 0);
	sim_op_cost(&hw, &b, NULL, &cm);
	assert_true(cm.time_s > ca.time_s);
}

static void test_attention_prefill_table(void **state)
{
	(void)state;
	const char *dec = "mla_decode b=64 heads=64 ctx=8192", *pre = "mla_prefill b=1 t=8192 heads=64";
	const char *one = "    gemm.bf16: {model_us: [0.001, 1000000], eff: [1, 1]}\n";
	const char *both = "    attention.bf16: {model_us: [0.001, 1000000], eff: [0.5, 0.5]}\n"
	                   "    attention_prefill.bf16: {model_us: [0.001, 1000000], eff: [0.25, 0.25]}\n";
	const char *old = "    attention.bf16: {model_us: [0.001, 1000000], eff: [0.5, 0.5]}\n";
	double d1 = attn_time(one, dec), p1 = attn_time(one, pre);
	assert_true(fabs(attn_time(both, dec) / d1 - 2) < 1e-9);
	assert_true(fabs(attn_time(both, pre) / p1 - 4) < 1e-9);
	assert_true(fabs(attn_time(old, pre) / p1 - 2) < 1e-9);
}

static void test_hw_collectives(void **state)
{
	struct hw hw;
	struct err e;
	char buf[600];
	if (hw_load_yaml(&hw, "t.yaml", coll_yaml, strlen(coll_yaml), &e) < 0)
		fail_msg("%s", err_format(&e, buf, sizeof buf));
	assert_int_equal(hw.n_coll, 3);
	assert_int_equal(hw.n_tables, 3);
	/* models: exact (kind, ranks), then the largest rank count below, then (kind, any ranks),
	 * else none (the interconnect's) */
	const struct hw_coll_model *m = hw_coll_model(&hw, HW_COLL_ALLREDUCE, 2);
	assert_non_null(m);
	assert_true(m->ranks == 2 && fabs(m->step_latency_s - 1.5e-6) < 1e-12 && m->eff.max == 0.6);
	m = hw_coll_model(&hw, HW_COLL_ALLREDUCE, 8);
	assert_true(m && m->ranks == 2); /* 8 GPUs never beat what 2 measured */
	m = hw_coll_model(&hw, HW_COLL_ALLTOALL, 16);
	assert_true(m && m->ranks == 8);
	m = hw_coll_model(&hw, HW_COLL_ALLTOALL, 4);
	assert_null(m); /* below every measured rank count: the interconnect's */
	assert_null(hw_coll_model(&hw, HW_COLL_ALLTOALL, 2));
	m = hw_coll_model(&hw, HW_COLL_ALLREDUCE, 1);
	assert_true(m && m->ranks == 0 && fabs(m->step_latency_s - 2.5e-6) < 1e-12);
	assert_true(hw_coll_model(&hw, HW_COLL_ALLTOALL, 8)->eff.half == 2.0 * 1048576);
	assert_null(hw_coll_model(&hw, HW_COLL_ALLGATHER, 2));
	/* tables: the same order, then the table of all kinds (interpolated in log-log; a table over
	 * a size holds its end values outside its range, one over modeled time tapers to 1) */
	double mib = 1048576;
	assert_true(fabs(hw_comm_table_eff(&hw, HW_COLL_ALLREDUCE, 2, 1 * mib, 0) - 0.5) < 1e-12);
	assert_true(fabs(hw_comm_table_eff(&hw, HW_COLL_ALLREDUCE, 2, 4 * mib, 0) - sqrt(0.5 * 0.8)) < 1e-9);
	/* 4 ranks: the table of 2 (the largest rank count below), holding its end value */
	assert_true(fabs(hw_comm_table_eff(&hw, HW_COLL_ALLREDUCE, 4, 64 * mib, 0) - 0.8) < 1e-12);
	assert_true(fabs(hw_comm_table_eff(&hw, HW_COLL_ALLREDUCE, 1, 64 * mib, 0) - 1.25) < 1e-12);
	struct hw_table tt = {.cls = HW_CLASS_GEMM, .key = HW_KEY_MODEL_S, .n = 2, .x = {1e-6, 1e-5},
			      .eff = {0.5, 1.25}};
	bool inside;
	assert_true(hw_table_eff_at(&tt, 0, 0, 4e-6, &inside) > 0.5 && inside);
	assert_true(fabs(hw_table_eff_at(&tt, 0, 0, 4e-5, &inside) - pow(1.25, 1 - log10(4.0))) < 1e-12);
	assert_false(inside);
	assert_true(hw_table_eff_at(&tt, 0, 0, 1e-3, NULL) == 1);
	/* 0.5 tapers over max(1, 2 x 0.301) = 1 decade */
	assert_true(fabs(hw_table_eff_at(&tt, 0, 0, 1e-6 / sqrt(10.0), NULL) - sqrt(0.5)) < 1e-12);
	assert_true(hw_table_eff_at(&tt, 0, 0, 1e-8, NULL) == 1);
	assert_true(fabs(hw_comm_table_eff(&hw, HW_COLL_ALLGATHER, 2, 1 * mib, 0) - 2) < 1e-12);
	assert_true(fabs(hw_comm_table_eff(&hw, HW_COLL_ALLTOALL, 8, 1 * mib, 0) - 2) < 1e-12);
	/* the generic class lookup sees only the table of all kinds */
	assert_true(fabs(hw_table_eff(&hw, HW_CLASS_COMM, DT_BF16, 0, mib, 0) - 2) < 1e-12);

	/* the cost uses them: all-reduce of 1 MiB over 2 GPUs, by hand */
	double bytes = mib, eff = 0.6 * bytes / (bytes + mib);
	double want = (2 * 1.5e-6 + bytes * 1.0 / (450e9 * eff)) / 0.5;
	assert_true(fabs(comm_time(&hw, OP_ALLREDUCE, (int64_t)bytes, 2) / want - 1) < 1e-9);
	/* all-gather over 2 GPUs: the interconnect's curve and latency, the table of all kinds */
	eff = 0.8 * bytes / (bytes + mib);
	want = (3e-6 + bytes * 0.5 / (450e9 * eff)) / 2;
	assert_true(fabs(comm_time(&hw, OP_ALLGATHER, (int64_t)bytes, 2) / want - 1) < 1e-9);

	/* more bytes never take less time, more ranks never less for all-reduce (every preset) */
	static const enum op_kind kinds[] = {OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_ALLTOALL};
	const struct hw *hws[] = {&hw, &h200, &h200_cal};
	for (size_t h = 0; h < 3; h++)
		for (size_t k = 0; k < 4; k++)
			for (int64_t r = 2; r <= 16; r *= 2) {
				double last = 0;
				for (int64_t b = 1024; b <= ((int64_t)4 << 30); b = b * 3 / 2) {
					double t = comm_time(hws[h], kinds[k], b, r);
					if (!(t >= last))
						fail_msg("%s %s: %lld bytes over %lld ranks: %g s < %g s", hws[h]->name,
							 op_kind_name(kinds[k]), (long long)b, (long long)r, t, last);
					last = t;
				}
			}

	/* errors name the place */
	struct {
		const char *from, *to, *want;
	} bad[] = {
		{"allreduce.2: {", "allreduse.2: {", "t.yaml:12:5: error: efficiency.collectives: unknown collective 'allreduse' (did you mean 'allreduce'?)"},
		{"allreduce.2: {", "allreduce.1: {", "t.yaml:12:5: error: efficiency.collectives: 'allreduce.1': the rank count after 'allreduce.' must be an integer of at least 2"},
		{"alltoall.8: {step", "alltoall.8: {stepp", "t.yaml:14:18: error: unknown key 'stepp_latency_us' (did you mean 'step_latency_us'?)"},
		{"allreduce: {step_latency_us: 2.5, max: 0.7", "allreduce: {step_latency_us: 2.5, max: 1.7", "t.yaml:13:44: error: allreduce.max: must be in (0, 1]"},
		{"    comm.allreduce: {", "    comm.allreduce.02: {", "t.yaml:17:5: error: efficiency.tables: 'comm.allreduce.02' is given twice"},
		{"    comm: {", "    comm.bf16: {", "t.yaml:18:5: error: efficiency.tables: unknown collective 'bf16' (expected allreduce, allgather, reducescatter or alltoall)"},
		{"alltoall.8:", "allreduce.02:", "t.yaml:14:5: error: efficiency.collectives: 'allreduce.02' is given twice"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[sizeof coll_yaml + 64];
		const char *at = strstr(coll_yaml, bad[i].from);
		assert_non_null(at);
		snprintf(text, sizeof text, "%.*s%s%s", (int)(at - coll_yaml), coll_yaml, bad[i].to,
			 at + strlen(bad[i].from));
		struct hw x;
		assert_true(hw_load_yaml(&x, "t.yaml", text, strlen(text), &e) < 0);
		assert_string_equal(err_format(&e, buf, sizeof buf), bad[i].want);
	}
}

/* EP dispatch and combine: one row per EP rank a token reaches, nothing at EP1, the busiest rank
 * scaled by the imbalance. */
static void test_ep_bytes(void **state)
{
	const struct model_moe *x = &k3.moe;
	assert_int_equal(sim_ep_comm_bytes(x, 1024, 3696, 1, 1.0), 0);
	/* EP2: every token reaches both ranks; 3584 FP8 + 112 B of scales */
	int64_t b2 = sim_ep_comm_bytes(x, 1024, 3696, 2, 1.0);
	assert_true(llabs(b2 - INT64_C(1024) * 2 * 3696) < 3696);
	assert_true(sim_ep_comm_bytes(x, 1024, 3696, 16, 1.3) > sim_ep_comm_bytes(x, 1024, 3696, 16, 1.0));
	assert_true(sim_ep_comm_bytes(x, 1024, 3696, 16, 1.0) < INT64_C(1024) * 16 * 3696 * 2 / 3);

	/* the same as an op (k3sim op ep_dispatch / ep_combine: K3's defaults) */
	struct op op;
	struct err e;
	assert_int_equal(opspec_parse_line("ep_dispatch tokens=1024 ranks=2", &op, &e), 0);
	assert_int_equal(op.kind, OP_ALLTOALL);
	assert_string_equal(op.name, "ep_dispatch");
	assert_int_equal(op.comm_bytes, b2);
	assert_int_equal(opspec_parse_line("ep_combine tokens=1024 ranks=16 imbalance=1.3", &op, &e), 0);
	assert_int_equal(op.comm_bytes, sim_ep_comm_bytes(x, 1024, 7168, 16, 1.3));
	assert_int_equal(opspec_parse_line("ep_combine tokens=8 ranks=1", &op, &e), 0);
	assert_int_equal(op.comm_bytes, 0);
	assert_true(opspec_parse_line("ep_dispatch tokens=8 ranks=2 imbalance=0.5", &op, &e) < 0);
	assert_non_null(strstr(e.msg, "imbalance must be at least 1"));
	assert_true(opspec_parse_line("ep_dispatch tokens=8 ranks=2 imbalance=x", &op, &e) < 0);
	assert_true(opspec_parse_line("ep_dispatch tokens=8 ranks=2 top_k=0", &op, &e) < 0);

	/* in a step: EP1 maps no dispatch or combine; EP2's dispatch is 2 rows of 3696 B per token */
	struct scenario s;
	load_default(&s);
	s.gpus = 2;
	s.tp = 1;
	s.dp = 2;
	s.ep = 2;
	s.moe_imbalance = 1;
	for (int ep = 1; ep <= 2; ep++) {
		s.ep = ep;
		s.dp = 2;
		struct phase p;
		sim_phase_init(&s, PHASE_DECODE, 64, 1, 4096, &p);
		static struct sim_phase ph;
		sim_phase_reset(&ph);
		assert_true(ok_step(&s, &k3, &h200, &p, &ph, 1) > 0);
		int found = 0;
		for (int i = 0; i < ph.n_rows; i++) {
			const struct op *o = &ph.rows[i].op;
			if (strcmp(o->name, "moe.dispatch") == 0) {
				found++;
				assert_true(llabs(o->comm_bytes - 32 * 2 * 3696) < 64);
			}
			if (strcmp(o->name, "moe.combine") == 0) {
				found++;
				assert_true(llabs(o->comm_bytes - 32 * 2 * 7168) < 64);
			}
		}
		/* one dispatch and one combine per MoE layer group */
		assert_true(ep == 1 ? found == 0 : found >= 2 && found % 2 == 0);
	}
}

/* The default h200 is calibrated (fitted tables); the properties hold there too. */
static void test_properties_calibrated(void **state)
{
	struct scenario s;
	load_default(&s);
	assert_true(h200_cal.calibrated);
	double last_step = 0;
	int64_t kda_bytes = -1;
	for (int64_t ctx = 4096; ctx <= 1048576; ctx *= 2) {
		struct phase p;
		sim_phase_init(&s, PHASE_DECODE, s.batch, 1, ctx, &p);
		static struct sim_phase ph;
		sim_phase_reset(&ph);
		double t = ok_step(&s, &k3, &h200_cal, &p, &ph, 1);
		assert_true(t >= last_step);
		last_step = t;
		int64_t kb = 0;
		for (int i = 0; i < ph.n_rows; i++)
			if (ph.rows[i].op.kind == OP_KDA_DECODE)
				kb += op_bytes(&ph.rows[i].op);
		if (kda_bytes >= 0)
			assert_int_equal(kb, kda_bytes);
		kda_bytes = kb;
	}
	struct err e;
	assert_int_equal(sim_run(&s, &k3, &h200_cal, res, &e), 0);
	assert_true(res->fits && res->ttft_s > 0 && res->tpot_s > 0);
}

static double op_time(const struct hw *hw, const char *line, const struct cost_opts *o)
{
	struct op op;
	struct err e;
	if (opspec_parse_line(line, &op, &e) < 0)
		fail_msg("%s: %s", line, e.msg);
	struct op_cost c;
	sim_op_cost(hw, &op, o, &c);
	return c.time_s;
}

/* The cases issue 11 found (2026-12-01) on the calibrated h200: a 1 x 12 x 7168 GEMM cost 182 us
 * (the curve's efficiency at the true FLOPs divided the padded FLOPs); 8 x 24 x 512 cost more
 * than with M x 4 or N x 2; TPOT fell from batch 2 to 8. */
static void test_issue11_regressions(void **state)
{
	(void)state;
	double t = op_time(&h200_cal, "gemm m=1 n=12 k=7168 dtype=bf16", NULL);
	assert_true(t < 20e-6);
	double small = op_time(&h200_cal, "gemm m=8 n=24 k=512", NULL);
	assert_true(op_time(&h200_cal, "gemm m=32 n=24 k=512", NULL) >= small);
	assert_true(op_time(&h200_cal, "gemm m=8 n=48 k=512", NULL) >= small);
	/* FP8 activations run at the FP8 rate (DeepSeek-V3's recipe), BF16 ones at the BF16 rate */
	double f8 = op_time(&h200_cal, "gemm m=16384 n=7168 k=16384 dtype=fp8", NULL);
	double w8 = op_time(&h200_cal, "gemm m=16384 n=7168 k=16384 dtype=bf16 w_dtype=fp8", NULL);
	assert_true(f8 < 0.7 * w8);
	struct scenario s;
	load_default(&s);
	double last = 0;
	for (int64_t b = 1; b <= 256; b++) {
		s.batch = b;
		struct err e;
		assert_int_equal(sim_run(&s, &k3, &h200_cal, res, &e), 0);
		assert_true(res->tpot_s >= last);
		last = res->tpot_s;
	}
	/* the sustained clock is never faster than boost, and slower where compute-bound */
	struct cost_opts boost = {.clock = {.regime = HW_CLOCK_BOOST}}, sus = {.clock = {.regime = HW_CLOCK_SUSTAINED}};
	struct hw h = h200_cal;
	h.sustained_sm_clock_hz = 1.5e9;
	double tb = op_time(&h, "gemm m=8192 n=8192 k=8192", &boost), ts = op_time(&h, "gemm m=8192 n=8192 k=8192", &sus);
	assert_true(ts > 1.15 * tb && ts < 1.4 * tb); /* 0.9 (clock_bound_gemm) x 1980 / 1500 = 1.19 */
	assert_true(op_time(&h, "copy bytes=1073741824", &sus) < 1.01 * op_time(&h, "copy bytes=1073741824", &boost));
}

/* A clock given in MHz (issue 17: the slice validated at the clock it ran): parsed strictly,
 * bounded by the preset's boost, and costed as the physical model scales (compute with the clock,
 * HBM not). Before it, `--clock` took boost or sustained only: "1830" was rejected. */
static void test_clock_given(void **state)
{
	(void)state;
	struct hw_clock_sel c;
	char why[200];
	static const struct {
		const char *s;
		double hz;
	} ok[] = {{"1830", 1.83e9}, {"1830MHz", 1.83e9}, {"1830 MHz", 1.83e9}, {"1830.5mhz", 1.8305e9},
		  {"1.83e3", 1.83e9}, {"345", 3.45e8}};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_int_equal(hw_clock_sel_parse(ok[i].s, &c, why, sizeof why), 0);
		assert_true(fabs(c.given_hz - ok[i].hz) < 1);
		assert_string_equal(hw_clock_sel_kind(&c), "given");
	}
	assert_int_equal(hw_clock_sel_parse("sustained", &c, why, sizeof why), 0);
	assert_true(c.given_hz == 0 && c.regime == HW_CLOCK_SUSTAINED);
	assert_int_equal(hw_clock_sel_parse("boost", &c, why, sizeof why), 0);
	assert_true(c.given_hz == 0 && c.regime == HW_CLOCK_BOOST);
	static const char *const bad[] = {"", "turbo", "0", "-1830", "0MHz", "inf", "nan", "-inf", "1e400",
					  "0x700", "1830GHz", "1830MHzz", "18 30", "MHz", "1830Hz"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = (struct hw_clock_sel){.given_hz = 7};
		if (hw_clock_sel_parse(bad[i], &c, why, sizeof why) != -EINVAL)
			fail_msg("'%s' was accepted as a clock", bad[i]);
		assert_true(c.given_hz == 7); /* untouched */
		assert_true(why[0]);
	}
	/* bounds: the preset's boost and below */
	assert_int_equal(hw_clock_sel_parse("1990", &c, why, sizeof why), 0);
	assert_int_equal(hw_clock_sel_check(&h200_cal, &c, why, sizeof why), -ERANGE);
	assert_non_null(strstr(why, "the preset's boost clock is 1980 MHz"));
	assert_int_equal(hw_clock_sel_parse("1980", &c, why, sizeof why), 0);
	assert_int_equal(hw_clock_sel_check(&h200_cal, &c, why, sizeof why), 0);
	assert_true(hw_clock_sel_hz(&h200_cal, &c) == 1.98e9);
	char arg[32];
	assert_string_equal(hw_clock_sel_arg(&c, arg, sizeof arg), "1980");

	/* 1830 against boost: a compute-bound GEMM slower by about the clocks' ratio, an HBM-bound
	 * copy and a KDA decode unchanged; on the calibrated preset, whose dense GEMMs are bound by the
	 * SM clock for 90 % of their boost time (clock_bound_gemm, a roofline in the clock), the GEMM
	 * keeps its boost time down to 0.9 x boost and is 0.9 x the ratio slower below */
	struct cost_opts boost = {0}, at = {.clock = {.given_hz = 1.83e9}}, low = {.clock = {.given_hz = 1.5e9}};
	const double ratio = 1980.0 / 1830.0, ratio_low = 1980.0 / 1500.0;
	assert_true(sim_clock_bound(&h200_cal, HW_POWER_GEMM) == 0.9);
	double g_b = op_time(&h200_cal, "gemm m=8192 n=8192 k=8192", &boost),
	       g_a = op_time(&h200_cal, "gemm m=8192 n=8192 k=8192", &at),
	       g_l = op_time(&h200_cal, "gemm m=8192 n=8192 k=8192", &low);
	assert_true(g_a == g_b);
	assert_true(g_l > g_b * 0.9 * (1 + 0.9 * (ratio_low - 1)) && g_l <= g_b * 0.9 * ratio_low * 1.001);
	double c_b = op_time(&h200_cal, "copy bytes=1073741824", &boost),
	       c_a = op_time(&h200_cal, "copy bytes=1073741824", &at);
	assert_true(c_a >= c_b && c_a < 1.005 * c_b);
	/* the same on the datasheet preset (no calibration tables) */
	g_b = op_time(&h200, "gemm m=8192 n=8192 k=8192", &boost);
	g_a = op_time(&h200, "gemm m=8192 n=8192 k=8192", &at);
	assert_true(g_a > g_b * (1 + 0.9 * (ratio - 1)) && g_a <= g_b * ratio * 1.001);
	/* a given clock equal to boost is boost, to the bit */
	struct cost_opts same = {.clock = {.given_hz = h200_cal.sm_clock_hz}};
	assert_true(op_time(&h200_cal, "gemm m=64 n=7168 k=7168", &same) ==
		    op_time(&h200_cal, "gemm m=64 n=7168 k=7168", &boost));

	/* never faster at a lower clock: every op of a set, over a ladder of clocks */
	static const char *const ops[] = {
	    "gemm m=1 n=7168 k=7168",
	    "gemm m=64 n=2048 k=7168 dtype=fp8",
	    "gemm m=16384 n=7168 k=16384",
	    "grouped_gemm m=4096 n=4096 k=7168 groups=896 w_dtype=mxfp4",
	    "copy bytes=4096",
	    "copy bytes=1073741824",
	    "kda_decode b=64 h=96 k=128 v=128 state=fp32",
	    "kda_chunk b=1 t=4096 h=96 k=128 v=128 state=fp32 chunk=16",
	    "mla_decode b=1 heads=96 ctx=8192 kv=bf16 t=1",
	    "mla_decode b=64 heads=96 ctx=65536 kv=fp8 t=1",
	    "mla_prefill b=1 t=4096 ctx=0 heads=96 dqk=192 dv=128 kv=bf16",
	    "short_conv tokens=1 channels=36864 taps=4",
	    "short_conv tokens=16384 channels=36864 taps=4",
	    "attnres tokens=64 dim=7168 sources=9",
	    "route tokens=256 experts=896 top_k=16",
	    "combine tokens=256 width=3584 top_k=16",
	    "quant tokens=1 width=3584",
	    "quant tokens=16384 width=3584 group=128",
	    "elementwise m=4096 n=7168 in=1 out=1",
	    "allreduce bytes=16777216 ranks=8",
	};
	static const double mhz[] = {1980, 1965, 1935, 1830, 1700, 1500, 1200, 900, 345};
	for (int hp = 0; hp < 2; hp++) {
		const struct hw *hw = hp ? &h200 : &h200_cal;
		for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
			double last = 0;
			for (size_t k = 0; k < sizeof mhz / sizeof mhz[0]; k++) {
				struct cost_opts o = {.clock = {.given_hz = mhz[k] * 1e6}};
				double t = op_time(hw, ops[i], &o);
				if (!(t >= last * (1 - 1e-12)))
					fail_msg("%s on %s: %.6g s at %.0f MHz, %.6g s at the clock above", ops[i], hw->name,
						 t, mhz[k], last);
				if (k == 0 && t != op_time(hw, ops[i], &boost))
					fail_msg("%s on %s: the boost clock given in MHz differs from boost", ops[i], hw->name);
				last = t;
			}
		}
	}

	/* a scenario's options.clock: a number or "NMHz"; errors at file:line:col, the bound checked
	 * against the preset where it is known (sim_check) */
	struct scenario s;
	struct err e;
	const char *y1 = "name: t\noptions:\n  clock: 1830\n";
	assert_int_equal(scenario_load_yaml(&s, "t.yaml", y1, strlen(y1), &e), 0);
	assert_true(s.clock.given_hz == 1.83e9);
	const char *y2 = "name: t\noptions:\n  clock: \"1830MHz\"\n";
	assert_int_equal(scenario_load_yaml(&s, "t.yaml", y2, strlen(y2), &e), 0);
	assert_true(s.clock.given_hz == 1.83e9);
	assert_int_equal(sim_check(&s, &k3, &h200_cal, &e), 0);
	const char *y3 = "name: t\noptions:\n  clock: -5\n";
	assert_true(scenario_load_yaml(&s, "t.yaml", y3, strlen(y3), &e) < 0);
	assert_true(e.line == 3 && e.col == 10);
	assert_non_null(strstr(e.msg, "positive"));
	const char *y4 = "name: t\noptions:\n  clock: 2500MHz\n";
	assert_int_equal(scenario_load_yaml(&s, "t.yaml", y4, strlen(y4), &e), 0);
	assert_true(sim_check(&s, &k3, &h200_cal, &e) < 0);
	assert_true(e.line == 3 && e.col == 10);
	assert_non_null(strstr(e.msg, "the preset's boost clock is 1980 MHz"));
	/* a scenario at 1830 is slower than at boost, never faster */
	load_default(&s);
	s.clock = (struct hw_clock_sel){.regime = HW_CLOCK_BOOST};
	assert_int_equal(sim_run(&s, &k3, &h200_cal, res, &e), 0);
	double tpot_b = res->tpot_s, ttft_b = res->ttft_s;
	s.clock = (struct hw_clock_sel){.given_hz = 1.83e9};
	assert_int_equal(sim_run(&s, &k3, &h200_cal, res, &e), 0);
	assert_true(res->tpot_s >= tpot_b && res->ttft_s > ttft_b && res->ttft_s < ttft_b * ratio * 1.001);
}

/* `auto` overlap decided at one chunk let a small last chunk turn two-batch overlap off for the
 * whole prompt: TTFT fell 10 % from 8981 to 9645 tokens (k3sim check --seed 3 --clock sustained). */
static void test_auto_overlap_prompt_monotone(void **state)
{
	(void)state;
	struct scenario s;
	load_default(&s);
	s.batch = 738;
	s.output_tokens = 15590;
	s.clock = (struct hw_clock_sel){.regime = HW_CLOCK_SUSTAINED};
	double last = 0;
	for (int64_t p = 8192; p <= 12288; p += 283) {
		s.prompt_tokens = p;
		struct err e;
		assert_int_equal(sim_run(&s, &k3, &h200_cal, res, &e), 0);
		assert_true(res->ttft_s >= last);
		last = res->ttft_s;
	}
}

/* `k3sim check` on every shipped preset: no violation; and it finds the ones it is for. */
static void test_props_presets(void **state)
{
	(void)state;
	struct hw *hw = malloc(sizeof *hw);
	struct sim_props_report *r = malloc(sizeof *r);
	assert_non_null(hw);
	assert_non_null(r);
	struct err e;
	for (const char *const *p = hw_preset_names(); *p; p++) {
		assert_int_equal(hw_load(hw, *p, &e), 0);
		struct sim_props_opts o = {.seed = 7, .ops = 20000, .scenarios = 200, .tolerance = 0.05, .hw_name = *p};
		assert_int_equal(sim_props_check(hw, &o, r, &e), 0);
		if (r->violations)
			fail_msg("%s: %lld violations, e.g. %s / %s", *p, (long long)r->violations, r->v[0].before,
				 r->v[0].after);
		assert_true(r->ops_checked > 19000 && r->scenarios_checked > 100);
		if (hw->sustained_sm_clock_hz <= 0)
			continue; /* sustained falls back to the boost clock (hw_clock_hz): checked above */
		o.clock = (struct hw_clock_sel){.regime = HW_CLOCK_SUSTAINED};
		assert_int_equal(sim_props_check(hw, &o, r, &e), 0);
		assert_int_equal(r->violations, 0);
	}
	/* a GEMM table whose measured times fall as the modeled time grows is caught, with the
	 * commands that show it; the same seed finds the same */
	*hw = h200;
	hw->n_tables = 1;
	hw->tables[0] = (struct hw_table){.cls = HW_CLASS_GEMM, .dtype = DT_BF16, .key = HW_KEY_MODEL_S, .n = 2,
					  .x = {1e-5, 1e-4}, .eff = {0.2, 4.0}}; /* 50 us, then 25 us */
	struct sim_props_opts o = {.seed = 3, .ops = 20000, .scenarios = 0, .tolerance = 0.05, .hw_name = "x"};
	assert_int_equal(sim_props_check(hw, &o, r, &e), 0);
	assert_true(r->count[SIM_PROPS_OP_GROWTH] > 0 && r->n > 0);
	assert_non_null(strstr(r->v[0].before, "k3sim op gemm"));
	assert_non_null(strstr(r->v[0].after, "--hw x"));
	int64_t found = r->violations;
	assert_int_equal(sim_props_check(hw, &o, r, &e), 0);
	assert_int_equal(r->violations, found);
	free(hw);
	free(r);
}

/* Tensor-parallel MoE (parallel.moe_tp): weights per GPU and op shapes follow the one statement of
 * the split (sim_moe_split); the DP-attention gather follows SGLang's padding modes; expert FLOPs
 * per GPU are the mean (EP's busiest rank carries more); TTFT and TPOT never fall as the prompt or
 * the batch grows. */
static const char *const r1_yaml = "model: deepseek-v3\nhw: h200\ngpus: 8\n"
				   "dtypes: {activations: fp8, expert_activations: fp8, dispatch: fp8}\n"
				   "engine: {overlap: none}\nworkload: {batch: 64, prompt_tokens: 4096, output_tokens: 256}\n";

static void load_r1(struct scenario *s, const char *parallel)
{
	char text[1024];
	snprintf(text, sizeof text, "%sparallel: %s\n", r1_yaml, parallel);
	struct err e;
	if (scenario_load_yaml(s, "r1.yaml", text, strlen(text), &e) < 0)
		fail_msg("%s: %s", parallel, e.msg);
}

static const struct sim_op_row *row_named(const struct sim_phase *ph, const char *name)
{
	for (int i = 0; i < ph->n_rows; i++)
		if (strcmp(ph->rows[i].op.name, name) == 0)
			return &ph->rows[i];
	return NULL;
}

/* One statement of how the parallel modes split each op (model/ops.h: each role's split, and
 * op_state_split for what a request keeps): the weights a decode step's ops read on one GPU (every
 * expert touched), its KDA state and its MLA cache equal what sim_hbm holds on that GPU, for
 * layouts of TP, DP, EP, CP, a tensor-parallel MoE and the reference path's per-head cache. The
 * weights no GEMM reads (norm gains, biases, ShortConv taps, the embedding) are held, not read. */
static void test_split_time_matches_memory(void **state)
{
	(void)state;
	static const struct {
		const char *model, *parallel, *path;
		int64_t gpus, batch;
	} cases[] = {
		{"kimi-k3", "{tp: 1, dp: 1, ep: 1}", "production", 1, 4096},
		{"kimi-k3", "{tp: 8, dp: 2, ep: 16}", "production", 16, 8192},
		{"kimi-k3", "{tp: 4, dp: 2, cp: 2, ep: 16}", "production", 16, 8192},
		{"kimi-k3", "{tp: 2, dp: 4, ep: 8}", "reference", 8, 8192},
		{"kimi-k3", "{tp: 8, dp: 1, cp: 2, ep: 16}", "reference", 16, 4096},
		{"k3-dsa", "{tp: 8, dp: 1, cp: 2, ep: 16}", "production", 16, 4096},
		{"k3-full-mla", "{tp: 4, dp: 4, ep: 16}", "production", 16, 8192},
		{"deepseek-v3", "{tp: 1, dp: 8, moe_tp: 8}", "production", 8, 8192},
		{"deepseek-v3", "{tp: 8, dp: 1, moe_tp: 8}", "production", 8, 8192},
		{"deepseek-v3", "{tp: 2, dp: 4, ep: 8}", "production", 8, 8192},
		{"kimi-linear", "{tp: 4, dp: 2, ep: 8}", "reference", 8, 8192},
	};
	static struct sim_phase ph;
	const int64_t ctx = 4096;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "model: %s\nhw: h200\ngpus: %lld\nparallel: %s\nengine: {overlap: none, path: %s}\n"
			 "workload: {batch: %lld, prompt_tokens: 4096, output_tokens: 256}\n",
			 cases[c].model, (long long)cases[c].gpus, cases[c].parallel, cases[c].path,
			 (long long)cases[c].batch);
		struct scenario s;
		struct model m;
		struct err e;
		if (scenario_load_yaml(&s, "split.yaml", text, strlen(text), &e) < 0)
			fail_msg("%s %s: %s", cases[c].model, cases[c].parallel, e.msg);
		assert_int_equal(model_load(&m, s.model, &e), 0);
		struct phase p;
		sim_phase_init(&s, PHASE_DECODE, s.batch, 1, ctx, &p);
		sim_phase_reset(&ph);
		ok_step(&s, &m, &h200, &p, &ph, 1);
		int64_t weights = 0, kda = 0, mla = 0, dsa = 0;
		for (int i = 0; i < ph.n_rows; i++) {
			const struct op *o = &ph.rows[i].op;
			if (o->kind == OP_GEMM || o->kind == OP_GROUPED_GEMM)
				weights += o->bytes_weight * o->layers;
			if (o->kind == OP_KDA_DECODE)
				kda += o->bytes_state_read * o->layers;
			if (o->kind == OP_MLA_DECODE)
				mla += o->bytes_kv_read * o->layers;
			if (o->kind == OP_DSA_DECODE) /* the indexer scans every cached key */
				dsa += o->b * (o->ctx + o->t) * o->index_bytes_per_token * o->layers;
		}

		/* the decode token is in the cache it attends over: one more per CP rank */
		struct sim_hbm hb;
		sim_hbm(&s, &m, &h200, s.batch, ctx + s.cp, 0, &hb);
		struct model_weight_split ws;
		model_weight_split(&m, &ws);
		int64_t held = (ws.held_tp + s.tp - 1) / s.tp + ws.held_replicated + (ws.held_vocab + s.tp - 1) / s.tp;
		/* DSA's sparse attention gathers only the top-k latents: its indexer's cache instead */
		int64_t cache = dsa ? dsa : mla, cache_held = dsa ? hb.dsa_index : hb.mla_kv;
		if (weights != hb.weights - held || kda != hb.kda_state + hb.conv_state || cache != cache_held)
			fail_msg("%s %s %s: weights read %lld vs held %lld - %lld; KDA state %lld vs %lld; cache "
				 "%lld vs %lld",
				 cases[c].model, cases[c].parallel, cases[c].path, (long long)weights,
				 (long long)hb.weights, (long long)held, (long long)kda,
				 (long long)(hb.kda_state + hb.conv_state), (long long)cache, (long long)cache_held);
		assert_true(weights > 0 && cache > 0);
	}
}

static void test_moe_tp(void **state)
{
	(void)state;
	struct model r1;
	struct err e;
	assert_int_equal(model_load(&r1, "deepseek-v3", &e), 0);
	struct scenario ep, sg, vl;
	load_r1(&ep, "{tp: 1, dp: 8, ep: 8}");
	load_r1(&sg, "{tp: 1, dp: 8, moe_tp: 8}");
	load_r1(&vl, "{tp: 8, dp: 1, moe_tp: 8}");
	assert_int_equal(sg.ep, 1);
	for (const struct scenario *s = &ep; s; s = s == &ep ? &sg : s == &sg ? &vl : NULL)
		assert_int_equal(sim_check(s, &r1, &h200_cal, &e), 0);

	/* weights: every expert's 1/8 slice holds as many bytes as 1/8 of the experts; the MoE
	 * block's shared experts and router split 8 ways instead of tp 1 */
	struct model_weight_split ws;
	model_weight_split(&r1, &ws);
	struct sim_hbm a, b, c;
	sim_hbm(&ep, &r1, &h200_cal, 0, 0, 0, &a);
	sim_hbm(&sg, &r1, &h200_cal, 0, 0, 0, &b);
	sim_hbm(&vl, &r1, &h200_cal, 0, 0, 0, &c);
	assert_true(ws.moe_sharded > 0 && ws.moe_sharded < ws.tp_sharded);
	assert_int_equal(a.weights - b.weights, ws.moe_sharded - (ws.moe_sharded + 7) / 8);
	struct model_inventory inv;
	model_inventory(&r1, &inv);
	int64_t experts_per_gpu = (int64_t)inv.moe_layers * ((256 * ws.expert_bytes + 7) / 8);
	assert_int_equal(b.weights, (ws.tp_sharded - ws.moe_sharded) + (ws.moe_sharded + 7) / 8 + ws.replicated +
					    ws.vocab + experts_per_gpu);

	/* op shapes: a prefill step of one 1024-token chunk per DP group */
	static struct sim_phase ph;
	struct phase p;
	sim_phase_init(&sg, PHASE_PREFILL, 8, 1024, 0, &p);
	sim_phase_reset(&ph);
	assert_true(ok_step(&sg, &r1, &h200_cal, &p, &ph, 1) > 0);
	const struct sim_op_row *gu = row_named(&ph, "moe.experts_gate_up"), *dn = row_named(&ph, "moe.experts_down");
	assert_non_null(gu);
	assert_non_null(dn);
	assert_int_equal(gu->op.n, 2 * r1.moe.intermediate / 8);
	assert_int_equal(dn->op.k, r1.moe.intermediate / 8);
	assert_int_equal(gu->op.groups, r1.moe.experts);
	assert_int_equal(gu->op.m, 8 * 1024 * r1.moe.top_k); /* all eight groups' tokens */
	const struct sim_op_row *g = row_named(&ph, "moe.dp_gather"), *rd = row_named(&ph, "moe.dp_reduce");
	assert_non_null(g);
	assert_non_null(rd);
	assert_int_equal(g->op.kind, OP_ALLREDUCE); /* prefill: SUM_LEN */
	assert_int_equal(g->op.comm_bytes, 8 * 1024 * r1.hidden * 2);
	assert_int_equal(rd->op.ranks, 8);
	assert_null(row_named(&ph, "moe.dispatch"));
	assert_null(row_named(&ph, "tp.ffn_allreduce"));
	const struct sim_op_row *sh = row_named(&ph, "moe.shared_gate_up");
	assert_non_null(sh);
	assert_int_equal(sh->op.n, 2 * r1.moe.shared_intermediate / 8);
	assert_int_equal(sh->op.m, 8 * 1024);

	/* decode, balanced: MAX_LEN, all-gather and reduce-scatter */
	sim_phase_init(&sg, PHASE_DECODE, 64, 1, 4096, &p);
	sim_phase_reset(&ph);
	assert_true(ok_step(&sg, &r1, &h200_cal, &p, &ph, 1) > 0);
	assert_int_equal(row_named(&ph, "moe.dp_gather")->op.kind, OP_ALLGATHER);
	assert_non_null(row_named(&ph, "moe.dp_reduce_scatter"));

	/* vLLM's TP8: no gather, the FFN all-reduce closes the MoE */
	sim_phase_init(&vl, PHASE_DECODE, 64, 1, 4096, &p);
	sim_phase_reset(&ph);
	assert_true(ok_step(&vl, &r1, &h200_cal, &p, &ph, 1) > 0);
	assert_null(row_named(&ph, "moe.dp_gather"));
	assert_non_null(row_named(&ph, "tp.ffn_allreduce"));
	assert_int_equal(row_named(&ph, "moe.experts_gate_up")->op.m, 64 * r1.moe.top_k);

	/* the expert FLOPs of a TP-MoE GPU are the mean; EP's busiest rank does at least as much */
	for (int64_t batch = 8; batch <= 1024; batch *= 4) {
		double f[2];
		const struct scenario *two[2] = {&sg, &ep};
		for (int k = 0; k < 2; k++) {
			sim_phase_init(two[k], PHASE_DECODE, batch, 1, 4096, &p);
			sim_phase_reset(&ph);
			assert_true(ok_step(two[k], &r1, &h200_cal, &p, &ph, 1) > 0);
			f[k] = row_named(&ph, "moe.experts_gate_up")->op.flops;
		}
		double mean = (double)batch * (double)r1.moe.top_k * 2.0 * (double)(2 * r1.moe.intermediate) *
			      (double)r1.hidden / 8;
		assert_true(fabs(f[0] - mean) <= 1e-9 * mean);
		assert_true(f[1] >= f[0]);
	}

	/* TTFT and TPOT never fall as the prompt or the batch grows (k3sim check's property) */
	for (int which = 0; which < 2; which++) {
		struct scenario s = which ? vl : sg;
		double last_ttft = 0, last_tpot = 0;
		for (int64_t prompt = 128; prompt <= 65536; prompt *= 4) {
			s.prompt_tokens = prompt;
			s.prefill_chunk = prompt < 8192 ? prompt : 8192;
			assert_int_equal(sim_run(&s, &r1, &h200_cal, res, &e), 0);
			assert_true(res->ttft_s >= last_ttft * 0.95);
			last_ttft = res->ttft_s;
		}
		s.prompt_tokens = 4096;
		s.prefill_chunk = 4096;
		for (int64_t batch = 1; batch <= 1024; batch *= 2) {
			s.batch = batch;
			assert_int_equal(sim_run(&s, &r1, &h200_cal, res, &e), 0);
			assert_true(res->tpot_s >= last_tpot * 0.95);
			last_tpot = res->tpot_s;
		}
	}

	/* bad layouts */
	struct scenario bad;
	const char *const texts[] = {
		"model: deepseek-v3\ngpus: 8\nparallel: {tp: 1, dp: 8, ep: 8, moe_tp: 8}\n",
		"model: deepseek-v3\ngpus: 8\nparallel: {tp: 1, dp: 8, moe_tp: 3}\n",
		"model: deepseek-v3\ngpus: 8\nparallel: {tp: 2, dp: 4, moe_tp: 3}\n",
		"model: deepseek-v3\ngpus: 8\nparallel: {tp: 1, dp: 4, cp: 2, moe_tp: 4}\n",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		assert_true(scenario_load_yaml(&bad, "bad.yaml", texts[i], strlen(texts[i]), &e) < 0);
		assert_non_null(strstr(e.msg, "moe_tp"));
		assert_int_equal(e.line, 3);
	}
	/* 2048 is not a multiple of 3 x ... : moe_tp 6 on tp 2 x dp 3 does not divide it */
	const char *odd = "model: deepseek-v3\ngpus: 6\nparallel: {tp: 2, dp: 3, moe_tp: 6}\n";
	assert_int_equal(scenario_load_yaml(&bad, "odd.yaml", odd, strlen(odd), &e), 0);
	assert_true(sim_check(&bad, &r1, &h200_cal, &e) < 0);
	assert_non_null(strstr(e.msg, "intermediate"));
}

/* engine.step_overhead_us: every step waits for the host: TTFT gains it once per chunk, TPOT once
 * per decode step. */
static void test_step_overhead(void **state)
{
	(void)state;
	struct model r1;
	struct err e;
	assert_int_equal(model_load(&r1, "deepseek-v3", &e), 0);
	struct scenario s;
	load_r1(&s, "{tp: 8, dp: 1, moe_tp: 8}");
	s.prefill_chunk = 1024;
	assert_int_equal(sim_run(&s, &r1, &h200_cal, res, &e), 0);
	double ttft = res->ttft_s, tpot = res->tpot_s;
	int64_t chunks = res->prefill_chunks;
	s.step_overhead_s = 2e-3;
	assert_int_equal(sim_run(&s, &r1, &h200_cal, res, &e), 0);
	assert_true(fabs(res->ttft_s - ttft - (double)chunks * 2e-3) < 1e-9);
	assert_true(fabs(res->tpot_s - tpot - 2e-3) < 1e-9);
	const char *neg = "model: deepseek-v3\ngpus: 8\nengine: {step_overhead_us: -5}\n";
	assert_true(scenario_load_yaml(&s, "neg.yaml", neg, strlen(neg), &e) < 0);
	assert_non_null(strstr(e.msg, "step_overhead_us"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_scenarios),
		cmocka_unit_test(test_moe_tp),
		cmocka_unit_test(test_step_overhead),
		cmocka_unit_test(test_monotonic_in_context),
		cmocka_unit_test(test_tp_halves_attention_weights),
		cmocka_unit_test(test_state_vs_cache),
		cmocka_unit_test(test_kda_chain),
		cmocka_unit_test(test_presets_without_kda_rules),
		cmocka_unit_test(test_kda_overlap),
		cmocka_unit_test(test_kda_pair),
		cmocka_unit_test(test_expert_chunks),
		cmocka_unit_test(test_gemm_quantization),
		cmocka_unit_test(test_gemm_store),
		cmocka_unit_test(test_kernel_floor),
		cmocka_unit_test(test_bad_scenarios),
		cmocka_unit_test(test_hw_presets),
		cmocka_unit_test(test_properties_calibrated),
		cmocka_unit_test(test_hw_collectives),
		cmocka_unit_test(test_coll_rank_bounds),
		cmocka_unit_test(test_attention_prefill_table),
		cmocka_unit_test(test_own_kind_tables),
		cmocka_unit_test(test_own_kinds_physical),
		cmocka_unit_test(test_quant_spec),
		cmocka_unit_test(test_ep_bytes),
		cmocka_unit_test(test_issue11_regressions),
		cmocka_unit_test(test_props_presets),
		cmocka_unit_test(test_auto_overlap_prompt_monotone),
		cmocka_unit_test(test_clock_given),
		cmocka_unit_test(test_split_time_matches_memory),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
