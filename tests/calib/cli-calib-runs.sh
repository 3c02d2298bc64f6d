#!/bin/sh
# End to end: k3sim calibrate and k3sim trace validate over three runs of one grid (calib-grid
# CSVs, run "day1" split in two files with --run): runs, spread and cross-validation in the
# summary, the JSON, the report and the preset; bad --run arguments and bad reps give clear errors.
K3SIM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# run R (factor F): GEMMs of 3 shapes x 12 m x 2 dtypes and copies, a roofline-ish time x F
grid() {
	awk -v f="$1" -v part="$2" 'BEGIN {
		print "# device NVIDIA H200, 132 SMs, SM clock 1980 MHz, L2 62914560 B"
		print "op,reps,median_s,p10_s,p90_s"
		split("4608:7168 7168:1536 24576:512", shp, " ")
		split("1 2 4 8 16 64 96 256 1024 1536 4096 8192", ms, " ")
		for (s = 1; s <= 3; s++) for (i = 1; i <= 12; i++) for (d = 0; d < 2; d++) {
			if (part == 1 && s > 1) continue
			if (part == 2 && s == 1) continue
			split(shp[s], nk, ":")
			fl = 2 * ms[i] * nk[1] * nk[2]
			by = (nk[1] * nk[2] + ms[i] * (nk[1] + nk[2])) * (d ? 1 : 2)
			t = 4e-6 + fl / (d ? 1.3e15 : 6.5e14) + by / 3.8e12
			t *= f * (1 + 0.03 * sin(i + 3 * s + d))
			printf "\"k3sim op=gemm m=%d n=%d k=%d dtype=%s\",40,%.9g,%.9g,%.9g\n", ms[i], nk[1], nk[2], d ? "fp8" : "bf16", t, t * 0.95, t * 1.05
		}
		if (part == 2) exit
		for (b = 4096; b <= 268435456; b *= 2) {
			t = (3e-6 + 2 * b / 3.9e12) * f
			printf "\"k3sim op=copy bytes=%d\",40,%.9g,%.9g,%.9g\n", b, t, t, t
		}
	}'
}
grid 1.00 1 > "$T/d1a.csv"
grid 1.00 2 > "$T/d1b.csv"
grid 1.08 0 > "$T/d2.csv"
grid 0.95 0 > "$T/d3.csv"

"$K3SIM" calibrate --help | grep -q -- "--run NAME=FILES" || fail "calibrate --help: no --run"
"$K3SIM" trace validate --help | grep -q -- "--run NAME=FILES" || fail "validate --help: no --run"

"$K3SIM" calibrate --run "day1=$T/d1a.csv,$T/d1b.csv" "$T/d2.csv" "$T/d3.csv" --hw h200-datasheet \
	-o "$T/cal.yaml" --report "$T/rep" > "$T/out" || fail "calibrate over runs"
grep -q "from 3 runs" "$T/out" || fail "calibrate: not 3 runs: $(head -1 "$T/out")"
grep -q "by run" "$T/out" && grep -q "run spread" "$T/out" || fail "calibrate: no by-run/spread columns"
grep -q "^gemm.bf16 .* / .* / .* / .* / " "$T/out" || fail "calibrate: gemm.bf16 row without all protocols: $(grep gemm.bf16 "$T/out")"
grep -q "^day1 " "$T/out" || fail "calibrate: no held-out run day1"
grep -q "  runs: " "$T/cal.yaml" || fail "preset: no runs"
grep -q 'name: "day1", traces: \[".*d1a.csv", ".*d1b.csv"\], device: "NVIDIA H200"' "$T/cal.yaml" ||
	fail "preset: run day1 without its traces and device"
grep -q "by_run: {median_pct" "$T/cal.yaml" || fail "preset: no by_run errors"
grep -q "run_spread: {points: 36" "$T/cal.yaml" || fail "preset: no run spread"
[ -s "$T/rep/calibration.md" ] && [ -s "$T/rep/calibration.json" ] || fail "calibrate --report: files"
grep -q "## Cross-validation" "$T/rep/calibration.md" || fail "report: no cross-validation"
grep -q '"xval": {"fits": 6' "$T/rep/calibration.json" || fail "report json: xval fits (3 runs + 3 shapes)"
"$K3SIM" op gemm m=64 n=7168 k=7168 --hw "$T/cal.yaml" > /dev/null || fail "op --hw calibrated over runs"

"$K3SIM" calibrate --run "day1=$T/d1a.csv,$T/d1b.csv" "$T/d2.csv" "$T/d3.csv" --hw h200-datasheet \
	-o "$T/cal2.yaml" --json > "$T/j" || fail "calibrate --json"
for k in '"runs": \[' '"spread_median_pct"' '"by_run_median_abs_pct"' '"run_floor_p90_abs_pct"' \
	'"by_gemm_shape_median_abs_pct"' '"xval_s"'; do
	grep -q "$k" "$T/j" || fail "calibrate --json: no $k"
done
"$K3SIM" calibrate "$T/d2.csv" "$T/d3.csv" --no-xval -o "$T/cal3.yaml" > "$T/out" || fail "--no-xval"
grep -q "0 fits" "$T/out" || fail "--no-xval: fits made"

"$K3SIM" trace validate --run "day1=$T/d1a.csv,$T/d1b.csv" "$T/d2.csv" "$T/d3.csv" > "$T/out" ||
	fail "validate over runs"
grep -q "in 3 runs" "$T/out" && grep -q "spread" "$T/out" || fail "validate: no runs or spread columns"
"$K3SIM" trace validate "$T/d2.csv" "$T/d3.csv" -o "$T/vrep" > /dev/null || fail "validate -o over runs"
grep -q '"spread_pct"' "$T/vrep/validate.json" || fail "validate json: no per-point spread"

# bad inputs
"$K3SIM" calibrate --run day1 -o "$T/x.yaml" 2> "$T/err"; [ $? -eq 2 ] || fail "--run without '=': exit status"
grep -q "expected NAME=FILE" "$T/err" || fail "--run without '=': $(cat "$T/err")"
"$K3SIM" calibrate --run "a=$T/d2.csv" "$T/d2.csv" -o "$T/x.yaml" 2> "$T/err"; [ $? -eq 2 ] || fail "a file twice: exit status"
grep -q "given twice" "$T/err" || fail "a file twice: $(cat "$T/err")"
printf 'op,reps,median_s,p10_s,p90_s\n"k3sim op=copy bytes=4096",1e300,8e-06,7e-06,9e-06\n' > "$T/bad.csv"
"$K3SIM" calibrate "$T/bad.csv" -o "$T/x.yaml" 2> "$T/err"; [ $? -eq 1 ] || fail "reps 1e300: exit status"
grep -q "bad.csv:2:2: error: reps '1e300' is not a sample count" "$T/err" || fail "reps 1e300: $(cat "$T/err")"
echo "cli-calib-runs: ok"
