#!/bin/sh
# The H100 power model held out on the slices: round 06h's call 21 slices on an H100 (a2, b2 E4M3
# expert inputs; c2, d2 BF16) against the same build's bench captures of calls 8 (r) and 17 (s),
# under --clock power and at boost, the h100 preset (with this folder's power model) as the base.
# CONFIG base: --measured-laws off (the preset alone: the classes' FLOP energies fitted by calibrate
# on the bench's lagged readings); act: --measured-laws on (validate-slice.py's MEASURED_LAWS_H100,
# the classes' draws of sustained/). The captures were taken before the model was measured and
# choose nothing in it. From the repository root (~3 min a config):
#   sh bench/results/power-h100-2026-12-06/heldout-run.sh K3SIM base|act
# (HELDOUT_DIR: the reports elsewhere; EXTRA_ARGS: more validate-slice.py options; CLOCKS: power and / or boost)
set -eu
K3=${1:?usage: heldout-run.sh K3SIM base|act}
CONFIG=${2:?usage: heldout-run.sh K3SIM base|act}
case $CONFIG in base) LAWS=off ;; act) LAWS=on ;; *) echo "heldout-run.sh: CONFIG is base or act" >&2; exit 2 ;; esac
H=bench/results/k3-kernels-h100-2026-12-06h D=${HELDOUT_DIR:-bench/results/power-h100-2026-12-06/heldout/$CONFIG}
mkdir -p $D/val8w $D/val16w
COMMON="--base-hw h100 --measured-laws $LAWS --kda-pair-rule on ${EXTRA_ARGS:-}"
CLOCKS="${CLOCKS:-power boost}" VALIDATE_ARGS="--scenario scenarios/k3-slice-fp8.yaml $COMMON" \
	sh kernels/slice/validate-pairs.sh "$K3" $D/val8w "ar as br bs" a=$H/a2:$H/r/kda-grid.csv b=$H/b2:$H/r/kda-grid.csv \
	r=$H/r:$H/r/kda-grid.csv s=$H/s:$H/s/kda-grid.csv
CLOCKS="${CLOCKS:-power boost}" VALIDATE_ARGS="--scenario scenarios/k3-slice.yaml $COMMON --fp4-gemv-rows 1" \
	sh kernels/slice/validate-pairs.sh "$K3" $D/val16w "cr cs dr ds" c=$H/c2:$H/r/kda-grid.csv d=$H/d2:$H/r/kda-grid.csv \
	r=$H/r:$H/r/kda-grid.csv s=$H/s:$H/s/kda-grid.csv
python3 kernels/slice/heldout_summary.py $D/val8w \
	"The H100 power model ($CONFIG): round 06h's E4M3 slices (call 21) against the same build's benches (calls 8, 17)," > $D/summary-fp8.md
python3 kernels/slice/heldout_summary.py $D/val16w \
	"The H100 power model ($CONFIG): round 06h's BF16 slices (call 21) against the same build's benches (calls 8, 17)," > $D/summary-bf16.md
