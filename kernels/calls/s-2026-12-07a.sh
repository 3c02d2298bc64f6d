#!/usr/bin/env bash
# Device call of 2026-12-07 (lead, session 23:05 UTC 12-06), pack .gpu/s1 (kda-bench, k3-bench,
# k3sim, libk3capture of 2026-12-06 19:55's build) with clock-probe rebuilt from this commit (its
# --heat mode). kernels/calls/s-2026-12-06e.sh as it was, plus, last on either card:
#   the heat probe (clock-probe --heat, nvidia-smi every 20 ms beside): an FFMA load at boost cold
#   and after each of eight 6 s stretches of GEMMs at the limit, the capped GEMM's clock cold and
#   hot: does a fixed load's draw grow with temperature, and the limiter's clock fall with it?
#   -> $OUT/heat (batches.csv, smi.csv.xz, env.txt) for bench/power/heat-fit.py.
# The H200 branch leaves out --mix3 (measured on H100s). H100_HEAT_ONLY=1: an H100 runs the heat
# probe alone (~75 s).
#   OUT=$OUT LIMIT=540 bash kernels/calls/s-2026-12-07a.sh
set -u
PACK=.gpu/s1
OUT=${OUT:?OUT=<folder>}
LIMIT=${LIMIT:-400}
. kernels/calls/device-env.sh
call_begin || exit 2
probe_mix3() {  # the probe alone under capture (a capture of clock-probe.sh's bash wrote its
  # CUDA process to a database of its own), nvidia-smi beside it as clock-probe.sh samples
  local d=$OUT/mix3 smi
  mkdir -p "$d"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active,clocks.mem \
    --format=csv,noheader,nounits -lms 20 > "$d/smi.csv" 2>&1 &
  smi=$!
  sleep 0.5
  capped 60 "clock-probe --mix3 under capture" "$B/cli/k3sim" trace capture -o "$OUT/mix3.db" --force -- \
    "$PACK/clock-probe" "$d" 2.5 --mix3
  sleep 0.3
  kill $smi 2>/dev/null
  python3 - "$OUT/mix3.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("capture readings:", db.execute("SELECT count(*), count(powerW), count(powerAvgW), avg(powerW), avg(powerAvgW) "
                                      "FROM K3SIM_GPU_METRICS").fetchone())
PY
  [ -f "$OUT/mix3.db" ] && xz -T4 "$OUT/mix3.db"
}
probe_heat() {
  capped 90 "clock-probe --heat" bash bench/power/clock-probe.sh "$PACK/clock-probe" "$OUT/heat" 1.5 --heat
  [ -f "$OUT/heat/smi.csv" ] && xz -9 "$OUT/heat/smi.csv"
  tail -2 "$OUT/heat/env.txt" 2>/dev/null
}
kda_clock_bound() {
  local mode var d
  for mode in cool hog plain; do
    d=$OUT/cb-$mode
    mkdir -p "$d"
    var=K3_BENCH_COOL_MS
    [ "$mode" = hog ] && var=K3_BENCH_HOG_MS
    [ "$mode" = plain ] && var=K3_BENCH_COOL_MS; local ms=100; [ "$mode" = plain ] && ms=0
    capped 60 "kda clock-bound $mode" env "$var=$ms" "$B/cli/k3sim" trace capture -o "$d/kda.db" --force -- \
      "$B/kernels/kda-bench" --only prefill --prefill-t 16384,4096 --prefill-h ${CB_H:-96} --prefill-state ${CB_STATE:-fp32} --reps 12 \
      -o "$d/kda.csv" > "$d/kda.txt" 2>&1
    grep -E "^== |prefill" "$d/kda.txt" | head -6
    [ -f "$d/kda.db" ] && xz -T4 "$d/kda.db"
  done
}
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
  kda_clock_bound
  probe_heat
  ;;
*)
  if [ -n "${H100_HEAT_ONLY:-}" ]; then  # little device time: the heat probe alone
    H100_SKIP=1
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
  probe_heat
  ;;
esac
for d in mix3 mix; do [ -d "$OUT/$d" ] && xz -9 "$OUT/$d/smi.csv"; done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
call_end
# everything in one file (a call returns a few files only: 2026-12-06 20:46 lost the rest)
(cd "$OUT" && tar cf call.tar --exclude=call.tar . && find . -mindepth 1 ! -name call.tar -delete)
