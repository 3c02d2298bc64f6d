#!/usr/bin/env bash
# Issue 17, KDA prefill, round 05u (lead, 2026-12-05): how much the design in docs/KERNELS.md "Not
# done yet" could give on the intra side. K3_KDA_INTRA=v2nouw is a measurement row (results wrong):
# the v2 intra kernel without v's loads and the U / Wk products, writing the record such a split
# would (Kt for Wk, T diag(beta) where U starts, Qt, Kh^T, P, Gamma); the recurrent kernels are
# unchanged (they read stale U / Wk bytes, so they cost what they cost now, not the split's extra
# MMAs). Sets def / nouw (overlapped), ser / sernouw (serial, chunk kernel), serpr / serprnouw
# (serial, pairr), T = 4K and 16K, H = 96, FP32 state, 5 rounds in one process.
# Pack (.gpu/kda2): kernels/kda-bench of build-gpu at this commit.
# From the repository root:  PACK=.gpu/kda2 OUT=$OUT bash kernels/calls/k3-2026-12-05u.sh
S=K3_KDA_PREFILL=serial N=K3_KDA_INTRA=v2nouw R=K3_KDA_RECUR=pairr
export AB="def:;nouw:$N;ser:$S;sernouw:$S,$N;serpr:$S,$R;serprnouw:$S,$R,$N"
export GRID="--prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32"
export ROUNDS=${ROUNDS:-5} BENCH_CAP=${BENCH_CAP:-150} TEST_FILTER='' TEST_CAP=1
exec bash "$(dirname "$0")/kda-ab-call.sh"
