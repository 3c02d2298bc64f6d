#!/usr/bin/env bash
# Issue 17, 2026-12-04n call 5, one nvidia-h200: the final build (k3_wgrp_to_bf16x8() with o[0], o[1]
# by left shifts, i.e. wide2rqps's conversion in every tile-layout kernel, the default among them;
# the diag-rqp-nofeed / -nomma measurement rows). In ONE process each (kernels/calls/moe-ab-call.sh):
#  1. test-moe-gpu *wide_small* (the RQ kernels bit for bit against wide2rp; float64 references),
#     *layer* (the LatentMoE layer, decode and prefill, through the default, against float64),
#     *wgmma_tiles*;
#  2. k3-bench --only moe_prefill, MXFP4 rows: wide2rqp (the default), diag-rqp-nomma,
#     diag-rqp-nofeed, wide2rqp;
#  3. memcheck + racecheck of *wide_small_rp*.
# From the repository root:  PACK=.gpu/fin LIMIT=420 OUT=$OUT bash kernels/calls/k3-2026-12-04n5.sh
export PACK=${PACK:-.gpu/fin}
export TESTS=${TESTS:-'*wide_small* *layer* *wgmma_tiles*'}
export KERNELS=${KERNELS:-wide2rqp,diag-rqp-nomma,diag-rqp-nofeed,wide2rqp}
export TEST_CAP=${TEST_CAP:-100}
export BENCH_CAP=${BENCH_CAP:-120}
export NCU_KERNEL=${NCU_KERNEL:-none} NCU_REGEX=${NCU_REGEX:-none} NCU_TAG=${NCU_TAG:-none}
exec bash "$(dirname "$0")/moe-ab-call.sh"
