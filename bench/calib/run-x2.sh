#!/usr/bin/env bash
# One device call on nvidia-h200-x2 (2026-11-29): the two-process capture check
# (bench/capture-nccl2.sh) and the collective + EP grid (bench/calib/nccl-grid.sh).
# run(kind="nvidia-h200-x2", carry=["build-gpu"], command="bash bench/calib/run-x2.sh")
set -u
export BUILD=${BUILD:-$PWD/build-gpu}
export OUT=${OUT:-$PWD/x2-out}
mkdir -p "$OUT"
python3 -c 'import torch; print("devices", torch.cuda.device_count())'
OUT=/tmp/cap2 bash bench/capture-nccl2.sh > "$OUT/capture-nccl2.txt" 2>&1
echo "capture-nccl2 rc=$?"; tail -5 "$OUT/capture-nccl2.txt"
cat /tmp/cap2/capture-nccl-summary.txt >> "$OUT/capture-nccl2.txt" 2>/dev/null
OUT=/tmp/grid bash bench/calib/nccl-grid.sh "$@" 2>&1 | tee "$OUT/nccl-grid.log" | tail -40
cp /tmp/grid/*.csv /tmp/grid/nccl-env.txt "$OUT/" 2>/dev/null
# the databases, compressed (the per-rank ones and the merged one)
(cd /tmp/grid && tar cJf "$OUT/nccl-dbs.tar.xz" *.db) 2>&1 | tail -2
ls -la "$OUT"
