#!/usr/bin/env python3
"""Copy of a KDA bench capture that keeps only the verify + replay NVTX ranges ("k3sim op=kda_decode
... t=N" with N > 1), so that `k3sim calibrate` can add the verify points of a new capture to a
preset whose decode and prefill points come from an earlier one (no op measured twice).
usage: verify-only-db.py IN.db OUT.db"""
import re
import shutil
import sqlite3
import sys

src, dst = sys.argv[1], sys.argv[2]
shutil.copyfile(src, dst)
c = sqlite3.connect(dst)
keep = re.compile(r"^k3sim op=kda_decode .*\bt=([0-9]+)\b")
rows = c.execute("select rowid, coalesce(text, (select value from StringIds where id = textId)) "
                 "from NVTX_EVENTS").fetchall()
drop = [(r,) for r, t in rows if not (t and keep.match(t) and int(keep.match(t).group(1)) > 1)]
c.executemany("delete from NVTX_EVENTS where rowid = ?", drop)
c.commit()
c.execute("vacuum")
print("NVTX ranges: kept %d of %d" % (len(rows) - len(drop), len(rows)))
