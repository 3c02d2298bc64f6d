#!/usr/bin/env bash
# Second device call of issue 17's fourth round (one nvidia-h200, ~2 minutes): the final gemv build
# (128-deep MXFP4 blocks, the 15-instruction E2M1 expansion, two CTAs an SM at 16 tokens) after
# call 1 (k3-2026-12-01f.sh) measured the 512-deep variant no faster. Runs: the moe GPU test,
# memcheck on its gemv and small-sizes cases, k3-bench --only moe, then the MXFP4 and BF16 gemv
# (8 tokens a pass, GLU epilogue) under ncu (one launch each) and the MXFP4 kernel's SASS
# instruction mix (cuobjdump), to say what limits it; nvidia-smi sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17d bash .gpu/h17d/k3-2026-12-01g.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-ncu.txt k3-sass.txt k3-misc.tar.xz (k3-env.txt k3-smi.csv
# k3-bench.csv).
set -u
PACK=${PACK:-.gpu/h17d}
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
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
T=$B/tests/kernels
{
  echo "== moe-gpu"
  timeout 120 "$T/test-moe-gpu" 2>&1; echo "== moe-gpu: exit $?"
  for f in '*gemv*' '*small*'; do
    echo "== memcheck moe '$f'"
    MOE_TEST_FILTER="$f" timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-moe-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|Invalid|OK|FAILED" | tail -20
    echo "== memcheck moe '$f': exit ${PIPESTATUS[0]}"
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s: $(grep -E '^== .*exit' "$OUT/k3-tests.txt" | tr '\n' ' ')"
timeout 120 "$B/kernels/k3-bench" --only moe -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "bench exit $? at $(( $(date +%s) - t0 )) s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{
  for k in 'gemv_kernel<true, 1, 2, false>' 'gemv_kernel<false, 1, 2, false>'; do
    echo "== ncu $k"
    timeout 150 "$NCU" --clock-control none --kernel-name-base demangled -k "regex:$k" --launch-skip 30 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      "$B/kernels/k3-bench" --only moe -o /dev/null 2>&1 | grep -v "^grouped_gemm\|^gemm\|^copy\|^moe" | tail -150
    echo "== ncu exit ${PIPESTATUS[0]}"
  done
} > "$OUT/k3-ncu.txt" 2>&1
echo "ncu done at $(( $(date +%s) - t0 )) s"
{
  cuobjdump -sass "$B/kernels/k3-bench" 2>/dev/null |
    awk '/Function :/ {p = ($0 ~ /gemv_kernelILb1ELi1ELi2ELb0E/)} p' > "$M/sass.txt"
  echo "== SASS of gemv_kernel<true, 1, 2, false>: $(wc -l < "$M/sass.txt") lines; opcode counts:"
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+' "$M/sass.txt" | awk '{print $NF}' | sed 's/\..*//' |
    sort | uniq -c | sort -rn | head -40
  echo "== the body"
  cat "$M/sass.txt"
} > "$OUT/k3-sass.txt" 2>&1
kill "$smi"
rm -f "$M/sass.txt"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^copy|gemv" "$OUT/k3-bench.txt" | head -20
grep -E "^== |Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Issue Slots Busy|No Eligible|Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued" "$OUT/k3-ncu.txt" | head -60
head -45 "$OUT/k3-sass.txt"
echo "call: $(( $(date +%s) - t0 )) s"
