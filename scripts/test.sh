#!/bin/sh
# The whole test suite: unit, CLI end-to-end, fuzz-corpus replay, and the GPU suite (which skips
# with exit 77 where no GPU is present). Ends with one line "N passed, N failed, N skipped".
#   scripts/test.sh              build/ (CUDA parts when the toolkit is found)
#   scripts/test.sh --sanitize   build-asan/ with -Db_sanitize=address,undefined (CUDA off:
#                                the CUDA runtime does not run under ASan)
#   K3SIM_WERROR=1               add -Dwerror=true (CI does)
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
dir=build
opts="-Dfuzzers=true"
if [ "${1:-}" = "--sanitize" ]; then
	dir=build-asan
	opts="$opts -Db_sanitize=address,undefined -Db_lundef=false -Dcuda=disabled"
fi
[ "${K3SIM_WERROR:-0}" = 1 ] && opts="$opts -Dwerror=true"
if [ -f "$dir/build.ninja" ]; then
	# shellcheck disable=SC2086
	meson configure "$dir" $opts >/dev/null || exit 1
else
	# shellcheck disable=SC2086
	meson setup "$dir" $opts || exit 1
fi
ninja -C "$dir" || { echo "0 passed, 1 failed (build)"; exit 1; }
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	meson test -C "$dir" --print-errorlogs --num-processes 2
rc=$?
# A test run must leave the system as it found it: /dev/null was once found replaced by a regular
# file on a shared machine (the culprit unknown); say so loudly if it happens here.
if [ ! -c /dev/null ]; then
	echo "test.sh: /dev/null is no longer a character device after the tests" >&2
	rc=1
fi
log="$dir/meson-logs/testlog.json"
python3 - "$log" <<'PY'
import json, sys
counts = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        r = json.loads(line)["result"]
        counts[r] = counts.get(r, 0) + 1
passed = counts.get("OK", 0) + counts.get("EXPECTEDFAIL", 0)
failed = sum(counts.get(k, 0) for k in ("FAIL", "UNEXPECTEDPASS", "TIMEOUT", "ERROR"))
print(f"{passed} passed, {failed} failed, {counts.get('SKIP', 0)} skipped")
PY
exit $rc
