#!/usr/bin/env python3
"""Traces shaped like the public ones k3sim must read, written from scratch (no bytes copied from
anywhere): their structure follows what torch.profiler (Kineto), vLLM, SGLang with DeepEP and
`nsys export --type sqlite` write, as seen in HolisticTraceAnalysis' test traces, DeepSeek's
profile-data and pipit's nsys exports. Deterministic. expect.py computes the numbers an import
must give, without k3sim.

usage: gen.py OUTDIR
  pytorch-rank0.json, pytorch-rank1.json  Kineto, 2 ranks of a training step: cpu_op /
      python_function / cuda_runtime / kernel / gpu_memcpy / gpu_memset / ac2g flows /
      ProfilerStep annotations, NCCL all-reduce overlapping backward kernels, pretty-printed as
      Kineto writes, baseTimeNanoseconds and distributedInfo, process_name repeated
  hta-style.json.gz  older Kineto: absolute integer-microsecond ts, no baseTimeNanoseconds,
      "Iteration Start" / "Record Window End" markers without a category, gzip'd
  vllm-decode.json   vLLM decode: CUDA-graph launches, custom all-reduce (cross_device_reduce),
      flash attention, fused MoE; every GPU event listed before the CPU events; a UTF-8 BOM
  sglang-ep-rank0.json, sglang-ep-rank1.json  SGLang + DeepEP low-latency on 2 ranks, each on
      its own "GPU 0" (CUDA_VISIBLE_DEVICES): dispatch/combine overlapping DeepGEMM on another
      stream, a 2 MiB "Call stack" string in an argument
  nsys-export.sqlite  an nsys export: nsys' column order, a session start, UUIDs, eventClass-67
      duplicates of runtime calls, NVTX text by textId, PROCESSES of the whole machine
"""
import gzip, json, os, sqlite3, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

GEMM = ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x3_tn_align8>"
        "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x3_tn_align8::Params)")
ELEM = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>,"
        " at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>,"
        " at::detail::Array<char*, 3>)")
NCCL_AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
FLASH = ("void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false,"
         " cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false,"
         " false, false, false, true, true, false>(Flash_fwd_params)")
FUSED_MOE = "fused_moe_kernel"
CUSTOM_AR = ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*,"
             " vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)")
LL_DISPATCH = ("void deep_ep::internode_ll::dispatch<true, 3, 10, 7168>(void*, float*, int*, long*,"
               " void*, int*, int*, void*, void const*, long const*, int*, int*, int, int, int, int,"
               " int, int, int, int)")
LL_COMBINE = ("void deep_ep::internode_ll::combine<false, 3, 10, 7168>(void*, void*, int*, void*,"
              " void const*, long const*, float const*, int const*, int const*, int*, int*, int,"
              " int, int, int, int, int, int, bool)")
DEEPGEMM = ("void deep_gemm::fp8_gemm_kernel<7168u, 2048u, 128u, 160u, 128u, 1u, 8u, 128u, 4u,"
            " (deep_gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, CUtensorMap,"
            " CUtensorMap, CUtensorMap, CUtensorMap)")


def kineto_text(doc, events):
    """Kineto's layout: a few header keys, then one event per block, pretty-printed."""
    parts = ["{"]
    for k, v in doc.items():
        parts.append('  "%s": %s,' % (k, json.dumps(v)))
    parts.append('  "traceEvents": [')
    body = []
    for e in events:
        head = ", ".join('"%s": %s' % (k, json.dumps(e[k])) for k in e if k != "args")
        text = "  {\n    " + head
        if "args" in e:
            text += ',\n    "args": {\n      ' + ",\n      ".join(
                '"%s": %s' % (k, json.dumps(v)) for k, v in e["args"].items()) + "\n    }"
        body.append(text + "\n  }")
    parts.append(",\n".join(body))
    parts.append("  ]\n}\n")
    return "\n".join(parts)


