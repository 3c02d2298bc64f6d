#!/usr/bin/env bash
# Device call of 2026-12-06 (lead, session 16:58 UTC), one H100: what the power limiter does with a
# mild excess, and the slice's decode in its steady state (bench/results/power-h100-2026-12-06/
# limiter-mild/README.md says why: the slices' decode mixes read 720-800 W near boost for ~1 s).
#  1. bench/power/clock-probe.cu --mild (built here: .gpu/mild/clock-probe): GEMMs with 1200 .. 500 us
#     of sleep after each, 2.5 s each after 1 s idle, the in-kernel clock probe every ~25 ms and
#     nvidia-smi every 20 ms beside (clock-probe.sh);
#  2. the K3 slice (the pack of 5e94718 in .gpu/q6, as slice-sustained/'s call 5), BF16 expert inputs,
#     decode B = 16, 64, 256 at C = 8K and B = 16, 64 at C = 64K, each step then back to back for
#     ~2 s (--sustain-ms 2000) under capture: each decode mix's steady clock and draw.
#  3. (STEPS=slice8) the slice of 2. with E4M3 expert inputs;
#  4. (STEPS=mix) clock-probe --mix: GEMMs each followed by 2 .. 8 HBM copies of 512 MiB, from idle.
#   OUT=$OUT [STEPS="mild slice slice8"] bash kernels/calls/mild-2026-12-06.sh
set -u
PACK=.gpu/q6
OUT=${OUT:?OUT=<folder>}
LIMIT=${LIMIT:-400}
. kernels/calls/device-env.sh
want() { case " ${STEPS:-mild slice} " in *" $1 "*) return 0 ;; esac; return 1; }
call_begin || exit 2
if want mild; then
  capped 60 "clock-probe --mild" bash bench/power/clock-probe.sh .gpu/mild/clock-probe "$OUT/mild" 2.5 --mild
  grep -c . "$OUT/mild/batches.csv"
fi
if want mix; then # clock-probe --mix: GEMMs each followed by N HBM copies of 512 MiB (18:10 UTC)
  capped 60 "clock-probe --mix" bash bench/power/clock-probe.sh .gpu/mild/clock-probe "$OUT/mix" 2.5 --mix
  grep -c . "$OUT/mix/batches.csv"
fi
if want slice; then
  SLICE_GRID="--decode 16:8192,64:8192,256:8192,16:65536,64:65536 --sustain-ms 2000" slice_runs s:bf16
  slice_pack s
fi
if want slice8; then # the same with E4M3 expert inputs (run e; a later call, 17:38 UTC)
  SLICE_GRID="--decode 16:8192,64:8192,256:8192,16:65536,64:65536 --sustain-ms 2000" slice_runs e:e4m3
  slice_pack e
fi
call_end
