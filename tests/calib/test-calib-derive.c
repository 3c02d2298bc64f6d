/* calib/derive: every rule of the default derivation rules (trace/rules/aten.yaml) on a record
 * (emit_nvtx and Kineto texts), the reasons when a record cannot be priced, and rule files with
 * their errors. A rule added to the file without a case here fails test_every_rule_tested. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "calib/derive.h"

struct dcase {
	const char *record;
	const char *spec;   /* expected spec; NULL: expect an error containing why */
	const char *why;
	const char *rule;   /* the rule's name it must hit (NULL: none) */
};

static const struct dcase cases[] = {
	/* matrix products */
	{"aten::mm, seq = 1, op_id = 88, sizes = [[1024, 2048], [2048, 768]], input_op_ids = []",
	 "gemm m=1024 n=768 k=2048 dtype=bf16", NULL, "aten::mm"},
	{"aten::mm, sizes = [[4, 8], [8, 16]], types = [float, float]", "gemm m=4 n=16 k=8 dtype=fp32", NULL, "aten::mm"},
	{"aten::mm, sizes = [[4, 8], [9, 16]]", NULL, "inner dims differ (8 vs 9)", "aten::mm"},
	{"aten::mm, sizes = [[4, 8], []]", NULL, "argument 1 has no recorded sizes", "aten::mm"},
	{"aten::mm, sizes = [[8], [8]]", NULL, "vector products", "aten::mm"},
	{"aten::addmm, sizes = [[768], [64, 2048], [2048, 768], [], []]", "gemm m=64 n=768 k=2048 dtype=bf16", NULL,
	 "aten::addmm"},
	{"aten::bmm, sizes = [[16, 64, 128], [16, 128, 32]], types = [c10::BFloat16, c10::BFloat16]",
	 "grouped_gemm m=1024 n=32 k=128 groups=16 dtype=bf16", NULL, "aten::bmm"},
	{"aten::baddbmm, sizes = [[2, 4, 8], [2, 4, 16], [2, 16, 8], [], []]",
	 "grouped_gemm m=8 n=8 k=16 groups=2 dtype=bf16", NULL, "aten::baddbmm"},
	{"aten::matmul, sizes = [[4, 16, 256, 192], [4, 16, 192, 256]]",
	 "grouped_gemm m=16384 n=256 k=192 groups=64 dtype=bf16", NULL, "aten::matmul"},
	{"aten::matmul, sizes = [[4, 256, 2048], [2048, 512]]", "gemm m=1024 n=512 k=2048 dtype=bf16", NULL, "aten::matmul"},
	{"aten::matmul, sizes = [[1, 64, 128], [1, 128, 32]]", "gemm m=64 n=32 k=128 dtype=bf16", NULL, "aten::matmul"},
	{"aten::linear, sizes = [[4, 256, 2048], [768, 2048], []], types = [c10::BFloat16, c10::BFloat16, ]",
	 "gemm m=1024 n=768 k=2048 dtype=bf16", NULL, "aten::linear"},
	{"aten::linear, sizes = [[4, 2048], [768, 1024]]", NULL, "input width 2048 differs from the weight's 1024",
	 "aten::linear"},
	{"aten::_scaled_mm, sizes = [[128, 7168], [7168, 2048], [], []], types = [c10::Float8_e4m3fn, "
	 "c10::Float8_e4m3fn, float, float]",
	 "gemm m=128 n=2048 k=7168 dtype=fp8", NULL, "aten::_scaled_mm (FP8)"},
	{"aten::_grouped_mm, op_id = 604, sizes = [[4096, 2048], [32, 2048, 1536], [32], [], []]",
	 "grouped_gemm m=4096 n=1536 k=2048 groups=32 dtype=bf16", NULL, "grouped GEMM (torch._grouped_mm, F.grouped_mm)"},
	{"aten::_grouped_mm, sizes = [[64, 512], [8, 768, 512], [8]]", "grouped_gemm m=64 n=768 k=512 groups=8 dtype=bf16",
	 NULL, "grouped GEMM (torch._grouped_mm, F.grouped_mm)"},
	{"aten::_grouped_mm, sizes = [[64, 512], [8, 768, 256], [8]]", NULL, "no dim of the weights",
	 "grouped GEMM (torch._grouped_mm, F.grouped_mm)"},
	{"aten::_scaled_grouped_mm, sizes = [[64, 512], [8, 512, 256], [], [], [8]], types = [c10::Float8_e4m3fn, "
	 "c10::Float8_e4m3fn, float, float, int]",
	 "grouped_gemm m=64 n=256 k=512 groups=8 dtype=fp8", NULL, "grouped GEMM (scaled)"},
	{"vllm::fused_moe_kernel, sizes = [[32, 7168], [256, 4096, 7168]]",
	 "grouped_gemm m=32 n=4096 k=7168 groups=256 dtype=bf16", NULL, "fused MoE (vLLM, SGLang)"},
	/* attention */
	{"aten::_cudnn_attention_forward, sizes = [[4, 16, 256, 192], [4, 16, 256, 192], [4, 16, 256, 128], [], []]",
	 "mla_prefill b=4 t=256 ctx=0 heads=16 dqk=192 dv=128 kv=bf16", NULL, "SDPA cuDNN"},
	{"aten::_scaled_dot_product_flash_attention, sizes = [[4, 16, 1, 128], [4, 16, 300, 128], [4, 16, 300, 128]]",
	 "mla_prefill b=4 t=1 ctx=299 heads=16 dqk=128 dv=128 kv=bf16", NULL, "SDPA flash"},
	{"aten::_scaled_dot_product_efficient_attention, sizes = [[1, 8, 64, 96], [1, 8, 64, 96], [1, 8, 64, 64], [], "
	 "[]], types = [c10::BFloat16, c10::BFloat16, c10::BFloat16, , ]",
	 "mla_prefill b=1 t=64 ctx=0 heads=8 dqk=96 dv=64 kv=bf16", NULL, "SDPA memory-efficient"},
	{"aten::_scaled_dot_product_cudnn_attention, sizes = [[2, 4, 8, 64], [2, 4, 8, 64], [2, 4, 8, 64]]",
	 "mla_prefill b=2 t=8 ctx=0 heads=4 dqk=64 dv=64 kv=bf16", NULL, "SDPA cuDNN (outer)"},
	{"aten::scaled_dot_product_attention, sizes = [[2, 4, 8, 64], [2, 4, 8, 64], [2, 4, 8, 64]]",
	 "mla_prefill b=2 t=8 ctx=0 heads=4 dqk=64 dv=64 kv=bf16", NULL, "SDPA"},
	{"aten::scaled_dot_product_attention, sizes = [[2, 4, 8, 64], [2, 4, 4, 64], [2, 4, 4, 64]]", NULL,
	 "cross attention", "SDPA"},
	{"aten::scaled_dot_product_attention, sizes = [[2, 4, 8, 64], [2, 4, 8, 32], [2, 4, 8, 64]]", NULL,
	 "head dims differ", "SDPA"},
	{"aten::_flash_attention_forward, sizes = [[2, 512, 16, 128], [2, 512, 16, 128], [2, 512, 16, 128]]",
	 "mla_prefill b=2 t=512 ctx=0 heads=16 dqk=128 dv=128 kv=bf16", NULL, "flash-attention forward"},
	{"aten::_efficient_attention_forward, sizes = [[1, 32, 8, 64], [1, 32, 8, 64], [1, 32, 8, 64]]",
	 "mla_prefill b=1 t=32 ctx=0 heads=8 dqk=64 dv=64 kv=bf16", NULL, "memory-efficient attention forward"},
	{"flash_attn::_flash_attn_forward, sizes = [[1, 1, 8, 64], [1, 100, 8, 64], [1, 100, 8, 64]]",
	 "mla_prefill b=1 t=1 ctx=99 heads=8 dqk=64 dv=64 kv=bf16", NULL, "flash_attn package"},
	{"sgl_kernel::flash_mla_with_kvcache, sizes = [[64, 1, 128, 576], [64, 4096, 1, 576], [64, 4096, 1, 512]]",
	 "mla_decode b=64 heads=128 ctx=4095 t=1 latent=512 rope=64 kv=bf16", NULL, "FlashInfer / FlashMLA (module ranges)"},
	{"sgl_kernel::flash_mla_with_kvcache, sizes = [[64, 1, 128, 576], [64, 4096, 1, 576], [64, 4000, 1, 512]]", NULL,
	 "batch or length disagree", "FlashInfer / FlashMLA (module ranges)"},
	{"sgl_kernel::flash_mla_with_kvcache, sizes = [[64, 1, 128, 576], [64, 1, 128, 576]]", NULL,
	 "argument 2 was not recorded", "FlashInfer / FlashMLA (module ranges)"},
	/* collectives */
	{"nccl:all_reduce, sizes = [[1024, 7168]], types = [c10::BFloat16]", NULL, "ranks is not recorded", "all-reduce"},
	{"c10d::allreduce_, sizes = [[4096]], types = [float]", "allreduce bytes=16384 ranks=8", NULL, "all-reduce (c10d)"},
	{"nccl:all_gather, sizes = [[64, 1024]]", "allgather bytes=131072 ranks=8", NULL, "all-gather"},
	{"c10d::_allgather_base_, sizes = [[64, 1024]]", "allgather bytes=131072 ranks=8", NULL, "all-gather (c10d)"},
	{"nccl:reduce_scatter, sizes = [[64, 1024]]", "reducescatter bytes=131072 ranks=8", NULL, "reduce-scatter"},
	{"c10d::_reduce_scatter_base_, sizes = [[64, 1024]]", "reducescatter bytes=131072 ranks=8", NULL,
	 "reduce-scatter (c10d)"},
	{"nccl:all_to_all, sizes = [[64, 1024]]", "alltoall bytes=131072 ranks=8", NULL, "all-to-all"},
	{"c10d::alltoall_base_, sizes = [[64, 1024]]", "alltoall bytes=131072 ranks=8", NULL, "all-to-all (c10d)"},
	/* gathers */
	{"aten::embedding, sizes = [[32768, 2048], [4, 256], [], [], []], types = [c10::BFloat16, long int, Scalar, "
	 "Scalar, Scalar]",
	 "memory read=4202496 write=4194304", NULL, "embedding"},
	{"aten::index_select, sizes = [[32768, 2048], [], [4]], types = [c10::BFloat16, Scalar, long int]",
	 "memory read=16416 write=16384", NULL, "index_select"},
	{"aten::index, sizes = [[1024, 2048], [4096]]", "memory read=16785408 write=16777216", NULL,
	 "index (tensor indexing)"},
	{"aten::index, sizes = [[1024, 2048], []], types = [c10::BFloat16, ]", NULL, "argument 1 has no recorded sizes",
	 "index (tensor indexing)"},
	/* in-place, copies, reductions, the catch-alls */
	{"aten::index_add_, sizes = [[1024, 512], [], [8192], [8192, 512], []]", "memory read=9453568 write=1048576",
	 NULL, "scatters and indexed updates (in place)"},
	{"aten::copy_, sizes = [[1, 32, 1], [1, 32, 1], []], types = [float, c10::BFloat16, Scalar]",
	 "memory read=64 write=128", NULL, "copy_"},
	{"aten::fill_, sizes = [[1024, 4], []], types = [float, Scalar]", "memory read=0 write=16384", NULL,
	 "fill_ / zero_"},
	{"aten::fill_, sizes = [[], []]", NULL, "its output (argument 0) has no recorded size", "fill_ / zero_"},
	{"aten::cat, sizes = [[[1, 256, 32], [1, 256, 32]], []], types = [TensorList, Scalar]",
	 "memory read=32768 write=32768", NULL, "cat / stack"},
	{"aten::mean, sizes = [[4, 256, 2048], [], [], []], types = [float, ScalarList, Scalar, ]",
	 "memory read=8388608 write=0", NULL, "reductions"},
	{"aten::sort, sizes = [[4096], [], [], []], types = [long int, Scalar, Scalar, Scalar]",
	 "memory read=32768 write=32768", NULL, "sort (values and indices written)"},
	{"aten::mul_, sizes = [[16, 64], [16, 1]]", "memory read=2080 write=2048", NULL, "in-place elementwise"},
	{"aten::mul, sizes = [[1, 256, 64], []], types = [float, double]", "memory read=65544 write=65536", NULL,
	 "elementwise / layout / other ATen"},
	{"aten::arange, sizes = [[], [], [], [0]]", NULL, "no tensor sizes recorded", "elementwise / layout / other ATen"},
	{"torchvision::nms, sizes = [[100, 4], [100]], types = [float, float]", "memory read=2000 write=1600", NULL,
	 "torchvision / custom ops"},
	{"my_plain_function, sizes = [[4]]", NULL, "no derivation rule matches", NULL},
};

