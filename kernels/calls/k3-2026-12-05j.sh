#!/usr/bin/env bash
# Issue 17, round 05j (lead, 2026-12-05): both targets' shapes on whatever card starts, with the
# builds of this session (no new kernel code):
#  1. round 05i's KDA call (kernels/calls/k3-2026-12-05i.sh: the serial default's grid with 1-8
#     sequences a point, the prefill tests, sanitizers of test_prefill_default_recur; the grid holds
#     the target shape, 16K at H = 96, on its overlapped default) -> k1/kda.tar.xz, san.*;
#  2. the expert GEMMs at T = 4K and 16K (w13, w2, MXFP4 weights): the FP8 kernel (wide2f8, E4M3
#     activations) and the BF16-activation default (wide2rqp) alternating four times in ONE
#     process, each beside cuBLASLt BF16 at equal FLOPs (BENCH_ONLY) -> bench.txt, misc.tar.xz.
# Packs: .gpu/kda (this session's KDA build), .gpu/g (46ddcfe's GEMM build, unchanged since).
# From the repository root:  OUT=$OUT bash kernels/calls/k3-2026-12-05j.sh
set -u
OUT=${OUT:-$PWD/k3-out}
D=$(dirname "$0")
OUT=$OUT bash "$D/k3-2026-12-05i.sh" > "$OUT/kda-call.txt" 2>&1
tail -25 "$OUT/kda-call.txt"
K=wide2f8,wide2rqp
PACK=.gpu/g LIMIT=200 BENCH_ONLY=1 NCU_KERNEL=none NCU_REGEX=none NCU_TAG=none KERNELS=$K,$K,$K,$K \
  OUT=$OUT BENCH_CAP=150 bash "$D/moe-ab-call.sh" 2>&1 | tail -40
