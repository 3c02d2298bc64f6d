#!/usr/bin/env bash
# Device call 2 of the 2026-12-02b gemv round (helper i22a, <= 100 s; NOT RUN: the session's device
# budget was below the helpers' 750 s): a pack of the branch's final code (k3-bench, test-moe-gpu as
# in k3-gemv-2026-12-02b.sh), test-moe-gpu '*gemv_f16*' '*layer_decode*' (the final default policy:
# fused up to 2 rows a group), `k3-bench --only gemv` (run-to-run spread of the fused / two-kernel
# rows) and with --warm-l2 (no 4x-L2 read before each timed launch: how much of a
# single launch's time above its graph-replay time comes from a cold L2), nvidia-smi every 500 ms.
#   run(carry=[".gpu/h22a"], command="PACK=.gpu/h22a bash .gpu/h22a/k3-gemv-2026-12-02b-2.sh", timeout_s=100)
# $OUT gets: k3-bench.txt k3-bench-warm.txt k3-misc.tar.xz (k3-tests.txt, k3-smi.csv, the CSVs).
set -u
PACK=${PACK:-.gpu/h22a}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
[ -x "$PACK/k3-bench" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack"; exit 2; }
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
for f in '*gemv_f16*' '*layer_decode*'; do
  echo "== test-moe-gpu $f"; MOE_TEST_FILTER="$f" timeout 20 "$PACK/test-moe-gpu" 2>&1; echo "== exit $?"
done > "$M/k3-tests.txt" 2>&1
grep -E "^== |PASSED|FAILED" "$M/k3-tests.txt"
timeout 25 "$PACK/k3-bench" --only gemv -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "== k3-bench: exit $?" >> "$OUT/k3-bench.txt"
timeout 25 "$PACK/k3-bench" --only gemv --warm-l2 -o "$M/k3-bench-warm.csv" > "$OUT/k3-bench-warm.txt" 2>&1
echo "== k3-bench --warm-l2: exit $?" >> "$OUT/k3-bench-warm.txt"
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
for f in k3-bench k3-bench-warm; do echo "== $f"; grep -E "copy ceiling|weight bytes|^== " "$OUT/$f.txt" | cut -c1-100; done
