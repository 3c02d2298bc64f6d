#!/bin/sh
# Round 30 (2026-12-04, lead): round 29's run.sh on the build of 04n (0c7ebff: the tile-layout
# conversion's rotations by 2 and 6 as shifts; every other kernel round 29's), runs a and b of one
# call (13:49 UTC), against the k3-kernels presets calibrated on round 27's two benches (03zb a, b
# = r, s: held out by day): (1) each run's steady state (k3-slice --sustain-ms 2000) by
# bench/power/sustained-eval.py -> sustained-<run><bench>.md; (2) the timed steps of both runs,
# --clock power and boost, classes too (validate-pairs.sh) and the summary.
# From the root:  sh bench/results/k3-kernels-h200-2026-12-04r30/run.sh K3SIM   (~2 min)
set -eu
K3=${1:?usage: run.sh K3SIM}
S=bench/results/k3-kernels-h200-2026-12-04r30
ZB=bench/results/k3-kernels-h200-2026-12-03zb
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for spec in "r $ZB/a $ZB/ka" "s $ZB/b $ZB/kb"; do
	set -- $spec
	python3 kernels/slice/validate-slice.py --clock power --results $S/a --bench-results "$2" \
		--kda-bench "$3/kda-grid.csv" --k3sim "$K3" --keep "$W/$1" -o "$W/$1.md" > /dev/null
	for r in a b; do
		python3 bench/power/sustained-eval.py "$K3" $S/$r "$W/$1" > "$S/sustained-$r$1.md"
	done
done
CLOCKS="power boost" sh kernels/slice/validate-pairs.sh "$K3" $S "ar as br bs" a=$S/a:$ZB/ka/kda-grid.csv \
	b=$S/b:$ZB/kb/kda-grid.csv r=$ZB/a:$ZB/ka/kda-grid.csv s=$ZB/b:$ZB/kb/kda-grid.csv
python3 kernels/slice/heldout_summary.py $S "Round 30 (2026-12-04, timed steps of runs a and b)" |
	sed 's/held out by run: summary/held out by day: summary/' | awk '/^## --clock measured/ {exit} {print}' > $S/summary.md
