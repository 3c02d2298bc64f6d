#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96; helper i27b, call 2 (one nvidia-h200,
# <= 140 s; the pack of call 1, commit 3f48eb7). Call 1: the lean intra kernel (K3_KDA_INTRA=v3)
# ends 100-170 us earlier beside the recurrent kernel, which then trails it by 145-180 us (v2:
# 9-47): the pair is set by the recurrent kernel's steps beside the intra kernel. This call:
#   1. test-kda-gpu's prefill tests (float64)
#   2. T = 16K and 4K, H = 96, FP32 / BF16, 3 rounds: default (v2), v3, v3 with 8-warp recurrent
#      CTAs, v3 with 4 stages, v3 with both, v2 with 8-warp CTAs
#   3. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 (FP32, BF16): default, v3, 2 rounds
#   4. memcheck of the whole lean test (time left)
# From the repository root:  PACK=.gpu/i27b bash .gpu/i27b/k3-2026-12-02zb-2.sh
set -u
PACK=${PACK:-.gpu/i27b}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-125}
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
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
V3='v3:K3_KDA_INTRA=v3'
V3W8='v3w8:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=8'
V3S4='v3s4:K3_KDA_INTRA=v3,K3_KDA_RECUR_STAGES=4'
W8='w8:K3_KDA_RECUR_WARPS=8'
V3W8S4='v3w8s4:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=8,K3_KDA_RECUR_STAGES=4'
{
  KDA_TEST_FILTER='*prefill*' run 32 "prefill tests" "$T" > "$OUT/tests.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill" "$OUT/tests.txt"
  if grep -q "OK \] test_prefill_lean" "$OUT/tests.txt"; then
    AB="$D;$V3;$V3W8;$V3S4;$V3W8S4;$W8"; GAB="$D;$V3"
  else AB="$D;$W8"; GAB="$D"; echo "== lean test failed: no v3 sets"; fi
  run 50 "16K, 4K H=96" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/ab96.csv" | grep -E "^prefill.*N=1 "
  run 35 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16 \
    --prefill-ab "$GAB" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill"
  KDA_TEST_FILTER='*prefill_lean*' run 30 "memcheck lean (whole)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv" "$OUT/tests.txt"
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|16384 +H=96" "$OUT/log.txt" | cut -c1-150 | head -n 150
