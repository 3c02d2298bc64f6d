#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Times fla's Triton chunk_kda on the shapes kda-bench uses, for a same-run
comparison with kernels/kda's prefill (issue 4). fla is not part of k3sim:
bring its source (fla-org/flash-linear-attention) into an ignored folder and
put it on PYTHONPATH; nothing of it is committed.

Same function as kda_prefill(): q, k L2-normalized in the kernel, gate
g = -5 * sigmoid(g_raw) (safe_gate, lower_bound=-5, no A_log / dt_bias),
beta = sigmoid(beta_raw), FP32 initial and final state.

    PYTHONPATH=.fla python3 kernels/kda/bench/fla_compare.py OUT.csv [--quick]
"""
import sys
import time

import torch
import triton

from fla.ops.kda import chunk_kda

D = 128


def run(out, lens, heads, tag):
    dev = "cuda"
    T = sum(lens)
    n = len(lens)
    g = torch.Generator(device=dev).manual_seed(1)

    def rnd(*shape, lo=-1.0, hi=1.0):
        return (torch.rand(*shape, device=dev, generator=g) * (hi - lo) + lo).to(torch.bfloat16)

    q, k, v = rnd(1, T, heads, D), rnd(1, T, heads, D), rnd(1, T, heads, D)
    graw = rnd(1, T, heads, D, lo=-6.0, hi=3.0)
    braw = rnd(1, T, heads, lo=-3.0, hi=3.0)
    h0 = torch.rand(n, heads, D, D, device=dev, generator=g, dtype=torch.float32) * 2 - 1
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()), device=dev, dtype=torch.long)

    def fn():
        return chunk_kda(q, k, v, graw, braw, scale=D ** -0.5, initial_state=h0,
                         output_final_state=True, use_qk_l2norm_in_kernel=True,
                         use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                         safe_gate=True, lower_bound=-5.0, cu_seqlens=cu if n > 1 else None)

    t0 = time.time()
    with torch.inference_mode():
        o, ht = fn()  # compiles and autotunes
        torch.cuda.synchronize()
        first = time.time() - t0
        ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
    ok = bool(torch.isfinite(o).all().item()) and bool(torch.isfinite(ht).all().item())
    out.write(f"fla_chunk_kda,{tag},fp32,{n},{T // n},{heads},{ms * 1e3:.1f},{first:.1f},{int(ok)}\n")
    out.flush()
    print(f"fla chunk_kda {tag:8s} N={n:<2d} T={T:<6d} H={heads:<3d} {ms * 1e3:10.1f} us"
          f"  (first call {first:.1f} s, finite={ok})", flush=True)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "fla.csv"
    with open(path, "w") as out:
        out.write("op,shape,state,batch,seq_len,heads,time_us,first_call_s,finite\n")
        print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}",
              flush=True)
        quick = "--quick" in sys.argv[2:]  # the H = 96 shapes of the target only
        for T in (4096, 16384, 65536) if quick else (1024, 4096, 16384, 65536):
            run(out, [T], 96, "fixed")
        run(out, [4096, 1024, 3000, 512, 2048, 3583, 1100, 1021], 96, "varlen")
        if not quick:
            run(out, [4096] * 4, 96, "fixed")
            for T in (4096, 16384):
                run(out, [T], 12, "fixed")


if __name__ == "__main__":
    main()
