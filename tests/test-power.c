/* sim/power: the power-limit clock controller on its own (never faster than boost nor slower than
 * the floor, an op after an idle gap never slower than after a compute-bound one, the same work
 * run longer never faster per op), the power regime in a step (equal to boost for a short cool
 * step, between boost and the floor clock, the time per prefill token never falling as the prompt
 * grows where it does not at boost), and the preset's power keys (bad values rejected with their
 * line and column); the power classes' FLOP energies (keys, classes, fallback to the global one),
 * a mix's one clock, and graph decode steps at their steady state. */
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

#include "sim/cost.h"
#include "sim/opspec.h"
#include "sim/power.h"
#include "sim/step.h"

static struct hw h200;          /* the shipped preset: the window limiter */
static struct hw h200_filtered; /* the same without its window: the filtered-power controller */
static struct model k3;

static int setup(void **state)
{
	(void)state;
	struct err e;
	if (hw_load(&h200, "h200", &e) < 0 || model_load(&k3, "kimi-k3", &e) < 0)
		return -1;
	h200_filtered = h200;
	h200_filtered.power_window_s = 0;
	return 0;
}

/* A deterministic stream of ops: compute-bound, memory-bound and between, 10 us to 200 ms. */
static struct sim_power_op random_op(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	double u = (double)(*seed >> 11) / 9007199254740992.0;
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	double v = (double)(*seed >> 11) / 9007199254740992.0;
	double t = 1e-5 * pow(2e4, u);
	double fb = h200.sm_clock_hz, ff = h200.power_min_sm_clock_hz;
	/* a compute share v (at 900 TFLOP/s: that part scales with 1 / clock), HBM the rest */
	struct sim_power_op op = {.boost_s = t, .floor_s = t * ((1 - v) + v * fb / ff), .flops = v * t * 900e12,
				  .hbm_bytes = (1 - v) * t * h200.hbm_bw_bytes_per_s * 0.8};
	return op;
}

static void test_bounds(void **state)
{
	(void)state;
	assert_true(sim_power_known(&h200));
	uint64_t seed = 17;
	struct sim_power_state st;
	sim_power_idle(&h200, &st);
	int slowed = 0;
	for (int i = 0; i < 20000; i++) {
		struct sim_power_op op = random_op(&seed);
		double f;
		double t = sim_power_run(&h200, &st, &op, &f);
		assert_true(t >= op.boost_s * (1 - 1e-12));
		assert_true(t <= op.floor_s * (1 + 1e-12));
		assert_true(f <= h200.sm_clock_hz && f >= h200.power_min_sm_clock_hz * (1 - 1e-12));
		slowed += t > op.boost_s * 1.001;
		if (i % 97 == 0)
			sim_power_rest(&h200, &st, 1e-3 * (double)(i % 50));
	}
	assert_true(slowed > 100); /* the limit binds somewhere: the test can fail */
}

static void test_idle_gap_never_slower(void **state)
{
	(void)state;
	uint64_t seed = 5;
	/* a compute-bound op long enough to reach the limit */
	struct sim_power_op heavy = {.boost_s = 0.05, .floor_s = 0.05 * h200.sm_clock_hz / h200.power_min_sm_clock_hz,
				     .flops = 0.05 * 900e12, .hbm_bytes = 0};
	for (int i = 0; i < 2000; i++) {
		struct sim_power_op op = random_op(&seed);
		struct sim_power_state hot, rested;
		sim_power_idle(&h200, &hot);
		sim_power_run(&h200, &hot, &heavy, NULL);
		rested = hot;
		sim_power_rest(&h200, &rested, 1e-3 * (1 + i % 200));
		struct sim_power_state idle;
		sim_power_idle(&h200, &idle);
		double t_hot = sim_power_run(&h200, &hot, &op, NULL);
		double t_rested = sim_power_run(&h200, &rested, &op, NULL);
		double t_idle = sim_power_run(&h200, &idle, &op, NULL);
		assert_true(t_rested <= t_hot * (1 + 1e-12));
		assert_true(t_idle <= t_rested * (1 + 1e-12));
	}
	/* the heavy op itself: after the heavy op it runs slower than from idle */
	struct sim_power_state a, b;
	sim_power_idle(&h200, &a);
	sim_power_idle(&h200, &b);
	sim_power_run(&h200, &b, &heavy, NULL);
	assert_true(sim_power_run(&h200, &b, &heavy, NULL) > sim_power_run(&h200, &a, &heavy, NULL) * 1.01);
}

static const char one_gpu[] = "model: kimi-k3\nhw: h200\ngpus: 8\nparallel: {tp: 1, dp: 8, ep: 8}\n"
			      "workload: {batch: 1, prompt_tokens: 65536, output_tokens: 1, prefill_chunk: 65536}\n";

static const struct hw *step_hw_of = &h200; /* the preset step_s runs */

static double step_s(const struct scenario *s, enum phase_kind kind, int64_t batch, int64_t tokens, int64_t ctx)
{
	struct phase p;
	sim_phase_init(s, kind, batch, tokens, ctx, &p);
	double t = -1;
	assert_int_equal(sim_step(s, &k3, step_hw_of, &p, NULL, 1, &t), 0);
	assert_true(t > 0);
	return t;
}

static void check_step(void);

/* check under both limiters: the filtered-power controller, then the delayed window limiter
 * (step_hw_of left at h200, the default). */
static void both_limiters(void (*check)(void))
{
	step_hw_of = &h200_filtered;
	check();
	step_hw_of = &h200;
	check();
}

/* The step properties under both limiters. */
static void test_step(void **state)
{
	(void)state;
	both_limiters(check_step);
}

static void check_step(void)
{
	struct scenario boost, power, floor_clk;
	struct err e;
	assert_int_equal(scenario_load_yaml(&boost, "t.yaml", one_gpu, strlen(one_gpu), &e), 0);
	boost.clock = (struct hw_clock_sel){.regime = HW_CLOCK_BOOST};
	power = floor_clk = boost;
	power.clock = (struct hw_clock_sel){.regime = HW_CLOCK_POWER};
	floor_clk.clock = (struct hw_clock_sel){.given_hz = h200.power_min_sm_clock_hz};
	/* a short, cool step: boost (to the rounding of summing the same ops) */
	double d_b = step_s(&boost, PHASE_DECODE, 1, 1, 4096), d_p = step_s(&power, PHASE_DECODE, 1, 1, 4096);
	assert_true(fabs(d_p / d_b - 1) < 1e-12);
	/* prefill: between boost and the floor clock; from 4K tokens on (where the time per token
	 * at boost no longer falls: GEMMs at full efficiency, attention growing) the time per token
	 * never falls as the prompt grows */
	double last = 0;
	bool slowed = false;
	for (int64_t t = 1024; t <= 65536; t *= 2) {
		double b = step_s(&boost, PHASE_PREFILL, 1, t, 0), pw = step_s(&power, PHASE_PREFILL, 1, t, 0);
		double fl = step_s(&floor_clk, PHASE_PREFILL, 1, t, 0);
		assert_true(pw >= b * (1 - 1e-12));
		assert_true(pw <= fl * (1 + 1e-9));
		if (t > 4096)
			assert_true(pw / (double)t >= last * (1 - 1e-9));
		last = pw / (double)t;
		slowed = slowed || pw > b * 1.01;
	}
	assert_true(slowed);
}

/* The same work run longer never runs faster per op: n copies of an op back to back from idle,
 * the mean time per copy never falls as n grows (what makes a prefill's time per token not
 * fall as its prompt grows, wherever it does not at boost). */
static void test_longer_never_faster(void **state)
{
	(void)state;
	uint64_t seed = 99;
	for (int k = 0; k < 200; k++) {
		struct sim_power_op op = random_op(&seed);
		double last = 0;
		for (int n = 1; n <= 256; n *= 2) {
			struct sim_power_state st;
			sim_power_idle(&h200, &st);
			double sum = 0;
			for (int i = 0; i < n; i++)
				sum += sim_power_run(&h200, &st, &op, NULL);
			assert_true(sum / n >= last * (1 - 1e-12));
			last = sum / n;
		}
	}
}

static const char dev_head[] =
	"name: t\ncalibrated: false\n"
	"device:\n  sms: 132\n  sm_clock_mhz: 1980\n  l2_mib: 60\n  hbm_mib: 1000\n  hbm_gb_per_s: 4800\n"
	"  vector_tflops: 60\n  launch_latency_us: 2\n  tensor_tflops: {bf16: 989}\n";
static const char dev_tail[] =
	"interconnect: {domain_gpus: 8, nvlink_gb_per_s: 450, nvlink_latency_us: 3, nic_gb_per_s: 50,\n"
	"               nic_latency_us: 8}\n"
	"efficiency:\n  gemm: {max: 0.8, half_gflop: 0.02}\n  memory: {max: 0.9, half_mib: 2}\n"
	"  comm: {max: 0.8, half_mib: 1}\n"
	"kernels: {gemm_tile_m: 128, gemm_tile_n: 128, kda_chunk_step_cycles: 3000, reserved_gib: 4}\n";

