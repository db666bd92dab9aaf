#!/bin/bash
# man.sh: every man page formats without a groff warning.
. "$(dirname "$0")/lib.sh"
t_watchdog 60

if ! command -v groff >/dev/null; then
	echo "1..0 # SKIP groff not installed"
	exit 0
fi
for page in "$srcdir"/man/*.[0-9]; do
	warn=$(groff -mdoc -Tutf8 -ww -z "$page" 2>&1)
	is "$warn" "" "$(basename "$page") formats cleanly"
done
t_done
