#!/usr/bin/env bash
# (As run; after the round wide2rqpv, wide2rqp4s, wide2rqps and diag-rqp-noconv were removed: see
# bench/results/k3-kernels-h200-2026-12-04n/README.md. wide2rqps's shifts are in every tile-layout kernel.)
# Issue 17, 2026-12-04n call 4, one nvidia-h200: "wide2rqps" (XV_SHL: wide2rqp with the
# conversion's rotations by 2 and 6 as multiplies by an opaque 4 and 64, and the scales' x 128 as
# a multiply by an opaque 128: IMADs on the FMA pipe instead of SHF / LEA on the integer ALU,
# which 04n call 1's profile put ~39 % busy with "math pipe throttle" stalls; bit for bit the same
# A words) beside wide2rqp. 128-token tiles (at 16K not comparable). In ONE process
# (kernels/calls/moe-ab-call.sh):
#  1. test-moe-gpu *wide_small* (wide2rqps bit for bit against wide2rp among the others),
#     *k3_expert_shapes*, *wgmma_clusters*;
#  2. k3-bench --only moe_prefill, MXFP4 rows, wide2rqp / wide2rqps alternating 4 times;
#  3. memcheck + racecheck of *wide_small_rp*; 4. no ncu.
# From the repository root:  PACK=.gpu/sh LIMIT=330 OUT=$OUT bash kernels/calls/k3-2026-12-04n4.sh
export PACK=${PACK:-.gpu/sh}
export KERNELS=${KERNELS:-wide2rqp,wide2rqps,wide2rqp,wide2rqps,wide2rqp,wide2rqps,wide2rqp,wide2rqps}
export TEST_CAP=${TEST_CAP:-60}
export BENCH_CAP=${BENCH_CAP:-150}
export NCU_KERNEL=${NCU_KERNEL:-none} NCU_REGEX=${NCU_REGEX:-none} NCU_TAG=${NCU_TAG:-none}
exec bash "$(dirname "$0")/moe-ab-call.sh"
