#!/bin/sh
# Round 06q (2026-12-06, lead, session 10:48 UTC): one H100 call (11:28 UTC, 46 s; pack of 5e94718,
# kernels/calls/k3-2026-12-06h.sh PHASE="bench slice", the H100 grid) with the quantizer's own op
# kind in the NVTX ranges (`k3sim op=quant ...`): the full k3-bench capture (q) and the slice with
# E4M3 (a) and BF16 (c) expert inputs. Held out by call both ways against round 06h's H100 runs
# (benches r, s of calls 8, 17; slices a2, b2, c2, d2 of call 21): this call's slices against 06h's
# benches, 06h's slices against this call's bench. At boost, under the power regime (the h100
# preset's power model with validate-slice.py's MEASURED_LAWS_H100) and at the recorded clocks.
# From the root:  sh bench/results/k3-kernels-h100-2026-12-06q/run.sh K3SIM   (~8 min)
set -eu
K3=${1:?usage: run.sh K3SIM}
R=bench/results/k3-kernels-h100-2026-12-06q H=bench/results/k3-kernels-h100-2026-12-06h
mkdir -p $R/val8 $R/val16
COMMON="--base-hw h100 --kda-pair-rule on"
CLOCKS="boost power measured" VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml $COMMON" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val8 "ar as eq fq" a=$R/a:$H/r/kda-grid.csv \
	e=$H/a2:$R/q/kda-grid.csv f=$H/b2:$R/q/kda-grid.csv \
	r=$H/r:$H/r/kda-grid.csv s=$H/s:$H/s/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
CLOCKS="boost power measured" VALIDATE_ARGS="--scenario scenarios/k3-slice.yaml $COMMON --fp4-gemv-rows 1" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val16 "cr cs gq hq" c=$R/c:$H/r/kda-grid.csv \
	g=$H/c2:$R/q/kda-grid.csv h=$H/d2:$R/q/kda-grid.csv \
	r=$H/r:$H/r/kda-grid.csv s=$H/s:$H/s/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
python3 kernels/slice/heldout_summary.py $R/val8 \
	"Round 06q: the K3 slice with E4M3 expert inputs on H100s, held out by call against round 06h (quant ranges of their own)," > $R/summary-fp8.md
python3 kernels/slice/heldout_summary.py $R/val16 \
	"Round 06q: the K3 slice with BF16 expert inputs on H100s, held out by call against round 06h (quant ranges of their own)," > $R/summary-bf16.md
