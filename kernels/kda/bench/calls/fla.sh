#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 16:47 UTC, nvidia-h200, carry build-gpu-final .gpu .fla (fla source, never committed): 
# prefill beside fla (bench/results/kda-prefill-vs-fla-h200-2026-11-29).
O=$OUT; B=build-gpu-final
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > $O/device.txt
timeout 120 $B/kernels/kda-bench --only prefill -o $O/kda-prefill.csv > $O/kda-prefill.log 2>&1; echo "ours rc=$?"
awk -F, '$1 ~ /prefill/ && $5==96 {printf "ours %s %s n=%s t=%s %.1f us\n",$1,$2,$3,$4,$8}' $O/kda-prefill.csv
PYTHONPATH=$PWD/.fla TRITON_CACHE_DIR=/tmp/triton-cache PYTHONUNBUFFERED=1 timeout 330 python3 kernels/kda/bench/fla_compare.py $O/fla-h200.csv --quick > $O/fla.log 2>&1; echo "fla rc=$?"
cat $O/fla.log | tail -8
timeout 60 $B/kernels/kda-bench --only prefill -o $O/kda-prefill-after.csv > $O/kda-prefill-after.log 2>&1; echo "ours again rc=$?"
awk -F, '$1 ~ /prefill/ && $5==96 {printf "ours-after %s %s n=%s t=%s %.1f us\n",$1,$2,$3,$4,$8}' $O/kda-prefill-after.csv
