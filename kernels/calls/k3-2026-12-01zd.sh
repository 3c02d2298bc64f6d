#!/usr/bin/env bash
# Device calls of issue 17 item 5 (2026-12-01zd, helper i20d; one nvidia-h200 each, <= 150 s):
# the KDA decode ring's stage hand-back (every consumer thread arrives + the producer's proxy
# fence, KDA_DECODE_RING_ARRIVE=thread, against lane 0 after __syncwarp, =warp), the ring's grid
# at BF16 B = 64 (KDA_DECODE_RING_GRID), and the PDL prefill path (K3_KDA_PREFILL=pdl) against
# serial and the old waiting overlap (results: bench/results/k3-kernels-h200-2026-12-01zd/). One pack (kda-bench, test-kda-gpu, stripped), two phases:
#   PHASE=1 (call 1, build of commit 25413e1: the PDL path then had a persistent intra kernel and
#     K3_KDA_PDL_PER_SM; both removed after this call): decode tests (incl. ring_arrivals both ways, ring_repeat x RING_REPEAT),
#     racecheck of the ring both ways, decode A/B (old, new, old, new; B = 64, 128, 256), the
#     B = 64 grid A/B, prefill grid serial / pdl / overlap, the PDL tests.
#   PHASE=2 (call 2, build of commit 6e04c2a, after call 1 rejected the persistent-intra PDL
#     design): the second PDL design (the intra kernel as it is, the recurrent one started beside
#     its last wave; then `auto`, removed after this call as slower everywhere) against
#     serial on the grid, twice, the decode rows old/new, then the whole test-kda-gpu
#     (ring_repeat x RING_REPEAT), racecheck of test_decode_many_items, memcheck of the PDL
#     tests, test_decode_many_items in a loop in the time left.
#   PHASE=3 (not run): the final build's check, for whoever has a call to spare (~100 s).
# From the repository root:  PACK=.gpu/h20d PHASE=1 bash .gpu/h20d/k3-2026-12-01zd.sh
# $OUT gets: log.txt (everything, in order), smi.csv.xz, env.txt, and per-step files.
set -u
PACK=${PACK:-.gpu/h20d}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
PHASE=${PHASE:-1}
LIMIT=${LIMIT:-140}
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
T=$B/test-kda-gpu
K=$B/kda-bench
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
run() { # run SECONDS-CAP LABEL cmd...: skips when the call's time is short, logs exit and seconds
  local cap=$1 label=$2; shift 2
  local l; l=$(left); [ "$l" -gt 8 ] || { echo "== $label: skipped (no time)"; return; }
  [ "$cap" -lt "$l" ] || cap=$(( l - 4 ))
  echo "== $label (cap $cap s, at $(( $(date +%s) - t0 )) s)"
  local s; s=$(date +%s)
  timeout "$cap" "$@" 2>&1
  echo "== $label: exit $? in $(( $(date +%s) - s )) s"
}
grab() { # the lines of a kda-bench decode/prefill table worth keeping
  grep -E "^== |^ +(fp32|bf16) |^prefill|^copy:|^device:" || true
}
{
if [ "$PHASE" = 1 ]; then
  KDA_TEST_RING_REPEAT=${RING_REPEAT:-100} KDA_TEST_FILTER='*decode*' run 40 "decode tests" "$T" | tail -n 30
  KDA_DECODE_RING_ARRIVE=thread KDA_TEST_FILTER='*ring_arrivals*' run 35 "racecheck ring thread" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 12
  for v in warp thread warp thread; do
    echo "## decode KDA_DECODE_RING_ARRIVE=$v"
    KDA_DECODE_RING_ARRIVE=$v run 15 "bench decode $v" "$K" --only decode --batch 64,128,256 -o /tmp/d.csv | grab
  done
  for g in 132 128 131; do
    echo "## decode KDA_DECODE_RING_GRID=$g (thread)"
    KDA_DECODE_RING_GRID=$g run 10 "bench grid $g" "$K" --only decode --batch 64 -o /tmp/g.csv | grab
  done
  for p in serial pdl overlap pdl serial; do
    echo "## prefill K3_KDA_PREFILL=$p"
    K3_KDA_PREFILL=$p run 20 "bench prefill $p" "$K" --only prefill --prefill-t 1024,4096,16384 \
      --prefill-h 12,24,48,96 -o /tmp/p.csv | grab
  done
  for e in K3_KDA_PDL_PER_SM=5 K3_KDA_PDL_PER_SM=6 K3_KDA_RECUR_WARPS=2 K3_KDA_RECUR_WARPS=8; do
    echo "## prefill K3_KDA_PREFILL=pdl $e"
    ( export K3_KDA_PREFILL=pdl "$e"; run 10 "bench pdl $e" "$K" --only prefill --prefill-t 4096,16384 \
      --prefill-h 96 -o /tmp/q.csv ) | grab
  done
  KDA_TEST_FILTER='*prefill_pdl*' run 25 "pdl tests" "$T" | tail -n 14
  KDA_TEST_FILTER='*prefill_variants*' run 25 "variants tests" "$T" | tail -n 6
  KDA_DECODE_RING_ARRIVE=warp KDA_TEST_FILTER='*ring_arrivals*' run 25 "racecheck ring warp" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 12
elif [ "$PHASE" = 3 ]; then
  # Not run in 01zd (two calls only): the branch's final build (prefill as on main, the ring's new
  # hand-back by default): the whole suite, racecheck of the ring both ways, decode rows old / new.
  KDA_TEST_RING_REPEAT=${RING_REPEAT:-100} run 60 "test-kda-gpu" "$T" | grep -E "^\[|differ|repeat"
  for v in thread warp; do
    KDA_DECODE_RING_ARRIVE=$v KDA_TEST_FILTER='*ring_arrivals*' run 30 "racecheck ring $v" \
      compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  done
  for v in warp thread warp thread; do
    echo "## decode KDA_DECODE_RING_ARRIVE=$v"
    KDA_DECODE_RING_ARRIVE=$v run 15 "bench decode $v" "$K" --only decode --batch 64,128,256 -o /tmp/d.csv | grab
  done
else
  for p in serial auto serial auto; do
    echo "## prefill K3_KDA_PREFILL=$p"
    K3_KDA_PREFILL=$p run 20 "bench prefill $p" "$K" --only prefill --prefill-t 1024,4096,16384 \
      --prefill-h 12,24,48,96 -o /tmp/p.csv | grab
  done
  echo "## prefill K3_KDA_PREFILL=pdl K3_KDA_RECUR_WARPS=v1 K3_KDA_RECUR_STAGES=3 (the overlap's recurrent config)"
  K3_KDA_PREFILL=pdl K3_KDA_RECUR_WARPS=v1 K3_KDA_RECUR_STAGES=3 run 10 "bench pdl v1/3" "$K" --only prefill \
    --prefill-t 4096,16384 --prefill-h 96 -o /tmp/q.csv | grab
  echo "## prefill K3_KDA_PREFILL=overlap (old, opt-in)"
  K3_KDA_PREFILL=overlap run 10 "bench overlap" "$K" --only prefill --prefill-t 4096,16384 --prefill-h 96 -o /tmp/q.csv | grab
  for v in warp thread; do
    echo "## decode KDA_DECODE_RING_ARRIVE=$v"
    KDA_DECODE_RING_ARRIVE=$v run 15 "bench decode $v" "$K" --only decode --batch 64,128,256 -o /tmp/d.csv | grab
  done
  echo "## decode default, B = 64 alone"
  run 10 "bench decode b64" "$K" --only decode --batch 64 -o /tmp/d.csv | grab
  KDA_TEST_RING_REPEAT=${RING_REPEAT:-300} run 60 "test-kda-gpu" "$T" | grep -E "^\[|rel err .*FAIL|differ|repeat"
  KDA_TEST_FILTER='*many_items*' run 40 "racecheck many_items" compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 4
  KDA_TEST_FILTER='*prefill_pdl*' run 30 "memcheck pdl" compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 4
  n=0; fails=0
  for i in $(seq 1 50); do
    [ "$(left)" -gt 14 ] || break
    KDA_TEST_FILTER='*many_items*' timeout 10 "$T" > /tmp/many.log 2>&1 || { fails=$((fails+1)); tail -n 20 /tmp/many.log; }
    n=$i
  done
  echo "== test_decode_many_items: $n runs, $fails failed"
fi
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -f "$OUT/smi.csv"
awk -F', ' 'NR > 1 && $2 + 0 > 0 { n++; s = $2 + 0; p = $4 + 0; if (!mn || s < mn) mn = s; if (s > mx) mx = s;
  if (p > pm) pm = p; if ($5 + 0 > tm) tm = $5 + 0 } END { printf "smi: %d readings, SM %d-%d MHz, max %.0f W, max %d C\n", n, mn, mx, pm, tm }' \
  <(xz -dc "$OUT/smi.csv.xz") >> "$OUT/log.txt" 2>&1
grep -E "^== |^## |^ +(fp32|bf16) +(64|128|256) |^prefill|FAILED|PASSED|ERROR SUMMARY|RACECHECK SUMMARY|hazard|differ|smi:" "$OUT/log.txt" | cut -c1-150
echo "call: $(( $(date +%s) - t0 )) s"
