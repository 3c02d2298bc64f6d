#!/usr/bin/env bash
# Issue 17, KDA prefill (lead, 2026-12-05f). Round 05c/05e (an H100, 10:53 UTC): the serial pairr
# recurrence (K3_KDA_RECUR=pairr, rule width) ran 16K, H = 96 in 0.97-1.01 ms against the chunk
# kernel's 1.12-1.22; the overlapped pairr starves the intra kernel (3-19 ms). The serial path is
# the default everywhere but one sequence of >= 4K tokens at 96 heads, so this call asks whether
# pairr is the better serial recurrence across the grid: T = 1K, 4K, 16K x H = 12, 24, 48, 96 and
# 4 x 4K, FP32 and BF16 state, sets ser (chunk), serpr (pairr), serpr4 (pairr, 4 state warps) and
# def, one process, 3 rounds; then test_prefill_pair.
# Pack: .gpu/kda (kda-bench, test-kda-gpu; KDA code as of 3ae08b2).
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05f.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT/kda"
. kernels/calls/device-env.sh
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
K=$B/kernels/kda-bench
S=K3_KDA_PREFILL=serial
AB="def:;ser:$S;serpr:$S,K3_KDA_RECUR=pairr;serpr4:$S,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=4"
{
  timeout 300 "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
    --prefill-state fp32,bf16 --prefill-ab "$AB" --prefill-rounds 3 -o "$OUT/kda/ab.csv" 2>&1 |
    grep -E "^prefill"
  KDA_TEST_FILTER='*prefill_pair*' timeout 90 "$B/tests/kernels/test-kda-gpu" > "$OUT/kda/tests-pair.txt" 2>&1
  echo "== test_prefill_pair: exit $?"
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"  # one file back
