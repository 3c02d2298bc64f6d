#!/bin/sh
# The outputs of `k3sim run --clock power --json` on the delayed-limiter presets, into DIR (a file a
# run): the two H100 k3-kernels presets in KEEP (validate-slice.py --keep KEEP, the command in
# bench/results/s1-h100-2026-12-06/check-kda-law.txt), h200 and h100, prompts 1K-128K, batches 1-256,
# and KEEP's three slice scenarios. Run with two binaries and compare the JSON (README.md).
#   sh outputs.sh DIR K3SIM KEEP
set -eu
D=${1:?usage: outputs.sh DIR K3SIM KEEP} K=${2:?usage: outputs.sh DIR K3SIM KEEP} KEEP=${3:?usage: outputs.sh DIR K3SIM KEEP}
mkdir -p "$D"
i=0
for hw in "$KEEP/k3-kernels-clk-h200.yaml" "$KEEP/k3-kernels-h200.yaml" h200 h100; do
	for p in 1024 4096 32768 131072; do
		for b in 1 16 256; do
			i=$((i + 1))
			"$K" run --hw "$hw" --clock power --prompt $p --batch $b --json > "$D/run-$i.json"
		done
	done
done
for s in prompt-4096-cv prompt-16384-cv eager; do
	"$K" run "$KEEP/scenario-$s.yaml" --hw "$KEEP/k3-kernels-clk-h200.yaml" --clock power --json > "$D/$s.json"
done
