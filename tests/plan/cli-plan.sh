#!/bin/sh
# End-to-end checks of `k3sim plan`: --help, the table and --json, determinism (the same JSON and
# the same SQLite bytes twice and for -j1 and -j2), --shard K/N + `k3sim merge` + --from equal to
# the unsharded run byte for byte, shard errors, the report directory (plan.md, charts' data,
# scenario YAML per budget that `k3sim run` and `k3sim serve` accept), outputs never over an
# existing file without --force, and bad input with clear errors.
# usage: cli-plan.sh K3SIM TESTS_DIR
set -u
K3SIM=$1
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
same() { if cmp -s "$2" "$3"; then ok "$1"; else bad "$1: $2 and $3 differ"; fi; }

# a small search: K3 on 16 and 32 H200 (about a second)
F="--gpus 16,32 --isl 8192 --osl 1024 --ttft 2s --tpot 50ms --tp 4,8 --batch 8,16,32 --budget 8192,16384 --short 1 --serve-requests 200"

run "plan --help" 0 $K3SIM plan --help
expect_out "help says usage" "usage: k3sim plan"
run "k3sim --help lists plan" 0 $K3SIM --help
expect_out "plan in the command list" "plan"

run "plan table" 0 $K3SIM plan $F
expect_out "recommendation header" "recommended deployment"
expect_out "Pareto front" "Pareto front"

run "plan --json -o" 0 $K3SIM plan $F -j2 --json -o "$tmp/a.db"
cp "$tmp/out" "$tmp/a.json"
if python3 - "$tmp/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["units"] == 2 * 2 * 3 * 4, d["units"]
assert len(d["recommendations"]) == 2
assert d["front_tpot"] and d["front_ttft"]
xs = [p["tpot_s"] for p in d["front_tpot"]]; ys = [p["tokens_per_s_per_gpu"] for p in d["front_tpot"]]
assert xs == sorted(xs) and ys == sorted(ys), "front ascending in both"
for r in d["recommendations"]:
    if r["found"]:
        assert r["gpus_used"] <= r["budget_gpus"] and r["goodput_tokens_per_s"] > 0
PY
then ok "json keys and invariants"; else bad "json keys and invariants"; fi
run "plan again, -j1" 0 $K3SIM plan $F -j1 --json -o "$tmp/b.db"
same "same JSON twice (-j1 vs -j2)" "$tmp/a.json" "$tmp/out"
same "same SQLite bytes twice" "$tmp/a.db" "$tmp/b.db"
run "existing -o without --force" 1 $K3SIM plan $F -o "$tmp/a.db"
expect_err "names --force" "force"
run "existing -o with --force" 0 $K3SIM plan $F -o "$tmp/a.db" --force --quiet
same "the same file again" "$tmp/a.db" "$tmp/b.db"
if [ "$(sqlite3 "$tmp/a.db" "select count(*) from candidates where status in ('ok','slo')" 2>/dev/null)" -gt 0 ] 2>/dev/null; then
	ok "candidates table"; else
	command -v sqlite3 >/dev/null && bad "candidates table" || ok "candidates table (no sqlite3 CLI: skipped)"; fi

