"""NCCL collective grid and EP dispatch/combine emulation for calibration (issues 5 and 7), one
process per GPU (torchrun):

1. all-reduce, reduce-scatter, all-gather and all-to-all from 64 KiB to 1 GiB (powers of 2, and
   0.75 x 2^k held out), BF16;
2. K3's LatentMoE expert-parallel dispatch and combine: tokens of 3584 latent elements in FP8 plus
   112 B of block scales out (3696 B), BF16 back (7168 B); top-16 over 896 experts spread evenly
   over the ranks; each token goes once to each rank that holds one of its experts (the layout of
   DeepEP's normal kernels); balanced routing (uniform) and skewed routing (Zipf(1) popularity with
   the popular experts together on the low ranks), 1 to 8192 tokens per rank.

Every timed instance is an NVTX range named in `k3sim op` syntax, so `k3sim trace capture` +
`k3sim calibrate` map each NCCL kernel to its model op:
  "k3sim op=allreduce bytes=N ranks=R"   (bytes as nccl-tests and k3sim op count them: all-reduce
  the buffer per rank, reduce-scatter the input per rank, all-gather the output, all-to-all the
  send buffer per rank)
The EP all-to-alls are uneven; their range gives the equivalent even all-to-all: bytes = the most
any rank sends or receives to or from other ranks, times R/(R-1) (the model's all-to-all moves
(R-1)/R of its bytes off the GPU).  Rank 0 writes CUDA-event medians as CSV (calib-grid's format:
op,reps,median_s,p10_s,p90_s) and the EP points with their traffic to a second CSV.

usage: torchrun --nproc_per_node=N bench/calib/nccl-grid.py [--out FILE.csv] [--quick]
           [--only coll|ep]
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

WARMUP = 5
MAX_REPS = 30
BUDGET_S = 0.2  # per point, after warm-up

EXPERTS, TOP_K, LATENT = 896, 16, 3584
DISPATCH_ROW_B = LATENT + LATENT // 32  # FP8 elements + one E8M0 scale per 32 (= FP32 per 128)
COMBINE_ROW_B = 2 * LATENT  # BF16


def sizes(quick, top):
    b = 64 << 10
    while b <= top:
        yield b
        if not quick and b >= 256 << 10:
            yield b // 4 * 3  # held out: 0.75 x the power of two
        b *= 2


def timed(run, spec, dev, start, stop):
    """Median, p10, p90 seconds of run() over reps chosen together by all ranks."""
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
    return k, times[k // 2], times[k // 10], times[(9 * k) // 10]


def collectives(args, world, dev, start, stop, rows):
    for op in ("allreduce", "reducescatter", "allgather", "alltoall"):
        for nbytes in sizes(args.quick, 1 << 30):
            n = nbytes // 2  # bf16 elements
            if op != "allreduce" and n % world:
                continue
            if op == "allgather":
                out = torch.empty(n, dtype=torch.bfloat16, device=dev)
                inp = torch.randn(n // world, dtype=torch.bfloat16, device=dev)
                run = lambda: dist.all_gather_into_tensor(out, inp)
            elif op == "reducescatter":
                inp = torch.randn(n, dtype=torch.bfloat16, device=dev)
                out = torch.empty(n // world, dtype=torch.bfloat16, device=dev)
                run = lambda: dist.reduce_scatter_tensor(out, inp)
            elif op == "alltoall":
                inp = torch.randn(n, dtype=torch.bfloat16, device=dev)
                out = torch.empty_like(inp)
                run = lambda: dist.all_to_all_single(out, inp)
            else:
                out = inp = torch.randn(n, dtype=torch.bfloat16, device=dev)
                run = lambda: dist.all_reduce(inp)
            spec = f"k3sim op={op} bytes={nbytes} ranks={world}"
            rows.append((spec,) + timed(run, spec, dev, start, stop))
            del out, inp
        torch.cuda.empty_cache()
        if dist.get_rank() == 0:
            print(f"nccl-grid: {op} done", flush=True)


def routing(kind, tokens, world, gen, dev):
    """Experts of each token, [tokens, TOP_K], experts r*E/W .. (r+1)*E/W-1 on rank r."""
    if kind == "balanced":
        scores = torch.rand(tokens, EXPERTS, generator=gen, device=dev)
    else:  # Zipf(1) popularity, most popular experts lowest-numbered (on rank 0)
        pop = 1.0 / torch.arange(1, EXPERTS + 1, device=dev, dtype=torch.float32)
        # Gumbel top-k samples TOP_K distinct experts with probabilities proportional to pop
        u = torch.rand(tokens, EXPERTS, generator=gen, device=dev).clamp_(1e-20, 1.0)
        scores = pop.log() - (-u.log()).log()
    return scores.topk(TOP_K, dim=1).indices


def ep(args, rank, world, dev, start, stop, rows, ep_rows):
    per_rank = EXPERTS // world
    gen = torch.Generator(device=dev)
    tokens_list = [1 << i for i in range(14)]  # 1 .. 8192 tokens per rank
    if args.quick:
        tokens_list = tokens_list[::3]
    for kind in ("balanced", "skewed"):
        for tokens in tokens_list:
            gen.manual_seed(1000 * rank + tokens)
            experts = routing(kind, tokens, world, gen, dev)
            dest = torch.zeros(tokens, world, dtype=torch.int32, device=dev)
            dest.scatter_(1, experts // per_rank, 1)  # token -> ranks it must reach
            # rows to send, grouped by destination rank
            tok_idx = [dest[:, r].nonzero().squeeze(1) for r in range(world)]
            send_counts = torch.tensor([len(t) for t in tok_idx], dtype=torch.int64, device=dev)
            # every rank learns the whole count matrix [src, dst]
            all_counts = torch.empty(world, world, dtype=torch.int64, device=dev)
            dist.all_gather_into_tensor(all_counts, send_counts)
            counts = all_counts.cpu()
            send = counts[rank].tolist()
            recv = counts[:, rank].tolist()
            order = torch.cat(tok_idx)
            x = torch.randint(0, 255, (tokens, DISPATCH_ROW_B), dtype=torch.uint8, device=dev,
                              generator=gen)
            y_back = torch.randn(sum(recv), LATENT, dtype=torch.bfloat16, device=dev)
            recv_d = torch.empty(sum(recv), DISPATCH_ROW_B, dtype=torch.uint8, device=dev)
            back = torch.empty(sum(send), LATENT, dtype=torch.bfloat16, device=dev)
            # remote traffic per rank, sent and received
            eye = torch.eye(world, dtype=torch.bool)
            remote = counts.masked_fill(eye, 0)
            worst_rows = int(max(remote.sum(1).max(), remote.sum(0).max()))
            mean_rows = float(remote.sum()) / world

            def dispatch():
                buf = x.index_select(0, order)
                dist.all_to_all_single(recv_d, buf, recv, send)

            def combine():
                dist.all_to_all_single(back, y_back, send, recv)
                # weighted sum of the rows back into their tokens (index_add over the layout)
                out = torch.zeros(tokens, LATENT, dtype=torch.bfloat16, device=dev)
                out.index_add_(0, order, back)

            for phase, run, row_b in (("dispatch", dispatch, DISPATCH_ROW_B),
                                      ("combine", combine, COMBINE_ROW_B)):
                eq = worst_rows * row_b * world // (world - 1) if world > 1 else 0
                spec = f"k3sim op=alltoall bytes={max(eq, 1)} ranks={world}"
                r = timed(run, spec, dev, start, stop)
                rows.append((spec,) + r)
                ep_rows.append((phase, kind, tokens, worst_rows, mean_rows, worst_rows * row_b) + r)
        if rank == 0:
            print(f"nccl-grid: ep {kind} done", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="nccl-grid.csv")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("coll", "ep"))
    args = ap.parse_args()
    # NVLink multicast stays off on shared machines (the device tool's KINDS.md says why).
    for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
        assert os.environ.get(k) == v, f"{k}={v} must be set before the processes start"
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda")
    rows, ep_rows = [], []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if args.only != "ep":
        collectives(args, world, dev, start, stop, rows)
        if rank == 0:  # written now too, in case the EP part fails
            write(args, world, rows, ep_rows)
    if args.only != "coll" and world > 1:
        ep(args, rank, world, dev, start, stop, rows, ep_rows)
    if rank == 0:
        write(args, world, rows, ep_rows)
    dist.destroy_process_group()


def write(args, world, rows, ep_rows):
    head = (f"# {torch.cuda.get_device_name()} x{world}, torch {torch.__version__}, "
            f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))}, {time.strftime('%Y-%m-%d')}\n")
    with open(args.out, "w") as f:
        f.write(head)
        f.write("op,reps,median_s,p10_s,p90_s\n")
        for r in rows:
            f.write('"%s",%d,%.9g,%.9g,%.9g\n' % r)
    if ep_rows:
        ep_out = args.out[:-4] + "-ep.csv" if args.out.endswith(".csv") else args.out + "-ep"
        with open(ep_out, "w") as f:
            f.write(head)
            f.write("# worst_rows: most token rows any rank sends to or receives from other ranks;"
                    " mean_rows: remote rows per rank on average; worst_bytes = worst_rows x row\n")
            f.write("phase,routing,tokens_per_rank,worst_rows,mean_rows,worst_bytes,reps,median_s,"
                    "p10_s,p90_s\n")
            for r in ep_rows:
                f.write("%s,%s,%d,%d,%.1f,%d,%d,%.9g,%.9g,%.9g\n" % r)
        print(f"nccl-grid: wrote {ep_out}", flush=True)
    print(f"nccl-grid: wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()
