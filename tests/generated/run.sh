#!/bin/sh
# Committed files written by a generator still match it: kernels/common/k3_wgmma.cuh (one inline-PTX
# wrapper per MMA width) from kernels/common/gen_wgmma.py. A hand edit of the header, or a change to
# the generator without regenerating, fails here with the first differing line.
# Usage: run.sh SOURCE_ROOT   (exit 77: no python3, skipped)
set -u
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 1
command -v python3 >/dev/null 2>&1 || { echo "generated: no python3"; exit 77; }
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
python3 kernels/common/gen_wgmma.py > "$tmp" || { echo "generated: kernels/common/gen_wgmma.py failed"; exit 1; }
if ! cmp -s "$tmp" kernels/common/k3_wgmma.cuh; then
	echo "generated: kernels/common/k3_wgmma.cuh differs from kernels/common/gen_wgmma.py's output:"
	diff "$tmp" kernels/common/k3_wgmma.cuh | head -8
	echo "run: python3 kernels/common/gen_wgmma.py > kernels/common/k3_wgmma.cuh"
	exit 1
fi
echo "generated: kernels/common/k3_wgmma.cuh matches its generator"
