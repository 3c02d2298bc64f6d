#!/usr/bin/env bash
# Device call of 2026-12-03 (lead, one nvidia-h200): the delayed limiter checked where it was not
# fitted. (1) bench/power/clock-probe --pulse (capped GEMMs broken by light loads of 5-160 ms, GEMM
# bursts after idle, short duty cycles; the limiter was fitted on --step) into $OUT/pulse/;
# (2) round 27: two runs (a, b) of the KDA grid, the FULL k3-bench and the K3 slice under capture
# (kernels/calls/k3-runs.sh, the pack of round 26: the kernels are unchanged since) into
# $OUT/r27/. From the repository root, the probe built into .gpu/lim/clock-probe and the pack in
# .gpu/r26:
#   OUT=$OUT bash kernels/calls/limiter-2026-12-03.sh
set -u
OUT=${OUT:?OUT=<folder>}
t0=$(date +%s)
bash bench/power/clock-probe.sh .gpu/lim/clock-probe "$OUT/pulse" 3 --pulse
echo "== pulse exit $? at $(( $(date +%s) - t0 )) s"
sleep 2
PACK=.gpu/r26 OUT=$OUT/r27 RUNS="a b" bash kernels/calls/k3-runs.sh
echo "== round 27 done at $(( $(date +%s) - t0 )) s"
