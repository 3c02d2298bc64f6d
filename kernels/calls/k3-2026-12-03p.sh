#!/usr/bin/env bash
# Issue 17, 2026-12-03p (lead), profile only: where wide2rp's ~1,000 cycles a k block outside the MMAs go
# at T = 4K (~73 rows an expert). The round-22 pack (main 05af214, .gpu/r22). In one call:
#  1. ncu (speed of light, scheduler, warp states, instruction stats, memory workload, source
#     counters) of ONE MXFP4 w13 launch at T = 4K through the default wide2rp (the TTV = 128 kernel:
#     regex on the demangled name), then its per-SASS-instruction page as CSV (stall samples by reason);
#  2. the same for w2 (SCALE) if time is left.
# From the repository root:  PACK=.gpu/r22 LIMIT=200 bash kernels/calls/k3-2026-12-03p.sh
set -u
PACK=${PACK:-.gpu/r22}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-200}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters --section LaunchStats --section Occupancy"
for v in mxfp4_w13:856 mxfp4_w2:848; do
  name=${v%%:*} xv=${v##*:}
  l=$(( $(left) - 25 )); [ "$l" -gt 90 ] && l=90
  echo "==== ncu $name 4K wide2rp (limit $l s) at $(( $(date +%s) - t0 )) s"
  [ "$l" -gt 30 ] || { echo "no time"; continue; }
  K3_BENCH_MOE_VARIANT=$name K3_BENCH_WG_KERNELS=wide2rp timeout "$l" ncu --clock-control none \
    --kernel-name-base demangled --kernel-name "regex:wg_kernel.*128.*$xv" --launch-count 1 $S \
    -o "$M/ncu-$name" "$B/kernels/k3-bench" --only moe_prefill -o "$M/bench-$name.csv" > "$OUT/ncu-$name.log" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
  ncu -i "$M/ncu-$name.ncu-rep" --print-details all > "$OUT/ncu-$name-details.txt" 2>&1
  ncu -i "$M/ncu-$name.ncu-rep" --page source --print-source sass --csv 2>&1 | xz -6 > "$OUT/sass-$name.csv.xz"
  grep -E "Duration|SM Frequency|Issue Slots|Tensor|L2 Cache Throughput|DRAM Throughput|Eligible" "$OUT/ncu-$name-details.txt" | head -12
done
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" --exclude='*.ncu-rep' .
rm -rf "$M"
echo "call: $(( $(date +%s) - t0 )) s"
