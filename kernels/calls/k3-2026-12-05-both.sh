#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-05): both pending rounds in ONE device call, for a session whose device
# time is short: the KDA pair kernel (kernels/calls/k3-2026-12-05.sh, pack .gpu/kda; quick: the
# pair and overlap tests and the default-path test only) within KDA_LIMIT seconds, then the FP8
# expert GEMM with A through shared memory (round 04s: kernels/calls/k3-2026-12-04s.sh, pack
# .gpu/s; two rounds of the four kernels, shorter caps) within GEMM_LIMIT.
# From the repository root:  OUT=$OUT bash kernels/calls/k3-2026-12-05-both.sh
set -u
OUT=${OUT:-$PWD/k3-out}
QUICK=1 QUICK_TESTS='*prefill_default*' PACK=.gpu/kda LIMIT=${KDA_LIMIT:-290} OUT=$OUT \
  bash kernels/calls/k3-2026-12-05.sh
R=wide2f8,wide2f8m4,wide2f8m4k,wide2f8m2
PACK=.gpu/s LIMIT=${GEMM_LIMIT:-250} OUT=$OUT/gemm KERNELS=$R,$R TEST_CAP=70 BENCH_CAP=110 SAN_CAP=30 \
  bash kernels/calls/k3-2026-12-04s.sh
