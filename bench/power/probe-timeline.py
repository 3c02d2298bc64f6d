#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A clock-probe run in time: each load segment (bench/power/clock-probe.cu) in bins from its
start, with the probe's SM clock and rate and NVML's readings in each bin (clock-probe.sh samples
nvidia-smi every 20 ms): the SM clock, power.draw (on Hopper a trailing 1 s mean: it ramps over
the first second of any load), power.draw.instant (updated every ~100 ms), the temperature and the
clock-event reasons seen. Then, per segment, the means over 0.3-0.8 s and over the second half,
and the first time the probe's clock falls 100 MHz or more under its 0.3-0.8 s median after 0.3 s
(the delayed cut of bench/results/power-h100-2026-12-06/limiter-mild/).
usage: probe-timeline.py OUT [--bin MS] [--segment NAME]... [-o FILE]
OUT holds batches.csv and smi.csv (or smi.csv.xz); idle segments are left out."""
import csv
import lzma
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capdb  # noqa: E402


def mean(xs):
    xs = [x for x in xs if x == x]
    return sum(xs) / len(xs) if xs else float("nan")


def read_smi(out):
    """capdb.read_probe_smi's samples with the reasons as a number (0 where unreadable)."""
    rows = []
    for t, sm, draw, inst, temp, reason in capdb.read_probe_smi(out):
        try:
            mask = int(reason, 16)
        except ValueError:
            mask = 0
        rows.append((t, sm, draw, inst, temp, mask))
    return rows


def read_segments(out):
    return capdb.read_probe_segments(out, "probe-timeline")


REASONS = {0x4: "sw-power", 0x8: "hw-slow", 0x20: "sw-thermal", 0x40: "hw-thermal", 0x80: "power-brake"}


def reason_words(mask):
    words = [w for bit, w in REASONS.items() if mask & bit]
    return " ".join(words) if words else "-"


def main(argv):
    args = list(argv[1:])
    bin_ms = capdb.take_float(args, "--bin", 100.0)
    out_file = capdb.take_str(args, "-o", None, "a file")
    only = []
    while "--segment" in args:
        only.append(capdb.take_str(args, "--segment", None, "a segment name"))
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit(__doc__)
    if not bin_ms > 0:
        sys.exit("probe-timeline: --bin: a positive number of milliseconds")
    out = args[0]
    try:
        smi = read_smi(out)
        segs = read_segments(out)
    except (OSError, EOFError, lzma.LZMAError, csv.Error, KeyError, TypeError, ValueError) as e:
        sys.exit("probe-timeline: %s: %s" % (out, e))
    if not any(not name.startswith("idle") for name, _ in segs):
        sys.exit("probe-timeline: %s: no load segment in batches.csv" % out)
    lines = ["# clock-probe in time: %s (bins of %g ms from each load's start)" % (out, bin_ms), ""]
    summary = ["| # | segment | s | 0.3-0.8 s: probe MHz / instant W | second half: probe MHz / instant W / "
               "power.draw W | first cut (s) |", "| ---: | --- | ---: | --- | --- | ---: |"]
    for i, (name, rows) in enumerate(segs):
        if name.startswith("idle") or (only and name not in only) or not rows:
            continue
        t0, t1 = rows[0][0], rows[-1][1]
        lines += ["## %d. %s (%.2f s)" % (i, name, t1 - t0), "",
                  "| s | probe MHz | TFLOP/s | NVML SM MHz | power.draw W (1 s mean) | instant W | C | reasons |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        b = bin_ms * 1e-3
        k = 0
        while t0 + k * b < t1:
            a, e = t0 + k * b, t0 + (k + 1) * b
            br = [x for x in rows if a <= x[1] < e]
            sr = [x for x in smi if a <= x[0] < e]
            mask = 0
            for x in sr:
                mask |= x[5]
            lines.append("| %.2f | %.0f | %.1f | %.0f | %.0f | %.0f | %.0f | %s |" % (
                k * b, mean(x[3] for x in br), mean(x[2] for x in br), mean(x[1] for x in sr),
                mean(x[2] for x in sr), mean(x[3] for x in sr), mean(x[4] for x in sr), reason_words(mask)))
            k += 1
        lines.append("")
        early = [x for x in rows if t0 + 0.3 <= x[1] < t0 + 0.8]
        mid = (t0 + t1) / 2
        late = [x for x in rows if x[1] >= mid]
        early_smi = [x for x in smi if t0 + 0.3 <= x[0] < t0 + 0.8]
        late_smi = [x for x in smi if mid <= x[0] <= t1]
        cut = "-"
        if early:
            ref = statistics.median(x[3] for x in early)
            for x in rows:
                if x[1] >= t0 + 0.3 and x[3] <= ref - 100:
                    cut = "%.2f" % (x[1] - t0)
                    break
        summary.append("| %d | %s | %.2f | %.0f / %.0f | %.0f / %.0f / %.0f | %s |" % (
            i, name, t1 - t0, mean(x[3] for x in early), mean(x[3] for x in early_smi),
            mean(x[3] for x in late), mean(x[3] for x in late_smi), mean(x[2] for x in late_smi), cut))
    text = "\n".join(lines[:2] + summary + [""] + lines[2:]) + "\n"
    inputs = [os.path.join(out, n) for n in ("batches.csv", "smi.csv", "smi.csv.xz")]
    capdb.write_report(text, out_file, inputs)


if __name__ == "__main__":
    main(sys.argv)
