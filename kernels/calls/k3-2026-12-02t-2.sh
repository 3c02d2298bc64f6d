#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms robustly at T = 16K, H = 96; helper i26b, call 2 (one
# nvidia-h200, <= 140 s). Three builds: b/kda-bench + b/test-kda-gpu (this branch: the wgmma
# recurrent kernel removed, every default kernel's PTX as main's; new opt-ins K3_KDA_INTRA=v2r56,
# the intra kernel at <= 56 registers, and K3_KDA_RECUR_REGS=96, 4-warp recurrent CTAs at <= 96
# registers: more intra CTAs an SM beside the recurrent ones), b/kda-bench-wg (call 1's build,
# commit e145a32: the wgmma recurrent kernel on both paths), b/kda-bench-main (main's
# kda_prefill.cu with round 02q's serial-only wgmma kernel). Each A/B in one process:
#   1. test-kda-gpu's prefill tests (float64; the new test_prefill_lean, the default path)
#   2. this build, T = 16K, H = 96, FP32 / BF16, 5 rounds: def (the default: overlap), r96, i56,
#      lean (both), w8 (8-warp recurrent CTAs), ser (serial)
#   3. call 1's build: def / defwg / ser / serwg at 16K, H = 96 (3 rounds), def / defwg at 16K,
#      H = 12 and 48 (the wgmma decision's second call)
#   4. main's build: ser / serwg at 16K, H = 96 and H = 12 (3 rounds; 02q's kernel as it is on main)
#   5. memcheck + racecheck of test_prefill_lean's smallest shapes
#   6. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 + 4 x 4K, FP32 / BF16: def / lean, 2 rounds
# From the repository root:  PACK=.gpu/i26b bash .gpu/i26b/k3-2026-12-02t-2.sh
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
R='r96:K3_KDA_RECUR_REGS=96'
I='i56:K3_KDA_INTRA=v2r56'
L='lean:K3_KDA_INTRA=v2r56,K3_KDA_RECUR_REGS=96'
W8='w8:K3_KDA_RECUR_WARPS=8'
S='ser:K3_KDA_PREFILL=serial'
DW='defwg:K3_KDA_RECUR=wgmma'
SW='serwg:K3_KDA_PREFILL=serial,K3_KDA_RECUR=wgmma'
{
  KDA_TEST_FILTER='*prefill*' run 40 "prefill tests" "$T" > "$OUT/tests.txt"
  grep -E "^==|FAIL|Fail|ERROR|PASSED|differ" "$OUT/tests.txt" | head -20
  grep -E "OK \] test_prefill" "$OUT/tests.txt"
  if grep -q "OK \] test_prefill_lean" "$OUT/tests.txt"; then LE=1; else LE=""; echo "== lean test failed: no lean sets"; fi
  run 40 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$D;${LE:+$R;$I;$L;}$W8;$S" --prefill-rounds 5 -o "$OUT/ab16k.csv"
  run 25 "wgmma build 16K H=96" "$B/kda-bench-wg" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$D;$DW;$S;$SW" --prefill-rounds 3 -o "$OUT/wg16k.csv"
  run 20 "wgmma build 16K H=12,48" "$B/kda-bench-wg" --only prefill --prefill-t 16384 --prefill-h 12,48 --prefill-state fp32 \
    --prefill-ab "$D;$DW" --prefill-rounds 2 -o "$OUT/wg16k-h.csv"
  run 20 "main's build 16K H=96,12" "$B/kda-bench-main" --only prefill --prefill-t 16384 --prefill-h 96,12 --prefill-state fp32,bf16 \
    --prefill-ab "$S;$SW" --prefill-rounds 3 -o "$OUT/main16k.csv"
  [ -n "$LE" ] && KDA_TEST_LEAN_SMALL=1 KDA_TEST_FILTER='*prefill_lean*' run 14 "memcheck lean (smallest)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  [ -n "$LE" ] && KDA_TEST_LEAN_SMALL=1 KDA_TEST_FILTER='*prefill_lean*' run 14 "racecheck lean (smallest)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  run 34 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
    --prefill-state fp32,bf16 --prefill-ab "$D${LE:+;$L}" --prefill-rounds 2 -o "$OUT/grid.csv"
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv" "$OUT/tests.txt"
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK|Failure|16384 +H=96" "$OUT/log.txt" | cut -c1-150 | head -n 150
