#!/usr/bin/env bash
# Second device call of issue 17 item 5, round 2026-12-01r (one nvidia-h200, ~2 minutes). Call 1
# (k3-2026-12-01r.sh) measured at T = 16K, H = 96: serial v1 2.29 ms, serial v2 (+ the two-step
# width rule) 2.10 ms, the overlapped path with v2 and 4-warp recurrent CTAs 1.82 ms; v3 and the
# split accumulators slower (removed). This call: the overlapped path's candidates (intra v2 or
# v2r = v2 at <= 48 registers; 3 or 4 recurrent stages) beside the serial default, --quick twice;
# the full prefill bench (H = 12..96, T = 1K..64K) serial and overlapped (which shapes gain);
# test-kda-gpu; memcheck and racecheck on the prefill variants (v1, v2, v2r, 3 stages, every
# width, the overlapped path) and memcheck on the overlap protocol; ncu on v2r alone (T = 4K).
# Staged beforehand: kda-bench, test-kda-gpu (stripped) in $PACK/pack.tar.xz, libcmocka.so.0 beside.
# From the repository root:  PACK=.gpu/h18c bash .gpu/h18c/k3-2026-12-01r2.sh
# $OUT gets: log.txt (from the caller's tee), bench.txt, full.txt, tests.txt, sanitizer.txt, ncu.txt,
# misc.tar.xz.
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

# name:environment (comma-separated assignments)
CONFIGS="serial:K3_KDA_PREFILL=serial overlap:K3_KDA_PREFILL=overlap
ov-v2-s4:K3_KDA_PREFILL=overlap,K3_KDA_INTRA=v2,K3_KDA_RECUR_STAGES=4
ov-v2r-s4:K3_KDA_PREFILL=overlap,K3_KDA_INTRA=v2r,K3_KDA_RECUR_STAGES=4
ov-v2-s3:K3_KDA_PREFILL=overlap,K3_KDA_INTRA=v2,K3_KDA_RECUR_STAGES=3
old:K3_KDA_PREFILL=serial,K3_KDA_INTRA=v1,K3_KDA_RECUR_WARPS=v1
serial:K3_KDA_PREFILL=serial overlap:K3_KDA_PREFILL=overlap ov-v2-s4:K3_KDA_PREFILL=overlap,K3_KDA_INTRA=v2,K3_KDA_RECUR_STAGES=4"
echo "== bench t=$(el)s"
i=0
for c in $CONFIGS; do
  i=$((i + 1))
  name=${c%%:*} envs=${c#*:}
  echo "### $name ($envs) $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)" >> "$OUT/bench.txt"
  env ${envs//,/ } timeout 40 "$BENCH" --only prefill --quick -o "$M/bench-$i-$name.csv" >> "$OUT/bench.txt" 2>&1
  echo "kda-bench $name rc=$? t=$(el)s"
done
grep -E "^(###|prefill)" "$OUT/bench.txt"
for m in serial overlap; do
  echo "### full $m $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)" >> "$OUT/full.txt"
  K3_KDA_PREFILL=$m timeout 60 "$BENCH" --only prefill -o "$M/full-$m.csv" >> "$OUT/full.txt" 2>&1
  echo "kda-bench full $m rc=$? t=$(el)s"
done
grep -E "^(###|prefill)" "$OUT/full.txt"

echo "== test-kda-gpu t=$(el)s"
timeout 120 "$TEST" > "$OUT/tests.txt" 2>&1
echo "test-kda-gpu rc=$? t=$(el)s"
grep -E "^\[ *(OK|FAILED|PASSED|ERROR) *\]|differ|Failure|error" "$OUT/tests.txt"

echo "== sanitizers t=$(el)s"
for tc in "memcheck test_prefill_variants" "memcheck test_prefill_overlap" "racecheck test_prefill_variants" \
  "racecheck test_prefill_overlap"; do
  set -- $tc
  echo "### $1 $2" >> "$OUT/sanitizer.txt"
  KDA_TEST_FILTER=$2 timeout 50 compute-sanitizer --tool "$1" --error-exitcode 9 "$TEST" >> "$OUT/sanitizer.txt" 2>&1
  echo "$1 $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.txt" | tail -1) t=$(el)s"
done

NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis
  --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum"
echo "== ncu t=$(el)s"
{
  echo "== ncu intra v2r (T = 4096, H = 96, fp32, first launch)"
  K3_KDA_INTRA=v2r timeout 40 "$NCU" --clock-control none -k regex:kda_chunk_intra --launch-count 1 $SEC \
    "$BENCH" --only prefill --quick -o /dev/null 2>&1 | grep -v "^prefill" | tail -140
  echo "== ncu exit ${PIPESTATUS[0]}"
} > "$OUT/ncu.txt" 2>&1
grep -E "^== |Duration|DRAM Throughput|Compute \(SM\)|L1/TEX Cache|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible" "$OUT/ncu.txt"
kill "$smi" 2>/dev/null
tar cJf "$OUT/misc.tar.xz" -C "$OUT" misc && rm -rf "$M"
echo "done t=$(el)s"
