#!/bin/bash
# faulty.sh: a fake ccw-worker that breaks the protocol in the way
# $CCW_FAULT names, so agent-faults.sh can see the supervisor survive it.
# With an odd -I index it execs the real worker ($CCW_REAL_WORKER), so
# good and bad agents run side by side in one supervisor.
#   garbage     bytes that are no frame, then hangs
#   oversized   a RESULT header announcing 0x7fffffff bytes, then hangs
#   half-frame  20 of the 40 bytes of a valid HELLO, then exits
set -u
args=("$@")
idx=0
while [ $# -gt 1 ]; do
	[ "$1" = -I ] && idx=$2
	shift
done
[ $((idx % 2)) -eq 1 ] && exec "$CCW_REAL_WORKER" "${args[@]}"

case $CCW_FAULT in
garbage)
	printf 'this is not a frame\x00\xff\xfe garbage' >&3 ;;
oversized)
	printf 'CW\x02\x00\x00\x07\x7f\xff\xff\xff' >&3
	printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >&3 ;;
half-frame)
	# HELLO (type 1), body 40 bytes: {pid: 1, index: 2, role:
	# "develop", version: "0.1.0"}; the header and 20 bytes are sent.
	printf 'CW\x02\x00\x00\x01\x00\x00\x00\x28' >&3
	printf '\x84\xa3pid\x01\xa5index\x02\xa4role\xa7d' >&3
	exit 0 ;;
*)
	echo "faulty.sh: unknown CCW_FAULT '$CCW_FAULT'" >&2
	exit 64 ;;
esac
# Hang, marked, so the test can see it killed.
exec "$CCW_FAKE_AGENT" --marker "$CCW_FAULT_MARKER" hang
