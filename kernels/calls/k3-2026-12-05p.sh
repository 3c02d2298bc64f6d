#!/usr/bin/env bash
# Issue 17, round 05p (lead, 2026-12-05, session 15:42-18:42 UTC): the build with 2eo as the FP8
# expert-GEMM kernel's default (launch_f8(); K3_GEMM_F8_SETS=2: the previous default), after 05o's
# hold-out (2eo faster in 6 of 6 pairs at w13 / w2 x T = 4K / 16K).
#  1. test-moe-gpu *e4m3* (MOE_TEST_F8_SETS=2: the default against float64, the old default bit
#     for bit against it; the K3 shapes test with those two forms only, now that it honors the
#     list, so that its float64 checks finish inside the cap);
#  2. k3-bench --only moe_prefill at T = 4K: wide2f8 (the default) and wide2f8s2 (the old default)
#     alternating four times in ONE process, each beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wgmma_e4m3* (the default and 2).
# Pack (.gpu/g, gitignored): k3-bench and test-moe-gpu of this commit's build-gpu.
# From the repository root:  PACK=.gpu/g LIMIT=420 OUT=$OUT bash kernels/calls/k3-2026-12-05p.sh
set -u
export PACK=${PACK:-.gpu/g}
export OUT=${OUT:-$PWD/k3-out}
export K3_BENCH_MOE_T=${K3_BENCH_MOE_T:-4096}
export MOE_TEST_F8_SETS=${MOE_TEST_F8_SETS:-2}
R=wide2f8,wide2f8s2
export KERNELS=${KERNELS:-$R,$R,$R,$R}
export TESTS=${TESTS:-'*e4m3*'}
export TEST_CAP=${TEST_CAP:-200}
export SAN_FILTER=${SAN_FILTER:-'*wgmma_e4m3*'} SAN_CAP=${SAN_CAP:-80} SAN_ENV=${SAN_ENV:-MOE_TEST_F8_SETS=2}
export BENCH_CAP=${BENCH_CAP:-120}
export NCU_KERNEL=${NCU_KERNEL:-none} NCU_REGEX=${NCU_REGEX:-none} NCU_TAG=${NCU_TAG:-none}
exec bash "$(dirname "$0")/moe-ab-call.sh"
