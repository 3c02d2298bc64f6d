#!/usr/bin/env bash
# Device call of issue 17's MXFP4 decode gemv round (helper i18d, one nvidia-h200, <= 160 s): the
# grouped MXFP4 gemv through a per-warp bulk-copy ring (gemv_bulk_kernel, default) against the
# register-pipelined kernel (K3_GEMV_FP4=regs) back to back. Runs: test-moe-gpu (float64, all
# cases), `k3-bench --only gemv` (B = 1, 16, 64, 256; w13 and w2; bulk, regs and MXFP8 rows in one
# process), ncu of the first w13 B = 1 launch of the bulk kernel (--clock-control none),
# compute-sanitizer memcheck and racecheck on test_gemv_fp4_bulk, then in the time left ncu of the
# register kernel and the bulk kernel with 1 and 2 stages a warp in flight (--quick); nvidia-smi
# sampled every 500 ms throughout. Carries .gpu/h18d alone (k3-bench, test-moe-gpu, stripped):
#   PACK=.gpu/h18d LIMIT=150 bash .gpu/h18d/k3-gemv-2026-12-01s.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-ncu.txt k3-sanitizer.txt k3-misc.tar.xz (env, smi, csv).
set -u
PACK=${PACK:-.gpu/h18d}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-150}
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
timeout 50 "$PACK/test-moe-gpu" > "$OUT/k3-tests.txt" 2>&1
echo "== test-moe-gpu: exit $?" >> "$OUT/k3-tests.txt"
echo "tests done at $(( $(date +%s) - t0 )) s"
timeout 75 "$PACK/k3-bench" --only gemv -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "== k3-bench: exit $?" >> "$OUT/k3-bench.txt"
echo "bench done at $(( $(date +%s) - t0 )) s"
NCU="ncu --clock-control none --kill yes --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
ncu1() {  # kernel regex: the first launch (w13 B = 1)
  local l; l=$(left); [ "$l" -gt 40 ] || { echo "no time for ncu $1"; return; }
  echo "== ncu $1 (first launch: w13 B = 1)"
  timeout $(( l - 30 )) $NCU -k "regex:$1" "$PACK/k3-bench" --only gemv --quick --reps 3 -o /tmp/ncu.csv 2>&1 | grep -v "^==PROF==\|^grouped_gemm\|^  *mxfp4\|^mxfp8_quant\|^copy"
  echo "== ncu $1: exit ${PIPESTATUS[0]}"
}
san() {  # tool
  local l; l=$(left); [ "$l" -gt 12 ] || { echo "no time for $1"; return; }
  echo "== $1 test_gemv_fp4_bulk"
  MOE_TEST_FILTER='*fp4_bulk*' timeout $(( l - 6 )) compute-sanitizer --tool $1 --error-exitcode 9 "$PACK/test-moe-gpu" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED|OK \]" | tail -12
  echo "== $1: exit ${PIPESTATUS[0]}"
}
ncu1 gemv_bulk_kernel > "$OUT/k3-ncu.txt" 2>&1
{ san memcheck; san racecheck; } > "$OUT/k3-sanitizer.txt" 2>&1
ncu1 gemv_kernel >> "$OUT/k3-ncu.txt" 2>&1
for d in 1 2; do  # bytes in flight: 1 or 2 of the 4 stages a warp (B = 1 and 64, --quick)
  l=$(left); [ "$l" -gt 25 ] || break
  echo "== K3_GEMV_FP4_DEPTH=$d k3-bench --only gemv --quick" >> "$OUT/k3-bench.txt"
  K3_GEMV_FP4_DEPTH=$d timeout $(( l - 5 )) "$PACK/k3-bench" --only gemv --quick -o "$M/k3-bench-d$d.csv" 2>&1 | grep -E "mxfp4_|mxfp4a8_" >> "$OUT/k3-bench.txt"
done
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== |FAILED" "$OUT/k3-tests.txt" | tail -8
grep -E "copy ceiling|weight bytes|DEPTH|mxfp4_|mxfp4a8_" "$OUT/k3-bench.txt" | cut -c1-150
grep -E "^== |Duration|DRAM Throughput|Memory Throughput|Registers|Achieved Occupancy|Compute \(SM\)|Stall|L2 Hit|Issued Warp|No Eligible" "$OUT/k3-ncu.txt" | head -60
cat "$OUT/k3-sanitizer.txt"
echo "call: $(( $(date +%s) - t0 )) s"
