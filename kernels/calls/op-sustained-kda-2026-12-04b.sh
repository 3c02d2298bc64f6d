#!/usr/bin/env bash
# Device call of 2026-12-04 (lead, later; one nvidia-h200): KDA's chunked prefill back to back
# (kda-bench's prefill rows now go through the sustained mode too: K3_BENCH_SUSTAIN_MS), T = 4K and
# 16K at H = 96, FP32 state, under `k3sim trace capture`; per range only
# bench/power/op-sustained-extract.py's readings come back (kernels/calls/op-sustained-kda-2026-12-04.sh
# measured the decode this way; its prefill rows were timed outside the sustained path).
# From the repository root, the pack in .gpu/ks (k3-build: cli/k3sim, kernels/kda-bench,
# trace/capture/libk3capture.so):
#   OUT=$OUT bash kernels/calls/op-sustained-kda-2026-12-04b.sh   -> $OUT/call.tar
set -u
OUT=${OUT:?OUT=<folder>}
PACK=${PACK:-.gpu/ks}
B=$PACK/k3-build
t0=$(date +%s)
. kernels/calls/device-env.sh
mkdir -p "$OUT/kda"
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
trap 'kill "$SMI_PID" 2>/dev/null' EXIT
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  for st in fp32 bf16; do
    n=prefill-$st
    s=$(date +%s)
    K3_BENCH_SUSTAIN_MS=${SUSTAIN_MS:-2000} timeout 150 "$B/cli/k3sim" trace capture -o "$OUT/kda/$n.db" --force -- \
      "$B/kernels/kda-bench" --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state $st --reps 5 \
      -o "$OUT/kda/$n.csv" > "$OUT/kda/$n.txt" 2>&1
    echo "== $n exit $? in $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)"
    python3 bench/power/op-sustained-extract.py "$OUT/kda/$n.db" > "$OUT/kda/$n-sustained.csv"
    echo "== $n extract exit $?"
    rm -f "$OUT/kda/$n.db"
  done
} > "$OUT/log.txt" 2>&1
grep -E "^== " "$OUT/log.txt"
(cd "$OUT" && tar cf call.tar log.txt env.txt smi.csv kda && rm -rf kda)
echo "call: $(( $(date +%s) - t0 )) s"
