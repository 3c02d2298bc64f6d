#!/bin/sh
# Round 06h on an H200 (2026-12-06, lead, session 08:20 UTC): the slice on the whole grid
# (prefill 4K, 16K; decode B = 1, 16, 64, 256 x C = 8K, 64K), E4M3 expert inputs (a, b: call 24;
# e = b3: call 26) and BF16 (c, d: call 24; f = d3: call 26), against the k3-kernels presets fitted
# on the full bench captures of calls 24 (p, after the slices in the same call) and 25 (q): held out
# by call (aq bq ep eq, cq dq fp fq). At the boost clock, under the power regime and at each op's
# recorded clock, the H200 preset as the base with its measured laws (validate-slice.py's defaults).
# From the root:  sh bench/results/k3-kernels-h200-2026-12-06h/run.sh K3SIM   (~3 min)
set -eu
K3=${1:?usage: run.sh K3SIM}
R=bench/results/k3-kernels-h200-2026-12-06h
mkdir -p $R/val8 $R/val16
COMMON="--base-hw h200 --kda-pair-rule on"
CLOCKS="boost power measured" VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml $COMMON" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val8 "aq bq ep eq" a=$R/a:$R/q/kda-grid.csv b=$R/b:$R/q/kda-grid.csv \
	e=$R/b3:$R/q/kda-grid.csv p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
CLOCKS="boost power measured" VALIDATE_ARGS="--scenario scenarios/k3-slice.yaml $COMMON --fp4-gemv-rows 1" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val16 "cq dq fp fq" c=$R/c:$R/q/kda-grid.csv d=$R/d:$R/q/kda-grid.csv \
	f=$R/d3:$R/q/kda-grid.csv p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
python3 kernels/slice/heldout_summary.py $R/val8 \
	"Round 06h: the K3 slice with E4M3 expert inputs on an H200 (calls 24, 26) against the same build's benches (calls 24, 25)," > $R/summary-fp8.md
python3 kernels/slice/heldout_summary.py $R/val16 \
	"Round 06h: the K3 slice with BF16 expert inputs on an H200 (calls 24, 26) against the same build's benches (calls 24, 25)," > $R/summary-bf16.md
