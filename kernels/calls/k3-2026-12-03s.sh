#!/usr/bin/env bash
# Issue 17, 2026-12-03s (lead), one nvidia-h200: "wide2rq4" (XV_W4 in kernels/moe/k3_gemm_wg.cu):
# wide2rq's k loop with the tile's 256 weight rows over four consumer warpgroups of one m64 block
# each (640 threads, token tiles of 96), so that each scheduler holds four consumer warps (why:
# 2026-12-03q's profile of wide2rq at T = 4K, a consumer warp issuing every ~6.5 cycles, waiting
# mostly on its own fixed-latency dependencies). In ONE process each:
#  1. test-moe-gpu *wide_small* (wide2rq4 beside wide2rp at E8M0 bytes 0 .. 128, chunk edges, bit
#     for bit against wide2rp), *k3_expert_shapes* (K3's w13 / w2, bit for bit against wide2rp),
#     *wgmma_clusters* (every MXFP4 kernel name on the chunk edges), float64 references;
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rq4
#     alternating, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp*;
#  4. ncu (source counters) of one wide2rq4 w13 launch at T = 4K.
# From the repository root:  PACK=.gpu/s LIMIT=330 bash kernels/calls/k3-2026-12-03s.sh
set -u
PACK=${PACK:-.gpu/s}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-330}
KERNELS=${KERNELS:-wide2rq,wide2rq4,wide2rq,wide2rq4,wide2rq,wide2rq4}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
{
  for f in '*wide_small*' '*k3_expert_shapes*' '*wgmma_clusters*'; do
    l=$(cap 45 200)
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
  echo "==== ncu mxfp4_w13 4K wide2rq4 (limit $l s)"
  if [ "$l" -gt 15 ]; then
    S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters"
    K3_BENCH_MOE_VARIANT=mxfp4_w13 K3_BENCH_WG_KERNELS=wide2rq4 timeout "$l" ncu --clock-control none \
      --kernel-name-base demangled --kernel-name "regex:wg_kernel.*96.*5976" --launch-count 1 $S \
      -o "$M/ncu-rq4" "$B/kernels/k3-bench" --only moe_prefill -o "$M/ncu-bench.csv" > "$OUT/ncu-rq4.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    ncu -i "$M/ncu-rq4.ncu-rep" --print-details all > "$OUT/ncu-rq4-details.txt" 2>&1
    ncu -i "$M/ncu-rq4.ncu-rep" --page source --print-source sass --csv 2>&1 | xz -6 > "$OUT/sass-rq4.csv.xz"
    grep -E "Duration|SM Frequency|Issue Slots|Tensor \(FP\)|L2 Cache Throughput|Eligible|Warp Cycles Per Issued" "$OUT/ncu-rq4-details.txt" | head -10
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