static void test_cases(void **state)
{
	(void)state;
	struct calib_derive d;
	struct err e = {0};
	assert_int_equal(calib_derive_load(&d, "default", &e), 0);
	struct calib_derive_opts o = {.dtype = DT_BF16, .ranks = 8};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct dcase *k = &cases[i];
		struct fw_call c;
		assert_int_equal(fw_call_parse(k->record, &c, &e), 1);
		struct calib_derive_opts oo = o;
		if (strstr(k->why ? k->why : "", "ranks"))
			oo.ranks = 0;
		struct calib_derived r;
		int rc = calib_derive_op(&d, &c, &oo, &r);
		if (k->spec) {
			if (rc != 0)
				fail_msg("%s: %s", k->record, r.why);
			assert_string_equal(r.spec, k->spec);
		} else {
			if (rc >= 0)
				fail_msg("%s: derived '%s', expected an error", k->record, r.spec);
			if (!strstr(r.why, k->why))
				fail_msg("%s: '%s' lacks '%s'", k->record, r.why, k->why);
		}
		if (k->rule) {
			assert_true(r.rule >= 0);
			assert_string_equal(d.rule[r.rule].name, k->rule);
		} else {
			assert_int_equal(r.rule, -1);
		}
	}
	calib_derive_release(&d);
}

