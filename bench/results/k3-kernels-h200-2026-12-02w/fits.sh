#!/bin/sh
# `k3sim calibrate` stage 6 (the power model's energies) on each k3-bench capture of rounds 17-19
# and on all six together, from the shipped h200 preset (its limit, idle draw, tau and floor);
# then the same joint fit at other time constants. Output: fits.txt. From the repository root.
set -e
W=bench/results/k3-kernels-h200-2026-12-02w
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
all=""
for x in 02y/calla 02y/callb 02n/calla 02n/callb 02r/a 02r/b; do
	db=$T/$(echo $x | tr / -).db
	xz -dkc bench/results/k3-kernels-h200-2026-12-$x/k3-h200.db.xz > $db
	all="$all $db"
done
show() { grep -h 'power_flop_pj\|power_byte_pj\|power_tau_ms\|power_clock' "$1" | tr -s ' ' | tr '\n' ' '; echo; }
{
	for db in $all; do
		build/cli/k3sim calibrate $db --hw h200 -o $T/fit.yaml --name fit -f --json > /dev/null 2>&1
		echo "$(basename $db .db): $(show $T/fit.yaml)"
	done
	# shellcheck disable=SC2086
	build/cli/k3sim calibrate $all --hw h200 -o $T/fit.yaml --name fit -f --json > /dev/null 2>&1
	echo "all six: $(show $T/fit.yaml)"
	for tau in 1 2.5 5 20 40; do
		sed "s/^  power_tau_ms: .*/  power_tau_ms: $tau/" hw/presets/h200.yaml > $T/h200-tau.yaml
		# shellcheck disable=SC2086
		build/cli/k3sim calibrate $all --hw $T/h200-tau.yaml -o $T/fit.yaml --name fit -f --json > /dev/null 2>&1
		echo "all six, tau $tau ms: $(show $T/fit.yaml)"
	done
} > $W/fits.txt
