#!/bin/sh
# Runs every fuzz target under libFuzzer (clang, ASan + UBSan) for SECONDS each, starting from a
# copy of its seed corpus, and writes a result file under bench/results/.
# usage: bench/fuzz-run.sh [SECONDS]   (default 60; needs clang and libclang-rt)
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
B=build-fuzz
[ -f $B/build.ninja ] || CC=clang meson setup $B -Dcuda=disabled -Dfuzzers=true \
	-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C $B fuzz/fuzz-config fuzz/fuzz-kineto fuzz/fuzz-sweep fuzz/fuzz-calib fuzz/fuzz-serve >/dev/null
out=bench/results/fuzz-$(date +%Y-%m-%d).txt
{
	echo "# libFuzzer runs; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; clang $(clang -dumpversion); ASan+UBSan"
	echo "# command: bench/fuzz-run.sh $secs"
	for t in config kineto sweep calib serve; do
		work=$(mktemp -d)
		cp fuzz/corpus/$t/* "$work"/
		line=$(./$B/fuzz/fuzz-$t "$work" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=4096 2>&1 |
			grep -E 'DONE|ERROR|SUMMARY' | tail -n 1)
		echo "fuzz-$t: ${line:-no summary line (crash?)}"
		rm -rf "$work"
	done
} | tee "$out"
echo "wrote $out"
