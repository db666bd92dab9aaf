#!/bin/sh
# install-deps.sh: installs the Debian packages needed to build and test
# ccw-supervisor.  Safe to run again: apt-get skips what is installed.
# Run as root (or it uses sudo when available).
set -e
PKGS="build-essential autoconf automake pkgconf libevent-dev libmsgpack-dev \
libjansson-dev groff-base valgrind tmux parallel strace"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
	    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
