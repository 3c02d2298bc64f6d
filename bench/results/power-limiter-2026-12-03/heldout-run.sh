#!/bin/sh
# The slice's held-out validation under --clock power (rounds 23-27, each run's slice against the
# other run's bench of the same call: ab, ba) for each configuration of the limiter named in
# CONFIGS (default: all below), into OUT/<round>-<cfg>/; then
# CONFIGS=... python3 bench/results/clock-bound-h200-2026-12-03/heldout-table.py OUT. From the repository root:
#   [RESULTS=bench/results] [CONFIGS="w100 d5 ..."] sh bench/results/power-limiter-2026-12-03/heldout-run.sh K3SIM OUT
#   w100   the window limiter h200 carried before (the clock of the 100 ms ending with the op)
#   d5     the delayed limiter fitted on the probe's step response (step-fit.md): delay 25 ms, window
#          5 ms, rise 30 ms, fall 5 ms (h200 since)
#   d20    the same with a 20 ms window (delay 20, rise 30, fall 2: the best with that window)
#   d5g / d20g  the same with a FLOP's energy as f^0.74 (power_flop_clock_exp; the classes' energies
#          refitted by calibrate under it)
#   d20s   d20 with the SM-clocked shares of MLA decode (1) and the MXFP4 decode gemvs (0.31), measured
#          in bench/results/clock-bound-h200-2026-12-03/decode/ (not in h200: README there); the others
#          without them
# CLOCKS (default "power"): the clocks validate-pairs.sh runs (e.g. "power measured").
set -eu
K3=${1:?usage: heldout-run.sh K3SIM OUT}
OUT=${2:?usage: heldout-run.sh K3SIM OUT}
W100="--device-key power_window_ms=100 --device-key power_delay_ms=0 --device-key power_rise_ms=0 --device-key power_fall_ms=0"
D5="--device-key power_window_ms=5 --device-key power_delay_ms=25 --device-key power_rise_ms=30 --device-key power_fall_ms=5"
D20="--device-key power_window_ms=20 --device-key power_delay_ms=20 --device-key power_rise_ms=30 --device-key power_fall_ms=2"
G="--device-key power_flop_clock_exp=0.74"
NOSHARE="--device-key clock_sm_share_mla_decode=0 --device-key clock_sm_share_grouped_gemv=0"
SHARE="--device-key clock_sm_share_mla_decode=1 --device-key clock_sm_share_grouped_gemv=0.31"
for rd in 03r 03v 03z 03za 03zb; do
	D=${RESULTS:-bench/results}/k3-kernels-h200-2026-12-$rd
	for cfg in ${CONFIGS:-w100 d5 d20 d5g d20g}; do
		case $cfg in
		w100) VA="$W100 $NOSHARE" ;; d5) VA="$D5 $NOSHARE" ;; d20) VA="$D20 $NOSHARE" ;;
		d5g) VA="$D5 $G $NOSHARE" ;; d20g) VA="$D20 $G $NOSHARE" ;; d20s) VA="$D20 $SHARE" ;;
		*) echo "heldout-run.sh: no configuration $cfg" >&2; exit 2 ;;
		esac
		mkdir -p "$OUT/$rd-$cfg"
		CLOCKS="${CLOCKS:-power}" VALIDATE_ARGS="$VA" sh kernels/slice/validate-pairs.sh "$K3" "$OUT/$rd-$cfg" "ab ba" \
			a=$D/a:$D/ka/kda-grid.csv b=$D/b:$D/kb/kda-grid.csv
	done
done
