#!/bin/sh
# Device call of issue 4, run from the repository root on the GPU machine with $OUT set (the run tool's):
# 2026-11-29 ~16:39 and ~16:41 UTC, nvidia-h200, carry build-gpu .gpu: tensor-core U/Wk variant, 
# both tries, this same file (bench/results/kda-prefill-h200-2026-11-29-mma and .../staged).
# The variant it selects (KDA_INTRA) is no longer in the tree: apply the patch in its result folder first.
B=build-gpu; O=$OUT; T=$B/tests/kernels/test-kda-gpu
export LD_LIBRARY_PATH=$PWD/.gpu:/usr/local/cuda/lib64
date -u > $O/device.txt
KDA_INTRA=mma timeout 200 $T > $O/test-gpu-mma.log 2>&1; echo "tests mma rc=$?"; grep -E "rel err|PASSED|FAILED" $O/test-gpu-mma.log | tail -30
for tool in memcheck racecheck; do KDA_INTRA=mma KDA_TEST_FILTER=test_prefill_varlen timeout 150 compute-sanitizer --tool $tool $T > $O/san-$tool.log 2>&1; echo "$tool rc=$? $(tail -1 $O/san-$tool.log)"; done
timeout 150 $B/kernels/kda-bench --only prefill -o $O/prefill-grid.csv > $O/bench-grid.log 2>&1; echo "grid rc=$?"
KDA_INTRA=mma timeout 150 $B/kernels/kda-bench --only prefill -o $O/prefill-mma.csv > $O/bench-mma.log 2>&1; echo "mma rc=$?"
timeout 150 $B/kernels/kda-bench --only prefill -o $O/prefill-grid2.csv > $O/bench-grid2.log 2>&1; echo "grid2 rc=$?"
for f in grid mma grid2; do echo "== $f"; awk -F, '$1 ~ /prefill/ {printf "%s %s b=%s t=%s h=%s total %.1f intra %.1f recur %.1f\n",$1,$2,$3,$4,$5,$8,$18,$19}' $O/prefill-$f.csv; done