def us(ns):
    """ns -> Kineto's "ts"/"dur" text value: microseconds with 3 decimals (a JSON number)."""
    return float("%d.%03d" % (ns // 1000, ns % 1000))


def pytorch_rank(rank):
    pid = 31000 + rank
    ev = []
    t = 1_000_000  # ns since baseTimeNanoseconds
    corr = 100
    for step in range(3):
        step_start = t
        kernels = []
        # forward/backward ops, each launching one kernel on stream 7
        for i in range(8):
            name = GEMM if i % 2 == 0 else ELEM
            op = {"ph": "X", "cat": "cpu_op", "name": "aten::linear" if i % 2 == 0 else "aten::add",
                  "pid": pid, "tid": pid, "ts": us(t), "dur": us(9_000),
                  "args": {"External id": corr, "Input Dims": [[64, 1024], [1024, 1024]],
                           "Input type": ["float", "float"], "Sequence number": corr}}
            py = {"ph": "X", "cat": "python_function",
                  "name": "torch/nn/modules/module.py(1501): _call_impl", "pid": pid, "tid": pid,
                  "ts": us(t - 500), "dur": us(10_000), "args": {"Python id": corr}}
            launch = t + 2_000
            rt = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                  "tid": pid, "ts": us(launch), "dur": us(3_250),
                  "args": {"External id": corr, "cbid": 211, "correlation": corr}}
            k0 = launch + 5_000 + 17 * i
            kd = 40_000 + 1_000 * i + rank * 333
            k = {"ph": "X", "cat": "kernel", "name": name, "pid": rank, "tid": 7, "ts": us(k0),
                 "dur": us(kd),
                 "args": {"External id": corr, "queued": 0, "device": rank, "context": 1,
                          "stream": 7, "correlation": corr, "registers per thread": 96,
                          "shared memory": 16384, "blocks per SM": 0.5, "warps per SM": 2.0,
                          "grid": [128, 1, 1], "block": [256, 1, 1],
                          "est. achieved occupancy %": 12}}
            fs = {"ph": "s", "id": corr, "pid": pid, "tid": pid, "ts": us(launch), "cat": "ac2g",
                  "name": "ac2g"}
            ff = {"ph": "f", "id": corr, "pid": rank, "tid": 7, "ts": us(k0), "cat": "ac2g",
                  "name": "ac2g", "bp": "e"}
            ev += [py, op, rt, fs]
            kernels += [k, ff]
            corr += 1
            t += 30_000
        # the gradient all-reduce on stream 20, overlapping the last backward kernels
        ar_launch = t - 100_000
        ev.append({"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": pid, "tid": pid,
                   "ts": us(ar_launch - 1_000), "dur": us(6_000),
                   "args": {"External id": corr, "Collective name": "allreduce",
                            "In msg nelems": 1048576, "dtype": "Float", "Group size": 2}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                   "tid": pid, "ts": us(ar_launch), "dur": us(4_000),
                   "args": {"External id": corr, "cbid": 211, "correlation": corr}})
        kernels.append({"ph": "X", "cat": "kernel", "name": NCCL_AR, "pid": rank, "tid": 20,
                        "ts": us(ar_launch + 6_000), "dur": us(150_000 + 7 * step),
                        "args": {"External id": corr, "device": rank, "context": 1, "stream": 20,
                                 "correlation": corr, "registers per thread": 64,
                                 "shared memory": 0, "grid": [2, 1, 1], "block": [512, 1, 1]}})
        corr += 1
        # a copy back and a memset
        for cat, name, extra in (("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", {"bytes": 4096}),
                                 ("gpu_memset", "Memset (Device)", {"bytes": 256})):
            ev.append({"ph": "X", "cat": "cuda_runtime",
                       "name": "cudaMemcpyAsync" if cat == "gpu_memcpy" else "cudaMemsetAsync",
                       "pid": pid, "tid": pid, "ts": us(t + 60_000), "dur": us(2_500),
                       "args": {"External id": corr, "cbid": 41, "correlation": corr}})
            args = {"External id": corr, "device": rank, "context": 1, "stream": 7,
                    "correlation": corr}
            args.update(extra)
            kernels.append({"ph": "X", "cat": cat, "name": name, "pid": rank, "tid": 7,
                            "ts": us(t + 70_000), "dur": us(1_999), "args": args})
            corr += 1
            t += 80_000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": pid, "tid": pid, "ts": us(step_start - 1_000),
                   "dur": us(t - step_start + 2_000), "args": {"External id": corr}})
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": rank, "tid": 7, "ts": us(step_start + 7_000),
                   "dur": us(t - step_start), "args": {"External id": corr, "device": rank,
                                                       "stream": 7}})
        ev += kernels
        ev.append({"name": "process_name", "ph": "M", "ts": us(step_start), "pid": pid, "tid": 0,
                   "args": {"name": "python3"}})
        t += 200_000
    ev.append({"name": "process_name", "ph": "M", "ts": 0, "pid": rank, "tid": 0,
               "args": {"name": "GPU %d" % rank}})
    ev.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": pid,
               "args": {"name": "thread %d (python3)" % pid}})
    ev.append({"ph": "X", "cat": "Trace", "ts": us(900_000), "dur": us(t - 900_000),
               "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)",
               "args": {"Op count": 0}})
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": d, "name": "NVIDIA H100 80GB HBM3",
                                 "totalGlobalMem": 85045379072, "computeMajor": 9,
                                 "computeMinor": 0, "maxThreadsPerBlock": 1024,
                                 "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                                 "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132}
                                for d in range(2)],
           "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2, "pg_count": 1,
                               "pg_config": [{"pg_name": "0", "pg_desc": "default_pg",
                                              "backend_config": "cuda:nccl", "pg_size": 2,
                                              "ranks": [0, 1]}], "nccl_version": "2.21.5"},
           "record_shapes": 1, "with_stack": 1, "displayTimeUnit": "ms",
           "baseTimeNanoseconds": 1727740800000000000}
    return kineto_text(doc, ev)


