#!/usr/bin/env bash
# Third device call of issue 17's third round (one nvidia-h200, ~5 minutes): the build after the
# 2026-12-01c/d calls' fixes: the MXFP4/BF16 grouped gemv prefetches weights into L2 (K3_GEMV_PREFETCH,
# default 8 k blocks), the attention ops' ctx is the cached tokens (t new ones excluded), and the
# bench has K3's 96-head MLA points at 4^k tokens (decode and absorbed prefill). Runs: the moe GPU
# test (default prefetch, and its gemv cases with K3_GEMV_PREFETCH=0), memcheck on the gemv cases,
# the FULL k3-bench under capture, k3-bench --only moe with K3_GEMV_PREFETCH=0 (the A/B), the full
# slice under capture; nvidia-smi sampled every 500 ms. (Record of what ran: the prefetch and
# K3_GEMV_PREFETCH were reverted after this call, which measured them slower.)
# From the repository root:  PACK=.gpu/h17 bash .gpu/h17/k3-2026-12-01e.sh
# $OUT gets 6 files (a call returns at most 8): k3-bench.txt k3-h200.db.xz k3-slice.csv k3-slice.txt
# k3-slice.db.xz and k3-misc.tar.xz (k3-env.txt k3-tests.txt k3-smi.csv k3-bench.csv
# k3-bench-nopf.csv k3-bench-nopf.txt).
set -u
PACK=${PACK:-.gpu/h17}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if ldd "$K3SIM_CAPTURE_LIB" 2>/dev/null | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
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
  echo "== moe-gpu (K3_GEMV_PREFETCH default)"
  timeout 120 "$T/test-moe-gpu" 2>&1; echo "== moe-gpu: exit $?"
  echo "== moe-gpu gemv cases, K3_GEMV_PREFETCH=0"
  K3_GEMV_PREFETCH=0 MOE_TEST_FILTER='*gemv*' timeout 60 "$T/test-moe-gpu" 2>&1; echo "== moe-gpu nopf: exit $?"
  echo "== memcheck moe '*gemv*'"
  MOE_TEST_FILTER='*gemv*' timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
    grep -E "ERROR SUMMARY|Invalid|OK|FAILED" | tail -20
  echo "== memcheck moe: exit ${PIPESTATUS[0]}"
} > "$M/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$M/k3-tests.txt" | tr '\n' ' ')"
{
  s=$(date +%s)
  timeout 300 "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma -o "$M/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
} > "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-h200.db"
echo "bench done at $(( $(date +%s) - t0 )) s"
K3_GEMV_PREFETCH=0 timeout 150 "$B/kernels/k3-bench" --only moe -o "$M/k3-bench-nopf.csv" > "$M/k3-bench-nopf.txt" 2>&1
echo "bench nopf exit $? at $(( $(date +%s) - t0 )) s"
left=$(( 540 - ($(date +%s) - t0) ))
if [ "$left" -gt 60 ]; then
  sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
  OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --reps 3 > /dev/null 2>&1
  echo "slice exit $? at $(( $(date +%s) - t0 )) s"
else
  echo "no time left for the slice"
fi
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^grouped_gemm|^tiled GEMM" "$OUT/k3-bench.txt" | head -40
tail -n 22 "$OUT/k3-slice.txt"
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
