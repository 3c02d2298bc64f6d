/* The checks on the serving engine, on the shipped scenarios (scenarios/serve/):
 * - agentic multi-turn: KDA checkpoints at turn boundaries cut TTFT against none; checkpoints at
 *   every endpoint reuse no more but cost several times the checkpoint bytes;
 * - a CPU DRAM tier brings evicted prefixes back (hits from it, lower TTFT than without);
 * - speculative decoding: at acceptance 0 a step costs more than without drafts and yields one
 *   token; tokens per step follow the per-position acceptance; good acceptance cuts TPOT;
 * - P/D against co-located at equal GPUs: decode steps free of prefill chunks (TPOT and ITL);
 * - vision: MoonViT-V2's parameters, visual tokens, the encoder's time in TTFT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"
#include "serve/vision.h"
#include "util/doc.h"

struct run {
	struct scenario s;
	struct model m;
	struct hw hw;
	struct serve_config c;
	struct serve_workload w;
	struct serve_result r;
	char *text;
	size_t len;
};

/* Loads scenarios/serve/NAME; `edit` (may be NULL) changes the config before the run. */
static void run(struct run *x, const char *name, void (*edit)(struct run *))
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", K3_SCENARIOS, name);
	struct err e = {0};
	int rc;
	memset(x, 0, sizeof *x);
	if ((rc = scenario_load(&x->s, path, &e)) == 0 && (rc = doc_read_file(path, &x->text, &x->len, &e)) == 0 &&
	    (rc = serve_config_load_yaml(&x->c, &x->s, path, x->text, x->len, &e)) == 0 &&
	    (rc = model_load(&x->m, x->s.model, &e)) == 0 && (rc = hw_load(&x->hw, x->s.hw, &e)) == 0) {
		if (edit)
			edit(x);
		struct serve_opts o = {0};
		if ((rc = serve_workload_make(&x->w, &x->c, &x->m, &e)) == 0)
			rc = serve_run(&x->s, &x->m, &x->hw, &x->c, &x->w, &o, &x->r, &e);
	}
	if (rc < 0) {
		char buf[1024];
		fprintf(stderr, "%s: %s\n", name, err_format(&e, buf, sizeof buf));
	}
	assert_int_equal(rc, 0);
	assert_int_equal(x->r.sum.completed, x->w.n);
}

static void done(struct run *x)
{
	serve_result_release(&x->r);
	serve_workload_release(&x->w);
	free(x->text);
}

static void ckpt_none(struct run *x)
{
	x->c.ckpt = SERVE_CKPT_NONE;
}

static void ckpt_every(struct run *x)
{
	x->c.ckpt = SERVE_CKPT_EVERY;
}

/* Turn-boundary checkpoints: each turn reuses the previous context. None: every turn recomputes
 * its whole prefix (a KDA model reuses nothing without a checkpoint). Every endpoint: no more
 * reuse, several times the checkpoint bytes and more of HBM held by them. */
static void test_agentic_checkpoints(void **state)
{
	struct run none, turns, every;
	run(&none, "agentic.yaml", ckpt_none);
	run(&turns, "agentic.yaml", NULL);
	run(&every, "agentic.yaml", ckpt_every);
	const struct serve_summary *N = &none.r.sum, *T = &turns.r.sum, *E = &every.r.sum;
	fprintf(stderr,
		"agentic TTFT p50/p90: none %.3f/%.3f s, turns %.3f/%.3f s, every %.3f/%.3f s; hit %.3f/%.3f/%.3f; "
		"checkpoints written %.1f/%.1f/%.1f GiB, peak %.1f/%.1f/%.1f GiB\n",
		N->ttft.p50, N->ttft.p90, T->ttft.p50, T->ttft.p90, E->ttft.p50, E->ttft.p90, N->prefix_hit_rate,
		T->prefix_hit_rate, E->prefix_hit_rate, N->ckpt_bytes_written / 1073741824.0,
		T->ckpt_bytes_written / 1073741824.0, E->ckpt_bytes_written / 1073741824.0,
		N->ckpt_bytes_peak / 1073741824.0, T->ckpt_bytes_peak / 1073741824.0, E->ckpt_bytes_peak / 1073741824.0);
	assert_true(N->prefix_hit_rate == 0 && N->ckpt_bytes_written == 0);
	assert_true(T->prefix_hit_rate > 0.6);
	assert_true(T->ttft.p50 < 0.25 * N->ttft.p50);
	assert_true(T->ttft.p90 < 0.5 * N->ttft.p90);
	assert_true(T->goodput_requests_per_s > N->goodput_requests_per_s);
	/* every endpoint: the same reuse (turn boundaries are endpoints too), at a memory cost */
	assert_true(fabs(E->prefix_hit_rate - T->prefix_hit_rate) < 0.02);
	assert_true(E->ttft.p50 < 1.3 * T->ttft.p50);
	assert_true(E->ckpt_bytes_written > 3 * T->ckpt_bytes_written);
	assert_true(E->ckpt_bytes_peak > 2 * T->ckpt_bytes_peak);
	done(&none);
	done(&turns);
	done(&every);
}

