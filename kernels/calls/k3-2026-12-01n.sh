#!/usr/bin/env bash
# Device call of issue 17's eighth round (one nvidia-h200, at most ~280 s): the MXFP4 gemv with each
# scale group's FP32 sums scaled (gemv_kernel's AS, the default now) beside the weight-side scaling
# (K3_GEMV_FP4_SCALE=w, the fifth round's kernel) in the same process-free A/B; and the KDA BF16
# decode at B = 64 under the ring (default), ring2, smem256 and heads2.
# The candidate failed test-moe-gpu and was reverted (da78894; results README): with today's
# kernels K3_GEMV_FP4_SCALE is not read and both k3-bench runs time the shipped gemv.
# Runs: test-moe-gpu (all cases; the gemv cases cover the default, 512-deep and weight-scaled
# variants), compute-sanitizer memcheck on its gemv and small cases, k3-bench --only moe (default,
# K3_GEMV_FP4_SCALE=w, default again), kda-bench decode B = 64, 128, 256 (H = 96) under the variants;
# nvidia-smi sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17i bash .gpu/h17i/k3-2026-12-01n.sh
# $OUT gets: k3-tests.txt k3-bench.txt kda-bench.txt k3-misc.tar.xz (env, smi, CSVs).
set -u
PACK=${PACK:-.gpu/h17i}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-280}
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
  echo "== moe-gpu"
  timeout 90 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure" | tail -60
  echo "== moe-gpu: exit ${PIPESTATUS[0]}"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
{
  for v in default w; do
    echo "==== K3_GEMV_FP4_SCALE=$v"
    K3_GEMV_FP4_SCALE=$v timeout 70 "$K/k3-bench" --only moe -o "$M/k3-bench-$v.csv" 2>&1 | grep -v "^ *cublasLt\|tiled"
    echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
    [ "$(left)" -gt 150 ] || break
  done
} > "$OUT/k3-bench.txt" 2>&1
echo "k3-bench done at $(( $(date +%s) - t0 )) s"
{
  for f in '*gemv*' '*small*'; do
    l=$(( $(left) - 100 )); [ "$l" -gt 15 ] || { echo "no time for memcheck $f"; break; }
    echo "== memcheck moe $f"
    MOE_TEST_FILTER="$f" timeout "$l" compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|Invalid|FAILED|PASSED|OK \]" | tail -20
    echo "== memcheck moe $f: exit ${PIPESTATUS[0]}"
  done
} >> "$OUT/k3-tests.txt" 2>&1
echo "memcheck done at $(( $(date +%s) - t0 )) s"
{
  for v in auto ring2 smem256 heads2; do
    l=$(( $(left) - 5 )); [ "$l" -gt 15 ] || { echo "no time for $v"; break; }
    [ "$l" -gt 40 ] && l=40
    echo "==== KDA_DECODE_KERNEL=$v"
    KDA_DECODE_KERNEL=$v timeout "$l" "$K/kda-bench" --only decode --batch 64,128,256 -o "$M/kda-dec-$v.csv" 2>&1 |
      sed -n '/^device\|^copy\|^decode/,$p' | grep -v "^verify\|^ *$"
    echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
} > "$OUT/kda-bench.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit|ERROR SUMMARY" "$OUT/k3-tests.txt"
grep -E "^====|gemv" "$OUT/k3-bench.txt" | grep -E "^====|mxfp4_w13|mxfp4_w2"
grep -E "^====|bf16 +64 |bf16 +128 " "$OUT/kda-bench.txt"
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
