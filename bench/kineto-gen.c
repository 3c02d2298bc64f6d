/* A synthetic Kineto trace of about BYTES bytes, laid out as torch.profiler (PyTorch 2.x, Kineto)
 * writes one: pretty-printed events, cpu_op events with their input shapes, python_function
 * events, cudaLaunchKernel calls, kernels with long templated names and launch geometry, ac2g
 * flow pairs, memcpys and memsets, a user_annotation per step and its GPU projection,
 * deviceProperties, distributedInfo and baseTimeNanoseconds. Deterministic: the same BYTES give
 * the same file.
 *
 * usage: kineto-gen BYTES [OUT]   (OUT "-" or absent: standard output)
 * On stderr: "kernels N api_calls N memcpys N memsets N nvtx N bytes N", what an import must
 * find (bench/trace-bench.sh checks it). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KERNELS[] = {
	"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_tn_align8>"
	"(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_tn_align8::Params)",
	"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16,"
	" c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >,"
	" at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16,"
	" c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)",
	"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false,"
	" cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false,"
	" false, false, false, true, true, false>(Flash_fwd_params)",
	"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT",
	"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float,"
	" c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*,"
	" c10::BFloat16 const*, int)",
	"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*,"
	" int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int,"
	" int, int, int, int, int, void**, int, int, int)",
	"void rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16 const*,"
	" c10::BFloat16 const*, float, int, int)",
};
enum { N_KERNELS = sizeof KERNELS / sizeof KERNELS[0] };

static const char *const OPS[] = {
	"aten::linear", "aten::mul", "aten::_flash_attention_forward", "aten::mm", "aten::softmax",
	"c10d::allreduce_", "deep_ep::dispatch", "vllm::rms_norm",
};

static int64_t written; /* ftell does not work on a pipe */

__attribute__((format(printf, 2, 3))) static void out(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vfprintf(f, fmt, ap);
	va_end(ap);
	if (n > 0)
		written += n;
}

struct counts {
	int64_t kernels, api, memcpys, memsets, nvtx;
};

