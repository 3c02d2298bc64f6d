/* trace/analyze: exact numbers of the summary on a hand-made timeline. */
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

#include "fixtures.h"
#include "trace/analyze/analyze.h"
#include "trace/analyze/export.h"
#include "trace/import/import.h"
#include "trace/analyze/kclass.h"
#include "trace/db/tracedb.h"

#define PID 100
#define TID 101

/* The timeline (ns), process 100, thread 101 launching everything:
 *   device 0 stream 1: A [0,10] [20,40] [50,80] [100,140], B [200,310]
 *   device 0 stream 2: ncclDevKernel_AllReduce [30,130]
 *   device 0 stream 3: memcpy [150,160], 1000 bytes
 *   device 1 stream 5: C [5,25], D [280,290] (D has no launching call)
 * Launch calls last 3 ns and end at: A 2-after... see API_END below.
 * NVTX on thread 101: step [-10,320], layerA [-6,50] and [60,95]; a GPU-projected layerA that
 * must not count. */
struct kdef {
	const char *name;
	uint32_t dev, stream, corr;
	int64_t start, end, api_end; /* api_end only when corr != 0 */
};

static const struct kdef K[] = {
	{"A", 0, 1, 1, 0, 10, -2},      {"A", 0, 1, 2, 20, 40, 15},
	{"A", 0, 1, 3, 50, 80, 45},     {"A", 0, 1, 4, 100, 140, 90},
	{"B", 0, 1, 5, 200, 310, 150},  {"ncclDevKernel_AllReduce", 0, 2, 6, 30, 130, 28},
	{"C", 1, 5, 7, 5, 25, 1},       {"D", 1, 5, 0, 280, 290, 0},
};

static void build(const char *path)
{
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, path, &o, NULL), 0);
	for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
		struct trace_kernel k = {.start_ns = K[i].start, .end_ns = K[i].end,
					 .global_pid = trace_global_pid(PID), .device_id = K[i].dev,
					 .stream_id = K[i].stream, .correlation_id = K[i].corr,
					 .name = K[i].name};
		assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
		if (K[i].corr) {
			struct trace_api a = {.start_ns = K[i].api_end - 3, .end_ns = K[i].api_end,
					      .global_tid = trace_global_tid(PID, TID),
					      .correlation_id = K[i].corr, .name = "cudaLaunchKernel"};
			assert_int_equal(trace_db_add_api(db, &a, NULL), 0);
		}
	}
	struct trace_memcpy m = {.start_ns = 150, .end_ns = 160, .global_pid = trace_global_pid(PID),
				 .stream_id = 3, .correlation_id = 8, .bytes = 1000,
				 .copy_kind = TRACE_COPY_HTOD, .src_device_id = -1, .dst_device_id = -1};
	assert_int_equal(trace_db_add_memcpy(db, &m, NULL), 0);
	struct trace_api ma = {.start_ns = 140, .end_ns = 145, .global_tid = trace_global_tid(PID, TID),
			       .correlation_id = 8, .name = "cudaMemcpyAsync"};
	assert_int_equal(trace_db_add_api(db, &ma, NULL), 0);
	struct trace_nvtx ranges[] = {
		{.start_ns = -10, .end_ns = 320, .type = TRACE_NVTX_PUSH_POP, .text = "step"},
		{.start_ns = -6, .end_ns = 50, .type = TRACE_NVTX_PUSH_POP, .text = "layerA"},
		{.start_ns = 60, .end_ns = 95, .type = TRACE_NVTX_PUSH_POP, .text = "layerA"},
		{.start_ns = 0, .end_ns = 300, .type = TRACE_NVTX_START_END, .text = "layerA",
		 .domain_id = TRACE_NVTX_DOMAIN_GPU},
		{.start_ns = 70, .type = TRACE_NVTX_MARK, .text = "a mark"},
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		ranges[i].global_tid = trace_global_tid(PID, TID);
		assert_int_equal(trace_db_add_nvtx(db, &ranges[i], NULL), 0);
	}
	struct trace_dropped d = {.source = "cupti", .device_id = -1, .context_id = -1,
				  .stream_id = -1, .count = 5};
	assert_int_equal(trace_db_add_dropped(db, &d, NULL), 0);
	assert_int_equal(trace_db_close(db, NULL), 0);
}

