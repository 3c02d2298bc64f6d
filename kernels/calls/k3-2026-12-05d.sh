#!/usr/bin/env bash
# Issue 17, round 05d (lead, written 2026-12-05 while no device was lent), one nvidia-h200: the FP8
# expert-GEMM kernel's stages (K3_GEMM_F8_SETS, all three the default's arithmetic):
#   2p  (XV_F8P) compact pairs: an odd stage holds only its weight tile (8 KB), so it sits right
#       after its even stage and 12 stages (6 k-block pairs) fit where 8 (4 pairs) did;
#   2r  (XV_F8R) the odd stage released by its own pair's last group once its words are decoded,
#       about a pair earlier than the default (which releases it with the even one);
#   2pr both;
#   2t  (XV_F8T) the scale groups' tables made once a row and group by the warp together (through
#       1 KB a warp of shared memory) instead of in each of the 4 lanes of a quad that reads them;
#   2prt all three.
# Why: round 04q's ncu of the default w13 at T = 4K (sass-f8.csv.xz): the consumers wait on full
# stages (~13 % of the k loop's stall samples) while the producer waits on free ones: the stages in
# flight, not the copies' issue, look short.
#  1. test-moe-gpu *e4m3* (every K3_GEMM_F8_SETS choice against float64; m4 .. 2prt bit for bit
#     against the default), *wide_small*;
#  2. k3-bench --only moe_prefill at T = 4K alone, MXFP4 w13 and w2: wide2f8 (the FP8 default),
#     wide2f8s2p, wide2f8s2r, wide2f8s2pr, wide2f8s2t and wide2f8s2prt alternating three times in
#     ONE process, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3* (the default and 2prt: MOE_TEST_F8_SETS);
#  4. ncu of one wide2f8s2prt GLU launch (w13) at T = 4K.
# Pack (.gpu/d, gitignored): k3-bench and test-moe-gpu of this commit's build-gpu, as .gpu/s.
# From the repository root:  PACK=.gpu/d LIMIT=560 OUT=$OUT bash kernels/calls/k3-2026-12-05d.sh
set -u
export PACK=${PACK:-.gpu/d}
export OUT=${OUT:-$PWD/k3-out}
export K3_BENCH_MOE_T=${K3_BENCH_MOE_T:-4096}
R=wide2f8,wide2f8s2p,wide2f8s2r,wide2f8s2pr,wide2f8s2t,wide2f8s2prt
export KERNELS=${KERNELS:-$R,$R,$R}
export TESTS=${TESTS:-'*e4m3* *wide_small*'}
export TEST_CAP=${TEST_CAP:-150}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'} SAN_CAP=${SAN_CAP:-80} SAN_ENV=${SAN_ENV:-MOE_TEST_F8_SETS=2prt}
export BENCH_CAP=${BENCH_CAP:-200}
# 30181208 = XV_ONE | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_PP | XV_F8 | XV_FGLU | XV_F8S2 | XV_F8P | XV_F8R | XV_F8T
export NCU_T=${NCU_T:-4096} NCU_KERNEL=${NCU_KERNEL:-wide2f8s2prt} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*30181208} NCU_TAG=${NCU_TAG:-f8prt}
exec bash "$(dirname "$0")/moe-ab-call.sh"
