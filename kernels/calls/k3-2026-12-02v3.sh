#!/usr/bin/env bash
# Round 20, call 3 (lead; one nvidia-h200): test-moe-gpu whole (call 1 ran it by filters: wgmma,
# layer, route, combine) on the same pack (.gpu/r20, main 87633a4's code): its gemv and mma.sync
# cases too, after 02s removed wide2p's tests and made wide2rl the grouped default.
#   PACK=.gpu/r20 bash .gpu/r20/k3-2026-12-02v3.sh     -> $OUT/moe.txt
set -u
PACK=${PACK:-.gpu/r20}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
B=$PACK/k3-build
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  timeout 220 "$B/tests/kernels/test-moe-gpu"
  echo "== test-moe-gpu exit $? in $(( $(date +%s) - t0 )) s"
} > "$OUT/moe.txt" 2>&1
grep -E "^\[ +(OK|FAILED|ERROR|PASSED)|^== " "$OUT/moe.txt" | tail -40
