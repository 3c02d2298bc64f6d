/* serve/: trace parsers (k3sim, Mooncake, Azure) and their errors, synthetic arrivals, the
 * serve: section, the step-cost tables (never falling as a size grows), and the engine's
 * invariants: every request done, Little's law, token conservation, determinism with a seed. */
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

#include "serve/costs.h"
#include "sim/sim.h"
#include "serve/serve.h"

/* sim_step's time, asserting it returned 0 (and set the time). */
static double ok_step(const struct scenario *s, const struct model *m, const struct hw *hw, const struct phase *p,
		      struct sim_phase *acc, double weight)
{
	double t = -1;
	assert_int_equal(sim_step(s, m, hw, p, acc, weight, &t), 0);
	assert_true(t >= 0);
	return t;
}

/* ---- helpers ---- */

struct setup {
	struct scenario s;
	struct model m;
	struct hw hw;
	struct serve_config c;
};

/* A scenario and its serve: section from one YAML text. */
static int load(struct setup *x, const char *yaml, struct err *e)
{
	int rc;
	if ((rc = scenario_load_yaml(&x->s, "test.yaml", yaml, strlen(yaml), e)) < 0 ||
	    (rc = serve_config_load_yaml(&x->c, &x->s, "test.yaml", yaml, strlen(yaml), e)) < 0 ||
	    (rc = model_load(&x->m, x->s.model, e)) < 0 || (rc = hw_load(&x->hw, x->s.hw, e)) < 0)
		return rc;
	return 0;
}

static void must_load(struct setup *x, const char *yaml)
{
	struct err e = {0};
	int rc = load(x, yaml, &e);
	if (rc < 0) {
		char buf[1024];
		fprintf(stderr, "%s\n", err_format(&e, buf, sizeof buf));
	}
	assert_int_equal(rc, 0);
}

static void run_ok(struct setup *x, struct serve_workload *w, struct serve_result *r)
{
	struct err e = {0};
	struct serve_opts o = {.max_steps = 0};
	int rc = serve_workload_make(w, &x->c, &x->m, &e);
	if (rc == 0)
		rc = serve_run(&x->s, &x->m, &x->hw, &x->c, w, &o, r, &e);
	if (rc < 0) {
		char buf[1024];
		fprintf(stderr, "%s\n", err_format(&e, buf, sizeof buf));
	}
	assert_int_equal(rc, 0);
}

/* Kimi Linear on 2 x H200: small and quick to cost. */
#define SMALL                                                                                                        \
	"model: kimi-linear\nhw: h200\ngpus: 2\nparallel: {tp: 1, dp: 2, ep: 2}\n"                                  \
	"workload: {batch: 64, prompt_tokens: 1024, output_tokens: 64}\n"

/* ---- traces ---- */

static void test_trace_k3sim_jsonl(void **state)
{
	const char *t = "{\"arrival_s\": 0.5, \"prompt_tokens\": 1000, \"output_tokens\": 20, \"conversation\": \"c1\", "
			"\"turn\": 0}\n"
			"\n"
			"{\"arrival_s\": 2.5, \"prompt_tokens\": 1500, \"output_tokens\": 30, \"images\": 2, \"image_px\": 448, "
			"\"extra\": {\"nested\": [1, {\"a\": null}]}}\n";
	struct serve_workload w;
	struct err e = {0};
	assert_int_equal(serve_trace_parse(&w, "t.jsonl", t, strlen(t), SERVE_TRACE_AUTO, 1.0, &e), 0);
	assert_int_equal(w.n, 2);
	assert_true(fabs(w.req[0].arrival_s - 0.0) < 1e-12); /* relative to the first */
	assert_true(fabs(w.req[1].arrival_s - 2.0) < 1e-12);
	assert_int_equal(w.req[0].prompt_tokens, 1000);
	assert_int_equal(w.req[1].output_tokens, 30);
	assert_true(w.req[0].conversation >= 0);
	assert_int_equal(w.req[1].conversation, -1);
	/* 448 px: 32 x 32 patches of 14, 2 x 2 shuffle: 256 tokens per image */
	assert_int_equal(w.req[1].vision_tokens, 2 * 256);
	assert_int_equal(w.req[0].line, 1);
	assert_int_equal(w.req[1].line, 3);
	serve_workload_release(&w);
}

