#!/usr/bin/env bash
# Device call 1 of issue 17's eighth MXFP4 decode gemv round (helper i21b, one nvidia-h200, <= 150 s):
# gemv_f16_kernel (the FP16-pair layout of the weights, FP16 activations from a first pass, FP16
# MMAs one scale group each) against gemv_lean_kernel (K3_GEMV_FP4=lean), back to back in one
# process. Runs: test-moe-gpu '*gemv_f16*' (new: every epilogue, tile counts, k slices, scales),
# '*gemv_lean*', '*grouped_gemv*', '*small_all*', '*k3_expert*', '*layer_decode*' (float64
# references), `k3-bench --only gemv`, compute-sanitizer memcheck and racecheck on
# test_gemv_f16_scales (8-token passes with 2 and 4 k slices: the shared-memory sums; and 16-token
# passes), k3-slice decode at B = 1 and 256 (the slice passes its expert bytes as the FP16-pair
# layout too), ncu of the first w13 B = 1 launch of gemv_f16_kernel; nvidia-smi every 500 ms.
# Carries .gpu/h20b alone:
#   run(carry=[".gpu/h20b"], command="PACK=.gpu/h20b LIMIT=140 bash .gpu/h20b/k3-gemv-2026-12-01zb.sh", timeout_s=150)
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
  for f in '*gemv_f16*:30' '*gemv_lean*:30' '*grouped_gemv*:12' '*small_all*:12' '*k3_expert*:20' '*layer_decode*:20'; do
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
{ san memcheck K3_GEMV_F16_NT=1; san memcheck K3_GEMV_F16_NT=2; san racecheck K3_GEMV_F16_NT=1; san racecheck "K3_GEMV_F16_NT=1 K3_GEMV_KSPLIT=4"; } > "$OUT/k3-sanitizer.txt" 2>&1
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
{ ncu1 gemv_f16_kernel K3_GEMV_X=1; } > "$OUT/k3-ncu.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== |FAILED|rror" "$OUT/k3-tests.txt" | tail -16
grep -E "copy ceiling|weight bytes|^== " "$OUT/k3-bench.txt" | cut -c1-110
grep -E "^== |Duration|DRAM Throughput|Registers|Achieved Occupancy|Executed Instructions  |Issued Warp|No Eligible|Eligible Warps" "$OUT/k3-ncu.txt" | head -20
cat "$OUT/k3-sanitizer.txt"
tail -5 "$OUT/k3-slice.txt"
echo "call: $(( $(date +%s) - t0 )) s"
