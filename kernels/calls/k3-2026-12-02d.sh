#!/usr/bin/env bash
# Device calls of issue 17 item 5 (2026-12-02d, helper i22c; one nvidia-h200 each, <= 150 s): KDA
# decode at B >= 64 for FP32 and BF16 state, the ring kernel's options (KDA_DECODE_RING_OPT: early,
# hint, bulkst, joined by '+'; `none` the kernel of 2026-12-01zd) A/B in one process, and the
# per-CTA timeline of its launches (kda-bench --trace: first-byte latency, ramp, per-item time,
# tail, launch gaps). Results: bench/results/k3-kernels-h200-2026-12-02d/. One pack (kda-bench,
# test-kda-gpu, stripped):
#   PHASE=1: the decode tests (every option against float64, the trace's consistency), the
#     bench A/B with traces (B = 64, 128, 256, FP32 then BF16, one process; then BF16 B = 64
#     alone in the reverse order), racecheck and memcheck of the options.
#   PHASE=2 (after call 1 found a half-depth ring better at BF16 B = 64): the ring depths (none,
#     half, quarter, ramp, half+ramp) A/B twice in one process, FP32 and BF16, B = 64-256; the
#     default (BF16: half) against none twice; BF16 B = 64 alone with traces; the whole
#     test-kda-gpu; racecheck and memcheck of half, ncu of the default BF16 B = 64 launch,
#     racecheck of the other depth options.
# From the repository root:  PACK=.gpu/h22c PHASE=1 bash .gpu/h22c/k3-2026-12-02d.sh
# $OUT gets: log.txt (everything, in order), smi.csv.xz, env.txt.
set -u
PACK=${PACK:-.gpu/h22c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
PHASE=${PHASE:-1}
LIMIT=${LIMIT:-140}
OPTS=${OPTS:-none,early,hint,bulkst,early+hint,early+hint+bulkst,half}
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
grab() { # the lines of a kda-bench decode table worth keeping
  grep -E "^== |^ +(fp32|bf16) |^copy:|^device:|^trace" || true
}
{
if [ "$PHASE" = 1 ]; then
  run 30 "bench A/B + trace, B = 64-256" "$K" --only decode --batch 64,128,256 --ring-opt "$OPTS" --trace \
    -o "$OUT/ab1.csv" | grab
  rev=$(echo "$OPTS" | tr ',' '\n' | tac | paste -sd,)
  run 15 "bench A/B, BF16 B = 64 alone in its process (reverse order)" "$K" --only decode --state bf16 \
    --batch 64 --ring-opt "$rev,$OPTS" -o "$OUT/ab2.csv" | grab
  KDA_TEST_RING_REPEAT=${RING_REPEAT:-20} KDA_TEST_FILTER='*decode*' run 45 "decode tests" "$T" \
    | grep -E "^\[|rel err .*FAIL|differ|repeat|RING_OPT"
  KDA_DECODE_RING_OPT=early+hint+bulkst KDA_TEST_FILTER='*ring_opts*' run 25 "racecheck early+hint+bulkst" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 6
  KDA_DECODE_RING_OPT=early+hint+bulkst KDA_TEST_FILTER='*ring_opts*' run 20 "memcheck early+hint+bulkst" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 4
  KDA_DECODE_RING_OPT=early KDA_TEST_FILTER='*ring_opts*' run 20 "racecheck early" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 4
else
  D=${DEPTHS:-none,half,quarter,ramp,half+ramp}
  run 20 "bench A/B ring depth x2, B = 64-256" "$K" --only decode --batch 64,128,256 --ring-opt "$D,$D" \
    -o "$OUT/ab1.csv" | grab
  run 15 "bench default vs none x2, B = 64-256" "$K" --only decode --batch 64,128,256 \
    --ring-opt "default,none,default,none" -o "$OUT/ab2.csv" | grab
  run 10 "bench BF16 B = 64 alone + trace" "$K" --only decode --state bf16 --batch 64 \
    --ring-opt "$(echo "$D" | tr ',' '\n' | tac | paste -sd,),default" --trace -o "$OUT/ab3.csv" | grab
  KDA_TEST_RING_REPEAT=${RING_REPEAT:-20} run 70 "test-kda-gpu" "$T" | grep -E "^\[|rel err .*FAIL|differ|repeat"
  KDA_DECODE_RING_OPT=half KDA_TEST_FILTER='*ring_opts*' run 15 "racecheck half" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  KDA_DECODE_RING_OPT=half KDA_TEST_FILTER='*ring_opts*' run 12 "memcheck half" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  # The default BF16 B = 64 launch under ncu (stall reasons, memory, issue): the 6th ring launch.
  run 25 "ncu bf16 B = 64 default" ncu --clock-control none --kernel-name-base demangled -k regex:kda_decode_ring \
    --launch-skip 5 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section LaunchStats "$K" --only decode --state bf16 --batch 64 --reps 3 \
    -o /tmp/n.csv | grep -vE "^ +(fp32|bf16) |^copy|^device|^decode|^verify|^ *$" | tail -n 90
  for o in quarter ramp half+ramp; do
    KDA_DECODE_RING_OPT=$o KDA_TEST_FILTER='*ring_opts*' run 15 "racecheck $o" \
      compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  done
fi
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -f "$OUT/smi.csv"
awk -F', ' 'NR > 1 && $2 + 0 > 0 { n++; s = $2 + 0; p = $4 + 0; if (!mn || s < mn) mn = s; if (s > mx) mx = s;
  if (p > pm) pm = p; if ($5 + 0 > tm) tm = $5 + 0 } END { printf "smi: %d readings, SM %d-%d MHz, max %.0f W, max %d C\n", n, mn, mx, pm, tm }' \
  <(xz -dc "$OUT/smi.csv.xz") >> "$OUT/log.txt" 2>&1
grep -E "^== |^ +(fp32|bf16) +(64|128|256) |FAILED|PASSED|ERROR SUMMARY|RACECHECK SUMMARY|hazard|differ|smi:" "$OUT/log.txt" | cut -c1-150
echo "call: $(( $(date +%s) - t0 )) s"
