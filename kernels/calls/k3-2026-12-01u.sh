#!/usr/bin/env bash
# First device call of issue 17's grouped-GEMM round u (one nvidia-h200, <= ~140 s of work): the
# grouped wgmma kernel with the weights prefetched into L2 K3_GEMM_WG_PREFETCH k blocks ahead and,
# where A is contiguous (w2; w13 after k3_gemm_gather_rows), the token tiles by TMA
# (K3_GEMM_WG_XTMA). test-moe-gpu's wgmma tests (float64 references; the new test compares the
# new kernels bit for bit with today's); k3-bench --only moe_prefill --quick for BF16 w13, w2 and
# MXFP4 w13, each row back to back with today's kernel (PREFETCH=0,XTMA=0), other prefetch depths
# and without clusters, beside cuBLASLt; compute-sanitizer memcheck + racecheck on the new test.
# nvidia-smi every 500 ms throughout.
# From the repository root:  PACK=.gpu/h19a bash .gpu/h19a/call.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-misc.tar.xz (env, smi, CSV, sanitizer logs).
set -u
PACK=${PACK:-.gpu/h19a}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-140}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_PREFETCH K3_GEMM_WG_XTMA
{
  echo "== moe-gpu *wgmma*"
  MOE_TEST_FILTER='*wgmma*' timeout 45 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error|tokens" | tail -60
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-tests.txt" 2>&1
{
  echo "==== bench (limit 50 s)"
  K3_BENCH_MOE_VARIANT=bf16_w13,bf16_w2,mxfp4_w13 \
  K3_BENCH_WG_ALT="K3_GEMM_WG_PREFETCH=0,K3_GEMM_WG_XTMA=0;K3_GEMM_WG_PREFETCH=4;K3_GEMM_WG_PREFETCH=16;K3_GEMM_WG_XTMA=0;K3_GEMM_WG_PREFETCH=0,K3_GEMM_WG_XTMA=0" \
    timeout 50 "$K/k3-bench" --only moe_prefill --quick -o "$M/k3-bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(( $(left) - 6 )); [ "$l" -gt 10 ] || { echo "no time for $tool"; continue; }
    [ "$l" -gt 40 ] && l=40
    echo "== $tool moe *tokens_tma* (limit $l s)"
    MOE_TEST_FILTER='*tokens_tma*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} >> "$OUT/k3-tests.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
cat "$OUT/k3-tests.txt" | grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid" | head -30
grep -E "grouped_gemm|gather_rows|cublasLt|====" "$OUT/k3-bench.txt" | head -60
echo "call: $(( $(date +%s) - t0 )) s"