static const struct trace_kernel_sum *kern(const struct trace_summary *s, const char *name)
{
	for (size_t i = 0; i < s->n_kern; i++)
		if (strcmp(s->kern[i].name, name) == 0)
			return &s->kern[i];
	fail_msg("no kernel %s", name);
	return NULL;
}

static void test_summary_numbers(void **state)
{
	(void)state;
	const char *p = fx_path("timeline.db");
	build(p);
	struct trace_summary s;
	struct err e = {0};
	int rc = trace_summary_compute(&s, p, NULL, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);

	assert_int_equal(s.kernels, 8);
	assert_int_equal(s.memcpys, 1);
	assert_int_equal(s.memcpy_bytes, 1000);
	assert_int_equal(s.memcpy_ns, 10);
	assert_int_equal(s.api_calls, 8);
	assert_int_equal(s.nvtx_ranges, 3); /* the GPU projection and the mark are not ranges */
	assert_int_equal(s.kernel_ns, 100 + 110 + 100 + 20 + 10);
	assert_int_equal(s.first_ns, 0);
	assert_int_equal(s.last_ns, 310);
	assert_int_equal(s.dropped_records, 5);

	/* cuda_gpu_kern_sum rows, longest total first */
	assert_int_equal(s.n_kern, 5);
	assert_string_equal(s.kern[0].name, "B");
	assert_string_equal(s.kern[1].name, "A"); /* ties by name */
	assert_string_equal(s.kern[2].name, "ncclDevKernel_AllReduce");
	const struct trace_kernel_sum *a = kern(&s, "A");
	assert_int_equal(a->instances, 4);
	assert_int_equal(a->total_ns, 100);
	assert_int_equal(a->min_ns, 10);
	assert_int_equal(a->max_ns, 40);
	assert_true(a->avg_ns == 25.0);
	assert_true(a->med_ns == 25.0);
	/* sample standard deviation of 10, 20, 30, 40 = sqrt(500 / 3) */
	assert_true(fabs(a->stddev_ns - sqrt(500.0 / 3.0)) < 1e-9);
	assert_true(fabs(a->time_pct - 100.0 * 100 / 340) < 1e-9);
	assert_false(a->comm);
	assert_true(kern(&s, "ncclDevKernel_AllReduce")->comm);
	assert_true(kern(&s, "B")->stddev_ns == 0.0);
	assert_true(kern(&s, "B")->med_ns == 110.0);

	/* devices */
	assert_int_equal(s.n_dev, 2);
	const struct trace_device_sum *d0 = &s.dev[0], *d1 = &s.dev[1];
	assert_int_equal(d0->device_id, 0);
	assert_int_equal(d0->kernels, 6);
	assert_int_equal(d0->memcpys, 1);
	/* busy: [0,10] + [20,140] + [150,160] + [200,310] */
	assert_int_equal(d0->busy_ns, 10 + 120 + 10 + 110);
	assert_true(fabs(d0->util_pct - 100.0 * 250 / 310) < 1e-9);
	assert_int_equal(d0->gaps, 3);
	assert_int_equal(d0->idle_ns, 10 + 10 + 40);
	assert_int_equal(d0->max_gap_ns, 40);
	assert_int_equal(d0->comm_ns, 100);
	assert_int_equal(d0->compute_ns, 10 + 20 + 30 + 40 + 110);
	/* NCCL [30,130] against compute: [30,40] + [50,80] + [100,130] */
	assert_int_equal(d0->overlap_ns, 70);
	assert_true(d0->comm_hidden_pct == 70.0);
	assert_int_equal(d1->device_id, 1);
	assert_int_equal(d1->busy_ns, 30);
	assert_int_equal(d1->gaps, 1);
	assert_int_equal(d1->idle_ns, 255);

	/* streams */
	assert_int_equal(s.n_stream, 4);
	assert_int_equal(s.stream[0].stream_id, 1);
	assert_int_equal(s.stream[0].kernels, 5);
	assert_int_equal(s.stream[0].busy_ns, 210);
	assert_int_equal(s.stream[1].stream_id, 2);
	assert_int_equal(s.stream[1].busy_ns, 100);
	assert_int_equal(s.stream[2].stream_id, 3);
	assert_int_equal(s.stream[2].memcpys, 1);
	assert_int_equal(s.stream[3].device_id, 1);
	assert_int_equal(s.stream[3].busy_ns, 30);
	assert_int_equal(trace_global_to_pid(s.stream[0].global_pid), PID);

	/* gaps, longest first */
	assert_true(s.n_gaps >= 3);
	assert_int_equal(s.gaps[0].device_id, 1);
	assert_int_equal(s.gaps[0].start_ns, 25);
	assert_int_equal(s.gaps[0].dur_ns, 255);
	assert_int_equal(s.gaps[1].device_id, 0);
	assert_int_equal(s.gaps[1].start_ns, 160);
	assert_int_equal(s.gaps[1].dur_ns, 40);

	/* launch overhead: kernel start - API end = 2, 5, 5, 10, 50, 2, 4 */
	const struct trace_launch_sum *l = &s.launch;
	assert_int_equal(l->matched, 7);
	assert_int_equal(l->unmatched, 1);
	assert_int_equal(l->min_ns, 2);
	assert_int_equal(l->max_ns, 50);
	assert_true(l->med_ns == 5.0);
	assert_true(fabs(l->avg_ns - 78.0 / 7) < 1e-9);
	assert_int_equal(l->p90_ns, 10);
	assert_int_equal(l->p99_ns, 50);
	assert_true(l->api_avg_ns == 3.0);

	/* NVTX: kernels go to the ranges open where they were launched; D (no call) by its
	 * GPU start inside its process's ranges */
	assert_int_equal(s.n_nvtx, 2);
	assert_string_equal(s.nvtx[0].name, "step");
	assert_int_equal(s.nvtx[0].instances, 1);
	assert_int_equal(s.nvtx[0].total_ns, 330);
	assert_int_equal(s.nvtx[0].kernels, 8);
	assert_int_equal(s.nvtx[0].gpu_ns, 340);
	assert_string_equal(s.nvtx[1].name, "layerA");
	assert_int_equal(s.nvtx[1].instances, 2);
	assert_int_equal(s.nvtx[1].total_ns, 56 + 35);
	assert_int_equal(s.nvtx[1].min_ns, 35);
	assert_int_equal(s.nvtx[1].max_ns, 56);
	/* A1 (call at -5), A2 (12), A3 (42), NCCL (25), C (-2) in the first; A4 (87) in the second */
	assert_int_equal(s.nvtx[1].kernels, 6);
	assert_int_equal(s.nvtx[1].gpu_ns, 10 + 20 + 30 + 100 + 20 + 40);
	trace_summary_release(&s);

	/* short names group differently only when names have templates: same here */
	struct trace_summary_opts so = {.short_names = true, .top_gaps = 1};
	assert_int_equal(trace_summary_compute(&s, p, &so, &e), 0);
	assert_int_equal(s.n_kern, 5);
	assert_int_equal(s.n_gaps, 1);
	trace_summary_release(&s);
}

