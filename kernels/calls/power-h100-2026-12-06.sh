#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, one nvidia-h100-x1): the H100's power-limit model measured the
# way the H200's was (bench/results/power-stream-h200-2026-12-03/, clock-probe-h200-2026-12-03/,
# power-limiter-2026-12-03/): idle NVML readings, the limiter's step response (clock-probe --step),
# the clock laws of a cuBLAS GEMM (clock-probe, GEMMs with sleeps between), the HBM byte's energy
# on a copy stream and the FLOP's on BF16 GEMMs (stream-draw.py), then the --pulse pattern the
# limiter fit does not see (held out). From the repository root, clock-probe built into .gpu/pw
# (nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o .gpu/pw/clock-probe
# bench/power/clock-probe.cu -lcublas):
#   OUT=$OUT bash kernels/calls/power-h100-2026-12-06.sh   ->  $OUT/power-h100.tar.xz
set -u
OUT=${OUT:?OUT=<folder>}
W=$(mktemp -d)
t0=$(date +%s)
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.default_limit,power.max_limit,enforced.power.limit,temperature.gpu --format=csv
  nvidia-smi -q -d POWER,CLOCK,PERFORMANCE
} > "$W/env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader,nounits -lms 20 > "$W/idle-smi.csv" 2>&1 &
smi=$!; sleep 4; kill $smi; wait $smi 2>/dev/null
echo "== idle done at $(( $(date +%s) - t0 )) s"
bash bench/power/clock-probe.sh .gpu/pw/clock-probe "$W/step" 3 --step
echo "== step exit $? at $(( $(date +%s) - t0 )) s"
sleep 2
bash bench/power/clock-probe.sh .gpu/pw/clock-probe "$W/coarse" 2.5
echo "== coarse exit $? at $(( $(date +%s) - t0 )) s"
sleep 2
python3 bench/power/stream-draw.py "$W/stream" 1.5 copy
echo "== stream exit $? at $(( $(date +%s) - t0 )) s"
sleep 2
python3 bench/power/stream-draw.py "$W/gemm" 1.5 gemm
echo "== gemm exit $? at $(( $(date +%s) - t0 )) s"
sleep 2
bash bench/power/clock-probe.sh .gpu/pw/clock-probe "$W/pulse" 3 --pulse
echo "== pulse exit $? at $(( $(date +%s) - t0 )) s"
tar -C "$W" -cJf "$OUT/power-h100.tar.xz" .
cp "$W/env.txt" "$OUT/env.txt"
