#!/bin/sh
# k3sim serve against a published serving benchmark with TTFT/TPOT percentiles (issue 18):
# every scenarios/serve/validation/*.yaml carries the measured figures in `# measured: KEY VALUE`
# comments (p50 and p99 of TTFT and TPOT; the source names no p90). Nothing is fitted to them.
# Prints a Markdown table with the signed errors and writes it under bench/results/.
# usage: bench/serve-validation.sh [BUILD_DIR]   (default: build)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
out=bench/results/serve-validation-$(date +%Y-%m-%d).txt
mkdir -p bench/results
python3 - "$B/cli/k3sim" scenarios/serve/validation/*.yaml <<'PY' | tee "$out"
import json, subprocess, sys
k3sim, files = sys.argv[1], sys.argv[2:]
keys = [("ttft_p50_s", "ttft_s", "p50"), ("ttft_p99_s", "ttft_s", "p99"), ("tpot_p50_s", "tpot_s", "p50"), ("tpot_p99_s", "tpot_s", "p99")]
print("| scenario | metric | measured | k3sim | error |")
print("| --- | --- | ---: | ---: | ---: |")
errs = {k[0]: [] for k in keys}
by_engine = {}
for f in files:
    meas = {}
    for line in open(f):
        if line.startswith("# measured:"):
            k, v = line.split(":", 1)[1].split()
            meas[k] = float(v)
    d = json.loads(subprocess.run([k3sim, "serve", f, "--json"], check=True, capture_output=True, text=True).stdout)
    name = d["scenario"]
    for k, sect, q in keys:
        sim = d[sect][q]
        e = sim / meas[k] - 1
        errs[k].append(e)
        by_engine.setdefault((name.split("-")[2], k), []).append(e)
        unit = 1 if k.startswith("ttft") else 1e3
        u = "s" if k.startswith("ttft") else "ms"
        print(f"| {name} | {k[:4].upper()} {k[5:8]} | {meas[k]*unit:.3f} {u} | {sim*unit:.3f} {u} | {e*100:+.1f} % |")
print()
print("| metric | mean abs. error, all | SGLang | vLLM | mean signed error, all |")
print("| --- | ---: | ---: | ---: | ---: |")
for k, _, _ in keys:
    a = errs[k]
    s = by_engine.get(("sglang", k), [])
    v = by_engine.get(("vllm", k), [])
    mae = lambda x: sum(abs(e) for e in x) / len(x) * 100 if x else float("nan")
    print(f"| {k[:4].upper()} {k[5:8]} | {mae(a):.1f} % | {mae(s):.1f} % | {mae(v):.1f} % | {sum(a)/len(a)*100:+.1f} % |")
PY
echo "wrote $out"
