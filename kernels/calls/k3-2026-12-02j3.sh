#!/usr/bin/env bash
# Issue 17, helper h24a, device call 3 (nvidia-h200, < 100 s): STAGED, not run by h24a (its two calls
# were spent). The final build: after call 2 the default plan uses the last-split merge with two
# waves' splits where whole splits fill less than 80 % of one wave (B 96 at 16 rows: 5 splits, last
# merge; measured in call 2 as K3_MLA_FP8S_COMBINE=last K3_MLA_FP8S_WAVES=2), test
# fp8_underfilled_wave. This call checks that choice itself:
#  1. test-mla-gpu default (17 tests, fp8_underfilled_wave: 5 splits and the last merge asserted on
#     an H200), test-dsa-gpu;
#  2. compute-sanitizer memcheck / racecheck of fp8_underfilled_wave;
#  3. k3-bench B 1..128 (H 16), 64..128 (H 12), 8K-64K: default against K3_MLA_FP8S_COMBINE=onewave
#     (the 2026-12-02h plan): only B 96 rows should differ (~59 -> ~65 % at 8K, ~60 -> ~75 at 32K-64K).
# From the repository root:  PACK=.gpu/h24a LIMIT=90 bash .gpu/h24a/k3-2026-12-02j3.sh
# $OUT: k3-tests.txt k3-bench.txt bench-ab.csv k3-misc.tar.xz
set -u
PACK=${PACK:-.gpu/h24a}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
LIMIT=${LIMIT:-90}
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -d "$PACK/bin" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
T=$PACK/bin
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
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
  run "mla-gpu (default, with fp8_underfilled_wave)" 20 X=1 "$T/test-mla-gpu"
  run "dsa-gpu (default)" 12 X=1 "$T/test-dsa-gpu"
} > "$OUT/k3-tests.txt" 2>&1
{
  for tool in memcheck racecheck; do
    s=$(date +%s)
    MLA_TEST_FILTER='*fp8_underfilled*' timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 "$T/test-mla-gpu" > "$M/san.log" 2>&1
    echo "$tool fp8_underfilled_wave: exit $? ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san.log" | tail -1)"
  done
} >> "$OUT/k3-tests.txt" 2>&1
rm -f "$M/san.log"
run "k3-bench B 1..128 (H 16), 64..128 (H 12): default, fp8-ab onewave" 30 K3_BENCH_MLA_AB="K3_MLA_FP8S_COMBINE=onewave" \
  K3_BENCH_MLA_BATCHES=2 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-ab.csv" > "$OUT/k3-bench.txt" 2>&1
kill "$smi" 2>/dev/null
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|^(memcheck|racecheck)|66 requests|SMs:" "$OUT/k3-tests.txt" | head -20
grep -E "copy ceiling|^== " "$OUT/k3-bench.txt"
awk -F, 'NR > 1 && $1 ~ /mla_decode$/ { s = $3; sub(/ t=1/, "", s); sub(/heads=/, "H", s); printf "%s %s %s %s\n", $2, s, $4, $14 }' "$OUT/bench-ab.csv"
echo "call: $(( $(date +%s) - t0 )) s"
