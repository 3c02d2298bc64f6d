#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/power/capture-timeline.py on a synthetic capture: the busy share of each bin (a kernel cut
at bin edges, a gap), the NVML readings in their bins, the phase labels (a graph range, a new token
count of the AttnRes ranges, not a repeated one); --from / --to; the same capture as .xz; bad inputs
(no file, not a database, a cut .xz, no kernels, a bad --bin, an empty window) exit 1 with one line
and no traceback.  usage: test-capture-timeline.py SOURCE_ROOT"""
import lzma
import os
import sqlite3
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "bench", "power", "capture-timeline.py")
sys.path.insert(0, os.path.join(root, "tests", "slice"))
from tap import Tap, run_script  # noqa: E402

tap = Tap()
check = tap.check
MS = 1_000_000
T0 = 5_000 * MS  # the first kernel's start: the timeline's zero


def make(path, kernels=True, avg=False):
    db = sqlite3.connect(path)
    db.executescript("""
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, correlationId INTEGER);
CREATE TABLE K3SIM_GPU_METRICS (timestamp INTEGER, powerW REAL, smClockMHz REAL, temperatureC REAL);
""")
    if avg:  # a capture of 2026-12-06 on: NVML's 1 s mean beside the instant reading
        db.execute("ALTER TABLE K3SIM_GPU_METRICS ADD COLUMN powerAvgW REAL")
    if kernels:
        # bin 0 (0-50 ms): 0-30 ms busy; a kernel 40-70 ms (10 ms in bin 0, 20 in bin 1); bin 2 idle;
        # bin 3 (150-200): 150-200 whole
        for s, e in ((0, 30), (40, 70), (150, 200)):
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 1)", (T0 + s * MS, T0 + e * MS))
    for t, w, f in ((20, 400.0, 1980.0), (60, 720.0, 1950.0), (170, 650.0, 1800.0)):
        db.execute("INSERT INTO K3SIM_GPU_METRICS (timestamp, powerW, smClockMHz, temperatureC) VALUES (?, ?, ?, 50)",
                   (T0 + t * MS, w, f))
    for s, text in ((1, "k3sim op=attnres tokens=64 dim=7168 sources=9 delta=0 dtype=bf16"),
                    (55, "k3sim op=attnres tokens=64 dim=7168 sources=9 delta=1 dtype=bf16"),
                    (110, "k3sim op=attnres tokens=1 dim=1536 sources=1 delta=0 dtype=bf16"),
                    (160, "k3-slice decode graph b=64 ctx=8192 kv=bf16 state=fp32")):
        db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?)", (T0 + s * MS, T0 + (s + 1) * MS, text))
    if avg:
        db.execute("UPDATE K3SIM_GPU_METRICS SET powerAvgW = powerW - 100 WHERE powerW > 500")
    db.commit()
    db.close()


def run(*args):
    return run_script(script, *args)


def rows(out):
    return [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()[2:]]


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "c.db")
    make(db)
    rc, out, err = run(db)
    check("exit 0", rc == 0, err)
    r = rows(out)
    check("four bins of 50 ms", [x[0] for x in r] == ["0", "50", "100", "150"], out)
    check("busy: 0.80, 0.40, 0.00, 1.00 (a kernel cut at the bin edge)",
          [x[1] for x in r] == ["0.80", "0.40", "0.00", "1.00"], out)
    check("readings in their bins", r[0][2] == "400 @ 1980, 50" and r[1][2] == "720 @ 1950, 50" and r[2][2] == ""
          and r[3][2] == "650 @ 1800, 50", out)
    check("labels: the first token count, not its repeat, not a 1536-wide range; the graph range",
          r[0][3] == "attnres tokens=64" and r[1][3] == "" and r[2][3] == ""
          and r[3][3] == "decode graph b=64 ctx=8192 kv=bf16 state=fp32", out)
    rc, out, err = run(db, "--bin", "100", "--from", "100", "--to", "150")
    r = rows(out)
    check("--bin 100 --from 100: one bin, busy 0.50", rc == 0 and [x[:2] for x in r] == [["100", "0.50"]], out + err)
    dba = os.path.join(tmp, "avg.db")
    make(dba, avg=True)
    rc, out, err = run(dba)
    r = rows(out)
    check("the 1 s mean in brackets where read, nothing where NULL",
          rc == 0 and r[0][2] == "400 @ 1980, 50" and r[1][2] == "720 [1 s 620] @ 1950, 50"
          and r[3][2] == "650 [1 s 550] @ 1800, 50", out + err)
    xz = db + ".xz"
    with open(db, "rb") as f, lzma.open(xz, "wb") as g:
        g.write(f.read())
    rc, out2, err = run(xz)
    rc1, out1, _ = run(db)
    check("the .xz gives the same table", rc == 0 and out2 == out1, err)
    cut = os.path.join(tmp, "cut.db.xz")
    with open(xz, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:64])
    junk = os.path.join(tmp, "junk.db")
    with open(junk, "w") as f:
        f.write("not a database\n")
    empty = os.path.join(tmp, "empty.db")
    make(empty, kernels=False)
    for name, args in (("no such file", [os.path.join(tmp, "none.db")]), ("not a database", [junk]),
                       ("a cut .xz", [cut]), ("no kernels", [empty]), ("--bin 0", [db, "--bin", "0"]),
                       ("--bin x", [db, "--bin", "x"]), ("--to before --from", [db, "--from", "100", "--to", "50"]),
                       ("no argument", [])):
        rc, out, err = run(*args)
        check("%s: exit 1, a message, no traceback" % name,
              rc == 1 and err.strip() != "" and "Traceback" not in err and out == "", "rc %d: %s" % (rc, err))
tap.done()
