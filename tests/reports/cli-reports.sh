#!/bin/sh
# End-to-end checks of k3sim sweep, merge and compare through the binary: help, sharded sweeps
# merged equal to the whole sweep, refused merges, bad sweep specs with file:line:col, and the
# default comparison report (every chart present when gnuplot is; the numbers in the Markdown
# equal those in results.json and results.db).
# usage: cli-reports.sh K3SIM SOURCE_ROOT
set -u
K3SIM=$1
ROOT=$2
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

for cmd in sweep merge compare; do
	run "help $cmd" 0 "$K3SIM" $cmd --help
	expect_out "help $cmd says usage" "usage: k3sim $cmd"
done
run "sweep without a scenario" 2 "$K3SIM" sweep
run "sweep bad shard" 2 "$K3SIM" sweep default --shard 3/2
run "merge without -o" 2 "$K3SIM" merge a.db

cat >"$tmp/grid.yaml" <<'YAML'
name: grid
model: kimi-k3
hw: h200
gpus: 16
parallel: {tp: 8, dp: 2, ep: 16}
workload: {batch: 16, prompt_tokens: 8192, output_tokens: 256}
sweep:
  model: [kimi-k3, k3-full-mla]
  context: [4096, 65536, 1048576]
  tp: [8, 3]
  batch: [1, 4, 16, 64]
YAML
run "sweep whole" 0 "$K3SIM" sweep "$tmp/grid.yaml" -o "$tmp/whole.db" --csv "$tmp/whole.csv" -j 2
expect_out "sweep says how many points" "48 points"
expect_out "sweep counts invalid points" "24 invalid"
run "sweep --json" 0 "$K3SIM" sweep "$tmp/grid.yaml" -o "$tmp/j.db" --json -j 1
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['points'] == 48 and d['invalid'] == 24" \
	&& ok "sweep --json summary" || bad "sweep --json summary"
for k in 1 2 3; do
	run "sweep shard $k/3" 0 "$K3SIM" sweep "$tmp/grid.yaml" --shard $k/3 -o "$tmp/s$k.db" --quiet
done
run "merge shards" 0 "$K3SIM" merge "$tmp/s2.db" "$tmp/s3.db" "$tmp/s1.db" -o "$tmp/merged.db" --csv "$tmp/merged.csv"
expect_out "merge says 48 of 48" "48 of 48 points"
if cmp -s "$tmp/whole.csv" "$tmp/merged.csv"; then ok "merged shards equal the whole sweep (CSV)"; else bad "merged shards differ from the whole sweep"; fi
python3 - "$tmp/whole.db" "$tmp/merged.db" <<'PY' && ok "merged shards equal the whole sweep (SQLite)" || bad "merged SQLite differs"
import sqlite3, sys
rows = [sqlite3.connect(p).execute("SELECT * FROM points ORDER BY point").fetchall() for p in sys.argv[1:]]
assert len(rows[0]) == 48 and rows[0] == rows[1]
PY
python3 - "$tmp/whole.csv" <<'PY' && ok "CSV has every input and output column" || bad "CSV columns"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
need = ["point", "model", "hw", "tp", "batch", "prompt_tokens", "ttft_s", "tpot_s", "tokens_per_s_per_gpu",
        "fits", "max_batch", "hbm_total", "hbm_kda_state", "hbm_mla_kv", "decode_attn_kda_s", "ok", "error"]
assert all(k in r[0] for k in need), [k for k in need if k not in r[0]]
assert [int(x["point"]) for x in r] == list(range(48))
bad = [x for x in r if x["ok"] == "0"]
assert len(bad) == 24 and all(x["tp"] == "3" and x["ttft_s"] == "" for x in bad)
PY
run "merge refuses a missing shard" 1 "$K3SIM" merge "$tmp/s1.db" "$tmp/s3.db" -o "$tmp/m2.db"
expect_err "missing shard named" "1 of 3 shards missing: 2"
run "merge refuses overlap" 1 "$K3SIM" merge "$tmp/s1.db" "$tmp/s1.db" "$tmp/s2.db" "$tmp/s3.db" -o "$tmp/m3.db"
expect_err "overlap named" "overlaps"
run "merge --allow-partial" 0 "$K3SIM" merge "$tmp/s1.db" "$tmp/s3.db" -o "$tmp/m4.db" --allow-partial

printf 'model: kimi-k3\nsweep:\n  context: [4096]\n  bach: [1, 2]\n' >"$tmp/bad.yaml"
run "bad sweep axis" 1 "$K3SIM" sweep "$tmp/bad.yaml" -o "$tmp/bad.db"
expect_err "bad axis at file:line:col" "bad.yaml:4:3: error: sweep: unknown axis 'bach' (did you mean 'batch'?)"
printf 'model: kimi-k3\nsweep:\n  model: [kimi-k3, k3-ful-mla]\n' >"$tmp/bad2.yaml"
run "bad sweep model" 1 "$K3SIM" sweep "$tmp/bad2.yaml" -o "$tmp/bad.db"
expect_err "bad model at file:line:col" "bad2.yaml:3:20: error: sweep: unknown model 'k3-ful-mla'"
if [ -e "$tmp/bad.db" ]; then bad "a failed sweep left a database"; else ok "a failed sweep leaves no database"; fi

