#!/bin/sh
# Speed of k3sim serve (issue 18): one hour of traffic at 100 requests/s (~360,000 requests) on
# Kimi K3 on 16 x H200 (scenarios/serve/hour-100rps.yaml), on two cores (taskset), three runs;
# wall, user + system time and peak memory of the whole command (scenario, cost tables, the
# event loop, the summary), and what was simulated. Goal: under 30 s. Writes a result file under
# bench/results/.
# usage: bench/serve-hour.sh [BUILD_DIR]   (default: build)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
K3SIM=$B/cli/k3sim
out=bench/results/serve-hour-$(date +%Y-%m-%d).txt
mkdir -p bench/results
pin=""
command -v taskset >/dev/null && pin="taskset -c 0,1"
{
	echo "# k3sim serve, one hour at 100 req/s on K3 16 x H200; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(uname -m), $(nproc) cores (run on 2: ${pin:-not pinned}), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "# command: bench/serve-hour.sh $B  (buildtype: $(meson introspect "$B" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"][0])'))"
	for run in 1 2 3; do
		/usr/bin/time -f "%e %U %S %M" -o /tmp/k3serve-time.$$ $pin "$K3SIM" serve scenarios/serve/hour-100rps.yaml --json -j 2 >/tmp/k3serve-out.$$
		python3 - /tmp/k3serve-out.$$ /tmp/k3serve-time.$$ "$run" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
wall, user, sys_, rss = open(sys.argv[2]).read().split()
w = d["wall"]
print(f"run {sys.argv[3]}: wall {float(wall):.2f} s (user {float(user):.2f} s, system {float(sys_):.2f} s), peak RSS {int(rss)/1024:.0f} MiB; "
      f"cost tables {w['cost_tables_s']:.2f} s ({w['cost_points']} timeline steps), event loop {w['simulation_s']:.2f} s")
print(f"       {d['requests']} requests, {d['completed']} completed, {d['steps']} steps, simulated makespan {d['makespan_s']:.0f} s; "
      f"throughput {d['throughput_requests_per_s']:.2f} req/s ({d['throughput_tokens_per_s']:.0f} output tokens/s), "
      f"TTFT p50 {d['ttft_s']['p50']:.1f} s, TPOT p50 {d['tpot_s']['p50']*1e3:.1f} ms, prefix hit {d['prefix_hit_rate']*100:.1f} %")
PY
	done
	rm -f /tmp/k3serve-out.$$ /tmp/k3serve-time.$$
} | tee "$out"
echo "wrote $out"
