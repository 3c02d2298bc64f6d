#!/usr/bin/env bash
# Issue 17, helper i25b, device call 2 (one nvidia-h200, <= 130 s of work), after call 1
# (k3-2026-12-02p.sh: the steady frame merge, K3_MLA_FP8S_FRAME=steady, ran no faster; the PDL
# combine launch +0.3-0.6 points at B 64 8K; the trace: in all 124 SMs holding two CTAs the CTA
# placed first (linear index < 132) ran its loop 6-7 % faster, and the SM waited for the other).
# This build: K3_MLA_FP8S_SKEW=N, where no cluster merges the splits: grid (row blocks, requests,
# splits), split-major, so a request's splits sit in both places of the SMs, and the splits placed
# first take (1000 + N) / 1000 times the tiles.
#  1. test-mla-gpu default (fp8_split_options runs SKEW=300), its FP8 cases with SKEW 65 through
#     the combine kernel, the last-split merge, PDL; test-dsa-gpu;
#  2. compute-sanitizer memcheck / racecheck with SKEW through the combine kernel;
#  3. k3-bench --only mla_decode FP8 B 1..128 (H 16), 64..128 (H 12) at 8K/32K/64K, each row as
#     default, ab SKEW=65, ab2 +PDL loop, ab3 +COMBINE=kernel (B 128: no cluster) +PDL loop,
#     ab4 SKEW=0 (the default again), ab5 SKEW=65 again, ab6 SKEW=100, ab7 SKEW=65 + the last-split merge; in one process, twice;
#  4. the trace of H 16 B 64 / 128, default and SKEW=65 (+ the combine kernel).
# From the repository root:  PACK=.gpu/i25b LIMIT=128 bash .gpu/i25b/k3-2026-12-02p-2.sh
# $OUT: tests.txt bench.txt bench-1.csv bench-2.csv trace-raw.csv.xz misc.tar.xz
set -u
PACK=${PACK:-.gpu/i25b}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-128}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_MLA_FP8S_FRAME K3_MLA_FP8_KERNEL K3_MLA_FP8S_COMBINE K3_MLA_FP8S_SKEW K3_MLA_FP8S_PDL
run() {  # name seconds env... -- command...
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "== $name: no time left"; return; }
  local s; s=$(date +%s)
  echo "== $name"
  timeout "$lim" env "$@" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
}
F8='*fp8*'
{
  run "mla-gpu (default)" 16 X=1 "$T/test-mla-gpu"
  run "mla-gpu fp8, SKEW=65, combine kernel" 10 K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_COMBINE=kernel MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, SKEW=65, last-split merge" 10 K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_COMBINE=last MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, SKEW=65, PDL loop, frame steady" 10 K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_PDL=loop K3_MLA_FP8S_FRAME=steady MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "dsa-gpu (default)" 10 X=1 "$T/test-dsa-gpu"
  run "dsa-gpu, SKEW=65" 10 K3_MLA_FP8S_SKEW=65 "$T/test-dsa-gpu"
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
AB="K3_MLA_FP8S_SKEW=65;K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_PDL=loop;K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_COMBINE=kernel K3_MLA_FP8S_PDL=loop;K3_MLA_FP8S_SKEW=0;K3_MLA_FP8S_SKEW=65;K3_MLA_FP8S_SKEW=100;K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_COMBINE=last"
run "k3-bench 1: default, ab SKEW 65, ab2 +PDL, ab3 +kernel +PDL, ab4 SKEW 0, ab5 SKEW 65, ab6 SKEW 100, ab7 SKEW 65 + last merge" 20 \
  K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=2 "$K/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-1.csv" > "$OUT/bench.txt" 2>&1
echo "bench 1 done at $(( $(date +%s) - t0 )) s"
san() {  # tool test filter seconds [env]
  local l; l=$(left); local lim=$4; [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 $2 '$3': no time left"; return; }
  local s; s=$(date +%s)
  env MLA_TEST_FILTER="$3" ${5:-X=1} timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$T/test-$2-gpu" > "$M/san.log" 2>&1
  local rc=$?
  echo "$1 $2 '$3' ${5:-}: exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san.log" | tail -1)"
  [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|SKIPPED|lse|rel err" "$M/san.log" | head -12 | sed 's/^/    /'
}
{
  echo "== compute-sanitizer"
  san memcheck mla '*fp8_tile_edges*' 8 "K3_MLA_FP8S_SKEW=300 K3_MLA_FP8S_COMBINE=kernel"
  san memcheck mla '*fp8_cluster*' 10 "K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_COMBINE=kernel K3_MLA_FP8S_PDL=loop"
  san racecheck mla '*fp8_cluster*' 14 "K3_MLA_FP8S_SKEW=300 K3_MLA_FP8S_COMBINE=kernel"
  san memcheck mla '*fp8_last_merge*' 10 "K3_MLA_FP8S_SKEW=65"
} >> "$OUT/tests.txt" 2>&1
rm -f "$M/san.log"
echo "sanitizers done at $(( $(date +%s) - t0 )) s"
run "k3-bench 2: the same again" 20 \
  K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=2 "$K/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-2.csv" >> "$OUT/bench.txt" 2>&1
run "k3-bench 3: H 16 B 64/128, default, SKEW 65, SKEW 65 + combine kernel, trace" 10 \
  K3_BENCH_MLA_AB="K3_MLA_FP8S_SKEW=65;K3_MLA_FP8S_SKEW=65 K3_MLA_FP8S_COMBINE=kernel" K3_BENCH_MLA_BATCHES=3 K3_BENCH_MLA_TRACE=1 K3_BENCH_MLA_TRACE_RAW="$OUT/trace-raw.csv" \
  "$K/k3-bench" --only mla_decode --reps 10 -o "$M/bench-3.csv" >> "$OUT/bench.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
[ -f "$OUT/trace-raw.csv" ] && xz -9 "$OUT/trace-raw.csv"
tar cJf "$OUT/misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|^(memcheck|racecheck)" "$OUT/tests.txt" | head -40
grep -E "copy ceiling|^== " "$OUT/bench.txt"
grep -E "^trace .* b=(64|128) heads=16 ctx=8192" "$OUT/bench.txt" | head -8
for f in 1 2; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- bench $f: variant shape med_us %copy(med)"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ && $3 ~ /b=(64|128) / { s = $3; sub(/ t=1/, "", s); sub(/heads=/, "H", s); sub(/ splits=/, " s", s); printf "%s %s %.1f %s\n", $2, s, $4, $14 }' "$OUT/bench-$f.csv"
done
echo "call: $(( $(date +%s) - t0 )) s"