/* Loads the preset with these power lines; returns the error's line (0: loaded). */
/* hw's device section written as a preset (with dev_tail's sections), for reading back: the text
 * (free it) and its length in *len. */
static char *written_back(const struct hw *hw, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	assert_non_null(f);
	fprintf(f, "name: t\ncalibrated: false\ndevice:\n");
	assert_int_equal(hw_write_section(f, hw, "device"), 0);
	fprintf(f, "%s", dev_tail);
	fclose(f);
	return buf;
}

static int load_power(const char *lines, const char *want)
{
	char y[2048];
	snprintf(y, sizeof y, "%s%s%s", dev_head, lines, dev_tail);
	struct hw hw;
	struct err e;
	int rc = hw_load_yaml(&hw, "x.yaml", y, strlen(y), &e);
	if (rc == 0) {
		assert_null(want);
		return 0;
	}
	if (!want || !strstr(e.msg, want))
		fail_msg("%s (wanted '%s')", e.msg, want ? want : "");
	assert_true(e.col > 0);
	return e.line;
}

static void test_preset_keys(void **state)
{
	(void)state;
	const char *ok = "  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n  power_byte_pj: 80\n"
			 "  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n";
	assert_int_equal(load_power(ok, NULL), 0);
	assert_int_equal(load_power("", NULL), 0); /* none: no model */
	/* line 12 is the first power key (after the 11 lines of the head) */
	assert_int_equal(load_power("  power_limit_w: 700\n", "needs 'power_tau_ms'"), 4);
	/* the idle draw and either energy may be left out (0) */
	assert_int_equal(load_power("  power_limit_w: 700\n  power_flop_pj: 1.4\n  power_tau_ms: 10\n"
				    "  power_min_sm_clock_mhz: 1395\n",
				    NULL),
			 0);
	assert_int_equal(load_power("  power_limit_w: 100\n  power_idle_w: 125\n  power_flop_pj: 1.4\n"
				    "  power_byte_pj: 20\n  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n",
				    "must exceed power_idle_w"),
			 12);
	assert_int_equal(load_power("  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n"
				    "  power_byte_pj: 20\n  power_tau_ms: 0\n  power_min_sm_clock_mhz: 1395\n",
				    "power_tau_ms must be positive"),
			 16);
	assert_int_equal(load_power("  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n"
				    "  power_byte_pj: 20\n  power_tau_ms: 10\n  power_min_sm_clock_mhz: 2000\n",
				    "power_min_sm_clock_mhz must be positive"),
			 17);
	assert_int_equal(load_power("  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: -1\n"
				    "  power_byte_pj: 20\n  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n",
				    "must not be negative"),
			 14);
	assert_int_equal(load_power("  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 0\n"
				    "  power_byte_pj: 0\n  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n",
				    "must not both be 0"),
			 12);
	/* the regime without the model: refused */
	struct hw none;
	struct err e;
	char y[2048];
	snprintf(y, sizeof y, "%s%s", dev_head, dev_tail);
	assert_int_equal(hw_load_yaml(&none, "x.yaml", y, strlen(y), &e), 0);
	char why[200];
	struct hw_clock_sel power = {.regime = HW_CLOCK_POWER};
	assert_true(hw_clock_sel_check(&none, &power, why, sizeof why) < 0);
	assert_non_null(strstr(why, "power-limit model"));
	assert_int_equal(hw_clock_sel_check(&h200, &power, why, sizeof why), 0);
	assert_int_equal(hw_clock_sel_parse("power", &power, why, sizeof why), 0);
	assert_int_equal(power.regime, HW_CLOCK_POWER);
}

/* The classes' FLOP energies: parsed (pJ), written back and read again, refused without the model
 * or negative, each class's where set and the global one elsewhere, and a class's draw with them. */
static void test_class_keys(void **state)
{
	(void)state;
	const char *base = "  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n  power_byte_pj: 80\n"
			   "  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n";
	char lines[1024], y[4096];
	snprintf(lines, sizeof lines,
		 "%s  power_flop_pj_mla_decode: 2.9\n  power_flop_pj_grouped_gemv: 13.5\n  clock_bound_grouped_gemm: 0.65\n"
		 "  power_flop_clock_exp: 0.7\n",
		 base);
	snprintf(y, sizeof y, "%s%s%s", dev_head, lines, dev_tail);
	struct hw hw, back;
	struct err e;
	assert_int_equal(hw_load_yaml(&hw, "x.yaml", y, strlen(y), &e), 0);
	assert_true(fabs(hw.power_flop_j_class[HW_POWER_MLA_DECODE] / 2.9e-12 - 1) < 1e-12);
	assert_true(fabs(hw.power_flop_j_class[HW_POWER_GROUPED_GEMV] / 13.5e-12 - 1) < 1e-12);
	assert_true(hw.power_flop_j_class[HW_POWER_GEMM] == 0);
	assert_true(sim_power_flop_j(&hw, HW_POWER_GEMM) == hw.power_flop_j);
	assert_true(sim_power_flop_j(&hw, HW_POWER_MLA_DECODE) == hw.power_flop_j_class[HW_POWER_MLA_DECODE]);
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		assert_non_null(hw_power_class_name((enum hw_power_class)c));
	assert_null(hw_power_class_name(HW_POWER_CLASS_COUNT));
	/* written back (the device section, set classes only) and read again */
	size_t len = 0;
	char *buf = written_back(&hw, &len);
	assert_non_null(strstr(buf, "power_flop_pj_mla_decode: 2.9"));
	assert_null(strstr(buf, "power_flop_pj_gemm:"));
	assert_int_equal(hw_load_yaml(&back, "back.yaml", buf, len, &e), 0);
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		assert_true(back.power_flop_j_class[c] == hw.power_flop_j_class[c]);
		assert_true(back.clock_bound[c] == hw.clock_bound[c]);
	}
	assert_true(hw.clock_bound[HW_POWER_GROUPED_GEMM] == 0.65 && back.power_flop_clock_exp == 0.7);
	assert_null(strstr(buf, "clock_bound_gemm:"));
	free(buf);
	/* a class's energy raises its ops' draw only */
	struct sim_power_op mla = {.boost_s = 5e-3, .floor_s = 6e-3, .flops = 8.8e11, .hbm_bytes = 4.8e9,
				   .klass = HW_POWER_MLA_DECODE};
	struct sim_power_op gemm = mla;
	gemm.klass = HW_POWER_GEMM;
	assert_true(sim_power_draw_w(&hw, &mla, hw.sm_clock_hz) > sim_power_draw_w(&hw, &gemm, hw.sm_clock_hz) + 100);
	/* refused: without the model, negative */
	assert_int_equal(load_power("  power_flop_pj_kda: 2\n", "needs 'power_limit_w'"), 4);
	snprintf(lines, sizeof lines, "%s  power_flop_pj_vector: -3\n", base);
	assert_int_equal(load_power(lines, "must not be negative"), 18);
	/* an unknown class is an unknown key */
	snprintf(lines, sizeof lines, "%s  power_flop_pj_tensor: 3\n", base);
	assert_int_equal(load_power(lines, "power_flop_pj_tensor"), 18);
}

/* The op classes: by kind; the MXFP4 routed experts at most grouped_fp4_gemv_rows rows a touched
 * expert (a gemv) apart from the tiled grouped GEMM. */
static void test_classes(void **state)
{
	(void)state;
	struct hw hw = h200;
	hw.grouped_fp4_gemv_rows = 16;
	struct op o = {.kind = OP_GROUPED_GEMM, .m = 512, .n = 6144, .k = 3584, .groups = 896, .groups_touched = 396,
		       .w_dtype = DT_MXFP4, .a_dtype = DT_BF16};
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_GROUPED_GEMV);
	o.m = 262144;
	o.groups_touched = 896;
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_GROUPED_GEMM);
	o.m = 512;
	o.groups_touched = 396;
	o.w_dtype = DT_BF16;
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_GROUPED_GEMM);
	o.w_dtype = DT_MXFP4;
	o.a_dtype = DT_FP8; /* E4M3 rows: the FP8 tiled kernel at every size */
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_GROUPED_GEMM);
	o.a_dtype = DT_BF16;
	hw.grouped_fp4_gemv_rows = 0; /* the preset has no gemv */
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_GROUPED_GEMM);
	o = (struct op){.kind = OP_MLA_DECODE};
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_MLA_DECODE);
	o.kind = OP_KDA_CHUNK;
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_KDA);
	o.kind = OP_SHORT_CONV;
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_VECTOR);
	o.kind = OP_GEMM;
	assert_int_equal(sim_power_class(&hw, &o), HW_POWER_GEMM);
}

/* A mix replayed back to back: one clock in [floor, boost], where its mean draw meets the limit
 * (boost where it is within), the mean draw never rising as the clock falls. */
