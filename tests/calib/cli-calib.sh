#!/bin/sh
# End to end: k3sim trace validate and k3sim calibrate on a synthetic trace; the calibrated preset
# in `k3sim op` and `k3sim run`; bad inputs give clear errors and the right exit codes.
K3SIM=$1
GEN=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$GEN" "$T/t.db" 3000 || fail "gen-trace"
"$K3SIM" trace validate "$T/t.db" --hw h200 > "$T/out" || fail "validate"

# two runs of one grid whose BF16 GEMMs ran another kernel: calibrate warns, naming the op, both
# kernels and both runs, and counts them; two runs of the same kernels do not
"$GEN" "$T/t2.db" 3000 || fail "gen-trace t2"
"$GEN" "$T/tk.db" 3000 "void (anonymous namespace)::wg_kernel<1, 2>(k3gemm::params)" || fail "gen-trace tk"
"$K3SIM" calibrate "$T/t.db" "$T/t2.db" -o "$T/same.yaml" --json > "$T/same.json" 2> "$T/same.err" ||
	fail "calibrate, same kernels"
grep -q "ran different kernels" "$T/same.err" && fail "calibrate warned on runs of the same kernels"
grep -q '"mixed_kernel_ops": 0' "$T/same.json" || fail "calibrate --json: mixed_kernel_ops not 0"
"$K3SIM" calibrate "$T/t.db" "$T/tk.db" -o "$T/mixed.yaml" --json > "$T/mixed.json" 2> "$T/mixed.err" ||
	fail "calibrate, two kernels"
grep -q "ops ran different kernels in different runs, e.g. .gemm m=[0-9]* n=[0-9]* k=[0-9]* dtype=bf16.: nvjet_sm90_tst_128x128 (.*t.db) against wg_kernel (.*tk.db)" "$T/mixed.err" ||
	fail "calibrate: no mixed-kernels warning naming the op, both kernels and runs: $(cat "$T/mixed.err")"
grep -q '"mixed_kernel_ops": [1-9]' "$T/mixed.json" || fail "calibrate --json: mixed_kernel_ops 0 over two kernels"
grep -q "gemm.bf16" "$T/out" || fail "validate: no gemm.bf16 row"
grep -q "activities matched no op" "$T/out" || fail "validate: unmatched stray kernels not reported"
"$K3SIM" trace validate "$T/t.db" -o "$T/rep" --json > "$T/v.json" || fail "validate -o --json"
[ -s "$T/rep/validate.md" ] && [ -s "$T/rep/validate.json" ] || fail "validate: no report files"
grep -q '"classes"' "$T/v.json" || fail "validate --json"
grep -q "stray_kernel" "$T/rep/validate.md" || fail "validate: unmatched list"
K3SIM_GNUPLOT=/nonexistent/gnuplot "$K3SIM" trace validate "$T/t.db" -o "$T/rep2" > /dev/null 2> "$T/err" ||
	fail "validate without gnuplot"
grep -q "No plots" "$T/rep2/validate.md" || fail "validate without gnuplot: no note in the report"
# at the measured clock: a trace without clock readings is named, its ops predicted at boost
"$K3SIM" trace validate "$T/t.db" --hw h200 --clock measured > "$T/out" 2> "$T/err" || fail "validate --clock measured"
grep -q "no SM clock readings" "$T/err" || fail "validate --clock measured: no note on a trace without readings"
grep -q "clock MHz" "$T/out" || fail "validate --clock measured: no clock column"
"$K3SIM" trace validate "$T/t.db" --clock 1830 2> "$T/err"; [ $? -eq 2 ] || fail "validate --clock 1830: exit status"
grep -q "takes boost, measured or power" "$T/err" || fail "validate bad --clock: message"
# the power regime: each op at the power-limit model's clock over the capture (no readings needed)
"$K3SIM" trace validate "$T/t.db" --hw h200 --clock power > "$T/out" 2> "$T/err" || fail "validate --clock power"
grep -q "clock MHz" "$T/out" || fail "validate --clock power: no clock column"
"$K3SIM" trace validate "$T/t.db" --hw h200 --clock power -o "$T/repp" > /dev/null 2> "$T/err" ||
	fail "validate --clock power -o"
