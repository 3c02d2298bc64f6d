/* plan/: parsing of the flags' values, enumeration counts, pruning by layout and weights before
 * costing, the Pareto front on a toy set, determinism over threads and shards, a colocated
 * candidate equal to `k3sim run` on its scenario, the serving pass and its errors. */
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

#include "plan/plan.h"
#include "serve/costs.h"
#include "sim/sim.h"

/* A small K3 search on H200: 16 and 32 GPUs, TP 4/8/16, EP = GPUs or GPUs/2, both dtypes each. */
static struct plan_spec *small(const char *gpus)
{
	struct plan_spec *sp = calloc(1, sizeof *sp);
	struct err e;
	assert_non_null(sp);
	plan_spec_init(sp);
	assert_int_equal(plan_parse_gpus(gpus, sp->ax.gpus, &sp->ax.n_gpus, &e), 0);
	assert_int_equal(plan_parse_ints("--tp", "4,8,16", sp->ax.tp, &sp->ax.n_tp, &e), 0);
	assert_int_equal(plan_parse_ints("--ep-div", "1,2", sp->ax.ep_div, &sp->ax.n_ep_div, &e), 0);
	assert_int_equal(plan_parse_ints("--batch", "4,16,64", sp->ax.batch, &sp->ax.n_batch, &e), 0);
	assert_int_equal(plan_parse_ints("--budget", "8192,16384", sp->ax.budget, &sp->ax.n_budget, &e), 0);
	sp->isl = 8192;
	sp->osl = 1024;
	sp->slo_ttft_s = 2;
	sp->slo_tpot_s = 0.05;
	sp->short_list = 0;
	if (plan_spec_finish(sp, &e) < 0)
		fail_msg("plan_spec_finish: %s", e.msg);
	return sp;
}

static void free_spec(struct plan_spec *sp)
{
	plan_spec_release(sp);
	free(sp);
}

