#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-06, session 05:21 UTC). Round 06c found the FP8 wgmma kernel faster than
# the MXFP4 gemv inside the K3 slice's decode steps; this call asks the same of BF16 activations:
# the slice with --expert-act bf16 as it runs by default (the grouped gemv at <= 16 rows a group)
# and with K3_GEMM_GROUPED_GEMV=0 (the tiled wgmma path at every size), alternating c, t, c2, t2;
# then the e4m3 default (run a) for the same call's reference. PHASE:
#   tests  test-moe-gpu *grouped_gemv* (the knob's path rule and a case through it)  (pack: test-moe-gpu)
#   slice  as above, each run's files in one RUN.tar.xz (pack: k3-slice, k3sim, libk3capture.so)
# From the repository root:  PACK=.gpu/<tag> PHASE=slice OUT=$OUT bash kernels/calls/k3-2026-12-06e.sh
set -u
PACK=${PACK:?PACK: the staged folder}
PHASE=${PHASE:?PHASE: tests and / or slice}
. "$(dirname "$0")/device-env.sh" || exit 2
call_begin || exit 2
for ph in $PHASE; do
case "$ph" in
tests)
  MOE_TEST_FILTER='*grouped_gemv*' capped 90 "tests grouped_gemv" "$B/tests/kernels/test-moe-gpu" > "$OUT/tests.txt"
  grep -E "^==|PASSED|FAILED|ERROR|tiled|gemv-f16" "$OUT/tests.txt" | head -30
  ;;
slice)
  slice_runs c:bf16
  K3_GEMM_GROUPED_GEMV=0 slice_runs t:bf16
  slice_runs c2:bf16
  K3_GEMM_GROUPED_GEMV=0 slice_runs t2:bf16
  slice_runs a:e4m3
  slice_pack c t c2 t2 a
  ;;
*) echo "PHASE=$ph: tests or slice"; exit 2 ;;
esac
done
call_end
