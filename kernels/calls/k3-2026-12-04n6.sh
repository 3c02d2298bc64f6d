#!/usr/bin/env bash
# Issue 17, 2026-12-04n call 6, one nvidia-h200: the default grouped MXFP4 kernel (wide2rqp) of two
# builds, processes alternating 3 times: OLD = e5ae184's k3-bench (04m's pack; the conversion's
# rotations by 2 and 6 as SHF funnel shifts), NEW = this session's (the same words by left shifts,
# IMAD.SHL on the FMA pipe). Each process: k3-bench --only moe_prefill, MXFP4 rows (T = 16K and
# 4K, w13 and w2) with K3_BENCH_WG_KERNELS=wide2rqp, each row beside cuBLASLt BF16.
# ORDER="NEW OLD" runs NEW first in each round; ROUNDS (default 3). The raw files are packed into
# $OUT/raw.tar.xz (a call returns at most 8 files).
# From the repository root:  OLD=.gpu/old NEW=.gpu/fin LIMIT=300 OUT=$OUT bash kernels/calls/k3-2026-12-04n6.sh
set -u
OLD=${OLD:-.gpu/old} NEW=${NEW:-.gpu/fin}
OUT=${OUT:-$PWD/k3-out} LIMIT=${LIMIT:-300}
mkdir -p "$OUT"
t0=$(date +%s)
PACK=$OLD B=$OLD/k3-build; . "$OLD/device-env.sh" || exit 2
[ -d "$NEW/k3-build" ] || tar xJf "$NEW/pack.tar.xz" -C "$NEW" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
for i in $(seq 1 "${ROUNDS:-3}"); do
  for w in ${ORDER:-OLD NEW}; do
    d=${!w}
    l=$(( LIMIT - ($(date +%s) - t0) - 10 )); [ "$l" -gt 60 ] && l=60
    [ "$l" -gt 5 ] || { echo "== $w $i: skipped (no time)"; continue; }
    echo "== $w round $i (limit $l s, at $(( $(date +%s) - t0 )) s)"
    K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=wide2rqp timeout "$l" "$d/k3-build/kernels/k3-bench" \
      --only moe_prefill -o "$OUT/bench-$w-$i.csv" > "$OUT/bench-$w-$i.txt" 2>&1
    echo "== exit $?"
    awk -v w=$w '/^grouped_gemm/ { for (i = 1; i <= NF; i++) if ($i ~ /^wg_kernel=/) { r = $2 " " $3 " " w " " $(i+1); break } } /^ +cublasLt/ && r { print r, "cublasLt", $2, $(NF-2); r = "" }' "$OUT/bench-$w-$i.txt"
  done
done
kill "$SMI_PID"
(cd "$OUT" && tar cJf raw.tar.xz --remove-files bench-*.csv bench-*.txt smi.csv)
echo "call: $(( $(date +%s) - t0 )) s"
