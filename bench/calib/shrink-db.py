#!/usr/bin/env python3
"""Shrink a trace database in place so it fits a transfer limit (16 MiB a file from a device call).

1. Fold a leftover WAL journal in (a capture cut short by a timeout) and switch to a single file.
2. Drop CUDA API rows that launched nothing (event records, synchronizations, allocations), which
   calibration never reads; kernels, memcpys, memsets, NVTX ranges, GPU clock readings and the
   launching calls stay. VACUUM.
3. Still over the limit (--max-mib, default 15.5): compress it to DB.xz (xz -dk restores it) and
   remove DB.

Records what it did in K3SIM_CAPTURE('shrunk'). usage: shrink-db.py DB [--max-mib N]"""
import lzma
import os
import sqlite3
import sys


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    path = argv[1]
    max_mib = 15.5
    if len(argv) >= 4 and argv[2] == "--max-mib":
        max_mib = float(argv[3])
    limit = int(max_mib * (1 << 20))
    if not os.path.isfile(path):
        print("shrink-db: %s: no such file" % path, file=sys.stderr)
        return 1
    c = sqlite3.connect(path)
    c.execute("pragma wal_checkpoint(truncate)")
    c.execute("pragma journal_mode=delete")
    size0 = os.path.getsize(path)
    notes = []
    if size0 > limit:
        before = c.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
        c.execute("""delete from CUPTI_ACTIVITY_KIND_RUNTIME where correlationId not in (
            select correlationId from CUPTI_ACTIVITY_KIND_KERNEL
            union select correlationId from CUPTI_ACTIVITY_KIND_MEMCPY
            union select correlationId from CUPTI_ACTIVITY_KIND_MEMSET)""")
        after = c.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
        notes.append("kept %d of %d API calls (those that launched work)" % (after, before))
        print("api calls: %d -> %d" % (before, after))
    try:
        if notes:
            c.execute("insert or replace into K3SIM_CAPTURE(name, value) values ('shrunk', ?)",
                      ("bench/calib/shrink-db.py: " + "; ".join(notes),))
    except sqlite3.Error as e:
        print("note:", e)
    c.commit()
    if notes:
        c.execute("vacuum")
    c.close()
    for side in ("-wal", "-shm", "-journal"):
        if os.path.exists(path + side):
            os.remove(path + side)
    size1 = os.path.getsize(path)
    print("%s: %d -> %d bytes" % (path, size0, size1))
    if size1 > limit:
        with open(path, "rb") as f, lzma.open(path + ".xz.tmp", "wb", preset=6) as out:
            while True:
                b = f.read(1 << 22)
                if not b:
                    break
                out.write(b)
        os.replace(path + ".xz.tmp", path + ".xz")
        os.remove(path)
        size2 = os.path.getsize(path + ".xz")
        print("%s.xz: %d bytes (xz -dk restores the database)" % (path, size2))
        if size2 > limit:
            print("shrink-db: warning: %s.xz is still over %.1f MiB" % (path, max_mib), file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
