#!/usr/bin/env bash
# Issue 17, round 22 (helper h22d), call 1 (one nvidia-h200, <= ~140 s of work): where the grouped
# wgmma kernel's BF16 w13 at T = 16K loses time, and round 22's variants beside the default.
#  - test-moe-gpu's wgmma tests (float64, unchanged tolerances; wide, q, epi and the new fglu /
#    wide1), compute-sanitizer memcheck + racecheck on *wide_small* (wide, fglu, wide1);
#  - k3-bench --only moe_prefill --quick, K3_BENCH_WG_KERNELS=wide,fglu,wide1,diag-noepi,
#    diag-nofeed,diag-nomma,wide,fglu,wide1 (each row beside cuBLASLt, one process; the diag-*
#    rows leave the epilogue / the copies / the MMAs out: timing only, outputs wrong);
#  - ncu on the default BF16 w13 kernel (SpeedOfLight, ComputeWorkloadAnalysis, MemoryWorkload-
#    Analysis, SchedulerStats, WarpStateStats, SourceCounters; the SASS source page as CSV), then
#    BF16 w2 with fewer sections (why w2 reaches ~74 % and w13 ~60 %);
#  - LDL / STL / HGMMA counts of the wgmma kernels' SASS; nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h22d bash .gpu/h22d/call.sh
# $OUT gets: tests.txt bench.txt ncu.txt ncu2.txt sass.txt misc.tar.xz (env, smi, CSV, sanitizer logs, ncu pages).
set -u
PACK=${PACK:-.gpu/h22d}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-140}
KERNELS=${KERNELS:-wide,fglu,wide1,diag-noepi,diag-nofeed,diag-nomma,wide}
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
    echo "==== ncu $v wide (limit $l s)"
    [ "$l" -gt 12 ] || { echo "no time"; continue; }
    if [ "$v" = bf16_w13 ]; then
      S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section SourceCounters"
    else
      S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats"
    fi
    K3_BENCH_MOE_VARIANT=$v K3_BENCH_WG_KERNELS=wide timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel \
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
  MOE_TEST_FILTER='*wgmma*' timeout 30 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|K3_GEMM_WG|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | tail -120
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
  for v in bf16_w2; do
    l=$(( $(left) - 8 ))
    echo "==== ncu $v wide (limit $l s)"
    [ "$l" -gt 12 ] || { echo "no time"; continue; }
    if [ "$v" = bf16_w13 ]; then
      S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section SourceCounters"
    else
      S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats"
    fi
    K3_BENCH_MOE_VARIANT=$v K3_BENCH_WG_KERNELS=wide timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel \
      --launch-count 1 $S -o "$M/ncu-$v" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench-$v.csv" > "$M/ncu-$v.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    if [ -f "$M/ncu-$v.ncu-rep" ]; then
      ncu --import "$M/ncu-$v.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$" | head -150
      ncu --import "$M/ncu-$v.ncu-rep" --page raw --csv > "$M/ncu-$v-raw.csv" 2>&1
      [ "$v" = bf16_w13 ] && ncu --import "$M/ncu-$v.ncu-rep" --page source --print-source sass --csv > "$M/ncu-$v-sass.csv" 2>&1
      rm -f "$M/ncu-$v.ncu-rep"
    fi
  done
} > "$OUT/ncu2.txt" 2>&1
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
grep -E "grouped_gemm|cublasLt|====" "$OUT/bench.txt" | sed -e 's/tokens=16384 m=262144 //' -e 's/touched=896 //' | cut -c1-170
grep -E "Duration|Frequency|Throughput|Issue|Stall|Warp Cycles|Pipe|====|Eligible|No Eligible" "$OUT/ncu.txt" "$OUT/ncu2.txt" | head -60
awk '$3 > 0 || $5 > 0' "$OUT/sass.txt" | head -12
echo "call: $(( $(date +%s) - t0 )) s"
