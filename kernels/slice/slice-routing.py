#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The four-layer K3 slice's routed-expert GEMMs layer by layer: each layer's measured grouped GEMM
time (kernel time inside its `k3sim op=grouped_gemm ... w_dtype=mxfp4` ranges, the union of its
kernels' intervals, median over the eager repetitions) beside the rows its routing gave each
expert, as the slice printed them (`expert rows` lines of k3-slice.txt, from kernels/slice/
k3-slice.cu since 2026-12-02: touched experts, mean rows, coefficient of variation, largest,
chunks of 128 / 160 / 176 rows), and the same GEMMs of the bench capture (uniform random routing)
when one is given.

Why: the model costs a grouped GEMM from its total rows and the experts touched (sim/cost.c), as
if every expert got the mean; the bench it is calibrated on routes uniformly at random. The
slice routes with its own (random) router, whose load per expert differs layer by layer.

usage: slice-routing.py --results DIR [--bench-results DIR] [-o REPORT.md]
  --results        a device call's results: k3-slice.db.xz (and k3-slice.txt for the routing)
  --bench-results  a call whose k3-h200.db.xz holds the bench's grouped GEMM rows (default: none)
Needs only python3. Exit status 0, or 2 with a message on bad input.
"""
import argparse
import bisect
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile

import slicelib


def die(msg):
    print("slice-routing: " + msg, file=sys.stderr)
    sys.exit(2)


def unxz(src, dst):
    slicelib.unxz(src, dst, die)


def ranges(db, like):
    """[(text, cpu start, covered ns, first kernel start)] of the NVTX ranges whose text matches
    `like`, in CPU order; covered: the union of the intervals of the kernels launched inside."""
    try:
        c = sqlite3.connect(db)
        rt = c.execute("SELECT start, correlationId, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start").fetchall()
        k = {corr: (s, e) for corr, s, e in c.execute("SELECT correlationId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL")}
        rows = c.execute("SELECT start, end, text, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL AND text LIKE ? "
                         "ORDER BY start", (like,)).fetchall()
        c.close()
    except sqlite3.Error as e:
        die("%s: %s" % (db, e))
    starts = [r[0] for r in rt]
    out = []
    for s, e, text, tid in rows:
        i = bisect.bisect_left(starts, s)
        ks = []
        while i < len(rt) and rt[i][0] <= e:
            if rt[i][2] == tid and rt[i][1] in k:
                ks.append(k[rt[i][1]])
            i += 1
        if not ks:
            continue
        ks.sort()
        cov, (cs, ce) = 0, ks[0]
        for a, b in ks[1:]:
            if a > ce:
                cov += ce - cs
                cs, ce = a, b
            else:
                ce = max(ce, b)
        cov += ce - cs
        out.append((text, s, cov, ks[0][0]))
    return out


ROW = re.compile(r"\[(\d+) ([\d.]+) ([\d.]+) (\d+) (\d+)/(\d+)/(\d+)\]")


def routing(txt):
    """{(phase, T): [per-layer (touched, mean, cv, max, c128, c160, c176)]} from k3-slice.txt."""
    out = {}
    if not os.path.exists(txt):
        return out
    key = None
    with open(txt, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*(prefill|decode)\s+B=(\d+)\s+T=(\d+)", line)
            if m:
                key = (m.group(1), int(m.group(3)) if m.group(1) == "prefill" else int(m.group(2)))
                continue
            if "expert rows (layers" in line and key:
                out[key] = [tuple(float(x) for x in g) for g in ROW.findall(line.split(":", 1)[1].split("(uniform")[0])]
    return out


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--results")
    ap.add_argument("--bench-results")
    ap.add_argument("-o")
    ap.add_argument("-h", "--help", action="store_true")
    a, rest = ap.parse_known_args()
    if a.help:
        print(__doc__)
        return 0
    if rest or not a.results:
        die("usage: slice-routing.py --results DIR [--bench-results DIR] [-o REPORT.md] (--help)")
    src = os.path.join(a.results, "k3-slice.db.xz")
    if not os.path.exists(src):
        die("%s: not found" % src)
    slicelib.refuse_input_as_output(a.o, [src, os.path.join(a.results, "k3-slice.txt")] +
                                    ([os.path.join(a.bench_results, "k3-h200.db.xz")] if a.bench_results else []), die)
    tmp = tempfile.mkdtemp(prefix="slice-routing-")
    try:
        db = os.path.join(tmp, "slice.db")
        unxz(src, db)
        routed = ranges(db, "k3sim op=grouped_gemm % groups=896 %mxfp4%")
        bench = []
        if a.bench_results:
            bsrc = os.path.join(a.bench_results, "k3-h200.db.xz")
            if not os.path.exists(bsrc):
                die("%s: not found" % bsrc)
            bdb = os.path.join(tmp, "bench.db")
            unxz(bsrc, bdb)
            bench = ranges(bdb, "k3sim op=grouped_gemm % groups=896 %w_dtype=mxfp4%")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stats = routing(os.path.join(a.results, "k3-slice.txt"))
    # the slice's ranges of one op text come in steps of 4 layers (w13 then w2 a layer)
    by_text = {}
    for text, _, cov, _ in routed:
        by_text.setdefault(text, []).append(cov)
    btime = {}
    for text, _, cov, _ in bench:
        btime.setdefault(text, []).append(cov)
    lines = ["<!-- written by kernels/slice/slice-routing.py from %s%s -->" %
             (a.results, " and %s" % a.bench_results if a.bench_results else ""),
             "## Routed expert GEMMs of the slice, layer by layer",
             "",
             "| op | layer | measured (median of reps) | bench (uniform routing) | slice / bench | touched | mean rows | cv | max | chunks 128 / 160 / 176 |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for text, covs in by_text.items():
        m = re.search(r"m=(\d+) n=(\d+) k=(\d+)", text)
        rows_total = int(m.group(1)) if m else 0
        per = [covs[i::4] for i in range(4)] if len(covs) % 4 == 0 else [covs]
        T = rows_total // 16 if rows_total else 0
        st = stats.get(("prefill", T)) or stats.get(("decode", T)) or []
        b = statistics.median(btime[text]) if text in btime else None
        short = re.sub(r"^k3sim op=| groups=896| dtype=bf16| w_dtype=mxfp4", "", text)
        for l, c in enumerate(per):
            med = statistics.median(c) / 1e6
            s = st[l] if l < len(st) else None
            lines.append("| %s | %d | %.3f ms | %s | %s | %s | %s | %s | %s | %s |" % (
                short, 89 + l, med, "%.3f ms" % (b / 1e6) if b else "-",
                "%.2f" % (med / (b / 1e6)) if b else "-",
                "%d" % s[0] if s else "-", "%.1f" % s[1] if s else "-", "%.3f" % s[2] if s else "-",
                "%d" % s[3] if s else "-", "%d / %d / %d" % s[4:7] if s else "-"))
    lines.append("")
    lines.append("Routing columns: k3-slice.txt's `expert rows` line of the step (not recorded before 2026-12-02's "
                 "round 19: `-`). Layer: 89-91 KDA, 92 MLA.")
    slicelib.write_report("\n".join(lines) + "\n", a.o)
    return 0


if __name__ == "__main__":
    sys.exit(main())
