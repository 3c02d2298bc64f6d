#!/usr/bin/env bash
# A device call carries the checkout's tracked files (and what `carry` names) up to 64 MiB in all;
# bench/results/ and docs/perf/ grow past that (2026-12-01: 68 MB, every call refused for 40 min).
# The device never needs them, so before a call move the largest of them out, and back after:
#   scripts/device-room.sh out [MiB free for the carry, default 6]   ->  the files into $STASH
#   scripts/device-room.sh in                                        ->  every stashed file back
# Run from the repository root. Until `in`, git status shows them deleted: never `git commit -a`
# then, nor `git add` of a folder (its stashed files are staged as deleted; 2026-12-05, 2b28ea7),
# and never write to a stashed file (`in` keeps the new one and leaves the stashed copy): stage
# files by name, or `in` first.
set -eu
STASH=${STASH:-/tmp/k3sim-device-room}
LIMIT=$(( 64 * 1024 * 1024 ))
case "${1:-}" in
out)
  want=$(( LIMIT - ${2:-6} * 1024 * 1024 ))
  total=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
  git ls-files -z -- bench/results docs/perf | xargs -0 stat -c '%s %n' 2>/dev/null | sort -rn |
  while read -r size path && [ "$total" -gt "$want" ]; do
    mkdir -p "$STASH/$(dirname "$path")"
    mv "$path" "$STASH/$path"
    total=$(( total - size ))
    echo "out: $path ($size bytes)"
  done
  echo "tracked files now $(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}') bytes of $LIMIT"
  echo "until 'in': stage files by name (a folder's stashed files would be staged as deleted)"
  ;;
in)
  [ -d "$STASH" ] || { echo "device-room: nothing stashed in $STASH"; exit 0; }
  (cd "$STASH" && find . -type f -print0) | while IFS= read -r -d '' f; do
    if [ -e "$f" ]; then  # written again meanwhile: keep both, never overwrite
      echo "in: ${f#./} exists; the stashed copy stays in $STASH/${f#./}"
      continue
    fi
    mkdir -p "$(dirname "$f")"
    mv "$STASH/$f" "$f"
    echo "in: ${f#./}"
  done
  find "$STASH" -type d -empty -delete 2>/dev/null || true
  ;;
*)
  echo "usage: scripts/device-room.sh out [MiB] | in"; exit 2 ;;
esac
