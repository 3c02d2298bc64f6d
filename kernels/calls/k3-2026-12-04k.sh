#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96 (lead, 2026-12-04, one nvidia-h200).
# The recurrent kernel's flags acquired in runs of up to 8 with one fence (K3_KDA_FLAG_BATCH=8,
# acquire_run() in kernels/kda/kda_prefill.cu) against the default (an acquire load a step), and
# beside the intra kernel's lean instance (K3_KDA_INTRA=v3) and 8-warp recurrent CTAs.
#   1. test-kda-gpu's prefill tests (float64; test_prefill_overlap now also runs FB = 8 bit for
#      bit against serial)
#   2. T = 16K, H = 96, FP32 / BF16 state, 4 rounds, one process (kda-bench --prefill-ab)
#   3. T = 4K, H = 96, the same sets, 3 rounds
#   4. memcheck + racecheck of the overlap test's small shape with FB = 8
#   5. one-sequence grid T = 4K, 16K x H = 12, 48, 96 (FP32): serial, overlap, overlap + FB 8
# From the repository root:  PACK=.gpu/k OUT=$OUT bash kernels/calls/k3-2026-12-04k.sh
set -u
PACK=${PACK:-.gpu/k}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-230}
mkdir -p "$OUT/kda"
t0=$(date +%s)
. kernels/calls/device-env.sh
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
T=$B/tests/kernels/test-kda-gpu
K=$B/kernels/kda-bench
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
run() { # run SECONDS-CAP LABEL cmd...: skipped when the call's time is short; logs exit and seconds
  local cap=$1 label=$2; shift 2
  local l; l=$(left); [ "$l" -gt 8 ] || { echo "== $label: skipped (no time)"; return; }
  [ "$cap" -lt "$l" ] || cap=$(( l - 4 ))
  echo "== $label (cap $cap s, at $(( $(date +%s) - t0 )) s)"
  local s; s=$(date +%s)
  timeout "$cap" "$@" 2>&1
  echo "== $label: exit $? in $(( $(date +%s) - s )) s"
}
AB='def:;fb8:K3_KDA_FLAG_BATCH=8;v3:K3_KDA_INTRA=v3;v3fb8:K3_KDA_INTRA=v3,K3_KDA_FLAG_BATCH=8;w8fb8:K3_KDA_RECUR_WARPS=8,K3_KDA_FLAG_BATCH=8'
GRID='ser:K3_KDA_PREFILL=serial;ov:K3_KDA_PREFILL=overlap;ovfb8:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_BATCH=8'
{
  KDA_TEST_FILTER='*prefill*' run 60 "prefill tests" "$T" > "$OUT/kda/tests.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill|ERROR" "$OUT/kda/tests.txt"
  grep -E "err [0-9.e+-]+|differ" "$OUT/kda/tests.txt" | sort | uniq -c | sort -rn | head -5
  run 70 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 4 -o "$OUT/kda/ab16k.csv" | grep -E "^prefill.*N=1 "
  run 30 "4K H=96" "$K" --only prefill --prefill-t 4096 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/kda/ab4k.csv" | grep -E "^prefill.*N=1 "
  K3_KDA_FLAG_BATCH=8 KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 20 "memcheck overlap FB8 (small)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  K3_KDA_FLAG_BATCH=8 KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 25 "racecheck overlap FB8 (small)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  run 40 "grid" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 12,48,96 --prefill-state fp32 \
    --prefill-ab "$GRID" --prefill-rounds 1 -o "$OUT/kda/grid.csv" | grep -E "^prefill.*N=1 "
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
echo "kda call: $(( $(date +%s) - t0 )) s"
