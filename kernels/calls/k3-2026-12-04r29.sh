#!/usr/bin/env bash
# Issue 17, round 29 (lead, 2026-12-04, one nvidia-h200): the final build of 2026-12-04 (2f402b8:
# wide2rqp the grouped MXFP4 default) on the GPU: (1) test-moe-gpu *wide_small* and *layer* with
# no kernel named (the default: wide2rqp bit for bit against wide2rp, the layer against float64);
# (2) the K3 slice under capture with --sustain-ms 2000, runs a and b (kernels/calls/
# sustain-2026-12-04.sh's part a and b), for the held-out validation against round 27's benches.
# From the repository root, the pack in .gpu/r29 (k3-build: cli/k3sim, kernels/k3-slice,
# tests/kernels/test-moe-gpu, trace/capture/libk3capture.so; 38 MB):
#   OUT=$OUT bash kernels/calls/k3-2026-12-04r29.sh   -> $OUT/tests.txt, then the slice's call.tar
set -u
OUT=${OUT:?OUT=<folder>}
export PACK=${PACK:-.gpu/r29}
B=$PACK/k3-build
mkdir -p "$OUT"
t0=$(date +%s)
. kernels/calls/device-env.sh
device_env "$OUT/env-tests.txt" "$OUT/smi-tests.csv" || exit 2
unset K3_GEMM_WG_KERNEL
{
  for f in '*wide_small*' '*layer*'; do
    echo "== moe-gpu $f (limit 90 s, at $(( $(date +%s) - t0 )) s)"
    MOE_TEST_FILTER=$f timeout 90 "$B/tests/kernels/test-moe-gpu" 2>&1 |
      grep -E "bit for bit|rel err|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | sort | uniq -c | sort -rn | head -14
    echo "== exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  done
} > "$OUT/tests.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
cat "$OUT/tests.txt"
PARTS="a b" bash kernels/calls/sustain-2026-12-04.sh
