# Sourced by the device-call scripts from this one on (kernels/calls/k3-2026-12-01t.sh and later):
# unpacks the pack, puts libcmocka, the CUDA runtime and CUPTI on the library path, records the
# device (name, driver, clocks, power limit, temperature, nvcc, kernel) into $1 and starts
# nvidia-smi sampling every 500 ms into $2 (its pid in $SMI_PID: kill it at the end).
# Needs PACK (the staged folder with pack.tar.xz and libcmocka.so.0) and B (the build inside it).
device_env() {
  local env_txt=$1 smi_csv=$2 d
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; return 2; }
  mkdir -p .gpu
  [ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
  export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export K3SIM_CAPTURE_LIB=$B/trace/capture/libk3capture.so
  if ldd "$K3SIM_CAPTURE_LIB" 2>/dev/null | grep -q 'libcupti.so.13 => not found'; then
    d=$(dirname "$( (find /usr/local/cuda*/ /opt /usr/lib -name 'libcupti.so.13*' 2>/dev/null) | head -1)")
    export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
  fi
  {
    date -u +"date %Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
    nvcc --version 2>/dev/null | tail -1
    uname -r
  } > "$env_txt" 2>&1
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 500 > "$smi_csv" 2>&1 &
  SMI_PID=$!
}

# The call scripts' capped step (copied into most call scripts before 2026-12-04k; share this one):
#   capped SECONDS-CAP LABEL cmd...
# runs cmd under `timeout`, the cap cut to what is left of the call's LIMIT seconds counted from the
# caller's t0 (less 4 s), skipped with a line when 8 s or less are left; logs the start, the exit
# status and the seconds taken, each line starting "== LABEL".
capped() {
  local cap=$1 label=$2; shift 2
  local l=$(( LIMIT - ($(date +%s) - t0) ))
  [ "$l" -gt 8 ] || { echo "== $label: skipped (no time)"; return; }
  [ "$cap" -lt "$l" ] || cap=$(( l - 4 ))
  echo "== $label (cap $cap s, at $(( $(date +%s) - t0 )) s)"
  local s; s=$(date +%s)
  timeout "$cap" "$@" 2>&1
  echo "== $label: exit $? in $(( $(date +%s) - s )) s"
}

# The pack's build unpacked and its libraries on the path, for calls that run a test before
# device_env() (kernels/calls/k3-2026-12-04p*.sh): needs PACK and B as device_env().
pack_env() {
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; return 2; }
  mkdir -p .gpu
  [ -f .gpu/libcmocka.so.0 ] || cp "$PACK/libcmocka.so.0" .gpu/
  export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# The K3 slice under capture as round 05r ran it (kernels/calls/k3-2026-12-05r.sh, PHASE=slice):
#   slice_runs RUN:ACT ...     e.g. slice_runs a:e4m3 c:bf16 b:e4m3
# each run into $OUT/RUN (kernels/slice/run-slice.sh with --expert-act ACT, prefill T = 4K, 16K,
# decode B = 1, 16, 64 at C = 8K, --reps 3; SLICE_GRID, where set, replaces the prefill and decode
# options), its capture capped at what is left of LIMIT (200 s at most); the environment passes
# through (e.g. K3_QUANT_E4M3). Needs B, OUT, M, LIMIT and t0.
slice_runs() {
  local x r act left
  for x in "$@"; do
    r=${x%%:*} act=${x#*:}
    mkdir -p "$OUT/$r"
    left=$(( LIMIT - 10 - ($(date +%s) - t0) ))
    [ "$left" -gt 40 ] || { echo "== slice $r: no time left"; continue; }
    sed "s/timeout 540 /timeout $(( left < 200 ? left : 200 )) /" kernels/slice/run-slice.sh > "$M/run-slice.sh"
    # shellcheck disable=SC2086  # SLICE_GRID: k3-slice's grid options, split on purpose
    OUT=$OUT/$r BUILD=$B bash "$M/run-slice.sh" --expert-act "$act" \
      ${SLICE_GRID:---prefill 4096,16384 --decode 1:8192,16:8192,64:8192} --reps 3 > /dev/null 2>&1
    echo "== slice $r ($act) exit $? at $(( $(date +%s) - t0 )) s: $(grep 'capture exit' "$OUT/$r/k3-slice.txt")"
    grep -E "^(prefill|decode) " "$OUT/$r/k3-slice.txt" | head -12
  done
}

# Each named run's folder $OUT/RUN as one $OUT/RUN.tar.xz (a call returns 8 files at most), the
# folder removed once packed; runs that did not run are skipped:   slice_pack a b c
slice_pack() {
  local r
  for r in "$@"; do
    if [ -d "$OUT/$r" ]; then
      tar cJf "$OUT/$r.tar.xz" -C "$OUT" "$r" && rm -rf "${OUT:?}/$r"
    fi
  done
  return 0
}

# The full k3-bench with E4M3 expert rows under capture, into $OUT/k3-h200.db (the bench the
# k3-kernels presets are fitted on: validate-slice.py --bench-results), its CSV into $M, then the
# capture's trace summary; compress the database afterwards. Needs B, OUT, M, LIMIT and t0.
bench_capture() {
  capped 300 "k3-bench e4m3 under capture" "$B/cli/k3sim" trace capture -o "$OUT/k3-h200.db" --force -- \
    "$B/kernels/k3-bench" --require-wgmma --expert-act e4m3 -o "$M/k3-bench.csv"
  "$B/cli/k3sim" trace summary "$OUT/k3-h200.db" --top 25
}

# The frame of a call script (kernels/calls/k3-2026-12-06c.sh and later): after PACK and PHASE
# are checked, `call_begin` sets B (the pack's build), OUT (default ./k3-out), LIMIT (default 300
# s), M ($OUT/misc) and t0, and runs device_env into $OUT/env.txt and $M/smi.csv; `call_end` stops
# the sampling, packs $M into $OUT/misc.tar.xz and prints the call's seconds.
call_begin() {
  B=$PACK/k3-build
  OUT=${OUT:-$PWD/k3-out}
  LIMIT=${LIMIT:-300}
  M=$OUT/misc
  mkdir -p "$OUT" "$M"
  t0=$(date +%s)
  device_env "$OUT/env.txt" "$M/smi.csv"
}

call_end() {
  kill "$SMI_PID" 2>/dev/null
  tar cJf "$OUT/misc.tar.xz" -C "$M" . && rm -rf "$M"
  echo "call: $(( $(date +%s) - t0 )) s"
}

# The call scripts of 2026-12-06 evening on (kernels/calls/s-2026-12-06e.sh);
# each needs B, PACK (clock-probe in it), OUT, LIMIT and t0 (call_begin).
# probe_mix3: clock-probe --mix3 under capture -> $OUT/mix3 (smi.csv), $OUT/mix3.db.xz.
# kda_clock_bound: KDA prefill's clock share (kda-bench paced, T = 16K, 4K, H = CB_H (96), state
#   CB_STATE (fp32)) under capture cool, hog and plain -> $OUT/cb-{cool,hog,plain}.
# probe_heat: clock-probe --heat -> $OUT/heat (bench/power/heat-fit.py).
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
probe_heat() {
  capped 90 "clock-probe --heat" bash bench/power/clock-probe.sh "$PACK/clock-probe" "$OUT/heat" 1.5 --heat
  [ -f "$OUT/heat/smi.csv" ] && xz -9 "$OUT/heat/smi.csv"
  tail -2 "$OUT/heat/env.txt" 2>/dev/null
}
