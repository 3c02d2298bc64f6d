#!/usr/bin/env bash
# Round 19, call 2 (lead): the GPU suites round 19's call did not reach (test-moe-gpu ran out of its
# time in test_route after 24 tests passed), on the same pack (.gpu/r19, main 7d04ad3's code):
# test-moe-gpu's tests from test_route on, the other six suites (test-kda-gpu's prefill tests), and
# the sanitizer list (k3-2026-12-02r-san.txt).
#   PACK=.gpu/r19 LIMIT=200 bash .gpu/r19/k3-2026-12-02r2.sh     -> $OUT/tests.txt, $OUT/logs.tar.xz
set -u
PACK=${PACK:-.gpu/r19}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-200}
mkdir -p "$OUT/logs"
t0=$(date +%s)
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
left() { echo $(( LIMIT - 5 - ($(date +%s) - t0) )); }
T=$B/tests/kernels
suite() { # name cap [VAR=filter]
  local n=$1 cap=$2 l; shift 2; l=$(left); [ "$cap" -lt "$l" ] || cap=$l
  [ "$cap" -gt 3 ] || { echo "== $n: no time"; return; }
  local s; s=$(date +%s)
  env "$@" timeout "$cap" "$T/test-$n-gpu" > "$OUT/logs/$n-${1:-all}.log" 2>&1
  local rc=$?
  echo "== test-$n-gpu ${*:-} exit $rc in $(( $(date +%s) - s )) s: $(grep -cE '^\[ +OK' "$OUT/logs/$n-${1:-all}.log") ok, $(grep -cE '^\[ +(FAILED|ERROR)' "$OUT/logs/$n-${1:-all}.log") failed"
  grep -E "^\[ +(FAILED|ERROR)" "$OUT/logs/$n-${1:-all}.log" | head -5
}
{
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  suite moe 30 MOE_TEST_FILTER='*route*'
  suite moe 20 MOE_TEST_FILTER='*combine*'
  suite moe 30 MOE_TEST_FILTER='*layer*'
  suite mla 40
  suite kda 40 KDA_TEST_FILTER='*prefill*'
  suite layer 20
  suite attnres 15
  suite dsa 20
  suite mla-prefill 25
  while read -r tool s var filter secs; do
    case "$tool" in ''|'#'*) continue ;; esac
    l=$(left); [ "$secs" -lt "$l" ] || secs=$l
    [ "$secs" -gt 3 ] || { echo "== $tool $s $filter: no time"; continue; }
    env "$var=$filter" timeout "$secs" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-$s-gpu" > "$OUT/logs/san-$tool-$s.log" 2>&1
    echo "== $tool test-$s-gpu $var='$filter': exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/logs/san-$tool-$s.log" | tail -1)"
  done < "$PACK/san.txt"
  echo "call: $(( $(date +%s) - t0 )) s"
} > "$OUT/tests.txt" 2>&1
tar cJf "$OUT/logs.tar.xz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/tests.txt"
