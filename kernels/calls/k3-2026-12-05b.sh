#!/usr/bin/env bash
# Issue 17, KDA prefill (lead, 2026-12-05; not run: no device could be started). Superseded by
# kernels/calls/k3-2026-12-05c.sh, whose A/B holds every row of this one (def, ser, ser4, pair,
# pair3 at 4 warps and rule width, pairnx, pair3 overlapped) plus pairr / pairr3; kept as a name the session notes use.
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05b.sh
exec bash "$(dirname "$0")/k3-2026-12-05c.sh" "$@"