/* Mooncake's FAST'25 trace keys: timestamp in ms, 512-token hash_ids (synthetic lines of its
 * columns; kvcache-ai/Mooncake, FAST25-release/traces). */
static void test_trace_mooncake(void **state)
{
	const char *t = "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 50, \"hash_ids\": [0, 1, 2]}\n"
			"{\"timestamp\": 1500, \"input_length\": 1200, \"output_length\": 60, \"hash_ids\": [0, 1, 3]}\n";
	struct serve_workload w;
	struct err e = {0};
	assert_int_equal(serve_trace_parse(&w, "m.jsonl", t, strlen(t), SERVE_TRACE_AUTO, 0.5, &e), 0);
	assert_int_equal(w.n, 2);
	assert_true(fabs(w.req[1].arrival_s - 0.75) < 1e-12); /* 1.5 s x time_scale 0.5 */
	assert_int_equal(w.req[0].n_ids, 3);
	assert_int_equal(w.n_ids, 6);
	/* shared ids: the same blocks; the third differs */
	assert_true(w.req[0].ids[0] == w.req[1].ids[0] && w.req[0].ids[1] == w.req[1].ids[1]);
	assert_true(w.req[0].ids[2] != w.req[1].ids[2]);
	serve_workload_release(&w);
}

/* Azure's LLM inference trace columns (Azure/AzurePublicDataset, AzureLLMInferenceTrace_*.csv);
 * synthetic rows. */
static void test_trace_azure(void **state)
{
	const char *t = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
			"2023-11-16 18:15:46.6805900,374,44\r\n"
			"2023-11-16 18:15:50.9951690,396,109\r\n"
			"2023-11-16 18:16:01.0000000,879,9\r\n";
	struct serve_workload w;
	struct err e = {0};
	assert_int_equal(serve_trace_parse(&w, "a.csv", t, strlen(t), SERVE_TRACE_AUTO, 1.0, &e), 0);
	assert_int_equal(w.n, 3);
	assert_true(fabs(w.req[1].arrival_s - 4.314579) < 1e-6);
	assert_true(fabs(w.req[2].arrival_s - 14.31941) < 1e-5);
	assert_int_equal(w.req[2].prompt_tokens, 879);
	assert_int_equal(w.req[0].output_tokens, 44);
	serve_workload_release(&w);
}

static void test_trace_k3sim_csv(void **state)
{
	const char *t = "arrival_s,prompt_tokens,output_tokens,conversation,prefix_id,prefix_tokens\n"
			"0,2000,10,a,sys,1024\n"
			"1.5,2100,10,\"b\",sys,1024\n";
	struct serve_workload w;
	struct err e = {0};
	assert_int_equal(serve_trace_parse(&w, "k.csv", t, strlen(t), SERVE_TRACE_CSV, 1.0, &e), 0);
	assert_int_equal(w.n, 2);
	assert_true(w.req[0].seg_id[0] == w.req[1].seg_id[0] && w.req[0].seg_tokens == 1024);
	assert_true(w.req[0].seg_id[1] != w.req[1].seg_id[1]);
	serve_workload_release(&w);
}

