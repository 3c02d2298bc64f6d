#!/usr/bin/env bash
# One device call of an issue-17 round (one nvidia-h200): the pack's FULL k3-bench under
# `k3sim trace capture` (--require-wgmma: the capture the k3-kernels preset is fitted on), then the
# four-layer K3 slice under capture (kernels/slice/run-slice.sh --reps 3: prefill T = 4K, 16K; decode
# B = 1, 16, 64, 256 at C = 8K, 64K, eager and CUDA graphs; the routing's touched experts printed), and
# in the time left every kernel GPU suite (PHASE=tests, the default; a failing suite keeps its
# whole log), the compute-sanitizer runs listed in $SAN (PHASE=san), or both (PHASE=all: one per line,
# `tool suite FILTER_VAR filter seconds`, e.g. `racecheck kda KDA_TEST_FILTER *many_items* 30`);
# nvidia-smi every 500 ms throughout. Rounds before 2026-12-01z copied this body into each call script
# (k3-2026-12-01y3.sh is the last of them).
# From the repository root, the pack staged in .gpu/<tag> (k3-build/ as xz, libcmocka.so.0,
# device-env.sh, run-slice.sh, this script, the SAN list):
#   PACK=.gpu/<tag> LIMIT=<s> [PHASE=san|all SAN=.gpu/<tag>/san.txt] bash .gpu/<tag>/k3-round.sh
# $OUT gets 7 files: k3-bench.txt k3-h200.db.xz k3-slice.txt k3-slice.csv k3-slice-sustained.csv k3-slice.db.xz
# k3-misc.tar.xz (k3-env.txt k3-smi.csv k3-bench.csv k3-tests.txt and any failing suite's log).
set -u
PACK=${PACK:?PACK=.gpu/<tag>}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-280}
PHASE=${PHASE:-tests}
case "$PHASE" in tests) ;; san|all) [ -r "${SAN:-}" ] || { echo "PHASE=$PHASE needs SAN=<list>"; exit 2; } ;;
  *) echo "PHASE=$PHASE: tests, san or all"; exit 2 ;; esac
mkdir -p "$OUT" "$M"
t0=$(date +%s)
. "$PACK/device-env.sh" || . kernels/calls/device-env.sh
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
left_s() { echo $(( LIMIT - 8 - ($(date +%s) - t0) )); }
{
  s=$(date +%s)
  timeout 240 "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma -o "$M/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
} > "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-h200.db"
echo "bench done at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-bench.txt")"
left=$(( LIMIT - 25 - ($(date +%s) - t0) ))
if [ "$left" -gt 45 ]; then
  sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
  # --sustain-ms: each step also back to back (the steady state --clock power prices; since 2026-12-04)
  OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --reps 3 --sustain-ms "${SUSTAIN_MS:-2000}" > /dev/null 2>&1
  echo "slice exit $? at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-slice.txt")"
else
  echo "no time left for the slice"
fi
: > "$M/k3-tests.txt"
if [ "$PHASE" != san ]; then
{
  for t in test-moe-gpu test-kda-gpu test-mla-gpu test-dsa-gpu test-mla-prefill-gpu test-attnres-gpu test-layer-gpu; do
    left=$(left_s)
    [ "$left" -gt 10 ] || { echo "no time left for $t"; continue; }
    echo "== $t"
    timeout "$left" "$B/tests/kernels/$t" > "$M/$t.log" 2>&1
    rc=$?
    tail -n 40 "$M/$t.log"
    echo "== $t: exit $rc"
    [ $rc = 0 ] && rm -f "$M/$t.log"
  done
} >> "$M/k3-tests.txt" 2>&1
fi
if [ "$PHASE" != tests ]; then
san() {  # tool suite filter-var filter seconds
  local l lim=$5 s rc; l=$(left_s); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 $2 '$4': no time left"; return; }
  s=$(date +%s)
  env "$3=$4" timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$B/tests/kernels/test-$2-gpu" > "$M/san.log" 2>&1
  rc=$?
  echo "== $1 test-$2-gpu $3='$4': exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san.log" | tail -1)"
  grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED)" "$M/san.log" | tail -8 | sed 's/^/    /'
  [ $rc = 0 ] || grep -E "Invalid|Race|hazard|rror" "$M/san.log" | head -12 | sed 's/^/    /'
}
{
  while read -r tool suite var filter secs; do
    case "$tool" in ''|'#'*) continue ;; esac
    san "$tool" "$suite" "$var" "$filter" "$secs"
  done < "$SAN"
} >> "$M/k3-tests.txt" 2>&1
rm -f "$M/san.log"
fi
kill "$SMI_PID"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf /tmp/k3-misc.keep; cp -r "$M" /tmp/k3-misc.keep; rm -rf "$M"
grep -E "^== |^\[  (FAILED|PASSED)|SUMMARY" /tmp/k3-misc.keep/k3-tests.txt
grep -E "^grouped_gemm" "$OUT/k3-bench.txt" | head -24
grep -E "GPU 0 clocks" "$OUT/k3-bench.txt" "$OUT/k3-slice.txt" 2>/dev/null
grep -E "touched experts" "$OUT/k3-slice.txt" 2>/dev/null
tail -n 20 "$OUT/k3-slice.txt" 2>/dev/null
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