static void test_mix(void **state)
{
	(void)state;
	uint64_t seed = 23;
	int slowed = 0;
	for (int k = 0; k < 300; k++) {
		struct sim_power_op ops[6];
		int count[6];
		int n = 1 + k % 6;
		for (int i = 0; i < n; i++) {
			ops[i] = random_op(&seed);
			ops[i].klass = (enum hw_power_class)(i % HW_POWER_CLASS_COUNT);
			count[i] = 1 + (k + i) % 4;
		}
		double f = sim_power_mix_hz(&h200, ops, count, n);
		assert_true(f <= h200.sm_clock_hz && f >= h200.power_min_sm_clock_hz * (1 - 1e-12));
		double at_f = sim_power_mix_draw_w(&h200, ops, count, n, f);
		if (f < h200.sm_clock_hz) {
			slowed++;
			if (f > h200.power_min_sm_clock_hz * 1.0001)
				assert_true(fabs(at_f - h200.power_limit_w) < 0.5);
			else
				assert_true(at_f >= h200.power_limit_w - 0.5);
		} else {
			assert_true(at_f <= h200.power_limit_w);
		}
		double last = INFINITY;
		for (double c = h200.sm_clock_hz; c >= h200.power_min_sm_clock_hz; c -= 25e6) {
			double w = sim_power_mix_draw_w(&h200, ops, count, n, c);
			assert_true(w <= last * (1 + 1e-12));
			last = w;
		}
	}
	assert_true(slowed > 10 && slowed < 290); /* both cases occur: the test can fail */
}

static double step_hw(const struct scenario *s, const struct hw *hw, enum phase_kind kind, int64_t batch,
		      int64_t tokens, int64_t ctx)
{
	struct phase p;
	sim_phase_init(s, kind, batch, tokens, ctx, &p);
	double t = -1;
	assert_int_equal(sim_step(s, &k3, hw, &p, NULL, 1, &t), 0);
	assert_true(t > 0);
	return t;
}

/* Decode as CUDA graphs in the power regime: the steady state of back-to-back replays, one clock
 * for the step; between boost and the floor, equal to boost while the step's mean draw is within
 * the limit, slower once a class's energy takes it past, and never faster than the same step
 * after idle where no op is over the limit on its own. */
static void test_graph_steady(void **state)
{
	(void)state;
	struct scenario boost, power, floor_clk;
	struct err e;
	assert_int_equal(scenario_load_yaml(&boost, "t.yaml", one_gpu, strlen(one_gpu), &e), 0);
	boost.cuda_graph = true;
	boost.clock = (struct hw_clock_sel){.regime = HW_CLOCK_BOOST};
	power = floor_clk = boost;
	power.clock = (struct hw_clock_sel){.regime = HW_CLOCK_POWER};
	floor_clk.clock = (struct hw_clock_sel){.given_hz = h200.power_min_sm_clock_hz};
	struct scenario eager = power;
	eager.cuda_graph = false;
	struct hw hot = h200;
	double b = step_hw(&boost, &hot, PHASE_DECODE, 64, 1, 65536);
	assert_true(fabs(step_hw(&power, &hot, PHASE_DECODE, 64, 1, 65536) / b - 1) < 1e-12);
	/* attention and expert GEMMs that draw more: the step's mean draw past the limit */
	hot.power_flop_j_class[HW_POWER_MLA_DECODE] = 30e-12;
	hot.power_flop_j_class[HW_POWER_GROUPED_GEMM] = 30e-12;
	hot.power_flop_j_class[HW_POWER_GEMM] = 30e-12;
	double pw = step_hw(&power, &hot, PHASE_DECODE, 64, 1, 65536);
	double fl = step_hw(&floor_clk, &hot, PHASE_DECODE, 64, 1, 65536);
	assert_true(pw > b * 1.001);
	assert_true(pw <= fl * (1 + 1e-9));
	/* prefill is not a replay: its own walk from idle, unchanged by cuda_graph */
	assert_true(fabs(step_hw(&power, &hot, PHASE_PREFILL, 1, 4096, 0) /
			     step_hw(&eager, &hot, PHASE_PREFILL, 1, 4096, 0) -
			 1) < 1e-12);
}

/* A compute-bound op of t_s seconds at boost drawing draw_w there (its time scaling with 1 / clock). */
static struct sim_power_op drawing_op(const struct hw *hw, double t_s, double draw_w)
{
	double fb = hw->sm_clock_hz, ff = hw->power_min_sm_clock_hz;
	return (struct sim_power_op){.boost_s = t_s, .floor_s = t_s * fb / ff,
				     .flops = (draw_w - hw->power_idle_w) * t_s / sim_power_flop_j(hw, HW_POWER_GEMM),
				     .klass = HW_POWER_GEMM};
}

/* The op scaled to share s of its work where s < 1 (its draw unchanged). */
static void shorten(struct sim_power_op *op, double s)
{
	if (s < 1) {
		op->boost_s *= s;
		op->floor_s *= s;
		op->flops *= s;
		op->hbm_bytes *= s;
	}
}

/* The shipped preset with window window_s under the plain clock laws (every class's time scaled by
 * the model's ratio whole: the window's sums exact per op; test_window_law has the roofline). */
static struct hw windowed(double window_s)
{
	struct hw hw = h200;
	hw.power_window_s = window_s;
	hw.power_delay_s = hw.power_rise_s = hw.power_fall_s = 0; /* the window limiter: no delay */
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		hw.clock_bound[c] = 0;
	return hw;
}

/* The window limiter: every clock in [floor, boost], periodic or after idle, with idle gaps. */
static void test_window_bounds(void **state)
{
	(void)state;
	struct hw hw = windowed(0.1);
	uint64_t seed = 41;
	int slowed = 0;
	for (int k = 0; k < 60; k++) {
		struct sim_power_op ops[40];
		double gap[40], hz[40];
		int n = 1 + k % 40;
		for (int i = 0; i < n; i++) {
			ops[i] = random_op(&seed);
			gap[i] = (k + i) % 5 == 0 ? 1e-3 * (double)(i % 7) : 0;
		}
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, gap, (size_t)n, k % 2 == 0, hz), 0);
		for (int i = 0; i < n; i++) {
			assert_true(hz[i] <= hw.sm_clock_hz && hz[i] >= hw.power_min_sm_clock_hz * (1 - 1e-12));
			slowed += hz[i] < hw.sm_clock_hz;
		}
	}
	assert_true(slowed > 20); /* the limit binds somewhere: the test can fail */
	/* no window in the preset: refused */
	struct sim_power_op op = random_op(&seed);
	double hz;
	assert_int_equal(sim_power_window_clocks(&h200_filtered, &op, NULL, NULL, 1, false, &hz), -EINVAL);
}

/* An op that draws under the limit runs at the clock of the ops over it before it (what the
 * slices measured: MLA prefill at ~1600 MHz between the GEMMs, at boost alone), and at boost
 * when it runs longer than the window or after idle. */
static void test_window_inherits(void **state)
{
	(void)state;
	struct hw hw = windowed(0.1);
	struct sim_power_op heavy = drawing_op(&hw, 0.05, 1000), light = drawing_op(&hw, 0.01, 550),
			    light_long = drawing_op(&hw, 0.3, 550);
	assert_true(sim_power_steady_hz(&hw, &light) == hw.sm_clock_hz);
	assert_true(sim_power_steady_hz(&hw, &heavy) < hw.sm_clock_hz);
	struct sim_power_op ops[] = {heavy, heavy, heavy, heavy, light, light_long};
	double hz[6];
	assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, NULL, 6, false, hz), 0);
	assert_true(hz[3] < hw.sm_clock_hz * 0.95);
	assert_true(hz[4] < hw.sm_clock_hz * 0.95);  /* under the limit, at the heavy ops' clock */
	assert_true(hz[4] >= hz[3] * (1 - 1e-9));    /* not slower than they run */
	assert_true(hz[5] == hw.sm_clock_hz);        /* longer than the window: its own */
	/* the light op after a second idle: boost */
	double gap[] = {0, 0, 0, 0, 1.0, 0};
	assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, gap, 6, false, hz), 0);
	assert_true(hz[4] == hw.sm_clock_hz);
	/* the first heavy op after idle: its window holds the idle before it, a short one at boost */
	struct sim_power_op burst = drawing_op(&hw, 0.005, 1000);
	assert_int_equal(sim_power_window_clocks(&hw, &burst, NULL, NULL, 1, false, hz), 0);
	assert_true(hz[0] == hw.sm_clock_hz);
}

/* A sequence of ops ops[0, n) (op i count[i] = 1 + (i + k) % 2 times) repeated back to back, shorter
 * than the window: every instance's window clock within [floor, boost] and within 2 kHz of the mix's
 * clock (sim_power_mix_hz), which it returns. */
static double window_mix_case(const struct hw *hw, const struct sim_power_op *ops, int n, int k)
{
	int count[4] = {0}, seq[8] = {0};
	size_t m = 0;
	for (int i = 0; i < n; i++) {
		count[i] = 1 + (i + k) % 2;
		for (int c = 0; c < count[i]; c++)
			seq[m++] = i;
	}
	double hz[8];
	assert_int_equal(sim_power_window_clocks(hw, ops, seq, NULL, m, true, hz), 0);
	double f = sim_power_mix_hz(hw, ops, count, n);
	for (size_t i = 0; i < m; i++) {
		assert_true(hz[i] <= hw->sm_clock_hz && hz[i] >= hw->power_min_sm_clock_hz * (1 - 1e-12));
		if (!(fabs(hz[i] - f) < 2e3))
			fail_msg("k %d: window %.0f mix %.0f", k, hz[i], f);
	}
	return f;
}

