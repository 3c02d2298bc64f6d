#!/usr/bin/env bash
# Issue 17, helper h18a, second device call (nvidia-h200, < 160 s): the register FP8 kernels
# after call 1 (k3-2026-12-01p.sh; bench/results/k3-kernels-h200-2026-12-01p/call1): the copy
# sources (index list, block table) loaded a tile before the copy is issued, the MMAs not
# volatile (the two n-tiles' chains interleaved), the O rescale skipped when no row's max or
# unit moved, powers of two instead of ldexpf. Same pack layout and outputs as call 1:
#  1. test-mla-gpu, test-dsa-gpu (default kernel), test-mla-gpu's FP8 cases with reg4, ii, cc;
#  2. k3-bench --only mla_decode: the default (8-warp) kernel, then reg4 (both full grids);
#  3. compute-sanitizer memcheck and racecheck (16- and 32-row CTAs, DSA);
#  4. k3-bench --only mla_decode --quick with cc, ii; SASS opcode counts; nvidia-smi.
# From the repository root:  PACK=.gpu/h18a bash .gpu/h18a/k3-2026-12-01p2.sh
set -u
PACK=${PACK:-.gpu/h18a}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
LIMIT=${LIMIT:-150}
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -d "$PACK/bin" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
T=$PACK/bin
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$OUT/k3-smi.csv" 2>&1 &
smi=$!
run() {  # name seconds env... -- command...
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "== $name: no time left"; return; }
  local s; s=$(date +%s)
  echo "== $name"
  timeout "$lim" env "$@" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  nvcc --version 2>/dev/null | tail -1
  run "mla-gpu (default FP8 kernel)" 30 K3_MLA_FP8_CVT=ic "$T/test-mla-gpu"
  run "dsa-gpu (default FP8 kernel)" 30 K3_MLA_FP8_CVT=ic "$T/test-dsa-gpu"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  run "k3-bench mla_decode default" 45 K3_MLA_FP8_CVT=ic "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-default.csv"
  run "k3-bench mla_decode reg4" 45 K3_MLA_FP8_KERNEL=reg4 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-reg4.csv"
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
san() {  # tool test filter-var filter seconds [env]
  local l; l=$(left); local lim=$5; [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 $2 '$4': no time left"; return; }
  local s; s=$(date +%s)
  env "$3=$4" ${6:-K3_MLA_FP8_CVT=ic} timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$T/test-$2-gpu" > "$OUT/.log" 2>&1
  local rc=$?
  echo "$1 $2 '$4' ${6:-}: exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/.log" | tail -1)"
  [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|SKIPPED|lse|rel err" "$OUT/.log" | head -12 | sed 's/^/    /'
}
{
  echo "== compute-sanitizer (small FP8 cases)"
  san memcheck mla MLA_TEST_FILTER '*fp8_small_heads*' 20
  san racecheck mla MLA_TEST_FILTER '*fp8_small_heads*' 25
  san memcheck mla MLA_TEST_FILTER '*fp8_verify_window*' 20
  san racecheck mla MLA_TEST_FILTER '*fp8_verify_window*' 25
  san memcheck dsa DSA_TEST_FILTER '*short_and_long*' 20
  san memcheck mla MLA_TEST_FILTER '*fp8_small_heads*' 15 K3_MLA_FP8_KERNEL=reg4
  run "mla-gpu fp8 cases, ii" 15 K3_MLA_FP8_CVT=ii MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, cc" 15 K3_MLA_FP8_CVT=cc MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, reg4" 15 K3_MLA_FP8_KERNEL=reg4 MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
} >> "$OUT/k3-tests.txt" 2>&1
{
  run "k3-bench mla_decode cc --quick" 20 K3_MLA_FP8_CVT=cc "$T/k3-bench" --only mla_decode --quick --reps 10 -o "$OUT/bench-cc.csv"
  run "k3-bench mla_decode ii --quick" 20 K3_MLA_FP8_CVT=ii "$T/k3-bench" --only mla_decode --quick --reps 10 -o "$OUT/bench-ii.csv"
  { cat "$OUT/bench-cc.csv"; tail -n +2 "$OUT/bench-ii.csv" | sed 's/^/ii:/'; } > "$OUT/bench-var.csv" 2>/dev/null
  rm -f "$OUT/bench-cc.csv" "$OUT/bench-ii.csv"
} >> "$OUT/k3-bench.txt" 2>&1
cuobjdump -sass "$T/test-mla-gpu" > "$OUT/.sass" 2>&1
{
  echo "opcode counts of the register kernels (mla_fp8r_kernel, mla_fp8w_kernel; static, whole kernel)"
  awk '/Function :/ { fn = $3; keep = (fn ~ /fp8[rw]_kernel/) }
       keep && /\/\*[0-9a-f]+\*\// { for (i = 1; i <= NF; i++) if ($i ~ /^[A-Z][A-Z0-9]+/) { split($i, a, "."); c[fn " " a[1]]++; break } }
       END { for (k in c) print c[k], k }' "$OUT/.sass" | sort -k2,2 -k1,1nr
  echo "sass lines: $(wc -l < "$OUT/.sass")"
} > "$OUT/k3-sass.txt" 2>&1
rm -f "$OUT/.log" "$OUT/.sass"
kill "$smi" 2>/dev/null
grep -E "^== .*exit|PASSED|FAILED|rel err|lse  |worst|^(memcheck|racecheck)" "$OUT/k3-tests.txt" | head -70
grep -E "copy ceiling|^== " "$OUT/k3-bench.txt"
for f in default reg4 var; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- $f: kv shape med_us %copy(med) %copy(steady)"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ { print $1, $2, $3, $4, $14, $16 }' "$OUT/bench-$f.csv"
done
echo "call: $(( $(date +%s) - t0 )) s"
