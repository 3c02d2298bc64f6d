#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probe's SM clock against NVML's, per segment of clock-probe (bench/power/clock-probe.cu):
reads OUT/batches.csv and OUT/smi.csv (clock-probe.sh), writes a Markdown table to stdout and
OUT/merged.csv (each batch with the NVML readings of its interval: their mean SM clock, power.draw
and power.draw.instant). Steady state = the last half of each segment's batches.
usage: clock-probe-fit.py OUT"""
import csv
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capdb  # noqa: E402

if len(sys.argv) != 2:
    sys.exit(__doc__)
out = sys.argv[1]


smi = capdb.read_probe_smi(out)
segs = []  # [name, [batch rows]]
with open(os.path.join(out, "batches.csv")) as f:
    for r in csv.DictReader(f):
        if int(r["batch"]) == 0 or not segs or segs[-1][0] != r["segment"]:
            segs.append([r["segment"], []])
        segs[-1][1].append(r)


def readings(t0, t1):
    return [s for s in smi if t0 <= s[0] <= t1]


def mean(xs):
    xs = [x for x in xs if x == x]
    return sum(xs) / len(xs) if xs else float("nan")


merged = []
print("| # | segment | batches (steady) | TFLOP/s | probe MHz (min-max) | NVML SM MHz | power.draw W | "
      "power.draw.instant W | TFLOP/s per probe GHz | throttle reasons |")
print("| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
for i, (name, rows) in enumerate(segs):
    prev_end = None
    for r in rows:
        t1 = float(r["host_unix_s"])
        t0 = t1 - float(r["batch_ms"]) * 1e-3
        rd = readings(t0, t1)
        merged.append({"seg": i, "segment": name, "batch": r["batch"], "host_unix_s": r["host_unix_s"],
                       "batch_ms": r["batch_ms"], "tflops": r["tflops"], "probe_mhz": r["probe_mhz"],
                       "nvml_sm_mhz": "%.0f" % mean(s[1] for s in rd) if rd else "",
                       "power_draw_w": "%.1f" % mean(s[2] for s in rd) if rd else "",
                       "power_instant_w": "%.1f" % mean(s[3] for s in rd) if rd else ""})
    steady = rows[len(rows) // 2:]
    if not steady:
        continue
    t0 = float(steady[0]["host_unix_s"]) - float(steady[0]["batch_ms"]) * 1e-3
    t1 = float(steady[-1]["host_unix_s"])
    rd = readings(t0, t1)
    mhz = [float(r["probe_mhz"]) for r in steady]
    tf = [float(r["tflops"]) for r in steady]
    per = mean(a / (m * 1e-3) for a, m in zip(tf, mhz) if m > 0) if name != "idle" else float("nan")
    reasons = sorted({s[5] for s in rd})
    print("| %d | %s | %d | %.1f | %.0f (%.0f-%.0f) | %.0f | %.0f | %.0f | %.1f | %s |" % (
        i, name, len(steady), mean(tf), mean(mhz), min(mhz), max(mhz), mean(s[1] for s in rd),
        mean(s[2] for s in rd), mean(s[3] for s in rd), per, " ".join(reasons)))
dst = os.path.join(out, "merged.csv")
tmp = "%s.tmp.%d" % (dst, os.getpid())  # renamed into place once whole
with open(tmp, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(merged[0].keys()) if merged else ["seg"])
    w.writeheader()
    w.writerows(merged)
os.replace(tmp, dst)