/* A sequence repeated back to back that is shorter than the window runs at its mix's clock
 * (sim_power_mix_hz, each op once); an op given twice by seq counts twice. */
static void test_window_mix(void **state)
{
	(void)state;
	struct hw hw = windowed(0.1);
	uint64_t seed = 7;
	int slowed = 0;
	for (int k = 0; k < 200; k++) {
		struct sim_power_op ops[4];
		int n = 1 + k % 4;
		for (int i = 0; i < n; i++) {
			ops[i] = random_op(&seed);
			shorten(&ops[i], 0.005 / ops[i].floor_s); /* at most 5 ms at the floor: 8 of them in the window */
		}
		slowed += window_mix_case(&hw, ops, n, k) < hw.sm_clock_hz;
	}
	assert_true(slowed > 10 && slowed < 190);
}

/* More idle between the ops never lowers a clock (idle draws the least), to 1e-4 of it: the window's
 * membership is taken at the previous pass's clocks, so a clock may move by a few kHz. */
static void test_window_idle_never_slower(void **state)
{
	(void)state;
	struct hw hw = windowed(0.1);
	uint64_t seed = 3;
	for (int k = 0; k < 100; k++) {
		struct sim_power_op ops[24];
		double gap[24], more[24], hz[24], hz_more[24];
		for (int i = 0; i < 24; i++) {
			ops[i] = random_op(&seed);
			shorten(&ops[i], 0.03 / ops[i].boost_s); /* at most 30 ms at boost */
			gap[i] = 0;
			more[i] = (i + k) % 3 == 0 ? 0.004 : 0;
		}
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, gap, 24, false, hz), 0);
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, more, 24, false, hz_more), 0);
		for (int i = 0; i < 24; i++)
			if (!(hz_more[i] >= hz[i] * (1 - 1e-4)))
				fail_msg("k %d op %d: %.0f < %.0f", k, i, hz_more[i], hz[i]);
	}
}

/* The preset's window: absent or 0 none, positive the limiter, negative refused at its line. */
static void test_window_key(void **state)
{
	(void)state;
	const char *base = "  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n  power_byte_pj: 80\n"
			   "  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n";
	char y[512];
	snprintf(y, sizeof y, "%s  power_window_ms: 100\n", base);
	assert_int_equal(load_power(y, NULL), 0);
	snprintf(y, sizeof y, "%s  power_window_ms: 0\n", base);
	assert_int_equal(load_power(y, NULL), 0);
	snprintf(y, sizeof y, "%s  power_window_ms: -5\n", base);
	assert_int_equal(load_power(y, "power_window_ms"), 18);
	/* a measured byte energy: 0 or 1, 1 with a positive power_byte_pj */
	snprintf(y, sizeof y, "%s  power_byte_held: 1\n", base);
	assert_int_equal(load_power(y, NULL), 0);
	snprintf(y, sizeof y, "%s  power_byte_held: 2\n", base);
	assert_int_equal(load_power(y, "power_byte_held"), 18);
	/* the clock roofline's shares in [0.05, 1] (without the power model too), the exponent in (0, 4] */
	snprintf(y, sizeof y, "%s  clock_bound_gemm: 0.9\n  clock_bound_grouped_gemm: 0.65\n  power_flop_clock_exp: 0.7\n", base);
	assert_int_equal(load_power(y, NULL), 0);
	assert_int_equal(load_power("  clock_bound_kda: 0.5\n", NULL), 0);
	snprintf(y, sizeof y, "%s  clock_bound_gemm: 1.5\n", base);
	assert_int_equal(load_power(y, "clock_bound_gemm"), 18);
	snprintf(y, sizeof y, "%s  clock_bound_vector: 0.01\n", base);
	assert_int_equal(load_power(y, "clock_bound_vector"), 18);
	snprintf(y, sizeof y, "%s  clock_scaled_excess: 1\n", base);
	assert_int_equal(load_power(y, NULL), 0);
	snprintf(y, sizeof y, "%s  clock_scaled_excess: 2\n", base);
	assert_int_equal(load_power(y, "clock_scaled_excess"), 18);
	snprintf(y, sizeof y, "%s  power_flop_clock_exp: 5\n", base);
	assert_int_equal(load_power(y, "power_flop_clock_exp"), 18);
	/* a window alone still needs the model's required keys */
	assert_int_equal(load_power("  power_window_ms: 100\n", "needs 'power_limit_w'"), 4);
	assert_true(sim_power_windowed(&h200) && !sim_power_windowed(&h200_filtered));
}


/* The shipped preset under the plain laws with the delayed limiter fitted on the probe's step
 * response (bench/results/power-limiter-2026-12-03/): delay 20 ms, window 20, rise 30, fall 2. */
static struct hw delayed(void)
{
	struct hw hw = windowed(0.020);
	hw.power_delay_s = 0.020;
	hw.power_rise_s = 0.030;
	hw.power_fall_s = 0.002;
	return hw;
}

/* A heavy op after idle runs at boost for the delay, then falls to its steady clock: a long one's
 * clock (as one) lies between, near the steady one; one shorter than the delay runs at boost. */
static void test_delayed_step(void **state)
{
	(void)state;
	struct hw hw = delayed();
	struct sim_power_op heavy = drawing_op(&hw, 0.5, 1000), burst = drawing_op(&hw, 0.02, 1000);
	double steady = sim_power_steady_hz(&hw, &heavy), hz;
	assert_true(steady < 0.9 * hw.sm_clock_hz);
	assert_int_equal(sim_power_window_clocks(&hw, &heavy, NULL, NULL, 1, false, &hz), 0);
	/* ~25 ms at boost and ~10 ms falling of ~0.5 s at its steady clock */
	double t = sim_power_time_s(&hw, &heavy, hz), t_steady = sim_power_time_s(&hw, &heavy, steady);
	assert_true(hz > steady && t < t_steady && t > t_steady - 0.04);
	assert_int_equal(sim_power_window_clocks(&hw, &burst, NULL, NULL, 1, false, &hz), 0);
	assert_true(hz == hw.sm_clock_hz);
	/* back to back (periodic), the long op settles: within 0.5 % of its steady clock */
	assert_int_equal(sim_power_window_clocks(&hw, &heavy, NULL, NULL, 1, true, &hz), 0);
	if (!(fabs(hz / steady - 1) < 5e-3))
		fail_msg("periodic %.0f steady %.0f", hz, steady);
}

/* An op that draws under the limit after heavy ones runs at their clock while it is shorter than
 * the delay (the slice's MLA prefill between the GEMMs), and rises to boost over a long one. */
static void test_delayed_inherits(void **state)
{
	(void)state;
	struct hw hw = delayed();
	struct sim_power_op ops[] = {drawing_op(&hw, 0.3, 1000), drawing_op(&hw, 0.02, 500), drawing_op(&hw, 1.0, 500)};
	double steady = sim_power_steady_hz(&hw, &ops[0]), hz[3];
	int seq_short[] = {0, 1}, seq_long[] = {0, 2};
	assert_int_equal(sim_power_window_clocks(&hw, ops, seq_short, NULL, 2, false, hz), 0);
	if (!(fabs(hz[1] / steady - 1) < 0.01))
		fail_msg("light after heavy %.0f, heavy's steady %.0f", hz[1], steady);
	assert_int_equal(sim_power_window_clocks(&hw, ops, seq_long, NULL, 2, false, hz), 0);
	assert_true(hz[1] > 0.97 * hw.sm_clock_hz);
}

/* A sequence far shorter than the delay, repeated, runs at its mix's clock; random sequences
 * stay within [floor, boost]; more idle between ops never makes the ops slower as a whole (to 1e-3:
 * the clock moves in steps of 0.5 ms). One op may run slower: idle shifts what the delayed window
 * sees when, as on the GPU. */
