#!/bin/sh
# Trace benchmarks (issue 3): trace-database ingest rate (goal >= 1 M kernel records/s),
# `k3sim trace summary` of a 10^6-kernel database (goal < 2 s), Kineto JSON import rate.
# Runs each measurement REPEAT times and keeps every line; writes bench/results/trace-DATE.txt.
# usage: bench/trace-bench.sh [BUILD_DIR] [KERNELS] [REPEAT]   (default: build 1000000 3)
#
# Import throughput (issue 12: >= 150 MB/s, flat memory, from a pipe too):
#        bench/trace-bench.sh --kineto-gb [GB] [BUILD_DIR] [REPEAT]   (default 1 build 2)
# generates a torch.profiler-shaped Kineto trace of GB x 10^9 bytes (bench/kineto-gen.c) and
# imports it from the file, from a pipe, gzip'd and from a gzip'd pipe, with /usr/bin/time -v
# (wall time, CPU time, peak RSS); checks the counts; writes bench/results/trace-import-DATE.txt.
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--kineto-gb" ]; then
	gb=${2:-1}
	B=${3:-build}
	R=${4:-2}
	K3SIM=$B/cli/k3sim
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/k3import-bench-XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	out=bench/results/trace-import-$(date +%Y-%m-%d).txt
	bytes=$(python3 -c "print(int($gb * 10**9))")
	"$B/bench/kineto-gen" "$bytes" "$tmp/t.json" 2>"$tmp/want"
	gzip -1 -c "$tmp/t.json" >"$tmp/t.json.gz"
	size=$(stat -c %s "$tmp/t.json")
	run() { # LABEL CMD: one import, its numbers on one line
		rm -f "$tmp/o.db"
		/usr/bin/time -v -o "$tmp/time" sh -c "$2" >"$tmp/imp.json" 2>"$tmp/err" || {
			echo "$1: FAILED: $(head -c 300 "$tmp/err")"
			return
		}
		wall=$(grep 'Elapsed (wall clock)' "$tmp/time" | sed 's/.*: //' | awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
		user=$(grep 'User time' "$tmp/time" | sed 's/.*: //')
		sys=$(grep 'System time' "$tmp/time" | sed 's/.*: //')
		rss=$(grep 'Maximum resident' "$tmp/time" | sed 's/.*: //')
		counts=$(python3 -c "import json; d = json.load(open('$tmp/imp.json')); print('kernels %d api_calls %d memcpys %d memsets %d nvtx %d' % (d['kernels'], d['api_calls'], d['memcpys'], d['memsets'], d['nvtx']))")
		ok=$(grep -q "^$counts " "$tmp/want" && echo "counts ok" || echo "COUNTS DIFFER from the generator: $(cat "$tmp/want")")
		echo "$1: $(python3 -c "print('%.1f MB/s wall (%.2f s), %.1f MB/s of CPU time (user %s s + sys %s s)' % ($size / 1e6 / $wall, $wall, $size / 1e6 / ($user + $sys), '$user', '$sys'))"), peak RSS $((rss / 1024)) MiB; $counts; $ok"
	}
	{
		echo "# k3sim trace import throughput; $(date -u +%Y-%m-%dT%H:%M:%SZ); machine: $(nproc) cores ($(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
		echo "# command: bench/trace-bench.sh --kineto-gb $gb $B $R   (git $(git rev-parse --short HEAD 2>/dev/null || echo '?'); buildtype: $(meson introspect "$B" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"][0])'); zlib $(python3 -c 'import zlib; print(zlib.ZLIB_RUNTIME_VERSION)'))"
		echo "# input: $size bytes of torch.profiler-shaped Kineto JSON (bench/kineto-gen), gzip -1: $(stat -c %s "$tmp/t.json.gz") bytes; MB/s are of the uncompressed JSON"
		echo "# the machine is shared with other work: wall-clock rates depend on its load, CPU-time rates much less"
		i=1
		while [ "$i" -le "$R" ]; do
			echo "## run $i (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
			run "file       " "$K3SIM trace import $tmp/t.json -o $tmp/o.db --json"
			run "pipe       " "cat $tmp/t.json | $K3SIM trace import - -o $tmp/o.db --json"
			run "gzip file  " "$K3SIM trace import $tmp/t.json.gz -o $tmp/o.db --json"
			run "gzip pipe  " "gzip -dc $tmp/t.json.gz | $K3SIM trace import - -o $tmp/o.db --json"
			i=$((i + 1))
		done
		echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	} | tee "$out"
	exit 0
fi
B=${1:-build}
N=${2:-1000000}
R=${3:-3}
K3SIM=$B/cli/k3sim
tmp=$(mktemp -d "${TMPDIR:-/tmp}/k3trace-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=bench/results/trace-$(date +%Y-%m-%d).txt
mkdir -p bench/results
{
	echo "# k3sim trace benchmarks; $(date -u +%Y-%m-%dT%H:%M:%SZ); machine: 2-core dev box ($(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
	echo "# command: bench/trace-bench.sh $B $N $R  (buildtype: $(meson introspect "$B" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"][0])'); sqlite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1))"
	echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) (other work shares this machine)"
	i=1
	while [ "$i" -le "$R" ]; do
		echo "## run $i"
		"$B/bench/bench-trace" -n "$N" -d "$tmp" --keep | grep -v '^kept:'
		full=$(ls "$tmp"/bench-trace-full-*.db | head -n 1)
		# the CLI end to end, process start and printing included
		t0=$(date +%s.%N)
		"$K3SIM" trace summary "$full" --json >"$tmp/summary.json"
		t1=$(date +%s.%N)
		echo "k3sim trace summary --json (CLI, wall): $(echo "$t1 - $t0" | bc) s"
		t0=$(date +%s.%N)
		"$K3SIM" trace summary "$full" >"$tmp/summary.txt"
		t1=$(date +%s.%N)
		echo "k3sim trace summary (CLI, wall, table): $(echo "$t1 - $t0" | bc) s"
		t0=$(date +%s.%N)
		"$K3SIM" trace export "$full" --perfetto "$tmp/trace.json" -q
		t1=$(date +%s.%N)
		echo "k3sim trace export --perfetto (CLI, wall): $(echo "$t1 - $t0" | bc) s, $(($(stat -c %s "$tmp/trace.json") / 1000000)) MB"
		rm -f "$tmp"/bench-trace-* "$tmp/trace.json"
		i=$((i + 1))
	done
	echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
