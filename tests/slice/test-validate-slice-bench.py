#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kernels/slice/validate-slice.py's bench cleaning on a synthetic capture: drop_bf16_experts takes
the BF16-weight routed experts only, drop_fp4_experts (--moe-bench) the MXFP4 ones only, each
returning its count; count_fp4_experts counts what is left; a --moe-bench or --extra-bench file
that does not exist exits 2 naming it, never a traceback.
usage: test-validate-slice-bench.py SOURCE_ROOT"""
import importlib.util
import os
import sqlite3
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "kernels", "slice", "validate-slice.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

tap = Tap()
check = tap.check

sys.path.insert(0, os.path.dirname(script))
spec = importlib.util.spec_from_file_location("validate_slice", script)
vs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vs)

RANGES = [
    "k3sim op=grouped_gemm m=4096 n=6144 k=3584 groups=896 touched=887 dtype=bf16 w_dtype=mxfp4",
    "k3sim op=grouped_gemm m=4096 n=3584 k=3072 groups=896 touched=887 dtype=bf16 w_dtype=mxfp4",
    "k3sim op=grouped_gemm m=4096 n=6144 k=3584 groups=896 touched=888 dtype=bf16 w_dtype=bf16",
    "k3sim op=grouped_gemm m=1536 n=128 k=512 groups=96 touched=96 dtype=bf16",
    "k3sim op=gemm m=256 n=12288 k=7168 dtype=bf16",
]

with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "bench.db")
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, globalTid INTEGER, text TEXT)")
    for i, t in enumerate(RANGES * 3):
        c.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 1, ?)", (i * 10, i * 10 + 5, t))
    c.commit()
    c.close()

    def left():
        c = sqlite3.connect(db)
        rows = [r[0] for r in c.execute("SELECT text FROM NVTX_EVENTS ORDER BY start")]
        c.close()
        return rows

    check("count before", vs.count_fp4_experts(db) == 6, str(vs.count_fp4_experts(db)))
    n = vs.drop_bf16_experts(db)
    rows = left()
    check("BF16-weight experts dropped: 3", n == 3 and not any("w_dtype=bf16" in r for r in rows), "%d %s" % (n, rows))
    check("the MXFP4 experts kept", vs.count_fp4_experts(db) == 6)
    n = vs.drop_fp4_experts(db)
    rows = left()
    check("MXFP4 experts dropped: 6", n == 6 and vs.count_fp4_experts(db) == 0, "%d %s" % (n, rows))
    check("the others kept (the 96-group grouped GEMM, the dense GEMM)",
          len(rows) == 6 and sum("groups=96 " in r for r in rows) == 3 and sum("op=gemm " in r for r in rows) == 3,
          str(rows))
    check("dropping again: 0", vs.drop_fp4_experts(db) == 0 and vs.drop_bf16_experts(db) == 0)

    res = os.path.join(tmp, "res")
    os.makedirs(res)
    for f in ("k3-slice.db.xz", "k3-slice.csv", "k3-h200.db.xz"):
        open(os.path.join(res, f), "w").close()
    for opt in ("--moe-bench", "--extra-bench"):
        missing = os.path.join(tmp, "no-such.db.xz")
        p = subprocess.run([sys.executable, script, "--results", res, opt, missing], capture_output=True, text=True)
        check("%s missing: exit 2 naming it" % opt,
              p.returncode == 2 and missing in p.stderr and "Traceback" not in p.stderr, p.stderr)

tap.done()
