/* SPDX-License-Identifier: MIT */
/*
 * MLA decode on the GPU (kernels/mla/mla_decode.h) against the float64
 * reference (suite 'gpu'; exit 77 without a GPU). Fresh random inputs per
 * case, outputs, workspace and the unused rows of the cache pages poisoned
 * with 0xff (NaN) before every run. Covers one and several splits, 16- and
 * 64-row blocks (padded rows too), 1..8 query tokens, BF16 and FP8 caches,
 * sparse index lists with -1 and out-of-range entries, the FP8 split kernel's
 * merges (cluster, combine kernel, last split: launches in a row and CUDA graph
 * replays; with K3_MLA_FP8S_LAST_RESET=self the workspace is zeroed once instead
 * of poisoned, so that a counter left non-zero shows as unwritten outputs).
 * MLA_TEST_FILTER='*fp8*' runs a subset (e.g. under compute-sanitizer).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "k3_gpu_test_util.h"
#include "mla_test_util.h"
#include "kernels/mla/mla_decode.h"
#include "kernels/mla/mla_ref.h"

/* BF16 output of a softmax-weighted mean, P (FP8: P times the tile scale) rounded to BF16
 * on the way. The LSE's tolerance is derived per row in mla_test_util.h. */
#define TOL_OUT 1.5e-2

static struct test_rng rng = { 20261202 };

struct mla_case {
	int B, H, t, topk;
	enum mla_kv kv;
	double qscale; /* q range: sharper softmax when larger */
	int spread;    /* FP8: each token's NoPE part times 2^(-40..8), each tile a further 2^(-6..6) */
	int cluster;   /* FP8, default kernel and plan: the cluster size mla_decode_cluster() must give */
	int last;      /* FP8 with K3_MLA_FP8S_COMBINE=last: the splits mla_decode_last() must give */
	int runs;      /* launches in a row (default 2), outputs poisoned before each */
	int graph;     /* then that many replays of one CUDA graph of the call, outputs poisoned before each */
	int overlap;   /* mla_decode_args::overlap_prev, each launch (and graph) followed at once by one
			* over a second q into a second output, sharing the workspace (outputs poisoned
			* once before the launches in a row) */
	int32_t lens[8]; /* request b's length: lens[b % 8] (B > 8: the pattern repeats) */
	const char *name;
};

