#!/usr/bin/env bash
# Device call of issue 17's third round (one nvidia-h200, ~6 minutes of work): the K3 kernels' GPU
# tests (the FP8 MLA scale-staging fix: every block size stages all 128 scales of a tile; the wgmma
# tiled GEMM, now in the build: gpu_arch=sm_90a), compute-sanitizer (memcheck on the fixed FP8
# MLA paths and the wgmma GEMM, racecheck on MLA), k3-bench --quick --require-wgmma under capture
# (expert GEMMs vs cuBLASLt at equal FLOPs, MLA decode vs copy at ctx >= 8K, MXFP4 grouped gemv vs
# HBM), kda-bench --quick (KDA prefill T = 4K / 16K and decode B = 1 / 64 at H = 96), and the
# four-layer slice under capture (prefill 4K and 16K, decode B = 1, 16, 64, 256 at C = 8K and 64K).
# compute-sanitizer runs last, in the time left (k3-sanitizer.txt). nvidia-smi clocks, power and
# temperature are sampled every 500 ms throughout (k3-smi.csv). At most ~9.5 minutes.
# Staged (see bench/results/k3-kernels-h200-2026-12-01c/README.md): a release build with
# -Dgpu_arch=sm_90a staged by kernels/stage-gpu.sh into DIR/k3-build, packed as DIR/pack.tar.xz,
# with libcmocka.so.0 and these scripts beside it (DIR/run-gpu-k3.sh, DIR/run-slice.sh); from the
# repository root:  PACK=.gpu/h17 bash .gpu/h17/k3-2026-12-01c.sh
set -u
PACK=${PACK:-.gpu/h17}
export BUILD=${BUILD:-$PACK/k3-build}
export OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
[ -d "$BUILD" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$OUT/k3-smi.csv" 2>&1 &
smi=$!
NO_SANITIZER=1 K3_BENCH_ARGS=--require-wgmma timeout 250 bash "$PACK/run-gpu-k3.sh"
echo "run-gpu-k3 exit $? at $(( $(date +%s) - t0 )) s"
{
  s=$(date +%s)
  timeout 60 "$BUILD/kernels/kda-bench" --quick -o "$OUT/kda-bench.csv"
  echo "kda-bench exit $? in $(( $(date +%s) - s )) s"
} > "$OUT/kda-bench.txt" 2>&1
echo "kda-bench done at $(( $(date +%s) - t0 )) s"
if grep -q "== moe-gpu: exit 0," "$OUT/k3-tests.txt" && grep -q "tiled-wgmma" "$OUT/k3-tests.txt"; then
  echo "slice: wgmma tiled GEMM (moe-gpu passed with its wgmma cases run)"
else
  export K3_GEMM_TILED=mma
  echo "slice: K3_GEMM_TILED=mma (the wgmma GEMM's tests did not pass or did not run)"
fi
left=$(( 420 - ($(date +%s) - t0) ))
[ "$left" -gt 30 ] || { echo "no time left for the slice"; kill "$smi"; exit 1; }
sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
bash "$PACK/run-slice.sh" ${SLICE_ARGS:---reps 3}
echo "slice exit $? at $(( $(date +%s) - t0 )) s"
# compute-sanitizer last, in the time left (run-gpu-k3.sh's list, on the new paths first).
T=$BUILD/tests/kernels
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
san() {  # tool test env-var filter seconds
  local s; s=$(date +%s)
  local lim=$(( 540 - (s - t0) )); [ "$lim" -gt "$5" ] && lim=$5
  [ "$lim" -gt 5 ] || { echo "$1 $2 '$4': no time left"; return; }
  env "$3=$4" timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$T/test-$2-gpu" > "$OUT/.log" 2>&1
  local rc=$?
  echo "$1 $2 '$4': exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/.log" | tail -1)"
  [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|SKIPPED" "$OUT/.log" | head -12 | sed 's/^/    /'
}
{
  echo "== compute-sanitizer (small cases)"
  san memcheck mla MLA_TEST_FILTER '*eight_tokens*' 40
  san memcheck mla MLA_TEST_FILTER '*sparse_fp8*' 40
  san racecheck mla MLA_TEST_FILTER '*eight_tokens*' 40
  san memcheck dsa DSA_TEST_FILTER '*short_and_long*' 40
  san memcheck moe MOE_TEST_FILTER '*small*' 40
  san memcheck moe MOE_TEST_FILTER '*wgmma*' 90
  san memcheck attnres ATTNRES_TEST_FILTER '*edges*' 30
  san memcheck layer LAYER_TEST_FILTER '*' 30
  san racecheck mla MLA_TEST_FILTER '*one_split*' 30
} > "$OUT/k3-sanitizer.txt" 2>&1
rm -f "$OUT/.log"
kill "$smi"
cat "$OUT/k3-sanitizer.txt"
grep -E "^== .*exit|gpu suite|^(memcheck|racecheck)|SKIPPED|wgmma" "$OUT/k3-tests.txt" | head -60
grep -E "^tiled GEMM|grouped_gemm|cublasLt|^mla_decode" "$OUT/k3-bench.txt" | head -40
tail -n 30 "$OUT/kda-bench.txt"
ls -la "$OUT"
