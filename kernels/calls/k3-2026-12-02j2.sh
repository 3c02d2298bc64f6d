#!/usr/bin/env bash
# Issue 17, helper h24a, device call 2 (nvidia-h200, < 140 s), after call 1 (k3-2026-12-02j1.sh):
# the last-split merge (K3_MLA_FP8S_COMBINE=last) was correct (tests, memcheck, racecheck) but
# slower than the cluster / combine kernel (8K B 64 120.5 against 115.6 us, B 128 216 against 208):
# its merge issued one item's loads at a time (5-8 us after the last epilogue); and the trace put
# the tile loop's end of the CTAs at 75.6 / 100.2 / 107.5 us (min / median / max, B 64) and
# 150 / 194 / 206 (B 128): the CTAs run at different speeds and the slowest sets the time. This
# build: the merge with up to 32 loads a thread in flight; K3_MLA_FP8S_WAVES=N splits for N waves
# of CTAs (the hardware scheduler evens out the speeds; the last merge up to 8 splits).
#  1. test-mla-gpu default, its FP8 cases with last, last + waves 2, last + self reset;
#     test-dsa-gpu;
#  2. k3-bench B 1..128 (H 16), 64..128 (H 12) at 8K/32K/64K: default, ab last, ab2 last waves 2,
#     ab3 last waves 3, ab4 last waves 2 self reset, back to back in one process, with the trace
#     (every CTA's points in trace-raw.csv);
#  3. compute-sanitizer memcheck / racecheck of the last merge (waves 1 and 2);
#  4. k3-bench H 16 B 64/128 again (the same five).
# From the repository root:  PACK=.gpu/h24a LIMIT=130 bash .gpu/h24a/k3-2026-12-02j2.sh
# $OUT: k3-tests.txt k3-bench.txt bench-ab1.csv bench-ab2.csv trace-raw.csv.xz k3-misc.tar.xz
set -u
PACK=${PACK:-.gpu/h24a}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
LIMIT=${LIMIT:-130}
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -d "$PACK/bin" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
T=$PACK/bin
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
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
  run "mla-gpu (default)" 15 X=1 "$T/test-mla-gpu"
  run "mla-gpu fp8, K3_MLA_FP8S_COMBINE=last" 8 K3_MLA_FP8S_COMBINE=last MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, last, K3_MLA_FP8S_WAVES=2" 8 K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=2 MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, last, waves 3" 8 K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=3 MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "mla-gpu fp8, waves 2 (combine kernel where no cluster fits)" 8 K3_MLA_FP8S_WAVES=2 MLA_TEST_FILTER="$F8" "$T/test-mla-gpu"
  run "dsa-gpu (default)" 12 X=1 "$T/test-dsa-gpu"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
AB="K3_MLA_FP8S_COMBINE=last;K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=2;K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=3;K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=2 K3_MLA_FP8S_LAST_RESET=self"
run "k3-bench B 1..128 (H 16), 64..128 (H 12): default, ab last, ab2 last waves 2, ab3 last waves 3, ab4 last waves 2 self (trace)" 50 \
  K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=2 K3_BENCH_MLA_TRACE=1 K3_BENCH_MLA_TRACE_RAW="$OUT/trace-raw.csv" \
  "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab1.csv" > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
san() {  # tool test filter-var filter seconds [env]
  local l; l=$(left); local lim=$5; [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 $2 '$4': no time left"; return; }
  local s; s=$(date +%s)
  env "$3=$4" ${6:-X=1} ${7:-Y=1} timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$T/test-$2-gpu" > "$M/san.log" 2>&1
  local rc=$?
  echo "$1 $2 '$4' ${6:-} ${7:-}: exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san.log" | tail -1)"
  [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|SKIPPED|lse|rel err" "$M/san.log" | head -12 | sed 's/^/    /'
}
{
  echo "== compute-sanitizer (the last-split merge, its loads in flight; waves)"
  san memcheck mla MLA_TEST_FILTER '*fp8_last_merge*' 12
  san racecheck mla MLA_TEST_FILTER '*fp8_last_merge*' 20
  san memcheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 8 K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=2
  san racecheck mla MLA_TEST_FILTER '*fp8_cluster*' 12 K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=2
  san memcheck mla MLA_TEST_FILTER '*fp8_split_options*' 12 K3_MLA_FP8S_WAVES=2
} >> "$OUT/k3-tests.txt" 2>&1
rm -f "$M/san.log"
run "k3-bench H 16 B 64/128 again: default, ab last, ab2 last waves 2, ab3 last waves 3, ab4 last waves 2 self" 30 \
  K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=3 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab2.csv" >> "$OUT/k3-bench.txt" 2>&1
kill "$smi" 2>/dev/null
[ -f "$OUT/trace-raw.csv" ] && xz -9 "$OUT/trace-raw.csv"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|^(memcheck|racecheck)" "$OUT/k3-tests.txt" | head -30
grep -E "copy ceiling|^== " "$OUT/k3-bench.txt"
grep -E "^trace .* b=(64|128) heads=16 ctx=8192" "$OUT/k3-bench.txt" | head -12
for f in ab1 ab2; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- $f: variant shape med_us %copy(med)"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ { s = $3; sub(/ t=1/, "", s); sub(/heads=/, "H", s); printf "%s %s %s %s\n", $2, s, $4, $14 }' "$OUT/bench-$f.csv"
done
echo "call: $(( $(date +%s) - t0 )) s"
