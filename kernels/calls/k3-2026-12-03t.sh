#!/usr/bin/env bash
# Issue 17, 2026-12-03t (lead), one nvidia-h200: "wide2rqv" / "wide2rq4v" (XV_V16 in
# kernels/moe/k3_gemm_wg.cu, rq_load16()): wide2rq / wide2rq4 with the lane's A words of a k block
# one 16-byte shared load an m64 block instead of two 8-byte ones, which conflicted (2026-12-03s's
# ncu: "L1 Wavefronts Shared Excessive" equal to the ideal on every A load). In ONE process each:
#  1. test-moe-gpu *wide_small* (every RQ kernel beside wide2rp at E8M0 bytes 0 .. 128, chunk
#     edges, bit for bit against wide2rp), *k3_expert_shapes* (K3's w13 / w2, bit for bit against
#     wide2rp), *wgmma_clusters*, float64 references;
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rqv /
#     wide2rq4v alternating, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp*;
#  4. ncu (source counters) of one wide2rqv w13 launch at T = 4K.
# From the repository root:  PACK=.gpu/t LIMIT=330 bash kernels/calls/k3-2026-12-03t.sh
set -u
PACK=${PACK:-.gpu/t}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-330}
KERNELS=${KERNELS:-wide2rq,wide2rqv,wide2rq4v,wide2rq,wide2rqv,wide2rq4v,wide2rq,wide2rqv,wide2rq4v}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
{
  for f in '*wide_small*' '*k3_expert_shapes*' '*wgmma_clusters*'; do
    l=$(cap 90 200)
    echo "== moe-gpu $f (limit $l s)"
    MOE_TEST_FILTER=$f timeout "$l" "$B/tests/kernels/test-moe-gpu" > "$M/test-${f//\*/}.txt" 2>&1
    echo "== moe-gpu $f: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "bit for bit|err/tol|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/test-${f//\*/}.txt" | sort | uniq -c | sort -rn | head -12
  done
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap 170 60)
  echo "==== moe_prefill MXFP4 $KERNELS (limit $l s)"
  K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$B/kernels/k3-bench" \
    --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(cap 30 25)
    echo "== $tool moe *wide_small_rp* (limit $l s)"
    MOE_TEST_FILTER='*wide_small_rp*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$B/tests/kernels/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|OK \]" "$M/san-$tool.txt" | tail -6
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} >> "$OUT/tests.txt" 2>&1
{
  l=$(cap 40 3)
  echo "==== ncu mxfp4_w13 4K wide2rqv (limit $l s)"
  if [ "$l" -gt 15 ]; then
    S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters"
    K3_BENCH_MOE_VARIANT=mxfp4_w13 K3_BENCH_WG_KERNELS=wide2rqv timeout "$l" ncu --clock-control none \
      --kernel-name-base demangled --kernel-name "regex:wg_kernel.*128.*10072" --launch-count 1 $S \
      -o "$M/ncu-rqv" "$B/kernels/k3-bench" --only moe_prefill -o "$M/ncu-bench.csv" > "$OUT/ncu-rqv.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    ncu -i "$M/ncu-rqv.ncu-rep" --print-details all > "$OUT/ncu-rqv-details.txt" 2>&1
    ncu -i "$M/ncu-rqv.ncu-rep" --page source --print-source sass --csv 2>&1 | xz -6 > "$OUT/sass-rqv.csv.xz"
    grep -E "Duration|SM Frequency|Issue Slots|Tensor \(FP\)|L2 Cache Throughput|Eligible|Warp Cycles Per Issued" "$OUT/ncu-rqv-details.txt" | head -10
  fi
} > "$OUT/ncu.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" --exclude='*.ncu-rep' .
rm -rf "$M"
cat "$OUT/tests.txt"
grep -E "^====|repack" "$OUT/bench.txt"
awk '/^grouped_gemm/ { for (i = 1; i <= NF; i++) if ($i ~ /^wg_kernel=/) { r = $2 " " $3 " " $i " " $(i+1); break } } /^ +cublasLt/ && r { print r, "cublasLt", $2, $(NF-2); r = "" }' "$OUT/bench.txt"
cat "$OUT/ncu.txt"
echo "call: $(( $(date +%s) - t0 )) s"
