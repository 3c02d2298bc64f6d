#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The clock laws of a cuBLAS BF16 GEMM from clock-probe's duty-cycled segments (gemm, gemm_sN):
per segment (the last half of its batches) the probe's SM clock, one GEMM's time (the batch's time
over its GEMMs less the N us sleep after each and a sleep kernel's launch), the draw
(power.draw.instant) and a FLOP's energy e = (P - P_idle - e_byte x bytes/s) / FLOP/s (bytes: the
three 8192^2 BF16 matrices a GEMM, as the model counts them). Then the two laws of sim/power.h:
the roofline in the clock, t(f) = t_boost max(1, b f_boost / f) (b by least squares on the
segments below boost), and e(f) = e_boost (f / f_boost)^g (g by least squares in logs, e_boost the
uncapped segment's). usage: clock-probe-law.py OUT [P_IDLE_W E_BYTE_PJ]"""
import csv
import math
import os
import re
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
out = sys.argv[1]
idle = float(sys.argv[2]) if len(sys.argv) > 2 else 121.5
e_byte = float(sys.argv[3]) * 1e-12 if len(sys.argv) > 3 else 65.3e-12
FB = 1980.0
D = 8192
GEMM_FLOPS = 2.0 * D ** 3
GEMM_BYTES = 3.0 * D * D * 2
LAUNCH_S = 5e-6  # a sleep kernel's launch and end, beyond its sleep

rows = list(csv.DictReader(open(os.path.join(out, "merged.csv"))))
segs = {}
for r in rows:
    segs.setdefault(int(r["seg"]), []).append(r)
pts = []
print("| segment | sleep us | probe MHz | one GEMM ms | TFLOP/s (GEMM) | draw W (instant) | e pJ/FLOP |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for i in sorted(segs):
    rs = segs[i]
    name = rs[0]["segment"]
    if not name.startswith("gemm"):
        continue
    m = re.match(r"gemm(?:_s(\d+))?$", name)
    if not m:
        continue
    sleep = float(m.group(1) or 0) * 1e-6
    st = rs[len(rs) // 2:]
    mhz = sum(float(r["probe_mhz"]) for r in st) / len(st)
    # GEMMs a batch: TFLOP/s x ms / FLOPs a GEMM
    per = []
    for r in st:
        n = round(float(r["tflops"]) * 1e12 * float(r["batch_ms"]) * 1e-3 / GEMM_FLOPS)
        per.append(float(r["batch_ms"]) * 1e-3 / n - (sleep + LAUNCH_S if sleep else 0))
    t = sum(per) / len(per)
    flops_s = sum(float(r["tflops"]) for r in st) / len(st) * 1e12
    p = [float(r["power_instant_w"]) for r in st if r["power_instant_w"]]
    pw = sum(p) / len(p)
    bytes_s = flops_s / GEMM_FLOPS * GEMM_BYTES
    e = (pw - idle - e_byte * bytes_s) / flops_s
    pts.append((name, mhz, t, pw, e))
    print("| %s | %.0f | %.0f | %.4f | %.0f | %.0f | %.3f |" % (name, sleep * 1e6, mhz, t * 1e3, GEMM_FLOPS / t / 1e12, pw,
                                                         e * 1e12))
hi = max(pts, key=lambda x: x[1])
t_b, e_b = hi[2] * (hi[1] / FB if hi[1] > FB * 0.995 else 1), hi[4]
low = [x for x in pts if x[1] < 0.95 * FB]
# b: least squares of t / t_b against b FB / f over the capped segments (all below the kink)
num = sum((x[2] / t_b) * (FB / x[1]) for x in low)
den = sum((FB / x[1]) ** 2 for x in low)
b = num / den
# g: least squares through the origin of log(e / e_b) on log(f / FB)
xs = [math.log(x[1] / FB) for x in low]
ys = [math.log(x[4] / e_b) for x in low]
g = sum(a * c for a, c in zip(xs, ys)) / sum(a * a for a in xs)
print()
print("boost segment: %s at %.0f MHz, one GEMM %.4f ms, e %.3f pJ/FLOP" % (hi[0], hi[1], hi[2] * 1e3, e_b * 1e12))
print("roofline share b = %.3f (t / t_boost against b x f_boost / f; residuals %s)" % (
    b, " ".join("%+.1f%%" % (100 * (x[2] / t_b / max(1, b * FB / x[1]) - 1)) for x in low)))
print("FLOP energy exponent g = %.2f (residuals %s)" % (
    g, " ".join("%+.1f%%" % (100 * (x[4] / (e_b * (x[1] / FB) ** g) - 1)) for x in low)))
