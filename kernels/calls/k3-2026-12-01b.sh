#!/usr/bin/env bash
# Device call of issue 17's second round (one nvidia-h200, at most 4 minutes): re-runs the K3
# kernels' GPU tests (the FP8 MLA / sparse-MLA LSE fix, the wgmma tiled GEMM against float64,
# both tiled kernels on every tiled case), compute-sanitizer on small cases (the wgmma GEMM
# too), the k3-bench quick grid under capture (wgmma and mma.sync tiled GEMMs beside cuBLASLt,
# the attention projections' shapes, MLA at 96 heads and ctx 4^k) and the four-layer slice under
# capture. If the wgmma GEMM's tests fail, the bench still runs both kernels but the slice runs
# with K3_GEMM_TILED=mma (the first call's kernels) and says so.
# Build and stage here first (the call carries .gpu alone, ~27 MB):
#   meson setup build-gpu -Dprefer_static=true -Dbuildtype=release && ninja -C build-gpu
#   bash kernels/stage-gpu.sh
# then: run(carry=[".gpu"], timeout_s=240,
#           command="BUILD=.gpu/k3-build bash kernels/calls/k3-2026-12-01b.sh")
# $OUT gets 8 files: k3-env.txt k3-tests.txt k3-bench.csv k3-bench.txt k3-h200.db.xz
# k3-slice.csv k3-slice.txt k3-slice.db.xz. Afterwards, here:
#   python3 kernels/slice/validate-slice.py --results DIR -o docs/perf/k3-slice-DATE.md
set -u
export BUILD=${BUILD:-$PWD/.gpu/k3-build}
export OUT=${OUT:-$PWD/k3-out}
mkdir -p "$OUT"
t0=$(date +%s)
timeout 175 bash kernels/run-gpu-k3.sh
echo "run-gpu-k3 exit $? at $(( $(date +%s) - t0 )) s"
if grep -q "== moe-gpu: exit 0," "$OUT/k3-tests.txt" && grep -qE "OK \] test_gemm_wgmma_tiles" "$OUT/k3-tests.txt"; then
  echo "slice: wgmma tiled GEMM (moe-gpu passed, test_gemm_wgmma_tiles included)"
else
  export K3_GEMM_TILED=mma
  echo "slice: K3_GEMM_TILED=mma (the wgmma GEMM's tests did not pass)"
fi
left=$(( 232 - ($(date +%s) - t0) ))
[ "$left" -gt 20 ] || { echo "no time left for the slice"; exit 1; }
timeout "$left" bash kernels/slice/run-slice.sh --quick
echo "slice exit $? at $(( $(date +%s) - t0 )) s"
grep -E "^== .*exit|gpu suite|^(memcheck|racecheck)|lse|wgmma" "$OUT/k3-tests.txt" | head -60
ls -la "$OUT"
