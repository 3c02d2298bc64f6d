#!/usr/bin/env bash
# Issue 17, 2026-12-03s (lead), one nvidia-h200: "wide2rq4" (XV_W4 in kernels/moe/k3_gemm_wg.cu):
# wide2rq's k loop with the tile's 256 weight rows over four consumer warpgroups of one m64 block
# each (640 threads, token tiles of 96), so that each scheduler holds four consumer warps (why:
# 2026-12-03q's profile of wide2rq at T = 4K, a consumer warp issuing every ~6.5 cycles, waiting
# mostly on its own fixed-latency dependencies). In ONE process each:
#  1. test-moe-gpu *wide_small* (wide2rq4 beside wide2rp at E8M0 bytes 0 .. 128, chunk edges, bit
#     for bit against wide2rp), *k3_expert_shapes* (K3's w13 / w2, bit for bit against wide2rp),
#     *wgmma_clusters* (every MXFP4 kernel name on the chunk edges), float64 references;
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rq4
#     alternating, each row beside cuBLASLt BF16;
#  3. compute-sanitizer memcheck + racecheck of *wide_small_rp*;
#  4. ncu (source counters) of one wide2rq4 w13 launch at T = 4K.
# (Since 2026-12-03t the body is kernels/calls/moe-ab-call.sh, the same steps as run.)
# From the repository root:  PACK=.gpu/s LIMIT=330 bash kernels/calls/k3-2026-12-03s.sh
export PACK=${PACK:-.gpu/s}
export KERNELS=${KERNELS:-wide2rq,wide2rq4,wide2rq,wide2rq4,wide2rq,wide2rq4}
export TEST_CAP=${TEST_CAP:-45}
export BENCH_CAP=${BENCH_CAP:-170}
export NCU_KERNEL=${NCU_KERNEL:-wide2rq4}
export NCU_REGEX=${NCU_REGEX:-wg_kernel.*96.*5976}
export NCU_TAG=${NCU_TAG:-rq4}
exec bash "$(dirname "$0")/moe-ab-call.sh"
