#!/bin/sh
# The committed public measurements (bench/public/aic, written by tools/aic/convert.mjs): every file
# has the provenance columns, every row's op parses (k3sim trace validate reads it with the
# `k3sim op` parser) and none is dropped, every row names the source commit and license of the
# README, and k3sim calibrate takes the files as it takes captures.
# usage: public-aic.sh K3SIM SOURCE_ROOT
K3SIM=$1
DIR=$2/bench/public/aic
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

[ -s "$DIR/README.md" ] || fail "no $DIR/README.md"
# shellcheck disable=SC2016 # a literal backquote in the pattern
commit=$(sed -n 's/^- commit: `\([0-9a-f]\{40\}\)`.*/\1/p' "$DIR/README.md")
[ -n "$commit" ] || fail "README.md names no source commit"
grep -q "^- license: Apache-2.0" "$DIR/README.md" || fail "README.md names no license"
n=0
for f in "$DIR"/*/*.csv; do
	n=$((n + 1))
	grep -v '^#' "$f" | head -1 |
		grep -qx 'op,reps,median_s,p10_s,p90_s,device,framework,version,kernel_source,table,source_commit,license,mapping' ||
		fail "$f: not the header convert.mjs writes"
	rows=$(grep -v '^#' "$f" | tail -n +2 | wc -l)
	bad=$(grep -v '^#' "$f" | tail -n +2 | awk -F, -v c="$commit" '$(NF-2) != c || $(NF-1) != "Apache-2.0"' | wc -l)
	[ "$bad" -eq 0 ] || fail "$f: $bad rows without the README's commit and license"
	"$K3SIM" trace validate "$f" --hw h200 --json > "$T/v.json" || fail "$f: does not load"
	points=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['points'])" "$T/v.json")
	# rows that are the same op for the model (the same shape spelled apart) merge into one point
	distinct=$(grep -v '^#' "$f" | tail -n +2 | cut -d, -f1 | sort -u | wc -l)
	[ "$points" -ge 1 ] && [ "$points" -le "$distinct" ] || fail "$f: $distinct distinct ops but $points points"
	grep -q "($(basename "$(dirname "$f")")/$(basename "$f"))" "$DIR/README.md" || fail "$f: not listed in README.md"
done
[ "$n" -ge 5 ] || fail "only $n public CSVs"
"$K3SIM" calibrate "$DIR/h100_sxm/gemm-bf16.csv" "$DIR/h100_sxm/nccl.csv" --hw h100 -o "$T/h100.yaml" -q ||
	fail "calibrate on the public H100 tables"
grep -q "^calibrated: true" "$T/h100.yaml" || fail "calibrate: preset not marked calibrated"
echo "public-aic: $n files ok"
