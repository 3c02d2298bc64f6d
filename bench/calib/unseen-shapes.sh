#!/bin/sh
# Leave-one-shape-out: for each GEMM shape (n, k) of a calibration trace, calibrate without any
# of its points and validate on all of them (every m and dtype of that shape is unseen: the
# class tables answer, as for a shape the grid never measured). Prints one line per shape and
# the errors over all unseen points.
#   bench/calib/unseen-shapes.sh K3SIM DB [MORE INPUTS...]
set -eu
K3SIM=$1
shift
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$K3SIM" trace validate "$@" --json > "$T/all.json"
shapes=$(grep -o '"op": "gemm m=[0-9]* n=[0-9]* k=[0-9]*' "$T/all.json" | sed 's/.* n=/n=/' | sort -u)
: > "$T/errors"
# median and p90 (linear interpolation) of the absolute values in file $2
stats() {
	sed 's/^-//' "$2" | sort -g | awk -v s="$1" '{a[NR] = $1}
		function q(p,  x, i) { x = p * (NR - 1) + 1; i = int(x); return a[i] + (x - i) * (a[i + 1 < NR ? i + 1 : NR] - a[i]) }
		END { printf "%-16s %5d points  median %6.2f %%  p90 %6.2f %%\n", s, NR, q(0.5), q(0.9) }'
}
echo "$shapes" | sed 's/ k=/_k=/' | sort -u | while read -r nk; do
	n=${nk%_k=*}
	k=${nk#*_k=}
	glob="gemm m=* $n k=$k *"
	"$K3SIM" calibrate "$@" --exclude "$glob" -o "$T/cal.yaml" -f -q
	"$K3SIM" trace validate "$@" --hw "$T/cal.yaml" --only "$glob" --json > "$T/v.json"
	sed -n '/"per_point"/,$p' "$T/v.json" | grep -o '"error_pct": [-0-9.]*' | sed 's/.*: //' > "$T/e"
	cat "$T/e" >> "$T/errors"
	stats "$n k=$k" "$T/e"
done
stats "all unseen" "$T/errors"
