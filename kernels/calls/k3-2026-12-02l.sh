#!/usr/bin/env bash
# Issue 17 item 5, helper h24c (2026-12-02l; one nvidia-h200, <= 140 s a call): the KDA prefill's
# overlapped path with its flag wait off the step's path (kda_prefill.cu stage_record(): WAIT_POLL,
# a relaxed poll of the next record's flag issued a step ahead, one fence.acq_rel.gpu once seen
# set; step order 2: a stage refilled at the end of the step that read it, before its stores)
# against the serial path and the previous overlap (K3_KDA_FLAG_WAIT=acquire K3_KDA_RECUR_ORDER=1)
# in one process. Results: bench/results/k3-kernels-h200-2026-12-02l/.
#   PHASE=1: prefill tests (float64, the overlap protocol in every wait x order, the default
#     path); the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 and 4 x 4K, FP32 and BF16 state, sets
#     serial / old / new cycled twice; T = 16K, H = 96 variants cycled three times; memcheck of
#     the overlap test, racecheck of its smallest shape; the flag wait's SASS.
#     (call 1 ran the build of the poll wait: WAIT_POLL + K3_KDA_RECUR_ORDER, both removed after it.)
#   PHASE=2 (call 2, the kernel of main restored, WAIT_EARLY as a template variant, removed after
#     it; K3_KDA_FLAG_WAIT is gone from the final build): the whole
#     test-kda-gpu; the grid with the default path (K3_KDA_PREFILL unset), serial, the old
#     overlap (acquire) and the early acquire, cycled twice; T = 16K, H = 96 three times with
#     8-warp variants; memcheck of the default-path and overlap tests, racecheck of the
#     smallest overlap shape; the early kernel's SASS.
# From the repository root:  PACK=.gpu/h24c PHASE=1 bash .gpu/h24c/k3-2026-12-02l.sh
set -u
PACK=${PACK:-.gpu/h24c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
PHASE=${PHASE:-1}
LIMIT=${LIMIT:-135}
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
SERIAL='serial:K3_KDA_PREFILL=serial'
OLD1='old:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_WAIT=acquire,K3_KDA_RECUR_ORDER=1'
NEW='new:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_WAIT=poll,K3_KDA_RECUR_ORDER=2'
EARLY='early:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_WAIT=early'
OLD2='old:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_WAIT=acquire'
{
if [ "$PHASE" = 1 ]; then
  KDA_TEST_FILTER='*prefill*' run 40 "prefill tests" "$T" | grep -vE "^\[ +OK|^\[ RUN"
  run 40 "grid serial/old/new" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
    --prefill-state fp32,bf16 --prefill-ab "$SERIAL;$OLD1;$NEW" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill|^copy|^device"
  run 20 "16K H=96 variants" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$SERIAL;$OLD1;$NEW;serial2:K3_KDA_PREFILL=serial,K3_KDA_RECUR_ORDER=2;poll1:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_ORDER=1;acq2:K3_KDA_PREFILL=overlap,K3_KDA_FLAG_WAIT=acquire;w8:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_WARPS=8;s4:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_STAGES=4" \
    --prefill-rounds 3 -o "$OUT/var.csv" | grep -E "^prefill.*N=1 "
  run 20 "H=12, 48 variants" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 12,48 --prefill-state fp32 \
    --prefill-ab "$SERIAL;$NEW;s4:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_STAGES=4;serial2:K3_KDA_PREFILL=serial,K3_KDA_RECUR_ORDER=2" \
    --prefill-rounds 2 -o "$OUT/var2.csv" | grep -E "^prefill.*N=1 "
  KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 20 "racecheck overlap (smallest)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 6
  KDA_TEST_FILTER='*prefill_overlap*' run 30 "memcheck overlap" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 6
  echo "== SASS of kda_chunk_recurrent_kernel<float, 4, 3>: flag, fence and barrier instructions"
  cuobjdump -sass "$K" 2>&1 | awk '/Function : / { p = /recurrent_kernelIfLi4ELi3E/ } p' > "$OUT/sass-recur-f32-4-3.txt"
  grep -nE "MEMBAR|CCTL|STRONG|FENCE|ERRBAR|NANOSLEEP|BAR.SYNC|SYNCS|UBLKCP|Function" "$OUT/sass-recur-f32-4-3.txt" | head -n 60
else
  run 40 "test-kda-gpu" "$T" | grep -vE "^\[ +OK|^\[ RUN"
  run 40 "grid default/serial/old/early" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
    --prefill-state fp32,bf16 --prefill-ab "default:;$SERIAL;$OLD2;$EARLY" --prefill-rounds 2 -o "$OUT/grid2.csv" | grep -E "^prefill|^copy|^device"
  run 15 "16K H=96 x3" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$SERIAL;$OLD2;$EARLY;w8:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_WARPS=8;w8e:K3_KDA_PREFILL=overlap,K3_KDA_RECUR_WARPS=8,K3_KDA_FLAG_WAIT=early" \
    --prefill-rounds 3 -o "$OUT/var3.csv" | grep -E "^prefill.*N=1 "
  KDA_TEST_FILTER='*prefill_default_path*' run 20 "memcheck default path" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 4
  KDA_TEST_FILTER='*prefill_overlap*' run 25 "memcheck overlap" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 4
  KDA_TEST_OVERLAP_SMALL=1 KDA_TEST_FILTER='*prefill_overlap*' run 20 "racecheck overlap (smallest)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 4
  cuobjdump -sass "$K" 2>&1 | awk '/Function : / { p = /recurrent_kernelIfLi4ELi3ELb1E/ } p' > "$OUT/sass-recur-f32-4-3-early.txt"
  grep -nE "MEMBAR|CCTL|STRONG|FENCE|BAR.SYNC|UBLKCP|Function" "$OUT/sass-recur-f32-4-3-early.txt" | head -n 30
fi
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -f "$OUT/smi.csv"
awk -F', ' 'NR > 1 && $2 + 0 > 0 { n++; s = $2 + 0; p = $4 + 0; if (!mn || s < mn) mn = s; if (s > mx) mx = s;
  if (p > pm) pm = p; if ($5 + 0 > tm) tm = $5 + 0 } END { printf "smi: %d readings, SM %d-%d MHz, max %.0f W, max %d C\n", n, mn, mx, pm, tm }' \
  <(xz -dc "$OUT/smi.csv.xz") >> "$OUT/log.txt" 2>&1
for f in "$OUT"/*.csv "$OUT"/sass-*.txt; do [ -f "$f" ] && xz -f "$f"; done
grep -E "^== |^prefill.*(16384|N=4 )|FAILED|PASSED|ERROR SUMMARY|RACECHECK SUMMARY|hazard|differ|smi:|default path|MEMBAR|CCTL|STRONG" "$OUT/log.txt" | cut -c1-200 | tail -n 120
echo "call: $(( $(date +%s) - t0 )) s"
