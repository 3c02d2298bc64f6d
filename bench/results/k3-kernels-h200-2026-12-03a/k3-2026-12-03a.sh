#!/usr/bin/env bash
# Issue 17, helper i28a, call 1 (one nvidia-h200, <= 140 s with the start): MXFP4 expert GEMMs at
# T = 4K (~73 rows a group). New, opt-in, on the tile layout: "wide2rp6" (wide2rp's kernels on
# chunks of up to 96 tokens: accumulators 2 x 48), "wide2rpa" (those at <= 80 rows a group on
# average, else wide2rp's). In ONE process:
#  1. test-moe-gpu *wide_small* (the new test_gemm_wgmma_wide_small_rp6: chunk edges 96 / 97 / 193,
#     0-row groups, K = 128 / 256 / 384, scale bytes 0 .. 128, float64) and *wgmma_clusters* (the
#     <= 128-rows case at N = 320: 128 as 96 + 32, 100 as 96 + 4);
#  2. k3-bench --only moe_prefill, MXFP4 rows at T = 4K only (K3_BENCH_MOE_T=4096; w13 and w2, each
#     beside cuBLASLt BF16), K3_BENCH_WG_KERNELS=wide2rp,wide2rp6 x 4 (alternating);
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp6*;
#  4. ncu (a few sections) of one MXFP4 w13 launch at T = 4K: wide2rp, then wide2rp6 (time left):
#     tensor pipe, issue slots, stall reasons (where the ~1,000 cycles a k block outside the MMAs go).
# From the repository root:  PACK=.gpu/i28a bash .gpu/i28a/k3-2026-12-03a.sh
set -u
PACK=${PACK:-.gpu/i28a}
B=$PACK/b
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-118}
KERNELS=${KERNELS:-wide2rp,wide2rp6,wide2rp,wide2rp6,wide2rp,wide2rp6,wide2rp,wide2rp6}
mkdir -p "$OUT" "$M" "$B"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
tar xJf "$PACK/pack.tar.xz" -C "$B" || exit 2
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT K3_BENCH_MOE_T
{
  for f in '*wide_small*' '*wgmma_clusters*'; do
    l=$(cap 14 85)
    echo "== moe-gpu $f (limit $l s)"
    MOE_TEST_FILTER=$f timeout "$l" "$B/test-moe-gpu" > "$M/test-${f//\*/}.txt" 2>&1
    echo "== moe-gpu $f: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "err/tol|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/test-${f//\*/}.txt" | tail -14
  done
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap 42 30)
  echo "==== moe_prefill MXFP4 T = 4K $KERNELS (limit $l s)"
  K3_BENCH_MOE_T=4096 K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$B/k3-bench" \
    --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(cap 14 12)
    echo "== $tool moe *wide_small_rp6* (limit $l s)"
    MOE_TEST_FILTER='*wide_small_rp6*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$B/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|OK \]" "$M/san-$tool.txt" | tail -6
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} >> "$OUT/tests.txt" 2>&1
{
  for k in wide2rp wide2rp6; do
    l=$(cap 20 2)
    echo "==== ncu mxfp4_w13 4K $k (limit $l s)"
    [ "$l" -gt 10 ] || { echo "no time"; continue; }
    K3_BENCH_MOE_T=4096 K3_BENCH_MOE_VARIANT=mxfp4_w13 K3_BENCH_WG_KERNELS=$k timeout "$l" ncu --clock-control none \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
      --section LaunchStats --section Occupancy --kernel-name "regex:(^|:)wg_kernel" --launch-count 1 \
      "$B/k3-bench" --only moe_prefill -o "$M/ncu-bench-$k.csv" > "$OUT/ncu-$k.txt" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "Duration|SM Frequency|Throughput|Issue Slots|Executed Ipc|Registers Per|Warp Cycles Per Issued|No Eligible|Stall|Pipe" "$OUT/ncu-$k.txt" | head -24
  done
} > "$OUT/ncu.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|FAILED|Failure|PASSED|SUMMARY|hazard|Invalid|err/tol" "$OUT/tests.txt" | head -30
grep -E "^====|repack" "$OUT/bench.txt"
awk '/^grouped_gemm/ { for (i = 1; i <= NF; i++) if ($i ~ /^wg_kernel=/) { r = $2 " " $3 " " $i " " $(i+1); break } } /^ +cublasLt/ && r { print r, "cublasLt", $2, $(NF-2); r = "" }' "$OUT/bench.txt"
grep -E "====|Duration|SM Frequency|Issue Slots" "$OUT/ncu.txt" | head -16
echo "call: $(( $(date +%s) - t0 )) s"
