#!/usr/bin/env bash
# Issue 17, KDA prefill, round 05w call 2 (lead, 2026-12-05): why the split kernel is slow. Call 1
# (k3-2026-12-05w.sh, an H100) had the split records correct (test_prefill_split, memcheck) and the
# intra kernel 19 % faster, but the split recurrent kernel alone 2.05 ms against the chunk
# kernel's 1.13 (serial, 16K, H = 96), so the pair 2.5 ms against the default's 1.84. The
# K3_KDA_SPLIT_OPT bits (kda_recur_step.cuh SPLIT_*) take parts out: 1 v copies by lane 0 in a
# loop, 2 no proxy fence after -Wk, 4 no -Wk (wrong results), 8 no v (wrong results), 14 neither;
# and two changes built after call 1: 16 chunk c + 1's -Wk made at step c's start beside its chain,
# 32 each warp's v slice by cp.async (no bulk row copies), 48 both, 50 both without the fence.
#   0. test-kda-gpu *prefill_split* (now with the opt forms 3, 16, 32, 48, 50)
#   1. serial and overlapped sets at 16K, H = 96, FP32, 3 rounds, one process
#   2. ncu of the split kernel alone (serial, 16K, H = 96): source counters (the top stall sites)
#   3. racecheck of the split test's small shapes, its whole report kept (call 1: 33 warnings)
# Pack: .gpu/kda (kda-bench, test-kda-gpu of build-gpu with the SPLIT_OPT bits).
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05w2.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-400}
mkdir -p "$OUT/kda"
t0=$(date +%s)
[ -f kernels/calls/device-env.sh ] && . kernels/calls/device-env.sh || . "$PACK/device-env.sh"
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
T=$B/tests/kernels/test-kda-gpu
K=$B/kernels/kda-bench
run() { capped "$@"; }
S=K3_KDA_PREFILL=serial X=K3_KDA_RECUR=split O=K3_KDA_SPLIT_OPT
AB="ser:$S,K3_KDA_RECUR=chunk;sersplit:$S,$X;ser1:$S,$X,$O=1;ser2:$S,$X,$O=2;ser4:$S,$X,$O=4;ser8:$S,$X,$O=8;ser14:$S,$X,$O=14;ser16:$S,$X,$O=16;ser32:$S,$X,$O=32;ser48:$S,$X,$O=48;ser50:$S,$X,$O=50;def:;split:$X;split16:$X,$O=16;split32:$X,$O=32;split48:$X,$O=48;split50:$X,$O=50;split14:$X,$O=14"
{
  KDA_TEST_FILTER='*prefill_split*' run 60 "tests split" "$T" > "$OUT/kda/tests-split.txt"
  grep -E "FAIL|PASSED|OK \] test_prefill|ERROR" "$OUT/kda/tests-split.txt"
  run 150 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 \
    --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/kda/ab16k.csv" | grep -E "^==|^prefill.*N=1 "
  run 90 "ncu split" env "$S" "$X" ncu --kernel-name regex:split_kernel --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats \
    "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 --quick -o "$OUT/kda/ncu-bench.csv" > "$OUT/kda/ncu-split.txt"
  grep -E "Duration|No Eligible|Warp Cycles Per Issued" "$OUT/kda/ncu-split.txt" | head -8
  KDA_TEST_SPLIT_SMALL=1 KDA_TEST_FILTER='*prefill_split*' run 60 "racecheck split (small)" \
    compute-sanitizer --tool racecheck --racecheck-report all --print-limit 40 --error-exitcode 9 "$T" > "$OUT/kda/racecheck.txt"
  tail -n 3 "$OUT/kda/racecheck.txt"
  K3_KDA_SPLIT_OPT=48 KDA_TEST_SPLIT_SMALL=1 KDA_TEST_FILTER='*prefill_split*' run 60 "racecheck split 48 (small)" \
    compute-sanitizer --tool racecheck --racecheck-report all --print-limit 40 --error-exitcode 9 "$T" > "$OUT/kda/racecheck48.txt"
  tail -n 3 "$OUT/kda/racecheck48.txt"
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"
echo "kda call: $(( $(date +%s) - t0 )) s"
