#!/bin/sh
# The trace corpus (issue 12): traces shaped like public PyTorch/vLLM/SGLang/nsys ones (gen.py),
# imported, merged and summarized by k3sim, against numbers expect.py computes from the files
# alone; expected.json pins those numbers. usage: run.sh PATH/TO/k3sim
set -u
K3SIM=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/k3corpus-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
python3 "$here/gen.py" "$dir/t" || exit 1
python3 "$here/expect.py" "$dir/t" >"$dir/fresh.json" || exit 1
python3 "$here/check.py" pinned "$dir/fresh.json" "$here/expected.json" || fails=$((fails + 1))

one() { # NAME FILE
	if ! "$K3SIM" trace import "$2" -o "$dir/$1.db" --json >"$dir/$1.imp.json" 2>"$dir/$1.err" ||
		! "$K3SIM" trace summary "$dir/$1.db" --json >"$dir/$1.sum.json" 2>>"$dir/$1.err"; then
		echo "FAIL $1: k3sim failed"
		sed 's/^/    /' "$dir/$1.err"
		fails=$((fails + 1))
		return
	fi
	python3 "$here/check.py" case "$1" "$here/expected.json" "$dir/$1.imp.json" "$dir/$1.sum.json" ||
		fails=$((fails + 1))
}

merged() { # NAME A B
	if ! "$K3SIM" trace import -q "$dir/t/$2.json" -o "$dir/$2.m.db" ||
		! "$K3SIM" trace import -q "$dir/t/$3.json" -o "$dir/$3.m.db" ||
		! "$K3SIM" trace merge "$dir/$2.m.db" "$dir/$3.m.db" -o "$dir/$1.db" --json >"$dir/$1.imp.json" 2>"$dir/$1.err" ||
		! "$K3SIM" trace summary "$dir/$1.db" --json >"$dir/$1.sum.json"; then
		echo "FAIL $1: k3sim failed"
		sed 's/^/    /' "$dir/$1.err"
		fails=$((fails + 1))
		return
	fi
	python3 "$here/check.py" case "merge:$2+$3" "$here/expected.json" "$dir/$1.imp.json" "$dir/$1.sum.json" ||
		fails=$((fails + 1))
}

one pytorch-rank0 "$dir/t/pytorch-rank0.json"
one hta-style "$dir/t/hta-style.json.gz"
one vllm-decode "$dir/t/vllm-decode.json"
one sglang-ep-rank0 "$dir/t/sglang-ep-rank0.json"
one nsys-export "$dir/t/nsys-export.sqlite"
merged pytorch-merged pytorch-rank0 pytorch-rank1
merged sglang-merged sglang-ep-rank0 sglang-ep-rank1
# the same trace through a pipe, gzip'd: the same numbers
gzip -c "$dir/t/pytorch-rank0.json" >"$dir/p0.json.gz"
if cat "$dir/p0.json.gz" | "$K3SIM" trace import - -o "$dir/pipe.db" --json >"$dir/pipe.imp.json" &&
	"$K3SIM" trace summary "$dir/pipe.db" --json >"$dir/pipe.sum.json"; then
	python3 "$here/check.py" case pytorch-rank0 "$here/expected.json" "$dir/pipe.imp.json" "$dir/pipe.sum.json" ||
		fails=$((fails + 1))
else
	echo "FAIL pytorch-rank0 through a gzip'd pipe"
	fails=$((fails + 1))
fi
if [ "$fails" -ne 0 ]; then
	echo "$fails failed"
	exit 1
fi
echo "all passed"
