#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, session 13:55 UTC): KDA prefill at the shape (T = 16K
# and 4K, H = 96, FP32 and BF16 state) timed the way the public FlashKDA row was
# (AIConfigurator's collector, collector/vllm/collect_kda.py + benchmark_with_power: a CUDA-graph
# replay after 3 warm-ups, the mean of 6 runs, each shape a short burst) with kda-bench
# --prefill-burst 6 (1 s idle, 3 launches, 6 back to back between two events; the SM clock,
# power and temperature read after each burst), then this project's usual single-launch rows in
# the same call, then the bursts again; and test-moe-gpu's test_gemm_mla_uv_stream alone.
# nvidia-smi logs clocks and power every 100 ms throughout. From the repository root, the pack
# in .gpu/kb (u/kda-bench, u/test-moe-gpu, libcmocka.so.0):  OUT=$OUT bash kernels/calls/kda-burst-2026-12-06.sh
set -u
OUT=${OUT:?OUT=<folder>}
P=.gpu/kb
[ -d $P/u ] || tar xJf $P/pack.tar.xz -C $P || exit 2
export LD_LIBRARY_PATH=$PWD/$P:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > "$OUT/env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > "$OUT/smi.csv" 2>&1 &
SMI=$!
date -u +"%F %T UTC start" >> "$OUT/env.txt"
MOE_TEST_FILTER=test_gemm_mla_uv_stream timeout 120 $P/u/test-moe-gpu > "$OUT/test-mla-uv-stream.txt" 2>&1
echo "== test_gemm_mla_uv_stream exit $?"; tail -5 "$OUT/test-mla-uv-stream.txt"
KB="$P/u/kda-bench --only prefill --prefill-t 16384,4096 --prefill-h 96 --prefill-state fp32,bf16"
date -u +"%F %T UTC burst1" >> "$OUT/env.txt"
timeout 150 $KB --prefill-burst 6 --prefill-gap-ms 1000 --reps 9 -o "$OUT/burst1.csv" > "$OUT/burst1.txt" 2>&1
echo "== burst1 exit $?"; grep -E "^prefill|burst:|after each" "$OUT/burst1.txt"
date -u +"%F %T UTC single" >> "$OUT/env.txt"
timeout 150 $KB --prefill-ab "def:" --prefill-rounds 3 -o "$OUT/single.csv" > "$OUT/single.txt" 2>&1
echo "== single exit $?"; grep -E "^prefill" "$OUT/single.txt"
date -u +"%F %T UTC burst2" >> "$OUT/env.txt"
timeout 150 $KB --prefill-burst 6 --prefill-gap-ms 1000 --reps 9 -o "$OUT/burst2.csv" > "$OUT/burst2.txt" 2>&1
echo "== burst2 exit $?"; grep -E "^prefill|burst:|after each" "$OUT/burst2.txt"
date -u +"%F %T UTC end" >> "$OUT/env.txt"
kill $SMI 2>/dev/null
cat "$OUT/env.txt"
