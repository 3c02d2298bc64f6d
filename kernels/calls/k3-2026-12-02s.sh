#!/usr/bin/env bash
# Issue 17, helper i26a, call 1 (one nvidia-h200, <= ~125 s of work): MXFP4 expert GEMMs at
# T = 16K. wide2rf (new, opt-in: wide2ra's kernels with each group's A fragments loaded from
# shared memory and expanded before the wait_group that frees their register set, so that only
# the scale products follow the wait) beside wide2ra (the default), in ONE process:
#  1. test-moe-gpu's wgmma tests (float64, fresh random inputs, poisoned outputs; wide2rf on the
#     chunk edges, at <= 128 rows a group and on the small wide case);
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K; w13 and w2; each beside cuBLASLt
#     BF16), K3_BENCH_WG_KERNELS=wide2ra,wide2rf,wide2ra,wide2rf; nvidia-smi every 500 ms;
#  3. compute-sanitizer memcheck + racecheck on *wide_small* (wide2rf in it);
#  4. ncu of MXFP4 w2 T = 16K through wide2rv (the default's kernel there), then wide2rf: speed of
#     light, compute pipes, scheduler, warp states, instruction stats, source counters, and the
#     SASS with per-instruction counts and stall samples (why w2 is further from cuBLASLt).
# From the repository root:  PACK=.gpu/i26a bash .gpu/i26a/k3-2026-12-02s.sh
# $OUT gets: tests.txt bench.txt ncu.txt sass-rv.csv.xz sass-rf.csv.xz misc.tar.xz.
set -u
PACK=${PACK:-.gpu/i26a}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-125}
KERNELS=${KERNELS:-wide2ra,wide2rf,wide2ra,wide2rf}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
{
  l=$(cap 40 80)
  echo "== moe-gpu *wgmma* (limit $l s)"
  MOE_TEST_FILTER='*wgmma*' timeout "$l" "$T/test-moe-gpu" > "$M/wgmma.txt" 2>&1
  echo "== moe-gpu: exit $? at $(( $(date +%s) - t0 )) s"
  grep -E "err/tol|K3_GEMM_WG|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/wgmma.txt" | tail -80
} > "$OUT/tests.txt" 2>&1
echo "wgmma tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap 25 60)
  echo "==== moe_prefill MXFP4 $KERNELS, T = 16K and 4K (limit $l s)"
  K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$K/k3-bench" --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(cap 14 45)
    echo "== $tool moe *wide_small* (limit $l s)"
    MOE_TEST_FILTER='*wide_small*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} >> "$OUT/tests.txt" 2>&1
echo "sanitizers done at $(( $(date +%s) - t0 )) s"
{
  S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters"
  for k in wide2rv wide2rf; do
    v=mxfp4_w2
    l=$(cap 40 6)
    echo "==== ncu $v $k (limit $l s)"
    [ "$l" -gt 15 ] || { echo "no time"; continue; }
    K3_BENCH_MOE_VARIANT=$v K3_BENCH_WG_KERNELS=$k timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel \
      --launch-count 1 $S -o "$M/ncu-$k" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench-$k.csv" > "$M/ncu-$k.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    l=$(( $(left) - 3 )); [ "$l" -gt 10 ] && l=10
    timeout "$l" ncu -i "$M/ncu-$k.ncu-rep" --print-details all > "$M/ncu-$k-details.txt" 2>&1
    grep -vE "^ *-+ *$" "$M/ncu-$k-details.txt" | grep -E "Duration|Frequency|Throughput|Issue|Stall|Warp Cycles|Pipe|Eligible|Active|Executed|Registers" | head -60
    l=$(( $(left) - 2 ))
    [ "$l" -gt 3 ] && timeout "$l" ncu -i "$M/ncu-$k.ncu-rep" --page source --print-source sass --csv 2>&1 | xz -6 > "$OUT/sass-${k#wide2}.csv.xz"
    echo "==== sass at $(( $(date +%s) - t0 )) s"
  done
} > "$OUT/ncu.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid" "$OUT/tests.txt" | head -30
awk '/^====/ { print } /^grouped_gemm/ { r = $2 " " $3 " " $(NF-13) " " $(NF-12) " " $(NF-11) } /^ +cublasLt/ && r { print r, "cublasLt", $2, $5, $6; r = "" }' "$OUT/bench.txt"
grep -E "====|Duration|Throughput|Issue|Tensor" "$OUT/ncu.txt" | head -24
echo "call: $(( $(date +%s) - t0 )) s"
