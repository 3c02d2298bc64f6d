#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96; helper i25c, call 1 (one nvidia-h200,
# <= 140 s a call). The overlapped path with a split (K3_KDA_OVERLAP_SPLIT=per mille: the intra
# kernel's first chunks run alone on the whole GPU, then the rest beside the recurrent kernel, which
# starts late and reads the first part's records without flag waits) against the serial path and
# the overlap without split, in one process (kda-bench --prefill-ab); main's build (kda-bench-old)
# beside it for the serial / overlap rows of main's code.
#   1. test-kda-gpu's prefill tests (float64; the split bit for bit against serial)
#   2. T = 16K, H = 96: serial, overlap, splits 200-650, split 450 with 2-warp CTAs and 4 stages
#   3. main's build: serial and overlap at 4K and 16K, H = 96
#   4. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 (FP32): serial, overlap, splits 350 and 550
#   5. memcheck / racecheck of the split test's smallest shape; memcheck of the whole split test
# From the repository root:  PACK=.gpu/i25c bash .gpu/i25c/k3-2026-12-02q.sh
set -u
PACK=${PACK:-.gpu/i25c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-128}
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
T=$B/test-kda-gpu
K=$B/kda-bench
KO=$B/kda-bench-old
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
S='serial:K3_KDA_PREFILL=serial'
O='ov:K3_KDA_PREFILL=overlap'
sp() { echo "sp$1$3:K3_KDA_PREFILL=overlap,K3_KDA_OVERLAP_SPLIT=$1${2:+,$2}"; } # sp PERMILLE [VAR=X LABEL-SUFFIX]
{
  KDA_TEST_FILTER='*prefill*' run 40 "prefill tests" "$T" | grep -vE "^\[ +OK|^\[ RUN"
  run 30 "16K H=96 splits" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$S;$O;$(sp 200);$(sp 350);$(sp 450);$(sp 550);$(sp 650);$(sp 450 K3_KDA_RECUR_WARPS=v2 w2);$(sp 450 K3_KDA_RECUR_STAGES=4 s4)" \
    --prefill-rounds 2 -o "$OUT/split.csv" | grep -E "^prefill.*N=1 "
  run 12 "main's build, H=96" "$KO" --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "main-$S;main-$O" --prefill-rounds 2 -o "$OUT/main.csv" | grep -E "^prefill.*N=1 "
  run 35 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32 \
    --prefill-ab "$S;$O;$(sp 350);$(sp 550)" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill.*N=1 "
  KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap_split*' run 15 "memcheck split (smallest)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 4
  KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap_split*' run 15 "racecheck split (smallest)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 4
  KDA_TEST_FILTER='*prefill_overlap_split*' run 40 "memcheck split (whole test)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 4
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv"
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK|Failure|16384" "$OUT/log.txt" | cut -c1-150 | head -n 120