/* The median of an even count is the mean of the two middle values; odd counts pick the middle. */
static void test_median(void **state)
{
	(void)state;
	const char *p = fx_path("median.db");
	struct trace_db *db = NULL;
	assert_int_equal(trace_db_create(&db, p, NULL, NULL), 0);
	static const int64_t durs[] = {7, 1, 1000, 3, 5};
	for (size_t i = 0; i < 5; i++) {
		struct trace_kernel k = {.start_ns = (int64_t)i * 2000, .end_ns = (int64_t)i * 2000 + durs[i],
					 .name = "odd"};
		assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
		if (i < 4) {
			k.name = "even";
			k.start_ns += 20000;
			k.end_ns += 20000;
			assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
		}
	}
	assert_int_equal(trace_db_close(db, NULL), 0);
	struct trace_summary s;
	assert_int_equal(trace_summary_compute(&s, p, NULL, NULL), 0);
	for (size_t i = 0; i < s.n_kern; i++) {
		if (strcmp(s.kern[i].name, "odd") == 0)
			assert_true(s.kern[i].med_ns == 5.0);
		else
			assert_true(s.kern[i].med_ns == 5.0); /* 1 3 | 7 1000 -> (3 + 7) / 2 */
	}
	trace_summary_release(&s);
}