grep -q "power-limit model gives each op" "$T/repp/validate.md" || fail "validate --clock power: clocks called readings"
"$K3SIM" trace validate "$T/t.db" --hw h200 --clock power --json > "$T/out" 2> "$T/err" || fail "validate --clock power --json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['clock'] == 'power', d['clock']" "$T/out" ||
	fail "validate --clock power --json: clock"
grep -q "no SM clock readings" "$T/err" && fail "validate --clock power: asked for readings"
"$K3SIM" trace validate "$T/t.db" --hw h200-datasheet --clock power > /dev/null 2> "$T/err" &&
	fail "validate --clock power with a preset without the power model"
grep -q "power-limit model" "$T/err" || fail "validate --clock power without the model: message"

"$K3SIM" calibrate "$T/t.db" --hw h200 -o "$T/cal.yaml" > "$T/out" || fail "calibrate"
grep -q "held out" "$T/out" || fail "calibrate: no held-out table"
grep -q "^calibrated: true" "$T/cal.yaml" || fail "calibrate: preset not marked calibrated"
grep -q "NVIDIA H200" "$T/cal.yaml" || fail "calibrate: no device in the calibration section"
"$K3SIM" op gemm m=64 n=7168 k=7168 --hw "$T/cal.yaml" --json | grep -q '"hw_calibrated": true' ||
	fail "op --hw calibrated"
"$K3SIM" run --hw "$T/cal.yaml" > /dev/null || fail "run --hw calibrated"
"$K3SIM" trace validate "$T/t.db" --hw "$T/cal.yaml" > /dev/null || fail "validate --hw calibrated"
"$K3SIM" calibrate "$T/t.db" -o "$T/cal.yaml" > /dev/null 2>&1 && fail "calibrate replaced a file without --force"
"$K3SIM" calibrate "$T/t.db" --clock measured -o "$T/cal-clk.yaml" > /dev/null 2> "$T/err" || fail "calibrate --clock measured"
grep -q "no SM clock readings" "$T/err" || fail "calibrate --clock measured: no note on a trace without readings"
"$K3SIM" calibrate "$T/t.db" --clock 1830 -o "$T/x.yaml" 2> /dev/null; [ $? -eq 2 ] || fail "calibrate --clock 1830: exit status"
"$K3SIM" calibrate "$T/t.db" -o "$T/cal.yaml" --force --json | grep -q '"held_out_points"' || fail "calibrate --json"

# bad inputs
echo "not a trace" > "$T/x.db"
"$K3SIM" trace validate "$T/x.db" 2> "$T/err"; [ $? -eq 1 ] || fail "validate of a text file: exit status"
grep -q "not a trace database" "$T/err" || fail "validate of a text file: message"
printf 'rules:\n  - kernel: "*x*"\n    op: gemn\n' > "$T/r.yaml"
"$K3SIM" trace validate "$T/t.db" --rules "$T/r.yaml" 2> "$T/err"; [ $? -eq 1 ] || fail "bad rules: exit status"
grep -q "r.yaml:3:9: error: op: unknown op kind 'gemn' (did you mean 'gemm'?)" "$T/err" || fail "bad rules: message $(cat "$T/err")"
"$K3SIM" calibrate "$T/t.db" 2> /dev/null; [ $? -eq 2 ] || fail "calibrate without -o: exit status"
"$K3SIM" trace validate 2> /dev/null; [ $? -eq 2 ] || fail "validate without input: exit status"
"$K3SIM" calibrate --help | grep -q "held-out" || fail "calibrate --help"
"$K3SIM" trace validate --help | grep -q "k3sim op" || fail "validate --help"
echo "cli-calib: ok"
