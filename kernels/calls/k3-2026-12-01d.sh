#!/usr/bin/env bash
# Second device call of issue 17's third round (one nvidia-h200, ~6 minutes), same build as
# k3-2026-12-01c.sh (nothing recompiled): the GPU tests' full logs (the first call returned only
# 8 files and lost them), the FULL k3-bench grid under capture (--require-wgmma: BF16 and MXFP4
# experts at B = 1, 16, 64, 256 and T = 4K, 16K, dense GEMMs at m = 1 .. 16K, MLA, DSA, AttnRes),
# and kda-bench --quick, nvidia-smi sampled every 500 ms. Its bench capture calibrates the preset
# that the slice of the other call (k3-2026-12-01c) is validated against: held out by run.
# From the repository root:  PACK=.gpu/h17 bash .gpu/h17/k3-2026-12-01d.sh
# $OUT gets exactly 8 files (a call returns no more): k3-env.txt k3-tests.txt k3-bench.csv
# k3-bench.txt k3-h200.db.xz kda-bench.csv kda-bench.txt k3-smi.csv.
set -u
PACK=${PACK:-.gpu/h17}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
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
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$OUT/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$OUT/k3-smi.csv" 2>&1 &
smi=$!
pass=0 fail=0
{
  for t in mla moe attnres dsa layer kda; do
    s=$(date +%s)
    echo "== $t-gpu"
    timeout 150 "$B/tests/kernels/test-$t-gpu" 2>&1
    rc=$?
    echo "== $t-gpu: exit $rc, $(( $(date +%s) - s )) s"
    [ $rc = 0 ] && pass=$((pass + 1)) || fail=$((fail + 1))
  done
  echo "gpu suite: $pass passed, $fail failed"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  s=$(date +%s)
  timeout 330 "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma -o "$OUT/k3-bench.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
} > "$OUT/k3-bench.txt" 2>&1
xz -T0 -f "$OUT/k3-h200.db"
echo "bench done at $(( $(date +%s) - t0 )) s"
{
  s=$(date +%s)
  timeout 60 "$B/kernels/kda-bench" --quick -o "$OUT/kda-bench.csv"
  echo "kda-bench exit $? in $(( $(date +%s) - s )) s"
} > "$OUT/kda-bench.txt" 2>&1
kill "$smi"
grep -E "^== .*exit|gpu suite|SKIPPED|FAILED" "$OUT/k3-tests.txt"
grep -E "^tiled GEMM|^grouped_gemm|capture exit" "$OUT/k3-bench.txt"
echo "call: $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
