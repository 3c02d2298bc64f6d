#!/usr/bin/env bash
# Round 23, call 2 (lead; one nvidia-h200): a third run of the same pack (.gpu/r23, round 23's
# code) in a call of its own, so that its slice is held out by call from the benches of call 1 (and
# call 1's slices from its bench): the KDA prefill grid, then kernels/calls/k3-round.sh's bench and
# slice under capture, no tests.
#   PACK=.gpu/r23 bash .gpu/r23/k3-2026-12-03r2.sh     -> $OUT/c.tar (c/ and kc/), $OUT/log.txt
set -u
PACK=${PACK:-.gpu/r23}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
B=$PACK/k3-build
{
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
  export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  : > "$PACK/san-none.txt"
  mkdir -p "$OUT/kc"
  timeout 70 "$B/kernels/kda-bench" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
    --prefill-state fp32,bf16 --prefill-ab "default:;serial:K3_KDA_PREFILL=serial;v3:K3_KDA_INTRA=v3" --prefill-rounds 3 \
    -o "$OUT/kc/kda-grid.csv" > "$OUT/kc/kda-grid.txt" 2>&1
  echo "== kda grid exit $? at $(( $(date +%s) - t0 )) s"
  PACK=$PACK OUT=$OUT/c LIMIT=100 PHASE=san SAN=$PACK/san-none.txt bash "$PACK/k3-round.sh"
  echo "== run c done at $(( $(date +%s) - t0 )) s"
} > "$OUT/log.txt" 2>&1
(cd "$OUT" && tar cf c.tar c kc && rm -rf c kc)
grep -E "^== |capture exit|clocks" "$OUT/log.txt"
echo "call: $(( $(date +%s) - t0 )) s"
