#!/bin/sh
# Round 24 (03v: runs a, b of one call, wide2rqt the grouped MXFP4 default), validated held out by
# run: each slice against the other run's bench (ab, ba) and against round 23's three benches (runs
# a, b, c of 2026-12-03r: another call, wide2rq's w2) (the k3-kernels presets fitted from that
# bench's capture), under the power model and at boost and the measured clock. From the repository
# root:
#   sh bench/results/k3-kernels-h200-2026-12-03v/run.sh K3SIM
# K3SIM: a CPU build's cli/k3sim; CLOCKS (default "power boost measured"). Writes <clock>-<slice><bench>.md here
# (bench letters: a, b this round's; p, q, r round 23's a, b, c).
set -eu
K3=${1:?usage: run.sh K3SIM}
X=bench/results/k3-kernels-h200-2026-12-03v
R=bench/results/k3-kernels-h200-2026-12-03r
dir() {
	case $1 in
	a) echo "$X/a $X/ka/kda-grid.csv" ;;
	b) echo "$X/b $X/kb/kda-grid.csv" ;;
	p) echo "$R/a $R/ka/kda-grid.csv" ;;
	q) echo "$R/b $R/kb/kda-grid.csv" ;;
	r) echo "$R/call2/c $R/call2/kc/kda-grid.csv" ;;
	esac
}
for clock in ${CLOCKS:-power boost measured}; do
	for p in ab ba ap aq ar bp bq br; do
		s=$(dir "$(echo $p | cut -c1)" | cut -d' ' -f1)
		b=$(dir "$(echo $p | cut -c2)" | cut -d' ' -f1)
		k=$(dir "$(echo $p | cut -c2)" | cut -d' ' -f2)
		python3 kernels/slice/validate-slice.py --clock "$clock" --results "$s" --bench-results "$b" \
			--kda-bench "$k" --k3sim "$K3" -o "$X/$clock-$p.md"
	done
done
