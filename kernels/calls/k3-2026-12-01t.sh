#!/usr/bin/env bash
# Device call of issue 17's twelfth round (one nvidia-h200, at most 300 s): everything of this
# session together — the materialized MLA prefill in the slice (01i), TMA weight tiles in the grouped
# wgmma GEMM (01j), the MXFP8 gemv rows (01k), and the op kinds of their own for AttnRes, routing,
# combine and ShortConv (their NVTX ranges and bench points; kernels unchanged).
# Runs, each in its own process: the FULL k3-bench under `k3sim trace capture` (--require-wgmma: the
# capture the k3-kernels preset is fitted on), then the four-layer slice under capture
# (kernels/slice/run-slice.sh --reps 3: prefill T = 4K, 16K; decode B = 1, 16, 64, 256 at C = 8K, 64K,
# eager and CUDA graphs), held out from the fit by process; the GPU tests of the changed kernels in the
# time left; nvidia-smi sampled every 500 ms throughout.
# From the repository root:  PACK=.gpu/r12 bash .gpu/r12/k3-2026-12-01t.sh
# $OUT gets 6 files (a call returns at most 8): k3-bench.txt k3-h200.db.xz k3-slice.txt k3-slice.csv
# k3-slice.db.xz k3-misc.tar.xz (k3-env.txt k3-smi.csv k3-bench.csv k3-tests.txt).
set -u
PACK=${PACK:-.gpu/r12}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-280}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
. "$PACK/device-env.sh" || . kernels/calls/device-env.sh
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
{
  s=$(date +%s)
  timeout 240 "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma -o "$M/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
} > "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-h200.db"
echo "bench done at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-bench.txt")"
left=$(( LIMIT - 25 - ($(date +%s) - t0) ))
if [ "$left" -gt 45 ]; then
  sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
  OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --reps 3 > /dev/null 2>&1
  echo "slice exit $? at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-slice.txt")"
else
  echo "no time left for the slice"
fi
{
  left=$(( LIMIT - 8 - ($(date +%s) - t0) ))
  if [ "$left" -gt 10 ]; then
    for t in test-mla-gpu test-dsa-gpu test-moe-gpu test-kda-gpu test-mla-prefill-gpu test-attnres-gpu test-layer-gpu; do
      left=$(( LIMIT - 8 - ($(date +%s) - t0) ))
      [ "$left" -gt 10 ] || { echo "no time left for $t"; continue; }
      echo "== $t"
      timeout "$left" "$B/tests/kernels/$t" 2>&1 | tail -n 40
      echo "== $t: exit ${PIPESTATUS[0]}"
    done
  else
    echo "no time left for the GPU tests"
  fi
} > "$M/k3-tests.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf /tmp/k3-misc.keep; cp -r "$M" /tmp/k3-misc.keep; rm -rf "$M"
grep -E "^== .*exit|^\[  (FAILED|PASSED)" /tmp/k3-misc.keep/k3-tests.txt
grep -E "^grouped_gemm" "$OUT/k3-bench.txt" | head -24
grep -E "GPU 0 clocks" "$OUT/k3-bench.txt" "$OUT/k3-slice.txt" 2>/dev/null
tail -n 20 "$OUT/k3-slice.txt" 2>/dev/null
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
