#!/usr/bin/env bash
# The power classes' draw on long sustained runs, first try (2026-12-03, lead; one nvidia-h200): k3-bench
# rows of one family each under `k3sim trace capture` with --reps 40-120 (too few: k3-bench runs
# prefill rows at --reps / 2 or / 4; see power-classes-2026-12-03b.sh). As run, the loop was inline
# here (timeout 100 s a family, the outputs left untarred); now the same steps through the second
# try's script.
#   PACK=.gpu/r25 bash .gpu/r25/power-classes-2026-12-03.sh   -> $OUT/all.tar
export SPECS="mla_prefill 60;gemm 120;moe_prefill 40;mla_decode 40" TIMEOUT=100
exec bash "$(dirname "$0")/power-classes-2026-12-03b.sh"
