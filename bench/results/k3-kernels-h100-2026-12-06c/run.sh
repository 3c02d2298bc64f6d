#!/bin/sh
# Round 06c (2026-12-06, lead): the K3 slice with E4M3 expert inputs and the one-pass quantizer
# (call 2: slices a, b) against the k3-kernels presets fitted on round 05r's benches p and q
# (2026-12-05): held out by day. At the boost clock and at each op's recorded clock, with the H100
# preset as the base (the cards were H100s), as round 05r's run.sh does; then summary.md.
# From the root:  sh bench/results/k3-kernels-h100-2026-12-06c/run.sh K3SIM   (~30 s)
set -eu
K3=${1:?usage: run.sh K3SIM}
R=bench/results/k3-kernels-h100-2026-12-06c
P=bench/results/k3-kernels-h100-2026-12-05r
mkdir -p $R/val
CLOCKS="boost measured" \
VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml --base-hw h100 --measured-laws off --kda-pair-rule on" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val "ap aq bp bq" a=$R/call2/a:$P/p/kda-grid.csv b=$R/call2/b:$P/p/kda-grid.csv \
	p=$P/p:$P/p/kda-grid.csv q=$P/q:$P/q/kda-grid.csv
python3 kernels/slice/heldout_summary.py $R/val \
	"Round 06c: the K3 slice with the one-pass E4M3 quantizer on an H100 (2026-12-06), against round 05r's benches (2026-12-05), a day apart," > $R/summary.md
