#!/usr/bin/env bash
# Round 23 device call (2026-12-03r, lead; one nvidia-h200): main with `wide2rq` the grouped MXFP4
# default (2026-12-03q: wide2rp's arithmetic with a leaner k loop, bit for bit), so the MoE layer,
# the K3 slice and k3-bench's prefill rows run it. First the MXFP4 grouped A/B ($AB_KERNELS, one
# process, `k3-bench --only moe_prefill`, ab/: wide2rp / wide2rq / wide2rqo, the last opt-in: the
# second consumer warpgroup started late); then two whole runs of kernels/calls/k3-round.sh (each
# its own full k3-bench under capture and its own K3 slice under capture: held out by run both
# ways), each after its own KDA prefill grid (default, serial, K3_KDA_INTRA=v3); then the GPU suites
# ($PACK/suites.sh) and the sanitizer list ($PACK/san.txt).
# From the repository root:  PACK=.gpu/r23 LIMIT=430 [AB_KERNELS=...] bash .gpu/r23/k3-2026-12-03r.sh
# (suites: kernels/calls/k3-2026-12-03r-suites.sh; sanitizers: kernels/calls/k3-2026-12-03r-san.txt)
# $OUT gets a.tar and b.tar (each run's six k3-round.sh files and its KDA grid), ab/, tests.txt,
# logs.tar.xz and log.txt.
set -u
PACK=${PACK:-.gpu/r23}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-300}
AB_KERNELS=${AB_KERNELS:-wide2rp,wide2rq,wide2rqo,wide2rp,wide2rq,wide2rqo}
mkdir -p "$OUT/logs"
t0=$(date +%s)
left() { echo $(( LIMIT - 6 - ($(date +%s) - t0) )); }
B=$PACK/k3-build
{
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
  export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  : > "$PACK/san-none.txt"
  kgrid() { mkdir -p "$1"; timeout 70 "$B/kernels/kda-bench" --only prefill --prefill-t 1024,4096,16384 \
    --prefill-h 12,24,48,96 --prefill-state fp32,bf16 \
    --prefill-ab "default:;serial:K3_KDA_PREFILL=serial;v3:K3_KDA_INTRA=v3" \
    --prefill-rounds 3 -o "$1/kda-grid.csv" > "$1/kda-grid.txt" 2>&1; echo "== kda grid exit $? at $(( $(date +%s) - t0 )) s"; }
  mkdir -p "$OUT/ab"
  K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$AB_KERNELS timeout 75 \
    "$B/kernels/k3-bench" --only moe_prefill -o "$OUT/ab/bench.csv" > "$OUT/ab/bench.txt" 2>&1
  echo "== grouped A/B ($AB_KERNELS) exit $? at $(( $(date +%s) - t0 )) s"
  for r in a b; do
    kgrid "$OUT/k$r"
    PACK=$PACK OUT=$OUT/$r LIMIT=100 PHASE=san SAN=$PACK/san-none.txt bash "$PACK/k3-round.sh"
    echo "== run $r done at $(( $(date +%s) - t0 )) s"
    nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  done
} > "$OUT/log.txt" 2>&1
(cd "$OUT" && tar cf a.tar a ka && tar cf b.tar b kb && rm -rf a b ka kb)
T=$B/tests/kernels
suite() { # name cap [VAR=filter]
  local n=$1 cap=$2 l tag; shift 2; l=$(left); [ "$cap" -lt "$l" ] || cap=$l
  tag=$(echo "${1:-all}" | tr -c 'A-Za-z0-9_\n' '_')
  [ "$cap" -gt 3 ] || { echo "== test-$n-gpu ${*:-}: no time"; return; }
  local s; s=$(date +%s)
  env "$@" timeout "$cap" "$T/test-$n-gpu" > "$OUT/logs/$n-$tag.log" 2>&1
  local rc=$?
  echo "== test-$n-gpu ${*:-} exit $rc in $(( $(date +%s) - s )) s: $(grep -cE '^\[ +OK' "$OUT/logs/$n-$tag.log") ok, $(grep -cE '^\[ +(FAILED|ERROR)' "$OUT/logs/$n-$tag.log") failed"
  grep -E "^\[ +(FAILED|ERROR)" "$OUT/logs/$n-$tag.log" | head -5
}
{
  . "$PACK/suites.sh"
  while read -r tool s var filter secs; do
    case "$tool" in ''|'#'*) continue ;; esac
    l=$(left); [ "$secs" -lt "$l" ] || secs=$l
    [ "$secs" -gt 3 ] || { echo "== $tool $s $filter: no time"; continue; }
    env "$var=$filter" KDA_TEST_LEAN_SMALL=1 timeout "$secs" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-$s-gpu" > "$OUT/logs/san-$tool-$s.log" 2>&1
    echo "== $tool test-$s-gpu $var='$filter': exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/logs/san-$tool-$s.log" | tail -1)"
  done < "$PACK/san.txt"
  echo "call: $(( $(date +%s) - t0 )) s"
} > "$OUT/tests.txt" 2>&1
tar cJf "$OUT/logs.tar.xz" -C "$OUT" logs && rm -rf "$OUT/logs"
grep -E "^== |capture exit|clocks" "$OUT/log.txt" | head -30
cat "$OUT/tests.txt"
