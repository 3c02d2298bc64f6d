#!/bin/sh
# One command from a fresh Debian machine to the main job: install what is missing, build, and run
# k3sim on the embedded default scenario (Kimi K3 on 16 x H200).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build
exec ./build/cli/k3sim run "$@"
