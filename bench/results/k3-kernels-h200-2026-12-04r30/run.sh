#!/bin/sh
# Round 30 (2026-12-04, lead): round 29's validation (its run.sh) on the slice runs of this folder
# (the build of 04n, 0c7ebff: the tile-layout conversion's rotations by 2 and 6 as shifts), against
# the k3-kernels presets calibrated on round 27's two benches (held out by day): steady state
# (sustained-<run><bench>.md), the timed steps under --clock power and boost (power-*.md,
# boost-*.md) and summary.md.
# From the root:  sh bench/results/k3-kernels-h200-2026-12-04r30/run.sh K3SIM   (~2 min)
set -eu
S=bench/results/k3-kernels-h200-2026-12-04r30 ROUND="Round 30" \
	exec sh bench/results/k3-kernels-h200-2026-12-04r29/run.sh "${1:?usage: run.sh K3SIM}"
