#!/usr/bin/env bash
# Issue 17, round 05n (lead, 2026-12-05, session 15:42-18:42 UTC): round 05m's FP8 epilogue in
# blocks (K3_GEMM_F8_SETS=2e, XV_F8E) and 2eo (XV_F8O): 2e with GLU's BF16 outputs staged in the
# token region of an odd stage (which the FP8 producer never writes) and copied out 16 bytes a
# store, an eighth of the store requests. Why: 05m (an H100, 16:08 UTC) had 2e bit for bit and
# w13 at 4K a median 2.4 % faster (5.34 against 5.47 ms; 2e4 slower), and its profile
# (call05m/sass-f8e.csv.xz) left the epilogue's samples on the 2-byte global stores (a store's
# registers waited on before reuse, the scatter index's shared load before each address).
#  1. test-moe-gpu *e4m3* (MOE_TEST_F8_SETS="2e 2eo": the default and those against float64 and
#     bit for bit; the K3 shapes test runs its forms, 2e and 2eo among them);
#  2. k3-bench --only moe_prefill at T = 4K, MXFP4 w13 and w2: wide2f8, wide2f8s2e, wide2f8s2eo
#     alternating four times in ONE process, each beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3* (the default and 2eo);
#  4. ncu of one wide2f8s2eo GLU launch (w13) at T = 4K.
# Pack (.gpu/g, gitignored): k3-bench and test-moe-gpu of this commit's build-gpu.
# From the repository root:  PACK=.gpu/g LIMIT=400 OUT=$OUT bash kernels/calls/k3-2026-12-05n.sh
set -u
export PACK=${PACK:-.gpu/g}
export OUT=${OUT:-$PWD/k3-out}
export K3_BENCH_MOE_T=${K3_BENCH_MOE_T:-4096}
export MOE_TEST_F8_SETS=${MOE_TEST_F8_SETS:-2e 2eo}
R=wide2f8,wide2f8s2e,wide2f8s2eo
export KERNELS=${KERNELS:-$R,$R,$R,$R}
export TESTS=${TESTS:-'*e4m3*'}
export TEST_CAP=${TEST_CAP:-150}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'} SAN_CAP=${SAN_CAP:-80} SAN_ENV=${SAN_ENV:-MOE_TEST_F8_SETS=2eo}
export BENCH_CAP=${BENCH_CAP:-170}
# 671909720 = XV_ONE | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_PP | XV_F8 | XV_FGLU | XV_F8S2 | XV_F8E | XV_F8O
export NCU_T=${NCU_T:-4096} NCU_KERNEL=${NCU_KERNEL:-wide2f8s2eo} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*671909720} NCU_TAG=${NCU_TAG:-f8eo}
exec bash "$(dirname "$0")/moe-ab-call.sh"
