#!/bin/bash
# develop.sh: the develop role.  Writes the one file its issue asks for
# (aside, then renamed: a loop of the same parallel group may be running
# the test suite at this moment).
. ./roles/result.sh
issue_of_prompt || { result develop failed "no issue in the task" '[]' debug; exit 1; }
put() {	# put FILE: stdin into FILE, atomically
	mkdir -p "$(dirname "$1")" && cat >"$1.new" && mv "$1.new" "$1"
}
case $ISSUE in
ISS-20260201-001)
	f=lib/upper.sh
	put $f <<'SH'
upper() { printf '%s\n' "$*" | tr '[:lower:]' '[:upper:]'; }
SH
	;;
ISS-20260201-002)
	f=lib/lower.sh
	put $f <<'SH'
lower() { printf '%s\n' "$*" | tr '[:upper:]' '[:lower:]'; }
SH
	;;
ISS-20260201-003)
	# depends on S-1 (upper): the queue runs this item after it
	[ -f lib/upper.sh ] || { result develop failed "lib/upper.sh is missing" '[]' debug; exit 1; }
	f=lib/title.sh
	put $f <<'SH'
. ./lib/upper.sh
title() { printf '%s%s\n' "$(upper "${1%"${1#?}"}")" "${1#?}"; }
SH
	;;
ISS-20260201-004)
	f=docs/functions.md
	{ echo "# Functions"; for s in lib/*.sh; do echo "- $(basename "$s" .sh)"; done; } | put $f
	;;
*)
	result develop failed "unknown issue $ISSUE" '[]' debug
	exit 1 ;;
esac
echo "== develop: $ISSUE -> $f"
result develop success "$ISSUE: wrote $f" "[\"$f\"]" validate
