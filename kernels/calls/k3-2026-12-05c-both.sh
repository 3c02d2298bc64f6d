#!/usr/bin/env bash
# Issue 17 (lead, 2026-12-05c): two rounds in ONE device call (a start costs minutes when the
# device is scarce): the KDA pair A/B with pairr / pairr3 (kernels/calls/k3-2026-12-05c.sh, pack
# .gpu/kda), then more rows of the FP8 expert GEMM default at T = 4K (wide2f8 four times in one
# process, w13 and w2, each beside cuBLASLt BF16; kernels/calls/k3-2026-12-04q3.sh's bench only,
# pack .gpu/s) within GEMM_LIMIT seconds. Two files come back: kda.tar.xz and gemm.tar.xz.
# Room: scripts/device-room.sh out 46 first (both packs are ~42 MB).
# From the repository root:  OUT=$OUT bash kernels/calls/k3-2026-12-05c-both.sh
set -u
OUT=${OUT:-$PWD/k3-out}
PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05c.sh
mkdir -p "$OUT/gemm"
PACK=.gpu/s LIMIT=${GEMM_LIMIT:-190} OUT=$OUT/gemm BENCH_ONLY=1 KERNELS=wide2f8,wide2f8,wide2f8,wide2f8 \
  BENCH_CAP=175 bash kernels/calls/k3-2026-12-04q3.sh > "$OUT/gemm/call.txt" 2>&1
tar cJf "$OUT/gemm.tar.xz" -C "$OUT" gemm && rm -rf "$OUT/gemm"
