#!/usr/bin/env bash
# Second device call of issue 17 item 1 (branch i17j; one nvidia-h200, at most ~270 s of work): the
# materialized MLA prefill's four variants (QK^T on mma.sync or wgmma, 64- or 128-row blocks):
# test-mla-prefill-gpu (every variant against float64), compute-sanitizer memcheck on small cases of
# each and racecheck on the mma.sync ones, `k3-bench --only mla_prefill` under each variant (no
# capture), then with the fastest variant at T = 16K among those that passed: the bench under
# `k3sim trace capture` and the slice at prefill T = 4K, 16K (+ decode B = 1 at 8K) under capture.
# nvidia-smi every 500 ms throughout.
# From the repository root:  PACK=.gpu/h17j bash .gpu/h17j/call2.sh
set -u
PACK=${PACK:-.gpu/h17j}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-270}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if ldd "$K3SIM_CAPTURE_LIB" 2>/dev/null | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
T=$B/tests/kernels/test-mla-prefill-gpu
VARIANTS="mma128 mma64 wgmma128 wgmma64"
passed=""
{
  for v in $VARIANTS; do
    s=$(date +%s)
    MLA_PREFILL_TEST_VARIANTS=$v timeout 60 "$T" > "$M/test-$v.txt" 2>&1
    rc=$?
    echo "== test-mla-prefill-gpu $v: exit $rc in $(( $(date +%s) - s )) s"
    grep -E "^\[  (FAILED|PASSED)|rel err|max abs|skipped|Error|error" "$M/test-$v.txt" | sed 's/^/    /' | head -40
    if [ $rc = 0 ] && ! grep -q "skipped" "$M/test-$v.txt"; then passed="$passed $v"; fi
  done
  echo "passed:$passed"
  if command -v compute-sanitizer >/dev/null 2>&1; then
    san() {  # tool filter variants seconds
      local s; s=$(date +%s)
      MLA_PREFILL_TEST_FILTER="$2" MLA_PREFILL_TEST_VARIANTS="$3" timeout "$4" \
        compute-sanitizer --tool "$1" --error-exitcode 9 "$T" > "$M/.log" 2>&1
      local rc=$?
      echo "== $1 '$2' $3: exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/.log" | tail -1)"
      [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|Hazard" "$M/.log" | head -12 | sed 's/^/    /'
    }
    san memcheck '*one_block*' mma128,mma64,wgmma128,wgmma64 60
    san memcheck '*blocks_with_prefix*' mma128,mma64,wgmma128,wgmma64 60
    san memcheck '*gather*' mma128 30
    san racecheck '*one_block*' mma128,mma64 60
    san racecheck '*one_block*' wgmma128 60
  else
    echo "no compute-sanitizer"
  fi
} > "$OUT/k3-tests.txt" 2>&1
rm -f "$M/.log"
echo "tests done at $(( $(date +%s) - t0 )) s"
grep -E "^== |^passed" "$OUT/k3-tests.txt"
best=""; best_us=""
{
  for v in $VARIANTS; do
    K3_MLA_PREFILL_KERNEL=${v%%[0-9]*} K3_MLA_PREFILL_BM=${v##*[a-z]} timeout 40 \
      "$B/kernels/k3-bench" --only mla_prefill -o "$M/k3-bench-$v.csv" > "$M/bench-$v.txt" 2>&1
    echo "== k3-bench --only mla_prefill, $v: exit $?"
    grep -E "^mla_prefill" "$M/bench-$v.txt"
  done
} > "$OUT/k3-bench.txt" 2>&1
for v in $passed; do
  us=$(awk -F, '$1 == "mla_prefill" && $3 == "b=1 heads=96 t=16384 ctx=0" { print $4 }' "$M/k3-bench-$v.csv" 2>/dev/null)
  [ -n "$us" ] || continue
  if [ -z "$best" ] || awk -v a="$us" -v b="$best_us" 'BEGIN { exit !(a < b) }'; then best=$v; best_us=$us; fi
done
[ -n "$best" ] || best=mma128
export K3_MLA_PREFILL_KERNEL=${best%%[0-9]*} K3_MLA_PREFILL_BM=${best##*[a-z]}
echo "chosen: $best ($best_us us at T = 16K): K3_MLA_PREFILL_KERNEL=$K3_MLA_PREFILL_KERNEL K3_MLA_PREFILL_BM=$K3_MLA_PREFILL_BM" | tee -a "$OUT/k3-bench.txt"
{
  s=$(date +%s)
  timeout 60 "$B/cli/k3sim" trace capture -o "$OUT/k3-prefill.db" --force -- \
    "$B/kernels/k3-bench" --only mla_prefill -o "$M/k3-bench.csv"
  echo "capture ($best) exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-prefill.db" --top 12
} >> "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-prefill.db"
echo "bench done at $(( $(date +%s) - t0 )) s"
grep -E "^== |^mla_prefill|capture|chosen" "$OUT/k3-bench.txt"
left=$(( LIMIT - 10 - ($(date +%s) - t0) ))
if [ "$left" -gt 45 ]; then
  sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
  OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --prefill 4096,16384 --decode 1:8192 --reps 6 > /dev/null 2>&1
  echo "slice exit $? at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-slice.txt")"
else
  echo "no time left for the slice"
fi
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "prefill|gemm kernels" "$OUT/k3-slice.txt" 2>/dev/null | head -20
grep -E "^prefill" "$OUT/k3-slice.csv" 2>/dev/null
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
