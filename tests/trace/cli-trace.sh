#!/bin/sh
# End-to-end: k3sim trace import / summary / export / merge through the built binary, on
# fixtures written here. Usage: cli-trace.sh PATH/TO/k3sim
set -u
K3SIM=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/k3trace-cli-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

# expect NAME STATUS GREP-PATTERN CMD... : exit status and a pattern in stdout+stderr
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

cat >"$dir/rank0.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 10, "tid": 11, "ts": 100.0, "dur": 50.0},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 101.0, "dur": 2.0, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 104.0, "dur": 2.0, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "void gemm<64>(float*)", "pid": 0, "tid": 7, "ts": 105.0, "dur": 10.0, "args": {"device": 0, "stream": 7, "correlation": 1, "grid": [8, 1, 1], "block": [128, 1, 1]}},
 {"ph": "X", "cat": "kernel", "name": "void gemm<64>(float*)", "pid": 0, "tid": 7, "ts": 120.0, "dur": 30.0, "args": {"device": 0, "stream": 7, "correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 9, "ts": 110.0, "dur": 20.0, "args": {"device": 0, "stream": 9}}
]}
JSON
sed 's/"pid": 10/"pid": 20/; s/"device": 0/"device": 1/g' "$dir/rank0.json" >"$dir/rank1.json"

expect "trace --help" 0 "subcommands" "$K3SIM" trace --help
for sub in import summary export merge; do
	expect "trace $sub --help" 0 "usage: k3sim trace $sub" "$K3SIM" trace "$sub" --help
done
expect "unknown subcommand" 2 "unknown subcommand" "$K3SIM" trace frobnicate
expect "import without -o" 2 "no output" "$K3SIM" trace import "$dir/rank0.json"
expect "import unknown option" 2 "unknown option" "$K3SIM" trace import --bogus "$dir/rank0.json" -o "$dir/x.db"

expect "import kineto" 0 "3 kernels" "$K3SIM" trace import "$dir/rank0.json" -o "$dir/rank0.db"
expect "import refuses to overwrite" 1 "file exists" "$K3SIM" trace import "$dir/rank0.json" -o "$dir/rank0.db"
expect "import --force --json" 0 '"kernels": 3' "$K3SIM" trace import "$dir/rank0.json" -o "$dir/rank0.db" --force --json
expect "import rank1" 0 "" "$K3SIM" trace import -q "$dir/rank1.json" -o "$dir/rank1.db"

expect "summary table" 0 "Total Time (ns)" "$K3SIM" trace summary "$dir/rank0.db"
expect "summary kernel row" 0 "40000.*2.*void gemm<64>(float\*)" "$K3SIM" trace summary "$dir/rank0.db"
expect "summary --json" 0 '"total_ns": 40000, "instances": 2' "$K3SIM" trace summary "$dir/rank0.db" --json
expect "summary overlap" 0 '"overlap_ns": 15000' "$K3SIM" trace summary "$dir/rank0.db" --json
expect "summary nvtx" 0 '"name": "forward", "instances": 1' "$K3SIM" trace summary "$dir/rank0.db" --json
expect "summary --base -o" 0 "" "$K3SIM" trace summary "$dir/rank0.db" --base --json -o "$dir/sum.json"
if grep -q '"name": "gemm"' "$dir/sum.json"; then ok "summary --base short names"; else bad "summary --base short names"; fi

expect "export" 0 "wrote" "$K3SIM" trace export "$dir/rank0.db" --perfetto "$dir/rank0.perfetto.json"
if grep -q '"traceEvents"' "$dir/rank0.perfetto.json" && grep -q '"name":"GPU 0"' "$dir/rank0.perfetto.json"; then
	ok "export content"
else
	bad "export content"
fi
expect "export window" 0 '"kernels": 1' "$K3SIM" trace export "$dir/rank0.db" -o "$dir/w.json" --from-ns 116000 --to-ns 118000 --json
expect "export bad window" 2 "after" "$K3SIM" trace export "$dir/rank0.db" -o "$dir/w.json" --from-ns 5 --to-ns 1
expect "export to stdout" 0 '"displayTimeUnit"' "$K3SIM" trace export "$dir/rank0.db" --perfetto -

expect "merge" 0 "6 kernels" "$K3SIM" trace merge "$dir/rank0.db" "$dir/rank1.db" -o "$dir/merged.db"
expect "merged summary" 0 '"device": 1' "$K3SIM" trace summary "$dir/merged.db" --json
expect "merge then import the result" 0 "6 kernels" "$K3SIM" trace import "$dir/merged.db" -o "$dir/copy.db"

