#!/usr/bin/env bash
# The runs of one issue-17 round's device call (one nvidia-h200), the body the call scripts from
# 2026-12-03v on share: for each letter r of $RUNS (default "a b"), the KDA prefill grid into
# $OUT/k<r>/, then kernels/calls/k3-round.sh's FULL k3-bench and the K3 slice under capture into
# $OUT/<r>/ (PHASE=san with an empty list: no tests), then $OUT/<r>.tar (<r>/ and k<r>/); the log
# in $OUT/log.txt. Needs PACK (pack.tar.xz or k3-build/, k3-round.sh, run-slice.sh, device-env.sh,
# libcmocka.so.0 beside it); a wrapper copied into PACK needs this script copied beside it.
#   PACK=.gpu/<tag> [RUNS="a b"] bash kernels/calls/k3-runs.sh
set -u
PACK=${PACK:?PACK=.gpu/<tag>}
OUT=${OUT:-$PWD/k3-out}
RUNS=${RUNS:-a b}
mkdir -p "$OUT"
t0=$(date +%s)
B=$PACK/k3-build
{
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
  export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  : > "$PACK/san-none.txt"
  for r in $RUNS; do
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
for r in $RUNS; do
  (cd "$OUT" && tar cf "$r.tar" "$r" "k$r" && rm -rf "$r" "k$r")
done
grep -E "^== |capture exit|clocks|slice exit|bench done" "$OUT/log.txt"
echo "call: $(( $(date +%s) - t0 )) s"
