#!/bin/sh
# End-to-end checks through the k3sim binary: the contract's commands and JSON keys, the embedded
# and shipped scenarios, --help everywhere, and bad input giving file:line:col errors, never a crash.
# usage: run-cli-tests.sh K3SIM TESTS_DIR
set -u
K3SIM=$1
TESTS=$2
ROOT=$(dirname "$TESTS")
fails=0
n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }

# run NAME EXPECTED_EXIT CMD...: stdout to $tmp/out, stderr to $tmp/err
run() {
	name=$1; want=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else bad "$name (exit $got, wanted $want)"; sed 's/^/# /' "$tmp/err"; fi
}
expect_out() { if grep -q -- "$2" "$tmp/out"; then ok "$1"; else bad "$1: no '$2' in output"; fi; }
expect_err() { if grep -q -- "$2" "$tmp/err"; then ok "$1"; else bad "$1: no '$2' in stderr"; sed 's/^/# /' "$tmp/err"; fi; }
json_has() {
	if python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if all(k in d for k in sys.argv[1:]) else 1)" "$@"
	then ok "json keys $*"; else bad "json keys $*"; fi
}

for cmd in "" model run op trace check; do
	run "help $cmd" 0 $K3SIM $cmd --help
	expect_out "help $cmd says usage" "usage: k3sim"
done
run "no command" 2 $K3SIM
run "unknown command" 2 $K3SIM frobnicate

run "run default" 0 $K3SIM run
expect_out "run prints TTFT" "TTFT"
expect_out "run prints TPOT" "TPOT"
expect_out "default fits" "fits: yes"
run "run default --json" 0 $K3SIM run --json
json_has ttft_s tpot_s fits hbm tokens_per_s
python3 - "$tmp/out" <<'PY' && ok "hbm keys" || bad "hbm keys"
import json, sys
d = json.load(open(sys.argv[1]))
h = d["hbm"]
assert all(k in h for k in ("weights", "kda_state", "mla_kv", "activations", "total", "capacity"))
assert h["total"] == sum(h[k] for k in ("weights", "kda_state", "conv_state", "mla_kv", "dsa_index", "activations", "workspace"))
assert d["fits"] is True and d["ttft_s"] > 0 and d["tpot_s"] > 0
PY

# The step as a timeline: table rows, JSON keys, the Perfetto export (and back through the importer).
run "run default table has the timeline" 0 $K3SIM run
expect_out "timeline row" "step timeline (busiest EP rank)"
expect_out "critical path column" "critical path = compute + comm"
run "run timeline keys" 0 $K3SIM run --json
python3 - "$tmp/out" <<'PY' && ok "timeline json keys" || bad "timeline json keys"
import json, sys
d = json.load(open(sys.argv[1]))
for ph in ("prefill", "decode"):
    p = d[ph]
    assert all(k in p for k in ("step_s", "overlap", "microbatches", "critical_path", "exposed_comm_s")), ph
    cp = p["critical_path"]
    assert abs(cp["compute_s"] + cp["comm_s"] - p["step_s"]) <= 1e-7 * p["step_s"], ph
    assert p["overlap"] in ("none", "tbo", "sbo") and p["step_s"] <= p["time_s"] * (1 + 1e-7)