def hta_style():
    """Older Kineto: absolute integer microseconds, no base time, markers without a category."""
    pid = 2456
    ev = [{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
           "tid": "Trace PyTorch Profiler", "ts": 1661938466240491}]
    t = 1661938466240500
    for i in range(20):
        corr = 1930700 + i
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                   "tid": pid, "ts": t, "dur": 4, "args": {"cbid": 211, "correlation": corr}})
        ev.append({"ph": "X", "cat": "Kernel" if i == 3 else "kernel",
                   "name": ELEM if i % 3 else NCCL_AR, "pid": 1, "tid": 7 if i % 3 else 13,
                   "ts": t + 6, "dur": 5 + i, "args": {"device": 1, "stream": 7 if i % 3 else 13,
                                                      "correlation": corr}})
        t += 30
    ev.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": t})
    doc = {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2}}
    return kineto_text(doc, ev)


def vllm_decode():
    """CUDA-graph decode steps: one cudaGraphLaunch per step, its kernels share the launch's
    correlation id; GPU events come first in the file."""
    pid = 77001
    cpu, gpu = [], []
    t = 5_000_000
    for step in range(4):
        corr = 5000 + step
        cpu.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": pid,
                    "tid": pid + 1, "ts": us(t), "dur": us(12_000),
                    "args": {"cbid": 311, "correlation": corr}})
        cpu.append({"ph": "X", "cat": "user_annotation", "name": "execute_model", "pid": pid,
                    "tid": pid + 1, "ts": us(t - 2_000), "dur": us(400_000)})
        k0 = t + 20_000
        for layer in range(3):
            for name, dur in ((FLASH, 21_000), (FUSED_MOE, 33_000), (CUSTOM_AR, 9_500)):
                gpu.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                            "ts": us(k0), "dur": us(dur + layer),
                            "args": {"device": 0, "stream": 7, "correlation": corr,
                                     "grid": [132, 1, 1], "block": [128, 1, 1]}})
                k0 += dur + 1_500
        t += 500_000
    doc = {"schemaVersion": 1, "baseTimeNanoseconds": 1733011200000000000}
    return "\ufeff" + kineto_text(doc, gpu + cpu)


def sglang_ep(rank):
    """DeepSeek-style EP decode with DeepEP low-latency: dispatch and combine on stream 24
    overlapping DeepGEMM on stream 7 (two-batch overlap)."""
    pid = 4100 + rank
    ev = []
    t = 2_000_000
    corr = 1
    stack = "x" * (2 << 20)  # a 2 MiB "Call stack": strings of any length in ignored fields
    for mb in range(4):
        for name, stream, start, dur in ((LL_DISPATCH, 24, 0, 80_000),
                                         (DEEPGEMM, 7, 30_000, 120_000),
                                         (LL_COMBINE, 24, 140_000, 60_000),
                                         (DEEPGEMM, 7, 210_000, 40_000)):
            launch = t + start - 10_000
            args = {"correlation": corr, "cbid": 307}
            if corr == 1:
                args["Call stack"] = stack
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cuLaunchKernelEx", "pid": pid,
                       "tid": pid, "ts": us(launch), "dur": us(3_000), "args": args})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                       "ts": us(t + start), "dur": us(dur + 11 * rank),
                       "args": {"device": 0, "stream": stream, "correlation": corr}})
            corr += 1
        ev.append({"ph": "X", "cat": "user_annotation", "name": "moe_layer", "pid": pid,
                   "tid": pid, "ts": us(t - 20_000), "dur": us(300_000)})
        t += 400_000
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H800",
                                                     "numSms": 132}],
           "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
           "baseTimeNanoseconds": 1727740800000000000}
    return kineto_text(doc, ev)


