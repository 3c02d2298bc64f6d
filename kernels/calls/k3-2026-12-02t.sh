#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms robustly at T = 16K, H = 96; helper i26b, call 1 (one
# nvidia-h200, <= 140 s). New: the wgmma recurrent kernel on the overlapped path too
# (K3_KDA_RECUR=wgmma now selects it on either path; the intra kernel's WGL instance beside it,
# flag waits as the mma.sync kernel's), the two recurrent kernels' set-up / staging / stores
# shared as device functions (the mma.sync kernels' PTX unchanged against main, registers
# renumbered), wgmma2 removed. In one process (kda-bench --prefill-ab):
#   1. test-kda-gpu's prefill tests (float64; test_prefill_wgmma on both paths, the wgmma
#      overlap bit for bit against its serial path in test_prefill_overlap)
#   2. T = 16K, H = 96, FP32 / BF16, 3 rounds: def (main's default: overlap, mma.sync), defwg
#      (the same rule, wgmma), ser / serwg (serial), ovwg4 (wgmma overlap, 4 stages)
#   3. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 + 4 x 4K, FP32 and BF16: def / defwg, 2 rounds
#   4. memcheck of the wgmma test's smallest shapes (serial and overlap), racecheck of the
#      overlap protocol's smallest shape on wgmma
# From the repository root:  PACK=.gpu/i26b bash .gpu/i26b/k3-2026-12-02t.sh
set -u
PACK=${PACK:-.gpu/i26b}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-128}
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
D='def:'
DW='defwg:K3_KDA_RECUR=wgmma'
S='ser:K3_KDA_PREFILL=serial'
SW='serwg:K3_KDA_PREFILL=serial,K3_KDA_RECUR=wgmma'
O4='ovwg4:K3_KDA_RECUR=wgmma,K3_KDA_RECUR_STAGES=4'
{
  KDA_TEST_FILTER='*prefill*' run 40 "prefill tests" "$T" > "$OUT/tests.txt"
  grep -E "^==|FAIL|Fail|ERROR|PASSED|differ" "$OUT/tests.txt" | head -20
  grep -E "OK \] test_prefill" "$OUT/tests.txt"
  if grep -q "OK \] test_prefill_wgmma" "$OUT/tests.txt" && grep -q "OK \] test_prefill_overlap" "$OUT/tests.txt"; then
    WG=1; else WG=""; echo "== a wgmma test failed: no wgmma sets"; fi
  run 32 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$D;${WG:+$DW;}$S${WG:+;$SW;$O4}" --prefill-rounds 3 -o "$OUT/ab16k.csv" | grep -E "^prefill.*N=1 "
  [ -n "$WG" ] && run 34 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
    --prefill-state fp32,bf16 --prefill-ab "$D;$DW" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill"
  KDA_TEST_WGMMA_SMALL=1 KDA_TEST_FILTER='*prefill_wgmma*' run 14 "memcheck wgmma (smallest, both paths)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  K3_KDA_RECUR=wgmma KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 14 "racecheck wgmma overlap (smallest)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv" "$OUT/tests.txt"
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK|Failure|16384 +H=96" "$OUT/log.txt" | cut -c1-170 | head -n 150
