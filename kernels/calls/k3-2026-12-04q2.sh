#!/usr/bin/env bash
# Issue 17, 2026-12-04q call 2, one nvidia-h200: the FP8 kernel with 4 A register sets (the default
# now: three groups in flight while the next is decoded; no proxy fence on the odd stage) beside
# call 1's form (2 sets, "wide2f8s2" = K3_GEMM_F8_SETS=2) and the BF16-activation default wide2rqp.
#  1. test-moe-gpu *e4m3* (both forms, small shapes and K3's, float64), *wide_small*;
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K, 4K; w13, w2): wide2rqp, wide2f8, wide2f8s2
#     alternating three times in ONE process, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3*;
#  4. ncu of one wide2f8 GLU launch (w13) at T = 4K.
# From the repository root:  PACK=.gpu/q2 LIMIT=560 OUT=$OUT bash kernels/calls/k3-2026-12-04q2.sh
set -u
export PACK=${PACK:-.gpu/q2}
export OUT=${OUT:-$PWD/k3-out}
R=wide2rqp,wide2f8,wide2f8s2
export KERNELS=${KERNELS:-$R,$R,$R}
export TESTS=${TESTS:-'*e4m3* *wide_small*'}
export TEST_CAP=${TEST_CAP:-120}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'}
export BENCH_CAP=${BENCH_CAP:-260}
export NCU_T=${NCU_T:-4096} NCU_KERNEL=${NCU_KERNEL:-wide2f8} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*296792} NCU_TAG=${NCU_TAG:-f8s4}
exec bash "$(dirname "$0")/moe-ab-call.sh"
