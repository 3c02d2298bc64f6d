#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96; helper i28b, call 1 (one nvidia-h200,
# <= 140 s). Two heads of 8 warps a recurrent CTA, one CTA an SM (K3_KDA_RECUR_WARPS=2x8: 48 CTAs
# of 512 threads at 127 registers take 48 SMs' whole register files, launched before the intra
# kernel, which gets the other 84 SMs to itself) against the default overlapped pair (4-warp
# recurrent CTAs sharing SMs with intra CTAs) in one process (kda-bench --prefill-ab).
#   1. test-kda-gpu's prefill tests (float64; the new test_prefill_pinned)
#   2. T = 4K, 16K, H = 96, FP32 / BF16, 5 rounds: default, pin (2x8), pin3 (2x8 + intra v3),
#      pin4 (2x8, 4 stages)
#   3. memcheck + racecheck of the pinned test's small shapes
#   4. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 (FP32, BF16): default, pinned overlap, 2 rounds
# From the repository root:  PACK=.gpu/i28b bash .gpu/i28b/k3-2026-12-03b.sh
set -u
PACK=${PACK:-.gpu/i28b}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-118}
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
export LD_LIBRARY_PATH=$PWD/$PACK:$LD_LIBRARY_PATH
T=$B/test-kda-gpu
K=$B/kda-bench
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
run() { # run SECONDS-CAP LABEL cmd...: skips when the call's time is short, logs exit and seconds
  local cap=$1 label=$2; shift 2
  local l; l=$(left); [ "$l" -gt 8 ] || { echo "== $label: skipped (no time)"; return; }
  [ "$cap" -lt "$l" ] || cap=$(( l - 4 ))
  echo "== $label (cap $cap s, at $(( $(date +%s) - t0 )) s)"
  local s; s=$(date +%s)
  timeout "$cap" "$@" 2>&1
  echo "== $label: exit $? in $(( $(date +%s) - s )) s"
}
D='default:'
P='pin:K3_KDA_RECUR_WARPS=2x8'
P3='pin3:K3_KDA_RECUR_WARPS=2x8,K3_KDA_INTRA=v3'
P4='pin4:K3_KDA_RECUR_WARPS=2x8,K3_KDA_RECUR_STAGES=4'
PO='pinov:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_WARPS=2x8'
{
  KDA_TEST_FILTER='*prefill*' run 40 "prefill tests" "$T" > "$OUT/tests.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill" "$OUT/tests.txt"
  grep -E "err [0-9.e+-]+" "$OUT/tests.txt" | sort | uniq -c | sort -rn | head -5
  if grep -q "OK \] test_prefill_pinned" "$OUT/tests.txt"; then AB="$D;$P;$P3;$P4"; GAB="$D;$PO"
  else AB="$D"; GAB="$D"; echo "== pinned test failed: no pinned sets"; fi
  run 30 "4K,16K H=96" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 5 -o "$OUT/ab96.csv" | grep -E "^prefill.*N=1 "
  KDA_TEST_PIN_SMALL=1 KDA_TEST_FILTER='*prefill_pinned*' run 14 "memcheck pinned (small)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  KDA_TEST_PIN_SMALL=1 KDA_TEST_FILTER='*prefill_pinned*' run 14 "racecheck pinned (small)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  run 30 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16 \
    --prefill-ab "$GAB" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill"
  echo "== call: $(( $(date +%s) - t0 )) s"
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv" "$OUT/tests.txt"
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK|H=96" "$OUT/log.txt" | cut -c1-160 | head -n 150
