#!/usr/bin/env bash
# Issue 17, 2026-12-04n call 8, one nvidia-h200: ncu of the final build's default (wide2rqp, the
# conversion's rotations by 2 and 6 as shifts) at T = 4K, w13, as call 1 profiled the build before
# (the same sections and kernel: wg_kernel<..., 128, ..., 34648>), to see the pipes move.
# (kernels/calls/moe-ab-call.sh, SKIP_TESTS=1; one bench pass first.)
# From the repository root:  PACK=.gpu/fin LIMIT=200 OUT=$OUT bash kernels/calls/k3-2026-12-04n8.sh
export PACK=${PACK:-.gpu/fin}
export KERNELS=${KERNELS:-wide2rqp}
export SKIP_TESTS=${SKIP_TESTS:-1}
export BENCH_CAP=${BENCH_CAP:-60}
export NCU_KERNEL=${NCU_KERNEL:-wide2rqp} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*34648} NCU_TAG=${NCU_TAG:-rqp-final}
exec bash "$(dirname "$0")/moe-ab-call.sh"
