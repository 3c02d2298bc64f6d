#!/bin/sh
# The memory-bound class of `k3sim trace profile` on issue 16's committed H200 profile captures
# (held out: no calibration uses them): measured vs predicted kernel time of the ops priced as
# memory-bound. Used to check the per-kernel floor of small non-GEMM kernels (docs/MODEL.md
# section 4). usage: bench/profile-memory-class.sh [K3SIM]   (default build/cli/k3sim)
set -eu
cd "$(dirname "$0")/.."
K3SIM=${1:-build/cli/k3sim}
R=bench/results/profile-h200-2026-12-01
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
xz -dkc $R/dsv3-nvtx.db.xz > "$t/dsv3-nvtx.db"
xz -dkc $R/dsv3-large-nvtx.db.xz > "$t/dsv3-large-nvtx.db"
xz -dkc $R/dsv3-kineto.json.xz > "$t/dsv3-kineto.json"
echo "# k3sim $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%M:%SZ); first 'memory' row of each capture's class table (all steps)"
echo "# capture  class  kernels  ops  measured_ms  predicted_ms  error_pct  +launch_ms"
for f in dsv3-nvtx.db dsv3-large-nvtx.db dsv3-kineto.json; do
	printf '%s ' "$f"
	"$K3SIM" trace profile "$t/$f" 2>/dev/null | grep -E '^ *memory ' | head -1 | sed 's/^ *//'
done
