#!/usr/bin/env bash
# Issue 17, helper i25b: staged, NOT run (the helper's two calls were spent). The final build of
# branch i25b (the combine kernel as a programmatic dependent launch by default, built after call
# 2): test-mla-gpu (fp8_frame_forms' first case now also replays a CUDA graph through the PDL
# combine kernel), test-dsa-gpu, memcheck / racecheck of fp8_frame_forms, and k3-bench FP8 H 16
# B 1..128 at 8K-64K, default (PDL) against K3_MLA_FP8S_PDL=off, twice in one process. ~60 s.
# From the repository root:  PACK=.gpu/i25b LIMIT=100 bash .gpu/i25b/k3-2026-12-02p-3.sh
set -u
PACK=${PACK:-.gpu/i25b}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-100}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_MLA_FP8S_FRAME K3_MLA_FP8_KERNEL K3_MLA_FP8S_COMBINE K3_MLA_FP8S_SKEW K3_MLA_FP8S_PDL
run() {
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "== $name: no time left"; return; }
  local s; s=$(date +%s)
  echo "== $name"
  timeout "$lim" env "$@" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
}
{
  run "mla-gpu (default)" 18 X=1 "$T/test-mla-gpu"
  run "dsa-gpu (default)" 10 X=1 "$T/test-dsa-gpu"
  for tool in memcheck racecheck; do
    run "$tool fp8_frame_forms" 20 MLA_TEST_FILTER='*fp8_frame_forms*' compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-mla-gpu"
  done
} > "$OUT/tests.txt" 2>&1
run "k3-bench: default (PDL), ab PDL off, ab2 PDL, ab3 PDL off" 20 \
  K3_BENCH_MLA_AB="K3_MLA_FP8S_PDL=off;K3_MLA_FP8S_PDL=loop;K3_MLA_FP8S_PDL=off" K3_BENCH_MLA_BATCHES=2 \
  "$K/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench.csv" > "$OUT/bench.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
tar cJf "$OUT/misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/tests.txt"
awk -F, 'NR > 1 && $1 ~ /mla_decode$/ { s = $3; sub(/ t=1/, "", s); sub(/heads=/, "H", s); printf "%s %s %.1f %s\n", $2, s, $4, $14 }' "$OUT/bench.csv"
echo "call: $(( $(date +%s) - t0 )) s"
