#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96; helper i28b, call 2 (one nvidia-h200,
# <= 140 s): the second same-process A/B of call 1's sets (the two-call rule for a default),
# more rounds, then the grid's smaller head counts again.
#   1. T = 4K, 16K, H = 96, FP32 / BF16, 6 rounds: $AB (default: default, pin, pin3)
#   2. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96: $GAB (default: default, pinned overlap), 2 rounds
#   3. test_prefill_pinned again (float64, bit for bit against serial)
# From the repository root:  PACK=.gpu/i28b bash .gpu/i28b/k3-2026-12-03b-2.sh
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
AB=${AB:-'default:;pin:K3_KDA_RECUR_WARPS=2x8;pin3:K3_KDA_RECUR_WARPS=2x8,K3_KDA_INTRA=v3'}
GAB=${GAB:-'default:;pinov:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_WARPS=2x8'}
{
  run 40 "4K,16K H=96" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 6 -o "$OUT/ab96.csv" | grep -E "^prefill.*N=1 "
  run 35 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16 \
    --prefill-ab "$GAB" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill"
  KDA_TEST_FILTER='*prefill_pinned*' run 30 "pinned test" "$T" > "$OUT/tests.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill" "$OUT/tests.txt"
  echo "== call: $(( $(date +%s) - t0 )) s"
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv" "$OUT/tests.txt"
grep -E "^==|FAILED|PASSED|H=96" "$OUT/log.txt" | cut -c1-160 | head -n 150
