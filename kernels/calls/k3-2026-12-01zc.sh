#!/usr/bin/env bash
# Issue 17, helper h20c, device call 1 (nvidia-h200, < 150 s): the FP8 MLA decode kernel with one
# softmax a tile (mla_fp8s_kernel, K3_MLA_FP8_KERNEL=split, the new default up to 32 rows: softmax
# split over the 4 warps' token groups, P x scale and the frames through shared memory, stages
# refilled ~2.3 iterations ahead) against today's pipelined kernel (K3_MLA_FP8_KERNEL=pipe), BF16
# rows beside in each process:
#  1. test-mla-gpu (default), its FP8 cases with split for every shape (cc, ic), with pipe and reg
#     (both now through the shared fp8r_epilogue); test-dsa-gpu (sparse FP8 through the default);
#  2. k3-bench --only mla_decode: full grid default (split), full grid pipe, --quick split again;
#  3. ncu (--clock-control none, one FP8 launch, H 16, B 128, 8K, t 1) of pipe and split with
#     WarpStateStats + SourceCounters (+ scheduler, instruction stats): the details page and the
#     SASS source page (per-instruction stall samples) as CSV;
#  4. compute-sanitizer memcheck / racecheck of split (16 rows, tile edges, sparse, 8 tokens, DSA);
#  5. SASS opcode counts of both kernels; nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h20c LIMIT=140 bash .gpu/h20c/k3-2026-12-01zc.sh
# $OUT: k3-tests.txt k3-bench.txt bench-split.csv bench-pipe.csv k3-ncu.txt k3-misc.tar.xz k3-reps.tar.xz
set -u
PACK=${PACK:-.gpu/h20c}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
LIMIT=${LIMIT:-140}
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
[ -d "$PACK/bin" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack $PACK/pack.tar.xz"; exit 2; }
T=$PACK/bin
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
  nvcc --version 2>/dev/null | tail -1
  uname -r
} > "$M/k3-env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/k3-smi.csv" 2>&1 &
smi=$!
run() {  # name seconds env... -- command...
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "== $name: no time left"; return; }
  local s; s=$(date +%s)
  echo "== $name"
  timeout "$lim" env "$@" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
}
{
  run "mla-gpu (default: split up to 32 rows)" 20 X=1 "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, split every shape (cc)" 12 K3_MLA_FP8_KERNEL=split MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, split ic" 12 K3_MLA_FP8_KERNEL=split K3_MLA_FP8_CVT=ic MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, pipe" 12 K3_MLA_FP8_KERNEL=pipe MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "mla-gpu fp8 cases, reg" 12 K3_MLA_FP8_KERNEL=reg MLA_TEST_FILTER='*fp8*' "$T/test-mla-gpu"
  run "dsa-gpu (default)" 20 X=1 "$T/test-dsa-gpu"
} > "$OUT/k3-tests.txt" 2>&1
echo "tests done at $(( $(date +%s) - t0 )) s"
{
  run "k3-bench mla_decode default (split cc)" 25 X=1 "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-split.csv"
  run "k3-bench mla_decode pipe" 25 K3_MLA_FP8_KERNEL=pipe "$T/k3-bench" --only mla_decode --reps 10 -o "$OUT/bench-pipe.csv"
  run "k3-bench mla_decode split --quick (again, after pipe)" 8 K3_MLA_FP8_KERNEL=split "$T/k3-bench" --only mla_decode --quick --reps 10 -o "$M/b-split2.csv"
  run "k3-bench mla_decode split ic --quick" 8 K3_MLA_FP8_KERNEL=split K3_MLA_FP8_CVT=ic "$T/k3-bench" --only mla_decode --quick --reps 10 -o "$M/b-ic.csv"
} > "$OUT/k3-bench.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
{
  for kk in pipe split; do
    run "ncu $kk" 25 K3_MLA_FP8_KERNEL=$kk "$NCU" --clock-control none -k regex:mla_fp8 -s 2 -c 1 \
      --section WarpStateStats --section SourceCounters --section SchedulerStats --section InstructionStats \
      --section LaunchStats --section Occupancy -o "$M/ncu-$kk" "$T/k3-bench" --only mla_decode --quick --reps 3 -o /tmp/ncu-b.csv
    if [ -f "$M/ncu-$kk.ncu-rep" ]; then
      "$NCU" --import "$M/ncu-$kk.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$"
      "$NCU" --import "$M/ncu-$kk.ncu-rep" --page source --print-source sass --csv > "$M/ncu-$kk-sass.csv" 2>&1
      echo "sass page $kk: $(wc -l < "$M/ncu-$kk-sass.csv") lines"
      head -3 "$M/ncu-$kk-sass.csv" | cut -c1-600
    fi
  done
} > "$OUT/k3-ncu.txt" 2>&1
echo "ncu done at $(( $(date +%s) - t0 )) s"
san() {  # tool test filter-var filter seconds [env]
  local l; l=$(left); local lim=$5; [ "$l" -lt "$lim" ] && lim=$l
  [ "$lim" -gt 3 ] || { echo "$1 $2 '$4': no time left"; return; }
  local s; s=$(date +%s)
  env "$3=$4" ${6:-X=1} timeout "$lim" compute-sanitizer --tool "$1" --error-exitcode 9 "$T/test-$2-gpu" > "$M/san.log" 2>&1
  local rc=$?
  echo "$1 $2 '$4' ${6:-}: exit $rc ($(( $(date +%s) - s )) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$M/san.log" | tail -1)"
  [ $rc = 0 ] || grep -E "Invalid|Race|Error|error|FAILED|SKIPPED|lse|rel err" "$M/san.log" | head -12 | sed 's/^/    /'
}
{
  echo "== compute-sanitizer (default kernel: split up to 32 rows)"
  san memcheck mla MLA_TEST_FILTER '*fp8_small_heads*' 15
  san racecheck mla MLA_TEST_FILTER '*fp8_small_heads*' 20
  san memcheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 15
  san racecheck mla MLA_TEST_FILTER '*fp8_tile_edges*' 20
  san memcheck mla MLA_TEST_FILTER '*sparse_fp8*' 15
  san racecheck mla MLA_TEST_FILTER '*sparse_fp8*' 15
  san racecheck mla MLA_TEST_FILTER '*fp8_eight_tokens*' 15
  san memcheck dsa DSA_TEST_FILTER '*short_and_long*' 15
} >> "$OUT/k3-tests.txt" 2>&1
rm -f "$M/san.log"
cuobjdump -sass "$T/test-mla-gpu" > "$M/all.sass" 2>&1
awk '/Function :/ { keep = ($3 ~ /mla_fp8s_kernelILb0ELb0ELb0E/) } keep' "$M/all.sass" > "$M/fp8s-cc.sass"
awk '/Function :/ { keep = ($3 ~ /mla_fp8p_kernelILb0ELb0ELb0E/) } keep' "$M/all.sass" > "$M/fp8p-cc.sass"
{
  echo "opcode counts (static, whole kernel) of mla_fp8p_kernel<cc, dense> and mla_fp8s_kernel<cc, dense>"
  awk '/Function :/ { fn = $3; keep = (fn ~ /mla_fp8p_kernelILb0ELb0ELb0E|mla_fp8s_kernelILb0ELb0ELb0E/) }
       keep && /\/\*[0-9a-f]+\*\// { for (i = 1; i <= NF; i++) if ($i ~ /^[A-Z][A-Z0-9]+/) { split($i, a, "."); c[substr(fn, 1, 60) " " a[1]]++; break } }
       END { for (k in c) print c[k], k }' "$M/all.sass" | sort -k2,2 -k1,1nr
} > "$M/k3-sass.txt" 2>&1
rm -f "$M/all.sass"
kill "$smi" 2>/dev/null
mkdir -p "$OUT/reps"
mv "$M"/*.ncu-rep "$OUT/reps/" 2>/dev/null
tar cJf "$OUT/k3-reps.tar.xz" -C "$OUT/reps" . && rm -rf "$OUT/reps"
tar cJf "$OUT/k3-misc.tar.xz" -C "$M" . && rm -rf "$M"
grep -E "^== .*exit|PASSED|FAILED|worst|^(memcheck|racecheck)" "$OUT/k3-tests.txt" | head -40
grep -E "copy ceiling|^== " "$OUT/k3-bench.txt"
grep -E "^== |Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Registers Per|Stall|sass page" "$OUT/k3-ncu.txt" | head -30
for f in split pipe; do
  [ -f "$OUT/bench-$f.csv" ] || continue
  echo "-- $f: kv shape med_us %copy(med)"
  awk -F, 'NR > 1 && $1 ~ /mla_decode$/ && $2 ~ /fp8/ { print $2, $3, $4, $14 }' "$OUT/bench-$f.csv" | head -24
done
echo "call: $(( $(date +%s) - t0 )) s"
