#!/usr/bin/env bash
# Issue 17, helper i26c, device call 1 (one nvidia-h200, <= 140 s with the start): MLA decode with
# the FP8 cache at 8K. This build: mla_decode_args::overlap_prev (the split kernel as a programmatic
# dependent launch: its first stages of the cached prefix copied under the previous grid's tail;
# k3-bench K3_BENCH_MLA_OVERLAP=1) and the second protocol for the MLA rows (K3_BENCH_MLA_B2B:
# back to back over the cache sets beside a copy of the same bytes timed the same way).
#  1. test-mla-gpu (19 tests, float64; new fp8_overlap_prev);
#  2. k3-bench FP8 H 16 / 12, B 64 / 128, 8K: default, ab overlap, ab2 the copy pipeline alone
#     (K3_MLA_FP8S_DIAG=mem), ab3 the tile loop alone (=compute), ab4 / ab5 an L2 prefetch 2 / 4
#     tiles ahead of the stage copies (K3_MLA_FP8S_L2PF), in one process (single launches after a
#     cold L2, graph steady, back to back + the copy beside); at the end again: default, overlap,
#     default, overlap, L2PF 2, L2PF 2 + overlap;
#  3. ncu --set full of one mla_fp8s_kernel launch (H 16, B 64, 8K): pipes, stalls, source;
#  4. memcheck of fp8_overlap_prev; the same bench again if time is left.
# From the repository root:  PACK=.gpu/i26c bash .gpu/i26c/k3-2026-12-02u.sh
set -u
PACK=${PACK:-.gpu/i26c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
LIMIT=${LIMIT:-70}
mkdir -p "$OUT"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$OUT/env.txt" "$OUT/smi.csv" || exit 2
unset K3_MLA_FP8S_FRAME K3_MLA_FP8_KERNEL K3_MLA_FP8S_COMBINE K3_MLA_FP8S_SKEW K3_MLA_FP8S_PDL
run() {  # name seconds env... -- command...
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "== $name: no time left"; return; }
  local s; s=$(date +%s)
  echo "== $name (at $(( s - t0 )) s)"
  timeout "$lim" env "$@" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
}
AB="K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_DIAG=mem;K3_MLA_FP8S_DIAG=compute;K3_MLA_FP8S_L2PF=2;K3_MLA_FP8S_L2PF=4"
AB2="K3_BENCH_MLA_OVERLAP=1;K3_BENCH_MLA_OVERLAP=0;K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_L2PF=2;K3_MLA_FP8S_L2PF=2 K3_BENCH_MLA_OVERLAP=1"
{
  run "mla-gpu (default)" 20 X=1 "$B/test-mla-gpu"
  run "k3-bench 1: default, ab overlap, ab2 mem, ab3 compute, ab4 L2PF 2, ab5 L2PF 4" 22 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-1.csv" > "$OUT/bench.txt"
  echo "== ncu (at $(( $(date +%s) - t0 )) s)"
  l=$(( $(left) - 12 )); [ "$l" -gt 30 ] && l=30
  if [ "$l" -gt 12 ]; then
    K3_BENCH_MLA_BATCHES=5 timeout "$l" ncu --set full --import-source no --kernel-name regex:mla_fp8s_kernel \
      --launch-skip 3 --launch-count 1 -o "$OUT/ncu-b64" -f "$B/k3-bench" --only mla_decode --reps 1 > "$OUT/ncu.log" 2>&1
    echo "== ncu: exit $?"
    [ -f "$OUT/ncu-b64.ncu-rep" ] && timeout 8 ncu -i "$OUT/ncu-b64.ncu-rep" --page details > "$OUT/ncu-details.txt" 2>&1
    [ -f "$OUT/ncu-b64.ncu-rep" ] && timeout 8 ncu -i "$OUT/ncu-b64.ncu-rep" --page raw --csv > "$OUT/ncu-raw.csv" 2>&1
    [ -f "$OUT/ncu-b64.ncu-rep" ] && timeout 10 ncu -i "$OUT/ncu-b64.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-sass.csv" 2>&1
    xz -T0 -3 -f "$OUT/ncu-raw.csv" "$OUT/ncu-sass.csv" "$OUT/ncu-b64.ncu-rep" 2>/dev/null
  fi
  run "memcheck fp8_overlap_prev" 14 MLA_TEST_FILTER='*overlap*' compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test-mla-gpu" > "$OUT/memcheck.txt"
  tail -n 2 "$OUT/memcheck.txt"
  run "k3-bench 2: default, overlap, default, overlap, L2PF 2, L2PF 2 + overlap" 20 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB2" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-2.csv" >> "$OUT/bench.txt"
} > "$OUT/log.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
xz -T0 -3 -f "$OUT/smi.csv" 2>/dev/null
grep -E "^==|FAILED|PASSED|ERROR SUMMARY|OK \]" "$OUT/log.txt" | cut -c1-150 | head -n 60
grep -E "mla_decode|back to back" "$OUT/bench.txt" | cut -c1-230 | head -n 60
grep -E "Duration|SM Frequency|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Pipe|Registers|Throughput" "$OUT/ncu-details.txt" 2>/dev/null | head -30
