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
# a source text and a pinned date (what tools/aic/fit-presets.sh relies on to regenerate the
# shipped presets byte for byte); the doubling NCCL grid holds half of its sizes out
SOURCE_DATE_EPOCH=1796083200 "$K3SIM" calibrate "$DIR/h100_sxm/nccl.csv" --hw h100-datasheet -o "$T/s.yaml" \
	--source "public tables @ $commit" --no-xval --json > "$T/s.json" || fail "calibrate --source"
grep -q "^source: \"public tables @ $commit; k3sim calibrate 2026-12-01; base preset h100-datasheet\"" "$T/s.yaml" ||
	fail "calibrate: --source and SOURCE_DATE_EPOCH not in the preset"
grep -q "^  date: 2026-12-01" "$T/s.yaml" || fail "calibrate: SOURCE_DATE_EPOCH not the calibration date"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
c = {x['class']: x for x in d['classes']}
for k in ('allreduce', 'allgather', 'reducescatter', 'alltoall'):
    assert c[k]['train'] == 30 and c[k]['held_out'] == 33, (k, c[k]['train'], c[k]['held_out'])
" "$T/s.json" || fail "calibrate: the NCCL doubling grid is not split by the protocol"
if SOURCE_DATE_EPOCH=yesterday "$K3SIM" calibrate "$DIR/h100_sxm/nccl.csv" --hw h100-datasheet -o "$T/b.yaml" \
	--no-xval -q 2> "$T/err"; then fail "calibrate: a bad SOURCE_DATE_EPOCH was taken"; fi
grep -q "SOURCE_DATE_EPOCH 'yesterday'" "$T/err" || fail "calibrate: no error for a bad SOURCE_DATE_EPOCH"
# the shipped calibrated presets name the public data they were fitted on
for g in h100 b200 b300 gb200; do
	grep -q "^source: \"NVIDIA AIConfigurator.*@ $commit, Apache-2.0" "$2/hw/presets/$g.yaml" ||
		fail "hw/presets/$g.yaml does not name the public data (commit, license)"
	grep -q "^calibrated: true" "$2/hw/presets/$g.yaml" || fail "hw/presets/$g.yaml is not calibrated"
done
echo "public-aic: $n files ok"
