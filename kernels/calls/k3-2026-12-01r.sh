#!/usr/bin/env bash
# First device call of issue 17 item 5, round 2026-12-01r (one nvidia-h200, ~2.5 minutes): the v2
# intra kernel (channel pairs x 8 tokens a thread, q/k/g straight from global memory, warp
# reduce-scatter norms, 8 CTAs an SM), v3 (v2's work in persistent CTAs that load the next item
# while computing one) and the recurrent CTA width rule (T = 16K, H = 96: 2 warps, 384 CTAs)
# against the previous kernels, all selectable: K3_KDA_INTRA=v1|v3, K3_KDA_RECUR_WARPS=v1|1|2|4|8;
# the recurrent kernel with split accumulator chains (K3_KDA_RECUR_ILP=1).
# Runs: kda-bench --only prefill --quick under 13 configurations (old, new, each half alone, v3,
# 1-warp CTAs, split accumulators, the overlapped path), old and new twice; kda-bench --only
# decode --quick once (baseline); test-kda-gpu (all cases); compute-sanitizer memcheck on the
# prefill cases, racecheck on test_prefill_varlen (v2; v3 with 8 CTAs looping over the items); ncu on the v2
# and v3 intra kernels (T = 4096) and the recurrent kernel at T = 16K under 2 and 4 warps; nvidia-smi
# sampled every 500 ms.
# Staged beforehand: kda-bench, test-kda-gpu (stripped) in $PACK/pack.tar.xz, libcmocka.so.0 beside.
# From the repository root:  PACK=.gpu/h18c bash .gpu/h18c/k3-2026-12-01r.sh
# $OUT gets: log.txt (from the caller's tee), bench.txt, tests.txt, sanitizer.txt, ncu.txt, misc.tar.xz.
set -u
PACK=${PACK:-.gpu/h18c}
OUT=${OUT:-$PWD/h18c-out}
M=$OUT/misc
mkdir -p "$OUT" "$M"
t0=$(date +%s)
[ -x "$PACK/kda-bench" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK" || { echo "cannot unpack"; exit 2; }
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
BENCH=$PACK/kda-bench
TEST=$PACK/test-kda-gpu
el() { echo $(( $(date +%s) - t0 )); }
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit,temperature.gpu --format=csv
} > "$M/env.txt" 2>&1
cat "$M/env.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$M/smi.csv" 2>&1 &
smi=$!

# name:environment (comma-separated assignments; "-" for none)
CONFIGS="old:K3_KDA_INTRA=v1,K3_KDA_RECUR_WARPS=v1 new:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=v2
v2only:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=v1 warpsonly:K3_KDA_INTRA=v1,K3_KDA_RECUR_WARPS=v2
v3:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=v2 v3w4:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=v1
v3ilp:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=v2,K3_KDA_RECUR_ILP=1 w1:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=1
ilp:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=v2,K3_KDA_RECUR_ILP=1 ilpw4:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=v1,K3_KDA_RECUR_ILP=1
overlap:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=v2,K3_KDA_PREFILL=overlap
overlapw4:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=v1,K3_KDA_PREFILL=overlap
v3overlap:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=v2,K3_KDA_PREFILL=overlap
old:K3_KDA_INTRA=v1,K3_KDA_RECUR_WARPS=v1 new:K3_KDA_INTRA=v2,K3_KDA_RECUR_WARPS=v2"
echo "== bench t=$(el)s"
i=0
for c in $CONFIGS; do
  i=$((i + 1))
  name=${c%%:*} envs=${c#*:}
  [ "$envs" = "-" ] && envs=""
  echo "### $name ($envs) $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)" >> "$OUT/bench.txt"
  env ${envs//,/ } timeout 40 "$BENCH" --only prefill --quick -o "$M/bench-$i-$name.csv" >> "$OUT/bench.txt" 2>&1
  echo "kda-bench $name rc=$? t=$(el)s"
done
echo "### decode $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)" >> "$OUT/bench.txt"
timeout 60 "$BENCH" --only decode --quick -o "$M/bench-decode.csv" >> "$OUT/bench.txt" 2>&1
echo "kda-bench decode rc=$? t=$(el)s"
grep -E "^(###|prefill)" "$OUT/bench.txt"

echo "== test-kda-gpu t=$(el)s"
timeout 120 "$TEST" > "$OUT/tests.txt" 2>&1
echo "test-kda-gpu rc=$? t=$(el)s"
grep -E "^\[ *(OK|FAILED|PASSED|ERROR) *\]|differ|Failure|error" "$OUT/tests.txt"

echo "== sanitizers t=$(el)s"
for tc in "memcheck test_prefill_variants -" "memcheck test_prefill_overlap -" \
  "racecheck test_prefill_varlen -" "racecheck test_prefill_varlen K3_KDA_INTRA=v3,K3_KDA_INTRA_CTAS=8" \
  "memcheck test_prefill_varlen K3_KDA_INTRA=v3,K3_KDA_INTRA_CTAS=8"; do
  set -- $tc
  [ "$3" = "-" ] && e="" || e=${3//,/ }
  echo "### $1 $2 $e" >> "$OUT/sanitizer.txt"
  env $e KDA_TEST_FILTER=$2 timeout 45 compute-sanitizer --tool "$1" --error-exitcode 9 "$TEST" >> "$OUT/sanitizer.txt" 2>&1
  echo "$1 $2 $e rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.txt" | tail -1) t=$(el)s"
done

NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis
  --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum"
echo "== ncu t=$(el)s"
{
  for c in "v2 K3_KDA_INTRA=v2" "v3 K3_KDA_INTRA=v3"; do
    set -- $c
    echo "== ncu intra $1 (T = 4096, H = 96, fp32, first launch)"
    [ "$2" = "-" ] && e="" || e=$2
    env $e timeout 40 "$NCU" --clock-control none -k regex:kda_chunk_intra --launch-count 1 $SEC \
      "$BENCH" --only prefill --quick -o /dev/null 2>&1 | grep -v "^prefill" | tail -140
    echo "== ncu exit ${PIPESTATUS[0]}"
  done
  for w in 2 4; do
    echo "== ncu recurrent K3_KDA_RECUR_WARPS=$w (T = 16384, H = 96, fp32, first launch)"
    K3_KDA_RECUR_WARPS=$w timeout 40 "$NCU" --clock-control none -k regex:kda_chunk_recurrent --launch-skip 7 \
      --launch-count 1 $SEC "$BENCH" --only prefill --quick -o /dev/null 2>&1 | grep -v "^prefill" | tail -140
    echo "== ncu exit ${PIPESTATUS[0]}"
  done
} > "$OUT/ncu.txt" 2>&1
grep -E "^== |Duration|DRAM Throughput|Compute \(SM\)|L1/TEX Cache|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible" "$OUT/ncu.txt"
kill "$smi" 2>/dev/null
tar cJf "$OUT/misc.tar.xz" -C "$OUT" misc && rm -rf "$M"
echo "done t=$(el)s"
