#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-06, session 05:21 UTC). The E4M3 gemv for the LatentMoE layer's decode
# (K3_A_E4M3_ROW: f8act_kernel, then gemv_f16_kernel; k3_gemm.h; the default at <= 1.5 rows a
# group in calls 3-5, opt-in since: K3_GEMM_E4M3_GEMV=1) and the one-pass E4M3 quantizer as the
# default (QUANT_REG_DEFAULT = true, round 06c), on whatever card comes. PHASE lists the steps:
#   tests     test-moe-gpu *gemv_e4m3*, *layer_e4m3* (T = 4 by wgmma and the gemv; 300, 2100 wgmma),
#             *wgf8_operands* (the quantizer's default now the one-pass kernel)   (pack: test-moe-gpu)
#   memcheck  *gemv_e4m3* under compute-sanitizer memcheck, then racecheck        (pack: test-moe-gpu)
#   decode    k3-bench --only moe_decode: MXFP4 experts at B = 1, 16, 64, 256, w13 and w2, BF16
#             activations / the E4M3 form by default / the other E4M3 kernel (calls 3-4: f8wg_*,
#             the wgmma kernel; later builds: f8gemv_*, the gemv), back to back, both orders
#                                                                                   (pack: k3-bench)
#   slice     the K3 slice under capture with the defaults (no K3_QUANT_E4M3): --expert-act e4m3
#             (runs a, b) and bf16 (run c), prefill T = 4K, 16K, decode B = 1, 16, 64 at C = 8K,
#             --reps 3 (round 05r / 06c's grid); each run's files in one RUN.tar.xz
#             (pack: kernels/k3-slice, cli/k3sim, trace/capture/libk3capture.so)
# From the repository root:  PACK=.gpu/<tag> PHASE="tests decode" OUT=$OUT bash kernels/calls/k3-2026-12-06d.sh
set -u
PACK=${PACK:?PACK: the staged folder}
PHASE=${PHASE:?PHASE: tests, memcheck, decode and / or slice}
. "$(dirname "$0")/device-env.sh" || exit 2
call_begin || exit 2
for ph in $PHASE; do
case "$ph" in
tests)
  T=$B/tests/kernels/test-moe-gpu
  for f in '*gemv_e4m3*' '*layer_e4m3*' '*wgf8_operands*'; do
    MOE_TEST_FILTER=$f capped 120 "tests $f" "$T"
  done > "$OUT/tests.txt"
  grep -E "^==|gemv-e4m3|tiled-wgmma-e4m3|layer T=|e4m3 rows|bit for bit|PASSED|FAILED|ERROR|rel err" "$OUT/tests.txt" | head -60
  ;;
memcheck)
  T=$B/tests/kernels/test-moe-gpu
  for tool in memcheck racecheck; do
    MOE_TEST_FILTER='*gemv_e4m3*' capped 150 "$tool gemv_e4m3" \
      compute-sanitizer --tool $tool --error-exitcode 9 "$T"
  done > "$OUT/sanitizers.txt"
  grep -E "^==|ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitizers.txt"
  ;;
decode)
  capped 150 "k3-bench moe_decode" "$B/kernels/k3-bench" --only moe_decode -o "$OUT/decode.csv" > "$OUT/decode.txt"
  grep -E "^==|^grouped_gemm|weight bytes" "$OUT/decode.txt" | head -80
  ;;
slice)
  slice_runs a:e4m3 c:bf16 b:e4m3
  slice_pack a b c
  ;;
*) echo "PHASE=$ph: tests, memcheck, decode or slice"; exit 2 ;;
esac
done
call_end
