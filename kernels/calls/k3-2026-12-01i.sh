#!/usr/bin/env bash
# Second device call of issue 17's fifth round (one nvidia-h200, ~2 minutes): the MXFP4 gemv at 8
# tokens a pass with three CTAs an SM (80 registers; call 1 profiled it issue-bound at two), beside
# call 1's build (ping-pong register sets, two CTAs: 37.8-59.7 % of copy). Runs: test-moe-gpu,
# memcheck on its gemv and small-sizes cases, k3-bench --only moe twice, kda-bench decode again
# (default kernel; 100 single launches a point, to see the spread of the per-launch times of call 1),
# ncu on the gemv (MXFP4 w13, B = 64) with the pipe utilization; nvidia-smi sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17e bash .gpu/h17e/k3-2026-12-01i.sh
set -u
PACK=${PACK:-.gpu/h17e}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
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
  echo "== moe-gpu"
  timeout 150 "$T/test-moe-gpu" 2>&1 | grep -E "rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure" | tail -40
  echo "== moe-gpu: exit ${PIPESTATUS[0]}"
  for f in '*gemv*' '*small*'; do
    echo "== memcheck moe '$f'"
    MOE_TEST_FILTER="$f" timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|Invalid|FAILED|PASSED" | tail -20
    echo "== memcheck moe '$f': exit ${PIPESTATUS[0]}"
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
for i in 1 2; do
  timeout 120 "$K/k3-bench" --only moe -o "$M/k3-bench-$i.csv" > "$OUT/k3-bench-$i.txt" 2>&1
  echo "k3-bench $i exit $? at $(( $(date +%s) - t0 )) s"
done
timeout 100 "$K/kda-bench" --only decode --batch 64,128,256 --reps 100 -o "$M/kda-dec.csv" 2>&1 |
  sed -n '/^device\|^copy\|^decode/,$p' | grep -v "^verify\|^ *$" > "$OUT/kda-bench.txt"
echo "kda-bench exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{
  echo "== ncu gemv (MXFP4 w13, B = 64: k3-bench --quick --only moe, gemv launch 70)"
  timeout 90 "$NCU" --clock-control none -k regex:gemv_kernel --launch-skip 70 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --metrics dram__bytes_read.sum,smsp__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    "$K/k3-bench" --quick --only moe -o /dev/null 2>&1 | grep -v "^grouped_gemm\|^gemm\|^copy\|^moe\|cublasLt" | tail -150
  echo "== ncu exit ${PIPESTATUS[0]}"
} > "$OUT/k3-ncu.txt" 2>&1
echo "ncu done at $(( $(date +%s) - t0 )) s"
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit|ERROR SUMMARY" "$OUT/k3-tests.txt"
grep -h -E "^copy ceiling|gemv" "$OUT"/k3-bench-*.txt | head -40
cat "$OUT/kda-bench.txt"
grep -E "^== |Duration|DRAM Throughput|SM Frequency|Compute \(SM\)|pipe_|inst_executed.sum|Issued Warp|No Eligible|Eligible Warps|Registers Per|Achieved Occupancy|Local Memory Spilling Requests |Warp Cycles Per Issued|Grid Size" "$OUT/k3-ncu.txt" | head -40
echo "call: $(( $(date +%s) - t0 )) s"
