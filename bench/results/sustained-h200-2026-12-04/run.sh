#!/bin/sh
# The slice's steady state (k3-slice --sustain-ms 2000, runs a and b of the 03:20 UTC call of
# 2026-12-04) against `k3sim run --clock power`, with the k3-kernels preset calibrated on each of
# the four benches of the day before (rounds 26 and 27: 03za a, b = p, q; 03zb a, b = r, s): held
# out by day. validate-slice.py --keep makes each preset (and the prefill scenarios with run a's
# expert spread: run b's k3-slice.txt did not come back, and the routing is the same program's, the
# same seeds), then bench/power/sustained-eval.py writes sustained-<run><bench>.md. From the root:
#   sh bench/results/sustained-h200-2026-12-04/run.sh K3SIM   (~2 min)
set -eu
K3=${1:?usage: run.sh K3SIM}
S=bench/results/sustained-h200-2026-12-04
Z=bench/results/k3-kernels-h200-2026-12-03za
ZB=bench/results/k3-kernels-h200-2026-12-03zb
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for spec in "p $Z/a $Z/ka" "q $Z/b $Z/kb" "r $ZB/a $ZB/ka" "s $ZB/b $ZB/kb"; do
	set -- $spec
	python3 kernels/slice/validate-slice.py --clock power --results $S/a --bench-results "$2" \
		--kda-bench "$3/kda-grid.csv" --k3sim "$K3" --keep "$W/$1" -o "$W/$1.md" > /dev/null
	for r in a b; do
		python3 bench/power/sustained-eval.py "$K3" $S/$r "$W/$1" > "$S/sustained-$r$1.md"
	done
done
# The timed steps of run a (round 28) the usual way, against the same four benches; classes too.
CLOCKS="power boost" sh kernels/slice/validate-pairs.sh "$K3" $S "ap aq ar as" a=$S/a:$ZB/ka/kda-grid.csv \
	p=$Z/a:$Z/ka/kda-grid.csv q=$Z/b:$Z/kb/kda-grid.csv r=$ZB/a:$ZB/ka/kda-grid.csv s=$ZB/b:$ZB/kb/kda-grid.csv
python3 kernels/slice/heldout_summary.py $S "Round 28 (2026-12-04, timed steps of run a)" |
	sed 's/held out by run: summary/held out by day: summary/' | awk '/^## --clock measured/ {exit} {print}' > $S/summary.md
# The decode classes duty-cycled (call 2): per row the mean draw, the busy share, the draw while busy.
python3 bench/power/duty-energy.py "$K3" $S/duty/mla.db.xz $S/duty/gemv.db.xz --min-s 0.5 > $S/duty/energy.md
