#!/bin/sh
# Round 06h's H200 slices re-validated with the quantizer's op kind (2026-12-06, lead, session 10:48
# UTC; fcb7065 .. 5e94718): validate-slice.py reads the captures' `elementwise ... n=3584 in=2 out=1
# dtype=fp8` ranges as `quant tokens=T width=3584 dtype=fp8 group=0`, and calibrate fits the quant
# class from the bench's rows (tokens 1 .. 16K, powers of 4). The same pairings and clocks as
# ../run.sh; nothing else changed. From the root:  sh bench/results/k3-kernels-h200-2026-12-06h/quant/run.sh K3SIM
set -eu
K3=${1:?usage: run.sh K3SIM}
R=bench/results/k3-kernels-h200-2026-12-06h Q=bench/results/k3-kernels-h200-2026-12-06h/quant
mkdir -p $Q/val8 $Q/val16
COMMON="--base-hw h200 --kda-pair-rule on"
CLOCKS="boost power measured" VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml $COMMON" \
	sh kernels/slice/validate-pairs.sh "$K3" $Q/val8 "aq bq ep eq" a=$R/a:$R/q/kda-grid.csv b=$R/b:$R/q/kda-grid.csv \
	e=$R/b3:$R/q/kda-grid.csv p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
CLOCKS="boost power measured" VALIDATE_ARGS="--scenario scenarios/k3-slice.yaml $COMMON --fp4-gemv-rows 1" \
	sh kernels/slice/validate-pairs.sh "$K3" $Q/val16 "cq dq fp fq" c=$R/c:$R/q/kda-grid.csv d=$R/d:$R/q/kda-grid.csv \
	f=$R/d3:$R/q/kda-grid.csv p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
python3 kernels/slice/heldout_summary.py $Q/val8 \
	"Round 06h with the quant class: the K3 slice with E4M3 expert inputs on an H200 (calls 24, 26) against the same build's benches (calls 24, 25)," > $Q/summary-fp8.md
python3 kernels/slice/heldout_summary.py $Q/val16 \
	"Round 06h with the quant class: the K3 slice with BF16 expert inputs on an H200 (calls 24, 26) against the same build's benches (calls 24, 25)," > $Q/summary-bf16.md
