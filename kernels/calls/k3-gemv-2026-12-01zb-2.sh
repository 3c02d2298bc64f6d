#!/usr/bin/env bash
# Device call 2 of issue 17's eighth MXFP4 decode gemv round (helper i21b, one nvidia-h200, <= 150 s),
# after call 1 (k3-gemv-2026-12-01zb.sh): gemv_f16_kernel now with 8-token passes and no k slices
# by default (call 1's measurements), the first pass a CTA a row with the row in registers, and
# the gemv launched with programmatic dependent launch (its weight loads overlap the first pass;
# K3_GEMV_F16_PDL=0 rows beside). Runs: test-moe-gpu '*gemv_f16*' (every mode, call 1 stopped at a
# test bug), '*gemv_lean*', '*grouped_gemv*', '*small_all*', '*k3_expert*', '*layer_decode*',
# '*gemv_fp4_bulk*' (float64 references), `k3-bench --only gemv`, compute-sanitizer memcheck and
# racecheck on test_gemv_f16_scales, k3-slice decode at B = 1 and 256 (CUDA graphs with the
# programmatic edge), ncu of the first w13 B = 1 launches of gemv_f16_kernel and f16act_kernel;
# nvidia-smi every 500 ms. Carries .gpu/h20b alone:
#   run(carry=[".gpu/h20b"], command="PACK=.gpu/h20b LIMIT=140 bash .gpu/h20b/k3-gemv-2026-12-01zb-2.sh", timeout_s=150)
# $OUT gets: k3-tests.txt k3-bench.txt k3-sanitizer.txt k3-ncu.txt k3-slice.txt k3-misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h20b}
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
  uname -r; command -v ncu compute-sanitizer
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
{
  for f in '*gemv_f16*:40' '*gemv_lean*:25' '*grouped_gemv*:12' '*small_all*:12' '*k3_expert*:15' '*layer_decode*:15' '*gemv_fp4_bulk*:15'; do
    echo "== test-moe-gpu ${f%:*}"
    MOE_TEST_FILTER="${f%:*}" timeout "${f#*:}" "$PACK/test-moe-gpu" 2>&1
    echo "== test-moe-gpu ${f%:*}: exit $?"
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
timeout 45 "$PACK/k3-bench" --only gemv -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "== k3-bench: exit $?" >> "$OUT/k3-bench.txt"
echo "bench done at $(( $(date +%s) - t0 )) s"
san() {  # tool, env
  local l; l=$(left); [ "$l" -gt 12 ] || { echo "no time for $1 $2"; return; }
  echo "== $1 test_gemv_f16_scales $2"
  env $2 MOE_TEST_FILTER='*gemv_f16_scales' timeout $(( l > 40 ? 15 : l - 6 )) compute-sanitizer --tool $1 --error-exitcode 9 "$PACK/test-moe-gpu" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED|OK \]" | tail -12
  echo "== $1: exit ${PIPESTATUS[0]}"
}
{ san memcheck K3_GEMV_X=1; san memcheck "K3_GEMV_F16_NT=2 K3_GEMV_F16_PDL=0"; san racecheck K3_GEMV_KSPLIT=2; san racecheck K3_GEMV_KSPLIT=4; } > "$OUT/k3-sanitizer.txt" 2>&1
l=$(left)
if [ "$l" -gt 30 ]; then
  timeout $(( l - 22 )) "$PACK/k3-slice" --prefill 1024 --decode 1:4096,256:4096 --reps 2 -o "$M/k3-slice.csv" > "$OUT/k3-slice.txt" 2>&1
  echo "== k3-slice: exit $?" >> "$OUT/k3-slice.txt"
else
  echo "no time for the slice" > "$OUT/k3-slice.txt"
fi
NCU="ncu --clock-control none --kill yes --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section Occupancy --section LaunchStats"
ncu1() {  # kernel regex, env: the first launch (w13 B = 1)
  local l; l=$(left); [ "$l" -gt 18 ] || { echo "no time for ncu $1"; return; }
  echo "== ncu $1 $2 (first launch: w13 B = 1)"
  env $2 timeout $(( l - 6 )) $NCU -k "regex:$1" "$PACK/k3-bench" --only gemv --quick --reps 3 -o /tmp/ncu.csv 2>&1 | grep -v "^==PROF==\|^grouped_gemm\|^  *mxfp4\|^  *f16\|^copy"
  echo "== ncu $1: exit ${PIPESTATUS[0]}"
}
{ ncu1 gemv_f16_kernel K3_GEMV_X=1; ncu1 f16act_kernel K3_GEMV_X=1; } > "$OUT/k3-ncu.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== |FAILED|rror" "$OUT/k3-tests.txt" | tail -16
grep -E "copy ceiling|weight bytes|^== " "$OUT/k3-bench.txt" | cut -c1-110
grep -E "^== |Duration|DRAM Throughput|Registers|Achieved Occupancy|Executed Instructions  |Issued Warp|No Eligible|Eligible Warps" "$OUT/k3-ncu.txt" | head -24
cat "$OUT/k3-sanitizer.txt"
tail -5 "$OUT/k3-slice.txt"
echo "call: $(( $(date +%s) - t0 )) s"
