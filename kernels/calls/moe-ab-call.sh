#!/usr/bin/env bash
# One device call's MXFP4 grouped-GEMM A/B (issue 17; the rounds 2026-12-03q, -03s, -03t call it
# through their wrappers, which set what differs). In ONE process each:
#  1. test-moe-gpu *wide_small*, *k3_expert_shapes*, *wgmma_clusters* (float64 references; the RQ
#     kernels bit for bit against wide2rp; TESTS: other filters), each capped at $TEST_CAP s;
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), the kernels $KERNELS
#     alternating, each row beside cuBLASLt BF16 (capped at $BENCH_CAP s);
#  3. compute-sanitizer memcheck + racecheck of $SAN_FILTER (default *wide_small_rp*), each capped at $SAN_CAP s (30),
#     with the environment assignments in $SAN_ENV (e.g. MOE_TEST_F8_SETS=2prt) added;
#  4. ncu (source counters) of one $NCU_KERNEL launch at T = 4K of the bench variant $NCU_VARIANT
#     (default mxfp4_w13; the kernel named by the regex $NCU_REGEX over demangled names), written
#     as ncu-$NCU_TAG*.txt and sass-$NCU_TAG.csv.xz (NCU_T: the bench's T alone, K3_BENCH_MOE_T).
# BENCH_ONLY=1: step 2 only; SKIP_TESTS=1: no steps 1 and 3; NCU_KERNEL=none: no step 4; BENCH_VARIANT: the bench's variant
# (default mxfp4: w13 and w2).
# Needs PACK (k3-bench and test-moe-gpu staged, with device-env.sh and libcmocka.so.0 beside them);
# a wrapper copied into PACK needs this script copied beside it.
set -u
PACK=${PACK:?PACK: the staged folder}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-330}
KERNELS=${KERNELS:?KERNELS: the K3_GEMM_WG_KERNEL names to alternate}
TEST_CAP=${TEST_CAP:-45}
BENCH_CAP=${BENCH_CAP:-150}
NCU_KERNEL=${NCU_KERNEL:?}
NCU_REGEX=${NCU_REGEX:?}
NCU_TAG=${NCU_TAG:?}
NCU_VARIANT=${NCU_VARIANT:-mxfp4_w13}
BENCH_ONLY=${BENCH_ONLY:-0}
SKIP_TESTS=${SKIP_TESTS:-0}
TESTS=${TESTS:-'*wide_small* *k3_expert_shapes* *wgmma_clusters*'}
BENCH_VARIANT=${BENCH_VARIANT:-mxfp4}
SAN_FILTER=${SAN_FILTER:-'*wide_small_rp*'}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
[ "$BENCH_ONLY" = 1 ] || [ "$SKIP_TESTS" = 1 ] || {
  set -f
  for f in $TESTS; do
    l=$(cap "$TEST_CAP" 200)
    echo "== moe-gpu $f (limit $l s)"
    MOE_TEST_FILTER=$f timeout "$l" "$B/tests/kernels/test-moe-gpu" > "$M/test-${f//\*/}.txt" 2>&1
    echo "== moe-gpu $f: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "bit for bit|err/tol|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/test-${f//\*/}.txt" | sort | uniq -c | sort -rn | head -12
  done
  set +f
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap "$BENCH_CAP" 60)
  echo "==== moe_prefill $BENCH_VARIANT $KERNELS (limit $l s)"
  K3_BENCH_MOE_VARIANT=$BENCH_VARIANT K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$B/kernels/k3-bench" \
    --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
[ "$BENCH_ONLY" = 1 ] || [ "$SKIP_TESTS" = 1 ] || {
  for tool in memcheck racecheck; do
    l=$(cap "${SAN_CAP:-30}" 25)
    echo "== $tool moe $SAN_FILTER (limit $l s)"
    env ${SAN_ENV:-} MOE_TEST_FILTER="$SAN_FILTER" timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$B/tests/kernels/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|OK \]" "$M/san-$tool.txt" | tail -6
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} >> "$OUT/tests.txt" 2>&1
[ "$BENCH_ONLY" = 1 ] || [ "$NCU_KERNEL" = none ] || {
  l=$(cap 40 3)
  echo "==== ncu $NCU_VARIANT 4K $NCU_KERNEL (limit $l s)"
  if [ "$l" -gt 15 ]; then
    S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters"
    K3_BENCH_MOE_T=${NCU_T:-} K3_BENCH_MOE_VARIANT=$NCU_VARIANT K3_BENCH_WG_KERNELS=$NCU_KERNEL timeout "$l" ncu --clock-control none \
      --kernel-name-base demangled --kernel-name "regex:$NCU_REGEX" --launch-count 1 $S \
      -o "$M/ncu-$NCU_TAG" "$B/kernels/k3-bench" --only moe_prefill -o "$M/ncu-bench.csv" > "$OUT/ncu-$NCU_TAG.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    ncu -i "$M/ncu-$NCU_TAG.ncu-rep" --print-details all > "$OUT/ncu-$NCU_TAG-details.txt" 2>&1
    ncu -i "$M/ncu-$NCU_TAG.ncu-rep" --page source --print-source sass --csv 2>&1 | xz -6 > "$OUT/sass-$NCU_TAG.csv.xz"
    grep -E "Duration|SM Frequency|Issue Slots|Tensor \(FP\)|L2 Cache Throughput|Eligible|Warp Cycles Per Issued" "$OUT/ncu-$NCU_TAG-details.txt" | head -10
  fi
} > "$OUT/ncu.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" --exclude='*.ncu-rep' .
rm -rf "$M"
cat "$OUT/tests.txt" 2>/dev/null
grep -E "^====|repack" "$OUT/bench.txt"
awk '/^grouped_gemm/ { for (i = 1; i <= NF; i++) if ($i ~ /^wg_kernel=/) { r = $2 " " $3 " " $i " " $(i+1); break } } /^ +cublasLt/ && r { print r, "cublasLt", $2, $(NF-2); r = "" }' "$OUT/bench.txt"
cat "$OUT/ncu.txt" 2>/dev/null
echo "call: $(( $(date +%s) - t0 )) s"
