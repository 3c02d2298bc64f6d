#!/usr/bin/env bash
# Device call 5 of round 13 (2026-12-01y, one nvidia-h200, ~80 s): calls 3-4's kernels, the bench with
# the decode-size expert gemv timed without the L2 read before each launch (its token rows and the
# grouping's tables are hot in a step), under capture, and the slice under capture again (a third run
# of the same kernels: calls 3, 4 and 5 validate against each other's fits). Then the SASS around
# the shared-memory accesses racecheck named in kda_decode_ring<float, 1, 16> (call 2: writes at
# +0x4230, +0x43f0, +0x45b0; reads at +0x1f20, +0x1f50, +0x1f60, +0x1f70), to tell which they are.
# From the repository root:  PACK=.gpu/r13d bash .gpu/r13d/k3-2026-12-01y5.sh
set -u
PACK=${PACK:-.gpu/r13d}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
. "$PACK/device-env.sh" || . kernels/calls/device-env.sh
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
{
  s=$(date +%s)
  timeout 100 "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma -o "$M/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
} > "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-h200.db"
echo "bench done at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-bench.txt")"
sed -i "s/timeout 540 /timeout 60 /" "$PACK/run-slice.sh"
OUT=$OUT BUILD=$B bash "$PACK/run-slice.sh" --reps 3 > /dev/null 2>&1
echo "slice exit $? at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/k3-slice.txt")"
{
  CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
  echo "cuobjdump: $CUOBJ"
  "$CUOBJ" -sass "$B/tests/kernels/test-kda-gpu" 2>&1 | awk '/Function : .*kda_decode_ringIfLi1ELi16E/ {on=1} on && /Function : / && !/kda_decode_ringIfLi1ELi16E/ {on=0} on' > "$M/ring-sass.txt"
  wc -l "$M/ring-sass.txt"
  for pc in 1f00 1f10 1f20 1f30 1f40 1f50 1f60 1f70 1f80 4210 4220 4230 4240 43d0 43e0 43f0 4400 4590 45a0 45b0 45c0; do
    grep -E "/\*$pc\*/" "$M/ring-sass.txt"
  done
} > "$M/ring-pcs.txt" 2>&1
xz -f "$M/ring-sass.txt"
kill "$SMI_PID"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
cat "$M/ring-pcs.txt"
rm -rf "$M"
grep -E "GPU 0 clocks" "$OUT/k3-bench.txt" "$OUT/k3-slice.txt" 2>/dev/null
grep -E "^grouped_gemm .*gemv" "$OUT/k3-bench.txt" | head -8
tail -n 20 "$OUT/k3-slice.txt" 2>/dev/null
echo "call: $(( $(date +%s) - t0 )) s"
