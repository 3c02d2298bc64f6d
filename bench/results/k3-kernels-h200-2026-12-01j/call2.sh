#!/usr/bin/env bash
# Second device call of the grouped-GEMM round (one nvidia-h200, at most ~190 s of work): the MXFP4
# tiles expanded in shared memory by an expander warpgroup (K3_GEMM_WG_FP4=expand; consumers run
# the BF16 SS loop) beside the call-1 kernel (expansion in the consumers' registers, the default):
# test-moe-gpu (its wgmma test runs every variant: expand, regs, cp), compute-sanitizer memcheck
# and racecheck on the wgmma and small cases under expand, k3-bench --only moe under expand then
# the default. nvidia-smi sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17k bash .gpu/h17k/call2.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-misc.tar.xz (env, smi, CSVs).
set -u
PACK=${PACK:-.gpu/h17k}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-190}
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
  echo "== moe-gpu (default; the wgmma test also under expand, regs, cp)"
  timeout 80 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|wgmma|watchdog|trap" | tail -40
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt")"
{
  export K3_GEMM_WG_FP4=expand
  for tool in memcheck:'*wgmma*' memcheck:'*small*' racecheck:'*small*' racecheck:'*wgmma*'; do
    t=${tool%%:*} f=${tool#*:}
    l=$(( $(left) - 100 )); [ "$l" -gt 10 ] || { echo "no time for $t $f"; continue; }
    [ "$l" -gt 40 ] && l=40
    echo "== $t moe $f (K3_GEMM_WG_FP4=expand)"
    MOE_TEST_FILTER="$f" timeout "$l" compute-sanitizer --tool "$t" --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race|hazard|FAILED|PASSED|OK \]" | tail -12
    echo "== $t moe $f: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
  unset K3_GEMM_WG_FP4
} >> "$OUT/k3-tests.txt" 2>&1
echo "sanitizer done at $(( $(date +%s) - t0 )) s"
{
  for v in expand regs expand regs; do
    l=$(( $(left) - 3 )); [ "$l" -gt 20 ] || { echo "no time for $v"; break; }
    [ "$l" -gt 60 ] && l=60
    echo "==== K3_GEMM_WG_FP4=$v"; n=$((${n:-0} + 1))
    K3_GEMM_WG_FP4=$v timeout "$l" "$K/k3-bench" --only moe -o "$M/k3-bench-$v-$n.csv" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
  done
} > "$OUT/k3-bench.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit|SUMMARY|FAILED" "$OUT/k3-tests.txt"
grep -E -A1 "^====|tokens=(4096|16384)" "$OUT/k3-bench.txt" | grep -E "^====|tokens=|cublasLt"
echo "call: $(( $(date +%s) - t0 )) s"
