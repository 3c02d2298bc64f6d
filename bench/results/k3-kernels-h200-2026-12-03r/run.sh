#!/bin/sh
# Round 23 (03r: runs a, b of call 1, c of call 2), validated held out by run: each slice against every
# other run's bench (the k3-kernels presets fitted from that bench's capture), under the power model
# (i28c's class energies) and at boost. From the repository root:
#   sh bench/results/k3-kernels-h200-2026-12-03r/run.sh K3SIM
# K3SIM: a CPU build's cli/k3sim; CLOCKS (default "power boost measured"). Writes <clock>-<slice><bench>.md here.
set -eu
K3=${1:?usage: run.sh K3SIM}
X=bench/results/k3-kernels-h200-2026-12-03r
dir() {
	case $1 in
	a) echo "$X/a $X/ka/kda-grid.csv" ;;
	b) echo "$X/b $X/kb/kda-grid.csv" ;;
	c) echo "$X/call2/c $X/call2/kc/kda-grid.csv" ;;
	esac
}
for clock in ${CLOCKS:-power boost measured}; do
	for p in ab ac ba bc ca cb; do
		s=$(dir "$(echo $p | cut -c1)" | cut -d' ' -f1)
		b=$(dir "$(echo $p | cut -c2)" | cut -d' ' -f1)
		k=$(dir "$(echo $p | cut -c2)" | cut -d' ' -f2)
		python3 kernels/slice/validate-slice.py --clock "$clock" --results "$s" --bench-results "$b" \
			--kda-bench "$k" --k3sim "$K3" -o "$X/$clock-$p.md"
	done
done