static void run_case(const struct mla_case *c)
{
	print_message("%s: B=%d H=%d t=%d kv=%s topk=%d\n", c->name, c->B, c->H, c->t,
		      c->kv == MLA_KV_FP8 ? "fp8" : "bf16", c->topk);
	const size_t tb = c->kv == MLA_KV_FP8 ? MLA_FP8_TOKEN_BYTES : MLA_BF16_TOKEN_BYTES;
	int32_t *lens = gt_xmalloc((size_t)c->B * sizeof(int32_t));
	int max_seqlen = 0;
	for (int b = 0; b < c->B; b++) {
		lens[b] = c->lens[b % 8];
		max_seqlen = lens[b] > max_seqlen ? lens[b] : max_seqlen;
	}
	const int max_pages = (max_seqlen + MLA_PAGE_TOKENS - 1) / MLA_PAGE_TOKENS;
	int64_t n_pages = (int64_t)c->B * max_pages + 5;
	while (n_pages % 7 == 0)
		n_pages++;
	/* Pages scattered over the pool: request b's page i at (i * B + b) * 7 + 2 mod n (distinct: 7 is prime to n). */
	int32_t *table = gt_xmalloc((size_t)c->B * max_pages * sizeof(int32_t));
	for (int b = 0; b < c->B; b++)
		for (int i = 0; i < max_pages; i++)
			table[b * max_pages + i] = (int32_t)((((int64_t)i * c->B + b) * 7 + 2) % n_pages);
	/* Every page poisoned, then the tokens of each request written. */
	unsigned char *pool = gt_xmalloc((size_t)n_pages * MLA_PAGE_TOKENS * tb);
	memset(pool, 0xff, (size_t)n_pages * MLA_PAGE_TOKENS * tb);
	double x[MLA_DIM];
	for (int b = 0; b < c->B; b++)
		for (int j = 0; j < lens[b]; j++) {
			test_fill(&rng, x, MLA_DIM, -1, 1);
			if (c->spread) {
				const int kj = (int)(test_rng_next(&rng) % 49) - 40;
				for (int tile = 0; tile < MLA_FP8_SCALES; tile++) {
					const int kt = kj + (int)(test_rng_next(&rng) % 13) - 6;
					for (int i = 0; i < MLA_FP8_TILE; i++)
						x[tile * MLA_FP8_TILE + i] = ldexp(x[tile * MLA_FP8_TILE + i], kt);
				}
			}
			unsigned char *dst = pool + ((size_t)table[b * max_pages + j / MLA_PAGE_TOKENS] * MLA_PAGE_TOKENS +
						     j % MLA_PAGE_TOKENS) * tb;
			if (c->kv == MLA_KV_FP8)
				mla_fp8_encode_token(x, dst);
			else
				mla_bf16_encode_token(x, (uint16_t *)dst);
		}
	const size_t rows = (size_t)c->B * c->t * c->H;
	struct gt_bf16 q = gt_bf16_rand(&rng, rows * MLA_DIM, -c->qscale, c->qscale);
	int32_t *ix = NULL;
	if (c->topk) {
		ix = gt_xmalloc((size_t)c->B * c->topk * sizeof(int32_t));
		for (int b = 0; b < c->B; b++)
			for (int j = 0; j < c->topk; j++) {
				const uint64_t u = test_rng_next(&rng);
				int32_t v = (int32_t)(u % (uint64_t)lens[b]);
				if (u % 17 == 0)
					v = -1;
				else if (u % 23 == 0)
					v = lens[b] + (int32_t)(u % 100); /* past the end: skipped */
				ix[b * c->topk + j] = v;
			}
	}

	struct mla_ref_decode ref = {
		.batch = c->B, .heads = c->H, .qtokens = c->t, .kv = c->kv, .scale = 1.0 / sqrt(192.0),
		.q = q.h, .cache = pool, .n_pages = n_pages, .block_table = table, .max_pages = max_pages,
		.seqlens = lens, .indices = ix, .topk = c->topk,
		.out = gt_dnew(rows * MLA_LATENT), .lse = gt_dnew(rows), .score_abs = gt_dnew(rows),
		.n_visible = gt_xmalloc(rows * sizeof(int32_t)),
	};
	assert_int_equal(mla_ref_decode(&ref), 0);
	/* c->overlap: the second q and its reference */
	struct gt_bf16 q2 = { 0 };
	struct mla_ref_decode ref2 = ref;
	if (c->overlap) {
		q2 = gt_bf16_rand(&rng, rows * MLA_DIM, -c->qscale, c->qscale);
		ref2.q = q2.h, ref2.out = gt_dnew(rows * MLA_LATENT), ref2.lse = gt_dnew(rows);
		ref2.score_abs = gt_dnew(rows), ref2.n_visible = gt_xmalloc(rows * sizeof(int32_t));
		assert_int_equal(mla_ref_decode(&ref2), 0);
	}

	void *d_pool = gt_dev_copy(pool, (size_t)n_pages * MLA_PAGE_TOKENS * tb);
	void *d_table = gt_dev_copy(table, (size_t)c->B * max_pages * sizeof(int32_t));
	void *d_lens = gt_dev_copy(lens, (size_t)c->B * sizeof(int32_t));
	void *d_ix = ix ? gt_dev_copy(ix, (size_t)c->B * c->topk * sizeof(int32_t)) : NULL;
	struct gt_bf16 out = gt_bf16_out(rows * MLA_LATENT);
	float *d_lse = gt_dev_poisoned(rows * sizeof(float));
	struct mla_decode_args a = {
		.batch = c->B, .heads = c->H, .qtokens = c->t, .kv = c->kv, .scale = (float)ref.scale,
		.max_seqlen = max_seqlen, .q = q.d, .cache = d_pool, .block_table = d_table,
		.max_pages = max_pages, .seqlens = d_lens, .indices = d_ix, .topk = c->topk,
		.out = out.d, .lse = d_lse,
	};
	size_t ws = 0;
	assert_int_equal(mla_decode_workspace_bytes(&a, &ws), 0);
	a.workspace = ws ? gt_dev_poisoned(ws) : NULL;
	a.workspace_bytes = ws;
	print_message("  splits %d, cluster %d, workspace %zu bytes\n", mla_decode_splits(&a), mla_decode_cluster(&a),
		      ws);
	if (c->cluster && !getenv("K3_MLA_FP8_KERNEL") && !getenv("K3_MLA_FP8S_COMBINE")) {
		assert_int_equal(mla_decode_cluster(&a), c->cluster);
		assert_int_equal(ws, 0);
	}
	const char *merge = getenv("K3_MLA_FP8S_COMBINE"), *reset = getenv("K3_MLA_FP8S_LAST_RESET");
	if (c->last && !getenv("K3_MLA_FP8_KERNEL") && merge && !strcmp(merge, "last")) {
		assert_int_equal(mla_decode_last(&a), c->last);
		assert_int_equal(mla_decode_cluster(&a), 0);
		assert_true(ws > 0);
	}
	/* The last-split merge with K3_MLA_FP8S_LAST_RESET=self: the counters are zeroed once here and
	 * every launch must leave them zero (the workspace is not poisoned between launches then;
	 * a counter left non-zero leaves the next launch's outputs unwritten, i.e. poisoned). */
	const int self_reset = mla_decode_last(&a) > 0 && reset && !strcmp(reset, "self");
	if (self_reset)
		CUDA_OK(cudaMemset(a.workspace, 0, ws));
	const int runs = c->runs ? c->runs : 2;
	struct gt_bf16 out2 = c->overlap ? gt_bf16_out(rows * MLA_LATENT) : (struct gt_bf16){ 0 };
	float *d_lse2 = c->overlap ? gt_dev_poisoned(rows * sizeof(float)) : NULL;
	struct mla_decode_args a2 = a;
	a.overlap_prev = c->overlap, a2.overlap_prev = c->overlap;
	a2.q = q2.d, a2.out = out2.d, a2.lse = d_lse2;
	cudaStream_t ost = 0;
	if (c->overlap)
		CUDA_OK(cudaStreamCreate(&ost));
	for (int run = 0; run < runs; run++) { /* twice at least: nothing carried over between calls */
		if (!c->overlap || run == 0) {
			gt_poison(out.d, rows * MLA_LATENT * 2);
			gt_poison(d_lse, rows * sizeof(float));
			if (ws && !self_reset)
				gt_poison(a.workspace, ws);
		}
		if (!c->overlap) {
			KERNEL_OK(mla_decode(&a, 0));
			continue;
		}
		/* On a stream of its own, no host wait in between: a2's split kernel starts while a's
		 * grids (its combine kernel still reading the shared workspace) finish. */
		assert_int_equal(mla_decode(&a, ost), 0);
		assert_int_equal(mla_decode(&a2, ost), 0);
	}
	if (c->overlap) {
		CUDA_OK(cudaStreamSynchronize(ost));
		CUDA_OK(cudaStreamDestroy(ost));
	}
	if (c->graph) { /* one CUDA graph of the call (the memset node too), replayed */
		cudaStream_t st;
		cudaGraph_t gr;
		cudaGraphExec_t ge;
		CUDA_OK(cudaStreamCreate(&st));
		CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
		assert_int_equal(mla_decode(&a, st), 0);
		if (c->overlap)
			assert_int_equal(mla_decode(&a2, st), 0);
		CUDA_OK(cudaStreamEndCapture(st, &gr));
		CUDA_OK(cudaGraphInstantiate(&ge, gr, 0));
		for (int r = 0; r < c->graph; r++) {
			gt_poison(out.d, rows * MLA_LATENT * 2);
			gt_poison(d_lse, rows * sizeof(float));
			if (ws && !self_reset)
				gt_poison(a.workspace, ws);
			CUDA_OK(cudaGraphLaunch(ge, st));
			CUDA_OK(cudaStreamSynchronize(st));
		}
		CUDA_OK(cudaGraphExecDestroy(ge));
		CUDA_OK(cudaGraphDestroy(gr));
		CUDA_OK(cudaStreamDestroy(st));
	}
	gt_bf16_read(&out);
	double *lse = gt_dnew(rows);
	gt_f32_read(d_lse, lse, rows);
	gt_check("out", out.h, ref.out, rows * MLA_LATENT, TOL_OUT);
	mla_check_lse("lse", lse, ref.lse, ref.score_abs, ref.n_visible, rows);
	if (c->overlap) {
		gt_bf16_read(&out2);
		gt_f32_read(d_lse2, lse, rows);
		gt_check("out (second q)", out2.h, ref2.out, rows * MLA_LATENT, TOL_OUT);
		mla_check_lse("lse (second q)", lse, ref2.lse, ref2.score_abs, ref2.n_visible, rows);
		free(ref2.out), free(ref2.lse), free(ref2.score_abs), free(ref2.n_visible);
		gt_bf16_release(&q2), gt_bf16_release(&out2);
		cudaFree(d_lse2);
	}

	free(lse), free(ref.out), free(ref.lse), free(ref.score_abs), free(ref.n_visible), free(table), free(pool);
	free(ix), free(lens);
	gt_bf16_release(&q), gt_bf16_release(&out);
	cudaFree(d_pool), cudaFree(d_table), cudaFree(d_lens), cudaFree(d_ix), cudaFree(d_lse), cudaFree(a.workspace);
}

