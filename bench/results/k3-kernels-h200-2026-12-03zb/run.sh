#!/bin/sh
# Round 27 (03zb: runs a, b of one call, 22:41-22:42 UTC, the pack of round 26: the kernels
# unchanged; kernels/calls/limiter-2026-12-03.sh), taken after the delayed limiter was fitted and
# committed (cc7eb66): validated held out by run and by call, each slice against the other run's
# bench (ab, ba) and against round 26's two benches (runs a, b of 2026-12-03za; letters p, q),
# with validate-slice.py's default measured laws, under the power model (h200's limiter), at
# boost and at the measured clock (kernels/slice/validate-pairs.sh). From the repository root:
#   sh bench/results/k3-kernels-h200-2026-12-03zb/run.sh K3SIM
set -eu
K3=${1:?usage: run.sh K3SIM}
A=bench/results/k3-kernels-h200-2026-12-03zb
Z=bench/results/k3-kernels-h200-2026-12-03za
exec sh kernels/slice/validate-pairs.sh "$K3" "$A" "ab ba ap aq bp bq" \
	a=$A/a:$A/ka/kda-grid.csv b=$A/b:$A/kb/kda-grid.csv \
	p=$Z/a:$Z/ka/kda-grid.csv q=$Z/b:$Z/kb/kda-grid.csv
