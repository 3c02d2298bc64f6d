#!/usr/bin/env bash
# One device call's KDA prefill A/B (issue 17; kernels/calls/k3-2026-12-05f.sh and later call it
# through wrappers that set what differs; 05c / 05e ran their own copies of these steps):
#  1. kda-bench --only prefill over the grid $GRID (its --prefill-t / -h / -state options) with the
#     sets $AB (--prefill-ab's 'LABEL:VAR=X,...;...'), cycled $ROUNDS times in ONE process, capped at
#     $BENCH_CAP s: the CSV in kda/ab.csv, its prefill rows in kda/log.txt;
#  2. test-kda-gpu with KDA_TEST_FILTER= each of the space-separated patterns in $TEST_FILTER (unset
#     or empty: skipped), each capped at $TEST_CAP s, into kda/tests.txt, exit statuses in kda/log.txt;
# the device record (kda/env.txt) and nvidia-smi samples (kda/smi.csv) beside them, all returned as
# the one file $OUT/kda.tar.xz (a call returns 8 files at most).
# Needs PACK (default .gpu/kda: kda-bench and test-kda-gpu staged as kernels/calls/device-env.sh
# expects). From the repository root, through a wrapper.
set -u
PACK=${PACK:-.gpu/kda}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
AB=${AB:?AB: the --prefill-ab sets}
GRID=${GRID:?GRID: kda-bench prefill grid options}
ROUNDS=${ROUNDS:-3}
BENCH_CAP=${BENCH_CAP:-300}
TEST_FILTER=${TEST_FILTER:-}
TEST_CAP=${TEST_CAP:-90}
mkdir -p "$OUT/kda"
. "$(dirname "$0")/device-env.sh"
device_env "$OUT/kda/env.txt" "$OUT/kda/smi.csv" || exit 2
{
  # shellcheck disable=SC2086 # GRID is a list of options
  timeout "$BENCH_CAP" "$B/kernels/kda-bench" --only prefill $GRID --prefill-ab "$AB" \
    --prefill-rounds "$ROUNDS" -o "$OUT/kda/ab.csv" 2>&1 | grep -E "^prefill"
  # TEST_FILTER: one or more patterns, space-separated, each its own run (appended to tests.txt).
  for f in $TEST_FILTER; do
    echo "== test-kda-gpu $f" >> "$OUT/kda/tests.txt"
    KDA_TEST_FILTER=$f timeout "$TEST_CAP" "$B/tests/kernels/test-kda-gpu" >> "$OUT/kda/tests.txt" 2>&1
    echo "== test-kda-gpu $f: exit $?"
  done
} > "$OUT/kda/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
tar cJf "$OUT/kda.tar.xz" -C "$OUT" kda && rm -rf "$OUT/kda"
