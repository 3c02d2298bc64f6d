#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 ~16:10 UTC, nvidia-h200, carry build-gpu .gpu: verify run1 
# (bench/results/kda-verify-h200-2026-11-29/run1).
export BUILD=build-gpu NO_FLA=1
SAN_TESTS="test_verify_replay_fp32 test_verify_replay_bf16" sh kernels/kda/bench/run-h200.sh --only verify 2>&1 | tail -45
KDA_VERIFY_KERNEL=step SUFFIX=-step NO_SANITIZER=1 sh kernels/kda/bench/run-h200.sh --only verify 2>&1 | tail -22
