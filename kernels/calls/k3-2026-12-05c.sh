#!/usr/bin/env bash
# Issue 17, KDA prefill (lead, 2026-12-05c; round 05b's A/B with the decays in registers added: pairr).
# Places the pair kernel's step time (round 05: its
# recurrence alone 1.48-1.56 ms against the chunk kernel's 1.09 at 16K, H = 96): T = 16K, H = 96,
# FP32 state, serial path, one process, 5 rounds: the chunk kernel (rule-2 and 4-warp CTAs), the
# pair kernel at 4 warps with 2 pair stages (pair), 3 (pair3: the cross warp's pair copied a step
# earlier), and without cross terms (pairnx: a measurement row, results wrong; whether the single
# cross warp sets the step), pair3 at its rule width and overlapped; test_prefill_pair first.
# pairr: the decays in the state warps' registers, the cross warp makes X and Y only (CROSS_REG);
# pairr3 that with 3 pairs in flight.
# Pack: .gpu/kda built from this commit (kda-bench, test-kda-gpu).
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05c.sh
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT/kda"
. kernels/calls/device-env.sh
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
K=$B/kernels/kda-bench
AB='def:;ser:K3_KDA_PREFILL=serial;ser4:K3_KDA_PREFILL=serial,K3_KDA_RECUR_WARPS=4'
AB="$AB;serpair4:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pair,K3_KDA_RECUR_WARPS=4"
AB="$AB;serpair3w4:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pair3,K3_KDA_RECUR_WARPS=4"
AB="$AB;serpairnx4:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pairnx,K3_KDA_RECUR_WARPS=4"
AB="$AB;serpairr4:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=4"
AB="$AB;serpairr:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pairr;ovpairr:K3_KDA_PREFILL=overlap,K3_KDA_RECUR=pairr"
AB="$AB;serpairr3w4:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pairr3,K3_KDA_RECUR_WARPS=4"
AB="$AB;ovpairr3:K3_KDA_PREFILL=overlap,K3_KDA_RECUR=pairr3;ovpair3:K3_KDA_PREFILL=overlap,K3_KDA_RECUR=pair3"
AB="$AB;serpair3:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pair3"
{
  KDA_TEST_FILTER='*prefill_pair*' timeout 90 "$B/tests/kernels/test-kda-gpu" > "$OUT/kda/tests-pair.txt" 2>&1
  echo "== test_prefill_pair: exit $?"
  timeout 200 "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 --prefill-ab "$AB" \
    --prefill-rounds 5 -o "$OUT/kda/ab.csv" 2>&1 | grep -E "^prefill.*N=1 "
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"  # one file back (the device tool returns 8 at most)
