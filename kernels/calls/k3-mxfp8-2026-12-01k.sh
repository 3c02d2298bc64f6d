#!/usr/bin/env bash
# Device call of issue 17's MXFP8-input gemv (one nvidia-h200, at most ~230 s): the FP8-MMA gemv with
# MXFP8 activations beside the shipped BF16-activation MXFP4 gemv.
# Runs: test-moe-gpu (all cases: the new MXFP8 ones and the old paths after the shared epilogue
# refactor), compute-sanitizer memcheck on the MXFP8 cases, k3-bench --only gemv (w13 and w2 at
# B = 1, 16, 64, 256, both activation formats in one process, and the MXFP8 quantizer); nvidia-smi
# sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17m bash .gpu/h17m/k3-mxfp8-2026-12-01k.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-misc.tar.xz (env, smi, CSV).
set -u
PACK=${PACK:-.gpu/h17m}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-225}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
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
K=$B/kernels
{
  echo "== bench: k3-bench --only gemv"
  timeout 80 "$K/k3-bench" --only gemv -o "$M/k3-bench-gemv.csv" 2>&1
  echo "== bench exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  echo "== moe-gpu"
  l=$(( $(left) - 45 )); [ "$l" -gt 120 ] && l=120
  timeout "$l" "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|sum \|a w\||bytes as|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED|RUN)|Failure|error" | tail -150
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  for f in test_mxfp8_quantize test_gemv_mxfp8 '*extremes*'; do
    l=$(( $(left) - 5 )); [ "$l" -gt 15 ] || { echo "no time for memcheck $f"; break; }
    echo "== memcheck moe $f"
    MOE_TEST_FILTER="$f" timeout "$l" compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|Invalid|FAILED|PASSED|OK \]" | tail -20
    echo "== memcheck moe $f: exit ${PIPESTATUS[0]}"
  done
} >> "$OUT/k3-tests.txt" 2>&1
echo "memcheck done at $(( $(date +%s) - t0 )) s"
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit|ERROR SUMMARY|FAILED|Failure" "$OUT/k3-tests.txt" | head -30
grep -E "grouped_gemm|weight bytes|mxfp8_quant|^copy" "$OUT/k3-bench.txt" | cut -c1-170
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