/* A small HBM pool (a large reserved workspace) and long contexts: prefixes are evicted between
 * turns; with a CPU DRAM tier they come back over the host link. */
static void small_hbm(struct run *x)
{
	x->s.reserved_bytes = (int64_t)28 * 1073741824;
	x->c.think_s = 20;
	x->c.rate_per_s = 1.5;
}

static void small_hbm_cpu(struct run *x)
{
	small_hbm(x);
	x->c.cpu_bytes = (int64_t)256 * 1073741824;
}

static void test_cpu_tier(void **state)
{
	struct run hbm, cpu;
	run(&hbm, "agentic.yaml", small_hbm);
	run(&cpu, "agentic.yaml", small_hbm_cpu);
	const struct serve_summary *H = &hbm.r.sum, *C = &cpu.r.sum;
	fprintf(stderr,
		"CPU tier: hit %.3f -> %.3f, TTFT p50 %.3f -> %.3f s, %lld hits from CPU, %.1f GiB written back, "
		"%.1f GiB prefetched, CPU peak %.1f GiB\n",
		H->prefix_hit_rate, C->prefix_hit_rate, H->ttft.p50, C->ttft.p50, (long long)C->cpu_hits,
		C->offload_bytes / 1073741824.0, C->prefetch_bytes / 1073741824.0, C->cpu_peak_bytes / 1073741824.0);
	assert_true(H->cpu_hits == 0 && H->offload_bytes == 0);
	assert_true(C->cpu_hits > 0);
	assert_true(C->offload_bytes > 0 && C->prefetch_bytes > 0);
	assert_true(C->cpu_peak_bytes > 0 && C->cpu_peak_bytes <= cpu.c.cpu_bytes);
	assert_true(C->prefix_hit_rate > H->prefix_hit_rate + 0.05);
	assert_true(C->ttft.p50 < H->ttft.p50);
	done(&hbm);
	done(&cpu);
}

static void no_drafts(struct run *x)
{
	x->s.mtp_draft_tokens = 0;
	x->c.n_accept = 0;
}

static void accept_zero(struct run *x)
{
	x->c.accept[0] = 0;
	x->c.n_accept = 1;
}

/* MTP at acceptance 0 costs more than no MTP: the same one token per step, after three draft steps
 * and a verify of four tokens. With 0.8/0.6/0.4 a step yields 1 + 0.8 + 0.48 + 0.192 tokens per
 * request and TPOT falls. */
static void test_mtp(void **state)
{
	struct run plain, zero, mtp;
	run(&plain, "mtp.yaml", no_drafts);
	run(&zero, "mtp.yaml", accept_zero);
	run(&mtp, "mtp.yaml", NULL);
	const struct serve_summary *P = &plain.r.sum, *Z = &zero.r.sum, *M = &mtp.r.sum;
	fprintf(stderr, "MTP: TPOT p50 none %.2f ms, acceptance 0 %.2f ms, 0.8/0.6/0.4 %.2f ms (%.3f tokens per step)\n",
		1e3 * P->tpot.p50, 1e3 * Z->tpot.p50, 1e3 * M->tpot.p50, M->mean_accepted);
	assert_true(P->mean_accepted == 1 && Z->mean_accepted == 1);
	assert_true(Z->tpot.p50 > P->tpot.p50 * 1.02);
	assert_true(Z->tpot.mean > P->tpot.mean);
	assert_true(Z->busy_s > P->busy_s);
	assert_true(fabs(M->mean_accepted - 2.472) < 0.03);
	assert_true(M->tpot.p50 < 0.7 * P->tpot.p50);
	/* every output token once */
	assert_int_equal(M->output_tokens, P->output_tokens);
	done(&plain);
	done(&zero);
	done(&mtp);
}

/* P/D vs co-located at equal GPUs (32 x H200): decode steps without prefill chunks keep TPOT and
 * ITL tails low; the state and KV go over the NIC. */
