/* CPU-side pieces of trace/capture: rank and path templates, the child's environment, finding
 * libk3capture.so, and the buffer pool with its flush protocol. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace/capture/env.h"
#include "trace/capture/pool.h"

static void test_rank(void **state)
{
	(void)state;
	const char *none[] = {"PATH=/bin", NULL};
	assert_int_equal(capture_rank_from_env(none), -1);
	const char *rank[] = {"LOCAL_RANK=3", "RANK=11", NULL};
	assert_int_equal(capture_rank_from_env(rank), 11);
	const char *local[] = {"LOCAL_RANK=3", NULL};
	assert_int_equal(capture_rank_from_env(local), 3);
	const char *ompi[] = {"OMPI_COMM_WORLD_RANK=7", NULL};
	assert_int_equal(capture_rank_from_env(ompi), 7);
	const char *bad[] = {"RANK=x1", NULL};
	assert_int_equal(capture_rank_from_env(bad), -1);
	const char *prefix[] = {"RANKS=4", "MY_RANK=5", NULL};
	assert_int_equal(capture_rank_from_env(prefix), -1);
	assert_int_equal(capture_rank_from_env(NULL), -1);
}

static void test_path_expand(void **state)
{
	(void)state;
	char out[256];
	assert_int_equal(capture_path_expand("t-%p-r%r-%h.db", 42, 3, "node1", false, out,
					     sizeof out), 0);
	assert_string_equal(out, "t-42-r3-node1.db");
	assert_int_equal(capture_path_expand("t-%r.db", 42, -1, NULL, false, out, sizeof out), 0);
	assert_string_equal(out, "t-na.db");
	assert_int_equal(capture_path_expand("100%%.db", 1, 0, NULL, false, out, sizeof out), 0);
	assert_string_equal(out, "100%.db");
	/* unique: pid and rank go before the extension of the last component */
	assert_int_equal(capture_path_expand("/a.b/out.db", 9, 1, NULL, true, out, sizeof out), 0);
	assert_string_equal(out, "/a.b/out.r1.p9.db");
	assert_int_equal(capture_path_expand("/a.b/out", 9, -1, NULL, true, out, sizeof out), 0);
	assert_string_equal(out, "/a.b/out.p9");
	assert_int_equal(capture_path_expand(".hidden", 9, -1, NULL, true, out, sizeof out), 0);
	assert_string_equal(out, ".hidden.p9");
	/* a template with %p is unique already */
	assert_int_equal(capture_path_expand("x-%p.db", 9, 2, NULL, true, out, sizeof out), 0);
	assert_string_equal(out, "x-9.db");
	/* errors leave out untouched */
	strcpy(out, "keep");
	assert_int_equal(capture_path_expand("bad%q", 1, 0, NULL, false, out, sizeof out), -EINVAL);
	assert_int_equal(capture_path_expand("", 1, 0, NULL, false, out, sizeof out), -EINVAL);
	char small[8];
	strcpy(small, "keep");
	assert_int_equal(capture_path_expand("longer-than-8-%p", 123456, 0, NULL, false, small,
					     sizeof small), -ENAMETOOLONG);
	assert_string_equal(small, "keep");
	assert_string_equal(out, "keep");
}

