"""EP all-to-all beside grouped expert GEMMs on two GPUs (issue 20), one process per GPU (torchrun):

- communication stream: K3's EP dispatch as an NCCL all-to-all (bench/calib/nccl-grid.py's layout):
  rows of 3584 FP8 latent values + 112 B of scales (3696 B), each token once to each rank holding
  one of its top-16 of 896 experts (balanced routing), 448 experts per rank at EP2;
- compute stream: the rank's routed experts as grouped GEMMs, gate_up (n=6144, k=3584) then down
  (n=3584, k=3072), BF16, rows per expert from the same routing (torch._grouped_mm, else a loop).

For each tokens-per-rank count: one all-to-all and one GEMM pair are timed alone to choose counts
(n_a all-to-alls, n_g GEMM pairs) that take about as long; then n_a all-to-alls back to back
alone, n_g pairs alone, and both streams released at the same instant. The host enqueues
everything while a sleep kernel holds the streams, so that the GPU runs them back to back (a
`host_bound` column says when enqueueing outlasted the hold). CUDA events give each stream's end.
Every launch sits in an NVTX range in `k3sim op` syntax.

usage: torchrun --nproc_per_node=2 bench/x2/overlap.py --out FILE.csv [--tokens 64,256,4096,16384]
           [--target-ms 40] [--reps 3]
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

EXPERTS, TOP_K, LATENT = 896, 16, 3584
INTER = 3072  # expert intermediate size: gate_up n = 2 x 3072
DISPATCH_ROW_B = LATENT + LATENT // 32  # FP8 + scales, as nccl-grid.py
MAX_A2A = 1000  # all-to-alls per timed run (host enqueue and launch-queue bound)


def grouped_impl():
    return "torch._grouped_mm" if hasattr(torch, "_grouped_mm") else "loop"


class Experts:
    def __init__(self, n_local, dev):
        g = torch.Generator(device=dev)
        g.manual_seed(1234 + dist.get_rank())
        # weights [G, N, K] contiguous, used transposed ([G, K, N], K-major: the fast layout)
        self.w1 = (torch.randn(n_local, 2 * INTER, LATENT, device=dev, dtype=torch.bfloat16, generator=g)
                   * 0.02)
        self.w2 = (torch.randn(n_local, LATENT, INTER, device=dev, dtype=torch.bfloat16, generator=g) * 0.02)
        self.impl = grouped_impl()

    def setup(self, counts, dev):
        rows = int(counts.sum())
        self.rows = rows
        self.offs = torch.cumsum(counts.to(dev), 0).to(torch.int32)
        self.counts = counts.tolist()
        self.a = torch.randn(max(rows, 1), LATENT, device=dev, dtype=torch.bfloat16)
        self.h = torch.randn(max(rows, 1), INTER, device=dev, dtype=torch.bfloat16)
        self.touched = int((counts > 0).sum())

    def gate_up(self):
        if self.impl == "torch._grouped_mm":
            return torch._grouped_mm(self.a[:self.rows], self.w1.transpose(-2, -1), offs=self.offs)
        return self._loop(self.a, self.w1)

    def down(self):
        if self.impl == "torch._grouped_mm":
            return torch._grouped_mm(self.h[:self.rows], self.w2.transpose(-2, -1), offs=self.offs)
        return self._loop(self.h, self.w2)

    def _loop(self, x, w):
        outs, r = [], 0
        for e, c in enumerate(self.counts):
            if c:
                outs.append(x[r:r + c] @ w[e].t())
            r += c
        return torch.cat(outs) if outs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="overlap.csv")
    ap.add_argument("--tokens", default="64,256,4096,16384")
    ap.add_argument("--target-ms", type=float, default=40.0)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
        assert os.environ.get(k) == v, f"{k}={v} must be set before the processes start"
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = EXPERTS // world
    experts = Experts(per_rank, dev)
    s_comm = torch.cuda.Stream()
    s_gemm = torch.cuda.Stream()
    s_gate = torch.cuda.Stream()
    clock_hz = 1.98e9  # torch.cuda._sleep counts SM cycles; at a lower clock the hold only lasts longer
    rows_out = []
    for tokens in [int(t) for t in args.tokens.split(",")]:
        gen = torch.Generator(device=dev)
        gen.manual_seed(1000 * rank + tokens)
        sel = torch.rand(tokens, EXPERTS, generator=gen, device=dev).topk(TOP_K, dim=1).indices
        # every rank's routing: the rows each expert here receives
        all_sel = torch.empty(world, tokens, TOP_K, dtype=sel.dtype, device=dev)
        dist.all_gather_into_tensor(all_sel, sel.contiguous())
        mine = all_sel.flatten()
        mine = mine[(mine // per_rank) == rank] - rank * per_rank
        counts = torch.bincount(mine, minlength=per_rank).cpu()
        experts.setup(counts, dev)
        # dispatch layout: each token once to each rank holding one of its experts
        dest = torch.zeros(tokens, world, dtype=torch.int32, device=dev)
        dest.scatter_(1, sel // per_rank, 1)
        tok_idx = [dest[:, r].nonzero().squeeze(1) for r in range(world)]
        send_counts = torch.tensor([len(t) for t in tok_idx], dtype=torch.int64, device=dev)
        all_counts = torch.empty(world, world, dtype=torch.int64, device=dev)
        dist.all_gather_into_tensor(all_counts, send_counts)
        cm = all_counts.cpu()
        send, recv = cm[rank].tolist(), cm[:, rank].tolist()
        x = torch.randint(0, 255, (tokens, DISPATCH_ROW_B), dtype=torch.uint8, device=dev, generator=gen)
        sbuf = x.index_select(0, torch.cat(tok_idx)).contiguous()
        rbuf = torch.empty(sum(recv), DISPATCH_ROW_B, dtype=torch.uint8, device=dev)
        remote = cm.masked_fill(torch.eye(world, dtype=torch.bool), 0)
        worst_rows = int(max(remote.sum(1).max(), remote.sum(0).max()))
        a2a_bytes = max(1, worst_rows * DISPATCH_ROW_B * world // (world - 1))
        a2a_spec = f"k3sim op=alltoall bytes={a2a_bytes} ranks={world}"
        up_spec = (f"k3sim op=grouped_gemm m={experts.rows} n={2 * INTER} k={LATENT} groups={per_rank} "
                   f"touched={experts.touched} dtype=bf16")
        down_spec = (f"k3sim op=grouped_gemm m={experts.rows} n={LATENT} k={INTER} groups={per_rank} "
                     f"touched={experts.touched} dtype=bf16")

        def a2a():
            torch.cuda.nvtx.range_push(a2a_spec)
            dist.all_to_all_single(rbuf, sbuf, recv, send)
            torch.cuda.nvtx.range_pop()

        def gemms():
            torch.cuda.nvtx.range_push(up_spec)
            experts.gate_up()
            torch.cuda.nvtx.range_pop()
            torch.cuda.nvtx.range_push(down_spec)
            experts.down()
            torch.cuda.nvtx.range_pop()

        # warm-up (falling back to a loop over experts if torch's grouped GEMM refuses the shapes),
        # then one of each alone (synchronized: includes launch latency)
        if experts.impl != "loop":
            try:
                gemms()
                torch.cuda.synchronize()
            except (RuntimeError, TypeError) as e:
                print(f"overlap: rank {rank}: torch._grouped_mm failed ({e}); a loop over experts instead",
                      flush=True)
                experts.impl = "loop"
        for _ in range(3):
            a2a()
            gemms()
        torch.cuda.synchronize()

        def single(fn, n):
            ts = []
            for _ in range(n):
                dist.barrier()
                torch.cuda.synchronize()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                fn()
                e1.record()
                e1.synchronize()
                ts.append(e0.elapsed_time(e1) * 1e-3)
            ts.sort()
            return ts[len(ts) // 2]

        t_a1 = single(a2a, 9)
        t_g1 = single(gemms, 5)
        # host enqueue cost of one all-to-all (for the hold)
        torch.cuda.synchronize()
        dist.barrier()
        h0 = time.perf_counter()
        for _ in range(20):
            a2a()
        h_a = (time.perf_counter() - h0) / 20
        torch.cuda.synchronize()
        # counts: both streams about equally long, at most MAX_A2A all-to-alls
        n_g = max(1, min(round(args.target_ms * 1e-3 / t_g1), int(MAX_A2A * t_a1 / t_g1)))
        n_a = max(1, min(MAX_A2A, round(n_g * t_g1 / t_a1)))
        nn = torch.tensor([n_a, n_g], device=dev)
        dist.all_reduce(nn, op=dist.ReduceOp.MAX)  # every rank the same collectives
        n_a, n_g = int(nn[0]), int(nn[1])
        hold_s = min(2.0, 1.5 * (n_a * h_a + n_g * 1e-4) + 5e-3)

        def run(with_a, with_g):
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            ev0 = torch.cuda.Event(enable_timing=True)
            ea, eg = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with torch.cuda.stream(s_gate):
                torch.cuda._sleep(int(hold_s * clock_hz))
                ev0.record(s_gate)
            s_comm.wait_event(ev0)
            s_gemm.wait_event(ev0)
            h0 = time.perf_counter()
            ia = 0
            for ig in range(n_g + 1):
                upto = (n_a * ig) // n_g
                if with_a:
                    with torch.cuda.stream(s_comm):
                        while ia < upto:
                            a2a()
                            ia += 1
                if with_g and ig < n_g:
                    with torch.cuda.stream(s_gemm):
                        gemms()
            ea.record(s_comm)
            eg.record(s_gemm)
            host = time.perf_counter() - h0
            torch.cuda.synchronize()
            ta = ev0.elapsed_time(ea) * 1e-3 if with_a else 0.0
            tg = ev0.elapsed_time(eg) * 1e-3 if with_g else 0.0
            return ta, tg, host

        res = {}
        for name, wa, wg in (("a2a", True, False), ("gemm", False, True), ("both", True, True)):
            run(wa, wg)  # warm-up of the pattern
            rs = [run(wa, wg) for _ in range(args.reps)]
            rs.sort(key=lambda r: max(r[0], r[1]))
            res[name] = rs[len(rs) // 2]
        host_max = max(r[2] for r in res.values())
        row = dict(tokens=tokens, rank=rank, rows=experts.rows, touched=experts.touched, a2a_bytes=a2a_bytes,
                   worst_rows=worst_rows, n_a2a=n_a, n_gemm=n_g, a2a_one_s=t_a1, gemm_one_s=t_g1,
                   alone_a2a_s=res["a2a"][0], alone_gemm_s=res["gemm"][1], both_a2a_s=res["both"][0],
                   both_gemm_s=res["both"][1], both_s=max(res["both"][0], res["both"][1]),
                   host_enqueue_s=host_max, hold_s=hold_s, host_bound=int(host_max > hold_s),
                   impl=experts.impl)
        gathered = [None] * world
        dist.all_gather_object(gathered, row)
        if rank == 0:
            rows_out.extend(gathered)
            r = row
            print(f"overlap: tokens/rank {tokens}: rows {r['rows']}, a2a x{n_a} alone "
                  f"{r['alone_a2a_s'] * 1e3:.2f} ms, gemm x{n_g} alone {r['alone_gemm_s'] * 1e3:.2f} ms, "
                  f"together a2a {r['both_a2a_s'] * 1e3:.2f} gemm {r['both_gemm_s'] * 1e3:.2f} ms"
                  f"{' (HOST BOUND)' if r['host_bound'] else ''}", flush=True)
        del experts.a, experts.h, sbuf, rbuf, x
        torch.cuda.empty_cache()
    if rank == 0:
        keys = list(rows_out[0].keys())
        with open(args.out, "w") as f:
            f.write(f"# {torch.cuda.get_device_name()} x{world}, torch {torch.__version__}, "
                    f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))}, {time.strftime('%Y-%m-%d')}\n")
            f.write(",".join(keys) + "\n")
            for r in rows_out:
                f.write(",".join(f"{r[k]:.9g}" if isinstance(r[k], float) else str(r[k]) for k in keys) + "\n")
        print(f"overlap: wrote {args.out}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