static void test_bf16_small_heads_splits(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 3, .H = 16, .t = 1, .kv = MLA_KV_BF16, .qscale = 1,
				    .lens = { 1, 100, 1000 }, .name = "bf16 H=16 (16-row blocks), several splits" };
	run_case(&c);
}

static void test_bf16_many_heads_mtp(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 2, .H = 128, .t = 2, .kv = MLA_KV_BF16, .qscale = 3,
				    .lens = { 2000, 70 }, .name = "bf16 H=128 t=2 (4 row blocks)" };
	run_case(&c);
}

static void test_bf16_one_split(void **unused)
{
	(void)unused;
	struct mla_case c = { .B = 8, .H = 12, .t = 1, .kv = MLA_KV_BF16, .qscale = 2,
			      .lens = { 128, 1, 33, 64, 65, 127, 2, 100 }, .name = "bf16 H=12, one split" };
	run_case(&c);
}

/* The K3 decode shape (16 rows: one row block) with one to several splits. */
static void test_fp8_small_heads_splits(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 3, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2,
				    .lens = { 1, 100, 1000 }, .name = "fp8 H=16 (16-row blocks), several splits" };
	run_case(&c);
}

/* Tile scales 2^-46 .. 2^14 apart within a request (and within a token): P times the scale
 * spans ~60 binades, beyond FP16's range; the kernel must keep the largest in range. */
