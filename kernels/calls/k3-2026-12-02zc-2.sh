#!/usr/bin/env bash
# Issue 17, helper i27c, device call 2 (one nvidia-h200, <= 140 s with the start): MLA decode with
# the FP8 cache at 8K as single launches after a cold L2. Call 1 measured K3_MLA_FP8S_ORDER=pipe (the
# softmax slice of tile it + 1 beside PV of tile it): 1-7 % slower, replaced. This build:
# K3_MLA_FP8S_ORDER=ahead (PIPE: after the hand-off of tile it, the slice and P out of tile it + 1
# and the parts of tile it + 2, then PV of tile it; opt-in, default off).
#  1. test-mla-gpu (19 tests, float64; fp8_split_options runs ahead too), then its FP8 and sparse
#     cases with K3_MLA_FP8S_ORDER=ahead for every launch;
#  2. k3-bench FP8 H 16 / 12, B 64 / 128, 8K: default, ab ahead, ab2 overlap_prev, ab3 ahead +
#     overlap_prev, ab4 default again (ORDER=tile), in one process (single launches after a cold
#     L2, graph steady, back to back beside a copy of the same bytes);
#  3. memcheck + racecheck of fp8_tile_edges with ahead; the same bench again; then H 16, B 64 /
#     128 at 8K-64K, default and ahead (single launches); the default grid with ahead beside (BF16,
#     t 2 and 4 too) in the time left.
# From the repository root:  PACK=.gpu/i27c bash .gpu/i27c/k3-2026-12-02zc-2.sh
set -u
PACK=${PACK:-.gpu/i27c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-82}
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
AB="K3_MLA_FP8S_ORDER=ahead;K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_ORDER=ahead K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_ORDER=tile"
{
  run "mla-gpu (default)" 20 X=1 "$B/test-mla-gpu"
  run "mla-gpu fp8 + sparse, ORDER=ahead" 14 K3_MLA_FP8S_ORDER=ahead MLA_TEST_FILTER='*fp8*' "$B/test-mla-gpu"
  run "k3-bench 1: default, ab ahead, ab2 overlap, ab3 ahead + overlap, ab4 tile" 20 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-1.csv" > "$OUT/bench.txt"
  run "memcheck fp8_tile_edges, ahead" 8 K3_MLA_FP8S_ORDER=ahead MLA_TEST_FILTER='*fp8_tile_edges*' \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test-mla-gpu" > "$OUT/san.txt"
  run "racecheck fp8_tile_edges, ahead" 10 K3_MLA_FP8S_ORDER=ahead MLA_TEST_FILTER='*fp8_tile_edges*' \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$B/test-mla-gpu" >> "$OUT/san.txt"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race" "$OUT/san.txt" | head -8
  run "k3-bench 2: the same again" 20 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-2.csv" >> "$OUT/bench.txt"
  run "k3-bench 3: H 16, B 64 / 128, 8K-64K" 16 K3_BENCH_MLA_AB="K3_MLA_FP8S_ORDER=ahead" \
    K3_BENCH_MLA_BATCHES=3 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-3.csv" >> "$OUT/bench.txt"
  l=$(( $(left) - 3 ))
  run "k3-bench 4: the default grid (BF16 and FP8, t 1, 2, 4), ab ahead" $l K3_BENCH_MLA_AB="K3_MLA_FP8S_ORDER=ahead" \
    "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-grid.csv" > "$OUT/bench-grid.txt"
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -T0 -3 -f "$OUT/smi.csv" 2>/dev/null
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK SUMMARY|OK \]" "$OUT/log.txt" | cut -c1-150 | head -n 60
grep -E "mla_decode|back to back" "$OUT/bench.txt" | cut -c1-230 | head -n 80
