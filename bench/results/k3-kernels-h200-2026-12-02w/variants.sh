#!/bin/sh
# Round 19 run b's slice, the k3-kernels preset of run a's bench (as validate-slice.py --clock
# power fits it), under the power regime: prefill 4K / 16K (k3sim run) and the class totals
# (k3sim trace validate --clock power) at other time constants, and with the preset fitted from
# the bench's times scaled to boost by their recorded clock (calibrate --clock measured).
# Output: variants.txt. From the repository root.
set -e
W=bench/results/k3-kernels-h200-2026-12-02w
R=bench/results/k3-kernels-h200-2026-12-02r
K=$(mktemp -d)
trap 'rm -rf "$K"' EXIT
python3 kernels/slice/validate-slice.py --clock power --k3sim build/cli/k3sim --results $R/b --bench-results $R/a \
	--kda-bench $R/ka/kda-grid.csv --keep $K -o $K/report.md
build/cli/k3sim calibrate $K/k3-h200.db $K/kda-bench-0.csv --hw $K/h200-kda-overlap.yaml -o $K/k3-kernels-clk-h200.yaml \
	--name k3-kernels-clk-h200 -f --json --clock measured > /dev/null 2>&1
one() { # preset, tau
	sed "s/^  power_tau_ms: .*/  power_tau_ms: $2/" $K/$1.yaml > $K/try.yaml
	line="$1 tau $2 ms: $(grep -h 'power_flop_pj\|power_byte_pj' $K/try.yaml | tr -s ' ' | tr '\n' ' ')"
	for T in 4096 16384; do
		line="$line prefill $T $(build/cli/k3sim run $K/scenario-prompt-$T.yaml --hw $K/try.yaml --batch 1 --prompt $T \
			--output 1 --clock power --json | python3 -c 'import json,sys; print("%.1f ms" % (json.load(sys.stdin)["ttft_s"] * 1e3))')"
	done
	line="$line | $(build/cli/k3sim trace validate $K/k3-slice.db --hw $K/try.yaml --clock power --json | python3 -c '
import collections, json, sys
d = json.load(sys.stdin)
m, p, c = collections.Counter(), collections.Counter(), collections.Counter()
for x in d["per_point"]:
    k = x["class"]
    m[k] += x["measured_s"] * x["samples"]
    p[k] += x["predicted_s"] * x["samples"]
    c[k] += x["clock_mhz"] * x["measured_s"] * x["samples"]
print(" ".join("%s %+.0f %% @%.0f MHz," % (k, 100 * (p[k] / m[k] - 1), c[k] / m[k]) for k in sorted(m)))')"
	echo "$line"
}
{
	echo "measured: prefill 4096 100.1 ms, prefill 16384 365.7 ms (k3-slice.csv of 02r/b)"
	for tau in 2.5 10 25 50; do one k3-kernels-h200 $tau; done
	one k3-kernels-clk-h200 10
} > $W/variants.txt
