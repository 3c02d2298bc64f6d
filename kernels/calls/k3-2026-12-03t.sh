#!/usr/bin/env bash
# Issue 17, 2026-12-03t (lead), one nvidia-h200: "wide2rqv" / "wide2rq4v" (XV_V16 in
# kernels/moe/k3_gemm_wg.cu, rq_load16()): wide2rq / wide2rq4 with the lane's A words of a k block
# one 16-byte shared load an m64 block instead of two 8-byte ones, which conflicted (2026-12-03s's
# ncu: "L1 Wavefronts Shared Excessive" equal to the ideal on every A load). In ONE process each:
#  1. test-moe-gpu *wide_small* (every RQ kernel beside wide2rp at E8M0 bytes 0 .. 128, chunk
#     edges, bit for bit against wide2rp), *k3_expert_shapes* (K3's w13 / w2, bit for bit against
#     wide2rp), *wgmma_clusters*, float64 references;
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rqv /
#     wide2rq4v alternating, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp*;
#  4. ncu (source counters) of one wide2rqv w13 launch at T = 4K.
# (Since 2026-12-03t the body is kernels/calls/moe-ab-call.sh, the same steps as run.)
# From the repository root:  PACK=.gpu/t LIMIT=330 bash kernels/calls/k3-2026-12-03t.sh
export PACK=${PACK:-.gpu/t}
export KERNELS=${KERNELS:-wide2rq,wide2rqv,wide2rq4v,wide2rq,wide2rqv,wide2rq4v,wide2rq,wide2rqv,wide2rq4v}
export TEST_CAP=${TEST_CAP:-90}
export BENCH_CAP=${BENCH_CAP:-170}
export NCU_KERNEL=${NCU_KERNEL:-wide2rqv}
export NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*10072}
export NCU_TAG=${NCU_TAG:-rqv}
exec bash "$(dirname "$0")/moe-ab-call.sh"
