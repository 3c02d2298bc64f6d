#!/usr/bin/env bash
# One device call for the session's GPU checks (run from the repository root on the GPU machine,
# with a build made here: meson setup build-gpu -Dprefer_static=true -Dbuildtype=release, and
# libcmocka.so.0 copied into .gpu/; carry build-gpu and .gpu):
#   1. the meson 'gpu' suite, run directly (the build tree's absolute paths are this machine's):
#      KDA kernels vs float64 references, and the capture tests (incl. DRAM bytes of a copy);
#   2. the KDA bench (quick grid) under `k3sim trace capture`, every launch NVTX-named in
#      `k3sim op` syntax, and the trace's summary.
# Everything goes to $OUT; the last lines are a short table.
set -u
OUT=${OUT:-$PWD/gpu-out}
B=${B:-$PWD/build-gpu}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if ldd "$K3SIM_CAPTURE_LIB" | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv
  nvcc --version | tail -1
  uname -r
} > "$OUT/gpu-env.txt" 2>&1

pass=0 fail=0 skip=0
run_test() {  # name cmd...
  local name=$1; shift
  local s; s=$(date +%s.%N)
  echo "== $name: $*"
  timeout 300 "$@" 2>&1 | tail -n 60 | sed 's/^/  /'
  local rc=${PIPESTATUS[0]}
  echo "== $name: exit $rc, $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
  case $rc in 0) pass=$((pass + 1)) ;; 77) skip=$((skip + 1)) ;; *) fail=$((fail + 1)) ;; esac
}
APP=$B/tests/capture/capture_app
CHECK=$B/tests/capture/capture_check
{
  run_test kda-gpu "$B/tests/kernels/test-kda-gpu"
  run_test capture-basic "$CHECK" basic "$APP"
  run_test capture-copy "$CHECK" copy "$APP" 1073741824
  run_test capture-launches "$CHECK" launches "$APP" 1000000
  run_test capture-sigterm "$CHECK" sigterm "$APP" 10000
  run_test capture-reset "$CHECK" reset "$APP" 10000
  run_test capture-busy "$CHECK" busy "$APP"
  echo "gpu suite: $pass passed, $fail failed, $skip skipped"
} > "$OUT/gpu-tests.txt" 2>&1

{
  s=$(date +%s.%N)
  "$B/cli/k3sim" trace capture -o "$OUT/kda-h200.db" --force -- \
    "$B/kernels/kda-bench" --quick -o "$OUT/kda-bench.csv"
  echo "capture exit $? in $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
  "$B/cli/k3sim" trace summary "$OUT/kda-h200.db" --top 15
} > "$OUT/kda-capture.txt" 2>&1

grep -E '^== .*exit|gpu suite|metric|dram' "$OUT/gpu-tests.txt"
grep -E 'capture exit|kernels|dropped' "$OUT/kda-capture.txt" | head -8
ls -la "$OUT"
