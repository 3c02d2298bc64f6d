#!/usr/bin/env bash
# Device call of 2026-12-04 (lead, one nvidia-h200): the K3 slice's steady state under the power
# limiter, which `k3sim run --clock power` predicts (each step repeated back to back) and which the
# slice's timed steps (3-5 after a warm-up) do not show: the graph decode B = 64 at 64K ran 10-17 %
# slower than its eager steps in rounds 22-27, the whole step slower (GEMVs, MLA decode, top-k alike),
# the NVML clock at 1470-1515 MHz after it. (1) the slice under capture with --sustain-ms 2000 (each
# shape's step back to back for 2 s after its timed steps, run a); (2) the decode classes' energies
# duty-cycled under the limit: MLA decode at K3's 96 heads (K3_BENCH_MLA_H96) and the MXFP4 expert
# gemv's default rows (K3_BENCH_GEMV_DEFAULT), each timed launch after K3_BENCH_COOL_MS of idle, as
# kernels/calls/power-duty-2026-12-03.sh did for the prefill classes; (3) the sustained slice again
# (run b: held out by run). From the repository root, the pack in .gpu/sus (k3-build: cli/k3sim,
# kernels/k3-slice, kernels/k3-bench, trace/capture/libk3capture.so):
#   OUT=$OUT [PARTS="a duty b"] bash kernels/calls/sustain-2026-12-04.sh   -> $OUT/call.tar
# (The first call, 03:20 UTC, ran all three; its duty files did not come back, more files than a
# call returns: the second, PARTS=duty, ran them again into one tar.)
set -u
OUT=${OUT:?OUT=<folder>}
PACK=${PACK:-.gpu/sus}
B=$PACK/k3-build
t0=$(date +%s)
# (as run, these lines were the unpacking and library paths inline; device-env.sh's since, the same)
. kernels/calls/device-env.sh
mkdir -p "$OUT"
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
trap 'kill "$SMI_PID" 2>/dev/null' EXIT
mkdir -p "$OUT"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu --format=csv
  slice() { # $1: run letter
    mkdir -p "$OUT/$1"
    s=$(date +%s)
    timeout 240 "$B/cli/k3sim" trace capture -o "$OUT/$1/k3-slice.db" --force -- "$B/kernels/k3-slice" --sustain-ms 2000 \
      -o "$OUT/$1/k3-slice.csv" > "$OUT/$1/k3-slice.txt" 2>&1
    echo "== slice $1 exit $? in $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)"
    xz -T0 -6 "$OUT/$1/k3-slice.db"
  }
  case " ${PARTS:-a duty b} " in *" a "*) slice a ;; esac
  mkdir -p "$OUT/duty"
  duty() { # $1 family, $2 reps, $3 cool ms, $4 env
    s=$(date +%s)
    env $4 K3_BENCH_COOL_MS=$3 timeout 150 "$B/cli/k3sim" trace capture -o "$OUT/duty/$1.db" --force -- \
      "$B/kernels/k3-bench" --require-wgmma --only "$1" --reps "$2" -o "$OUT/duty/$1.csv" > "$OUT/duty/$1.txt" 2>&1
    echo "== duty $1 reps $2 cool $3 exit $? in $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)"
    xz -T0 -6 "$OUT/duty/$1.db"
  }
  case " ${PARTS:-a duty b} " in *" duty "*)
    duty mla 80 10 K3_BENCH_MLA_H96=1
    duty gemv 150 4 K3_BENCH_GEMV_DEFAULT=1 ;;
  esac
  case " ${PARTS:-a duty b} " in *" b "*) slice b ;; esac
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
} > "$OUT/log.txt" 2>&1
grep -E "^== |sustained" "$OUT/log.txt" "$OUT"/*/k3-slice.txt | head -40
(cd "$OUT" && tar cf call.tar log.txt $(ls -d a b duty 2>/dev/null) && rm -rf a b duty) # a call returns few files: one tar
echo "call: $(( $(date +%s) - t0 )) s"