def nsys_export(path):
    if os.path.exists(path):
        os.unlink(path)
    c = sqlite3.connect(path)
    c.executescript("""
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
    CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
      busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER,
      memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT,
      luid INTEGER, chipName TEXT, cuDevice INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
      streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
      demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
      launchType INTEGER NOT NULL, cacheConfig INTEGER NOT NULL,
      registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
      gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
      blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
      dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
      localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
      sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
      streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
      copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
      srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
      migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
      nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
      endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
      int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
      floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
    CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
    """)
    strings = ["saxpy(int, float, float*, float*)", "saxpy", "cudaLaunchKernel_v7000",
               "cudaLaunchKernel", "cudaMemcpy_v3020", "cudaMemcpy", "cuModuleGetLoadingMode",
               "iteration", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
               "ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
    c.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(strings)))
    c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1687813257637297504,"
              " '2023-06-26T21:00:57', '2023-06-26T14:00:57')")
    gpid = 1230493 << 24 | 1 << 48
    gtid = gpid | 1230493
    for dev, bus, uuid, cu in ((0, "0000:c1:00.0", "cf6b97c0-bf53-a39e-febd-9532190b5766", 3),
                               (1, "0000:03:00.0", "b17c6502-716a-c2c7-0f65-854136d5f79f", 0)):
        c.execute("INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, ?, 'NVIDIA A100-SXM4-80GB',"
                  " ?, 1, 41943040, 85899345920, 2039000000000, 1410000000, 108, 0, ?, 0,"
                  " 'GA100', ?)", (dev, bus, uuid, cu))
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (375087209, 375088422, 1, ?, 1, 6,"
              " 0, NULL)", (gtid,))
    t = 900_000_000
    corr = 100
    for i in range(12):
        nccl = i % 4 == 3
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 67, ?, ?, 3, 0, ?)",
                  (t - 200, t + 33_500, gtid, corr, i))
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 2, 0, NULL)",
                  (t, t + 33_000, gtid, corr))
        k0 = t + 40_000
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, NULL, ?, ?, ?, ?, ?,"
                  " NULL, 0, 0, 32, 4096, 1, 1, 256, 1, 1, 0, 0, 0, 0, ?, NULL, NULL, 0)",
                  (k0, k0 + 2_000_000 + 1_000 * i, i % 2, 13 if nccl else 7, corr, gpid,
                   8 if nccl else 0, 9 if nccl else 1, 100 + i))
        corr += 1
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 67, ?, ?, 5, 0, ?)",
                  (t + 2_100_000, t + 2_400_000, gtid, corr, 100 + i))
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 4, 0, NULL)",
                  (t + 2_100_100, t + 2_399_000, gtid, corr))
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 1, NULL, 7, ?, ?, 1048576,"
                  " 2, 0, 1, 8, ?, 1, NULL, NULL, 0, NULL, NULL)",
                  (t + 2_200_000, t + 2_300_000, i % 2, corr, gpid, i % 2))
        corr += 1
        c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId)"
                  " VALUES (?, ?, 59, 7, ?, 0)", (t - 1_000, t + 2_500_000, gtid))
        t += 3_000_000
    c.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid) VALUES (?, 34, 'done', ?)",
              (t, gtid))
    c.execute("INSERT INTO PROCESSES VALUES (?, 1230493, './saxpy-mpi-cuda')", (gpid,))
    for p in range(1, 200):  # nsys lists every process of the machine
        c.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (p << 24 | 1 << 48, p, "kworker/%d" % p))
    c.commit()
    c.close()


def main():
    for r in (0, 1):
        with open(os.path.join(out, "pytorch-rank%d.json" % r), "w") as f:
            f.write(pytorch_rank(r))
        with open(os.path.join(out, "sglang-ep-rank%d.json" % r), "w") as f:
            f.write(sglang_ep(r))
    with gzip.GzipFile(os.path.join(out, "hta-style.json.gz"), "wb", mtime=0) as f:
        f.write(hta_style().encode())
    with open(os.path.join(out, "vllm-decode.json"), "w", encoding="utf-8") as f:
        f.write(vllm_decode())
    nsys_export(os.path.join(out, "nsys-export.sqlite"))


main()
