#!/usr/bin/env bash
# Issue 17, KDA prefill (lead, 2026-12-04, call 3 of 2026-12-04k, another lease): the confirmation
# of call 2's K3_KDA_FLAG_WAIT=spin against the default, T = 16K and 4K, H = 96, FP32 / BF16
# state, 8 and 4 rounds alternating in one process (kda-bench --prefill-ab). Same pack as call 2.
# From the repository root:  PACK=.gpu/k OUT=$OUT bash kernels/calls/k3-2026-12-04k2.sh
set -u
PACK=${PACK:-.gpu/k}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT/kda"
t0=$(date +%s)
. kernels/calls/device-env.sh
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
K=$B/kernels/kda-bench
AB='def:;spin:K3_KDA_FLAG_WAIT=spin'
{
  echo "== 16K (at $(( $(date +%s) - t0 )) s)"
  timeout 90 "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 8 -o "$OUT/kda/ab16k.csv" 2>&1 | grep -E "^prefill.*N=1 "
  echo "== 4K (at $(( $(date +%s) - t0 )) s)"
  timeout 40 "$K" --only prefill --prefill-t 4096 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 4 -o "$OUT/kda/ab4k.csv" 2>&1 | grep -E "^prefill.*N=1 "
  echo "== done (at $(( $(date +%s) - t0 )) s)"
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== " "$OUT/kda/log.txt"
