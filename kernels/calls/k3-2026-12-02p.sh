#!/usr/bin/env bash
# Issue 17, helper i25b, device call 1 (one nvidia-h200, <= 130 s of work): MLA decode, FP8 cache.
# mla_fp8s_kernel's frame merge in its steady form (K3_MLA_FP8S_FRAME=steady: where every
# softmax warp kept the running max, the 12 exp2 a lane a tile and their products skipped, and the
# unit's update where no row's largest P x scale moved; bitwise the general form's values) beside
# the default (=full, the 2026-12-02h kernel), and fp8s_merge_weights(): the split weights of the
# cluster merge and the last-split merge as one function.
#  1. test-mla-gpu (default: the new fp8_frame_forms runs both forms; fp8_cluster_splits and
#     fp8_last_merge the two merges), its FP8 cases with steady; test-dsa-gpu default and steady;
#  2. compute-sanitizer memcheck + racecheck: fp8_frame_forms, tile_edges / cluster / last merge
#     with steady;
#  3. k3-bench --only mla_decode, FP8, H 16 B 1..128 and H 12 B 64..128 at 8K/32K/64K, each row
#     as default, steady, default, steady in one process (K3_BENCH_MLA_AB), twice (two processes);
#     then the trace of H 16 B 64/128 (default and steady).
# From the repository root:  PACK=.gpu/i25b LIMIT=128 bash .gpu/i25b/k3-2026-12-02p.sh
# $OUT: tests.txt bench.txt bench-1.csv bench-2.csv trace-raw.csv.xz sass.txt.xz misc.tar.xz
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
unset K3_MLA_FP8S_FRAME K3_MLA_FP8_KERNEL K3_MLA_FP8S_COMBINE
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
  run "mla-gpu fp8, K3_MLA_FP8S_FRAME=steady" 12 K3_MLA_FP8S_FRAME=steady MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, combine kernel with K3_MLA_FP8S_PDL=entry" 8 K3_MLA_FP8S_COMBINE=kernel K3_MLA_FP8S_PDL=entry K3_MLA_FP8S_FRAME=steady MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, combine kernel with K3_MLA_FP8S_PDL=loop" 8 K3_MLA_FP8S_COMBINE=kernel K3_MLA_FP8S_PDL=loop MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "dsa-gpu (default)" 10 X=1 "$T/test-dsa-gpu"
  run "dsa-gpu, K3_MLA_FP8S_FRAME=steady" 10 K3_MLA_FP8S_FRAME=steady "$T/test-dsa-gpu"
} > "$OUT/tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
AB="K3_MLA_FP8S_FRAME=steady;K3_MLA_FP8S_FRAME=full;K3_MLA_FP8S_FRAME=steady"
run "k3-bench 1: FP8 B 1..128 (H 16), 64..128 (H 12): default, ab steady, ab2 full, ab3 steady" 16 \
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
  san memcheck mla '*fp8_frame_forms*' 14
  san racecheck mla '*fp8_frame_forms*' 24
  san memcheck mla '*fp8_tile_edges*' 8 K3_MLA_FP8S_FRAME=steady
  san racecheck mla '*fp8_cluster*' 14 K3_MLA_FP8S_FRAME=steady
  san memcheck mla '*fp8_last_merge*' 8 K3_MLA_FP8S_FRAME=steady
  san racecheck mla '*fp8_last_merge*' 14 K3_MLA_FP8S_FRAME=steady
  san memcheck mla '*fp8_cluster*' 8 "K3_MLA_FP8S_PDL=entry K3_MLA_FP8S_COMBINE=kernel"
} >> "$OUT/tests.txt" 2>&1
rm -f "$M/san.log"
echo "sanitizers done at $(( $(date +%s) - t0 )) s"
AB2="K3_MLA_FP8S_FRAME=steady;K3_MLA_FP8S_FRAME=steady K3_MLA_FP8S_PDL=entry;K3_MLA_FP8S_FRAME=steady K3_MLA_FP8S_PDL=loop"
run "k3-bench 2: default, ab steady, ab2 steady + PDL entry, ab3 steady + PDL loop" 14 \
  K3_BENCH_MLA_AB="$AB2" K3_BENCH_MLA_BATCHES=2 "$K/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-2.csv" >> "$OUT/bench.txt" 2>&1
run "k3-bench 3: H 16 B 64/128, default and steady, trace" 10 \
  K3_BENCH_MLA_AB="K3_MLA_FP8S_FRAME=steady" K3_BENCH_MLA_BATCHES=3 K3_BENCH_MLA_TRACE=1 K3_BENCH_MLA_TRACE_RAW="$OUT/trace-raw.csv" \
  "$K/k3-bench" --only mla_decode --reps 10 -o "$M/bench-3.csv" >> "$OUT/bench.txt" 2>&1
[ "$(left)" -gt 14 ] && {
  echo "== SASS of mla_fp8s_kernel<cvt, cvt, dense, early> without / with FRAME (the default kernel / steady)"
  timeout 15 cuobjdump -sass "$K/k3-bench" 2>/dev/null | awk '
    /Function :/ { p = ($0 ~ /mla_fp8s_kernelILb0ELb0ELb0ELb1ELb[01]E/) } p' > "$M/sass.txt"
  for fr in 0 1; do
    awk -v fr="$fr" '/Function :/ { p = ($0 ~ ("mla_fp8s_kernelILb0ELb0ELb0ELb1ELb" fr "E")) } p && /\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// { n++; split($0, a, /[ ;]+/); for (i = 1; i <= length(a); i++) if (a[i] ~ /^[A-Z][A-Z0-9_.]+$/ && a[i] !~ /^(P[0-7T]|R[0-9]+|UR[0-9]+|RZ|PT)$/) { split(a[i], o, "."); h[o[1]]++; break } }
      END { printf "FRAME=%s: %d instructions;", fr, n; for (k in h) if (h[k] >= 8) printf " %s %d", k, h[k]; printf "\n" }' "$M/sass.txt"
  done
  xz -9 -c "$M/sass.txt" > "$OUT/sass.txt.xz" && rm -f "$M/sass.txt"
} >> "$OUT/tests.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
[ -f "$OUT/trace-raw.csv" ] && xz -9 "$OUT/trace-raw.csv"
tar cJf "$OUT/misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|^(memcheck|racecheck)|^FRAME=" "$OUT/tests.txt" | head -40
grep -E "copy ceiling|^== " "$OUT/bench.txt"
grep -E "^trace .* b=(64|128) heads=16 ctx=8192" "$OUT/bench.txt" | head -8
for f in 1 2; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- bench $f: variant shape med_us %copy(med)"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ && $3 ~ /b=(64|128) / { s = $3; sub(/ t=1/, "", s); sub(/heads=/, "H", s); printf "%s %s %s %s\n", $2, s, $4, $14 }' "$OUT/bench-$f.csv"
done
echo "call: $(( $(date +%s) - t0 )) s"
