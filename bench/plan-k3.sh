#!/bin/sh
# The plans of docs/perf/plan-2026-12-01.md: Kimi K3 on 8..128 H200 and on a GB200 NVL72 domain
# (8..72 GPUs), at 8K/1K (TTFT <= 2 s, TPOT <= 50 ms) and 128K/4K (TTFT <= 15 s, TPOT <= 60 ms).
# Each writes a report directory (plan.md, Pareto charts, plan-G.yaml per budget), the SQLite of
# every candidate is left out of the repository (regenerate: add -o).
# usage: bench/plan-k3.sh [K3SIM] [OUT_DIR]
set -eu
K3SIM=${1:-build/cli/k3sim}
OUT=${2:-docs/perf/plan-2026-12-01}
mkdir -p "$OUT"
run() {
	dir=$1; shift
	echo "== $dir: k3sim plan $*"
	/usr/bin/time -f "   %e s wall, %U s CPU" "$K3SIM" plan "$@" --report "$OUT/$dir" --force >"$OUT/$dir.txt"
	sed -n '1,2p' "$OUT/$dir.txt"
}
run h200-8k-1k --hw h200 --gpus 8..128 --isl 8192 --osl 1024 --ttft 2s --tpot 50ms
run h200-128k-4k --hw h200 --gpus 8..128 --isl 131072 --osl 4096 --ttft 15s --tpot 60ms
run gb200-8k-1k --hw gb200 --gpus 8..72 --isl 8192 --osl 1024 --ttft 2s --tpot 50ms
run gb200-128k-4k --hw gb200 --gpus 8..72 --isl 131072 --osl 4096 --ttft 15s --tpot 60ms
