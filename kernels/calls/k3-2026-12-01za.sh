#!/usr/bin/env bash
# Issue 17, round za, call 1 (one nvidia-h200, <= ~120 s of work): what the tensor pipe does at the
# grouped expert GEMM's MMA shapes with no copies (k3-bench --only wgmma_peak: wgmma m64nNk16 from
# resident shared memory, N 64 .. 256, 1-3 consumer warpgroups x 1-2 m64 blocks, SS and RS, the k
# loop's wait_group 1 rhythm, wait_group 0, and a producer's full/empty handshake), then today's
# grouped kernel (k3-bench --only moe_prefill --quick: BF16 and MXFP4 w13/w2 at T = 16K, each with
# and without clusters, beside cuBLASLt) as the baseline. nvidia-smi every 500 ms throughout.
# From the repository root:  PACK=.gpu/h20a bash .gpu/h20a/call.sh
# $OUT gets: peak.txt bench.txt misc.tar.xz (env, smi, CSV).
set -u
PACK=${PACK:-.gpu/h20a}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS
{
  echo "==== wgmma_peak (limit 40 s)"
  timeout 40 "$K/k3-bench" --only wgmma_peak -o "$M/peak.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/peak.txt" 2>&1
{
  echo "==== moe_prefill (limit 60 s)"
  timeout 60 "$K/k3-bench" --only moe_prefill --quick -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "wgmma_peak|====" "$OUT/peak.txt" | cut -c1-120
grep -E "grouped_gemm|cublasLt|====" "$OUT/bench.txt" | cut -c1-200
echo "call: $(( $(date +%s) - t0 )) s"
