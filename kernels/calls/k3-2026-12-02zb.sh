#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96; helper i27b, call 1 (one nvidia-h200,
# <= 140 s). The intra kernel's lean instance (K3_KDA_INTRA=v3: gates in log2 units, 2^x and 1/x
# in their flush-to-zero forms, one MUFU instruction each; Kh from Kb) against the default (v2)
# in one process (kda-bench --prefill-ab).
#   1. test-kda-gpu's prefill tests (float64; the new test_prefill_lean)
#   2. T = 16K, H = 96, FP32 / BF16, 4 rounds: default (overlapped, v2), v3
#   3. memcheck + racecheck of the lean test's small shape
#   4. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 (FP32, BF16): default, v3, 2 rounds
#   5. SASS counts of the intra kernels; ncu of the intra kernel alone (v2, v3) at 16K, H = 96
# From the repository root:  PACK=.gpu/i27b bash .gpu/i27b/k3-2026-12-02zb.sh
set -u
PACK=${PACK:-.gpu/i27b}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-125}
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
T=$B/test-kda-gpu
K=$B/kda-bench
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
run() { # run SECONDS-CAP LABEL cmd...: skips when the call's time is short, logs exit and seconds
  local cap=$1 label=$2; shift 2
  local l; l=$(left); [ "$l" -gt 8 ] || { echo "== $label: skipped (no time)"; return; }
  [ "$cap" -lt "$l" ] || cap=$(( l - 4 ))
  echo "== $label (cap $cap s, at $(( $(date +%s) - t0 )) s)"
  local s; s=$(date +%s)
  timeout "$cap" "$@" 2>&1
  echo "== $label: exit $? in $(( $(date +%s) - s )) s"
}
D='default:'
V3='v3:K3_KDA_INTRA=v3'
{
  KDA_TEST_FILTER='*prefill*' run 32 "prefill tests" "$T" > "$OUT/tests.txt"
  grep -E "^==|FAIL|PASSED|OK \] test_prefill" "$OUT/tests.txt"
  grep -E "err [0-9.e+-]+" "$OUT/tests.txt" | sort | uniq -c | sort -rn | head -5
  if grep -q "OK \] test_prefill_lean" "$OUT/tests.txt"; then AB="$D;$V3"; else AB="$D"; echo "== lean test failed: no v3 sets"; fi
  run 25 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 4 -o "$OUT/ab16k.csv" | grep -E "^prefill.*N=1 "
  KDA_TEST_LEAN_SMALL=1 KDA_TEST_FILTER='*prefill_lean*' run 15 "memcheck lean (small)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  KDA_TEST_LEAN_SMALL=1 KDA_TEST_FILTER='*prefill_lean*' run 15 "racecheck lean (small)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  run 30 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16 \
    --prefill-ab "$AB" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill"
  echo "== SASS counts (intra kernels: MUFU FMUL FFMA BAR all)"
  timeout 10 cuobjdump -sass "$K" 2>/dev/null | awk '
    /Function :/ { if (f) printf "%s MUFU %d FMUL %d FFMA %d BAR %d all %d\n", f, mu, fm, ff, br, n; f = ""; mu = fm = ff = br = n = 0;
                   if ($0 ~ /intra/) f = $3 }
    f && /MUFU/ { mu++ } f && /FMUL/ { fm++ } f && /FFMA/ { ff++ } f && /BAR\.SYNC/ { br++ } f && /\/\*[0-9a-f]+\*\// { n++ }
    END { if (f) printf "%s MUFU %d FMUL %d FFMA %d BAR %d all %d\n", f, mu, fm, ff, br, n }' | sed -E 's/_ZN[0-9]+_GLOBAL__N__[0-9a-f_]+kda_prefill_cu_[0-9a-f]+//'
  l=$(( $(left) - 5 ))
  if [ "$l" -gt 14 ]; then
    echo "== ncu intra kernel alone at T = 16K, H = 96 (v2, v3), limit $l s"
    for v in v2 v3; do
      K3_KDA_PREFILL=serial K3_KDA_INTRA=$v timeout $(( l / 2 )) ncu --clock-control none --kernel-name regex:kda_chunk_intra --launch-count 1 \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
        "$K" --only prefill --prefill-t 16384 --prefill-h 96 --quick > "$OUT/ncu-$v.txt" 2>&1
      echo "== ncu $v: exit $?"
      grep -E "kda_chunk|Duration|SM Frequency|Issue Slots Busy|Executed Ipc A|Compute \(SM\) Throughput|Memory Throughput|No Eligible|Warp Cycles Per Issued|Executed Instructions  " "$OUT/ncu-$v.txt" | cut -c1-120 | head -14
    done
  fi
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv" "$OUT/tests.txt"
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK|16384 +H=96|MUFU|Duration|Ipc|Issue|Instructions" "$OUT/log.txt" | cut -c1-150 | head -n 150
