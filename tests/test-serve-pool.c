/* serve/pool: the hybrid paged pool. Reuse only where the MLA pages and every KDA group's
 * checkpoint exist; hash endpoints finer than pages (partial-page copies); pin on hit; blocks
 * being prefetched are not matched; evicting one group's checkpoint invalidates its siblings; the
 * CPU tier writes back a page with its checkpoints and prefetches them; and under random
 * operations every count and list stays consistent (serve_pool_check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serve/pool.h"

enum { H = 512, TB = 1000 /* bytes per token */, GB = 100000 /* bytes per group */ };

static struct serve_pool_cfg cfg(int64_t page_tokens, int groups, int64_t capacity, int64_t cpu)
{
	return (struct serve_pool_cfg){.capacity_bytes = capacity, .cpu_bytes = cpu, .hash_tokens = H,
				       .page_tokens = page_tokens, .token_bytes = TB, .kda_groups = groups,
				       .group_bytes = GB, .prefix = true};
}

/* A request whose tokens belong to conversation `conv` (the same conv: the same content). */
static struct serve_request req(uint64_t conv)
{
	struct serve_request q;
	memset(&q, 0, sizeof q);
	q.seg_id[1] = conv;
	q.conversation = -1;
	q.after = -1;
	return q;
}

static int64_t ckpt_set; /* endpoints (in tokens) that take a checkpoint; bit i: (i+1) x H */
static bool at(const void *ctx, int64_t tokens)
{
	(void)ctx;
	int64_t i = tokens / H - 1;
	return i >= 0 && i < 63 && (ckpt_set >> i & 1);
}

/* Admits q for `tokens` with whatever prefix it finds, computes it all, registers. */
static struct serve_pool_match run(struct serve_pool *p, struct serve_pool_seq *sq, const struct serve_request *q,
				   int64_t tokens)
{
	struct serve_pool_match m;
	serve_pool_lookup(p, q, tokens - 1, &m);
	assert_int_equal(serve_pool_admit(p, sq, q, &m, tokens), 0);
	serve_pool_prefetch_done(p, sq);
	serve_pool_restored(p, sq);
	serve_pool_register(p, sq, q, tokens, at, NULL);
	assert_int_equal(serve_pool_check(p), 0);
	return m;
}

static void test_reuse_needs_checkpoint(void **state)
{
	struct serve_pool p;
	struct err e;
	struct serve_pool_cfg c = cfg(1024, 3, 100000000, 0);
	assert_int_equal(serve_pool_init(&p, &c, &e), 0);
	struct serve_request a = req(7);
	struct serve_pool_seq s1, s2;
	ckpt_set = 0; /* no checkpoint */
	run(&p, &s1, &a, 3000);
	serve_pool_release(&p, &s1);
	struct serve_pool_match m;
	serve_pool_lookup(&p, &a, 4000, &m);
	assert_int_equal(m.tokens, 0); /* the pages are there, no KDA state at any boundary */
	/* checkpoints at 1024 and 2048 (endpoints 2 and 4): a request passing them computes the
	 * state there, so it checkpoints endpoints that existed without one */
	ckpt_set = (1 << 1) | (1 << 3);
	run(&p, &s1, &a, 3000);
	assert_int_equal(p.st.ckpt_written_bytes, 2 * 3 * GB);
	serve_pool_release(&p, &s1);
	serve_pool_lookup(&p, &a, 4000, &m);
	assert_int_equal(m.tokens, 2048); /* the longest boundary with pages and every group's state */
	assert_int_equal(m.copy_bytes, 2 * 3 * GB); /* the checkpoint restored; 2048 ends a page */
	/* a prompt of 1500: only the 1024 boundary lies within it */
	serve_pool_lookup(&p, &a, 1499, &m);
	assert_int_equal(m.tokens, 1024);
	/* another conversation shares nothing */
	struct serve_request b = req(8);
	serve_pool_lookup(&p, &b, 4000, &m);
	assert_int_equal(m.tokens, 0);
	/* a hit: the pages are pinned, the prefix counted */
	m = run(&p, &s2, &a, 5000);
	assert_int_equal(m.tokens, 2048);
	assert_int_equal(p.st.hits, 1);
	assert_int_equal(p.st.hit_tokens, 2048);
	serve_pool_release(&p, &s2);
	assert_int_equal(serve_pool_check(&p), 0);
	serve_pool_free(&p);
}

