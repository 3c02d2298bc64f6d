#!/bin/sh
# Wall time of the default comparison (`k3sim compare`, 3 designs x 9 contexts x 3 batch sizes,
# plus each design's largest batch per context and the crossover bisections), process start and
# writing the report, JSON and SQLite included; without charts (goal: < 1 s) and with gnuplot.
# Writes bench/results/compare-default-DATE.txt.  usage: bench/compare-default.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
K3SIM=$B/cli/k3sim
out=bench/results/compare-default-$(date +%Y-%m-%d).txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p bench/results
{
	echo "# k3sim compare (default scenario); $(date -u +%Y-%m-%dT%H:%M:%SZ); $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "# load average before: $(cut -d" " -f1-3 /proc/loadavg) (other jobs share the cores)"
	echo "# build: $B ($(meson introspect "$B" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"][0])')); $(gnuplot --version 2>/dev/null || echo 'no gnuplot')"
	python3 - "$K3SIM" "$tmp" <<'PY'
import json, statistics, subprocess, sys, time
k3sim, tmp = sys.argv[1], sys.argv[2]
for label, extra, runs in (("without charts", ["--no-charts"], 20), ("with charts (gnuplot)", [], 5)):
    cmd = [k3sim, "compare", "-o", tmp + "/r"] + extra + ["--json"]
    t, ev = [], []
    for _ in range(runs + 2):
        t0 = time.perf_counter()
        res = subprocess.run(cmd, stdout=subprocess.PIPE, check=True)
        t.append(time.perf_counter() - t0)
        ev.append(json.loads(res.stdout)["eval_s"])
    t, ev = t[2:], ev[2:]
    print(f"command: k3sim compare -o DIR {' '.join(extra)}")
    print(f"  {label}: median {statistics.median(t)*1e3:.1f} ms wall, max {max(t)*1e3:.1f} ms "
          f"({runs} runs, process start included); evaluation alone median {statistics.median(ev)*1e3:.1f} ms")
    print(f"  points: {json.loads(res.stdout)['points']} grid + 9 x 3 at the largest batch")
PY
} | tee "$out"
echo "wrote $out"
