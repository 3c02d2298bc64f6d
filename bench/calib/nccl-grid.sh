#!/usr/bin/env bash
# NCCL collectives between the GPUs of one host (issue 5: two H200s, nvidia-h200-x2), under
# `k3sim trace capture`: all-reduce, all-gather, all-to-all from 64 KiB to 512 MiB, each timed
# instance an NVTX range in `k3sim op` syntax, so the captures calibrate the collective model:
#   k3sim trace merge $OUT/nccl-*.db -o nccl.db && k3sim calibrate calib.db nccl.db -o h200.yaml
# Not run yet: the two-GPU kind was withheld in the session that wrote it (2026-11-29).
# Built beforehand as for bench/calib/run-h200.sh (build-gpu-cal: cli/k3sim and the capture
# library); on the GPU machine, from the repository root: bash bench/calib/nccl-grid.sh [--quick]
set -u
OUT=${OUT:-$PWD/nccl-out}
B=${BUILD:-$PWD/build-gpu-cal}
NGPU=${NGPU:-$(nvidia-smi -L | wc -l)}
mkdir -p "$OUT"
# NVLink multicast must stay off on shared machines (device tool KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
export PYTHONUNBUFFERED=1
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  nvidia-smi topo -m
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
} > "$OUT/nccl-env.txt" 2>&1
cat "$OUT/nccl-env.txt"
s=$(date +%s)
# One database per rank (capture names the worker processes' files .r<rank>.p<pid>).
timeout 400 "$B/cli/k3sim" trace capture -f -o "$OUT/nccl-h200x$NGPU.db" -- \
  python3 -m torch.distributed.run --standalone --nproc_per_node="$NGPU" \
  bench/calib/nccl-grid.py --out "$OUT/nccl-h200x$NGPU.csv" "$@" 2>&1 | tail -20
echo "capture rc=${PIPESTATUS[0]}, $(( $(date +%s) - s )) s"
ls -la "$OUT"
dbs=$(ls "$OUT"/nccl-h200x"$NGPU"*.r*.db 2>/dev/null)
[ -n "$dbs" ] && "$B/cli/k3sim" trace merge $dbs -o "$OUT/nccl-merged.db" -f &&
  "$B/cli/k3sim" trace validate "$OUT/nccl-merged.db" --hw h200 | tail -8