/* Without KDA layers any endpoint with its page is reusable. */
static void test_reuse_without_kda(void **state)
{
	struct serve_pool p;
	struct err e;
	struct serve_pool_cfg c = cfg(1024, 0, 100000000, 0);
	assert_int_equal(serve_pool_init(&p, &c, &e), 0);
	struct serve_request a = req(1);
	struct serve_pool_seq s;
	ckpt_set = 0;
	run(&p, &s, &a, 3000);
	serve_pool_release(&p, &s);
	struct serve_pool_match m;
	serve_pool_lookup(&p, &a, 2999, &m);
	assert_int_equal(m.tokens, 2560); /* five 512-token endpoints within 2999 */
	/* the match ends inside the third 1024-token page: its 512 tokens are copied */
	assert_int_equal(m.copy_bytes, 2 * 512 * TB);
	serve_pool_free(&p);
}

/* Endpoints finer than pages: a match inside a page copies the page's prefix into the request's
 * own page; the shared full pages are pinned. */
static void test_partial_page(void **state)
{
	struct serve_pool p;
	struct err e;
	struct serve_pool_cfg c = cfg(2048, 2, 100000000, 0);
	assert_int_equal(serve_pool_init(&p, &c, &e), 0);
	struct serve_request a = req(3);
	struct serve_pool_seq s1, s2;
	ckpt_set = (1 << 2) | (1 << 4); /* 1536, 2560 */
	run(&p, &s1, &a, 4096);
	serve_pool_release(&p, &s1);
	struct serve_pool_match m;
	serve_pool_lookup(&p, &a, 5000, &m);
	assert_int_equal(m.tokens, 2560);
	assert_int_equal(m.copy_bytes, 2 * 512 * TB + 2 * 2 * GB);
	int64_t used = p.st.used_bytes;
	assert_int_equal(serve_pool_admit(&p, &s2, &a, &m, 5001), 0);
	/* pages for 5001 tokens: 3; the first shared, two new (the copy and the rest), and a state */
	assert_int_equal(s2.n_pages, 3);
	assert_int_equal(p.st.used_bytes - used, 2 * 2048 * TB + 2 * GB);
	serve_pool_release(&p, &s2);
	assert_int_equal(serve_pool_check(&p), 0);
	serve_pool_free(&p);
}

/* A hit pins what it matched: other requests filling the pool evict around it. */
static void test_pin_on_hit(void **state)
{
	struct serve_pool p;
	struct err e;
	/* room for ~12 pages of 1024 tokens and a few states */
	struct serve_pool_cfg c = cfg(1024, 2, 12 * 1024 * TB + 6 * GB, 0);
	assert_int_equal(serve_pool_init(&p, &c, &e), 0);
	struct serve_request a = req(11), b = req(12);
	struct serve_pool_seq s1, s2, s3;
	ckpt_set = 1 << 3; /* 2048 */
	run(&p, &s1, &a, 3000);
	serve_pool_release(&p, &s1);
	struct serve_pool_match m = run(&p, &s2, &a, 3100); /* holds the 2048 prefix */
	assert_int_equal(m.tokens, 2048);
	/* b fills the rest: what is cached and unpinned goes, what s2 pins stays */
	struct serve_pool_match mb;
	serve_pool_lookup(&p, &b, 7000, &mb);
	int rc = serve_pool_admit(&p, &s3, &b, &mb, 7000);
	assert_int_equal(rc, 0);
	assert_int_equal(serve_pool_check(&p), 0);
	serve_pool_release(&p, &s2);
	serve_pool_lookup(&p, &a, 4000, &m);
	assert_int_equal(m.tokens, 2048); /* still there */
	/* more than the pool can ever free while s3 holds its pages: refused, nothing changed */
	int64_t used = p.st.used_bytes;
	struct serve_pool_seq s4;
	struct serve_request d = req(13);
	struct serve_pool_match md = {0};
	assert_int_equal(serve_pool_admit(&p, &s4, &d, &md, 12000), -ENOSPC);
	assert_int_equal(p.st.used_bytes, used);
	assert_int_equal(serve_pool_check(&p), 0);
	serve_pool_release(&p, &s3);
	serve_pool_free(&p);
}

