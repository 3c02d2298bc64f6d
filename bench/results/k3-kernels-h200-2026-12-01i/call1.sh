#!/usr/bin/env bash
# Device call of issue 17 item 1 (the materialized MLA causal prefill, branch i17j; one nvidia-h200,
# at most ~270 s of work): test-mla-prefill-gpu, compute-sanitizer memcheck + racecheck on its small
# cases, `k3-bench --only mla_prefill` under `k3sim trace capture` (the attention_prefill points at
# H = 96), then the four-layer slice at prefill T = 4K and 16K (and one decode point, B = 1 at 8K:
# k3-slice needs one) under capture (kernels/slice/run-slice.sh); nvidia-smi every 500 ms throughout.
# From the repository root:  PACK=.gpu/h17j bash .gpu/h17j/call1.sh (run as call.sh)
# $OUT gets: k3-tests.txt k3-bench.txt k3-prefill.db.xz k3-slice.txt k3-slice.csv k3-slice.db.xz
# k3-misc.tar.xz (k3-env.txt k3-smi.csv k3-bench.csv).
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
{
  echo "== test-mla-prefill-gpu"
  s=$(date +%s)
  timeout 90 "$T" 2>&1
  echo "== test-mla-prefill-gpu: exit $? in $(( $(date +%s) - s )) s"
  if command -v compute-sanitizer >/dev/null 2>&1; then
    san() {  # tool filter seconds
      local s; s=$(date +%s)
      MLA_PREFILL_TEST_FILTER="$2" timeout "$3" compute-sanitizer --tool "$1" --error-exitcode 9 "$T" > "$M/.log" 2>&1
      local rc=$?
      echo "== $1 '$2': exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/.log" | tail -1)"
      [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|Hazard" "$M/.log" | head -12 | sed 's/^/    /'
    }
    san memcheck '*one_block*' 40
    san memcheck '*blocks_with_prefix*' 60
    san memcheck '*gather*' 40
    san racecheck '*one_block*' 60
    san racecheck '*one_token*' 40
  else
    echo "no compute-sanitizer"
  fi
} > "$OUT/k3-tests.txt" 2>&1
rm -f "$M/.log"
echo "tests done at $(( $(date +%s) - t0 )) s"
grep -E "^== |^\[  (FAILED|PASSED)|rel err|max abs" "$OUT/k3-tests.txt" | head -60
{
  s=$(date +%s)
  timeout 60 "$B/cli/k3sim" trace capture -o "$OUT/k3-prefill.db" --force -- \
    "$B/kernels/k3-bench" --only mla_prefill -o "$M/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-prefill.db" --top 12
} > "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-prefill.db"
echo "bench done at $(( $(date +%s) - t0 )) s"
grep -E "^mla_prefill|capture exit|copy ceiling" "$OUT/k3-bench.txt"
left=$(( LIMIT - 10 - ($(date +%s) - t0) ))
if [ "$left" -gt 45 ]; then
  sed -i "s/timeout 540 /timeout $left /" "$PACK/run-slice.sh"
  OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --prefill 4096,16384 --decode 1:8192 --reps 3 > /dev/null 2>&1
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
