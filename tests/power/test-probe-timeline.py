#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/power/probe-timeline.py on a synthetic clock-probe run: a load whose probe clock holds
1965 MHz for 1 s of 3 and then falls to 1770 while NVML's instant reading steps 600 -> 740 W: the bins'
means, the summary's 0.3-0.8 s and second-half means, the first cut at 1.0 s; the clock-event
reasons in words; --segment; the same run with smi.csv.xz; -o onto an input refused; bad inputs (no
folder, no load segment, a bad batch row with its file:line, a cut .xz, a bad --bin, no argument) exit 1 with a message and no traceback.
usage: test-probe-timeline.py SOURCE_ROOT"""
import os
import sys
import tempfile
import time

root = sys.argv[1]
script = os.path.join(root, "bench", "power", "probe-timeline.py")
sys.path.insert(0, os.path.join(root, "tests", "slice"))
from tap import Tap, run_script, write_smi  # noqa: E402

tap = Tap()
check = tap.check
T0 = 1_800_000_000.0  # the load's first batch starts here (unix s)


def stamp(t):
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + (".%03d" % round((t % 1) * 1000))


def make(d, load="gemm_c3", xz=False):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "batches.csv"), "w") as f:
        f.write("segment,batch,host_unix_s,batch_ms,flops,tflops,probe_mhz\n")
        for b in range(5):  # idle: 50 ms before the load
            f.write("idle,%d,%.6f,10.0,0,0.00,1980.0\n" % (b, T0 - 0.05 + (b + 1) * 0.01 - 0.01))
        for b in range(300):  # the load: 10 ms batches over 3 s
            end = T0 + (b + 1) * 0.01
            mhz = 1965.0 if end <= 1.0 + T0 else 1770.0
            f.write("%s,%d,%.6f,10.0,1e12,%.2f,%.1f\n" % (load, b, end, 450.0 if mhz > 1900 else 440.0, mhz))
    lines = []
    for k in range(-5, 151):  # every 20 ms from 0.1 s before the load
        t = T0 + k * 0.02 + 0.001
        inst = 130.0 if t < T0 else (600.0 if t < T0 + 1.0 else 740.0)
        reason = "0x0000000000000000" if t < T0 + 0.5 else "0x0000000000000004"
        lines.append("%s, %d, %.2f, %.2f, 55, %s, 2619\n" % (stamp(t), 1965 if t < T0 + 1.0 else 1770, 400.0, inst, reason))
    write_smi(d, lines, xz)


def run(*args):
    return run_script(script, *args)


def table(out, header):
    """The rows of the Markdown table whose header line starts with header."""
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


with tempfile.TemporaryDirectory() as tmp:
    d = os.path.join(tmp, "run")
    make(d)
    rc, out, err = run(d)
    check("exit 0", rc == 0, err)
    s = table(out, "| # | segment")
    check("one load in the summary, idle left out", len(s) == 1 and s[0][1] == "gemm_c3", out)
    check("0.3-0.8 s: probe 1965, instant 600", s[0][3] == "1965 / 600", out)
    check("second half: probe 1770, instant 740, power.draw 400", s[0][4] == "1770 / 740 / 400", out)
    check("the first cut at 1.01 s", s[0][5] == "1.01", out)
    b = table(out, "| s | probe MHz")
    check("30 bins of 100 ms", [x[0] for x in b] == ["%.2f" % (k / 10) for k in range(30)], out)
    check("bin 0.50: probe 1965, instant 600, sw-power", b[5][1] == "1965" and b[5][5] == "600" and b[5][7] == "sw-power", out)
    check("bin 0.00: no reason", b[0][7] == "-", out)
    check("bin 1.20: 1770 MHz, 740 W, 440 TFLOP/s", b[12][1] == "1770" and b[12][5] == "740" and b[12][2] == "440.0", out)
    rc, out5, err = run(d, "--bin", "500")
    check("--bin 500: six bins", rc == 0 and len(table(out5, "| s | probe MHz")) == 6, err)
    rc, outn, err = run(d, "--segment", "gemm_c9")
    check("--segment of no load: no table rows", rc == 0 and len(table(outn, "| # | segment")) == 0, err)
    dx = os.path.join(tmp, "runxz")
    make(dx, xz=True)
    rc, outx, err = run(dx)
    check("smi.csv.xz gives the same tables", rc == 0 and outx.replace(dx, d) == out, err)
    f = os.path.join(tmp, "out.md")
    rc, o, err = run(d, "-o", f)
    check("-o writes the file, nothing on stdout", rc == 0 and o == "" and open(f).read() == out, err)
    bpath = os.path.join(d, "batches.csv")
    before = open(bpath).read()
    rc, o, err = run(d, "-o", bpath)
    check("-o onto batches.csv: refused, the input unchanged",
          rc == 1 and "output is an input" in err and open(bpath).read() == before, err)
    bad = os.path.join(tmp, "bad")
    make(bad)
    with open(os.path.join(bad, "batches.csv"), "a") as g:
        g.write("gemm_c3,x,1.0,10,0,0,1980\n")
    rc, o, err = run(bad)
    check("a batch number that is not one: exit 1 with file:line",
          rc == 1 and os.path.join(bad, "batches.csv") + ":307:" in err and "Traceback" not in err, err)
    idle = os.path.join(tmp, "idle")
    os.makedirs(idle)
    with open(os.path.join(idle, "batches.csv"), "w") as g:
        g.write("segment,batch,host_unix_s,batch_ms,flops,tflops,probe_mhz\nidle,0,1.0,10,0,0,1980\n")
    with open(os.path.join(idle, "smi.csv"), "w") as g:
        g.write("")
    cut = os.path.join(tmp, "cut")
    make(cut, xz=True)
    with open(os.path.join(cut, "smi.csv.xz"), "r+b") as g:
        g.truncate(40)
    for name, args in (("no such folder", [os.path.join(tmp, "none")]), ("no load segment", [idle]),
                       ("a cut smi.csv.xz", [cut]), ("--bin 0", [d, "--bin", "0"]), ("--bin x", [d, "--bin", "x"]),
                       ("-o without a file", [d, "-o"]), ("no argument", [])):
        rc, o, err = run(*args)
        check("%s: exit 1, a message, no traceback" % name,
              rc == 1 and err.strip() != "" and "Traceback" not in err and o == "", "rc %d: %s" % (rc, err))
tap.done()
