#!/usr/bin/env bash
# (As run; after the round wide2rqpv, wide2rqp4s, wide2rqps and diag-rqp-noconv were removed: see
# bench/results/k3-kernels-h200-2026-12-04n/README.md. wide2rqps's shifts are in every tile-layout kernel.)
# Issue 17, 2026-12-04n call 3, one nvidia-h200: "wide2rqp4s" (XV_S4: wide2rqp's k loop with
# groups of one k step in 4 register sets, wait_group 3, so three groups of a warpgroup stay in
# flight while one is converted, where wide2rqp keeps one of two k steps; the same registers) and
# "wide2rqpv" (XV_V16) beside wide2rqp. 128-token tiles (at 16K not comparable: wide2rqp runs
# 160-token chunks there). In ONE process (kernels/calls/moe-ab-call.sh, SKIP_TESTS=1):
#  1. k3-bench --only moe_prefill, MXFP4 rows, the three alternating 3 times;
#  2. ncu of one wide2rqp4s GLU launch (w13) at T = 4K (XV 165720).
# From the repository root:  PACK=.gpu/s4 LIMIT=300 OUT=$OUT bash kernels/calls/k3-2026-12-04n3.sh
export PACK=${PACK:-.gpu/s4}
export KERNELS=${KERNELS:-wide2rqp,wide2rqp4s,wide2rqpv,wide2rqp,wide2rqp4s,wide2rqpv,wide2rqp,wide2rqp4s,wide2rqpv}
export SKIP_TESTS=${SKIP_TESTS:-1}
export BENCH_CAP=${BENCH_CAP:-150}
export NCU_KERNEL=${NCU_KERNEL:-wide2rqp4s} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*165720} NCU_TAG=${NCU_TAG:-rqp4s}
exec bash "$(dirname "$0")/moe-ab-call.sh"
