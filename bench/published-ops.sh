#!/bin/sh
# Per-op audit of the published prefill steps: k3sim's simulated step (`k3sim run --timeline
# --timeline-step prefill`, the busiest EP rank) in the op classes of LMSYS' kernel breakdown
# (bench/public/lmsys/prefill-breakdown-2025-05-05.csv: DeepSeek's profile on 32 x H800 and
# SGLang on 32 x H100), per MoE layer, beside the published figures. Prints a Markdown table
# (and, with -o FILE, writes it there too). Classes are the busiest EP rank's (the step waits for
# it), the routed experts also at the mean rank.
# usage: bench/published-ops.sh [BUILD_DIR] [-o FILE]   (default build dir: build)
set -eu
cd "$(dirname "$0")/.."
B=build
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	-o) OUT=$2; shift 2 ;;
	-h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) B=$1; shift ;;
	esac
done
K3SIM=$B/cli/k3sim
[ -x "$K3SIM" ] || { echo "bench/published-ops.sh: no $K3SIM (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in deepseek-v3-prefill-32xh800 sglang-dsv3-prefill-32xh100-4k; do
	"$K3SIM" run "scenarios/published/$s.yaml" --timeline "$tmp/$s.json" --timeline-step prefill >/dev/null
done
python3 - "$tmp" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY' | tee "$tmp/table.md"
import csv, json, os, sys
from collections import defaultdict
tmp, rev = sys.argv[1], sys.argv[2]
pub = {}
with open("bench/public/lmsys/prefill-breakdown-2025-05-05.csv") as f:
    for r in csv.DictReader(l for l in f if not l.startswith("#")):
        pub[r["category"]] = {k: float(v) for k, v in r.items() if k != "category" and v}
# k3sim op names -> the figure's classes (everything else on a compute stream: other kernels)
CLASS = {
    "moe.dispatch": "dispatch", "moe.combine": "combine",
    "moe.experts_gate_up": "moe", "moe.experts_down": "moe", "moe.situ_glu": "moe",
    "mla.attn": "attention_core",
    "mla.q_a": "gemm", "mla.kv_a": "gemm", "mla.q_b": "gemm", "mla.kv_b": "gemm", "mla.o_proj": "gemm",
    "moe.shared_gate_up": "gemm", "moe.shared_down": "gemm", "moe.router": "gemm",
}
def classes(path, mean_rank=False):
    d = json.load(open(path))["traceEvents"]
    step = [e for e in d if e.get("cat") == "step"][0]
    pids = sorted({e["pid"] for e in d if e.get("cat") == "kernel"})
    gpu = pids[1] if mean_rank and len(pids) > 1 else pids[0]  # busiest EP rank, then the mean one
    ev = [e for e in d if e.get("cat") == "kernel" and e["pid"] == gpu]
    layers = {e["args"]["layer"] for e in ev if e["args"]["layer"] >= 0}
    moe_layers = {e["args"]["layer"] for e in ev if e["name"] == "moe.dispatch"}
    t = defaultdict(float)
    comp = comm = 0.0
    for e in ev:
        if e["args"]["layer"] not in moe_layers:
            continue
        c = CLASS.get(e["name"], "other_kernels")
        t[c] += e["dur"] / 1e3
        if e["args"]["communication"]:
            comm += e["dur"] / 1e3
        else:
            comp += e["dur"] / 1e3
    n = len(moe_layers)
    out = {k: v / n for k, v in t.items()}
    step_ms = step["dur"] / 1e3
    out["overall"] = step_ms / len(layers)
    out["comp_stream_bubble"] = max(0.0, out["overall"] - comp / n)
    out["comm_stream_bubble"] = max(0.0, out["overall"] - comm / n)
    return out
rows = [("overall", "overall (step / layers)"), ("dispatch", "dispatch (barrier + core)"),
        ("combine", "combine (barrier + core)"), ("moe", "MoE (routed grouped GEMMs, SwiGLU)"),
        ("moe_mean", "MoE, mean EP rank (LMSYS traced one rank)"), ("attention_core", "attention core"), ("gemm", "GEMM (MLA projections, shared expert, router)"),
        ("other_kernels", "other kernels"), ("comp_stream_bubble", "compute stream bubble"),
        ("comm_stream_bubble", "communication stream bubble")]
def published(col, key):
    if key == "moe_mean":
        key = "moe"
    if key in ("dispatch", "combine"):
        b, c = pub[key + "_barrier"].get(col), pub[key + "_core"].get(col)
        return None if b is None or c is None else b + c
    return pub[key].get(col)
for scen, cols in (("deepseek-v3-prefill-32xh800", [("deepseek_profile", "DeepSeek profile, 32 x H800")]),
                   ("sglang-dsv3-prefill-32xh100-4k", [("sglang_default", "SGLang default EPLB, 32 x H100"),
                                                      ("sglang_perfect_eplb", "SGLang perfect EPLB")])):
    k = classes(os.path.join(tmp, scen + ".json"))
    k["moe_mean"] = classes(os.path.join(tmp, scen + ".json"), True).get("moe", 0.0)
    head = "| class (ms per MoE layer) | DeepEP/DeepGEMM unit test | " + " | ".join(
        "%s | k3sim / it" % name for _, name in cols) + " | k3sim `%s` |" % scen
    print(head)
    print("| --- | ---: | " + " | ".join("---: | ---:" for _ in cols) + " | ---: |")
    for key, label in rows:
        ut = pub.get(key + "_core", pub.get("moe" if key == "moe_mean" else key, {})).get("unit_test")
        cells = []
        for col, _ in cols:
            p = published(col, key)
            m = k.get(key, 0.0)
            cells.append("%s | %s" % ("%.2f" % p if p is not None else "", "%.2f" % (m / p) if p else ""))
        print("| %s | %s | %s | %.2f |" % (label, "%.2f" % ut if ut is not None else "", " | ".join(cells), k.get(key, 0.0)))
    print()
print("k3sim %s; `bench/published-ops.sh` (published: bench/public/lmsys/prefill-breakdown-2025-05-05.csv)." % rev)
PY
[ -z "$OUT" ] || cp "$tmp/table.md" "$OUT"
