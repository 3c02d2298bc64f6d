#!/usr/bin/env bash
# One device call for the K3 layer kernels of issue 17 (MLA, LatentMoE, AttnRes, DSA; KDA's tests too):
#   1. every GPU test (kernels vs float64 references, and the capture tests), run directly;
#   2. compute-sanitizer memcheck on small cases of each new kernel (racecheck on MLA and the GEMMs);
#   3. the k3-bench grid (--quick unless K3_BENCH_FULL=1) under `k3sim trace capture`, every launch
#      NVTX-named in `k3sim op` syntax, and the trace's summary.
# Built beforehand on the build machine (nothing is compiled on the GPU machine):
#   meson setup build-gpu -Dprefer_static=true -Dbuildtype=release && ninja -C build-gpu
#   mkdir -p .gpu && cp /usr/lib/x86_64-linux-gnu/libcmocka.so.0 .gpu/
# then on the GPU machine, from the repository root (carry build-gpu and .gpu):
#   bash kernels/run-gpu-k3.sh
# (build-gpu is about 61 MB; `bash kernels/stage-gpu.sh` stages the 13 files it runs, ~25 MB, into
# .gpu/k3-build: carry .gpu alone and run BUILD=.gpu/k3-build bash kernels/run-gpu-k3.sh)
# Writes 5 files to $OUT (default ./k3-out): k3-env.txt, k3-tests.txt, k3-bench.csv, k3-bench.txt,
# k3-h200.db.xz (or k3-h200.db without xz). Expected: tests ~80 s, sanitizer ~50 s, bench ~80 s
# (each step under its own timeout; a hung kernel costs that step's limit, and says so).
# Environment: BUILD (build dir, default build-gpu), OUT, K3_BENCH_FULL=1, NO_SANITIZER=1,
# K3_BENCH_ARGS (more k3-bench arguments, e.g. --require-wgmma).
set -u
B=${BUILD:-$PWD/build-gpu}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if [ -f "$K3SIM_CAPTURE_LIB" ] && ldd "$K3SIM_CAPTURE_LIB" 2>/dev/null | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
T=$B/tests/kernels
missing=0
for f in "$T/test-mla-gpu" "$T/test-moe-gpu" "$T/test-attnres-gpu" "$T/test-dsa-gpu" "$T/test-layer-gpu" "$T/test-kda-gpu" \
         "$B/kernels/k3-bench" "$B/cli/k3sim"; do
  [ -x "$f" ] || { echo "run-gpu-k3: missing $f (build with: meson setup build-gpu -Dprefer_static=true -Dbuildtype=release && ninja -C build-gpu)"; missing=1; }
done
[ -f .gpu/libcmocka.so.0 ] || [ -f /usr/lib/x86_64-linux-gnu/libcmocka.so.0 ] || { echo "run-gpu-k3: libcmocka.so.0 not found (copy it into .gpu/)"; missing=1; }
[ "$missing" = 0 ] || exit 2
start=$(date +%s)

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
  command -v compute-sanitizer || echo "no compute-sanitizer"
} > "$OUT/k3-env.txt" 2>&1

pass=0 fail=0 skip=0
run_test() {  # name seconds cmd...
  local name=$1 limit=$2; shift 2
  local s; s=$(date +%s.%N)
  echo "== $name: $*"
  timeout "$limit" "$@" > "$OUT/.log" 2>&1
  local rc=$?
  grep -E "rel err|abs err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED) *\]|Failure|error|ERROR SUMMARY|ok:|FAIL|skipped|not built" "$OUT/.log" | tail -n 300 | sed 's/^/  /'
  [ $rc = 124 ] && echo "  TIMEOUT after $limit s"
  echo "== $name: exit $rc, $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s"
  case $rc in 0) pass=$((pass + 1)) ;; 77) skip=$((skip + 1)) ;; *) fail=$((fail + 1)) ;; esac
}
APP=$B/tests/capture/capture_app
CHECK=$B/tests/capture/capture_check
{
  run_test mla-gpu 90 "$T/test-mla-gpu"
  run_test moe-gpu 150 "$T/test-moe-gpu"
  run_test attnres-gpu 40 "$T/test-attnres-gpu"
  run_test dsa-gpu 60 "$T/test-dsa-gpu"
  run_test layer-gpu 30 "$T/test-layer-gpu"
  run_test kda-gpu 60 "$T/test-kda-gpu"
  if [ -x "$CHECK" ]; then
    run_test capture-basic 30 "$CHECK" basic "$APP"
    run_test capture-copy 30 "$CHECK" copy "$APP" 1073741824
    run_test capture-launches 30 "$CHECK" launches "$APP" 1000000
    run_test capture-sigterm 30 "$CHECK" sigterm "$APP" 10000
    run_test capture-reset 30 "$CHECK" reset "$APP" 10000
    run_test capture-busy 30 "$CHECK" busy "$APP"
  fi
  echo "gpu suite: $pass passed, $fail failed, $skip skipped"
  if command -v compute-sanitizer >/dev/null 2>&1 && [ -z "${NO_SANITIZER:-}" ]; then
    echo "== compute-sanitizer (small cases)"
    san() {  # tool test env-var filter [seconds]
      local s; s=$(date +%s)
      env "$3=$4" timeout "${5:-45}" compute-sanitizer --tool "$1" --error-exitcode 9 "$T/test-$2-gpu" > "$OUT/.log" 2>&1
      local rc=$?
      echo "$1 $2 '$4': exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/.log" | tail -1)"
      [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED" "$OUT/.log" | head -12 | sed 's/^/    /'
    }
    san memcheck mla MLA_TEST_FILTER '*eight_tokens*'
    san memcheck mla MLA_TEST_FILTER '*sparse_fp8*'
    san memcheck moe MOE_TEST_FILTER '*small*'
    san memcheck moe MOE_TEST_FILTER '*wgmma*' 150
    san memcheck attnres ATTNRES_TEST_FILTER '*edges*'
    san memcheck dsa DSA_TEST_FILTER '*small_topk*'
    san memcheck layer LAYER_TEST_FILTER '*'
    san racecheck mla MLA_TEST_FILTER '*one_split*'
    san racecheck mla MLA_TEST_FILTER '*eight_tokens*'
  fi
} > "$OUT/k3-tests.txt" 2>&1
rm -f "$OUT/.log"

grid=--quick
[ "${K3_BENCH_FULL:-0}" = 1 ] && grid=
{
  s=$(date +%s)
  timeout 150 "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" $grid ${K3_BENCH_ARGS:-} -o "$OUT/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
} > "$OUT/k3-bench.txt" 2>&1
if command -v xz >/dev/null 2>&1 && [ -f "$OUT/k3-h200.db" ]; then
  xz -T0 -f "$OUT/k3-h200.db"
fi

# The short table.
grep -E "^== .*exit|gpu suite|^(memcheck|racecheck)" "$OUT/k3-tests.txt"
grep -E "^tiled GEMM|^copy ceiling|^mla_decode|^grouped_gemm|^gemm|^dsa_decode|^attnres|^moe_|cublasLt|capture exit|dropped" "$OUT/k3-bench.txt" | head -70
echo "run-gpu-k3: $(( $(date +%s) - start )) s; files:"
ls -la "$OUT"
[ "$fail" = 0 ]
