#!/usr/bin/env bash
# Issue 17, 2026-12-04n, one nvidia-h200: where wide2rqp's k block goes at T = 4K (w13, gathered
# rows), after 04m moved the producer off the critical path. The pack of 04m (.gpu/m, e5ae184:
# wide2rqp opt-in there, the same kernel as main's default). In ONE process
# (kernels/calls/moe-ab-call.sh, SKIP_TESTS=1: 04m ran the tests on this build):
#  1. k3-bench --only moe_prefill, MXFP4 rows, wide2rqp / wide2rq alternating twice (each row
#     beside cuBLASLt BF16);
#  2. ncu (SpeedOfLight, ComputeWorkloadAnalysis, SchedulerStats, WarpStateStats,
#     InstructionStats, SourceCounters) of one wide2rqp GLU launch (w13) at T = 4K: the kernel
#     wg_kernel<..., 128, ..., 34648> (XV_ONE | XV_FGLU | XV_RS1 | XV_LEAN | XV_RP | XV_RQ |
#     XV_PP: XV_TX is dropped on gathered launches).
# From the repository root:  PACK=.gpu/m LIMIT=300 OUT=$OUT bash kernels/calls/k3-2026-12-04n.sh
export PACK=${PACK:-.gpu/m}
export KERNELS=${KERNELS:-wide2rqp,wide2rq,wide2rqp,wide2rq}
export SKIP_TESTS=${SKIP_TESTS:-1}
export BENCH_CAP=${BENCH_CAP:-120}
export NCU_KERNEL=${NCU_KERNEL:-wide2rqp} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*34648} NCU_TAG=${NCU_TAG:-rqp}
exec bash "$(dirname "$0")/moe-ab-call.sh"
