#!/usr/bin/env bash
# Device call of issue 17's grouped-GEMM round q (one nvidia-h200, <= ~150 s of work): the wgmma
# expert GEMM in clusters (K3_GEMM_WG_CLUSTER=auto: ceil(rows per group / 128) CTAs, 3 at
# T = 16K: the CTAs of a cluster take one expert's token chunks and share its weight tiles by
# TMA multicast) beside the kernel without clusters (K3_GEMM_WG_CLUSTER=1), back to back in one
# process (k3-bench --only moe_prefill --quick: T = 16K, BF16 then MXFP4, w13 then w2, each beside
# cuBLASLt); test-moe-gpu (float64 references); compute-sanitizer memcheck and racecheck on the
# cluster test; then, as time allows, clusters of 2 (K3_GEMM_WG_CLUSTER=2), and ncu on
# BF16 w13 at T = 16K with and without clusters (first launch of each).
# nvidia-smi sampled every 500 ms throughout.
# From the repository root:  LIMIT=150 PACK=.gpu/h18b bash .gpu/h18b/call.sh
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
{
  echo "== moe-gpu"
  timeout 70 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|wgmma|error" | tail -60
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
{
  echo "==== clusters: K3_GEMM_WG_CLUSTER=auto"
  K3_GEMM_WG_CLUSTER=auto timeout 60 "$K/k3-bench" --only moe_prefill --quick -o "$M/k3-bench-auto.csv" 2>&1
  echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
} > "$OUT/k3-bench.txt" 2>&1
echo "k3-bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck racecheck; do
    l=$(( $(left) - 10 )); [ "$l" -gt 10 ] || { echo "no time for $tool"; continue; }
    [ "$l" -gt 30 ] && l=30
    echo "== $tool moe *wgmma_clusters*"
    MOE_TEST_FILTER='*wgmma_clusters*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race|hazard|FAILED|PASSED|OK \]|rror" | tail -12
    echo "== $tool: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
} >> "$OUT/k3-tests.txt" 2>&1
echo "sanitizer done at $(( $(date +%s) - t0 )) s"
for c in 2; do
  l=$(( $(left) - 5 )); [ "$l" -gt 40 ] || { echo "no time for clusters of $c" >> "$OUT/k3-bench.txt"; break; }
  {
    echo "==== clusters: K3_GEMM_WG_CLUSTER=$c (limit $l s)"
    K3_GEMM_WG_CLUSTER=$c timeout "$l" "$K/k3-bench" --only moe_prefill --quick -o "$M/k3-bench-c$c.csv" 2>&1
    echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  } >> "$OUT/k3-bench.txt" 2>&1
done
{
  for v in ELb1:cluster ELb0:nocluster; do
    l=$(( $(left) - 5 )); [ "$l" -gt 35 ] || { echo "no time for ncu ${v#*:}"; break; }
    echo "==== ncu BF16 w13 T = 16K, ${v#*:} (limit $l s)"
    K3_GEMM_WG_CLUSTER=auto K3_BENCH_MOE_VARIANT=bf16_w13 timeout "$l" ncu --clock-control none --kernel-name-base mangled \
      --kernel-name "regex:wg_kernelILb0ELb1${v%%:*}" --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      --section WarpStateStats --section LaunchStats \
      -o "$M/ncu-${v#*:}" "$K/k3-bench" --only moe_prefill --quick -o "$M/ncu-bench.csv" > "$M/ncu-${v#*:}.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    [ -f "$M/ncu-${v#*:}.ncu-rep" ] && ncu --import "$M/ncu-${v#*:}.ncu-rep" --page details 2>&1 |
      grep -E "wg_kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Issue Slots Busy|Executed Ipc Active|No Eligible|Eligible Warps|Cluster|Mem Busy|Max Bandwidth|Mem Pipes Busy|SM Frequency|L2 Hit Rate|Shared Memory"
  done
} > "$OUT/k3-ncu.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
cat "$OUT/k3-tests.txt" | grep -E "^==|SUMMARY|FAILED|Failure|PASSED" | head -30
grep -E "grouped_gemm|cublasLt|====" "$OUT/k3-bench.txt" | head -60
cat "$OUT/k3-ncu.txt"
echo "call: $(( $(date +%s) - t0 )) s"
