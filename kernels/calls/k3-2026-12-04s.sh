#!/usr/bin/env bash
# Issue 17, round 04s call 1 (written 2026-12-04; not run that day: no device was lent), one
# nvidia-h200: the FP8 kernel with A through shared memory
# (XV_F8M, f8m_kblock(): the decoded E4M3 fragments stored into a ring of slots, E4M3 MMAs with
# both operands in shared memory; K3_GEMM_F8_SETS=m4 / m2, bench names wide2f8m4 / wide2f8m2; m4k,
# wide2f8m4k: XV_F8K, f8mk_kblock(), the 4 slots filled a k block at a time):
#  1. test-moe-gpu *e4m3* (every K3_GEMM_F8_SETS choice against float64; m4 / m2 bit for bit
#     against the default), *wide_small*;
#  2. k3-bench --only moe_prefill at T = 4K alone, MXFP4 w13 and w2: wide2f8 (2 register sets,
#     the FP8 default), wide2f8m4, wide2f8m4k and wide2f8m2 alternating three times in ONE
#     process, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3*;
#  4. ncu of one wide2f8m4 GLU launch (w13) at T = 4K.
# From the repository root:  PACK=.gpu/s LIMIT=480 OUT=$OUT bash kernels/calls/k3-2026-12-04s.sh
set -u
export PACK=${PACK:-.gpu/s}
export OUT=${OUT:-$PWD/k3-out}
export K3_BENCH_MOE_T=${K3_BENCH_MOE_T:-4096}
R=wide2f8,wide2f8m4,wide2f8m4k,wide2f8m2
export KERNELS=${KERNELS:-$R,$R,$R}
export TESTS=${TESTS:-'*e4m3* *wide_small*'}
export TEST_CAP=${TEST_CAP:-150}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'} SAN_CAP=${SAN_CAP:-60}
export BENCH_CAP=${BENCH_CAP:-200}
export NCU_T=${NCU_T:-4096} NCU_KERNEL=${NCU_KERNEL:-wide2f8m4} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*1345368} NCU_TAG=${NCU_TAG:-f8m4}
exec bash "$(dirname "$0")/moe-ab-call.sh"
