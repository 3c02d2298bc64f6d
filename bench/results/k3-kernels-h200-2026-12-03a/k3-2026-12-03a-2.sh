#!/usr/bin/env bash
# Issue 17, helper i28a, call 2 (one nvidia-h200, <= 140 s with the start): the pick by rows a
# group ("wide2rpa": chunks of up to 96 at <= 80 rows a group on average, else wide2rp's) against
# wide2rp (the default), the other order than call 1, at both T. In ONE process:
#  1. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K; w13 and w2; each beside cuBLASLt
#     BF16), K3_BENCH_WG_KERNELS=wide2rpa,wide2rp x 3 (alternating; at 16K wide2rpa runs wide2rp's
#     kernels: an A / A there);
#  2. test-moe-gpu *k3_expert* (K3's w13 / w2 shapes: wide2rp and wide2rp6 at 73 rows and 300 / 170
#     rows a group, float64);
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp6* (time left).
# From the repository root:  PACK=.gpu/i28a bash .gpu/i28a/k3-2026-12-03a-2.sh
set -u
PACK=${PACK:-.gpu/i28a}
B=$PACK/b
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-118}
KERNELS=${KERNELS:-wide2rpa,wide2rp,wide2rpa,wide2rp,wide2rpa,wide2rp}
mkdir -p "$OUT" "$M" "$B"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
cap() { local l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }
tar xJf "$PACK/pack.tar.xz" -C "$B" || exit 2
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL K3_BENCH_MOE_VARIANT K3_BENCH_MOE_T
{
  l=$(cap 50 50)
  echo "==== moe_prefill MXFP4 $KERNELS, T = 16K and 4K (limit $l s)"
  K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$KERNELS timeout "$l" "$B/k3-bench" --only moe_prefill \
    -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  l=$(cap 40 22)
  echo "== moe-gpu *k3_expert* (limit $l s)"
  MOE_TEST_FILTER='*k3_expert*' timeout "$l" "$B/test-moe-gpu" > "$M/test-k3_expert.txt" 2>&1
  echo "== moe-gpu *k3_expert*: exit $? at $(( $(date +%s) - t0 )) s"
  grep -E "err/tol|K3_GEMM_WG_KERNEL|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" "$M/test-k3_expert.txt" | tail -24
  for tool in memcheck racecheck; do
    l=$(cap 12 1)
    echo "== $tool moe *wide_small_rp6* (limit $l s)"
    [ "$l" -gt 6 ] || { echo "no time"; continue; }
    MOE_TEST_FILTER='*wide_small_rp6*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$B/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|OK \]" "$M/san-$tool.txt" | tail -6
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} > "$OUT/tests.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|FAILED|Failure|PASSED|SUMMARY|hazard|Invalid" "$OUT/tests.txt" | head -30
grep -E "^====|repack" "$OUT/bench.txt"
awk '/^grouped_gemm/ { for (i = 1; i <= NF; i++) if ($i ~ /^wg_kernel=/) { r = $2 " " $3 " " $i " " $(i+1); break } } /^ +cublasLt/ && r { print r, "cublasLt", $2, $(NF-2); r = "" }' "$OUT/bench.txt"
echo "call: $(( $(date +%s) - t0 )) s"
