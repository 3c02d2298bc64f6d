#!/usr/bin/env bash
# Device call of issue 17 item 5, round 2026-12-01w (one nvidia-h200, <= 150 s): the overlapped KDA
# prefill with claimable records (safe by construction: a recurrent CTA computes any record no
# CTA has claimed itself, so it never waits on work nobody runs) against the serial path and the
# previous overlapped protocol (old binary, built from the round's base commit), back to back.
# Runs: test-kda-gpu (all cases, incl. the new test_prefill_claim and the 4-mode overlap test);
# kda-bench --only prefill on T = 1K, 4K, 16K x H = 12, 24, 48, 96 (FP32), BF16 at H = 96,
# 4 x 4K and two varlen batches, under: serial, overlap (claim after 20 us), overlap claiming at
# once (K3_KDA_STEAL_US=0), the default (overlap_rule()), the old binary's serial and overlapped
# paths, then serial and overlap again; compute-sanitizer memcheck on test_prefill_claim and
# test_prefill_overlap, racecheck on test_prefill_claim (small shapes); the claiming kernel's SASS
# (local-memory traffic); nvidia-smi sampled every 500 ms.
# Staged beforehand: kda-bench, kda-bench-old, test-kda-gpu (stripped) in $PACK/pack.tar.xz,
# libcmocka.so.0 beside. From the repository root:  PACK=.gpu/h19c bash .gpu/h19c/k3-2026-12-01w.sh
# $OUT gets: log.txt (from the caller's tee), bench.txt, tests.txt, sanitizer.txt, misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h19c}
OUT=${OUT:-$PWD/h19c-out}
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

# name:binary:environment (comma-separated assignments; "-" for none)
CONFIGS="serial:new:K3_KDA_PREFILL=serial overlap:new:K3_KDA_PREFILL=overlap
claim0:new:K3_KDA_PREFILL=overlap,K3_KDA_STEAL_US=0 default:new:-
old-serial:old:- old-overlap:old:K3_KDA_PREFILL=overlap
serial:new:K3_KDA_PREFILL=serial overlap:new:K3_KDA_PREFILL=overlap"
echo "== bench t=$(el)s"
i=0
for c in $CONFIGS; do
  i=$((i + 1))
  name=${c%%:*} rest=${c#*:}
  bin=${rest%%:*} envs=${rest#*:}
  [ "$envs" = "-" ] && envs=""
  [ "$bin" = old ] && b=$OLD || b=$BENCH
  echo "### $name ($bin; $envs) $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)" >> "$OUT/bench.txt"
  env ${envs//,/ } timeout 40 "$b" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
    -o "$M/bench-$i-$name.csv" >> "$OUT/bench.txt" 2>&1
  echo "kda-bench $name rc=$? t=$(el)s"
done
grep -E "^(###|prefill)" "$OUT/bench.txt" | sed -E 's/ +path=.*//'

echo "== sanitizers t=$(el)s"
for tc in "memcheck test_prefill_claim" "racecheck test_prefill_claim" "memcheck test_prefill_overlap"; do
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
