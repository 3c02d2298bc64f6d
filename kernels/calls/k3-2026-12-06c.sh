#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-06, session 02:46 UTC). The E4M3 quantizer of the latent rows in one pass
# over registers (k3_gemm_wgf8.cu quant_e4m3_rows_reg_kernel: a warp a row at >= 2048 rows, a CTA a
# row below; x / scale by one correction step of the reciprocal, k3_e4m3_div()), and the KDA
# prefill default at the public FlashKDA shapes on whatever card comes:
#   1. test-moe-gpu *wgf8_operands* (the quantizer bit for bit against k3_e4m3_row_quantize() at 6
#      shapes, both kernels) and its memcheck
#   2. k3-bench --only quant: the default kernel and the two-pass one back to back, T = 1 .. 16K
#   3. kda-bench: T = 16K and 4K, H = 96, one sequence, FP32 / BF16 state, 5 rounds, the default
#      (AIConfigurator's public FlashKDA rows: H100 1955 / 512 us, H200 1747 / 460 us)
# Pack: .gpu/q. From the repository root:  PACK=.gpu/q OUT=$OUT bash kernels/calls/k3-2026-12-06c.sh
set -u
PACK=${PACK:-.gpu/q}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-300}
mkdir -p "$OUT/q"
t0=$(date +%s)
[ -f kernels/calls/device-env.sh ] && . kernels/calls/device-env.sh || . "$PACK/device-env.sh"
device_env "$OUT/q/env.txt" "$OUT/q/smi.csv" || exit 2
M=$B/tests/kernels/test-moe-gpu
{
  MOE_TEST_FILTER='*wgf8_operands*' capped 60 "tests wgf8_operands" "$M"
  MOE_TEST_FILTER='*wgf8_operands*' capped 120 "memcheck wgf8_operands" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$M" > "$OUT/q/memcheck.txt"
  tail -n 3 "$OUT/q/memcheck.txt"
  capped 90 "k3-bench quant" "$B/kernels/k3-bench" --only quant -o "$OUT/q/quant.csv"
  capped 90 "kda 16K,4K H=96" "$B/kernels/kda-bench" --only prefill --prefill-t 16384,4096 --prefill-h 96 \
    --prefill-state fp32,bf16 --prefill-ab "def:" --prefill-rounds 5 -o "$OUT/q/kda.csv" | grep -E "^==|^prefill.*N=1 "
} > "$OUT/q/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
cat "$OUT/q/log.txt" | grep -v "^\[ *\(RUN\|OK\) *\]" | tail -n 80
echo "call: $(( $(date +%s) - t0 )) s"