/* The summary reads an nsys export directly (its own column order, extra columns). */
static void test_summary_of_nsys_export(void **state)
{
	(void)state;
	const char *p = fx_path("nsys-direct.sqlite");
	fx_sqlite(p, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
		     "INSERT INTO StringIds VALUES (0, 'kern<1>(int)'), (1, 'kern'), (2, 'cudaLaunchKernel');"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (globalPid INTEGER, start INTEGER,"
		     " end INTEGER, deviceId INTEGER, contextId INTEGER, streamId INTEGER,"
		     " correlationId INTEGER, demangledName INTEGER, shortName INTEGER, foo TEXT);"
		     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (16777216, 100, 150, 0, 1, 7, 1, 0, 1, 'x'),"
		     " (16777216, 200, 300, 0, 1, 7, 2, 0, 1, 'y');"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,"
		     " globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER);"
		     "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (80, 90, 0, 16777217, 1, 2, 0),"
		     " (150, 160, 0, 16777217, 2, 2, 0),"
		     /* nsys' eventClass 67 rows: backtrace entries duplicating the calls */
		     " (79, 91, 67, 16777217, 1, 2, 0), (149, 161, 67, 16777217, 2, 2, 0);");
	struct trace_summary s;
	struct err e = {0};
	assert_int_equal(trace_summary_compute(&s, p, NULL, &e), 0);
	/* the runtime calls only, as the import keeps them (issue 12: 95 on pipit's saxpy export vs
	 * 57 imported; 4 vs 2 here before) */
	assert_int_equal(s.api_calls, 2);
	const char *imp = fx_path("nsys-direct-imported.db");
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	struct trace_import_stats st;
	assert_int_equal(trace_db_create(&db, imp, &o, &e), 0);
	assert_int_equal(trace_import_sqlite(db, p, NULL, &st, &e), 0);
	assert_int_equal(trace_db_close(db, &e), 0);
	assert_int_equal(st.api_calls, s.api_calls);
	assert_int_equal(s.n_kern, 1);
	assert_string_equal(s.kern[0].name, "kern<1>(int)");
	assert_true(s.kern[0].avg_ns == 75.0);
	assert_int_equal(s.launch.matched, 2);
	assert_true(s.launch.avg_ns == 25.0); /* 10 and 40 */
	trace_summary_release(&s);
	struct trace_summary_opts so = {.short_names = true};
	assert_int_equal(trace_summary_compute(&s, p, &so, &e), 0);
	assert_string_equal(s.kern[0].name, "kern");
	trace_summary_release(&s);
}

/* Rows at the ends of the int64 range: every difference and sum saturates, the summary is
 * computed and says so (issue 12: UBSan reported signed overflow in analyze.c and export.c). */
static void test_extreme_times(void **state)
{
	(void)state;
	const char *p = fx_path("extreme.db");
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, p, &o, NULL), 0);
	const int64_t lo = INT64_MIN, hi = INT64_MAX;
	struct trace_kernel ks[] = {
		{.start_ns = lo, .end_ns = hi, .name = "all", .correlation_id = 1},
		{.start_ns = lo, .end_ns = hi, .name = "all", .correlation_id = 2},
		{.start_ns = hi, .end_ns = lo, .name = "backwards", .stream_id = 2},
		{.start_ns = 0, .end_ns = hi, .name = "ncclKernel", .stream_id = 3},
	};
	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
		ks[i].global_pid = trace_global_pid(PID);
		assert_int_equal(trace_db_add_kernel(db, &ks[i], NULL), 0);
	}
	struct trace_api a = {.start_ns = hi, .end_ns = lo, .correlation_id = 1,
			      .global_tid = trace_global_tid(PID, TID), .name = "cudaLaunchKernel"};
	assert_int_equal(trace_db_add_api(db, &a, NULL), 0);
	a.start_ns = lo;
	a.end_ns = lo;
	a.correlation_id = 2;
	assert_int_equal(trace_db_add_api(db, &a, NULL), 0);
	struct trace_memcpy m = {.start_ns = lo, .end_ns = hi, .bytes = INT64_MAX,
				 .global_pid = trace_global_pid(PID), .src_device_id = -1,
				 .dst_device_id = -1};
	assert_int_equal(trace_db_add_memcpy(db, &m, NULL), 0);
	assert_int_equal(trace_db_add_memcpy(db, &m, NULL), 0);
	struct trace_nvtx n = {.start_ns = lo, .end_ns = hi, .type = TRACE_NVTX_PUSH_POP,
			       .global_tid = trace_global_tid(PID, TID), .text = "r"};
	assert_int_equal(trace_db_add_nvtx(db, &n, NULL), 0);
	assert_int_equal(trace_db_add_nvtx(db, &n, NULL), 0);
	assert_int_equal(trace_db_close(db, NULL), 0);
	struct trace_summary s;
	struct err e = {0};
	assert_int_equal(trace_summary_compute(&s, p, NULL, &e), 0);
	assert_int_equal(s.span_ns, INT64_MAX);
	assert_int_equal(s.kernel_ns, INT64_MAX);
	assert_int_equal(s.memcpy_ns, INT64_MAX);
	assert_int_equal(s.memcpy_bytes, INT64_MAX);
	assert_int_equal(s.nvtx[0].total_ns, INT64_MAX);
	assert_int_equal(s.dev[0].busy_ns, INT64_MAX);
	assert_int_equal(s.launch.matched, 2);
	trace_summary_release(&s);
	/* and the export writes every row, durations clamped to [0, INT64_MAX] */
	FILE *f = tmpfile();
	struct trace_export_stats xs;
	assert_int_equal(trace_export_perfetto(p, f, "x.json", NULL, &xs, &e), 0);
	assert_int_equal(xs.kernels, 4);
	fclose(f);
}

