#!/bin/sh
# End-to-end: k3sim trace profile on excerpts of real H200 captures (tests/trace/fixtures/,
# cut by make-profile-fixtures.py from bench/results/profile-h200-2026-12-01: HF DeepSeek-V3,
# one prefill and one decode step, captured both ways) and on small traces written here.
# Usage: cli-profile.sh PATH/TO/k3sim FIXTURE-DIR
set -u
K3SIM=$1
FIX=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/k3profile-cli-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

expect() {
	name=$1 want=$2 pat=$3
	shift 3
	"$@" >"$dir/out" 2>"$dir/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "$name: exit $got, wanted $want"
		sed 's/^/    /' "$dir/err" | head -5
	elif [ -n "$pat" ] && ! cat "$dir/out" "$dir/err" | grep -q -- "$pat"; then
		bad "$name: no '$pat' in the output"
		sed 's/^/    /' "$dir/out" "$dir/err" | head -10
	else
		ok "$name"
	fi
}

# check NAME PYTHON-EXPR: evaluated with j = the JSON in $dir/out
check() {
	if python3 -c "import json,sys; j=json.load(open('$dir/out')); sys.exit(0 if ($2) else 1)"; then
		ok "$1"
	else
		bad "$1"
		head -c 600 "$dir/out" | sed 's/^/    /'
	fi
}

expect "help" 0 "usage: k3sim trace profile" "$K3SIM" trace profile --help
expect "listed under trace" 0 "profile" "$K3SIM" trace --help

# 1. emit_nvtx capture: shapes from the NVTX ranges PyTorch writes
expect "import nvtx fixture" 0 "" "$K3SIM" trace import "$FIX/profile-dsv3-nvtx.db.gz" -o "$dir/nvtx.db" -q
expect "profile nvtx" 0 "" "$K3SIM" trace profile "$dir/nvtx.db" --json --top 100
check "nvtx: >= 90 % of kernel time mapped with full shapes" "j['mapped_pct'] >= 90 and j['kernels'] == 863"
check "nvtx: by framework records" "j['matched_framework'] > 800 and j['matched_nvtx'] == 0"
check "nvtx: classes (trace validate's labels)" "all(c in j['classes'] for c in ('gemm.bf16', 'grouped_gemm.bf16', 'mla_prefill', 'memory', 'unmapped'))"
check "nvtx: two steps, both CPU-bound" "[s['name'] for s in j['steps']] == ['prefill', 'decode'] and all(s['cpu_bound'] for s in j['steps'])"
check "nvtx: the MoE grouped GEMM with its shape" \
	"any(o['op'] == 'grouped_gemm m=4096 n=1536 k=2048 groups=32 dtype=bf16' for o in j['ops'])"
check "nvtx: the attention call" \
	"any(o['op'] == 'mla_prefill b=4 t=256 ctx=0 heads=16 dqk=192 dv=128 kv=bf16' for o in j['ops'])"
check "nvtx: element types assumed (emit_nvtx records none)" "j['assumed_dtype_ns'] == j['mapped_kernel_ns']"
check "nvtx: unmapped listed with reasons" "all(u['reason'] for u in j['unmapped'])"
expect "profile nvtx (table)" 0 "CPU-bound" "$K3SIM" trace profile "$dir/nvtx.db"
expect "without derivation nothing maps" 0 "" "$K3SIM" trace profile "$dir/nvtx.db" --derive none --json
check "derive none: 0 mapped" "j['mapped_kernel_ns'] == 0"
expect "step-start" 0 "" "$K3SIM" trace profile "$dir/nvtx.db" --step-start aten::embedding --json
check "step-start: one step per embedding call" "len(j['steps']) == 2 and j['steps'][0]['name'] == 'aten::embedding'"
expect "no steps" 0 "No steps" "$K3SIM" trace profile "$dir/nvtx.db" --step nosuch

# the issue's report: trace validate on such a capture matched no GEMM, attention or MoE kernel
expect "validate nvtx" 0 "" "$K3SIM" trace validate "$dir/nvtx.db" --json
check "validate: GEMM, grouped GEMM and attention classes measured" \
	"{'gemm.bf16', 'grouped_gemm.bf16', 'mla_prefill'} <= {c['class'] for c in j['classes']}"
check "validate: few activities unmatched" "j['match']['unmatched'] < 20"

# 2. torch.profiler trace (Kineto JSON with record_shapes): read directly
expect "profile kineto" 0 "" "$K3SIM" trace profile "$FIX/profile-dsv3-kineto.json.gz" --json --top 100
check "kineto: >= 90 % mapped" "j['mapped_pct'] >= 90"
check "kineto: two steps" "[s['name'] for s in j['steps']] == ['prefill', 'decode']"
check "kineto: the same GEMM as the capture" \
	"any(o['op'] == 'grouped_gemm m=4096 n=1536 k=2048 groups=32 dtype=bf16' for o in j['ops'])"
