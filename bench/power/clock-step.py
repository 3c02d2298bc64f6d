#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The power limiter's step response from `clock-probe OUT 3 --step` (bench/power/clock-probe.cu):
per fine segment (one GEMM, four FFMA launches or 1 ms of sleep a batch, a 50 us in-kernel clock
probe after each), the SM clock against the time since the segment began: the clock at 5 ms
steps over the first 100 ms, then at 50 ms steps; the rise (or fall) over the first 10, 20, 50 and
100 ms; the time to 90 % of the change to the segment's last 100 ms. usage: clock-step.py OUT"""
import csv
import os
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "batches.csv"))))
segs = []
for r in rows:
    if r["batch"] == "0" or not segs or segs[-1][0] != r["segment"]:
        segs.append([r["segment"], []])
    segs[-1][1].append(r)
prev_mhz = None
for name, rs in segs:
    end_mhz = float(rs[-1]["probe_mhz"])
    if "fine" not in name:
        prev_mhz = sum(float(r["probe_mhz"]) for r in rs[len(rs) // 2:]) / max(1, len(rs) - len(rs) // 2)
        continue
    t0 = float(rs[0]["host_unix_s"]) - float(rs[0]["batch_ms"]) * 1e-3
    pts = [(float(r["host_unix_s"]) - t0, float(r["probe_mhz"])) for r in rs]
    last = [m for t, m in pts if t >= pts[-1][0] - 0.1]
    final = sum(last) / len(last)
    start = prev_mhz if prev_mhz else pts[0][1]
    print("## %s: from %.0f MHz (the segment before) to %.0f MHz (its last 100 ms), %d probes" % (name, start, final, len(pts)))

    def at(t):
        near = min(pts, key=lambda p: abs(p[0] - t))
        return near[1]

    marks = [0.005 * i for i in range(1, 21)] + [0.15 + 0.05 * i for i in range(18)]
    print("| ms | " + " | ".join("%.0f" % (m * 1e3) for m in marks if m <= pts[-1][0]) + " |")
    print("| --- | " + " | ".join("---:" for m in marks if m <= pts[-1][0]) + " |")
    print("| MHz | " + " | ".join("%.0f" % at(m) for m in marks if m <= pts[-1][0]) + " |")
    change = final - start
    t90 = next((t for t, m in pts if change and (m - start) / change >= 0.9), float("nan"))
    print("change over the first 10 / 20 / 50 / 100 ms: %s MHz; 90 %% of it by %.0f ms" % (
        " / ".join("%+.0f" % (at(x) - start) for x in (0.01, 0.02, 0.05, 0.1)), t90 * 1e3))
    print()
    prev_mhz = final
