"""NCCL collective grid for calibration (issue 5), one process per GPU (torchrun):
all-reduce, all-gather and all-to-all from 64 KiB to 512 MiB (powers of 2 and 0.75 x 2^k), each
timed instance in an NVTX range named in `k3sim op` syntax ("k3sim op=allreduce bytes=N
ranks=R"), so `k3sim trace capture` + `k3sim calibrate` map each NCCL kernel to its model op.
`bytes` follows nccl-tests (and k3sim op): all-reduce the buffer per rank, all-gather the output
buffer, all-to-all the send buffer per rank. Rank 0 also writes CUDA-event medians as CSV
(calib-grid's format: op,reps,median_s,p10_s,p90_s).

usage: torchrun --nproc_per_node=2 bench/calib/nccl-grid.py [--out FILE.csv] [--quick]
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

WARMUP = 5
MAX_REPS = 30
BUDGET_S = 0.2  # per point, after warm-up


def sizes(quick):
    b = 64 << 10
    while b <= 512 << 20:
        yield b
        if not quick and b >= 256 << 10:
            yield b // 4 * 3  # held out: 0.75 x the power of two
        b *= 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="nccl-grid.csv")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    # NVLink multicast stays off on shared machines (the device tool's KINDS.md says why).
    for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
        assert os.environ.get(k) == v, f"{k}={v} must be set before the processes start"
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda")
    rows = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for op in ("allreduce", "allgather", "alltoall"):
        for nbytes in sizes(args.quick):
            n = nbytes // 2  # bf16 elements
            if op == "allgather":
                if n % world:
                    continue
                out = torch.empty(n, dtype=torch.bfloat16, device=dev)
                inp = torch.randn(n // world, dtype=torch.bfloat16, device=dev)
                run = lambda: dist.all_gather_into_tensor(out, inp)
            elif op == "alltoall":
                if n % world:
                    continue
                inp = torch.randn(n, dtype=torch.bfloat16, device=dev)
                out = torch.empty_like(inp)
                run = lambda: dist.all_to_all_single(out, inp)
            else:
                buf = torch.randn(n, dtype=torch.bfloat16, device=dev)
                run = lambda: dist.all_reduce(buf)
            spec = f"k3sim op={op} bytes={nbytes} ranks={world}"
            for _ in range(WARMUP):
                run()
            torch.cuda.synchronize()
            times, spent = [], 0.0
            for _ in range(MAX_REPS):
                dist.barrier()
                torch.cuda.nvtx.range_push(spec)
                start.record()
                run()
                stop.record()
                stop.synchronize()
                torch.cuda.nvtx.range_pop()
                t = start.elapsed_time(stop) * 1e-3
                times.append(t)
                spent += t
                # every rank must run the same number of reps
                done = torch.tensor([1 if (len(times) >= 5 and spent > BUDGET_S) else 0], device=dev)
                dist.all_reduce(done, op=dist.ReduceOp.MIN)
                if done.item():
                    break
            times.sort()
            k = len(times)
            rows.append((spec, k, times[k // 2], times[k // 10], times[(9 * k) // 10]))
        if rank == 0:
            print(f"nccl-grid: {op} done", flush=True)
    if rank == 0:
        with open(args.out, "w") as f:
            f.write(f"# {torch.cuda.get_device_name()} x{world}, torch {torch.__version__}, "
                    f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))}, {time.strftime('%Y-%m-%d')}\n")
            f.write("op,reps,median_s,p10_s,p90_s\n")
            for r in rows:
                f.write('"%s",%d,%.9g,%.9g,%.9g\n' % r)
        print(f"nccl-grid: wrote {args.out}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
