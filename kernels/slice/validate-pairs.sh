#!/bin/sh
# A round's held-out validation (issue 17): each pairing <slice><bench> of PAIRS runs
# kernels/slice/validate-slice.py with the slice of one run and the bench (and KDA grid) of another,
# under each clock of CLOCKS, into OUTDIR/<clock>-<pairing>.md (then kernels/slice/heldout_summary.py
# OUTDIR "Round N"). From the repository root:
#   sh kernels/slice/validate-pairs.sh K3SIM OUTDIR "ab ba ..." a=RESULTS_DIR:KDA_GRID_CSV b=... ...
# K3SIM: a CPU build's cli/k3sim; CLOCKS (default "power boost measured"); VALIDATE_ARGS: more
# arguments for validate-slice.py (e.g. "--power-window-ms 0").
set -eu
[ $# -ge 4 ] || { echo "usage: validate-pairs.sh K3SIM OUTDIR PAIRS RUN=RESULTS:KDA_CSV..." >&2; exit 2; }
K3=$1 OUTDIR=$2 PAIRS=$3
shift 3
[ -d "$OUTDIR" ] || { echo "validate-pairs.sh: $OUTDIR: not a folder" >&2; exit 2; }
RUNSPECS="$*"
spec_of() { # a run's letter -> its RESULTS:KDA_CSV
	for s in $RUNSPECS; do
		case $s in "$1="*) echo "${s#*=}"; return 0 ;; esac
	done
	echo "validate-pairs.sh: no run named $1 (give $1=RESULTS:KDA_CSV)" >&2
	exit 2
}
for clock in ${CLOCKS:-power boost measured}; do
	for p in $PAIRS; do
		s=$(spec_of "$(echo "$p" | cut -c1)")
		b=$(spec_of "$(echo "$p" | cut -c2)")
		python3 kernels/slice/validate-slice.py --clock "$clock" --results "${s%%:*}" --bench-results "${b%%:*}" \
			--kda-bench "${b#*:}" --k3sim "$K3" ${VALIDATE_ARGS:-} -o "$OUTDIR/$clock-$p.md"
	done
done
