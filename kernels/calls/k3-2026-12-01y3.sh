#!/usr/bin/env bash
# Device calls 3 and 4 of issue 17's thirteenth round (one nvidia-h200 each): main with this
# session's kernels merged (helpers' branches i19a-d) and the bench's new measurement rules (a cold L2
# before each timed launch; dense GEMM weights rotated over 16 GiB; reference ranges skipped by the
# matcher). The same pack twice, in two calls: each call's slice is validated against the preset
# fitted on the other call's bench (held out by run).
# Runs, each in its own process: the FULL k3-bench under `k3sim trace capture` (--require-wgmma: the
# capture the k3-kernels preset is fitted on), then the four-layer slice under capture
# (kernels/slice/run-slice.sh --reps 3: prefill T = 4K, 16K; decode B = 1, 16, 64, 256 at C = 8K, 64K,
# eager and CUDA graphs), held out from the fit by process; then (PHASE=tests, the default) every
# kernel GPU suite in the time left, or (PHASE=san) compute-sanitizer memcheck / racecheck on the
# kernels this round changed and the opt-in gemv's bench rows; nvidia-smi every 500 ms throughout.
# From the repository root:  PACK=.gpu/r13c bash .gpu/r13c/k3-2026-12-01y3.sh
# $OUT gets 6 files (a call returns at most 8): k3-bench.txt k3-h200.db.xz k3-slice.txt k3-slice.csv
# k3-slice.db.xz k3-misc.tar.xz (k3-env.txt k3-smi.csv k3-bench.csv k3-tests.txt).
set -u
PACK=${PACK:-.gpu/r13c}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-280}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
. "$PACK/device-env.sh" || . kernels/calls/device-env.sh
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
{
  s=$(date +%s)
  timeout 240 "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma -o "$M/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
} > "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-h200.db"
echo "bench done at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-bench.txt")"
left=$(( LIMIT - 25 - ($(date +%s) - t0) ))
if [ "$left" -gt 45 ]; then
  sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
  OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --reps 3 > /dev/null 2>&1
  echo "slice exit $? at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-slice.txt")"
else
  echo "no time left for the slice"
fi
left_s() { echo $(( LIMIT - 8 - ($(date +%s) - t0) )); }
if [ "${PHASE:-tests}" = tests ]; then
{
  for t in test-moe-gpu test-kda-gpu test-mla-gpu test-dsa-gpu test-mla-prefill-gpu test-attnres-gpu test-layer-gpu; do
    left=$(left_s)
    [ "$left" -gt 10 ] || { echo "no time left for $t"; continue; }
    echo "== $t"
    timeout "$left" "$B/tests/kernels/$t" > "$M/$t.log" 2>&1
    rc=$?
    tail -n 40 "$M/$t.log"
    echo "== $t: exit $rc"
    [ $rc = 0 ] && rm -f "$M/$t.log"   # a failing suite keeps its whole output in misc/
  done
  # test_decode_many_items failed once in call 1 (message lost): repeat it while time allows
  for i in 1 2 3 4 5 6 7 8; do
    left=$(left_s); [ "$left" -gt 12 ] || break
    KDA_TEST_FILTER='*many_items*' timeout 10 "$B/tests/kernels/test-kda-gpu" > "$M/kda-many.log" 2>&1
    rc=$?; echo "== test_decode_many_items repeat $i: exit $rc"
    [ $rc = 0 ] || { cp "$M/kda-many.log" "$M/kda-many-fail-$i.log"; cat "$M/kda-many.log"; }
  done
  rm -f "$M/kda-many.log"
} > "$M/k3-tests.txt" 2>&1
else
# PHASE=san: compute-sanitizer on the kernels this round changed, then the opt-in gemv rows
san() {  # tool test filter-var filter seconds
  local l lim=$5 s rc; l=$(left_s); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 $2 '$4': no time left"; return; }
  s=$(date +%s)
  env "$3=$4" timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$B/tests/kernels/test-$2-gpu" > "$M/san.log" 2>&1
  rc=$?
  echo "== $1 test-$2-gpu $3='$4': exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san.log" | tail -1)"
  grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED)" "$M/san.log" | tail -8 | sed 's/^/    /'
  [ $rc = 0 ] || grep -E "Invalid|Race|hazard|rror" "$M/san.log" | head -12 | sed 's/^/    /'
}
{
  san memcheck moe MOE_TEST_FILTER '*gemv_lean*' 30
  san racecheck moe MOE_TEST_FILTER '*gemv_lean*' 35
  san memcheck moe MOE_TEST_FILTER '*dense_gemv*' 25
  san memcheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 25
  san racecheck mla MLA_TEST_FILTER '*fp8_small_heads*' 25
  san memcheck dsa DSA_TEST_FILTER '*' 25
  l=$(left_s)
  if [ "$l" -gt 15 ]; then
    echo "== k3-bench --only gemv, default kernels then K3_GEMV_FP4=regs K3_GEMV_GRID=full K3_GEMV_KSPLIT=1 (the kernel before 2026-12-01x)"
    timeout $(( l / 2 )) "$B/kernels/k3-bench" --only gemv 2>&1 | grep -E "mxfp4|clocks" | head -40
    K3_GEMV_FP4=regs K3_GEMV_GRID=full K3_GEMV_KSPLIT=1 timeout $(( l / 2 )) "$B/kernels/k3-bench" --only gemv 2>&1 | grep -E "mxfp4|clocks" | head -40
  fi
} > "$M/k3-tests.txt" 2>&1
rm -f "$M/san.log"
fi
kill "$SMI_PID"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf /tmp/k3-misc.keep; cp -r "$M" /tmp/k3-misc.keep; rm -rf "$M"
grep -E "^== |^\[  (FAILED|PASSED)|SUMMARY" /tmp/k3-misc.keep/k3-tests.txt
grep -E "^grouped_gemm" "$OUT/k3-bench.txt" | head -24
grep -E "GPU 0 clocks" "$OUT/k3-bench.txt" "$OUT/k3-slice.txt" 2>/dev/null
tail -n 20 "$OUT/k3-slice.txt" 2>/dev/null
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
