#!/usr/bin/env bash
# Issue 17, 2026-12-04p call 1, one nvidia-h200: what FP8 MMAs would give the MXFP4 expert GEMMs
# at T = 4K, measured before the kernel is built. Rows (kernels/moe/k3_gemm_wg.cu, launch_diag(),
# 128-token tiles, outputs wrong): "diag-rqp-fp8" (wide2rqp's k loop with each group's work that of
# an FP8 kernel on the FP8 word form: the table decode of k3_gemm_wg_rp.cuh, one E4M3 MMA of k 32
# an m64 block a group), "diag-rqp-fp8-nomma" (its decode without MMAs), "diag-rqp-nomma" (04n's:
# wide2rqp's BF16 expansion without MMAs), beside the default wide2rqp and cuBLASLt BF16, in ONE
# process, alternating twice (kernels/calls/moe-ab-call.sh); before that the checks of this
# session's other changes: test-k3-formats (the FP8 word decoder on the host), test-kda-gpu
# *default_path* (K3_KDA_* knobs with unknown values -> -EINVAL), test-moe-gpu *wgmma_tiles*
# (K3_GEMM_WG_KERNEL unknown -> -EINVAL) and *wide_small* (the default's bits, the watchdog now
# shared); then ncu of one diag-rqp-fp8 GLU launch (w13) at T = 4K.
# From the repository root:  PACK=.gpu/p LIMIT=420 OUT=$OUT bash kernels/calls/k3-2026-12-04p.sh
set -u
export PACK=${PACK:-.gpu/p}
export OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
B=$PACK/k3-build
. "$(dirname "$0")/device-env.sh" && pack_env || exit 2
t0=$(date +%s)
{
  echo "== test-k3-formats"
  timeout 60 "$B/tests/kernels/test-k3-formats"; echo "== exit $?"
  echo "== test-kda-gpu *default_path*"
  KDA_TEST_FILTER='*default_path*' timeout 90 "$B/tests/kernels/test-kda-gpu" 2>&1 | tail -12; echo "== exit ${PIPESTATUS[0]}"
} > "$OUT/pre-tests.txt" 2>&1
cat "$OUT/pre-tests.txt"
export LIMIT=$(( ${LIMIT:-420} - ($(date +%s) - t0) ))
export KERNELS=${KERNELS:-wide2rqp,diag-rqp-fp8,diag-rqp-fp8-nomma,diag-rqp-nomma,wide2rqp,diag-rqp-fp8,diag-rqp-fp8-nomma,diag-rqp-nomma}
export TESTS=${TESTS:-'*wgmma_tiles* *wide_small*'}
export BENCH_CAP=${BENCH_CAP:-170}
export NCU_KERNEL=${NCU_KERNEL:-diag-rqp-fp8} NCU_REGEX=${NCU_REGEX:-wg_kernel.*128.*100184} NCU_TAG=${NCU_TAG:-fp8}
exec bash "$(dirname "$0")/moe-ab-call.sh"