/* Evicting one KDA group's checkpoint drops its siblings: the endpoint is no longer reusable. */
static void test_sibling_invalidation(void **state)
{
	struct serve_pool p;
	struct err e;
	/* a's prefix pinned (two pages, a state, one page more) and its checkpoint cached: 3 pages and
	 * 6 groups; b then needs a state and 10 pages, one byte more than is free */
	const int64_t page = 512 * TB, used = 3 * page + 6 * GB;
	struct serve_pool_cfg c = cfg(512, 3, used + 3 * GB + 10 * page - 1, 0);
	assert_int_equal(serve_pool_init(&p, &c, &e), 0);
	struct serve_request a = req(21), b = req(22);
	struct serve_pool_seq s1, s2, s3;
	ckpt_set = 1 << 1; /* 1024 */
	run(&p, &s1, &a, 1100);
	serve_pool_release(&p, &s1);
	/* a hit pins the pages again; once restored only the checkpoint's blocks are unpinned */
	struct serve_pool_match m;
	serve_pool_lookup(&p, &a, 1100, &m);
	assert_int_equal(m.tokens, 1024);
	assert_int_equal(serve_pool_admit(&p, &s2, &a, &m, 1101), 0);
	serve_pool_restored(&p, &s2);
	assert_int_equal(p.st.used_bytes, used);
	assert_int_equal(p.lru_bytes, 3 * GB);
	struct serve_pool_match none = {0};
	assert_int_equal(serve_pool_admit(&p, &s3, &b, &none, 10 * 512), 0);
	/* one group's block had to go: all three did */
	assert_int_equal(p.st.ckpt_bytes, 0);
	assert_int_equal(p.st.evicted_ckpts, 1);
	assert_int_equal(p.st.ckpt_invalidated, 2);
	assert_int_equal(p.st.evicted_pages, 0);
	assert_int_equal(serve_pool_check(&p), 0);
	serve_pool_lookup(&p, &a, 1100, &m);
	assert_int_equal(m.tokens, 0); /* the pages are there, the state at 1024 is not */
	serve_pool_release(&p, &s3);
	serve_pool_release(&p, &s2);
	/* s2 passed 1024 again, but registered it before: no new checkpoint */
	serve_pool_lookup(&p, &a, 1100, &m);
	assert_int_equal(m.tokens, 0);
	assert_int_equal(serve_pool_check(&p), 0);
	serve_pool_free(&p);
}

/* The CPU tier: evicted prefixes are written back (a page with its checkpoints); a hit there is
 * prefetched, and until the prefetch is done nobody else matches those blocks. */