static void test_delayed_mix_bounds(void **state)
{
	(void)state;
	struct hw hw = delayed();
	uint64_t seed = 11;
	int slowed = 0;
	for (int k = 0; k < 60; k++) {
		struct sim_power_op ops[4];
		int n = 1 + k % 4, count[4];
		double hz[4];
		for (int i = 0; i < n; i++) {
			ops[i] = random_op(&seed);
			shorten(&ops[i], 0.0005 / ops[i].floor_s);
			count[i] = 1;
		}
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, NULL, (size_t)n, true, hz), 0);
		double f = sim_power_mix_hz(&hw, ops, count, n);
		slowed += f < hw.sm_clock_hz;
		for (int i = 0; i < n; i++)
			if (!(fabs(hz[i] / f - 1) < 0.01))
				fail_msg("k %d op %d: %.0f, the mix %.0f", k, i, hz[i], f);
	}
	assert_true(slowed > 5 && slowed < 55);
	/* the shipped preset (the delayed limiter under the clock roofline): each op's time that at the
	 * mix's clock within 1 % (a clock is the one that gives the time: boost in the roofline's flat) */
	assert_true(h200.power_delay_s > 0 && sim_clock_bound(&h200, HW_POWER_GEMM) < 1);
	for (int k = 0; k < 40; k++) {
		struct sim_power_op ops[3];
		int count[3] = {1, 1, 1};
		double hz[3];
		for (int i = 0; i < 3; i++) {
			double w = 600 + (double)((k * 7 + i * 13) % 11) * 60; /* 600 .. 1200 W at boost */
			ops[i] = drawing_op(&h200, 2e-4 * (1 + (k + i) % 4), w);
		}
		assert_int_equal(sim_power_window_clocks(&h200, ops, NULL, NULL, 3, true, hz), 0);
		double f = sim_power_mix_hz(&h200, ops, count, 3);
		for (int i = 0; i < 3; i++) {
			double t = sim_power_time_s(&h200, &ops[i], hz[i]), t_mix = sim_power_time_s(&h200, &ops[i], f);
			if (!(fabs(t / t_mix - 1) < 0.01))
				fail_msg("h200 k %d op %d: %.0f, the mix %.0f", k, i, hz[i], f);
		}
	}
	for (int k = 0; k < 40; k++) {
		struct sim_power_op ops[24];
		double gap[24], more[24], hz[24], hz_more[24];
		for (int i = 0; i < 24; i++) {
			ops[i] = random_op(&seed);
			shorten(&ops[i], 0.03 / ops[i].boost_s);
			gap[i] = 0;
			more[i] = (i + k) % 3 == 0 ? 0.004 : 0;
		}
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, gap, 24, k % 2 == 0, hz), 0);
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, more, 24, k % 2 == 0, hz_more), 0);
		double t = 0, t_more = 0;
		for (int i = 0; i < 24; i++) {
			assert_true(hz[i] <= hw.sm_clock_hz && hz[i] >= hw.power_min_sm_clock_hz * (1 - 1e-12));
			t += sim_power_time_s(&hw, &ops[i], hz[i]);
			t_more += sim_power_time_s(&hw, &ops[i], hz_more[i]);
		}
		if (!(t_more <= t * (1 + 1e-3)))
			fail_msg("k %d: %.6f s with more idle, %.6f without", k, t_more, t);
	}
}

/* A delay and a window of a microsecond: the clock's step stays 0.1 ms, so a second of ops takes
 * ~10,000 steps, and the clocks stay within [floor, boost]. */
static void test_delayed_tiny_window(void **state)
{
	(void)state;
	struct hw hw = delayed();
	hw.power_window_s = hw.power_delay_s = 1e-6;
	struct sim_power_op ops[] = {drawing_op(&hw, 0.5, 1000), drawing_op(&hw, 0.5, 400)};
	double hz[2];
	assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, NULL, 2, true, hz), 0);
	for (int i = 0; i < 2; i++)
		assert_true(hz[i] <= hw.sm_clock_hz && hz[i] >= hw.power_min_sm_clock_hz * (1 - 1e-12));
	assert_true(hz[0] < hz[1]); /* the heavy op capped, the light one not */
}

/* The delayed limiter's keys: not negative; a delay needs a window; a rise or fall needs a delay. */
static void test_delayed_keys(void **state)
{
	(void)state;
	const char *base = "  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n  power_byte_pj: 80\n"
			   "  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n";
	char y[640];
	snprintf(y, sizeof y, "%s  power_window_ms: 5\n  power_delay_ms: 25\n  power_rise_ms: 30\n  power_fall_ms: 5\n", base);
	assert_int_equal(load_power(y, NULL), 0);
	snprintf(y, sizeof y, "%s  power_window_ms: 5\n  power_delay_ms: -1\n", base);
	assert_int_equal(load_power(y, "power_delay_ms: must not be negative"), 19);
	snprintf(y, sizeof y, "%s  power_delay_ms: 25\n", base);
	assert_int_equal(load_power(y, "needs power_window_ms"), 18);
	snprintf(y, sizeof y, "%s  power_window_ms: 5\n  power_rise_ms: 30\n", base);
	assert_int_equal(load_power(y, "set power_delay_ms"), 19);
}

/* A class's active draw (hw power_active_w_<class>): read, written back and refused out of range;
 * it adds A (f / boost)^k to its class's ops only (a collective, class HW_POWER_CLASS_COUNT, draws
 * idle), holds the class against calibrate, lowers the clock at the limit, and the window limiter
 * carries it as the mix does (a sequence shorter than the window at its mix's clock). */
static void test_active_draw(void **state)
{
	(void)state;
	const char *base = "  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n  power_byte_pj: 65\n"
			   "  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n";
	char lines[1024], y[4096];
	snprintf(lines, sizeof lines, "%s  power_active_w_grouped_gemv: 440\n  power_active_w_gemm: 280\n"
		 "  power_active_clock_exp: 1.5\n", base);
	snprintf(y, sizeof y, "%s%s%s", dev_head, lines, dev_tail);
	struct hw hw, back;
	struct err e;
	assert_int_equal(hw_load_yaml(&hw, "x.yaml", y, strlen(y), &e), 0);
	assert_true(hw.power_active_w_class[HW_POWER_GROUPED_GEMV] == 440 && hw.power_active_clock_exp == 1.5);
	assert_true(sim_power_class_held(&hw, HW_POWER_GEMM) && !sim_power_class_held(&hw, HW_POWER_KDA));
	assert_false(sim_power_class_held(&hw, HW_POWER_CLASS_COUNT));
	size_t len = 0;
	char *buf = written_back(&hw, &len);
	assert_non_null(strstr(buf, "power_active_w_grouped_gemv: 440"));
	assert_null(strstr(buf, "power_active_w_kda:"));
	assert_int_equal(hw_load_yaml(&back, "back.yaml", buf, len, &e), 0);
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		assert_true(back.power_active_w_class[c] == hw.power_active_w_class[c]);
	assert_true(back.power_active_clock_exp == 1.5);
	free(buf);
	snprintf(lines, sizeof lines, "%s  power_active_w_vector: -3\n", base);
	assert_int_equal(load_power(lines, "must not be negative"), 18);
	snprintf(lines, sizeof lines, "%s  power_active_w_vector: 9000\n", base);
	assert_int_equal(load_power(lines, "power_active_w_vector must be in"), 18);
	snprintf(lines, sizeof lines, "%s  power_active_clock_exp: 5\n", base);
	assert_int_equal(load_power(lines, "power_active_clock_exp must be in"), 18);
	assert_int_equal(load_power("  power_active_w_kda: 2\n", "needs 'power_limit_w'"), 4);
	/* the draw: + A v^k for its class, nothing for another class or a collective */
	struct hw none = hw;
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		none.power_active_w_class[c] = 0;
	struct sim_power_op gv = {.boost_s = 2e-3, .floor_s = 2.2e-3, .flops = 4e10, .hbm_bytes = 7e9,
				  .klass = HW_POWER_GROUPED_GEMV};
	struct sim_power_op kda = gv, comm = {.boost_s = 1e-3, .floor_s = 1e-3, .klass = HW_POWER_CLASS_COUNT};
	kda.klass = HW_POWER_KDA;
	const double fb = hw.sm_clock_hz;
	for (double v = 1; v >= 0.72; v -= 0.07) {
		double d = sim_power_draw_w(&hw, &gv, v * fb) - sim_power_draw_w(&none, &gv, v * fb);
		assert_true(fabs(d - 440 * pow(v, 1.5)) < 1e-9);
		assert_true(sim_power_draw_w(&hw, &kda, v * fb) == sim_power_draw_w(&none, &kda, v * fb));
		assert_true(sim_power_draw_w(&hw, &comm, v * fb) == hw.power_idle_w);
	}
	/* at the limit: a lower clock than without it, within [floor, boost], drawing the limit */
	double f_a = sim_power_steady_hz(&hw, &gv), f_n = sim_power_steady_hz(&none, &gv);
	assert_true(f_n == fb && f_a < fb && f_a >= hw.power_min_sm_clock_hz * (1 - 1e-12));
	assert_true(f_a <= hw.power_min_sm_clock_hz * (1 + 1e-9) || fabs(sim_power_draw_w(&hw, &gv, f_a) - 700) < 0.5);
	/* the window limiter: the same clock as the mix, ops of both active classes and others */
	struct hw win = windowed(0.1);
	win.power_active_w_class[HW_POWER_GROUPED_GEMV] = 440;
	win.power_active_w_class[HW_POWER_GEMM] = 280;
	win.power_active_clock_exp = 1;
	uint64_t seed = 11;
	int slowed = 0;
	for (int k = 0; k < 120; k++) {
		struct sim_power_op ops[4];
		int n = 1 + k % 4;
		for (int i = 0; i < n; i++) {
			ops[i] = random_op(&seed);
			shorten(&ops[i], 0.005 / ops[i].floor_s);
			ops[i].klass = (enum hw_power_class)((i + k) % HW_POWER_CLASS_COUNT);
		}
		slowed += window_mix_case(&win, ops, n, k) < win.sm_clock_hz;
	}
	assert_true(slowed > 5);
}

/* The clock roofline (hw clock_bound) and the FLOP energy's clock exponent
 * (power_flop_clock_exp), on their own. */