static void test_parse(void **state)
{
	(void)state;
	int64_t v[PLAN_MAX_VALUES];
	int n;
	struct err e;
	assert_int_equal(plan_parse_gpus("8..128", v, &n, &e), 0);
	assert_int_equal(n, 5);
	assert_int_equal(v[0], 8);
	assert_int_equal(v[4], 128);
	assert_int_equal(plan_parse_gpus("3..10", v, &n, &e), 0); /* 3, 6, then 10 */
	assert_int_equal(n, 3);
	assert_int_equal(v[2], 10);
	assert_int_equal(plan_parse_gpus("72", v, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(plan_parse_gpus("0..4", v, &n, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--gpus"));
	assert_int_equal(plan_parse_gpus("8..4", v, &n, &e), -EINVAL);
	assert_int_equal(plan_parse_gpus("16,16", v, &n, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "twice"));
	assert_int_equal(plan_parse_ints("--tp", "4,x", v, &n, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "'x'"));
	double s;
	assert_int_equal(plan_parse_seconds("--tpot", "50ms", &s, &e), 0);
	assert_true(fabs(s - 0.05) < 1e-15);
	assert_int_equal(plan_parse_seconds("--ttft", "2s", &s, &e), 0);
	assert_true(s == 2);
	assert_int_equal(plan_parse_seconds("--ttft", "250us", &s, &e), 0);
	assert_true(fabs(s - 250e-6) < 1e-18);
	assert_int_equal(plan_parse_seconds("--ttft", "0.5", &s, &e), 0);
	assert_int_equal(plan_parse_seconds("--ttft", "5m", &s, &e), -EINVAL);
	assert_int_equal(plan_parse_seconds("--ttft", "-1s", &s, &e), -EINVAL);
	assert_int_equal(plan_parse_seconds("--ttft", "ms", &s, &e), -EINVAL);
}

static void test_spec_errors(void **state)
{
	(void)state;
	struct plan_spec *sp = calloc(1, sizeof *sp);
	struct err e;
	plan_spec_init(sp);
	sp->slo_ttft_s = 2;
	sp->slo_tpot_s = 0.05;
	assert_int_equal(plan_spec_finish(sp, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--gpus is required"));
	plan_spec_release(sp);

	plan_spec_init(sp);
	plan_parse_gpus("16", sp->ax.gpus, &sp->ax.n_gpus, &e);
	sp->slo_ttft_s = 2;
	assert_int_equal(plan_spec_finish(sp, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--tpot"));
	plan_spec_release(sp);

	plan_spec_init(sp);
	plan_parse_gpus("16", sp->ax.gpus, &sp->ax.n_gpus, &e);
	sp->slo_ttft_s = 2;
	sp->slo_tpot_s = 0.05;
	sp->prefix_hit = 1;
	assert_int_equal(plan_spec_finish(sp, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--prefix-hit"));
	plan_spec_release(sp);

	plan_spec_init(sp);
	plan_parse_gpus("16", sp->ax.gpus, &sp->ax.n_gpus, &e);
	sp->slo_ttft_s = 2;
	sp->slo_tpot_s = 0.05;
	snprintf(sp->hw_names[0], sizeof sp->hw_names[0], "h2000");
	sp->n_hw = 1;
	assert_true(plan_spec_finish(sp, &e) < 0);
	assert_non_null(strstr(e.msg, "h2000"));
	plan_spec_release(sp);

	plan_spec_init(sp);
	plan_parse_gpus("16", sp->ax.gpus, &sp->ax.n_gpus, &e);
	sp->slo_ttft_s = 2;
	sp->slo_tpot_s = 0.05;
	sp->ax.kda[0] = DT_FP8;
	sp->ax.n_kda = 1;
	assert_int_equal(plan_spec_finish(sp, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--kda-state"));
	plan_spec_release(sp);
	free(sp);
}

/* Units: GPUs x TP x CP x EP divisors x KDA x MLA dtypes; rows per unit by the kinds. */
static void test_enumeration(void **state)
{
	(void)state;
	struct plan_spec *sp = small("16,32");
	assert_int_equal(sp->units, 2 * 3 * 1 * 2 * 2 * 2); /* CP 1 only: 8192 / 2 < 16384 */
	struct plan_opts o = {.threads = 2, .shard_count = 1};
	struct plan_result r;
	struct err e;
	assert_int_equal(plan_first_pass(sp, &o, &r, &e), 0);
	assert_int_equal(r.units, sp->units);
	/* every unit yields either its one pruned row or colocated budget x batch (up to the first
	 * batch that does not fit), a prefill row per budget and a decode row per batch */
	int64_t pruned = 0, coloc = 0, pre = 0, dec = 0;
	for (int64_t i = 0; i < r.n_cands; i++) {
		const struct plan_cand *c = &r.cands[i];
		if (i)
			assert_true(c->id > r.cands[i - 1].id);
		if (c->id % PLAN_UNIT_ROWS == PLAN_UNIT_ROWS - 1)
			pruned++;
		else if (strcmp(c->kind, "colocated") == 0)
			coloc++;
		else if (strcmp(c->kind, "prefill") == 0)
			pre++;
		else
			dec++;
	}
	assert_int_equal(pre, (sp->units - pruned) * 2);
	assert_true(dec <= (sp->units - pruned) * 3 && dec >= (sp->units - pruned));
	assert_int_equal(coloc, 2 * dec);
	/* K3 (1.42 TiB) on 16 H200 at EP8 (GPUs / 2) holds half the experts on each GPU: pruned by
	 * weights before costing, with the reason */
	int64_t weights = 0;
	for (int64_t i = 0; i < r.n_cands; i++)
		if (r.cands[i].gpus == 16 && r.cands[i].ep == 8 && r.cands[i].tp < 16) {
			assert_string_equal(r.cands[i].status, "memory");
			assert_non_null(strstr(r.cands[i].reason, "weights"));
			weights++;
		}
	assert_int_equal(weights, 2 * 4); /* TP 4 and 8 x 4 dtype pairs (TP16 leaves the NVLink domain) */
	for (int64_t i = 0; i < r.n_cands; i++)
		if (r.cands[i].tp == 16) {
			assert_string_equal(r.cands[i].status, "layout");
			assert_non_null(strstr(r.cands[i].reason, "NVLink domain"));
		}
	plan_result_release(&r);
	free_spec(sp);
}

/* Layouts that do not divide are pruned with their reason; nothing fits 8 H200. */
static void test_pruning(void **state)
{
	(void)state;
	struct plan_spec *sp = small("8,24");
	struct plan_opts o = {.threads = 1, .shard_count = 1};
	struct plan_result r;
	struct err e;
	assert_int_equal(plan_first_pass(sp, &o, &r, &e), 0);
	int64_t layout = 0;
	for (int64_t i = 0; i < r.n_cands; i++) {
		const struct plan_cand *c = &r.cands[i];
		if (c->gpus == 8)
			assert_string_equal(c->status, c->tp == 16 ? "layout" : "memory");
		if (c->gpus == 24 && c->tp == 16) {
			assert_string_equal(c->status, "layout");
			assert_non_null(strstr(c->reason, "does not divide 24 GPUs"));
			layout++;
		}
	}
	assert_int_equal(layout, 2 * 4); /* 2 EP divisors x 4 dtype pairs */
	assert_int_equal(plan_finish(sp, &o, &r, &e), 0);
	assert_false(r.recs[0].found); /* 8 GPUs */
	assert_true(r.recs[0].n_losers > 0);
	assert_non_null(strstr(r.recs[0].losers[0].why, "memory"));
	plan_result_release(&r);
	free_spec(sp);
}

static void test_pareto(void **state)
{
	(void)state;
	/* (x, y): minimize x, maximize y */
	static const double xy[][2] = {{1, 1}, {2, 3}, {2, 2}, {3, 3}, {4, 5}, {0.5, 0.5}, {5, 4}, {4, 5}, {6, 6}};
	enum { N = sizeof xy / sizeof xy[0] };
	struct plan_point p[N];
	memset(p, 0, sizeof p);
	for (int i = 0; i < N; i++) {
		p[i].x_s = xy[i][0];
		p[i].y = xy[i][1];
		p[i].ref = i;
	}
	int64_t idx[N];
	int64_t n = plan_pareto(p, N, idx);
	static const int64_t want[] = {5, 0, 1, 4, 8}; /* (4, 5) twice: the first given */
	assert_int_equal(n, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(idx[i], want[i]);
	/* brute force: every front point is beaten by none; every other point is beaten or equal */
	for (int i = 0; i < N; i++) {
		bool on = false, beaten = false;
		for (int k = 0; k < n; k++)
			on |= idx[k] == i;
		for (int j = 0; j < N; j++)
			beaten |= j != i && p[j].x_s <= p[i].x_s && p[j].y >= p[i].y &&
				  (p[j].x_s < p[i].x_s || p[j].y > p[i].y || j < i);
		assert_true(on != beaten);
	}
	assert_int_equal(plan_pareto(p, 0, idx), 0);
}

/* The same rows for any thread count and any sharding. */
static void test_determinism(void **state)
{
	(void)state;
	struct plan_spec *sp = small("16,32");
	struct plan_result a, b, s[3];
	struct err e;
	struct plan_opts o1 = {.threads = 1, .shard_count = 1}, o2 = {.threads = 2, .shard_count = 1};
	assert_int_equal(plan_first_pass(sp, &o1, &a, &e), 0);
	assert_int_equal(plan_first_pass(sp, &o2, &b, &e), 0);
	assert_int_equal(a.n_cands, b.n_cands);
	assert_memory_equal(a.cands, b.cands, (size_t)a.n_cands * sizeof *a.cands);
	int64_t total = 0;
	for (int k = 0; k < 3; k++) {
		struct plan_opts o = {.threads = 2, .shard_index = k, .shard_count = 3};
		assert_int_equal(plan_first_pass(sp, &o, &s[k], &e), 0);
		assert_int_equal(s[k].units, plan_shard_units(sp->units, k, 3));
		total += s[k].n_cands;
	}
	assert_int_equal(total, a.n_cands);
	for (int64_t i = 0; i < a.n_cands; i++) {
		const struct plan_cand *c = NULL;
		for (int k = 0; k < 3 && !c; k++) {
			c = plan_find(&s[k], a.cands[i].id);
			if (c)
				assert_int_equal(a.cands[i].unit % 3, k);
		}
		assert_non_null(c);
		assert_memory_equal(c, &a.cands[i], sizeof *c);
	}
	for (int k = 0; k < 3; k++)
		plan_result_release(&s[k]);
	struct plan_opts bad = {.threads = 1, .shard_index = 3, .shard_count = 3};
	assert_int_equal(plan_first_pass(sp, &bad, &s[0], &e), -EINVAL);
	assert_int_equal(s[0].n_cands, 0);
	/* the whole plan twice, serving pass included */
	sp->short_list = 1;
	sp->serve_requests = 200;
	assert_int_equal(plan_finish(sp, &o1, &a, &e), 0);
	assert_int_equal(plan_finish(sp, &o2, &b, &e), 0);
	assert_int_equal(a.n_pd, b.n_pd);
	assert_memory_equal(a.pd, b.pd, (size_t)a.n_pd * sizeof *a.pd);
	assert_int_equal(a.n_served, b.n_served);
	assert_true(a.n_served > 0);
	assert_memory_equal(a.served, b.served, (size_t)a.n_served * sizeof *a.served);
	assert_memory_equal(a.recs, b.recs, sizeof a.recs);
	assert_int_equal(a.n_front_tpot, b.n_front_tpot);
	assert_memory_equal(a.front_tpot, b.front_tpot, (size_t)a.n_front_tpot * sizeof *a.front_tpot);
	plan_result_release(&a);
	plan_result_release(&b);
	free_spec(sp);
}

/* A colocated candidate is `k3sim run` of its scenario: TTFT, TPOT and HBM bit for bit. */
static void test_candidate_is_run(void **state)
{
	(void)state;
	struct plan_spec *sp = small("16");
	struct plan_opts o = {.threads = 2, .shard_count = 1};
	struct plan_result r;
	struct err e;
	assert_int_equal(plan_first_pass(sp, &o, &r, &e), 0);
	int checked = 0;
	for (int64_t i = 0; i < r.n_cands; i++) {
		const struct plan_cand *c = &r.cands[i];
		if (strcmp(c->kind, "colocated") || !(strcmp(c->status, "ok") == 0 || strcmp(c->status, "slo") == 0))
			continue;
		struct scenario s;
		struct serve_config cfg;
		assert_int_equal(plan_deployment(sp, &r, false, c->id, 1, 1, 100, &s, &cfg, &e), 0);
		struct sim_result *res = malloc(sizeof *res);
		assert_int_equal(sim_run(&s, sp->model, sp->hw[0], res, &e), 0);
		assert_true(res->ttft_s == c->ttft_s);
		assert_true(res->tpot_s == c->tpot_s);
		assert_int_equal(res->hbm.total, c->hbm_total);
		assert_true(res->fits);
		free(res);
		checked++;
	}
	assert_true(checked > 10);
	plan_result_release(&r);
	free_spec(sp);
}

/* Recommendations: within the budget, meeting the SLOs, the most goodput of the short list. */
static void test_recommendation(void **state)
{
	(void)state;
	struct plan_spec *sp = small("16,32");
	sp->short_list = 1;
	sp->serve_requests = 200;
	struct plan_opts o = {.threads = 2, .shard_count = 1};
	struct plan_result r;
	struct err e;
	assert_int_equal(plan_first_pass(sp, &o, &r, &e), 0);
	assert_int_equal(plan_finish(sp, &o, &r, &e), 0);
	assert_int_equal(r.n_recs, 2);
	for (int i = 0; i < r.n_recs; i++) {
		const struct plan_rec *x = &r.recs[i];
		if (!x->found)
			continue;
		assert_true(x->gpus_used <= x->budget_gpus);
		assert_true(x->served);
		assert_true(x->goodput_tokens_per_s > 0);
		for (int s = 0; s < r.n_served; s++) {
			const struct plan_served *v = &r.served[s];
			if (v->rate_per_s > 0 && v->gpus <= x->budget_gpus && !v->pd) {
				int64_t used = x->budget_gpus / v->gpus * v->gpus;
				assert_true(v->goodput_tokens_per_s_per_gpu * (double)used <= x->goodput_tokens_per_s * (1 + 1e-12));
			}
		}
		if (x->pd) {
			const struct plan_pd *d = plan_find_pd(&r, x->ref);
			assert_non_null(d);
			assert_int_equal(d->budget_gpus, x->budget_gpus);
			assert_true(d->meets);
		}
	}
	plan_result_release(&r);
	free_spec(sp);
}

/* serve_opts.tables: a run reusing the step-cost tables of an earlier run of the same deployment
 * gives what a run building its own gives (the serving pass's probes rely on it). */
static void test_serve_tables_reuse(void **state)
{
	(void)state;
	struct plan_spec *sp = small("16,32");
	struct plan_opts o = {.threads = 2, .shard_count = 1};
	struct plan_result r;
	struct err e;
	assert_int_equal(plan_first_pass(sp, &o, &r, &e), 0);
	sp->short_list = 0;
	assert_int_equal(plan_finish(sp, &o, &r, &e), 0);
	assert_true(r.n_pd > 0);
	for (int k = 0; k < 2; k++) {
		bool pd = k == 1;
		int64_t ref = -1;
		if (pd)
			ref = r.pd[0].id;
		else
			for (int64_t i = 0; i < r.n_cands && ref < 0; i++)
				if (strcmp(r.cands[i].kind, "colocated") == 0 && strcmp(r.cands[i].status, "ok") == 0)
					ref = r.cands[i].id;
		assert_true(ref >= 0);
		struct serve_costs *tables = calloc(2, sizeof(struct serve_costs));
		struct serve_summary sum[3];
		for (int run = 0; run < 3; run++) {
			struct scenario s;
			struct serve_config c;
			/* runs 0 and 1 share tables (1 reuses them), run 2 builds its own */
			assert_int_equal(plan_deployment(sp, &r, pd, ref, 1, run == 1 ? 0.5 : 0.25, 200, &s, &c, &e), 0);
			if (run == 2)
				c.rate_per_s = 0.5, c.duration_s = 200 / 0.5;
			struct serve_workload w = {0};
			struct serve_result res = {0};
			assert_int_equal(serve_workload_make(&w, &c, sp->model, &e), 0);
			struct serve_opts so = {.threads = 1, .tables = run < 2 ? tables : NULL};
			if (serve_run(&s, sp->model, sp->hw[0], &c, &w, &so, &res, &e) < 0)
				fail_msg("serve_run: %s", e.msg);
			sum[run] = res.sum;
			serve_result_release(&res);
			serve_workload_release(&w);
		}
		assert_true(sum[0].cost_points > 0);
		assert_int_equal(sum[1].cost_points, 0); /* reused */
		assert_true(sum[2].cost_points > 0);
		assert_int_equal(sum[1].completed, sum[2].completed);
		assert_true(sum[1].ttft.p90 == sum[2].ttft.p90);
		assert_true(sum[1].tpot.p90 == sum[2].tpot.p90);
		assert_true(sum[1].makespan_s == sum[2].makespan_s);
		assert_true(sum[1].slo_attainment == sum[2].slo_attainment);
		assert_int_equal(sum[1].steps, sum[2].steps);
		serve_costs_release(&tables[0]);
		serve_costs_release(&tables[1]);
		free(tables);
	}
	plan_result_release(&r);
	free_spec(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_spec_errors),
		cmocka_unit_test(test_enumeration),
		cmocka_unit_test(test_pruning),
		cmocka_unit_test(test_pareto),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_candidate_is_run),
		cmocka_unit_test(test_recommendation),
		cmocka_unit_test(test_serve_tables_reuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
