#!/bin/sh
# The shipped hw/presets/h200.yaml: `k3sim calibrate` on the three 2026-12-01 calibration runs
# (three H200s, burst and sustained regimes; bench/results/calib-runs-h200-2026-12-01/) and the
# KDA and 2 x H200 NCCL captures of 2026-11-29, each its own run; the report goes to
# docs/perf/calibration-h200-2026-12-01/. Decompresses the captures first (*.db are ignored).
# usage: bench/calib/fit-h200.sh [K3SIM]   (default build/cli/k3sim)
set -eu
cd "$(dirname "$0")/../.."
K3SIM=${1:-build/cli/k3sim}
R=bench/results/calib-runs-h200-2026-12-01
for f in $R/run1-burst $R/run2-burst $R/run3-burst $R/run1-sustained $R/run2-sustained $R/run3-sustained \
	bench/results/calib-h200-2026-11-29-kda-verify-d; do
	[ -f "$f.db" ] || xz -dkc "$f.db.xz" > "$f.db"
done
[ -f bench/results/calib-h200-2026-11-29-kda-capture-b.db ] ||
	xz -dkc bench/results/gpu-session-h200-2026-11-29-b/kda-full-h200.db.xz > bench/results/calib-h200-2026-11-29-kda-capture-b.db
N=bench/results/nccl-h200x2-2026-11-29
if [ ! -f $N/nccl-h200x2-merged.db ]; then
	t=$(mktemp -d)
	tar -C "$t" -xJf $N/nccl-dbs.tar.xz
	"$K3SIM" trace merge "$t"/nccl-h200x2.r0.*.db "$t"/nccl-h200x2.r1.*.db -o $N/nccl-h200x2-merged.db
	rm -rf "$t"
fi
"$K3SIM" calibrate --hw hw/presets/h200-datasheet.yaml -o hw/presets/h200.yaml --name h200 -f \
	--report docs/perf/calibration-h200-2026-12-01 \
	--run r1=$R/run1-burst.db --run r2=$R/run2-burst.db --run r3=$R/run3-burst.db \
	--run s1=$R/run1-sustained.db --run s2=$R/run2-sustained.db --run s3=$R/run3-sustained.db \
	--run kda-2026-11-29=bench/results/calib-h200-2026-11-29-kda-capture-b.db,bench/results/calib-h200-2026-11-29-kda-verify-d.db \
	--run nccl-2026-11-29=$N/nccl-h200x2-merged.db