/* The one kernel classification: names as the profilers report them (demangled, templated). */
static void test_kernel_classes(void **state)
{
	(void)state;
	struct trace_kclass_rules r;
	struct err e = {0};
	assert_int_equal(trace_kclass_load(&r, "default", &e), 0);
	static const struct {
		const char *kernel, *collective, *library; /* collective NULL: compute */
	} cases[] = {
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "allreduce", "nccl"},
		{"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", "allgather", "nccl"},
		{"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "reducescatter", "nccl"},
		{"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "sendrecv", "nccl"},
		{"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "other", "nccl"},
		{"void deep_ep::internode_ll::dispatch<true, 3, 10, 7168>(void*, float*, int*, long*)",
		 "dispatch", "deepep-ll"},
		{"void deep_ep::internode_ll::combine<false, 6144, 11, 4>(void*, void*, int*)", "combine",
		 "deepep-ll"},
		{"void deep_ep::internode_ll::clean_low_latency_buffer<32>(int*, int, int*, int)", "other",
		 "deepep-ll"},
		{"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)", "dispatch", "deepep"},
		{"void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int)", "dispatch", "deepep"},
		{"void deep_ep::internode::combine<false, 4, 8, 2, 4, 2>(int4*, float*)", "combine", "deepep"},
		{"void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int)", "combine", "deepep"},
		{"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals,"
		 " vllm::Signal*, __nv_bfloat16*, int, int)", "allreduce", "custom-allreduce"},
		{"void sglang::cross_device_reduce_2stage<__nv_bfloat16, 4>(sglang::RankData*)", "allreduce",
		 "custom-allreduce"},
		{"void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<"
		 "(flashinfer::trtllm_allreduce_fusion::AllReduceFusionPattern)1, __nv_bfloat16, 8, false,"
		 " false>(flashinfer::trtllm_allreduce_fusion::AllReduceFusionParams<__nv_bfloat16>)",
		 "allreduce", "trtllm-allreduce"},
		{"void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(AllReduceParams)",
		 "allreduce", "trtllm-allreduce"},
		{"void tensorrt_llm::kernels::moe_comm::moeA2ADispatchKernel<__nv_bfloat16, 8>(DispatchKernelPointers)",
		 "dispatch", "trtllm-moe-a2a"},
		{"void flashinfer::moeA2ACombineKernel<__nv_bfloat16, 8, false, false>(CombineKernelPointers)",
		 "combine", "trtllm-moe-a2a"},
		{"void dlslime::intranode_alltoall_kernel<8>(void**, int)", "alltoall", "other"},
		{"void c10d::symmetric_memory::one_shot_all_reduce_kernel<c10::BFloat16, 8>(...)", "allreduce",
		 "torch-symm-mem"},
		{"nvshmemi_transfer_rma_kernel", "other", "nvshmem"},
		/* compute: GEMMs, attention, MoE routing that only looks like dispatch */
		{"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", NULL, NULL},
		{"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_tn_align8>"
		 "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_tn_align8::Params)", NULL, NULL},
		{"void flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8,"
		 " cutlass::bfloat16_t, 512>, true>(Flash_fwd_mla_params)", NULL, NULL},
		{"void moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int)", NULL, NULL},
		{"void vllm::moe::ep_scatter_kernel<float>(float const*, float*, int)", NULL, NULL},
		{"void deep_gemm::fp8_gemm_kernel<128u, 128u, 128u, 4u>(__nv_bfloat16*, float*, int*)", NULL, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int k = trace_kclass_find(&r, cases[i].kernel);
		bool comm = k >= 0 && r.rule[k].cls == TRACE_KCLASS_COMM;
		if (comm != (cases[i].collective != NULL))
			fail_msg("%s: comm %d", cases[i].kernel, comm);
		if (comm && (strcmp(r.rule[k].collective, cases[i].collective) != 0 ||
			     strcmp(r.rule[k].library, cases[i].library) != 0))
			fail_msg("%s: %s/%s, want %s/%s", cases[i].kernel, r.rule[k].collective,
				 r.rule[k].library, cases[i].collective, cases[i].library);
	}
	trace_kclass_release(&r);
	/* a bad table says where */
	const char bad[] = "rules:\n  - {kernel: \"*x*\", class: comm, collective: allredcue}\n";
	assert_int_equal(trace_kclass_load_string(&r, "k.yaml", bad, sizeof bad - 1, &e), -EINVAL);
	assert_int_equal(e.line, 2);
	assert_non_null(strstr(e.msg, "did you mean 'allreduce'"));
}

/* A DeepSeek-style MoE step: DeepEP dispatch/combine overlapped with expert GEMMs on another
 * stream. Communication is counted and its overlap with compute found (issue 12: only names
 * containing "nccl" were communication, so such traces showed 0 comm and 0 overlap). */
static void test_deepep_overlap(void **state)
{
	(void)state;
	const char *p = fx_path("deepep.db");
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, p, &o, NULL), 0);
	static const struct {
		const char *name;
		uint32_t stream;
		int64_t start, end;
	} ks[] = {
		{"void deep_ep::internode_ll::dispatch<true, 3, 10, 7168>(void*, float*)", 20, 0, 100},
		{"void deep_gemm::fp8_gemm_kernel<128u, 128u, 128u, 4u>(__nv_bfloat16*)", 7, 50, 300},
		{"void deep_ep::internode_ll::combine<false, 6144, 11, 4>(void*)", 20, 250, 400},
		{"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*)", 20, 500, 600},
		{"void deep_gemm::fp8_gemm_kernel<128u, 128u, 128u, 4u>(__nv_bfloat16*)", 7, 600, 700},
	};
	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
		struct trace_kernel k = {.start_ns = ks[i].start, .end_ns = ks[i].end,
					 .global_pid = trace_global_pid(PID), .stream_id = ks[i].stream,
					 .name = ks[i].name};
		assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
	}
	assert_int_equal(trace_db_close(db, NULL), 0);
	struct trace_summary s;
	struct err e = {0};
	for (int base = 0; base < 2; base++) {
		struct trace_summary_opts so = {.short_names = base};
		assert_int_equal(trace_summary_compute(&s, p, &so, &e), 0);
		assert_int_equal(s.n_dev, 1);
		/* comm: [0,100] [250,400] [500,600] = 350; compute: [50,300] [600,700] = 350;
		 * overlap: [50,100] + [250,300] = 100 */
		assert_int_equal(s.dev[0].comm_ns, 350);
		assert_int_equal(s.dev[0].compute_ns, 350);
		assert_int_equal(s.dev[0].overlap_ns, 100);
		int comm = 0;
		for (size_t i = 0; i < s.n_kern; i++)
			if (s.kern[i].comm) {
				comm++;
				assert_non_null(s.kern[i].collective);
			}
		assert_int_equal(comm, base ? 2 : 3); /* short names: dispatch, combine */
		trace_summary_release(&s);
	}
}

