#!/usr/bin/env bash
# NCCL collectives and K3's EP dispatch/combine between the GPUs of one host (issues 5 and 7:
# nvidia-h200-x2, -x4, -x8), under `k3sim trace capture`, one process per GPU: all-reduce,
# reduce-scatter, all-gather, all-to-all from 64 KiB to 1 GiB and the EP emulation of
# bench/calib/nccl-grid.py, each timed instance an NVTX range in `k3sim op` syntax, so the
# captures calibrate the collective model:
#   k3sim calibrate calib.db nccl-merged.db -o h200.yaml
# Built beforehand on the build machine (static libyaml/SQLite):
#   meson setup build-gpu -Dprefer_static=true -Dbuildtype=release && ninja -C build-gpu
# On the GPU machine, from the repository root: BUILD=build-gpu bash bench/calib/nccl-grid.sh [--quick]
set -u
OUT=${OUT:-$PWD/nccl-out}
B=${BUILD:-$PWD/build-gpu}
NGPU=${NGPU:-$(nvidia-smi -L | wc -l)}
mkdir -p "$OUT"
# NVLink multicast must stay off on shared machines (device tool KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
export PYTHONUNBUFFERED=1
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  echo "command: BUILD=$B bash bench/calib/nccl-grid.sh $*"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  nvidia-smi topo -m
  nvidia-smi nvlink -s 2>&1 | head -40
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
} > "$OUT/nccl-env.txt" 2>&1
cat "$OUT/nccl-env.txt" | head -30
s=$(date +%s)
# One database per rank (capture names the worker processes' files .r<rank>.p<pid>).
timeout 420 "$B/cli/k3sim" trace capture -f -o "$OUT/nccl-h200x$NGPU.db" -- \
  python3 -m torch.distributed.run --standalone --nproc_per_node="$NGPU" \
  bench/calib/nccl-grid.py --out "$OUT/nccl-h200x$NGPU.csv" "$@" 2>&1 | tail -30
echo "capture rc=${PIPESTATUS[0]}, $(( $(date +%s) - s )) s"
ls -la "$OUT"
dbs=$(ls "$OUT"/nccl-h200x"$NGPU"*.r*.db 2>/dev/null)
[ -n "$dbs" ] && "$B/cli/k3sim" trace merge $dbs -o "$OUT/nccl-h200x$NGPU-merged.db" -f &&
  "$B/cli/k3sim" trace validate "$OUT/nccl-h200x$NGPU-merged.db" --hw h200 | tail -12
