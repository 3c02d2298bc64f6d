#!/bin/sh
# Round 26 (03za: runs a, b of one call, 20:17-20:19 UTC, the lease of the clock-bound measurement,
# build bce5202 + k3-bench's pacing), validated held out by run and by call: each slice against the
# other run's bench (ab, ba) and against round 25's two benches (runs a, b of 2026-12-03z; letters
# p, q), with validate-slice.py's default measured laws (MEASURED_LAWS), under the power model,
# at boost and at the measured clock (kernels/slice/validate-pairs.sh). From the repository root:
#   sh bench/results/k3-kernels-h200-2026-12-03za/run.sh K3SIM
set -eu
K3=${1:?usage: run.sh K3SIM}
A=bench/results/k3-kernels-h200-2026-12-03za
Z=bench/results/k3-kernels-h200-2026-12-03z
exec sh kernels/slice/validate-pairs.sh "$K3" "$A" "ab ba ap aq bp bq" \
	a=$A/a:$A/ka/kda-grid.csv b=$A/b:$A/kb/kda-grid.csv \
	p=$Z/a:$Z/ka/kda-grid.csv q=$Z/b:$Z/kb/kda-grid.csv