static struct hw with_law(double bound_gemm, double exp)
{
	struct hw hw = h200;
	hw.clock_scaled_excess = 0;
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		hw.clock_bound[c] = hw.clock_sm_share[c] = 0;
	hw.clock_bound[HW_POWER_GEMM] = bound_gemm;
	hw.power_flop_clock_exp = exp;
	return hw;
}

/* An op's time: its boost time down to bound x boost, then the physical scaling times the bound;
 * never faster at a lower clock; clock_for its inverse on the scaling part; bound 1 the plain law. */
static void test_clock_bound_time(void **state)
{
	(void)state;
	struct hw plain = with_law(0, 0), hw = with_law(0.8, 0);
	const double fb = hw.sm_clock_hz, ff = hw.power_min_sm_clock_hz;
	struct sim_power_op op = {.boost_s = 1e-3, .floor_s = 1e-3 * fb / ff, .flops = 7e11, .klass = HW_POWER_GEMM};
	struct sim_power_op vec = op;
	vec.klass = HW_POWER_VECTOR; /* no bound of its own: the plain law */
	double prev = 0;
	for (double f = fb; f >= ff; f -= 5e6) {
		double t = sim_power_time_s(&hw, &op, f), tp = sim_power_time_s(&plain, &op, f);
		assert_true(t >= prev * (1 - 1e-12)); /* never faster as the clock falls */
		prev = t;
		assert_true(t <= tp * (1 + 1e-12) && t >= op.boost_s);
		assert_true(fabs(t - fmax(op.boost_s, 0.8 * tp)) < 1e-15);
		assert_true(sim_power_time_s(&hw, &vec, f) == tp);
		if (f > 0.8 * fb + 1e6)
			assert_true(t == op.boost_s); /* above the kink: the boost time */
		else if (f < 0.8 * fb - 1e6)
			assert_true(fabs(sim_power_clock_for(&hw, &op, t) - f) < 1e3);
	}
	assert_true(fabs(sim_power_time_s(&hw, &op, ff) - 0.8 * op.floor_s) < 1e-15);
	assert_true(sim_power_clock_for(&hw, &op, op.boost_s * 1.01) > 0.79 * fb);
}

/* A FLOP's energy falling slower with the clock (exponent 0.7, a cuBLAS GEMM's) leaves a heavy op
 * a lower clock at the limit than the square law does; both within [floor, boost]; at boost the
 * same draw. */
static void test_flop_clock_exp(void **state)
{
	(void)state;
	struct hw sq = with_law(0, 0), lin = with_law(0, 0.7);
	struct sim_power_op heavy = drawing_op(&sq, 0.05, 900);
	assert_true(fabs(sim_power_draw_w(&sq, &heavy, sq.sm_clock_hz) - sim_power_draw_w(&lin, &heavy, sq.sm_clock_hz)) <
		    1e-9);
	assert_true(fabs(sim_power_flop_scale(&lin, 0.5) - pow(0.5, 0.7)) < 1e-15);
	assert_true(sim_power_flop_scale(&sq, 0.5) == 0.25);
	double f_sq = sim_power_steady_hz(&sq, &heavy), f_lin = sim_power_steady_hz(&lin, &heavy);
	assert_true(f_sq < sq.sm_clock_hz && f_lin < f_sq);
	assert_true(f_lin >= lin.power_min_sm_clock_hz * (1 - 1e-12));
	/* the draw at the limit clock is the limit (or the floor's above it) */
	double d = sim_power_draw_w(&lin, &heavy, f_lin);
	assert_true(f_lin <= lin.power_min_sm_clock_hz * (1 + 1e-9) || fabs(d - lin.power_limit_w) < 0.5);
	/* a bound of its class lets the op keep its time at the clock the limit leaves it */
	struct hw both = with_law(0.8, 0.7);
	double f_both = sim_power_steady_hz(&both, &heavy);
	assert_true(sim_power_time_s(&both, &heavy, f_both) <= sim_power_time_s(&lin, &heavy, f_lin) * (1 + 1e-12));
}

/* The device keys every power preset needs, for the key tests below. */
static const char power_base[] = "  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n"
				 "  power_byte_pj: 65\n  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n";

/* A device key line ("key: value") on top of power_base loaded into *hw, written back (the line
 * itself in the output) and loaded again into *back. */
static void key_round_trip(const char *line, struct hw *hw, struct hw *back)
{
	char y[4096];
	struct err e;
	snprintf(y, sizeof y, "%s%s  %s\n%s", dev_head, power_base, line, dev_tail);
	assert_int_equal(hw_load_yaml(hw, "x.yaml", y, strlen(y), &e), 0);
	size_t len = 0;
	char *buf = written_back(hw, &len);
	assert_non_null(strstr(buf, line));
	assert_int_equal(hw_load_yaml(back, "back.yaml", buf, len, &e), 0);
	free(buf);
}

/* power_flop_fp8_scale: a GEMM with FP8 activations counts its FLOPs' energy at the share, one with
 * BF16 ones and a non-GEMM op as before; so the FP8 op draws less and is held at a clock no lower;
 * the key round-trips and is range-checked. */
static void test_flop_fp8_scale(void **state)
{
	(void)state;
	struct hw plain = h200, fp8 = h200;
	fp8.power_flop_fp8_scale = 0.75;
	struct op g8, g16;
	struct err e;
	assert_int_equal(opspec_parse_line("grouped_gemm m=65536 n=6144 k=3584 groups=896 touched=896 dtype=fp8 w_dtype=mxfp4",
				      &g8, &e), 0);
	assert_int_equal(opspec_parse_line("grouped_gemm m=65536 n=6144 k=3584 groups=896 touched=896 dtype=bf16 w_dtype=mxfp4",
				      &g16, &e), 0);
	struct sim_power_op a, b, c, d;
	sim_power_op_cost(&plain, &g8, &a);
	sim_power_op_cost(&fp8, &g8, &b);
	sim_power_op_cost(&plain, &g16, &c);
	sim_power_op_cost(&fp8, &g16, &d);
	assert_true(fabs(b.flops - 0.75 * a.flops) < 1e-6 * a.flops && a.flops == g8.flops);
	assert_true(c.flops == d.flops && c.flops == g16.flops);
	const double fb = plain.sm_clock_hz;
	assert_true(sim_power_draw_w(&fp8, &b, fb) < sim_power_draw_w(&plain, &a, fb));
	assert_true(sim_power_steady_hz(&fp8, &b) >= sim_power_steady_hz(&plain, &a) * (1 - 1e-12));
	struct hw hw, back;
	key_round_trip("power_flop_fp8_scale: 0.753", &hw, &back);
	assert_true(hw.power_flop_fp8_scale == 0.753 && back.power_flop_fp8_scale == 0.753);
	char lines[1024];
	snprintf(lines, sizeof lines, "%s  power_flop_fp8_scale: 3\n", power_base);
	assert_int_equal(load_power(lines, "power_flop_fp8_scale must be in"), 18);
}

/* power_welem_pj: the tiled MXFP4 grouped kernel's weight expansions (chunks x n x k) draw energy
 * of their own; the same op as a gemv, a BF16-weight grouped GEMM and a dense GEMM expand nothing;
 * with the key the op draws more and is held no higher; the key round-trips and is range-checked. */
static void test_welem_energy(void **state)
{
	(void)state;
	struct hw hw = h200;
	hw.grouped_fp4_chunk_rows = 160, hw.grouped_fp4_small_chunk_rows = 128, hw.grouped_fp4_gemv_rows = 1;
	struct op tiled, dense, bf16w;
	struct err e;
	assert_int_equal(opspec_parse_line("grouped_gemm m=4096 n=6144 k=3584 groups=896 touched=888 dtype=bf16 w_dtype=mxfp4",
				      &tiled, &e), 0);
	assert_int_equal(opspec_parse_line("gemm m=4096 n=6144 k=3584 dtype=bf16", &dense, &e), 0);
	assert_int_equal(opspec_parse_line("grouped_gemm m=4096 n=6144 k=3584 groups=896 touched=888 dtype=bf16", &bf16w, &e),
			 0);
	struct sim_power_op a, g, d, b;
	sim_power_op_cost(&hw, &tiled, &a);
	/* each touched expert at least one chunk of its whole matrix */
	assert_true(a.welems >= 888.0 * 6144 * 3584 * (1 - 1e-12) && a.klass == HW_POWER_GROUPED_GEMM);
	struct hw gv = hw;
	gv.grouped_fp4_gemv_rows = 16; /* 4.6 rows an expert: the gemv */
	sim_power_op_cost(&gv, &tiled, &g);
	sim_power_op_cost(&hw, &dense, &d);
	sim_power_op_cost(&hw, &bf16w, &b);
	assert_true(g.welems == 0 && g.klass == HW_POWER_GROUPED_GEMV && d.welems == 0 && b.welems == 0);
	/* E4M3 activations: the FP8 kernel's expansions at the FP8 share, as its FLOPs */
	struct op t8;
	assert_int_equal(opspec_parse_line("grouped_gemm m=4096 n=6144 k=3584 groups=896 touched=888 dtype=fp8 w_dtype=mxfp4",
				      &t8, &e), 0);
	struct hw h8 = hw;
	h8.power_flop_fp8_scale = 0.8;
	struct sim_power_op a8, a8full;
	sim_power_op_cost(&h8, &t8, &a8);
	sim_power_op_cost(&hw, &t8, &a8full);
	assert_true(a8full.welems > 0 && fabs(a8.welems - 0.8 * a8full.welems) < 1e-9 * a8full.welems);
	struct hw with = hw;
	with.power_welem_j = 50e-12;
	const double fb = hw.sm_clock_hz;
	const double added = 50e-12 * a.welems / a.boost_s;
	assert_true(fabs(sim_power_draw_w(&with, &a, fb) - sim_power_draw_w(&hw, &a, fb) - added) < 1e-6 * added);
	assert_true(sim_power_draw_w(&with, &d, fb) == sim_power_draw_w(&hw, &d, fb));
	assert_true(sim_power_steady_hz(&with, &a) <= sim_power_steady_hz(&hw, &a) * (1 + 1e-12));
	struct hw ld, back;
	key_round_trip("power_welem_pj: 42.5", &ld, &back);
	assert_true(fabs(ld.power_welem_j - 42.5e-12) < 1e-24 && fabs(back.power_welem_j - 42.5e-12) < 1e-24);
	char lines[1024];
	snprintf(lines, sizeof lines, "%s  power_welem_pj: 5000\n", power_base);
	assert_int_equal(load_power(lines, "power_welem_pj must be in"), 18);
}

