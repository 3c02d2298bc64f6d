#!/bin/sh
# One device call for the decode and verify kernels (issue 4): the GPU tests with the default
# kernels, the decode tests through the ring kernel at small shapes, compute-sanitizer, then the
# decode + verify grid (default kernels) and the decode grid of smem256 alone for comparison.
# Built beforehand here: meson setup build-gpu -Dprefer_static=true -Dbuildtype=release &&
# ninja -C build-gpu; mkdir -p .gpu && cp /usr/lib/x86_64-linux-gnu/libcmocka.so.0 .gpu/
# run(carry=["build-gpu", ".gpu"], command="sh kernels/kda/bench/run-decode-verify.sh")
B=${BUILD:-build-gpu}
O=${OUT:-kda-out}
mkdir -p "$O"
export LD_LIBRARY_PATH="$PWD/.gpu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
T=$B/tests/kernels/test-kda-gpu
{
	date -u +%Y-%m-%dT%H:%M:%SZ
	echo "command: sh kernels/kda/bench/run-decode-verify.sh (BUILD=$B)"
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
} >"$O/device.txt" 2>&1
cat "$O/device.txt"
timeout 200 "$T" >"$O/test-gpu.log" 2>&1
echo "test-kda-gpu rc=$?"; grep -E "^\[ *(OK|FAILED|PASSED) *\]" "$O/test-gpu.log" | tail -12
KDA_DECODE_KERNEL=ring KDA_TEST_FILTER='*decode_f*' timeout 60 "$T" >"$O/test-gpu-ring.log" 2>&1
echo "test-kda-gpu (ring, small decode) rc=$?"; grep -cE "OK \]" "$O/test-gpu-ring.log"
: >"$O/sanitizer.log"
for run in "memcheck test_verify_replay_fp32" "memcheck test_verify_replay_bf16" \
	"memcheck test_decode_many_items" "racecheck test_verify_replay_fp32" \
	"racecheck test_verify_replay_bf16"; do
	set -- $run
	echo "### $1 $2" >>"$O/sanitizer.log"
	KDA_TEST_FILTER=$2 timeout 120 compute-sanitizer --tool "$1" "$T" >>"$O/sanitizer.log" 2>&1
	echo "$1 $2 rc=$? $(tail -1 "$O/sanitizer.log")"
done
timeout 240 "$B/kernels/kda-bench" --only verify -o "$O/kda-decode-verify.csv" >"$O/bench.log" 2>&1
echo "kda-bench (decode + verify) rc=$?"
sed -n '/^copy:/p;/^$/,$p' "$O/bench.log" | tail -45
KDA_DECODE_KERNEL=smem256 timeout 120 "$B/kernels/kda-bench" --only decode -o "$O/kda-decode-smem256.csv" \
	>"$O/bench-smem256.log" 2>&1
echo "kda-bench (decode, smem256) rc=$?"
sed -n '/^decode/,/^$/p' "$O/bench-smem256.log"