static void test_every_rule_tested(void **state)
{
	(void)state;
	struct calib_derive d;
	struct err e = {0};
	assert_int_equal(calib_derive_load(&d, "default", &e), 0);
	for (int i = 0; i < d.n; i++) {
		bool hit = false;
		for (size_t j = 0; j < sizeof cases / sizeof cases[0] && !hit; j++)
			hit = cases[j].rule && strcmp(cases[j].rule, d.rule[i].name) == 0;
		if (!hit)
			fail_msg("derivation rule '%s' (line %d) has no test case", d.rule[i].name, d.rule[i].line);
	}
	calib_derive_release(&d);
}

static void test_dtype_assumed(void **state)
{
	(void)state;
	struct calib_derive d;
	struct err e = {0};
	assert_int_equal(calib_derive_load(&d, "aten", &e), 0);
	struct fw_call c;
	struct calib_derived r;
	assert_int_equal(fw_call_parse("aten::mm, sizes = [[4, 8], [8, 16]]", &c, &e), 1);
	struct calib_derive_opts o = {.dtype = DT_FP16};
	assert_int_equal(calib_derive_op(&d, &c, &o, &r), 0);
	assert_true(r.dtype_assumed);
	assert_string_equal(r.spec, "gemm m=4 n=16 k=8 dtype=fp16");
	assert_int_equal(r.op.kind, OP_GEMM);
	assert_int_equal(r.op.k, 8);
	assert_int_equal(fw_call_parse("aten::mm, sizes = [[4, 8], [8, 16]], types = [c10::BFloat16, c10::BFloat16]", &c,
	                               &e),
	                 1);
	assert_int_equal(calib_derive_op(&d, &c, &o, &r), 0);
	assert_false(r.dtype_assumed);
	/* a memory op prices its bytes */
	assert_int_equal(fw_call_parse("aten::add, sizes = [[1024, 1024], [1024, 1024], []]", &c, &e), 1);
	assert_int_equal(calib_derive_op(&d, &c, NULL, &r), 0);
	assert_string_equal(r.spec, "memory read=4194304 write=2097152");
	assert_int_equal(op_bytes(&r.op), 4194304 + 2097152);
	calib_derive_release(&d);
}

