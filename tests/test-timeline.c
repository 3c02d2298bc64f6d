/* sim/timeline: the discrete-event engine: stream order, dependencies, groups, the resource
 * model (SM and HBM shares, SM admission, reservation and clusters), the critical path, exposed
 * communication and bad input. Expected
 * times are worked out by hand in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "sim/timeline.h"

static struct timeline tl;
static void *mem;

static int setup(void **state)
{
	mem = malloc((size_t)tl_storage_bytes(64, 128));
	if (!mem)
		return 1;
	tl_init(&tl, mem, 64, 128);
	return 0;
}

static int teardown(void **state)
{
	free(mem);
	return 0;
}

static int reset(void **state)
{
	tl_reset(&tl);
	return 0;
}

#define near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-12 * (1 + fabs((double)(b))))

/* One stream: events run one after another; all of them are the critical path. */
static void test_serial(void **state)
{
	int s = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	assert_int_equal(tl_add(&tl, s, "a", 1.0, 1, 0, NULL, 0), 0);
	assert_int_equal(tl_add(&tl, s, "b", 2.0, 0.2, 0.9, NULL, 0), 1);
	assert_int_equal(tl_add(&tl, s, "c", 0.0, 0, 0, NULL, 0), 2);
	assert_int_equal(tl_add(&tl, s, "d", 0.5, 1, 0, NULL, 0), 3);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.result.makespan_s, 3.5);
	near(tl.ev[1].start_s, 1.0);
	near(tl.ev[2].start_s, 3.0);
	near(tl.ev[2].end_s, 3.0);
	assert_int_equal(tl.result.critical_events, 4);
	near(tl.result.critical_compute_s, 3.5);
	near(tl.streams[s].busy_s, 3.5);
	near(tl.result.exposed_comm_s[0], 0);
}

/* Compute beside communication: the comm kernel keeps 0.25 of the SMs for its 2 s, so a GEMM
 * (sm 1) runs at 0.75 meanwhile: 1.5 s of its 4 done at t = 2, the remaining 2.5 at full speed,
 * end at 4.5. A memory-bound kernel needing half the SMs is not slowed. */
static void test_sm_share(void **state)
{
	int c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	int m = tl_stream(&tl, 0, TL_COMM, "comm");
	int32_t comm = tl_add(&tl, m, "a2a", 2.0, 0.25, 0, NULL, 0);
	int32_t gemm = tl_add(&tl, c, "gemm", 4.0, 1.0, 0.1, NULL, 0);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[comm].end_s, 2.0);
	near(tl.ev[gemm].end_s, 4.5);
	near(tl.result.exposed_comm_s[0], 0);
	near(tl.result.comm_busy_s[0], 2.0);
	near(tl.result.compute_busy_s[0], 4.5);

	tl_reset(&tl);
	c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	m = tl_stream(&tl, 0, TL_COMM, "comm");
	tl_add(&tl, m, "a2a", 2.0, 0.25, 0, NULL, 0);
	int32_t mem_bound = tl_add(&tl, c, "copy-like", 4.0, 0.5, 0.9, NULL, 0);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[mem_bound].end_s, 4.0);
}

/* Two compute streams that each fill the GPU take as long together as one after the other;
 * two that each use 0.4 of it run side by side. HBM: two kernels each streaming at the full
 * bandwidth progress at half speed. */
static void test_two_compute_streams(void **state)
{
	int a = tl_stream(&tl, 0, TL_COMPUTE, "a");
	int b = tl_stream(&tl, 0, TL_COMPUTE, "b");
	tl_add(&tl, a, "x", 3.0, 1, 0, NULL, 0);
	tl_add(&tl, b, "y", 1.0, 1, 0, NULL, 0);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.result.makespan_s, 4.0); /* y ends at 2 (half speed), x has 2 left at full speed */
	near(tl.ev[1].end_s, 2.0);

	tl_reset(&tl);
	a = tl_stream(&tl, 0, TL_COMPUTE, "a");
	b = tl_stream(&tl, 0, TL_COMPUTE, "b");
	tl_add(&tl, a, "x", 3.0, 0.4, 0, NULL, 0);
	tl_add(&tl, b, "y", 1.0, 0.4, 0, NULL, 0);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.result.makespan_s, 3.0);

	tl_reset(&tl);
	a = tl_stream(&tl, 0, TL_COMPUTE, "a");
	b = tl_stream(&tl, 0, TL_COMPUTE, "b");
	tl_add(&tl, a, "x", 2.0, 0.3, 1.0, NULL, 0);
	tl_add(&tl, b, "y", 2.0, 0.3, 1.0, NULL, 0);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.result.makespan_s, 4.0);
}

/* Dependencies across streams; the critical path goes through the communication that held the
 * consumer back, and the communication nothing computes beside is exposed. */
