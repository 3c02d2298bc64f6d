#!/usr/bin/env bash
# Device call 2 of issue 17's MXFP4 decode gemv at B = 1 (helper i24b, one nvidia-h200, <= 140 s): as call 1
# (kernels/calls/k3-gemv-2026-12-02k.sh) with the knob rows of call 2: the head prefetch (K3_GEMV_F16_HPF=1, 2),
# 4 and 1 rows a pass (K3_GEMV_F16_PROW: less shared memory a CTA), 4 warps with 1 row a pass, and the
# PDL / plain pairs again in alternating order; ncu of the default and of HPF=2. Call 1's header:
# (1) The measurement: `k3-bench --only gemv` now prints beside each decode row's single launches
# (cold L2) the same gemv back to back over its 8 routings (64 launches at B <= 16, 16 above, events
# around the batch; every routing's touched experts >> L2) and a copy of the same bytes back to back
# over >= 3 sets (rows `b2b`, `copy_b2b`); run twice (run-to-run spread), the first with the per-CTA
# trace of the fused kernel at B = 1 (K3_BENCH_GEMV_TRACE). (2) The kernel: the fused gemv_f16_kernel's
# launch knobs as rows of their own at B <= 64, back to back in one process: `f16fpdl` (launched by
# programmatic dependent launch, K3_GEMV_F16_FPDL=1), `f16w4` / `f16w2` (4 / 2 warps a CTA,
# K3_GEMV_F16_WPC), `f16w4pdl`, `f16w8pl0` (8 warps, plain: the default before this call, whatever
# the default row is). Then test-moe-gpu '*gemv_f16*' '*layer_decode*' '*grouped_gemv*' (float64,
# fresh random inputs, poisoned outputs), compute-sanitizer memcheck + racecheck of
# '*gemv_f16_scales' (every fused mode: 8 / 4 / 2 warps, PDL, 3 rows a pass), ncu of w2 B = 1
# (default kernel; W = 4 with PDL), the MoE decode rows (`--only moe --quick`), the K3 slice's decode
# steps (`k3-slice --quick --prefill 256 --decode 1:8192,16:8192 --reps 3`, CUDA graphs) when time is left;
# nvidia-smi every 500 ms. Carries .gpu/h24b alone:
#   run(carry=[".gpu/h24b"], command="PACK=.gpu/h24b LIMIT=135 bash .gpu/h24b/k3-gemv-2026-12-02k-2.sh", timeout_s=140)
# $OUT gets: k3-bench.txt (two runs) k3-tests.txt k3-sanitizer.txt k3-ncu.txt k3-moe.txt k3-misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h24b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-135}
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
  cuobjdump --dump-resource-usage "$PACK/k3-bench" 2>&1 | grep -A1 -E "gemv_f16_kernelILi1ELi[35]ELi1ELb1ELb1" | grep -oE "Function [^:]*|REG:[0-9]+ STACK:[0-9]+ SHARED:[0-9]+ LOCAL:[0-9]+" | paste - -
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
for i in 1 2; do
  echo "== k3-bench --only gemv run $i"
  if [ $i = 1 ]; then tr="K3_BENCH_GEMV_TRACE=$M/k3-trace.csv"; else tr=K3_BENCH_GEMV_X=1; fi
  env $tr timeout 40 "$PACK/k3-bench" --only gemv -o "$M/k3-bench-$i.csv" 2>&1
  echo "== k3-bench run $i: exit $? at $(( $(date +%s) - t0 )) s"
done > "$OUT/k3-bench.txt" 2>&1
{
  for f in '*gemv_f16*:50' '*layer_decode*:12' '*grouped_gemv*:10'; do
    l=$(left); [ "$l" -gt 40 ] || { echo "no time for $f"; continue; }
    s=$(date +%s)
    echo "== test-moe-gpu ${f%:*}"
    MOE_TEST_FILTER="${f%:*}" timeout "${f#*:}" "$PACK/test-moe-gpu" 2>&1
    echo "== test-moe-gpu ${f%:*}: exit $? ($(( $(date +%s) - s )) s)"
  done
} > "$OUT/k3-tests.txt" 2>&1
san() {  # tool, filter, seconds
  local l; l=$(left); [ "$l" -gt 25 ] || { echo "no time for $1 $2"; return; }
  echo "== $1 $2"
  MOE_TEST_FILTER="$2" timeout $3 compute-sanitizer --tool $1 --error-exitcode 9 "$PACK/test-moe-gpu" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED|OK \]" | tail -8
  echo "== $1: exit ${PIPESTATUS[0]}"
}
{ san memcheck '*gemv_f16_scales' 25; san racecheck '*gemv_f16_scales' 25; } > "$OUT/k3-sanitizer.txt" 2>&1
NCU="ncu --clock-control none --kill yes --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
ncu1() {  # env: the first gemv_f16_kernel launch (w2 B = 1)
  local l; l=$(left); [ "$l" -gt 25 ] || { echo "no time for ncu $1"; return; }
  echo "== ncu gemv_f16_kernel $1 (first launch: w2 B = 1)"
  env $1 K3_BENCH_GEMV_GLU=0 timeout 14 $NCU --launch-count 1 -k "regex:gemv_f16_kernel" "$PACK/k3-bench" --only gemv --quick --reps 2 -o /tmp/ncu.csv 2>&1 | grep -v "^==PROF==\|^grouped_gemm\|^  *mxfp4\|^  *f16\|^copy\|^b2b"
  echo "== ncu: exit ${PIPESTATUS[0]}"
}
{ ncu1 K3_GEMV_F16_HPF=0; ncu1 K3_GEMV_F16_HPF=2; } > "$OUT/k3-ncu.txt" 2>&1
{
  l=$(left)
  if [ "$l" -gt 30 ]; then
    timeout $(( l / 2 - 4 )) "$PACK/k3-bench" --only moe --quick -o "$M/k3-moe.csv" 2>&1; echo "== k3-bench --only moe --quick: exit $?"
  else echo "no time for --only moe"; fi
  l=$(left)
  if [ -x "$PACK/k3-slice" ] && [ "$l" -gt 20 ]; then
    timeout $(( l - 6 )) "$PACK/k3-slice" --quick --prefill 256 --decode 1:8192,16:8192 --reps 3 -o "$M/k3-slice.csv" 2>&1 | tail -40; echo "== k3-slice: exit ${PIPESTATUS[0]}"
  fi
} > "$OUT/k3-moe.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== |FAILED|rror" "$OUT/k3-tests.txt" | tail -16
grep -E "copy ceiling|weight bytes|trace|^== " "$OUT/k3-bench.txt" | grep -E "^== |mxfp4_w|f16|copy ceiling" | cut -c1-230
grep -E "^== |Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issued Warp|No Eligible|SM Active|Waves" "$OUT/k3-ncu.txt" | head -30
cat "$OUT/k3-sanitizer.txt"
grep -E "grouped_gemm.*gemv|^== |step" "$OUT/k3-moe.txt" | cut -c1-140 | head -30
echo "call: $(( $(date +%s) - t0 )) s"
