#!/usr/bin/env bash
# Issue 17, 2026-12-03u call 3 (lead), one nvidia-h200: call 2's A/B again on another lease, the
# bench only (kernels/calls/moe-ab-call.sh with BENCH_ONLY=1): k3-bench --only moe_prefill, MXFP4
# rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rqt alternating 8 times in one process, each
# row beside cuBLASLt BF16. The same pack as call 2 (.gpu/u2, main 930c5c2).
# From the repository root:  PACK=.gpu/u2 LIMIT=200 bash kernels/calls/k3-2026-12-03u3.sh
export PACK=${PACK:-.gpu/u2}
export BENCH_ONLY=1
export KERNELS=${KERNELS:-wide2rq,wide2rqt,wide2rq,wide2rqt,wide2rq,wide2rqt,wide2rq,wide2rqt,wide2rq,wide2rqt,wide2rq,wide2rqt,wide2rq,wide2rqt,wide2rq,wide2rqt}
export BENCH_CAP=${BENCH_CAP:-150}
export NCU_KERNEL=${NCU_KERNEL:-none} NCU_REGEX=${NCU_REGEX:-none} NCU_TAG=${NCU_TAG:-none}
exec bash "$(dirname "$0")/moe-ab-call.sh"
