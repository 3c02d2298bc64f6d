#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, one nvidia-h100-x1): the mla_uv illegal address of round 06h
# (k3-bench --only mla_uv at m = 65536 after --only gemm's rows) against its fix (c877efd,
# kernels/common/k3_upload.h: upload() copies on the stream that reads it and waits). The same
# loop with the k3-bench of 5e94718 (before) and of c877efd (fixed), each with the wgmma and the
# mma.sync tiled kernel, CUDA_LAUNCH_BLOCKING=1 (it failed every time so), then test-moe-gpu's
# test_gemm_mla_uv_stream. From the repository root, the pack in .gpu/up (u/k3-bench-before,
# u/k3-bench-fixed, u/test-moe-gpu, libcmocka.so.0):
#   OUT=$OUT bash kernels/calls/upload-2026-12-06.sh
set -u
OUT=${OUT:?OUT=<folder>}
P=.gpu/up
[ -d $P/u ] || tar xJf $P/pack.tar.xz -C $P || exit 2
export LD_LIBRARY_PATH=$PWD/$P:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit,temperature.gpu --format=csv > "$OUT/env.txt" 2>&1
for b in before fixed; do
  for t in "" mma; do
    n=$b-${t:-wg}
    K3_GEMM_TILED=$t CUDA_LAUNCH_BLOCKING=1 K3_BENCH_GEMM_M=16 timeout 120 $P/u/k3-bench-$b --require-wgmma --only gemm \
      -o "$OUT/$n.csv" > "$OUT/$n.txt" 2>&1
    echo "== $n exit $?: $(grep -c 'mla_uv' "$OUT/$n.txt") mla_uv lines, $(grep -ci 'illegal' "$OUT/$n.txt") illegal"
    grep -E "m=65536|illegal|k3-bench:" "$OUT/$n.txt" | head -4
  done
done
timeout 300 $P/u/test-moe-gpu > "$OUT/test-moe-gpu.txt" 2>&1   # (as run: all its tests, past the cap; MOE_TEST_FILTER=test_gemm_mla_uv_stream runs the new one alone)
echo "== test-moe-gpu exit $?"
tail -8 "$OUT/test-moe-gpu.txt"
