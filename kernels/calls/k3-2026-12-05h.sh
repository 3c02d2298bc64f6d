#!/usr/bin/env bash
# Issue 17, round 05h (lead, 2026-12-05, 13:20 UTC): the hold-out call for round 05g / 05f, no new
# build (packs .gpu/g from 46ddcfe, .gpu/kda from 3ae08b2's KDA code).
#  1. FP8 expert GEMM: round 05g (an H100, 13:02 UTC) had `2l` (K3_GEMM_F8_SETS=2l: a k block's
#     weight words by one 16-byte load) bit for bit and faster than the FP8 default on w2 at T = 4K
#     in 3 of 3 rounds (2.56-2.59 against 2.61-2.76 ms) and on w13 in 2 of 3. Here the default and
#     2l alternate 6 times in ONE process at T = 16K and 4K (w13, w2), each beside cuBLASLt BF16
#     (BENCH_ONLY: no tests, sanitizers or ncu; those ran in 05g).
#  2. KDA serial grid again (05f, an H100: pairr at the rule width was 3-17 % faster than the chunk
#     kernel at H = 12, 24 and 96 and 4-7 % slower at H = 48, where pairr at 4 warps was 2-5 %
#     faster): the same sets plus serpr2 (pairr at 2 state warps), T = 1K, 4K, 16K x H = 12, 24, 48,
#     96, FP32 / BF16, 3 rounds; into k1/kda.tar.xz.
#  3. KDA overlapped levers round 02zb's second call listed and never ran: T = 16K, H = 96, the
#     default against the lean intra kernel (v3) with 8-warp recurrent CTAs and / or 4 stages,
#     FP32 / BF16, 5 rounds; into k2/kda.tar.xz.
# From the repository root:  OUT=$OUT bash kernels/calls/k3-2026-12-05h.sh
set -u
OUT=${OUT:-$PWD/k3-out}
D=$(dirname "$0")
PACK=.gpu/g LIMIT=200 BENCH_ONLY=1 NCU_KERNEL=none NCU_REGEX=none NCU_TAG=none \
  KERNELS=wide2f8,wide2f8s2l,wide2f8,wide2f8s2l,wide2f8,wide2f8s2l,wide2f8,wide2f8s2l,wide2f8,wide2f8s2l,wide2f8,wide2f8s2l \
  OUT=$OUT BENCH_CAP=150 bash "$D/moe-ab-call.sh"
S=K3_KDA_PREFILL=serial P=K3_KDA_RECUR=pairr
mkdir -p "$OUT/k1" "$OUT/k2"
OUT=$OUT/k1 PACK=.gpu/kda ROUNDS=3 BENCH_CAP=150 \
  AB="def:;ser:$S;serpr:$S,$P;serpr2:$S,$P,K3_KDA_RECUR_WARPS=2;serpr4:$S,$P,K3_KDA_RECUR_WARPS=4" \
  GRID="--prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16" \
  bash "$D/kda-ab-call.sh"
V=K3_KDA_INTRA=v3
OUT=$OUT/k2 PACK=.gpu/kda ROUNDS=5 BENCH_CAP=120 \
  AB="def:;v3:$V;w8:K3_KDA_RECUR_WARPS=8;v3w8:$V,K3_KDA_RECUR_WARPS=8;v3s4:$V,K3_KDA_RECUR_STAGES=4;v3w8s4:$V,K3_KDA_RECUR_WARPS=8,K3_KDA_RECUR_STAGES=4" \
  GRID="--prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16" \
  bash "$D/kda-ab-call.sh"
ls -la "$OUT" "$OUT/k1" "$OUT/k2"
