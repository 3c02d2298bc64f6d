#!/usr/bin/env bash
# Second device call of issue 17's sixth round (one nvidia-h200, ~2 minutes): call 1 (01k) measured
# round 6's AttnRes at T >= 4096 no faster than the kernel it replaced (333 us, 50 % of copy at 4K;
# two CTAs a token, 72 KiB of shared memory each, three CTAs an SM load, reduce and store in lock
# step). Here the cluster width at large T as an A/B (K3_ATTNRES_CLUSTER=2, 4, 8: 72, 36, 18 KiB a
# CTA, 3, 6, 12 CTAs an SM), each k3-bench --only attnres twice; test-attnres-gpu under each forced
# width (1, 4, 8) and memcheck under 4 and 8; nvidia-smi sampled every 500 ms.
# From the repository root:  PACK=.gpu/h17f bash .gpu/h17f/k3-2026-12-01l.sh
# $OUT gets: k3-tests.txt k3-bench.txt k3-misc.tar.xz (k3-env.txt k3-smi.csv k3-bench-*.csv).
set -u
PACK=${PACK:-.gpu/h17f}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
T=$B/tests/kernels
{
  for cs in default 1 4 8; do
    echo "== attnres-gpu K3_ATTNRES_CLUSTER=$cs"
    if [ $cs = default ]; then timeout 60 "$T/test-attnres-gpu"; else K3_ATTNRES_CLUSTER=$cs timeout 60 "$T/test-attnres-gpu"; fi 2>&1 |
      grep -E "rel err|^\[ *(OK|FAILED|PASSED)|Failure"
    echo "== attnres-gpu $cs: exit ${PIPESTATUS[0]}"
  done
  for cs in 4 8; do
    echo "== memcheck attnres K3_ATTNRES_CLUSTER=$cs"
    K3_ATTNRES_CLUSTER=$cs timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$T/test-attnres-gpu" 2>&1 |
      grep -E "ERROR SUMMARY|Invalid|FAILED|PASSED"
    echo "== memcheck $cs: exit ${PIPESTATUS[0]}"
  done
} > "$OUT/k3-tests.txt" 2>&1
{
  for rep in 1 2; do
    for cs in default 2 4 8; do
      echo "== k3-bench --only attnres K3_ATTNRES_CLUSTER=$cs (run $rep)"
      f=$M/k3-bench-attnres-$cs-$rep.csv
      if [ $cs = default ]; then timeout 60 "$B/kernels/k3-bench" --only attnres -o "$f" >/dev/null 2>&1
      else K3_ATTNRES_CLUSTER=$cs timeout 60 "$B/kernels/k3-bench" --only attnres -o "$f" >/dev/null 2>&1; fi
      echo "exit $?"
      grep -E "^attnres" "$f" | cut -d, -f3,4,7,14,16
    done
  done
} > "$OUT/k3-bench.txt" 2>&1
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^== .*exit|ERROR SUMMARY" "$OUT/k3-tests.txt"
grep -E "FAILED|Failure" "$OUT/k3-tests.txt" | head
cat "$OUT/k3-bench.txt"
echo "call: $(( $(date +%s) - t0 )) s"
