#!/usr/bin/env bash
# Second device call of issue 17's MXFP8-input gemv (one nvidia-h200, at most ~150 s of work): the
# FP8 gemv's weight stream through per-lane cp.async rings in shared memory (K3_GEMV8_PIPE=smem,
# 6 slots) beside the register ping-pong of the first call (K3_GEMV8_PIPE=regs), and the 16-token
# pass threshold (K3_GEMV8_WIDE=8 vs 4).
# Runs: test-moe-gpu '*mxfp8*' under both pipes (full output: the tensor core's error fractions),
# compute-sanitizer memcheck and racecheck on test_gemv_mxfp8 (smem), k3-bench --only gemv under
# smem (wide 8), regs, smem with wide 4; nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h17m bash .gpu/h17m/k3-mxfp8-2026-12-01k-2.sh
set -u
PACK=${PACK:-.gpu/h17m}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-150}
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
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
T=$B/tests/kernels
K=$B/kernels
{
  for v in "smem 8" "regs 8" "smem 4"; do
    set -- $v
    echo "==== K3_GEMV8_PIPE=$1 K3_GEMV8_WIDE=$2"
    K3_GEMV8_PIPE=$1 K3_GEMV8_WIDE=$2 timeout 40 "$K/k3-bench" --only gemv -o "$M/k3-bench-gemv-$1-$2.csv" 2>&1 | grep -v "^device\|^tiled"
    echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for v in smem regs; do
    l=$(( $(left) - 40 )); [ "$l" -gt 50 ] && l=50
    echo "== moe-gpu *mxfp8* K3_GEMV8_PIPE=$v"
    MOE_TEST_FILTER='*mxfp8*' K3_GEMV8_PIPE=$v timeout "$l" "$T/test-moe-gpu" 2>&1 | grep -v "^ *$"
    echo "== moe-gpu $v: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(( $(left) - 3 )); [ "$l" -gt 10 ] || { echo "no time for $tool"; break; }
    echo "== $tool moe test_gemv_mxfp8 (smem)"
    MOE_TEST_FILTER=test_gemv_mxfp8 timeout "$l" compute-sanitizer --tool $tool --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED|OK \]" | tail -20
    echo "== $tool: exit ${PIPESTATUS[0]}"
  done
} >> "$OUT/k3-tests.txt" 2>&1
echo "sanitizers done at $(( $(date +%s) - t0 )) s"
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit|SUMMARY|FAILED|Failure|largest" "$OUT/k3-tests.txt" | head -40
grep -E "^====|weight bytes|mxfp8_quant" "$OUT/k3-bench.txt" | cut -c1-120
echo "call: $(( $(date +%s) - t0 )) s"