static void test_deps_and_critical_path(void **state)
{
	int c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	int m = tl_stream(&tl, 0, TL_COMM, "comm");
	int32_t attn = tl_add(&tl, c, "attn", 1.0, 1, 0, NULL, 0);
	int32_t disp = tl_add(&tl, m, "dispatch", 3.0, 0, 0, &attn, 1);
	int32_t other = tl_add(&tl, c, "other", 1.0, 1, 0, NULL, 0); /* overlaps the dispatch */
	int32_t exp = tl_add(&tl, c, "experts", 2.0, 1, 0, &disp, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[disp].start_s, 1.0);
	near(tl.ev[other].end_s, 2.0);
	near(tl.ev[exp].start_s, 4.0);
	near(tl.result.makespan_s, 6.0);
	assert_int_equal(tl.ev[exp].released_by, disp);
	assert_true(tl.ev[attn].critical && tl.ev[disp].critical && tl.ev[exp].critical);
	assert_false(tl.ev[other].critical);
	near(tl.result.critical_comm_s, 3.0);
	near(tl.result.critical_compute_s, 3.0);
	near(tl.result.exposed_comm_s[0], 2.0); /* 2..4: only the dispatch runs */
	near(tl.ev[exp].exposed_at_end_s, 2.0);
	assert_int_equal(tl.result.last_event, exp);
}

/* A group starts on every GPU when its last member is ready. */
static void test_groups(void **state)
{
	int c0 = tl_stream(&tl, 0, TL_COMPUTE, "gpu0");
	int c1 = tl_stream(&tl, 1, TL_COMPUTE, "gpu1");
	int m0 = tl_stream(&tl, 0, TL_COMM, "comm0");
	int m1 = tl_stream(&tl, 1, TL_COMM, "comm1");
	assert_int_equal(tl.n_gpus, 2);
	int32_t a = tl_add(&tl, c0, "busy", 3.0, 1, 0, NULL, 0);
	int32_t b = tl_add(&tl, c1, "idle-ish", 1.0, 1, 0, NULL, 0);
	int32_t g = tl_group(&tl);
	assert_true(g >= 0);
	int32_t x0 = tl_add_in_group(&tl, m0, g, "combine", 1.0, 0, 0, &a, 1);
	int32_t x1 = tl_add_in_group(&tl, m1, g, "combine", 1.0, 0, 0, &b, 1);
	int32_t after = tl_add(&tl, c1, "next", 1.0, 1, 0, &x1, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[x0].start_s, 3.0);
	near(tl.ev[x1].start_s, 3.0);
	near(tl.ev[after].end_s, 5.0);
	near(tl.result.makespan_s, 5.0);
	/* the path from the last event runs back to the busy GPU through the group */
	assert_true(tl.ev[a].critical);
	assert_false(tl.ev[b].critical);
	near(tl.result.exposed_comm_s[1], 1.0);
}

/* SM admission: communication ready while a GEMM fills the GPU waits for its end (its kernel gets
 * SMs only as the GEMM's CTAs retire), then goes before the next GEMM, which runs beside it on
 * the SMs left. A: 0..4 at full speed; C: 4..5; B: 0.75 of its 2 s by 5, the rest by 6.25. */
static void test_admission(void **state)
{
	int c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	int m = tl_stream(&tl, 0, TL_COMM, "comm");
	int k = tl_stream(&tl, 0, TL_COPY, "copy");
	int32_t tick = tl_add(&tl, k, "tick", 1.0, 0, 0, NULL, 0);
	int32_t a = tl_add(&tl, c, "gemm A", 4.0, 1, 0, NULL, 0);
	int32_t b = tl_add(&tl, c, "gemm B", 2.0, 1, 0, NULL, 0);
	int32_t x = tl_add(&tl, m, "a2a", 1.0, 0.25, 0, &tick, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[a].end_s, 4.0);
	near(tl.ev[x].admit_s, 4.0);
	near(tl.ev[x].start_s, 4.0);
	near(tl.ev[x].end_s, 5.0);
	near(tl.ev[b].end_s, 6.25);
	assert_int_equal(tl.ev[x].released_by, a); /* held back by the GEMM */
	near(tl.result.exposed_comm_s[0], 0);

	/* a kernel that leaves room (a memory-bound one wanting half the SMs) lets it in */
	tl_reset(&tl);
	c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	m = tl_stream(&tl, 0, TL_COMM, "comm");
	k = tl_stream(&tl, 0, TL_COPY, "copy");
	tick = tl_add(&tl, k, "tick", 1.0, 0, 0, NULL, 0);
	a = tl_add(&tl, c, "stream", 4.0, 0.5, 0, NULL, 0);
	x = tl_add(&tl, m, "a2a", 1.0, 0.25, 0, &tick, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[x].start_s, 1.0);
	near(tl.ev[a].end_s, 4.0);

	/* communication that takes no SMs (an RDMA transfer in flight) never waits */
	tl_reset(&tl);
	c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	m = tl_stream(&tl, 0, TL_COMM, "comm");
	k = tl_stream(&tl, 0, TL_COPY, "copy");
	tick = tl_add(&tl, k, "tick", 1.0, 0, 0, NULL, 0);
	a = tl_add(&tl, c, "gemm", 4.0, 1, 0, NULL, 0);
	x = tl_add(&tl, m, "rdma", 1.0, 0, 0, &tick, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[x].start_s, 1.0);
}

