#!/usr/bin/env bash
# One device call on nvidia-h200-x2 (2026-11-29): the two-process capture check
# (bench/capture-nccl2.sh), the collective + EP grid under capture (bench/calib/nccl-grid.sh),
# the same grid without capture (CUDA-event times only: what capture adds on the host), and the
# per-rank databases shrunk (API calls that launched nothing dropped) and compressed.
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
n=$(nvidia-smi -L | wc -l)
NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 timeout 200 \
  python3 -m torch.distributed.run --standalone --nproc_per_node="$n" bench/calib/nccl-grid.py \
  --out "$OUT/nccl-h200x$n-nocapture.csv" "$@" 2>&1 | tail -3
for f in /tmp/grid/nccl-h200x*.r*.db; do python3 bench/calib/shrink-db.py "$f"; done
(cd /tmp/grid && tar cJf "$OUT/nccl-dbs.tar.xz" nccl-h200x*.r*.db) 2>&1 | tail -2
ls -la "$OUT"
