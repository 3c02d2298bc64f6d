#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A k3sim capture as a timeline: per bin of BIN ms from its first kernel, how busy the GPU was (its
kernels' time in the bin over the bin, overlaps counted twice), the NVML readings inside (power W @
SM MHz, temperature; where the capture has it, NVML's trailing 1 s mean in brackets after the
instant reading), and the phase that starts in it (the K3 slice's graph ranges, each new token
count of its attnres ranges). What it is for: to see what ran before a step and at what draw, the
limiter's input, where a step's own readings say only where it ended up.
usage: capture-timeline.py CAPTURE.db[.xz] [--bin MS (50)] [--from MS] [--to MS]"""
import lzma
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capdb import open_capture, take_float  # noqa: E402


def main(argv):
    args = list(argv)
    bin_ms = take_float(args, "--bin", 50.0)
    t_from = take_float(args, "--from", 0.0)
    t_to = take_float(args, "--to", float("inf"))
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit(__doc__)
    if not bin_ms > 0:
        sys.exit("--bin: expected a positive number of milliseconds")
    if not t_to >= t_from:
        sys.exit("--from / --to: the window's end is before its start")
    path = args[0]
    if not os.path.exists(path):
        sys.exit("capture-timeline: %s: no such file" % path)
    try:
        with open_capture(path) as db:
            t0 = db.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
            if t0 is None:
                sys.exit("capture-timeline: %s: no kernels" % path)
            ks = db.execute("SELECT start - ?, end - ? FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end >= start",
                            (t0, t0)).fetchall()
            cols = [r[1] for r in db.execute("PRAGMA table_info(K3SIM_GPU_METRICS)")]
            avg = "powerAvgW" if "powerAvgW" in cols else "NULL"  # captures before 2026-12-06 lack it
            gs = db.execute("SELECT timestamp - ?, powerW, smClockMHz, temperatureC, %s FROM K3SIM_GPU_METRICS "
                            "ORDER BY timestamp" % avg, (t0,)).fetchall()
            rs = db.execute("SELECT start - ?, text FROM NVTX_EVENTS WHERE text LIKE 'k3-slice%' "
                            "OR text LIKE 'k3sim op=attnres%' ORDER BY start", (t0,)).fetchall()
    except (sqlite3.Error, OSError, EOFError, lzma.LZMAError) as e:  # not a capture, a broken .xz
        sys.exit("capture-timeline: %s: %s" % (path, e))
    if not ks:
        sys.exit("capture-timeline: %s: no kernels" % path)
    width = bin_ms * 1e6  # ns
    end = max(e for _, e in ks)
    n = max(1, -int(-end // width))  # bins up to the last kernel's end, none empty after it
    busy = [0] * n
    for s, e in ks:  # integers (ns): every step advances
        b = int(s // width)
        while s < e and b < n:
            x = min(e, int((b + 1) * width))
            busy[b] += max(0, x - s)
            s, b = x, b + 1
    label = [""] * n
    last_tokens = None
    for s, text in rs:
        b = int(s // width)
        if not 0 <= b < n:
            continue
        if text.startswith("k3-slice"):
            label[b] = label[b] or text.replace("k3-slice ", "")
            continue
        m = re.search(r"tokens=(\d+)", text)
        if m and m.group(1) != last_tokens and "dim=7168" in text:
            last_tokens = m.group(1)
            label[b] = label[b] or "attnres tokens=%s" % m.group(1)
    print("| ms | busy | NVML readings (W @ MHz, C) | starts |")
    print("| ---: | ---: | --- | --- |")
    gi = 0
    for b in range(n):
        lo, hi = b * width, (b + 1) * width
        if lo / 1e6 < t_from or lo / 1e6 > t_to:
            continue
        while gi < len(gs) and gs[gi][0] < lo:
            gi += 1
        g = []
        j = gi
        while j < len(gs) and gs[j][0] < hi:
            g.append(gs[j])
            j += 1
        print("| %.0f | %.2f | %s | %s |" % (lo / 1e6, busy[b] / width, " ".join(
            "%.0f%s @ %.0f, %.0f" % (p, "" if a is None else " [1 s %.0f]" % a, c, t) for _, p, c, t, a in g), label[b]))


if __name__ == "__main__":
    main(sys.argv[1:])
