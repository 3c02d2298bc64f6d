#!/usr/bin/env bash
# Device call 1 of issue 17's MXFP4 decode gemv round (helper i19d, one nvidia-h200, <= 150 s):
# gemv_lean_kernel (the new default for BF16 activations: the same arithmetic as gemv_kernel with
# far fewer instructions around it) and the grouped gemv grid of min(groups, rows) rows, against
# gemv_kernel on the new grid (K3_GEMV_FP4=regs) and the old default launch (K3_GEMV_GRID=full),
# back to back in one process. Runs: test-moe-gpu '*gemv_lean*' (the new cases), '*grouped_gemv*'
# and '*dense_gemv*' (float64 references), `k3-bench --only gemv` (B = 1, 16, 64, 256; w13 and
# w2), compute-sanitizer memcheck and racecheck on test_gemv_lean, then in the time left ncu of
# the first w13 B = 1 launch of gemv_lean_kernel and of gemv_kernel (instructions issued);
# nvidia-smi sampled every 500 ms throughout. Carries .gpu/h19d alone (stripped k3-bench and
# test-moe-gpu, xz -9e, with libcmocka.so.0 and this script):
#   run(carry=[".gpu/h19d"], command="PACK=.gpu/h19d LIMIT=140 bash .gpu/h19d/k3-gemv-2026-12-01x.sh", timeout_s=150)
# $OUT gets: k3-tests.txt k3-bench.txt k3-sanitizer.txt k3-ncu.txt k3-misc.tar.xz (env, smi, csv).
set -u
PACK=${PACK:-.gpu/h19d}
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
  for f in '*gemv_lean*:30' '*grouped_gemv*:12' '*dense_gemv*:12'; do
    echo "== test-moe-gpu ${f%:*}"
    MOE_TEST_FILTER="${f%:*}" timeout "${f#*:}" "$PACK/test-moe-gpu" 2>&1
    echo "== test-moe-gpu ${f%:*}: exit $?"
  done
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
timeout 62 "$PACK/k3-bench" --only gemv -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "== k3-bench: exit $?" >> "$OUT/k3-bench.txt"
echo "bench done at $(( $(date +%s) - t0 )) s"
san() {  # tool
  local l; l=$(left); [ "$l" -gt 12 ] || { echo "no time for $1"; return; }
  echo "== $1 test_gemv_lean"
  MOE_TEST_FILTER='*gemv_lean' timeout $(( l > 40 ? 20 : l - 6 )) compute-sanitizer --tool $1 --error-exitcode 9 "$PACK/test-moe-gpu" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED|OK \]" | tail -12
  echo "== $1: exit ${PIPESTATUS[0]}"
}
{ san memcheck; san racecheck; } > "$OUT/k3-sanitizer.txt" 2>&1
NCU="ncu --clock-control none --kill yes --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section Occupancy --section LaunchStats"
ncu1() {  # kernel regex, env: the first launch (w13 B = 1)
  local l; l=$(left); [ "$l" -gt 25 ] || { echo "no time for ncu $1"; return; }
  echo "== ncu $1 $2 (first launch: w13 B = 1)"
  env $2 timeout $(( l - 8 )) $NCU -k "regex:$1" "$PACK/k3-bench" --only gemv --quick --reps 3 -o /tmp/ncu.csv 2>&1 | grep -v "^==PROF==\|^grouped_gemm\|^  *mxfp4\|^mxfp8_quant\|^copy"
  echo "== ncu $1: exit ${PIPESTATUS[0]}"
}
{ ncu1 gemv_lean_kernel K3_GEMV_X=1; ncu1 'gemv_kernel' K3_GEMV_FP4=regs; } > "$OUT/k3-ncu.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== |FAILED" "$OUT/k3-tests.txt" | tail -14
grep -E "copy ceiling|weight bytes|^== " "$OUT/k3-bench.txt" | cut -c1-110
grep -E "^== |Duration|DRAM Throughput|Registers|Achieved Occupancy|Executed Instructions  |Issued Warp|No Eligible|Eligible Warps" "$OUT/k3-ncu.txt" | head -40
cat "$OUT/k3-sanitizer.txt"
echo "call: $(( $(date +%s) - t0 )) s"
