#!/usr/bin/env bash
# Issue 17, helper i27a, call 1 (one nvidia-h200, <= 140 s with the start): MXFP4 expert GEMMs
# at T = 16K. wide2rp (new, opt-in: wide2rl's kernels reading the weights in the wgmma tile layout,
# k3_gemm_repack_wg(), once at load: one 16-byte load a lane a 16-row k block, 8 integer
# instructions and 4 multiplies an A fragment) beside wide2rl (the default), in ONE process:
#  1. test-moe-gpu's wgmma tests (float64, fresh random inputs, poisoned outputs: wide2rp on the
#     chunk edges, <= 128 rows a group, the small wide case, scale bytes 0 .. 128; the repacked
#     bytes decoded on the host);
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K; w13 and w2; each beside cuBLASLt
#     BF16), K3_BENCH_WG_KERNELS=wide2rl,wide2rp x 3 (alternating: medians of each, and of the
#     cuBLASLt rows beside them); the repack's time printed;
#  3. compute-sanitizer memcheck + racecheck of *wide_small* (wide2rp in both tests there);
#  4. ncu --set full of one MXFP4 w2 launch at T = 16K: wide2rl (the default before), then wide2rp.
# The pack: 9717b61 (GROUPED_DEFAULT "wide2rl": wide2rp by name only).
# From the repository root:  PACK=.gpu/i27a bash .gpu/i27a/k3-2026-12-02za.sh
set -u
PACK=${PACK:-.gpu/i27a}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-130}
KERNELS=${KERNELS:-wide2rl,wide2rp,wide2rl,wide2rp,wide2rl,wide2rp}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
{
  l=$(cap 35 80)
  echo "== moe-gpu *wgmma* (limit $l s)"
  MOE_TEST_FILTER='*wgmma*' timeout "$l" "$B/test-moe-gpu" > "$M/wgmma.txt" 2>&1
  echo "== moe-gpu: exit $? at $(( $(date +%s) - t0 )) s"
  grep -E "err/tol|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/wgmma.txt" | tail -40
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap 40 45)
  echo "==== moe_prefill MXFP4 $KERNELS, T = 16K and 4K (limit $l s)"
  K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$B/k3-bench" --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(cap 16 40)
    echo "== $tool moe *wide_small* (limit $l s)"
    MOE_TEST_FILTER='*wide_small*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|OK \]" "$M/san-$tool.txt" | tail -6
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} >> "$OUT/tests.txt" 2>&1
{
  for k in wide2rl wide2rp; do
    l=$(cap 30 4)
    echo "==== ncu --set full mxfp4_w2 16K $k (limit $l s)"
    [ "$l" -gt 15 ] || { echo "no time"; continue; }
    K3_BENCH_MOE_VARIANT=mxfp4_w2 K3_BENCH_WG_KERNELS=$k timeout "$l" ncu --set full --clock-control none \
      --kernel-name regex:wg_kernel --launch-count 1 -o "$M/ncu-$k" "$B/k3-bench" --only moe_prefill --quick \
      -o "$M/ncu-bench-$k.csv" > "$M/ncu-$k.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    l=$(( $(left) - 2 )); [ "$l" -gt 8 ] && l=8
    [ "$l" -gt 1 ] && timeout "$l" ncu -i "$M/ncu-$k.ncu-rep" --print-details all > "$OUT/ncu-$k-details.txt" 2>&1
    grep -vE "^ *-+ *$" "$OUT/ncu-$k-details.txt" | grep -E "Duration|SM Frequency|Throughput|Issue Slots|Executed Ipc|Registers|Warp Cycles Per Issued|No Eligible|Stall" | head -30
  done
} > "$OUT/ncu.txt" 2>&1
kill "$SMI_PID"
rm -f "$M"/*.ncu-rep
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|FAILED|Failure|PASSED|SUMMARY|hazard|Invalid" "$OUT/tests.txt" | head -24
grep -E "^====|repack" "$OUT/bench.txt"
awk '/^grouped_gemm/ { for (i = 1; i <= NF; i++) if ($i ~ /^wg_kernel=/) { r = $2 " " $3 " " $i " " $(i+1); break } } /^ +cublasLt/ && r { print r, "cublasLt", $2, $(NF-2); r = "" }' "$OUT/bench.txt"
grep -E "====|Duration|SM Frequency|Issue Slots" "$OUT/ncu.txt" | head -16
echo "call: $(( $(date +%s) - t0 )) s"
