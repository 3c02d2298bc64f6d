#!/usr/bin/env bash
# Issue 17, round 22 (helper h22d), call 2 (one nvidia-h200, <= ~140 s of work). Call 1 (k3-2026-12-02e.sh)
# placed ~13 of BF16 w13's 27 ms in the epilogue (diag-noepi 14.0 ms) and ncu put 17 % of the
# warps' stall samples on "no instruction": the per-width copies of the straight-line epilogue do
# not stay in the instruction cache. This call: the one-copy epilogue (wide2: no clusters, tanh.approx
# SiTU-GLU; wide2c: in clusters; one1: exact SiTU-GLU) beside wide / wide1 / fglu;
#  - k3-bench --only moe_prefill --quick, K3_BENCH_WG_KERNELS=$KERNELS (one process, each row
#    beside cuBLASLt; the MXFP4 rows of wide2 run the MXFP4 kernel with the one-copy epilogue);
#  - ncu on BF16 w13 through wide2 (SpeedOfLight, WarpStateStats, SourceCounters, SchedulerStats);
#  - test-moe-gpu's wgmma tests (float64, unchanged tolerances), memcheck + racecheck on *wide_small*;
#  - the bench again in reversed order ($KERNELS2);
#  - LDL / STL / HGMMA / MUFU counts of the wgmma kernels' SASS; nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h22d bash .gpu/h22d/call.sh
# $OUT gets: tests.txt bench.txt bench2.txt ncu.txt sass.txt misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h22d}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-140}
KERNELS=${KERNELS:-wide,wide2,wide2c,one1,wide1,fglu,wide,wide2}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
{
  echo "==== moe_prefill $KERNELS (limit 35 s)"
  K3_BENCH_WG_KERNELS=$KERNELS timeout 35 "$K/k3-bench" --only moe_prefill --quick -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for v in bf16_w13; do
    l=$(( $(left) - 60 )); [ "$l" -gt 35 ] && l=35
    echo "==== ncu $v ${NCU_KERNEL:-wide2} (limit $l s)"
    [ "$l" -gt 12 ] || { echo "no time"; continue; }
    if [ "$v" = bf16_w13 ]; then
      S="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section SourceCounters"
    else
      S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats"
    fi
    K3_BENCH_MOE_VARIANT=$v K3_BENCH_WG_KERNELS=${NCU_KERNEL:-wide2} timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel \
      --launch-count 1 $S -o "$M/ncu-$v" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench-$v.csv" > "$M/ncu-$v.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    if [ -f "$M/ncu-$v.ncu-rep" ]; then
      ncu --import "$M/ncu-$v.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$" | head -150
      ncu --import "$M/ncu-$v.ncu-rep" --page raw --csv > "$M/ncu-$v-raw.csv" 2>&1
      [ "$v" = bf16_w13 ] && ncu --import "$M/ncu-$v.ncu-rep" --page source --print-source sass --csv > "$M/ncu-$v-sass.csv" 2>&1
      rm -f "$M/ncu-$v.ncu-rep"
    fi
  done
} > "$OUT/ncu.txt" 2>&1
{
  echo "== moe-gpu *wgmma*"
  MOE_TEST_FILTER='*wgmma*' timeout 45 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|K3_GEMM_WG|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | tail -120
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  for tool in memcheck racecheck; do
    l=$(( $(left) - 12 )); [ "$l" -gt 8 ] || { echo "no time for $tool"; continue; }
    [ "$l" -gt 20 ] && l=20
    echo "== $tool moe *wide_small* (limit $l s)"
    MOE_TEST_FILTER='*wide_small*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(( $(left) - 8 )); [ "$l" -gt 30 ] && l=30
  echo "==== moe_prefill again, reversed: ${KERNELS2:-wide2,wide,wide2c,wide1} (limit $l s)"
  [ "$l" -gt 8 ] && K3_BENCH_WG_KERNELS=${KERNELS2:-wide2,wide,wide2c,wide1} timeout "$l" "$K/k3-bench" --only moe_prefill --quick -o "$M/bench2.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench2.txt" 2>&1
{
  l=$(( $(left) - 4 )); [ "$l" -gt 3 ] || l=3
  timeout "$l" cuobjdump -sass "$K/k3-bench" 2>/dev/null | awk '
    /Function :/ { if (f) printf "%s LDL %d STL %d HGMMA %d MUFU %d\n", f, ldl, stl, hg, mu; f = ""; ldl = stl = hg = mu = 0;
                   if ($0 ~ /wg_kernel/) f = $3 }
    f && /LDL/ { ldl++ } f && /STL/ { stl++ } f && /HGMMA/ { hg++ } f && /MUFU/ { mu++ }
    END { if (f) printf "%s LDL %d STL %d HGMMA %d MUFU %d\n", f, ldl, stl, hg, mu }'
} > "$OUT/sass.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid" "$OUT/tests.txt" | head -24
grep -E "grouped_gemm|cublasLt|====" "$OUT/bench.txt" "$OUT/bench2.txt" | sed -e 's/tokens=16384 m=262144 //' -e 's/touched=896 //' | cut -c1-170
grep -E "Duration|Frequency|Throughput|Issue|Stall|Warp Cycles|Pipe|====|Eligible|No Eligible" "$OUT/ncu.txt" | head -40
awk '$3 > 0 || $5 > 0' "$OUT/sass.txt" | head -12
echo "call: $(( $(date +%s) - t0 )) s"
