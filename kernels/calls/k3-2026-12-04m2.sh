#!/usr/bin/env bash
# Issue 17, 2026-12-04m call 2 (lead, one nvidia-h200, another lease): wide2rqp as the grouped
# MXFP4 default? Call 1 had it faster than wide2rq on w13 at T = 4K in 3 of 3 pairs (6.69 against
# 6.94 ms medians). Here, with call 1's pack (.gpu/m):
#  1. test-moe-gpu *layer* with K3_GEMM_WG_KERNEL=wide2rqp (the LatentMoE layer's prefill against
#     float64 with its gathered w13 through XV_PP, as the default would run it);
#  2. k3-bench --only moe_prefill, MXFP4 rows (T = 16K and 4K, w13 and w2), wide2rq / wide2rqp
#     alternating 6 times each in one process, each row beside cuBLASLt BF16 (BENCH_ONLY).
# From the repository root:  PACK=.gpu/m OUT=$OUT bash kernels/calls/k3-2026-12-04m2.sh
set -u
PACK=${PACK:-.gpu/m}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
. kernels/calls/device-env.sh
device_env "$OUT/env-layer.txt" "$OUT/smi-layer.csv" || exit 2
{
  echo "== moe-gpu *layer* with wide2rqp (limit 100 s)"
  K3_GEMM_WG_KERNEL=wide2rqp MOE_TEST_FILTER='*layer*' timeout 100 "$B/tests/kernels/test-moe-gpu" 2>&1
  echo "== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/layer.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^==|OK \]|FAILED|PASSED|rel err" "$OUT/layer.txt" | head -20
export BENCH_ONLY=1 BENCH_CAP=${BENCH_CAP:-200} LIMIT=${LIMIT:-260}
export KERNELS=${KERNELS:-wide2rq,wide2rqp,wide2rq,wide2rqp,wide2rq,wide2rqp,wide2rq,wide2rqp,wide2rq,wide2rqp,wide2rq,wide2rqp}
export NCU_KERNEL=${NCU_KERNEL:-none} NCU_REGEX=${NCU_REGEX:-none} NCU_TAG=${NCU_TAG:-none}
bash kernels/calls/moe-ab-call.sh
