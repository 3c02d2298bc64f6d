#!/usr/bin/env bash
# Device call of issue 17's fourth round (one nvidia-h200, ~6 minutes): the MXFP4 decode gemv with
# 512-deep blocks (4 scale groups a lane, 128 bytes of weights in flight per lane, one scale word)
# and the 15-instruction E2M1 expansion. Runs: the moe GPU test (all cases), the layer GPU test,
# memcheck on the moe gemv cases and the small-sizes case, k3-bench --only moe (copy ceiling, BF16
# and MXFP4 gemv rows in the same process) with the default 512-deep blocks and again with
# K3_GEMV_FP4_BLOCK=128 (the 128-deep layout with the new expansion), then the slice's decode
# steps; nvidia-smi sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17d bash .gpu/h17d/k3-2026-12-01f.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-bench-g1.txt k3-slice.txt k3-misc.tar.xz (k3-env.txt
# k3-smi.csv k3-bench.csv k3-bench-g1.csv k3-slice.csv).
set -u
PACK=${PACK:-.gpu/h17d}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
T=$B/tests/kernels
{
  echo "== moe-gpu"
  timeout 120 "$T/test-moe-gpu" 2>&1; echo "== moe-gpu: exit $?"
  echo "== layer-gpu"
  timeout 90 "$T/test-layer-gpu" 2>&1 | tail -15; echo "== layer-gpu: exit ${PIPESTATUS[0]}"
  for f in '*gemv*' '*small*'; do
    echo "== memcheck moe '$f'"
    MOE_TEST_FILTER="$f" timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|Invalid|OK|FAILED" | tail -20
    echo "== memcheck moe '$f': exit ${PIPESTATUS[0]}"
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
timeout 150 "$B/kernels/k3-bench" --only moe -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "bench exit $? at $(( $(date +%s) - t0 )) s"
K3_GEMV_FP4_BLOCK=128 timeout 150 "$B/kernels/k3-bench" --only moe -o "$M/k3-bench-g1.csv" > "$OUT/k3-bench-g1.txt" 2>&1
echo "bench g1 exit $? at $(( $(date +%s) - t0 )) s"
left=$(( 300 - ($(date +%s) - t0) ))
if [ "$left" -gt 100 ]; then
  timeout "$left" "$B/kernels/k3-slice" --prefill 4096 --decode 1:8192,64:8192,256:8192 --reps 2 \
    -o "$M/k3-slice.csv" > "$OUT/k3-slice.txt" 2>&1
  echo "slice exit $? at $(( $(date +%s) - t0 )) s"
else
  echo "no time left for the slice"
fi
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^copy|gemv" "$OUT/k3-bench.txt" | head -40
echo "-- K3_GEMV_FP4_BLOCK=128"
grep -E "^copy|mxfp4.*gemv" "$OUT/k3-bench-g1.txt" | head -20
tail -n 12 "$OUT/k3-slice.txt"
echo "call: $(( $(date +%s) - t0 )) s"
