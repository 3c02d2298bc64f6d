#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 16:29-16:43 UTC, nvidia-h200, carry build-gpu-final .gpu: GPU sessions d and e 
# (bench/results/gpu-session-h200-2026-11-29-{d,e}) and the reverted-refactor call 
# (d/kda-full-refactor-reverted.log).
export B=$PWD/build-gpu-final
OUT=$OUT bash bench/gpu-session.sh 2>&1 | grep -E "gpu suite|exit" | tail -10
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64 K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
timeout 400 $B/cli/k3sim trace capture -o $OUT/kda-full-h200.db --force -- $B/kernels/kda-bench -o $OUT/kda-full.csv > $OUT/kda-full.log 2>&1
echo "kda-full rc=$?"; tail -2 $OUT/kda-full.log
sed -n '/^decode/,$p' $OUT/kda-full.log | head -40
KDA_TEST_FILTER='*decode*' timeout 200 compute-sanitizer --tool memcheck $B/tests/kernels/test-kda-gpu > $OUT/memcheck-decode.log 2>&1; echo "memcheck decode rc=$? $(tail -1 $OUT/memcheck-decode.log)"
xz -T8 $OUT/kda-full-h200.db $OUT/kda-h200.db 2>&1; ls -la $OUT
