#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, session 13:55 UTC), the pack of 7a1c1a5 in .gpu/kq (k3sim,
# libk3capture, k3-bench, kda-bench, test-moe-gpu):
#  1. test-moe-gpu's test_gemm_mla_uv_stream alone (the mla_uv upload race's test, never run on a GPU);
#  2. KDA prefill at T = 16K, 4K, H = 96, FP32 / BF16 state: bursts after 1 s idle as the public
#     FlashKDA rows were timed (kernels/calls/kda-burst-2026-12-06.sh's protocol: 3 warm-ups, 6 back
#     to back, the mean; clock and power after each), the usual single launches, the bursts again;
#  3. the MXFP4 experts at decode sizes as the layer runs them (k3-bench --only moe_decode: the tile
#     layout given, so B = 256 runs the tiled wgmma kernel, B <= 64 the gemv), each row back to back
#     for 1.5 s under `k3sim trace capture` (op-sustained-extract.py's NVML readings per range): the
#     draw of the tiled kernel at 4.6 rows an expert, which the slice's B = 256 decode steps run and
#     no class of the power model was fitted on.
#   OUT=$OUT [STEPS="test burst1 single burst2 moe"] bash kernels/calls/kq-2026-12-06.sh   -> $OUT/call.tar
set -u
OUT=${OUT:?OUT=<folder>}
PACK=.gpu/kq
B=$PACK/k3-build
LIMIT=${LIMIT:-570}
t0=$(date +%s)
. kernels/calls/device-env.sh
mkdir -p "$OUT/r"
device_env "$OUT/r/env.txt" "$OUT/r/smi.csv" || exit 2
trap 'kill "$SMI_PID" 2>/dev/null' EXIT
R=$OUT/r
{
  date -u +"start %F %T UTC"
  want() { case " ${STEPS:-test burst1 single burst2 moe} " in *" $1 "*) return 0 ;; esac; return 1; }
  want test && capped 120 "test_gemm_mla_uv_stream" env MOE_TEST_FILTER=test_gemm_mla_uv_stream "$B/tests/kernels/test-moe-gpu"
  KB="$B/kernels/kda-bench --only prefill --prefill-t 16384,4096 --prefill-h 96 --prefill-state fp32,bf16"
  date -u +"burst1 %F %T UTC"
  want burst1 && capped 100 "kda burst1" $KB --prefill-burst 6 --prefill-gap-ms 1000 --reps 9 -o "$R/kda-burst1.csv"
  date -u +"single %F %T UTC"
  want single && capped 100 "kda single" $KB --prefill-ab "def:" --prefill-rounds 3 -o "$R/kda-single.csv"
  date -u +"burst2 %F %T UTC"
  want burst2 && capped 100 "kda burst2" $KB --prefill-burst 6 --prefill-gap-ms 1000 --reps 9 -o "$R/kda-burst2.csv"
  date -u +"moe_decode %F %T UTC"
  want moe && capped 200 "moe_decode sustained" env K3_BENCH_SUSTAIN_MS=1500 "$B/cli/k3sim" trace capture -o "$R/moe_decode.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma --only moe_decode --reps 10 -o "$R/moe_decode.csv"
  want moe && { python3 bench/power/op-sustained-extract.py "$R/moe_decode.db" > "$R/moe_decode-sustained.csv"
  echo "== extract exit $?"; }
  rm -f "$R/moe_decode.db"
  date -u +"end %F %T UTC"
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
} > "$R/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
grep -E "^== |^prefill|burst:|after each|PASSED|FAILED|OK \]" "$R/log.txt" | head -80
(cd "$OUT" && tar cf call.tar r && rm -rf r)
echo "call: $(( $(date +%s) - t0 )) s"
