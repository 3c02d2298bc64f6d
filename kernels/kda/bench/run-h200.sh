#!/bin/sh
# One device call: GPU correctness tests, the bench grid, then sanitizer
# passes on small cases. Built beforehand on the build machine:
#   meson setup build-kgpu -Dprefer_static=true -Dbuildtype=release
#   ninja -C build-kgpu kernels/kda-bench tests/kernels/test-kda-gpu tests/kernels/test-kda-ref
#   mkdir -p .gpu && cp /usr/lib/x86_64-linux-gnu/libcmocka.so.0 .gpu/
# then, on the GPU machine (carry build-kgpu and .gpu):
#   sh kernels/kda/bench/run-h200.sh [bench args...]
# Logs and CSV go to $OUT (or ./kda-out).
B=${BUILD:-build-kgpu}
O=${OUT:-kda-out}
mkdir -p "$O"
export LD_LIBRARY_PATH="$PWD/.gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
} >"$O/device.txt" 2>&1
cat "$O/device.txt"
echo "== unit (CPU references)"
timeout 60 "$B/tests/kernels/test-kda-ref" >"$O/test-ref.log" 2>&1; echo "test-kda-ref rc=$?"
echo "== gpu tests"
timeout 240 "$B/tests/kernels/test-kda-gpu" >"$O/test-gpu.log" 2>&1; rc=$?
grep -E "rel err|first chunk|OK|FAILED|PASSED|ERROR|error" "$O/test-gpu.log" | tail -60
echo "test-kda-gpu rc=$rc"
echo "== bench"
timeout 300 "$B/kernels/kda-bench" -o "$O/kda-h200.csv" "$@" 2>&1 | tee "$O/bench.log" | tail -45
if command -v compute-sanitizer >/dev/null 2>&1 && [ -z "$NO_SANITIZER" ]; then
	echo "== sanitizers"
	: >"$O/sanitizer.log"
	for tool in racecheck memcheck; do
		for f in test_verify_replay_fp32 test_prefill_varlen; do
			echo "### $tool $f" >>"$O/sanitizer.log"
			KDA_TEST_FILTER=$f timeout 90 compute-sanitizer --tool $tool \
				"$B/tests/kernels/test-kda-gpu" >>"$O/sanitizer.log" 2>&1
			echo "$tool $f rc=$? $(tail -1 "$O/sanitizer.log")"
		done
	done
fi
# Optional: fla's Triton chunk_kda beside ours (fla source carried in .fla, never committed).
if [ -d .fla/fla ] && [ -z "$NO_FLA" ]; then
	echo "== fla chunk_kda"
	PYTHONPATH="$PWD/.fla" TRITON_CACHE_DIR=/tmp/triton-cache PYTHONUNBUFFERED=1 \
		timeout "${FLA_TIMEOUT:-240}" python3 kernels/kda/bench/fla_compare.py "$O/fla-h200.csv" \
		>"$O/fla.log" 2>&1
	echo "fla rc=$?"
	grep -E "fla chunk_kda|torch|Error|error" "$O/fla.log" | tail -12
fi
