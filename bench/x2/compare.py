#!/usr/bin/env python3
"""Predicted vs measured for issue 20's two-GPU experiments, as Markdown tables.

usage: compare.py [--predict PATH/x2-predict] [--hw h200] [--overlap overlap.csv] [--kcp kcp.csv]

overlap.csv: bench/x2/overlap.py (one row per tokens-per-rank count and rank); kcp.csv:
kernels/kda/bench/kcp-x2.cu (one row per case and mode). Each measured row is predicted by
x2-predict (the step timeline's engine over sim_op_cost) from the same sizes; nothing is fitted.
Errors are (predicted - measured) / measured.
"""
import argparse
import csv
import os
import subprocess
import sys


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def predict(exe, hw, args):
    out = subprocess.run([exe] + args + ["--hw", hw], check=True, capture_output=True, text=True).stdout
    kv = {}
    for tok in out.split()[1:]:
        k, _, v = tok.partition("=")
        kv[k] = float(v)
    return kv


def ms(x):
    return f"{x * 1e3:.3f}"


def err(p, m):
    return f"{(p - m) / m * 100:+.1f} %" if m > 0 else "-"


def overlap(exe, hw, path):
    print("### Overlap: EP all-to-all stream beside grouped-GEMM stream (times in ms)\n")
    print("| tokens/rank | rank | rows | n a2a | n gemm pairs | one a2a meas / pred | one gemm pair meas / pred "
          "| a2a alone meas / pred | gemm alone meas / pred | together meas / pred | error | "
          "a2a slowdown meas / pred | gemm slowdown meas / pred | host bound |")
    print("|" + "---|" * 14)
    worst = 0.0
    for r in rows(path):
        f = {k: float(r[k]) for k in r if k != "impl"}
        p = predict(exe, hw, ["overlap", "--rows", r["rows"], "--touched", r["touched"], "--a2a-bytes",
                              r["a2a_bytes"], "--n-a2a", r["n_a2a"], "--n-gemm", r["n_gemm"]])
        e = (p["both_s"] - f["both_s"]) / f["both_s"] if f["both_s"] > 0 else float("nan")
        worst = max(worst, abs(e))
        sa_m = f["both_a2a_s"] / f["alone_a2a_s"] if f["alone_a2a_s"] else 0
        sg_m = f["both_gemm_s"] / f["alone_gemm_s"] if f["alone_gemm_s"] else 0
        sa_p = p["both_a2a_s"] / p["alone_a2a_s"] if p["alone_a2a_s"] else 0
        sg_p = p["both_gemm_s"] / p["alone_gemm_s"] if p["alone_gemm_s"] else 0
        print(f"| {r['tokens']} | {r['rank']} | {r['rows']} | {r['n_a2a']} | {r['n_gemm']} "
              f"| {f['a2a_one_s'] * 1e6:.1f} us / {p['a2a_s'] * 1e6:.1f} us "
              f"| {ms(f['gemm_one_s'])} / {ms(p['gate_up_s'] + p['down_s'])} "
              f"| {ms(f['alone_a2a_s'])} / {ms(p['alone_a2a_s'])} | {ms(f['alone_gemm_s'])} / {ms(p['alone_gemm_s'])} "
              f"| {ms(f['both_s'])} / {ms(p['both_s'])} | {err(p['both_s'], f['both_s'])} "
              f"| {sa_m:.3f} / {sa_p:.3f} | {sg_m:.3f} / {sg_p:.3f} | {'yes' if int(r['host_bound']) else 'no'} |")
    print(f"\nlargest |error| of the overlapped step: {worst * 100:.1f} % (target 10 %)\n")
    return worst


def kcp(exe, hw, path):
    print("### KCP: two-rank KDA context-parallel prefill vs one GPU (times in ms)\n")
    print("| T | H | mode | single meas / pred | zero pass (rank 1) meas / pred | identity pass meas / pred "
          "| all-gather meas / pred | scan meas / pred | fix-up meas / pred | KCP meas | pred (sim: no identity pass) "
          "| pred (with identity pass) | error (with identity) | err out r0 / r1 / state |")
    print("|" + "---|" * 14)
    worst = 0.0
    for r in rows(path):
        f = {k: float(r[k]) for k in r if k != "mode"}
        p = predict(exe, hw, ["kcp", "--tokens", r["T"], "--heads", r["H"]])
        ident_p = p["pass_s"]
        pred = p["kcp_with_identity_s"] if r["mode"] == "serial" else None
        e = "-"
        if pred:
            e = err(pred, f["kcp_s"])
            worst = max(worst, abs(pred - f["kcp_s"]) / f["kcp_s"])
        print(f"| {r['T']} | {r['H']} | {r['mode']} | {ms(f['single_s'])} / {ms(p['single_s'])} "
              f"| {ms(f['r1_zero_s'])} / {ms(p['pass_s'])} | {ms(f['r1_ident_s'])} / {ms(ident_p)} "
              f"| {ms(f['r1_gather_s'])} / {ms(p['allgather_s'])} | {ms(f['r1_scan_s'])} / {ms(p['scan_s'])} "
              f"| {ms(f['r1_fixup_s'])} / {ms(p['fixup_s'])} | {ms(f['kcp_s'])} | {ms(p['kcp_sim_s'])} "
              f"| {ms(p['kcp_with_identity_s'])} | {e} | {f['err_out0']:.2e} / {f['err_out1']:.2e} / "
              f"{f['err_state']:.2e} |")
    print(f"\nlargest |error| of KCP (serial, with the identity pass): {worst * 100:.1f} % (target 10 %)\n")
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--predict", default=os.environ.get("X2_PREDICT", os.path.join(here, "../../build/bench/x2-predict")))
    ap.add_argument("--hw", default="h200")
    ap.add_argument("--overlap")
    ap.add_argument("--kcp")
    a = ap.parse_args()
    if not os.access(a.predict, os.X_OK):
        sys.exit(f"compare.py: {a.predict} is not an executable (build it: ninja -C build bench/x2-predict)")
    if not a.overlap and not a.kcp:
        sys.exit("compare.py: give --overlap and/or --kcp")
    if a.overlap:
        overlap(a.predict, a.hw, a.overlap)
    if a.kcp:
        kcp(a.predict, a.hw, a.kcp)


if __name__ == "__main__":
    main()
