#!/usr/bin/env python3
"""Held-out error per class of calibrated presets, side by side, from their `k3sim calibrate
--report` directories (calibration.json): by shape (the protocol's held-out points), by run (leave
one run out; public presets: one framework's table against a fit to the other's), by GEMM shape
(leave one (n, k) out); collectives also per rank count. Prints Markdown.

usage: tools/aic/held-out.py NAME=REPORT_DIR...
  e.g. tools/aic/held-out.py h100=docs/perf/calibration-h100-public-2026-12-01 ...
Cells are median / p90 absolute % error (points); '-' where a preset has no such point.
Standard library only."""
import json
import os
import sys

COLL = ("allreduce", "allgather", "reducescatter", "alltoall")


def pct(v, q):
    """linear-interpolated percentile of a sorted list, as k3sim computes it"""
    if not v:
        return float("nan")
    x = q / 100 * (len(v) - 1)
    i = int(x)
    return v[i] if i + 1 >= len(v) else v[i] + (v[i + 1] - v[i]) * (x - i)


def cell(e):
    if not e or not e.get("n"):
        return "-"
    return f"{e['median_abs_pct']:.1f} / {e['p90_abs_pct']:.1f} ({e['n']})"


def errs(v):
    a = sorted(abs(x) for x in v)
    return {"n": len(a), "median_abs_pct": pct(a, 50), "p90_abs_pct": pct(a, 90)} if a else None


def load(d):
    j = json.load(open(os.path.join(d, "calibration.json")))
    by_shape = {c["class"]: c["held_out"] for c in j["classes"]}
    xval = {c["class"]: c for c in j.get("xval", {}).get("classes", [])}
    # collectives per rank count, from the held-out points
    ranks = {}
    for p in j["per_point"]:
        kind = p["op"].split()[0]
        if p["class"] in COLL and p["held_out"]:
            r = next(x.split("=")[1] for x in p["op"].split() if x.startswith("ranks="))
            ranks.setdefault(f"{kind} x{r}", []).append(p["error_pct"])
    for k, v in ranks.items():
        by_shape[k] = errs(v)
    return by_shape, xval


def main():
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    presets = [a.split("=", 1) for a in sys.argv[1:]]
    data = {n: load(d) for n, d in presets}
    classes = []
    for n, _ in presets:
        for c in data[n][0]:
            if c not in classes:
                classes.append(c)

    def order(c):
        kind = c.split(".")[0].split(" ")[0].split("@")[0]
        rank = ["gemm", "grouped_gemm", "copy", "mla_decode", "mla_prefill", *COLL, "kda_chunk",
                "kda_decode", "kda_verify"]
        return (rank.index(kind) if kind in rank else len(rank), c)

    classes.sort(key=order)
    names = [n for n, _ in presets]
    print("| class | " + " | ".join(f"`{n}` by shape" for n in names) + " |")
    print("|---|" + "---:|" * len(names))
    for c in classes:
        print(f"| {c} | " + " | ".join(cell(data[n][0].get(c)) for n in names) + " |")
    rows = [c for c in classes if any(data[n][1].get(c, {}).get("by_run", {}).get("n") or
                                      data[n][1].get(c, {}).get("by_gemm_shape", {}).get("n") for n in names)]
    if rows:
        print("\n| class | " + " | ".join(f"`{n}` by run / by GEMM shape" for n in names) + " |")
        print("|---|" + "---:|" * len(names))
        for c in rows:
            cells = []
            for n in names:
                x = data[n][1].get(c, {})
                cells.append(f"{cell(x.get('by_run'))} / {cell(x.get('by_gemm_shape'))}")
            print(f"| {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
