#!/usr/bin/env bash
# Round 24 (2026-12-03v, lead; one nvidia-h200): the K3 slice with wide2rqt the grouped MXFP4
# default (main 938e0d4 and later docs), two runs a and b in one call, each the KDA prefill grid, then
# kernels/calls/k3-round.sh's FULL k3-bench and the slice under capture (no tests: 03u ran them), so
# that each run's slice is validated against the other run's bench (held out by run) and against
# round 23's benches (another call).
#   PACK=.gpu/r24 bash .gpu/r24/k3-2026-12-03v.sh     -> $OUT/a.tar, b.tar (a/ ka/, b/ kb/), $OUT/log.txt
set -u
PACK=${PACK:-.gpu/r24}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
B=$PACK/k3-build
{
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
  export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  : > "$PACK/san-none.txt"
  for r in a b; do
    mkdir -p "$OUT/k$r"
    timeout 70 "$B/kernels/kda-bench" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
      --prefill-state fp32,bf16 --prefill-ab "default:;serial:K3_KDA_PREFILL=serial;v3:K3_KDA_INTRA=v3" \
      --prefill-rounds 3 -o "$OUT/k$r/kda-grid.csv" > "$OUT/k$r/kda-grid.txt" 2>&1
    echo "== kda grid $r exit $? at $(( $(date +%s) - t0 )) s"
    PACK=$PACK OUT=$OUT/$r LIMIT=100 PHASE=san SAN=$PACK/san-none.txt bash "$PACK/k3-round.sh"
    echo "== run $r done at $(( $(date +%s) - t0 )) s"
    nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  done
} > "$OUT/log.txt" 2>&1
(cd "$OUT" && tar cf a.tar a ka && tar cf b.tar b kb && rm -rf a b ka kb)
grep -E "^== |capture exit|clocks|slice exit|bench done" "$OUT/log.txt"
echo "call: $(( $(date +%s) - t0 )) s"
