#!/usr/bin/env bash
# Issue 16 device call: two small random-initialized models (bench/profile/models.py), each
# profiled both ways:
#   1. `k3sim trace capture` around the program run with emit_nvtx(record_shapes=True);
#   2. torch.profiler (CPU + CUDA, record_shapes=True), Kineto JSON.
# Run from a folder holding k3sim, libk3capture.so, libcmocka.so.0 (unused), models.py,
# profile-run.py and kimi-k3-config.json. Results (xz-compressed) and clocks go to $OUT.
# Environment: MODELS (dsv3 hybrid), B/T/STEPS (profile-run.py's), TAG (a suffix of the names).
set -u
OUT=${OUT:-$PWD/profile-out}
D=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
export K3SIM_CAPTURE_LIB=$D/libk3capture.so PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if ldd "$K3SIM_CAPTURE_LIB" | grep -q 'libcupti.so.13 => not found'; then
  d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null; \
        python3 -c 'import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null |
        xargs -I{} find {} -name 'libcupti.so.13*') | head -1)")
  export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
clocks() { echo "== clocks $1 $(date -u +%H:%M:%S)"; nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader; }
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv
  python3 -c 'import torch,transformers;print("torch", torch.__version__, torch.version.cuda, "transformers", transformers.__version__)'
  ldd "$K3SIM_CAPTURE_LIB" | grep -E 'cupti'
  nproc; uname -r
} > "$OUT/env.txt" 2>&1
{
  for m in ${MODELS:-dsv3 hybrid}; do
    n=$m${TAG:+-$TAG}
    clocks "before $n nvtx"
    s=$(date +%s.%N)
    "$D/k3sim" trace capture -o "/tmp/$n-nvtx.db" --force -- python3 "$D/profile-run.py" "$m" nvtx
    echo "== $n nvtx capture: exit $? in $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
    clocks "after $n nvtx"
    "$D/k3sim" trace summary "/tmp/$n-nvtx.db" --top 12 | grep -v -E '^ +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ '
    s=$(date +%s.%N)
    python3 "$D/profile-run.py" "$m" kineto "/tmp/$n-kineto.json"
    echo "== $n kineto: exit $? in $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
    clocks "after $n kineto"
    ls -la /tmp/$n-*
  done
} > "$OUT/log.txt" 2>&1
for f in /tmp/*-nvtx.db /tmp/*-kineto.json; do [ -f "$f" ] && xz -T8 -6 -c "$f" > "$OUT/$(basename "$f").xz"; done
grep -E '^== |kernels|Error|error|Traceback' "$OUT/log.txt" | head -40
ls -la "$OUT"
