#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-06, session 05:21 UTC). The grouped BF16-activation rule of 2026-12-06
# (k3_gemm.cu grouped_gemv_mode(): with the tile layout given, the tiled wgmma path above a quarter
# of a row a group; calls 8-9 measured it 15-18 % faster at B = 256). PHASE:
#   tests  test-moe-gpu *grouped_gemv* (the rule), *layer_decode*, *layer_prefill* (T = 300 with the
#          layout: now the tiled path at decode-like rows too)                  (pack: test-moe-gpu)
#   slice  the BF16 slice, prefill 4K, 16K, decode B = 1, 16, 64, 256 at C = 8K: the new default (n, n2)
#          alternating with the rule before (K3_GEMM_GROUPED_GEMV=1: o, o2); each run in one RUN.tar.xz
#          (pack: k3-slice, k3sim, libk3capture.so)
#   moebench  k3-bench --only moe under capture (k3-moe.db.xz, k3-moe.csv / .txt): the grouped rows at
#          decode sizes on the new path, for validate-slice.py --extra-bench (pack: k3-bench, k3sim,
#          libk3capture.so)
# From the repository root:  PACK=.gpu/<tag> PHASE="tests slice" OUT=$OUT bash kernels/calls/k3-2026-12-06g.sh
set -u
PACK=${PACK:?PACK: the staged folder}
PHASE=${PHASE:?PHASE: tests, slice and / or moebench}
. "$(dirname "$0")/device-env.sh" || exit 2
call_begin || exit 2
for ph in $PHASE; do
case "$ph" in
tests)
  for f in '*grouped_gemv*' '*layer_decode*' '*layer_prefill*'; do
    MOE_TEST_FILTER=$f capped 90 "tests $f" "$B/tests/kernels/test-moe-gpu"
  done > "$OUT/tests.txt"
  grep -E "^==|PASSED|FAILED|ERROR|layer output|tiled-wgmma mxfp4 glu rows=12" "$OUT/tests.txt" | head -30
  ;;
slice)
  export SLICE_GRID="--prefill 4096,16384 --decode 1:8192,16:8192,64:8192,256:8192"
  slice_runs n:bf16
  K3_GEMM_GROUPED_GEMV=1 slice_runs o:bf16
  slice_runs n2:bf16
  K3_GEMM_GROUPED_GEMV=1 slice_runs o2:bf16
  slice_pack n o n2 o2
  ;;
moebench) # k3-bench --only moe under capture (its MXFP4 decode rows given the tile layout, as the
  # layer gives it: the fit's grouped rows at decode sizes on the path the slice now runs), for
  # validate-slice.py --extra-bench                        (pack: k3-bench, k3sim, libk3capture.so)
  capped 300 "k3-bench moe under capture" "$B/cli/k3sim" trace capture -o "$OUT/k3-moe.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma --only moe -o "$OUT/k3-moe.csv" > "$OUT/k3-moe.txt" 2>&1
  tail -n 3 "$OUT/k3-moe.txt"
  xz -T0 -f "$OUT/k3-moe.db"
  ;;
*) echo "PHASE=$ph: tests, slice or moebench"; exit 2 ;;
esac
done
call_end
