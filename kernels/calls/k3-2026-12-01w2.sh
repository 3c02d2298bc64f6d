#!/usr/bin/env bash
# Second device call of round 2026-12-01w (one nvidia-h200, <= 150 s), after call 1
# (k3-2026-12-01w.sh) showed (a) the claiming recurrent kernel staging records only at the frontier
# once it had waited there (no prefetch: 2.5 ms at 16K), fixed: after an awaited record thread 0
# also stages the written ones beyond it; (b) the serial recurrent kernel ~11 % slower than 01r's code
# (intra_params inside recur_params made its code take the parameter block's address: 128
# registers), fixed: the serial kernel is the 01r code again, the claiming kernel takes its own
# argument; (c) records computed by a recurrent CTA differ from the intra kernel's in the last bit
# (FMA contraction of the inlined code): the overlap test compares those modes to the float64
# tolerance, the no-claim mode still bit for bit.
# Runs: test-kda-gpu (all cases); kda-bench --only prefill --quick (T = 4K, 16K at H = 96, BF16,
# 4 x 4K, varlen) back to back for the old binary (01r base: serial, overlapped) and the new one
# (serial, overlapped, claiming at once, default), twice; the new binary's grid (T = 1K, 4K, 16K x
# H = 12..96) serial, overlapped, default; compute-sanitizer memcheck on test_prefill_claim,
# test_prefill_overlap, test_prefill_variants, racecheck on test_prefill_claim; the claiming
# kernel's SASS; nvidia-smi sampled every 500 ms.
# Staged beforehand: kda-bench, kda-bench-old, test-kda-gpu (stripped) in $PACK/pack.tar.xz,
# libcmocka.so.0 beside. From the repository root:  PACK=.gpu/h19c bash .gpu/h19c/k3-2026-12-01w2.sh
# $OUT gets: log.txt (from the caller's tee), bench.txt, tests.txt, sanitizer.txt, misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h19c}
OUT=${OUT:-$PWD/h19c-out2}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -x "$PACK/kda-bench" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack"; exit 2; }
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
BENCH=$PACK/kda-bench
OLD=$PACK/kda-bench-old
TEST=$PACK/test-kda-gpu
el() { echo $(( $(date +%s) - t0 )); }
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
} > "$M/env.txt" 2>&1
cat "$M/env.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/smi.csv" 2>&1 &
smi=$!

echo "== test-kda-gpu t=$(el)s"
timeout 60 "$TEST" > "$OUT/tests.txt" 2>&1
echo "test-kda-gpu rc=$? t=$(el)s"
grep -E "^\[ *(OK|FAILED|PASSED|ERROR) *\]|differ|Failure|error" "$OUT/tests.txt"

# name:binary:options:environment (options "+"-separated, environment comma-separated; "-" for none)
Q=--quick
G=--prefill-t+1024,4096,16384+--prefill-h+12,24,48,96
CONFIGS="old-serial:old:$Q:- old-overlap:old:$Q:K3_KDA_PREFILL=overlap
serial:new:$Q:K3_KDA_PREFILL=serial overlap:new:$Q:K3_KDA_PREFILL=overlap
claim0:new:$Q:K3_KDA_PREFILL=overlap,K3_KDA_STEAL_US=0 default:new:$Q:-
old-overlap:old:$Q:K3_KDA_PREFILL=overlap overlap:new:$Q:K3_KDA_PREFILL=overlap default:new:$Q:-
old-serial:old:$Q:- serial:new:$Q:K3_KDA_PREFILL=serial claim0:new:$Q:K3_KDA_PREFILL=overlap,K3_KDA_STEAL_US=0
grid-serial:new:$G:K3_KDA_PREFILL=serial grid-overlap:new:$G:K3_KDA_PREFILL=overlap grid-default:new:$G:-
grid-claim0:new:$G:K3_KDA_PREFILL=overlap,K3_KDA_STEAL_US=0"
echo "== bench t=$(el)s"
i=0
for c in $CONFIGS; do
  i=$((i + 1))
  IFS=: read -r name bin opts envs <<< "$c"
  [ "$envs" = "-" ] && envs=""
  [ "$bin" = old ] && b=$OLD || b=$BENCH
  echo "### $name ($bin; ${opts//+/ }; $envs) $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)" >> "$OUT/bench.txt"
  env ${envs//,/ } timeout 40 "$b" --only prefill ${opts//+/ } -o "$M/bench-$i-$name.csv" >> "$OUT/bench.txt" 2>&1
  echo "kda-bench $name rc=$? t=$(el)s"
done
grep -E "^(###|prefill)" "$OUT/bench.txt" | sed -E 's/ +path=.*//'

echo "== sanitizers t=$(el)s"
for tc in "memcheck test_prefill_claim" "racecheck test_prefill_claim" "memcheck test_prefill_overlap" \
  "memcheck test_prefill_variants"; do
  set -- $tc
  echo "### $1 $2" >> "$OUT/sanitizer.txt"
  KDA_TEST_FILTER=$2 timeout 30 compute-sanitizer --tool "$1" --error-exitcode 9 "$TEST" >> "$OUT/sanitizer.txt" 2>&1
  echo "$1 $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.txt" | tail -1) t=$(el)s"
done

echo "== sass t=$(el)s"
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "$CUOBJ" ]; then
  "$CUOBJ" -sass "$BENCH" 2>/dev/null | awk '/Function : .*recurrent_claim_kernelIfLi3E/{p=1} /Function : /&&!/recurrent_claim_kernelIfLi3E/{p=0} p' > "$M/sass-claim-f32-3.txt"
  "$CUOBJ" -sass "$BENCH" 2>/dev/null | awk '/Function : .*recurrent_kernelIfLi4ELi3E/{p=1} /Function : /&&!/recurrent_kernelIfLi4ELi3E/{p=0} p' > "$M/sass-serial-f32-4w3.txt"
  "$CUOBJ" --dump-resource-usage "$BENCH" 2>/dev/null | grep -A1 -E "recurrent|intra" > "$M/resources.txt"
  echo "claim kernel: $(wc -l < "$M/sass-claim-f32-3.txt") SASS lines, $(grep -cE 'LDL|STL' "$M/sass-claim-f32-3.txt") LDL/STL"
else
  echo "no cuobjdump"
fi
kill "$smi" 2>/dev/null
tar cJf "$OUT/misc.tar.xz" -C "$OUT" misc && rm -rf "$M"
echo "done t=$(el)s"
