#!/bin/sh
# Round 25 (03z: runs a, b of one call, kernels as round 24), validated held out by run and by call:
# each slice against the other run's bench (ab, ba) and against round 24's two benches (runs a, b of
# 2026-12-03v, another lease; letters p, q here), under the power model (the window limiter of
# 2026-12-03y, 0e1a083) and at boost and the measured clock (kernels/slice/validate-pairs.sh).
# From the repository root:
#   sh bench/results/k3-kernels-h200-2026-12-03z/run.sh K3SIM
# K3SIM: a CPU build's cli/k3sim; CLOCKS (default "power boost measured"). Writes <clock>-<slice><bench>.md here.
set -eu
K3=${1:?usage: run.sh K3SIM}
Z=bench/results/k3-kernels-h200-2026-12-03z
V=bench/results/k3-kernels-h200-2026-12-03v
exec sh kernels/slice/validate-pairs.sh "$K3" "$Z" "ab ba ap aq bp bq" \
	a=$Z/a:$Z/ka/kda-grid.csv b=$Z/b:$Z/kb/kda-grid.csv \
	p=$V/a:$V/ka/kda-grid.csv q=$V/b:$V/kb/kda-grid.csv
