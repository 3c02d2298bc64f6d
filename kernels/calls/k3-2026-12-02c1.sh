#!/usr/bin/env bash
# Issue 17, helper h22b, device call 1 (nvidia-h200, < 150 s). mla_fp8s_kernel (the FP8 default up
# to 32 rows) merges 2..8 splits of a row block inside a thread-block cluster through distributed
# shared memory (no workspace, no mla_combine_kernel) and plans at most one wave of splits;
# K3_MLA_FP8S_COMBINE=kernel is the previous plan (partials + combine kernel). The Q load of the
# three register kernels is one device function (fp8r_load_q()).
#  1. test-mla-gpu (default; it runs every cluster case also with K3_MLA_FP8S_COMBINE=kernel), its FP8
#     cases with split forced for every shape, with pipe and with reg (the shared Q load); the
#     whole of it with K3_MLA_FP8S_COMBINE=kernel; test-dsa-gpu;
#  2. k3-bench --only mla_decode, each FP8 row followed by the previous plan in the same process
#     (K3_BENCH_MLA_AB="K3_MLA_FP8S_COMBINE=kernel", variant fp8-ab); twice; then B = 1..128 at
#     H 16 (K3_BENCH_MLA_BATCHES=1) the same way;
#  3. compute-sanitizer memcheck / racecheck of the default (clusters of 3, 6, 2 and 8, tile edges,
#     sparse, 8 tokens, DSA);
#  4. ncu (one launch of the default, H 16, B 128, 8K, t 1; --quick): WarpStateStats, SourceCounters,
#     the SASS source page; nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h22b LIMIT=140 bash .gpu/h22b/k3-2026-12-02c1.sh
# $OUT: k3-tests.txt k3-bench.txt bench-ab1.csv bench-ab2.csv bench-batches.csv k3-ncu.txt k3-misc.tar.xz
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
  run "mla-gpu (default: split, cluster merge)" 20 X=1 "$T/test-mla-gpu"
  run "mla-gpu, K3_MLA_FP8S_COMBINE=kernel" 20 K3_MLA_FP8S_COMBINE=kernel "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, split every shape" 12 K3_MLA_FP8_KERNEL=split MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, pipe" 12 K3_MLA_FP8_KERNEL=pipe MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, reg" 12 K3_MLA_FP8_KERNEL=reg MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "dsa-gpu (default)" 20 X=1 "$T/test-dsa-gpu"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
AB="K3_MLA_FP8S_COMBINE=kernel"
{
  run "k3-bench mla_decode, A/B 1" 25 K3_BENCH_MLA_AB="$AB" "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab1.csv"
  run "k3-bench mla_decode, B = 1..128, A/B" 20 K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=1 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-batches.csv"
  run "k3-bench mla_decode, A/B 2" 25 K3_BENCH_MLA_AB="$AB" "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab2.csv"
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
  echo "== compute-sanitizer (default kernel: split, cluster merge)"
  san memcheck mla MLA_TEST_FILTER '*fp8_cluster*' 20
  san racecheck mla MLA_TEST_FILTER '*fp8_cluster*' 25
  san memcheck mla MLA_TEST_FILTER '*fp8_small_heads*' 10
  san racecheck mla MLA_TEST_FILTER '*fp8_small_heads*' 15
  san memcheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 10
  san racecheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 15
  san memcheck mla MLA_TEST_FILTER '*sparse_fp8*' 10
  san racecheck mla MLA_TEST_FILTER '*fp8_eight_tokens*' 10
  san memcheck dsa DSA_TEST_FILTER '*short_and_long*' 12
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
rm -f "$M"/*.ncu-rep
xz -9 "$M/ncu-split-sass.csv" 2>/dev/null
kill "$smi" 2>/dev/null
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|worst|^(memcheck|racecheck)" "$OUT/k3-tests.txt" | head -40
grep -E "copy ceiling|^== " "$OUT/k3-bench.txt"
grep -E "^== |Warp Cycles Per Issued|No Eligible|Registers Per|sass page" "$OUT/k3-ncu.txt" | head -12
for f in ab1 batches ab2; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- $f: variant shape med_us %copy(med) steady%"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ && $2 ~ /fp8/ && $3 ~ /heads=1[62] / && $3 ~ / t=1 / { print $2, $3, $4, $14, $16 }' "$OUT/bench-$f.csv" | head -40
done
echo "call: $(( $(date +%s) - t0 )) s"
