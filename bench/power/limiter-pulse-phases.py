#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The limiters of limiter-step-fit.py on the phases of `clock-probe OUT 3 --pulse` (its segments in
the order clock-probe.cu lays them out: the start, 12 light breaks in capped GEMMs, 5 GEMM bursts
after idle, the duty cycles): per phase the probes' mean clock and each limiter's rms and mean error.
usage: limiter-pulse-phases.py PULSE_DIR"""
import importlib.util
import math
import os
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
spec = importlib.util.spec_from_file_location("lf", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                 "limiter-step-fit.py"))
lf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lf)
batches = lf.load_batches(sys.argv[1])
cfg = [("window 100 ms, no delay", (0, 0.1, 0, 0)), ("delayed, window 5 ms", (0.025, 0.005, 0.03, 0.005)),
       ("delayed, window 20 ms (h200)", (0.02, 0.02, 0.03, 0.002))]
sims = [(name, lf.simulate(batches, *p)) for name, p in cfg]
segs, prev = [], None
for x in batches:  # a segment: consecutive batches of one segment name (a name repeats: split where it changes)
    if x[4] != prev:
        segs.append([])
        prev = x[4]
    segs[-1].append(x)
phases = [("start (idle, GEMMs)", segs[:2]), ("light loads of 5-160 ms in capped GEMMs", segs[2:26]),
          ("GEMM bursts of 5-80 ms after idle", segs[26:36]), ("duty cycles (GEMM / idle, 3-10 ms)", segs[36:])]
print("| phase | probes | measured mean MHz | " + " | ".join("%s: rms / mean error" % n for n, _ in cfg) + " |")
print("| --- | ---: | ---: | " + " | ".join("---:" for _ in cfg) + " |")
for name, ss in phases:
    pts = [x for s in ss for x in s]
    cells = []
    for _, c in sims:
        e = [c[min(len(c) - 1, int(x[1] / lf.DT))] - x[3] for x in pts]
        cells.append("%.0f / %+.0f" % (math.sqrt(sum(v * v for v in e) / len(e)), sum(e) / len(e)))
    print("| %s | %d | %.0f | %s |" % (name, len(pts), sum(x[3] for x in pts) / len(pts), " | ".join(cells)))
