#!/usr/bin/env bash
# Issue 17, round 30 (lead, 2026-12-04, one nvidia-h200): round 29's call (kernels/calls/
# k3-2026-12-04r29.sh: test-moe-gpu *wide_small* and *layer* through the default, then the K3 slice
# under capture with --sustain-ms 2000, runs a and b) on the build of 04n (0c7ebff: the tile-layout
# conversion's rotations by 2 and 6 as shifts), for the held-out validation against round 27's
# benches (the presets of the day before) once more, five hours after round 29.
# From the repository root, the pack in .gpu/r30 (k3-build: cli/k3sim, kernels/k3-slice,
# tests/kernels/test-moe-gpu, trace/capture/libk3capture.so; 37 MB):
#   OUT=$OUT bash kernels/calls/k3-2026-12-04r30.sh   -> $OUT/tests.txt, then the slice's call.tar
export PACK=${PACK:-.gpu/r30}
exec bash "$(dirname "$0")/k3-2026-12-04r29.sh"
