#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The power limiter's dynamics fitted on the probe's step response (`clock-probe OUT 3 --step`,
bench/power/clock-probe.cu: batches of one GEMM, four FFMA launches or 1 ms of sleep, each followed
by an in-kernel clock probe). The load of every moment is the batch's kind; its draw at a clock f is
the measured one (bench/results/clock-probe-h200-2026-12-03/README.md): idle 121.5 W; the cuBLAS
8192^3 GEMM 919 W at boost, its rate min(1, f / (0.9 f_boost)) and a FLOP's energy as
(f / f_boost)^0.74; FFMA 392 W at boost, its rate as f. The limiter (sim/power.h, the delayed
limiter): the target is the clock at which what ran in [t - delay - window, t - delay) draws the
700 W limit; the clock moves towards it with time constant rise (up) or fall (down). Grid search
of (delay, window, rise, fall) for the least rms error of the simulated clock at the probes of
the fine segments; the window limiter without delay (window 100 ms, at once) beside.
With --eval, no grid: the limiters fitted here (and the window limiter) scored on another run of
the probe, e.g. `clock-probe OUT 3 --pulse` (a pattern the fit never saw).
--device h100 (2026-12-06): the H100's loads (bench/results/power-h100-2026-12-06/README.md): idle
129.8 W, the GEMM 1060 W at boost, its rate min(1, f / (0.894 f_boost)), energy as (f / f_boost)^1.07,
FFMA 412 W at boost; --cand D,W,R,F (ms) adds a limiter to score (repeatable).
usage: limiter-step-fit.py STEP_DIR [--device h200|h100] [--eval] [--cand D,W,R,F]... [-o OUT.md]"""
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capdb import take_str, write_report  # noqa: E402

DEVICES = {  # boost MHz, limit W, idle W, floor MHz, GEMM W at boost, its roofline share b, energy exponent g, FFMA W
    "h200": (1980.0, 700.0, 121.5, 1395.0, 919.0, 0.9, 0.74, 392.0),
    "h100": (1980.0, 700.0, 129.8, 1215.0, 1060.0, 0.894, 1.07, 412.0),
}
FB, LIM, IDLE, FLOOR, GEMM_W, GEMM_B, GEMM_G, FFMA_W = DEVICES["h200"]
DT = 0.0005


def draw(kind, f):
    if kind == "gemm":
        return IDLE + (GEMM_W - IDLE) * min(1.0, f / (GEMM_B * FB)) * (f / FB) ** GEMM_G
    if kind == "ffma":
        return IDLE + (FFMA_W - IDLE) * (f / FB) ** 1.74
    return IDLE


def target(counts):
    """The clock at which a window holding counts[kind] steps of each kind draws the limit."""
    tot = sum(counts.values())

    def mean(f):
        return sum(c * draw(k, f) for k, c in counts.items()) / tot

    if mean(FB) <= LIM:
        return FB
    if mean(FLOOR) >= LIM:
        return FLOOR
    lo, hi = FLOOR, FB
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if mean(mid) > LIM else (mid, hi)
    return lo


def load_batches(step_dir):
    rows = list(csv.DictReader(open(os.path.join(step_dir, "batches.csv"))))
    if not rows:
        sys.exit("%s: no batches" % step_dir)
    t_first = float(rows[0]["host_unix_s"]) - float(rows[0]["batch_ms"]) * 1e-3
    out = []
    for r in rows:
        t1 = float(r["host_unix_s"]) - t_first
        out.append((t1 - float(r["batch_ms"]) * 1e-3, t1, r["segment"].split("_")[0], float(r["probe_mhz"]), r["segment"]))
    return out


def simulate(batches, delay, window, rise, fall):
    n = int(batches[-1][1] / DT) + 1
    load = ["idle"] * n
    for a, b, kind, _, _ in batches:
        for i in range(int(a / DT), min(n, int(b / DT))):
            load[i] = kind
    nd, nw = int(round(delay / DT)), max(1, int(round(window / DT)))
    counts = {"idle": nw, "gemm": 0, "ffma": 0}  # idle before the run
    cache, f, clock = {}, FB, [0.0] * n
    for i in range(n):
        j = i - nd
        counts[load[j] if j >= 0 else "idle"] += 1
        counts[load[j - nw] if j - nw >= 0 else "idle"] -= 1
        key = tuple(counts[k] for k in ("idle", "gemm", "ffma"))
        if key not in cache:
            cache[key] = target({k: c for k, c in counts.items() if c > 0})
        tg = cache[key]
        tau = rise if tg > f else fall
        f = f + (tg - f) * (1 - math.exp(-DT / tau)) if tau > 0 else tg
        clock[i] = f
    return clock


def rms(batches, clock, fine_only=True):
    e = [clock[min(len(clock) - 1, int(b / DT))] - mhz for a, b, _, mhz, name in batches
         if not fine_only or "fine" in name]
    return math.sqrt(sum(x * x for x in e) / len(e)), len(e)


def main():
    args = sys.argv[1:]
    out = take_str(args, "-o", None, "a file")
    global FB, LIM, IDLE, FLOOR, GEMM_W, GEMM_B, GEMM_G, FFMA_W
    device = take_str(args, "--device", "h200", "a device (%s)" % ", ".join(DEVICES))
    if device not in DEVICES:
        sys.exit("limiter-step-fit.py: --device is one of %s, not '%s'" % (", ".join(DEVICES), device))
    FB, LIM, IDLE, FLOOR, GEMM_W, GEMM_B, GEMM_G, FFMA_W = DEVICES[device]
    cands = []
    while "--cand" in args:
        i = args.index("--cand")
        try:
            cands.append(tuple(float(x) * 1e-3 for x in args[i + 1].split(",")))
        except (IndexError, ValueError):
            sys.exit("limiter-step-fit.py: --cand wants D,W,R,F in ms")
        if len(cands[-1]) != 4:
            sys.exit("limiter-step-fit.py: --cand wants four numbers D,W,R,F in ms")
        del args[i:i + 2]
    evaluate = "--eval" in args
    if evaluate:
        args.remove("--eval")
    if len(args) != 1:
        sys.exit(__doc__)
    batches = load_batches(args[0])
    grid = []
    for d in () if evaluate else (0.0, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035):
        for w in (0.002, 0.005, 0.01, 0.02, 0.05, 0.1):
            for r in (0.01, 0.02, 0.03, 0.05):
                for fl in (0.002, 0.005, 0.01, 0.02):
                    grid.append((rms(batches, simulate(batches, d, w, r, fl))[0], d, w, r, fl))
    grid.sort()
    lines = ["<!-- written by bench/power/limiter-step-fit.py %s --device %s%s -->" % (args[0], device, " --eval" if evaluate else ""),
             "# The limiter's dynamics %s" % ("scored where they were not fitted" if evaluate else
                                               "fitted on the probe's step response"), "",
             "rms error of the simulated clock at the %d probes of the fine segments (MHz); all %d probes beside."
             % (rms(batches, simulate(batches, 0.0, 0.1, 0, 0))[1], len(batches)), "",
             "| limiter | delay ms | window ms | rise ms | fall ms | rms fine | rms all |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def row(name, d, w, r, fl):
        c = simulate(batches, d, w, r, fl)
        lines.append("| %s | %g | %g | %g | %g | %.1f | %.1f |" % (name, d * 1e3, w * 1e3, r * 1e3, fl * 1e3,
                                                                  rms(batches, c)[0], rms(batches, c, False)[0]))

    row("window, no delay (h200 before)", 0.0, 0.1, 0, 0)
    row("at once (each moment's own)", 0.0, DT, 0, 0)
    for c in cands:
        row("candidate", *c)
    if evaluate and device == "h200":
        row("delayed, fitted on the step (h200)", 0.025, 0.005, 0.03, 0.005)
        row("delayed, the best at window 20 ms", 0.02, 0.02, 0.03, 0.002)
        row("delayed, the best at window 100 ms", 0.0, 0.1, 0.05, 0.002)
    for s, d, w, r, fl in grid[:8]:
        row("grid", d, w, r, fl)
    for wsel in () if evaluate else (0.02, 0.05, 0.1):
        b = min(g for g in grid if g[2] == wsel)
        row("best at window %g ms" % (wsel * 1e3), *b[1:])
    write_report("\n".join(lines) + "\n", out)


if __name__ == "__main__":
    main()
