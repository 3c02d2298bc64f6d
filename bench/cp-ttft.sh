#!/bin/sh
# TTFT of one long prompt (128K-1M tokens) under context parallelism: K3 (KCP on its 69 KDA
# layers: one fixed-size all-gather + ordered scan per layer; MLA CP on its 24 MLA layers) against
# its full-MLA counterpart (MLA CP on 93 layers: the prefix's latent gathered every chunk, bytes
# growing with the context), on 16 x H200 (TP x CP = 8 or 16 GPUs, TP inside a node) and on a
# GB200 NVL72 domain (TP8 x CP1-9, all NVLink). Prints Markdown tables; -o FILE writes them too.
# First, one KDA layer alone under KCP against one GPU (bench/x2-predict kcp: sim_kcp_ops on the
# timeline), to show at which CP degree KCP itself pays.
# usage: bench/cp-ttft.sh [BUILD_DIR] [-o FILE] [--ring]   (--ring: MLA CP as a ring of blocks)
set -eu
cd "$(dirname "$0")/.."
B=build
OUT=
RING=allgather
while [ $# -gt 0 ]; do
	case $1 in
	-o) OUT=$2; shift 2 ;;
	--ring) RING=ring; shift ;;
	-h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) B=$1; shift ;;
	esac
done
K3SIM=$B/cli/k3sim
[ -x "$K3SIM" ] || { echo "bench/cp-ttft.sh: no $K3SIM (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
X2=$B/bench/x2-predict
[ -x "$X2" ] || { echo "bench/cp-ttft.sh: no $X2 (build first)" >&2; exit 1; }
python3 - "$K3SIM" "$tmp" "$RING" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$X2" <<'PY' | tee "$tmp/out.md"
import json, subprocess, sys
k3sim, tmp, ring, rev, x2 = sys.argv[1:6]

def kcp(tokens, heads, cp):
    out = subprocess.check_output([x2, "kcp", "--tokens", str(tokens), "--heads", str(heads), "--cp", str(cp),
                                   "--hw", "h200"], text=True)
    return {k: float(v) for k, v in (t.split("=") for t in out.split()[1:])}

print("One KDA layer under KCP against one GPU, H200 (calibrated preset): speed-up = one GPU's "
      "prefill of T tokens over KCP's on CP GPUs (every rank but the first: zero-start pass and "
      "identity-start transition pass of T/CP tokens, all-gather, scan, FP32 SIMT fix-up; "
      "`bench/x2-predict kcp`). In parentheses: the same without the transition pass, which the model "
      "did not cost before 2026-12-01.\n")
cps = [2, 3, 4, 8]
print("| heads per GPU | T | " + " | ".join("CP%d" % c for c in cps) + " |")
print("| ---: | ---: | " + " | ".join("---:" for _ in cps) + " |")
for heads in (96, 12):
    for tokens in (16384, 65536, 262144, 1048576):
        cells = []
        for c in cps:
            d = kcp(tokens, heads, c)
            cells.append("%.2fx (%.2fx)" % (d["speedup"], d["single_s"] / d["kcp_no_transition_s"]))
        print("| %d | %dK | %s |" % (heads, tokens // 1024, " | ".join(cells)))
print()
contexts = [131072, 262144, 524288, 1048576]
systems = [
    ("16 x H200 (two 8-GPU NVLink nodes)", "h200", [(8, 1), (8, 2), (4, 4), (2, 8), (1, 16)]),
    ("GB200 NVL72 (one 72-GPU NVLink domain)", "gb200", [(8, 1), (8, 2), (8, 4), (8, 8), (8, 9)]),
]
models = [("kimi-k3", "K3: KCP (69 KDA) + MLA CP (24 MLA)"), ("k3-full-mla", "full MLA: MLA CP (93 MLA)")]

def ttft(model, hw, tp, cp, ctx):
    gpus = tp * cp
    y = ("model: %s\nhw: %s\ngpus: %d\nparallel: {tp: %d, cp: %d, dp: 1, ep: %d}\n"
         "workload: {batch: 1, prompt_tokens: %d, output_tokens: 16, prefill_chunk: 16384}\n"
         "engine: {mla_cp: %s}\n" % (model, hw, gpus, tp, cp, gpus, ctx, ring))
    path = "%s/s.yaml" % tmp
    open(path, "w").write(y)
    d = json.loads(subprocess.check_output([k3sim, "run", path, "--json"]))
    return d["ttft_s"], d["prefill"]["critical_path"]["comm_s"]

print("MLA context parallel as: %s. TTFT in seconds (communication on the critical path in "
      "parentheses); one prompt, prefill chunks of 16,384 tokens; `--` where the layout does not "
      "hold the model's heads.\n" % ring)
for title, hw, layouts in systems:
    print("### %s\n" % title)
    for model, label in models:
        print("**%s**\n" % label)
        print("| context | " + " | ".join("TP%d x CP%d (%d GPUs)" % (t, c, t * c) for t, c in layouts) +
              " | more CP |")
        print("| ---: | " + " | ".join("---:" for _ in layouts) + " | --- |")
        for ctx in contexts:
            cells, vals = [], []
            for t, c in layouts:
                try:
                    v, comm = ttft(model, hw, t, c, ctx)
                    cells.append("%.1f (%.1f)" % (v, comm))
                    vals.append((t * c, c, v))
                except subprocess.CalledProcessError:
                    cells.append("--")
            # more CP pays while a step to the next layout returns at least half of what its
            # extra GPUs could (speed-up over GPU ratio >= 0.5) and, at the same GPUs, >= 5 %
            stop = "pays up to CP%d" % vals[-1][1] if vals else "-"
            for (g0, c0, v0), (g1, c1, v1) in zip(vals, vals[1:]):
                gain = v0 / v1
                if (g1 > g0 and gain / (g1 / g0) < 0.5) or (g1 == g0 and gain < 1.05):
                    stop = "stops at CP%d (CP%d: %.2fx on %.0fx the GPUs)" % (c0, c1, gain, g1 / g0)
                    break
            print("| %dK | %s | %s |" % (ctx // 1024, " | ".join(cells), stop))
        print()
print("k3sim %s; `bench/cp-ttft.sh%s`." % (rev, " --ring" if ring == "ring" else ""))
PY
[ -z "$OUT" ] || cp "$tmp/out.md" "$OUT"
