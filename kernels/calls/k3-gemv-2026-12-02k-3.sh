#!/usr/bin/env bash
# Staged for the lead, NOT run by helper i24b (its two calls are spent): branch i24b's final binaries
# (the fused MXFP4 gemv by programmatic dependent launch where its grid has fewer than 4 waves, the
# default after call 2) on one nvidia-h200, <= 120 s: test-moe-gpu '*gemv_f16*' '*layer_decode*'
# '*grouped_gemv*' (float64, fresh random inputs, poisoned outputs; now every small fused case runs
# by PDL by default), `k3-bench --only gemv` once (the `mxfp4_*` rows are the new default; `f16w8pl0*`
# the plain launch before, back to back; `f16afirst*` / `f16afpdl*` the opt-in K3_GEMV_F16_AFIRST=1, the
# activation copies before the first weight loads, never measured: compare with `f16w8pl0b` /
# `f16fpdlb` / `f16fpdlc` beside them), `k3-bench --only moe --quick` (the MoE decode rows in a process
# of their own); nvidia-smi every 500 ms. What it should show: tests PASSED (test_gemv_f16's 20 modes,
# test_gemv_f16_scales' 7); w2 B = 1's `mxfp4_w2 ... back to back` line >= 63 % of the copy ceiling,
# `f16w8pl0b_w2` 2-3 points under `f16fpdlb_w2`; if `f16afpdl_w2` beats `f16fpdlc_w2` by more than the
# fpdl/w8pl0 pairs' spread, AFIRST is worth a default (at B = 1).
# Then compute-sanitizer memcheck and racecheck of '*gemv_f16_scales' (its 7 modes: the fused kernel
# with 8 / 4 / 2 warps, PDL, 3 rows a pass with the activation copies first, the head prefetch).
#   run(carry=[".gpu/h24b"], command="PACK=.gpu/h24b LIMIT=115 bash .gpu/h24b/k3-gemv-2026-12-02k-3.sh", timeout_s=120)
# $OUT gets: k3-bench.txt k3-tests.txt k3-moe.txt k3-sanitizer.txt k3-misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h24b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-115}
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
export PATH=$PATH:/usr/local/cuda/bin
for t in memcheck racecheck; do
  l=$(left); [ "$l" -gt 30 ] || { echo "no time for $t"; continue; }
  echo "== $t *gemv_f16_scales"
  MOE_TEST_FILTER='*gemv_f16_scales' timeout 25 compute-sanitizer --tool $t --error-exitcode 9 "$PACK/test-moe-gpu" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|FAILED|PASSED" | tail -6
  echo "== $t: exit ${PIPESTATUS[0]}"
done > "$OUT/k3-sanitizer.txt" 2>&1
l=$(left); [ "$l" -gt 12 ] && { timeout $(( l - 4 )) "$PACK/k3-bench" --only moe --quick -o "$M/k3-moe.csv" > "$OUT/k3-moe.txt" 2>&1; echo "== moe: exit $?" >> "$OUT/k3-moe.txt"; }
kill "$smi"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^\[  (FAILED|PASSED)|^== " "$OUT/k3-tests.txt"
grep -E "copy ceiling|^== |(mxfp4_w2|f16w8pl0[bc]?_w2|f16fpdl[bc]?_w2|f16af[a-z]*_w2|mxfp4_w13) +weight bytes, back" "$OUT/k3-bench.txt" | cut -c1-200
cat "$OUT/k3-sanitizer.txt"
echo "call: $(( $(date +%s) - t0 )) s"
