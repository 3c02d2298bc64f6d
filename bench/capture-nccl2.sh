#!/usr/bin/env bash
# Issue 3, multi-process capture: a 2-process NCCL all-reduce on nvidia-h200-x2 under
# `k3sim trace capture` gives one database per rank (pid and rank in the name), which
# `k3sim trace merge` puts on one timeline. Not run yet: that machine kind was withheld.
# Run from the repository root with build-gpu built as for bench/capture-h200.sh.
set -eu
OUT=${OUT:-$PWD/capture-nccl-out}
mkdir -p "$OUT"
B=${BUILD:-$PWD/build-gpu}
# NVLink multicast stays off on these machines (KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
rm -f /tmp/nccl.*.db
# torchrun itself does not use CUDA; each worker writes /tmp/nccl.r<rank>.p<pid>.db
"$B/cli/k3sim" trace capture -o /tmp/nccl.db --force -- \
  torchrun --standalone --nproc_per_node 2 bench/capture-nccl-allreduce.py \
  2>&1 | tee "$OUT/capture-nccl-run.txt"
ls -la /tmp/nccl.*.db | tee -a "$OUT/capture-nccl-run.txt"
n=$(ls /tmp/nccl.r*.db | wc -l)
[ "$n" = 2 ] || { echo "expected 2 databases, got $n" | tee -a "$OUT/capture-nccl-run.txt"; exit 1; }
"$B/cli/k3sim" trace merge /tmp/nccl.r*.db -o /tmp/nccl-merged.db 2>&1 | tee -a "$OUT/capture-nccl-run.txt"
"$B/cli/k3sim" trace summary /tmp/nccl-merged.db 2>&1 | tee "$OUT/capture-nccl-summary.txt"
python3 - /tmp/nccl-merged.db <<'PY' | tee -a "$OUT/capture-nccl-summary.txt"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute(
    "SELECT k.globalPid, k.deviceId, count(*), min(k.start), max(k.end) "
    "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
    "WHERE s.value LIKE '%nccl%' GROUP BY 1, 2").fetchall()
for r in rows:
    print("process %d device %d: %d NCCL kernels, %.3f..%.3f s" % (r[0] >> 24, r[1], r[2],
          r[3] / 1e9, r[4] / 1e9))
ok = len(rows) == 2 and all(r[2] >= 20 for r in rows)
# one timeline: the two ranks' all-reduces overlap in time
a, b = rows[0], rows[1]
ok = ok and a[3] < b[4] and b[3] < a[4]
print("RESULT", "PASS" if ok else "FAIL")
PY
