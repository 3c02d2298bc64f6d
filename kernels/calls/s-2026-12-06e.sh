#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, session 19:55 UTC), pack .gpu/s1 (kda-bench, k3-bench, k3sim,
# libk3capture of this session's build; clock-probe with --mix3). What runs depends on the card:
#  an H200 (issue 17's card):
#   1. KDA prefill at T = 16K, 4K, H = 96, FP32 / BF16 state, timed as FlashKDA's public rows were
#      (kernels/calls/kq-2026-12-06.sh's burst1: 9 bursts after 1 s idle, 3 warm-ups, the mean of 6);
#   2. the expert GEMMs at T = 4K: the FP8 kernel (wide2f8) and the BF16-activation default
#      (wide2rqp) alternating three times in one process, each beside cuBLASLt BF16 (not measured
#      on an H200 since round 04q);
#   3. clock-probe --mix3 under capture (below);
#  an H100:
#   1. clock-probe --mix3 under `k3sim trace capture` (the capture's NVML readings now hold the
#      instant power and the 1 s mean, powerAvgW: both checked against nvidia-smi's beside):
#      gemm_c3 (the compute and memory mix the first card ran near boost for ~0.9 s, then cut) three
#      times after 1 s idle and once after 0.2 s, then gemm_c2, gemm_c4: is the delayed cut the
#      load's, and does it repeat on another card?
#   2. clock-probe --mix (the first card's five loads), for the same comparison load by load;
#  both cards, last: KDA prefill's clock share (kda-bench paced as k3-bench, common/bench_pace.cuh):
#  T = 16K, 4K, H = 96, FP32 state, under capture twice, each timed launch after 100 ms idle (cool)
#  and after 100 ms of cuBLASLt GEMMs at the limit (hog) -> $OUT/cb-cool, cb-hog (kda.db.xz, .csv,
#  .txt) for bench/power/clock-bound.py --share.
#   OUT=$OUT bash kernels/calls/s-2026-12-06e.sh
# Options (environment): H100_SECOND=1 an H100 runs KDA's clock law at H = 96, 48, BF16 only;
# H100_BURST=1 an H100 runs the burst rows first; HEAT=1 (2026-12-07, with clock-probe rebuilt
# from bench/power/clock-probe.cu at 1d44a36 or later into .gpu/s1) the heat probe last on either
# card (clock-probe --heat -> $OUT/heat, bench/power/heat-fit.py; ~75 s), and an H200 leaves out
# --mix3 (measured on H100s); H100_HEAT_ONLY=1 an H100 runs the heat probe alone.
set -u
PACK=.gpu/s1
OUT=${OUT:?OUT=<folder>}
LIMIT=${LIMIT:-400}
. kernels/calls/device-env.sh
call_begin || exit 2
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
KB="$B/kernels/kda-bench --only prefill --prefill-t 16384,4096 --prefill-h 96"
case "$card" in
*H200*)
  capped 110 "kda burst1" $KB --prefill-state fp32,bf16 --prefill-burst 6 --prefill-gap-ms 1000 --reps 9 -o "$OUT/kda-burst1.csv" > "$OUT/kda-burst1.txt"
  grep -E "^== |burst|prefill" "$OUT/kda-burst1.txt" | head -20
  R=wide2f8,wide2rqp
  K3_BENCH_MOE_T=4096 K3_BENCH_MOE_VARIANT=mxfp4 K3_BENCH_WG_KERNELS=$R,$R,$R \
    capped 150 "moe_prefill 4K" "$B/kernels/k3-bench" --only moe_prefill -o "$OUT/moe-4k.csv" > "$OUT/moe-4k.txt"
  grep -E "^== |wg-|cublas" "$OUT/moe-4k.txt" | head -30
  [ -n "${HEAT:-}" ] || probe_mix3
  kda_clock_bound
  [ -n "${HEAT:-}" ] && probe_heat
  ;;
*)
  if [ -n "${H100_HEAT_ONLY:-}" ]; then  # little device time: the heat probe alone
    H100_SKIP=1 HEAT=1
  elif [ -n "${H100_SECOND:-}" ]; then  # a second H100: KDA's clock law on more shapes only
    CB_H=96,48 CB_STATE=bf16 kda_clock_bound
    H100_SKIP=1
  fi
  [ -n "${H100_SKIP:-}" ] || {
  [ -n "${H100_BURST:-}" ] && capped 80 "kda burst1" $KB --prefill-state fp32 --prefill-burst 6 --prefill-gap-ms 1000 --reps 5 \
    -o "$OUT/kda-burst1.csv" > "$OUT/kda-burst1.txt" && grep -E "^== |burst|prefill" "$OUT/kda-burst1.txt" | head
  probe_mix3
  capped 40 "clock-probe --mix" bash bench/power/clock-probe.sh "$PACK/clock-probe" "$OUT/mix" 2.5 --mix
  kda_clock_bound
  }
  [ -n "${HEAT:-}" ] && probe_heat
  ;;
esac
for d in mix3 mix; do [ -d "$OUT/$d" ] && xz -9 "$OUT/$d/smi.csv"; done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
call_end
# everything in one file (a call returns a few files only: 2026-12-06 20:46 lost the rest)
(cd "$OUT" && tar cf call.tar --exclude=call.tar . && find . -mindepth 1 ! -name call.tar -delete)
