#!/bin/sh
# The power model's active draw (device.power_active_w_<class>), held out: the values fitted on the
# ops run back to back (bench/power/active-fit.py on bench/results/op-sustained-h200-2026-12-04/,
# active-fit.md), set in the k3-kernels presets' base (calibrate holds a class measured whole and
# fits the others, KDA's, as before), against the shipped laws (d20), on (1) the timed steps of
# rounds 23-27 (each run's slice against the other run's bench of the same call: ab, ba) and round
# 28 (run a of 2026-12-04 against the two benches of round 27: ar, as), under --clock power, into
# OUT/<round>-<cfg>/; (2) the steady state of 2026-12-04's slices a, b against the same two
# presets (bench/power/sustained-eval.py) into OUT/sustained-<run><bench>-<cfg>.md. From the root:
#   [CONFIGS="d20 act act2 act3 act4"] sh bench/results/power-active-2026-12-04/heldout-run.sh K3SIM OUT
# then CONFIGS="d20 act act2 act3 act4" python3 bench/results/clock-bound-h200-2026-12-03/heldout-table.py OUT
set -eu
K3=${1:?usage: heldout-run.sh K3SIM OUT}
OUT=${2:?usage: heldout-run.sh K3SIM OUT}
# the laws of MEASURED_LAWS before the active draws (validate-slice.py's default since 3282825
# carries act's values: each configuration here names all its keys)
LAWS="--device-key clock_bound_gemm=0.835 --device-key clock_bound_grouped_gemm=0.96 --device-key clock_scaled_excess=1
 --device-key power_byte_pj=65.3 --device-key power_byte_held=1"
ACT="--device-key power_flop_clock_exp=1 --device-key power_active_clock_exp=1
 --device-key power_active_w_gemm=327 --device-key power_flop_pj_gemm=0.586
 --device-key power_active_w_grouped_gemm=100 --device-key power_flop_pj_grouped_gemm=0.996
 --device-key power_active_w_grouped_gemv=437 --device-key power_flop_pj_grouped_gemv=0.182
 --device-key power_active_w_mla_decode=402 --device-key power_flop_pj_mla_decode=0.038
 --device-key power_active_w_mla_prefill=257 --device-key power_flop_pj_mla_prefill=0.660
 --device-key power_active_w_vector=133 --device-key power_flop_pj_vector=0.001"
# act2: refitted with the second call's ops too (dense GEMMs at m = 16, 256; AttnRes, routing,
# combine, ShortConv: the vector class), active-fit2.md: act with gemm and vector refitted (a later
# --device-key replaces an earlier one: validate-slice.py rule_preset)
ACT2="$ACT --device-key power_active_w_gemm=341 --device-key power_flop_pj_gemm=0.562
 --device-key power_active_w_vector=262 --device-key power_flop_pj_vector=5.3"
# act3: act2 with KDA's class held too (its decode back to back, call3: A 259 W, 4.09 pJ from 3 ops)
ACT3="$ACT2 --device-key power_active_w_kda=259 --device-key power_flop_pj_kda=4.09"
# act4: act3 with KDA's FLOP energy given (the dense GEMMs' 0.562 pJ) and its A alone fitted (270 W,
# active-fit4.md): the decode's ops all run at ~3 TFLOP/s, which cannot tell A from e, and act3's
# 4.09 pJ put the chunked prefill (~125 TFLOP/s) at ~960 W
ACT4="$ACT2 --device-key power_active_w_kda=270 --device-key power_flop_pj_kda=0.562"
# act5 (added later on 2026-12-04): act4 with KDA's class fitted on its decode and, now measured back
# to back too, its chunked prefill (bench/results/op-sustained-h200-2026-12-04/call4/: held by the
# limiter at 1727-1796 MHz, which act4 priced at ~533 W at boost): 264 W, 2.834 pJ over 9 ops, rms
# log error 0.026 (active-fit5.md)
ACT5="$ACT2 --device-key power_active_w_kda=264 --device-key power_flop_pj_kda=2.834"
S=bench/results/sustained-h200-2026-12-04
ZB=bench/results/k3-kernels-h200-2026-12-03zb
for cfg in ${CONFIGS:-d20 act act2 act3 act4}; do
	case $cfg in d20) VA="--measured-laws off $LAWS" ;; act) VA="--measured-laws off $LAWS $ACT" ;;
	act2) VA="--measured-laws off $LAWS $ACT2" ;; act3) VA="--measured-laws off $LAWS $ACT3" ;;
	act4) VA="--measured-laws off $LAWS $ACT4" ;; act5) VA="--measured-laws off $LAWS $ACT5" ;; *) echo "heldout-run.sh: no configuration $cfg" >&2; exit 2 ;; esac
	for rd in 03r 03v 03z 03za 03zb; do
		D=bench/results/k3-kernels-h200-2026-12-$rd
		mkdir -p "$OUT/$rd-$cfg"
		CLOCKS=power VALIDATE_ARGS="$VA" sh kernels/slice/validate-pairs.sh "$K3" "$OUT/$rd-$cfg" "ab ba" \
			a=$D/a:$D/ka/kda-grid.csv b=$D/b:$D/kb/kda-grid.csv
	done
	mkdir -p "$OUT/04-$cfg"
	CLOCKS=power VALIDATE_ARGS="$VA" sh kernels/slice/validate-pairs.sh "$K3" "$OUT/04-$cfg" "ar as" \
		a=$S/a:$ZB/ka/kda-grid.csv r=$ZB/a:$ZB/ka/kda-grid.csv s=$ZB/b:$ZB/kb/kda-grid.csv
	for b in r s; do
		case $b in r) BD=$ZB/a; KD=$ZB/ka ;; s) BD=$ZB/b; KD=$ZB/kb ;; esac
		W=$(mktemp -d)
		python3 kernels/slice/validate-slice.py --clock power --results $S/a --bench-results $BD \
			--kda-bench $KD/kda-grid.csv --k3sim "$K3" --keep "$W" $VA -o "$W/v.md" > /dev/null
		for r in a b; do
			python3 bench/power/sustained-eval.py "$K3" $S/$r "$W" > "$OUT/sustained-$r$b-$cfg.md"
		done
		rm -rf "$W"
	done
done