static void test_fp8_scale_spread(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 2, .H = 12, .t = 2, .kv = MLA_KV_FP8, .qscale = 2, .spread = 1,
				    .lens = { 700, 3000 }, .name = "fp8 H=12 t=2, scales 2^-46..2^14" };
	run_case(&c);
}

/* The K3 decode shape with requests of 1, 31, 32, 33, 64 tokens beside a long one, scales
 * spread: splits of one tile (the pipelined kernel's last iteration recomputes its own tile's
 * parts), of none, tile edges, and many splits of the long request. */
static void test_fp8_tile_edges(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 6, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .spread = 1,
				    .lens = { 1, 31, 32, 33, 64, 4100 }, .name = "fp8 H=16 t=1, 1..64 and 4100 tokens, scales spread" };
	run_case(&c);
}

/* The default FP8 kernel merges 2..8 splits of a row block inside a thread-block cluster
 * (mla_fp8s_kernel, fp8s_cluster_combine()): 3 splits of 16 rows (requests of 1 and 33 tokens
 * leave splits empty, 129 ends a split after one tile), 6 splits of two 16-row blocks (t = 2),
 * 2 splits with the scales spread; each also through the previous plan (partials and the
 * combine kernel: K3_MLA_FP8S_COMBINE=kernel, read at every call). */
static void test_fp8_cluster_splits(void **unused)
{
	(void)unused;
	const struct mla_case cs[3] = {
		{ .B = 8, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .cluster = 3,
		  .lens = { 300, 1, 33, 250, 64, 299, 129, 200 }, .name = "fp8 H=16, 3 splits in a cluster" },
		{ .B = 4, .H = 16, .t = 2, .kv = MLA_KV_FP8, .qscale = 3, .cluster = 6,
		  .lens = { 2, 700, 129, 64 }, .name = "fp8 H=16 t=2, 6 splits in a cluster, 2 row blocks" },
		{ .B = 8, .H = 12, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .spread = 1, .cluster = 2,
		  .lens = { 200, 150, 5, 97, 128, 160, 2, 190 },
		  .name = "fp8 H=12, 2 splits in a cluster, scales spread" },
	};
	const char *had = getenv("K3_MLA_FP8S_COMBINE");
	for (int i = 0; i < 3; i++) {
		run_case(&cs[i]);
		if (!had) {
			setenv("K3_MLA_FP8S_COMBINE", "kernel", 1);
			run_case(&cs[i]);
			unsetenv("K3_MLA_FP8S_COMBINE");
		}
	}
}

