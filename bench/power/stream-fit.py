#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stream-draw.py's segments against its nvidia-smi samples: each segment's mean power over its last
LAST seconds (NVML's power.draw follows the load over ~1 s: the readings of a 1.5 s segment rise
for ~1.1 s, then hold), and the least-squares line power = idle + e_byte x bytes/s over the copy
segments (e_byte in pJ a byte moved, read and write bytes both counted, as op_bytes counts them).
usage: stream-fit.py DIR [LAST]"""
import csv
import datetime
import os
import sys

d = sys.argv[1]
last = float(sys.argv[2]) if len(sys.argv) > 2 else 0.45
segs = list(csv.DictReader(open(os.path.join(d, "segments.csv"))))
smi = []
for r in csv.reader(open(os.path.join(d, "smi.csv"))):
    t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
    smi.append((t.timestamp(), float(r[1]), float(r[2]), float(r[4])))
pts = []
print("| segment | GB/s | readings | W (last %.2f s) | SM MHz | C |" % last)
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for s in segs:
    b = float(s["end_s"])
    x = [p for p in smi if b - last <= p[0] <= b]
    w = sum(p[1] for p in x) / len(x)
    print("| %s | %s | %d | %.1f | %.0f | %.1f |" % (s["segment"], s["gb_per_s"], len(x), w,
                                                    sum(p[2] for p in x) / len(x), sum(p[3] for p in x) / len(x)))
    if s["segment"].startswith("copy"):
        pts.append((float(s["gb_per_s"]) * 1e9, w))
n = len(pts)
mx = sum(p[0] for p in pts) / n
my = sum(p[1] for p in pts) / n
slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
icpt = my - slope * mx
res = max(abs(p[1] - icpt - slope * p[0]) for p in pts)
print("\nfit over %d copy segments: power = %.1f W + %.1f pJ x bytes/s (largest residual %.1f W); "
      "a stream at 4.2 TB/s: %.0f W" % (n, icpt, slope * 1e12, res, icpt + slope * 4.2e12))
