#!/usr/bin/env bash
# Stages what the K3 kernels' device calls run (kernels/run-gpu-k3.sh, kernels/slice/run-slice.sh)
# from a build into a small tree (about 25 MB; a whole build-gpu is near the 64 MiB a device call
# carries), with libcmocka.so.0 beside it:
#   bash kernels/stage-gpu.sh [BUILD=build-gpu] [DEST=.gpu/k3-build]
# then carry .gpu and run e.g. `BUILD=.gpu/k3-build bash kernels/run-gpu-k3.sh`.
set -eu
B=${1:-build-gpu}
D=${2:-.gpu/k3-build}
files="cli/k3sim trace/capture/libk3capture.so kernels/k3-bench kernels/k3-slice kernels/kda-bench
  tests/kernels/test-mla-gpu tests/kernels/test-moe-gpu tests/kernels/test-attnres-gpu tests/kernels/test-dsa-gpu
  tests/kernels/test-layer-gpu tests/kernels/test-kda-gpu tests/kernels/test-mla-prefill-gpu tests/capture/capture_app
  tests/capture/capture_check"
# The wgmma GEMM (the default prefill kernel on an H200) exists only in sm_90a builds; a build dir
# set up before that default keeps gpu_arch=sm_90 (the 2026-12-01b call ran the mma.sync kernel so).
if [ -f "$B/build.ninja" ] && ! grep -q K3_HAVE_WGMMA "$B/build.ninja" && [ -z "${ALLOW_NO_WGMMA:-}" ]; then
  echo "stage-gpu: $B has no wgmma GEMM (gpu_arch is not sm_90a): meson configure $B -Dgpu_arch=sm_90a && ninja -C $B," \
       "or ALLOW_NO_WGMMA=1 to stage it anyway"
  exit 2
fi
for f in $files; do
  [ -f "$B/$f" ] || { echo "stage-gpu: missing $B/$f (ninja -C $B)"; exit 2; }
  mkdir -p "$D/$(dirname "$f")"
  cp -p "$B/$f" "$D/$f"
done
mkdir -p .gpu
[ -f .gpu/libcmocka.so.0 ] || cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 .gpu/
du -sh "$D" .gpu
