#!/usr/bin/env bash
# Device call of 2026-12-04 (lead, one nvidia-h200): each op of this project's kernels back to back
# for 1.5 s (K3_BENCH_SUSTAIN_MS=1500, k3-bench's sustain()) under `k3sim trace capture`: the op's
# steady draw at boost where it stays under the 700 W limit, else the clock the limiter settles it
# at (NVML's readings over each range's second half; bench/power/op-sustained.py). Families: the
# MXFP4 expert gemv (default rows), MLA decode at 96 heads, the dense GEMMs at m = 1, 64, 4096,
# the grouped expert GEMMs at prefill sizes, the MLA prefill. From the repository root, the pack
# in .gpu/sus2:
#   OUT=$OUT [FAMS="gemv mla gemm moe_prefill mla_prefill"] [GEMM_M=1,64,4096] bash kernels/calls/op-sustained-2026-12-04.sh
#   -> $OUT/call.tar
# (03:41 UTC: the default families; 04:2x: FAMS="gemm attnres route conv" GEMM_M=16,256, the rest of a
# decode step's ops but KDA's, which kda-bench times.)
# (The first call, 03:34 UTC, returned nothing: its tar of captures was 82 MB. The second keeps
# per capture only bench/power/op-sustained-extract.py's readings by range.)
set -u
OUT=${OUT:?OUT=<folder>}
PACK=${PACK:-.gpu/sus2}
B=$PACK/k3-build
t0=$(date +%s)
# (as run, these lines were the unpacking and library paths inline; device-env.sh's since, the same)
. kernels/calls/device-env.sh
mkdir -p "$OUT"
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
trap 'kill "$SMI_PID" 2>/dev/null' EXIT
mkdir -p "$OUT/ops"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu --format=csv
  fam() { # $1 family, $2 env
    s=$(date +%s)
    env $2 K3_BENCH_SUSTAIN_MS=${SUSTAIN_MS:-1500} timeout ${TIMEOUT:-150} "$B/cli/k3sim" trace capture -o "$OUT/ops/$1.db" --force -- \
      "$B/kernels/k3-bench" --require-wgmma --only "$1" --reps 10 -o "$OUT/ops/$1.csv" > "$OUT/ops/$1.txt" 2>&1
    echo "== $1 exit $? in $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)"
    # the capture holds millions of kernels (too large to come back): its readings per range only
    python3 bench/power/op-sustained-extract.py "$OUT/ops/$1.db" > "$OUT/ops/$1-sustained.csv"
    echo "== $1 extract exit $?"
    rm -f "$OUT/ops/$1.db"
  }
  for f in ${FAMS:-gemv mla gemm moe_prefill mla_prefill}; do
    case $f in
    gemv) fam gemv K3_BENCH_GEMV_DEFAULT=1 ;;
    mla) fam mla K3_BENCH_MLA_H96=1 ;;
    gemm) fam gemm K3_BENCH_GEMM_M=${GEMM_M:-1,64,4096} ;;
    *) fam "$f" K3_BENCH_SUSTAIN_MS=${SUSTAIN_MS:-1500} ;;
    esac
  done
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
} > "$OUT/log.txt" 2>&1
grep -E "^== " "$OUT/log.txt"
(cd "$OUT" && tar cf call.tar log.txt ops && rm -rf ops)
echo "call: $(( $(date +%s) - t0 )) s"
