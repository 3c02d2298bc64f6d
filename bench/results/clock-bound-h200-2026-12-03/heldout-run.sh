#!/bin/sh
# The slice's held-out validation (rounds 23-26, each run's slice against the other run's bench of
# the same call: ab, ba) under three configurations of the base preset, into OUT/<round>-<cfg>/:
#   base  h200 as shipped before 2026-12-03's clock laws (every clock_bound 1, no excess law, the
#         byte fitted at 79.2 pJ, the FLOP at 1.400 pJ): device keys over today's h200
#   laws  base + the clock laws measured here: clock_bound_gemm 0.835, clock_bound_grouped_gemm 0.96
#         (this project's kernels), clock_scaled_excess 1
#   held  laws + the HBM byte's measured 65.3 pJ held (h200 since 2026-12-03, with
#         validate-slice.py's default MEASURED_LAWS)
# then python3 heldout-table.py OUT. From the repository root:
#   [RESULTS=bench/results] sh bench/results/clock-bound-h200-2026-12-03/heldout-run.sh K3SIM OUT
set -eu
K3=${1:?usage: heldout-run.sh K3SIM OUT}
OUT=${2:?usage: heldout-run.sh K3SIM OUT}
OLD="--measured-laws off --device-key clock_scaled_excess=0 --device-key clock_bound_gemm=0 --device-key power_byte_pj=79.2274763 --device-key power_byte_held=0 --device-key power_flop_pj=1.39994935"
LAWS="--device-key clock_bound_gemm=0.835 --device-key clock_bound_grouped_gemm=0.96 --device-key clock_scaled_excess=1"
for rd in 03r 03v 03z 03za; do
	D=${RESULTS:-bench/results}/k3-kernels-h200-2026-12-$rd
	for cfg in base laws held; do
		case $cfg in base) VA="$OLD" ;; laws) VA="$OLD $LAWS" ;; held) VA="" ;; esac
		mkdir -p "$OUT/$rd-$cfg"
		CLOCKS="power measured" VALIDATE_ARGS="$VA" sh kernels/slice/validate-pairs.sh "$K3" "$OUT/$rd-$cfg" "ab ba" \
			a=$D/a:$D/ka/kda-grid.csv b=$D/b:$D/kb/kda-grid.csv
	done
done
