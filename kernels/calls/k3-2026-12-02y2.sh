#!/usr/bin/env bash
# 2026-12-02y call 2 (lead; one nvidia-h200): mla_fp8r_kernel (K3_MLA_FP8_KERNEL=reg, opt-in) now runs
# its QK^T through fp8r_qk_tile(), the device function of the pipelined and split kernels (the
# repetition the stop hook listed). test-mla-gpu as the default, with the register kernel in its
# default conversion (ic: K by integers) and in cc (K by cvt pairs), and racecheck of its FP8 cases.
# From the repository root:  PACK=.gpu/ry2 bash .gpu/ry2/k3-2026-12-02y2.sh   ($OUT gets tests.txt)
set -u
PACK=${PACK:-.gpu/ry2}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
[ -x "$PACK/test-mla-gpu" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$PACK/test-mla-gpu
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
  for v in "X=1" "K3_MLA_FP8_KERNEL=reg" "K3_MLA_FP8_KERNEL=reg K3_MLA_FP8_CVT=cc" "K3_MLA_FP8_KERNEL=reg K3_MLA_FP8_CVT=ii"; do
    echo "== test-mla-gpu $v"
    env $v timeout 40 "$T" 2>&1 | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED)|error|Error" | tail -20
    echo "== exit ${PIPESTATUS[0]}"
  done
  echo "== racecheck reg *fp8*"
  K3_MLA_FP8_KERNEL=reg MLA_TEST_FILTER='*fp8_tile_edges*' timeout 40 compute-sanitizer --tool racecheck \
    --error-exitcode 9 "$T" 2>&1 | grep -E "SUMMARY|PASSED|FAILED" | tail -4
  echo "== memcheck reg *fp8*"
  K3_MLA_FP8_KERNEL=reg MLA_TEST_FILTER='*fp8_tile_edges*' timeout 40 compute-sanitizer --tool memcheck \
    --error-exitcode 9 "$T" 2>&1 | grep -E "SUMMARY|PASSED|FAILED" | tail -4
} > "$OUT/tests.txt" 2>&1
cat "$OUT/tests.txt"