assert abs(d["tpot_s"] - d["decode"]["step_s"]) <= 1e-7 * d["tpot_s"]
assert abs(d["ttft_s"] - d["prefill"]["step_s"]) <= 1e-7 * d["ttft_s"]
PY
run "run --timeline" 0 $K3SIM run --timeline "$tmp/step.json" --timeline-step prefill
python3 - "$tmp/step.json" <<'PY' && ok "timeline is Chrome trace JSON" || bad "timeline is Chrome trace JSON"
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e.get("cat") == "kernel"]
assert len(ev) > 1000
assert any(e["args"]["critical"] for e in ev) and any(e["args"]["communication"] for e in ev)
assert {e["args"]["microbatch"] for e in ev} == {0, 1}  # two-batch overlap across nodes
step = [e for e in d["traceEvents"] if e.get("cat") == "step"][0]
assert max(e["ts"] + e["dur"] for e in ev) <= step["dur"] + 0.01
PY
# The prefill step it writes is the one TTFT sums: with a token budget (engine.prefill_tokens),
# several prompts per DP group in one step (it wrote one prompt's chunk: 0.42 s of a 1.62 s step).
run "run --timeline prefill, batched step" 0 $K3SIM run "$ROOT/scenarios/published/deepseek-v3-prefill-32xh800.yaml" --timeline "$tmp/batched.json" --timeline-step prefill --json
python3 - "$tmp/batched.json" "$tmp/out" <<'PY' && ok "prefill timeline is the batched step TTFT sums" || bad "prefill timeline is the batched step TTFT sums"
import json, sys
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
step = [e for e in d["traceEvents"] if e.get("cat") == "step"][0]
assert r["prefill_chunks"] == 1
assert abs(step["dur"] * 1e-6 - r["ttft_s"]) <= 1e-3 * r["ttft_s"], (step["dur"], r["ttft_s"])
assert "4 prompts per DP group" in step["name"], step["name"]
PY
run "run --timeline over a file refuses" 1 $K3SIM run --timeline "$tmp/step.json"
expect_err "says it exists" "file exists (use --force"
run "run --timeline --force replaces" 0 $K3SIM run --timeline "$tmp/step.json" --timeline-step prefill --force
run "timeline imports as a trace" 0 $K3SIM trace import "$tmp/step.json" -o "$tmp/step.db"
run "run --timeline -" 0 $K3SIM run --timeline -
python3 -c "import json; json.load(open('$tmp/out'))" && ok "timeline on stdout" || bad "timeline on stdout"
run "run --timeline-step bad" 2 $K3SIM run --timeline "$tmp/x.json" --timeline-step middle
run "run --timeline unwritable" 1 $K3SIM run --timeline /nonexistent/dir/step.json
expect_err "timeline unwritable says so" "cannot write"

