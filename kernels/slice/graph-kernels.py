#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-kernel times of the K3 slice's CUDA-graph decode replays beside the same kernels run eagerly.

usage: graph-kernels.py SLICE_DB [--batch B] [--ctx C] [--top N]

SLICE_DB is a slice capture (k3-slice.db or k3-slice.db.xz: `k3sim trace capture` of
kernels/k3-slice). For the graph step of batch B at context C (its `k3-slice decode graph b=B
ctx=C ...` NVTX ranges, one a replay) it prints, replay by replay, the time of the N kernels that
take the most, and beside them the same kernels' mean time in the eager step's op ranges (`k3sim
op=... b=B ... ctx=C ...` where the op names the context; other ops of that batch otherwise), with
the SM clock the capture recorded in each replay (K3SIM_GPU_METRICS). A graph step slower than its
eager step shows here as kernels slower replay by replay (power history) or as kernels the eager
step does not run.
"""
import argparse
import lzma
import os
import shutil
import sqlite3
import sys
import tempfile


def die(msg):
    sys.stderr.write("graph-kernels: %s\n" % msg)
    sys.exit(1)


def open_db(path, tmp):
    if not os.path.isfile(path):
        die("%s: no such file" % path)
    if path.endswith(".xz"):
        out = os.path.join(tmp, "slice.db")
        try:
            with lzma.open(path) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
        except (lzma.LZMAError, EOFError) as e:
            die("%s: not an xz file (%s)" % (path, e))
        path = out
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        db.execute("SELECT 1 FROM NVTX_EVENTS LIMIT 1")
        db.execute("SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1")
    except sqlite3.DatabaseError as e:
        die("%s: not a k3sim capture (%s)" % (path, e))
    return db


# kernels whose launch (runtime call) lies inside a range, by the range's start
KERNELS_IN = """
SELECT n.start, s.value, k.end - k.start
FROM NVTX_EVENTS n
JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start BETWEEN n.start AND n.end
JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
JOIN StringIds s ON s.id = k.shortName
WHERE n.text LIKE ?
"""


def clock_in(db, start, end):
    try:
        rows = db.execute("SELECT smClockMHz FROM K3SIM_GPU_METRICS WHERE timestamp BETWEEN ? AND ? "
                          "ORDER BY smClockMHz", (start, end)).fetchall()
    except sqlite3.DatabaseError:
        return None
    return rows[len(rows) // 2][0] if rows else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--ctx", type=int, default=65536)
    ap.add_argument("--top", type=int, default=6)
    a = ap.parse_args()
    if a.batch < 1 or a.ctx < 1 or a.top < 1:
        die("--batch, --ctx and --top must be positive")
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(a.db, tmp)
        pat = "k3-slice decode graph b=%d ctx=%d %%" % (a.batch, a.ctx)
        replays = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE text LIKE ? ORDER BY start",
                             (pat,)).fetchall()
        if not replays:
            die("%s: no graph replay ranges `k3-slice decode graph b=%d ctx=%d ...`" % (a.db, a.batch, a.ctx))
        per = {}
        for start, name, d in db.execute(KERNELS_IN, (pat,)):
            per.setdefault(start, {}).setdefault(name, []).append(d)
        total = {}
        for ks in per.values():
            for name, ds in ks.items():
                total[name] = total.get(name, 0) + sum(ds)
        top = sorted(total, key=lambda n: -total[n])[:a.top]
        # eager: ranges of this batch that name the context, else every op range of this batch
        eager = {}
        for pat_e in ("k3sim op=%% b=%d %%ctx=%d %%" % (a.batch, a.ctx - 1),
                      "k3sim op=%% b=%d %%ctx=%d %%" % (a.batch, a.ctx)):
            for _, name, d in db.execute(KERNELS_IN, (pat_e,)):
                eager.setdefault(name, []).append(d)
        print("graph decode b=%d ctx=%d: %d replays; kernel time a replay (us), the kernel's count in it"
              % (a.batch, a.ctx, len(replays)))
        print("| replay | SM MHz | step (us) | " + " | ".join(top) + " |")
        print("| ---: | ---: | ---: |" + " ---: |" * len(top))
        for i, (start, end) in enumerate(replays):
            ks = per.get(start, {})
            mhz = clock_in(db, start, end)
            cells = ["%.0f (%d)" % (sum(ks.get(n, [])) / 1e3, len(ks.get(n, []))) for n in top]
            print("| %d | %s | %.0f | %s |" % (i + 1, "%.0f" % mhz if mhz else "-", (end - start) / 1e3,
                                                " | ".join(cells)))
        cells = []
        for n in top:
            ds = eager.get(n)
            cells.append("%.0f a kernel" % (sum(ds) / len(ds) / 1e3) if ds else "-")
        print("| eager ranges naming ctx | | | %s |" % " | ".join(cells))
        last = per.get(replays[-1][0], {})
        cells = ["%.0f a kernel" % (sum(last[n]) / len(last[n]) / 1e3) if last.get(n) else "-" for n in top]
        print("| last replay | | | %s |" % " | ".join(cells))


if __name__ == "__main__":
    main()
