#!/usr/bin/env bash
# Issue 17, 2026-12-04q call 3, one nvidia-h200: the FP8 kernel's default after 64cd87b (2 register
# sets when K3_GEMM_F8_SETS is unset) run as built:
#  1. test-moe-gpu *e4m3* (the default form, then K3_GEMM_F8_SETS=4; float64), *wide_small*;
#  2. k3-bench --only moe_prefill at T = 4K alone (K3_BENCH_MOE_T), MXFP4 w13 and w2: wide2rqp and
#     wide2f8 alternating four times in ONE process, each row beside cuBLASLt BF16 (a third run of
#     the 4K numbers, another lease than calls 1 and 2);
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3*.
# From the repository root:  PACK=.gpu/q3 LIMIT=400 OUT=$OUT bash kernels/calls/k3-2026-12-04q3.sh
set -u
export PACK=${PACK:-.gpu/q3}
export OUT=${OUT:-$PWD/k3-out}
export K3_BENCH_MOE_T=${K3_BENCH_MOE_T:-4096}
R=wide2rqp,wide2f8
export KERNELS=${KERNELS:-$R,$R,$R,$R}
export TESTS=${TESTS:-'*e4m3* *wide_small*'}
export TEST_CAP=${TEST_CAP:-120}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'}
export BENCH_CAP=${BENCH_CAP:-200}
export NCU_KERNEL=none NCU_REGEX=none NCU_TAG=none
exec bash "$(dirname "$0")/moe-ab-call.sh"
