#!/usr/bin/env bash
# Issue 17, round 05o (lead, 2026-12-05, session 15:42-18:42 UTC): the hold-out call of 05n's
# `2eo` (K3_GEMM_F8_SETS=2eo, XV_F8O), now with w2's SCALE outputs through shared memory too (the
# warpgroup's 128 columns x 128 tokens, 256-byte token rows: tokens 0-63 in odd stage 5 + 2 wg's
# token region, 64-127 in 1 + 2 wg's; epilogue_f8e()). 05n (an H100, 16:30 UTC): 2eo's GLU faster than the
# default FP8 kernel in 4 of 4 pairs at w13, T = 4K (median 5.01 against 5.45 ms, 73.3-73.5 % of
# the cuBLASLt beside it).
#  1. test-moe-gpu *e4m3* (MOE_TEST_F8_SETS=2eo: the default and 2eo against float64 and bit for
#     bit; the K3 shapes test runs its forms);
#  2. k3-bench --only moe_prefill, T = 16K and 4K, MXFP4 w13 and w2: wide2f8 and wide2f8s2eo
#     alternating six times in ONE process, each beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3* (the default and 2eo);
#  4. ncu of one wide2f8s2eo SCALE launch (w2) at T = 4K.
# Pack (.gpu/g, gitignored): k3-bench and test-moe-gpu of this commit's build-gpu.
# From the repository root:  PACK=.gpu/g LIMIT=480 OUT=$OUT bash kernels/calls/k3-2026-12-05o.sh
set -u
export PACK=${PACK:-.gpu/g}
export OUT=${OUT:-$PWD/k3-out}
unset K3_BENCH_MOE_T
export MOE_TEST_F8_SETS=${MOE_TEST_F8_SETS:-2eo}
R=wide2f8,wide2f8s2eo
export KERNELS=${KERNELS:-$R,$R,$R,$R,$R,$R}
export TESTS=${TESTS:-'*e4m3*'}
export TEST_CAP=${TEST_CAP:-120}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'} SAN_CAP=${SAN_CAP:-80} SAN_ENV=${SAN_ENV:-MOE_TEST_F8_SETS=2eo}
export BENCH_CAP=${BENCH_CAP:-200}
# 671909712 = XV_ONE | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_PP | XV_F8 | XV_F8S2 | XV_F8E | XV_F8O (SCALE: no XV_FGLU)
export NCU_T=${NCU_T:-4096} NCU_VARIANT=${NCU_VARIANT:-mxfp4_w2} NCU_KERNEL=${NCU_KERNEL:-wide2f8s2eo}
export NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*671909712} NCU_TAG=${NCU_TAG:-f8eo-w2}
exec bash "$(dirname "$0")/moe-ab-call.sh"
