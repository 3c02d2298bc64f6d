#!/usr/bin/env bash
# Round 19 pre-call (lead, 2026-12-02): the slice alone under capture with main b39fddb (the routed
# experts' rows per layer printed), to see each layer's expert load beside its grouped GEMM time.
set -u
P=$PWD/.gpu/r19s
tar xJf $P/pack.tar.xz -C $P
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
OUT=$OUT/s BUILD=$P/k3-build timeout 70 bash $P/run-slice.sh --reps 3 > /dev/null 2>&1
echo "slice exit $?"
grep -E "expert rows|^prefill|^decode|capture exit" $OUT/s/k3-slice.txt | cut -c1-400
