#!/usr/bin/env bash
# Round 19's device call (2026-12-02r, lead; one nvidia-h200): main with this session's merges (see
# bench/results/k3-kernels-h200-2026-12-02r/README.md for the commit) and the slice's routing
# statistics. Two whole runs of kernels/calls/k3-round.sh (each its own full k3-bench under capture
# and its own K3 slice under capture: held out by run both ways), every GPU suite and the sanitizer
# list in run b; then the slice again with --gap-ms 100 (prefill 4K and 16K: each routed expert GEMM
# started on an idle GPU, as in the bench) beside run b's: power history or the work itself.
# From the repository root:  PACK=.gpu/r19 LIMIT_A=100 LIMIT_B=170 bash .gpu/r19/k3-2026-12-02r.sh
# $OUT gets a.tar and b.tar (each run's six k3-round.sh files and its KDA prefill grid, ka/ kb/), gap/
# (the gap slice) and log.txt.
set -u
PACK=${PACK:-.gpu/r19}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
{
  B=$PACK/k3-build
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
  export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  : > "$PACK/san-none.txt"  # run a: bench and slice only (PHASE=san with an empty list)
  # KDA prefill's own grid (k3-bench has no KDA prefill rows): the default path and serial, each run,
  # so that the model's overlapped-pair share is fitted on one run and checked on the other's slice
  kgrid() { mkdir -p "$1"; timeout 40 "$B/kernels/kda-bench" --only prefill --prefill-t 1024,4096,16384 \
    --prefill-h 12,24,48,96 --prefill-state fp32 --prefill-ab "default:;serial:K3_KDA_PREFILL=serial" \
    --prefill-rounds 2 -o "$1/kda-grid.csv" > "$1/kda-grid.txt" 2>&1; echo "== kda grid exit $? at $(( $(date +%s) - t0 )) s"; }
  kgrid "$OUT/ka"
  PACK=$PACK OUT=$OUT/a LIMIT=${LIMIT_A:-100} PHASE=san SAN=$PACK/san-none.txt bash "$PACK/k3-round.sh"
  echo "== run a done at $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  kgrid "$OUT/kb"
  # test-kda-gpu's decode ring tests take minutes and no KDA decode kernel changed this session
  KDA_TEST_FILTER=${KDA_TEST_FILTER:-*prefill*} PACK=$PACK OUT=$OUT/b LIMIT=${LIMIT_B:-170} PHASE=all SAN=$PACK/san.txt bash "$PACK/k3-round.sh"
  echo "== run b done at $(( $(date +%s) - t0 )) s"
  sed -i "s/timeout [0-9]* /timeout 40 /" "$PACK/run-slice.sh"
  OUT=$OUT/gap BUILD=$B bash "$PACK/run-slice.sh" --prefill 4096,16384 --decode 1:8192 --reps 2 --gap-ms 100 > /dev/null 2>&1
  echo "== gap slice exit $? at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/gap/k3-slice.txt")"
} > "$OUT/log.txt" 2>&1
(cd "$OUT" && tar cf a.tar a ka && tar cf b.tar b kb && rm -rf a b ka kb)
grep -E "^== |PASSED|FAILED|SUMMARY|capture exit|clocks" "$OUT/log.txt" | head -60
echo "call: $(( $(date +%s) - t0 )) s"
