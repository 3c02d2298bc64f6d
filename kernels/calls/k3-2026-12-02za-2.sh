#!/usr/bin/env bash
# Issue 17, helper i27a, call 2 (one nvidia-h200, <= 140 s with the start): the same pack as
# call 1 unless the README says otherwise. In ONE process:
#  1. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K; w13 and w2; each beside cuBLASLt
#     BF16), K3_BENCH_WG_KERNELS=wide2rp,wide2rl x 3 (alternating, the other order than call 1);
#  2. compute-sanitizer memcheck + racecheck of *wide_small* (test_gemm_wgmma_wide_small: wide2rp
#     on wide2rv's chunks; test_gemm_wgmma_wide_small_rp: wide2rp at both chunk sizes, scale
#     bytes 0 .. 128);
#  3. test-moe-gpu *k3_expert* (K3's w13 / w2 shapes, wide2rp at both chunk sizes, float64) and
#     *layer_prefill* (time left).
# From the repository root:  PACK=.gpu/i27a bash .gpu/i27a/k3-2026-12-02za-2.sh
set -u
PACK=${PACK:-.gpu/i27a}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-120}
KERNELS=${KERNELS:-wide2rp,wide2rl,wide2rp,wide2rl,wide2rp,wide2rl}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT
{
  l=$(cap 40 50)
  echo "==== moe_prefill MXFP4 $KERNELS, T = 16K and 4K (limit $l s)"
  K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$B/k3-bench" --only moe_prefill -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(cap 20 25)
    echo "== $tool moe *wide_small* (limit $l s)"
    MOE_TEST_FILTER='*wide_small*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|OK \]" "$M/san-$tool.txt" | tail -6
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
  for f in '*k3_expert*' '*layer_prefill*'; do
    l=$(cap 30 2)
    echo "== moe-gpu $f (limit $l s)"
    MOE_TEST_FILTER=$f timeout "$l" "$B/test-moe-gpu" > "$M/test-${f//\*/}.txt" 2>&1
    echo "== moe-gpu $f: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "err/tol|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/test-${f//\*/}.txt" | tail -12
  done
} > "$OUT/tests.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|FAILED|Failure|PASSED|SUMMARY|hazard|Invalid" "$OUT/tests.txt" | head -30
grep -E "^====|repack" "$OUT/bench.txt"
awk '/^grouped_gemm/ { for (i = 1; i <= NF; i++) if ($i ~ /^wg_kernel=/) { r = $2 " " $3 " " $i " " $(i+1); break } } /^ +cublasLt/ && r { print r, "cublasLt", $2, $(NF-2); r = "" }' "$OUT/bench.txt"
echo "call: $(( $(date +%s) - t0 )) s"