run "h200x8" 0 $K3SIM run "$ROOT/scenarios/h200x8.yaml"
expect_out "h200x8 does not fit" "fits: NO"
run "h200x8 --json" 0 $K3SIM run h200x8 --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['fits'] is False and d['missing_bytes'] > 0" && ok "h200x8 json fits=false" || bad "h200x8 json fits=false"
for s in "$ROOT"/scenarios/*.yaml; do
	run "scenario $(basename "$s")" 0 $K3SIM run "$s" --json
done
# --prompt above the file's own prompt keeps the file's prefill_chunk (it was capped at the file's
# 8192-token prompt before the override, so 16K ran as two chunks where the slice runs one)
run "run --prompt keeps the file's chunk" 0 $K3SIM run "$ROOT/scenarios/k3-slice.yaml" --prompt 16384
expect_out "run --prompt: one 16K chunk" "prefill of 16384 tokens in 1 chunk"

# Published deployments: each names its figure (`# published: KEY VALUE`) and runs.
for s in "$ROOT"/scenarios/published/*.yaml; do
	case $(basename "$s") in h800*.yaml) continue ;; esac
	key=$(grep -m1 '^# published:' "$s" | cut -d' ' -f3)
	run "published $(basename "$s")" 0 $K3SIM run "$s" --json
	json_has "$key"
done
# Issue 14: every published row within 15 % (7 of 7). Before the per-op audit the prefill rows
# read 1.29-1.40; before the H200's MLA calibration on the public tables, the real layout of the
# 64K decode (288 expert slots) and its host time per step, the 64K decode read 1.52.
n_pub=0
for f in "$ROOT"/scenarios/published/*.yaml; do
	line=$(grep -m1 '^# published:' "$f" || true)
	[ -n "$line" ] || continue
	s=$(basename "$f" .yaml)
	set -- $line
	n_pub=$((n_pub + 1))
	$K3SIM run "$f" --json >"$tmp/pub.json" 2>"$tmp/err"
	python3 -c "import json,sys; d=json.load(open('$tmp/pub.json')); r=d['$3']/$4; sys.exit(0 if abs(r-1)<=0.15 else 1)" \
		&& ok "published $s within 15 %" || bad "published $s within 15 %"
done
[ "$n_pub" -eq 7 ] && ok "seven published rows" || bad "seven published rows (found $n_pub)"
# The 64K decode's attention: SGLang's FA3 MLA decode, b = 2, 128 heads, ctx 65,535, BF16 cache,
# measured 89.5 us on an H200 (bench/public/aic/h200_sxm/mla-decode.csv); uncalibrated, the h200
# preset charged it at the roofline (48 us sustained).
run "op mla_decode 64K on h200" 0 $K3SIM op mla_decode b=2 heads=128 ctx=65535 kv=bf16 --hw h200 --clock sustained --json
python3 -c "import json,sys; d=json.load(open('$tmp/out')); r=d['time_s']/89.4736e-6; sys.exit(0 if d['calibrated'] and abs(r-1)<=0.15 else 1)" \
	&& ok "h200 MLA decode at 64K within 15 % of the public measurement" || bad "h200 MLA decode at 64K within 15 % of the public measurement"
run "h800 preset by path" 0 $K3SIM op gemm m=4096 n=7168 k=7168 --hw "$ROOT/scenarios/published/h800.yaml"
run "h800-datasheet preset by path" 0 $K3SIM op gemm m=4096 n=7168 k=7168 --hw "$ROOT/scenarios/published/h800-datasheet.yaml"
run "run overrides" 0 $K3SIM run --batch 8 --prompt 4096 --output 16 --hw h200 --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['batch'] == 8 and d['prompt_tokens'] == 4096" && ok "overrides applied" || bad "overrides applied"

run "model preset json" 0 $K3SIM model kimi-k3 --json
json_has layers kda_layers mla_layers params_total params_active kda_state_bytes_per_request conv_state_bytes_per_request mla_kv_bytes_per_token weights_bytes
python3 - "$tmp/out" <<'PY' && ok "model figures" || bad "model figures"
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["params_total"] / 2.78e12 - 1) < 0.005
assert abs(d["params_active"] / 104.2e9 - 1) < 0.01
assert d["kda_state_bytes_per_request"] == 207 * 2**20
assert d["mla_kv_bytes_per_token"] == 27648
assert d["mla_layers"][0] == 3 and d["mla_layers"][-1] == 92 and len(d["kda_layers"]) == 69
PY
cp "$tmp/out" "$tmp/preset.json"
run "model hf config json" 0 $K3SIM model "$TESTS/data/kimi-k3-config.json" --json
python3 - "$tmp/out" "$tmp/preset.json" <<'PY' && ok "hf config == preset" || bad "hf config == preset"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in ("params_total", "params_active", "weights_bytes", "kda_layers", "mla_layers",
          "kda_state_bytes_per_request", "conv_state_bytes_per_request", "mla_kv_bytes_per_token"):
    assert a[k] == b[k], k
PY
run "model k3-dsa" 0 $K3SIM model k3-dsa
run "model k3-full-mla" 0 $K3SIM model k3-full-mla

run "op kda_decode json" 0 $K3SIM op kda_decode b=64 h=96 k=128 v=128 state=fp32 --hw h200 --json
json_has time_s cycles bound flops bytes
for args in "gemm m=4096 n=7168 k=7168 dtype=bf16" "grouped_gemm m=4096 n=6144 k=3584 groups=56 dtype=mxfp8 w_dtype=mxfp4" \
	"kda_chunk b=1 t=8192 h=96 k=128 v=128 state=fp32" "mla_decode b=32 heads=12 ctx=8192 kv=fp8" \
	"dsa_decode b=32 heads=12 ctx=131072" "mla_prefill b=1 t=8192 heads=12" "allreduce bytes=1048576 ranks=8" \
	"alltoall bytes=1048576 ranks=16" "allgather bytes=1048576 ranks=8" "reducescatter bytes=1048576 ranks=8"; do
	run "op $args" 0 $K3SIM op $args --json
	python3 -c "import json; d=json.load(open('$tmp/out')); assert d['time_s'] > 0 and d['bound'] in ('compute','memory','latency','comm')" \
		&& ok "op $args sane" || bad "op $args sane"
done
run "op unknown key" 2 $K3SIM op kda_decode b=1 h=96 sate=fp32
expect_err "op suggests key" "did you mean 'state'"
run "op missing key" 2 $K3SIM op gemm m=1 n=2
expect_err "op names missing key" "missing k="
run "op bad dtype" 2 $K3SIM op gemm m=1 n=2 k=3 dtype=fp7
run "op bad number" 2 $K3SIM op gemm m=x n=2 k=3
# the op kinds of their own (issue 17): parsed, costed, bad input refused with a reason
run "op attnres" 0 $K3SIM op attnres tokens=4096 dim=7168 sources=9 delta=1
expect_out "op attnres names its kind" "^attnres on h200"
run "op route" 0 $K3SIM op route tokens=64 experts=896 top_k=16
run "op combine" 0 $K3SIM op combine tokens=64 width=3584 top_k=16
run "op short_conv" 0 $K3SIM op short_conv tokens=4096 channels=36864
run "op attnres no sources" 2 $K3SIM op attnres tokens=1 dim=7168 sources=0
expect_err "op attnres no sources says why" "sources must be at least 1"
run "op route top_k past experts" 2 $K3SIM op route tokens=1 experts=8 top_k=9
expect_err "op route top_k says why" "top_k must be in 1..experts"
run "op combine missing top_k" 2 $K3SIM op combine tokens=1 width=3584
expect_err "op combine missing says which" "missing top_k"

# Physical sanity (issue 11): every shipped preset, 10^5 random ops each (and 25000 of the op kinds
# of their own, AttnRes, routing, combine, ShortConv: issue 17), no violation.
run "check help" 0 $K3SIM check --help
expect_out "check help says usage" "usage: k3sim check"
# the calibrated presets with 500 scenario pairs each, the datasheet ones (plain physical model,
# no tables) with 100: ten presets at 500 took 73 s under ASan on a loaded box
run "check calibrated presets" 0 $K3SIM check --scenarios 500 --hw h100 --hw h200 --hw b200 --hw b300 --hw gb200
for p in h100 h200 b200 b300 gb200; do
	expect_out "check $p: 0 violations" "^$p: 125000 ops, 500 scenario pairs in .*: 0 violations"
done
run "check datasheet presets" 0 $K3SIM check --scenarios 100 --hw h100-datasheet --hw h200-datasheet \
	--hw b200-datasheet --hw b300-datasheet --hw gb200-datasheet
for p in h100 h200 b200 b300 gb200; do
	expect_out "check $p-datasheet: 0 violations" "^$p-datasheet: 125000 ops, 100 scenario pairs in .*: 0 violations"
done
run "check sustained --json" 0 $K3SIM check --hw h200 --ops 20000 --scenarios 100 --clock sustained --json
python3 -c "import json; d=json.load(open('$tmp/out')); p=d['presets'][0]; assert d['clock']=='sustained' and p['violations']==0 and p['ops']>19000" \
	&& ok "check json" || bad "check json"
run "check bad tolerance" 2 $K3SIM check --tolerance abc
run "check bad ops" 2 $K3SIM check --ops -1
run "check bad clock" 2 $K3SIM check --clock turbo
run "check unknown preset" 1 $K3SIM check --hw h201 --ops 10
expect_err "check preset suggestion" "did you mean 'h200'"
run "op clock" 0 $K3SIM op gemm m=8192 n=8192 k=8192 --clock sustained
expect_out "op prints the regime" "sustained clock"
run "op bad clock" 2 $K3SIM op gemm m=1 n=2 k=3 --clock fast
run "run clock override" 0 $K3SIM run --clock boost --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['clock']=='boost' and d['sm_clock_hz'] > 1e9" && ok "run clock json" || bad "run clock json"
run "run bad clock" 2 $K3SIM run --clock warp
# A clock in MHz (issue 17: validating a run at the clock it ran): shown as given, bounded by the
# preset's boost, a compute-bound op slower by the clocks' ratio
run "run clock MHz" 0 $K3SIM run --clock 1830
expect_out "run shows the given clock" "clock: 1830 MHz (given"
run "run clock MHz json" 0 $K3SIM run --clock 1830MHz --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['clock']=='given' and d['sm_clock_hz']==1.83e9" && ok "run given clock json" || bad "run given clock json"
run "run clock above boost" 2 $K3SIM run --clock 1990
expect_err "above boost says the preset's boost" "the preset's boost clock is 1980 MHz"
run "run clock zero" 2 $K3SIM run --clock 0
expect_err "zero clock says positive" "must be positive"
run "run clock inf" 2 $K3SIM run --clock inf
run "run clock GHz" 2 $K3SIM run --clock 1.8GHz
run "op clock MHz" 0 $K3SIM op gemm m=8192 n=8192 k=8192 --clock 1830 --json
python3 - "$tmp/out" <<'PY' && ok "op at 1830 MHz: clock_hz and kind" || bad "op at 1830 MHz: clock_hz and kind"
import json, sys
d = json.load(open(sys.argv[1]))
assert d['clock'] == 'given' and d['clock_hz'] == 1.83e9, d
PY
run "op clock above boost" 2 $K3SIM op gemm m=1 n=2 k=3 --clock 2000MHz
expect_err "op above boost says so" "2000 MHz is above the boost clock"
run "check clock MHz" 0 $K3SIM check --hw h200 --ops 2000 --scenarios 20 --clock 1830 --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['clock']=='given' and d['clock_hz']==1.83e9 and d['presets'][0]['violations']==0" \
	&& ok "check at a given clock" || bad "check at a given clock"
printf 'name: clocked\noptions:\n  clock: 2500MHz\n' > "$tmp/clock-high.yaml"
run "scenario clock above boost" 1 $K3SIM run "$tmp/clock-high.yaml"
expect_err "scenario clock error at file:line:col" "clock-high.yaml:3:10: .*the preset's boost clock is 1980 MHz"
printf 'name: clocked\noptions:\n  clock: turbo\n' > "$tmp/clock-bad.yaml"
run "scenario clock unknown" 1 $K3SIM run "$tmp/clock-bad.yaml"
expect_err "scenario bad clock at file:line:col" "clock-bad.yaml:3:10: .*not a clock"
printf 'name: clocked\noptions:\n  clock: 1830\n' > "$tmp/clock-ok.yaml"
run "scenario clock MHz" 0 $K3SIM run "$tmp/clock-ok.yaml"
expect_out "scenario clock shown" "clock: 1830 MHz (given"
# Sizes whose products pass what 64-bit counts hold: a clear error, never a wrapped value
run "run overflow" 1 $K3SIM run --batch 1048576 --prompt 1073741824
expect_err "run overflow says so" "workload too large"
run "op overflow" 2 $K3SIM op gemm m=4294967296 n=4294967296 k=4
expect_err "op overflow says so" "sizes too large"
run "op ep overflow" 2 $K3SIM op ep_dispatch tokens=9000000000000000000 ranks=8
run "op json floor" 0 $K3SIM op gemm m=1 n=12 k=7168 --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['time_s'] >= d['floor_s'] > 0 and d['time_s'] < 20e-6 and d['clock']=='boost' and d['calibrated'] is True" \
	&& ok "op floor and calibrated" || bad "op floor and calibrated"
# The shipped h200's recorded GEMM cross-validation meets issue 11's targets: held out by
# run and by GEMM shape (leave one (n, k) out), median <= 5 / 6 %, p90 <= 15 % (FP8 by shape was
# 15.47 % before the epilogue's store rate)
python3 - "$TESTS/../hw/presets/h200.yaml" <<'PY' && ok "h200 GEMM cross-validation within targets" || bad "h200 GEMM cross-validation within targets"
import re, sys
t = open(sys.argv[1]).read()
for c in ("gemm.bf16", "gemm.fp8"):
    line = re.search(r"^    %s: .*$" % re.escape(c), t, re.M).group(0)
    run = re.search(r"by_run: \{median_pct: ([0-9.]+), p90_pct: ([0-9.]+)\}", line)
    shape = re.search(r"by_gemm_shape: \{median_pct: ([0-9.]+), p90_pct: ([0-9.]+)\}", line)
    assert float(run.group(1)) <= 5 and float(run.group(2)) <= 15, (c, run.groups())
    assert float(shape.group(1)) <= 6 and float(shape.group(2)) <= 15, (c, shape.groups())
PY
run "op json extrapolated" 0 $K3SIM op gemm m=100000 n=300000 k=7168 --json
python3 -c "import json; d=json.load(open('$tmp/out')); assert d['extrapolated'] is True" \
	&& ok "op outside the measured GEMMs says extrapolated" || bad "op outside the measured GEMMs says extrapolated"

# Bad input: a clear file:line:col error and exit 1, never a crash (exit >= 128).
run "unknown key" 1 $K3SIM run "$TESTS/data/bad/unknown-key.yaml"
expect_err "unknown key located" "unknown-key.yaml:6:3: error: unknown key 'tp_coom' (did you mean 'tp_comm'?)"
run "wrong type" 1 $K3SIM run "$TESTS/data/bad/wrong-type.yaml"
expect_err "wrong type located" "wrong-type.yaml:2:7: error: gpus: expected an integer, got 'sixteen'"
run "malformed yaml" 1 $K3SIM run "$TESTS/data/bad/malformed.yaml"
expect_err "malformed located" "malformed.yaml:[0-9]*:[0-9]*: error: malformed YAML"
run "missing field" 1 $K3SIM model "$TESTS/data/bad/missing-field.yaml"
expect_err "missing field" "missing key 'hidden_size'"
run "truncated json" 1 $K3SIM model "$TESTS/data/bad/truncated.json"
expect_err "truncated json located" "truncated.json:[0-9]*:[0-9]*: error: malformed JSON"
run "binary input" 1 $K3SIM run "$TESTS/data/bad/binary.yaml"
run "missing file" 1 $K3SIM run /nonexistent/scenario.yaml
expect_err "missing file" "cannot open"
run "unknown preset" 1 $K3SIM run defualt
expect_err "preset suggestion" "did you mean 'default'"

echo "1..$n"
echo "$((n - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
