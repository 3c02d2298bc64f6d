#!/usr/bin/env bash
# Second device call of issue 17's grouped-GEMM round q (one nvidia-h200, <= ~150 s of work): the
# cluster kernel with the consumers' remote arrivals at the default .release.cta (call 1:
# .release.cluster, 1.65x slower than without clusters). k3-bench --only moe_prefill --quick
# (T = 16K, BF16 then MXFP4, w13 then w2, each row with K3_GEMM_WG_CLUSTER=auto / 2 and then
# without clusters, back to back, beside cuBLASLt): auto, 2, auto; test-moe-gpu's wgmma tests
# (float64 references); compute-sanitizer memcheck on both wgmma tests and racecheck on the
# cluster test (then the tiles test as time allows); ncu on BF16 w13 T = 16K with and without
# clusters. nvidia-smi sampled every 500 ms throughout.
# From the repository root:  LIMIT=150 PACK=.gpu/h18b bash .gpu/h18b/call2.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-ncu.txt k3-misc.tar.xz (env, smi, CSVs, ncu reports).
set -u
PACK=${PACK:-.gpu/h18b}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-150}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
T=$B/tests/kernels
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS
n=0
for c in auto 2 auto; do
  n=$((n + 1))
  {
    echo "==== clusters: K3_GEMM_WG_CLUSTER=$c (run $n)"
    K3_GEMM_WG_CLUSTER=$c timeout 40 "$K/k3-bench" --only moe_prefill --quick -o "$M/k3-bench-$n-$c.csv" 2>&1
    echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  } >> "$OUT/k3-bench.txt" 2>&1
done
echo "k3-bench done at $(( $(date +%s) - t0 )) s"
{
  echo "== moe-gpu *wgmma*"
  MOE_TEST_FILTER='*wgmma*' timeout 40 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | tail -80
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  for tool in memcheck:'*wgmma*' racecheck:'*wgmma_clusters*' racecheck:'*wgmma_tiles*'; do
    t=${tool%%:*} f=${tool#*:}
    l=$(( $(left) - 30 )); [ "$l" -gt 10 ] || { echo "no time for $t $f"; continue; }
    [ "$l" -gt 35 ] && l=35
    echo "== $t moe $f (limit $l s)"
    MOE_TEST_FILTER="$f" timeout "$l" compute-sanitizer --tool "$t" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$t-${f//\*/}.txt" 2>&1
    echo "== $t: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$t-${f//\*/}.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$t-${f//\*/}.txt" | head -6
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  for v in ELb1:cluster ELb0:nocluster; do
    l=$(( $(left) - 4 )); [ "$l" -gt 14 ] || { echo "no time for ncu ${v#*:}"; break; }
    echo "==== ncu BF16 w13 T = 16K, ${v#*:} (limit $l s)"
    K3_GEMM_WG_CLUSTER=auto K3_BENCH_MOE_VARIANT=bf16_w13 timeout "$l" ncu --clock-control none --kernel-name-base mangled \
      --kernel-name "regex:wg_kernelILb0ELb1${v%%:*}" --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      --section WarpStateStats --section LaunchStats \
      -o "$M/ncu-${v#*:}" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench.csv" > "$M/ncu-${v#*:}.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    [ -f "$M/ncu-${v#*:}.ncu-rep" ] && ncu --import "$M/ncu-${v#*:}.ncu-rep" --page details 2>&1 |
      grep -E "wg_kernel|Duration|Compute \(SM\) Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Issue Slots Busy|Executed Ipc Active|No Eligible|Eligible Warps|Cluster Size|L2 Hit Rate|Mem Pipes Busy|SM Frequency|Warp Cycles Per Issued|Stall|stall"
  done
} > "$OUT/k3-ncu.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
cat "$OUT/k3-tests.txt" | grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard" | head -30
grep -E "grouped_gemm|cublasLt|====" "$OUT/k3-bench.txt" | head -80
cat "$OUT/k3-ncu.txt"
echo "call: $(( $(date +%s) - t0 )) s"
