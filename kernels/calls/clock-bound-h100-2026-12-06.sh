#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, one nvidia-h100-x1): this project's kernels' clock shares on an
# H100 (clock_bound_<class>), measured as kernels/calls/clock-bound-2026-12-03.sh did on the H200:
# k3-bench families under `k3sim trace capture` twice, each timed launch after 100 ms of idle
# (K3_BENCH_COOL_MS) and after 100 ms of cuBLASLt GEMMs at the power limit (K3_BENCH_HOG_MS); the
# families with --expert-act e4m3 (the FP8 experts after each MXFP4 row). Why: the E4M3 slice's
# prefill at 4K ran back to back at 1604 MHz in 76.4 ms, 2.4 % over its step at boost, where the
# model's clock laws (cuBLAS's 0.894 for dense GEMMs, none for the rest) add ~28 %.
#   PACK=.gpu/q6 OUT=$OUT [SPECS="moe_prefill 8;mla_prefill 6;gemm 3"] bash kernels/calls/clock-bound-h100-2026-12-06.sh
set -u
PACK=${PACK:?PACK=.gpu/<tag>}
OUT=${OUT:?OUT=<folder>}
B=$PACK/k3-build
t0=$(date +%s)
. kernels/calls/device-env.sh
mkdir -p "$OUT"
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
trap 'kill "$SMI_PID" 2>/dev/null' EXIT
IFS=';' read -r -a specs <<< "${SPECS:-moe_prefill 8;mla_prefill 6;gemm 3}"
for mode in cool hog; do
  d=$OUT/cb-$mode
  mkdir -p "$d"
  var=K3_BENCH_COOL_MS
  [ "$mode" = hog ] && var=K3_BENCH_HOG_MS
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader > "$d/smi-start.txt"
  for spec in "${specs[@]}"; do
    set -- $spec
    env "$var=100" K3_BENCH_GEMM_M=${GEMM_M:-16,256,4096} timeout "${TIMEOUT:-80}" "$B/cli/k3sim" trace capture -o "$d/$1.db" --force -- \
      "$B/kernels/k3-bench" --require-wgmma --expert-act e4m3 --only "$1" --reps "$2" -o "$d/$1.csv" > "$d/$1.txt" 2>&1
    echo "== $mode $1 reps $2 exit $? at $(( $(date +%s) - t0 )) s"
    xz -T0 -6 "$d/$1.db" 2>/dev/null
  done
  (cd "$OUT" && tar cf "cb-$mode.tar" "cb-$mode" && rm -rf "cb-$mode")
done
echo "clock-bound: $(( $(date +%s) - t0 )) s"
