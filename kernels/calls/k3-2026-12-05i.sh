#!/usr/bin/env bash
# Issue 17, round 05i (lead, 2026-12-05): the serial KDA prefill's default recurrence is pairr at
# <= 96 (sequence, head) pairs (kda_prefill.cu PAIRR_MAX_PAIRS, width by pair_warps()), from the
# two H100 grids of 05f / 05h. This call checks the new default on the build that has it:
#  1. kda-bench grid, sets def (the new default), chk (K3_KDA_RECUR=chunk: the old default), pr3
#     (pairr at rule 3's width on the serial path everywhere: K3_KDA_RECUR_WARPS=v3) and ser
#     (K3_KDA_PREFILL=serial: forced serial keeps the chunk kernel), T = 1K, 4K, 16K x H = 12, 24,
#     48, 96, each as 1, 2, 4 and 8 sequences (--prefill-seqs: 12 to 768 (sequence, head) pairs,
#     the range past the rule's 96 unmeasured so far), + 4 x 4K at 96, FP32 / BF16, 3 rounds, one
#     process; then test-kda-gpu's prefill tests (test_prefill_default_recur among them) ->
#     k1/kda.tar.xz (summary: python3 kernels/kda/bench/ab-summary.py kda/log.txt);
#  2. compute-sanitizer memcheck and racecheck of test_prefill_default_recur (the default's pairr
#     at small shapes, and the chunk kernel there), each capped -> san.txt.
# Pack: .gpu/kda (kda-bench and test-kda-gpu of this commit's build-gpu, with device-env.sh).
# From the repository root:  OUT=$OUT bash kernels/calls/k3-2026-12-05i.sh
set -u
OUT=${OUT:-$PWD/k3-out}
D=$(dirname "$0")
B=.gpu/kda/k3-build
mkdir -p "$OUT/k1"
OUT=$OUT/k1 PACK=.gpu/kda ROUNDS=3 BENCH_CAP=200 TEST_FILTER='*prefill*' TEST_CAP=200 \
  AB="def:;chk:K3_KDA_RECUR=chunk;pr3:K3_KDA_PREFILL=serial,K3_KDA_RECUR=pairr,K3_KDA_RECUR_WARPS=v3;ser:K3_KDA_PREFILL=serial" \
  GRID="--prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16 --prefill-seqs 2,4,8" \
  bash "$D/kda-ab-call.sh"
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for tool in memcheck racecheck; do
  echo "== $tool *default_recur*"
  KDA_TEST_FILTER='*default_recur*' timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    "$B/tests/kernels/test-kda-gpu" > "$OUT/san-$tool.log" 2>&1
  echo "== $tool: exit $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|OK \]" "$OUT/san-$tool.log" | tail -4
done > "$OUT/san.txt" 2>&1
tar cJf "$OUT/san.tar.xz" -C "$OUT" san-memcheck.log san-racecheck.log && rm -f "$OUT"/san-*.log
cat "$OUT/san.txt"
tar xJf "$OUT/k1/kda.tar.xz" -O kda/tests.txt | grep -E '^\[|default N=' | head -40
ls -la "$OUT" "$OUT/k1"
