#!/usr/bin/env bash
# Issue 17, KDA prefill <= 1.75 ms at T = 16K, H = 96; helper i25c, call 2 (one nvidia-h200,
# <= 140 s). The recurrent kernel on wgmma (K3_KDA_RECUR=wgmma | wgmma2, serial path, 64-row
# warpgroup CTAs; the record's Wk / Qt now in the wgmma operand layout for every kernel) against the
# serial path on mma.sync and the overlapped path (plain and split), in one process
# (kda-bench --prefill-ab); main's build (kda-bench-old, the previous record layout) run
# alternately with this one at T = 16K, H = 96.
#   1. test-kda-gpu's prefill tests (float64: every configuration, the wgmma kernel's new test)
#   2. T = 16K, H = 96, FP32 / BF16, 3 rounds: serial (mma), wgmma, wgmma2, wgmma 3 stages,
#      overlap, overlap split 250 / 450 (only the mma sets if the wgmma test failed)
#   3. main's build and this one alternately (serial, overlap; 16K, H = 96)
#   4. the grid T = 1K, 4K, 16K x H = 12, 24, 48, 96 + 4 x 4K (FP32 and BF16): serial, wgmma, wgmma2
#   5. memcheck + racecheck of the wgmma test's smallest shape; memcheck of the split test
#   6. SASS counts of the recurrent kernels; ncu of the serial pair at 4K (time left)
# From the repository root:  PACK=.gpu/i25c bash .gpu/i25c/k3-2026-12-02q-2.sh
set -u
PACK=${PACK:-.gpu/i25c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-128}
mkdir -p "$OUT"
t0=$(date +%s)
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
T=$B/test-kda-gpu
K=$B/kda-bench
KO=$B/kda-bench-old
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
S='serial:K3_KDA_PREFILL=serial'
W='wg:K3_KDA_PREFILL=serial,K3_KDA_RECUR=wgmma'
W2='wg2:K3_KDA_PREFILL=serial,K3_KDA_RECUR=wgmma2'
W3='wg3:K3_KDA_PREFILL=serial,K3_KDA_RECUR=wgmma,K3_KDA_RECUR_STAGES=3'
O='ov:K3_KDA_PREFILL=overlap'
SP2='sp250:K3_KDA_PREFILL=overlap,K3_KDA_OVERLAP_SPLIT=250'
SP4='sp450:K3_KDA_PREFILL=overlap,K3_KDA_OVERLAP_SPLIT=450'
{
  KDA_TEST_FILTER='*prefill*' run 30 "prefill tests" "$T" > "$OUT/tests.txt"
  grep -vE "^\[ +OK|^\[ RUN" "$OUT/tests.txt" | grep -E "^==|FAIL|Fail|ERROR|PASSED|wgmma|err [0-9.e+-]+ \(tol" | grep -vE "rel err [0-9.]+e-0[3-9]" | head -40
  grep -E "OK \] test_prefill" "$OUT/tests.txt"
  if grep -q "OK \] test_prefill_wgmma" "$OUT/tests.txt"; then WG="$W;$W2;$W3;"; WGG="$W;$W2"; else WG=""; WGG=""; echo "== wgmma test failed: no wgmma sets"; fi
  run 30 "16K H=96" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 \
    --prefill-ab "$S;$WG$O;$SP2;$SP4" --prefill-rounds 3 -o "$OUT/ab16k.csv" | grep -E "^prefill.*N=1 "
  for i in 1 2; do
    run 8 "main's build $i" "$KO" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 \
      --prefill-ab "main-$S;main-$O" --prefill-rounds 1 -o "$OUT/main$i.csv" | grep -E "^prefill.*N=1 "
    run 8 "this build $i" "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32 \
      --prefill-ab "$S;$O${WGG:+;$W}" --prefill-rounds 1 -o "$OUT/new$i.csv" | grep -E "^prefill.*N=1 "
  done
  [ -n "$WGG" ] && run 35 "grid" "$K" --only prefill --prefill-t 1024,4096,16384 --prefill-h 12,24,48,96 --prefill-state fp32,bf16 \
    --prefill-ab "$S;$WGG" --prefill-rounds 2 -o "$OUT/grid.csv" | grep -E "^prefill"
  KDA_TEST_WGMMA_SMALL=1 KDA_TEST_FILTER='*prefill_wgmma*' run 15 "memcheck wgmma (smallest)" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  KDA_TEST_WGMMA_SMALL=1 KDA_TEST_FILTER='*prefill_wgmma*' run 15 "racecheck wgmma (smallest)" \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T" | tail -n 3
  KDA_TEST_FILTER='*prefill_overlap_split*' run 15 "memcheck split" \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" | tail -n 3
  echo "== SASS counts (per kernel: HGMMA HMMA LDSM BAR WARPGROUP all)"
  timeout 10 cuobjdump -sass "$K" 2>/dev/null | awk '
    /Function :/ { if (f) printf "%s HGMMA %d HMMA %d LDSM %d BAR %d WG %d all %d\n", f, hg, hm, ls, br, wg, n; f = ""; hg = hm = ls = br = wg = n = 0;
                   if ($0 ~ /recurrent|intra/) f = $3 }
    f && /HGMMA/ { hg++ } f && /HMMA/ { hm++ } f && /LDSM/ { ls++ } f && /BAR\.SYNC/ { br++ } f && /WARPGROUP/ { wg++ } f && /\/\*[0-9a-f]+\*\// { n++ }
    END { if (f) printf "%s HGMMA %d HMMA %d LDSM %d BAR %d WG %d all %d\n", f, hg, hm, ls, br, wg, n }' | sed -E 's/_ZN[0-9]+_GLOBAL__N__[0-9a-f_]+kda_prefill_cu_[0-9a-f]+//'
  l=$(( $(left) - 6 ))
  if [ "$l" -gt 14 ] && [ -n "$WGG" ]; then
    echo "== ncu serial pair at T = 4K, H = 96 (mma, then wgmma), limit $l s"
    for r in mma wgmma; do
      K3_KDA_RECUR=$r timeout $(( l / 2 )) ncu --clock-control none --kernel-name regex:kda_chunk_ --launch-count 2 \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        "$K" --only prefill --prefill-t 4096 --prefill-h 96 --quick > "$OUT/ncu-$r.txt" 2>&1
      echo "== ncu $r: exit $?"
      grep -E "kda_chunk|Duration|SM Frequency|Issue Slots Busy|Compute \(SM\) Throughput|Memory Throughput|No Eligible|Warp Cycles Per Issued" "$OUT/ncu-$r.txt" | cut -c1-120 | head -24
    done
  fi
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -9 "$OUT/smi.csv" "$OUT/tests.txt"
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|RACECHECK|Failure|16384 +H=96|HGMMA" "$OUT/log.txt" | cut -c1-150 | head -n 150
