#!/bin/sh
# Round 29 (2026-12-04, lead): the slice of the final build of the day (2f402b8: wide2rqp the grouped
# MXFP4 default; kernels otherwise round 28's), runs a and b of one call (08:29 UTC), against the
# k3-kernels presets calibrated on round 27's two benches (03zb a, b = r, s: held out by day), as
# bench/results/sustained-h200-2026-12-04/run.sh did for round 28: (1) each run's steady state
# (k3-slice --sustain-ms 2000) by bench/power/sustained-eval.py -> sustained-<run><bench>.md; (2) the
# timed steps of both runs, --clock power and boost, classes too (validate-pairs.sh) and the summary.
# From the root:  sh bench/results/k3-kernels-h200-2026-12-04r29/run.sh K3SIM   (~3 min)
# S (the results folder, runs a and b in it) and ROUND (the summary's title) default to round 29's;
# round 30's run.sh sets them.
set -eu
K3=${1:?usage: run.sh K3SIM}
S=${S:-bench/results/k3-kernels-h200-2026-12-04r29}
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
python3 kernels/slice/heldout_summary.py $S "${ROUND:-Round 29} (2026-12-04, timed steps of runs a and b)" |
	sed 's/held out by run: summary/held out by day: summary/' | awk '/^## --clock measured/ {exit} {print}' > $S/summary.md
