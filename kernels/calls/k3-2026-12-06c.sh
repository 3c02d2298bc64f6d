#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-06, session 02:46 UTC). The E4M3 quantizer of the latent rows in one pass
# over registers (k3_gemm_wgf8.cu quant_e4m3_rows_reg_kernel: a warp a row at >= 2048 rows, a CTA a
# row below; x / scale by one correction step of the reciprocal, k3_e4m3_div()), and the KDA
# prefill default at the public FlashKDA shapes, on whatever card comes. PHASE lists the steps:
#   tests  test-moe-gpu *wgf8_operands* (the quantizer bit for bit against k3_e4m3_row_quantize() at
#          5 shapes: the default, reg and twopass)                        (pack: test-moe-gpu)
#   memcheck  the same test under compute-sanitizer memcheck              (pack: test-moe-gpu)
#   slice  the K3 slice under capture with the one-pass quantizer (K3_QUANT_E4M3=reg, opt-in until
#          it has run), --expert-act e4m3 (runs a, b) and bf16 (run c), prefill
#          T = 4K, 16K, decode B = 1, 16, 64 at C = 8K, --reps 3 (round 05r / 05v's grid) (pack:
#          kernels/k3-slice, cli/k3sim, trace/capture/libk3capture.so)
#   quant  k3-bench --only quant: the default kernel, reg and twopass back to back, T = 1 .. 16K
#          (pack: kernels/k3-bench)
#   kda    kda-bench: T = 16K and 4K, H = 96, one sequence, FP32 / BF16 state, 5 rounds, the
#          default and 8-warp recurrent CTAs (w8) alternating (AIConfigurator's public FlashKDA rows: H100 1955 / 512 us, H200 1747 / 460 us)
#          (pack: kernels/kda-bench)
# From the repository root:  PACK=.gpu/<tag> PHASE="tests slice" OUT=$OUT bash kernels/calls/k3-2026-12-06c.sh
set -u
PACK=${PACK:?PACK: the staged folder}
PHASE=${PHASE:?PHASE: tests, memcheck, slice, quant and / or kda}
. "$(dirname "$0")/device-env.sh" || exit 2
call_begin || exit 2
for ph in $PHASE; do
case "$ph" in
tests)
  T=$B/tests/kernels/test-moe-gpu
  MOE_TEST_FILTER='*wgf8_operands*' capped 60 "tests wgf8_operands" "$T" > "$OUT/tests.txt"
  grep -E "^==|e4m3 rows|PASSED|FAILED|ERROR" "$OUT/tests.txt"
  ;;
memcheck)
  T=$B/tests/kernels/test-moe-gpu
  MOE_TEST_FILTER='*wgf8_operands*' capped 120 "memcheck wgf8_operands" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" > "$OUT/memcheck.txt"
  tail -n 2 "$OUT/memcheck.txt"
  ;;
slice)
  K3_QUANT_E4M3=reg slice_runs a:e4m3 c:bf16 b:e4m3
  ;;
quant)
  capped 90 "k3-bench quant" "$B/kernels/k3-bench" --only quant -o "$OUT/quant.csv" > "$OUT/quant.txt"
  grep -E "^==|e4m3_quant" "$OUT/quant.txt"
  ;;
kda)
  capped 90 "kda 16K,4K H=96" "$B/kernels/kda-bench" --only prefill --prefill-t 16384,4096 --prefill-h 96 \
    --prefill-state fp32,bf16 --prefill-ab "def:;w8:K3_KDA_RECUR_WARPS=8" --prefill-rounds 5 -o "$OUT/kda.csv" > "$OUT/kda.txt"
  grep -E "^==|^prefill.*N=1 " "$OUT/kda.txt"
  ;;
*) echo "PHASE=$ph: tests, memcheck, slice, quant or kda"; exit 2 ;;
esac
done
call_end
