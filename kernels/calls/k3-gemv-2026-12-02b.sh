#!/usr/bin/env bash
# Device call 1 of issue 17's MXFP4 decode gemv round at B = 1 (helper i22a, one nvidia-h200, <= 150 s):
# gemv_f16_kernel fused (each CTA converts its pass's activation rows into shared memory: no first
# pass, no programmatic-launch wait; the default) beside the two-kernel path it replaces
# (K3_GEMV_F16_FUSE=0: f16act_kernel, then the gemv by PDL), both also with the bulk L2 prefetch 2-3
# sectors ahead (K3_GEMV_F16_L2PF=2). Runs: `k3-bench --only gemv` (old and new back to back in one
# process), test-moe-gpu '*gemv_f16*' '*gemv_lean*' '*layer_decode*' '*grouped_gemv*' (float64
# references, fresh random inputs, poisoned outputs), compute-sanitizer memcheck and racecheck on
# test_gemv_f16_scales (fused, fused + bulk prefetch, 2 k slices: the shared k-slice sum) and
# test_gemv_lean (2 k slices), ncu of w2 B = 1 (fused; two-kernel), the kernels' registers;
# nvidia-smi every 500 ms. Carries .gpu/h22a alone:
#   run(carry=[".gpu/h22a"], command="PACK=.gpu/h22a LIMIT=140 bash .gpu/h22a/k3-gemv-2026-12-02b.sh", timeout_s=150)
# $OUT gets: k3-bench.txt k3-tests.txt k3-sanitizer.txt k3-ncu.txt k3-misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h22a}
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
  cuobjdump --dump-resource-usage "$PACK/k3-bench" 2>&1 | grep -A1 -E "gemv_f16_kernel|f16act_kernel|gemv_lean_kernelILi1ELi2ELb0ELi1" | grep -oE "Function [^:]*|REG:[0-9]+ STACK:[0-9]+ SHARED:[0-9]+ LOCAL:[0-9]+" | paste - -
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
timeout 50 "$PACK/k3-bench" --only gemv -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "== k3-bench: exit $? at $(( $(date +%s) - t0 )) s" >> "$OUT/k3-bench.txt"
{
  for f in '*gemv_f16*:40' '*gemv_lean*:20' '*layer_decode*:12' '*grouped_gemv*:10'; do
    l=$(left); [ "$l" -gt 50 ] || { echo "no time for $f"; continue; }
    s=$(date +%s)
    echo "== test-moe-gpu ${f%:*}"
    MOE_TEST_FILTER="${f%:*}" timeout "${f#*:}" "$PACK/test-moe-gpu" 2>&1
    echo "== test-moe-gpu ${f%:*}: exit $? ($(( $(date +%s) - s )) s)"
  done
} > "$OUT/k3-tests.txt" 2>&1
san() {  # tool, filter, env
  local l; l=$(left); [ "$l" -gt 28 ] || { echo "no time for $1 $2 $3"; return; }
  echo "== $1 $2 $3"
  env $3 MOE_TEST_FILTER="$2" timeout 12 compute-sanitizer --tool $1 --error-exitcode 9 "$PACK/test-moe-gpu" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED|OK \]" | tail -8
  echo "== $1: exit ${PIPESTATUS[0]}"
}
{ san memcheck '*gemv_f16_scales' K3_GEMV_X=1; san racecheck '*gemv_f16_scales' K3_GEMV_X=1;
  san memcheck '*gemv_f16_scales' K3_GEMV_F16_L2PF=2; san racecheck '*gemv_f16_scales' K3_GEMV_KSPLIT=2;
  san racecheck '*gemv_lean_scales' K3_GEMV_KSPLIT=2; } > "$OUT/k3-sanitizer.txt" 2>&1
NCU="ncu --clock-control none --kill yes --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
ncu1() {  # kernel regex, launches, env: the first launches (w2 B = 1)
  local l; l=$(left); [ "$l" -gt 14 ] || { echo "no time for ncu $1 $3"; return; }
  echo "== ncu $1 $3 (first launches: w2 B = 1)"
  env $3 K3_BENCH_GEMV_GLU=0 timeout $(( l - 4 )) $NCU --launch-count $2 -k "regex:$1" "$PACK/k3-bench" --only gemv --quick --reps 2 -o /tmp/ncu.csv 2>&1 | grep -v "^==PROF==\|^grouped_gemm\|^  *mxfp4\|^  *f16\|^copy"
  echo "== ncu $1: exit ${PIPESTATUS[0]}"
}
{ ncu1 gemv_f16_kernel 1 K3_GEMV_X=1; ncu1 'gemv_f16_kernel|f16act_kernel' 2 K3_GEMV_F16_FUSE=0; } > "$OUT/k3-ncu.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== |FAILED|rror" "$OUT/k3-tests.txt" | tail -16
grep -E "copy ceiling|weight bytes|^== " "$OUT/k3-bench.txt" | cut -c1-110
grep -E "^== |Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issued Warp|No Eligible|Dynamic Shared" "$OUT/k3-ncu.txt" | head -30
cat "$OUT/k3-sanitizer.txt"
echo "call: $(( $(date +%s) - t0 )) s"
