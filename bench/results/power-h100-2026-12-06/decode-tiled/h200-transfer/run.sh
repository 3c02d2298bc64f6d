# The H200 with the H100-measured weight-expansion energy transferred (rejected, see ../README.md):
# validate-slice.py with MEASURED_LAWS (h200) grouped A 180 W, 0.443 pJ, power_welem_pj 73.7 (not in the
# repository's validate-slice.py); build of the session 13:55 UTC before the FP8-share change to welems.
set -e
cd /work/main
R=bench/results/k3-kernels-h200-2026-12-06h O=/tmp/h200val
mkdir -p $O/val8 $O/val16
COMMON="--base-hw h200 --kda-pair-rule on"
CLOCKS=power VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml $COMMON" \
	sh kernels/slice/validate-pairs.sh build-cpu/cli/k3sim $O/val8 "aq bq ep eq" a=$R/a:$R/q/kda-grid.csv b=$R/b:$R/q/kda-grid.csv \
	e=$R/b3:$R/q/kda-grid.csv p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
CLOCKS=power VALIDATE_ARGS="--scenario scenarios/k3-slice.yaml $COMMON --fp4-gemv-rows 1" \
	sh kernels/slice/validate-pairs.sh build-cpu/cli/k3sim $O/val16 "cq dq fp fq" c=$R/c:$R/q/kda-grid.csv d=$R/d:$R/q/kda-grid.csv \
	f=$R/d3:$R/q/kda-grid.csv p=$R/p:$R/p/kda-grid.csv q=$R/q:$R/q/kda-grid.csv
python3 kernels/slice/heldout_summary.py $O/val8 "H200 E4M3 (welem)" > $O/summary-fp8.md
python3 kernels/slice/heldout_summary.py $O/val16 "H200 BF16 (welem)" > $O/summary-bf16.md
echo DONE
