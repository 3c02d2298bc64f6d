#!/bin/sh
# Installs the Debian packages k3sim needs to build and test, if any is missing.
# The CUDA Toolkit (/usr/local/cuda) is optional: without it everything but capture and kernels builds.
set -eu
pkgs="meson ninja-build pkg-config gcc g++ python3 libyaml-dev libsqlite3-dev zlib1g-dev libcmocka-dev gnuplot-nox"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing >/dev/null