/* The step's controller counts FP8 FLOPs as `k3sim op` does (sim_power_op_from): a prefill whose
 * experts take E4M3 activations, held by the limit, runs no slower with a smaller
 * power_flop_fp8_scale and faster where the scale lowers its draw; BF16 experts are unmoved.
 * (Until 2026-12-06 the step made its power ops from the raw FLOPs: the key moved `k3sim op`'s
 * draws and not a step's.) */
static void test_step_fp8_scale(void **state)
{
	(void)state;
	struct hw full = h200, half = h200;
	full.power_flop_fp8_scale = 1, half.power_flop_fp8_scale = 0.5;
	struct scenario s;
	struct err e;
	assert_int_equal(scenario_load_yaml(&s, "t.yaml", one_gpu, strlen(one_gpu), &e), 0);
	s.clock = (struct hw_clock_sel){.regime = HW_CLOCK_POWER};
	s.expert_act = DT_FP8;
	step_hw_of = &full;
	const double t_full = step_s(&s, PHASE_PREFILL, 1, 16384, 0);
	step_hw_of = &half;
	const double t_half = step_s(&s, PHASE_PREFILL, 1, 16384, 0);
	assert_true(t_half < t_full * (1 - 1e-3));
	s.expert_act = DT_BF16;
	step_hw_of = &full;
	const double b_full = step_s(&s, PHASE_PREFILL, 1, 16384, 0);
	step_hw_of = &half;
	const double b_half = step_s(&s, PHASE_PREFILL, 1, 16384, 0);
	assert_true(fabs(b_half / b_full - 1) < 1e-12);
	step_hw_of = &h200;
}

/* The phase's draw under the power regime (sim_phase power_*, `k3sim run --json` power): between
 * P_idle and its draw at boost, lower where the limiter slowed it (a 16K prefill at the 700 W
 * limit), weighted like the rows (two steps: the same mean, twice the time), none outside the
 * regime. Both limiters. */
static void check_step_draw(void)
{
	const struct hw *hw = step_hw_of;
	struct scenario s;
	struct err e;
	assert_int_equal(scenario_load_yaml(&s, "t.yaml", one_gpu, strlen(one_gpu), &e), 0);
	struct sim_phase *acc = calloc(1, sizeof *acc);
	assert_non_null(acc);
	struct phase p;
	double t;
	s.clock = (struct hw_clock_sel){.regime = HW_CLOCK_BOOST};
	sim_phase_init(&s, PHASE_PREFILL, 1, 16384, 0, &p);
	assert_int_equal(sim_step(&s, &k3, hw, &p, acc, 1, &t), 0);
	assert_true(acc->power_busy_s == 0 && acc->power_boost_busy_s == 0);
	s.clock = (struct hw_clock_sel){.regime = HW_CLOCK_POWER};
	const enum phase_kind kinds[2] = {PHASE_PREFILL, PHASE_DECODE};
	for (int k = 0; k < 2; k++) {
		memset(acc, 0, sizeof *acc);
		if (kinds[k] == PHASE_PREFILL)
			sim_phase_init(&s, PHASE_PREFILL, 1, 16384, 0, &p);
		else
			sim_phase_init(&s, PHASE_DECODE, 64, 1, 8192, &p);
		assert_int_equal(sim_step(&s, &k3, hw, &p, acc, 1, &t), 0);
		const double busy = acc->power_busy_s, w = acc->power_energy_j / busy;
		const double wb = acc->power_boost_energy_j / acc->power_boost_busy_s;
		assert_true(busy > 0 && busy <= t * (1 + 1e-9));
		assert_true(w >= hw->power_idle_w && w <= wb * (1 + 1e-9));
		if (kinds[k] == PHASE_PREFILL) {
			assert_true(wb > hw->power_limit_w);
			assert_true(w < wb * 0.98);
		}
		assert_int_equal(sim_step(&s, &k3, hw, &p, acc, 1, &t), 0);
		assert_true(fabs(acc->power_busy_s / busy - 2) < 1e-9);
		assert_true(fabs(acc->power_energy_j / acc->power_busy_s / w - 1) < 1e-9);
	}
	free(acc);
}

static void test_step_draw(void **state)
{
	(void)state;
	both_limiters(check_step_draw);
}

/* The window limiter under the roofline and the exponent (bisection in place of Newton's steps):
 * clocks within [floor, boost], a periodic sequence shorter than the window at its mix's clock
 * (the ops compute-bound: one kink a class, the window's sum exact), more idle never slower. */
static void test_window_law(void **state)
{
	(void)state;
	struct hw hw = with_law(0.8, 0.7);
	hw.power_window_s = 0.1;
	hw.power_delay_s = hw.power_rise_s = hw.power_fall_s = 0;
	uint64_t seed = 11;
	int slowed = 0, kinked = 0;
	for (int k = 0; k < 200; k++) {
		struct sim_power_op ops[4];
		int n = 1 + k % 4;
		for (int i = 0; i < n; i++) {
			double w = 600 + (double)((k * 7 + i * 13) % 11) * 60; /* 600 .. 1200 W at boost */
			ops[i] = drawing_op(&hw, 1e-3 * (1 + (k + i) % 4), w);
		}
		double f = window_mix_case(&hw, ops, n, k);
		slowed += f < hw.sm_clock_hz;
		kinked += f < 0.8 * hw.sm_clock_hz;
	}
	assert_true(slowed > 20 && slowed < 200);
	assert_true(kinked > 0); /* some below the kink: the test reaches both sides */
	for (int k = 0; k < 50; k++) {
		struct sim_power_op ops[24];
		double gap[24] = {0}, more[24], hz[24], hz_more[24];
		for (int i = 0; i < 24; i++) {
			ops[i] = random_op(&seed);
			ops[i].klass = i % 3 ? HW_POWER_GEMM : HW_POWER_VECTOR;
			shorten(&ops[i], 0.03 / ops[i].boost_s);
			more[i] = (i + k) % 3 == 0 ? 0.004 : 0;
		}
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, gap, 24, false, hz), 0);
		assert_int_equal(sim_power_window_clocks(&hw, ops, NULL, more, 24, false, hz_more), 0);
		for (int i = 0; i < 24; i++) {
			assert_true(hz[i] <= hw.sm_clock_hz && hz[i] >= hw.power_min_sm_clock_hz * (1 - 1e-12));
			if (!(hz_more[i] >= hz[i] * (1 - 1e-4)))
				fail_msg("k %d op %d: %.0f < %.0f", k, i, hz_more[i], hz[i]);
		}
	}
}

/* The cost model's side: a calibrated GEMM below boost keeps its boost time down to bound x boost,
 * then max(boost time, bound x the full scaling); cost_opts full_clock_scaling the full scaling; at
 * boost nothing changes; never below the physical floor. */
static void test_clock_bound_cost(void **state)
{
	(void)state;
	struct hw hw = with_law(0.8, 0), plain = with_law(0, 0);
	struct op g = {.kind = OP_GEMM, .m = 8192, .n = 8192, .k = 8192, .w_dtype = DT_BF16, .a_dtype = DT_BF16, .o_dtype = DT_BF16};
	op_fill(&g);
	struct op_cost cb, cb0, c, cfull, c0;
	struct cost_opts o = {0};
	sim_op_cost(&hw, &g, &o, &cb);
	sim_op_cost(&plain, &g, &o, &cb0);
	assert_true(cb.time_s == cb0.time_s);
	const double fb = hw.sm_clock_hz;
	for (double f = 0.95 * fb; f > 0.66 * fb; f -= 0.05 * fb) {
		o.clock = (struct hw_clock_sel){.given_hz = f};
		o.full_clock_scaling = false;
		sim_op_cost(&hw, &g, &o, &c);
		sim_op_cost(&plain, &g, &o, &c0);
		o.full_clock_scaling = true;
		sim_op_cost(&hw, &g, &o, &cfull);
		assert_true(cfull.time_s == c0.time_s);
		assert_true(c.time_s >= cb.time_s * (1 - 1e-12) && c.time_s <= c0.time_s * (1 + 1e-12));
		assert_true(c.time_s >= c.floor_s);
		double want = fmax(cb.time_s - 0, 0.8 * c0.time_s);
		assert_true(fabs(c.time_s - fmax(want, c.floor_s)) < 1e-3 * c.time_s);
	}
}


