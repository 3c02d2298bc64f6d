#!/usr/bin/env bash
# Issue 17, KDA prefill (lead, 2026-12-05e). Round 05c's call (10:53 UTC, an H100) ran the serial
# pairr recurrence (rule width: 2 state warps + the cross warp, 384 CTAs at H = 96) in 0.97-1.01 ms
# against the chunk kernel's 1.13-1.22, but the overlapped pairr in 4.8 ms: its CTAs (158-168
# registers a thread) leave the intra kernel too few SM slots. This call places the overlapped
# pairr at forced widths (1, 2, 4, 8 state warps a CTA), with the lean intra kernel (v3), and the
# serial pairr + v3, beside the default: T = 16K, H = 96, FP32 state, one process, 5 rounds.
# Pack: .gpu/kda (kda-bench, test-kda-gpu; KDA code as of 3ae08b2).
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05e.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT/kda"
. kernels/calls/device-env.sh
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
K=$B/kernels/kda-bench
O=K3_KDA_PREFILL=overlap
AB="def:;ser:K3_KDA_PREFILL=serial;ovv3:$O,K3_KDA_INTRA=v3"
AB="$AB;ovpairr1:$O,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=1;ovpairr2:$O,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=2"
AB="$AB;ovpairr4:$O,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=4;ovpairr8:$O,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=8"
AB="$AB;ovpairr4v3:$O,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=4,K3_KDA_INTRA=v3"
AB="$AB;ovpairr8v3:$O,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=8,K3_KDA_INTRA=v3"
AB="$AB;serpairrv3:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pairr,K3_KDA_INTRA=v3"
AB="$AB;ovpair4:$O,K3_KDA_RECUR=pair,K3_KDA_RECUR_WARPS=4"
{
  timeout 240 "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 --prefill-ab "$AB" \
    --prefill-rounds 5 -o "$OUT/kda/ab.csv" 2>&1 | grep -E "^prefill.*N=1 "
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"  # one file back
