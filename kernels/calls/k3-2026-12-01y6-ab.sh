#!/usr/bin/env bash
# A/B of the grouped BF16 GEMM at T = 16K: round 13's k3-bench (main before branch i19a) against
# branch i19a's final build, alternating, `k3-bench --only moe_prefill --quick` (each row also
# without clusters, beside cuBLASLt). 2026-12-01y, call 6.
set -u
P=${PACK:-.gpu/ab}
OUT=${OUT:-$PWD/k3-out}; mkdir -p "$OUT"
cd "$P" && tar xJf pack.tar.xz && cd - > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 500 > "$OUT/smi.csv" 2>&1 &
S=$!
for r in 1 2; do
  for v in old new; do
    echo "== $v run $r"
    timeout 40 "$P/$v/k3-bench" --only moe_prefill --quick -o /tmp/ab.csv 2>&1 | grep -E "^grouped_gemm|cublasLt"
  done
done > "$OUT/ab.txt" 2>&1
kill $S
cat "$OUT/ab.txt" | cut -c1-160
