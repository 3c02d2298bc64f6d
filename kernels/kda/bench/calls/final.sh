#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 16:22 UTC, nvidia-h200, carry build-gpu-final .gpu: GPU session c 
# (bench/results/gpu-session-h200-2026-11-29-c).
export B=$PWD/build-gpu-final
OUT=$OUT bash bench/gpu-session.sh 2>&1 | tail -15
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64 K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
s=$(date +%s)
timeout 400 $B/cli/k3sim trace capture -o $OUT/kda-full-h200.db --force -- $B/kernels/kda-bench -o $OUT/kda-full.csv > $OUT/kda-full.log 2>&1
echo "kda-full rc=$? $(( $(date +%s) - s )) s"; tail -3 $OUT/kda-full.log
sed -n '/^decode/,/^verify/p' $OUT/kda-full.log
xz -T8 $OUT/kda-full-h200.db $OUT/kda-h200.db 2>&1; ls -la $OUT
