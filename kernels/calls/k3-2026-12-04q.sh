#!/usr/bin/env bash
# Issue 17, 2026-12-04q call 1, one nvidia-h200: the FP8 kernel ("wide2f8": E4M3 activations with a
# scale a row, K3_A_E4M3_ROW; MXFP4 weights in the FP8-word layout; k3_gemm_wg.cu f8_kblock()).
#  1. test-moe-gpu *e4m3* (small shapes and K3's, float64 of the quantized operands), *wgf8*
#     (the operands), *wide_small* (the default's bits: produce_pp() now also serves XV_F8);
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K, 4K; w13, w2): wide2f8 and the default
#     wide2rqp alternating three times in ONE process, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3* (the small shapes);
#  4. ncu of one wide2f8 GLU launch (w13) at T = 4K.
# From the repository root:  PACK=.gpu/q LIMIT=480 OUT=$OUT bash kernels/calls/k3-2026-12-04q.sh
set -u
export PACK=${PACK:-.gpu/q}
export OUT=${OUT:-$PWD/k3-out}
export KERNELS=${KERNELS:-wide2rqp,wide2f8,wide2rqp,wide2f8,wide2rqp,wide2f8}
export TESTS=${TESTS:-'*e4m3* *wgf8* *wide_small*'}
export TEST_CAP=${TEST_CAP:-90}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'}
export BENCH_CAP=${BENCH_CAP:-200}
export NCU_T=${NCU_T:-4096} NCU_KERNEL=${NCU_KERNEL:-wide2f8} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*296792} NCU_TAG=${NCU_TAG:-f8}
exec bash "$(dirname "$0")/moe-ab-call.sh"
