#!/usr/bin/env bash
# Issue 11's runs use bench/calib/run-h200-runs.sh (full grid burst + sustained subset, GPU clocks
# and power, one call per run); this is the 2026-11-29 call, kept as it was run.
# One device call for the calibration grids (issue 5), from the repository root on an H200:
#   1. calib-grid (cuBLASLt GEMMs BF16/FP8 over K3 shapes, D2D copies) under `k3sim trace capture`,
#      each measured instance an NVTX range in `k3sim op` syntax (falls back to the plain run);
#   2. calib-grid again without capture: run-to-run spread and capture overhead (CSV only);
#   3. the KDA kernels' bench grid (kernels/kda/bench, CSV), when built.
# Built beforehand on the build machine (static libyaml/SQLite; cuBLASLt stays dynamic):
#   meson setup build-gpu-cal -Dprefer_static=true -Dbuildtype=release
#   ninja -C build-gpu-cal bench/calib-grid cli/k3sim trace/capture/libk3capture.so kernels/kda-bench
# then: run(command="bash bench/calib/run-h200.sh", carry=["build-gpu-cal"]).
# At most 8 files come back (16 MiB each): env, log, db, csv x2, kda csv.
set -u
OUT=${OUT:-$PWD/calib-out}
B=${BUILD:-$PWD/build-gpu-cal}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if ldd "$K3SIM_CAPTURE_LIB" | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$(find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
LOG=$OUT/calib-h200.log
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  echo "command: k3sim trace capture -o calib-h200.db -- calib-grid --out calib-h200.csv"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,memory.total --format=csv
  nvcc --version 2>/dev/null | tail -2
  uname -r; nproc
  echo "---- nvidia-smi -q"
  nvidia-smi -q
} > "$OUT/calib-h200-env.txt" 2>&1
head -8 "$OUT/calib-h200-env.txt"

s=$(date +%s.%N)
echo "== capture calib-grid" | tee "$LOG"
timeout 180 "$B/cli/k3sim" trace capture -f -o "$OUT/calib-h200.db" -- \
  "$B/bench/calib-grid" --out "$OUT/calib-h200.csv" >>"$LOG" 2>&1
rc=$?
echo "capture rc=$rc, $(awk "BEGIN{print $(date +%s.%N) - $s}") s" | tee -a "$LOG"
if [ $rc -ne 0 ] || [ ! -s "$OUT/calib-h200.db" ]; then
  echo "== capture failed: plain calib-grid" | tee -a "$LOG"
  rm -f "$OUT/calib-h200.db"
  timeout 90 "$B/bench/calib-grid" --out "$OUT/calib-h200.csv" >>"$LOG" 2>&1
  echo "plain rc=$?" | tee -a "$LOG"
fi
tail -3 "$LOG"

s=$(date +%s.%N)
echo "== calib-grid, no capture (repeat)" | tee -a "$LOG"
timeout 60 "$B/bench/calib-grid" --out "$OUT/calib-h200-rep.csv" >>"$LOG" 2>&1
echo "repeat rc=$?, $(awk "BEGIN{print $(date +%s.%N) - $s}") s" | tee -a "$LOG"

if [ -x "$B/kernels/kda-bench" ]; then
  s=$(date +%s.%N)
  echo "== kda-bench" | tee -a "$LOG"
  timeout 60 "$B/kernels/kda-bench" -o "$OUT/kda-h200.csv" >>"$LOG" 2>&1
  echo "kda-bench rc=$?, $(awk "BEGIN{print $(date +%s.%N) - $s}") s" | tee -a "$LOG"
fi

# Files over 16 MiB do not come back: keep only the API calls that launched something.
if [ -f "$OUT/calib-h200.db" ]; then
  ls -la "$OUT/calib-h200.db" | tee -a "$LOG"
  if [ "$(stat -c %s "$OUT/calib-h200.db")" -gt 16000000 ]; then
    python3 bench/calib/shrink-db.py "$OUT/calib-h200.db" 2>&1 | tee -a "$LOG"
    ls -la "$OUT/calib-h200.db" | tee -a "$LOG"
  fi
  python3 - "$OUT/calib-h200.db" <<'PY' 2>&1 | tee -a "$LOG"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
    try:
        print(t, c.execute("select count(*) from " + t).fetchone()[0])
    except Exception as e:
        print(t, e)
PY
fi
ls -la "$OUT"
