#!/usr/bin/env bash
# First device call of issue 17's fifth round (one nvidia-h200, ~6 minutes): KDA decode beside a
# copy of the same bytes, the ring decode with 8 lanes per state row (ring8, ring82) beside the
# shipped ring, the MXFP4 gemv with its register sets in ping-pong (no copy per step), and ncu
# (the kernel-name regex of the 01d call named 4 of the gemv's 5 template arguments and matched
# nothing; here a substring of the name, for the gemv, the decode ring and the prefill kernels).
# Runs: test-kda-gpu (default; decode cases under ring8 and ring82), memcheck on the decode cases
# under ring8 and the shipped ring, test-moe-gpu and memcheck on its gemv cases, kda-bench decode
# (default, ring8, ring82; B = 1, 64, 128, 256 at H = 96, each beside a same-bytes cudaMemcpy),
# k3-bench --only moe, ncu; nvidia-smi sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17e bash .gpu/h17e/k3-2026-12-01h.sh
# $OUT gets: k3-tests.txt kda-bench.txt k3-bench.txt k3-ncu.txt k3-misc.tar.xz (env, smi, CSVs).
set -u
PACK=${PACK:-.gpu/h17e}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
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
mc() {  # label env... -- cmd...: memcheck, summary lines only
  local label=$1; shift
  echo "== memcheck $label"
  env "$@" 2>&1 | grep -E "ERROR SUMMARY|Invalid|FAILED|PASSED|OK \]" | tail -20
  echo "== memcheck $label: exit ${PIPESTATUS[0]}"
}
{
  echo "== kda-gpu (default)"
  timeout 120 "$T/test-kda-gpu" 2>&1 | grep -E "rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure" | tail -60
  echo "== kda-gpu: exit ${PIPESTATUS[0]}"
  for v in ring8 ring82 ring; do
    echo "== kda-gpu decode KDA_DECODE_KERNEL=$v"
    KDA_DECODE_KERNEL=$v KDA_TEST_FILTER='*decode*' timeout 60 "$T/test-kda-gpu" 2>&1 |
      grep -E "rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure" | tail -30
    echo "== kda-gpu $v: exit ${PIPESTATUS[0]}"
  done
  for v in ring8 ring; do
    mc "kda decode $v" KDA_DECODE_KERNEL=$v KDA_TEST_FILTER='*decode*' timeout 120 \
      compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-kda-gpu"
  done
  echo "== moe-gpu"
  timeout 150 "$T/test-moe-gpu" 2>&1 | grep -E "rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure" | tail -40
  echo "== moe-gpu: exit ${PIPESTATUS[0]}"
  mc "moe *gemv*" MOE_TEST_FILTER='*gemv*' timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-moe-gpu"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
{
  for v in auto ring8 ring82; do
    echo "==== KDA_DECODE_KERNEL=$v"
    KDA_DECODE_KERNEL=$v timeout 100 "$K/kda-bench" --only decode --batch 1,64,128,256 -o "$M/kda-dec-$v.csv" 2>&1 |
      sed -n '/^device\|^copy\|^decode/,$p' | grep -v "^verify\|^ *$"
    echo "==== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
} > "$OUT/kda-bench.txt" 2>&1
echo "kda-bench done at $(( $(date +%s) - t0 )) s"
timeout 120 "$K/k3-bench" --only moe -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "k3-bench exit $? at $(( $(date +%s) - t0 )) s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis
  --section Occupancy --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum"
{
  echo "== ncu gemv (MXFP4 w13, B = 64: k3-bench --quick --only moe, gemv launch 70)"
  timeout 90 "$NCU" --clock-control none -k regex:gemv_kernel --launch-skip 70 --launch-count 1 $SEC \
    "$K/k3-bench" --quick --only moe -o /dev/null 2>&1 | grep -v "^grouped_gemm\|^gemm\|^copy\|^moe\|cublasLt" | tail -120
  echo "== ncu exit ${PIPESTATUS[0]}"
  for c in "auto 10 fp32" "auto 60 bf16" "ring8 180 bf16"; do
    set -- $c
    echo "== ncu kda_decode_ring KDA_DECODE_KERNEL=$1 launch $2 ($3, B = 64, H = 96)"
    KDA_DECODE_KERNEL=$1 timeout 90 "$NCU" --clock-control none -k regex:kda_decode_ring --launch-skip "$2" \
      --launch-count 1 $SEC "$K/kda-bench" --only decode --quick -o /dev/null 2>&1 | grep -v "^ *fp32\|^ *bf16" | tail -120
    echo "== ncu exit ${PIPESTATUS[0]}"
  done
  echo "== ncu prefill kernels (T = 4096, H = 96, fp32: the first 6 kda launches)"
  timeout 60 "$NCU" --clock-control none -k regex:kda --launch-count 6 --section SpeedOfLight --section LaunchStats \
    --section Occupancy "$K/kda-bench" --only prefill --quick -o /dev/null 2>&1 | grep -v "^prefill" | tail -150
  echo "== ncu exit ${PIPESTATUS[0]}"
} > "$OUT/k3-ncu.txt" 2>&1
echo "ncu done at $(( $(date +%s) - t0 )) s"
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit" "$OUT/k3-tests.txt"
grep -E "ERROR SUMMARY" "$OUT/k3-tests.txt"
cat "$OUT/kda-bench.txt"
grep -E "^copy|gemv" "$OUT/k3-bench.txt" | head -24
grep -E "^== |Duration|DRAM Throughput|Memory Throughput|dram__bytes|Compute \(SM\)|Issue Slots Busy|No Eligible|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Block Size|Grid Size|^  [a-z_:<>, ()0-9]*kda|gemv_kernel|No kernels" "$OUT/k3-ncu.txt" | head -120
echo "call: $(( $(date +%s) - t0 )) s"
