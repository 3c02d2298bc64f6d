#!/usr/bin/env bash
# Issue 17, KDA prefill, round 05t (lead, 2026-12-05): where the serial pair's time goes on this card,
# for the next design (docs/KERNELS.md "Not done yet"): ncu (no clock control) of one launch each of
# the v2 intra kernel and the chunk recurrent kernel at T = 16K, H = 96, FP32 state, serial path
# (K3_KDA_PREFILL=serial), the sections SpeedOfLight, MemoryWorkloadAnalysis, ComputeWorkloadAnalysis,
# SchedulerStats, WarpStateStats, Occupancy, LaunchStats; each report's details as text in $OUT.
# Pack (.gpu/kda2): kernels/kda-bench of build-gpu at this commit.
# From the repository root:  PACK=.gpu/kda2 OUT=$OUT bash kernels/calls/k3-2026-12-05t.sh
set -u
PACK=${PACK:-.gpu/kda2}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || exit 2
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > "$OUT/env.txt"
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats"
S="$S --section WarpStateStats --section Occupancy --section LaunchStats"
for k in intra recurrent; do
  # shellcheck disable=SC2086 # S is a list of options
  K3_KDA_PREFILL=serial timeout 150 ncu --clock-control none --kernel-name-base demangled \
    --kernel-name "regex:kda_chunk_${k}" --launch-skip 2 --launch-count 1 $S -o "$OUT/ncu-$k" \
    "$B/kernels/kda-bench" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 --reps 3 \
    -o "$OUT/kda-$k.csv" > "$OUT/ncu-$k.log" 2>&1
  echo "== ncu $k: exit $?"
  ncu -i "$OUT/ncu-$k.ncu-rep" --print-details all > "$OUT/ncu-$k.txt" 2>&1
  grep -E "Duration|SM Frequency|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Issue Slots Busy|Executed Ipc A|Achieved Occupancy|Eligible Warps|Warp Cycles Per Issued|Registers Per|Block Limit" "$OUT/ncu-$k.txt" | head -20
done
rm -f "$OUT"/*.ncu-rep