# two ranks of one host, each listing both GPUs (as CUDA captures do), the same correlation ids
# in both, and a kernel that starts before its launching call returned (rank 1, id 2)
if python3 - "$dir" <<'PY'
import sqlite3, sys
for rank in (0, 1):
    c = sqlite3.connect("%s/gpus-r%d.db" % (sys.argv[1], rank))
    c.executescript("""
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');
    CREATE TABLE TARGET_INFO_GPU (id INTEGER PRIMARY KEY, name TEXT, uuid TEXT);
    INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H200', 'GPU-aaaa'), (1, 'NVIDIA H200', 'GPU-bbbb');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,
      globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
    """)
    pid = 100 + rank
    t0 = 5000 if rank == 0 else 0
    for corr in (1, 2):
        start = t0 + 100 * corr
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 2)",
                  (start, start + 50, (pid << 24) | 7, corr))
        k = start + (20 if (rank, corr) == (1, 2) else 60)
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 7, ?, ?, 1)",
                  (k, k + 10, rank, corr, pid << 24))
    c.commit()
PY
then
	expect "merge: one row per GPU" 0 "4 kernels.* 2 GPUs" "$K3SIM" trace merge "$dir/gpus-r0.db" "$dir/gpus-r1.db" -o "$dir/gpus.db"
	expect "merged launch: matched per process" 0 "min -30 ns, max 10 ns" "$K3SIM" trace summary "$dir/gpus.db"
	expect "merged launch: negative values explained" 0 "1 kernels started before their launching call returned" "$K3SIM" trace summary "$dir/gpus.db"
	expect "merged launch --json" 0 '"before_return": 1, "min_from_call_start_ns": 20, "inconsistent": 0' "$K3SIM" trace summary "$dir/gpus.db" --json
else
	bad "python3 could not write the two-rank fixtures"
fi

# real traces as they come (issue 12): standard input, pipes, gzip, a BOM, --format
expect "import from stdin" 0 "<stdin> (kineto): 3 kernels" sh -c "\"$K3SIM\" trace import - -o \"$dir/stdin.db\" <\"$dir/rank0.json\""
gzip -c "$dir/rank0.json" >"$dir/rank0.json.gz"
expect "import gzip" 0 "3 kernels" "$K3SIM" trace import "$dir/rank0.json.gz" -o "$dir/gz.db"
expect "import a gzip pipe" 0 "3 kernels" sh -c "gzip -dc \"$dir/rank0.json.gz\" | \"$K3SIM\" trace import - --format kineto -o \"$dir/zpipe.db\""
expect "import gzip on stdin" 0 "3 kernels" sh -c "\"$K3SIM\" trace import - -o \"$dir/zstdin.db\" <\"$dir/rank0.json.gz\""
mkfifo "$dir/fifo" && { cat "$dir/rank0.json" >"$dir/fifo" & }
expect "import a FIFO" 0 "3 kernels" "$K3SIM" trace import "$dir/fifo" -o "$dir/fifo.db"
wait
printf '\357\273\277' | cat - "$dir/rank0.json" >"$dir/bom.json"
expect "import with a BOM" 0 "3 kernels" "$K3SIM" trace import "$dir/bom.json" -o "$dir/bom.db"
expect "import an SQLite database from a pipe" 0 "<stdin> (sqlite): 3 kernels" sh -c "cat \"$dir/rank0.db\" | \"$K3SIM\" trace import - -o \"$dir/dbpipe.db\""
expect "--format that does not match" 1 "this is an SQLite database" "$K3SIM" trace import "$dir/rank0.db" --format kineto -o "$dir/fm.db"
expect "--format unknown" 2 "unknown format" "$K3SIM" trace import "$dir/rank0.json" --format xml -o "$dir/fu.db"
expect "import a directory" 1 "is a directory" "$K3SIM" trace import "$dir" -o "$dir/dir.db"
expect "import empty stdin" 1 "empty input" sh -c "\"$K3SIM\" trace import - -o \"$dir/e.db\" </dev/null"
printf '{"traceEvents": [{"ph": "X", "cat": "hpu_op", "name": "k", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}' >"$dir/hpu.json"
expect "warn: no GPU activity" 0 "warning: no GPU activity" "$K3SIM" trace import "$dir/hpu.json" -o "$dir/hpu.db"
expect "warn: unknown categories" 0 "unknown categories were skipped: 'hpu_op' (1)" "$K3SIM" trace import "$dir/hpu.json" -o "$dir/hpu.db" -f -q
printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}' >"$dir/gpuonly.json"
expect "warn: GPU rows without a process" 0 "1 GPU rows have no CPU-side event" "$K3SIM" trace import "$dir/gpuonly.json" -o "$dir/gpuonly.db"

# ranks are identities: two ranks' GPU 0 (Kineto: no UUID) stay two GPUs after a merge
for r in 0 1; do
	sed "s/\"traceEvents\"/\"distributedInfo\": {\"rank\": $r, \"world_size\": 2}, \"baseTimeNanoseconds\": 1733000000000000000, \"traceEvents\"/" "$dir/rank0.json" >"$dir/dist$r.json"
	expect "import rank $r" 0 "" "$K3SIM" trace import -q "$dir/dist$r.json" -o "$dir/dist$r.db"