/* mla_fp8s_kernel's options, each read at every call: the first stages copied 1 or 2 at a time
 * before tile 0 has landed (K3_MLA_FP8S_PRIME), clusters even where fewer fit the device at once
 * than there are row blocks (K3_MLA_FP8S_COMBINE=cluster: 66 requests of up to 530 tokens take 4
 * splits, 66 clusters of 4 on an H200 that holds 62), and the kernel as GPU-tested before the
 * early order (K3_MLA_FP8S_HANDOFF=late: warp 0 refills the stages, no producer warp), and splits
 * of unequal sizes (K3_MLA_FP8S_SKEW=300: the splits placed first 1.3 times the tiles, where no
 * cluster merges them: the 66 requests). Skipped where the caller set any of these. */
static void test_fp8_split_options(void **unused)
{
	(void)unused;
	const struct mla_case cs[3] = {
		{ .B = 8, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .spread = 1,
		  .lens = { 300, 1, 33, 250, 64, 299, 129, 200 }, .name = "fp8 H=16, splits, scales spread" },
		{ .B = 3, .H = 12, .t = 2, .kv = MLA_KV_FP8, .qscale = 3,
		  .lens = { 97, 700, 2 }, .name = "fp8 H=12 t=2, two row blocks" },
		{ .B = 66, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2,
		  .lens = { 530, 1, 129, 257, 64, 33, 400, 200 }, .name = "fp8 H=16, 66 requests" },
	};
	static const char *const set[5][2] = {
		{ "K3_MLA_FP8S_PRIME", "1" },
		{ "K3_MLA_FP8S_PRIME", "2" },
		{ "K3_MLA_FP8S_COMBINE", "cluster" },
		{ "K3_MLA_FP8S_HANDOFF", "late" },
		{ "K3_MLA_FP8S_SKEW", "300" },
	};
	for (int v = 0; v < 5; v++)
		if (getenv(set[v][0]))
			skip();
	if (getenv("K3_MLA_FP8_KERNEL"))
		skip();
	for (int v = 0; v < 5; v++) {
		print_message("  with %s=%s\n", set[v][0], set[v][1]);
		setenv(set[v][0], set[v][1], 1);
		for (int i = 0; i < 3; i++)
			run_case(&cs[i]);
		if (v == 2) { /* the 66 requests' splits in clusters, whatever fits at once */
			struct mla_decode_args a = { .batch = 66, .heads = 16, .qtokens = 1, .kv = MLA_KV_FP8,
						     .scale = 0.07f, .max_seqlen = 530, .max_pages = 9 };
			const int splits = mla_decode_splits(&a);
			assert_true(splits >= 1);
			assert_int_equal(mla_decode_cluster(&a), splits >= 2 && splits <= 8 ? splits : 0);
			print_message("  66 requests: %d splits, clusters of %d fit at once: %d\n", splits,
				      splits, mla_decode_max_clusters(splits));
		}
		unsetenv(set[v][0]);
	}
}

/* The last-split merge (K3_MLA_FP8S_COMBINE=last: each split writes its partials, the last split
 * of a row block to count in on its counter merges them; no cluster, no combine kernel): 3 splits
 * with empty ones (requests of 1 and 33 tokens), 6 splits over two row blocks (t = 2), 2 splits
 * with the scales spread, 66 requests of 4 splits (66 row blocks where 62 clusters of 4 fit at
 * once); several launches in a row and CUDA graph replays, with the counters zeroed by a memset
 * node before every launch (default) and left zero by every launch (K3_MLA_FP8S_LAST_RESET=self:
 * a counter not reset by the last split leaves the next launch's outputs poisoned); then the
 * splits of two waves (K3_MLA_FP8S_WAVES=2: more CTAs than fit at once). Skipped where the caller
 * set the plan, the waves or the kernel. */
