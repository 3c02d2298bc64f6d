#!/usr/bin/env python3
"""Shrink a trace database in place so it fits a transfer limit: drop CUDA API rows that launched
nothing (event records, synchronizations, allocations), which calibration never reads, then VACUUM.
Kernels, memcpys, memsets, NVTX ranges and the launching calls stay. Records what it did in
K3SIM_CAPTURE('shrunk')."""
import sqlite3
import sys

path = sys.argv[1]
c = sqlite3.connect(path)
before = c.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
c.execute("""delete from CUPTI_ACTIVITY_KIND_RUNTIME where correlationId not in (
    select correlationId from CUPTI_ACTIVITY_KIND_KERNEL
    union select correlationId from CUPTI_ACTIVITY_KIND_MEMCPY
    union select correlationId from CUPTI_ACTIVITY_KIND_MEMSET)""")
after = c.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
try:
    c.execute("insert or replace into K3SIM_CAPTURE(name, value) values ('shrunk', ?)",
              ("bench/calib/shrink-db.py: kept %d of %d API calls (those that launched work)" % (after, before),))
except sqlite3.Error as e:
    print("note:", e)
c.commit()
c.execute("vacuum")
c.close()
print("api calls: %d -> %d" % (before, after))
