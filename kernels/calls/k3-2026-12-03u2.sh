#!/usr/bin/env bash
# Issue 17, 2026-12-03u call 2 (lead), one nvidia-h200: "wide2rqt" / "wide2rq4t" in their second
# form (XV_TX in kernels/moe/k3_gemm_wg.cu, produce(), a_map()): where the token rows are not
# gathered (w2) the token tile of a k block by tensor copies of 16 rows each (2 KB boxes) instead
# of 16-byte cp.async copies; gathered launches (w13) run wide2rq / wide2rq4 (call 1's copy a row
# was 2x slower). In ONE process each (kernels/calls/moe-ab-call.sh):
#  1. test-moe-gpu *wide_small*, *k3_expert_shapes*, *wgmma_clusters* (float64 references; the RQ
#     kernels bit for bit against wide2rp; the scattered SCALE launches of *wide_small* take the
#     tensor copies);
#  2. k3-bench --only moe_prefill, MXFP4 rows, wide2rq / wide2rqt / wide2rq4t alternating;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp*;
#  4. ncu (source counters) of one wide2rqt w2 launch at T = 4K.
# From the repository root:  PACK=.gpu/u2 LIMIT=360 bash kernels/calls/k3-2026-12-03u2.sh
export PACK=${PACK:-.gpu/u2}
export KERNELS=${KERNELS:-wide2rq,wide2rqt,wide2rq4t,wide2rq,wide2rqt,wide2rq4t,wide2rq,wide2rqt,wide2rq4t}
export TEST_CAP=${TEST_CAP:-60}
export BENCH_CAP=${BENCH_CAP:-170}
export NCU_KERNEL=${NCU_KERNEL:-wide2rqt}
export NCU_VARIANT=${NCU_VARIANT:-mxfp4_w2}
export NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*18256}
export NCU_TAG=${NCU_TAG:-rqt}
exec bash "$(dirname "$0")/moe-ab-call.sh"
