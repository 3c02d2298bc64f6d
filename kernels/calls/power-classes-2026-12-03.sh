#!/usr/bin/env bash
# The power classes' draw on long sustained runs (2026-12-03, lead; one nvidia-h200): k3-bench rows
# of one family each under `k3sim trace capture` with many repetitions, so that the long rows (MLA
# prefill at 8K-16K, the routed expert GEMMs at 16K tokens, dense GEMMs at m = 16K, MLA decode at
# 64K) run 1-2 s back to back and NVML's power (which follows the load over ~1 s) reaches their
# plateau. Data for measuring the FLOP energies the way bench/power/stream-draw.py measured the
# byte's; no model change rides on it.
#   PACK=.gpu/r25 bash .gpu/r25/power-classes-2026-12-03.sh   -> $OUT/<family>.db.xz, <family>.txt
set -u
PACK=${PACK:?PACK=.gpu/<tag>}
OUT=${OUT:-$PWD/pc-out}
mkdir -p "$OUT"
B=$PACK/k3-build
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
for spec in "mla_prefill 60" "gemm 120" "moe_prefill 40" "mla_decode 40"; do
  set -- $spec
  timeout 100 "$B/cli/k3sim" trace capture -o "$OUT/$1.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma --only "$1" --reps "$2" -o "$OUT/$1.csv" > "$OUT/$1.txt" 2>&1
  echo "== $1 reps $2 exit $? at $(( $(date +%s) - t0 )) s"
  xz -T0 -6 "$OUT/$1.db" 2>/dev/null
done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