done
expect "2-rank Kineto merge: 2 GPUs" 0 "6 kernels.* 2 GPUs" "$K3SIM" trace merge "$dir/dist0.db" "$dir/dist1.db" -o "$dir/dist.db"
expect "2-rank summary: 2 devices" 0 '"device": 1, "kernels": 3' "$K3SIM" trace summary "$dir/dist.db" --json
expect "merge: clocks that cannot be one" 0 "warning: some inputs count time from the Unix epoch" "$K3SIM" trace merge "$dir/dist0.db" "$dir/rank1.db" -o "$dir/mixed.db"
expect "merge: a span of years" 0 "spans more than a day" "$K3SIM" trace merge "$dir/dist0.db" "$dir/rank1.db" -o "$dir/mixed2.db"

# full precision in JSON numbers (76426648.5 printed as 7.64266e+07 before)
printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 76426.648},\n {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100000, "dur": 76426.649}]}' >"$dir/prec.json"
expect "precision import" 0 "" "$K3SIM" trace import -q "$dir/prec.json" -o "$dir/prec.db"
expect "summary --json full precision" 0 '"avg_ns": 76426648.5' "$K3SIM" trace summary "$dir/prec.db" --json

# export -> import gives the same kernels back
expect "export for the round trip" 0 "" "$K3SIM" trace export -q "$dir/rank0.db" -o "$dir/rt.json"
expect "round trip import" 0 "3 kernels, 0 memcpys, 0 memsets, 2 API calls, 1 NVTX events, 1 GPUs" "$K3SIM" trace import "$dir/rt.json" -o "$dir/rt.db"
if python3 - "$dir/rank0.db" "$dir/rt.db" <<'PY'
import sqlite3, sys
q = ("SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, s.value FROM"
     " CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName ORDER BY 1, 3, 4")
rows = [sqlite3.connect(p).execute(q).fetchall() for p in sys.argv[1:]]
sys.exit(0 if rows[0] == rows[1] and len(rows[0]) == 3 else 1)
PY
then
	ok "round trip: same kernels"
else
	bad "round trip: same kernels"
fi

# times at the ends of the int64 range: saturated, never an overflow (UBSan runs this too)
if python3 - "$dir/extreme.db" <<'PY'
import sqlite3, sys
lo, hi = -2**63, 2**63 - 1
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER,
  text TEXT);
""")
for s_, e_ in ((lo, hi), (lo, hi), (hi, lo), (0, hi)):
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, 1, 16777216, 1)", (s_, e_))
c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, 16777217, 1, 2)", (hi, lo))
c.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, 16777217, 'r')", (lo, hi))
c.commit()
PY
then
	expect "extreme times: summary" 0 "Total Time" "$K3SIM" trace summary "$dir/extreme.db"
	expect "extreme times: summary --json" 0 '"span_ns": 9223372036854775807' "$K3SIM" trace summary "$dir/extreme.db" --json
	expect "extreme times: export" 0 "wrote" "$K3SIM" trace export "$dir/extreme.db" -o "$dir/extreme.json"
	expect "extreme times: import" 0 "4 kernels" "$K3SIM" trace import "$dir/extreme.db" -o "$dir/extreme2.db"
else
	bad "python3 could not write the extreme-times database"
fi

# bad inputs: clear errors, exit 1, never a crash
printf 'garbage' >"$dir/garbage.json"
printf '{"traceEvents": [{"ph": "X", "name": "k", ' >"$dir/truncated.json"
printf 'SQLite format 3\000' >"$dir/short.db"
head -c 5000 "$dir/rank0.db" >"$dir/cut.db"
expect "import garbage" 1 "unknown format" "$K3SIM" trace import "$dir/garbage.json" -o "$dir/g.db"
expect "import truncated json" 1 "truncated.json:1:.*error: .*end of file" "$K3SIM" trace import "$dir/truncated.json" -o "$dir/t.db"
[ -e "$dir/t.db" ] && bad "failed import left its output" || ok "failed import leaves no output"
expect "import short sqlite" 1 "truncated SQLite" "$K3SIM" trace import "$dir/short.db" -o "$dir/s.db"
expect "import cut sqlite" 1 "truncated" "$K3SIM" trace import "$dir/cut.db" -o "$dir/c.db"
expect "summary of json" 1 "not an SQLite database" "$K3SIM" trace summary "$dir/rank0.json"
expect "summary missing" 1 "cannot open" "$K3SIM" trace summary "$dir/nope.db"
expect "merge json" 1 "import this file first" "$K3SIM" trace merge "$dir/rank0.db" "$dir/rank0.json" -o "$dir/m2.db"
gzip -c "$dir/rank0.db" >"$dir/rank0.db.gz"
expect "merge a gzip'd database" 1 "not gzip'd" "$K3SIM" trace merge "$dir/rank0.db" "$dir/rank0.db.gz" -o "$dir/m3.db"
expect "merge stdin" 1 "not standard input" "$K3SIM" trace merge "$dir/rank0.db" - -o "$dir/m4.db"

if [ "$fails" -ne 0 ]; then
	echo "$fails failed"
	exit 1
fi
echo "all passed"
