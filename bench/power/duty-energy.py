#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A FLOP's energy at boost per k3-bench row, duty-cycled under the power limit
(kernels/calls/power-duty-2026-12-03.sh: each timed launch after K3_BENCH_COOL_MS of idle, so a row
runs ~50 % busy at boost for 1-3 s). Per `k3sim op=` text whose launches span at least MIN_S: the
mean of the capture's power readings over the span (NVML's instantaneous power every 20 ms, each
value held ~100 ms: over a span of many launch-idle periods their mean is the mean draw), the SM
clock's, the busy share (the union of the span's kernels), the FLOP and byte rates over the span
(`k3sim op ... --json`: FLOPs and bytes a launch; the bench's L2 flush before each launch reads
FLUSH_BYTES at the copy rate), and e_flop = (P - P_idle - e_byte x bytes/s) / FLOP/s at boost;
"W busy": the draw while a kernel runs, P_idle + (P - P_idle) / busy (the gaps taken at P_idle).
usage: duty-energy.py K3SIM DB[.xz]... [--idle W] [--byte-pj B] [--min-s S]"""
import json
import subprocess
import sys

from capdb import open_capture, take_float, union_ns

args = sys.argv[1:]
IDLE = take_float(args, "--idle", 125.0)
E_BYTE = take_float(args, "--byte-pj", 65.3) * 1e-12
MIN_S = take_float(args, "--min-s", 0.8)
FLUSH_BYTES = 4 * 60 * 2 ** 20  # 4x L2's 60 MiB, read before each timed launch
if len(args) < 2:
    sys.exit(__doc__)
K3SIM, dbs = args[0], args[1:]
print("| op | launches | span s | busy % | readings | W | W busy | SM MHz | TFLOP/s (span) | GB/s (span) | e_flop pJ |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for path in dbs:
    with open_capture(path) as c:
        rng = c.execute("SELECT start, end, text FROM NVTX_EVENTS WHERE text LIKE 'k3sim op=%' ORDER BY start").fetchall()
        ks = c.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start").fetchall()
        rd = c.execute("SELECT timestamp, powerW, smClockMHz FROM K3SIM_GPU_METRICS WHERE powerW > 0 "
                       "ORDER BY timestamp").fetchall()
    runs = []  # consecutive ranges of one text
    for s, e, t in rng:
        if runs and runs[-1][0] == t and s - runs[-1][2] < 0.5e9:
            runs[-1][2] = e
            runs[-1][3] += 1
        else:
            runs.append([t, s, e, 1])
    for t, s, e, n in runs:
        span = (e - s) * 1e-9
        if span < MIN_S or n < 5:
            continue
        r = [x for x in rd if s <= x[0] <= e]
        if len(r) < 10:
            continue
        busy = union_ns([(max(a, s), min(b, e)) for a, b in ks if b >= s and a <= e])
        spec = t[len("k3sim op="):]
        o = subprocess.run([K3SIM, "op"] + spec.split() + ["--json"], capture_output=True, text=True)
        if o.returncode != 0:
            continue
        j = json.loads(o.stdout)
        fl = float(j["flops"]) * n / span
        by = (float(j["bytes"]) + FLUSH_BYTES) * n / span
        p = sum(x[1] for x in r) / len(r)
        f = sum(x[2] for x in r) / len(r)
        ef = (p - IDLE - E_BYTE * by) / fl if fl > 0 else float("nan")
        b = busy * 1e-9 / span
        print("| %s | %d | %.2f | %.0f | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f |" % (
            spec[:80], n, span, 100 * b, len(r), p, IDLE + (p - IDLE) / b if b > 0 else float("nan"), f, fl / 1e12,
            by / 1e9, ef * 1e12))
