#!/usr/bin/env bash
# Issue 17, 2026-12-03q (lead), one nvidia-h200: "wide2rq", wide2rp's MXFP4 k loop with less around
# its conversions (XV_RQ, kernels/moe/k3_gemm_wg.cu above rq_kblock(); why: 2026-12-03p's
# per-instruction profile). In ONE process each:
#  1. test-moe-gpu *wide_small* (wide2rq beside wide2rp at E8M0 bytes 0 .. 128, chunk edges, and
#     bit for bit against wide2rp), *k3_expert_shapes* (K3's w13 / w2, bit for bit against wide2rp),
#     *wgmma_clusters* (every MXFP4 kernel name on the chunk edges), float64 references;
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rp / wide2rq
#     alternating, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp*;
#  4. ncu (source counters) of one wide2rq w13 launch at T = 4K.
# (Since 2026-12-03t the body is kernels/calls/moe-ab-call.sh, the same steps as run.)
# From the repository root:  PACK=.gpu/q LIMIT=330 bash kernels/calls/k3-2026-12-03q.sh
export PACK=${PACK:-.gpu/q}
export KERNELS=${KERNELS:-wide2rp,wide2rq,wide2rp,wide2rq}
export TEST_CAP=${TEST_CAP:-45}
export BENCH_CAP=${BENCH_CAP:-150}
export NCU_KERNEL=${NCU_KERNEL:-wide2rq}
export NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*1880}
export NCU_TAG=${NCU_TAG:-rq}
exec bash "$(dirname "$0")/moe-ab-call.sh"