static void test_fp8_last_merge(void **unused)
{
	(void)unused;
	const struct mla_case cs[4] = {
		{ .B = 8, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .last = 3, .runs = 3, .graph = 3,
		  .lens = { 300, 1, 33, 250, 64, 299, 129, 200 }, .name = "fp8 H=16, 3 splits, last merge" },
		{ .B = 4, .H = 16, .t = 2, .kv = MLA_KV_FP8, .qscale = 3, .last = 6, .runs = 3, .graph = 2,
		  .lens = { 2, 700, 129, 64 }, .name = "fp8 H=16 t=2, 6 splits, 2 row blocks, last merge" },
		{ .B = 8, .H = 12, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .spread = 1, .last = 2, .runs = 3,
		  .lens = { 200, 150, 5, 97, 128, 160, 2, 190 },
		  .name = "fp8 H=12, 2 splits, scales spread, last merge" },
		{ .B = 66, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .runs = 3, .graph = 2,
		  .lens = { 530, 1, 129, 257, 64, 33, 400, 200 }, .name = "fp8 H=16, 66 requests, last merge" },
	};
	if (getenv("K3_MLA_FP8S_COMBINE") || getenv("K3_MLA_FP8S_LAST_RESET") || getenv("K3_MLA_FP8S_WAVES") ||
	    getenv("K3_MLA_FP8_KERNEL"))
		skip();
	setenv("K3_MLA_FP8S_COMBINE", "last", 1);
	for (int v = 0; v < 3; v++) {
		print_message("  counters reset by %s\n", v == 1 ? "the last split (K3_MLA_FP8S_LAST_RESET=self)"
				  : v == 2 ? "a memset, two waves (K3_MLA_FP8S_WAVES=2)" : "a memset");
		if (v == 1)
			setenv("K3_MLA_FP8S_LAST_RESET", "self", 1);
		if (v == 2) {
			unsetenv("K3_MLA_FP8S_LAST_RESET");
			setenv("K3_MLA_FP8S_WAVES", "2", 1);
		}
		for (int i = 0; i < 4; i++) {
			struct mla_case c = cs[i];
			if (v == 2)
				c.last = 0; /* more splits than with one wave */
			run_case(&c);
		}
		struct mla_decode_args a = { .batch = 66, .heads = 16, .qtokens = 1, .kv = MLA_KV_FP8,
					     .scale = 0.07f, .max_seqlen = 530, .max_pages = 9 };
		const int splits = mla_decode_splits(&a);
		assert_int_equal(mla_decode_last(&a), splits >= 2 && splits <= 8 ? splits : 0);
		print_message("  66 requests: %d splits\n", splits);
	}
	unsetenv("K3_MLA_FP8S_WAVES");
	unsetenv("K3_MLA_FP8S_COMBINE");
}

/* The default plan where whole splits fill less than 80 % of one wave (96 requests of 16 rows: 2
 * splits, 192 CTAs on an H200's 264 places): the last-split merge with the splits of two waves
 * (5 here, up to 700 tokens). Skipped where the caller set the plan or the kernel. */
static void test_fp8_underfilled_wave(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 96, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .runs = 3, .graph = 2,
				    .lens = { 700, 650, 1, 33, 690, 128, 700, 500 },
				    .name = "fp8 H=16, 96 requests: splits of two waves, last merge" };
	if (getenv("K3_MLA_FP8S_COMBINE") || getenv("K3_MLA_FP8S_WAVES") || getenv("K3_MLA_FP8S_SPLITS") ||
	    getenv("K3_MLA_FP8_KERNEL"))
		skip();
	int dev = 0, sms = 0;
	CUDA_OK(cudaGetDevice(&dev));
	CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	struct mla_decode_args a = { .batch = 96, .heads = 16, .qtokens = 1, .kv = MLA_KV_FP8,
				     .scale = 0.07f, .max_seqlen = 700, .max_pages = 11 };
	const int one = 2 * sms / 96; /* splits of one wave (two CTAs an SM) */
	print_message("  %d SMs: %d splits, last merge %d\n", sms, mla_decode_splits(&a), mla_decode_last(&a));
	if (one >= 2 && one <= 6 && 96 * one * 5 < 2 * sms * 4) { /* fewer than 80 %: two waves */
		assert_true(mla_decode_splits(&a) > one);
		assert_int_equal(mla_decode_last(&a), mla_decode_splits(&a));
	}
	run_case(&c);
}