# shards, merge, finish: byte for byte the unsharded run
for k in 1 2 3; do run "shard $k/3" 0 $K3SIM plan $F --shard $k/3 -o "$tmp/s$k.db"; done
run "merge plan shards" 0 $K3SIM merge "$tmp/s1.db" "$tmp/s2.db" "$tmp/s3.db" -o "$tmp/m.db"
run "plan --from merged" 0 $K3SIM plan $F --from "$tmp/m.db" --json -o "$tmp/c.db"
same "sharded JSON = unsharded" "$tmp/a.json" "$tmp/out"
same "sharded SQLite = unsharded" "$tmp/b.db" "$tmp/c.db"
run "plan --from the shards" 0 $K3SIM plan $F --from "$tmp/s3.db,$tmp/s1.db,$tmp/s2.db" --json
same "from shards JSON = unsharded" "$tmp/a.json" "$tmp/out"
run "a shard missing" 1 $K3SIM plan $F --from "$tmp/s1.db,$tmp/s3.db"
expect_err "names the missing shard" "shards missing: 2 of 3"
run "a shard twice" 1 $K3SIM merge "$tmp/s1.db" "$tmp/s1.db" -o "$tmp/x.db"
expect_err "names the duplicate" "given twice"
run "other flags" 1 $K3SIM plan $F --ttft 3s --from "$tmp/m.db"
expect_err "spec hash differs" "other inputs"
run "--shard without -o" 2 $K3SIM plan $F --shard 1/2
run "--shard 3/2" 2 $K3SIM plan $F --shard 3/2 -o "$tmp/y.db"
expect_err "bad shard" "K/N"

# report and scenarios
run "plan --report --scenario" 0 $K3SIM plan $F --report "$tmp/rep" --scenario "$tmp/best.yaml" --gnuplot /nonexistent/gnuplot
if [ -s "$tmp/rep/plan.md" ] && [ -s "$tmp/rep/front-tpot.dat" ] && [ -s "$tmp/rep/charts.gp" ]; then ok "report files"; else bad "report files"; ls -la "$tmp/rep" | sed 's/^/# /'; fi
expect_err "says charts were not rendered" "charts not rendered"
run "report again (ours, no --force needed)" 0 $K3SIM plan $F --report "$tmp/rep" --gnuplot /nonexistent/gnuplot --quiet
for y in "$tmp"/rep/plan-*.yaml "$tmp/best.yaml"; do
	run "k3sim run $(basename "$y")" 0 $K3SIM run "$y"
	run "k3sim serve $(basename "$y")" 0 $K3SIM serve "$y" --quiet
done

# bad input
run "no --gpus" 2 $K3SIM plan --ttft 2s --tpot 50ms
expect_err "--gpus required" "--gpus is required"
run "no --tpot" 2 $K3SIM plan --gpus 16 --ttft 2s
expect_err "--tpot required" "--tpot"
run "bad duration" 2 $K3SIM plan --gpus 16 --ttft 2 --tpot 50 ms
run "bad --ttft unit" 2 $K3SIM plan --gpus 16 --ttft 5m --tpot 50ms
expect_err "duration error" "positive duration"
run "bad --gpus range" 2 $K3SIM plan --gpus 32..16 --ttft 2s --tpot 50ms
expect_err "gpus error" "A..B"
run "bad --tp" 2 $K3SIM plan --gpus 16 --ttft 2s --tpot 50ms --tp 4,0
expect_err "tp error" "not a positive integer"
run "bad --mode" 2 $K3SIM plan --gpus 16 --ttft 2s --tpot 50ms --mode fast
expect_err "mode error" "--mode"
run "bad --kda-state" 2 $K3SIM plan --gpus 16 --ttft 2s --tpot 50ms --kda-state fp8
expect_err "kda error" "KDA state dtype"
run "unknown hw" 2 $K3SIM plan --gpus 16 --ttft 2s --tpot 50ms --hw h2000
expect_err "hw error" "h2000"
run "prefix hit 1" 2 $K3SIM plan --gpus 16 --ttft 2s --tpot 50ms --prefix-hit 1
expect_err "prefix error" "--prefix-hit"
run "unknown option" 2 $K3SIM plan --gpus 16 --ttft 2s --tpot 50ms --bogus 1
expect_err "unknown option named" "--bogus"
printf '{"timestamp": 0, "input_length": 10\n' >"$tmp/bad.jsonl"
run "bad workload trace" 2 $K3SIM plan --gpus 16 --ttft 2s --tpot 50ms --workload "$tmp/bad.jsonl"
expect_err "trace error with location" "bad.jsonl:1:"
run "merge of a non-plan" 1 $K3SIM plan $F --from "$tmp/best.yaml"

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
