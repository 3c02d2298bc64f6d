#!/usr/bin/env bash
# Issue 17, round za, call 2 (one nvidia-h200, <= ~140 s of work): the restructured grouped wgmma
# kernel. test-moe-gpu's wgmma tests (float64 references, unchanged tolerances; round q's kernel,
# the branch-free epilogue (epi) and the wide kernel (chunks of <= 176 tokens, clusters of 2));
# compute-sanitizer memcheck + racecheck on the new small test; k3-bench --only moe_prefill --quick
# with K3_BENCH_WG_KERNELS=q,epi,wide,q,epi,wide (BF16 and MXFP4 w13/w2 at T = 16K, each beside
# cuBLASLt, in one process); spill counts (LDL/STL) of the kernels' SASS. nvidia-smi every 500 ms.
# From the repository root:  PACK=.gpu/h20a bash .gpu/h20a/call2.sh
# $OUT gets: tests.txt bench.txt sass.txt misc.tar.xz (env, smi, CSV, sanitizer logs).
set -u
PACK=${PACK:-.gpu/h20a}
B=${BUILD:-$PACK/k3-build}
OUT=${OUT:-$PWD/k3-out}
M=$OUT/misc
LIMIT=${LIMIT:-140}
mkdir -p "$OUT" "$M"
t0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
. "$PACK/device-env.sh" || exit 2
device_env "$M/k3-env.txt" "$M/k3-smi.csv" || exit 2
T=$B/tests/kernels
K=$B/kernels
unset K3_GEMM_WG_CLUSTER K3_GEMM_WG_WEIGHTS K3_GEMM_WG_KERNEL
{
  echo "==== moe_prefill (limit 40 s)"
  K3_BENCH_WG_KERNELS=q,epi,wide,q,epi,wide timeout 40 "$K/k3-bench" --only moe_prefill --quick -o "$M/bench.csv" 2>&1
  echo "==== exit $? at $(( $(date +%s) - t0 )) s"
} > "$OUT/bench.txt" 2>&1
{
  echo "== moe-gpu *wgmma*"
  MOE_TEST_FILTER='*wgmma*' timeout 50 "$T/test-moe-gpu" 2>&1 | grep -E "err/tol|K3_GEMM_WG|^\[ *(OK|FAILED|PASSED|ERROR|SKIPPED)|Failure|error" | tail -80
  echo "== moe-gpu: exit ${PIPESTATUS[0]} at $(( $(date +%s) - t0 )) s"
  for tool in memcheck racecheck; do
    l=$(( $(left) - 12 )); [ "$l" -gt 8 ] || { echo "no time for $tool"; continue; }
    [ "$l" -gt 30 ] && l=30
    echo "== $tool moe *wide_small* (limit $l s)"
    MOE_TEST_FILTER='*wide_small*' timeout "$l" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T/test-moe-gpu" > "$M/san-$tool.txt" 2>&1
    echo "== $tool: exit $? at $(( $(date +%s) - t0 )) s"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$M/san-$tool.txt" | tail -4
    grep -E "hazard|Race|Invalid" "$M/san-$tool.txt" | head -6
  done
} > "$OUT/tests.txt" 2>&1
{
  l=$(( $(left) - 5 )); [ "$l" -gt 3 ] || l=3
  timeout "$l" cuobjdump -sass "$K/k3-bench" 2>/dev/null | awk '
    /Function :/ { if (f) printf "%s LDL %d STL %d HGMMA %d\n", f, ldl, stl, hg; f = ""; ldl = stl = hg = 0;
                   if ($0 ~ /wg_kernel/) f = $3 }
    f && /LDL/ { ldl++ } f && /STL/ { stl++ } f && /HGMMA/ { hg++ }
    END { if (f) printf "%s LDL %d STL %d HGMMA %d\n", f, ldl, stl, hg }'
} > "$OUT/sass.txt" 2>&1
kill "$SMI_PID"
tar cJf "$OUT/misc.tar.xz" -C "$M" .
rm -rf "$M"
grep -E "^==|SUMMARY|FAILED|Failure|PASSED|hazard|Invalid" "$OUT/tests.txt" | head -24
grep -E "grouped_gemm|cublasLt|====" "$OUT/bench.txt" | sed -e 's/tokens=16384 m=262144 //' -e 's/touched=896 //' | cut -c1-170
awk '$3 > 0 || $5 > 0' "$OUT/sass.txt" | head -12
echo "call: $(( $(date +%s) - t0 )) s"
