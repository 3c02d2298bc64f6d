#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 ~16:38 UTC, nvidia-h200, carry build-gpu .gpu: ncu of the prefill kernels 
# (bench/results/kda-prefill-h200-2026-11-29-mma/ncu).
B=build-gpu; O=$OUT
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64
# the intra kernel of the first prefill at T=16384, H=96 (fp32): launches of the bench in order:
# per shape warm 2 + reps; profile by name, skip to the H=96 T=16384 shape's first timed launch
timeout 300 ncu --kernel-name regex:kda_chunk_intra_kernel --launch-skip 8 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats \
  --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
  $B/kernels/kda-bench --only prefill --quick > $O/ncu-intra.txt 2>&1; echo "ncu rc=$?"
grep -E "Grid Size|Duration|Throughput|Pipe|Issued|Executed Ipc|Eligible|Stall|Occupancy|Registers|Block Limit|Warp Cycles" $O/ncu-intra.txt | head -50
timeout 200 ncu --kernel-name regex:kda_chunk_recurrent --launch-skip 8 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section InstructionStats \
  $B/kernels/kda-bench --only prefill --quick > $O/ncu-recur.txt 2>&1; echo "ncu recur rc=$?"
grep -E "Duration|Throughput|Issued|Eligible|Occupancy|Registers|Warp Cycles" $O/ncu-recur.txt | head -20