/* mla_fp8s_kernel's two frame merges (K3_MLA_FP8S_FRAME, read at every call): "steady" skips the
 * frames' exp2 while every softmax warp keeps the running max and the unit while no row's largest
 * P x scale passes it (the usual tile once the max settles), "full" runs the general merge on
 * every tile. Long requests (many tiles a split in the steady state), a sharp softmax (the max
 * moves late), scales spread (the unit moves), t = 2 over two row blocks. The first case's 33
 * splits go through the combine kernel, a programmatic dependent launch by default
 * (K3_MLA_FP8S_PDL), also replayed from a CUDA graph. Skipped where the caller set the frame form
 * or the kernel. */
static void test_fp8_frame_forms(void **unused)
{
	(void)unused;
	const struct mla_case cs[3] = {
		{ .B = 3, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .runs = 2, .graph = 2,
		  .lens = { 4100, 2000, 33 }, .name = "fp8 H=16, 33..4100 tokens, combine kernel" },
		{ .B = 2, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 6, .spread = 1,
		  .lens = { 3000, 1500 }, .name = "fp8 H=16, sharp softmax, scales spread" },
		{ .B = 2, .H = 12, .t = 2, .kv = MLA_KV_FP8, .qscale = 3,
		  .lens = { 2500, 700 }, .name = "fp8 H=12 t=2, two row blocks" },
	};
	if (getenv("K3_MLA_FP8S_FRAME") || getenv("K3_MLA_FP8_KERNEL"))
		skip();
	static const char *const form[2] = { "steady", "full" };
	for (int v = 0; v < 2; v++) {
		print_message("  K3_MLA_FP8S_FRAME=%s\n", form[v]);
		setenv("K3_MLA_FP8S_FRAME", form[v], 1);
		for (int i = 0; i < 3; i++)
			run_case(&cs[i]);
	}
	unsetenv("K3_MLA_FP8S_FRAME");
}

/* mla_decode_args::overlap_prev: the split kernel as a programmatic dependent launch (its first
 * stages of the cached prefix copied before the grid before it is done), launches over two q in
 * a row into two outputs sharing the workspace, and as graph replays: through the combine kernel
 * (33..4100 tokens, B 3), clusters (B 8, the scales spread), two row blocks at t = 2, requests
 * whose every tile holds the new rows (1..33 tokens), the last-split merge without its memset
 * (K3_MLA_FP8S_LAST_RESET=self is not set here: the plan's memset turns the overlap off), and the
 * sparse kernel (whose index list may be the previous grid's output: copies wait for it). */
static void test_fp8_overlap_prev(void **unused)
{
	(void)unused;
	const struct mla_case cs[5] = {
		{ .B = 3, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .runs = 3, .graph = 2, .overlap = 1,
		  .lens = { 4100, 2000, 33 }, .name = "fp8 H=16, overlap, combine kernel" },
		{ .B = 8, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .spread = 1, .runs = 3, .graph = 2, .overlap = 1,
		  .lens = { 300, 1, 33, 250, 64, 299, 129, 200 }, .name = "fp8 H=16, overlap, splits, scales spread" },
		{ .B = 2, .H = 12, .t = 2, .kv = MLA_KV_FP8, .qscale = 3, .runs = 3, .graph = 2, .overlap = 1,
		  .lens = { 2500, 700 }, .name = "fp8 H=12 t=2, overlap, two row blocks" },
		{ .B = 96, .H = 16, .t = 1, .kv = MLA_KV_FP8, .qscale = 2, .runs = 2, .graph = 1, .overlap = 1,
		  .lens = { 1300, 33, 2, 900, 1025, 64, 700, 1 }, .name = "fp8 H=16, overlap, 96 requests (last merge)" },
		{ .B = 3, .H = 16, .t = 1, .topk = 2048, .kv = MLA_KV_FP8, .qscale = 2, .runs = 3, .graph = 2,
		  .overlap = 1, .lens = { 4000, 2100, 50 }, .name = "sparse fp8 H=16 topk=2048, overlap" },
	};
	for (int i = 0; i < 5; i++)
		run_case(&cs[i]);
}

static void test_fp8_verify_window(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 4, .H = 12, .t = 3, .kv = MLA_KV_FP8, .qscale = 2,
				    .lens = { 3, 500, 129, 64 }, .name = "fp8 H=12 t=3 (padded 64-row block)" };
	run_case(&c);
}

static void test_fp8_long_context(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 1, .H = 96, .t = 1, .kv = MLA_KV_FP8, .qscale = 1,
				    .lens = { 8192 }, .name = "fp8 H=96 ctx 8192" };
	run_case(&c);
}