static void device_props(FILE *f)
{
	out(f, "  \"deviceProperties\": [\n");
	for (int d = 0; d < 8; d++)
		out(f,
			"    {\n      \"id\": %d, \"name\": \"NVIDIA H200\", \"totalGlobalMem\": 150754820096,\n"
			"      \"computeMajor\": 9, \"computeMinor\": 0,\n"
			"      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
			"      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
			"      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 233472,\n"
			"      \"numSms\": 132, \"sharedMemPerBlockOptin\": 232448\n    }%s\n",
			d, d < 7 ? "," : "");
	out(f, "  ],\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: kineto-gen BYTES [OUT]\n");
		return 2;
	}
	int64_t target = strtoll(argv[1], NULL, 10);
	FILE *f = stdout;
	if (argc == 3 && strcmp(argv[2], "-") != 0) {
		f = fopen(argv[2], "w");
		if (!f) {
			perror(argv[2]);
			return 1;
		}
	}
	static char buf[1 << 20];
	setvbuf(f, buf, _IOFBF, sizeof buf);
	struct counts n = {0};
	const int pid = 2875401, tid = 2875401;
	out(f, "{\n  \"schemaVersion\": 1,\n");
	device_props(f);
	out(f,
		"  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8,"
		" \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\","
		" \"backend_config\": \"cuda:nccl\", \"pg_size\": 8, \"ranks\": [0, 1, 2, 3, 4, 5, 6,"
		" 7]}], \"nccl_version\": \"2.21.5\"},\n"
		"  \"record_shapes\": 1,\n  \"with_stack\": 1,\n"
		"  \"traceName\": \"rank0.1733000000000.pt.trace.json\",\n"
		"  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1727740800000000000,\n"
		"  \"traceEvents\": [\n");
	int64_t t_us = 1000000; /* relative to baseTimeNanoseconds */
	int64_t corr = 1, ext = 1;
	int64_t step = 0;
	while (written < target) {
		/* one step: an annotation around 64 ops */
		int64_t step_start = t_us;
		for (int i = 0; i < 64; i++, corr++, ext++) {
			int k = (int)((corr * 7 + step) % N_KERNELS);
			int64_t op_t = t_us + 3;
			out(f,
				"  {\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\":"
				" \"torch/nn/modules/module.py(1747): _call_impl\", \"pid\": %d, \"tid\": %d,\n"
				"    \"ts\": %" PRId64 ".%03d, \"dur\": 41.207,\n"
				"    \"args\": {\n      \"Python parent id\": %" PRId64 ", \"Python id\": %" PRId64
				", \"Python thread\": 0\n    }\n  },\n",
				pid, tid, t_us, (int)(corr % 1000), ext - 1, ext);
			out(f,
				"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d,"
				" \"tid\": %d,\n    \"ts\": %" PRId64 ".%03d, \"dur\": 35.118,\n"
				"    \"args\": {\n      \"External id\": %" PRId64 ",\"Record function id\": 0,"
				" \"Ev Idx\": %" PRId64 ", \"Input Dims\": [[16, 7168], [7168, 2048], []],"
				" \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\"], \"Input Strides\":"
				" [[7168, 1], [1, 7168], []], \"Concrete Inputs\": [\"\", \"\", \"\"],"
				" \"Fwd thread id\": 0, \"Sequence number\": %" PRId64 "\n    }\n  },\n",
				OPS[k], pid, tid, op_t, (int)((corr * 37) % 1000), ext, ext - 1, corr);
			int64_t launch = op_t + 20;
			out(f,
				"  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\","
				" \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRId64 ".%03d, \"dur\": 4.881,\n"
				"    \"args\": {\n      \"External id\": %" PRId64 ",\n      \"cbid\": 211,"
				" \"correlation\": %" PRId64 "\n    }\n  },\n",
				pid, tid, launch, (int)((corr * 11) % 1000), ext, corr);
			n.api++;
			int stream = k == 5 ? 20 : k == 6 ? 24 : 7;
			int64_t kstart = launch + 15 + (corr % 5);
			out(f,
				"  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0,"
				" \"tid\": %d,\n    \"ts\": %" PRId64 ".%03d, \"dur\": %d.%03d,\n"
				"    \"args\": {\n      \"External id\": %" PRId64 ",\n      \"queued\": 0,"
				" \"device\": 0, \"context\": 1,\n      \"stream\": %d, \"correlation\": %" PRId64
				",\n      \"registers per thread\": %d,\n      \"shared memory\": %d,\n"
				"      \"blocks per SM\": 1.000000,\n      \"warps per SM\": 8.000000,\n"
				"      \"grid\": [132, %d, 1],\n      \"block\": [256, 1, 1],\n"
				"      \"est. achieved occupancy %%\": 13\n    }\n  },\n",
				KERNELS[k], stream, kstart, (int)((corr * 13) % 1000), 5 + k * 3,
				(int)((corr * 17) % 1000), ext, stream, corr, 32 + 8 * k, 1024 * k, 1 + k);
			n.kernels++;
			out(f,
				"  {\n    \"ph\": \"s\", \"id\": %" PRId64 ", \"pid\": %d, \"tid\": %d, \"ts\":"
				" %" PRId64 ".%03d,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n"
				"  {\n    \"ph\": \"f\", \"id\": %" PRId64 ", \"pid\": 0, \"tid\": %d, \"ts\":"
				" %" PRId64 ".%03d,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n"
				"  },\n",
				corr, pid, tid, launch, (int)((corr * 11) % 1000), corr, stream, kstart,
				(int)((corr * 13) % 1000));
			t_us += 50;
		}
		/* a copy and a memset per step */
		corr++;
		out(f,
			"  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\","
			" \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRId64 ".000, \"dur\": 6.000,\n"
			"    \"args\": {\n      \"External id\": %" PRId64 ",\n      \"cbid\": 41,"
			" \"correlation\": %" PRId64 "\n    }\n  },\n"
			"  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device ->"
			" Pinned)\", \"pid\": 0, \"tid\": 7,\n    \"ts\": %" PRId64 ".500, \"dur\": 3.250,\n"
			"    \"args\": {\n      \"External id\": %" PRId64 ",\n      \"device\": 0,"
			" \"context\": 1,\n      \"stream\": 7, \"correlation\": %" PRId64 ",\n"
			"      \"bytes\": 65536, \"memory bandwidth (GB/s)\": 20.16\n    }\n  },\n",
			pid, tid, t_us, ext, corr, t_us + 8, ext, corr);
		n.api++;
		n.memcpys++;
		corr++;
		out(f,
			"  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemsetAsync\","
			" \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRId64 ".000, \"dur\": 3.000,\n"
			"    \"args\": {\n      \"External id\": %" PRId64 ",\n      \"cbid\": 51,"
			" \"correlation\": %" PRId64 "\n    }\n  },\n"
			"  {\n    \"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\","
			" \"pid\": 0, \"tid\": 7,\n    \"ts\": %" PRId64 ".250, \"dur\": 1.125,\n"
			"    \"args\": {\n      \"External id\": %" PRId64 ",\n      \"device\": 0,"
			" \"context\": 1,\n      \"stream\": 7, \"correlation\": %" PRId64 ",\n"
			"      \"bytes\": 4096, \"memory bandwidth (GB/s)\": 3.64\n    }\n  },\n",
			pid, tid, t_us + 20, ext, corr, t_us + 30, ext, corr);
		n.api++;
		n.memsets++;
		t_us += 60;
		out(f,
			"  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%" PRId64
			"\", \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRId64 ".000, \"dur\": %" PRId64
			".000,\n    \"args\": {\n      \"External id\": %" PRId64 ",\n"
			"      \"Record function id\": 0, \"Ev Idx\": %" PRId64 "\n    }\n  },\n"
			"  {\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#%" PRId64
			"\", \"pid\": 0, \"tid\": 7,\n    \"ts\": %" PRId64 ".000, \"dur\": %" PRId64 ".000,\n"
			"    \"args\": {\n      \"External id\": %" PRId64 ",\n      \"device\": 0,"
			" \"context\": 1,\n      \"stream\": 7, \"correlation\": %" PRId64 "\n    }\n  },\n",
			step, pid, tid, step_start, t_us - step_start, ext, ext, step, step_start + 40,
			t_us - step_start, ext, corr);
		n.nvtx += 2;
		step++;
		t_us += 200;
	}
	out(f,
		"  {\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1000000.000, \"pid\": %d,"
		" \"tid\": 0,\n    \"args\": {\n      \"name\": \"python3\"\n    }\n  },\n"
		"  {\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1000000.000, \"pid\": 0,"
		" \"tid\": 0,\n    \"args\": {\n      \"name\": \"GPU 0\"\n    }\n  },\n"
		"  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 1000000.000, \"dur\": %" PRId64
		".000,\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
		"    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n      \"Op count\": 0\n    }\n"
		"  }\n  ],\n  \"traceName\": \"rank0.pt.trace.json\"\n}\n",
		pid, t_us - 1000000);
	int64_t bytes = written;
	if (fflush(f) || ferror(f)) {
		perror("write");
		return 1;
	}
	fprintf(stderr,
		"kernels %" PRId64 " api_calls %" PRId64 " memcpys %" PRId64 " memsets %" PRId64
		" nvtx %" PRId64 " bytes %" PRId64 "\n",
		n.kernels, n.api, n.memcpys, n.memsets, n.nvtx, bytes);
	if (f != stdout)
		fclose(f);
	return 0;
}
