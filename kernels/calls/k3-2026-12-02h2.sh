#!/usr/bin/env bash
# Issue 17, helper h23b, device call 2 (nvidia-h200, < 150 s), after call 1 (k3-2026-12-02h1.sh: the
# early order, as built on i22b, ran at the late order's speed: 8K B 128 74.9 against 75.2 %; ncu:
# the P hand-off's wait still 10.2 % of the samples, and warp 0's stage refills 3.5 % (~14 % of its
# own time), so every warp waited for warp 0 at the hand-off). This build's mla_fp8s_kernel (early
# order): a fifth warp, the producer, issues every stage copy of the split (block table, bulk
# copies, the stage-empty waits), the four compute warps do the same work each;
# K3_MLA_FP8S_HANDOFF=late is main's kernel (warp 0 refills, 128 threads). K3_MLA_FP8S_ARRIVE is
# gone (racecheck: 20 hazards, and no faster).
#  1. test-mla-gpu default and late; FP8 cases with split (cc, ii), pipe, reg, combine kernel;
#     test-dsa-gpu;
#  2. k3-bench --only mla_decode: B 1..128 (H 16) and 64..128 (H 12) at 8K/32K/64K, the default
#     then late in one process, three times; H 16 B 64/128 with prime 1 / 2 / late; the full grid
#     (t 1, 2, 4; BF16 beside) once with late;
#  3. compute-sanitizer memcheck / racecheck / synccheck of the default (the producer's barriers);
#  4. ncu of the default (H 16, B 128, 8K), source counters.
# From the repository root:  PACK=.gpu/h23b LIMIT=140 bash .gpu/h23b/k3-2026-12-02h2.sh
# $OUT: k3-tests.txt k3-bench.txt bench-ab1..3.csv bench-var.csv bench-grid.csv k3-ncu.txt k3-misc.tar.xz
set -u
PACK=${PACK:-.gpu/h23b}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
LIMIT=${LIMIT:-140}
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -d "$PACK/bin" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
T=$PACK/bin
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
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
F8='*fp8*'
{
  run "mla-gpu (default: split, early order with the producer warp, cluster merge)" 15 X=1 "$T/test-mla-gpu"
  run "mla-gpu, K3_MLA_FP8S_HANDOFF=late (main's kernel)" 10 K3_MLA_FP8S_HANDOFF=late "$T/test-mla-gpu"
  run "mla-gpu fp8, split every shape (cc)" 6 K3_MLA_FP8_KERNEL=split MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, split ii" 6 K3_MLA_FP8_KERNEL=split K3_MLA_FP8_CVT=ii MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, pipe" 6 K3_MLA_FP8_KERNEL=pipe MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, K3_MLA_FP8S_COMBINE=kernel" 6 K3_MLA_FP8S_COMBINE=kernel MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "dsa-gpu (default)" 12 X=1 "$T/test-dsa-gpu"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
AB="K3_MLA_FP8S_HANDOFF=late"
VAR="K3_MLA_FP8S_HANDOFF=late;K3_MLA_FP8S_PRIME=1;K3_MLA_FP8S_PRIME=2"
{
  for i in 1 2; do
    run "k3-bench B 1..128 (H 16), 64..128 (H 12): default, fp8-ab late ($i)" 20 K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=2 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab$i.csv"
  done
  run "k3-bench H 16 B 64/128: default, ab late, ab2 prime 1, ab3 prime 2" 15 K3_BENCH_MLA_AB="$VAR" K3_BENCH_MLA_BATCHES=3 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-var.csv"
  run "k3-bench full grid (t 1, 2, 4; BF16 beside): default, fp8-ab late" 25 K3_BENCH_MLA_AB="$AB" "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-grid.csv"
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
san() {  # tool test filter-var filter seconds [env]
  local l; l=$(left); local lim=$5; [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 $2 '$4': no time left"; return; }
  local s; s=$(date +%s)
  env "$3=$4" ${6:-X=1} timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$T/test-$2-gpu" > "$M/san.log" 2>&1
  local rc=$?
  echo "$1 $2 '$4' ${6:-}: exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san.log" | tail -1)"
  [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|SKIPPED|lse|rel err" "$M/san.log" | head -12 | sed 's/^/    /'
}
{
  echo "== compute-sanitizer (default kernel: split, early order with the producer warp, cluster merge)"
  san memcheck mla MLA_TEST_FILTER '*fp8_cluster*' 10
  san racecheck mla MLA_TEST_FILTER '*fp8_cluster*' 12
  san synccheck mla MLA_TEST_FILTER '*fp8_cluster*' 10
  san memcheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 8
  san racecheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 10
  san synccheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 8
  san racecheck mla MLA_TEST_FILTER '*fp8_small_heads*' 8
  san racecheck mla MLA_TEST_FILTER '*fp8_small_heads*' 8 K3_MLA_FP8S_PRIME=1
  san memcheck mla MLA_TEST_FILTER '*fp8_split_options*' 12
  san racecheck mla MLA_TEST_FILTER '*sparse_fp8*' 8
  san racecheck mla MLA_TEST_FILTER '*fp8_eight_tokens*' 8
  san memcheck dsa DSA_TEST_FILTER '*short_and_long*' 10
} >> "$OUT/k3-tests.txt" 2>&1
rm -f "$M/san.log"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
{
  l=$(left)
  if [ "$l" -gt 25 ]; then
    run "ncu default" 20 X=1 "$NCU" --clock-control none -k regex:mla_fp8s -s 2 -c 1 \
      --section WarpStateStats --section SourceCounters --section SchedulerStats --section InstructionStats \
      --section LaunchStats --section Occupancy -o "$M/ncu-split" "$T/k3-bench" --only mla_decode --quick --reps 3 -o /tmp/ncu-b.csv
    if [ -f "$M/ncu-split.ncu-rep" ]; then
      "$NCU" --import "$M/ncu-split.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$"
      "$NCU" --import "$M/ncu-split.ncu-rep" --page raw --csv 2>&1 | grep -iE "smsp__pcsamp_warps_issue_stalled|smsp__average_warp|launch__registers" | head -60 > "$M/ncu-raw-stalls.csv"
      "$NCU" --import "$M/ncu-split.ncu-rep" --page source --print-source sass --csv > "$M/ncu-split-sass.csv" 2>&1
      echo "sass page split: $(wc -l < "$M/ncu-split-sass.csv") lines"
    fi
  else
    echo "ncu: no time left ($l s)"
  fi
} > "$OUT/k3-ncu.txt" 2>&1
run "k3-bench B 1..128 (H 16), 64..128 (H 12): default, fp8-ab late (3)" 20 K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=2 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab3.csv" >> "$OUT/k3-bench.txt" 2>&1
rm -f "$M"/*.ncu-rep
xz -9 "$M/ncu-split-sass.csv" 2>/dev/null
kill "$smi" 2>/dev/null
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|^(memcheck|racecheck)" "$OUT/k3-tests.txt" | head -40
grep -E "copy ceiling|clusters of|^== " "$OUT/k3-bench.txt"
grep -E "^== |Warp Cycles Per Issued|No Eligible|Registers Per|sass page" "$OUT/k3-ncu.txt" | head -12
for f in ab1 ab2 ab3 var; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- $f: variant shape med_us %copy(med)"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ { s = $3; sub(/ t=1/, "", s); printf "%s %s %s %s\n", $2, s, $4, $14 }' "$OUT/bench-$f.csv"
done
echo "call: $(( $(date +%s) - t0 )) s"
