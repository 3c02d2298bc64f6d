#!/usr/bin/env bash
# Issue 17, KDA prefill, round 05w call 4 (lead, 2026-12-05): the split kernel's racecheck after
# split_make_wk() got a __syncwarp() between its in-place read and write (call 3's racecheck: 33
# "Warp Level Programming" WAR warnings there, and its 60 s cap cut the run), then
# test_prefill_split again and the 16K A/B of the default against split / split with v by
# cp.async (48, 50) once more, FP32 and BF16, 3 rounds.
# Pack: .gpu/kda. From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05w3.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-420}
mkdir -p "$OUT/kda"
t0=$(date +%s)
[ -f kernels/calls/device-env.sh ] && . kernels/calls/device-env.sh || . "$PACK/device-env.sh"
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
T=$B/tests/kernels/test-kda-gpu
K=$B/kernels/kda-bench
run() { capped "$@"; }
S=K3_KDA_PREFILL=serial X=K3_KDA_RECUR=split O=K3_KDA_SPLIT_OPT
AB="def:;split:$X;split48:$X,$O=48;split50:$X,$O=50;ser:$S,K3_KDA_RECUR=chunk;ser48:$S,$X,$O=48"
{
  KDA_TEST_SPLIT_SMALL=1 KDA_TEST_FILTER='*prefill_split*' run 170 "racecheck split (small)" \
    compute-sanitizer --tool racecheck --racecheck-report all --print-limit 40 --error-exitcode 9 "$T" > "$OUT/kda/racecheck.txt"
  tail -n 3 "$OUT/kda/racecheck.txt"
  K3_KDA_SPLIT_OPT=48 KDA_TEST_SPLIT_SMALL=1 KDA_TEST_FILTER='*prefill_split*' run 120 "memcheck split 48 (small)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  KDA_TEST_FILTER='*prefill_split*' run 60 "tests split" "$T" > "$OUT/kda/tests-split.txt"
  grep -E "FAIL|PASSED|OK \] test_prefill|ERROR" "$OUT/kda/tests-split.txt"
  run 90 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/kda/ab16k.csv" | grep -E "^==|^prefill.*N=1 "
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"
echo "kda call: $(( $(date +%s) - t0 )) s"
