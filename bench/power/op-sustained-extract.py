#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""From a capture of k3-bench / kda-bench with K3_BENCH_SUSTAIN_MS (ranges "k3-bench sustained op=..."),
per range: the op spec, the range's span, and NVML's mean SM clock, power and temperature over its
second half (the readings there, their count), plus the busy share of the second half (the union of
its kernels). Small enough to carry back where the capture (millions of kernels) is not.
usage: op-sustained-extract.py CAPTURE.db[.xz] > op-sustained.csv"""
import bisect
import csv
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capdb import open_capture, union_ns  # noqa: E402


def extract(c, out):
    ranges = c.execute("SELECT start, end, text FROM NVTX_EVENTS WHERE text LIKE 'k3-bench sustained op=%' "
                       "ORDER BY start").fetchall()
    kern = c.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start").fetchall()
    starts = [k[0] for k in kern]
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["spec", "span_s", "readings", "sm_mhz", "power_w", "temp_c", "busy"])
    for s, e, t in ranges:
        h = s + (e - s) // 2
        r = c.execute("SELECT smClockMHz, powerW, temperatureC FROM K3SIM_GPU_METRICS WHERE timestamp BETWEEN ? "
                      "AND ? AND powerW > 0", (h, e)).fetchall()
        # kernels starting in [h - 1 s, e] (none of these benches' runs 1 s), those that end after h
        ks = [k for k in kern[bisect.bisect_left(starts, h - 10 ** 9):bisect.bisect_right(starts, e)] if k[1] >= h]
        busy = union_ns([(max(a, h), min(b, e)) for a, b in ks]) / max(1, e - h)
        n = len(r)
        mean = [sum(x[i] for x in r) / n if n else float("nan") for i in range(3)]
        w.writerow([t[len("k3-bench sustained op="):], "%.3f" % ((e - s) * 1e-9), n, "%.1f" % mean[0],
                    "%.1f" % mean[1], "%.1f" % mean[2], "%.3f" % busy])


if len(sys.argv) != 2:
    sys.exit(__doc__)
if not os.path.isfile(sys.argv[1]):
    sys.exit("op-sustained-extract: %s: no such file" % sys.argv[1])
try:
    with open_capture(sys.argv[1]) as c:
        extract(c, sys.stdout)
except (sqlite3.Error, OSError, EOFError, __import__("lzma").LZMAError) as ex:
    sys.exit("op-sustained-extract: %s: not a k3sim capture with GPU metrics (%s)" % (sys.argv[1], ex))
