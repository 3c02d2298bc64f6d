#!/usr/bin/env bash
# Issue 20 on nvidia-h200-x2, one device call (~4 min expected, each step under its own timeout,
# the optional captures skipped when time runs short):
#   1. KCP: kcp-x2 --check (2-rank KDA context-parallel prefill vs single GPU vs float64) + timings
#      at T = 64K, 256K (H = 96) and 1M (H = 32);
#   2. overlap: bench/x2/overlap.py on 2 processes (torchrun): EP all-to-all stream beside grouped
#      expert GEMM stream, alone and together, at 64, 256, 4096, 16384 tokens per rank;
#   3. the same overlap run (--reps 1) and a short KCP run under `k3sim trace capture` (one
#      database per rank, merged, summarized), databases shrunk and compressed;
#   4. bench/x2/compare.py: predicted (x2-predict, the step timeline) vs measured tables.
# Build and stage here (nothing is compiled on the GPU machine):
#   meson setup build-gpu -Dprefer_static=true -Dbuildtype=release && ninja -C build-gpu
#   bash bench/x2/stage-x2.sh            # -> .gpu/x2-build (~6 MB)
# then:
#   run(kind="nvidia-h200-x2", carry=[".gpu"], timeout_s=600,
#       command="bash bench/x2/run-x2-overlap-kcp.sh")
# Writes 8 files to $OUT (default ./x2-out): env.txt, kcp.txt, kcp.csv, overlap.txt, overlap.csv,
# capture-summary.txt, x2-dbs.tar.xz, compare.md. Success: kcp.txt ends with "RESULT PASS";
# overlap.csv has 8 rows (4 token counts x 2 ranks); compare.md has both tables.
set -u
B=${BUILD:-$PWD/.gpu/x2-build}
OUT=${OUT:-$PWD/x2-out}
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if [ -f "$K3SIM_CAPTURE_LIB" ] && ldd "$K3SIM_CAPTURE_LIB" 2>/dev/null | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
for f in "$B/kernels/kcp-x2" "$B/bench/x2-predict" "$B/cli/k3sim" "$K3SIM_CAPTURE_LIB"; do
  [ -f "$f" ] || { echo "run-x2-overlap-kcp: missing $f (bash bench/x2/stage-x2.sh)"; exit 2; }
done
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,memory.total,power.limit --format=csv
  nvidia-smi topo -m 2>&1 | head -6
  timeout 60 python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "devices", torch.cuda.device_count(), "grouped_mm", hasattr(torch, "_grouped_mm"))'
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

echo "== [$(el) s] 1. KCP (kcp-x2 --check)"
timeout 120 "$B/kernels/kcp-x2" --check --reps 3 --csv "$OUT/kcp.csv" > "$OUT/kcp.txt" 2>&1
echo "kcp-x2 rc=$?" >> "$OUT/kcp.txt"
cat "$OUT/kcp.txt"

echo "== [$(el) s] 2. overlap (no capture)"
timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node=2 bench/x2/overlap.py \
  --out "$OUT/overlap.csv" > "$OUT/overlap.txt" 2>&1
echo "overlap rc=$?" >> "$OUT/overlap.txt"
grep -E "^overlap|rc=|Error|error" "$OUT/overlap.txt" | tail -20

echo "== [$(el) s] 3. captures"
rm -f /tmp/x2ov*.db /tmp/x2kcp*.db
if [ "$(el)" -lt 300 ]; then
  timeout 130 "$B/cli/k3sim" trace capture -o /tmp/x2ov.db --force -- \
    python3 -m torch.distributed.run --standalone --nproc_per_node=2 bench/x2/overlap.py \
    --out /tmp/overlap-capture.csv --reps 1 >> "$OUT/overlap.txt" 2>&1
  echo "overlap capture rc=$?" >> "$OUT/overlap.txt"
  cat /tmp/overlap-capture.csv >> "$OUT/overlap.txt" 2>/dev/null
else
  echo "overlap capture skipped at $(el) s" >> "$OUT/overlap.txt"
fi
if [ "$(el)" -lt 420 ]; then
  timeout 45 "$B/cli/k3sim" trace capture -o /tmp/x2kcp.db --force -- \
    "$B/kernels/kcp-x2" --reps 1 --case 65536:96 >> "$OUT/kcp.txt" 2>&1
  echo "kcp capture rc=$?" >> "$OUT/kcp.txt"
fi
ls -la /tmp/x2ov*.db /tmp/x2kcp*.db 2>&1 | tee "$OUT/capture-summary.txt"
ranks=$(ls /tmp/x2ov.r*.db 2>/dev/null)
if [ -n "$ranks" ]; then
  timeout 45 "$B/cli/k3sim" trace merge $ranks -o /tmp/x2ov-merged.db >> "$OUT/capture-summary.txt" 2>&1
  timeout 45 "$B/cli/k3sim" trace summary /tmp/x2ov-merged.db >> "$OUT/capture-summary.txt" 2>&1
  rm -f /tmp/x2ov-merged.db
fi
for d in /tmp/x2kcp*.db; do
  [ -f "$d" ] && timeout 30 "$B/cli/k3sim" trace summary "$d" >> "$OUT/capture-summary.txt" 2>&1
done
for d in /tmp/x2ov*.db /tmp/x2kcp*.db; do
  [ -f "$d" ] && timeout 30 python3 bench/calib/shrink-db.py "$d" --max-mib 1000 >> "$OUT/capture-summary.txt" 2>&1
done
(cd /tmp && ls x2ov*.db x2kcp*.db >/dev/null 2>&1 && timeout 60 tar cJf "$OUT/x2-dbs.tar.xz" x2ov*.db x2kcp*.db) 2>&1 | tail -2
ls -la "$OUT/x2-dbs.tar.xz" 2>/dev/null
if [ -f "$OUT/x2-dbs.tar.xz" ] && [ "$(stat -c %s "$OUT/x2-dbs.tar.xz")" -gt 16000000 ]; then
  echo "x2-dbs.tar.xz over 16 MB: dropped (the summaries stay)" | tee -a "$OUT/capture-summary.txt"
  rm -f "$OUT/x2-dbs.tar.xz"
fi

echo "== [$(el) s] 4. predicted vs measured"
{
  [ -f "$OUT/overlap.csv" ] && timeout 30 python3 bench/x2/compare.py --predict "$B/bench/x2-predict" --overlap "$OUT/overlap.csv"
  [ -f "$OUT/kcp.csv" ] && timeout 30 python3 bench/x2/compare.py --predict "$B/bench/x2-predict" --kcp "$OUT/kcp.csv"
} > "$OUT/compare.md" 2>&1
cat "$OUT/compare.md"
echo "== [$(el) s] done"
ls -la "$OUT"
