#!/bin/sh
# The power regime on the K3 slices (CPU only; bench/results/k3-kernels-h200-2026-12-02w/README.md):
# validate-slice.py at --clock boost and at --clock power, the same build, held out by run both ways,
# rounds 17-19 and round 19's gap slice; then the summary. From the repository root, after
# `ninja -C build cli/k3sim`.
set -e
W=bench/results/k3-kernels-h200-2026-12-02w
R=bench/results/k3-kernels-h200-2026-12-02r
N=bench/results/k3-kernels-h200-2026-12-02n
Y=bench/results/k3-kernels-h200-2026-12-02y
L=bench/results/k3-kernels-h200-2026-12-02l/call2/grid2.csv.xz
one() { # name, then validate-slice's arguments
	name=$1
	shift
	for c in boost power; do
		python3 kernels/slice/validate-slice.py --clock $c --k3sim build/cli/k3sim "$@" -o $W/$c-$name.md
	done
}
one r19-slicea-benchb --results $R/a --bench-results $R/b --kda-bench $R/kb/kda-grid.csv
one r19-sliceb-bencha --results $R/b --bench-results $R/a --kda-bench $R/ka/kda-grid.csv
one r19-gap-bencha --results $R/gap --bench-results $R/a --kda-bench $R/ka/kda-grid.csv
one r19-gap-benchb --results $R/gap --bench-results $R/b --kda-bench $R/kb/kda-grid.csv
one r18-slicea-benchb --results $N/calla --bench-results $N/callb --kda-bench $L
one r18-sliceb-bencha --results $N/callb --bench-results $N/calla --kda-bench $L
one r18-slice3-bencha --results $N/call3 --bench-results $N/calla
one r17-slicea-benchb --results $Y/calla --bench-results $Y/callb
one r17-sliceb-bencha --results $Y/callb --bench-results $Y/calla
# the routed GEMMs after a pause: run b's slice and the gap slice, each op at its power clock
K=$(mktemp -d)
python3 kernels/slice/validate-slice.py --clock power --k3sim build/cli/k3sim --results $R/gap --bench-results $R/a \
	--kda-bench $R/ka/kda-grid.csv --keep $K -o $K/report.md
xz -dkc $R/b/k3-slice.db.xz > $K/slice-b.db
build/cli/k3sim trace validate $K/slice-b.db --hw $K/k3-kernels-h200.yaml --clock power --json > $W/gap-slice.json
build/cli/k3sim trace validate $K/k3-slice.db --hw $K/k3-kernels-h200.yaml --clock power --json > $W/gap-gap.json
rm -rf $K
python3 $W/summary.py $W > $W/summary.md