check "kineto: element types recorded" "j['assumed_dtype_ns'] < j['mapped_kernel_ns'] / 10"
check "kineto: torch.profiler leaves the index list unrecorded" \
	"any('no recorded sizes' in u['reason'] for u in j['unmapped'])"
expect "import --cpu-ops" 0 '"cpu_ops": ' "$K3SIM" trace import --cpu-ops "$FIX/profile-dsv3-kineto.json.gz" -o "$dir/k.db" --json
expect "import without --cpu-ops" 0 "" "$K3SIM" trace import "$FIX/profile-dsv3-kineto.json.gz" -o "$dir/k0.db" --json
if grep -q cpu_ops "$dir/out"; then bad "no cpu_ops key without the option"; else ok "no cpu_ops key without the option"; fi

# 3. host-bound gaps against other idle: kernel b is launched after kernel a ended (the GPU
# waited on the host); kernel c was launched early but waits on something else.
cat >"$dir/gaps.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "decode", "pid": 1, "tid": 1, "ts": 0, "dur": 300},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 2, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 100, "dur": 3, "args": {"Input Dims": [[64, 64], [64, 64], []], "Input type": ["float", "float", "Scalar"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 101, "dur": 2, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 103.1, "dur": 1, "args": {"Input Dims": [[64, 64], []], "Input type": ["float", "Scalar"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 103.2, "dur": 0.6, "args": {"correlation": 3}},
 {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 5, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 104, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "mul_kernel", "pid": 0, "tid": 7, "ts": 150, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 3}}
]}
JSON
expect "gaps" 0 "" "$K3SIM" trace profile "$dir/gaps.json" --json
check "gaps: 89 us waiting on the host, 44 us other, CPU-bound" \
	"j['steps'][0]['host_idle_ns'] == 89000 and j['steps'][0]['other_idle_ns'] == 44000 and j['steps'][0]['cpu_bound'] and j['steps'][0]['busy_ns'] == 14000"
check "gaps: all three mapped" "j['mapped_pct'] == 100 and j['classes']['gemm.fp32']['ops'] == 1 and j['classes']['memory']['ops'] == 2"

# 4. steps by repetition: four forwards of a program without step ranges (the first one, a
# "prefill", launches more kernels); the record that starts each forward is found
python3 - "$dir/rep.json" <<'PY'
import json, sys
ev, t, corr = [], 0, 0
def op(name, dims, kernels):
    global t, corr
    ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t, "dur": 4 * kernels + 2,
               "args": {"Input Dims": dims, "Input type": ["c10::BFloat16"] * len(dims)}})
    for _ in range(kernels):
        corr += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 1,
                   "dur": 2, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": t + 3, "dur": 1,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
        t += 4
    t += 2
for step in range(4):
    op("aten::embedding", [[1000, 64], [4, 8 if step == 0 else 1]], 1)
    for layer in range(6 if step == 0 else 3):
        op("aten::mm", [[32, 64], [64, 64]], 1)
        op("aten::add", [[32, 64], [32, 64]], 1)
    op("aten::argmax", [[4, 1000]], 1)
    t += 50
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
expect "repetition" 0 "Steps by repetition: each starts at a top-level 'aten::embedding' call" \
	"$K3SIM" trace profile "$dir/rep.json"
expect "repetition (json)" 0 "" "$K3SIM" trace profile "$dir/rep.json" --json
check "repetition: four steps of 14, 8, 8, 8 kernels" \
	"j['steps_by_repetition'] == 'aten::embedding' and [s['kernels'] for s in j['steps']] == [14, 8, 8, 8]"
expect "no repetition with --step" 0 "No steps" "$K3SIM" trace profile "$dir/rep.json" --step nosuch
expect "markers win over repetition" 0 "" "$K3SIM" trace profile "$dir/nvtx.db" --json
check "markers: steps_by_repetition empty" "j['steps_by_repetition'] == ''"

# 5. errors
expect "no trace" 2 "expected one trace" "$K3SIM" trace profile
expect "bad dtype" 2 "unknown 'int3'" "$K3SIM" trace profile "$dir/nvtx.db" --dtype int3
expect "bad top" 2 "wants a count" "$K3SIM" trace profile "$dir/nvtx.db" --top x
expect "unknown option" 2 "unknown option" "$K3SIM" trace profile "$dir/nvtx.db" --frobnicate
expect "missing file" 1 "nosuch.db" "$K3SIM" trace profile "$dir/nosuch.db"
printf 'rules:\n  - {call: "aten::*", form: gemmm}\n' >"$dir/bad.yaml"
expect "bad derivation rules" 1 "bad.yaml:2:.*did you mean 'gemm'" "$K3SIM" trace profile "$dir/nvtx.db" --derive "$dir/bad.yaml"
printf '{"traceEvents": [' >"$dir/cut.json"
expect "truncated JSON" 1 "cut.json" "$K3SIM" trace profile "$dir/cut.json"

echo "cli-profile: $fails failed"
[ "$fails" -eq 0 ]