/* Every bad input: an error at file:line:col, the workload untouched and empty. */
static void test_trace_errors(void **state)
{
	static const struct {
		const char *text;
		int line, col;
		const char *msg;
	} cases[] = {
		{"{\"arrival_s\": 0, \"prompt_tokens\": 10}\n", 1, 0, "no output length"},
		{"{\"arrival_s\": 0, \"prompt_tokens\": -3, \"output_tokens\": 1}\n", 1, 35, "not an integer"},
		{"{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 1\n", 1, 57, "expected ',' or '}'"},
		{"{\"arrival_s\": 0, \"timestamp\": 5, \"prompt_tokens\": 1, \"output_tokens\": 1}\n", 1, 18, "twice"},
		{"{\"timestamp\": 0, \"input_length\": 9, \"output_length\": 1, \"hash_ids\": [1, x]}\n", 1, 73, "hash_ids"},
		{"{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1} trailing\n", 1, 58, "text after"},
		{"[1, 2]\n", 1, 1, "expected a JSON object"},
		{"arrival_s,prompt_tokns,output_tokens\n0,1,1\n", 1, 11, "did you mean 'prompt_tokens'"},
		{"arrival_s,prompt_tokens\n", 1, 1, "needs an arrival time"},
		{"arrival_s,prompt_tokens,output_tokens\n0,1,1\n0,1\n", 3, 0, "2 fields"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-01 00:00:00,1,1\n", 2, 1, "neither seconds"},
		{"arrival_s,prompt_tokens,output_tokens\n", 1, 0, "no request"},
		{"{\"arrival_s\": 1e400, \"prompt_tokens\": 1, \"output_tokens\": 1}\n", 1, 15, "not a time"},
		{"{\"arrival_s\": \"x\n", 1, 15, "a value"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct serve_workload w;
		struct err e = {0};
		int rc = serve_trace_parse(&w, "bad.txt", cases[i].text, strlen(cases[i].text), SERVE_TRACE_AUTO, 1, &e);
		char buf[1024];
		err_format(&e, buf, sizeof buf);
		if (rc == 0 || e.line != cases[i].line || (cases[i].col && e.col != cases[i].col) ||
		    !strstr(e.msg, cases[i].msg))
			fprintf(stderr, "case %zu: rc %d: %s\n", i, rc, buf);
		assert_true(rc < 0);
		assert_int_equal(e.line, cases[i].line);
		if (cases[i].col)
			assert_int_equal(e.col, cases[i].col);
		assert_non_null(strstr(e.msg, cases[i].msg));
		assert_string_equal(e.file, "bad.txt");
		assert_int_equal(w.n, 0);
		assert_null(w.req);
	}
}

static void test_trace_file(void **state)
{
	char path[] = "/tmp/k3serve-trace-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "arrival_s,prompt_tokens,output_tokens\n");
	for (int i = 0; i < 5000; i++)
		fprintf(f, "%d.25,%d,%d\n", i, 100 + i, 1 + i % 7);
	fclose(f);
	struct serve_workload w;
	struct err e = {0};
	assert_int_equal(serve_trace_load(&w, path, SERVE_TRACE_AUTO, 1.0, &e), 0);
	assert_int_equal(w.n, 5000);
	assert_int_equal(w.req[4999].prompt_tokens, 5099);
	assert_true(fabs(w.req[4999].arrival_s - 4999) < 1e-9);
	serve_workload_release(&w);
	assert_true(serve_trace_load(&w, "/nonexistent/trace.csv", SERVE_TRACE_AUTO, 1.0, &e) == -ENOENT);
	remove(path);
}

/* ---- the serve: section ---- */

static void test_config_errors(void **state)
{
	static const struct {
		const char *yaml;
		int line;
		const char *msg;
	} cases[] = {
		{SMALL "serve:\n  arivals: {}\n", 7, "did you mean 'arrivals'"},
		{SMALL "serve:\n  arrivals: {process: gamma, rate_per_s: 2}\n", 7, "gamma needs cv"},
		{SMALL "serve:\n  arrivals: {process: trace}\n", 7, "needs a trace file"},
		{SMALL "serve:\n  scheduler: {token_budget: 0}\n", 7, "out of range"},
		{SMALL "serve:\n  cache: {checkpoints: 700}\n", 7, "multiple of hash_tokens"},
		{SMALL "serve:\n  cache: {page_tokens: 700}\n", 7, "not a multiple"},
		{SMALL "serve:\n  requests: {prompt_tokens: {dist: lognormal}}\n", 7, "needs a mean"},
		{SMALL "serve:\n  spec: {acceptance: [0.5]}\n", 7, "no draft tokens"},
		{SMALL "serve:\n  pd: {prefill: {gpus: 2, tp: 4}}\n", 7, "tp x dp"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct setup x;
		struct err e = {0};
		int rc = load(&x, cases[i].yaml, &e);
		char buf[1024];
		err_format(&e, buf, sizeof buf);
		if (rc == 0 || e.line != cases[i].line || !strstr(e.msg, cases[i].msg))
			fprintf(stderr, "case %zu: %s\n", i, buf);
		assert_true(rc < 0);
		assert_int_equal(e.line, cases[i].line);
		assert_non_null(strstr(e.msg, cases[i].msg));
	}
}

static void test_config_defaults(void **state)
{
	struct setup x;
	must_load(&x, SMALL);
	/* from the scenario: lengths, decode batch per DP group */
	assert_true(x.c.prompt.mean == 1024 && x.c.output.mean == 64);
	assert_int_equal(x.c.max_running, 32);
	must_load(&x, SMALL "engine: {mtp: {draft_tokens: 3, acceptance: 2.5}}\n");
	/* one constant p with 1 + p + p^2 + p^3 = 2.5 */
	double p = x.c.accept[0];
	assert_true(fabs(1 + p + p * p + p * p * p - 2.5) < 1e-9);
}

/* ---- synthetic workloads ---- */

static void test_arrivals(void **state)
{
	struct setup x;
	must_load(&x, SMALL "serve:\n  duration_s: 2000\n  arrivals: {process: poisson, rate_per_s: 5}\n");
	struct serve_workload w;
	struct err e = {0};
	assert_int_equal(serve_workload_make(&w, &x.c, &x.m, &e), 0);
	/* 10,000 expected; Poisson sd 100 */
	assert_true(w.n > 9600 && w.n < 10400);
	double sum = 0, sum2 = 0;
	for (int64_t i = 1; i < w.n; i++) {
		double g = w.req[i].arrival_s - w.req[i - 1].arrival_s;
		assert_true(g >= 0);
		sum += g;
		sum2 += g * g;
	}
	double mean = sum / (double)(w.n - 1), cv = sqrt(sum2 / (double)(w.n - 1) - mean * mean) / mean;
	assert_true(fabs(mean - 0.2) < 0.01 && fabs(cv - 1) < 0.05);
	serve_workload_release(&w);
	/* gamma with cv 3: bursts */
	must_load(&x, SMALL "serve:\n  duration_s: 4000\n  arrivals: {process: gamma, rate_per_s: 5, cv: 3}\n");
	assert_int_equal(serve_workload_make(&w, &x.c, &x.m, &e), 0);
	sum = sum2 = 0;
	for (int64_t i = 1; i < w.n; i++) {
		double g = w.req[i].arrival_s - w.req[i - 1].arrival_s;
		sum += g;
		sum2 += g * g;
	}
	mean = sum / (double)(w.n - 1);
	cv = sqrt(sum2 / (double)(w.n - 1) - mean * mean) / mean;
	assert_true(fabs(mean - 0.2) < 0.02 && fabs(cv - 3) < 0.4);
	serve_workload_release(&w);
	/* a burst: rate x duration requests at t = 0 */
	must_load(&x, SMALL "serve:\n  duration_s: 10\n  arrivals: {process: burst, rate_per_s: 3}\n");
	assert_int_equal(serve_workload_make(&w, &x.c, &x.m, &e), 0);
	assert_int_equal(w.n, 30);
	assert_true(w.req[29].arrival_s == 0);
	serve_workload_release(&w);
}

static void test_conversations(void **state)
{
	struct setup x;
	must_load(&x, SMALL "serve:\n  duration_s: 10\n  arrivals: {rate_per_s: 1}\n"
			    "  requests: {prompt_tokens: 1000, output_tokens: 100, turns: 4, turn_tokens: 50, think_s: 2}\n");
	struct serve_workload w;
	struct err e = {0};
	assert_int_equal(serve_workload_make(&w, &x.c, &x.m, &e), 0);
	assert_int_equal(w.n % 4, 0);
	for (int64_t i = 0; i < w.n; i += 4) {
		assert_int_equal(w.req[i].after, -1);
		for (int k = 1; k < 4; k++) {
			/* the whole context of the turn before, plus 50 new tokens */
			assert_int_equal(w.req[i + k].after, i + k - 1);
			assert_int_equal(w.req[i + k].prompt_tokens, 1000 + k * 150);
			assert_true(w.req[i + k].seg_id[1] == w.req[i].seg_id[1]);
		}
	}
	serve_workload_release(&w);
}

/* ---- step costs ---- */

/* A step never costs less when a size grows (serve/costs.h), on random draws. */
static void test_costs_monotone(void **state)
{
	struct setup x;
	must_load(&x, "model: kimi-k3\nhw: h200\ngpus: 16\nparallel: {tp: 8, dp: 2, ep: 16}\n"
		      "engine: {mtp: {draft_tokens: 2, acceptance: 2}}\n");
	struct serve_costs c;
	struct err e = {0};
	struct model draft;
	sim_draft_model(&x.m, 1, &draft);
	struct serve_costs_opts o = {.draft = &draft, .draft_tokens = 2, .max_b = 200, .max_p = 8192,
				     .max_ctx = 300000, .decode = true, .prefill = true};
	assert_int_equal(serve_costs_build(&c, &x.s, &x.m, &x.hw, &o, &e), 0);
	assert_true(c.points > 100 && c.peak_act_bytes > 0);
	uint64_t seed = 12345;
	for (int it = 0; it < 20000; it++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		int64_t b = (int64_t)(seed >> 33) % 220, p = (int64_t)(seed >> 13) % 9000, n = 1 + (int64_t)(seed >> 50) % 16;
		double ctx = (double)((seed >> 20) % 400000), pre = (double)((seed >> 7) % 400000);
		double fill = 1 + (double)((seed >> 40) % 100) / 99.0; /* dp = 2 */
		double t = serve_costs_step(&c, b, p, n, ctx, pre, fill);
		assert_true(t >= 0 && isfinite(t));
		if (b == 0 && p == 0)
			continue;
		int axis = it % 5;
		double grown = serve_costs_step(&c, b + (axis == 0) * (1 + b / 3), p + (axis == 1) * (1 + p / 3), n,
						ctx + (axis == 2) * (1 + ctx / 3), pre + (axis == 3) * (1 + pre / 3),
						axis == 4 ? 2 : fill);
		if (grown < t * (1 - 1e-12))
			fprintf(stderr, "axis %d: b %lld p %lld n %lld ctx %g pre %g: %g -> %g\n", axis, (long long)b,
				(long long)p, (long long)n, ctx, pre, t, grown);
		assert_true(grown >= t * (1 - 1e-12));
	}
	/* a grid point is the timeline's step: pure decode of 32 per group at context 0 */
	struct phase ph;
	sim_phase_init(&x.s, PHASE_DECODE, 64, 3, 0, &ph);
	double verify = ok_step(&x.s, &x.m, &x.hw, &ph, NULL, 1);
	sim_phase_init(&x.s, PHASE_DECODE, 64, 1, 0, &ph);
	double d = ok_step(&x.s, &draft, &x.hw, &ph, NULL, 1);
	assert_true(fabs(serve_costs_step(&c, 32, 0, 1, 0, 0, 2) - (verify + 2 * d)) < 1e-12);
	/* the busiest group alone: the timeline's step with the other group idle */
	sim_phase_init(&x.s, PHASE_DECODE, 32, 3, 0, &ph);
	ph.dp_groups = 1;
	double verify1 = ok_step(&x.s, &x.m, &x.hw, &ph, NULL, 1);
	sim_phase_init(&x.s, PHASE_DECODE, 32, 1, 0, &ph);
	ph.dp_groups = 1;
	double d1 = ok_step(&x.s, &draft, &x.hw, &ph, NULL, 1);
	double alone = serve_costs_step(&c, 32, 0, 1, 0, 0, 1);
	assert_true(fabs(alone - (verify1 + 2 * d1)) < 1e-12);
	assert_true(alone < verify + 2 * d);
	serve_costs_release(&c);
}

/* ---- the engine ---- */

/* Every request done; Little's law over the run (the integral of requests in the system equals
 * the sum of their times in it); tokens conserved: every output token emitted once, every prompt
 * token prefilled or reused (plus what preemption recomputed). */
static void test_engine_invariants(void **state)
{
	struct setup x;
	must_load(&x, SMALL "serve:\n  duration_s: 60\n  arrivals: {rate_per_s: 3}\n"
			    "  requests:\n    prompt_tokens: {dist: lognormal, mean: 3000, cv: 1.5, max: 60000}\n"
			    "    output_tokens: {dist: exponential, mean: 150, max: 2000}\n"
			    "  scheduler: {max_running: 64, token_budget: 4096}\n");
	struct serve_workload w;
	struct serve_result r;
	run_ok(&x, &w, &r);
	const struct serve_summary *S = &r.sum;
	assert_int_equal(S->completed, w.n);
	int64_t out = 0, prompt = 0;
	for (int64_t i = 0; i < w.n; i++) {
		out += w.req[i].output_tokens;
		prompt += w.req[i].prompt_tokens;
		const struct serve_record *q = &r.rec[i];
		assert_int_equal(q->output_tokens, w.req[i].output_tokens);
		assert_true(q->arrival_s <= q->admit_s && q->admit_s <= q->first_token_s && q->first_token_s <= q->done_s);
		assert_true(q->ttft_s > 0);
	}
	assert_int_equal(S->output_tokens, out);
	assert_int_equal(S->prompt_tokens, prompt);
	/* what the steps did, counted apart from the requests */
	assert_int_equal(S->step_output_tokens, out);
	assert_int_equal(S->step_prefill_tokens, S->prefill_tokens);
	/* no shared prefix and no preemption here: every prompt token prefilled exactly once */
	assert_int_equal(S->preemptions, 0);
	assert_int_equal(S->cached_tokens, 0);
	assert_int_equal(S->prefill_tokens, prompt);
	assert_true(S->little_l > 0);
	assert_true(fabs(S->little_l - S->little_lambda_w) < 1e-9 * S->little_l);
	assert_true(S->ttft.p50 <= S->ttft.p90 && S->ttft.p90 <= S->ttft.p99 && S->ttft.p99 <= S->ttft.max);
	assert_true(S->itl.n > 0 && S->itl.p50 > 0 && S->itl.p50 <= S->itl.p99);
	assert_true(S->hbm_peak_bytes <= x.hw.hbm_bytes);
	assert_true(r.n_samples > 60);
	serve_result_release(&r);
	serve_workload_release(&w);
}

/* A lone request on a DP2 layout costs what `k3sim run` says one request costs: the other DP
 * group is idle, so the MoE sees one group's tokens (it was charged as loaded as the busy one). */
static void test_engine_lone_request(void **state)
{
	struct setup x;
	must_load(&x, "model: kimi-linear\nhw: h200\ngpus: 2\nparallel: {tp: 1, dp: 2, ep: 2}\n"
		      "workload: {batch: 1, prompt_tokens: 4096, output_tokens: 33}\n"
		      "serve:\n  max_requests: 1\n  arrivals: {process: burst}\n"
		      "  requests: {prompt_tokens: 4096, output_tokens: 33, system_tokens: 0}\n"
		      "  scheduler: {max_running: 1, token_budget: 4096}\n  cache: {prefix: false}\n");
	struct sim_result sr;
	struct err e = {0};
	assert_int_equal(sim_run(&x.s, &x.m, &x.hw, &sr, &e), 0);
	struct serve_workload w;
	struct serve_result r;
	run_ok(&x, &w, &r);
	assert_int_equal(r.n_rec, 1);
	assert_true(fabs(r.rec[0].ttft_s - sr.ttft_s) <= 1e-9 * sr.ttft_s);
	/* decode at contexts 4096..4128 against run's step at the mean context */
	assert_true(fabs(r.sum.tpot.p50 - sr.tpot_s) <= 0.01 * sr.tpot_s);
	serve_result_release(&r);
	serve_workload_release(&w);
}

/* The same seed gives the same result bit for bit; another seed does not. */
static void test_engine_determinism(void **state)
{
	const char *y = SMALL "serve:\n  seed: 7\n  duration_s: 30\n  arrivals: {process: gamma, rate_per_s: 4, cv: 2}\n"
			      "  requests: {prompt_tokens: {dist: exponential, mean: 2000}, "
			      "output_tokens: {dist: exponential, mean: 100}}\n";
	struct setup x;
	must_load(&x, y);
	struct serve_workload w1, w2;
	struct serve_result r1, r2;
	run_ok(&x, &w1, &r1);
	run_ok(&x, &w2, &r2);
	assert_int_equal(r1.n_rec, r2.n_rec);
	assert_memory_equal(r1.rec, r2.rec, (size_t)r1.n_rec * sizeof *r1.rec);
	assert_true(r1.sum.ttft.p90 == r2.sum.ttft.p90 && r1.sum.itl.p99 == r2.sum.itl.p99);
	serve_result_release(&r2);
	serve_workload_release(&w2);
	x.c.seed = 8;
	run_ok(&x, &w2, &r2);
	assert_true(r2.n_rec != r1.n_rec || memcmp(r1.rec, r2.rec, (size_t)r1.n_rec * sizeof *r1.rec) != 0);
	serve_result_release(&r1);
	serve_result_release(&r2);
	serve_workload_release(&w1);
	serve_workload_release(&w2);
}

/* Overload: a queue builds, HBM fills, requests are preempted and recomputed, yet every one
 * finishes and tokens are conserved. */
static void test_engine_overload(void **state)
{
	struct setup x;
	must_load(&x, SMALL "options: {reserved_gib: 60}\n"
			    "serve:\n  duration_s: 10\n  arrivals: {rate_per_s: 40}\n"
			    "  requests: {prompt_tokens: 20000, output_tokens: {dist: uniform, min: 3000, max: 9000}}\n"
			    "  scheduler: {max_running: 256, token_budget: 16384, kv_watermark: 1.0}\n"
			    "  cache: {prefix: false}\n");
	struct serve_workload w;
	struct serve_result r;
	run_ok(&x, &w, &r);
	assert_int_equal(r.sum.completed, w.n);
	assert_true(r.sum.preemptions > 0);
	assert_true(r.sum.recomputed_tokens > 0);
	assert_int_equal(r.sum.step_prefill_tokens, r.sum.prefill_tokens);
	assert_int_equal(r.sum.step_output_tokens, r.sum.output_tokens);
	/* what preemption recomputed is each victim's prompt and what it had generated */
	int64_t lost = 0;
	for (int64_t i = 0; i < r.n_rec; i++)
		assert_true(r.rec[i].prefill_tokens >= r.rec[i].prompt_tokens);
	for (int64_t i = 0; i < r.n_rec; i++)
		lost += r.rec[i].prefill_tokens - r.rec[i].prompt_tokens;
	assert_int_equal(lost, r.sum.recomputed_tokens);
	assert_true(fabs(r.sum.little_l - r.sum.little_lambda_w) < 1e-9 * r.sum.little_l);
	serve_result_release(&r);
	serve_workload_release(&w);
}

/* Queue samples are bounded: a fine interval over a long run is thinned, in time order. */
static void test_samples_bounded(void **state)
{
	struct setup x;
	must_load(&x, SMALL "serve:\n  duration_s: 200\n  arrivals: {rate_per_s: 0.5}\n  sample_s: 0.001\n");
	struct serve_workload w;
	struct serve_result r;
	run_ok(&x, &w, &r);
	assert_true(r.n_samples > SERVE_MAX_SAMPLES / 4 && r.n_samples <= SERVE_MAX_SAMPLES + 1);
	for (int64_t i = 1; i < r.n_samples; i++)
		assert_true(r.samples[i].t_s >= r.samples[i - 1].t_s);
	assert_true(r.samples[r.n_samples - 1].in_system == 0);
	serve_result_release(&r);
	serve_workload_release(&w);
}

/* A request that cannot fit in an empty pool is an error naming it, not a hang. */
static void test_engine_too_big(void **state)
{
	struct setup x;
	must_load(&x, SMALL "serve:\n  max_requests: 3\n  arrivals: {process: burst}\n"
			    "  requests: {prompt_tokens: 900000000, output_tokens: 10}\n");
	struct serve_workload w;
	struct serve_result r;
	struct err e = {0};
	struct serve_opts o = {0};
	assert_int_equal(serve_workload_make(&w, &x.c, &x.m, &e), 0);
	assert_int_equal(serve_run(&x.s, &x.m, &x.hw, &x.c, &w, &o, &r, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, "request 0"));
	serve_workload_release(&w);
}

/* SGLang's admission against a pool sized by mem_fraction_static, and the host time per step. */
static void test_sglang_admission(void **state)
{
	(void)state;
	static const char *const base = SMALL "serve:\n  max_requests: 16\n  arrivals: {process: burst, rate_per_s: 1}\n"
					      "  requests: {prompt_tokens: 60000, output_tokens: 64}\n"
					      "  cache: {prefix: false}\n";
	char yaml[1024];
	struct setup x;
	struct serve_workload w;
	struct serve_result r[3];
	const char *const sched[] = {"  scheduler: {mixed: false, token_budget: 4096, mem_fraction_static: 0.7}\n",
				     "  scheduler: {mixed: false, token_budget: 4096, mem_fraction_static: 0.7, "
				     "admission: sglang}\n",
				     "  scheduler: {mixed: false, token_budget: 4096, mem_fraction_static: 0.7, "
				     "admission: sglang}\nengine: {step_overhead_us: 1500}\n"};
	for (int k = 0; k < 3; k++) {
		snprintf(yaml, sizeof yaml, "%s%s", base, sched[k]);
		must_load(&x, yaml);
		run_ok(&x, &w, &r[k]);
		assert_int_equal(r[k].sum.completed, 16);
		assert_int_equal(r[k].sum.step_output_tokens, r[k].sum.output_tokens);
		serve_workload_release(&w);
	}
	struct sim_hbm h;
	sim_hbm(&x.s, &x.m, &x.hw, 0, 0, 0, &h);
	assert_int_equal(r[0].sum.hbm_pool_bytes, (int64_t)(0.7 * (double)h.capacity) - h.weights);
	/* host time: the same steps, each 1.5 ms later */
	assert_int_equal(r[2].sum.steps, r[1].sum.steps);
	assert_true(fabs(r[2].sum.makespan_s - r[1].sum.makespan_s - 1.5e-3 * (double)r[2].sum.steps) < 1e-6);
	for (int k = 0; k < 3; k++)
		serve_result_release(&r[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_k3sim_jsonl),  cmocka_unit_test(test_trace_mooncake),
		cmocka_unit_test(test_trace_azure),        cmocka_unit_test(test_trace_k3sim_csv),
		cmocka_unit_test(test_trace_errors),       cmocka_unit_test(test_trace_file),
		cmocka_unit_test(test_config_errors),      cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_arrivals),           cmocka_unit_test(test_conversations),
		cmocka_unit_test(test_costs_monotone),     cmocka_unit_test(test_engine_invariants),
		cmocka_unit_test(test_engine_lone_request),
		cmocka_unit_test(test_engine_determinism), cmocka_unit_test(test_engine_overload),
		cmocka_unit_test(test_engine_too_big),     cmocka_unit_test(test_samples_bounded), cmocka_unit_test(test_sglang_admission),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
