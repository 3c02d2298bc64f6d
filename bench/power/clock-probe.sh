#!/usr/bin/env bash
# The SM clock read inside the GPU against NVML's (bench/power/clock-probe.cu says why), on the
# device: nvidia-smi samples every 20 ms beside the probe program. From the repository root:
#   bash bench/power/clock-probe.sh BIN OUT [SECS [--step]]   ->  OUT/batches.csv, OUT/smi.csv, OUT/env.txt
# BIN: clock-probe built on the CPU machine (nvcc -O2 -std=c++17 -arch=sm_90a -o BIN
# bench/power/clock-probe.cu -lcublas). Then: python3 bench/power/clock-probe-fit.py OUT > OUT/fit.md
set -u
BIN=${1:?usage: clock-probe.sh BIN OUT [SECS]}
OUT=${2:?usage: clock-probe.sh BIN OUT [SECS]}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
} > "$OUT/env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active,clocks.mem \
  --format=csv,noheader,nounits -lms 20 > "$OUT/smi.csv" 2>&1 &
smi=$!
sleep 0.5
"$BIN" "$OUT" "${3:-3}" ${4:-}
rc=$?
sleep 0.3
kill $smi 2>/dev/null
wait $smi 2>/dev/null
echo "clock-probe exit $rc" >> "$OUT/env.txt"
exit $rc
