#!/usr/bin/env bash
# Issue 17, 2026-12-04m, one nvidia-h200: "wide2rqp" (opt-in; XV_PP in kernels/moe/k3_gemm_wg.cu,
# produce_pp()): wide2rqt, and where the token rows are gathered (w13) their cp.async copies from
# pointers made once a tile (one copy a row a k block, one 64-bit add a row a k block pair, the
# zero-fill decided once a tile) instead of wide2rq's address and predicate work a row a k block:
# 2026-12-03t put the producer's ~115 instructions a k block on w13's critical path at T = 4K
# (bench/results/k3-kernels-h200-2026-12-03t). Rows not gathered (w2): wide2rqt's kernel. And
# "wide2rqt8" / "wide2rqp8" (XV_N8): the MMAs' token widths rounded to 8 instead of 16 below 128
# (at T = 4K ~73 tokens an expert: 9.3 % of the columns padding at 16, 4.6 % at 8). In ONE
# process each (kernels/calls/moe-ab-call.sh):
#  1. test-moe-gpu *wide_small*, *k3_expert_shapes*, *wgmma_clusters* (float64 references; the RQ
#     kernels, wide2rqp among them, bit for bit against wide2rp; its gathered launches take XV_PP);
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rqp /
#     wide2rqt / wide2rqt8 / wide2rqp8 alternating 3 times each;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp* (wide2rqp's GLU launches there
#     are gathered: XV_PP);
#  no ncu (NCU_KERNEL=none).
# From the repository root:  PACK=.gpu/m LIMIT=420 OUT=$OUT bash kernels/calls/k3-2026-12-04m.sh
export PACK=${PACK:-.gpu/m}
export KERNELS=${KERNELS:-wide2rq,wide2rqp,wide2rqt,wide2rqt8,wide2rqp8,wide2rq,wide2rqp,wide2rqt,wide2rqt8,wide2rqp8,wide2rq,wide2rqp,wide2rqt,wide2rqt8,wide2rqp8}
export TEST_CAP=${TEST_CAP:-90}
export BENCH_CAP=${BENCH_CAP:-150}
export NCU_KERNEL=${NCU_KERNEL:-none} NCU_REGEX=${NCU_REGEX:-none} NCU_TAG=${NCU_TAG:-none}
exec bash "$(dirname "$0")/moe-ab-call.sh"
