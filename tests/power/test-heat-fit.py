#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/power/heat-fit.py on a synthetic `clock-probe --heat` run whose chip warms 40 -> 72 C over
the heat stretches: the FFMA load draws 400 W + 1.5 W a degree at 1980 MHz, the capped GEMM runs
1700 MHz - 4 MHz a degree at 700 W, the last idle stretch draws 60 W + 0.5 W a degree while it
cools: the three slopes come back; an FFMA segment throttled below the run's clock is listed and
left out; cold against hot GEMMs; the same run with smi.csv.xz; -o onto an input refused; bad inputs
(no folder, a run that is not --heat, a bad batch row with its file:line, a cut .xz, a bad --settle,
no argument) exit 1 with a message and no traceback.
usage: test-heat-fit.py SOURCE_ROOT"""
import os
import re
import sys
import tempfile
import time

root = sys.argv[1]
script = os.path.join(root, "bench", "power", "heat-fit.py")
sys.path.insert(0, os.path.join(root, "tests", "slice"))
from tap import Tap, run_script, write_smi  # noqa: E402

tap = Tap()


def check(cond, name, detail=""):
    tap.check(name, cond, detail)


T0 = 1_800_000_000.0


def stamp(t):
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + (".%03d" % round((t % 1) * 1000))


def plan():
    """(name, seconds) as clock-probe --heat runs them (shortened heat stretches)."""
    p = [("idle", 1.0), ("ffma_cold", 1.0), ("idle", 0.5), ("gemm_cold", 1.5)]
    for _ in range(8):
        p += [("heat", 2.0), ("ffma_hot", 0.8)]
    p += [("idle", 0.5), ("gemm_hot", 1.5), ("idle", 3.0)]
    return p


def temp_at(t, heat_end):
    """40 C until the heat stretches start, +1.6 C a second of heat to 72, then cooling 2 C / s."""
    x = t - T0
    if x < 4.0:
        return 40.0
    if x < heat_end:
        return min(72.0, 40.0 + 1.6 * (x - 4.0))
    return max(40.0, 72.0 - 2.0 * (x - heat_end))


def make(d, xz=False, throttled_ffma=None):
    os.makedirs(d, exist_ok=True)
    p = plan()
    heat_end = sum(s for _, s in p[:4 + 16])  # the end of the last ffma_hot, s from T0
    state = []  # (start, end, name)
    t = T0
    for name, s in p:
        state.append((t, t + s, name))
        t += s
    hot_k = 0
    with open(os.path.join(d, "batches.csv"), "w") as f:
        f.write("segment,batch,host_unix_s,batch_ms,flops,tflops,probe_mhz\n")
        for a, e, name in state:
            b = 0
            x = a
            if name == "ffma_hot":
                hot_k += 1
            while x + 0.02 <= e + 1e-9:
                x += 0.02
                c = temp_at(x, heat_end)
                if name.startswith("ffma"):
                    mhz = 1980.0 if hot_k != throttled_ffma or name != "ffma_hot" else 1900.0
                    tf = 60.0
                elif name == "idle":
                    mhz, tf = 1980.0, 0.0
                else:
                    mhz, tf = 1700.0 - 4.0 * (c - 40.0), 600.0
                f.write("%s,%d,%.6f,20.0,1e12,%.2f,%.1f\n" % (name, b, x, tf, mhz))
                b += 1
    lines = []
    k = 0
    while T0 + k * 0.02 < t:
        x = T0 + k * 0.02 + 0.001
        name = next(n for a, e, n in state if a <= x < e) if x < t else "idle"
        c = temp_at(x, heat_end)
        if name.startswith("ffma"):
            w = 400.0 + 1.5 * (c - 40.0)
        elif name == "idle":
            w = 60.0 + 0.5 * (c - 40.0)
        else:
            w = 700.0
        lines.append("%s, 1980, %.2f, %.2f, %.1f, 0x0000000000000004, 2619\n" % (stamp(x), w, w, c))
        k += 1
    write_smi(d, lines, xz)


def slope(out, label):
    m = re.search(re.escape(label) + r": (-?[0-9.]+) ", out)
    return float(m.group(1)) if m else None


def run(*args):
    return run_script(script, *args)


with tempfile.TemporaryDirectory() as tmp:
    d = os.path.join(tmp, "run")
    make(d)
    rc, out, err = run(d)
    check(rc == 0, "a --heat run: exit 0", err)
    s = slope(out, "FFMA at boost, instant draw")
    check(s is not None and abs(s - 1.5) < 0.05, "FFMA draw: 1.5 W a degree", out)
    s = slope(out, "capped GEMM, probe clock")
    check(s is not None and abs(s + 4.0) < 0.2, "capped GEMM clock: -4 MHz a degree", out)
    s = slope(out, "idle while cooling (last idle stretch, each reading)")
    check(s is not None and abs(s - 0.5) < 0.05, "idle draw: 0.5 W a degree", out)
    check(out.count("| ffma_hot |") == 8 and out.count("| heat |") == 8, "a row per segment", out)
    m = re.search(r"cold against hot: (\d+) -> (\d+) MHz", out)
    check(m is not None and int(m.group(1)) == 1700 and int(m.group(2)) < 1620, "cold against hot GEMMs", out)

    d2 = os.path.join(tmp, "throttled")
    make(d2, throttled_ffma=3)
    rc, out2, err = run(d2)
    check(rc == 0 and "left out: ffma_hot" in out2, "a throttled FFMA segment is listed and left out", out2 + err)
    s = slope(out2, "FFMA at boost, instant draw")
    check(s is not None and abs(s - 1.5) < 0.05 and re.search(r"instant draw: [^\n]*, 8 points\)", out2),
          "the line over the other eight", out2)

    d3 = os.path.join(tmp, "xz")
    make(d3, xz=True)
    rc, out3, err = run(d3)
    check(rc == 0 and out3.replace(d3, d) == out, "smi.csv.xz gives the same report", err)

    rc, _, err = run(d, "-o", os.path.join(d, "batches.csv"))
    with open(os.path.join(d, "batches.csv")) as f:
        check(rc == 1 and "is an input" in err and f.readline().startswith("segment,"), "-o onto an input refused", err)
    rep = os.path.join(tmp, "heat.md")
    rc, _, err = run(d, "-o", rep)
    with open(rep) as f:
        check(rc == 0 and f.read() == out, "-o writes the report", err)

    bad = os.path.join(tmp, "bad")
    make(bad)
    with open(os.path.join(bad, "batches.csv"), "a") as f:
        f.write("heat,x,1,2,3,4,5\n")
    n = sum(1 for _ in open(os.path.join(bad, "batches.csv")))
    rc, _, err = run(bad)
    check(rc == 1 and ("batches.csv:%d" % n) in err and "Traceback" not in err, "a bad batch row: file:line", err)

    notheat = os.path.join(tmp, "notheat")
    os.makedirs(notheat)
    with open(os.path.join(notheat, "batches.csv"), "w") as f:
        f.write("segment,batch,host_unix_s,batch_ms,flops,tflops,probe_mhz\ngemm,0,%.3f,10,1,1,1980\n" % T0)
    with open(os.path.join(notheat, "smi.csv"), "w") as f:
        f.write("%s, 1980, 500, 500, 40, 0x0, 2619\n" % stamp(T0))
    rc, _, err = run(notheat)
    check(rc == 1 and "--heat run" in err and "Traceback" not in err, "a run that is not --heat", err)

    cut = os.path.join(tmp, "cut")
    make(cut, xz=True)
    with open(os.path.join(cut, "smi.csv.xz"), "r+b") as f:
        f.truncate(100)
    rc, _, err = run(cut)
    check(rc == 1 and "Traceback" not in err and err.strip(), "a cut smi.csv.xz", err)

    for args, what in (([os.path.join(tmp, "none")], "no folder"), ([d, "--settle", "x"], "a bad --settle"),
                       ([d, "--settle", "-1"], "a negative --settle"), ([], "no argument")):
        rc, _, err = run(*args)
        check(rc == 1 and "Traceback" not in err and err.strip(), what + ": exit 1, a message, no traceback", err)
tap.done()
