#!/usr/bin/env bash
# Device call of 2026-12-04 (lead, one nvidia-h200): KDA's ops back to back for 1.5 s (kda-bench
# with K3_BENCH_SUSTAIN_MS=1500) under `k3sim trace capture`, as kernels/calls/op-sustained-2026-12-04.sh
# did for k3-bench's families: decode at H = 96, B = 1, 16, 64, 256, FP32 state; the chunked prefill
# at T = 4K, 16K, H = 96, FP32 state. Per capture only bench/power/op-sustained-extract.py's readings
# by range come back. From the repository root, the pack in .gpu/sus3:
#   OUT=$OUT bash kernels/calls/op-sustained-kda-2026-12-04.sh   -> $OUT/call.tar
set -u
OUT=${OUT:?OUT=<folder>}
PACK=${PACK:-.gpu/sus3}
B=$PACK/k3-build
t0=$(date +%s)
# (as run, these lines were the unpacking and library paths inline; device-env.sh's since, the same)
. kernels/calls/device-env.sh
mkdir -p "$OUT"
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
trap 'kill "$SMI_PID" 2>/dev/null' EXIT
mkdir -p "$OUT/kda"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit,power.draw,temperature.gpu --format=csv
  run() { # $1 name, rest: kda-bench arguments
    n=$1; shift
    s=$(date +%s)
    K3_BENCH_SUSTAIN_MS=${SUSTAIN_MS:-1500} timeout ${TIMEOUT:-150} "$B/cli/k3sim" trace capture -o "$OUT/kda/$n.db" --force -- \
      "$B/kernels/kda-bench" "$@" -o "$OUT/kda/$n.csv" > "$OUT/kda/$n.txt" 2>&1
    echo "== $n exit $? in $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)"
    python3 bench/power/op-sustained-extract.py "$OUT/kda/$n.db" > "$OUT/kda/$n-sustained.csv"
    echo "== $n extract exit $?"
    rm -f "$OUT/kda/$n.db"
  }
  run decode --only decode --batch 1,16,64,256 --state fp32 --reps 10
  run prefill --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32 --reps 5
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
} > "$OUT/log.txt" 2>&1
grep -E "^== " "$OUT/log.txt"
(cd "$OUT" && tar cf call.tar log.txt kda && rm -rf kda)
echo "call: $(( $(date +%s) - t0 )) s"
