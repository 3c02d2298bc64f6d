#!/usr/bin/env bash
# The power classes' draw on long sustained runs, second try (2026-12-03b, lead; one nvidia-h200):
# as power-classes-2026-12-03.sh with more repetitions (k3-bench runs prefill rows at --reps / 2 or
# / 4), so that the long rows run 2-3 s back to back: MLA prefill at 16K (--reps 200: 100 x 31.6 ms),
# the routed expert GEMMs at 16K tokens and dense GEMMs at m = 16K (--reps 400: 100 each), MLA decode
# at 64K (--reps 150).
# SPECS ("family reps;..."), TIMEOUT (s a family, default 150).
#   PACK=.gpu/r25 bash .gpu/r25/power-classes-2026-12-03b.sh   -> $OUT/all.tar (<family>.db.xz, .csv, .txt)
set -u
PACK=${PACK:?PACK=.gpu/<tag>}
OUT=${OUT:-$PWD/pc-out}
mkdir -p "$OUT"
B=$PACK/k3-build
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
IFS=';' read -r -a specs <<< "${SPECS:-mla_prefill 200;moe_prefill 400;gemm 400;mla_decode 150}"
for spec in "${specs[@]}"; do
  set -- $spec
  timeout "${TIMEOUT:-150}" "$B/cli/k3sim" trace capture -o "$OUT/$1.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma --only "$1" --reps "$2" -o "$OUT/$1.csv" > "$OUT/$1.txt" 2>&1
  echo "== $1 reps $2 exit $? at $(( $(date +%s) - t0 )) s"
  xz -T0 -6 "$OUT/$1.db" 2>/dev/null
done
(cd "$OUT" && tar cf all.tar ./*.db.xz ./*.csv ./*.txt && rm -f ./*.db.xz ./*.csv ./*.txt)
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
