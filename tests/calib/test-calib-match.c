/* calib/match: kernels to ops by NVTX ranges (innermost k3sim range on the launching thread) and by
 * name rules; unmatched work listed with reasons; points (medians); bad databases. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib-fixture.h"
#include "calib/match.h"
#include "calib/points.h"

static char dir[] = "/tmp/k3calib-match-XXXXXX";

static const char *path(const char *name)
{
	static char buf[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

#define GEMM64 "k3sim op=gemm m=64 n=7168 k=7168 dtype=bf16"

static void write_fixture(const char *p)
{
	struct cfx f;
	assert_int_equal(cfx_open(&f, p), 0);
	/* 1, 2: two instances of one range; the first holds a GEMM and its split-K reduction */
	assert_int_equal(cfx_range(&f, 1, 1000, 5000, GEMM64), 0);
	assert_int_equal(cfx_kernel(&f, 1, 1100, "nvjet_sm90_tst_192x192", 100000, 10000, 132, 1), 0);
	assert_int_equal(
	    cfx_kernel(&f, 1, 1200, "void cublasLt::splitKreduce_kernel<32>()", 110000, 2000, 16, 1), 0);
	assert_int_equal(cfx_range(&f, 1, 6000, 9000, GEMM64), 0);
	assert_int_equal(cfx_kernel(&f, 1, 9000, "nvjet_sm90_tst_192x192", 120000, 11000, 132, 1),
	                 0); /* at the end */
	/* 3: nested k3sim ranges: the innermost wins; the memcpy after it belongs to the outer */
	assert_int_equal(cfx_range(&f, 1, 10000, 20000, "k3sim op=copy bytes=1048576"), 0);
	assert_int_equal(cfx_range(&f, 1, 11000, 12000, "k3sim op=gemm m=16 n=576 k=7168 dtype=fp8"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 11500, "nvjet_sm90_qqtst_64x8", 140000, 7000, 8, 1), 0);
	assert_int_equal(cfx_memcpy(&f, 1, 13000, 1048576, 150000, 900), 0);
	/* 4: a rule with shape keys from an enclosing (not k3sim) range */
	assert_int_equal(cfx_range(&f, 1, 30000, 40000, "decode layer=3 b=8 h=96 state=fp32"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 31000, "fused_recurrent_kda_fwd_kernel", 160000, 30000, 96, 8), 0);
	/* 5: a rule group: two kernels of one range instance are one sample */
	assert_int_equal(cfx_range(&f, 1, 50000, 60000, "prefill b=1 t=4096 h=96"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 51000, "chunk_kda_fwd_kernel_intra", 200000, 3000, 256, 96), 0);
	assert_int_equal(cfx_kernel(&f, 1, 52000, "chunk_kda_fwd_kernel_inter", 210000, 4000, 96, 1), 0);
	/* 6, 7: no rule; a rule without its keys */
	assert_int_equal(cfx_kernel(&f, 1, 70000, "my_custom_kernel", 220000, 500, 1, 1), 0);
	assert_int_equal(cfx_kernel(&f, 1, 80000, "nvjet_sm90_tst_192x192", 230000, 9000, 132, 1), 0);
	/* 8: an invalid k3sim range */
	assert_int_equal(cfx_range(&f, 1, 90000, 91000, "k3sim op=gemm m=64 n=7168 k=7168 dtype=bf17"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 90500, "nvjet_sm90_tst_192x192", 240000, 9000, 132, 1), 0);
	/* 9: no launching call */
	assert_int_equal(cfx_orphan(&f, "orphan_kernel", 250000, 100), 0);
	/* 10: a range on thread 1 does not hold a launch from thread 2 */
	assert_int_equal(cfx_range(&f, 1, 100000, 110000, "k3sim op=gemm m=1 n=96 k=7168 dtype=bf16"), 0);
	assert_int_equal(cfx_kernel(&f, 2, 100500, "other_thread_kernel", 260000, 100, 1, 1), 0);
	/* 11: a k3sim range without GPU work */
	assert_int_equal(cfx_range(&f, 1, 120000, 121000, "k3sim op=copy bytes=4096"), 0);
	/* 12, 13: reference measurements beside an op (cuBLASLt; another kernel of ours) whose text
	 * names the op's keys: skipped, never the op by a rule (k3-bench's tiled-mma rows once were,
	 * mixing 6.6 ms mma.sync samples into a 2.85 ms wgmma GEMM's median) */
	assert_int_equal(cfx_range(&f, 1, 130000, 131000, "k3sim ref cublaslt gemm m=64 n=7168 k=7168 dtype=bf16"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 130500, "nvjet_sm90_tst_192x192", 270000, 9000, 132, 1), 0);
	assert_int_equal(cfx_range(&f, 1, 140000, 141000, "k3-bench tiled-mma op=gemm m=64 n=7168 k=7168 dtype=bf16"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 140500, "void (anonymous namespace)::tiled_kernel<64, false, 0>(k3gemm::params, int, int)",
	                            280000, 9000, 132, 1), 0);
	assert_int_equal(cfx_close(&f), 0);
}

