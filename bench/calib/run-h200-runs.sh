#!/usr/bin/env bash
# One device call = one calibration "run" (issue 11): the same script in 3 separate calls gives
# the run-to-run spread that `k3sim calibrate` fits to and validates against (held out by run).
# From the repository root on one H200:
#   1. env: date, nvidia-smi -q, driver, CUDA, cuBLASLt (calib-grid's CSV header), commit;
#   2. nvidia-smi --query-gpu sampling every 100 ms in the background for the whole call (a
#      cross-check of the capture's NVML readings: SM/memory clock, power, temperature,
#      clocks-event reasons);
#   3. the full grid, burst regime, under `k3sim trace capture` (every GEMM K3 runs at TP 1..16,
#      grouped expert GEMMs at EP 8..64, BF16 + FP8, copies; NVTX in `k3sim op` syntax; GPU
#      clocks/power in K3SIM_GPU_METRICS; K3SIM_CAPTURE meta.regime=burst, meta.run=RUN);
#   4. the compute-bound subset, sustained regime (10 s preheat, a heater GEMM before every
#      instance), under capture the same way (meta.regime=sustained);
#   5. `k3sim trace summary` of both (the clocks/power line) into the log; databases shrunk to
#      < 16 MiB (bench/calib/shrink-db.py: API rows that launched nothing dropped, then xz).
# Built beforehand on the build machine (static libyaml/SQLite; cuBLASLt stays dynamic):
#   meson setup build-gpu -Dprefer_static=true -Dbuildtype=release
#   ninja -C build-gpu bench/calib-grid cli/k3sim trace/capture/libk3capture.so
# then, three times (ideally on different machines):
#   run(command="RUN=1 bash bench/calib/run-h200-runs.sh", carry=["build-gpu"])
# Files in $OUT (7, each < 16 MiB), named run<RUN>-*:
#   env.txt, log.txt, smi.csv, burst.csv, burst.db[.xz], sustained.csv, sustained.db[.xz]
# Time: ~2 min expected (`calib-grid --estimate`: burst ~15 s + sustained ~31 s of measuring,
# ~5 s start-up each, capture close and shrink ~20 s); the timeouts below cap it at ~5.5 min.
set -u
RUN=${RUN:-1}
OUT=${OUT:-$PWD/calib-runs-out}
B=${BUILD:-$PWD/build-gpu}
P=$OUT/run$RUN
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if ldd "$K3SIM_CAPTURE_LIB" | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
LOG=$P-log.txt
T0=$(date +%s.%N)
elapsed() { awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $T0}"; }
say() { echo "[$(elapsed) s] $*" | tee -a "$LOG"; }
: > "$LOG"

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  echo "run $RUN; commit $(git rev-parse HEAD 2>/dev/null || cat .git-commit 2>/dev/null || echo unknown)"
  echo "command: RUN=$RUN bash bench/calib/run-h200-runs.sh"
  nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,vbios_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.max_limit,temperature.gpu,memory.total --format=csv
  nvcc --version 2>/dev/null | tail -2
  "$B/bench/calib-grid" --version
  ls -l /usr/local/cuda/lib64/libcublasLt.so* 2>/dev/null | head -3
  uname -r; nproc; free -g | head -2
  echo "---- calib-grid --estimate (burst, full grid)"
  "$B/bench/calib-grid" --estimate
  echo "---- calib-grid --estimate (sustained, compute-bound subset)"
  "$B/bench/calib-grid" --estimate --regime sustained --compute-only
  echo "---- nvidia-smi -q"
  nvidia-smi -q
} > "$P-env.txt" 2>&1
head -6 "$P-env.txt" | tee -a "$LOG"

# nvidia-smi sampling beside the captures: the fields this driver knows, every 100 ms.
fields=""
for f in timestamp clocks.sm clocks.mem power.draw power.draw.instant temperature.gpu \
         clocks_event_reasons.active utilization.gpu pstate; do
  if nvidia-smi --query-gpu="$f" --format=csv,noheader >/dev/null 2>&1; then
    fields=${fields:+$fields,}$f
  fi
done
nvidia-smi --query-gpu="$fields" --format=csv,nounits -lms 100 > "$P-smi.csv" 2>&1 &
SMI=$!
say "nvidia-smi sampling ($fields) as pid $SMI"

capture() {  # name timeout budget_s args...
  local name=$1 limit=$2 budget=$3; shift 3
  local db=$P-$name.db csv=$P-$name.csv s rc
  s=$(date +%s.%N)
  say "== $name: capture calib-grid $* (budget ${budget} s, timeout ${limit} s)"
  timeout "$limit" "$B/cli/k3sim" trace capture -f --meta "regime=$name" --meta "run=$RUN" \
    --gpu-metrics-ms 20 -o "$db" -- "$B/bench/calib-grid" --out "$csv" --budget-s "$budget" "$@" \
    >> "$LOG" 2>&1
  rc=$?
  say "$name: capture rc=$rc in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s"
  if [ $rc -ne 0 ] && [ ! -s "$csv" ]; then
    say "$name: capture failed, plain calib-grid (no database)"
    rm -f "$db" "$db-wal" "$db-shm"
    timeout "$limit" "$B/bench/calib-grid" --out "$csv" --budget-s "$budget" "$@" >> "$LOG" 2>&1
    say "$name: plain rc=$?"
  fi
  grep -E '^# (done|stopped|gpu metrics|regime)' "$csv" 2>/dev/null | tee -a "$LOG"
  local rows skipped
  rows=$(grep -c '^"k3sim' "$csv" 2>/dev/null)
  skipped=$(grep -c '^# skipped' "$csv" 2>/dev/null)
  echo "$name: ${rows:-0} measured rows, ${skipped:-0} skipped" | tee -a "$LOG"
}

capture burst 200 150 --regime burst
capture sustained 110 75 --regime sustained --compute-only

kill "$SMI" 2>/dev/null
wait "$SMI" 2>/dev/null
say "nvidia-smi: $(($(wc -l < "$P-smi.csv") - 1)) readings"

for name in burst sustained; do
  db=$P-$name.db
  [ -f "$db" ] || continue
  say "== $name: summary"
  "$B/cli/k3sim" trace summary "$db" --top 8 --gaps 3 > "$P-summary.tmp" 2>&1
  head -30 "$P-summary.tmp" >> "$LOG"
  grep -E '^GPU [0-9]+ clocks' "$P-summary.tmp" | tee -a "$LOG"
  rm -f "$P-summary.tmp"
  python3 - "$db" <<'PY' 2>&1 | tee -a "$LOG"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "K3SIM_GPU_METRICS"):
    try:
        print(t, c.execute("select count(*) from " + t).fetchone()[0])
    except Exception as e:
        print(t, e)
for k in ("meta.regime", "gpu_metrics", "dropped_records"):
    r = c.execute("select value from K3SIM_CAPTURE where name = ?", (k,)).fetchone()
    print(k, "=", r[0] if r else None)
PY
  python3 bench/calib/shrink-db.py "$db" 2>&1 | tee -a "$LOG"
done

rm -f "$OUT"/*-wal "$OUT"/*-shm "$OUT"/*.tmp
say "done"
ls -la "$OUT" | tee -a "$LOG"
n=$(find "$OUT" -maxdepth 1 -type f | wc -l)
[ "$n" -le 8 ] || echo "warning: $n files in $OUT (8 come back)" | tee -a "$LOG"
find "$OUT" -maxdepth 1 -type f -size +16M -exec echo "warning: over 16 MiB: {}" \; | tee -a "$LOG"
