#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A FLOP's energy per op from long back-to-back runs in a k3sim capture (power-classes-2026-12-03b.sh):
for each `k3sim op=` text whose kernels ran at least MIN_S seconds in a row, the NVML readings of its
last WIN seconds (power follows the load over ~1 s: the plateau), the kernels' FLOP and byte rates
over that window (FLOPs and bytes a call from the op text: gemm / grouped_gemm 2 m n k, bytes from the
bench CSV's row), and e_flop at boost = (P - P_idle - e_byte x bytes/s) / (FLOP/s x (f / f_boost)^2),
the power model's draw solved for the FLOP energy (sim/power.h). usage: class-plateau.py DB CSV
[P_IDLE_W E_BYTE_PJ MIN_S WIN_S]"""
import csv
import re
import sqlite3
import sys

db, csvf = sys.argv[1], sys.argv[2]
idle = float(sys.argv[3]) if len(sys.argv) > 3 else 121.5
e_byte = float(sys.argv[4]) * 1e-12 if len(sys.argv) > 4 else 65.3e-12
min_s = float(sys.argv[5]) if len(sys.argv) > 5 else 1.5
win = float(sys.argv[6]) if len(sys.argv) > 6 else 0.3
fb = 1980.0
rows = {}
for r in csv.DictReader(open(csvf)):
    rows.setdefault(r["spec"], r)
c = sqlite3.connect(db)
ks = c.execute("""SELECT n.text, k.start, k.end FROM NVTX_EVENTS n
                  JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start BETWEEN n.start AND n.end
                  JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
                  WHERE n.text LIKE 'k3sim op=%' ORDER BY k.start""").fetchall()
g = c.execute("SELECT timestamp, powerW, smClockMHz FROM K3SIM_GPU_METRICS ORDER BY timestamp").fetchall()
runs = []  # maximal runs of one op's kernels (gaps under 50 ms)
for t, s, e in ks:
    if runs and runs[-1][0] == t and s - runs[-1][2] < 50e6:
        runs[-1][2] = max(runs[-1][2], e)
        runs[-1][3].append((s, e))
    else:
        runs.append([t, s, e, [(s, e)]])
print("| op | run s | readings | W | SM MHz | TFLOP/s | GB/s | e_flop pJ (boost) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for t, s, e, kk in runs:
    if (e - s) * 1e-9 < min_s:
        continue
    lo = e - win * 1e9
    rd = [x for x in g if lo <= x[0] <= e]
    if not rd:
        continue
    p = sum(x[1] for x in rd) / len(rd)
    f = sum(x[2] for x in rd) / len(rd)
    busy = sum(min(b, e) - max(a, lo) for a, b in kk if b > lo)
    calls = sum((min(b, e) - max(a, lo)) / (b - a) for a, b in kk if b > lo)
    m = re.search(r"m=(\d+) n=(\d+) k=(\d+)", t)
    row = rows.get(t)
    flops = float(row["flops"]) if row else (2.0 * int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else 0)
    byts = float(row["bytes"]) if row else 0
    fr, br = flops * calls / (win), byts * calls / (win)
    ef = (p - idle - e_byte * br) / (fr * (f / fb) ** 2) if fr > 0 else float("nan")
    print("| %s | %.2f | %d | %.0f | %.0f | %.0f | %.0f | %.2f |" % (t[9:80], (e - s) * 1e-9, len(rd), p, f, fr / 1e12,
                                                                 br / 1e9, ef * 1e12))