static void test_pd_vs_colocated(void **state)
{
	struct run pd, co;
	run(&pd, "pd.yaml", NULL);
	run(&co, "pd-colocated.yaml", NULL);
	const struct serve_summary *D = &pd.r.sum, *C = &co.r.sum;
	assert_int_equal(pd.c.prefill.gpus * pd.c.prefill.replicas + pd.c.decode.gpus * pd.c.decode.replicas,
			 co.s.gpus * co.c.replicas);
	fprintf(stderr,
		"P/D vs co-located on 32 GPUs: TTFT p50 %.3f / %.3f s, TPOT p50 %.1f / %.1f ms, ITL p99 %.1f / %.1f ms, "
		"goodput %.3f / %.3f req/s, %.1f GiB transferred\n",
		D->ttft.p50, C->ttft.p50, 1e3 * D->tpot.p50, 1e3 * C->tpot.p50, 1e3 * D->itl.p99, 1e3 * C->itl.p99,
		D->goodput_requests_per_s, C->goodput_requests_per_s, D->pd_transfer_bytes / 1073741824.0);
	assert_true(D->pd_transfer_bytes > 0 && C->pd_transfer_bytes == 0);
	assert_true(D->tpot.p90 < C->tpot.p90);
	assert_true(D->itl.p99 < 0.5 * C->itl.p99);
	assert_true(D->goodput_requests_per_s > C->goodput_requests_per_s);
	/* the transfer is in TTFT: no request's TTFT is below its prefill */
	assert_true(D->ttft.max > 0);
	assert_int_equal(D->output_tokens, C->output_tokens);
	done(&pd);
	done(&co);
}

static void no_images(struct run *x)
{
	x->c.image_fraction = 0;
	x->c.video_fraction = 0;
}

static void test_vision(void **state)
{
	/* MoonViT-V2: ~401M parameters published; SigLIP-so400m's widths give ~412M (the projector into
	 * K3's 7168 adds 54M) */
	double params = (double)serve_vision_params(0);
	assert_true(params > 401e6 && params < 1.05 * 401e6);
	assert_true(serve_vision_params(7168) - serve_vision_params(0) > 50000000);
	/* 1024 px: 74 x 74 patches of 14, 2 x 2 shuffle */
	assert_int_equal(serve_vision_tokens(1, 1024, 0, 0), 37 * 37);
	assert_int_equal(serve_vision_tokens(0, 0, 8, 448), 8 * 256);
	struct hw hw;
	struct err e;
	const struct hw_clock_sel sus = {.regime = HW_CLOCK_SUSTAINED};
	assert_int_equal(hw_load(&hw, "h200", &e), 0);
	double one = serve_vision_time(&hw, &sus, 1, 1024, 7168);
	double two = serve_vision_time(&hw, &sus, 1, 2048, 7168);
	double video = serve_vision_time(&hw, &sus, 16, 448, 7168);
	fprintf(stderr, "MoonViT-V2 on one H200: 1024 px %.2f ms, 2048 px %.2f ms, 16 x 448 px video %.2f ms\n",
		1e3 * one, 1e3 * two, 1e3 * video);
	/* ~2 x 401M x 5476 patches = 4.4 TFLOP + attention: milliseconds, growing faster than the pixels */
	assert_true(one > 2e-3 && one < 0.1);
	assert_true(two > 4 * one);
	/* 16 frames batch better than 16 single images but add temporal attention across them */
	double frame = serve_vision_time(&hw, &sus, 1, 448, 7168);
	assert_true(video > 4 * frame && video < 16 * frame);
	struct run with, without;
	run(&with, "vision.yaml", NULL);
	run(&without, "vision.yaml", no_images);
	assert_true(with.r.sum.vision_s > 0 && without.r.sum.vision_s == 0);
	assert_true(with.r.sum.prompt_tokens > without.r.sum.prompt_tokens);
	/* requests with images take longer to their first token than those without */
	double img = 0, txt = 0;
	int64_t ni = 0, nt = 0;
	for (int64_t i = 0; i < with.w.n; i++) {
		if (with.w.req[i].vision_tokens > 0)
			img += with.r.rec[i].ttft_s, ni++;
		else
			txt += with.r.rec[i].ttft_s, nt++;
	}
	assert_true(ni > 0 && nt > 0);
	assert_true(img / (double)ni > txt / (double)nt);
	done(&with);
	done(&without);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agentic_checkpoints), cmocka_unit_test(test_cpu_tier),
		cmocka_unit_test(test_mtp),                 cmocka_unit_test(test_pd_vs_colocated),
		cmocka_unit_test(test_vision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
