#!/usr/bin/env bash
# Issue 17, KDA prefill (lead, 2026-12-05f). Round 05c/05e (an H100, 10:53 UTC): the serial pairr
# recurrence (K3_KDA_RECUR=pairr, rule width) ran 16K, H = 96 in 0.97-1.01 ms against the chunk
# kernel's 1.12-1.22; the overlapped pairr starves the intra kernel (3-19 ms). The serial path is
# the default everywhere but one sequence of >= 4K tokens at 96 heads, so this call asks whether
# pairr is the better serial recurrence across the grid: T = 1K, 4K, 16K x H = 12, 24, 48, 96 and
# 4 x 4K, FP32 and BF16 state, sets ser (chunk), serpr (pairr), serpr4 (pairr, 4 state warps) and
# def, one process, 3 rounds; then test_prefill_pair (kernels/calls/kda-ab-call.sh runs both).
# Pack: .gpu/kda (kda-bench, test-kda-gpu; KDA code as of 3ae08b2).
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05f.sh
S=K3_KDA_PREFILL=serial
export AB="def:;ser:$S;serpr:$S,K3_KDA_RECUR=pairr;serpr4:$S,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=4"
export GRID="--prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16"
export ROUNDS=3 BENCH_CAP=300 TEST_FILTER='*prefill_pair*' TEST_CAP=90
exec bash "$(dirname "$0")/kda-ab-call.sh"
