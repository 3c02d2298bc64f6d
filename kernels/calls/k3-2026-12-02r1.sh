#!/usr/bin/env bash
# Round 19 pre-call 2 (lead): kernels/calls/k3-2026-12-02r-ncu.sh on the r19s pack (main b39fddb's k3-slice)
set -u
P=.gpu/r19s
[ -d $P/k3-build ] || tar xJf $P/pack.tar.xz -C $P
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
PACK=$P OUT=$OUT LIMIT=75 bash $P/k3-2026-12-02r-ncu.sh
head -c 3000 $OUT/ncu-slice.err