static void test_summary_errors(void **state)
{
	(void)state;
	struct trace_summary s;
	struct err e = {0};
	const char *text = fx_path("notdb.txt");
	fx_write_str(text, "hello, this is not a database at all, just some words in a file......\n"
			   "and some more words to pass the hundred-byte header size check .......\n");
	assert_int_not_equal(trace_summary_compute(&s, text, NULL, &e), 0);
	assert_non_null(strstr(e.msg, "not an SQLite database"));
	const char *other = fx_path("other.db");
	fx_sqlite(other, "CREATE TABLE t (x INTEGER);");
	assert_int_not_equal(trace_summary_compute(&s, other, NULL, &e), 0);
	assert_non_null(strstr(e.msg, "not a trace database"));
	assert_int_not_equal(trace_summary_compute(&s, fx_path("missing.db"), NULL, &e), 0);
	/* limits */
	const char *p = fx_path("limit.db");
	build(p);
	struct trace_summary_opts so = {.max_rows = 3};
	assert_int_equal(trace_summary_compute(&s, p, &so, &e), -E2BIG);
	assert_non_null(strstr(e.msg, "more than 3 rows"));
	/* an empty trace database summarizes to zeros */
	const char *empty = fx_path("empty.db");
	struct trace_db *db = NULL;
	assert_int_equal(trace_db_create(&db, empty, NULL, NULL), 0);
	assert_int_equal(trace_db_close(db, NULL), 0);
	assert_int_equal(trace_summary_compute(&s, empty, NULL, &e), 0);
	assert_int_equal(s.kernels, 0);
	assert_int_equal(s.n_kern, 0);
	assert_int_equal(s.n_dev, 0);
	trace_summary_release(&s);
}

