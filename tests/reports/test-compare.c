/* reports/: the comparison (grid, largest batch, crossovers, DSA, claims) and the report files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/compare.h"
#include "reports/report.h"

static char dir[64];
static struct compare cmp; /* the default comparison, shared by the tests */

static int setup(void **state)
{
	struct err e;
	snprintf(dir, sizeof dir, "/tmp/k3cmp-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	struct compare_opts o = {.threads = 2};
	if (compare_run(&cmp, "compare-default", &o, &e) < 0) {
		fprintf(stderr, "compare_run: %s\n", e.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	compare_release(&cmp);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_grid(void **state)
{
	/* compare-default: three designs, 4K..1M, batches 1, 16, 64 with 16 the reference. */
	assert_int_equal(cmp.n_models, 3);
	assert_int_equal(cmp.n_contexts, 9);
	assert_int_equal(cmp.n_batches, 3);
	assert_int_equal(compare_batch(&cmp, cmp.ref_batch), 16);
	assert_string_equal(compare_model(&cmp, 0)->name, "kimi-k3");
	assert_int_equal(compare_context(&cmp, 0), 4096);
	assert_int_equal(compare_context(&cmp, 8), 1048576);
	for (int m = 0; m < 3; m++)
		for (int x = 0; x < 9; x++)
			for (int b = 0; b < 3; b++) {
				const struct sweep_row *r = compare_row(&cmp, m, x, b);
				assert_int_equal(r->ok, 1);
				assert_int_equal(r->prompt_tokens, compare_context(&cmp, x));
				assert_int_equal(r->batch, compare_batch(&cmp, b));
				assert_string_equal(r->model, compare_model(&cmp, m)->name);
			}
	/* The largest batch: evaluated there, and it fits; none at 1M for the 93-MLA designs. */
	for (int m = 0; m < 3; m++)
		for (int x = 0; x < 9; x++) {
			const struct sweep_row *ref = compare_row(&cmp, m, x, cmp.ref_batch),
			                       *best = compare_best(&cmp, m, x);
			if (ref->max_batch > 0) {
				assert_int_equal(best->ok, 1);
				assert_int_equal(best->batch, ref->max_batch);
				assert_int_equal(best->fits, 1);
			} else {
				assert_int_equal(best->ok, 0);
			}
		}
	assert_int_equal(compare_best(&cmp, 0, 8)->ok, 1);
	assert_int_equal(compare_best(&cmp, 1, 8)->ok, 0);
}

/* K3's fixed state + 24 layers of latent vs 93 layers of latent: the crossover is where
 * S + k3 (C + out) < kf (C + out) first holds, exactly. */
static void test_state_kv_crossover(void **state)
{
	const struct compare_crossover *x = NULL;
	for (int i = 0; i < cmp.n_cross; i++)
		if (cmp.cross[i].metric == CMP_STATE_KV_PER_REQUEST && cmp.cross[i].a == 0 &&
		    cmp.cross[i].b == 1)
			x = &cmp.cross[i];
	assert_non_null(x);
	const struct sweep_row *k3 = compare_row(&cmp, 0, 0, 0), *full = compare_row(&cmp, 1, 0, 0);
	int64_t out = k3->output_tokens;
	int64_t S = k3->state_bytes_per_request, a = k3->kv_bytes_per_token, b = full->kv_bytes_per_token;
	assert_int_equal(full->state_bytes_per_request, 0);
	/* Smallest C with S + a (C + out) < b (C + out): C + out > S / (b - a). */
	int64_t want = S / (b - a) + 1 - out;
	assert_int_equal(x->context, want);
	assert_true(x->a_lower_above);
	/* Near 5.5K tokens with FP32 state (414 MiB + ShortConv over 79,488 B per token). */
	assert_true(x->context > 4096 && x->context < 8192);
	assert_non_null(strstr(x->text, "kimi-k3 is lower than k3-full-mla from"));
}

/* A crossover found by bisection: the order differs just below it and holds at it. */
static void test_crossovers_are_boundaries(void **state)
{
	int found = 0;
	for (int i = 0; i < cmp.n_cross; i++) {
		const struct compare_crossover *x = &cmp.cross[i];
		if (!x->context || x->metric != CMP_TPOT)
			continue;
		found++;
		/* The recorded values are at the crossover: the lower one is lower there. */
		if (x->a_lower_above)
			assert_true(x->a_value < x->b_value);
		else
			assert_true(x->b_value < x->a_value);
		assert_true(x->context > compare_context(&cmp, 0));
	}
	assert_true(found >= 1);
}

static void test_dsa(void **state)
{
	assert_int_equal(cmp.n_dsa, 1);
	const struct compare_dsa *d = &cmp.dsa[0];
	assert_string_equal(compare_model(&cmp, d->model)->name, "k3-dsa");
	/* The indexer's share grows with the context: each threshold comes after the previous one. */
	assert_true(d->over_sparse > 0);
	assert_true(d->over_moe >= d->over_sparse);
	assert_true(d->over_half == 0 || d->over_half >= d->over_moe);
	/* The decode breakdown agrees: at 1M the indexer class is the largest. */
	const struct sweep_row *r = compare_row(&cmp, d->model, 8, cmp.ref_batch);
	for (int k = 0; k < OPC_COUNT; k++)
		assert_true(r->decode_s[OPC_DSA_INDEXER] >= r->decode_s[k]);
	/* Designs without an indexer spend nothing there. */
	assert_true(compare_row(&cmp, 0, 8, cmp.ref_batch)->decode_s[OPC_DSA_INDEXER] == 0);
}

static bool nonempty(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && st.st_size > 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
		buf[n] = 0;
	fclose(f);
	return buf;
}

/* Without gnuplot the tables are still written and the report says the charts were skipped. */
static void test_report_without_charts(void **state)
{
	char out[128];
	struct err e;
	struct report_files f;
	snprintf(out, sizeof out, "%s/nocharts", dir);
	struct report_opts o = {.dir = out, .gnuplot = "/nonexistent/gnuplot", .version = "test"};
	if (report_write(&cmp, &o, &f, &e) < 0)
		fail_msg("%s", e.msg);
	assert_false(f.charts.rendered);
	assert_non_null(strstr(f.charts.reason, "gnuplot was not found"));
	char *md = slurp(f.md), *html = slurp(f.html);
	assert_non_null(md);
	assert_non_null(html);
	assert_non_null(strstr(md, "Charts were skipped: gnuplot was not found"));
	assert_non_null(strstr(md, "<!-- table: ttft -->"));
	assert_null(strstr(md, "![")); /* no image links */
	assert_non_null(strstr(html, "Charts were skipped"));
	assert_null(strstr(html, "data:image"));
	assert_true(nonempty(f.json));
	assert_true(nonempty(f.db));
	free(md);
	free(html);
}

/* With gnuplot (installed by scripts/deps.sh) every chart exists in both formats and the HTML
 * carries them inline. */
static void test_report_with_charts(void **state)
{
	if (system("gnuplot --version >/dev/null 2>&1") != 0)
		skip();
	char out[128], path[700];
	struct err e;
	struct report_files f;
	snprintf(out, sizeof out, "%s/charts", dir);
	struct report_opts o = {.dir = out, .gnuplot = "gnuplot", .version = "test"};
	if (report_write(&cmp, &o, &f, &e) < 0)
		fail_msg("%s", e.msg);
	if (!f.charts.rendered)
		fail_msg("charts not rendered: %s", f.charts.reason);
	static const char *const names[] = {
	    "memory_per_request", "hbm_per_gpu",      "max_batch",        "ttft", "tpot",
	    "throughput",         "decode_breakdown", "prefill_breakdown"};
	assert_int_equal(f.n_charts, 8);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		for (int k = 0; k < 2; k++) {
			snprintf(path, sizeof path, "%s/%s.%s", f.charts_dir, names[i], k ? "png" : "svg");
			if (!nonempty(path))
				fail_msg("%s is missing or empty", path);
		}
	char *html = slurp(f.html), *md = slurp(f.md);
	assert_non_null(html);
	int images = 0;
	for (const char *p = html; (p = strstr(p, "src=\"data:image/")); p++)
		images++;
	assert_int_equal(images, 8);
	assert_null(strstr(html, "src=\"charts/")); /* self-contained */
	assert_non_null(strstr(md, "![TTFT vs context](charts/ttft.png)"));
	free(html);
	free(md);
}

/* The Kimi Linear pair brings the published claims. */
static void test_kimi_linear_claims(void **state)
{
	struct compare c;
	struct err e;
	struct compare_opts o = {.threads = 1};
	if (compare_run(&c, "compare-kimi-linear", &o, &e) < 0)
		fail_msg("%s", e.msg);
	assert_true(c.n_claims >= 2);
	assert_non_null(strstr(c.claims[0].published, "75%"));
	/* 7 of 27 layers keep the latent: 74.1 % less per token. */
	assert_true(fabs(c.claims[0].tool_value - 20.0 / 27.0) < 1e-9);
	int tput = -1;
	for (int i = 0; i < c.n_claims; i++)
		if (strstr(c.claims[i].published, "6x"))
			tput = i;
	assert_true(tput >= 0);
	assert_true(c.claims[tput].tool_value > 1.0);
	compare_release(&c);
}

/* Axes other than model/context/batch are refused at their line. */
static void test_bad_axis(void **state)
{
	char path[128];
	snprintf(path, sizeof path, "%s/bad.yaml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("model: kimi-k3\nhw: h200\ngpus: 16\nparallel: {tp: 8}\nsweep:\n  context: [4096]\n  hw: "
	      "[h200, b200]\n",
	      f);
	fclose(f);
	struct compare c;
	struct err e;
	struct compare_opts o = {.threads = 1};
	assert_true(compare_run(&c, path, &o, &e) < 0);
	assert_string_equal(e.file, path);
	assert_int_equal(e.line, 7);
	assert_int_equal(e.col, 3);
	assert_non_null(strstr(e.msg, "'hw' is for 'k3sim sweep'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grid),
	    cmocka_unit_test(test_state_kv_crossover),
	    cmocka_unit_test(test_crossovers_are_boundaries),
	    cmocka_unit_test(test_dsa),
	    cmocka_unit_test(test_report_without_charts),
	    cmocka_unit_test(test_report_with_charts),
	    cmocka_unit_test(test_kimi_linear_claims),
	    cmocka_unit_test(test_bad_axis),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
