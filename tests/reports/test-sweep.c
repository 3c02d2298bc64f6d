/* reports/: sweep specs, evaluation (equal to sim_run), parallel runs, SQLite/CSV, shard merging. */
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
#include <unistd.h>

#include "sweep/sweep.h"
#include "sweep/sweepdb.h"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof dir, "/tmp/k3sweep-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text)
{
	static char path[8][256];
	static int slot;
	char *p = path[slot++ % 8];
	snprintf(p, 256, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static const char base_yaml[] = "name: t\n"
                                "model: kimi-k3\n"
                                "hw: h200\n"
                                "gpus: 16\n"
                                "parallel: {tp: 8, dp: 2, ep: 16}\n"
                                "workload: {batch: 64, prompt_tokens: 8192, output_tokens: 256}\n";

/* ---- evaluation equals sim_run ---- */

static int collect(void *ctx, const struct sweep_row *in, int64_t n, struct err *err)
{
	struct {
		struct sweep_row *rows;
		int64_t n;
	} *ss = ctx;
	memcpy(ss->rows + ss->n, in, (size_t)n * sizeof *in);
	ss->n += n;
	return 0;
}

static void expect_equal_result(const struct sweep_row *row, const struct sim_result *r)
{
	assert_int_equal(row->ok, 1);
	/* Bit for bit: the same operations in the same order. */
	assert_true(row->ttft_s == r->ttft_s);
	assert_true(row->tpot_s == r->tpot_s);
	assert_true(row->tpot_first_s == r->tpot_first_s);
	assert_true(row->tpot_last_s == r->tpot_last_s);
	assert_true(row->e2e_s == r->e2e_s);
	assert_true(row->tokens_per_s == r->tokens_per_s);
	assert_true(row->tokens_per_s_per_gpu == r->tokens_per_s_per_gpu);
	assert_int_equal(row->prefill_chunks, r->prefill_chunks);
	assert_int_equal(row->decode_context, r->decode_context);
	assert_int_equal(row->requests_per_gpu, r->requests_per_gpu);
	assert_int_equal(row->fits, r->fits);
	assert_int_equal(row->missing_bytes, r->missing_bytes);
	assert_int_equal(row->max_batch, r->max_batch);
	assert_int_equal(row->hbm_weights, r->hbm.weights);
	assert_int_equal(row->hbm_kda_state, r->hbm.kda_state);
	assert_int_equal(row->hbm_conv_state, r->hbm.conv_state);
	assert_int_equal(row->hbm_mla_kv, r->hbm.mla_kv);
	assert_int_equal(row->hbm_dsa_index, r->hbm.dsa_index);
	assert_int_equal(row->hbm_activations, r->hbm.activations);
	assert_int_equal(row->hbm_workspace, r->hbm.workspace);
	assert_int_equal(row->hbm_total, r->hbm.total);
	assert_int_equal(row->hbm_capacity, r->hbm.capacity);
	assert_true(row->decode_compute_s == r->decode.compute_s);
	assert_true(row->decode_memory_s == r->decode.memory_s);
	assert_true(row->decode_latency_s == r->decode.latency_s);
	assert_true(row->decode_comm_s == r->decode.comm_s);
	assert_true(row->prefill_tokens_per_s_per_gpu == r->prefill_tokens_per_s_per_gpu);
	assert_true(row->decode_step_s == r->decode_step_s);
	assert_true(row->prefill_exposed_comm_s == r->prefill.exposed_comm_s);
	assert_true(row->decode_exposed_comm_s == r->decode.exposed_comm_s);
	assert_true(row->prefill_critical_comm_s == r->prefill.critical_comm_s);
	assert_true(row->decode_critical_comm_s == r->decode.critical_comm_s);
	/* The op classes add up to the phase times. */
	double pre = 0, dec = 0;
	for (int c = 0; c < OPC_COUNT; c++) {
		assert_true(row->prefill_s[c] >= 0 && row->decode_s[c] >= 0);
		pre += row->prefill_s[c];
		dec += row->decode_s[c];
	}
	assert_true(fabs(pre - r->prefill.time_s) <= 1e-9 * r->prefill.time_s);
	assert_true(fabs(dec - r->decode.time_s) <= 1e-9 * r->decode.time_s);
}

/* Every point of a sweep over models, contexts, batches, output lengths, layouts and dtypes equals
 * sim_run on the point's scenario, although the sweep computes each prefill once per group. */
static void test_eval_equals_sim_run(void **state)
{
	const char *p = write_file(
	    "eq.yaml", "name: eq\nmodel: kimi-k3\nhw: h200\ngpus: 16\n"
	               "parallel: {tp: 8, dp: 2, ep: 16}\n"
	               "workload: {batch: 16, prompt_tokens: 8192, output_tokens: 64, prefill_chunk: 16384}\n"
	               "sweep:\n"
	               "  model: [kimi-k3, k3-full-mla, k3-dsa, kimi-linear, deepseek-v3.2]\n"
	               "  context: [4096, 40000, 300000]\n"
	               "  cp: [1, 2]\n"
	               "  kda_state: [fp32, bf16]\n"
	               "  tp_comm: [allreduce, rs_ag]\n"
	               "  batch: [1, 24]\n"
	               "  output_tokens: [1, 100]\n");
	struct sweep_spec sp;
	struct err e;
	if (sweep_spec_load(&sp, p, &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	assert_int_equal(sp.points, 5 * 3 * 2 * 2 * 2 * 2 * 2);
	struct sweep_row *rows = calloc((size_t)sp.points, sizeof *rows);
	struct sim_result *r = malloc(sizeof *r);
	assert_non_null(rows);
	assert_non_null(r);
	struct sink_state {
		struct sweep_row *rows;
		int64_t n;
	} ss = {rows, 0};
	struct sweep_opts o = {.threads = 2, .shard_count = 1};
	struct sweep_stats st;
	assert_int_equal(sweep_run(&sp, &o, collect, &ss, &st, &e), 0);
	assert_int_equal(ss.n, sp.points);
	assert_int_equal(st.invalid, 0);
	/* batch x output_tokens share a prefill. */
	assert_int_equal(st.prefills, sp.points / 4);
	for (int64_t i = 0; i < sp.points; i++) {
		struct sweep_point pt;
		assert_int_equal(sweep_spec_point(&sp, i, &pt, &e), 0);
		assert_int_equal(rows[i].point, i);
		if (sim_run(&pt.s, pt.m, pt.hw, r, &e) < 0)
			fail_msg("point %lld: %s", (long long)i, e.msg);
		expect_equal_result(&rows[i], r);
	}
	/* The prefill chunk comes from the scenario's uncapped value, capped per point. */
	assert_int_equal(rows[0].prefill_chunk, 4096);
	assert_int_equal(rows[2 * 2 * 2 * 2 * 2].prefill_chunk, 16384);
	free(r);
	free(rows);
	sweep_spec_release(&sp);
}

/* ---- spec: order, layout rules, ranges ---- */

static void test_point_order_and_layout(void **state)
{
	char text[1024];
	snprintf(text, sizeof text, "%s%s", base_yaml,
	         "sweep:\n  tp: [4, 8, 3]\n  batch: {from: 1, to: 100, times: 4}\n  context: {from: 1000, "
	         "to: 3000, step: 1000}\n");
	const char *p = write_file("order.yaml", text);
	struct sweep_spec sp;
	struct err e;
	if (sweep_spec_load(&sp, p, &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	/* batch 1, 4, 16, 64 (256 > 100); context 1000, 2000, 3000. */
	assert_int_equal(sp.points, 3 * 4 * 3);
	struct sweep_point pt;
	/* The first axis is the slowest, the last the fastest. */
	assert_int_equal(sweep_spec_point(&sp, 0, &pt, &e), 0);
	assert_int_equal(pt.s.tp, 4);
	assert_int_equal(pt.s.dp, 4); /* derived: 16 / (4 x 1) */
	assert_int_equal(pt.s.batch, 1);
	assert_int_equal(pt.s.prompt_tokens, 1000);
	assert_int_equal(pt.s.output_tokens, 256); /* context keeps the output */
	assert_int_equal(pt.s.prefill_chunk, 1000);
	assert_int_equal(sweep_spec_point(&sp, 1, &pt, &e), 0);
	assert_int_equal(pt.s.prompt_tokens, 2000);
	assert_int_equal(sweep_spec_point(&sp, 3, &pt, &e), 0);
	assert_int_equal(pt.s.batch, 4);
	assert_int_equal(sweep_spec_point(&sp, 12 + 3 * 3 + 2, &pt, &e), 0);
	assert_int_equal(pt.s.tp, 8);
	assert_int_equal(pt.s.dp, 2);
	assert_int_equal(pt.s.batch, 64);
	assert_int_equal(pt.s.prompt_tokens, 3000);
	/* tp 3 does not divide 16 GPUs: the point is invalid, with the reason. */
	assert_int_equal(sweep_spec_point(&sp, 24, &pt, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "does not divide gpus 16"));
	struct sweep_scratch *sc = malloc(sizeof *sc);
	struct sweep_row row;
	assert_non_null(sc);
	/* A point whose layout passes but the model does not take (tp vs heads) is a row too. */
	sweep_spec_release(&sp);
	snprintf(text, sizeof text, "%s%s", base_yaml, "sweep:\n  gpus: [16, 20]\n  tp: [5]\n");
	p = write_file("heads.yaml", text);
	if (sweep_spec_load(&sp, p, &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	assert_int_equal(sweep_spec_point(&sp, 1, &pt, &e), 0); /* 20 = 5 x 4 */
	assert_int_equal(pt.s.ep, 20);                          /* ep followed gpus */
	sweep_eval_point(&pt, sc, &row);
	assert_int_equal(row.ok, 0);
	assert_non_null(strstr(row.error, "does not divide the 96 KDA heads"));
	free(sc);
	sweep_spec_release(&sp);
}

/* Points are checked by the scenario file's own rule (scenario_check, issue 15): with pipeline
 * stages, a swept tp derives dp over tp x cp x pp, as a scenario file defaults it. Before, the
 * sweep's copy of the check ignored pp: tp 4 on 16 GPUs in 2 stages took dp 4 (32 GPUs). */
static void test_points_checked_as_scenarios(void **state)
{
	(void)state;
	const char *p = write_file("pp.yaml", "name: pp\nmodel: kimi-k3\nhw: h200\ngpus: 16\n"
	                                      "parallel: {tp: 8, dp: 1, pp: 2, ep: 8}\n"
	                                      "workload: {batch: 8, prompt_tokens: 4096, output_tokens: 64}\n"
	                                      "sweep:\n  tp: [4, 8, 16]\n");
	struct sweep_spec sp;
	struct err e;
	if (sweep_spec_load(&sp, p, &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
	struct sweep_point pt;
	assert_int_equal(sweep_spec_point(&sp, 0, &pt, &e), 0);
	assert_int_equal(pt.s.tp, 4);
	assert_int_equal(pt.s.dp, 2); /* 16 / (4 x 1 x 2) */
	assert_int_equal(sweep_spec_point(&sp, 1, &pt, &e), 0);
	assert_int_equal(pt.s.dp, 1);
	assert_int_equal(sweep_spec_point(&sp, 2, &pt, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "tp x cp x pp = 16 x 1 x 2 does not divide gpus 16"));
	sweep_spec_release(&sp);
}

/* A scenario without a sweep is one point; embedded scenarios load too. */
static void test_no_axes(void **state)
{
	struct sweep_spec sp;
	struct err e;
	assert_int_equal(sweep_spec_load(&sp, "default", &e), 0);
	assert_int_equal(sp.points, 1);
	assert_int_equal(sp.n_axes, 0);
	sweep_spec_release(&sp);
}

/* ---- bad specs: file:line:col ---- */

struct bad_case {
	const char *sweep;  /* the text after "sweep:\n" */
	int line, col;      /* where the error must point (lines of base_yaml: 6) */
	const char *needle; /* part of the message */
};

static void test_bad_specs(void **state)
{
	static const struct bad_case cases[] = {
	    {"  contxt: [4096]\n", 8, 3, "unknown axis 'contxt' (did you mean 'context'?)"},
	    {"  context: [4096, x]\n", 8, 19, "expected an integer"},
	    {"  context: [4096, 0]\n", 8, 19, "out of range"},
	    {"  context: [4096, 4096]\n", 8, 19, "listed twice"},
	    {"  context: []\n", 8, 12, "empty"},
	    {"  batch: {from: 1, to: 8}\n", 8, 10, "'times' (geometric) or 'step'"},
	    {"  batch: {from: 1, to: 8, times: 1}\n", 8, 34, "times must be at least 2"},
	    {"  batch: {from: 1, to: 8, step: 1, frm: 2}\n", 8, 36, "unknown key 'frm'"},
	    {"  model: [kimi-k3, kimi-k4]\n", 8, 20, "unknown model 'kimi-k4' (did you mean 'kimi-k3'?)"},
	    {"  hw: [h200, h300]\n", 8, 14, "unknown hardware 'h300'"},
	    {"  kda_state: [fp32, fp8]\n", 8, 21, "'fp8' is not one of fp32, bf16"},
	    {"  tp_comm: [ring]\n", 8, 13, "expected allreduce or rs_ag"},
	    {"  moe_imbalance: [0.5]\n", 8, 19, "must be in [1, 64]"},
	    {"  model: {from: 1, to: 2, step: 1}\n", 8, 10, "ranges are for integer axes"},
	    {"  context: [4096]\n  prompt_tokens: [10]\n", 9, 3, "not both"},
	    {"  batch: [1]\n  batch: [2]\n", 9, 3, "duplicate key 'batch'"},
	    {"  - context\n", 8, 3, "expected a mapping"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text, "%ssweep:\n%s", base_yaml, cases[i].sweep);
		const char *p = write_file("bad.yaml", text);
		struct sweep_spec sp;
		struct err e;
		memset(&e, 0, sizeof e);
		int rc = sweep_spec_load(&sp, p, &e);
		if (rc == 0)
			fail_msg("case %zu: '%s' loaded", i, cases[i].sweep);
		if (getenv("K3_TEST_VERBOSE"))
			printf("%s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
		if (strcmp(e.file, p) != 0 || e.line != cases[i].line || e.col != cases[i].col ||
		    !strstr(e.msg, cases[i].needle))
			fail_msg("case %zu: got %s:%d:%d: %s; wanted %d:%d '%s'", i, e.file, e.line, e.col,
			         e.msg, cases[i].line, cases[i].col, cases[i].needle);
	}
}

/* ---- runs: threads, shards, SQLite, CSV, merge ---- */

static const char grid_yaml[] = "sweep:\n"
                                "  model: [kimi-k3, k3-dsa]\n"
                                "  context: [4096, 32768, 131072]\n"
                                "  tp: [8, 3]\n"
                                "  batch: [1, 2, 4, 8, 16, 32, 64]\n";

static void run_to_db(const struct sweep_spec *sp, const char *path, int threads, int64_t k, int64_t n)
{
	struct sweepdb db;
	struct sweepdb_meta meta;
	struct err e;
	sweepdb_meta_init(&meta, sp, k, n);
	if (sweepdb_create(&db, path, &meta, NULL, &e) < 0)
		fail_msg("%s", e.msg);
	struct sweep_opts o = {.threads = threads, .shard_index = k, .shard_count = n};
	struct sweep_stats st;
	assert_int_equal(sweep_run(sp, &o, sweepdb_sink, &db, &st, &e), 0);
	assert_int_equal(st.points, sweep_shard_points(sp->points, k, n));
	if (sweepdb_commit(&db, &e) < 0)
		fail_msg("%s", e.msg);
}

static void read_all(const char *path, struct sweep_row **rows, int64_t *n)
{
	struct err e;
	if (sweepdb_read(path, "points", rows, n, 1000000, &e) < 0)
		fail_msg("%s", e.msg);
}

static void expect_same_rows(const struct sweep_row *a, const struct sweep_row *b, int64_t n)
{
	/* Rows read back are zero-filled before the columns are set: bytes compare. */
	for (int64_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], sizeof a[i]) != 0)
			fail_msg("row %lld differs", (long long)i);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = 0;
	fclose(f);
	return buf;
}

static void test_shards_merge_to_whole(void **state)
{
	char text[1024], whole[256], one[256], out[256], shard[3][256], csv_a[256], csv_b[256];
	snprintf(text, sizeof text, "%s%s", base_yaml, grid_yaml);
	const char *p = write_file("grid.yaml", text);
	struct sweep_spec sp;
	struct err e;
	if (sweep_spec_load(&sp, p, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(sp.points, 2 * 3 * 2 * 7);
	snprintf(whole, sizeof whole, "%s/whole.db", dir);
	snprintf(one, sizeof one, "%s/one.db", dir);
	run_to_db(&sp, whole, 2, 0, 1);
	run_to_db(&sp, one, 1, 0, 1);
	const char *inputs[3];
	for (int k = 0; k < 3; k++) {
		snprintf(shard[k], sizeof shard[k], "%s/shard%d.db", dir, k + 1);
		run_to_db(&sp, shard[k], 2, k, 3);
	}
	/* Given in any order. */
	inputs[0] = shard[2];
	inputs[1] = shard[0];
	inputs[2] = shard[1];
	snprintf(out, sizeof out, "%s/merged.db", dir);
	struct sweepdb_merge_stats ms;
	if (sweepdb_merge(out, inputs, 3, false, false, &ms, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(ms.points, sp.points);

	struct sweep_row *a, *b, *c;
	int64_t na, nb, nc;
	read_all(whole, &a, &na);
	read_all(one, &b, &nb);
	read_all(out, &c, &nc);
	assert_int_equal(na, sp.points);
	assert_int_equal(nb, na);
	assert_int_equal(nc, na);
	expect_same_rows(a, b, na); /* one thread or two: the same rows */
	expect_same_rows(a, c, na); /* merged shards: the whole sweep */
	int64_t invalid = 0;
	for (int64_t i = 0; i < na; i++) {
		assert_int_equal(a[i].point, i);
		invalid += !a[i].ok;
	}
	assert_int_equal(invalid, sp.points / 2); /* tp 3 */
	free(a);
	free(b);
	free(c);

	/* CSV from both databases: byte for byte. */
	snprintf(csv_a, sizeof csv_a, "%s/a.csv", dir);
	snprintf(csv_b, sizeof csv_b, "%s/b.csv", dir);
	FILE *fa = fopen(csv_a, "w"), *fb = fopen(csv_b, "w");
	assert_int_equal(sweepdb_export_csv(whole, fa, &e), 0);
	assert_int_equal(sweepdb_export_csv(out, fb, &e), 0);
	fclose(fa);
	fclose(fb);
	char *ta = slurp(csv_a), *tb = slurp(csv_b);
	assert_string_equal(ta, tb);
	/* Header plus one line per point. */
	int64_t lines = 0;
	for (char *q = ta; *q; q++)
		lines += *q == '\n';
	assert_int_equal(lines, sp.points + 1);
	free(ta);
	free(tb);

	/* Overlap, missing shards, and a different sweep are refused. */
	const char *dup[2] = {shard[0], shard[0]};
	assert_true(sweepdb_merge(out, dup, 2, false, true, &ms, &e) < 0);
	assert_non_null(strstr(e.msg, "overlaps"));
	const char *two[2] = {shard[0], shard[2]};
	assert_true(sweepdb_merge(out, two, 2, false, true, &ms, &e) < 0);
	assert_non_null(strstr(e.msg, "1 of 3 shards missing: 2"));
	/* an existing output is replaced only with force */
	assert_int_equal(sweepdb_merge(out, two, 2, true, false, &ms, &e), -EEXIST);
	read_all(out, &c, &nc);
	assert_int_equal(nc, sp.points); /* still the whole merge */
	free(c);
	assert_int_equal(sweepdb_merge(out, two, 2, true, true, &ms, &e), 0);
	assert_int_equal(ms.missing_shards, 1);
	const char *mixed[2] = {shard[0], whole};
	assert_true(sweepdb_merge(out, mixed, 2, false, true, &ms, &e) < 0);
	assert_non_null(strstr(e.msg, "shards"));
	/* the output is a shard, however it is spelt: refused, even with force */
	char dotted[300];
	snprintf(dotted, sizeof dotted, "%s/./shard1.db", dir);
	const char *all[3] = {shard[0], shard[1], shard[2]};
	assert_int_equal(sweepdb_merge(dotted, all, 3, false, true, &ms, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "is also an input"));
	read_all(shard[0], &c, &nc);
	assert_int_equal(nc, sweep_shard_points(sp.points, 0, 3)); /* shard 1 is intact */
	free(c);
	sweep_spec_release(&sp);

	snprintf(text, sizeof text, "%s%s", base_yaml, "sweep:\n  batch: [1, 2]\n");
	p = write_file("other.yaml", text);
	assert_int_equal(sweep_spec_load(&sp, p, &e), 0);
	char other[256];
	snprintf(other, sizeof other, "%s/other.db", dir);
	run_to_db(&sp, other, 1, 0, 1);
	const char *diff[2] = {whole, other};
	assert_true(sweepdb_merge(out, diff, 2, false, true, &ms, &e) < 0);
	assert_non_null(strstr(e.msg, "different sweep"));
	sweep_spec_release(&sp);
}

/* A sweep larger than one block streams through the sink in point order. */
static void test_blocks_in_order(void **state)
{
	char text[1024];
	snprintf(text, sizeof text, "%s%s", base_yaml,
	         "sweep:\n  batch: {from: 1, to: 3000, step: 1}\n  output_tokens: [1, 2, 3, 4, 5, 6]\n");
	const char *p = write_file("big.yaml", text);
	struct sweep_spec sp;
	struct err e;
	assert_int_equal(sweep_spec_load(&sp, p, &e), 0);
	assert_int_equal(sp.points, 18000);
	struct sweep_row *rows = malloc((size_t)sp.points * sizeof *rows);
	assert_non_null(rows);
	struct {
		struct sweep_row *rows;
		int64_t n;
	} ss = {rows, 0};
	struct sweep_opts o = {.threads = 3, .shard_count = 1};
	struct sweep_stats st;
	assert_int_equal(sweep_run(&sp, &o, collect, &ss, &st, &e), 0);
	assert_int_equal(ss.n, sp.points);
	assert_int_equal(st.prefills, 2); /* one per block: batch and output share it */
	for (int64_t i = 0; i < sp.points; i++) {
		assert_int_equal(rows[i].point, i);
		assert_int_equal(rows[i].batch, 1 + i / 6);
		assert_int_equal(rows[i].output_tokens, 1 + i % 6);
	}
	free(rows);
	sweep_spec_release(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eval_equals_sim_run),
	    cmocka_unit_test(test_point_order_and_layout),
	    cmocka_unit_test(test_points_checked_as_scenarios),
	    cmocka_unit_test(test_no_axes),
	    cmocka_unit_test(test_bad_specs),
	    cmocka_unit_test(test_shards_merge_to_whole),
	    cmocka_unit_test(test_blocks_in_order),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