/* A GEMM's CTAs retire in its last wave (its tail): communication waiting for SMs gets in there.
 * A (4 s, tail 0.25) reaches its tail at 3; C runs 3..3.5 and slows A's tail to 0.75 meanwhile:
 * 0.375 of its last 1 s by 3.5, the rest by 4.125. */
static void test_tail(void **state)
{
	int c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	int m = tl_stream(&tl, 0, TL_COMM, "comm");
	int k = tl_stream(&tl, 0, TL_COPY, "copy");
	int32_t tick = tl_add(&tl, k, "tick", 1.0, 0, 0, NULL, 0);
	int32_t a = tl_add(&tl, c, "gemm", 4.0, 1, 0, NULL, 0);
	tl.ev[a].tail = 0.25f;
	int32_t x = tl_add(&tl, m, "a2a", 0.5, 0.25, 0, &tick, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[x].admit_s, 3.0);
	near(tl.ev[x].end_s, 3.5);
	near(tl.ev[a].end_s, 4.125);
}

/* SMs reserved for communication: compute runs on the rest all along (0.75: A 0..5.333, B to 8),
 * and communication that fits in the reservation starts at once (1..2). */
static void test_partition(void **state)
{
	assert_int_equal(tl_partition(&tl, 0, 0.25, 1), 0);
	int c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	int m = tl_stream(&tl, 0, TL_COMM, "comm");
	int k = tl_stream(&tl, 0, TL_COPY, "copy");
	int32_t tick = tl_add(&tl, k, "tick", 1.0, 0, 0, NULL, 0);
	int32_t a = tl_add(&tl, c, "gemm A", 4.0, 1, 0, NULL, 0);
	int32_t b = tl_add(&tl, c, "gemm B", 2.0, 1, 0, NULL, 0);
	int32_t mem_bound = tl_add(&tl, c, "stream", 1.0, 0.5, 0, NULL, 0);
	int32_t x = tl_add(&tl, m, "dispatch", 1.0, 0.25, 0, &tick, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[x].start_s, 1.0);
	near(tl.ev[x].end_s, 2.0);
	near(tl.ev[a].end_s, 4.0 / 0.75);
	near(tl.ev[b].end_s, 8.0);
	near(tl.ev[mem_bound].end_s, 9.0); /* half the SMs fit in the rest: not slowed */
	/* tl_reset forgets the partition */
	tl_reset(&tl);
	assert_true(tl.reserved_sm[0] == 0 && tl.cluster_sms[0] == 1);
	assert_int_equal(tl_partition(&tl, 0, 0.96, 1), -EINVAL);
	assert_int_equal(tl_partition(&tl, 0, 0.1, 0.5), -EINVAL);
	assert_int_equal(tl_partition(&tl, TL_MAX_GPUS, 0.1, 2), -EINVAL);
	assert_int_equal(tl_partition(&tl, 0, NAN, 2), -EINVAL);

	/* clusters of 2 SMs: a communication kernel on 0.25 of the SMs (outside any reservation)
	 * takes 0.5 from a GEMM: 0.5 of 3 s by 1, the rest by 3.5 */
	assert_int_equal(tl_partition(&tl, 0, 0, 2), 0);
	c = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	m = tl_stream(&tl, 0, TL_COMM, "comm");
	x = tl_add(&tl, m, "a2a", 1.0, 0.25, 0, NULL, 0);
	a = tl_add(&tl, c, "gemm", 3.0, 1, 0, NULL, 0);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[x].end_s, 1.0);
	near(tl.ev[a].end_s, 3.5);
}

/* A collective's member resident early spins on its SMs until its peer is admitted: GPU 0's
 * member takes 0.25 at 0 and slows its GEMM to 0.75 until the work ends at 3; GPU 1's gets ready
 * at 0.5 beside a GEMM and is admitted when that ends at 2. A0: 2.25 by 3, done at 3.75; A2 (GPU
 * 1, after A1) 0.75 by 3, done at 3.25. */
