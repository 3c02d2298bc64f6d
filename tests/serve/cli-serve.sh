#!/bin/sh
# End-to-end checks of `k3sim serve`: --help, the default scenario, --json keys and their
# invariants, every output (report directory, CSV, SQLite, Perfetto) written atomically and never
# over an existing file without --force, traces in Mooncake's and Azure's formats, P/D, MTP and
# vision, determinism, and bad input with file:line:col.
# usage: cli-serve.sh K3SIM TESTS_DIR
set -u
K3SIM=$1
TESTS=$2
ROOT=$(dirname "$TESTS")
DATA=$TESTS/serve
fails=0
n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
run() {
	name=$1; want=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else bad "$name (exit $got, wanted $want)"; sed 's/^/# /' "$tmp/err"; fi
}
expect_out() { if grep -q -- "$2" "$tmp/out"; then ok "$1"; else bad "$1: no '$2' in output"; fi; }
expect_err() { if grep -q -- "$2" "$tmp/err"; then ok "$1"; else bad "$1: no '$2' in stderr"; sed 's/^/# /' "$tmp/err"; fi; }
py() { if python3 - "$@"; then ok "$1"; else bad "$1"; fi; }

run "serve --help" 0 $K3SIM serve --help
expect_out "help says usage" "usage: k3sim serve"
run "k3sim --help lists serve" 0 $K3SIM --help
expect_out "serve in the command list" "serve"

# the default scenario
run "serve default" 0 $K3SIM serve
expect_out "TTFT row" "TTFT"
expect_out "goodput line" "goodput"
expect_out "Little's law line" "Little's law"

run "serve --json" 0 $K3SIM serve --json
cp "$tmp/out" "$tmp/a.json"
py "json keys and invariants" "$tmp/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
for k in ("requests", "completed", "ttft_s", "tpot_s", "itl_s", "e2e_s", "queue_s", "throughput_tokens_per_s",
          "goodput_requests_per_s", "prefix_hit_rate", "cache", "hbm", "little", "slo"):
    assert k in d, k
for k in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):
    p = d[k]
    assert 0 < p["p50"] <= p["p90"] <= p["p99"] <= p["max"] * (1 + 1e-9), (k, p)
assert d["completed"] == d["requests"] > 0
assert abs(d["little"]["l"] - d["little"]["lambda_w"]) <= 1e-6 * d["little"]["l"]
assert d["step_prefill_tokens"] == d["prefill_tokens"] and d["step_output_tokens"] == d["output_tokens"]
assert d["hbm"]["peak"] <= d["hbm"]["capacity"]
assert d["prefix_hit_rate"] > 0.2  # a shared 2K system prompt, checkpointed at its end
PY
run "serve --json again" 0 $K3SIM serve --json
if cmp -s "$tmp/out" "$tmp/a.json"; then bad "a second run should differ only in wall times"; else ok "wall times differ"; fi
py "deterministic apart from wall times" "$tmp/out" "$tmp/a.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[2:4])
a.pop("wall"); b.pop("wall")
assert a == b
PY
run "another seed" 0 $K3SIM serve --json --seed 2
py "a seed changes the run" "$tmp/out" "$tmp/a.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[2:4])
assert a["ttft_s"] != b["ttft_s"]
PY

# outputs
cd "$tmp" || exit 1
run "report, csv, db, perfetto" 0 $K3SIM serve --requests 60 -o rep --csv r.csv --db r.db --perfetto r.json --no-charts
expect_out "says what it wrote" "wrote rep/report.md"
for f in rep/report.md rep/results.json rep/requests.csv rep/charts/charts.gp rep/charts/queues.dat r.csv r.db r.json; do
	if [ -s "$f" ]; then ok "wrote $f"; else bad "missing $f"; fi
done
if grep -q "<!-- table: latency -->" rep/report.md; then ok "report table marker"; else bad "report table marker"; fi
py "csv rows, db tables, perfetto events" r.csv r.db r.json <<'PY'
import csv, json, sqlite3, sys
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 60 and "ttft_s" in rows[0] and "dp_group" in rows[0]
db = sqlite3.connect(sys.argv[3])
assert db.execute("select count(*) from requests").fetchone()[0] == 60
assert db.execute("select count(*) from samples").fetchone()[0] > 10
assert db.execute("select value from summary where key='completed'").fetchone()[0] == 60
t = json.load(open(sys.argv[4]))["traceEvents"]
assert any(e.get("cat") == "step" for e in t) and any(e.get("ph") == "b" for e in t)
assert any(e.get("ph") == "C" for e in t)
PY
run "no clobber without --force" 1 $K3SIM serve --requests 10 --csv r.csv
expect_err "says --force" "force"
run "the report directory is refreshed (it is k3sim's)" 0 $K3SIM serve --requests 10 -o rep --no-charts
run "--force replaces" 0 $K3SIM serve --requests 10 --csv r.csv --force
py "replaced" r.csv <<'PY'
import csv, sys
assert len(list(csv.DictReader(open(sys.argv[2])))) == 10
PY
mkdir -p somedir && : >somedir/keep
run "a directory is not a file" 1 $K3SIM serve --requests 10 --csv somedir
ls -A | grep -q k3tmp && bad "temporaries left" || ok "no temporaries left"

