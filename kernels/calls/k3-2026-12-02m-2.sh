#!/usr/bin/env bash
# Issue 17, helper h24d, call 2 (as call 1, k3-2026-12-02m.sh; now with wide2rv: chunks of up to 160
# tokens, groups of one k step). Call 1: wide2r 3-4 % faster than wide2 at T = 16K. MXFP4 expert GEMMs with the
# register A operand double-buffered (K3_GEMM_WG_KERNEL=wide2r: 128-token tiles, groups of two k
# steps, wait_group 1 between a group's issue and the rewrite of the other set; wide2rw: the same
# with wide2's 176-token chunks and groups of one k step) beside wide2 (the default: round q's
# register-A tile, wait_group 0 every half stage), in ONE process:
#  - test-moe-gpu's wgmma tests (float64, fresh random inputs, poisoned outputs, unchanged
#    tolerances; wide2r / wide2rw on the chunk edges, gathered and scattered, GLU and SCALE) and
#    its layer tests (the MoE layer's prefill: the slice's entry point);
#  - compute-sanitizer memcheck + racecheck on *wide_small* (MXFP4 through wide2r and wide2rw);
#  - k3-bench --only moe_prefill (T = 16K and 4K; w13 and w2; BF16 and MXFP4; each row beside
#    cuBLASLt BF16), K3_BENCH_WG_KERNELS=$KERNELS (BF16 rows: wide2r / wide2rw are wide2);
#  - LDL / STL / HGMMA / DEPBAR counts of the wgmma kernels' SASS; nvidia-smi every 500 ms;
#  - ncu of MXFP4 w13 T = 16K through wide2r if time is left.
# From the repository root:  PACK=.gpu/h24d bash .gpu/h24d/call.sh
# $OUT gets: tests.txt bench.txt sass.txt ncu.txt misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h24d}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-135}
KERNELS=${KERNELS:-wide2,wide2r,wide2rv,wide2rv,wide2r,wide2}
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
  MOE_TEST_FILTER='*wgmma*' timeout 45 "$T/test-moe-gpu" > "$M/wgmma.txt" 2>&1
  echo "== moe-gpu: exit $? at $(( $(date +%s) - t0 )) s"
  grep -E "err/tol|K3_GEMM_WG|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/wgmma.txt" | tail -60
  echo "== moe-gpu *layer*"
  MOE_TEST_FILTER='*layer*' timeout 20 "$T/test-moe-gpu" 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | tail -20
  echo "== moe-gpu layer: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  for tool in memcheck racecheck; do
    echo "== $tool moe *wide_small* (limit 22 s)"
    MOE_TEST_FILTER='*wide_small*' timeout 22 compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(( $(left) - 25 )); [ "$l" -gt 62 ] && l=62
  echo "==== moe_prefill $KERNELS, T = 16K and 4K (limit $l s)"
  K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$K/k3-bench" --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  timeout 15 /usr/local/cuda/bin/cuobjdump -sass "$K/k3-bench" 2>/dev/null | awk '
    /Function :/ { if (f) printf "%s LDL %d STL %d HGMMA %d DEPBAR %d MUFU %d\n", f, ldl, stl, hg, dp, mu; f = ""; ldl = stl = hg = dp = mu = 0;
                   if ($0 ~ /wg_kernel/) f = $3 }
    f && /LDL/ { ldl++ } f && /STL/ { stl++ } f && /HGMMA/ { hg++ } f && /WARPGROUP.DEPBAR/ { dp++ } f && /MUFU/ { mu++ }
    END { if (f) printf "%s LDL %d STL %d HGMMA %d DEPBAR %d MUFU %d\n", f, ldl, stl, hg, dp, mu }'
} > "$OUT/sass.txt" 2>&1
{
  v=mxfp4_w13
  l=$(( $(left) - 6 )); [ "$l" -gt 30 ] && l=30
  echo "==== ncu $v wide2rv (limit $l s)"
  if [ "$l" -gt 15 ]; then
    S="--section SpeedOfLight --section SchedulerStats --section WarpStateStats"
    K3_BENCH_MOE_VARIANT=$v K3_BENCH_WG_KERNELS=wide2rv timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel \
      --launch-count 1 $S "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench-$v.csv" > "$M/ncu-$v.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    grep -vE "^ *-+ *$" "$M/ncu-$v.log" | grep -E "Duration|Frequency|Throughput|Issue|Stall|Warp Cycles|Pipe|Eligible|Active" | head -40
  else
    echo "no time"
  fi
} > "$OUT/ncu.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid" "$OUT/tests.txt" | head -30
grep -E "grouped_gemm|cublasLt|====" "$OUT/bench.txt" | sed -e 's/touched=896 //' | cut -c1-170
awk '$3 > 0 || $5 > 0 || /Li(88|80)E|Li160E/' "$OUT/sass.txt" | cut -c1-200 | head -40
grep -E "====|Duration|Throughput|Issue" "$OUT/ncu.txt" | head -12
echo "call: $(( $(date +%s) - t0 )) s"
