#!/bin/sh
# The module map of docs/ARCHITECTURE.md, checked on the sources: each module's files include only
# the modules it may use (those above it in the map, and itself). An include outside that list is
# an upward include or a cycle, and fails the test with file:line: the offending #include.
# Usage: run.sh SOURCE_ROOT
set -u
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 1
fail=0
# module (folder)   modules its files may include, besides its own and the C library
check() {
	mod=$1
	shift
	allowed="$mod $*"
	[ -d "$mod" ] || { echo "layering: no folder $mod"; fail=1; return; }
	for f in $(find "$mod" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) | sort); do
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" | while IFS= read -r line; do
			inc=$(printf '%s\n' "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
			dir=${inc%/*}
			ok=0
			for a in $allowed; do
				[ "$dir" = "$a" ] && ok=1
			done
			if [ $ok = 0 ]; then
				echo "$f:${line%%:*}: $mod includes $inc (allowed: $allowed)"
				echo x >>"$tmp"
			fi
		done
	done
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
check util
check hw util
check model util
check sim util hw model
check serve util hw model sim
check sweep util hw model sim
check trace/db util
check trace/import util trace/db
check trace/analyze util trace/db
check trace/capture util trace/db
check calib util hw model sim trace/db trace/analyze
check reports util hw model sim serve sweep trace/db trace/analyze calib
check plan util hw model sim serve sweep reports
[ -s "$tmp" ] && fail=1
# trace/ itself holds no sources any more: each lives in its sub-module.
for f in trace/*.c trace/*.h; do
	[ -e "$f" ] && { echo "$f: a source in trace/ outside its sub-modules (db, import, analyze, capture)"; fail=1; }
done
[ $fail = 0 ] && echo "layering: ok"
exit $fail
