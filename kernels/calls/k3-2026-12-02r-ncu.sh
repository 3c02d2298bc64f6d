#!/usr/bin/env bash
# Round 19, the slice's routed GEMMs under ncu with the clocks locked (--clock-control base), so that
# power cannot move them: prefill T = 16K alone (plus one small decode point the slice needs), every
# wg_kernel launch (the tiled GEMMs, dense and grouped) with its duration, DRAM bytes read, L2 hit
# rate and SM clock, named by its NVTX range (`k3sim op=...`; the warm-up step's have no range).
# If the KDA layers' routed GEMMs still take ~20 % more than the MLA layer's with the clock locked,
# the cause is in the work (routing, L2, DRAM), not power. Run once by k3-2026-12-02r1.sh:
#   PACK=.gpu/r19s OUT=... LIMIT=<s> bash .gpu/r19s/k3-2026-12-02r-ncu.sh
# It did not work (2026-12-02, 09:36 UTC): ncu connected, profiled nothing it printed within 75 s
# (the CSV is printed at exit; the timeout killed the slice during its weight set-up or its first
# launches under ncu), 154 s of device time for nothing. Not used since.
set -u
B=$PACK/k3-build
l=${LIMIT:-60}
[ "$l" -gt 15 ] || { echo "ncu: no time ($l s)"; exit 0; }
s=$(date +%s)
timeout "$l" ncu --clock-control base --kernel-name regex:wg_kernel --launch-count 130 --nvtx --print-nvtx-rename kernel \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second \
  --csv "$B/kernels/k3-slice" --prefill 16384 --decode 1:8192 --reps 2 -o "$OUT/ncu-slice.csv" > "$OUT/ncu-slice.txt" 2> "$OUT/ncu-slice.err"
echo "ncu exit $? in $(( $(date +%s) - s )) s"
xz -9 -f "$OUT/ncu-slice.txt"
tail -5 "$OUT/ncu-slice.err"