# The default comparison report, as CI generates it.
run "compare default" 0 "$K3SIM" compare -o "$tmp/cmp" -j 2
for f in report.md report.html results.json results.db; do
	if [ -s "$tmp/cmp/$f" ]; then ok "compare wrote $f"; else bad "compare did not write $f"; fi
done
if gnuplot --version >/dev/null 2>&1; then
	missing=0
	for c in memory_per_request hbm_per_gpu max_batch ttft tpot throughput decode_breakdown prefill_breakdown; do
		for ext in svg png; do [ -s "$tmp/cmp/charts/$c.$ext" ] || { missing=1; echo "# missing $c.$ext"; }; done
	done
	if [ $missing -eq 0 ]; then ok "every chart exists and is not empty"; else bad "charts missing"; fi
	if grep -q 'src="data:image/svg+xml;base64,' "$tmp/cmp/report.html"; then ok "HTML inlines the charts"; else bad "HTML has no inline charts"; fi
else
	echo "ok $((n + 1)) - # SKIP gnuplot not installed"; n=$((n + 1))
fi
python3 - "$tmp/cmp" <<'PY' && ok "Markdown numbers equal results.json and results.db" || bad "Markdown numbers differ from the results"
import json, re, sqlite3, sys
d = sys.argv[1]
md = open(d + "/report.md").read()
res = json.load(open(d + "/results.json"))
db = sqlite3.connect(d + "/results.db")
db.row_factory = sqlite3.Row
rows = {t: {r["point"]: r for r in db.execute(f"SELECT * FROM {t}")} for t in ("points", "at_max_batch")}
jrows = {"points": {p["point"]: p for p in res["points"]}, "at_max_batch": {p["point"]: p for p in res["at_max_batch"]}}
tables = {t["id"]: t for t in res["tables"]}
checked = 0
for m in re.finditer(r"<!-- table: (\w+) -->\n((?:\|.*\n)+)", md):
    tid, body = m.group(1), m.group(2).strip().split("\n")
    t = tables[tid]
    cells = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in body[2:]]
    assert len(cells) == len(t["rows"]), tid
    for i, row in enumerate(cells):
        for j, text in enumerate(row):
            jc = t["rows"][i][j]
            assert text.replace("\\|", "|") == jc["text"], (tid, i, j, text, jc["text"])
            if "value" not in jc:
                continue
            num = text.rstrip("*")
            decimals = len(num.split(".")[1]) if "." in num else 0
            assert abs(float(num) - jc["value"]) <= 0.5 * 10 ** -decimals + 1e-12, (tid, i, j, num, jc["value"])
            if "table" in jc:
                src = jrows[jc["table"]][jc["point"]][jc["column"]] * jc["scale"]
                dbv = rows[jc["table"]][jc["point"]][jc["column"]] * jc["scale"]
                assert src == jc["value"] and dbv == jc["value"], (tid, i, j, src, dbv, jc["value"])
                checked += 1
assert checked > 400, checked
for need in ("ttft", "tpot", "hbm_per_gpu", "max_batch", "throughput", "decode_breakdown"):
    assert "<!-- table: %s -->" % need in md, need
PY
run "compare --no-charts" 0 "$K3SIM" compare -o "$tmp/nc" --no-charts --quiet
if grep -q "Charts were skipped" "$tmp/nc/report.md" && [ ! -e "$tmp/nc/charts/ttft.svg" ]; then ok "no charts: the report says so"; else bad "no-charts report"; fi
run "compare without gnuplot" 0 "$K3SIM" compare -o "$tmp/ng" --gnuplot /nonexistent/gnuplot --contexts 4K,1M --quiet
if grep -q "gnuplot was not found" "$tmp/ng/report.md"; then ok "missing gnuplot: the report says so"; else bad "missing gnuplot not reported"; fi
run "compare kimi-linear" 0 "$K3SIM" compare compare-kimi-linear -o "$tmp/kl" --no-charts
if grep -q "up to 75% less KV cache" "$tmp/kl/report.md" && grep -q "up to 6x decoding throughput" "$tmp/kl/report.md"; then
	ok "kimi-linear report has the published claims"; else bad "kimi-linear claims missing"; fi
run "compare deepseek" 0 "$K3SIM" compare --models deepseek-v3,deepseek-v3.2 --contexts 4K,128K,1M --batches 1,16 -o "$tmp/ds" --no-charts --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['points'] == 12" && ok "deepseek compare json" || bad "deepseek compare json"
run "compare unknown model" 1 "$K3SIM" compare --models kimi-k3,kimi-k4 -o "$tmp/x"
expect_err "unknown model suggestion" "did you mean 'kimi-k3'"
run "compare bad contexts" 2 "$K3SIM" compare --contexts 4K,zero -o "$tmp/x"

echo "1..$n"
[ $fails -eq 0 ]
