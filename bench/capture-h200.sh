#!/usr/bin/env bash
# Capture measurements on one H200 (issue 3): the GPU test suite, a PyTorch program under
# `k3sim trace capture` vs torch.profiler (per-kernel durations), capture overhead on a
# launch-bound program, 10^6 launches with zero drops, DRAM bytes of a copy kernel.
# Run from the repository root with a build made here by
#   meson setup build-gpu -Dprefer_static=true -Dbuildtype=release && ninja -C build-gpu
# Results go to $OUT (default ./capture-out). Takes ~3 minutes.
set -u
OUT=${OUT:-$PWD/capture-out}
mkdir -p "$OUT"
B=$PWD/build-gpu
APP=$B/tests/capture/capture_app
CHECK=$B/tests/capture/capture_check
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
export PYTHONUNBUFFERED=1

# libcupti.so.13: the toolkit's if present, else the one PyTorch's wheels carry.
if ldd "$K3SIM_CAPTURE_LIB" | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null; \
        python3 -c 'import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null |
        xargs -I{} find {} -name 'libcupti.so.13*') | head -1)")
  export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
  nvcc --version | tail -1
  python3 -c 'import torch;print("torch", torch.__version__, torch.version.cuda)'
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd "$K3SIM_CAPTURE_LIB" | grep -E 'cupti|sqlite|stdc'
  nproc; uname -r
} > "$OUT/capture-env.txt" 2>&1

# 1. GPU tests (the meson 'gpu' suite, run directly: the build tree's paths are this machine's).
gpu_test() {  # name args...
  local name=$1; shift
  echo "== capture-$name"
  local s; s=$(date +%s.%N)
  timeout 300 "$CHECK" "$name" "$APP" "$@" 2>&1 | sed "s|^|  |"
  local rc=${PIPESTATUS[0]}
  echo "== capture-$name: exit $rc, $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
  return "$rc"
}
{
  gpu_test basic
  gpu_test copy 1073741824 ||
    { echo "(retrying with a range pushed around each kernel)";
      K3CAPTURE_METRICS_PUSH=1 gpu_test copy 1073741824; }
  gpu_test launches 1000000
  gpu_test sigterm 10000
  gpu_test reset 10000
  gpu_test busy
  echo "== k3sim trace capture (the CLI itself) -- capture_app basic"
  "$B/cli/k3sim" trace capture -o /tmp/cli-basic.db --force -- "$APP" basic 2>&1 | sed "s|^|  |"
  echo "== k3sim trace capture: exit ${PIPESTATUS[0]}"
} > "$OUT/capture-gpu-tests.txt" 2>&1
grep -E '^== .*exit|FAIL|metric:|launches:|sigterm:|reset:|retrying' "$OUT/capture-gpu-tests.txt"

# 2. PyTorch: the same program under k3sim, then (separately) under torch.profiler.
K3SIM="$B/cli/k3sim trace capture"
$B/cli/k3sim trace capture --help >/dev/null 2>&1 || K3SIM="$CHECK run"   # no dispatcher yet
{
  echo "capture command: $K3SIM"
  s=$(date +%s.%N)
  if [ "$K3SIM" = "$CHECK run" ]; then
    $CHECK run /tmp/torch-k3.db python3 bench/capture-torch-workload.py 200
  else
    $B/cli/k3sim trace capture -o /tmp/torch-k3.db --force -- \
      python3 bench/capture-torch-workload.py 200
  fi
  echo "k3sim capture exit $? in $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
  s=$(date +%s.%N)
  python3 bench/capture-torch-profile.py /tmp/torch-kineto.json bench/capture-torch-workload.py 200
  echo "torch.profiler exit $? in $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
  python3 bench/capture-compare-torch.py /tmp/torch-k3.db /tmp/torch-kineto.json 20
} > "$OUT/capture-torch-compare.txt" 2>&1
grep -E 'RESULT|within 2|exit' "$OUT/capture-torch-compare.txt"

# 3. Overhead on a launch-bound loop (empty kernels) and on 5 and 20 us kernels, with and without
#    capture, interleaved, 3 repetitions. Loop time printed by the program; process wall too.
{
  echo "config kernel_us rep loop_wall_s per_launch_us process_wall_s"
  for rep in 1 2 3; do
    for us in 0 5 20; do
      case $us in 0) n=200000 ;; 5) n=60000 ;; *) n=20000 ;; esac
      for cfg in none capture capture-no-driver capture-no-api; do
        s=$(date +%s.%N)
        case $cfg in
          none) line=$("$APP" timed $n $us) ;;
          capture) line=$("$CHECK" run /tmp/ovh.db "$APP" timed $n $us 2>/dev/null) ;;
          capture-no-driver) line=$(K3CAPTURE_DRIVER_API=0 "$CHECK" run /tmp/ovh.db "$APP" timed $n $us 2>/dev/null) ;;
          capture-no-api) line=$(K3CAPTURE_API=0 "$CHECK" run /tmp/ovh.db "$APP" timed $n $us 2>/dev/null) ;;
        esac
        e=$(awk "BEGIN{print $(date +%s.%N) - $s}")
        wall=$(echo "$line" | sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p')
        per=$(echo "$line" | sed -n 's/.*per_launch_us=\([0-9.]*\).*/\1/p')
        echo "$cfg $us $rep $wall $per $e"
      done
    done
  done
} > "$OUT/capture-overhead.txt" 2>&1
python3 - "$OUT/capture-overhead.txt" <<'PY' | tee -a "$OUT/capture-overhead.txt"
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
rows = [r for r in rows if len(r) == 6 and r[0] != "config"]
print("\nmedian over reps: config, kernel_us, loop wall s, per-launch us, process wall s, "
      "loop overhead vs none, process overhead vs none")
for us in ("0", "5", "20"):
    base = [r for r in rows if r[0] == "none" and r[1] == us]
    if not base:
        continue
    bw = st.median(float(r[3]) for r in base)
    bp = st.median(float(r[5]) for r in base)
    for cfg in ("none", "capture", "capture-no-driver", "capture-no-api"):
        sel = [r for r in rows if r[0] == cfg and r[1] == us]
        if not sel:
            continue
        w = st.median(float(r[3]) for r in sel)
        p = st.median(float(r[5]) for r in sel)
        print(f"{cfg:18s} {us:>3s} {w:9.4f} {st.median(float(r[4]) for r in sel):8.3f} "
              f"{p:8.3f} {100 * (w / bw - 1):+7.2f}% {100 * (p / bp - 1):+7.2f}%")
PY
echo "results in $OUT"
