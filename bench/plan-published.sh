#!/bin/sh
# The plan's choice on the published deployments' GPUs and SLOs (issue 19): for each scenario of
# scenarios/published/ (a decode pool or a prefill pool), the SLO is the published layout's own
# predicted TPOT (decode) or TTFT (prefill), the base is the scenario (engine, EP kernels, MTP,
# routing, other dtypes kept), the GPU count is its GPUs; `k3sim plan --mode decode|prefill`
# searches TP, EP, batch or prefill budget and the MLA cache dtype. Prints a Markdown table: the
# published layout's predicted tokens/s per GPU, the plan's choice and its prediction, and why.
# usage: bench/plan-published.sh [K3SIM] > table.md
set -u
K3SIM=${1:-build/cli/k3sim}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| deployment | mode | SLO (the published layout's prediction) | published layout: predicted tok/s/GPU | plan's choice (same GPUs, same SLO) | plan: tok/s/GPU | plan / published | same layout |"
echo "| --- | --- | ---: | ---: | --- | ---: | ---: | :---: |"
for f in "$ROOT"/scenarios/published/*.yaml; do
	name=$(basename "$f" .yaml)
	[ "$name" = h800 ] && continue
	"$K3SIM" run "$f" --json >"$tmp/run.json" || exit 1
	case $name in *prefill*) mode=prefill ;; *) mode=decode ;; esac
	python3 - "$tmp/run.json" "$f" "$mode" >"$tmp/args" <<'PY' || exit 1
import json, sys, re
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
gpus = int(re.search(r"^gpus:\s*(\d+)", text, re.M).group(1))
wl = re.search(r"^workload:\s*\{(.*)\}", text, re.M).group(1)
isl = int(re.search(r"prompt_tokens:\s*(\d+)", wl).group(1))
osl = int(re.search(r"output_tokens:\s*(\d+)", wl).group(1))
mode = sys.argv[3]
# the SLO: the published layout's own prediction, 1e-6 above it so that it meets it
if mode == "decode":
    print(f"--gpus {gpus} --isl {isl} --osl {osl} --tpot {r['tpot_s'] * (1 + 1e-6):.9f} "
          f"--pub {r['tokens_per_s_per_gpu']:.6g} --slo TPOT:{r['tpot_s'] * 1e3:.2f}ms")
else:
    print(f"--gpus {gpus} --isl {isl} --osl {osl} --ttft {r['ttft_s'] * (1 + 1e-6):.9f} "
          f"--pub {r['prefill_tokens_per_s_per_gpu']:.6g} --slo TTFT:{r['ttft_s']:.3f}s")
PY
	args=$(sed 's/ --pub.*//' "$tmp/args")
	pub=$(sed 's/.*--pub \([^ ]*\).*/\1/' "$tmp/args")
	slo=$(sed 's/.*--slo \([^ ]*\).*/\1/' "$tmp/args")
	"$K3SIM" plan --base "$f" --mode $mode $args --short 0 --json -o "$tmp/$name.db" --force >"$tmp/plan.json" || exit 1
	python3 - "$tmp/plan.json" "$name" "$mode" "$pub" "$slo" "$f" <<'PY'
import json, sys, re
d = json.load(open(sys.argv[1]))
name, mode, pub, slo, path = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6]
rec = d["recommendations"][0]
text = open(path).read()
par = re.search(r"^parallel:\s*\{(.*)\}", text, re.M).group(1)
tp = int(re.search(r"tp:\s*(\d+)", par).group(1)); ep = int(re.search(r"ep:\s*(\d+)", par).group(1))
if rec["found"]:
    got = rec["goodput_tokens_per_s_per_gpu"]
    lay = rec["layout"]
    same = f"TP{tp} " in lay and f"EP{ep}," in lay
    print(f"| {name} | {mode} | {slo.replace(':', ' ')} | {pub:.0f} | {lay} | {got:.0f} | {got / pub:.2f} | {'yes' if same else 'no'} |")
else:
    print(f"| {name} | {mode} | {slo} | {pub:.0f} | none: {rec['why']} | 0 | 0 | no |")
PY
done
