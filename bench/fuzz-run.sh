#!/bin/sh
# Runs every fuzz target under libFuzzer (clang, ASan + UBSan) for RUNS executions each (default
# 10^6), starting from a copy of its seed corpus, and writes a result file under bench/results/
# with the command, the date, the machine and each target's final libFuzzer line.
# usage: bench/fuzz-run.sh [RUNS] [TARGET...]   (needs clang and libclang-rt; builds build-fuzz/)
# A crash leaves its reproducer (crash-*) in the current directory and a FAIL line.
set -eu
cd "$(dirname "$0")/.."
runs=${1:-1000000}
[ $# -gt 0 ] && shift
targets=${*:-config kineto sweep calib sqlite merge serve}
B=build-fuzz
[ -f $B/build.ninja ] || CC=clang meson setup $B -Dcuda=disabled -Dfuzzers=true \
	-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
for t in $targets; do
	ninja -C $B "fuzz/fuzz-$t" >/dev/null
done
out=${FUZZ_OUT:-bench/results/fuzz-$(date +%Y-%m-%d).txt}
{
	echo "# libFuzzer runs; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); clang $(clang -dumpversion); ASan+UBSan (halt_on_error)"
	echo "# command: bench/fuzz-run.sh $runs $targets   (git $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
	echo "# each: build-fuzz/fuzz/fuzz-T WORK -runs=$runs -max_len=65536 -rss_limit_mb=4096 (WORK: a copy of fuzz/corpus/T)"
	for t in $targets; do
		work=$(mktemp -d)
		cp fuzz/corpus/"$t"/* "$work"/
		start=$(date +%s)
		log=$(UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./$B/fuzz/fuzz-"$t" "$work" -runs="$runs" \
			-max_len=65536 -rss_limit_mb=4096 2>&1) && status=ok || status=FAIL
		line=$(printf '%s\n' "$log" | grep -E 'DONE|ERROR|SUMMARY' | tail -n 1)
		echo "fuzz-$t: $status in $(($(date +%s) - start)) s: ${line:-no summary line (crash?)}"
		[ "$status" = ok ] || printf '%s\n' "$log" | grep -E 'ERROR|SUMMARY|#[0-9]+ in ' | head -20 | sed 's/^/    /'
		rm -rf "$work"
	done
} | tee "$out"
echo "wrote $out"
