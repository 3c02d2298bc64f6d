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
	KDA_TEST_FILTER='test_verify_replay_fp32' timeout 90 compute-sanitizer --tool racecheck \
		"$B/tests/kernels/test-kda-gpu" >"$O/racecheck-step.log" 2>&1
	echo "racecheck step rc=$? $(grep -c 'Hazard\|ERROR' "$O/racecheck-step.log") hazard lines"
	KDA_TEST_FILTER='test_prefill_varlen' timeout 90 compute-sanitizer --tool racecheck \
		"$B/tests/kernels/test-kda-gpu" >"$O/racecheck-prefill.log" 2>&1
	echo "racecheck prefill rc=$? $(grep -c 'Hazard\|ERROR' "$O/racecheck-prefill.log") hazard lines"
	KDA_TEST_FILTER='test_prefill_varlen' timeout 90 compute-sanitizer --tool memcheck \
		"$B/tests/kernels/test-kda-gpu" >"$O/memcheck-prefill.log" 2>&1
	echo "memcheck prefill rc=$? $(tail -1 "$O/memcheck-prefill.log")"
fi
