#!/bin/sh
# Round 05v (2026-12-05, lead): the FP8 slice on an H200 held out by call: call 10's slices a, b
# (e4m3) against the k3-kernels presets fitted on call 11's bench capture (k3-bench --expert-act
# e4m3) with its KDA grid, scenarios/k3-slice-fp8.yaml, the h200 base (its power model: --clock power
# too); then summary.md.
# From the root:  sh bench/results/k3-kernels-h200-2026-12-05v/run.sh K3SIM   (~40 s)
set -eu
K3=${1:?usage: run.sh K3SIM}
V=bench/results/k3-kernels-h200-2026-12-05v
mkdir -p $V/val
CLOCKS="power boost measured" VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml --kda-pair-rule on" \
	sh kernels/slice/validate-pairs.sh "$K3" $V/val "ak bk" a=$V/call10/a:$V/call11/kda-grid.csv \
	b=$V/call10/b:$V/call11/kda-grid.csv k=$V/call11:$V/call11/kda-grid.csv
python3 kernels/slice/heldout_summary.py $V/val \
	"Round 05v: the K3 slice with E4M3 expert activations on an H200, held out by call (slices call 10, bench call 11)" > $V/summary.md
