#!/usr/bin/env bash
# Issue 17, 2026-12-04p call 4, one nvidia-h200: how much of the FP8 k loop's time is its feed.
# "diag-rqp-fp8b-nofeed" / "-fp8b-nomma-nofeed" (XV_NOFEED: no token or weight copies, stale
# stages) beside diag-rqp-fp8b, 04n's diag-rqp-nofeed (BF16) and the default wide2rqp, in ONE
# process, alternating three times (kernels/calls/moe-ab-call.sh, BENCH_ONLY=1: the bench alone;
# the default's code is call 1's).
# From the repository root:  PACK=.gpu/p4 LIMIT=200 OUT=$OUT bash kernels/calls/k3-2026-12-04p4.sh
set -u
export PACK=${PACK:-.gpu/p4}
export OUT=${OUT:-$PWD/k3-out}
R="wide2rqp,diag-rqp-fp8b,diag-rqp-fp8b-nofeed,diag-rqp-fp8b-nomma-nofeed,diag-rqp-nofeed"
export KERNELS=${KERNELS:-$R,$R,$R}
export BENCH_ONLY=1 NCU_KERNEL=none NCU_REGEX=none NCU_TAG=none
export BENCH_CAP=${BENCH_CAP:-170}
exec bash "$(dirname "$0")/moe-ab-call.sh"
