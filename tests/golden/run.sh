#!/bin/sh
# Golden outputs (issue 15): refactors must change no output. Runs the user-visible tables and
# JSON of run/model/op, compare on a committed spec, trace summary (text and --json) on the
# generated trace corpus and a committed small trace, sweep on a small spec and check's summary,
# and compares each byte for byte with the files under tests/golden/expected/.
#   run.sh K3SIM GEN_TRACE            compare (the `golden` test)
#   run.sh K3SIM GEN_TRACE --update   rewrite the expected files (only for a deliberate change;
#                                     say why in the commit)
set -u
K3SIM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
GEN_TRACE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
update=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
exp=$here/expected
tmp=$(mktemp -d "${TMPDIR:-/tmp}/k3golden-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
mkdir -p "$out"
fails=0

# cap NAME CMD...: stdout to $out/NAME, stderr and exit status to $out/NAME.err
cap() {
	name=$1
	shift
	(cd "$tmp" && "$@") >"$out/$name" 2>"$tmp/err"
	echo "exit $?" >"$out/$name.exit"
	if [ -s "$tmp/err" ]; then cp "$tmp/err" "$out/$name.err"; fi
}

# run / model / op: tables and JSON
cap run.txt "$K3SIM" run
cap run.json "$K3SIM" run --json
for s in h200x8 k3-slice prefill-1m gb200-nvl72; do
	cap "run-$s.txt" "$K3SIM" run "$root/scenarios/$s.yaml"
	cap "run-$s.json" "$K3SIM" run "$root/scenarios/$s.yaml" --json
done
cap run-dsv3-decode.txt "$K3SIM" run "$root/scenarios/published/deepseek-v3-decode-128xh800.yaml"
for m in kimi-k3 k3-dsa deepseek-v3; do
	cap "model-$m.txt" "$K3SIM" model "$m"
	cap "model-$m.json" "$K3SIM" model "$m" --json
done
cap model-hf.txt "$K3SIM" model "$root/tests/data/kimi-k3-config.json"
cap op-kda.txt "$K3SIM" op kda_decode b=64 h=96 k=128 v=128 state=fp32 --hw h200
cap op-kda.json "$K3SIM" op kda_decode b=64 h=96 k=128 v=128 state=fp32 --hw h200 --json
cap op-gemm.txt "$K3SIM" op gemm m=4096 n=7168 k=2048 dtype=fp8
cap op-gemm.json "$K3SIM" op gemm m=4096 n=7168 k=2048 dtype=fp8 --json
cap op-mla.json "$K3SIM" op mla_decode b=32 heads=64 ctx=131072 --graph --clock sustained --json
cap op-ep.json "$K3SIM" op ep_dispatch tokens=4096 ranks=16 --hw h200 --json
cap op-ar.txt "$K3SIM" op allreduce bytes=16777216 ranks=8

# compare on a committed spec (no charts: gnuplot's output is not ours to pin)
cap compare.json "$K3SIM" compare "$here/compare.yaml" -o "$tmp/cmp" --no-charts -j 2 --json
for f in report.md report.html results.json; do
	cp "$tmp/cmp/$f" "$out/compare-$f" 2>/dev/null || echo missing >"$out/compare-$f"
done
python3 - "$tmp/cmp/results.db" >"$out/compare-results.sql" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name"):
    print(sql + ";")
    if sql.startswith("CREATE TABLE"):
        for row in db.execute('SELECT * FROM "%s"' % name.replace('"', '""')):
            if name == "meta" and row[0] == "created_utc":
                row = (row[0], "T")  # when it ran is not an output
            print(repr(row))
PY

# sweep on a small spec: CSV and the JSON summary
cap sweep.json "$K3SIM" sweep "$here/sweep.yaml" -o "$tmp/sweep.db" --csv "$tmp/sweep.csv" -j 2 --json
cp "$tmp/sweep.csv" "$out/sweep.csv" 2>/dev/null || echo missing >"$out/sweep.csv"

# check: the summary (few draws, one seed)
cap check.txt "$K3SIM" check --hw h200 --hw b200 --ops 2000 --scenarios 50 --seed 7 --quiet
cap check.json "$K3SIM" check --hw h200 --ops 2000 --scenarios 50 --seed 7 --json

# trace summary on the trace corpus (generated, deterministic) and on the calibration fixture
if python3 "$root/tests/trace/corpus/gen.py" "$tmp/t" >/dev/null; then
	for t in pytorch-rank0.json hta-style.json.gz vllm-decode.json sglang-ep-rank0.json nsys-export.sqlite; do
		b=${t%%.*}
		if [ "$t" = nsys-export.sqlite ]; then db=$tmp/t/$t; else
			db=$tmp/$b.db
			"$K3SIM" trace import -q "$tmp/t/$t" -o "$db" >/dev/null 2>&1
		fi
		cap "summary-$b.txt" "$K3SIM" trace summary "$db"
		cap "summary-$b.json" "$K3SIM" trace summary "$db" --json
	done
	cap summary-pytorch-base.txt "$K3SIM" trace summary "$tmp/pytorch-rank0.db" --base --top 5 --gaps 3
else
	echo "gen.py failed"
	fails=$((fails + 1))
fi
if "$GEN_TRACE" "$tmp/calib.db" 40 >/dev/null 2>&1; then
	cap summary-calib.txt "$K3SIM" trace summary "$tmp/calib.db"
	cap summary-calib.json "$K3SIM" trace summary "$tmp/calib.db" --json
	cap export-calib.json "$K3SIM" trace export "$tmp/calib.db" --perfetto -
else
	echo "gen-trace failed"
	fails=$((fails + 1))
fi

# the temporary directory's name must not leak into what is compared
for f in "$out"/*; do
	sed "s|$tmp|TMP|g; s|$root|ROOT|g" "$f" >"$f.s" && mv "$f.s" "$f"
done
# nor wall-clock times (how long a run took is not an output of the model)
for f in "$out"/compare.json "$out"/compare-results.* "$out"/sweep.json "$out"/check.*; do
	sed -E -e 's/"(eval_s|total_s|elapsed_s|wall_s|seconds)": [0-9.e+-]+/"\1": T/g; s/ in [0-9.]+ s:/ in T s:/' -e "s/'created_utc','[0-9TZ:-]+'/'created_utc','T'/" -e 's/"created_utc": *"[0-9TZ:-]+"/"created_utc": "T"/' "$f" >"$f.s" && mv "$f.s" "$f"
done

if [ "$update" = --update ]; then
	rm -rf "$exp"
	mkdir -p "$exp"
	cp "$out"/* "$exp"/
	echo "updated $(ls "$exp" | wc -l) golden files"
	exit 0
fi
n=0
seen=
for f in "$exp"/* "$out"/*; do
	name=$(basename "$f")
	case " $seen " in *" $name "*) continue ;; esac
	seen="$seen $name"
	n=$((n + 1))
	if ! cmp -s "$exp/$name" "$out/$name"; then
		echo "not ok $n - $name differs from tests/golden/expected/$name"
		diff -u "$exp/$name" "$out/$name" 2>&1 | head -20 | cut -c1-240 | sed 's/^/# /'
		fails=$((fails + 1))
	else
		echo "ok $n - $name"
	fi
done
echo "$n golden files, $fails differ"
[ $fails -eq 0 ]
