#!/usr/bin/env bash
# Round 16's device call (2026-12-02z, lead; one nvidia-h200): main with this session's kernels,
# two whole runs of kernels/calls/k3-round.sh in one call (each its own full k3-bench under capture and
# its own K3 slice under capture: held out by run both ways), the gemv-only bench between them (the
# MXFP4 decode rows in a process of their own, against the full bench's), then every GPU suite and
# the sanitizer list of the changed kernels in run b.
# From the repository root:  PACK=.gpu/r16 bash .gpu/r16/k3-2026-12-02z.sh
# $OUT gets a.tar and b.tar (each run's six k3-round.sh files), gemv.txt, log.txt.
set -u
PACK=${PACK:-.gpu/r16}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
{
  : > "$PACK/san-none.txt"  # run a: bench and slice only (PHASE=san with an empty list)
  PACK=$PACK OUT=$OUT/a LIMIT=${LIMIT_A:-100} PHASE=san SAN=$PACK/san-none.txt bash "$PACK/k3-round.sh"
  echo "== run a done at $(( $(date +%s) - t0 )) s"
  B=$PACK/k3-build
  export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  timeout 40 "$B/kernels/k3-bench" --only gemv -o "$OUT/gemv.csv" > "$OUT/gemv.txt" 2>&1
  echo "== gemv-only exit $? at $(( $(date +%s) - t0 )) s"
  PACK=$PACK OUT=$OUT/b LIMIT=${LIMIT_B:-230} PHASE=all SAN=$PACK/san.txt bash "$PACK/k3-round.sh"
  echo "== run b done at $(( $(date +%s) - t0 )) s"
} > "$OUT/log.txt" 2>&1
xz -9 "$OUT/gemv.csv"
(cd "$OUT" && tar cf a.tar a && tar cf b.tar b && rm -rf a b)
grep -E "^== |PASSED|FAILED|SUMMARY|capture exit|clocks" "$OUT/log.txt" | head -60
echo "call: $(( $(date +%s) - t0 )) s"
