#!/usr/bin/env bash
# Round 18b (2026-12-02n call 2, lead; one nvidia-h200): main with KDA prefill serial by default again
# (K3_KDA_PREFILL=auto the overlapped rule). One run of kernels/calls/k3-round.sh (its full k3-bench and
# the K3 slice under capture; validated against call 1's two bench captures: held out by run), then
# the GPU tests call 1 did not reach (its test-kda-gpu ran past the time left in the decode ring
# tests): test-mla-gpu (the under-filled-wave plan now the default), test-kda-gpu's prefill tests
# (the default path test with auto), test-layer-gpu, memcheck of the MLA plan's test.
# From the repository root:  PACK=.gpu/r18b bash .gpu/r18b/k3-2026-12-02n2.sh
set -u
PACK=${PACK:-.gpu/r18b}
OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT/t"
t0=$(date +%s)
{
  B=$PACK/k3-build
  [ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
  export LD_LIBRARY_PATH=$PWD/$PACK:$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  : > "$PACK/san-none.txt"
  PACK=$PACK OUT=$OUT/a LIMIT=${LIMIT_A:-60} PHASE=san SAN=$PACK/san-none.txt bash "$PACK/k3-round.sh"
  echo "== run a done at $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  timeout 40 "$B/tests/kernels/test-mla-gpu" > "$OUT/t/mla.txt" 2>&1; echo "== test-mla-gpu exit $? at $(( $(date +%s) - t0 )) s"
  KDA_TEST_FILTER='*prefill*' timeout 30 "$B/tests/kernels/test-kda-gpu" > "$OUT/t/kda.txt" 2>&1; echo "== test-kda-gpu prefill exit $? at $(( $(date +%s) - t0 )) s"
  timeout 20 "$B/tests/kernels/test-layer-gpu" > "$OUT/t/layer.txt" 2>&1; echo "== test-layer-gpu exit $? at $(( $(date +%s) - t0 )) s"
  MLA_TEST_FILTER='*fp8_underfilled_wave*' timeout 15 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/kernels/test-mla-gpu" > "$OUT/t/san-mla.txt" 2>&1
  echo "== memcheck mla underfilled exit $? at $(( $(date +%s) - t0 )) s: $(grep 'ERROR SUMMARY' "$OUT/t/san-mla.txt")"
  for f in "$OUT"/t/*.txt; do grep -E "^\[ +(PASSED|FAILED)|^\[  FAILED" "$f" | sed "s|^|$(basename "$f"): |"; done
} > "$OUT/log.txt" 2>&1
(cd "$OUT" && tar cf a.tar a && tar cJf t.tar.xz t && rm -rf a t)
grep -E "^== |PASSED|FAILED|SUMMARY|capture exit" "$OUT/log.txt" | head -40
echo "call: $(( $(date +%s) - t0 )) s"
