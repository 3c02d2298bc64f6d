#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 16:14-16:20 UTC, nvidia-h200, carry build-gpu .gpu: verify runs 3-5 
# (bench/results/kda-verify-h200-2026-11-29/run3..run5). Run 3 also had, after the first bench, 
# KDA_VERIFY_KERNEL=bf16x3 test and bench lines for the variant since removed.
B=build-gpu; O=$OUT; T=$B/tests/kernels/test-kda-gpu
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64
date -u > $O/device.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> $O/device.txt
timeout 200 $T > $O/test-gpu.log 2>&1; echo "tests rc=$?"; grep -E "^\[ *(OK|FAILED|PASSED)" $O/test-gpu.log | tail -3

: > $O/sanitizer.log
for run in "memcheck test_verify_replay_fp32" "memcheck test_verify_replay_bf16" "racecheck test_verify_replay_fp32" "racecheck test_verify_replay_bf16"; do
  set -- $run; echo "### $1 $2" >> $O/sanitizer.log
  KDA_TEST_FILTER=$2 timeout 120 compute-sanitizer --tool $1 $T >> $O/sanitizer.log 2>&1; echo "$1 $2 rc=$? $(tail -1 $O/sanitizer.log)"
done
timeout 200 $B/kernels/kda-bench --only verify -o $O/kda-verify.csv > $O/bench.log 2>&1; echo "bench rc=$?"
sed -n '/^verify/,$p' $O/bench.log; grep -A9 "^decode" $O/bench.log | tail -4


timeout 150 ncu --kernel-name-base mangled --kernel-name regex:kda_verify_kernelIt --launch-skip 270 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats \
  $B/kernels/kda-bench --only verify > $O/ncu-verify-bf16.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Stall|Warp Cycles|Issued|Eligible|Block Limit|Registers|One or More" $O/ncu-verify-bf16.txt | head -40
