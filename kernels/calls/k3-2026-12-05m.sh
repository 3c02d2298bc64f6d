#!/usr/bin/env bash
# Issue 17, round 05m (lead, 2026-12-05, session 15:42-18:42 UTC): the FP8 expert-GEMM kernel's
# epilogue laid out for instruction-level parallelism (K3_GEMM_F8_SETS=2e / 2e4, XV_F8E /
# XV_F8E4, epilogue_f8e() in kernels/moe/k3_gemm_wg.cu): the default's arithmetic, bit for bit, in
# blocks of 16 / 32 tokens computed before they are stored, and the rows' floors loaded before the
# k loop. Why: 04q's per-instruction profile (bench/results/k3-kernels-h200-2026-12-04q/call1/
# sass-f8.csv.xz) puts ~23 % of the consumer warps' stall samples in the epilogue, one output at a
# time (each ~45 instructions, a dependent chain: MUFU tanh x 2, EX2 + RCP, the factors; the
# floors' global loads waited on right there).
#  1. test-moe-gpu *e4m3* (MOE_TEST_F8_SETS="2e 2e4": the default and those against float64 and
#     bit for bit; the K3 shapes test runs its forms, 2e and 2e4 among them);
#  2. k3-bench --only moe_prefill at T = 4K, MXFP4 w13 and w2: wide2f8, wide2f8s2e, wide2f8s2e4
#     alternating four times in ONE process, each beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3* (the default and 2e);
#  4. ncu of one wide2f8s2e GLU launch (w13) at T = 4K.
# Pack (.gpu/g, gitignored): k3-bench and test-moe-gpu of this commit's build-gpu.
# From the repository root:  PACK=.gpu/g LIMIT=400 OUT=$OUT bash kernels/calls/k3-2026-12-05m.sh
set -u
export PACK=${PACK:-.gpu/g}
export OUT=${OUT:-$PWD/k3-out}
export K3_BENCH_MOE_T=${K3_BENCH_MOE_T:-4096}
export MOE_TEST_F8_SETS=${MOE_TEST_F8_SETS:-2e 2e4}
R=wide2f8,wide2f8s2e,wide2f8s2e4
export KERNELS=${KERNELS:-$R,$R,$R,$R}
export TESTS=${TESTS:-'*e4m3*'}
export TEST_CAP=${TEST_CAP:-150}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'} SAN_CAP=${SAN_CAP:-80} SAN_ENV=${SAN_ENV:-MOE_TEST_F8_SETS=2e}
export BENCH_CAP=${BENCH_CAP:-170}
# 135038808 = XV_ONE | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_PP | XV_F8 | XV_FGLU | XV_F8S2 | XV_F8E
export NCU_T=${NCU_T:-4096} NCU_KERNEL=${NCU_KERNEL:-wide2f8s2e} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*135038808} NCU_TAG=${NCU_TAG:-f8e}
exec bash "$(dirname "$0")/moe-ab-call.sh"