# traces
cat >"$tmp/moon.yaml" <<EOF
model: k3-full-mla
hw: h200
gpus: 16
parallel: {tp: 8, dp: 2, ep: 16}
serve:
  arrivals: {trace: $DATA/mooncake-synthetic.jsonl}
  scheduler: {max_running: 32, token_budget: 8192}
EOF
run "mooncake trace" 0 $K3SIM serve "$tmp/moon.yaml" --json
py "mooncake: every line a request, prefixes shared" "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
assert d["requests"] == 60 and d["completed"] == 60
assert d["prefix_hit_rate"] > 0.1, d["prefix_hit_rate"]
PY
sed 's/k3-full-mla/kimi-k3/' "$tmp/moon.yaml" >"$tmp/moon-k3.yaml"
run "mooncake trace on K3, turn checkpoints" 0 $K3SIM serve "$tmp/moon-k3.yaml" --json
cp "$tmp/out" "$tmp/k3turns.json"
printf '  cache: {checkpoints: every}\n' >>"$tmp/moon-k3.yaml"
run "mooncake trace on K3, every endpoint" 0 $K3SIM serve "$tmp/moon-k3.yaml" --json
py "K3 reuses shared documents only with checkpoints at their boundaries" "$tmp/k3turns.json" "$tmp/out" <<'PY'
import json, sys
turns, every = (json.load(open(f)) for f in sys.argv[2:4])
assert every["prefix_hit_rate"] > turns["prefix_hit_rate"] + 0.05, (turns["prefix_hit_rate"], every["prefix_hit_rate"])
assert every["cache"]["ckpt_bytes_written"] > turns["cache"]["ckpt_bytes_written"]
PY
run "azure trace via --trace" 0 $K3SIM serve --trace "$DATA/azure-synthetic.csv" --json
py "azure: 80 requests" "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
assert d["requests"] == 80 and d["completed"] == 80
PY

# P/D, MTP and vision
cat >"$tmp/pd.yaml" <<'EOF'
model: kimi-k3
hw: h200
gpus: 16
parallel: {tp: 8, dp: 2, ep: 16}
engine: {mtp: {draft_tokens: 2, acceptance: 2}}
serve:
  duration_s: 30
  arrivals: {rate_per_s: 1}
  requests: {prompt_tokens: 3000, output_tokens: 200, images: {fraction: 0.5, count: 1, px: 896}}
  pd:
    prefill: {gpus: 16, tp: 8, dp: 2, ep: 16}
    decode: {gpus: 16, tp: 4, dp: 4, ep: 16}
EOF
run "P/D with MTP and images" 0 $K3SIM serve "$tmp/pd.yaml" --json
py "P/D: transfers, drafts, the encoder" "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
assert d["pd"] and d["pd_transfer_bytes"] > 0 and d["gpus"] == 32
assert 1.5 < d["mean_accepted_tokens"] < 2.5
assert d["vision_s"] > 0
PY

# bad input
printf 'model: kimi-k3\nserve:\n  scheduler: {token_budgt: 10}\n' >"$tmp/bad.yaml"
run "unknown serve key" 1 $K3SIM serve "$tmp/bad.yaml"
expect_err "file:line:col and a suggestion" "bad.yaml:3:15: error: unknown key 'token_budgt' (did you mean 'token_budget'?)"
printf '{"arrival_s": 0, "prompt_tokens": 10, "output_tokens": 1}\n{"arrival_s": 1, "prompt_tokens": x}\n' >"$tmp/bad.jsonl"
run "bad trace" 1 $K3SIM serve --trace "$tmp/bad.jsonl"
expect_err "trace file:line:col" "bad.jsonl:2:35: error"
run "missing trace" 1 $K3SIM serve --trace "$tmp/none.csv"
expect_err "says it cannot open" "cannot open"
run "bad option" 2 $K3SIM serve --frobnicate
run "bad rate" 2 $K3SIM serve --rate -1
printf 'model: kimi-k3\nhw: h200\ngpus: 8\nparallel: {tp: 8}\nserve: {max_requests: 2}\n' >"$tmp/nofit.yaml"
run "weights that do not fit" 1 $K3SIM serve "$tmp/nofit.yaml"
expect_err "says nothing is left" "nothing left for KV"

echo "1..$n"
[ "$fails" -eq 0 ]
