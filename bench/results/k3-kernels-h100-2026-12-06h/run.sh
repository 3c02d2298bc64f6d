#!/bin/sh
# Round 06h (2026-12-06, lead, session 08:20 UTC): the slice on an H100 with this build's defaults,
# E4M3 expert inputs (a: call 4, b: call 6) and BF16 (c: call 4, d: call 6), prefill 4K, 16K, decode
# B = 1, 16, 64, 256 at C = 8K and B = 1, 16, 64 at C = 64K, against the k3-kernels presets fitted on
# the full bench captures of calls 8 (r) and 17 (s) of the same build (with k3-bench's mla_uv rows): held out by call. At the boost
# clock and at each op's recorded clock, with the H100 preset as the base; then the summaries.
# From the root:  sh bench/results/k3-kernels-h100-2026-12-06h/run.sh K3SIM   (~1 min)
set -eu
K3=${1:?usage: run.sh K3SIM}
R=bench/results/k3-kernels-h100-2026-12-06h
mkdir -p $R/val8 $R/val16
COMMON="--base-hw h100 --measured-laws off --kda-pair-rule on"
CLOCKS="boost measured" VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml $COMMON" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val8 "ar as br bs" a=$R/a:$R/r/kda-grid.csv b=$R/b:$R/r/kda-grid.csv \
	r=$R/r:$R/r/kda-grid.csv s=$R/s:$R/s/kda-grid.csv
CLOCKS="boost measured" VALIDATE_ARGS="--scenario scenarios/k3-slice.yaml $COMMON --fp4-gemv-rows 1" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val16 "cr cs dr ds" c=$R/c:$R/r/kda-grid.csv d=$R/d:$R/r/kda-grid.csv \
	r=$R/r:$R/r/kda-grid.csv s=$R/s:$R/s/kda-grid.csv
python3 kernels/slice/heldout_summary.py $R/val8 \
	"Round 06h: the K3 slice with E4M3 expert inputs on an H100 (calls 4, 6) against the same build's benches (calls 8, 17)," > $R/summary-fp8.md
python3 kernels/slice/heldout_summary.py $R/val16 \
	"Round 06h: the K3 slice with BF16 expert inputs on an H100 (calls 4, 6) against the same build's benches (calls 8, 17)," > $R/summary-bf16.md
# Call 21's slices (a2, b2 E4M3; c2, d2 BF16: k3-slice with decode warm-up of >= 3 steps and 50 ms)
mkdir -p $R/val8w $R/val16w
CLOCKS="boost measured" VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml $COMMON" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val8w "ar as br bs" a=$R/a2:$R/r/kda-grid.csv b=$R/b2:$R/r/kda-grid.csv \
	r=$R/r:$R/r/kda-grid.csv s=$R/s:$R/s/kda-grid.csv
CLOCKS="boost measured" VALIDATE_ARGS="--scenario scenarios/k3-slice.yaml $COMMON --fp4-gemv-rows 1" \
	sh kernels/slice/validate-pairs.sh "$K3" $R/val16w "cr cs dr ds" c=$R/c2:$R/r/kda-grid.csv d=$R/d2:$R/r/kda-grid.csv \
	r=$R/r:$R/r/kda-grid.csv s=$R/s:$R/s/kda-grid.csv
python3 kernels/slice/heldout_summary.py $R/val8w \
	"Round 06h: the K3 slice with E4M3 expert inputs on an H100 (call 21, the decode warm-up) against the same build's benches (calls 8, 17)," > $R/summary-fp8-call21.md
python3 kernels/slice/heldout_summary.py $R/val16w \
	"Round 06h: the K3 slice with BF16 expert inputs on an H100 (call 21, the decode warm-up) against the same build's benches (calls 8, 17)," > $R/summary-bf16-call21.md
