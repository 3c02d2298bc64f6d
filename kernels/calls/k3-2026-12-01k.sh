#!/usr/bin/env bash
# Device call of issue 17's sixth round, measured (one nvidia-h200, ~8 minutes): round 6's AttnRes
# (clusters of CTAs a token, sources staged in shared memory by cp.async) and routing kernels (top-16
# of 896 by warp reductions, warp-shuffle grouping scan, batched scatter). Runs: their float64 GPU
# tests (test-attnres-gpu, test-moe-gpu), k3-bench --only attnres and --only route (beside the copy
# ceiling), the four-layer slice under `k3sim trace capture` (prefill T = 4K, 16K; decode B = 1, 16,
# 64, 256 at C = 8K, 64K; kernels/slice/run-slice.sh, --reps 3), then compute-sanitizer memcheck on
# the AttnRes suite and the route cases in the time left; nvidia-smi sampled every 500 ms throughout.
# The call carries .gpu/h17f alone (k3sim, the capture library, k3-slice, k3-bench, the two tests):
#   PACK=.gpu/h17f bash .gpu/h17f/k3-2026-12-01k.sh
# $OUT gets 6 files: k3-tests.txt k3-bench.txt k3-slice.txt k3-slice.csv k3-slice.db.xz
# k3-misc.tar.xz (k3-env.txt k3-smi.csv k3-bench.csv k3-sanitizer.txt).
set -u
PACK=${PACK:-.gpu/h17f}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-520}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
T=$B/tests/kernels
{
  for t in attnres moe; do
    echo "== $t-gpu"
    timeout 120 "$T/test-$t-gpu" 2>&1
    echo "== $t-gpu: exit $?"
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
{
  for w in attnres route; do
    echo "== k3-bench --only $w"
    timeout 60 "$B/kernels/k3-bench" --only "$w" -o "$M/k3-bench-$w.csv" 2>&1
    echo "== k3-bench $w: exit $?"
  done
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
left=$(( LIMIT - 90 - ($(date +%s) - t0) ))
if [ "$left" -gt 60 ]; then
  sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
  OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --reps 3 > /dev/null 2>&1
  echo "slice exit $? at $(( $(date +%s) - t0 )) s"
else
  echo "no time left for the slice"
fi
mc() {  # label seconds binary [VAR=value...]: memcheck, summary lines only
  local label=$1 s=$2 bin=$3; shift 3
  echo "== memcheck $label"
  env "$@" timeout "$s" compute-sanitizer --tool memcheck --error-exitcode 9 "$bin" 2>&1 | grep -E "ERROR SUMMARY|Invalid|FAILED|PASSED|OK \]|Error|error" | tail -30
  echo "== memcheck $label: exit ${PIPESTATUS[0]}"
}
{
  left=$(( LIMIT - 10 - ($(date +%s) - t0) ))
  if [ "$left" -gt 20 ]; then
    mc "moe *route*" $(( left / 3 )) "$T/test-moe-gpu" MOE_TEST_FILTER='*route*'
    left=$(( LIMIT - 10 - ($(date +%s) - t0) ))
    [ "$left" -gt 15 ] && mc "attnres (all)" "$left" "$T/test-attnres-gpu"
  else
    echo "no time left for memcheck"
  fi
} > "$M/k3-sanitizer.txt" 2>&1
kill "$smi"
cat "$M"/k3-bench-*.csv > "$M/k3-bench.csv" 2>/dev/null
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf /tmp/k3-misc.keep; cp -r "$M" /tmp/k3-misc.keep; rm -rf "$M"
grep -E "^== .*exit|^\[  (FAILED|PASSED)|rel err" "$OUT/k3-tests.txt" | tail -30
grep -E "attnres|moe_route|moe_combine|copy" /tmp/k3-misc.keep/k3-bench.csv 2>/dev/null | cut -c1-200
cat /tmp/k3-misc.keep/k3-sanitizer.txt
tail -n 26 "$OUT/k3-slice.txt" 2>/dev/null
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
