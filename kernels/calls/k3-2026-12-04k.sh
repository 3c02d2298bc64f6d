#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96 (lead, 2026-12-04, one nvidia-h200).
# The recurrent kernel's flag waits (K3_KDA_FLAG_WAIT, kernels/kda/kda_prefill.cu): call 1 (as
# committed in 1e42bbe) ran K3_KDA_FLAG_BATCH=8, runs of up to 8 flags acquired with one fence;
# call 2 (this script since) runs `spin` (relaxed spins 512 ns apart, one acquire) and `batch`
# (spin, then runs of up to 8) against the default (an acquire load a step, 100 ns spins),
# each also beside the intra kernel's lean instance (K3_KDA_INTRA=v3).
#   1. test-kda-gpu's prefill tests (float64; test_prefill_overlap also runs both waits bit for
#      bit against serial)
#   2. T = 16K, H = 96, FP32 / BF16 state, 6 rounds (call 1: 4), one process (kda-bench --prefill-ab)
#   3. T = 4K, H = 96, the same sets, 4 rounds (call 1: 3)
#   4. memcheck + racecheck of the overlap test's small shape with each wait
#   5. one-sequence grid T = 4K, 16K x H = 12, 48, 96 (FP32): serial, overlap with each wait
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
# (as run, a copy of device-env.sh's capped() was defined here as run(); the same since)
run() { capped "$@"; }
AB='def:;spin:K3_KDA_FLAG_WAIT=spin;batch:K3_KDA_FLAG_WAIT=batch;v3:K3_KDA_INTRA=v3;v3spin:K3_KDA_INTRA=v3,K3_KDA_FLAG_WAIT=spin;v3batch:K3_KDA_INTRA=v3,K3_KDA_FLAG_WAIT=batch'
GRID='ser:K3_KDA_PREFILL=serial;ov:K3_KDA_PREFILL=overlap;ovspin:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_WAIT=spin;ovbatch:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_WAIT=batch'
{
  KDA_TEST_FILTER='*prefill*' run 60 "prefill tests" "$T" > "$OUT/kda/tests.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill|ERROR" "$OUT/kda/tests.txt"
  grep -E "err [0-9.e+-]+|differ" "$OUT/kda/tests.txt" | sort | uniq -c | sort -rn | head -5
  run 90 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 6 -o "$OUT/kda/ab16k.csv" | grep -E "^==|^prefill.*N=1 "
  run 30 "4K H=96" "$K" --only prefill --prefill-t 4096 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 4 -o "$OUT/kda/ab4k.csv" | grep -E "^==|^prefill.*N=1 "
  for w in spin batch; do
    K3_KDA_FLAG_WAIT=$w KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 20 "memcheck overlap $w (small)" \
      compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
    K3_KDA_FLAG_WAIT=$w KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 25 "racecheck overlap $w (small)" \
      compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  done
  run 60 "grid" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 12,48,96 --prefill-state fp32 \
    --prefill-ab "$GRID" --prefill-rounds 2 -o "$OUT/kda/grid.csv" | grep -E "^==|^prefill.*N=1 "
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
echo "kda call: $(( $(date +%s) - t0 )) s"
