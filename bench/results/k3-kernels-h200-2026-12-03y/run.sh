#!/bin/sh
# The window limiter's window (2026-12-03y, lead, CPU only): the slice's held-out pairings under
# --clock power with the base preset's power_window_ms set to W (validate-slice.py
# --power-window-ms; 0: the filtered-power controller of rounds 19-24). Chosen on round 22 (03x,
# six pairings) among WINDOWS_FIT; held out on rounds 23 (03r, six pairings) and 24 (03v, eight)
# at 0 and the chosen 100 ms. From the repository root:
#   sh bench/results/k3-kernels-h200-2026-12-03y/run.sh K3SIM
# K3SIM: a CPU build's cli/k3sim. Writes <round>-w<W>/power-<pairing>.md and summary.md here, then
# table.md (table.py).
set -eu
K3=${1:?usage: run.sh K3SIM}
D=bench/results/k3-kernels-h200-2026-12-03y
X=bench/results/k3-kernels-h200-2026-12-03x R=bench/results/k3-kernels-h200-2026-12-03r
V=bench/results/k3-kernels-h200-2026-12-03v
round() { # round letter, window: the pairings into $D/<round>-w<W>
	O=$D/$1-w$2
	mkdir -p "$O"
	case $1 in
	x) P="ab ac ba bc ca cb" S="a=$X/a:$X/ka/kda-grid.csv b=$X/b:$X/kb/kda-grid.csv c=$X/call2/c:$X/call2/kc/kda-grid.csv" ;;
	r) P="ab ac ba bc ca cb" S="a=$R/a:$R/ka/kda-grid.csv b=$R/b:$R/kb/kda-grid.csv c=$R/call2/c:$R/call2/kc/kda-grid.csv" ;;
	v) P="ab ba ap aq ar bp bq br"
	   S="a=$V/a:$V/ka/kda-grid.csv b=$V/b:$V/kb/kda-grid.csv p=$R/a:$R/ka/kda-grid.csv q=$R/b:$R/kb/kda-grid.csv r=$R/call2/c:$R/call2/kc/kda-grid.csv" ;;
	esac
	# shellcheck disable=SC2086
	CLOCKS=power VALIDATE_ARGS="--power-window-ms $2" sh kernels/slice/validate-pairs.sh "$K3" "$O" "$P" $S
	python3 kernels/slice/heldout_summary.py "$O" "Round $1, power_window_ms $2" > "$O/summary.md"
}
for w in ${WINDOWS_FIT:-0 25 50 100 200 400}; do round x "$w"; done
for w in ${WINDOWS_HELD:-0 100 200}; do round r "$w"; round v "$w"; done
python3 $D/table.py $D > $D/table.md
