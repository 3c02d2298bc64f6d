#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 ~16:40 UTC, nvidia-h200, carry .gpu (with .gpu/ab/{old,new}/ holding the two builds' 
# kda-bench and test-kda-gpu): Kh-product A/B 
# (bench/results/kda-prefill-h200-2026-11-29-mma/kh-product).
O=$OUT; A=.gpu/ab
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64
date -u > $O/device.txt
timeout 200 $A/new/test-kda-gpu > $O/test-gpu-new.log 2>&1; echo "tests new rc=$?"; grep -E "prefill outputs|final states|PASSED|FAILED" $O/test-gpu-new.log | tail -14
KDA_TEST_FILTER=test_prefill_varlen timeout 150 compute-sanitizer --tool memcheck $A/new/test-kda-gpu > $O/san-memcheck.log 2>&1; echo "memcheck rc=$? $(tail -1 $O/san-memcheck.log)"
KDA_TEST_FILTER=test_prefill_varlen timeout 150 compute-sanitizer --tool racecheck $A/new/test-kda-gpu > $O/san-racecheck.log 2>&1; echo "racecheck rc=$? $(tail -1 $O/san-racecheck.log)"
for v in old new old2 new2; do b=${v%2}; timeout 150 $A/$b/kda-bench --only prefill -o $O/prefill-$v.csv > $O/bench-$v.log 2>&1; echo "$v rc=$?"; done
for v in old new old2 new2; do echo "== $v"; awk -F, '$1 ~ /prefill/ && ($5==96 || $1 ~ /varlen/) {printf "%s %s b=%s t=%s h=%s total %.1f intra %.1f recur %.1f\n",$1,$2,$3,$4,$5,$8,$18,$19}' $O/prefill-$v.csv; done
