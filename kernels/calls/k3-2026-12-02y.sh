#!/usr/bin/env bash
# Round 17's device call (2026-12-02y, lead; one nvidia-h200): main with this session's kernels.
# First the dense BF16 gemv's new split over k (k3_gemm.cu gemv_split) tested against float64
# (test-moe-gpu *dense_gemv*); if that fails, every later step runs the rule before
# (K3_GEMV_DENSE_SPLIT=old exported) and log.txt says so. Then the dense decode GEMMs at m = 1 and 16
# A/B/C in one process (K3_BENCH_GEMM_AB: each row again with the split before, then with the tiled
# kernel at 1-8 rows),
# then two whole runs of kernels/calls/k3-round.sh (each its own full k3-bench under capture and its
# own K3 slice under capture: held out by run both ways), the gemv-only bench between them, every
# GPU suite and the sanitizer list in run b.
# From the repository root:  PACK=.gpu/r17 bash .gpu/r17/k3-2026-12-02y.sh
# $OUT gets a.tar and b.tar (each run's six k3-round.sh files), ab.tar (the A/B csv/txt), gemv.txt,
# log.txt.
set -u
PACK=${PACK:-.gpu/r17}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT/ab"
t0=$(date +%s)
{
  B=$PACK/k3-build
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
  export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  MOE_TEST_FILTER='*dense_gemv*' timeout 60 "$B/tests/kernels/test-moe-gpu" > "$OUT/ab/dense-test.txt" 2>&1
  rc=$?
  echo "== dense gemv test exit $rc at $(( $(date +%s) - t0 )) s"
  if [ $rc != 0 ]; then
    export K3_GEMV_DENSE_SPLIT=old
    echo "== FAILED: K3_GEMV_DENSE_SPLIT=old for the rest of the call"
  fi
  K3_BENCH_GEMM_M=1,16 K3_BENCH_GEMM_AB="K3_GEMV_DENSE_SPLIT=old;K3_GEMM_DENSE_GEMV=0" timeout 90 \
    "$B/kernels/k3-bench" --only gemm -o "$OUT/ab/gemm-ab.csv" > "$OUT/ab/gemm-ab.txt" 2>&1
  echo "== gemm A/B exit $? at $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  : > "$PACK/san-none.txt"  # run a: bench and slice only (PHASE=san with an empty list)
  PACK=$PACK OUT=$OUT/a LIMIT=${LIMIT_A:-100} PHASE=san SAN=$PACK/san-none.txt bash "$PACK/k3-round.sh"
  echo "== run a done at $(( $(date +%s) - t0 )) s"
  timeout 40 "$B/kernels/k3-bench" --only gemv -o "$OUT/gemv.csv" > "$OUT/gemv.txt" 2>&1
  echo "== gemv-only exit $? at $(( $(date +%s) - t0 )) s"
  PACK=$PACK OUT=$OUT/b LIMIT=${LIMIT_B:-230} PHASE=all SAN=$PACK/san.txt bash "$PACK/k3-round.sh"
  echo "== run b done at $(( $(date +%s) - t0 )) s"
} > "$OUT/log.txt" 2>&1
xz -9 "$OUT/gemv.csv"
(cd "$OUT" && tar cf a.tar a && tar cf b.tar b && tar cf ab.tar ab && rm -rf a b ab)
grep -E "^== |PASSED|FAILED|SUMMARY|capture exit|clocks" "$OUT/log.txt" | head -60
echo "call: $(( $(date +%s) - t0 )) s"