static void expect_load_error(const char *yaml, int line, const char *what)
{
	struct calib_derive d;
	struct err e = {0};
	int rc = calib_derive_load_string(&d, "r.yaml", yaml, strlen(yaml), &e);
	assert_true(rc < 0);
	if (!strstr(e.msg, what))
		fail_msg("'%s' lacks '%s'", e.msg, what);
	assert_string_equal(e.file, "r.yaml");
	if (line)
		assert_int_equal(e.line, line);
}

static void test_files(void **state)
{
	(void)state;
	struct calib_derive d;
	struct err e = {0};
	const char *ok = "rules:\n"
	                 "  - {call: [\"my::op\", \"my::op2\"], form: skip}\n"
	                 "  - {name: mine, call: \"my::*\", form: memory, read: [1], write: [0, 2]}\n";
	assert_int_equal(calib_derive_load_string(&d, "r.yaml", ok, strlen(ok), &e), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(calib_derive_find(&d, "my::op2"), 0);
	struct fw_call c;
	struct calib_derived r;
	assert_int_equal(fw_call_parse("my::op, sizes = [[4]]", &c, &e), 1);
	assert_int_equal(calib_derive_op(&d, &c, NULL, &r), -ENOENT);
	assert_true(r.skipped);
	assert_non_null(strstr(r.why, "skipped by derivation rule 'my::op'"));
	assert_int_equal(fw_call_parse("my::x, sizes = [[4], [8], [2]]", &c, &e), 1);
	assert_int_equal(calib_derive_op(&d, &c, NULL, &r), 0);
	assert_string_equal(r.spec, "memory read=16 write=12");
	calib_derive_release(&d);
	expect_load_error("rules:\n  - {call: \"a\", form: gem}\n", 2, "unknown 'gem' (did you mean 'gemm'?)");
	expect_load_error("rules:\n  - {form: gemm}\n", 2, "missing key 'call'");
	expect_load_error("rules:\n  - {call: \"a\"}\n", 2, "missing key 'form'");
	expect_load_error("rules:\n  - {call: \"a\", form: gemm, read: all}\n", 2, "read/write belong to form memory");
	expect_load_error("rules:\n  - {call: \"a\", form: gemm, a: 99}\n", 2, "an argument position");
	expect_load_error("rules:\n  - {call: \"a\", form: collective}\n", 2, "needs key 'collective'");
	expect_load_error("rules:\n  - {call: \"a\", form: attention, layout: sbhd}\n", 2, "bhsd or bshd");
	expect_load_error("rules:\n  - {call: \"a\", form: memory, write: most}\n", 2, "write: largest");
	expect_load_error("rules:\n  - {call: \"a\", form: memory, colour: red}\n", 2, "colour");
	expect_load_error("rules: 3\n", 1, "rules");
	expect_load_error("", 0, "empty rules file");
	assert_int_equal(calib_derive_load(&d, "nosuch", &e), -ENOENT);
	assert_non_null(strstr(e.msg, "unknown derivation rules 'nosuch'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_every_rule_tested),
		cmocka_unit_test(test_dtype_assumed),
		cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
