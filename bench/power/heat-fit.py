#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Temperature and draw from a `clock-probe --heat` run (bench/power/clock-probe.cu): does a fixed
load draw more when the chip is hotter (leakage), and does the limiter then hold a lower clock?

Per load segment, over its settled part (from SETTLE seconds after its start, default 0.3, to its
end; NVML's instant reading lags a load by 40-80 ms and updates every ~100 ms): the probe's SM
clock and rate, NVML's instant draw and temperature. Then three least-squares lines against the
temperature: the FFMA load's draw at boost (`ffma_cold`, `ffma_hot`: the same work at the same
clock, so its slope is what a degree costs in W), the capped GEMMs' probe clock (`gemm_cold`,
`heat`, `gemm_hot`: the limiter holds the draw, so a hotter chip runs a lower clock if leakage
grows), and the idle draw in the last idle stretch (cooling after the loads). An FFMA segment
whose probe clock is not within 15 MHz of the run's highest is listed and left out of its line.
usage: heat-fit.py OUT [--settle S] [-o FILE]
OUT holds batches.csv and smi.csv (or smi.csv.xz), as clock-probe.sh writes them."""
import csv
import lzma
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capdb  # noqa: E402

TOOL = "heat-fit"


def mean(xs):
    xs = [x for x in xs if x == x]
    return sum(xs) / len(xs) if xs else float("nan")


def line_fit(points):
    """Least squares y = a + b x over (x, y) points: (a, b, rms residual, n); None with fewer than
    two distinct x."""
    pts = [(x, y) for x, y in points if x == x and y == y]
    if len(pts) < 2 or max(x for x, _ in pts) == min(x for x, _ in pts):
        return None
    mx = mean(x for x, _ in pts)
    my = mean(y for _, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    a = my - b * mx
    rms = (sum((y - a - b * x) ** 2 for x, y in pts) / len(pts)) ** 0.5
    return a, b, rms, len(pts)


def segment_rows(segs, smi, settle_s):
    """A row per segment (idle ones too): name, start s, length s, probe MHz, TFLOP/s, instant W,
    power.draw W, temperature C, NVML SM MHz, over the settled part."""
    out = []
    for name, rows in segs:
        if not rows:
            continue
        t0, t1 = rows[0][0], rows[-1][1]
        a = t0 + min(settle_s, 0.5 * (t1 - t0))
        br = [x for x in rows if x[1] >= a]
        sr = [x for x in smi if a <= x[0] <= t1]
        out.append({"name": name, "t0": t0, "len": t1 - t0,
                    "mhz": statistics.median([x[3] for x in br]) if br else float("nan"),
                    "tflops": mean(x[2] for x in br), "inst_w": mean(x[3] for x in sr),
                    "draw_w": mean(x[2] for x in sr), "temp_c": mean(x[4] for x in sr),
                    "nvml_mhz": mean(x[1] for x in sr), "readings": len(sr)})
    return out


def fit_text(label, unit, fit):
    if fit is None:
        return "- %s: too few points (or one temperature) to fit" % label
    a, b, rms, n = fit
    return "- %s: %.3f %s per C (at 40 C %.1f, at 70 C %.1f %s; rms %.2f, %d points)" % (
        label, b, unit, a + 40 * b, a + 70 * b, unit, rms, n)


def main(argv):
    args = list(argv[1:])
    settle = capdb.take_float(args, "--settle", 0.3)
    out_file = capdb.take_str(args, "-o", None, "a file")
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit(__doc__)
    if not settle >= 0:
        sys.exit("%s: --settle: seconds, 0 or more" % TOOL)
    out = args[0]
    try:
        smi = capdb.read_probe_smi(out)
        segs = capdb.read_probe_segments(out, TOOL)
    except (OSError, EOFError, lzma.LZMAError, csv.Error) as e:
        sys.exit("%s: %s: %s" % (TOOL, out, e))
    rows = segment_rows(segs, smi, settle)
    if not any(r["name"].startswith("ffma") for r in rows) or not any(r["name"] == "heat" for r in rows):
        sys.exit("%s: %s: no ffma_* and heat segments in batches.csv (a clock-probe --heat run?)" % (TOOL, out))
    if not smi:
        sys.exit("%s: %s: no nvidia-smi samples in smi.csv" % (TOOL, out))
    top = max(r["mhz"] for r in rows if r["name"].startswith("ffma"))
    ffma, left_out = [], []
    for r in rows:
        if r["name"].startswith("ffma"):
            (ffma if abs(r["mhz"] - top) <= 15 else left_out).append(r)
    capped = [r for r in rows if r["name"] in ("gemm_cold", "heat", "gemm_hot")]
    # the idle draw while cooling: the last idle segment's readings one by one (NVML's instant)
    idle_pts = []
    idle = [(name, seg) for name, seg in segs if name == "idle" and seg]
    if idle:
        seg = idle[-1][1]
        a, e = seg[0][0] + settle, seg[-1][1]
        idle_pts = [(x[4], x[3]) for x in smi if a <= x[0] <= e]
    t_first = rows[0]["t0"]
    lines = ["# clock-probe --heat: %s (settled from %.2f s into each segment)" % (out, settle), "",
             "| # | segment | at s | s | probe MHz | TFLOP/s | instant W | power.draw W | C | NVML MHz | readings |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for i, r in enumerate(rows):
        lines.append("| %d | %s | %.1f | %.2f | %.0f | %.1f | %.1f | %.1f | %.1f | %.0f | %d |" % (
            i, r["name"], r["t0"] - t_first, r["len"], r["mhz"], r["tflops"], r["inst_w"], r["draw_w"],
            r["temp_c"], r["nvml_mhz"], r["readings"]))
    lines += ["", "## Against the temperature", ""]
    lines.append(fit_text("FFMA at boost, instant draw", "W", line_fit([(r["temp_c"], r["inst_w"]) for r in ffma])))
    lines.append(fit_text("FFMA at boost, its rate", "TFLOP/s", line_fit([(r["temp_c"], r["tflops"]) for r in ffma])))
    lines.append(fit_text("capped GEMM, probe clock", "MHz", line_fit([(r["temp_c"], r["mhz"]) for r in capped])))
    lines.append(fit_text("capped GEMM, instant draw", "W", line_fit([(r["temp_c"], r["inst_w"]) for r in capped])))
    lines.append(fit_text("idle while cooling (last idle stretch, each reading)", "W", line_fit(idle_pts)))
    for r in left_out:
        lines.append("- left out: %s at %.1f s, probe %.0f MHz (not at the run's FFMA clock, %.0f)" % (
            r["name"], r["t0"] - t_first, r["mhz"], top))
    cold = [r for r in rows if r["name"] == "gemm_cold"]
    hot = [r for r in rows if r["name"] == "gemm_hot"]
    if cold and hot:
        c, h = cold[0], hot[-1]
        lines.append("- GEMMs after 1 s idle, cold against hot: %.0f -> %.0f MHz (%+.1f %%) at %.1f -> %.1f C" % (
            c["mhz"], h["mhz"], 100 * (h["mhz"] / c["mhz"] - 1), c["temp_c"], h["temp_c"]))
    text = "\n".join(lines) + "\n"
    inputs = [os.path.join(out, n) for n in ("batches.csv", "smi.csv", "smi.csv.xz")]
    capdb.write_report(text, out_file, inputs)


if __name__ == "__main__":
    main(sys.argv)