static void test_group_spin(void **state)
{
	int c0 = tl_stream(&tl, 0, TL_COMPUTE, "compute0");
	int m0 = tl_stream(&tl, 0, TL_COMM, "comm0");
	int c1 = tl_stream(&tl, 1, TL_COMPUTE, "compute1");
	int m1 = tl_stream(&tl, 1, TL_COMM, "comm1");
	int k1 = tl_stream(&tl, 1, TL_COPY, "copy1");
	int32_t g = tl_group(&tl);
	int32_t tick = tl_add(&tl, k1, "tick", 0.5, 0, 0, NULL, 0);
	int32_t a0 = tl_add(&tl, c0, "gemm A0", 3.0, 1, 0, NULL, 0);
	int32_t a1 = tl_add(&tl, c1, "gemm A1", 2.0, 1, 0, NULL, 0);
	int32_t a2 = tl_add(&tl, c1, "gemm A2", 1.0, 1, 0, NULL, 0);
	int32_t x0 = tl_add_in_group(&tl, m0, g, "a2a", 1.0, 0.25, 0, NULL, 0);
	int32_t x1 = tl_add_in_group(&tl, m1, g, "a2a", 1.0, 0.25, 0, &tick, 1);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.ev[x0].admit_s, 0.0);
	near(tl.ev[x0].start_s, 2.0);
	near(tl.ev[x1].admit_s, 2.0);
	near(tl.ev[x1].start_s, 2.0);
	near(tl.ev[x0].end_s, 3.0);
	near(tl.ev[a0].end_s, 3.75);
	near(tl.ev[a1].end_s, 2.0);
	near(tl.ev[a2].end_s, 3.25);
	assert_int_equal(tl.ev[x0].released_by, a1);
	assert_int_equal(tl.ev[x1].released_by, a1);
	near(tl.result.comm_busy_s[0], 1.0); /* the work, not the spin */
}

static void test_bad_input(void **state)
{
	int s = tl_stream(&tl, 0, TL_COMPUTE, "compute");
	int32_t dep = 5;
	assert_int_equal(tl_add(&tl, 3, "x", 1, 0, 0, NULL, 0), -EINVAL);
	assert_int_equal(tl_add(&tl, s, "x", -1, 0, 0, NULL, 0), -EINVAL);
	assert_int_equal(tl_add(&tl, s, "x", NAN, 0, 0, NULL, 0), -EINVAL);
	assert_int_equal(tl_add(&tl, s, "x", 1, 0, 0, &dep, 1), -EINVAL); /* not added yet */
	assert_int_equal(tl_stream(&tl, TL_MAX_GPUS, TL_COMPUTE, "x"), -EINVAL);
	assert_int_equal(tl.n_events, 0);
	/* demands outside [0, 1] are clamped */
	int32_t e = tl_add(&tl, s, "x", 1, 7, -1, NULL, 0);
	assert_true(tl.ev[e].sm == 1.0f && tl.ev[e].hbm == 0.0f);
	/* full: -E2BIG, nothing added */
	for (int i = 1; i < 64; i++)
		assert_true(tl_add(&tl, s, "x", 1, 0, 0, NULL, 0) >= 0);
	assert_int_equal(tl_add(&tl, s, "x", 1, 0, 0, NULL, 0), -E2BIG);
	assert_int_equal(tl.n_events, 64);
	assert_int_equal(tl_run(&tl), 0);
	near(tl.result.makespan_s, 64.0);

	/* members of a group that wait on each other never start */
	tl_reset(&tl);
	int a = tl_stream(&tl, 0, TL_COMM, "a");
	int b = tl_stream(&tl, 1, TL_COMM, "b");
	int32_t g1 = tl_group(&tl), g2 = tl_group(&tl);
	tl_add_in_group(&tl, a, g1, "first on a", 1, 0, 0, NULL, 0);
	tl_add_in_group(&tl, b, g2, "first on b", 1, 0, 0, NULL, 0);
	tl_add_in_group(&tl, a, g2, "second on a", 1, 0, 0, NULL, 0);
	tl_add_in_group(&tl, b, g1, "second on b", 1, 0, 0, NULL, 0);
	assert_int_equal(tl_run(&tl), -EDEADLK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_serial, reset),
		cmocka_unit_test_setup(test_sm_share, reset),
		cmocka_unit_test_setup(test_two_compute_streams, reset),
		cmocka_unit_test_setup(test_deps_and_critical_path, reset),
		cmocka_unit_test_setup(test_groups, reset),
		cmocka_unit_test_setup(test_admission, reset),
		cmocka_unit_test_setup(test_tail, reset),
		cmocka_unit_test_setup(test_partition, reset),
		cmocka_unit_test_setup(test_group_spin, reset),
		cmocka_unit_test_setup(test_bad_input, reset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