/* The clock laws' inverse (calibrate's points below boost, sim_boost_time_s): for random boost
 * times, model times, clocks, shares and both excess laws, the law at the inverse gives the
 * measured time back, and the law rises with the boost time. */
static void test_clock_law_inverse(void **state)
{
	(void)state;
	uint64_t seed = 5;
	struct hw hw = h200;
	int kinked = 0;
	for (int k = 0; k < 20000; k++) {
		double r[5];
		for (int i = 0; i < 5; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			r[i] = (double)(seed >> 11) / 9007199254740992.0;
		}
		hw.clock_scaled_excess = k % 2;
		hw.clock_bound[HW_POWER_GEMM] = k % 3 ? 0.6 + 0.4 * r[0] : 0;
		hw.clock_sm_share[HW_POWER_GEMM] = k % 5 == 0 ? r[3] : 0;
		double scale = 0.6 + 0.4 * r[1];
		double mb = 1e-6 * pow(1e4, r[2]), mf = mb * (1 + (1 / scale - 1) * r[3]); /* model: 0 .. 1/scale */
		double tb = mb * (0.5 + 3 * r[4]);
		double b = sim_clock_bound(&hw, HW_POWER_GEMM), sh = sim_clock_sm_share(&hw, HW_POWER_GEMM);
		double t = fmax(fmax(tb, b * sim_clock_scaled_s(&hw, tb, mb, mf, scale)), tb * (1 - sh + sh / scale));
		double t2 = fmax(fmax(tb * 1.01, b * sim_clock_scaled_s(&hw, tb * 1.01, mb, mf, scale)),
				 tb * 1.01 * (1 - sh + sh / scale));
		assert_true(t2 >= t);
		assert_true(t >= tb);
		kinked += t > tb * (1 + 1e-9);
		double back = sim_boost_time_s(&hw, HW_POWER_GEMM, t, mb, mf, scale);
		if (!(fabs(back - tb) <= 1e-9 * tb))
			fail_msg("k %d: tb %.9g t %.9g back %.9g (b %.3f scale %.3f mb %.3g mf %.3g excess %d)", k, tb, t,
				 back, b, scale, mb, mf, (int)hw.clock_scaled_excess);
	}
	assert_true(kinked > 1000 && kinked < 19000);
	/* at boost: the measured time */
	assert_true(sim_boost_time_s(&hw, HW_POWER_GEMM, 3e-3, 1e-3, 1e-3, 1) == 3e-3);
}

/* clock_sm_share: an op the physical model has memory-bound (an MLA decode at 64K) takes at least
 * its boost time x (1 - share + share x boost / clock) below boost, calibrated or not, and no less
 * than without the share; at boost nothing changes; the key is refused outside [0, 1]. */
static void test_clock_sm_share(void **state)
{
	(void)state;
	struct op m;
	struct err e;
	assert_int_equal(opspec_parse_line("mla_decode b=64 heads=16 ctx=65536 kv=fp8 t=1", &m, &e), 0);
	for (int calibrated = 0; calibrated < 2; calibrated++) {
		struct hw base = with_law(0, 0), sh = base;
		if (!calibrated)
			base.n_tables = base.n_gemm_points = sh.n_tables = sh.n_gemm_points = 0;
		sh.clock_sm_share[HW_POWER_MLA_DECODE] = 0.8;
		struct cost_opts o = {0};
		struct op_cost b0, b1, c0, c1;
		sim_op_cost(&base, &m, &o, &b0);
		sim_op_cost(&sh, &m, &o, &b1);
		assert_true(b0.time_s == b1.time_s);
		const double gaps = base.launch_latency_s, fb = base.sm_clock_hz;
		for (double sc = 0.95; sc > 0.7; sc -= 0.05) {
			o.clock = (struct hw_clock_sel){.given_hz = sc * fb};
			sim_op_cost(&base, &m, &o, &c0);
			sim_op_cost(&sh, &m, &o, &c1);
			double want = (b1.time_s - gaps) * (1 - 0.8 + 0.8 / sc);
			assert_true(c1.time_s - gaps >= want * (1 - 1e-9));
			assert_true(c1.time_s >= c0.time_s * (1 - 1e-12));
			if (c0.time_s - gaps < want * (1 - 1e-6)) /* the share binds: exactly it */
				assert_true(fabs(c1.time_s - gaps - want) <= 1e-9 * want);
		}
	}
	const char *base = "  power_limit_w: 700\n  power_idle_w: 125\n  power_flop_pj: 1.4\n  power_byte_pj: 80\n"
			   "  power_tau_ms: 10\n  power_min_sm_clock_mhz: 1395\n";
	char y[512];
	snprintf(y, sizeof y, "%s  clock_sm_share_mla_decode: 0.8\n", base);
	assert_int_equal(load_power(y, NULL), 0);
	snprintf(y, sizeof y, "%s  clock_sm_share_mla_decode: 1.2\n", base);
	assert_int_equal(load_power(y, "clock_sm_share_mla_decode must be in [0, 1]"), 18);
}

/* clock_scaled_excess on a calibrated preset: the cost model's time below boost is the law's
 * (sim_clock_scaled_s) on the calibrated boost time and the physical model's times (the preset
 * without its tables), for a decode gemv and a GPU-filling GEMM; the excess law never faster than
 * the plain ratio where the calibrated time exceeds the model's; at boost nothing changes. */
static void test_clock_scaled_excess(void **state)
{
	(void)state;
	struct hw ex = with_law(0, 0), phys = ex, base = ex; /* the plain laws, and the excess law on its own */
	ex.clock_scaled_excess = 1;
	phys.n_tables = 0;
	phys.n_gemm_points = 0;
	const double gaps = base.launch_latency_s, fb = base.sm_clock_hz;
	for (int i = 0; i < 2; i++) {
		struct op g = {.kind = OP_GEMM, .m = i ? 8192 : 1, .n = i ? 8192 : 4480, .k = i ? 8192 : 7168,
			       .w_dtype = DT_BF16, .a_dtype = DT_BF16, .o_dtype = DT_BF16};
		op_fill(&g);
		struct cost_opts o = {0};
		struct op_cost b0, b1, pb, c0, c1, pf;
		sim_op_cost(&base, &g, &o, &b0);
		sim_op_cost(&ex, &g, &o, &b1);
		sim_op_cost(&phys, &g, &o, &pb);
		assert_true(b0.time_s == b1.time_s);
		for (double sc = 0.95; sc > 0.7; sc -= 0.05) {
			o.clock = (struct hw_clock_sel){.given_hz = sc * fb};
			sim_op_cost(&base, &g, &o, &c0);
			sim_op_cost(&ex, &g, &o, &c1);
			sim_op_cost(&phys, &g, &o, &pf);
			double want = sim_clock_scaled_s(&ex, b0.time_s - gaps, pb.time_s - gaps, pf.time_s - gaps, sc);
			assert_true(fabs(fmax(want, c1.floor_s - gaps) - (c1.time_s - gaps)) <= 1e-9 * c1.time_s);
			if (b0.time_s > pb.time_s)
				assert_true(c1.time_s >= c0.time_s * (1 - 1e-12));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_idle_gap_never_slower),
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_longer_never_faster),
		cmocka_unit_test(test_preset_keys),
		cmocka_unit_test(test_class_keys),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_mix),
		cmocka_unit_test(test_graph_steady),
		cmocka_unit_test(test_window_bounds),
		cmocka_unit_test(test_window_inherits),
		cmocka_unit_test(test_window_mix),
		cmocka_unit_test(test_window_idle_never_slower),
		cmocka_unit_test(test_window_key),
		cmocka_unit_test(test_delayed_step),
		cmocka_unit_test(test_delayed_inherits),
		cmocka_unit_test(test_delayed_mix_bounds),
		cmocka_unit_test(test_delayed_tiny_window),
		cmocka_unit_test(test_active_draw),
		cmocka_unit_test(test_delayed_keys),
		cmocka_unit_test(test_clock_bound_time),
		cmocka_unit_test(test_flop_clock_exp),
		cmocka_unit_test(test_flop_fp8_scale),
		cmocka_unit_test(test_step_fp8_scale),
		cmocka_unit_test(test_step_draw),
		cmocka_unit_test(test_welem_energy),
		cmocka_unit_test(test_window_law),
		cmocka_unit_test(test_clock_bound_cost),
		cmocka_unit_test(test_clock_law_inverse),
		cmocka_unit_test(test_clock_scaled_excess),
		cmocka_unit_test(test_clock_sm_share),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
