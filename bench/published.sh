#!/bin/sh
# Predicted vs published per-GPU throughput of the deployments in scenarios/published/: each
# scenario names its published figure in a comment line `# published: KEY VALUE` (KEY is a
# `k3sim run --json` key) beside its sources. Prints a Markdown table (and, with -o FILE, writes
# it there too) with the step's overlap, critical path and exposed communication.
# usage: bench/published.sh [BUILD_DIR] [-o FILE]   (default build dir: build)
set -eu
cd "$(dirname "$0")/.."
B=build
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	-o) OUT=$2; shift 2 ;;
	-h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) B=$1; shift ;;
	esac
done
K3SIM=$B/cli/k3sim
[ -x "$K3SIM" ] || { echo "bench/published.sh: no $K3SIM (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in scenarios/published/*.yaml; do
	line=$(grep -m1 '^# published:' "$f" || true)
	[ -n "$line" ] || continue
	set -- $line
	"$K3SIM" run "$f" --json >"$tmp/$(basename "$f" .yaml).json"
	echo "$(basename "$f" .yaml) $3 $4" >>"$tmp/list"
done
python3 - "$tmp" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY' | tee "$tmp/table.md"
import json, sys, os
tmp, rev = sys.argv[1], sys.argv[2]
print("| deployment | metric | published | predicted | predicted / published | within 15 % | step | overlap | critical path: compute + comm | exposed comm |")
print("| --- | --- | ---: | ---: | ---: | :---: | ---: | --- | ---: | ---: |")
for line in open(os.path.join(tmp, "list")):
    name, key, pub = line.split()
    d = json.load(open(os.path.join(tmp, name + ".json")))
    pred, pub = float(d[key]), float(pub)
    ph = d["prefill"] if key.startswith("prefill") else d["decode"]
    step = d["ttft_s"] if key.startswith("prefill") else d["decode_step_s"]
    cp = ph["critical_path"]
    ov = ph["overlap"] + (" x2" if ph["microbatches"] == 2 else "")
    r = pred / pub
    print("| %s | %s | %s | %.1f | %.2f | %s | %.1f ms | %s | %.1f + %.1f ms | %.1f ms |" % (
        name, key.replace("_tokens_per_s_per_gpu", " tok/s/GPU"), ("%g" % pub), pred, r,
        "yes" if abs(r - 1) <= 0.15 else "no", step * 1e3, ov, cp["compute_s"] * 1e3, cp["comm_s"] * 1e3,
        ph["exposed_comm_s"] * 1e3))
print()
print("k3sim %s; `bench/published.sh` over scenarios/published/ (each file gives its sources)." % rev)
PY
[ -z "$OUT" ] || cp "$tmp/table.md" "$OUT"
