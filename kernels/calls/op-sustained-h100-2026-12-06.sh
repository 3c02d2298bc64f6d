#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, one nvidia-h100-x1): this project's ops back to back on an H100,
# as kernels/calls/op-sustained-2026-12-04.sh and op-sustained-kda-2026-12-04*.sh did on the H200
# (each k3-bench / kda-bench row, after its timed launches, runs back to back for 1.5 s under
# `k3sim trace capture`; per range only bench/power/op-sustained-extract.py's NVML readings come
# back): the classes' active draws and FLOP energies of the H100's power model
# (bench/results/power-h100-2026-12-06/README.md). Families: gemv (the MXFP4 expert gemv), mla (MLA
# decode at 96 heads), gemm (m = 1, 16, 64, 256, 4096), moe_prefill, mla_prefill, attnres, route,
# conv; KDA decode (B = 1-256) and prefill (T = 4K, 16K, H = 96), FP32 state. From the repository
# root, the pack of round 06h in .gpu/hall2:
#   OUT=$OUT [FAMS="gemv mla ... kda-prefill"] [EXPERT_ACT=e4m3] bash kernels/calls/op-sustained-h100-2026-12-06.sh
#   -> $OUT/call.tar
# (11:07 UTC: every family; 11:2x: FAMS=moe_prefill EXPERT_ACT=e4m3, the MXFP4 experts' rows each
# followed by the layer's FP8 form, E4M3 activations: does an FP8 FLOP cost what a BF16 one does?)
set -u
OUT=${OUT:?OUT=<folder>}
PACK=${PACK:-.gpu/hall2}
B=$PACK/k3-build
LIMIT=${LIMIT:-570}
t0=$(date +%s)
. kernels/calls/device-env.sh
mkdir -p "$OUT/ops"
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
trap 'kill "$SMI_PID" 2>/dev/null' EXIT
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu --format=csv
  cap() { # $1 name, $2 seconds, rest: the program and its arguments (under capture)
    local n=$1 c=$2; shift 2
    capped "$c" "$n" env K3_BENCH_SUSTAIN_MS=${SUSTAIN_MS:-1500} "$B/cli/k3sim" trace capture -o "$OUT/ops/$n.db" --force -- "$@"
    python3 bench/power/op-sustained-extract.py "$OUT/ops/$n.db" > "$OUT/ops/$n-sustained.csv"
    echo "== $n extract exit $?"
    rm -f "$OUT/ops/$n.db"
  }
  kb() { # $1 family, $2 seconds, $3 env
    local f=$1 c=$2; shift 2
    cap "$f" "$c" env "$@" "$B/kernels/k3-bench" --require-wgmma --only "$f" --reps 10 ${EXPERT_ACT:+--expert-act $EXPERT_ACT} -o "$OUT/ops/$f.csv"
  }
  want() { case " ${FAMS:-gemv mla gemm moe_prefill mla_prefill attnres route conv quant kda-decode kda-prefill} " in *" $1 "*) return 0 ;; esac; return 1; }
  want gemv && kb gemv 90 K3_BENCH_GEMV_DEFAULT=1
  want mla && kb mla 90 K3_BENCH_MLA_H96=1
  want gemm && kb gemm 110 K3_BENCH_GEMM_M=1,16,64,256,4096
  want moe_prefill && kb moe_prefill 90 X=1
  want mla_prefill && kb mla_prefill 60 X=1
  want attnres && kb attnres 40 X=1
  want route && kb route 30 X=1
  want conv && kb conv 40 X=1
  want quant && kb quant 30 X=1
  want kda-decode && cap kda-decode 30 "$B/kernels/kda-bench" --only decode --batch 1,16,64,256 --state fp32 --reps 10 -o "$OUT/ops/kda-decode.csv"
  want kda-prefill && cap kda-prefill 40 "$B/kernels/kda-bench" --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32 --reps 5 -o "$OUT/ops/kda-prefill.csv"
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
} > "$OUT/log.txt" 2>&1
grep -E "^== " "$OUT/log.txt"
(cd "$OUT" && tar cf call.tar log.txt ops && rm -rf ops)
echo "call: $(( $(date +%s) - t0 )) s"
