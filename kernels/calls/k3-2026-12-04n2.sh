#!/usr/bin/env bash
# (As run; after the round wide2rqpv, wide2rqp4s, wide2rqps and diag-rqp-noconv were removed: see
# bench/results/k3-kernels-h200-2026-12-04n/README.md. wide2rqps's shifts are in every tile-layout kernel.)
# Issue 17, 2026-12-04n call 2, one nvidia-h200: wide2rqp's k block taken apart at T = 4K. The
# measurement rows of kernels/moe/k3_gemm_wg.cu (launch_diag(), 128-token tiles, outputs wrong):
# "diag-rqp-nofeed" (no token or weight copies: the stages stale, only the scale words copied),
# "diag-rqp-noconv" (the tile-layout words as A: no E2M1 expansion, no scales), "diag-rqp-nomma"
# (the conversions kept live, no MMA), and "wide2rqpv" (wide2rqp with a k block's A words in one
# 16-byte load an m64 block, XV_V16: correct outputs, opt-in). In ONE process
# (kernels/calls/moe-ab-call.sh, SKIP_TESTS=1):
#  1. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2; at 16K the diag rows
#     run 128-token tiles, not comparable), the five kernels alternating twice;
#  2. ncu of one diag-rqp-noconv GLU launch (w13) at T = 4K (XV 100184).
# From the repository root:  PACK=.gpu/n LIMIT=300 OUT=$OUT bash kernels/calls/k3-2026-12-04n2.sh
export PACK=${PACK:-.gpu/n}
export KERNELS=${KERNELS:-wide2rqp,diag-rqp-noconv,diag-rqp-nomma,diag-rqp-nofeed,wide2rqpv,wide2rqp,diag-rqp-noconv,diag-rqp-nomma,diag-rqp-nofeed,wide2rqpv}
export SKIP_TESTS=${SKIP_TESTS:-1}
export BENCH_CAP=${BENCH_CAP:-150}
export NCU_KERNEL=${NCU_KERNEL:-diag-rqp-noconv} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*100184} NCU_TAG=${NCU_TAG:-noconv}
exec bash "$(dirname "$0")/moe-ab-call.sh"
