#!/usr/bin/env bash
# One device call for the four-layer K3 slice (kernels/slice/k3-slice, issue 17): the slice under
# `k3sim trace capture` (every op in an NVTX range in `k3sim op` syntax; decode also as CUDA graphs),
# the trace's summary, and beside each measured step the simulator's prediction for the same shape
# from scenarios/k3-slice.yaml (prefill: TTFT of a T-token prompt; decode: TPOT at batch B, context C).
# Build here first (meson setup build-gpu -Dprefer_static=true -Dbuildtype=release && ninja -C build-gpu),
# carry build-gpu, then on the GPU machine from the repository root:
#   bash kernels/slice/run-slice.sh [k3-slice arguments]     (default: --quick)
# Writes to $OUT (default ./slice-out): k3-slice.csv, k3-slice.txt, k3-slice.db.xz. Needs ~90 GB of HBM.
set -u
B=${BUILD:-$PWD/build-gpu}
OUT=${OUT:-$PWD/slice-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
if [ -f "$K3SIM_CAPTURE_LIB" ] && ldd "$K3SIM_CAPTURE_LIB" 2>/dev/null | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
  export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
for f in "$B/kernels/k3-slice" "$B/cli/k3sim"; do
  [ -x "$f" ] || { echo "run-slice: missing $f (build build-gpu first)"; exit 2; }
done
[ $# -gt 0 ] || set -- --quick
K3SIM=$B/cli/k3sim
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  s=$(date +%s)
  timeout 540 "$K3SIM" trace capture -o "$OUT/k3-slice.db" --force -- "$B/kernels/k3-slice" "$@" -o "$OUT/k3-slice.csv"
  echo "capture exit $? in $(( $(date +%s) - s )) s"
  "$K3SIM" trace summary "$OUT/k3-slice.db" --top 30
  echo
  echo "measured step vs k3sim run scenarios/k3-slice.yaml (first look; the validation proper is k3sim trace validate)"
  printf "%-8s %6s %7s %7s %-5s %14s %14s %8s\n" phase batch tokens ctx kind measured_us predicted_us ratio
  grep -E "^(prefill|decode),(eager|graph),step," "$OUT/k3-slice.csv" | while IFS=, read -r ph kind _ b t c _ _ us _; do
    if [ "$ph" = prefill ]; then
      pred=$("$K3SIM" run scenarios/k3-slice.yaml --batch 1 --prompt "$t" --output 1 --json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["ttft_s"] * 1e6)' 2>/dev/null)
    else
      pred=$("$K3SIM" run scenarios/k3-slice.yaml --batch "$b" --prompt "$c" --output 1 --json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["tpot_s"] * 1e6)' 2>/dev/null)
    fi
    awk -v ph="$ph" -v b="$b" -v t="$t" -v c="$c" -v k="$kind" -v m="$us" -v p="${pred:-0}" \
      'BEGIN { printf "%-8s %6d %7d %7d %-5s %14.1f %14.1f %8.3f\n", ph, b, t, c, k, m, p, (m > 0 ? p / m : 0) }'
  done
} > "$OUT/k3-slice.txt" 2>&1
command -v xz >/dev/null 2>&1 && [ -f "$OUT/k3-slice.db" ] && xz -T0 -f "$OUT/k3-slice.db"
tail -n 40 "$OUT/k3-slice.txt"
ls -la "$OUT"