static void test_cpu_tier(void **state)
{
	struct serve_pool p;
	struct err e;
	struct serve_pool_cfg c = cfg(1024, 2, 8 * 1024 * TB + 4 * GB, 1000000000);
	assert_int_equal(serve_pool_init(&p, &c, &e), 0);
	struct serve_request a = req(31), b = req(32);
	struct serve_pool_seq s1, s2, s3;
	ckpt_set = 1 << 3; /* 2048 */
	run(&p, &s1, &a, 3000);
	serve_pool_release(&p, &s1);
	/* b takes nearly all of HBM: a's prefix goes to CPU DRAM */
	struct serve_pool_match mb = {0};
	assert_int_equal(serve_pool_admit(&p, &s2, &b, &mb, 7 * 1024), 0);
	assert_int_equal(serve_pool_check(&p), 0);
	int64_t off = serve_pool_take_offload(&p);
	assert_true(off >= 2 * 1024 * TB + 2 * GB); /* the pages to 2048 and the checkpoint */
	assert_int_equal(serve_pool_take_offload(&p), 0);
	serve_pool_release(&p, &s2);
	struct serve_pool_match m;
	serve_pool_lookup(&p, &a, 4000, &m);
	assert_int_equal(m.tokens, 2048);
	assert_true(m.cpu);
	/* b's eviction reached the second page (and the checkpoint), not the first */
	assert_int_equal(m.cpu_bytes, 1024 * TB + 2 * GB);
	assert_int_equal(serve_pool_admit(&p, &s3, &a, &m, 4000), 0);
	assert_true(s3.busy && s3.busy_ckpt);
	/* in flight: not matched */
	struct serve_pool_match m2;
	serve_pool_lookup(&p, &a, 4000, &m2);
	assert_int_equal(m2.tokens, 0);
	serve_pool_prefetch_done(&p, &s3);
	serve_pool_lookup(&p, &a, 4000, &m2);
	assert_int_equal(m2.tokens, 2048);
	assert_false(m2.cpu); /* back in HBM (and still in CPU DRAM) */
	assert_int_equal(p.st.prefetch_bytes, 1024 * TB + 2 * GB);
	serve_pool_restored(&p, &s3);
	serve_pool_release(&p, &s3);
	assert_int_equal(serve_pool_check(&p), 0);
	serve_pool_free(&p);
}

/* Random admissions, growth, registration, prefetches and releases: every invariant holds after
 * every operation, and everything returns when all requests are gone. */
static void test_random(void **state)
{
	for (int variant = 0; variant < 4; variant++) {
		struct serve_pool p;
		struct err e;
		struct serve_pool_cfg c = cfg(variant & 1 ? 2048 : 512, variant & 2 ? 3 : 0, 40 * 2048 * TB,
					      variant == 3 ? 20 * 2048 * TB : 0);
		assert_int_equal(serve_pool_init(&p, &c, &e), 0);
		enum { N = 12 };
		struct serve_pool_seq seq[N];
		struct serve_request q[N];
		int64_t tokens[N];
		bool live[N] = {false};
		uint64_t x = 99 + (uint64_t)variant;
		for (int it = 0; it < 4000; it++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			int k = (int)((x >> 33) % N);
			ckpt_set = (int64_t)(x >> 20);
			if (!live[k]) {
				q[k] = req((x >> 40) % 5); /* five conversations: plenty of sharing */
				int64_t t = 1 + (int64_t)((x >> 8) % 9000);
				struct serve_pool_match m;
				serve_pool_lookup(&p, &q[k], t - 1, &m);
				if (serve_pool_admit(&p, &seq[k], &q[k], &m, t) == 0) {
					live[k] = true;
					tokens[k] = t;
					if ((x >> 7) & 1) {
						serve_pool_prefetch_done(&p, &seq[k]);
						serve_pool_restored(&p, &seq[k]);
					}
				}
			} else if ((x >> 5) % 4 == 0) {
				serve_pool_release(&p, &seq[k]);
				live[k] = false;
			} else {
				serve_pool_prefetch_done(&p, &seq[k]);
				serve_pool_restored(&p, &seq[k]);
				int64_t more = (int64_t)((x >> 12) % 700);
				if (serve_pool_grow(&p, &seq[k], tokens[k] + more) == 0)
					tokens[k] += more;
				serve_pool_register(&p, &seq[k], &q[k], tokens[k], at, NULL);
			}
			serve_pool_take_offload(&p);
			assert_int_equal(serve_pool_check(&p), 0);
		}
		for (int k = 0; k < N; k++)
			if (live[k])
				serve_pool_release(&p, &seq[k]);
		assert_int_equal(serve_pool_check(&p), 0);
		assert_int_equal(serve_pool_pinned_bytes(&p), 0);
		serve_pool_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse_needs_checkpoint), cmocka_unit_test(test_reuse_without_kda),
		cmocka_unit_test(test_partial_page),           cmocka_unit_test(test_pin_on_hit),
		cmocka_unit_test(test_sibling_invalidation),   cmocka_unit_test(test_cpu_tier),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
