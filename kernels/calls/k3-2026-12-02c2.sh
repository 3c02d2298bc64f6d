#!/usr/bin/env bash
# Issue 17, helper h22b, device call 2 (nvidia-h200, < 150 s), after call 1 (k3-2026-12-02c1.sh: the
# cluster merge of 2 splits gained ~2 % at B 128; B 64's 4 splits did not fit as clusters; B 16 one
# wave of splits: +43-53 %; ncu: the P hand-off's wait 12 % of the samples, Q loads queued behind
# the first bulk copies ~2 %). This build's mla_fp8s_kernel: the next tile's QK^T between the P
# hand-off's arrive and its wait (K3_MLA_FP8S_HANDOFF=late: the previous order), Q loads ahead of the
# first copies, qf applied once a row in the softmax; mla_combine_kernel loads 4 splits at a time.
#  1. test-mla-gpu default, with K3_MLA_FP8S_HANDOFF=late, K3_MLA_FP8S_COMBINE=kernel; its FP8 cases
#     with split forced for every shape (cc, ic, ii), pipe, reg; test-dsa-gpu;
#  2. k3-bench --only mla_decode: this build with each FP8 row followed by the late hand-off
#     (K3_BENCH_MLA_AB), B = 1..128 rows of this build (A/B: late + the combine kernel) and of call
#     1's build (k3-bench-c1; its fp8-ab rows: main's plan), alternating, twice; full grid again last;
#  3. compute-sanitizer memcheck / racecheck of the default; 4. ncu of the default (H 16, B 128, 8K).
# From the repository root:  PACK=.gpu/h22b LIMIT=140 bash .gpu/h22b/k3-2026-12-02c2.sh
# $OUT: k3-tests.txt k3-bench.txt bench-ab1.csv bench-ab2.csv bench-b.tar.xz k3-ncu.txt k3-misc.tar.xz
set -u
PACK=${PACK:-.gpu/h22b}
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
{
  run "mla-gpu (default: split, early hand-off, cluster merge)" 15 X=1 "$T/test-mla-gpu"
  run "mla-gpu, K3_MLA_FP8S_HANDOFF=late" 15 K3_MLA_FP8S_HANDOFF=late "$T/test-mla-gpu"
  run "mla-gpu fp8, K3_MLA_FP8S_COMBINE=kernel" 8 K3_MLA_FP8S_COMBINE=kernel MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, split every shape" 8 K3_MLA_FP8_KERNEL=split MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, split ic" 8 K3_MLA_FP8_KERNEL=split K3_MLA_FP8_CVT=ic MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, split ii, late" 8 K3_MLA_FP8_KERNEL=split K3_MLA_FP8_CVT=ii K3_MLA_FP8S_HANDOFF=late MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, pipe" 8 K3_MLA_FP8_KERNEL=pipe MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, reg" 8 K3_MLA_FP8_KERNEL=reg MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "dsa-gpu (default)" 15 X=1 "$T/test-dsa-gpu"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
AB="K3_MLA_FP8S_HANDOFF=late"
ABK="K3_MLA_FP8S_HANDOFF=late K3_MLA_FP8S_COMBINE=kernel"
mkdir -p "$M/b"
{
  run "k3-bench mla_decode, A/B late 1" 20 K3_BENCH_MLA_AB="$AB" "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab1.csv"
  for i in 1 2; do
    run "k3-bench B = 1..128, this build, A/B late + kernel ($i)" 8 K3_BENCH_MLA_AB="$ABK" K3_BENCH_MLA_BATCHES=1 "$T/k3-bench" --only mla_decode --reps 10 -o "$M/b/new$i.csv"
    run "k3-bench-c1 B = 1..128, call 1's build, A/B kernel ($i)" 8 K3_BENCH_MLA_AB="K3_MLA_FP8S_COMBINE=kernel" K3_BENCH_MLA_BATCHES=1 "$T/k3-bench-c1" --only mla_decode --reps 10 -o "$M/b/c1-$i.csv"
  done
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
  echo "== compute-sanitizer (default kernel: split, early hand-off, cluster merge)"
  san memcheck mla MLA_TEST_FILTER '*fp8_cluster*' 12
  san racecheck mla MLA_TEST_FILTER '*fp8_cluster*' 15
  san racecheck mla MLA_TEST_FILTER '*fp8_small_heads*' 10
  san memcheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 8
  san racecheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 10
  san racecheck mla MLA_TEST_FILTER '*sparse_fp8*' 8
  san memcheck dsa DSA_TEST_FILTER '*short_and_long*' 10
} >> "$OUT/k3-tests.txt" 2>&1
rm -f "$M/san.log"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
{
  l=$(left)
  if [ "$l" -gt 20 ]; then
    run "ncu default" 20 X=1 "$NCU" --clock-control none -k regex:mla_fp8s -s 2 -c 1 \
      --section WarpStateStats --section SourceCounters --section SchedulerStats --section InstructionStats \
      --section LaunchStats --section Occupancy -o "$M/ncu-split" "$T/k3-bench" --only mla_decode --quick --reps 3 -o /tmp/ncu-b.csv
    if [ -f "$M/ncu-split.ncu-rep" ]; then
      "$NCU" --import "$M/ncu-split.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$"
      "$NCU" --import "$M/ncu-split.ncu-rep" --page source --print-source sass --csv > "$M/ncu-split-sass.csv" 2>&1
      echo "sass page split: $(wc -l < "$M/ncu-split-sass.csv") lines"
    fi
  else
    echo "ncu: no time left ($l s)"
  fi
} > "$OUT/k3-ncu.txt" 2>&1
run "k3-bench mla_decode, A/B late 2" 20 K3_BENCH_MLA_AB="$AB" "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab2.csv" >> "$OUT/k3-bench.txt" 2>&1
tar cJf "$OUT/bench-b.tar.xz" -C "$M/b" . && rm -rf "$M/b"
rm -f "$M"/*.ncu-rep
xz -9 "$M/ncu-split-sass.csv" 2>/dev/null
kill "$smi" 2>/dev/null
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|^(memcheck|racecheck)" "$OUT/k3-tests.txt" | head -40
grep -E "copy ceiling|^== " "$OUT/k3-bench.txt"
grep -E "^== |Warp Cycles Per Issued|No Eligible|Registers Per|sass page" "$OUT/k3-ncu.txt" | head -12
for f in ab1 ab2; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- $f: variant shape med_us %copy(med) steady%"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ && $2 ~ /fp8/ && $3 ~ /heads=16 / && $3 ~ / t=1 / { print $2, $3, $4, $14, $16 }' "$OUT/bench-$f.csv" | head -24
done
mkdir -p /tmp/bb && tar xJf "$OUT/bench-b.tar.xz" -C /tmp/bb 2>/dev/null
for f in new1 c1-1 new2 c1-2; do
  [ -f /tmp/bb/$f.csv ] || continue
  echo "-- $f: variant shape %copy(med)"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ && $3 !~ /b=1 / { printf "%s %s %s %s\n", $2, $3, $4, $14 }' /tmp/bb/$f.csv | sed 's/heads=16 //; s/ t=1//'
done
echo "call: $(( $(date +%s) - t0 )) s"
