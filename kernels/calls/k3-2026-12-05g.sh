#!/usr/bin/env bash
# Issue 17, round 05g (lead, 2026-12-05): the FP8 expert-GEMM kernel with a k block's weight words
# by one 16-byte load at the block's start (K3_GEMM_F8_SETS=2l, XV_F8L; 2lr: with 2r), GLU's BF16
# outputs two columns a 4-byte store (2w, XV_F8W; 2lw: 2l and 2w), all the default's arithmetic
# (bit for bit). Why 2w: 04q's ncu, L2 at 74.7 % by its tag requests, the outputs' 2-byte stores
# one source. Why 2l: round 05d's ncu of 2prt (bench/results/
# k3-kernels-h100-2026-12-05, call05d) put 35 % of the k loop's stall samples on short_sb, the
# decode waiting for the shared loads issued right before it; the default's second group of a
# k block loads its words only when that group starts, by 8-byte loads that take 2 wavefronts a
# quarter warp.
#  1. test-moe-gpu *e4m3* (MOE_TEST_F8_SETS="2l 2lr 2w 2lw": the default and those against float64
#     and bit for bit; the K3 shapes test runs its forms, 2l, 2lr and 2lw among them);
#  2. k3-bench --only moe_prefill at T = 4K, MXFP4 w13 and w2: wide2f8, wide2f8s2l, wide2f8s2lr,
#     wide2f8s2w, wide2f8s2lw alternating three times in ONE process, each beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3* (the default and 2lw);
#  4. ncu of one wide2f8s2l GLU launch (w13) at T = 4K.
# Pack (.gpu/g, gitignored): k3-bench and test-moe-gpu of this commit's build-gpu (2w / 2lw from 2026-12-05 ~12:00 on).
# From the repository root:  PACK=.gpu/g LIMIT=400 OUT=$OUT bash kernels/calls/k3-2026-12-05g.sh
set -u
export PACK=${PACK:-.gpu/g}
export OUT=${OUT:-$PWD/k3-out}
export K3_BENCH_MOE_T=${K3_BENCH_MOE_T:-4096}
export MOE_TEST_F8_SETS=${MOE_TEST_F8_SETS:-2l 2lr 2w 2lw}
R=wide2f8,wide2f8s2l,wide2f8s2lr,wide2f8s2w,wide2f8s2lw
export KERNELS=${KERNELS:-$R,$R,$R}
export TESTS=${TESTS:-'*e4m3*'}
export TEST_CAP=${TEST_CAP:-150}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'} SAN_CAP=${SAN_CAP:-80} SAN_ENV=${SAN_ENV:-MOE_TEST_F8_SETS=2lw}
export BENCH_CAP=${BENCH_CAP:-150}
# 34375512 = XV_ONE | XV_RS1 | XV_LEAN | XV_RP | XV_RQ | XV_PP | XV_F8 | XV_FGLU | XV_F8S2 | XV_F8L
export NCU_T=${NCU_T:-4096} NCU_KERNEL=${NCU_KERNEL:-wide2f8s2l} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*34375512} NCU_TAG=${NCU_TAG:-f8l}
exec bash "$(dirname "$0")/moe-ab-call.sh"
