#!/usr/bin/env bash
# Device call 1 of issue 17's MXFP4 decode gemv round at B = 1 (helper i23c, one nvidia-h200, <= 150 s):
# the persistent gemv_f16p_kernel (one wave of 2 CTAs an SM, the (touched group, 16-row unit, 256-k
# pair) work cut evenly over the warps, split units summed by the second piece to arrive; the
# default up to 1/8 row a group: B = 1) beside the default before it (K3_GEMV_F16_PERSIST=0: the
# fused gemv_f16_kernel at B = 1) and, at B >= 16, the persistent kernel forced (=1). Runs:
# `k3-bench --only gemv` (old and new back to back in one process), test-moe-gpu '*gemv_f16*'
# '*layer_decode*' '*grouped_gemv*' (float64 references, fresh random inputs, poisoned outputs and
# workspace), compute-sanitizer memcheck and racecheck on test_gemv_f16_scales (every gemv_f16 mode,
# the persistent kernel on 264 and on 5 CTAs), ncu of w2 B = 1 (the persistent kernel; the fused kernel), `k3-bench --only moe
# --quick` (the MoE decode rows in a process of their own, default and K3_GEMV_F16_PERSIST=0) if
# time is left; the kernels' registers; nvidia-smi every 500 ms. Carries .gpu/h23c alone:
#   run(carry=[".gpu/h23c"], command="PACK=.gpu/h23c LIMIT=140 bash .gpu/h23c/k3-gemv-2026-12-02i.sh", timeout_s=150)
# $OUT gets: k3-bench.txt k3-copy.txt (copies 4 KiB - 1 GiB: the weight bytes' size) k3-tests.txt k3-sanitizer.txt k3-ncu.txt k3-moe.txt k3-misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h23c}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-140}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -x "$PACK/k3-bench" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack"; exit 2; }
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  uname -r; command -v ncu compute-sanitizer cuobjdump
  cuobjdump --dump-resource-usage "$PACK/k3-bench" 2>&1 | grep -A1 -E "gemv_f16p_kernel|gemv_f16_kernelILi1ELi[35]ELi1ELb1ELb1|f16act_kernel" | grep -oE "Function [^:]*|REG:[0-9]+ STACK:[0-9]+ SHARED:[0-9]+ LOCAL:[0-9]+" | paste - -
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
timeout 50 "$PACK/k3-bench" --only gemv -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "== k3-bench: exit $? at $(( $(date +%s) - t0 )) s" >> "$OUT/k3-bench.txt"
timeout 15 "$PACK/k3-bench" --only copy -o "$M/k3-copy.csv" > "$OUT/k3-copy.txt" 2>&1
echo "== k3-bench --only copy: exit $? at $(( $(date +%s) - t0 )) s" >> "$OUT/k3-copy.txt"
{
  for f in '*gemv_f16*:45' '*layer_decode*:12' '*grouped_gemv*:10'; do
    l=$(left); [ "$l" -gt 45 ] || { echo "no time for $f"; continue; }
    s=$(date +%s)
    echo "== test-moe-gpu ${f%:*}"
    MOE_TEST_FILTER="${f%:*}" timeout "${f#*:}" "$PACK/test-moe-gpu" 2>&1
    echo "== test-moe-gpu ${f%:*}: exit $? ($(( $(date +%s) - s )) s)"
  done
} > "$OUT/k3-tests.txt" 2>&1
san() {  # tool, filter, env, seconds
  local l; l=$(left); [ "$l" -gt 30 ] || { echo "no time for $1 $2 $3"; return; }
  echo "== $1 $2 $3"
  env $3 MOE_TEST_FILTER="$2" timeout $4 compute-sanitizer --tool $1 --error-exitcode 9 "$PACK/test-moe-gpu" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED|OK \]" | tail -8
  echo "== $1: exit ${PIPESTATUS[0]}"
}
{ san memcheck '*gemv_f16_scales' K3_GEMV_X=1 20; san racecheck '*gemv_f16_scales' K3_GEMV_X=1 20; } > "$OUT/k3-sanitizer.txt" 2>&1
NCU="ncu --clock-control none --kill yes --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
ncu1() {  # kernel regex, launches, env: the first launches (w2 B = 1)
  local l; l=$(left); [ "$l" -gt 22 ] || { echo "no time for ncu $1 $3"; return; }
  echo "== ncu $1 $3 (first launches: w2 B = 1)"
  env $3 K3_BENCH_GEMV_GLU=0 timeout 14 $NCU --launch-count $2 -k "regex:$1" "$PACK/k3-bench" --only gemv --quick --reps 2 -o /tmp/ncu.csv 2>&1 | grep -v "^==PROF==\|^grouped_gemm\|^  *mxfp4\|^  *f16\|^copy"
  echo "== ncu $1: exit ${PIPESTATUS[0]}"
}
{ ncu1 gemv_f16p_kernel 1 K3_GEMV_X=1; ncu1 gemv_f16_kernel 1 K3_GEMV_F16_PERSIST=0; } > "$OUT/k3-ncu.txt" 2>&1
{
  l=$(left)
  if [ "$l" -gt 40 ]; then
    timeout $(( l / 2 - 4 )) "$PACK/k3-bench" --only moe --quick -o "$M/k3-moe.csv" 2>&1; echo "== k3-bench --only moe --quick: exit $?"
    l=$(left); [ "$l" -gt 16 ] && { K3_GEMV_F16_PERSIST=0 timeout $(( l - 6 )) "$PACK/k3-bench" --only moe --quick -o "$M/k3-moe-old.csv" 2>&1; echo "== K3_GEMV_F16_PERSIST=0 k3-bench --only moe --quick: exit $?"; }
  else echo "no time for --only moe"; fi
} > "$OUT/k3-moe.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== |FAILED|rror" "$OUT/k3-tests.txt" | tail -16
grep -E "copy ceiling|weight bytes|^== " "$OUT/k3-bench.txt" | cut -c1-110
grep -E "^== |Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issued Warp|No Eligible|SM Active|Waves" "$OUT/k3-ncu.txt" | head -30
cat "$OUT/k3-sanitizer.txt"
grep -E "grouped_gemm.*gemv|^== " "$OUT/k3-moe.txt" | cut -c1-120
echo "call: $(( $(date +%s) - t0 )) s"
