#!/bin/sh
# Trace benchmarks (issue 3): trace-database ingest rate (goal >= 1 M kernel records/s),
# `k3sim trace summary` of a 10^6-kernel database (goal < 2 s), Kineto JSON import rate.
# Runs each measurement REPEAT times and keeps every line; writes bench/results/trace-DATE.txt.
# usage: bench/trace-bench.sh [BUILD_DIR] [KERNELS] [REPEAT]   (default: build 1000000 3)
set -eu
cd "$(dirname "$0")/.."
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
