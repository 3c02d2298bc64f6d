#!/usr/bin/env bash
# Issue 17, helper i25a, call 2: as call 1 (k3-2026-12-02o.sh), with the grouped default now wide2ra
# (wide2rv above 128 rows a group on average, wide2r at or below: call 1's T = 4K rows) and wide2p's
# producer reading each token row's source offset from shared memory (once a tile) instead of
# recomputing it every k block (call 1's ncu: the consumers waited on `full`, the producer busy):
# the wgmma and layer tests (the layer's prefill now under the default), the sanitizers, the
# MXFP4 rows with wide2rv (the old default), wide2ra (the new) and wide2p, ncu of wide2p at w13 if
# time is left. Call 1's header follows.
# Issue 17, helper i25a, call 1 (one nvidia-h200, <= ~128 s of work): MXFP4 expert GEMMs through the
# pair kernel (K3_GEMM_WG_KERNEL=wide2p: tiles of 128 weight rows by two halves of up to 160 tokens,
# one m64 block a consumer warpgroup whose A fragments, converted once, feed the MMAs of both
# halves; wide2pa: wide2p where the groups hold > 128 rows on average, else wide2r) beside wide2rv
# (the default since 2026-12-02m), in ONE process:
#  - test-moe-gpu's wgmma tests (float64, fresh random inputs, poisoned outputs, unchanged
#    tolerances; wide2p / wide2pa on the chunk edges and on the pair edges: every half width
#    16 .. 160, groups of 1 .. 3 pair tiles, gathered and scattered, GLU / SCALE / BF16) and its
#    layer tests (new: the layer's prefill through wide2pa at ~131 rows a group);
#  - compute-sanitizer memcheck + racecheck on *wide_small* (MXFP4 through wide2p too);
#  - k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K; w13 and w2; each beside cuBLASLt
#    BF16), K3_BENCH_WG_KERNELS=$KERNELS; nvidia-smi every 500 ms;
#  - ncu of MXFP4 w13 T = 16K through wide2p (speed of light, scheduler, warp states, source
#    counters) and its SASS with per-instruction counts, if time is left.
# From the repository root:  PACK=.gpu/i25a LIMIT=128 bash .gpu/i25a/call.sh
# $OUT gets: tests.txt bench.txt ncu.txt sass.csv.xz misc.tar.xz.
set -u
PACK=${PACK:-.gpu/i25a}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-128}
KERNELS=${KERNELS:-wide2rv,wide2ra,wide2p,wide2rv,wide2ra,wide2p}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
{
  echo "== moe-gpu *wgmma*"
  MOE_TEST_FILTER='*wgmma*' timeout 40 "$T/test-moe-gpu" > "$M/wgmma.txt" 2>&1
  echo "== moe-gpu: exit $? at $(( $(date +%s) - t0 )) s"
  grep -E "err/tol|K3_GEMM_WG|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/wgmma.txt" | tail -60
} > "$OUT/tests.txt" 2>&1
echo "wgmma tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap 30 60)
  echo "==== moe_prefill MXFP4 $KERNELS, T = 16K and 4K (limit $l s)"
  K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$K/k3-bench" --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap 30 45)
  echo "== moe-gpu *layer* (limit $l s)"
  MOE_TEST_FILTER='*layer*' timeout "$l" "$T/test-moe-gpu" > "$M/layer.txt" 2>&1
  echo "== moe-gpu layer: exit $? at $(( $(date +%s) - t0 )) s"
  grep -E "^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/layer.txt" | tail -20
  for tool in memcheck racecheck; do
    l=$(cap 14 38)
    echo "== $tool moe *wide_small* (limit $l s)"
    MOE_TEST_FILTER='*wide_small*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} >> "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  v=mxfp4_w13
  l=$(cap 45 12)
  echo "==== ncu $v wide2p (limit $l s)"
  if [ "$l" -gt 15 ]; then
    S="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters"
    K3_BENCH_MOE_VARIANT=$v K3_BENCH_WG_KERNELS=wide2p timeout "$l" ncu --clock-control none --kernel-name regex:wg_kernel \
      --launch-count 1 $S -o "$M/ncu-$v" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench-$v.csv" > "$M/ncu-$v.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    l=$(( $(left) - 3 )); [ "$l" -gt 12 ] && l=12
    timeout "$l" ncu -i "$M/ncu-$v.ncu-rep" --print-details all > "$M/ncu-$v-details.txt" 2>&1
    grep -vE "^ *-+ *$" "$M/ncu-$v-details.txt" | grep -E "Duration|Frequency|Throughput|Issue|Stall|Warp Cycles|Pipe|Eligible|Active|Executed" | head -50
    l=$(( $(left) - 2 ))
    [ "$l" -gt 3 ] && timeout "$l" ncu -i "$M/ncu-$v.ncu-rep" --page source --print-source sass --csv 2>&1 | xz -6 > "$OUT/sass.csv.xz"
    echo "==== sass at $(( $(date +%s) - t0 )) s"
  else
    echo "no time"
  fi
} > "$OUT/ncu.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid" "$OUT/tests.txt" | head -30
awk '/^====/ { print } /^grouped_gemm/ { r = $2 " " $3 " " $(NF-13) " " $(NF-12) " " $(NF-11) } /^ +cublasLt/ && r { print r, "cublasLt", $2, $5, $6; r = "" }' "$OUT/bench.txt"
grep -E "====|Duration|Throughput|Issue" "$OUT/ncu.txt" | head -12
echo "call: $(( $(date +%s) - t0 )) s"
