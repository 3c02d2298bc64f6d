#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stream-draw.py's gemm segments against its nvidia-smi samples: each segment's mean power and SM
clock over its last LAST seconds (the readings' plateau), and the FLOP energy that draw implies at
that clock, e(f) = (P - P_IDLE - E_BYTE x bytes/s) / (FLOP/s), with the exponent a that
e(f) = e(f0) (f / f0)^a gives against the segment closest to boost (the power model, sim/power.h,
takes a = 2: the voltage following the clock).
usage: gemm-fit.py DIR [P_IDLE_W E_BYTE_PJ LAST]"""
import csv
import datetime
import math
import os
import sys

d = sys.argv[1]
idle = float(sys.argv[2]) if len(sys.argv) > 2 else 121.5
e_byte = float(sys.argv[3]) * 1e-12 if len(sys.argv) > 3 else 65.3e-12
last = float(sys.argv[4]) if len(sys.argv) > 4 else 0.45
segs = [s for s in csv.DictReader(open(os.path.join(d, "segments.csv"))) if s["segment"].startswith("gemm")]
smi = []
for r in csv.reader(open(os.path.join(d, "smi.csv"))):
    t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
    smi.append((t.timestamp(), float(r[1]), float(r[2]), r[5].strip()))
pts = []
for s in segs:
    b = float(s["end_s"])
    x = [p for p in smi if b - last <= p[0] <= b]
    w, f = sum(p[1] for p in x) / len(x), sum(p[2] for p in x) / len(x)
    fl, by = float(s["tflop_per_s"]) * 1e12, float(s["gb_per_s"]) * 1e9
    pts.append((s["segment"], fl, w, f, (w - idle - e_byte * by) / fl, sorted({p[3] for p in x})))
ref = max(pts, key=lambda p: p[3])
print("| segment | TFLOP/s | W | SM MHz | throttle | e_flop at that clock, pJ | exponent a against %s |" % ref[0])
print("| --- | ---: | ---: | ---: | --- | ---: | ---: |")
for name, fl, w, f, e, thr in pts:
    a = math.log(e / ref[4]) / math.log(f / ref[3]) if abs(f - ref[3]) > 20 else float("nan")
    print("| %s | %.0f | %.1f | %.0f | %s | %.3f | %s |" % (name, fl / 1e12, w, f, " ".join(thr), e * 1e12,
                                                        "-" if math.isnan(a) else "%.2f" % a))
