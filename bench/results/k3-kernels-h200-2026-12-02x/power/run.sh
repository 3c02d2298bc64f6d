#!/bin/sh
# Round 21 (02x: runs a, b, c) and round 20 (02v: runs a, b) under the power model, held out by run
# (every slice against every other run's bench), and one boost pairing (slice a / bench b of 02x) to
# show the boost protocol unchanged. From the repository root:
#   sh bench/results/k3-kernels-h200-2026-12-02x/power/run.sh K3SIM [TAG]
# K3SIM: a CPU build's cli/k3sim; TAG (default "after") names the reports: power-<slice><bench>-TAG.md.
# KEEP=DIR (optional): each pairing's presets and decompressed captures kept in DIR/<round>-<pairing>-<clock>.
set -eu
K3=${1:?usage: run.sh K3SIM [TAG]}
TAG=${2:-after}
X=bench/results/k3-kernels-h200-2026-12-02x
V=bench/results/k3-kernels-h200-2026-12-02v
dir() { # run name -> its results folder and KDA grid
	case $1 in
	x-a) echo "$X/a $X/ka/kda-grid.csv" ;;
	x-b) echo "$X/b $X/kb/kda-grid.csv" ;;
	x-c) echo "$X/call2/c $X/call2/kc/kda-grid.csv" ;;
	v-a) echo "$V/a $V/ka/kda-grid.csv" ;;
	v-b) echo "$V/b $V/kb/kda-grid.csv" ;;
	esac
}
pair() { # round slice bench clock out
	set -- "$1" "$2" "$3" "$4" "$5"
	s=$(dir "$1-$2" | cut -d' ' -f1)
	b=$(dir "$1-$3" | cut -d' ' -f1)
	k=$(dir "$1-$3" | cut -d' ' -f2)
	python3 kernels/slice/validate-slice.py --clock "$4" --results "$s" --bench-results "$b" --kda-bench "$k" \
		--k3sim "$K3" -o "$5" ${KEEP:+--keep "$KEEP/$1-$2$3-$4"}
}
for p in ab ac ba bc ca cb; do
	pair x "$(echo $p | cut -c1)" "$(echo $p | cut -c2)" power "$X/power/power-$p-$TAG.md"
done
for p in ab ba; do
	pair v "$(echo $p | cut -c1)" "$(echo $p | cut -c2)" power "$V/power/power-$p-$TAG.md"
done
pair x a b boost "$X/power/boost-ab-$TAG.md"