static const struct calib_sample *sample_of(const struct calib_match *m, const char *spec, int nth)
{
	for (size_t i = 0; i < m->n_samples; i++)
		if (strcmp(m->specs[m->samples[i].spec].text, spec) == 0 && nth-- == 0)
			return &m->samples[i];
	return NULL;
}

static const struct calib_unmatched *unmatched_of(const struct calib_match *m, const char *name)
{
	for (size_t i = 0; i < m->n_unmatched; i++)
		if (strcmp(m->unmatched[i].name, name) == 0)
			return &m->unmatched[i];
	return NULL;
}

static void test_match_fixture(void **state)
{
	(void)state;
	const char *p = path("fixture.db");
	write_fixture(p);
	struct calib_rules rules;
	struct err e = {0};
	assert_int_equal(calib_rules_load(&rules, "default", &e), 0);
	struct calib_match m;
	struct calib_match_opts o = {.rules = &rules};
	if (calib_match_db(&m, p, &o, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(m.kernels, 14);
	assert_int_equal(m.memcpys, 1);
	assert_int_equal(m.k3sim_ranges, 7);
	assert_int_equal(m.empty_ranges, 2);

	const struct calib_sample *s = sample_of(&m, "gemm m=64 n=7168 k=7168 dtype=bf16", 0);
	assert_non_null(s);
	assert_int_equal(s->gpu_ns, 12000);
	assert_int_equal(s->activities, 2);
	assert_int_equal(s->rule, -1);
	/* the code that ran: its longest kernel, and a signature over all of them */
	assert_string_equal(s->kernel, "nvjet_sm90_tst_192x192");
	const uint64_t sig_split = s->kernels_sig;
	s = sample_of(&m, "gemm m=64 n=7168 k=7168 dtype=bf16", 1);
	assert_non_null(s);
	assert_int_equal(s->gpu_ns, 11000);
	assert_string_equal(s->kernel, "nvjet_sm90_tst_192x192");
	assert_true(s->kernels_sig != 0 && sig_split != 0 && s->kernels_sig != sig_split);
	s = sample_of(&m, "gemm m=16 n=576 k=7168 dtype=fp8", 0);
	assert_non_null(s);
	assert_int_equal(s->gpu_ns, 7000);
	s = sample_of(&m, "copy bytes=1048576", 0);
	assert_non_null(s);
	assert_int_equal(s->gpu_ns, 900);
	assert_int_equal(s->activities, 1);
	s = sample_of(&m, "kda_decode b=8 h=96 state=fp32", 0);
	assert_non_null(s);
	assert_int_equal(s->gpu_ns, 30000);
	assert_true(s->rule >= 0);
	s = sample_of(&m, "kda_chunk b=1 t=4096 h=96 state=fp32", 0);
	assert_non_null(s);
	assert_int_equal(s->gpu_ns, 7000);
	assert_int_equal(s->activities, 2);
	assert_int_equal(m.n_samples, 6);
	assert_int_equal(m.matched_nvtx, 5);
	assert_int_equal(m.matched_rules, 3);

	const struct calib_unmatched *u = unmatched_of(&m, "my_custom_kernel");
	assert_non_null(u);
	assert_non_null(strstr(u->reason, "no rule matches"));
	assert_int_equal(u->count, 1);
	u = unmatched_of(&m, "orphan_kernel");
	assert_non_null(u);
	assert_non_null(strstr(u->reason, "no launching API call"));
	u = unmatched_of(&m, "other_thread_kernel");
	assert_non_null(u);
	int nvjet_missing = 0, nvjet_bad = 0;
	for (size_t i = 0; i < m.n_unmatched; i++)
		if (strcmp(m.unmatched[i].name, "nvjet_sm90_tst_192x192") == 0) {
			if (strstr(m.unmatched[i].reason, "no value for m"))
				nvjet_missing += (int)m.unmatched[i].count;
			if (strstr(m.unmatched[i].reason, "not a valid op"))
				nvjet_bad += (int)m.unmatched[i].count;
		}
	assert_int_equal(nvjet_missing, 1);
	assert_int_equal(nvjet_bad, 1);
	assert_int_equal(m.unmatched_total, 5);
	u = unmatched_of(&m, "void (anonymous namespace)::tiled_kernel<64, false, 0>(k3gemm::params, int, int)");
	assert_non_null(u);
	assert_true(u->skipped);
	assert_non_null(strstr(u->reason, "reference range"));
	int nvjet_ref = 0;
	for (size_t i = 0; i < m.n_unmatched; i++)
		if (strcmp(m.unmatched[i].name, "nvjet_sm90_tst_192x192") == 0 && strstr(m.unmatched[i].reason, "reference range"))
			nvjet_ref += (int)m.unmatched[i].count, assert_true(m.unmatched[i].skipped);
	assert_int_equal(nvjet_ref, 1);
	/* every activity is accounted for */
	assert_int_equal(m.matched_nvtx + m.matched_rules + m.skipped + m.unmatched_total,
	                 m.kernels + m.memcpys + m.memsets);
	assert_int_equal(m.n_bad, 1);
	assert_int_equal(m.bad[0].instances, 1);
	assert_non_null(strstr(m.bad[0].error, "unknown dtype"));
	assert_string_equal(m.info.device, "NVIDIA H200");
	assert_string_equal(m.info.driver, "580.159.04");

	/* points: the median of the samples of each op; the protocol splits on m, b, bytes */
	struct calib_points pts;
	calib_points_init(&pts);
	assert_int_equal(calib_points_add_match(&pts, &m, p, &e), 0);
	assert_int_equal(pts.n, 5);
	bool seen = false;
	for (size_t i = 0; i < pts.n; i++) {
		const struct calib_point *pt = &pts.p[i];
		if (strcmp(pt->spec, "gemm m=64 n=7168 k=7168 dtype=bf16") == 0) {
			assert_true(pt->measured_s > 11.49e-6 && pt->measured_s < 11.51e-6);
			assert_int_equal(pt->samples, 2);
			assert_false(pt->held_out);
			assert_string_equal(pt->label, "gemm.bf16");
			seen = true;
		}
		if (strcmp(pt->spec, "kda_decode b=8 h=96 state=fp32") == 0) {
			assert_true(pt->held_out); /* b = 8 is not a power of 4 */
			assert_string_equal(pt->label, "kda_decode.fp32");
		}
	}
	assert_true(seen);
	calib_points_release(&pts);
	calib_match_release(&m);

	/* without rules only the NVTX ranges match */
	assert_int_equal(calib_match_db(&m, p, NULL, &e), 0);
	assert_int_equal(m.matched_rules, 0);
	assert_int_equal(m.matched_nvtx, 5);
	calib_match_release(&m);
	calib_rules_release(&rules);
}

/* Two ranks (one process per GPU, as a merged capture): a collective's instance lasts as long as
 * its shortest rank; in its range only the collective's kernels count. */
static void test_collectives_over_ranks(void **state)
{
	(void)state;
	const char *p = path("ranks.db");
	struct cfx f;
	assert_int_equal(cfx_open(&f, p), 0);
	static const int64_t ar[2][3] = {{20000, 12000, 30000}, {10000, 25000, 11000}};
	for (int r = 0; r < 2; r++) {
		int64_t pid = 100 + r, t = 1000000 * r;
		for (int i = 0; i < 3; i++, t += 100000) {
			assert_int_equal(cfx_range_on(&f, pid, 1, t, t + 5000, "k3sim op=allreduce bytes=1048576 ranks=2"), 0);
			assert_int_equal(cfx_kernel_on(&f, pid, (uint32_t)r, 1, t + 100, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
			                               t + 1000, ar[r][i]),
			                 0);
		}
		/* an EP dispatch: the gather of its rows, then NCCL's send/recv */
		assert_int_equal(cfx_range_on(&f, pid, 1, t, t + 5000, "k3sim op=alltoall bytes=7392 ranks=2"), 0);
		assert_int_equal(cfx_kernel_on(&f, pid, (uint32_t)r, 1, t + 100, "indexSelectSmallIndex", t + 1000, 5000), 0);
		assert_int_equal(cfx_kernel_on(&f, pid, (uint32_t)r, 1, t + 200, "ncclDevKernel_SendRecv", t + 7000,
		                               8000 + 1000 * r),
		                 0);
		t += 100000;
		/* all-gather: rank 0 twice, rank 1 once: every sample counts */
		for (int i = 0; i < 2 - r; i++, t += 100000) {
			assert_int_equal(cfx_range_on(&f, pid, 1, t, t + 5000, "k3sim op=allgather bytes=2048 ranks=2"), 0);
			assert_int_equal(cfx_kernel_on(&f, pid, (uint32_t)r, 1, t + 100, "ncclDevKernel_AllGather_RING_LL",
			                               t + 1000, r ? 1000 : 4000 + 2000 * i),
			                 0);
		}
		/* a GEMM on both ranks is two samples, not one instance */
		assert_int_equal(cfx_range_on(&f, pid, 1, t, t + 5000, GEMM64), 0);
		assert_int_equal(cfx_kernel_on(&f, pid, (uint32_t)r, 1, t + 100, "nvjet_sm90_tst_192x192", t + 1000,
		                               10000 * (r + 1)),
		                 0);
	}
	/* a custom all-reduce on one rank: no NCCL kernel in its range, its kernels count */
	assert_int_equal(cfx_range_on(&f, 100, 1, 5000000, 5005000, "k3sim op=allreduce bytes=4096 ranks=2"), 0);
	assert_int_equal(cfx_kernel_on(&f, 100, 0, 1, 5000100, "cross_device_reduce_1stage", 5001000, 7000), 0);
	assert_int_equal(cfx_close(&f), 0);

	struct calib_rules rules;
	struct err e = {0};
	assert_int_equal(calib_rules_load(&rules, "default", &e), 0);
	struct calib_match m;
	struct calib_match_opts o = {.rules = &rules};
	if (calib_match_db(&m, p, &o, &e) < 0)
		fail_msg("%s", e.msg);
	const struct calib_unmatched *u = unmatched_of(&m, "indexSelectSmallIndex");
	assert_non_null(u);
	assert_true(u->skipped);
	assert_int_equal(u->count, 2);
	assert_non_null(strstr(u->reason, "not a collective kernel"));
	assert_int_equal(m.matched_nvtx + m.matched_rules + m.skipped + m.unmatched_total,
	                 m.kernels + m.memcpys + m.memsets);
	struct calib_points pts;
	calib_points_init(&pts);
	assert_int_equal(calib_points_add_match(&pts, &m, p, &e), 0);
	int seen = 0;
	for (size_t i = 0; i < pts.n; i++) {
		const struct calib_point *pt = &pts.p[i];
		double us = pt->measured_s * 1e6;
		if (strcmp(pt->spec, "allreduce bytes=1048576 ranks=2") == 0) {
			/* per instance min(20, 10), min(12, 25), min(30, 11) us: median 11 */
			assert_true(fabs(us - 11) < 1e-9);
			assert_int_equal(pt->samples, 3);
			assert_false(pt->held_out);
			seen++;
		} else if (strcmp(pt->spec, "alltoall bytes=7392 ranks=2") == 0) {
			assert_true(fabs(us - 8) < 1e-9);
			assert_int_equal(pt->samples, 1);
			assert_true(pt->held_out); /* not a power of 2 */
			seen++;
		} else if (strcmp(pt->spec, "allgather bytes=2048 ranks=2") == 0) {
			assert_true(fabs(us - 4) < 1e-9); /* median of 1, 4, 6 */
			assert_int_equal(pt->samples, 3);
			seen++;
		} else if (strcmp(pt->spec, "gemm m=64 n=7168 k=7168 dtype=bf16") == 0) {
			assert_true(fabs(us - 15) < 1e-9);
			assert_int_equal(pt->samples, 2);
			seen++;
		} else if (strcmp(pt->spec, "allreduce bytes=4096 ranks=2") == 0) {
			assert_true(fabs(us - 7) < 1e-9);
			seen++;
		}
	}
	assert_int_equal(seen, 5);
	calib_points_release(&pts);
	calib_match_release(&m);
	calib_rules_release(&rules);
}

/* One rule for the launching call (issue 15): where a driver and a runtime call of one process
 * share a correlation id, the kernel belongs to the runtime call (and so to the ranges open on its
 * thread), as in trace summary. Before, calibration took whichever call sorted first: here the
 * driver call, loaded first, put the GEMM kernel into the copy range of another thread. */
static void test_runtime_call_launches(void **state)
{
	(void)state;
	const char *p = path("runtime-driver.db");
	struct cfx f;
	assert_int_equal(cfx_open(&f, p), 0);
	assert_int_equal(cfx_range(&f, 1, 1000, 5000, GEMM64), 0);
	assert_int_equal(cfx_range(&f, 2, 1000, 5000, "k3sim op=copy bytes=4096"), 0);
	const uint32_t corr = 900000;
	struct trace_api drv = {.start_ns = 1500, .end_ns = 1600, .global_tid = trace_global_tid(CFX_PID, 2),
	                        .correlation_id = corr, .kind = TRACE_API_DRIVER, .name = "cuLaunchKernel"};
	struct trace_api rt = {.start_ns = 1100, .end_ns = 1700, .global_tid = trace_global_tid(CFX_PID, 1),
	                       .correlation_id = corr, .kind = TRACE_API_RUNTIME, .name = "cudaLaunchKernel_v7000"};
	assert_int_equal(trace_db_add_api(f.db, &drv, NULL), 0);
	assert_int_equal(trace_db_add_api(f.db, &rt, NULL), 0);
	struct trace_kernel k = {.start_ns = 100000, .end_ns = 110000, .global_pid = trace_global_pid(CFX_PID),
	                         .stream_id = 7, .correlation_id = corr, .name = "nvjet_sm90_tst_192x192",
	                         .grid_x = 132, .grid_y = 1, .grid_z = 1, .block_x = 128, .block_y = 1,
	                         .block_z = 1};
	assert_int_equal(trace_db_add_kernel(f.db, &k, NULL), 0);
	assert_int_equal(cfx_close(&f), 0);

	struct calib_match m;
	struct err e = {0};
	if (calib_match_db(&m, p, NULL, &e) < 0)
		fail_msg("%s", e.msg);
	const struct calib_sample *s = sample_of(&m, "gemm m=64 n=7168 k=7168 dtype=bf16", 0);
	assert_non_null(s);
	assert_int_equal(s->gpu_ns, 10000);
	assert_null(sample_of(&m, "copy bytes=4096", 0));
	assert_int_equal(m.matched_nvtx, 1);
	calib_match_release(&m);
}

/* A range whose kernels run at once (KDA prefill's overlapped path: the recurrent kernel on a
 * second stream beside the intra kernel; or a kernel started early by programmatic dependent
 * launch): its time is the GPU time they cover, not their summed durations (which took the
 * overlapped 1.85 ms KDA prefill as ~3.7 ms). Devices apart: each device's union, summed. */
static void test_overlapping_kernels(void **state)
{
	(void)state;
	const char *p = path("overlap.db");
	struct cfx f;
	assert_int_equal(cfx_open(&f, p), 0);
	/* [10000, 20000) and [11000, 19000) inside it, then [25000, 26000) apart, then
	 * [25500, 27000) overlapping that one: 10000 + 2000 covered, 20500 summed */
	assert_int_equal(cfx_range(&f, 1, 1000, 5000, "k3sim op=kda_chunk b=1 t=16384 h=96 state=fp32"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 1100, "kda_chunk_intra_kernel", 10000, 10000, 96, 256), 0);
	assert_int_equal(cfx_kernel(&f, 1, 1200, "kda_chunk_recurrent_kernel", 11000, 8000, 96, 2), 0);
	assert_int_equal(cfx_kernel(&f, 1, 1300, "kda_chunk_recurrent_kernel", 25000, 1000, 96, 2), 0);
	assert_int_equal(cfx_kernel(&f, 1, 1400, "kda_chunk_recurrent_kernel", 25500, 1500, 96, 2), 0);
	/* a range whose kernels follow each other: the union is the sum */
	assert_int_equal(cfx_range(&f, 1, 6000, 7000, "k3sim op=kda_chunk b=1 t=4096 h=96 state=fp32"), 0);
	assert_int_equal(cfx_kernel(&f, 1, 6100, "kda_chunk_intra_kernel", 30000, 3000, 96, 64), 0);
	assert_int_equal(cfx_kernel(&f, 1, 6200, "kda_chunk_recurrent_kernel", 33000, 2000, 96, 2), 0);
	assert_int_equal(cfx_close(&f), 0);

	struct calib_match m;
	struct err e = {0};
	if (calib_match_db(&m, p, NULL, &e) < 0)
		fail_msg("%s", e.msg);
	const struct calib_sample *s = sample_of(&m, "kda_chunk b=1 t=16384 h=96 state=fp32", 0);
	assert_non_null(s);
	assert_int_equal(s->activities, 4);
	assert_int_equal(s->sum_ns, 20500);
	assert_int_equal(s->gpu_ns, 12000);
	assert_int_equal(s->start_ns, 10000);
	assert_int_equal(s->end_ns, 27000);
	s = sample_of(&m, "kda_chunk b=1 t=4096 h=96 state=fp32", 0);
	assert_non_null(s);
	assert_int_equal(s->sum_ns, 5000);
	assert_int_equal(s->gpu_ns, 5000);
	calib_match_release(&m);
}

static void test_bad_databases(void **state)
{
	(void)state;
	struct calib_match m;
	struct err e = {0};
	assert_true(calib_match_db(&m, path("missing.db"), NULL, &e) < 0);
	assert_non_null(strstr(e.msg, "cannot open"));

	const char *txt = path("text.db");
	FILE *f = fopen(txt, "w");
	assert_non_null(f);
	fputs("this is not a database\n", f);
	fclose(f);
	assert_true(calib_match_db(&m, txt, NULL, &e) < 0);
	assert_non_null(strstr(e.msg, "not a trace database"));
	assert_string_equal(e.file, txt);

	const char *other = path("other.db");
	sqlite3 *db;
	assert_int_equal(sqlite3_open(other, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('a');",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	sqlite3_close(db);
	assert_true(calib_match_db(&m, other, NULL, &e) < 0);
	assert_non_null(strstr(e.msg, "no CUPTI_ACTIVITY_KIND_KERNEL"));

	/* a truncated trace database */
	const char *good = path("good.db");
	write_fixture(good);
	FILE *in = fopen(good, "rb");
	const char *cut = path("cut.db");
	FILE *out = fopen(cut, "wb");
	assert_non_null(in);
	assert_non_null(out);
	char buf[3000];
	size_t n = fread(buf, 1, sizeof buf, in);
	fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
	assert_true(calib_match_db(&m, cut, NULL, &e) < 0);

	/* a bound on rows */
	struct calib_match_opts o = {.max_rows = 3};
	assert_int_equal(calib_match_db(&m, good, &o, &e), -E2BIG);
	assert_non_null(strstr(e.msg, "more than 3 rows"));
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_match_fixture),
	    cmocka_unit_test(test_runtime_call_launches),
	    cmocka_unit_test(test_overlapping_kernels),
	    cmocka_unit_test(test_bad_databases),
	    cmocka_unit_test(test_collectives_over_ranks),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