static void test_env(void **state)
{
	(void)state;
	const char *base[] = {"A=1", "B=2", "CUDA_INJECTION64_PATH=/old.so", NULL};
	struct capture_env env;
	assert_int_equal(capture_env_init(&env, base, 16), 0);
	assert_string_equal(capture_env_get(&env, "A"), "1");
	assert_null(capture_env_get(&env, "C"));
	assert_int_equal(capture_env_set(&env, CAPTURE_ENV_INJECTION, "/new.so"), 0);
	assert_int_equal(capture_env_set(&env, "C", "x=y"), 0);
	assert_string_equal(capture_env_get(&env, CAPTURE_ENV_INJECTION), "/new.so");
	assert_string_equal(capture_env_get(&env, "C"), "x=y");
	assert_int_equal(env.n, 4);
	assert_null(env.vars[env.n]);
	capture_env_unset(&env, "A");
	assert_null(capture_env_get(&env, "A"));
	assert_int_equal(env.n, 3);
	assert_null(env.vars[3]);
	assert_int_equal(capture_env_set(&env, "BAD=KEY", "v"), -EINVAL);
	assert_int_equal(capture_env_set(&env, "", "v"), -EINVAL);
	/* bounded */
	char key[16];
	int rc = 0;
	for (int i = 0; i < 32 && rc == 0; i++) {
		snprintf(key, sizeof key, "K%d", i);
		rc = capture_env_set(&env, key, "v");
	}
	assert_int_equal(rc, -E2BIG);
	assert_true(env.n <= 16);
	capture_env_release(&env);

	assert_int_equal(capture_env_init(&env, NULL, 4), 0);
	assert_int_equal(env.n, 0);
	assert_null(env.vars[0]);
	capture_env_release(&env);
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void test_locate_lib(void **state)
{
	(void)state;
	char root[] = "/tmp/k3capture-unit-XXXXXX";
	assert_non_null(mkdtemp(root));
	char p[512], out[512], exe[512];
	snprintf(p, sizeof p, "%s/bin", root);
	mkdir(p, 0700);
	snprintf(exe, sizeof exe, "%s/bin/k3sim", root);
	touch(exe);
	/* nothing there yet */
	assert_int_equal(capture_locate_lib(exe, NULL, "lib/x86_64-linux-gnu", out, sizeof out),
			 -ENOENT);
	/* install tree */
	snprintf(p, sizeof p, "%s/lib", root);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/lib/k3sim", root);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/lib/k3sim/%s", root, CAPTURE_LIB_NAME);
	touch(p);
	assert_int_equal(capture_locate_lib(exe, NULL, "lib/x86_64-linux-gnu", out, sizeof out), 0);
	char want[PATH_MAX];
	assert_non_null(realpath(p, want));
	assert_string_equal(out, want);
	/* override wins, and must exist */
	assert_int_equal(capture_locate_lib(exe, exe, NULL, out, sizeof out), 0);
	assert_string_equal(out, exe);
	assert_int_equal(capture_locate_lib(exe, "/nonexistent/x.so", NULL, out, sizeof out),
			 -ENOENT);
	unlink(p);
	snprintf(p, sizeof p, "%s/lib/k3sim", root);
	rmdir(p);
	snprintf(p, sizeof p, "%s/lib", root);
	rmdir(p);
	unlink(exe);
	snprintf(p, sizeof p, "%s/bin", root);
	rmdir(p);
	rmdir(root);
}

