#!/usr/bin/env bash
# Issue 17, round 05l (lead, 2026-12-05): where the FP8 expert GEMM's L2 requests come from, for
# the next session's choice between the token tile multicast (token rows read by each of an
# expert's 24 tiles) and fewer output stores (KERNELS.md "Not done yet"). One ncu launch of the
# default FP8 kernel (wide2f8: 2 A register sets, XV 821080) on w13 at T = 4K with the memory
# workload sections (the per-unit request and sector tables), no source counters.
# Pack: .gpu/g (46ddcfe's build). From the repository root:  OUT=$OUT bash kernels/calls/k3-2026-12-05l.sh
set -u
PACK=.gpu/g
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis_Chart"
K3_BENCH_MOE_T=4096 K3_BENCH_MOE_VARIANT=mxfp4_w13 K3_BENCH_WG_KERNELS=wide2f8 timeout 150 ncu --clock-control none \
  --kernel-name-base demangled --kernel-name "regex:wg_kernel.*128.*821080" --launch-count 1 $S \
  -o "$OUT/ncu-mem" "$B/kernels/k3-bench" --only moe_prefill -o "$OUT/bench.csv" > "$OUT/ncu-mem.log" 2>&1
echo "ncu exit $?"
ncu -i "$OUT/ncu-mem.ncu-rep" --print-details all > "$OUT/ncu-mem-details.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/ncu-mem.ncu-rep"
grep -E "Duration|SM Frequency|L2 Cache Throughput|DRAM Throughput|Mem Busy|Max Bandwidth|L2 Hit|L1/TEX Hit" "$OUT/ncu-mem-details.txt" | head -12
tail -5 "$OUT/ncu-mem.log"
