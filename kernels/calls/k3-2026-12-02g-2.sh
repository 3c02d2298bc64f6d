#!/usr/bin/env bash
# Issue 17, helper h23a, call 2 (one nvidia-h200, <= ~140 s of work). Call 1 (k3-2026-12-02g.sh):
# wide2x correct (tests, sanitizers) but slower than wide2 (MXFP4 w13 16K 44.0-44.2 ms vs 32.9-33.1;
# 4K 21.3 vs 10.2-10.4): ncu showed 29 M local-memory spill requests (the producer's 72 registers:
# 3 token-row indices a k block reloaded, missing L1) and 57 % of stalls on L1TEX. Fixed: the
# token rows in shared memory, the expansion unrolled 8 (ptxas: no spills). Same steps as call 1:
# MXFP4 expert GEMMs through
# the expander kernel (K3_GEMM_WG_KERNEL=wide2x, the new grouped default: raw MXFP4 tiles by TMA,
# expanded to BF16 in shared memory by the producer warpgroup, wide2's BF16 consumers) beside
# wide2 (the MXFP4 kernel of round q with one epilogue, A from registers), in ONE process;
#  - test-moe-gpu's wgmma tests (float64, fresh random inputs, poisoned outputs, unchanged
#    tolerances) and its layer tests (the MoE layer's prefill: the slice's path);
#  - compute-sanitizer memcheck + racecheck on *wide_small* (now with MXFP4 through wide2x);
#  - k3-bench --only moe_prefill (T = 16K and 4K; w13 and w2; BF16 and MXFP4; each row beside
#    cuBLASLt), K3_BENCH_WG_KERNELS=$KERNELS (BF16 rows: wide2x is wide2);
#  - ncu on MXFP4 w13 T = 16K through wide2x (SpeedOfLight, SchedulerStats, WarpStateStats) if time;
#  - LDL / STL / HGMMA counts of the wgmma kernels' SASS; nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h23a bash .gpu/h23a/call.sh
# $OUT gets: tests.txt bench.txt ncu.txt sass.txt misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h23a}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-140}
KERNELS=${KERNELS:-wide2,wide2x,wide2x,wide2}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
{
  echo "== moe-gpu *wgmma*"
  MOE_TEST_FILTER='*wgmma*' timeout 45 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|K3_GEMM_WG|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | tail -150
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  echo "== moe-gpu *layer*"
  MOE_TEST_FILTER='*layer*' timeout 20 "$T/test-moe-gpu" 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | tail -20
  echo "== moe-gpu layer: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  for tool in memcheck racecheck; do
    echo "== $tool moe *wide_small* (limit 20 s)"
    MOE_TEST_FILTER='*wide_small*' timeout 20 compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(( $(left) - 45 )); [ "$l" -gt 60 ] && l=60
  echo "==== moe_prefill $KERNELS, T = 16K and 4K (limit $l s)"
  K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$K/k3-bench" --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  v=mxfp4_w13
  l=$(( $(left) - 8 )); [ "$l" -gt 35 ] && l=35
  echo "==== ncu $v wide2x (limit $l s)"
  if [ "$l" -gt 15 ]; then
    S="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters"
    K3_BENCH_MOE_VARIANT=$v K3_BENCH_WG_KERNELS=wide2x timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel \
      --launch-count 1 $S -o "$M/ncu-$v" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench-$v.csv" > "$M/ncu-$v.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    if [ -f "$M/ncu-$v.ncu-rep" ]; then
      ncu --import "$M/ncu-$v.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$" | head -150
      ncu --import "$M/ncu-$v.ncu-rep" --page raw --csv > "$M/ncu-$v-raw.csv" 2>&1
      rm -f "$M/ncu-$v.ncu-rep"
    fi
  else
    echo "no time"
  fi
} > "$OUT/ncu.txt" 2>&1
{
  l=$(( $(left) - 3 )); [ "$l" -gt 3 ] || l=3
  timeout "$l" cuobjdump -sass "$K/k3-bench" 2>/dev/null | awk '
    /Function :/ { if (f) printf "%s LDL %d STL %d HGMMA %d MUFU %d\n", f, ldl, stl, hg, mu; f = ""; ldl = stl = hg = mu = 0;
                   if ($0 ~ /wg_kernel/) f = $3 }
    f && /LDL/ { ldl++ } f && /STL/ { stl++ } f && /HGMMA/ { hg++ } f && /MUFU/ { mu++ }
    END { if (f) printf "%s LDL %d STL %d HGMMA %d MUFU %d\n", f, ldl, stl, hg, mu }'
} > "$OUT/sass.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid" "$OUT/tests.txt" | head -30
grep -E "grouped_gemm|cublasLt|====" "$OUT/bench.txt" | sed -e 's/touched=896 //' | cut -c1-170
grep -E "Duration|Frequency|Throughput|Issue|Stall|Warp Cycles|Pipe|====|Eligible|No Eligible|Bank" "$OUT/ncu.txt" | head -40
awk '$3 > 0 || $5 > 0' "$OUT/sass.txt" | head -12
echo "call: $(( $(date +%s) - t0 )) s"
