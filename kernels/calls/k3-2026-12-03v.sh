#!/usr/bin/env bash
# Round 24 (2026-12-03v, lead; one nvidia-h200): the K3 slice with wide2rqt the grouped MXFP4
# default (main 938e0d4 and later docs), two runs a and b in one call, each the KDA prefill grid, then
# kernels/calls/k3-round.sh's FULL k3-bench and the slice under capture (no tests: 03u ran them), so
# that each run's slice is validated against the other run's bench (held out by run) and against
# round 23's benches (another call). (Since the round the body is kernels/calls/k3-runs.sh, the same
# steps as run; the pack held them inline.)
#   PACK=.gpu/r24 bash .gpu/r24/k3-2026-12-03v.sh     -> $OUT/a.tar, b.tar (a/ ka/, b/ kb/), $OUT/log.txt
export PACK=${PACK:-.gpu/r24}
export RUNS="a b"
exec bash "$(dirname "$0")/k3-runs.sh"
