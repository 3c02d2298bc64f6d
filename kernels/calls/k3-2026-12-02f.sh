#!/usr/bin/env bash
# Device call of issue 17 (2026-12-02f, lead; one nvidia-h200, <= 150 s): the dense mma.sync
# GEMM split over k (k3_gemm.cu tiled_split(), commit ad3a816 on branch lead22): test-moe-gpu's
# dense cases (the new test_gemm_dense_tiled_splitk among them) against float64, compute-sanitizer
# memcheck and racecheck of the split test, then `k3-bench --only gemm` with the split (default)
# and without (K3_GEMM_TILED_SPLIT=off) back to back, twice (A B A B), nvidia-smi beside.
# Results: bench/results/k3-kernels-h200-2026-12-02f/.
# From the repository root:  PACK=.gpu/l22 bash .gpu/l22/k3-2026-12-02f.sh
set -u
PACK=${PACK:-.gpu/l22}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-140}
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
run() { # run SECONDS-CAP LABEL cmd...
  local cap=$1 label=$2; shift 2
  local l; l=$(left); [ "$l" -gt 8 ] || { echo "== $label: skipped (no time)"; return; }
  [ "$cap" -lt "$l" ] || cap=$(( l - 4 ))
  echo "== $label (cap $cap s, at $(( $(date +%s) - t0 )) s)"
  local s; s=$(date +%s)
  timeout "$cap" "$@" 2>&1
  echo "== $label: exit $? in $(( $(date +%s) - s )) s"
}
{
  MOE_TEST_FILTER='*dense*' run 40 "test-moe-gpu *dense*" "$B/test-moe-gpu"
  MOE_TEST_FILTER='*splitk*' run 30 "memcheck *splitk*" compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test-moe-gpu"
  MOE_TEST_FILTER='*splitk*' run 30 "racecheck *splitk*" compute-sanitizer --tool racecheck --error-exitcode 9 "$B/test-moe-gpu"
  for i in 1 2; do
    run 25 "bench split $i" "$B/k3-bench" --only gemm -o "$OUT/gemm-split-$i.csv"
    K3_GEMM_TILED_SPLIT=off run 25 "bench nosplit $i" "$B/k3-bench" --only gemm -o "$OUT/gemm-nosplit-$i.csv"
  done
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID"
xz -9 "$OUT/smi.csv"
grep -E "^== |PASSED|FAILED|SUMMARY" "$OUT/log.txt"
echo "call: $(( $(date +%s) - t0 )) s"
