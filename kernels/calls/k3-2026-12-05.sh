#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96 (lead, 2026-12-05, one nvidia-h200).
# The recurrence two chunks a step (K3_KDA_RECUR=pair | pair136, kernels/kda/kda_prefill.cu,
# kda_chunk_recurrent_pair_kernel; docs/KERNELS.md "KDA prefill, round 05"), built and checked on
# the host only (test-kda-layout, test-kda-ref) when this script was written:
#   1. test-kda-layout (host) and test-kda-gpu's tests test_prefill_pair, test_prefill_overlap (the
#      overlap test runs pair / pair136 bit for bit against serial), then all prefill tests
#      (QUICK=1: no layout test; QUICK_TESTS: the third filter, e.g. '*prefill_default*')
#   2. T = 16K, H = 96, FP32 / BF16 state, 4 rounds, one process (kda-bench --prefill-ab): the
#      default (overlapped, chunk kernel), pair, pair136, each with the lean intra kernel (v3), and
#      the serial path with the chunk / pair kernels (the pair kernel also at 4- and 8-warp CTAs;
#      the serial path's "recurrent" column is the recurrent kernel alone)
#   3. T = 4K, H = 96, the same sets, 3 rounds
#   4. grid T = 4K, 16K x H = 12, 48 (FP32): serial chunk / pair, overlapped pair
#   5. memcheck + racecheck: test_prefill_pair's small shape, the overlap test's small shape with pair
#   6. ncu of the pair kernel alone (serial path, 16K, H = 96, FP32)
# Pack: .gpu/kda/pack.tar.xz with k3-build/{kernels/kda-bench, tests/kernels/test-kda-gpu,
# tests/kernels/test-kda-layout}, device-env.sh and libcmocka.so.0 beside it.
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-480}
mkdir -p "$OUT/kda"
t0=$(date +%s)
[ -f kernels/calls/device-env.sh ] && . kernels/calls/device-env.sh || . "$PACK/device-env.sh"
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
T=$B/tests/kernels/test-kda-gpu
K=$B/kernels/kda-bench
run() { capped "$@"; }
AB='def:;pair:K3_KDA_RECUR=pair;pair136:K3_KDA_RECUR=pair136;v3:K3_KDA_INTRA=v3;v3pair:K3_KDA_INTRA=v3,K3_KDA_RECUR=pair;v3pair136:K3_KDA_INTRA=v3,K3_KDA_RECUR=pair136;ser:K3_KDA_PREFILL=serial;serpair:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pair;serv3pair:K3_KDA_PREFILL=serial,K3_KDA_INTRA=v3,K3_KDA_RECUR=pair;serpair4:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pair,K3_KDA_RECUR_WARPS=4;serpair8:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pair,K3_KDA_RECUR_WARPS=8'
GRID='ser:K3_KDA_PREFILL=serial;serpair:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pair;ovpair:K3_KDA_PREFILL=overlap,K3_KDA_RECUR=pair'
{
  [ "${QUICK:-0}" = 1 ] || run 20 "layout (host)" "$B/tests/kernels/test-kda-layout"
  for f in '*prefill_pair*' '*prefill_overlap*' ${QUICK_TESTS:-'*prefill*'}; do
    KDA_TEST_FILTER=$f run 100 "tests $f" "$T" > "$OUT/kda/tests-${f//\*/}.txt"
    grep -E "^==|FAIL|PASSED|OK \] test_prefill|ERROR" "$OUT/kda/tests-${f//\*/}.txt"
    grep -E "err [0-9.e+-]+|differ" "$OUT/kda/tests-${f//\*/}.txt" | sort | uniq -c | sort -rn | head -6
  done
  run 100 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 4 -o "$OUT/kda/ab16k.csv" | grep -E "^==|^prefill.*N=1 "
  run 40 "4K H=96" "$K" --only prefill --prefill-t 4096 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/kda/ab4k.csv" | grep -E "^==|^prefill.*N=1 "
  run 50 "grid" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 12,48 --prefill-state fp32 \
    --prefill-ab "$GRID" --prefill-rounds 2 -o "$OUT/kda/grid.csv" | grep -E "^==|^prefill.*N=1 "
  KDA_TEST_PAIR_SMALL=1 KDA_TEST_FILTER='*prefill_pair*' run 30 "memcheck pair (small)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  KDA_TEST_PAIR_SMALL=1 KDA_TEST_FILTER='*prefill_pair*' run 40 "racecheck pair (small)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  K3_KDA_RECUR=pair KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 40 "racecheck overlap pair (small)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  K3_KDA_PREFILL=serial K3_KDA_RECUR=pair run 60 "ncu pair" ncu --kernel-name regex:pair_kernel --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats \
    "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 --quick -o "$OUT/kda/ncu-bench.csv" > "$OUT/kda/ncu-pair.txt"
  grep -E "Duration|Registers|Achieved Occupancy|Issue Slots Busy|No Eligible|Stall|Compute \(SM\) Throughput" "$OUT/kda/ncu-pair.txt" | head -20
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
echo "kda call: $(( $(date +%s) - t0 )) s"
