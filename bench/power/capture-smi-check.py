#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A capture's NVML power readings against nvidia-smi's samples taken beside it (clock-probe.sh's
smi.csv or .xz): each K3SIM_GPU_METRICS row matched with the smi sample nearest in time (within
MATCH ms), then per field the median difference and the count over 5 W: powerW against
power.draw.instant, powerAvgW against power.draw (the trailing 1 s mean). Checks that the capture
reads what nvidia-smi does (call s1, bench/results/s1-h100-2026-12-06/).
usage: capture-smi-check.py CAPTURE.db[.xz] SMI_FOLDER [--match MS (11)]"""
import bisect
import os
import sqlite3
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capdb  # noqa: E402


def main(argv):
    args = list(argv[1:])
    match_s = capdb.take_float(args, "--match", 11.0) * 1e-3
    if len(args) != 2 or any(a.startswith("-") for a in args):
        sys.exit(__doc__)
    cap, folder = args
    if not os.path.exists(cap):
        sys.exit("capture-smi-check: %s: no such file" % cap)
    try:
        smi = capdb.read_probe_smi(folder)
        with capdb.open_capture(cap) as db:
            rows = db.execute("SELECT timestamp * 1e-9, powerW, powerAvgW FROM K3SIM_GPU_METRICS "
                              "ORDER BY timestamp").fetchall()
    except (OSError, EOFError, sqlite3.Error) as e:
        sys.exit("capture-smi-check: %s" % e)
    ts = [s[0] for s in smi]
    inst, avg = [], []
    for t, pw, pa in rows:
        i = bisect.bisect_left(ts, t)
        near = [j for j in (i - 1, i) if 0 <= j < len(ts)]
        if not near:
            continue
        j = min(near, key=lambda k: abs(ts[k] - t))
        if abs(ts[j] - t) > match_s:
            continue
        if pw is not None:
            inst.append(pw - smi[j][3])
        if pa is not None:
            avg.append(pa - smi[j][2])
    print("capture readings %d, matched within %.0f ms: %d" % (len(rows), match_s * 1e3, max(len(inst), len(avg))))
    for name, d in (("powerW - power.draw.instant", inst), ("powerAvgW - power.draw", avg)):
        if d:
            print("%s: median %.1f W, |difference| > 5 W in %d of %d" % (
                name, statistics.median(d), sum(abs(x) > 5 for x in d), len(d)))
        else:
            print("%s: no pairs" % name)


if __name__ == "__main__":
    main(sys.argv)
