#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Does the H100's limiter fall faster the further its draw is over the limit? The delayed limiter of
sim/power.h (the clock moves every 0.5 ms towards the clock at which what ran in [t - delay - window,
t - delay) draws the limit, time constant rise up and fall down) against the same with the fall's time
constant scaled by (x_ref / x)^n where x, the window's draw at the present clock over the limit
(relative), is under x_ref: a large excess falls at `fall`, a mild one slower.
Data: the in-kernel clock probe's runs (bench/power/clock-probe.cu): --step (fine, ~1 ms: GEMMs from
idle and after light loads) and the coarse run (~15 ms batches: GEMMs back to back and with a sleep of
100-1000 us after each, `gemm_sN`, each segment after 0.6 s idle: excesses from +60 % to a few %) are
fitted together (rms over each run's probes, the two runs' rms averaged); --pulse (a pattern neither
saw) is scored. The loads' draws are the H100's (limiter-step-fit.py --device h100): idle 129.8 W, the
cuBLAS GEMM 1060 W at boost, its rate min(1, f / (0.894 f_boost)) and energy as (f / f_boost)^1.07,
FFMA 412 W; a gemm_sN batch draws the GEMM's power for a GEMM's time and idles N us after each.
usage: limiter-excess-fit.py STEP_DIR COARSE_DIR PULSE_DIR [-o OUT.md]"""
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capdb import take_str, write_report  # noqa: E402

FB, LIM, IDLE, FLOOR, GEMM_W, GEMM_B, GEMM_G, FFMA_W = 1980.0, 700.0, 129.8, 1215.0, 1060.0, 0.894, 1.07, 412.0
GEMM_MS = 1.57  # the 8192^3 GEMM at boost (the coarse run's `gemm` rows: ~700 TFLOP/s)
DT = 0.0005


def gemm_ms(f):
    return GEMM_MS * max(1.0, GEMM_B * FB / f)


def draw(kind, f):
    """Mean draw of a load kind at clock f (MHz): idle, gemm, ffma, or gemm_sN (N us idle after each GEMM)."""
    if kind == "idle":
        return IDLE
    if kind == "ffma":
        return IDLE + (FFMA_W - IDLE) * (f / FB) ** 1.74
    busy = IDLE + (GEMM_W - IDLE) * min(1.0, f / (GEMM_B * FB)) * (f / FB) ** GEMM_G
    if kind == "gemm":
        return busy
    sleep_ms = float(kind[len("gemm_s"):]) * 1e-3
    g = gemm_ms(f)
    return IDLE + (busy - IDLE) * g / (g + sleep_ms)


def mean_draw(counts, f):
    tot = sum(counts.values())
    return sum(c * draw(k, f) for k, c in counts.items()) / tot


def target(counts):
    if mean_draw(counts, FB) <= LIM:
        return FB
    if mean_draw(counts, FLOOR) >= LIM:
        return FLOOR
    lo, hi = FLOOR, FB
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if mean_draw(counts, mid) > LIM else (mid, hi)
    return lo


def load_batches(d):
    path = os.path.join(d, "batches.csv")
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        sys.exit("limiter-excess-fit.py: %s: %s" % (path, e.strerror))
    if not rows:
        sys.exit("limiter-excess-fit.py: %s: no batches" % path)
    out = []
    try:
        t_first = float(rows[0]["host_unix_s"]) - float(rows[0]["batch_ms"]) * 1e-3
        for line, r in enumerate(rows, 2):
            seg = r["segment"]
            kind = seg[:-len("_fine")] if seg.endswith("_fine") else seg
            if not (kind in ("idle", "gemm", "ffma") or (kind.startswith("gemm_s") and kind[6:].isdigit())):
                raise ValueError("unknown segment '%s'" % seg)
            t1 = float(r["host_unix_s"]) - t_first
            out.append((t1 - float(r["batch_ms"]) * 1e-3, t1, kind, float(r["probe_mhz"])))
    except (KeyError, TypeError, ValueError) as e:
        sys.exit("limiter-excess-fit.py: %s: not clock-probe batches (line %d: %s)" % (path, line if out else 2, e))
    return out


def simulate(batches, delay, window, rise, fall, xref, n):
    steps = int(batches[-1][1] / DT) + 1
    load = ["idle"] * steps
    for a, b, kind, _ in batches:
        for i in range(int(a / DT), min(steps, int(b / DT))):
            load[i] = kind
    nd, nw = int(round(delay / DT)), max(1, int(round(window / DT)))
    counts = {"idle": nw}
    cache, f, clock = {}, FB, [0.0] * steps
    for i in range(steps):
        j = i - nd
        k_in = load[j] if j >= 0 else "idle"
        k_out = load[j - nw] if j - nw >= 0 else "idle"
        counts[k_in] = counts.get(k_in, 0) + 1
        counts[k_out] -= 1
        if counts[k_out] == 0:
            del counts[k_out]
        key = tuple(sorted(counts.items()))
        if key not in cache:
            cache[key] = target(counts)
        tg = cache[key]
        if tg > f:
            tau = rise
        else:
            tau = fall
            if xref > 0:
                x = (mean_draw(counts, f) - LIM) / LIM
                if x < xref:
                    tau = fall * (xref / max(x, 1e-4)) ** n
        f = f + (tg - f) * (1 - math.exp(-DT / tau)) if tau > 0 else tg
        clock[i] = f
    return clock


def rms(batches, clock):
    e = [clock[min(len(clock) - 1, int(b / DT))] - mhz for _, b, _, mhz in batches]
    return math.sqrt(sum(x * x for x in e) / len(e))


def main():
    args = sys.argv[1:]
    out = take_str(args, "-o", None, "a file")
    if len(args) != 3:
        sys.exit(__doc__)
    step, coarse, pulse = (load_batches(d) for d in args)
    fit = []
    for fall in (0.005, 0.01, 0.02):
        for d in (0.01, 0.02):
            for xref, n in [(0, 1)] + [(x, n) for x in (0.05, 0.1, 0.2, 0.4) for n in (1, 2, 3)]:
                p = (d, 0.02, 0.03, fall, xref, n)
                s1, s2 = rms(step, simulate(step, *p)), rms(coarse, simulate(coarse, *p))
                fit.append((0.5 * (s1 + s2), s1, s2, p))
    fit.sort(key=lambda r: r[0])
    lines = ["<!-- written by bench/power/limiter-excess-fit.py %s -->" % " ".join(sys.argv[1:]),
             "# The H100 limiter's fall against its excess", "",
             "rms error of the simulated clock at the probes (MHz): the step run, the coarse run (both fitted), "
             "the pulse run (held out). x_ref 0: the preset's delayed limiter (one fall time constant).", "",
             "| delay ms | window ms | rise ms | fall ms | x_ref | n | fit rms | step | coarse | pulse (held out) |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    shown = fit[:10] + [r for r in fit if r[3][4] == 0][:2]
    preset = (0.01, 0.02, 0.03, 0.02, 0, 1)
    if not any(r[3] == preset for r in shown):
        shown += [r for r in fit if r[3] == preset]
    for score, s1, s2, p in shown:
        lines.append("| %g | %g | %g | %g | %g | %g | %.1f | %.1f | %.1f | %.1f |" % (
            p[0] * 1e3, p[1] * 1e3, p[2] * 1e3, p[3] * 1e3, p[4], p[5], score, s1, s2, rms(pulse, simulate(pulse, *p))))
    write_report("\n".join(lines) + "\n", out)


if __name__ == "__main__":
    main()