/* Two processes that number their API calls alike (CUPTI correlation ids are per process), as
 * in a merged multi-rank capture. Process 1 (written first) runs late, process 2 early: were a
 * kernel matched to the other process' call with its id, process 2's kernels would start ~1 us
 * before "their" calls returned. Both launch from a thread numbered 7.
 *   process 1: calls [1000,1010] [1100,1110] [1200,1210] (ids 1-3);
 *              kernels at 1015, 1108 (before its call returned: real), 1230
 *   process 2: calls [0,10] [100,110] [200,210] [300,310] (ids 1-4), a driver call [202,205]
 *              under the runtime call 3 with the same id (written before it);
 *              kernels at 12, 120, 250, and 295 (before its call began: not on one clock)
 * NVTX: one range per process on its thread 7, both [-5,1300]. */
struct pdef {
	int64_t call_start[4], kern_start[4];
	int n;
	const char *range;
};

static const struct pdef P[2] = {
	{{1000, 1100, 1200, 0}, {1015, 1108, 1230, 0}, 3, "rank 1 step"},
	{{0, 100, 200, 300}, {12, 120, 250, 295}, 4, "rank 2 step"},
};

static void build_process(struct trace_db *db, const struct pdef *p, int64_t pid)
{
	int64_t tid = trace_global_tid(pid, 7);
	for (int i = 0; i < p->n; i++) {
		uint32_t corr = (uint32_t)i + 1;
		if (p->call_start[i] == 200) {
			struct trace_api d = {.start_ns = 202, .end_ns = 205, .global_tid = tid,
					      .correlation_id = corr, .kind = TRACE_API_DRIVER,
					      .name = "cuLaunchKernel"};
			assert_int_equal(trace_db_add_api(db, &d, NULL), 0);
		}
		struct trace_api a = {.start_ns = p->call_start[i], .end_ns = p->call_start[i] + 10,
				      .global_tid = tid, .correlation_id = corr,
				      .name = "cudaLaunchKernel"};
		assert_int_equal(trace_db_add_api(db, &a, NULL), 0);
		struct trace_kernel k = {.start_ns = p->kern_start[i], .end_ns = p->kern_start[i] + 5,
					 .global_pid = trace_global_pid(pid), .stream_id = 7,
					 .correlation_id = corr, .name = "k"};
		assert_int_equal(trace_db_add_kernel(db, &k, NULL), 0);
	}
	struct trace_nvtx r = {.start_ns = -5, .end_ns = 1300, .type = TRACE_NVTX_PUSH_POP,
			       .global_tid = tid, .text = p->range};
	assert_int_equal(trace_db_add_nvtx(db, &r, NULL), 0);
}

