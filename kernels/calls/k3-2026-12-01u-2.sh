#!/usr/bin/env bash
# Second device call of issue 17's grouped-GEMM round u (one nvidia-h200, <= ~140 s of work), STAGED
# AND NOT RUN (the session's device budget fell under the brief's 1000 s for a second call). Call 1
# showed neither the L2 prefetch of the weights (K3_GEMM_WG_PREFETCH 4 / 8 / 16: 1-19 % slower) nor
# the token tiles by TMA (w2: equal) nor the permuted layout move the k loop; this call places the
# time. k3-bench --only moe_prefill --quick (BF16 w13, w2), each row back to back with: MMA widths
# 88 / 104 (K3_GEMM_WG_N8=1, twice), the pipeline without MMAs (DIAG=nomma: the feed alone), without
# copies (DIAG=nofeed: the MMAs and barriers alone), the same without clusters; test-moe-gpu's
# wgmma tests (float64; bit for bit vs today's), memcheck + racecheck on the new test, then ncu
# (WarpStateStats, SourceCounters) on the default BF16 w2 kernel with the SASS-level source page
# as CSV. nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h19a bash .gpu/h19a/call2.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-ncu.txt k3-misc.tar.xz (env, smi, CSV, logs, ncu report + SASS page).
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
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_PREFETCH K3_GEMM_WG_XTMA K3_GEMM_WG_N8 K3_GEMM_WG_DIAG
{
  echo "==== bench (limit 45 s)"
  K3_BENCH_MOE_VARIANT=bf16_w13,bf16_w2 \
  K3_BENCH_WG_ALT="K3_GEMM_WG_N8=1;K3_GEMM_WG_DIAG=nomma;K3_GEMM_WG_DIAG=nofeed;K3_GEMM_WG_CLUSTER=1,K3_GEMM_WG_DIAG=nofeed;K3_GEMM_WG_N8=1" \
    timeout 45 "$K/k3-bench" --only moe_prefill --quick -o "$M/k3-bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  echo "== moe-gpu *wgmma*"
  MOE_TEST_FILTER='*wgmma*' timeout 40 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error|differ" | tail -60
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  for tool in memcheck racecheck; do
    l=$(( $(left) - 50 )); [ "$l" -gt 10 ] || { echo "no time for $tool"; continue; }
    [ "$l" -gt 30 ] && l=30
    echo "== $tool moe *tokens_tma* (limit $l s)"
    MOE_TEST_FILTER='*tokens_tma*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} > "$OUT/k3-tests.txt" 2>&1
{
  l=$(( $(left) - 6 ))
  echo "==== ncu BF16 w2 default (limit $l s)"
  if [ "$l" -gt 15 ]; then
    K3_BENCH_MOE_VARIANT=bf16_w2 timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SourceCounters --section ComputeWorkloadAnalysis \
      -o "$M/ncu-w2" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench.csv" > "$M/ncu-w2.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    if [ -f "$M/ncu-w2.ncu-rep" ]; then
      ncu --import "$M/ncu-w2.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$" | head -120
      ncu --import "$M/ncu-w2.ncu-rep" --page source --print-source sass --csv > "$M/ncu-w2-sass.csv" 2>&1
      echo "sass page: $(wc -l < "$M/ncu-w2-sass.csv") lines"
    fi
  fi
} > "$OUT/k3-ncu.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
cat "$OUT/k3-tests.txt" | grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid|differ" | head -30
grep -E "grouped_gemm|gather_rows|cublasLt|====" "$OUT/k3-bench.txt" | head -60
grep -E "Duration|Throughput|Issue|Stall|stall|Warp Cycles|====|sass" "$OUT/k3-ncu.txt" | head -30
echo "call: $(( $(date +%s) - t0 )) s"
