#!/usr/bin/env bash
# Device call 2 of round 13 (2026-12-01y, one nvidia-h200, ~120 s): two questions of call 1.
# (1) The K3 slice's m = 1 GEMMs over > 64 MB of weights ran 9-14 % slower than k3-bench's, even
#     with a cold L2: is it the weights' pages (TLB) — the bench reuses one 528 MB weight, the slice
#     touches 68 GB between two uses? `k3-bench --only gemm` twice: weights rotated over 512 MiB
#     (the default), then over 16 GiB (K3_BENCH_WPOOL_MB=16384).
# (2) test-kda-gpu's test_decode_many_items failed once in call 1 (its message cut off): the decode
#     tests three times with their whole output, then memcheck and racecheck of that test.
# From the repository root:  PACK=.gpu/r13b bash .gpu/r13b/k3-2026-12-01y2.sh
set -u
PACK=${PACK:-.gpu/r13b}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || . kernels/calls/device-env.sh
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
"$B/kernels/k3-bench" --only gemm -o "$M/gemm-pool512.csv" > "$M/gemm-pool512.txt" 2>&1
echo "pool 512 MiB: exit $? at $(( $(date +%s) - t0 )) s"
K3_BENCH_WPOOL_MB=16384 "$B/kernels/k3-bench" --only gemm -o "$M/gemm-pool16g.csv" > "$M/gemm-pool16g.txt" 2>&1
echo "pool 16 GiB: exit $? at $(( $(date +%s) - t0 )) s"
{
  for i in 1 2 3; do
    echo "== run $i"
    KDA_TEST_FILTER='*decode*' timeout 60 "$B/tests/kernels/test-kda-gpu" 2>&1
    echo "== run $i: exit $?"
  done
  for tool in memcheck racecheck; do
    echo "== $tool"
    KDA_TEST_FILTER='*many_items*' timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/kernels/test-kda-gpu" 2>&1 | tail -n 30
    echo "== $tool: exit ${PIPESTATUS[0]}"
  done
} > "$M/kda-decode-tests.txt" 2>&1
kill "$SMI_PID"
grep -E "^== |FAILED|PASSED|SUMMARY|rel err .*FAIL|exceeds" "$M/kda-decode-tests.txt" | head -40
grep -E "m=(1|16) n=(36864|55296|12288|7168|4480) " "$M/gemm-pool512.txt" "$M/gemm-pool16g.txt" | cut -c1-170
echo "call: $(( $(date +%s) - t0 )) s"