static void test_fp8_eight_tokens_small_heads(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 2, .H = 2, .t = 8, .kv = MLA_KV_FP8, .qscale = 4,
				    .lens = { 300, 8 }, .name = "fp8 H=2 t=8 (16 rows)" };
	run_case(&c);
}

/* A causal prefill chunk over a prefix through the same kernel (t beyond decode's 8). */
static void test_prefill_chunks(void **unused)
{
	(void)unused;
	const struct mla_case a = { .B = 1, .H = 8, .t = 100, .kv = MLA_KV_BF16, .qscale = 2,
				    .lens = { 300 }, .name = "bf16 prefill t=100 over 200 cached" };
	run_case(&a);
	const struct mla_case b = { .B = 2, .H = 16, .t = 64, .kv = MLA_KV_FP8, .qscale = 2,
				    .lens = { 64, 1000 }, .name = "fp8 prefill t=64, no prefix and 936 cached" };
	run_case(&b);
}

static void test_sparse_bf16(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 2, .H = 64, .t = 1, .topk = 300, .kv = MLA_KV_BF16, .qscale = 2,
				    .lens = { 5000, 200 }, .name = "sparse bf16 H=64 topk=300" };
	run_case(&c);
}

static void test_sparse_fp8(void **unused)
{
	(void)unused;
	const struct mla_case c = { .B = 3, .H = 16, .t = 1, .topk = 2048, .kv = MLA_KV_FP8, .qscale = 2,
				    .lens = { 4000, 2100, 50 }, .name = "sparse fp8 H=16 topk=2048" };
	run_case(&c);
}

static void test_bad_arguments(void **unused)
{
	(void)unused;
	struct mla_decode_args a = { 0 };
	assert_int_equal(mla_decode(&a, 0), -EINVAL);
	size_t ws;
	assert_int_equal(mla_decode_workspace_bytes(&a, &ws), -EINVAL);
	a.batch = 1, a.heads = 16, a.qtokens = 1, a.scale = 0.1f, a.max_seqlen = 100, a.max_pages = 1;
	assert_int_equal(mla_decode_splits(&a), -EINVAL); /* 100 tokens need 2 pages */
	a.max_pages = 2;
	assert_true(mla_decode_splits(&a) >= 1);
	a.qtokens = 2, a.indices = (const int32_t *)16, a.topk = 10; /* sparse needs t = 1 */
	assert_int_equal(mla_decode_splits(&a), -EINVAL);
	a.qtokens = MLA_MAX_QTOKENS + 1, a.indices = NULL;
	assert_int_equal(mla_decode_splits(&a), -EINVAL);
	a.qtokens = 1, a.heads = MLA_MAX_HEADS + 1;
	assert_int_equal(mla_decode_splits(&a), -EINVAL);
	/* Pointers missing or misaligned: nothing launched. */
	a.heads = 16;
	a.q = (const uint16_t *)8, a.cache = (const void *)16, a.block_table = (const int32_t *)16;
	a.seqlens = (const int32_t *)16, a.out = (uint16_t *)16;
	assert_int_equal(mla_decode(&a, 0), -EINVAL);
}

int main(void)
{
	int rc = gt_device_or_skip("MLA_TEST_FILTER");
	if (rc)
		return rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_bf16_small_heads_splits),
		cmocka_unit_test(test_bf16_many_heads_mtp),
		cmocka_unit_test(test_bf16_one_split),
		cmocka_unit_test(test_fp8_small_heads_splits),
		cmocka_unit_test(test_fp8_scale_spread),
		cmocka_unit_test(test_fp8_tile_edges),
		cmocka_unit_test(test_fp8_cluster_splits),
		cmocka_unit_test(test_fp8_split_options),
		cmocka_unit_test(test_fp8_last_merge),
		cmocka_unit_test(test_fp8_underfilled_wave),
		cmocka_unit_test(test_fp8_frame_forms),
		cmocka_unit_test(test_fp8_overlap_prev),
		cmocka_unit_test(test_fp8_verify_window),
		cmocka_unit_test(test_fp8_long_context),
		cmocka_unit_test(test_fp8_eight_tokens_small_heads),
		cmocka_unit_test(test_prefill_chunks),
		cmocka_unit_test(test_sparse_bf16),
		cmocka_unit_test(test_sparse_fp8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
