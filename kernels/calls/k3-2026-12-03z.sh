#!/usr/bin/env bash
# Round 25 (2026-12-03z, lead; one nvidia-h200): the K3 slice as round 24 ran it (kernels unchanged
# since 938e0d4), two runs a and b in one call, each the KDA prefill grid, the FULL k3-bench and the
# slice under capture (kernels/calls/k3-runs.sh): fresh captures from another lease, to hold out the
# window limiter and the clock rule of 2026-12-03y, which were developed on rounds 22-24's captures.
#   PACK=.gpu/r25 bash .gpu/r25/k3-2026-12-03z.sh     -> $OUT/a.tar, b.tar, $OUT/log.txt
export PACK=${PACK:-.gpu/r25}
export RUNS="a b"
exec bash "$(dirname "$0")/k3-runs.sh"
