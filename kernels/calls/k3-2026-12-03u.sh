#!/usr/bin/env bash
# Issue 17, 2026-12-03u (lead), one nvidia-h200: "wide2rqt" / "wide2rq4t" (XV_TX in
# kernels/moe/k3_gemm_wg.cu, produce(), a_map()): wide2rq / wide2rq4 with each token row of a k
# block one tensor copy (box {64 BF16, 1}, the 128-byte swizzle of its destination) issued by the
# producer thread of that row, instead of 16-byte cp.async copies and their addresses (2026-12-03t's
# source counters: the producer warp's ~115 instructions a k block were the critical path at
# T = 4K). In ONE process each (kernels/calls/moe-ab-call.sh):
#  1. test-moe-gpu *wide_small*, *k3_expert_shapes*, *wgmma_clusters* (float64 references; the RQ
#     kernels bit for bit against wide2rp);
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rqt /
#     wide2rq4t alternating, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp*;
#  4. ncu (source counters) of one wide2rq4t w13 launch at T = 4K.
# From the repository root:  PACK=.gpu/u LIMIT=360 bash kernels/calls/k3-2026-12-03u.sh
export PACK=${PACK:-.gpu/u}
export KERNELS=${KERNELS:-wide2rq,wide2rqt,wide2rq4t,wide2rq,wide2rqt,wide2rq4t,wide2rq,wide2rqt,wide2rq4t}
export TEST_CAP=${TEST_CAP:-90}
export BENCH_CAP=${BENCH_CAP:-170}
export NCU_KERNEL=${NCU_KERNEL:-wide2rq4t}
export NCU_REGEX=${NCU_REGEX:-wg_kernel.*96.*22360}
export NCU_TAG=${NCU_TAG:-rq4t}
exec bash "$(dirname "$0")/moe-ab-call.sh"
