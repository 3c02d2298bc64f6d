#!/bin/sh
# Round 24 (03v: runs a, b of one call, wide2rqt the grouped MXFP4 default), validated held out by
# run: each slice against the other run's bench (ab, ba) and against round 23's three benches (runs
# a, b, c of 2026-12-03r: another call, wide2rq's w2; letters p, q, r here) (the k3-kernels presets
# fitted from that bench's capture), under the power model and at boost and the measured clock
# (kernels/slice/validate-pairs.sh). From the repository root:
#   sh bench/results/k3-kernels-h200-2026-12-03v/run.sh K3SIM
# K3SIM: a CPU build's cli/k3sim; CLOCKS (default "power boost measured"). Writes <clock>-<slice><bench>.md here.
set -eu
K3=${1:?usage: run.sh K3SIM}
X=bench/results/k3-kernels-h200-2026-12-03v
R=bench/results/k3-kernels-h200-2026-12-03r
exec sh kernels/slice/validate-pairs.sh "$K3" "$X" "ab ba ap aq ar bp bq br" \
	a=$X/a:$X/ka/kda-grid.csv b=$X/b:$X/kb/kda-grid.csv \
	p=$R/a:$R/ka/kda-grid.csv q=$R/b:$R/kb/kda-grid.csv r=$R/call2/c:$R/call2/kc/kda-grid.csv
