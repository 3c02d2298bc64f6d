#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-06, session 05:21 UTC). Round 06c showed the FP8 wgmma kernel 17-23 %
# faster than the MXFP4 gemv at B = 256 (4.6 rows a group; k3-bench back to back and single
# launches) while the BF16-activation default takes the gemv up to 16 rows a group. This call asks
# whether BF16 activations on the tiled wgmma path (K3_GEMM_GROUPED_GEMV=0) win there, in the
# bench and inside the slice's decode steps. PHASE:
#   decode  k3-bench --only moe_decode: w13, w2 at B = 1, 16, 64, 256; BF16 gemv / E4M3 wgmma /
#           E4M3 gemv / BF16 wgmma, back to back, both orders                  (pack: k3-bench)
#   slice   the BF16 slice's decode at B = 64 and 256, C = 8K (prefill 128 tokens only), the default
#           (c, c2) alternating with K3_GEMM_GROUPED_GEMV=0 (t, t2); each run in one RUN.tar.xz
#           (pack: k3-slice, k3sim, libk3capture.so)
# From the repository root:  PACK=.gpu/<tag> PHASE="decode slice" OUT=$OUT bash kernels/calls/k3-2026-12-06f.sh
set -u
PACK=${PACK:?PACK: the staged folder}
PHASE=${PHASE:?PHASE: decode and / or slice}
. "$(dirname "$0")/device-env.sh" || exit 2
call_begin || exit 2
for ph in $PHASE; do
case "$ph" in
decode)
  capped 150 "k3-bench moe_decode" "$B/kernels/k3-bench" --only moe_decode -o "$OUT/decode.csv" > "$OUT/decode.txt"
  grep -E "^==|^grouped_gemm" "$OUT/decode.txt" | head -80
  ;;
slice)
  export SLICE_GRID="--prefill 128 --decode 64:8192,256:8192"
  slice_runs c:bf16
  K3_GEMM_GROUPED_GEMV=0 slice_runs t:bf16
  slice_runs c2:bf16
  K3_GEMM_GROUPED_GEMV=0 slice_runs t2:bf16
  slice_pack c t c2 t2
  ;;
*) echo "PHASE=$ph: decode or slice"; exit 2 ;;
esac
done
call_end
