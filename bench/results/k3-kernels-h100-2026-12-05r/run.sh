#!/bin/sh
# Round 05r (2026-12-05, lead): the held-out validation of the K3 slice with E4M3 expert activations
# on an H100: the slices of runs a and b (call 3) against the k3-kernels presets fitted on the bench
# captures of runs p (call 2) and q (call 4), each pairing held out by run, at the boost clock and
# at each op's recorded clock (the H100 preset has no power model: no --clock power), with the H100
# preset as the base (validate-slice.py --base-hw h100; the H200's measured clock laws are not
# applied: --measured-laws off) and scenarios/k3-slice-fp8.yaml; then summary.md; then call 5's slices.
# From the root:  sh bench/results/k3-kernels-h100-2026-12-05r/run.sh K3SIM   (~40 s)
set -eu
K3=${1:?usage: run.sh K3SIM}
R=bench/results/k3-kernels-h100-2026-12-05r
mkdir -p $R/val
CLOCKS="boost measured" \
VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml --base-hw h100 --measured-laws off --kda-pair-rule on" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val "ap aq bp bq" a=$R/a:$R/p/kda-grid.csv b=$R/b:$R/p/kda-grid.csv \
	p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
python3 kernels/slice/heldout_summary.py $R/val \
	"Round 05r: the K3 slice with E4M3 expert activations on an H100, held out by run" > $R/summary.md
# Call 5 (19:07 UTC, kernels/calls/k3-2026-12-05s.sh): its slices d, e against the same benches (held out by call).
mkdir -p $R/val5
CLOCKS="boost measured" \
VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml --base-hw h100 --measured-laws off --kda-pair-rule on" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val5 "dp dq ep eq" d=$R/call5/d:$R/p/kda-grid.csv e=$R/call5/e:$R/p/kda-grid.csv \
	p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
python3 kernels/slice/heldout_summary.py $R/val5 \
	"Round 05r, call 5's slices (d, e) against calls 2 and 4's benches (p, q): held out by call" > $R/summary-call5.md
