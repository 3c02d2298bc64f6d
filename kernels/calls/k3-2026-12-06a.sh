#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96, round 06a (lead, session 2026-12-05 23:39 -
# 2026-12-06 02:39 UTC). The chunk kernel's options (K3_KDA_RECUR_OPT, opt-in; docs/KERNELS.md
# "KDA prefill, round 06a"):
#   1 its warps decoupled (kda_recur_step.cuh dec_cta(): no __syncthreads a chunk; the last warp
#     done with a stage refills it, flag wait included; bit for bit the chunk kernel's results);
#   2 the outputs as O = Qt M^T + P W from the same fragments (4 32-bit stores a lane a step
#     instead of 8 16-bit ones; not bit for bit);
#   3 both.
# Why: on the overlapped path the pair is paced by the recurrent chain beside the intra CTAs
# (round 05w's bound), ~1.8 us a chunk step there against ~1.0 alone; a lock-step CTA waits each
# step for the slowest of its warps, whose schedulers each carry different intra warps.
# Checked on the host (test-kda-step dec_case: every width, 2-4 stages, both state dtypes, both
# layouts, the warps as real threads). The call:
#   1. test-kda-gpu *prefill_recur_opt* (bit for bit 1 against none and 3 against 2, serial and
#      overlapped, 1-8 warps, 3 / 4 stages, varlen; 2 and 3 against float64; bad values refused)
#   2. racecheck + memcheck of its small shapes with 1 and 3
#   3. T = 16K and 4K, H = 96, FP32 / BF16 state, one process (kda-bench --prefill-ab): def,
#      o1, o2, o3 on the overlapped path; ser / ser1 / ser3 (the chunk kernel alone on the serial
#      path: its "recurrent" column)
#   4. the split kernel's racecheck after 7b9ad76's __syncwarp (round 05w call 4, which never ran)
# What would settle it: o1 / o3 medians under def's in the same process at 16K, and under 1.75 ms.
# The expectation written before the call: o1 -3 to -10 % on the overlapped path, ~0 serial; o2
# -2 to -5 % both ways.
# Pack: .gpu/kda (pack.tar.xz with k3-build/{kernels/kda-bench, tests/kernels/test-kda-gpu},
# libcmocka.so.0 beside it). From the repository root:
#   PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-06a.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-560}
mkdir -p "$OUT/kda"
t0=$(date +%s)
[ -f kernels/calls/device-env.sh ] && . kernels/calls/device-env.sh || . "$PACK/device-env.sh"
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
T=$B/tests/kernels/test-kda-gpu
K=$B/kernels/kda-bench
run() { capped "$@"; }
R=K3_KDA_RECUR_OPT S=K3_KDA_PREFILL=serial,K3_KDA_RECUR=chunk
AB="def:;o1:$R=1;o2:$R=2;o3:$R=3;ser:$S;ser1:$S,$R=1;ser3:$S,$R=3"
{
  KDA_TEST_FILTER='*prefill_recur_opt*' run 150 "tests recur_opt" "$T" > "$OUT/kda/tests-recur-opt.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill|ERROR|differ" "$OUT/kda/tests-recur-opt.txt"
  run 110 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 5 -o "$OUT/kda/ab16k.csv" | grep -E "^==|^prefill.*N=1 "
  for o in 1 3; do
    K3_KDA_RECUR_OPT=$o KDA_TEST_RECUR_OPT_SMALL=1 KDA_TEST_FILTER='*prefill_recur_opt*' run 50 "racecheck opt $o (small)" \
      compute-sanitizer --tool racecheck --racecheck-report all --print-limit 20 --error-exitcode 9 "$T" > "$OUT/kda/racecheck-o$o.txt"
    tail -n 3 "$OUT/kda/racecheck-o$o.txt"
  done
  K3_KDA_RECUR_OPT=3 KDA_TEST_RECUR_OPT_SMALL=1 KDA_TEST_FILTER='*prefill_recur_opt*' run 40 "memcheck opt 3 (small)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  run 45 "4K H=96" "$K" --only prefill --prefill-t 4096 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/kda/ab4k.csv" | grep -E "^==|^prefill.*N=1 "
  KDA_TEST_SPLIT_SMALL=1 KDA_TEST_FILTER='*prefill_split*' run 110 "racecheck split (small)" \
    compute-sanitizer --tool racecheck --racecheck-report all --print-limit 40 --error-exitcode 9 "$T" > "$OUT/kda/racecheck-split.txt"
  tail -n 3 "$OUT/kda/racecheck-split.txt"
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"
echo "kda call: $(( $(date +%s) - t0 )) s"
