#!/usr/bin/env bash
# Issue 17, round 05r (lead, 2026-12-05, session 18:07-21:07 UTC): the LatentMoE layer and the K3
# slice with E4M3 expert activations (moe_dims.expert_act = K3_A_E4M3_ROW: the latent rows
# quantized a row at a time, w13 on the FP8 wgmma kernel writing E4M3, w2 reading them; opt-in:
# k3-slice / k3-bench --expert-act e4m3), and round 05q's second build (the intra kernel's L2
# prefetch by line prefetches, K3_KDA_INTRA_PF_MODE=line, beside the bulk form). A call carries 64 MiB
# in all and the binaries are 9-33 MB each, so the round is three calls, one PHASE each:
#   tests  test-moe-gpu *layer_e4m3* (the E4M3 layer against its float64 reference), *layer_pre* and
#          *layer_dec* (the BF16 layer, unchanged), test-kda-gpu *intra_pf*;
#          pack: tests/kernels/test-moe-gpu, tests/kernels/test-kda-gpu
#   bench  the KDA A/B of the prefetch forms at T = 16K, H = 96 (kernels/calls/k3-2026-12-05q.sh's
#          sets, line and bulk), the KDA prefill grid (the validation's --kda-bench), then the FULL
#          k3-bench --require-wgmma --expert-act e4m3 under capture (k3-h200.db: the fit of the
#          k3-kernels presets, its FP8 expert rows included);
#          pack: kernels/k3-bench, kernels/kda-bench, cli/k3sim, trace/capture/libk3capture.so
#   slice  the slice under capture, --expert-act e4m3 (runs a and b) and bf16 (run c, the baseline on
#          the same card), prefill T = 4K, 16K, decode B = 1, 16, 64 at C = 8K (an H100's 80 GB: the
#          default decode grid needs ~90 GB), --reps 3;
#          pack: kernels/k3-slice, cli/k3sim, trace/capture/libk3capture.so
# PHASE may list several (e.g. "tests bench") where one pack holds their binaries.
# From the repository root:  PACK=.gpu/<tag> PHASE=<phase> OUT=$OUT bash kernels/calls/k3-2026-12-05r.sh
set -u
PACK=${PACK:?PACK: the staged folder}
PHASE=${PHASE:?PHASE: tests, bench or slice}
B=$PACK/k3-build
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
. "$(dirname "$0")/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$M/smi.csv" || exit 2
LIMIT=${LIMIT:-540}
for ph in $PHASE; do
case "$ph" in
tests)
  {
    for f in '*layer_e4m3*' '*layer_pre*' '*layer_dec*'; do
      capped 200 "moe-gpu $f" env MOE_TEST_FILTER="$f" "$B/tests/kernels/test-moe-gpu"
    done
    capped 120 "kda-gpu *intra_pf*" env KDA_TEST_FILTER='*intra_pf*' "$B/tests/kernels/test-kda-gpu"
  } > "$OUT/tests.txt" 2>&1
  grep -E "^== |^\[ +(OK|FAILED|PASSED|SKIPPED|ERROR)|rel err|err/tol|bytes differ|Failure" "$OUT/tests.txt" | head -60
  ;;
bench)
  S=K3_KDA_PREFILL=serial P=K3_KDA_INTRA_PF L=K3_KDA_INTRA_PF_MODE
  AB="def:;ovline672:$P=672;ovline1344:$P=1344;ovbulk672:$P=672,$L=bulk;ser:$S;serline1056:$S,$P=1056;serline4224:$S,$P=4224;serbulk1056:$S,$P=1056,$L=bulk"
  {
    capped 90 "kda prefetch A/B" "$B/kernels/kda-bench" --only prefill --prefill-t 16384 --prefill-h 96 \
      --prefill-state fp32 --prefill-ab "$AB" --prefill-rounds 3 -o "$M/kda-pf.csv"
    capped 80 "kda grid" "$B/kernels/kda-bench" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 \
      --prefill-state fp32,bf16 --prefill-ab "default:;serial:K3_KDA_PREFILL=serial;v3:K3_KDA_INTRA=v3" \
      --prefill-rounds 3 -o "$OUT/kda-grid.csv"
    bench_capture # (as run, these lines inline; device-env.sh's since, the same)
  } > "$OUT/k3-bench.txt" 2>&1
  xz -T0 -f "$OUT/k3-h200.db"
  grep -E "^== |^prefill@" "$OUT/k3-bench.txt" | head -80
  ;;
slice) # the same steps as this call ran them, now shared (device-env.sh slice_runs)
  slice_runs a:e4m3 c:bf16 b:e4m3
  ;;
*) echo "PHASE=$ph: tests, bench or slice"; exit 2 ;;
esac
done
kill "$SMI_PID" 2>/dev/null
tar cJf "$OUT/misc.tar.xz" -C "$M" . && rm -rf "$M"
echo "call: $(( $(date +%s) - t0 )) s"
