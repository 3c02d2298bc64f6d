#!/usr/bin/env bash
# Issue 17, helper i27c, device call 1 (one nvidia-h200, <= 140 s with the start): MLA decode with
# the FP8 cache at 8K as single launches after a cold L2. This build: K3_MLA_FP8S_ORDER=pipe
# (mla_fp8s_kernel's PIPE: the softmax slice of tile it + 1 beside PV of tile it, so that the
# slice's max and exp2 chains overlap the MMAs; opt-in, default off).
#  1. test-mla-gpu (19 tests, float64; fp8_split_options runs pipe too), then its FP8 and sparse
#     cases with K3_MLA_FP8S_ORDER=pipe for every launch;
#  2. k3-bench FP8 H 16 / 12, B 64 / 128, 8K: default, ab pipe, ab2 overlap_prev, ab3 pipe +
#     overlap_prev, ab4 default again (ORDER=tile), in one process (single launches after a cold
#     L2, graph steady, back to back beside a copy of the same bytes);
#  3. memcheck + racecheck of fp8_tile_edges with pipe; the same bench again if time is left.
# From the repository root:  PACK=.gpu/i27c bash .gpu/i27c/k3-2026-12-02zc.sh
set -u
PACK=${PACK:-.gpu/i27c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-78}
mkdir -p "$OUT"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
unset K3_MLA_FP8S_FRAME K3_MLA_FP8_KERNEL K3_MLA_FP8S_COMBINE K3_MLA_FP8S_SKEW K3_MLA_FP8S_PDL K3_MLA_FP8S_ORDER
run() {  # name seconds env... -- command...
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "== $name: no time left"; return; }
  local s; s=$(date +%s)
  echo "== $name (at $(( s - t0 )) s)"
  timeout "$lim" env "$@" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
}
AB="K3_MLA_FP8S_ORDER=pipe;K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_ORDER=pipe K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_ORDER=tile"
{
  run "mla-gpu (default)" 20 X=1 "$B/test-mla-gpu"
  run "mla-gpu fp8 + sparse, ORDER=pipe" 14 K3_MLA_FP8S_ORDER=pipe MLA_TEST_FILTER='*fp8*' "$B/test-mla-gpu"
  run "k3-bench 1: default, ab pipe, ab2 overlap, ab3 pipe + overlap, ab4 tile" 20 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-1.csv" > "$OUT/bench.txt"
  run "memcheck fp8_tile_edges, pipe" 8 K3_MLA_FP8S_ORDER=pipe MLA_TEST_FILTER='*fp8_tile_edges*' \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test-mla-gpu" > "$OUT/san.txt"
  run "racecheck fp8_tile_edges, pipe" 10 K3_MLA_FP8S_ORDER=pipe MLA_TEST_FILTER='*fp8_tile_edges*' \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$B/test-mla-gpu" >> "$OUT/san.txt"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race" "$OUT/san.txt" | head -8
  run "k3-bench 2: the same again" 20 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-2.csv" >> "$OUT/bench.txt"
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -T0 -3 -f "$OUT/smi.csv" 2>/dev/null
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK SUMMARY|OK \]" "$OUT/log.txt" | cut -c1-150 | head -n 60
grep -E "mla_decode|back to back" "$OUT/bench.txt" | cut -c1-230 | head -n 80
