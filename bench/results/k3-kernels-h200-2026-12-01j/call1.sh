#!/usr/bin/env bash
# Device call of issue 17's grouped-GEMM round (one nvidia-h200, at most ~280 s of work): the wgmma
# GEMM with TMA weight tiles and the MXFP4 scales converted once per two k steps (the default)
# beside the round-3 producer (K3_GEMM_WG_WEIGHTS=cp: weight tiles by cp.async), in one process
# each: test-moe-gpu (both), k3-bench --only moe (both: grouped prefill rows with cuBLASLt at equal
# FLOPs), compute-sanitizer memcheck and racecheck on the wgmma and small cases (default), and
# ncu on the first launch of each wgmma kernel (default, then cp if time is left).
# nvidia-smi sampled every 500 ms throughout.
# From the repository root:  PACK=.gpu/h17k bash .gpu/h17k/call.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-ncu.txt k3-misc.tar.xz (env, smi, CSVs, ncu reports).
set -u
PACK=${PACK:-.gpu/h17k}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-280}
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
{
  for v in tma cp; do
    echo "== moe-gpu weights=$v"
    if [ $v = cp ]; then export K3_GEMM_WG_WEIGHTS=cp; else unset K3_GEMM_WG_WEIGHTS; fi
    timeout 90 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|wgmma" | tail -40
    echo "== moe-gpu weights=$v: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
  unset K3_GEMM_WG_WEIGHTS
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
{
  for v in tma cp; do
    echo "==== weights=$v"
    if [ $v = cp ]; then export K3_GEMM_WG_WEIGHTS=cp; else unset K3_GEMM_WG_WEIGHTS; fi
    timeout 80 "$K/k3-bench" --only moe -o "$M/k3-bench-$v.csv" 2>&1
    echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
    [ "$(left)" -gt 120 ] || break
  done
  unset K3_GEMM_WG_WEIGHTS
} > "$OUT/k3-bench.txt" 2>&1
echo "k3-bench done at $(( $(date +%s) - t0 )) s"
{
  for tool in memcheck:'*wgmma*' memcheck:'*small*' racecheck:'*small*' racecheck:'*wgmma*'; do
    t=${tool%%:*} f=${tool#*:}
    l=$(( $(left) - 60 )); [ "$l" -gt 10 ] || { echo "no time for $t $f"; continue; }
    [ "$l" -gt 60 ] && l=60
    echo "== $t moe $f"
    MOE_TEST_FILTER="$f" timeout "$l" compute-sanitizer --tool "$t" --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race|hazard|FAILED|PASSED|OK \]" | tail -12
    echo "== $t moe $f: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
} >> "$OUT/k3-tests.txt" 2>&1
echo "sanitizer done at $(( $(date +%s) - t0 )) s"
{
  for v in tma cp; do
    l=$(( $(left) - 8 )); [ "$l" -gt 25 ] || { echo "no time for ncu $v"; break; }
    echo "==== ncu weights=$v (limit $l s)"
    if [ $v = cp ]; then export K3_GEMM_WG_WEIGHTS=cp; else unset K3_GEMM_WG_WEIGHTS; fi
    timeout "$l" ncu --clock-control none --kernel-id ::regex:wg_kernel:1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats --section LaunchStats \
      -o "$M/ncu-$v" "$K/k3-bench" --only moe -o "$M/ncu-bench-$v.csv" > "$M/ncu-$v.log" 2>&1
    echo "==== exit $? at $(( $(date +%s) - t0 )) s"
    [ -f "$M/ncu-$v.ncu-rep" ] && ncu --import "$M/ncu-$v.ncu-rep" --page details 2>&1 |
      grep -E "wg_kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|SM Busy|Issue Slots Busy|Executed Ipc Active|Warp Cycles Per Issued|Stall|No Eligible|Eligible Warps|Registers Per|Shared Memory Configuration|Mem Busy|Max Bandwidth|Mem Pipes Busy|SM Frequency|DRAM Frequency|Elapsed Cycles"
  done
  unset K3_GEMM_WG_WEIGHTS
} > "$OUT/k3-ncu.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit|SUMMARY" "$OUT/k3-tests.txt"
grep -E -A1 "^====|tokens=(4096|16384)" "$OUT/k3-bench.txt" | grep -E "^====|tokens=|cublasLt"
grep -E "^====|wg_kernel|Duration" "$OUT/k3-ncu.txt" | head -30
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
