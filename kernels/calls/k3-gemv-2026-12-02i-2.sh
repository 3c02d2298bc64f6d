#!/usr/bin/env bash
# Device call 2 of issue 17's MXFP4 decode gemv round at B = 1 (helper i23c, one nvidia-h200, <= 150 s):
# gemv_f16p_kernel now cuts the work per CTA (128-row units, the CTA's 8 warps 16 rows each: they
# share the activation rows in L1, as gemv_f16_kernel's do); call 1 (each warp its own range of
# 16-row units) was 5-28 points slower than gemv_f16_kernel at every batch. The same runs as call 1
# (kernels/calls/k3-gemv-2026-12-02i.sh) but `k3-bench --only gemv` three times (run-to-run spread
# of the back-to-back rows) and no copy sweep (call 1 has it). Carries .gpu/h23c alone:
#   run(carry=[".gpu/h23c"], command="PACK=.gpu/h23c LIMIT=140 bash .gpu/h23c/k3-gemv-2026-12-02i-2.sh", timeout_s=150)
# $OUT gets: k3-bench.txt (three runs) k3-tests.txt k3-sanitizer.txt k3-ncu.txt k3-moe.txt k3-misc.tar.xz.
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
for i in 1 2 3; do
  echo "== k3-bench --only gemv run $i"
  timeout 30 "$PACK/k3-bench" --only gemv -o "$M/k3-bench-$i.csv" 2>&1
  echo "== k3-bench run $i: exit $? at $(( $(date +%s) - t0 )) s"
done > "$OUT/k3-bench.txt" 2>&1
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
