#!/bin/sh
# install-deps.sh: installs the Debian packages needed to build and test
# ccw-supervisor.  Safe to run again: apt-get skips what is installed.
# Run as root (or it uses sudo when available).
set -e
PKGS="build-essential autoconf automake pkgconf libevent-dev libmsgpack-dev \
libjansson-dev groff-base valgrind tmux parallel strace jq"

# For the tests only, each test reporting SKIP without its package, so
# failing to install them is no error: serve-page.sh drives the status
# page in chromium; remote-ssh.sh and remote-slurm.sh start a private
# sshd and a one-node Slurm (Debian keeps the packaged services stopped);
# CI's fuzz step builds the fuzz targets with clang and libFuzzer;
# serve-metrics-prom.sh runs promtool on /metrics and a real Prometheus;
# stop-bounded.sh attaches strace to slow every fsync down;
# batch-exit.sh prints a hung process's stacks with gdb;
# git-worktree.sh drives real git worktrees and merges, and
# run-worktree.sh a parallel loop's worktrees and merge queue;
# batch-worktree.sh runs batch items in git worktrees, and
# run-attempts.sh runs best-of-N attempts in worktrees;
# notify-command.sh sends desktop notifications (notify-send) to a
# notification server of its own (python3-dbus, python3-gi) on a
# private dbus-daemon session bus.
TEST_PKGS="chromium openssh-server slurm-wlm munge clang libclang-rt-dev \
prometheus strace gdb git libnotify-bin dbus-daemon python3-dbus python3-gi"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
	    missing="$missing $p"
done
test_missing=""
for p in $TEST_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
	    test_missing="$test_missing $p"
done
[ -z "$missing" ] && [ -z "$test_missing" ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ -n "$missing" ]; then
	echo "install-deps: installing$missing" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
if [ -n "$test_missing" ]; then
	echo "install-deps: installing$test_missing (tests only)" >&2
	{ [ -n "$missing" ] || $SUDO apt-get update -qq; } &&
	    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
	    $test_missing >/dev/null ||
	    echo "install-deps: could not install$test_missing: the tests that need them will SKIP" >&2
fi
exit 0
