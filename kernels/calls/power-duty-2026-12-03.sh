#!/usr/bin/env bash
# This project's kernel classes' FLOP energies at boost, duty-cycled under the limit (2026-12-03,
# lead; one nvidia-h200): k3-bench families under `k3sim trace capture` with K3_BENCH_COOL_MS (the
# GPU idle that long before each timed launch), so that each row runs ~50 % busy for 1-3 s at boost
# below the 700 W limit; NVML's instantaneous power every 20 ms beside it (the capture's readings).
# bench/power/duty-energy.py: per row, the readings over its launches, the busy share and the
# FLOP and byte rates over that span -> e_flop = (P - P_idle - e_byte x bytes/s) / FLOP/s.
#   PACK=.gpu/<tag> [SPECS="fam reps cool_ms;..."] bash .gpu/<tag>/power-duty-2026-12-03.sh
#   -> $OUT/duty.tar (<family>.db.xz, .csv, .txt)
set -u
PACK=${PACK:?PACK=.gpu/<tag>}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT/duty"
B=$PACK/k3-build
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
IFS=';' read -r -a specs <<< "${SPECS:-moe_prefill 200 20;mla_prefill 100 30;gemm 40 4}"
for spec in "${specs[@]}"; do
  set -- $spec
  K3_BENCH_COOL_MS=$3 timeout "${TIMEOUT:-150}" "$B/cli/k3sim" trace capture -o "$OUT/duty/$1.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma --only "$1" --reps "$2" -o "$OUT/duty/$1.csv" > "$OUT/duty/$1.txt" 2>&1
  echo "== $1 reps $2 cool $3 ms exit $? at $(( $(date +%s) - t0 )) s"
  xz -T0 -6 "$OUT/duty/$1.db" 2>/dev/null
done
(cd "$OUT" && tar cf duty.tar duty && rm -rf duty)
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
