#!/usr/bin/env bash
# Issue 17, KDA prefill, round 06a call 2 (lead, 2026-12-06). Call 1 (k3-2026-12-06a.sh, an H100)
# had kda-bench's A/B leak K3_KDA_RECUR_OPT from one set into the next (the bench's knob list did
# not name it; it now unsets every variable any set names), so only its first round's def / ser
# rows ran the default. Its clean rows: the decoupled chunk kernel (K3_KDA_RECUR_OPT=1) serial
# 1152-1207 us against 1285 (the chunk kernel alone, 16K, H = 96), overlapped 2136-2485 against one
# default row of 1828; the O layout (2) slower both ways, removed. This call, on the build with
# OPT 2 removed:
#   1. test-kda-gpu *prefill_recur_opt* and its racecheck (small shapes)
#   2. T = 16K and 4K, H = 96, one sequence, FP32 / BF16, 5 rounds: def, o1, o1 with 4 stages
#      (overlapped), ser / ser1 (the chunk kernel alone, serial)
#   3. the serial path where the chunk kernel is the default (> 96 (sequence, head) pairs): 4 x 4K
#      and 8 x 2K at H = 96 and 48, FP32: ser / ser1 (and ser4 / ser41: 4 stages)
#   4. test-kda-gpu *default_recur* (pairr, whose CTA now takes its prologue from recur_cta_of())
#   5. pairr with its warps decoupled (K3_KDA_RECUR_OPT=1 now applies to pairr too): the serial
#      default at <= 96 (sequence, head) pairs, one sequence of 4K / 16K at H = 12, 24, 48: def / d1
# What would settle it: o1's overlapped medians against def's in the same process (the target);
# ser1 under ser at every serial point for a serial default.
# Pack: .gpu/kda. From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-06b.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-200}
mkdir -p "$OUT/kda"
t0=$(date +%s)
[ -f kernels/calls/device-env.sh ] && . kernels/calls/device-env.sh || . "$PACK/device-env.sh"
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
T=$B/tests/kernels/test-kda-gpu
K=$B/kernels/kda-bench
run() { capped "$@"; }
R=K3_KDA_RECUR_OPT=1 S=K3_KDA_PREFILL=serial,K3_KDA_RECUR=chunk S4=K3_KDA_RECUR_STAGES=4
AB="def:;o1:$R;o14:$R,$S4;ser:$S;ser1:$S,$R"
ABS="ser:$S;ser1:$S,$R;ser4:$S,$S4;ser41:$S,$S4,$R"
ABP="def:;d1:$R"
{
  KDA_TEST_FILTER='*prefill_recur_opt*' run 100 "tests recur_opt" "$T" > "$OUT/kda/tests-recur-opt.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill|ERROR|differ" "$OUT/kda/tests-recur-opt.txt"
  run 60 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 5 -o "$OUT/kda/ab16k.csv" | grep -E "^==|^prefill.*N=1 "
  for h in 12 24 48; do
    run 30 "pairr 4K,16K H=$h" "$K" --only prefill --prefill-t 4096,16384 --prefill-h $h --prefill-state fp32 \
      --prefill-ab "$ABP" --prefill-rounds 3 -o "$OUT/kda/abpr$h.csv" | grep -E "^==|^prefill.*N=1 "
  done
  for h in 96 48; do
    run 40 "serial 16K H=$h N=4,8" "$K" --only prefill --prefill-t 16384 --prefill-h $h --prefill-state fp32 \
      --prefill-seqs 4,8 --prefill-ab "$ABS" --prefill-rounds 3 -o "$OUT/kda/abser$h.csv" | grep -E "^==|^prefill.*N=[48] "
  done
  K3_KDA_RECUR_OPT=1 KDA_TEST_RECUR_OPT_SMALL=1 KDA_TEST_FILTER='*prefill_recur_opt*' run 40 "racecheck opt 1 (small)" \
    compute-sanitizer --tool racecheck --racecheck-report all --print-limit 20 --error-exitcode 9 "$T" > "$OUT/kda/racecheck-o1.txt"
  tail -n 3 "$OUT/kda/racecheck-o1.txt"
  KDA_TEST_FILTER='*default_recur*' run 40 "tests default_recur (pairr, after the CTA prologue's refactor)" "$T" > "$OUT/kda/tests-default-recur.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill|ERROR" "$OUT/kda/tests-default-recur.txt"
  run 25 "4K H=96" "$K" --only prefill --prefill-t 4096 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/kda/ab4k.csv" | grep -E "^==|^prefill.*N=1 "
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"
echo "kda call: $(( $(date +%s) - t0 )) s"
