#!/usr/bin/env python3
"""EP dispatch/combine on 2 x H200: measured NCCL time and traffic against the model.

The EP points of bench/calib/nccl-grid.py are all-to-all ranges named with the bytes of the
equivalent even all-to-all (the most any rank sends or receives off the GPU, times R/(R-1)); the
CSV (nccl-h200x2-ep.csv) has their rows per routing and tokens per rank. This script takes, per
range instance, the NCCL kernels only (the row gather and the weighted sum in the same range are
not the collective) and the shortest rank (the last to arrive), the median over instances, and
compares it and the traffic with `k3sim op ep_dispatch|ep_combine tokens=T ranks=R`.

usage: ep-check.py MERGED.db EP.csv K3SIM [--hw h200] [--skew-imbalance X]
"""
import argparse
import collections
import json
import math
import sqlite3
import subprocess

ROW = {"dispatch": 3584 + 3584 // 32, "combine": 2 * 3584}


def measured(db):
    """{range text: [instance seconds...]} in instance order, NCCL kernels, shortest rank."""
    c = sqlite3.connect(db)
    names = dict(c.execute("SELECT id, value FROM StringIds"))
    rt = collections.defaultdict(list)
    for tid, start, corr in c.execute(
            "SELECT globalTid, start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        rt[tid].append((start, corr))
    for v in rt.values():
        v.sort()
    kern = collections.defaultdict(int)
    for gpid, corr, name, dur in c.execute(
            "SELECT globalPid, correlationId, shortName, end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        if "nccl" in names.get(name, "").lower():
            kern[(gpid >> 24, corr)] += dur
    per_rank = collections.defaultdict(lambda: collections.defaultdict(list))
    for start, end, text, tid in c.execute(
            "SELECT start, end, text, globalTid FROM NVTX_EVENTS "
            "WHERE text LIKE 'k3sim op=alltoall%' ORDER BY start"):
        pid = tid >> 24
        v = rt[tid]
        lo, hi = 0, len(v)
        while lo < hi:
            mid = (lo + hi) // 2
            if v[mid][0] < start:
                lo = mid + 1
            else:
                hi = mid
        ns = 0
        while lo < len(v) and v[lo][0] <= end:
            ns += kern.get((pid, v[lo][1]), 0)
            lo += 1
        per_rank[text][pid].append(ns * 1e-9)
    out = {}
    for text, ranks in per_rank.items():
        lists = list(ranks.values())
        if len({len(x) for x in lists}) == 1:
            out[text] = [min(x) for x in zip(*lists)]
        else:
            out[text] = sorted(t for x in lists for t in x)
    return out


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def model(k3sim, hw, phase, tokens, ranks, imbalance):
    out = subprocess.run([k3sim, "op", "ep_" + phase, f"tokens={tokens}", f"ranks={ranks}",
                          f"imbalance={imbalance}", "--hw", hw, "--json"],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return d["bytes"], d["time_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("csv")
    ap.add_argument("k3sim")
    ap.add_argument("--hw", default="h200")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--skew-imbalance", type=float, default=None,
                    help="imbalance for the skewed rows (default: Zipf(1)'s, the low half of the "
                         "experts on rank 0)")
    a = ap.parse_args()
    R = a.ranks
    if a.skew_imbalance is None:
        # Zipf(1) popularity, experts 0..E/R-1 on rank 0: its share of the routing x R
        h = [1.0 / i for i in range(1, 897)]
        a.skew_imbalance = R * sum(h[: 896 // R]) / sum(h)
    meas = measured(a.db)
    rows = []
    for line in open(a.csv):
        if line.startswith("#") or line.startswith("phase"):
            continue
        f = line.strip().split(",")
        rows.append((f[0], f[1], int(f[2]), int(f[3]), int(f[6])))
    used = collections.Counter()
    print(f"| phase | routing | tokens/rank | measured bytes | model bytes | bytes err % | "
          f"measured us | model us | time err % |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    errs = collections.defaultdict(list)
    for phase, routing, tokens, worst, reps in rows:
        eq = worst * ROW[phase] * R // (R - 1)
        text = f"k3sim op=alltoall bytes={max(eq, 1)} ranks={R}"
        inst = meas.get(text, [])
        k = used[text]
        mine = inst[k:k + reps]
        used[text] += reps
        if not mine:
            continue
        t = median(mine)
        imb = 1.0 if routing == "balanced" else a.skew_imbalance
        mb, mt = model(a.k3sim, a.hw, phase, tokens, R, imb)
        be, te = (mb / eq - 1) * 100, (mt / t - 1) * 100
        errs[(phase, routing)].append(abs(te))
        errs["all"].append(abs(te))
        print(f"| {phase} | {routing} | {tokens} | {eq} | {mb} | {be:+.2f} | {t * 1e6:.1f} | "
              f"{mt * 1e6:.1f} | {te:+.1f} |")
    print()
    print(f"skewed rows modeled with imbalance {a.skew_imbalance:.3f}")
    print()
    print("| set | points | median abs time err % | p90 abs % | max abs % |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for key, v in errs.items():
        v = sorted(v)
        p90 = v[min(len(v) - 1, int(math.ceil(0.9 * len(v))) - 1)]
        name = key if isinstance(key, str) else " ".join(key)
        print(f"| {name} | {len(v)} | {median(v):.1f} | {p90:.1f} | {v[-1]:.1f} |")


if __name__ == "__main__":
    main()
