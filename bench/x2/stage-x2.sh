#!/usr/bin/env bash
# Stages what bench/x2/run-x2-overlap-kcp.sh runs from a build into a small tree (~6 MB), so that
# the device call carries .gpu alone:
#   bash bench/x2/stage-x2.sh [BUILD=build-gpu] [DEST=.gpu/x2-build]
set -eu
B=${1:-build-gpu}
D=${2:-.gpu/x2-build}
files="cli/k3sim trace/capture/libk3capture.so kernels/kcp-x2 bench/x2-predict"
for f in $files; do
  [ -f "$B/$f" ] || { echo "stage-x2: missing $B/$f (ninja -C $B)"; exit 2; }
  mkdir -p "$D/$(dirname "$f")"
  cp -p "$B/$f" "$D/$f"
done
du -sh "$D" .gpu
