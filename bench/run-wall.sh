#!/bin/sh
# Wall time of `k3sim run` on the embedded default scenario, process start included, and the
# in-process cost of one scenario evaluation. Writes a result file under bench/results/.
# usage: bench/run-wall.sh [BUILD_DIR]   (default: build)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
K3SIM=$B/cli/k3sim
out=bench/results/run-wall-$(date +%Y-%m-%d).txt
mkdir -p bench/results
{
	echo "# k3sim run wall time; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "# command: bench/run-wall.sh $B  (buildtype: $(meson introspect "$B" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"][0])'))"
	python3 - "$K3SIM" <<'PY'
import subprocess, sys, time, statistics
k3sim = sys.argv[1]
for args in (["run"], ["run", "--json"], ["run", "prefill-1m"], ["model", "kimi-k3"]):
    for _ in range(5):
        subprocess.run([k3sim] + args, stdout=subprocess.DEVNULL, check=True)
    t = []
    for _ in range(200):
        t0 = time.perf_counter()
        subprocess.run([k3sim] + args, stdout=subprocess.DEVNULL, check=True)
        t.append(time.perf_counter() - t0)
    t.sort()
    print(f"k3sim {' '.join(args):22s} median {statistics.median(t)*1e3:6.2f} ms  p90 {t[int(len(t)*0.9)]*1e3:6.2f} ms  (200 runs, process start included)")
PY
	"$B/bench/bench-sim" default 5000
	"$B/bench/bench-sim" prefill-1m 200
} | tee "$out"
echo "wrote $out"
