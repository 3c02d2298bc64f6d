#!/usr/bin/env bash
# Staged for the lead, NOT run by helper i24b (its two calls are spent): branch i24b's final binaries
# (the fused MXFP4 gemv by programmatic dependent launch where its grid has fewer than 4 waves, the
# default after call 2) on one nvidia-h200, <= 80 s: test-moe-gpu '*gemv_f16*' '*layer_decode*'
# '*grouped_gemv*' (float64, fresh random inputs, poisoned outputs; now every small fused case runs
# by PDL by default), `k3-bench --only gemv` once (the `mxfp4_*` rows are the new default; `f16w8pl0*`
# the plain launch before, back to back), `k3-bench --only moe --quick` (the MoE decode rows in a
# process of their own); nvidia-smi every 500 ms. What it should show: tests PASSED; w2 B = 1's
# `mxfp4_w2 ... back to back` line >= 63 % of the copy ceiling, its `f16w8pl0b_w2` 2-3 points lower.
#   run(carry=[".gpu/h24b"], command="PACK=.gpu/h24b LIMIT=75 bash .gpu/h24b/k3-gemv-2026-12-02k-3.sh", timeout_s=80)
# $OUT gets: k3-bench.txt k3-tests.txt k3-moe.txt k3-misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h24b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-75}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -x "$PACK/k3-bench" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack"; exit 2; }
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
{
  for f in '*gemv_f16*:30' '*layer_decode*:12' '*grouped_gemv*:10'; do
    echo "== test-moe-gpu ${f%:*}"
    MOE_TEST_FILTER="${f%:*}" timeout "${f#*:}" "$PACK/test-moe-gpu" 2>&1
    echo "== test-moe-gpu ${f%:*}: exit $?"
  done
} > "$OUT/k3-tests.txt" 2>&1
K3_BENCH_GEMV_TRACE=$M/k3-trace.csv timeout 30 "$PACK/k3-bench" --only gemv -o "$M/k3-bench.csv" > "$OUT/k3-bench.txt" 2>&1
echo "== k3-bench --only gemv: exit $? at $(( $(date +%s) - t0 )) s" >> "$OUT/k3-bench.txt"
l=$(left); [ "$l" -gt 12 ] && { timeout $(( l - 4 )) "$PACK/k3-bench" --only moe --quick -o "$M/k3-moe.csv" > "$OUT/k3-moe.txt" 2>&1; echo "== moe: exit $?" >> "$OUT/k3-moe.txt"; }
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== " "$OUT/k3-tests.txt"
grep -E "copy ceiling|^== |(mxfp4_w2|f16w8pl0b?_w2|f16fpdlb?_w2|mxfp4_w13) +weight bytes, back" "$OUT/k3-bench.txt" | cut -c1-200
echo "call: $(( $(date +%s) - t0 )) s"