static void test_pool_basic(void **state)
{
	(void)state;
	struct capture_pool p;
	assert_int_equal(capture_pool_init(&p, 0, 16), -EINVAL);
	assert_int_equal(capture_pool_init(&p, 3, 64), 0);
	uint8_t *a = capture_pool_get(&p, 0), *b = capture_pool_get(&p, 0),
		*c = capture_pool_get(&p, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_null(capture_pool_get(&p, 0));   /* exhausted: no wait */
	assert_null(capture_pool_get(&p, 20));  /* exhausted: waited, nothing came */
	assert_int_equal(p.timeouts, 2);
	struct capture_item it = {.kind = CAPTURE_ITEM_ACTIVITY, .buf = a, .valid_bytes = 10};
	capture_pool_submit(&p, &it);
	it.buf = b;
	it.valid_bytes = 20;
	capture_pool_submit(&p, &it);
	capture_pool_put(&p, c);
	struct capture_item got;
	uint64_t upto;
	assert_int_equal(capture_pool_next(&p, &got, &upto), 1);
	assert_ptr_equal(got.buf, a);                /* FIFO */
	assert_int_equal(got.valid_bytes, 10);
	capture_pool_done(&p, got.buf);
	assert_int_equal(capture_pool_next(&p, &got, &upto), 1);
	assert_ptr_equal(got.buf, b);
	capture_pool_done(&p, got.buf);
	assert_int_equal(p.n_free, 3);
	capture_pool_close(&p);
	assert_int_equal(capture_pool_next(&p, &got, &upto), 0);
	assert_null(capture_pool_get(&p, 0));        /* closed */
	capture_pool_release(&p);
}

struct consumer {
	struct capture_pool *p;
	uint64_t items, bytes, commits;
};

static void *consume(void *arg)
{
	struct consumer *c = arg;
	struct capture_item it;
	uint64_t upto;
	int r;
	while ((r = capture_pool_next(c->p, &it, &upto)) != 0) {
		if (r == 1) {
			c->items++;
			c->bytes += it.valid_bytes;
			capture_pool_done(c->p, it.buf);
		} else {
			c->commits++;
			capture_pool_committed(c->p, upto);
		}
	}
	capture_pool_committed(c->p, UINT64_MAX);
	return NULL;
}

struct producer {
	struct capture_pool *p;
	int n;
	uint64_t bytes;
};

static void *produce(void *arg)
{
	struct producer *pr = arg;
	for (int i = 0; i < pr->n; i++) {
		uint8_t *b = capture_pool_get(pr->p, 10000);
		assert_non_null(b);
		struct capture_item it = {.kind = CAPTURE_ITEM_ACTIVITY, .buf = b,
					  .valid_bytes = (size_t)(i % 50) + 1};
		pr->bytes += it.valid_bytes;
		capture_pool_submit(pr->p, &it);
		if (i % 100 == 0)
			assert_int_equal(capture_pool_flush(pr->p, 10000), 0);
	}
	return NULL;
}

static void test_pool_threads(void **state)
{
	(void)state;
	struct capture_pool p;
	assert_int_equal(capture_pool_init(&p, 4, 64), 0);
	struct consumer c = {&p, 0, 0, 0};
	struct producer pr[3] = {{&p, 2000, 0}, {&p, 2000, 0}, {&p, 2000, 0}};
	pthread_t tc, tp[3];
	pthread_create(&tc, NULL, consume, &c);
	for (int i = 0; i < 3; i++)
		pthread_create(&tp[i], NULL, produce, &pr[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(tp[i], NULL);
	/* everything submitted so far is committed after a flush */
	assert_int_equal(capture_pool_flush(&p, 10000), 0);
	assert_true(p.committed >= p.submitted);
	capture_pool_close(&p);
	pthread_join(tc, NULL);
	assert_int_equal(c.items, 6000);
	assert_int_equal(c.bytes, pr[0].bytes + pr[1].bytes + pr[2].bytes);
	assert_true(c.commits >= 1);
	assert_int_equal(p.n_free, 4);   /* every buffer came back; memory never grew */
	capture_pool_release(&p);
}

static void test_pool_flush_idle(void **state)
{
	(void)state;
	struct capture_pool p;
	assert_int_equal(capture_pool_init(&p, 2, 8), 0);
	/* nothing submitted: nothing to wait for */
	assert_int_equal(capture_pool_flush(&p, 0), 0);
	/* submitted but no consumer: times out */
	uint8_t *b = capture_pool_get(&p, 0);
	struct capture_item it = {.kind = CAPTURE_ITEM_MARKS, .buf = b, .valid_bytes = 1};
	capture_pool_submit(&p, &it);
	assert_int_equal(capture_pool_flush(&p, 10), -ETIMEDOUT);
	capture_pool_close(&p);
	struct capture_item got;
	uint64_t upto;
	/* the consumer drains before it sees the close, and a commit is due first */
	int r = capture_pool_next(&p, &got, &upto);
	assert_int_equal(r, 1);
	capture_pool_done(&p, got.buf);
	r = capture_pool_next(&p, &got, &upto);
	assert_int_equal(r, 2);
	assert_int_equal(upto, 1);
	capture_pool_committed(&p, upto);
	assert_int_equal(capture_pool_next(&p, &got, &upto), 0);
	capture_pool_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_path_expand),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_locate_lib),
		cmocka_unit_test(test_pool_basic),
		cmocka_unit_test(test_pool_threads),
		cmocka_unit_test(test_pool_flush_idle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
