#!/usr/bin/env bash
# One device call (nvidia-h200, ~1 minute) for the overlapped KDA prefill (2026-12-01l): the
# recurrent kernel beside the intra one (K3_KDA_PREFILL=overlap) against the serial pair. It ran
# commit b327c30, where overlap was the default: "default path" below was the overlapped one then;
# since, serial is the default and test_prefill_overlap asks for overlap itself.
# Runs: kda-bench --only prefill --quick six times, serial and overlap alternating (T = 4K, 16K at
# H = 96, B = 1, FP32 and BF16 state; 4 x 4096 and varlen rows); test-kda-gpu (all cases, default
# path), its prefill cases under the serial path; compute-sanitizer memcheck on test_prefill_overlap
# and test_prefill_varlen; nvidia-smi sampled every 500 ms.
# Staged beforehand: kda-bench, test-kda-gpu (stripped) in $PACK/pack.tar.xz, libcmocka.so.0 beside.
# From the repository root:  PACK=.gpu/h17n bash .gpu/h17n/h17n.sh
# $OUT gets: log.txt (summary), bench.txt, tests.txt, memcheck.txt, misc.tar.xz (CSVs, nvidia-smi).
set -u
PACK=${PACK:-.gpu/h17n}
OUT=${OUT:-$PWD/h17n-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -x "$PACK/kda-bench" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack"; exit 2; }
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
BENCH=$PACK/kda-bench
TEST=$PACK/test-kda-gpu
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
} > "$M/env.txt" 2>&1
cat "$M/env.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/smi.csv" 2>&1 &
smi=$!
el() { echo $(( $(date +%s) - t0 )); }

echo "== bench (serial / overlap alternating) t=$(el)s" | tee -a "$OUT/bench.txt"
for i in 1 2 3; do
  for m in serial overlap; do
    echo "### $m $i $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)" >> "$OUT/bench.txt"
    K3_KDA_PREFILL=$m timeout 40 "$BENCH" --only prefill --quick -o "$M/bench-$m-$i.csv" >> "$OUT/bench.txt" 2>&1
    echo "kda-bench $m $i rc=$? t=$(el)s"
  done
done
grep -E "^prefill" "$OUT/bench.txt"

echo "== test-kda-gpu (default path) t=$(el)s"
timeout 100 "$TEST" > "$OUT/tests.txt" 2>&1
echo "test-kda-gpu rc=$? t=$(el)s"
grep -E "^\[ *(OK|FAILED|PASSED|ERROR) *\]|overlapped|differ" "$OUT/tests.txt"
echo "### serial path, prefill cases" >> "$OUT/tests.txt"
K3_KDA_PREFILL=serial KDA_TEST_FILTER='*prefill*' timeout 60 "$TEST" >> "$OUT/tests.txt" 2>&1
echo "test-kda-gpu serial prefill rc=$? t=$(el)s"

echo "== memcheck t=$(el)s"
for f in test_prefill_overlap test_prefill_varlen; do
  echo "### memcheck $f" >> "$OUT/memcheck.txt"
  KDA_TEST_FILTER=$f timeout 60 compute-sanitizer --tool memcheck "$TEST" >> "$OUT/memcheck.txt" 2>&1
  echo "memcheck $f rc=$? $(tail -1 "$OUT/memcheck.txt") t=$(el)s"
done
kill "$smi" 2>/dev/null
tar cJf "$OUT/misc.tar.xz" -C "$OUT" misc && rm -rf "$M"
echo "done t=$(el)s"
