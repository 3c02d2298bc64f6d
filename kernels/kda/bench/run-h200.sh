#!/bin/sh
# One device call: GPU correctness tests, the bench grid, sanitizer passes on
# small cases, optionally fla's chunk_kda beside ours. Built beforehand on
# the build machine (nothing is compiled on the GPU machine):
#   meson setup build-kgpu -Dprefer_static=true -Dbuildtype=release
#   ninja -C build-kgpu kernels/kda-bench tests/kernels/test-kda-gpu tests/kernels/test-kda-ref
#   mkdir -p .gpu && cp /usr/lib/x86_64-linux-gnu/libcmocka.so.0 .gpu/
# then, on the GPU machine (carry build-kgpu and .gpu; .fla for fla):
#   sh kernels/kda/bench/run-h200.sh [bench args...]
# Environment: BUILD (build dir), TEST_BIN, BENCH_BIN (binaries), SUFFIX (file
# name suffix, for a second variant in the same call), NO_SANITIZER, NO_FLA.
# Logs and CSV go to $OUT (or ./kda-out).
B=${BUILD:-build-kgpu}
TEST_BIN=${TEST_BIN:-$B/tests/kernels/test-kda-gpu}
BENCH_BIN=${BENCH_BIN:-$B/kernels/kda-bench}
S=${SUFFIX:-}
O=${OUT:-kda-out}
mkdir -p "$O"
export LD_LIBRARY_PATH="$PWD/.gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -z "$S" ]; then
	{
		date -u +%Y-%m-%dT%H:%M:%SZ
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
	} >"$O/device.txt" 2>&1
	cat "$O/device.txt"
	if [ -x "$B/tests/kernels/test-kda-ref" ]; then
		timeout 60 "$B/tests/kernels/test-kda-ref" >/dev/null 2>&1
		echo "test-kda-ref rc=$?"
	fi
fi
echo "== gpu tests $S"
timeout 240 "$TEST_BIN" >"$O/test-gpu$S.log" 2>&1
rc=$?
grep -E "^\[ *(OK|FAILED|PASSED|ERROR) *\]|Failure|error" "$O/test-gpu$S.log" | tail -20
echo "test-kda-gpu$S rc=$rc"
echo "== bench $S"
timeout 300 "$BENCH_BIN" -o "$O/kda-h200$S.csv" "$@" >"$O/bench$S.log" 2>&1
echo "kda-bench$S rc=$?"
sed -n '/^copy:/p;/^prefill/p;/^$/,$p' "$O/bench$S.log" | tail -60
if command -v compute-sanitizer >/dev/null 2>&1 && [ -z "$NO_SANITIZER" ]; then
	echo "== sanitizers"
	: >"$O/sanitizer$S.log"
	for tool in racecheck memcheck; do
		for f in ${SAN_TESTS:-test_verify_replay_fp32 test_verify_replay_bf16 test_prefill_varlen}; do
			echo "### $tool $f" >>"$O/sanitizer$S.log"
			KDA_TEST_FILTER=$f timeout 90 compute-sanitizer --tool $tool \
				"$TEST_BIN" >>"$O/sanitizer$S.log" 2>&1
			echo "$tool $f rc=$? $(tail -1 "$O/sanitizer$S.log")"
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
