#!/usr/bin/env bash
# Issue 17, round 05s (lead, 2026-12-05, session 18:07-21:07 UTC), one call:
#  1. KDA prefill with the records dropped from L2 once read (K3_KDA_DISCARD=on, opt-in;
#     discard_step() in kda_prefill.cu): test-kda-gpu *discard* (bit for bit against the overlapped
#     path without it), then kda-bench at T = 4K and 16K, H = 96, FP32 and BF16 state, sets def /
#     disc alternating, 5 rounds in one process (kernels/calls/kda-ab-call.sh -> $OUT/kda.tar.xz);
#  2. the K3 slice with E4M3 expert activations again (round 05r's PHASE=slice: runs a, b e4m3 and c
#     bf16), a call after 05r's benches: held out by call.
# K3_KDA_DISCARD was removed after this call (slower: README in bench/results/k3-kernels-h100-2026-12-05q/);
# commit 6019a26 has it. Pack (.gpu/rs2): kernels/k3-slice, kernels/kda-bench, tests/kernels/test-kda-gpu, cli/k3sim,
# trace/capture/libk3capture.so of build-gpu at this commit.
# From the repository root:  PACK=.gpu/rs2 OUT=$OUT bash kernels/calls/k3-2026-12-05s.sh
set -u
export PACK=${PACK:-.gpu/rs2}
OUT=${OUT:-$PWD/k3-out}
AB="def:;disc:K3_KDA_DISCARD=on" GRID="--prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32,bf16" \
  ROUNDS=5 BENCH_CAP=120 TEST_FILTER='*discard*' TEST_CAP=90 OUT=$OUT bash "$(dirname "$0")/kda-ab-call.sh"
PHASE=slice LIMIT=${LIMIT:-400} OUT=$OUT/slice bash "$(dirname "$0")/k3-2026-12-05r.sh"
