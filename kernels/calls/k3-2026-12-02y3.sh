#!/usr/bin/env bash
# 2026-12-02y call 3 (lead; one nvidia-h200): gemv_f16_kernel and the opt-in gemv_f16p_kernel launched
# through one launch-configuration function (gemv_f16_pdl_config, the stop hook's repetition):
# test-moe-gpu's FP16-pair gemv cases (every mode, the persistent kernel on 264, 3, 7 CTAs) and the
# layer's decode, with programmatic dependent launch and without (K3_GEMV_F16_PDL=0), and memcheck.
# From the repository root:  PACK=.gpu/ry3 bash .gpu/ry3/k3-2026-12-02y3.sh   ($OUT gets tests.txt)
set -u
PACK=${PACK:-.gpu/ry3}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
[ -x "$PACK/test-moe-gpu" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$PACK/test-moe-gpu
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
  for v in "X=1" "K3_GEMV_F16_PDL=0"; do
    for f in '*gemv_f16*' '*layer_decode*' '*grouped_gemv*'; do
      echo "== test-moe-gpu $v MOE_TEST_FILTER=$f"
      env $v MOE_TEST_FILTER="$f" timeout 60 "$T" 2>&1 | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED)|rror" | tail -8
      echo "== exit ${PIPESTATUS[0]}"
    done
  done
  echo "== memcheck *gemv_f16_scales*"
  MOE_TEST_FILTER='*gemv_f16_scales*' timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$T" 2>&1 |
    grep -E "SUMMARY|PASSED|FAILED" | tail -4
} > "$OUT/tests.txt" 2>&1
cat "$OUT/tests.txt"
