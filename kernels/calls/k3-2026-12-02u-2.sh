#!/usr/bin/env bash
# Issue 17, helper i26c, device call 2 (one nvidia-h200, <= 140 s with the start), after call 1
# (k3-2026-12-02u.sh: the tile loop alone, K3_MLA_FP8S_DIAG=compute, took 96 % of the split
# kernel's time at B 64 / 128, 8K, the copy pipeline alone 76-88 %: the loop binds; ncu: 2.4 warps a
# scheduler, 0.64 eligible, issue 44 %, no pipe above 40 %: latency-bound; the L2 prefetch lost,
# removed). This build: K3_MLA_FP8S_QK=2, QK^T's 8 k steps of each n-tile as two chains of 4.
#  1. test-mla-gpu (19 tests, float64), its FP8 cases with K3_MLA_FP8S_QK=2; test-dsa-gpu both;
#  2. k3-bench FP8 8K H 16 / 12 B 64 / 128, 8K-64K H 16 B 64 / 128, and the default grid (BF16,
#     t = 1, 2, 4): default, ab QK 2, ab2 overlap_prev, ab3 QK 2 + overlap_prev, ab4 default again,
#     in one process, with the back-to-back protocol beside each FP8 row of up to 32 query rows;
#  3. racecheck of fp8_overlap_prev, memcheck + racecheck of fp8_tile_edges with QK 2;
#  4. ncu (warp states, source counters) of the default and QK 2 kernels, H 16 B 64 8K; bench again.
# From the repository root:  PACK=.gpu/i26c bash .gpu/i26c/k3-2026-12-02u-2.sh
set -u
PACK=${PACK:-.gpu/i26c}
B=${BUILD:-$PACK/b}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-95}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/env.txt" "$M/smi.csv" || exit 2
unset K3_MLA_FP8S_FRAME K3_MLA_FP8_KERNEL K3_MLA_FP8S_COMBINE K3_MLA_FP8S_SKEW K3_MLA_FP8S_PDL K3_MLA_FP8S_QK
run() {  # name seconds env... -- command...
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "== $name: no time left"; return; }
  local s; s=$(date +%s)
  echo "== $name (at $(( s - t0 )) s)"
  timeout "$lim" env "$@" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
}
AB="K3_MLA_FP8S_QK=2;K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_QK=2 K3_BENCH_MLA_OVERLAP=1;K3_MLA_FP8S_QK=1"
{
  run "mla-gpu (default)" 20 X=1 "$B/test-mla-gpu"
  run "mla-gpu fp8 + sparse, QK 2" 16 K3_MLA_FP8S_QK=2 MLA_TEST_FILTER='*fp8*' "$B/test-mla-gpu"
  run "dsa-gpu (default)" 10 X=1 "$B/test-dsa-gpu"
  run "dsa-gpu, QK 2" 10 K3_MLA_FP8S_QK=2 "$B/test-dsa-gpu"
} > "$M/tests.txt" 2>&1
grep -E "^==|FAILED|PASSED|\[  FAILED|rel err|SKIPPED" "$M/tests.txt" | head -40
{
  run "k3-bench 1: 8K, default, ab QK 2, ab2 overlap, ab3 QK 2 + overlap, ab4 default" 15 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-1.csv"
  run "k3-bench 2: H 16, 8K-64K" 15 K3_BENCH_MLA_B2B=1 \
    K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=3 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-2.csv"
} > "$OUT/bench.txt" 2>&1
san() {  # tool filter seconds [env]
  local l; l=$(left); local lim=$3; [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 '$2': no time left"; return; }
  local s; s=$(date +%s)
  env MLA_TEST_FILTER="$2" ${4:-X=1} timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$B/test-mla-gpu" > "$M/san-$1.log" 2>&1
  local rc=$?
  echo "$1 '$2' ${4:-}: exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san-$1.log" | tail -1)"
  [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|SKIPPED" "$M/san-$1.log" | head -8 | sed 's/^/    /'
  cat "$M/san-$1.log" >> "$M/san.txt"; rm -f "$M/san-$1.log"
}
{
  echo "== compute-sanitizer (at $(( $(date +%s) - t0 )) s)"
  san racecheck '*overlap*' 20
  san memcheck '*fp8_tile_edges*' 10 K3_MLA_FP8S_QK=2
  san racecheck '*fp8_tile_edges*' 15 K3_MLA_FP8S_QK=2
} > "$OUT/san-summary.txt" 2>&1
cat "$OUT/san-summary.txt"
{
  for v in 1 2; do
    l=$(( $(left) - 10 )); [ "$l" -gt 25 ] && l=25
    [ "$l" -gt 10 ] || { echo "== ncu QK $v: no time"; continue; }
    echo "== ncu QK $v (at $(( $(date +%s) - t0 )) s, limit $l s)"
    K3_MLA_FP8S_QK=$v K3_BENCH_MLA_BATCHES=5 timeout "$l" ncu --section WarpStateStats --section SourceCounters \
      --section SchedulerStats --section SpeedOfLight --section ComputeWorkloadAnalysis --import-source no \
      --kernel-name regex:mla_fp8s_kernel --launch-skip 3 --launch-count 1 -o "$M/ncu-qk$v" -f \
      "$B/k3-bench" --only mla_decode --reps 1 > "$M/ncu-qk$v.log" 2>&1
    echo "== ncu QK $v: exit $?"
    [ -f "$M/ncu-qk$v.ncu-rep" ] || continue
    timeout 8 ncu -i "$M/ncu-qk$v.ncu-rep" --page details > "$M/ncu-qk$v-details.txt" 2>&1
    timeout 8 ncu -i "$M/ncu-qk$v.ncu-rep" --page raw --csv > "$M/ncu-qk$v-raw.csv" 2>&1
    timeout 10 ncu -i "$M/ncu-qk$v.ncu-rep" --page source --csv --print-source sass > "$M/ncu-qk$v-sass.csv" 2>&1
    python3 - "$M/ncu-qk$v-raw.csv" <<'PY' 2>&1 | head -40
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h, u, v = rows[0], rows[1], rows[2]
for i, n in enumerate(h):
    if ("issue_stalled" in n or ("pipe" in n and "pct" in n) or "issue_active" in n) and v[i] not in ("", "0"):
        try:
            if float(v[i].replace(",", "")) < 0.02: continue
        except ValueError: continue
        print(n, v[i], u[i])
PY
  done
} > "$OUT/ncu-summary.txt" 2>&1
cat "$OUT/ncu-summary.txt" | cut -c1-160 | head -90
run "k3-bench 3: 8K again" 15 K3_BENCH_MLA_B2B=1 \
  K3_BENCH_MLA_AB="$AB" K3_BENCH_MLA_BATCHES=4 "$B/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-3.csv" >> "$OUT/bench.txt" 2>&1
run "k3-bench 4: the default grid (BF16, t 1-4), FP8 rows with QK 2 beside" 15 K3_BENCH_MLA_AB="K3_MLA_FP8S_QK=2" \
  "$B/k3-bench" --only mla_decode --reps 5 -o "$M/bench-grid.csv" >> "$OUT/bench.txt" 2>&1
kill "$SMI_PID" 2>/dev/null
rm -f "$M"/*.ncu-rep
tar cf - -C "$M" . | xz -T0 -6 > "$OUT/misc.tar.xz" && rm -rf "$M"
grep -E "^==" "$OUT/bench.txt"
grep -E "mla_decode|back to back" "$OUT/bench.txt" | sed -E 's/cache bytes, back to back \(48 launches over ([0-9]) cache sets, ([0-9]+) MB a launch, L2 60 MB\)/b2b(\1)/; s/copy of the same bytes back to back \(3 sets\)/copyb2b/' | cut -c1-175 | head -n 70