static const struct trace_nvtx_sum *range(const struct trace_summary *s, const char *name)
{
	for (size_t i = 0; i < s->n_nvtx; i++)
		if (strcmp(s->nvtx[i].name, name) == 0)
			return &s->nvtx[i];
	fail_msg("no range %s", name);
	return NULL;
}

static void check_two_processes(const char *path)
{
	struct trace_summary s;
	struct err e = {0};
	int rc = trace_summary_compute(&s, path, NULL, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	const struct trace_launch_sum *l = &s.launch;
	assert_int_equal(l->matched, 7);
	assert_int_equal(l->unmatched, 0);
	assert_int_equal(l->inconsistent, 1);  /* the kernel at 295 */
	/* the other six, each against its own process' runtime call: 5, -2, 20 and 2, 10, 40 */
	assert_int_equal(l->min_ns, -2);
	assert_int_equal(l->before_return, 1);
	assert_int_equal(l->max_ns, 40);
	assert_true(l->med_ns == 7.5);
	assert_true(l->avg_ns == 75.0 / 6);
	assert_int_equal(l->min_from_call_start_ns, 8);
	assert_true(l->api_avg_ns == 10.0);
	/* each process' kernels to its own range, although the thread numbers are equal */
	assert_int_equal(range(&s, "rank 1 step")->kernels, 3);
	assert_int_equal(range(&s, "rank 2 step")->kernels, 4);
	trace_summary_release(&s);
}

/* Launch overhead and NVTX attribution key on the process as well as the correlation id and
 * thread: one database holding both processes. */
static void test_two_processes_colliding_ids(void **state)
{
	(void)state;
	const char *p = fx_path("two-procs.db");
	struct trace_db *db = NULL;
	struct trace_db_opts o = {.overwrite = true};
	assert_int_equal(trace_db_create(&db, p, &o, NULL), 0);
	build_process(db, &P[0], 400);
	build_process(db, &P[1], 500);
	assert_int_equal(trace_db_close(db, NULL), 0);
	check_two_processes(p);
}

/* The same through merge, from two per-process files that even share the pid (two containers):
 * merge renames the second process in its kernels, calls and NVTX rows alike. */
static void test_merged_processes_colliding_ids(void **state)
{
	(void)state;
	const char *in[2] = {fx_path("rank-a.db"), fx_path("rank-b.db")};
	for (int r = 0; r < 2; r++) {
		struct trace_db *db = NULL;
		struct trace_db_opts o = {.overwrite = true};
		assert_int_equal(trace_db_create(&db, in[r], &o, NULL), 0);
		build_process(db, &P[r], 400);
		assert_int_equal(trace_db_close(db, NULL), 0);
	}
	const char *m = fx_path("ranks-merged.db");
	struct trace_import_stats st;
	struct err e = {0};
	assert_int_equal(trace_merge(m, in, 2, NULL, &st, &e), 0);
	assert_int_equal(fx_i64(m, "SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
	check_two_processes(m);
}

static int teardown(void **state)
{
	(void)state;
	fx_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_numbers),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_summary_of_nsys_export),
		cmocka_unit_test(test_summary_errors),
		cmocka_unit_test(test_extreme_times),
		cmocka_unit_test(test_kernel_classes),
		cmocka_unit_test(test_deepep_overlap),
		cmocka_unit_test(test_two_processes_colliding_ids),
		cmocka_unit_test(test_merged_processes_colliding_ids),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
