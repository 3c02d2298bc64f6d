#!/usr/bin/env bash
# The share of each kernel class's boost time bound by the SM clock (hw clock_bound_<class>,
# sim/power.h), measured (2026-12-03, lead; one nvidia-h200): k3-bench families under
# `k3sim trace capture` twice, each timed launch after 100 ms of idle (K3_BENCH_COOL_MS: the launch
# at boost) and after 100 ms of cuBLASLt GEMMs at the power limit (K3_BENCH_HOG_MS: the launch at
# the clock a capped neighbour leaves, ~1480 MHz); the capture's NVML readings (every 20 ms) give
# each launch's clock (NVML's clock is the kernels' one: bench/results/clock-probe-h200-2026-12-03/).
# Then RUNS (default none) rounds of the slice as kernels/calls/k3-runs.sh.
#   PACK=.gpu/<tag> [SPECS="fam reps;..."] [RUNS="a b"] bash .gpu/<tag>/clock-bound-2026-12-03.sh
#   -> $OUT/cb-cool.tar, $OUT/cb-hog.tar (<family>.db.xz, .csv, .txt), then k3-runs.sh's a.tar, b.tar
set -u
PACK=${PACK:?PACK=.gpu/<tag>}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
B=$PACK/k3-build
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
IFS=';' read -r -a specs <<< "${SPECS:-moe_prefill 24;mla_prefill 12;gemm 4;attnres 4;conv 4;route 4}"
for mode in cool hog; do
  d=$OUT/cb-$mode
  mkdir -p "$d"
  var=K3_BENCH_COOL_MS
  [ "$mode" = hog ] && var=K3_BENCH_HOG_MS
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader > "$d/smi-start.txt"
  for spec in "${specs[@]}"; do
    set -- $spec
    env "$var=100" timeout "${TIMEOUT:-90}" "$B/cli/k3sim" trace capture -o "$d/$1.db" --force -- \
      "$B/kernels/k3-bench" --require-wgmma --only "$1" --reps "$2" -o "$d/$1.csv" > "$d/$1.txt" 2>&1
    echo "== $mode $1 reps $2 exit $? at $(( $(date +%s) - t0 )) s"
    xz -T0 -6 "$d/$1.db" 2>/dev/null
  done
  (cd "$OUT" && tar cf "cb-$mode.tar" "cb-$mode" && rm -rf "cb-$mode")
done
echo "clock-bound: $(( $(date +%s) - t0 )) s"
if [ -n "${RUNS:-}" ]; then
  export RUNS
  PACK=$PACK OUT=$OUT bash "$(dirname "$0")/k3-runs.sh"
fi
