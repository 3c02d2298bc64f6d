#!/usr/bin/env bash
# Issue 17, 2026-12-04p call 2, one nvidia-h200: call 1's FP8 measurement rows again beside
# "diag-rqp-fp8b" / "-fp8b-nomma" (XV_F8B: the row floor folded into the table's constants and the
# 7-instruction decode with two of its ops on the FMA pipe, k3_wgf8_decode7()), the default wide2rqp
# and 04n's diag-rqp-nomma, in ONE process, alternating three times (kernels/calls/moe-ab-call.sh,
# SKIP_TESTS=1: the default kernel's code is call 1's); before that test-k3-formats (the table with
# the floor folded) and test-moe-gpu *wgf8* (the FP8-word layout, row floors and E4M3 row quantizer
# of k3_gemm_wgf8.cu, with memcheck) and *mxfp8_quantize*; then ncu of one diag-rqp-fp8b GLU launch (w13; the first one, at T = 16K: the
# same k loop as at 4K).
# From the repository root:  PACK=.gpu/p2 LIMIT=300 OUT=$OUT bash kernels/calls/k3-2026-12-04p2.sh
set -u
export PACK=${PACK:-.gpu/p2}
export OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
B=$PACK/k3-build
. "$(dirname "$0")/device-env.sh" && pack_env || exit 2
t0=$(date +%s)
{
  echo "== test-k3-formats"; timeout 60 "$B/tests/kernels/test-k3-formats"; echo "== exit $?"
  echo "== test-moe-gpu *wgf8* *mxfp8_quantize*"
  for f in '*wgf8*' '*mxfp8_quantize*'; do
    MOE_TEST_FILTER=$f timeout 60 "$B/tests/kernels/test-moe-gpu" 2>&1 | tail -12; echo "== exit ${PIPESTATUS[0]}"
  done
  echo "== memcheck *wgf8*"
  MOE_TEST_FILTER='*wgf8*' timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/kernels/test-moe-gpu" 2>&1 | tail -4
  echo "== exit ${PIPESTATUS[0]}"
} > "$OUT/pre-tests.txt" 2>&1
cat "$OUT/pre-tests.txt"
export LIMIT=$(( ${LIMIT:-300} - ($(date +%s) - t0) ))
R="wide2rqp,diag-rqp-fp8,diag-rqp-fp8b,diag-rqp-fp8b-nomma,diag-rqp-nomma"
export KERNELS=${KERNELS:-$R,$R,$R}
export SKIP_TESTS=${SKIP_TESTS:-1}
export BENCH_CAP=${BENCH_CAP:-170}
export NCU_KERNEL=${NCU_KERNEL:-diag-rqp-fp8b} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*231256} NCU_TAG=${NCU_TAG:-fp8b}
exec bash "$(dirname "$0")/moe-ab-call.sh"
