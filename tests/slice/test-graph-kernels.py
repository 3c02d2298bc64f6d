#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kernels/slice/graph-kernels.py on a synthetic capture: two graph replays whose kernels slow down
and an eager range; the per-replay sums, the counts, the clock, the eager mean; bad inputs exit 1
with a message, never a traceback.  usage: test-graph-kernels.py SOURCE_ROOT"""
import os
import sqlite3
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "kernels", "slice", "graph-kernels.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap, run_script  # noqa: E402

tap = Tap()
check = tap.check


def make(path):
    db = sqlite3.connect(path)
    db.executescript("""
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, correlationId INTEGER, shortName INTEGER);
CREATE TABLE K3SIM_GPU_METRICS (timestamp INTEGER, smClockMHz REAL);
INSERT INTO StringIds VALUES (1, 'mla_split_kernel'), (2, 'gemv_kernel');
""")
    # replay r (0, 1) at 10 ms r: one graph launch (correlation 100 + r), an MLA kernel of 5 + r ms,
    # two gemv kernels of 1 ms
    for r in range(2):
        t = 10_000_000 * (r + 1)
        db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?)",
                   (t, t + 8_000_000, "k3-slice decode graph b=64 ctx=65536 kv=bf16 state=fp32"))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?)", (t + 10, t + 20, 100 + r))
        k = t + 1000
        for name, ms in ((1, 5 + r), (2, 1), (2, 1)):
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, ?)", (k, k + ms * 1_000_000, 100 + r, name))
            k += ms * 1_000_000
        db.execute("INSERT INTO K3SIM_GPU_METRICS VALUES (?, ?)", (t + 1_000_000, 1965 - 90 * r))
    # the eager op range: an MLA kernel of 4 ms
    db.execute("INSERT INTO NVTX_EVENTS VALUES (1000, 2000, 'k3sim op=mla_decode b=64 heads=96 ctx=65536 kv=bf16 t=1')")
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1500, 1600, 7)")
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (3000, 4003000, 7, 1)")
    db.commit()
    db.close()


def run(*args):
    return run_script(script, *args)


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "s.db")
    make(db)
    rc, out, err = run(db, "--top", "2")
    check("exit 0", rc == 0, err)
    lines = [l for l in out.splitlines() if l.startswith("| 1 |") or l.startswith("| 2 |")]
    check("two replays", len(lines) == 2, out)
    if len(lines) == 2:
        check("replay 1: clock, MLA 5000 us (1), gemv 2000 (2)",
              lines[0].split("|")[2].strip() == "1965" and "5000 (1)" in lines[0] and "2000 (2)" in lines[0], out)
        check("replay 2 slower: MLA 6000 us at 1875 MHz",
              lines[1].split("|")[2].strip() == "1875" and "6000 (1)" in lines[1], out)
    check("the eager kernel's mean", "4000 a kernel" in out, out)
    check("the columns by time: MLA first", out.index("mla_split_kernel") < out.index("gemv_kernel"), out)
    rc, out, err = run(db, "--ctx", "8192")
    check("no such step: exit 1 with a message", rc == 1 and "no graph replay ranges" in err and "Traceback" not in err, err)
    rc, out, err = run(os.path.join(tmp, "none.db"))
    check("missing file: exit 1", rc == 1 and "no such file" in err, err)
    junk = os.path.join(tmp, "junk.db")
    with open(junk, "w") as f:
        f.write("not a database\n")
    rc, out, err = run(junk)
    check("not a database: exit 1", rc == 1 and "not a k3sim capture" in err and "Traceback" not in err, err)
    rc, out, err = run(junk + ".xz")
    check("missing xz: exit 1", rc == 1 and "no such file" in err, err)
    bad_xz = os.path.join(tmp, "bad.db.xz")
    with open(bad_xz, "w") as f:
        f.write("not xz\n")
    rc, out, err = run(bad_xz)
    check("not xz: exit 1", rc == 1 and "not an xz file" in err and "Traceback" not in err, err)
    rc, out, err = run(db, "--top", "0")
    check("--top 0 refused", rc == 1 and "positive" in err, err)

tap.done()
